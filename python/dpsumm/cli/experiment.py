"""``dpsumm experiment``: methods at several summary sizes over repeats of a label split (MNIST or digits)."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import UsageError, add_base_seed, method_legend, seeded_note, writable_dir
from .output import print_epsilon

__all__ = ["add_experiment"]

EXPERIMENT_SEED = 0


def add_experiment(sub: Any) -> None:
    p = sub.add_parser(
        "experiment",
        help="methods at several summary sizes over repeats of a label split (MNIST or digits)",
        description=(
            "Run methods at several summary sizes over repeats of a label split (the paper's Appendix G); write "
            "results.json, results.csv, table.md and plots (mmd2.png, mmd_increase.png, accuracy.png) to --out. "
            "Default: today's methods (nominations, central greedy, uniform) at today's defaults (gamma by the "
            "median heuristic, h1's dimension per method). The paper's Figure 2: --methods paper paper-greedy "
            "uniform exact-greedy pfds --gamma 0.1 --dim 140. The comparison column is relative to central greedy "
            "when it runs, else to the paper's greedy; the table says which. Every run is seeded (--random-state, "
            "default 0): reproducible and NOT private."
        ),
    )
    p.add_argument(
        "dataset", choices=("mnist", "digits"), help="mnist (needs --data) or digits (bundled with scikit-learn)"
    )
    p.add_argument("--data", default=None, help="directory holding the four MNIST IDX files (never downloaded)")
    p.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[50, 100, 200, 500, 1000],
        help="summary sizes p (default 50 100 200 500 1000)",
    )
    p.add_argument("--repeats", type=int, default=5, help="repeats (fresh splits) per size (default 5)")
    p.add_argument(
        "--methods",
        nargs="+",
        default=["nominations", "central-greedy", "uniform"],
        help="any of nominations, paper, central-greedy, paper-greedy, exact-greedy, uniform, pfds "
        "(default: nominations central-greedy uniform)",
    )
    p.add_argument(
        "--gamma",
        default="median",
        help="RBF width, or 'median' for the median heuristic on the public seed set (default median; "
        "the paper used 0.1)",
    )
    p.add_argument(
        "--dim",
        type=int,
        default=None,
        help="random features d of h1 (default per method: 500 for nominations and central greedy, 140 "
        "for the paper's methods)",
    )
    p.add_argument(
        "--classifier",
        choices=("mlp", "svm"),
        default="mlp",
        help="mlp: one hidden layer of 32 units (Figure 2); svm: linear SVM (Figure 1)",
    )
    p.add_argument(
        "--budget",
        type=float,
        default=None,
        help="paper: calibrate to this owners' epsilon (and --validation-budget) instead of the paper's "
        "schedule; nominations: its validation release runs at --validation-budget (default: this)",
    )
    p.add_argument(
        "--validation-budget",
        type=float,
        default=None,
        help="validation epsilon for --budget (default: same as --budget)",
    )
    p.add_argument("--delta", type=float, default=None, help="delta for --budget (owners and validation; default 1e-5)")
    p.add_argument(
        "--pfds-epsilon",
        type=float,
        default=None,
        help="per-agent epsilon of the pfds method (default: the private run's owners' epsilon)",
    )
    p.add_argument("--out", required=True, help="output directory")
    add_base_seed(p, EXPERIMENT_SEED, "every run is")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=_run)


#: ``--delta`` when ``--budget`` is given without it.
_DEFAULT_DELTA = 1e-5


def _run(args: argparse.Namespace) -> int:
    from .. import accounting, datasets, experiments
    from ..errors import InvalidParameterError

    writable_dir(args.out, "--out")
    # Options that would be silently ignored are refused, before any run.
    if args.dataset != "mnist" and args.data is not None:
        raise UsageError(f"--data applies to the mnist data set only (not to {args.dataset})")
    if args.budget is None:
        for flag, value in (("--validation-budget", args.validation_budget), ("--delta", args.delta)):
            if value is not None:
                raise UsageError(f"{flag} was given without --budget (it sets the budget's {flag[2:]})")
    if args.pfds_epsilon is not None and "pfds" not in args.methods:
        raise UsageError("--pfds-epsilon applies only with --methods ... pfds")
    if args.dataset == "mnist":
        if args.data is None:
            raise InvalidParameterError("`--data` (the MNIST directory) is required for mnist", "data")
        train = datasets.mnist(args.data, kind="train")
        test = datasets.mnist(args.data, kind="test")

        def split(r: int) -> Any:
            return datasets.label_split(train, test, random_state=args.random_state + r)
    else:

        def split(r: int) -> Any:
            return datasets.digits_label_split(random_state=args.random_state + r)

    try:
        gamma: Any = "median" if args.gamma == "median" else float(args.gamma)
    except ValueError:
        raise InvalidParameterError(f"`--gamma` must be a number or 'median', got {args.gamma!r}", "gamma") from None
    owner_rows = sum(len(o) for o in split(0).owners)  # every repeat's split holds about as many rows
    if max(args.sizes) > owner_rows:
        raise InvalidParameterError(
            f"--sizes: {max(args.sizes)} exceeds the owners' {owner_rows} rows of the {args.dataset} split", "sizes"
        )
    budget = None
    if args.budget is not None:
        delta = _DEFAULT_DELTA if args.delta is None else args.delta
        budget = accounting.Budget(
            epsilon=args.budget,
            delta=delta,
            validation_epsilon=args.budget if args.validation_budget is None else args.validation_budget,
            validation_delta=delta,
        )
    records = experiments.run_experiment(
        split,
        args.sizes,
        repeats=args.repeats,
        methods=args.methods,
        gamma=gamma,
        dim=args.dim,
        privacy=budget,
        classifier=args.classifier,
        pfds_epsilon=args.pfds_epsilon,
        random_state=args.random_state,
        progress=not args.no_progress,
    )
    paths = experiments.write_results(records, args.out, title=f"{args.dataset} label split", dim=args.dim)
    print(experiments.format_table(records))
    print("rows:")
    print(method_legend(r.method for r in records))
    print_epsilon(records)
    print(seeded_note(args.random_state, EXPERIMENT_SEED))
    print(f"wrote {', '.join(str(p) for p in paths.values())}")
    return 0
