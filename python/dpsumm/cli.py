"""Command-line interface: ``dpsumm <subcommand> ...``.

Each subcommand is one ``_add_<name>(subparsers)`` function that registers its parser and sets
``func`` to a ``_run_<name>(args) -> int`` handler; add new subcommands (summarize, demo,
experiment) the same way and list them in :data:`_SUBCOMMANDS`. A user error (a
:class:`~dpsumm.errors.DpsummError` or a bad command line) prints one line to stderr and exits 2.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from .errors import DpsummError

__all__ = ["main", "build_parser"]

_PROG = "dpsumm"


class _UsageError(Exception):
    """A bad command line (raised instead of argparse printing usage and exiting)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2 (handled in main)
        raise _UsageError(message)


def _jsonable(x: Any) -> Any:
    if isinstance(x, float) and math.isinf(x):
        return None
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x


# ---------------------------------------------------------------------------------------------
# account
# ---------------------------------------------------------------------------------------------


def _add_account(sub: Any) -> None:
    p = sub.add_parser(
        "account",
        help="privacy cost of a schedule (epsilon per party and accountant)",
        description=(
            "Print the epsilon of the owners' and the validation set's releases for a schedule, by "
            "accountant (basic, advanced, kov = Theorem 7, tight = dp-accounting). With --budget and "
            "--validation-budget, calibrate a schedule to that budget first and print it."
        ),
    )
    p.add_argument("--schedule", choices=("paper", "theorem2"), default="paper",
                   help="parameter schedule (default: paper, Section 4)")
    p.add_argument("--size", type=int, required=True, help="summary size p")
    p.add_argument("--owners", type=int, required=True, help="number of data owners K")
    p.add_argument("--dim", type=int, default=140, help="random-feature dimension d (default 140)")
    p.add_argument("--delta", type=float, default=1e-4, help="delta for the owners (default 1e-4)")
    p.add_argument("--validation-delta", type=float, default=0.01,
                   help="delta for the validation set (default 0.01)")
    p.add_argument("--epsilon", type=float, default=None,
                   help="target epsilon for --schedule theorem2")
    p.add_argument("--epsilon-auction", type=float, default=None,
                   help="override eps_auc (0 = ask every owner every round, the only certified setting)")
    p.add_argument("--budget", type=float, default=None, metavar="EPS",
                   help="owners' epsilon budget: calibrate a schedule (needs --validation-budget)")
    p.add_argument("--validation-budget", type=float, default=None, metavar="EPS",
                   help="validation set's epsilon budget for calibration")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=_run_account)


def _run_account(args: argparse.Namespace) -> int:
    from . import accounting as acc

    if (args.budget is None) != (args.validation_budget is None):
        raise _UsageError("--budget and --validation-budget must be given together")
    if args.budget is not None:
        budget = acc.Budget(args.budget, args.delta, args.validation_budget, args.validation_delta)
        kwargs = {} if args.epsilon_auction is None else {"epsilon_auction": args.epsilon_auction}
        schedule = acc.calibrate(budget, args.size, args.owners, args.dim, **kwargs)
    elif args.schedule == "theorem2":
        if args.epsilon is None:
            raise _UsageError("--schedule theorem2 needs --epsilon")
        schedule = acc.theorem2_schedule(args.epsilon, args.delta, args.size, args.owners, args.dim)
        if args.epsilon_auction is not None:
            import dataclasses

            schedule = dataclasses.replace(schedule, epsilon_auction=args.epsilon_auction)
    else:
        if args.epsilon is not None:
            raise _UsageError("--epsilon applies to --schedule theorem2 only")
        schedule = acc.paper_schedule(args.size, args.owners, args.dim, epsilon_auction=args.epsilon_auction)

    ledger = acc.schedule_ledger(schedule)
    totals = ledger.totals(args.delta, args.validation_delta)
    if args.json:
        out: dict[str, Any] = dict(totals)
        out["owners_excluding_auction"] = ledger.totals(
            args.delta, args.validation_delta, include_auction=False
        )["owners"]
        out["delta"] = {"owners": args.delta, "validation": args.validation_delta}
        out["schedule"] = schedule.to_dict()
        out["notes"] = ledger.notes()
        print(json.dumps(_jsonable(out), indent=2, allow_nan=False))
    else:
        print(schedule.describe())
        print()
        print(ledger.table(args.delta, args.validation_delta))
    return 0


