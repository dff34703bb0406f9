"""``dpsumm summarize``: a summary from owners' files, all parties in this process."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InvalidParameterError
from ._common import UsageError, header_arg, jsonable, writable_dir
from .output import build_report, ledger_text, write_outputs
from .run_options import (
    add_run_options,
    add_table_options,
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
    add_table_options(p)
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


def _label_column(text: str | None) -> int | str | None:
    """--label-column: a position (an integer, -1 = last) or a header name."""
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return text


#: The flag of each API argument that names a column of the owners' tables.
_COLUMN_FLAGS = {"label_column": "--label-column", "features": "--features", "strata_columns": "--strata-columns"}


@contextmanager
def _column_flags() -> Iterator[None]:
    """An API refusal of a column argument re-raised as a UsageError that names its flag."""
    try:
        yield
    except InvalidParameterError as exc:
        if exc.argument in _COLUMN_FLAGS:
            raise UsageError(_flagged(exc, _COLUMN_FLAGS[exc.argument])) from None
        raise


def _check_owner_files(args: argparse.Namespace) -> None:
    """The per-owner files and columns given one way each, one file per owner."""
    if args.labels is not None and args.label_column is not None:
        raise UsageError("give --labels (one file per owner) or --label-column (a column of their tables), not both")
    if args.strata is not None and args.strata_columns is not None:
        raise UsageError("give --strata (one file per owner) or --strata-columns (columns of their tables), not both")
    if args.labels is not None and len(args.labels) != len(args.owners):
        raise UsageError(f"--labels needs one file per owner ({len(args.owners)}), got {len(args.labels)}")
    if args.strata is not None and len(args.strata) != len(args.owners):
        raise UsageError(f"--strata needs one file per owner ({len(args.owners)}), got {len(args.strata)}")


def _read_owner(
    args: argparse.Namespace, path: str, header: Any, index: Any
) -> tuple[Any, tuple[str, ...], int, Any, Any, str]:
    """One owner's rows (an array, or a row source read where it lives), feature names, row count, labels and
    strata from its table, and what was read (the line printed)."""
    import dataclasses

    from .. import datasets
    from ..party_tables import open_party_table, streams_table
    from ..sources import open_rows

    as_table = streams_table(path)  # a .parquet file or a directory of parquet files: by column name, streamed
    as_npy = (
        args.label_column is None
        and args.features is None
        and args.strata_columns is None
        and path.endswith(".npy")
        and Path(path).is_file()
    )  # a missing file goes to the table reader, which names --owners
    if not (as_table or as_npy):
        with _column_flags():
            table = datasets.read_party_table(
                path,
                features=args.features,
                label_column=_label_column(args.label_column),
                strata_columns=args.strata_columns,
                header=header,
                index=index,
                argument="owners",
            )
        rows = table.data
        return rows, tuple(table.features), rows.shape[0], table.labels, table.strata, f"read {table.describe()}"
    # Rows read where they live (dpsumm.sources): a .npy file memory-mapped, a parquet table in record batches,
    # scaled at every read with --scale; never loaded whole.
    with _column_flags():
        if as_table:
            source = open_party_table(
                path,
                features=args.features,
                label_column=_label_column(args.label_column),
                strata_columns=args.strata_columns,
                argument="owners",
                progress=True,
            )
        else:
            source = open_rows(path, progress=True, argument="owners")
    n_rows, width = source.data.shape
    names = tuple(source.columns) if as_table else tuple(str(j) for j in range(width))
    how = "read in record batches" if as_table else "memory-mapped (read in chunks)"
    said = f"read {path}: {n_rows} rows x {width} features, {how}"
    # the owner's labels and strata are given to dpsumm.Owner beside the rows
    return dataclasses.replace(source, labels=None, strata=None), names, n_rows, source.labels, source.strata, said


def _owners_with_labels(
    args: argparse.Namespace,
    header: Any = "auto",
    index: Any = "auto",
    scaler_of: Any = None,
    buys_strata: bool = True,
) -> tuple[list[Any], list[Any], Any]:
    """The owners (dpsumm.Owner, with labels and the strata their purchase reads), each owner's strata columns
    (for the quality report; None without strata) and the scaling of the features (None: none; ``scaler_of``
    makes it from the feature names)."""
    from ..results import Owner
    from ..sources import scaled
    from ..strata import load_strata

    _check_owner_files(args)
    owners = []
    all_strata = []
    features = None
    scaler = None
    for k, path in enumerate(args.owners):
        rows, names, n_rows, labels, strata, said = _read_owner(args, path, header, index)
        if features is not None and names != features:
            raise UsageError(
                f"--owners: {path} has the feature columns {', '.join(names)}, the first owner's are "
                f"{', '.join(features)}: name the features every table shares with --features NAME,..."
            )
        if features is None and scaler_of is not None:
            scaler = scaler_of(names)
        features = names
        if args.labels is not None:
            labels = _labels_file(args.labels[k], "--labels", n_rows, header)
        if args.strata is not None:
            strata = load_strata(args.strata[k], n_rows, "--strata")
        if not args.json:
            print(said)
        if scaler is not None:  # a source's every block scaled as it is read: the values of the whole table scaled
            rows = scaler(rows) if isinstance(rows, np.ndarray) else scaled(rows, scaler, 1.0)
        all_strata.append(strata)
        owners.append(Owner(rows, labels=_integral(labels), strata=strata if buys_strata else None, name=f"owner-{k}"))
    return owners, all_strata, scaler


def _flagged(exc: Exception, flag: str) -> str:
    """An API error's message with its argument's name replaced by the flag (or the flag put first)."""
    arg = getattr(exc, "argument", None)
    msg = str(exc)
    if arg and f"`{arg}`" in msg:
        return msg.replace(f"`{arg}`", flag, 1)
    return msg if flag in msg else f"{flag}: {msg}"


def _labels_file(path: str, flag: str, n_rows: int, header: Any) -> Any:
    """A labels file given by ``flag``, one label per row; one label too many says the first line may be a header."""
    from .. import datasets
    from ..errors import DataFileError

    try:
        labels = datasets.load_labels(path, header=header)
    except DataFileError as exc:
        raise UsageError(f"{flag}: {exc}" + _header_hint(exc)) from None
    if labels.shape != (n_rows,):
        hint = " (is its first line a header? pass --header yes)" if labels.shape == (n_rows + 1,) else ""
        raise UsageError(f"{flag}: {path} holds {labels.shape[0]} labels for the {n_rows} rows{hint}")
    return labels


def _header_hint(exc: Exception) -> str:
    return "" if "header" in str(exc) else " (if the first line is a header, pass --header yes)"


def _integral(labels: Any) -> Any:
    """Numeric labels that are all whole numbers as int64 (a CSV column reads as floats); others as they are."""
    if labels is not None and labels.dtype.kind in "fiu" and np.all(np.mod(labels, 1) == 0):
        return labels.astype(np.int64)
    return labels


def scale_arg(text: str | None, seed_rows: Any, features: Any) -> Any:
    """--scale: None, or a function mapping rows to [0, 1] from a declared range or the public seed rows."""
    if text is None:
        return None
    from ..errors import DpsummError
    from ..preprocessing import parse_range, scale_to_unit, seed_range

    low: Any
    high: Any
    try:
        if text.strip() == "seed":
            if seed_rows is None:
                raise UsageError(
                    "--scale seed reads the range of the public seed rows: give them with --seed-set PATH "
                    "(or declare the range: --scale 'age=18:90,income=0:200000')"
                )
            low, high = seed_range(seed_rows)
        else:
            low, high = parse_range(text, None if features is None else list(features))
    except DpsummError as exc:
        raise UsageError(f"--scale: {exc}") from None
    return lambda X: scale_to_unit(X, low, high)


def _split_strata(owner_strata: list[Any], res: Any) -> list[Any] | None:
    """The strata of the summary's rows (each row bought carries its owner's strata)."""
    import numpy as np

    if any(st is None for st in owner_strata) or not len(res):
        return None
    cols = []
    for j in range(len(owner_strata[0])):
        cols.append(np.asarray([owner_strata[o][j][i] for o, i in zip(res.owner, res.index)]))
    return cols


def _run(args: argparse.Namespace) -> int:
    from ..quality import quality_lines, quality_report
    from ..summarize import summarize

    out_dir = writable_dir(args.out, "--out")  # before any noise is drawn
    header = header_arg(args.header)
    index = header_arg(args.index)
    gamma = gamma_arg(args.gamma)
    method = method_arg(args)
    if args.size is not None and args.size < 1:
        raise UsageError(f"--size must be >= 1, got {args.size}")
    budget = budget_arg(args, method, size=args.size, owners=len(args.owners))  # the whole plan, before any read
    label_column = _label_column(args.label_column)
    check_validation_labels(
        args,
        method,
        owners_labelled=args.labels is not None or label_column is not None,
        validation_labelled=isinstance(label_column, str),
    )
    buys_strata = bool(getattr(method, "needs_strata", False))
    if buys_strata and args.strata is None and args.strata_columns is None:
        raise UsageError(
            "--purchase strata buys rows by public attributes: name their columns with --strata-columns NAME,... "
            "(or give one strata file per owner with --strata) and declare their values with --levels"
        )
    seed = seed_set_arg(args.seed_set, args.features)
    seed_rows = None if seed is None or isinstance(seed, int) else seed
    if args.scale is not None and args.scale.strip() == "seed" and seed_rows is None:
        scale_arg(args.scale, None, None)  # refused before any file is read

    def scaler_of(features: Any) -> Any:
        return scale_arg(args.scale, seed_rows, features)

    owners, owner_strata, scaler = _owners_with_labels(
        args, header=header, index=index, scaler_of=scaler_of, buys_strata=buys_strata
    )
    val_table = _read_validation(args, header, index, label_column)
    validation = val_table.data if scaler is None else scaler(val_table.data)
    if seed_rows is not None and scaler is not None:
        seed = scaler(seed_rows)
    check_report_delta(args, int(validation.shape[0]))  # before any noise
    val_labels, val_strata = _validation_labels_and_strata(args, method, val_table, int(validation.shape[0]), header)
    try:
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
            validation_labels=val_labels if getattr(method, "needs_labels", False) else None,
            validation_strata=val_strata if buys_strata else None,
        )
    except InvalidParameterError as exc:
        if exc.argument in ("owners", "validation_strata") and "strata" in str(exc):
            flag = "--strata-columns" if args.strata_columns is not None else "--strata"
            raise UsageError(f"{flag}: {exc} (the declared values: --levels)") from None
        raise
    quality = quality_report(
        res,
        validation,
        summary_strata=_split_strata(owner_strata, res),
        validation_strata=val_strata,
        strata_names=None if args.strata_columns is None else args.strata_columns.split(","),
        validation_labels=val_labels,
        label_name=args.label_column if isinstance(label_column, str) else None,
    )
    report = build_report(
        res,
        args,
        budget,
        method,
        owners=[str(p) for p in args.owners],
        validation=str(args.validation),
        quality=quality,
    )
    out = write_outputs(res, out_dir, report)
    if args.json:
        print(json.dumps(jsonable(report), indent=2, default=str, allow_nan=False))
    else:
        print("\n".join(ledger_text(res, *report_deltas(args), args.random_state is not None)))
        print("\n".join(quality_lines(quality)))
        print(
            f"wrote {len(res)} rows to {out / 'summary.npy'} (accessed {res.accessed.total} raw rows); "
            f"report in {out / 'report.json'} (draw it: dpsumm report {out})"
        )
    return 0


def _read_validation(args: argparse.Namespace, header: Any, index: Any, label_column: int | str | None) -> Any:
    """The --validation table (its label and strata columns set aside as the flags say), described unless --json."""
    from .. import datasets

    features = None if args.features is None else args.features
    try:
        val_table = datasets.read_party_table(
            args.validation,
            features=features,
            label_column=label_column if isinstance(label_column, str) else None,
            strata_columns=args.strata_columns if args.validation_strata is None else None,
            header=header,
            index=index,
            argument="validation",
            labels_required=False,
        )
    except InvalidParameterError as exc:
        flag = {"features": "--features", "strata_columns": "--strata-columns"}.get(exc.argument or "", "--validation")
        raise UsageError(_flagged(exc, flag)) from None
    if not args.json:
        print(f"read {val_table.describe()}")
    return val_table


def _validation_labels_and_strata(
    args: argparse.Namespace, method: Any, val_table: Any, n_validation: int, header: Any
) -> tuple[Any, Any]:
    """The validation rows' labels (their column, or --validation-labels) and strata (their columns, or
    --validation-strata); a purchase by label refuses a run without labels."""
    val_labels = None if val_table.labels is None else _integral(val_table.labels)
    if args.validation_labels is not None:
        val_labels = _integral(_labels_file(args.validation_labels, "--validation-labels", n_validation, header))
    if getattr(method, "needs_labels", False) and val_labels is None:
        raise UsageError(
            f"--purchase labels releases the validation rows' label histogram: {args.validation} has no column "
            f"{args.label_column!r}; give the labels with --validation-labels PATH"
        )
    val_strata = val_table.strata
    if args.validation_strata is not None:
        from ..strata import load_strata

        val_strata = load_strata(args.validation_strata, n_validation, "--validation-strata")
    return val_labels, val_strata
