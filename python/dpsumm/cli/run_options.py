"""The options ``summarize`` and ``flower`` share: the method and its options, the budget, the kernel and the seed.

The method's options are flags (``--nominees``, ``--purchase``, ``--dim``, ...) that default to "not given": the
method object then keeps its own default (:mod:`dpsumm.methods`), so the CLI and the Python API cannot disagree.
A flag the chosen method does not have is refused, naming the flag and the method it belongs to.
"""

from __future__ import annotations

import argparse
import math
from typing import Any, Literal

from ..errors import DpsummError, InvalidParameterError
from ..methods import (
    DEFAULT_DELTA,
    METHODS,
    budget_from,
    method_from_options,
    option_declarations,
    parse_label_set,
    parse_levels,
)
from ._common import UsageError

__all__ = [
    "add_run_options",
    "add_table_options",
    "gamma_arg",
    "seed_set_arg",
    "budget_arg",
    "method_arg",
    "report_deltas",
    "check_report_delta",
    "METHOD_FLAGS",
    "check_validation_labels",
]


def _method_flags() -> dict[str, tuple[str, Any, str]]:
    """Option -> (flag, type, help), for every option of every method and purchase object (their declarations:
    :func:`dpsumm.methods.option_declarations`)."""
    return {name: (d.flag, d.kind, f"{', '.join(d.owners)}: {d.help}") for name, d in option_declarations().items()}


#: Method and purchase option -> (flag, type, help), made from the options' declarations.
METHOD_FLAGS: dict[str, tuple[str, Any, str]] = _method_flags()


def add_run_options(p: argparse.ArgumentParser) -> None:
    """--method and its options, the budget, gamma, the seed set and the seed."""
    p.add_argument(
        "--method",
        default="nominations",
        choices=METHODS,
        help="nominations (default, recommended: every party certified), paper (Sarpatwar et al. Alg. 3), "
        "or a non-private baseline: central-greedy, paper-greedy, exact-greedy, uniform",
    )
    p.add_argument(
        "--budget",
        type=float,
        default=None,
        metavar="EPS",
        help="owners' epsilon budget (the paper's protocol: with --validation-budget)",
    )
    p.add_argument(
        "--delta",
        type=float,
        default=None,
        metavar="D",
        help="owners' delta: of --budget, and the delta the ledger is reported at (default 1e-6)",
    )
    p.add_argument(
        "--validation-budget",
        type=float,
        default=None,
        metavar="EPS",
        help="the validation set's epsilon budget (alone: a validation-only budget, for nominations)",
    )
    p.add_argument(
        "--validation-delta",
        type=float,
        default=None,
        metavar="D",
        help="validation delta: of --validation-budget, and the delta the ledger is reported at (default 1e-6)",
    )
    group = p.add_argument_group("method options (default: the method's own; a flag the method lacks is refused)")
    for option, (flag, kind, text) in METHOD_FLAGS.items():
        group.add_argument(flag, dest=option, type=kind, default=None, help=text)
    p.add_argument(
        "--gamma",
        default="median",
        metavar="FLOAT|median",
        help="RBF width, or 'median' (default): the median heuristic on the public seed set",
    )
    p.add_argument(
        "--seed-set",
        default=None,
        metavar="COUNT|PATH",
        help="public seed rows: a count of rows generated uniformly in --feature-range, or a file "
        "(default: 150 rows for the median heuristic; the schedule's count for the paper's methods)",
    )
    p.add_argument(
        "--feature-range",
        type=float,
        nargs=2,
        default=(0.0, 1.0),
        metavar=("LOW", "HIGH"),
        help="public box of generated seed rows (default 0 1: scale features to it, dpsumm.scale_to_unit)",
    )
    p.add_argument(
        "--random-state",
        type=int,
        default=None,
        help="seed: reproducible and NOT private (default: OS entropy, the only private mode)",
    )


def add_table_options(p: argparse.ArgumentParser) -> None:
    """--label-column, --features, --strata-columns and --scale: each party's table read by column name, scaled from
    public information (``dpsumm summarize`` in this process; ``dpsumm flower`` in each node's node config)."""
    p.add_argument(
        "--label-column",
        default=None,
        metavar="NAME|INDEX",
        help="the labels' column in each table (its header name, or its position counting from 0; -1 = last): "
        "read from the owners' tables and, when it has that column, the validation table; numbers or words",
    )
    p.add_argument(
        "--features",
        default=None,
        metavar="NAME,...",
        help="the feature columns, by header name, in this order (default: every column that is not the label, "
        "a strata column or a row index; each must hold numbers: a text column is refused, naming these flags)",
    )
    p.add_argument(
        "--strata-columns",
        default=None,
        metavar="NAME,...",
        help="public attributes read from each table's columns (words or whole numbers): --purchase strata buys "
        "by them (declare their values with --levels), and the quality report counts the summary's share of each",
    )
    p.add_argument(
        "--scale",
        default=None,
        metavar="RANGE|seed",
        help="scale the features to [0, 1] from public information before the run: a declared range "
        "('0:255' for every feature, or 'age=18:90,income=0:200000' per feature), or 'seed' (the per-feature "
        "min and max of the public --seed-set file); never from the private rows",
    )


def _flag(option: str) -> str:
    return METHOD_FLAGS[option][0] if option in METHOD_FLAGS else "--" + option.replace("_", "-")


