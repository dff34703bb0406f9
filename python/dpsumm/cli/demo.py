"""``dpsumm demo``: the label-split experiment on scikit-learn's digits, end to end in seconds."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..methods import Nominations
from ._common import add_base_seed, default_output_dir, jsonable, method_legend, seeded_note, writable_dir
from .output import print_epsilon

__all__ = ["add_demo"]

DEMO_SEED = 0
#: The default a user gets (``Nominations()``: the default purchase, ``ByDirection()``, given nothing public), the
#: paper's protocol, and two non-private baselines.
DEMO_METHODS: tuple[Any, ...] = (
    Nominations(),
    "paper",
    "central-greedy",
    "uniform",
)


def add_demo(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="nominations with the default purchase (what a user gets by default) against the paper's protocol and "
        "two baselines on scikit-learn's digits, in seconds",
        description=(
            "Split scikit-learn's bundled digits as the paper's Appendix G splits MNIST (five owners by label "
            "groups; the consumer wants 3s and 4s in ratio 0.7 : 0.3) and build summaries with nominations (dpsumm's "
            "private protocol) with its default purchase, as a user who gives nothing but the rows gets it (Nominations(): "
            "ByDirection(), cells along the consumer's released direction; 3 x size raw rows; owners' epsilon 1, the "
            "consumer's 1; certified), the paper's protocol "
            "(`paper`, at the paper's schedule), and two non-private baselines: central greedy (every hash in one "
            "place; the comparison column is relative to it) and uniform sampling. gamma by the median heuristic on "
            "the public seed set. Prints MMD^2 to the consumer's held-out rows (its population, their own diagonal "
            "dropped), MMD^2 to the validation set and its change against central greedy, the "
            "accuracy of a 32-unit network trained on each summary, the raw rows the aggregator saw and epsilon "
            "per party; writes results.json, results.csv, table.md and plots to --out. The demo is seeded by "
            f"default (--random-state {DEMO_SEED}): reproducible, and NOT private."
        ),
    )
    p.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 40, 80], help="summary sizes (default 10 20 40 80)")
    p.add_argument("--repeats", type=int, default=3, help="repeats per size (default 3)")
    p.add_argument(
        "--out",
        default=None,
        help=f"output directory for results and plots (default {default_output_dir('demo')}, "
        "outside the source tree; printed)",
    )
    add_base_seed(p, DEMO_SEED, "the demo is always")
    p.add_argument("--json", action="store_true", help="print the records as JSON instead of the table")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from .. import datasets, experiments

    base = args.random_state
    out = args.out if args.out is not None else str(default_output_dir("demo"))
    writable_dir(out, "--out")
    records = experiments.run_experiment(
        lambda r: datasets.digits_label_split(random_state=base + r),
        args.sizes,
        repeats=args.repeats,
        methods=DEMO_METHODS,
        gamma="median",
        random_state=base,
        progress=not args.no_progress,
    )
    paths = experiments.write_results(records, out, title="digits label split")
    if args.json:
        print(json.dumps([jsonable(r.to_dict()) for r in records], indent=1))
        return 0
    split = datasets.digits_label_split(random_state=base)
    print(f"digits label split: {split!r}")
    print(experiments.format_table(records))
    print("rows:")
    print(method_legend(r.method for r in records))
    print_epsilon(records)
    print(seeded_note(base, DEMO_SEED))
    print(f"wrote {', '.join(str(p) for p in paths.values())}")
    return 0
