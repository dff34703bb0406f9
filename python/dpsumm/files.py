"""Reading rows and labels from files: .npy, .csv and .parquet (the CLI, the Flower nodes, the experiments).

Every reader names the file and the argument in its :class:`~dpsumm.errors.DataFileError`; none unpickles
(``allow_pickle`` stays False), none downloads.
"""

from __future__ import annotations

import csv
import errno
import io
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import numpy as np
from numpy.lib import format as npf

from ._validation import all_finite, exc_text
from .errors import DataFileError, DpsummError, InvalidParameterError

__all__ = [
    "load_array",
    "load_labels",
    "load_owners",
    "read_table",
    "Table",
    "HEADER_CHOICES",
    "MAX_FILE_BYTES",
    "MAX_FILE_VALUES",
    "MAX_LABEL_CHARS",
    "LABEL_NAMES",
]


def _read_bytes(p: Path, argument: str) -> bytes:
    try:
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise DataFileError(
                f"`{argument}`: {p} has {size} bytes, more than the {MAX_FILE_BYTES} a data file may "
                "have here (use a .npy file, which is read without a copy)",
                p,
                argument,
            )
        return p.read_bytes()
    except OSError as exc:
        raise _os_error(exc, p, argument) from exc


HEADER_CHOICES = ("auto", True, False)


@dataclass(frozen=True)
class Table:
    """What :func:`read_table` read: the feature rows, the header (if any), the row count, and the columns
    that are not features (a dropped row index, the labels)."""

    data: np.ndarray
    header: list[str] | None
    n_rows: int
    path: str
    labels: np.ndarray | None = None
    dropped: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line for logs: ``path: N rows x M columns, header: ...`` (and what was set aside)."""
        head = "none" if self.header is None else ",".join(self.header)
        extra = "".join(f"; {d}" for d in self.dropped)
        lab = "; labels read from their column" if self.labels is not None else ""
        return f"{self.path}: {self.n_rows} rows x {self.data.shape[1]} columns, header: {head}{extra}{lab}"


#: Largest data file read into memory as text or bytes (CSV, IDX): 4 GiB.
MAX_FILE_BYTES = 1 << 32
#: Most values (rows x columns) a data file may hold.
MAX_FILE_VALUES = 1 << 32
#: Header names that mean "this column is the labels, not a feature" (case-insensitive).
LABEL_NAMES = ("label", "labels", "target", "targets", "class")
#: Header names pandas gives an index column (``to_csv()`` writes an empty one).
INDEX_NAMES = ("", "unnamed: 0")
#: Longest label read from a file, in characters (a class name, not a document): a string array is as wide as
#: its longest entry, so one long label would multiply the memory of every label.
MAX_LABEL_CHARS = 256


@dataclass(frozen=True)
class _TextColumn:
    """A column of a table file that is not all numbers: its values as stripped strings, and where its first
    non-number is (``row`` counting from 0 in the data; ``line``: the CSV file line, None for parquet)."""

    values: list[str]
    row: int
    line: int | None
    field: str

    def not_numeric(self, p: Path, argument: str, hint: str = "") -> DataFileError:
        where = f"line {self.line}" if self.line is not None else f"row {self.row}"
        return DataFileError(
            f"`{argument}`: {p} {where} is not numeric (could not convert string to float: {self.field!r}){hint}",
            p,
            argument,
        )


def _os_error(exc: OSError, p: object, argument: str) -> DataFileError:
    """An ``OSError`` on a user's path as a :class:`DataFileError` naming the argument and what to do."""
    reason = {
        errno.ENAMETOOLONG: "the path is too long",
        errno.ENOENT: "no such file",
        errno.EACCES: "permission denied (check the file's permissions)",
        errno.EISDIR: "it is a directory, not a file",
        errno.ENOTDIR: "a component of the path is not a directory",
        errno.ELOOP: "too many symbolic links",
    }.get(exc.errno or -1, exc.strerror or type(exc).__name__)
    shown = str(p) if len(str(p)) <= 200 else str(p)[:200] + "..."
    return DataFileError(f"`{argument}`: cannot read {shown}: {reason}", p, argument)