def method_arg(args: argparse.Namespace) -> Any:
    """The method object of the command line (its defaults, with the method flags that were given)."""
    options: dict[str, Any] = {o: getattr(args, o) for o in METHOD_FLAGS if getattr(args, o, None) is not None}
    if "epsilon_auction" in options and options["epsilon_auction"] != "theorem6":
        try:
            options["epsilon_auction"] = float(options["epsilon_auction"])
        except ValueError:
            raise UsageError(
                f"--epsilon-auction must be a number >= 0 or 'theorem6', got {options['epsilon_auction']!r}"
            ) from None
    try:
        if "label_set" in options:
            options["label_set"] = parse_label_set(options["label_set"], spell=_flag)
        if "levels" in options:
            options["levels"] = parse_levels(options["levels"], spell=_flag)
        return method_from_options(args.method, options, spell=_flag)
    except DpsummError as exc:
        raise UsageError(str(exc)) from None


def check_validation_labels(
    args: argparse.Namespace, method: Any, owners_labelled: bool, validation_labelled: bool = False
) -> None:
    """``--validation-labels`` against the method, before any file is read: ``--purchase labels`` needs it (or, with
    ``validation_labelled``, a label column named in the validation table) and the owners' labels; every other
    method refuses it."""
    needs = bool(getattr(method, "needs_labels", False))
    given = getattr(args, "validation_labels", None) is not None
    if needs and not given and validation_labelled:
        given = True
        if not owners_labelled:
            raise UsageError("--purchase labels buys the owners' rows by label: give --label-column NAME")
        return
    if given and not needs:
        raise UsageError(
            f"--validation-labels applies only to --method nominations --purchase labels (the default "
            f"with --label-set; the consumer's label histogram), not to --method {method.name}"
            + (f" --purchase {method.purchase.name}" if hasattr(method, "purchase") else "")
        )
    if needs and not given:
        raise UsageError(
            "--purchase labels (the default with --label-set) releases the validation set's label "
            "histogram: name the label column of the tables with --label-column NAME, or give --validation-labels "
            "PATH (the consumer's labels)"
        )
    if needs and not owners_labelled:
        raise UsageError(
            "--purchase labels (the default with --label-set) buys the owners' rows by label: give "
            "the owners' labels (--labels)"
        )


_BUDGET_FLAGS = {
    "epsilon": "--budget",
    "delta": "--delta",
    "validation_epsilon": "--validation-budget",
    "validation_delta": "--validation-delta",
}


def _check_delta(value: float | None, flag: str) -> None:
    if value is not None and not (math.isfinite(value) and 0 < value < 1):
        raise UsageError(f"{flag} must be a number in (0, 1), got {value!r}")


def report_deltas(args: argparse.Namespace) -> tuple[float, float]:
    """The deltas the ledger is reported at: --delta and --validation-delta, default DEFAULT_DELTA."""
    return (
        DEFAULT_DELTA if args.delta is None else args.delta,
        DEFAULT_DELTA if args.validation_delta is None else args.validation_delta,
    )


def check_report_delta(args: argparse.Namespace, validation_rows: int) -> None:
    """Refuse a --validation-delta at or above 1/|D_v| once |D_v| is known, with or without a budget: the ledger
    read at such a delta says nothing (a release at it may publish a row of D_v; read there, every epsilon is 0)."""
    d = args.validation_delta
    if d is not None and validation_rows > 0 and d >= 1.0 / validation_rows:
        raise UsageError(
            f"--validation-delta {d:g} is >= 1/|D_v| = {1.0 / validation_rows:g} ({validation_rows} "
            "validation rows): at such a delta a release may publish a row of the validation set, and the "
            "ledger read there says nothing; use a delta well below 1/|D_v|"
        )


def budget_arg(
    args: argparse.Namespace, method: Any = None, *, size: int | None = None, owners: int | None = None
) -> Any:
    """The run's Budget (None without --budget/--validation-budget), checked against the method (and, with
    ``size`` and ``owners``, the whole plan: schedule calibration, nominees x owners >= size) before any data is
    read or noise drawn."""
    _check_delta(args.delta, "--delta")
    _check_delta(args.validation_delta, "--validation-delta")

    method = method_arg(args) if method is None else method
    if args.budget is None and args.validation_budget is None:
        budget = None
    else:
        if not method.private:
            raise UsageError(f"--method {method.name} is not private: --budget/--validation-budget do not apply")
        if args.validation_budget is None:
            raise UsageError("--budget needs --validation-budget (the validation set's epsilon)")
        if args.budget is None and method.name != "nominations":
            raise UsageError(f"--method {method.name} needs --budget (the owners' epsilon) with --validation-budget")
        try:
            budget = budget_from(
                args.budget,
                args.delta if args.budget is not None else None,
                args.validation_budget,
                args.validation_delta,
                spell=lambda o: _BUDGET_FLAGS.get(o, o),
            )
        except DpsummError as exc:
            raise UsageError(str(exc)) from None
    if size is not None and owners is not None:
        try:
            method.plan(
                size=size,
                owners=owners,
                owner_rows=None,
                validation_rows=None,
                privacy=budget,
                gamma_median=args.gamma == "median",
                transport_given=False,
            )
        except InvalidParameterError as exc:
            arg = getattr(exc, "argument", None) or ""
            flag = {"privacy": "--budget/--validation-budget", "size": "--size"}.get(arg, _flag(arg) if arg else "")
            raise UsageError(f"{flag}: {exc}" if flag else str(exc)) from None
    return budget


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


def seed_set_arg(text: str | None, features: str | None = None) -> Any:
    """--seed-set: None, a count, or the rows of a file (``features``: its columns of those names, as the owners')."""
    if text is None:
        return None
    if text.isdigit():
        return int(text)
    from ..datasets import load_array, read_party_table

    if features is not None:
        try:
            return read_party_table(text, features=features, argument="seed_set").data
        except InvalidParameterError as exc:
            raise UsageError(f"--seed-set: {exc}") from None
    return load_array(text)
