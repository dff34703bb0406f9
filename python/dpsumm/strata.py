"""Strata: public attributes of each row, and the cells a purchase counts and sells by (docs/guide/strata.md).

A *stratum* of a row is the tuple of its values of one or several public attributes (a group, a site, a product
line, ...); the attributes' public sets of values, the *levels*, are declared on the purchase and never read off
anybody's data. A row's stratum is its position in the product of the declared levels (:func:`stratum_index`), a
row outside them is in none (-1). A public value set is matched by :func:`label_index`.

The functions here are pure and know no party and no purchase: the cell family's rule
(:mod:`dpsumm.protocols.nominations.cell_rule`) keys the parties' rows by them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ._validation import as_array, bounded_int, same_kind
from .errors import InvalidParameterError, ProtocolError

__all__ = [
    "MAX_CELLS",
    "Levels",
    "public_value_set",
    "levels_tuple",
    "levels_json",
    "levels_from_json",
    "strata_columns",
    "check_strata_against",
    "label_index",
    "stratum_index",
    "load_strata",
]

#: The most cells the product of the declared levels (and a crossing) may have: every owner releases one count per
#: cell, so that the release stays small.
MAX_CELLS = 1 << 16

#: Declared levels: one tuple of public values per attribute.
Levels = tuple[tuple[Any, ...], ...]

#: Widest range of an integer value set that :func:`label_index` looks up in a table (one int64 per value).
_TABLE_SPAN = 1 << 16


def public_value_set(value: object, argument: str, what: str = "labels") -> tuple[Any, ...]:
    """A public set of values (a label set, one attribute's levels) as a tuple of distinct int, float or str values
    (non-empty, not mixing strings and numbers); InvalidParameterError naming ``argument`` otherwise."""
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise InvalidParameterError(f"`{argument}` must be a sequence of {what}, got {value!r:.80}", argument)
    out: list[Any] = []
    for lab in value:
        if isinstance(lab, np.generic):
            lab = lab.item()
        if (
            isinstance(lab, bool)
            or not isinstance(lab, (int, float, str))
            or (isinstance(lab, float) and not math.isfinite(lab))
        ):
            raise InvalidParameterError(
                f"`{argument}` holds {lab!r:.60}: {what} must be finite numbers or strings", argument
            )
        out.append(lab)
    if not out:
        raise InvalidParameterError(f"`{argument}` is empty", argument)
    if len(set(out)) != len(out):
        raise InvalidParameterError(f"`{argument}` repeats a {what.rstrip('s')}", argument)
    if len({type(x) is str for x in out}) > 1:
        raise InvalidParameterError(f"`{argument}` mixes strings and numbers", argument)
    # The parties match against np.asarray(values): it must keep every value distinct (2**53 + 1 and 2.0**53 are
    # distinct in Python but one float64) and be a plain numeric or string array (an int beyond int64 makes an
    # object array).
    arr = np.asarray(out)
    if arr.dtype.kind not in "iufU" or len(np.unique(arr)) != len(out):
        raise InvalidParameterError(
            f"`{argument}` {tuple(out)[:5]!r} is not a set of distinct int64, float64 or strings once converted "
            "to an array",
            argument,
        )
    return tuple(out)


def _is_scalar(v: object) -> bool:
    return isinstance(v, (str, bytes, int, float, np.generic)) or v is None


def levels_tuple(value: object, argument: str = "levels") -> Levels:
    """Declared levels: a sequence of per-attribute value sets (``[("a", "b"), (0, 1)]``), or one attribute's values
    (``("a", "b", "c")``), as a tuple of :func:`public_value_set` tuples; their product at most :data:`MAX_CELLS`."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (Sequence, np.ndarray)):
        raise InvalidParameterError(
            f"`{argument}` must be a sequence of per-attribute value sets, e.g. [('a', 'b'), (0, 1)], got "
            f"{value!r:.80}",
            argument,
        )
    items = list(value)
    if not items:
        raise InvalidParameterError(f"`{argument}` is empty: declare the public values of each attribute", argument)
    scalars = [_is_scalar(v) for v in items]
    if all(scalars):
        attrs: list[object] = [items]  # one attribute's values
    elif not any(scalars):
        attrs = items
    else:
        raise InvalidParameterError(
            f"`{argument}` mixes values and value sets: give one set per attribute, e.g. [('a', 'b'), (0, 1)]",
            argument,
        )
    out = tuple(public_value_set(a, argument, "levels") for a in attrs)
    if math.prod(len(a) for a in out) > MAX_CELLS:
        raise InvalidParameterError(
            f"`{argument}` declares {math.prod(len(a) for a in out)} strata (the product of the attributes' "
            f"levels), more than {MAX_CELLS}",
            argument,
        )
    return out


def levels_json(levels: Levels) -> str:
    """The declared levels as the JSON text a request carries (numbers stay numbers, strings strings)."""
    try:
        return json.dumps([list(a) for a in levels], separators=(",", ":"))
    except (TypeError, ValueError):  # not a sequence of value sets, or values JSON cannot hold
        levels_tuple(levels, "levels")  # names what is wrong
        raise InvalidParameterError(f"`levels` must hold numbers or strings, got {levels!r:.80}", "levels") from None


def levels_from_json(text: str) -> Levels:
    """:func:`levels_json` read back (a party reading a request); ProtocolError on anything else."""
    if not isinstance(text, (str, bytes)):
        raise ProtocolError(f"a request carries strata levels as {type(text).__name__}, not JSON text")
    try:
        return levels_tuple(json.loads(text), "levels")
    except (ValueError, InvalidParameterError) as exc:
        raise ProtocolError(f"a request carries malformed strata levels: {exc}") from None


def _column(value: object, argument: str, n_rows: int) -> np.ndarray:
    arr = as_array(value, argument)
    if arr.ndim != 1 or arr.shape[0] != n_rows:
        raise InvalidParameterError(
            f"`{argument}`: each attribute must hold one value per row, shape ({n_rows},), got {arr.shape}", argument
        )
    if arr.dtype == object and arr.size and all(isinstance(v, str) for v in arr.tolist()):
        arr = arr.astype(str)  # strings in an object array (a pandas column of str)
    elif arr.dtype == object and arr.size:
        values = arr.tolist()
        if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in values):
            arr = np.asarray(values)  # numbers in an object array (a column of a 2-D object array)
            if arr.dtype == object:  # an int beyond int64
                raise InvalidParameterError(f"`{argument}` holds integers beyond int64", argument)
    if arr.dtype.kind == "b":
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iufU":
        raise InvalidParameterError(
            f"`{argument}` must hold numbers or strings (one kind per attribute), got dtype {arr.dtype}", argument
        )
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        raise InvalidParameterError(
            f"`{argument}` holds a NaN or an infinity (row {int(np.flatnonzero(~np.isfinite(arr))[0])})", argument
        )
    return arr


