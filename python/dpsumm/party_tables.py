"""A party's table read by column name (the CLI, a Flower node, :func:`dpsumm.datasets.read_party_table`): the
feature, label and strata columns of one CSV or parquet file, and a strata file's columns; over the readers of
:mod:`dpsumm.files`."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ._validation import exc_text
from .errors import DataFileError, InvalidParameterError
from .files import (
    HEADER_CHOICES,
    INDEX_NAMES,
    LABEL_NAMES,
    _is_number,
    _load_npy,
    _path_arg,
    _read_any_table,
    _read_csv,
    _read_parquet,
    _refuse_non_finite,
    _split_columns,
    _string_labels,
    _TextColumn,
)
from .sources import DEFAULT_CHUNK_ROWS, RowSource, open_rows

__all__ = ["PartyTable", "column_names", "open_party_table", "read_party_table", "read_strata_file", "streams_table"]


def column_names(value: object, argument: str) -> tuple[str, ...] | None:
    """Column names given as a comma-separated string or a sequence of strings (None stays None), each non-empty
    and distinct; InvalidParameterError naming ``argument`` otherwise."""
    if value is None:
        return None
    if isinstance(value, str):
        names = [v.strip() for v in value.split(",")]
    elif isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
        names = [v.strip() for v in value]
    else:
        raise InvalidParameterError(
            f"`{argument}` must be column names, comma-separated ('age,income') or a list of str, got {value!r:.80}",
            argument,
        )
    if not names or any(not v for v in names):
        raise InvalidParameterError(f"`{argument}` has an empty column name: write the names as 'age,income'", argument)
    twice = sorted({v for v in names if names.count(v) > 1})
    if twice:
        raise InvalidParameterError(f"`{argument}` names {', '.join(map(repr, twice))} twice", argument)
    return tuple(names)


@dataclass(frozen=True)
class PartyTable:
    """One party's table read by :func:`read_party_table`: its feature rows (float64, in the order of
    ``features``), its labels (or None) and its strata (one column per named attribute, or None)."""

    data: np.ndarray
    features: tuple[str, ...]
    labels: np.ndarray | None
    strata: list[np.ndarray] | None
    path: str

    def describe(self) -> str:
        """One line for logs: ``path: N rows x M features (a, b), labels 'y', strata 'region'``."""
        lab = "" if self.labels is None else ", with labels"
        st = "" if self.strata is None else f", {len(self.strata)} strata column(s)"
        return f"{self.path}: {self.data.shape[0]} rows x {self.data.shape[1]} features ({', '.join(self.features)}){lab}{st}"


def _strata_values(column: np.ndarray | _TextColumn, p: Path, name: str, argument: str) -> np.ndarray:
    """A strata column as integers (whole numbers), floats, or strings (words); a column mixing words and numbers
    is refused (a stratum "3" and a stratum 3 would be told apart by accident)."""
    if isinstance(column, _TextColumn):
        numbers = [v for v in column.values if _is_number(v)]
        if numbers:
            word = column.values[column.row]
            raise DataFileError(
                f"`{argument}`: strata column {name!r} of {p} mixes words ({word!r}) and numbers ({numbers[0]!r}): "
                "write every value as a word (e.g. 'r3') or every value as a number",
                p,
                argument,
            )
        if any(not v for v in column.values):
            i = column.values.index("")
            raise DataFileError(
                f"`{argument}`: strata column {name!r} of {p} is empty at row {i} (counting from 0)", p, argument
            )
        return np.asarray(column.values, dtype=str)
    if not np.all(np.isfinite(column)):
        raise DataFileError(f"`{argument}`: strata column {name!r} of {p} holds a NaN or an infinity", p, argument)
    if np.all(np.mod(column, 1) == 0) and np.all(np.abs(column) < 2.0**53):
        return np.asarray(column, dtype=np.int64)
    return np.array(column, dtype=np.float64)


def read_party_table(
    path: str | Path,
    *,
    features: object = None,
    label_column: int | str | None = None,
    strata_columns: object = None,
    header: object = "auto",
    index: object = "auto",
    argument: str = "path",
    labels_required: bool = True,
) -> PartyTable:
    """One party's table (``.csv`` or ``.parquet`` with a header; ``.npy`` without strata or names): its feature
    columns, its label column and its strata columns, taken by name.

    Parameters
    ----------
    path : str or os.PathLike
    features : str, sequence of str or None
        The feature columns, by name (``"age,income"``), in this order. None: every column that is not the label,
        a stratum or a row index; every such column must then hold numbers.
    label_column : str, int or None
        The labels' column, by name (or position, counting from 0). Text labels are read as strings.
    strata_columns : str, sequence of str or None
        The public attributes' columns (``"region"`` or ``"region,site"``): words are read as strings, whole
        numbers as integers.
    header, index
        As in :func:`read_table`.
    argument : str
        The argument named in errors (the CLI names its flag).
    labels_required : bool, default=True
        False: a table without ``label_column`` is read with ``labels=None`` (the consumer's validation rows).

    Raises
    ------
    DataFileError
        A file that cannot be read; a text column among the features (the message names the column and the
        arguments that would claim it: ``strata_columns``, ``label_column`` or ``features``).
    InvalidParameterError
        A named column the table does not have (``features``, ``label_column`` or ``strata_columns``).
    """
    feats = column_names(features, "features")
    strata_names = column_names(strata_columns, "strata_columns")
    if label_column is not None and (isinstance(label_column, bool) or not isinstance(label_column, (int, str))):
        raise InvalidParameterError(
            f"`label_column` must be None, a column name or a position, got {label_column!r}", "label_column"
        )
    if not any(header is c or (isinstance(header, str) and header == c) for c in HEADER_CHOICES):
        raise InvalidParameterError(f"`header` must be 'auto', True or False, got {header!r}", "header")
    p = _path_arg(path, argument)
    arr, names, words = _read_any_table(p, header, argument)
    if arr.ndim != 2:
        raise DataFileError(f"`{argument}`: {p}: expected a 2-D table, got {arr.ndim}-D", p, argument)
    by_name = feats is not None or strata_names is not None or isinstance(label_column, str)
    if by_name and names is None:
        raise DataFileError(
            f"`{argument}`: {p} has no header line, so its columns cannot be taken by name: write the column names "
            "on its first line (CLI: --header yes if the first line is a header read as data)",
            p,
            argument,
        )
    width = arr.shape[1]
    listed = names if names is not None else [str(j) for j in range(width)]

    def position(name: str, what: str) -> int:
        if name not in listed:
            raise InvalidParameterError(
                f"`{what}`: {p} has no column {name!r} (its columns: {', '.join(listed)})", what
            )
        return listed.index(name)

    label_pos: int | None = None
    if isinstance(label_column, str):
        if label_column in listed:
            label_pos = listed.index(label_column)
        elif labels_required:
            position(label_column, "label_column")
    elif label_column is not None:
        if not -width <= label_column < width:
            raise InvalidParameterError(
                f"`label_column` {label_column} is out of range for {p} ({width} columns)", "label_column"
            )
        label_pos = label_column % width
    strata_pos = [position(n, "strata_columns") for n in strata_names or ()]
    claimed = set(strata_pos) | ({label_pos} if label_pos is not None else set())
    if label_pos is not None and label_pos in strata_pos:
        raise InvalidParameterError(f"`label_column` {listed[label_pos]!r} is also a strata column", "label_column")
    if feats is not None:
        feature_pos = [position(n, "features") for n in feats]
        both = [listed[j] for j in feature_pos if j in claimed]
        if both:
            raise InvalidParameterError(
                f"`features` names {', '.join(map(repr, both))}, also the label or a strata column: leave it out",
                "features",
            )
    else:
        feature_pos = [j for j in range(width) if j not in claimed]
    text = [j for j in feature_pos if j in words]
    if text:
        j = text[0]
        col = words[j]
        name = listed[j]
        raise DataFileError(
            f"`{argument}`: column {name!r} of {p} holds text ({col.values[col.row]!r}), which is never a feature: "
            f"name it as a public attribute to buy by (strata_columns; CLI: --strata-columns {name}), as the labels "
            f"(label_column; CLI: --label-column {name}), or leave it out by listing the feature columns "
            f"(features; CLI: --features {','.join(listed[k] for k in feature_pos if k not in words) or 'NAME,...'})",
            p,
            argument,
        )
    if not feature_pos:
        raise DataFileError(f"`{argument}`: {p} has no feature column left (features; CLI: --features)", p, argument)
    sub_names = [listed[j] for j in feature_pos] if names is not None else None
    sub_words = {i: words[j] for i, j in enumerate(feature_pos) if j in words}
    table = _split_columns(p, arr[:, feature_pos], sub_names, index if feats is None else False, None, sub_words)
    first_line = (2 if names is not None else 1) if p.suffix.lower() == ".csv" else None
    _refuse_non_finite(table.data, p, argument, table.header, first_line)
    labels = None
    if label_pos is not None:
        if label_pos in words:
            labels = _string_labels(words[label_pos].values, p, argument)
        else:
            labels = arr[:, label_pos].copy()
            _refuse_non_finite(labels, p, argument)
    strata = None
    if strata_names is not None:
        strata = [_strata_values(words[j] if j in words else arr[:, j], p, listed[j], argument) for j in strata_pos]
    kept = tuple(table.header) if table.header is not None else tuple(str(j) for j in feature_pos)
    return PartyTable(data=table.data, features=kept, labels=labels, strata=strata, path=str(p))


def read_strata_file(path: object, argument: str = "strata") -> list[np.ndarray]:
    """A party's strata from a file, one 1-D column per attribute: a ``.npy`` array (1-D: one attribute; 2-D: one
    column per attribute; numbers or strings, never pickles), a ``.csv`` file whose first line names the attributes,
    or a ``.parquet`` table (its columns). A CSV column of whole numbers reads as integers, of other numbers as
    floats, of words as strings; a column mixing words and numbers is refused. Blank lines are skipped (as
    :func:`load_array` does).

    Raises :class:`DataFileError` naming ``argument`` for a file that cannot be read, a 0-d array, a table with no
    column or no row, a NaN, an empty value or a mixed column.
    """
    p = _path_arg(path, argument)
    suffix = p.suffix.lower()
    if suffix == ".npy":
        arr = _load_npy(p, argument, text=True)
        if arr.ndim not in (1, 2):
            raise DataFileError(
                f"`{argument}`: {p} holds a {arr.ndim}-D array: strata are 1-D (one attribute) or 2-D (one column per "
                "attribute), one row per data row",
                p,
                argument,
            )
        if arr.dtype.kind == "S":
            try:
                arr = np.char.decode(arr, "utf-8")
            except UnicodeDecodeError as exc:
                raise DataFileError(
                    f"`{argument}`: {p} holds bytes that are not UTF-8 ({exc.reason})", p, argument
                ) from exc
        cols = [arr] if arr.ndim == 1 else [arr[:, j] for j in range(arr.shape[1])]
        if not cols or arr.shape[0] == 0:
            raise DataFileError(f"`{argument}`: {p} has no strata (an empty array)", p, argument)
        for j, c in enumerate(cols):
            if c.dtype.kind == "f" and not np.all(np.isfinite(c)):
                raise DataFileError(f"`{argument}`: {p} column {j} holds a NaN or an infinity", p, argument)
        return cols
    if suffix == ".csv":
        arr, names, words = _read_csv(p, True, argument)
    elif suffix == ".parquet":
        arr, names, words = _read_parquet(p, argument)
    else:
        raise DataFileError(
            f"`{argument}`: unknown file type {suffix!r} of {p} (use .npy, .csv or .parquet)", p, argument
        )
    if arr.shape[0] == 0:
        raise DataFileError(
            f"`{argument}`: {p} has a header line and no rows: write one line per data row below the header",
            p,
            argument,
        )
    return [
        _strata_values(words[j] if j in words else arr[:, j], p, (names or [str(j)])[j], argument)
        for j in range(arr.shape[1])
    ]


def streams_table(path: object) -> bool:
    """Whether :func:`open_party_table` reads ``path``: a ``.parquet`` file or a directory (of parquet files)."""
    if not isinstance(path, (str, os.PathLike)):
        return False
    p = Path(os.fspath(path))
    try:
        return p.is_dir() or (p.suffix.lower() == ".parquet" and p.is_file())
    except OSError:  # a name the system refuses (too long): the table reader refuses it naming the argument
        return False


def open_party_table(
    path: str | os.PathLike[str],
    *,
    features: object = None,
    label_column: int | str | None = None,
    strata_columns: object = None,
    argument: str = "path",
    labels_required: bool = True,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    progress: bool = False,
) -> RowSource:
    """:func:`read_party_table` of a parquet table (a ``.parquet`` file or a directory of parquet files) read where it
    lives (:func:`dpsumm.sources.open_rows`): its feature columns a :class:`~dpsumm.sources.ParquetRows` read in
    record batches at each pass (as stored: float32 columns stay float32), never loaded whole; its label column and
    strata columns read once, as :func:`read_party_table` reads them (a column of words as strings; labels of
    numbers as float64; strata of whole numbers as integers). Every value is checked in the one read that opens it:
    a column of the wrong type, a NaN, an infinity or a null is refused naming the file and the column.

    Without ``features``, the feature columns are every column but the labels, the strata and pandas' index columns
    (``__index_level_k__``, and a first column named like its index, ``""`` or ``"Unnamed: 0"``); a feature column
    named like labels (:data:`dpsumm.files.LABEL_NAMES`) is refused, as :func:`read_party_table` refuses it.

    Returns
    -------
    RowSource
        ``data`` (the feature rows), ``labels``, ``strata``, ``columns`` (the features' names), ``check_unchanged``.
    """
    import pyarrow.dataset as ds

    feats = column_names(features, "features")
    strata_names = column_names(strata_columns, "strata_columns")
    if label_column is not None and (isinstance(label_column, bool) or not isinstance(label_column, (int, str))):
        raise InvalidParameterError(
            f"`label_column` must be None, a column name or a position, got {label_column!r}", "label_column"
        )
    p = _path_arg(path, argument)
    try:
        names = [str(n) for n in ds.dataset(str(p), format="parquet").schema.names]
    except Exception as exc:  # pyarrow's own error types: not a parquet table
        raise DataFileError(f"`{argument}`: {p} is not a parquet table ({exc_text(exc)})", p, argument) from exc
    label_name: str | None = None
    if isinstance(label_column, str):
        if label_column in names:
            label_name = label_column
        elif labels_required:
            raise InvalidParameterError(
                f"`label_column`: {p} has no column {label_column!r} (its columns: {', '.join(names)})", "label_column"
            )
    elif label_column is not None:
        if not -len(names) <= label_column < len(names):
            raise InvalidParameterError(
                f"`label_column` {label_column} is out of range for {p} ({len(names)} columns)", "label_column"
            )
        label_name = names[label_column % len(names)]
    for n in strata_names or ():
        if n not in names:
            raise InvalidParameterError(
                f"`strata_columns`: {p} has no column {n!r} (its columns: {', '.join(names)})", "strata_columns"
            )
    if label_name is not None and label_name in (strata_names or ()):
        raise InvalidParameterError(f"`label_column` {label_name!r} is also a strata column", "label_column")
    claimed = set(strata_names or ()) | ({label_name} if label_name is not None else set())
    if feats is not None:
        for n in feats:
            if n not in names:
                raise InvalidParameterError(
                    f"`features`: {p} has no column {n!r} (its columns: {', '.join(names)})", "features"
                )
        both = [n for n in feats if n in claimed]
        if both:
            raise InvalidParameterError(
                f"`features` names {', '.join(map(repr, both))}, also the label or a strata column: leave it out",
                "features",
            )
        chosen = list(feats)
    else:
        chosen = [
            n
            for j, n in enumerate(names)
            if n not in claimed
            and not re.fullmatch(r"__index_level_\d+__", n)
            and not (j == 0 and n.strip().lower() in INDEX_NAMES)
        ]
        for n in chosen:
            if n.strip().lower() in LABEL_NAMES:
                raise DataFileError(
                    f"`{argument}`: column {n!r} of {p} looks like labels, not a feature: read them with "
                    f"label_column={n!r} (CLI: --label-column {n}), or rename the column",
                    p,
                    argument,
                )
    source = open_rows(
        p,
        labels=label_name,
        strata=list(strata_names or ()),
        features=chosen,
        chunk_rows=chunk_rows,
        progress=progress,
        argument=argument,
    )
    labels: np.ndarray | None = None
    if source.labels is not None:
        read = _column_values(source.labels, p, str(label_name), argument, "label")
        assert isinstance(read, np.ndarray)  # labels are never a _TextColumn
        labels = read
    strata = None
    if strata_names is not None:
        assert source.strata is not None
        strata = [
            _strata_values(_column_values(col, p, n, argument, "strata"), p, n, argument)
            for col, n in zip(source.strata, strata_names)
        ]
    return dataclasses.replace(source, labels=labels, strata=strata)


def _column_values(column: np.ndarray, p: Path, name: str, argument: str, what: str) -> np.ndarray | _TextColumn:
    """A label or strata column read from a parquet table as :func:`read_party_table` reads it: words (a column of
    strings) as strings (labels: :func:`~dpsumm.files._string_labels`; strata: a :class:`~dpsumm.files._TextColumn`),
    numbers as float64 with a NaN, an infinity or a null refused naming the file and the column."""
    if column.dtype.kind in "OUS":
        values = ["" if v is None else str(v) for v in column.tolist()]
        if what == "label":
            return _string_labels([v.strip() for v in values], p, argument)
        j = next((j for j, v in enumerate(values) if not _is_number(v)), 0)
        return _TextColumn([v.strip() for v in values], j, None, values[j] if values else "")
    numbers = np.asarray(column, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(numbers))
    if bad.size:
        raise DataFileError(
            f"`{argument}`: {what} column {name!r} of {p} holds {numbers[bad[0]]} (a NaN, an infinity or a null) at "
            f"row {int(bad[0])} (counting from 0)",
            p,
            argument,
        )
    return numbers