def _path_like(path: object, name: str) -> Path:
    if isinstance(path, bool) or not isinstance(path, (str, Path)) and not hasattr(path, "__fspath__"):
        raise InvalidParameterError(f"`{name}` must be a str or os.PathLike, got {type(path).__name__}", name)
    try:
        p = Path(path)  # type: ignore[arg-type]
    except TypeError as exc:  # __fspath__ returning bytes
        raise InvalidParameterError(f"`{name}` must be a str or os.PathLike: {exc}", name) from exc
    if "\x00" in str(p):
        raise DataFileError(f"`{name}`: the path contains a NUL character", p, name)
    if not str(p).strip() or (isinstance(path, str) and not path.strip()):
        raise DataFileError(f"`{name}`: the path is empty", p, name)
    return p


def _is_file(p: Path, argument: str) -> bool:
    try:
        return p.is_file()
    except OSError as exc:  # e.g. ENAMETOOLONG (is_file only swallows "not found")
        raise _os_error(exc, p, argument) from exc


def _is_dir(p: Path, argument: str) -> bool:
    try:
        return p.is_dir()
    except OSError as exc:
        raise _os_error(exc, p, argument) from exc


def _path_arg(path: object, argument: str = "path") -> Path:
    p = _path_like(path, argument)
    if not _is_file(p, argument):
        why = "it is a directory" if _is_dir(p, argument) else "file not found"
        raise DataFileError(f"`{argument}`: {why}: {p}", p, argument)
    return p


def _load_npy(p: Path, argument: str, text: bool = False) -> np.ndarray:
    """A ``.npy`` file's array, its header checked against the file's size and :data:`MAX_FILE_VALUES` before
    anything is allocated (a header may claim any shape); objects (pickles) and non-real dtypes refused
    (``text``: fixed-width strings, numpy's unicode ``U`` or bytes ``S`` dtypes, are read too)."""
    try:
        with open(p, "rb") as fh:
            try:
                version = npf.read_magic(fh)
                if version == (1, 0):
                    shape, fortran, dtype = npf.read_array_header_1_0(fh)
                elif version == (2, 0):
                    shape, fortran, dtype = npf.read_array_header_2_0(fh)
                else:
                    raise ValueError(f"unsupported .npy format version {version}")
            except (ValueError, SyntaxError, TypeError, EOFError) as exc:
                raise DataFileError(f"`{argument}`: {p} is not a valid .npy file ({exc})", p, argument) from exc
            offset = fh.tell()
            size = p.stat().st_size
    except OSError as exc:
        raise _os_error(exc, p, argument) from exc
    if dtype.hasobject:
        hint = ": save string labels as a string array, np.save(path, np.asarray(labels, dtype=str))" if text else ""
        raise DataFileError(
            f"`{argument}`: {p} holds Python objects (pickled), which are never loaded{hint}", p, argument
        )
    kinds = "fiubUS" if text else "fiub"
    if dtype.kind not in kinds or dtype.fields is not None or dtype.subdtype is not None:
        what = "real numbers or strings" if text else "real numbers"
        raise DataFileError(f"`{argument}`: {p} must hold {what}, got dtype {dtype}", p, argument)
    count = math.prod(shape)
    if count > MAX_FILE_VALUES:
        raise DataFileError(
            f"`{argument}`: {p} claims shape {shape} ({count} values), more than the "
            f"{MAX_FILE_VALUES} a data file may hold",
            p,
            argument,
        )
    if size - offset != count * dtype.itemsize:
        raise DataFileError(
            f"`{argument}`: {p} is truncated or corrupt: its header claims shape {shape} of {dtype} "
            f"({count * dtype.itemsize} bytes), the file holds {size - offset}",
            p,
            argument,
        )
    try:
        arr = np.load(p, allow_pickle=False)
    except OSError as exc:
        raise _os_error(exc, p, argument) from exc
    except (ValueError, EOFError, MemoryError) as exc:
        raise DataFileError(f"`{argument}`: {p} is not a readable .npy file ({exc_text(exc)})", p, argument) from exc
    return cast(np.ndarray, arr)


