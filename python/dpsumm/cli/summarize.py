"""``dpsumm summarize``: a summary from owners' files, all parties in this process."""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

from ..errors import InvalidParameterError
from ._common import UsageError, header_arg, jsonable, writable_dir
from .output import build_report, ledger_text, write_outputs
from .run_options import (
    add_run_options,
    budget_arg,
    check_report_delta,
    check_validation_labels,
    gamma_arg,
    method_arg,
    report_deltas,
    seed_set_arg,
)

__all__ = ["add_summarize"]


def add_summarize(sub: Any) -> None:
    p = sub.add_parser(
        "summarize",
        help="build a summary from owners' files (all parties in this process)",
        description="Owners' rows and the validation rows from .npy, .csv or .parquet files (.parquet needs "
        "pip install 'dpsumm[parquet]'); prints the privacy ledger and writes summary.npy, labels.npy "
        "(with labels), provenance.csv (owner, index) and report.json (accessed rows, the whole privacy "
        "ledger, events) to --out.",
    )
    p.add_argument("--owners", nargs="+", required=True, metavar="PATH", help="one file per owner")
    p.add_argument(
        "--labels",
        nargs="+",
        default=None,
        metavar="PATH",
        help="one labels file per owner, in --owners order (.npy, .csv or .parquet, one column; numbers or "
        "words: a .npy of strings, a CSV column of words)",
    )
    p.add_argument(
        "--label-column",
        type=int,
        default=None,
        metavar="INDEX",
        help="the owners' files hold the labels (numbers or words) in this column (0-based; -1 = last): "
        "it is removed from the features",
    )
    p.add_argument("--validation", required=True, metavar="PATH", help="the consumer's validation rows")
    p.add_argument(
        "--validation-labels",
        default=None,
        metavar="PATH",
        help="the validation rows' labels (.npy, .csv or .parquet, one column; numbers or words): --purchase "
        "labels releases their histogram; other methods refuse them",
    )
    p.add_argument(
        "--strata",
        nargs="+",
        default=None,
        metavar="PATH",
        help="one strata file per owner, in --owners order (.npy; .csv with a header line naming the attributes; "
        ".parquet): the public attributes --purchase strata buys by (declared with --levels)",
    )
    p.add_argument(
        "--validation-strata",
        default=None,
        metavar="PATH",
        help="the validation rows' strata (as --strata): --purchase strata releases their histogram",
    )
    p.add_argument("--size", type=int, required=True, help="summary size p")
    p.add_argument("--out", required=True, help="output directory")
    add_run_options(p)
    p.add_argument(
        "--header",
        choices=("auto", "yes", "no"),
        default="auto",
        help="CSV inputs: is the first line a header? auto: yes when a field is not a number or the "
        "line is exactly 0,1,...,n-1 (pandas to_csv(index=False)); default auto",
    )
    p.add_argument(
        "--index",
        choices=("auto", "yes", "no"),
        default="auto",
        help="CSV inputs: is the first column a row index (pandas' to_csv() writes one)? auto: yes when its "
        "header is pandas' index name; a headerless 0,1,...,n-1 first column is refused unless you say "
        "yes or no; default auto",
    )
    p.add_argument("--json", action="store_true", help="print report.json instead of the ledger table")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=_run)


def _owners_with_labels(args: argparse.Namespace, header: Any = "auto", index: Any = "auto") -> list[Any]:
    from .. import datasets
    from ..results import Owner
    from ..strata import load_strata

    if args.labels is not None and args.label_column is not None:
        raise UsageError("give --labels or --label-column, not both")
    if args.labels is not None and len(args.labels) != len(args.owners):
        raise UsageError(f"--labels needs one file per owner ({len(args.owners)}), got {len(args.labels)}")
    if args.strata is not None and len(args.strata) != len(args.owners):
        raise UsageError(f"--strata needs one file per owner ({len(args.owners)}), got {len(args.strata)}")
    owners = []
    for k, path in enumerate(args.owners):
        try:  # the reader sets the label column aside (and refuses a label-named column without it)
            table = datasets.read_table(path, header=header, index=index, label_column=args.label_column)
        except InvalidParameterError as exc:
            if exc.argument == "label_column":
                raise UsageError(f"--label-column {args.label_column} is out of range for {path}: {exc}") from exc
            raise
        if not args.json:
            print(f"read {table.describe()}")
        rows = table.data
        labels = table.labels
        if args.label_column is None and args.labels is not None:
            labels = datasets.load_labels(args.labels[k], header=header)
        strata = None if args.strata is None else load_strata(args.strata[k], rows.shape[0], "--strata")
        owners.append(Owner(rows, labels=_integral(labels), strata=strata, name=f"owner-{k}"))
    return owners


def _integral(labels: Any) -> Any:
    """Numeric labels that are all whole numbers as int64 (a CSV column reads as floats); others as they are."""
    if labels is not None and labels.dtype.kind in "fiu" and np.all(np.mod(labels, 1) == 0):
        return labels.astype(np.int64)
    return labels


def _run(args: argparse.Namespace) -> int:
    from .. import datasets
    from ..summarize import summarize

    out_dir = writable_dir(args.out, "--out")  # before any noise is drawn
    header = header_arg(args.header)
    index = header_arg(args.index)
    gamma = gamma_arg(args.gamma)
    method = method_arg(args)
    if args.size is not None and args.size < 1:
        raise UsageError(f"--size must be >= 1, got {args.size}")
    budget = budget_arg(args, method, size=args.size, owners=len(args.owners))  # the whole plan, before any read
    check_validation_labels(args, method, owners_labelled=args.labels is not None or args.label_column is not None)
    owners = _owners_with_labels(args, header=header, index=index)
    val_table = datasets.read_table(args.validation, header=header, index=index)
    if not args.json:
        print(f"read {val_table.describe()}")
    validation = val_table.data
    check_report_delta(args, int(validation.shape[0]))  # before any noise
    val_labels = None
    if args.validation_labels is not None:
        val_labels = _integral(datasets.load_labels(args.validation_labels, header=header))
        if val_labels.shape != (validation.shape[0],):
            raise UsageError(
                f"--validation-labels must hold one label per validation row ({validation.shape[0]}), "
                f"got shape {val_labels.shape}"
            )
    val_strata = None
    if args.validation_strata is not None:
        from ..strata import load_strata

        val_strata = load_strata(args.validation_strata, validation.shape[0], "--validation-strata")
    seed = seed_set_arg(args.seed_set)
    res = summarize(
        owners,
        validation,
        args.size,
        method,
        seed_set=seed,
        gamma=gamma,
        privacy=budget,
        feature_range=tuple(args.feature_range),
        random_state=args.random_state,
        progress=not args.no_progress,
        validation_labels=val_labels,
        validation_strata=val_strata,
    )
    report = build_report(res, args, budget, owners=[str(p) for p in args.owners])
    out = write_outputs(res, out_dir, report)
    if args.json:
        print(json.dumps(jsonable(report), indent=2, default=str, allow_nan=False))
    else:
        print("\n".join(ledger_text(res, *report_deltas(args), args.random_state is not None)))
        print(
            f"wrote {len(res)} rows to {out / 'summary.npy'} (accessed {res.accessed.total} raw rows); "
            f"report in {out / 'report.json'}"
        )
    return 0
