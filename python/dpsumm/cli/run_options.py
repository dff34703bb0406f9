"""The options ``summarize`` and ``flower`` share: the method, the budget, the kernel and the seed."""

from __future__ import annotations

import argparse
import math
from typing import Any, Literal

from ._common import UsageError

__all__ = ["add_run_options", "gamma_arg", "seed_set_arg", "budget_arg", "method_kwargs"]


def add_run_options(p: argparse.ArgumentParser) -> None:
    """--method, the budget, nominations' options, gamma, dim, seed set, reveal and the seed."""
    from ..types import METHODS, PURCHASES

    p.add_argument("--method", default="nominations", choices=METHODS,
                   help="nominations (default, recommended: every party certified), paper (Sarpatwar et al. Alg. 3), "
                        "or a non-private baseline: central-greedy, paper-greedy, exact-greedy, uniform")
    p.add_argument("--budget", type=float, default=None, metavar="EPS",
                   help="owners' epsilon budget (calibrates the run; paper needs --validation-budget too)")
    p.add_argument("--delta", type=float, default=1e-6, metavar="D",
                   help="owners' delta: of --budget, and the delta the ledger is reported at (default 1e-6)")
    p.add_argument("--validation-budget", type=float, default=None, metavar="EPS",
                   help="the validation set's epsilon budget (alone: a validation-only budget, for nominations)")
    p.add_argument("--validation-delta", type=float, default=1e-6, metavar="D",
                   help="validation delta: of --validation-budget, and the delta the ledger is reported at "
                        "(default 1e-6)")
    p.add_argument("--purchase", choices=PURCHASES, default=None,
                   help="nominations only: buy every nominee's raw row (nominees, default: no leak) or only the "
                        "winners' (winners: fewer rows, but each owner learns which of its rows won, outside the DP "
                        "guarantee)")
    p.add_argument("--nominees", type=int, default=None, metavar="M",
                   help="nominations only: rows each owner nominates (default: the method's)")
    p.add_argument("--validation-release", choices=("gaussian", "mwem"), default=None,
                   help="nominations only: how the validation mean is released once (default gaussian)")
    p.add_argument("--gamma", default="median", metavar="FLOAT|median",
                   help="RBF width, or 'median' (default): the median heuristic on the public seed set")
    p.add_argument("--dim", type=int, default=140, help="random features d of h1 (default 140)")
    p.add_argument("--seed-set", default=None, metavar="COUNT|PATH",
                   help="public seed rows: a count of rows generated uniformly in --feature-range, or a file "
                        "(default: the schedule's count)")
    p.add_argument("--feature-range", type=float, nargs=2, default=(0.0, 1.0), metavar=("LOW", "HIGH"),
                   help="public box of generated seed rows (default 0 1: scale features to it, "
                        "dpsumm.scale_to_unit)")
    p.add_argument("--reveal", choices=("points", "hashes"), default="points",
                   help="points (default): the aggregator gets the raw rows it buys; hashes: only their h1 hashes")
    p.add_argument("--random-state", type=int, default=None,
                   help="seed: reproducible and NOT private (default: OS entropy, the only private mode)")


def gamma_arg(text: str) -> float | Literal["median"]:
    if text == "median":
        return "median"
    try:
        g = float(text)
    except ValueError:
        raise UsageError(f"--gamma must be a number or 'median', got {text!r}") from None
    if not (math.isfinite(g) and g > 0):
        raise UsageError(f"--gamma must be a finite number > 0 or 'median', got {text!r}")
    return g


def seed_set_arg(text: str | None) -> Any:
    """--seed-set: None, a count, or the rows of a file."""
    if text is None:
        return None
    if text.isdigit():
        return int(text)
    from ..datasets import load_array

    return load_array(text)


def budget_arg(args: argparse.Namespace) -> Any:
    """The run's Budget (None without --budget/--validation-budget). Refuses options that would be ignored."""
    from .. import accounting
    from ..types import NON_PRIVATE_METHODS

    nomination_only = [f"--{n.replace('_', '-')}" for n in ("purchase", "nominees", "validation_release")
                       if getattr(args, n) is not None]
    if nomination_only and args.method != "nominations":
        raise UsageError(f"{', '.join(nomination_only)} apply to --method nominations only")
    if args.nominees is not None and args.nominees < 1:
        raise UsageError(f"--nominees must be >= 1, got {args.nominees}")
    if args.budget is None and args.validation_budget is None:
        return None
    if args.method in NON_PRIVATE_METHODS:
        raise UsageError(f"--method {args.method} is not private: --budget/--validation-budget do not apply")
    if args.validation_budget is None:
        raise UsageError("--budget needs --validation-budget (the validation set's epsilon)")
    if args.budget is None and args.method != "nominations":
        raise UsageError(f"--method {args.method} needs --budget (the owners' epsilon) with --validation-budget")
    return accounting.Budget(args.budget, args.delta, args.validation_budget, args.validation_delta)


def method_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """Keywords of summarize() that only some methods take: passed only when given."""
    return {k: getattr(args, k) for k in ("purchase", "nominees", "validation_release") if getattr(args, k) is not None}


