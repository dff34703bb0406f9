"""``dpsumm demo``: the label-split experiment on scikit-learn's digits, end to end in seconds."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ._common import NOT_PRIVATE, jsonable, writable_dir
from .output import print_epsilon

__all__ = ["add_demo"]


def add_demo(sub: Any) -> None:
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
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from .. import datasets, experiments

    base = args.random_state
    writable_dir(args.out, "--out")
    records = experiments.run_experiment(
        lambda r: datasets.digits_label_split(random_state=base + r), args.sizes, repeats=args.repeats,
        methods=("nominations", "central-greedy", "paper", "uniform"), gamma="median", random_state=base,
        progress=not args.no_progress,
    )
    paths = experiments.write_results(records, args.out, title="digits label split")
    if args.json:
        print(json.dumps([jsonable(r.to_dict()) for r in records], indent=1))
        return 0
    split = datasets.digits_label_split(random_state=base)
    print(f"digits label split: {split!r}")
    print(experiments.format_table(records))
    print_epsilon(records)
    print(NOT_PRIVATE)
    print(f"wrote {', '.join(str(p) for p in paths.values())}")
    return 0