def strata_columns(value: object, argument: str, n_rows: int) -> list[np.ndarray]:
    """A party's strata as one 1-D column per attribute, ``n_rows`` values each (numbers or strings).

    ``value`` is a 1-D array (one attribute), a 2-D array (one column per attribute), a pandas DataFrame (its
    columns) or a list of 1-D columns. InvalidParameterError naming ``argument`` for any other shape, a NaN, an
    object column or an empty one.
    """
    n_rows = bounded_int(n_rows, "n_rows", 0, 2**63 - 1)
    if value is None:
        raise InvalidParameterError(f"`{argument}` is missing", argument)
    columns = getattr(value, "columns", None)
    if columns is not None and hasattr(value, "__getitem__") and not isinstance(value, np.ndarray):  # a DataFrame
        cols: list[object] = [np.asarray(value[c]) for c in columns]  # type: ignore[index]
    elif isinstance(value, (list, tuple)) and value and not any(_is_scalar(v) for v in value):
        cols = list(value)
    else:
        arr = as_array(value, argument)
        if arr.ndim == 1:
            cols = [arr]
        elif arr.ndim == 2:
            cols = [arr[:, j] for j in range(arr.shape[1])]
        else:
            raise InvalidParameterError(
                f"`{argument}` must be 1-D (one attribute) or 2-D (one column per attribute), got shape {arr.shape}",
                argument,
            )
    if not cols:
        raise InvalidParameterError(f"`{argument}` has no attribute", argument)
    if n_rows == 0:
        raise InvalidParameterError(f"`{argument}` is empty", argument)
    return [_column(c, argument, n_rows) for c in cols]


def check_strata_against(columns: list[np.ndarray], levels: Levels, argument: str) -> np.ndarray:
    """The rows' stratum positions (:func:`stratum_index`) after checking ``columns`` against the declared levels:
    one column per attribute, of its levels' kind; InvalidParameterError naming ``argument`` otherwise."""
    if isinstance(columns, (str, bytes, Mapping)) or not isinstance(columns, (Sequence, np.ndarray)):
        raise InvalidParameterError(f"`{argument}` must be one column per attribute, got {columns!r:.60}", argument)
    levels = levels_tuple(levels, "levels")
    if any(not isinstance(c, np.ndarray) or c.ndim != 1 for c in columns):
        raise InvalidParameterError(f"`{argument}` must be 1-D arrays, one per attribute", argument)
    if len(columns) != len(levels):
        raise InvalidParameterError(
            f"`{argument}` has {len(columns)} attribute(s), the purchase declares levels for {len(levels)}", argument
        )
    for j, (col, lev) in enumerate(zip(columns, levels)):
        same_kind(col, lev, argument, f"`{argument}`: attribute {j}", "its declared levels")
    return stratum_index(columns, levels)