# ---------------------------------------------------------------------------------------------
# demo
# ---------------------------------------------------------------------------------------------


def _add_demo(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="the paper's label-split experiment on scikit-learn's digits, end to end in seconds",
        description=(
            "Split scikit-learn's bundled digits as the paper's Appendix G splits MNIST (five owners by label "
            "groups; the consumer wants 3s and 4s in ratio 0.7 : 0.3), build summaries with the private protocol "
            "(paper schedule), the non-private greedy baseline and uniform sampling, print MMD^2, its increase "
            "over greedy, the accuracy of a 32-unit network trained on each summary, rows accessed and epsilon, "
            "and write the plots. Seeded: reproducible, NOT private."
        ),
    )
    p.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 40, 80], help="summary sizes (default 10 20 40 80)")
    p.add_argument("--repeats", type=int, default=3, help="repeats per size (default 3)")
    p.add_argument("--out", default="dpsumm-demo", help="output directory for results and plots (default ./dpsumm-demo)")
    p.add_argument("--random-state", type=int, default=0, help="base seed (reproducible, NOT private; default 0)")
    p.add_argument("--json", action="store_true", help="print the records as JSON instead of the table")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=_run_demo)


def _run_demo(args: argparse.Namespace) -> int:
    from . import datasets, experiments

    base = args.random_state
    records = experiments.run_experiment(
        lambda r: datasets.digits_label_split(random_state=base + r), args.sizes, repeats=args.repeats,
        methods=("private", "greedy", "uniform"), gamma=0.1, random_state=base, progress=not args.no_progress,
    )
    paths = experiments.write_results(records, args.out, title="digits label split")
    if args.json:
        print(json.dumps([_jsonable(r.to_dict()) for r in records], indent=1))
        return 0
    split = datasets.digits_label_split(random_state=base)
    print(f"digits label split: {split!r}")
    print(experiments.format_table(records))
    _print_epsilon(records)
    print(f"wrote {', '.join(str(p) for p in paths.values())}")
    return 0


def _print_epsilon(records: Sequence[Any]) -> None:
    priv = [r for r in records if r.method == "private"]
    if not priv:
        return
    r = max(priv, key=lambda r: r.size)
    owners = "not certified (paper's PrivAuction, see README 'Privacy')" if r.epsilon_owners is None else f"{r.epsilon_owners:.4g}"
    print(f"private, size {r.size}: epsilon owners {owners}; h2 releases alone {r.epsilon_owners_h2:.4g} (delta 1e-4); "
          f"validation {r.epsilon_validation:.4g} (delta 0.01); tight accountant.")


# ---------------------------------------------------------------------------------------------
# experiment
# ---------------------------------------------------------------------------------------------


def _add_experiment(sub: Any) -> None:
    p = sub.add_parser(
        "experiment",
        help="reproduce the paper's Figure 2 (MNIST) or run the same design on digits",
        description=(
            "Run methods at several summary sizes over repeats of a label split; write results.json, results.csv, "
            "table.md, mmd_increase.png and accuracy.png to --out."
        ),
    )
    p.add_argument("dataset", choices=("mnist", "digits"), help="mnist (needs --data) or digits (bundled with scikit-learn)")
    p.add_argument("--data", default=None, help="directory holding the four MNIST IDX files (never downloaded)")
    p.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200, 500, 1000])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--methods", nargs="+", default=["private", "greedy", "uniform"],
                   help="any of private, greedy, uniform, exact-greedy, pfds (default: private greedy uniform)")
    p.add_argument("--gamma", default="0.1", help="RBF width, or 'median' for the median heuristic on the public seed set (default 0.1, the paper's)")
    p.add_argument("--dim", type=int, default=140)
    p.add_argument("--classifier", choices=("mlp", "svm"), default="mlp",
                   help="mlp: one hidden layer of 32 units (Figure 2); svm: linear SVM (Figure 1)")
    p.add_argument("--budget", type=float, default=None,
                   help="calibrate the private method to this owners' epsilon (and --validation-budget) instead of the paper's schedule")
    p.add_argument("--validation-budget", type=float, default=None, help="validation epsilon for --budget (default: same as --budget)")
    p.add_argument("--delta", type=float, default=1e-5, help="delta for --budget (owners and validation; default 1e-5)")
    p.add_argument("--pfds-epsilon", type=float, default=1.0, help="per-agent epsilon of the pfds method (default 1)")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--random-state", type=int, default=0, help="base seed (reproducible, NOT private; default 0)")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=_run_experiment)