def _first_non_finite(arr: np.ndarray, block_bytes: int = 1 << 24) -> tuple[int, ...] | None:
    """The index of ``arr``'s first NaN or infinite value in row-major order, or None (integer arrays: None).
    Read once (:func:`all_finite`) when every value is finite, else searched in row blocks of about 16 MB."""
    if arr.dtype.kind not in "fc" or arr.size == 0 or all_finite(arr):
        return None
    if arr.ndim == 0:
        return ()
    rows = arr.reshape(arr.shape[0], -1)
    step = max(1, block_bytes // (rows.shape[1] * arr.itemsize))
    for start in range(0, rows.shape[0], step):
        bad = ~np.isfinite(rows[start : start + step])
        if bad.any():
            flat = start * rows.shape[1] + int(np.argmax(bad))
            return tuple(int(i) for i in np.unravel_index(flat, arr.shape))
    return None


def _refuse_non_finite(
    arr: np.ndarray, p: Path, argument: str, names: list[str] | None = None, first_line: int | None = None
) -> None:
    """Refuse a file whose values hold a NaN or an infinity, naming the file and where the first one is: its row
    and column (counted from 0; ``names``: the column's header; ``first_line``: the file line of row 0, for a
    CSV), an entry of a 1-D array, or an index. Every consumer of the rows and labels refuses such values; here
    the error names the file rather than an argument far from it."""
    where = _first_non_finite(arr)
    if where is None:
        return
    value = arr[where]
    if len(where) == 2:
        row, col = where
        details = ([repr(names[col])] if names is not None else []) + ["counting from 0"]
        if first_line is not None:
            details.append(f"line {row + first_line} of the file")
        pos = f"row {row}, column {col} ({'; '.join(details)})"
    elif len(where) == 1:
        pos = f"entry {where[0]} (counting from 0)"
    else:
        pos = f"index {where}"
    if first_line is not None and np.isinf(value):
        value = f"{value} (or a number beyond the float range, like 1e400)"
    raise DataFileError(
        f"`{argument}`: {p} holds {value} at {pos}: NaN and infinities are refused when read (no use "
        "of the data takes them); fill or drop them first",
        p,
        argument,
    )


def _is_number(field: str) -> bool:
    try:
        float(field)
    except ValueError:
        return False
    return True


def _read_csv(
    p: Path, header: object, argument: str = "path"
) -> tuple[np.ndarray, list[str] | None, dict[int, _TextColumn]]:
    """Parse a CSV with the standard library's ``csv`` reader and the explicit header rule (:func:`read_table`).

    Returns the table as floats, its header, and its columns that are not all numbers (by position): their
    entries in the float table are 0 and the caller decides (a label column is read as strings; any other
    such column is refused with :meth:`_TextColumn.not_numeric`).
    """
    raw = _read_bytes(p, argument)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataFileError(f"`{argument}`: {p} is not a text CSV file (not UTF-8: {exc.reason})", p, argument) from exc
    del raw
    if "\x00" in text:
        raise DataFileError(f"`{argument}`: {p} is not a text CSV file (it contains NUL bytes)", p, argument)
    try:
        rows = [r for r in csv.reader(io.StringIO(text)) if r and any(f.strip() for f in r)]
    except csv.Error as exc:
        raise DataFileError(f"`{argument}`: {p} is not a valid CSV file ({exc})", p, argument) from exc
    del text
    if not rows:
        raise DataFileError(f"`{argument}`: {p} has no rows", p, argument)
    first = [f.strip() for f in rows[0]]
    width = len(first)
    for i, r in enumerate(rows):
        if len(r) != width:
            raise DataFileError(f"`{argument}`: {p} line {i + 1} has {len(r)} fields, expected {width}", p, argument)
    if len(rows) * width > MAX_FILE_VALUES:
        raise DataFileError(
            f"`{argument}`: {p} has {len(rows) * width} values, more than {MAX_FILE_VALUES}", p, argument
        )
    # Each column below the first line as numbers, or None when it is not all numbers (a column of words: labels).
    below: list[np.ndarray | None] = []
    for c in range(width):
        try:
            below.append(np.array([float(r[c]) for r in rows[1:]], dtype=np.float64))
        except (ValueError, OverflowError):
            below.append(None)
    texty = [c for c in range(width) if below[c] is None]
    if header == "auto":
        # A header is a first line with a non-numeric field over a column of numbers, or exactly the column
        # numbers 0..n-1 that pandas writes for an unnamed DataFrame (`to_csv(index=False)`), when there are 2+
        # columns; over a column of words, a first field named like labels (LABEL_NAMES) is a header.
        pandas_default = width >= 2 and first == [str(i) for i in range(width)]
        has_header = (
            pandas_default
            or any(not _is_number(first[c]) for c in range(width) if c not in texty)
            or any(first[c].lower() in LABEL_NAMES for c in texty)
        )
    else:
        has_header = bool(header)
    names = first if has_header else None
    top = 1 if has_header else 0
    out = np.zeros((len(rows) - top, width), dtype=np.float64)
    words: dict[int, _TextColumn] = {}
    for c in range(width):
        column = below[c]
        if column is not None and not has_header:
            column = np.concatenate([[float(rows[0][c])], column]) if _is_number(rows[0][c]) else None
        if column is not None:
            out[:, c] = column
            continue
        cells = [r[c] for r in rows[top:]]
        i = next(i for i, f in enumerate(cells) if not _is_number(f))
        words[c] = _TextColumn([f.strip() for f in cells], i, i + top + 1, cells[i])
    return out, names, words


def read_table(
    path: str | Path, *, header: object = "auto", index: object = "auto", label_column: int | str | None = None
) -> Table:
    """Feature rows from a ``.npy``, ``.csv`` or ``.parquet`` file, with the header, row count and labels.

    Parameters
    ----------
    path : str or os.PathLike
    header : {"auto", True, False}, default="auto"
        CSV only. ``True``: the first line is a header; ``False``: every line is data. ``"auto"``: the
        first line is a header when one of its fields is not a number, or when it is exactly
        ``0,1,...,n-1`` with ``n >= 2`` (what ``pandas.DataFrame.to_csv(index=False)`` writes for unnamed
        columns). Pass ``True``/``False`` when a file could be read either way.
    index : {"auto", True, False}, default="auto"
        Whether the first column is a row index, not a feature. ``"auto"``: a first column whose header is
        pandas' index name (empty, as ``to_csv()`` writes it, ``"Unnamed: 0"`` or ``"__index_level_0__"``)
        and whose values are integers is dropped (``Table.dropped`` says so), as are the ``__index_level_k__``
        columns ``to_parquet()`` stores; in a CSV or parquet file, a first column holding exactly the row numbers
        ``0, 1, ..., n-1`` (or ``1, ..., n``) under any other name, or without a header, is refused as ambiguous.
        ``True``: drop the first column; ``False``: keep it as a feature.
    label_column : int, str or None, default None
        The column holding the labels (by position, negative from the end, or by header name): read into
        ``Table.labels`` and removed from the features. Without it, a column named like labels
        (:data:`LABEL_NAMES`: "label", "target", "class", ...) is refused rather than read as a feature.

    Returns
    -------
    Table
        ``data`` (2-D float array of the features), ``header`` (list of str or None), ``n_rows``, ``labels``,
        ``dropped``.

    Raises
    ------
    DataFileError
        ``argument="path"`` for a missing, unreadable, over-long, corrupt, truncated, oversized, pickled,
        object-dtype, binary or ragged file, a file holding a NaN or an infinity (in any column, index and
        labels included; the message gives the row and column of the first, and for a CSV its line), or an
        index or label column that cannot be told apart from the features; the message names the file and
        what to do.
    InvalidParameterError
        ``argument="header"``, ``"index"`` or ``"label_column"`` for a bad option.
    """
    if not any(header is c or (isinstance(header, str) and header == c) for c in HEADER_CHOICES):
        raise InvalidParameterError(f"`header` must be 'auto', True or False, got {header!r}", "header")
    if not any(index is c or (isinstance(index, str) and index == c) for c in HEADER_CHOICES):
        raise InvalidParameterError(f"`index` must be 'auto', True or False, got {index!r}", "index")
    if label_column is not None and (isinstance(label_column, bool) or not isinstance(label_column, (int, str))):
        raise InvalidParameterError(
            f"`label_column` must be None, an int or a str, got {label_column!r}", "label_column"
        )
    p = _path_arg(path)
    arr, names, words = _read_any_table(p, header, "path")
    if arr.ndim != 2:
        raise DataFileError(f"`path`: {p}: expected a 2-D table, got {arr.ndim}-D", p, "path")
    if words and label_column is None and not (index is True and list(words) == [0]):
        c, first = min(words.items(), key=lambda item: item[1].row)  # no column of words is set aside: refuse one
        label_hint = (
            f"; if column {c} holds the labels, read it with label_column={c} (CLI: --label-column {c})"
            if first.row > 0 or names is not None
            else ""
        )
        raise first.not_numeric(p, "path", _header_hint(first, names) + label_hint)
    first_line = (2 if names is not None else 1) if p.suffix.lower() == ".csv" else None
    _refuse_non_finite(arr, p, "path", names, first_line)
    return _split_columns(p, arr, names, index, label_column, words)


def _read_any_table(
    p: Path, header: object, argument: str, text: bool = False
) -> tuple[np.ndarray, list[str] | None, dict[int, _TextColumn]]:
    """A .npy, .csv or .parquet file as (values, header, columns of words) (:func:`_read_csv`); ``text``: a .npy file
    may hold strings (:func:`_load_npy`)."""
    suffix = p.suffix.lower()
    if suffix == ".npy":
        return _load_npy(p, argument, text), None, {}
    if suffix == ".csv":
        return _read_csv(p, header, argument)
    if suffix == ".parquet":
        return _read_parquet(p, argument)
    raise DataFileError(f"`{argument}`: unknown file type {suffix!r} of {p} (use .npy, .csv or .parquet)", p, argument)


def _header_hint(column: _TextColumn, names: list[str] | None) -> str:
    return (
        " (pass header=True if the first line is a header)"
        if column.row == 0 and names is None and column.line is not None
        else ""
    )


def _string_labels(values: Sequence[str] | np.ndarray, p: Path, argument: str) -> np.ndarray:
    """Labels read as strings, as a numpy unicode array: each non-empty and at most :data:`MAX_LABEL_CHARS` long
    (checked before the array, whose width is the longest label's, is made)."""
    for i, v in enumerate(values):
        if not str(v).strip():
            raise DataFileError(
                f"`{argument}`: {p} has an empty label at entry {i} (counting from 0): every row needs its label",
                p,
                argument,
            )
        if len(v) > MAX_LABEL_CHARS:
            raise DataFileError(
                f"`{argument}`: {p} has a label of {len(v)} characters at entry {i} (counting from "
                f"0), more than the {MAX_LABEL_CHARS} a label may have",
                p,
                argument,
            )
    return np.array(list(values), dtype=str) if len(values) else np.zeros(0, dtype="<U1")


@dataclass
class _Columns:
    """A table's columns as they are set aside: the values, the header (and its lower-cased form), and each
    column's position in the file."""

    arr: np.ndarray
    names: list[str] | None
    norm: list[str] | None
    orig: list[int]

    @property
    def width(self) -> int:
        return int(self.arr.shape[1])


def _split_columns(
    p: Path,
    arr: np.ndarray,
    names: list[str] | None,
    index: object,
    label_column: int | str | None,
    words: dict[int, _TextColumn] | None = None,
) -> Table:
    """Set aside a row-index column and the label column; refuse ones that cannot be told apart. ``words``: the
    columns that are not numbers (by position in ``arr``), allowed only as the label column or a dropped index."""
    dropped: list[str] = []
    words = words or {}
    norm = None if names is None else [h.strip().lower() for h in names]
    cols = _Columns(arr, names, norm, list(range(arr.shape[1])))
    _drop_stored_index(cols, index, dropped)
    _drop_row_index(p, cols, index, words, dropped)
    labels = None if label_column is None else _take_label_column(p, cols, label_column, words)
    features_words = [words[j] for j in cols.orig if j in words]
    if features_words:  # a column of words left among the features
        first_word = min(features_words, key=lambda w: w.row)
        raise first_word.not_numeric(p, "path", _header_hint(first_word, cols.names))
    if cols.norm is not None:
        names = cols.names
        for j, h in enumerate(cols.norm):
            if h in LABEL_NAMES:
                raise DataFileError(
                    f"`path`: column {names[j]!r} of {p} looks like labels, not a feature: give the labels in "  # type: ignore[index]
                    f"their own file (load_labels; CLI: --labels), or read them with label_column={names[j]!r} "  # type: ignore[index]
                    f"(CLI: --label-column {j}), or rename the column",
                    p,
                    "path",
                )
    arr = cols.arr
    return Table(
        data=arr, header=cols.names, n_rows=int(arr.shape[0]), path=str(p), labels=labels, dropped=tuple(dropped)
    )


def _drop_stored_index(cols: _Columns, index: object, dropped: list[str]) -> None:
    """pandas' to_parquet() stores a non-default index as trailing columns "__index_level_<k>__": drop them."""
    names, norm, width = cols.names, cols.norm, cols.width
    stored = [j for j, h in enumerate(norm or []) if re.fullmatch(r"__index_level_\d+__", h)]
    if stored and index is not False and width - len(stored) >= 1:
        dropped.append(f"pandas index column(s) {', '.join(repr(names[j]) for j in stored)} dropped")  # type: ignore[index]
        keep = [j for j in range(width) if j not in stored]
        cols.arr = cols.arr[:, keep]
        cols.names = [names[j] for j in keep]  # type: ignore[index]
        cols.norm = [norm[j] for j in keep]  # type: ignore[index]
        cols.orig = [cols.orig[j] for j in keep]


def _drop_row_index(p: Path, cols: _Columns, index: object, words: dict[int, _TextColumn], dropped: list[str]) -> None:
    """Drop the first column when it is a row index (``index=True``, or ``"auto"`` and named like pandas' index);
    refuse one that only looks like it."""
    arr, names, norm, width = cols.arr, cols.names, cols.norm, cols.width
    n = arr.shape[0]
    drop_first = False
    if width >= 1 and (index is True or index == "auto"):
        first = arr[:, 0] if n else np.zeros(0)
        pandas_name = norm is not None and norm[0] in INDEX_NAMES
        first_numbers = cols.orig[0] not in words
        integral = first_numbers and (bool(np.all(np.isfinite(first)) and np.all(np.mod(first, 1) == 0)) if n else True)
        if index is True:
            drop_first = True
        elif pandas_name and integral:
            drop_first = True
        elif pandas_name:
            raise DataFileError(
                f"`path`: the first column of {p} is named like pandas' index ({names[0]!r}) but "  # type: ignore[index]
                "holds non-integers: pass index=False (CLI: --index no) to read it as a feature, or name it",
                p,
                "path",
            )
        elif width >= 2 and p.suffix.lower() != ".npy" and first_numbers and _is_row_number(first):
            raise DataFileError(
                f"`path`: the first column of {p} holds exactly the row numbers ({int(first[0])}, {int(first[1])}, "
                f"..., {int(first[-1])}): a row index (pandas' to_csv() writes one), not a feature? Save the file "
                "without it (to_csv(index=False)), or read it with read_table(..., index=True) (CLI: --index yes) to "
                "drop it or index=False (--index no) to keep it",
                p,
                "path",
            )
    if drop_first:
        if width < 2:
            raise DataFileError(f"`path`: {p} has only an index column, no features", p, "path")
        what = "row index" if names is None else f"row index column {names[0]!r}"
        dropped.append(f"{what} dropped")
        cols.arr = arr[:, 1:]
        cols.names = None if names is None else names[1:]
        cols.norm = None if norm is None else norm[1:]
        cols.orig = cols.orig[1:]


def _is_row_number(col: np.ndarray) -> bool:
    """Whether ``col`` holds exactly the row numbers, from 0 or from 1 (two rows at least)."""
    n = col.shape[0]
    return (
        n >= 2
        and bool(np.array_equal(col, np.arange(n)))
        or (n >= 2 and bool(np.array_equal(col, np.arange(1, n + 1))))
    )


def _take_label_column(p: Path, cols: _Columns, label_column: int | str, words: dict[int, _TextColumn]) -> np.ndarray:
    """Set the label column aside: its values (strings when it holds words)."""
    names, norm, width = cols.names, cols.norm, cols.width
    if isinstance(label_column, str):
        if names is None or label_column not in names:
            raise InvalidParameterError(
                f"`label_column` {label_column!r} is not a column of {p} (columns: {names})", "label_column"
            )
        c = names.index(label_column)
    else:
        c = int(label_column)
        if not -width <= c < width:
            raise InvalidParameterError(f"`label_column` {c} is out of range for {p} ({width} columns)", "label_column")
        c %= width
    if width < 2:
        raise DataFileError(f"`path`: {p} has only the label column, no features", p, "path")
    orig = cols.orig
    labels = _string_labels(words[orig[c]].values, p, "path") if orig[c] in words else cols.arr[:, c].copy()
    cols.arr = np.delete(cols.arr, c, axis=1)
    cols.names = None if names is None else names[:c] + names[c + 1 :]
    cols.norm = None if norm is None else norm[:c] + norm[c + 1 :]
    cols.orig = orig[:c] + orig[c + 1 :]
    return labels


def _read_parquet(p: Path, argument: str = "path") -> tuple[np.ndarray, list[str], dict[int, _TextColumn]]:
    """A parquet table as (floats, column names, columns of strings) (:func:`_read_csv`'s contract): a column of
    strings (or of a dictionary of strings, pandas' categorical) is returned as words, a null in it as ``""``."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise DataFileError("reading .parquet needs pyarrow: pip install 'dpsumm[parquet]'", p, argument) from exc
    try:
        meta = pq.read_metadata(p)
        if meta.num_rows * max(1, meta.num_columns) > MAX_FILE_VALUES:
            raise DataFileError(
                f"`{argument}`: {p} has {meta.num_rows} rows x {meta.num_columns} columns, more "
                f"than {MAX_FILE_VALUES} values",
                p,
                argument,
            )
        table = pq.read_table(p)
        if table.num_columns == 0:
            raise DataFileError(f"`{argument}`: {p} has no columns", p, argument)
        arr = np.zeros((table.num_rows, table.num_columns), dtype=np.float64)
        words: dict[int, _TextColumn] = {}
        for i in range(table.num_columns):
            column = table.column(i)
            kind = column.type.value_type if pa.types.is_dictionary(column.type) else column.type
            if pa.types.is_string(kind) or pa.types.is_large_string(kind):
                values = ["" if v is None else str(v) for v in column.to_pylist()]
                j = next((j for j, v in enumerate(values) if not _is_number(v)), 0)
                words[i] = _TextColumn([v.strip() for v in values], j, None, values[j] if values else "")
            else:
                arr[:, i] = column.to_numpy().astype(np.float64)
    except DpsummError:
        raise
    except OSError as exc:
        raise _os_error(exc, p, argument) from exc
    except Exception as exc:  # pyarrow raises its own error types for corrupt files
        raise DataFileError(f"`{argument}`: {p} is not a numeric parquet table ({exc_text(exc)})", p, argument) from exc
    return arr, [str(n) for n in table.column_names], words


def load_array(path: str | Path, *, header: object = "auto", index: object = "auto") -> np.ndarray:
    """Feature rows from a ``.npy``, ``.csv`` or ``.parquet`` file: ``read_table(path, ...).data``.

    See :func:`read_table` for the header, index and label-column rules and the errors.
    """
    return read_table(path, header=header, index=index).data


def load_labels(path: str | Path, *, header: object = "auto") -> np.ndarray:
    """Labels from a ``.npy`` file (1-D, or one column) or a one-column ``.csv``/``.parquet`` file, as a 1-D array.

    Numbers or strings. A ``.npy`` file of numbers gives its own dtype, one of strings (numpy's ``U`` or ``S``
    dtypes, ``np.save(path, np.asarray(labels, dtype=str))``) a unicode array; an object array is refused (it
    is pickled: never loaded). A CSV or parquet column of numbers gives float64, a column holding anything else
    (words) its entries as strings, spaces around them dropped. A CSV header (``header``, as in
    :func:`read_table`): with ``"auto"``, the first line is a header when it is not a number over a column of
    numbers, or when it is a label name of :data:`LABEL_NAMES` (``label``, ``target``, ``class``, ...) over a
    column of words; any other first line of a column of words is a label (pass ``header=True`` for another
    header name).

    Raises :class:`DataFileError` (``argument="labels"``) for a file that cannot be read, is not one column, or
    holds a NaN or an infinity (the message gives the position of the first), an empty label or a label longer
    than :data:`MAX_LABEL_CHARS` characters.
    """
    if not any(header is c or (isinstance(header, str) and header == c) for c in HEADER_CHOICES):
        raise InvalidParameterError(f"`header` must be 'auto', True or False, got {header!r}", "header")
    p = _path_arg(path, "labels")
    arr, names, words = _read_any_table(p, header, "labels", text=True)
    if arr.dtype.kind in "US":
        if arr.ndim == 2 and arr.shape[1] == 1:
            arr = arr[:, 0]
        if arr.ndim != 1:
            raise DataFileError(f"`labels`: {p}: labels must be 1-D or one column, got shape {arr.shape}", p, "labels")
        if arr.dtype.kind == "S":
            try:
                arr = np.char.decode(arr, "utf-8")
            except UnicodeDecodeError as exc:
                raise DataFileError(
                    f"`labels`: {p} holds bytes that are not UTF-8 text ({exc.reason})", p, "labels"
                ) from exc
        return _string_labels(arr.tolist(), p, "labels")
    first_line = (2 if names is not None else 1) if p.suffix.lower() == ".csv" else None
    if arr.ndim == 1:
        _refuse_non_finite(arr, p, "labels")
        return arr
    if arr.ndim != 2 or arr.shape[1] != 1:
        raise DataFileError(f"`labels`: {p}: labels must be 1-D or one column, got shape {arr.shape}", p, "labels")
    if 0 in words:
        return _string_labels(words[0].values, p, "labels")
    _refuse_non_finite(arr, p, "labels", names, first_line)
    return arr[:, 0]


def load_owners(paths: Sequence[str | Path]) -> list[np.ndarray]:
    """:func:`load_array` for each owner's file."""
    if isinstance(paths, (str, bytes, Path)) or not isinstance(paths, Sequence) or not paths:
        raise InvalidParameterError("`paths` must be a non-empty list of file paths", "paths")
    out = []
    for k, p in enumerate(paths):
        try:
            out.append(load_array(p))
        except InvalidParameterError as exc:  # load_array names its own argument `path`
            if exc.argument == "path" and exc.args:
                exc.args = (str(exc.args[0]).replace("`path`", f"`paths[{k}]`", 1), *exc.args[1:])
                exc.argument = "paths"
            raise
    return out
