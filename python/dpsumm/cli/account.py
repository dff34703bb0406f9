"""``dpsumm account``: the privacy cost of a paper schedule, per party and accountant."""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

from .. import accounting as acc
from ._common import UsageError, jsonable

__all__ = ["add_account"]


def add_account(sub: Any) -> None:
    p = sub.add_parser(
        "account",
        help="privacy cost of a schedule (epsilon per party and accountant)",
        description=(
            "Print the epsilon of the owners' and the validation set's releases for a schedule, by "
            "accountant (basic, advanced, kov = Theorem 7, tight = dp-accounting). With --budget and "
            "--validation-budget, calibrate a schedule to that budget first and print it."
        ),
    )
    p.add_argument(
        "--schedule",
        choices=("paper", "theorem2"),
        default="paper",
        help="parameter schedule (default: paper, Section 4)",
    )
    p.add_argument("--size", type=int, required=True, help="summary size p")
    p.add_argument("--owners", type=int, required=True, help="number of data owners K")
    p.add_argument("--dim", type=int, default=140, help="random-feature dimension d (default 140)")
    p.add_argument("--delta", type=float, default=1e-4, help="delta for the owners (default 1e-4)")
    p.add_argument("--validation-delta", type=float, default=0.01, help="delta for the validation set (default 0.01)")
    p.add_argument("--epsilon", type=float, default=None, help="target epsilon for --schedule theorem2")
    p.add_argument(
        "--epsilon-auction",
        type=float,
        default=None,
        help="PrivAuction's eps_auc (default 0 = ask every owner every round, the only certified "
        "setting; > 0 runs the paper's uncertified auction)",
    )
    p.add_argument(
        "--budget",
        type=float,
        default=None,
        metavar="EPS",
        help="owners' epsilon budget: calibrate a schedule (needs --validation-budget)",
    )
    p.add_argument(
        "--validation-budget",
        type=float,
        default=None,
        metavar="EPS",
        help="validation set's epsilon budget for calibration",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    if (args.budget is None) != (args.validation_budget is None):
        raise UsageError("--budget and --validation-budget must be given together")
    if args.budget is not None:
        budget = acc.Budget(args.budget, args.delta, args.validation_budget, args.validation_delta)
        kwargs = {} if args.epsilon_auction is None else {"epsilon_auction": args.epsilon_auction}
        schedule = acc.calibrate(budget, args.size, args.owners, args.dim, **kwargs)
    elif args.schedule == "theorem2":
        if args.epsilon is None:
            raise UsageError("--schedule theorem2 needs --epsilon")
        schedule = acc.theorem2_schedule(args.epsilon, args.delta, args.size, args.owners, args.dim)
        if args.epsilon_auction is not None:
            schedule = dataclasses.replace(schedule, epsilon_auction=args.epsilon_auction)
    else:
        if args.epsilon is not None:
            raise UsageError("--epsilon applies to --schedule theorem2 only")
        schedule = acc.paper_schedule(
            args.size,
            args.owners,
            args.dim,
            epsilon_auction=0.0 if args.epsilon_auction is None else args.epsilon_auction,
        )

    ledger = acc.schedule_ledger(schedule)
    totals = ledger.totals(args.delta, args.validation_delta)
    if args.json:
        out: dict[str, Any] = dict(totals)
        out["owners_excluding_auction"] = ledger.totals(args.delta, args.validation_delta, include_auction=False)[
            "owners"
        ]
        out["delta"] = {"owners": args.delta, "validation": args.validation_delta}
        out["schedule"] = schedule.to_dict()
        out["notes"] = ledger.notes()
        print(json.dumps(jsonable(out), indent=2, allow_nan=False))
    else:
        print(schedule.describe())
        print()
        print(ledger.table(args.delta, args.validation_delta))
    return 0