def _run_experiment(args: argparse.Namespace) -> int:
    from . import accounting, datasets, experiments
    from .errors import InvalidParameterError

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
    budget = None
    if args.budget is not None:
        budget = accounting.Budget(epsilon=args.budget, delta=args.delta,
                                   validation_epsilon=args.validation_budget or args.budget, validation_delta=args.delta)
    records = experiments.run_experiment(
        split, args.sizes, repeats=args.repeats, methods=args.methods, gamma=gamma, dim=args.dim, privacy=budget,
        classifier=args.classifier, pfds_epsilon=args.pfds_epsilon, random_state=args.random_state,
        progress=not args.no_progress,
    )
    paths = experiments.write_results(records, args.out, title=f"{args.dataset} label split")
    print(experiments.format_table(records))
    _print_epsilon(records)
    print(f"wrote {', '.join(str(p) for p in paths.values())}")
    return 0


# ---------------------------------------------------------------------------------------------
# summarize
# ---------------------------------------------------------------------------------------------


def _add_summarize(sub: Any) -> None:
    p = sub.add_parser(
        "summarize",
        help="build a summary from owners' files (all parties in this process)",
        description="Owners' rows and the validation rows from .npy, .csv or .parquet files; writes summary.npy, "
                    "provenance.csv (owner, index) and report.json (accessed rows, privacy ledger, events) to --out.",
    )
    p.add_argument("--owners", nargs="+", required=True, help="one file per owner")
    p.add_argument("--validation", required=True, help="the consumer's validation rows")
    p.add_argument("--size", type=int, required=True)
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--method", default="private", choices=("private", "greedy", "uniform", "exact-greedy"))
    p.add_argument("--seed-set", default=None, help="public seed rows (file); default: generated")
    p.add_argument("--gamma", type=float, default=0.1)
    p.add_argument("--dim", type=int, default=140)
    p.add_argument("--random-state", type=int, default=None, help="seed (reproducible, NOT private); default: OS entropy")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=_run_summarize)


def _run_summarize(args: argparse.Namespace) -> int:
    from pathlib import Path

    import numpy as np

    from . import datasets
    from .summarize import summarize

    owners = datasets.load_owners(args.owners)
    validation = datasets.load_array(args.validation)
    seed = datasets.load_array(args.seed_set) if args.seed_set else None
    res = summarize(owners, validation, args.size, method=args.method, seed_set=seed, gamma=args.gamma, dim=args.dim,
                    random_state=args.random_state, progress=not args.no_progress)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "summary.npy", res.points if res.points is not None else res.hashes)
    np.savetxt(out / "provenance.csv", np.column_stack([res.owner, res.index]), fmt="%d", delimiter=",",
               header="owner,index", comments="")
    report = {
        "method": res.method, "size": len(res), "owners": [str(p) for p in args.owners],
        "accessed": {"total": res.accessed.total, "per_owner": res.accessed.per_owner},
        "contribution": res.contribution.tolist(), "events": res.events, "seconds": res.seconds,
        "privacy": None if res.privacy is None else res.privacy.totals(1e-4, 1e-2),
    }
    (out / "report.json").write_text(json.dumps(_jsonable(report), indent=2, default=str))
    print(f"wrote {len(res)} rows to {out / 'summary.npy'} (accessed {res.accessed.total} raw rows)")
    return 0


# ---------------------------------------------------------------------------------------------
# entry point
# ---------------------------------------------------------------------------------------------

_SUBCOMMANDS: tuple[Callable[[Any], None], ...] = (_add_account, _add_demo, _add_experiment, _add_summarize)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand registered."""
    parser = _Parser(prog=_PROG, description="Differentially private distributed data summarization.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for add in _SUBCOMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0 ok, 2 user error)."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
        return int(args.func(args))
    except (_UsageError, DpsummError) as exc:
        msg = str(exc).replace("\n", " ")
        print(f"{_PROG}: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
