"""``dpsumm experiment``: methods at several summary sizes over repeats of a label split (MNIST or digits)."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import NOT_PRIVATE, writable_dir
from .output import print_epsilon

__all__ = ["add_experiment"]


def add_experiment(sub: Any) -> None:
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
    p.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200, 500, 1000],
                   help="summary sizes p (default 50 100 200 500 1000)")
    p.add_argument("--repeats", type=int, default=5, help="repeats (fresh splits) per size (default 5)")
    p.add_argument("--methods", nargs="+", default=["paper", "paper-greedy", "uniform"],
                   help="any of paper, paper-greedy, uniform, exact-greedy, pfds (default: paper paper-greedy uniform)")
    p.add_argument("--gamma", default="0.1", help="RBF width, or 'median' for the median heuristic on the public seed set (default 0.1, the paper's)")
    p.add_argument("--dim", type=int, default=None, help="random features d of h1 (default: each method's own, 500 for nominations and the baselines, 140 for the paper's)")
    p.add_argument("--classifier", choices=("mlp", "svm"), default="mlp",
                   help="mlp: one hidden layer of 32 units (Figure 2); svm: linear SVM (Figure 1)")
    p.add_argument("--budget", type=float, default=None,
                   help="calibrate the private method to this owners' epsilon (and --validation-budget) instead of the paper's schedule")
    p.add_argument("--validation-budget", type=float, default=None, help="validation epsilon for --budget (default: same as --budget)")
    p.add_argument("--delta", type=float, default=1e-5, help="delta for --budget (owners and validation; default 1e-5)")
    p.add_argument("--pfds-epsilon", type=float, default=None,
                   help="per-agent epsilon of the pfds method (default: the private run's owners' epsilon)")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--random-state", type=int, default=0, help="base seed (reproducible, NOT private; default 0)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from .. import accounting, datasets, experiments
    from ..errors import InvalidParameterError

    writable_dir(args.out, "--out")
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
    paths = experiments.write_results(records, args.out, title=f"{args.dataset} label split", dim=args.dim)
    print(experiments.format_table(records))
    print_epsilon(records)
    print(NOT_PRIVATE)
    print(f"wrote {', '.join(str(p) for p in paths.values())}")
    return 0