def _fits_int64(dtype: np.dtype[Any]) -> bool:
    """Integers every value of which converts to int64 exactly."""
    return dtype.kind == "i" or (dtype.kind == "u" and dtype.itemsize <= 4)


def label_index(labels: np.ndarray, label_set: np.ndarray) -> np.ndarray:
    """Each row's position in ``label_set`` (int64), -1 for a label outside it.

    Numbers match by value (``1.0`` is ``1``), strings never match numbers. Integer labels against a set of integers
    spanning at most ``_TABLE_SPAN`` values: one lookup in a table of positions (every label below the set's range
    lands on its first entry, every label above on its last, both -1); otherwise one sorted search over the rows.
    The two give the same positions (tests/test_parties.py).
    """
    labels, label_set = (as_array(a, name) for a, name in ((labels, "labels"), (label_set, "label_set")))
    for arr, name in ((labels, "labels"), (label_set, "label_set")):
        if arr.ndim != 1:
            raise InvalidParameterError(f"`{name}` must be 1-D, got shape {arr.shape}", name)
    if len(label_set) == 0 or (labels.dtype.kind in "US") != (label_set.dtype.kind in "US"):
        return np.full(len(labels), -1, dtype=np.int64)  # strings against numbers: no label of the set occurs
    by_table = label_slots(labels, label_set)
    if by_table is not None:
        slot, table = by_table
        return np.asarray(table[slot], dtype=np.int64)
    try:
        return label_index_sorted(labels, label_set)
    except TypeError as exc:  # values numpy cannot order (objects)
        raise InvalidParameterError(f"`labels` cannot be matched to `label_set`: {exc}", "labels") from None


def label_slots(labels: np.ndarray, label_set: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """For integer labels against a set of integers spanning at most ``_TABLE_SPAN`` values: each row's slot in a
    table (int64; slot 0 below the set's range, the last slot above it) and the table of positions in ``label_set``
    per slot (-1 where no label of the set is). None for any other labels or set."""
    if not (_fits_int64(labels.dtype) and _fits_int64(label_set.dtype)) or len(label_set) == 0:
        return None
    lo, hi = int(label_set.min()), int(label_set.max())
    if hi - lo > _TABLE_SPAN or lo == np.iinfo(np.int64).min or hi == np.iinfo(np.int64).max:
        return None
    table = np.full(hi - lo + 3, -1, dtype=np.int64)
    table[label_set.astype(np.int64) - (lo - 1)] = np.arange(len(label_set))
    slot = np.clip(labels.astype(np.int64, copy=False), lo - 1, hi + 1)
    slot -= lo - 1
    return slot, table


def label_index_sorted(labels: np.ndarray, label_set: np.ndarray) -> np.ndarray:
    """:func:`label_index` by one sorted search of the rows in ``label_set`` (any kinds it compares)."""
    order = np.argsort(label_set, kind="stable")
    pos = np.minimum(np.searchsorted(label_set[order], labels), len(label_set) - 1)
    return np.where(label_set[order][pos] == labels, order[pos], -1).astype(np.int64)


def stratum_index(columns: Sequence[np.ndarray], levels: Levels) -> np.ndarray:
    """Each row's position in the product of the declared levels (int64, the first attribute most significant), -1
    for a row with a value outside its attribute's levels."""
    for value, name in ((columns, "columns"), (levels, "levels")):
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (Sequence, np.ndarray)):
            raise InvalidParameterError(
                f"`{name}` must be a sequence, one entry per attribute, got {value!r:.60}", name
            )
    if len(columns) != len(levels):
        raise ProtocolError(f"the strata have {len(columns)} attribute(s), the levels declare {len(levels)}")
    if any(np.ndim(c) != 1 for c in columns):
        raise InvalidParameterError("`columns` must be 1-D columns, one per attribute", "columns")
    n = len(columns[0]) if columns else 0
    out = np.zeros(n, dtype=np.int64)
    outside = np.zeros(n, dtype=bool)
    for col, lev in zip(columns, levels):
        pos = label_index(np.asarray(col), np.asarray(lev))
        outside |= pos < 0
        out = out * len(lev) + np.maximum(pos, 0)
    out[outside] = -1
    return out


def load_strata(path: object, n_rows: int | None = None, argument: str = "strata") -> list[np.ndarray]:
    """A party's strata from a file, one column per attribute: a ``.npy`` array (1-D: one attribute; 2-D: one column
    per attribute; numbers or strings, never pickles), a ``.csv`` file whose first line names the attributes
    (each column integers, numbers or strings), or a ``.parquet`` table (its columns).

    Raises :class:`DataFileError` (``argument``) for a file that cannot be read, and InvalidParameterError
    (``argument``) for strata :func:`strata_columns` refuses (a NaN, an empty file, ``n_rows`` not matching).
    """
    from .party_tables import read_strata_file

    cols = read_strata_file(path, argument)
    n = n_rows if n_rows is not None else len(cols[0])
    return strata_columns(cols, argument, int(n))
