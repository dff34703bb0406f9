"""Strata: public attributes of each row, and the cells a purchase counts and sells by (docs/guide/strata.md).

A *stratum* of a row is the tuple of its values of one or several public attributes (a group, a site, a product
line, ...); the attributes' public sets of values, the *levels*, are declared on the purchase and never read off
anybody's data. A row's *cell* is a public function of the row: its position in the product of the declared
levels (:func:`stratum_index`), optionally crossed with its label's position in a public label set and with the
bin of its score along a public direction (:func:`row_cells`). A row outside the declared levels (or label set)
is in no cell (-1): it is never counted, never sold.

The functions here are pure and know no party: the owners and the consumer call them on their own rows with the
public numbers of a request (:mod:`dpsumm.parties`, :mod:`dpsumm.protocols.nominations.by_label`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _core
from ._validation import as_array
from .errors import DpsummError, InvalidParameterError, ProtocolError
from .hashing import RFFHasher

if TYPE_CHECKING:
    from .messages import LabelHistogramRequest

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
    "row_cells",
    "row_keys",
    "direction_space",
    "cell_count",
    "load_strata",
    "cell_counts",
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
    return json.dumps([list(a) for a in levels], separators=(",", ":"))


def levels_from_json(text: str) -> Levels:
    """:func:`levels_json` read back (a party reading a request); ProtocolError on anything else."""
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
    if len(columns) != len(levels):
        raise InvalidParameterError(
            f"`{argument}` has {len(columns)} attribute(s), the purchase declares levels for {len(levels)}", argument
        )
    for j, (col, lev) in enumerate(zip(columns, levels)):
        strings = isinstance(lev[0], str)
        if strings != (col.dtype.kind in "US"):
            raise InvalidParameterError(
                f"`{argument}`: attribute {j} holds {'strings' if col.dtype.kind in 'US' else 'numbers'} but its "
                f"declared levels {lev[:5]!r} are {'strings' if strings else 'numbers'}: no row would match",
                argument,
            )
    return stratum_index(columns, levels)


def cell_counts(X: np.ndarray, labels: np.ndarray, m: LabelHistogramRequest) -> np.ndarray:
    """Rows per cell of the label purchase (float64, shape ``(J,)``; docs/design.md §2.7).

    A row of label ``label_set[j]`` goes to the nearest centre, ``argmin ||c||^2 - bias - 2 h.c`` with ``h`` its
    hash in the cells' h1, among the cells of label ``j``; a row whose label is outside the set, or that no cell
    holds, is not counted. Each row is counted at most once (L2 sensitivity ``sqrt(2)`` under replace-one).
    """
    centres = np.asarray(m.centres, dtype=np.float64)
    cell_labels = np.asarray(m.cell_labels)
    bias = np.asarray(m.bias, dtype=np.float64)
    J = len(cell_labels)
    if (
        cell_labels.ndim != 1
        or cell_labels.dtype.kind not in "iu"
        or centres.shape != (J, m.dim)
        or bias.shape != (J,)
        or not np.isfinite(centres).all()
        or not np.isfinite(bias).all()
    ):
        raise ProtocolError(
            f"a label histogram request needs (J,) integer cell labels, (J, {m.dim}) centres and (J,) "
            f"biases, all finite; got {cell_labels.shape}, {centres.shape}, {bias.shape}"
        )
    label_set = np.asarray(m.label_set)
    if J and (cell_labels.min() < 0 or cell_labels.max() >= len(label_set)):
        raise ProtocolError("a label histogram request names a cell label outside the label set")
    if m.n_features != np.shape(X)[1]:
        raise ProtocolError(f"the consumer has {np.shape(X)[1]} features, the request says {m.n_features}")
    if J > _MAX_CELLS:
        raise ProtocolError(f"a label histogram request names {J} cells, more than {_MAX_CELLS}")
    out = np.zeros(J)
    idx = label_index(np.asarray(labels), label_set)
    if J == 0 or not (idx >= 0).any():
        return out
    hasher = RFFHasher(m.n_features, dim=m.dim, gamma=m.gamma, seed=m.hash_seed)
    rows = np.flatnonzero(idx >= 0)
    base = (centres * centres).sum(1) - bias
    # a row is scored against its own label's cells only (the first nearest in cell order, as an argmin over every
    # cell with the others masked would pick): the work is |D_v| x J / L, not |D_v| x J
    cells_of_label = {j: np.flatnonzero(cell_labels == j) for j in np.unique(cell_labels).tolist()}
    step = max(1, min(_CELL_BLOCK, _CELL_SCORES // max(J, 1)))
    for start in range(0, len(rows), step):  # at most (step, J) scores at a time: _CELL_SCORES float64
        block = rows[start : start + step]
        H = np.asarray(hasher.transform(np.ascontiguousarray(np.asarray(X)[block])), dtype=np.float64)
        row_labels = idx[block]
        for j in np.unique(row_labels).tolist():
            cells = cells_of_label.get(j)
            if cells is None:  # no cell holds this label: its rows are not counted
                continue
            score = base[cells][None, :] - 2.0 * (H[row_labels == j] @ centres[cells].T)
            np.add.at(out, cells[np.argmin(score, axis=1)], 1.0)
    return out


_CELL_BLOCK = 4096
_CELL_SCORES = 1 << 22  # 32 MB of scores at a time
_MAX_CELLS = 1 << 24  # cells a label histogram may have (K owners x L labels)


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
    if len(label_set) == 0 or (labels.dtype.kind in "US") != (label_set.dtype.kind in "US"):
        return np.full(len(labels), -1, dtype=np.int64)  # strings against numbers: no label of the set occurs
    by_table = label_slots(labels, label_set)
    if by_table is not None:
        slot, table = by_table
        return np.asarray(table[slot], dtype=np.int64)
    return label_index_sorted(labels, label_set)


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
    if len(columns) != len(levels):
        raise ProtocolError(f"the strata have {len(columns)} attribute(s), the levels declare {len(levels)}")
    n = len(columns[0]) if columns else 0
    out = np.zeros(n, dtype=np.int64)
    outside = np.zeros(n, dtype=bool)
    for col, lev in zip(columns, levels):
        pos = label_index(np.asarray(col), np.asarray(lev))
        outside |= pos < 0
        out = out * len(lev) + np.maximum(pos, 0)
    out[outside] = -1
    return out


def cell_count(levels: Levels | None, cross_labels: np.ndarray | None, bins: int) -> int:
    """Cells of a rule: the product of the levels' sizes, the crossed label set's size and the bins (each 1 when
    absent)."""
    n = math.prod(len(a) for a in levels) if levels else 1
    n *= len(cross_labels) if cross_labels is not None and len(cross_labels) else 1
    return n * max(int(bins), 1)


def row_cells(
    data: np.ndarray,
    labels: np.ndarray | None,
    strata: Sequence[np.ndarray] | None,
    *,
    levels: Levels | None,
    cross_labels: np.ndarray | None,
    direction: np.ndarray | None,
    centre: np.ndarray | None,
    edges: np.ndarray | None,
    direction_map: RFFHasher | None = None,
    score_cache: dict[bytes, np.ndarray] | None = None,
) -> np.ndarray:
    """Each row's cell (int64 in ``[0, cell_count)``, -1 for none): its label's position in ``cross_labels`` (when
    given), then its stratum's position in the product of ``levels`` (when given), then the bin of its score
    ``(f(x) - centre) . direction`` among ``edges`` (``len(edges) + 1`` bins, when a direction is given), in
    mixed radix, the first most significant; ``f`` is ``direction_map``'s random features (the kernel's witness
    space) when given, else the row itself. A row with a label or stratum outside the declared sets is in no cell.
    A public function of the row: replacing one row moves at most one count from one cell to another. With a
    ``score_cache`` (a party's own dict, kept between its messages of a run) the scores along one direction are
    computed once: the owner's release and its sale key its rows alike without scoring them twice."""
    n = int(np.shape(data)[0])
    out = np.zeros(n, dtype=np.int64)
    outside = np.zeros(n, dtype=bool)
    if cross_labels is not None and len(cross_labels):
        if labels is None:
            raise ProtocolError("the cells cross the labels, but the party has no labels")
        pos = label_index(np.asarray(labels), np.asarray(cross_labels))
        outside |= pos < 0
        out = np.maximum(pos, 0)
    if levels:
        if strata is None:
            raise ProtocolError("the cells are by strata, but the party has no strata")
        pos = stratum_index(strata, levels)
        outside |= pos < 0
        out = out * math.prod(len(a) for a in levels) + np.maximum(pos, 0)
    if direction is not None and len(direction):
        assert centre is not None and edges is not None
        d = np.asarray(direction, dtype=np.float64)
        width = int(np.shape(data)[1]) if direction_map is None else int(direction_map.dim)
        if d.shape != (width,) or np.shape(centre) != d.shape:
            space = "features" if direction_map is None else "random features"
            raise ProtocolError(
                f"a direction and centre of {width} {space} are needed, got {d.shape}, {np.shape(centre)}"
            )
        e = np.asarray(edges, dtype=np.float64)
        if e.ndim != 1 or not np.isfinite(e).all() or np.any(np.diff(e) < 0):
            raise ProtocolError("the bins' edges must be a finite, non-decreasing 1-D array")
        c = np.asarray(centre, dtype=np.float64)
        key = d.tobytes() + c.tobytes() + repr(None if direction_map is None else direction_map.get_params()).encode()
        score = None if score_cache is None else score_cache.get(key)
        if not d.any():  # a zero direction (one bin, no edges): every score is 0, no row need be scored
            score = np.zeros(n)
        elif score is None or len(score) != n:
            score = _scores(data, c, d, direction_map)
            if score_cache is not None:  # one direction a run: keep the latest only
                score_cache.clear()
                score_cache[key] = score
        out = out * (len(e) + 1) + np.searchsorted(e, score, side="right")
    out[outside] = -1
    return out


def row_keys(
    data: np.ndarray,
    labels: np.ndarray | None,
    strata: list[np.ndarray] | None,
    request: Any,
    score_cache: dict[bytes, np.ndarray] | None = None,
) -> np.ndarray | None:
    """What a party counts and sells its rows by for a request of a cell purchase: its labels, when the request
    carries no cell rule (the label purchase: ``label_set`` is the labels); else each row's cell
    (:func:`dpsumm.strata.row_cells` of the request's ``levels``, ``cross_labels``, ``direction``, ``centre`` and
    ``edges``), and ``label_set`` is ``0 .. J - 1``."""
    text = str(getattr(request, "levels", ""))
    cross = np.asarray(getattr(request, "cross_labels", np.zeros(0)))
    direction = np.asarray(getattr(request, "direction", np.zeros(0)))
    if not text and not cross.size and not direction.size:
        return labels
    return row_cells(
        data,
        labels,
        strata,
        levels=levels_from_json(text) if text else None,
        cross_labels=cross if cross.size else None,
        direction=direction if direction.size else None,
        centre=np.asarray(getattr(request, "centre", np.zeros(0))),
        edges=np.asarray(getattr(request, "edges", np.zeros(0))),
        direction_map=direction_space(request, data.shape[1]) if direction.size else None,
        score_cache=score_cache,
    )


def direction_space(request: object, n_features: int) -> RFFHasher | None:
    """The random features a cell rule's direction lies in (``direction_dim`` of them at ``direction_gamma``, seeded
    ``direction_seed``: the kernel's witness space), or ``None`` when ``direction_dim`` is 0 (the rows' own
    features). Public numbers of the request only."""
    dim = getattr(request, "direction_dim", 0)
    if isinstance(dim, (int, np.integer)) and not isinstance(dim, bool) and dim == 0:
        return None
    try:
        return RFFHasher(
            n_features,
            dim=dim,
            gamma=getattr(request, "direction_gamma", 0.0),
            seed=str(getattr(request, "direction_seed", "")),
        )
    except DpsummError as exc:
        raise ProtocolError(f"a direction's random features are malformed: {exc}") from exc


def _scores(
    data: np.ndarray, centre: np.ndarray, direction: np.ndarray, direction_map: RFFHasher | None = None
) -> np.ndarray:
    """``(f(x) - centre) . direction`` for every row, as ``f(x) . direction - centre . direction`` (no centred copy of
    the rows, nor of all their random features): ``f`` is ``direction_map``'s transform, each row hashed and dotted in
    one streaming Rust pass (``_core.owner_hash_scores``), or the identity (numpy, in blocks)."""
    n = int(np.shape(data)[0])
    shift = float(centre @ direction)
    if direction_map is not None:  # one streaming pass in Rust: each row hashed and dotted, never an n x d matrix
        rows = (
            data if isinstance(data, np.ndarray) and data.dtype in (np.float32, np.float64) else np.asarray(data, float)
        )
        w = np.ascontiguousarray(direction, dtype=np.float64)
        scores: np.ndarray = _core.owner_hash_scores(rows, direction_map._projection, w, shift)
        return scores
    out = np.empty(n)
    step = 1 << 16
    for start in range(0, n, step):
        out[start : start + step] = np.asarray(data[start : start + step], dtype=np.float64) @ direction - shift
    return out


def load_strata(path: object, n_rows: int | None = None, argument: str = "strata") -> list[np.ndarray]:
    """A party's strata from a file, one column per attribute: a ``.npy`` array (1-D: one attribute; 2-D: one column
    per attribute; numbers or strings, never pickles), a ``.csv`` file whose first line names the attributes
    (each column integers, numbers or strings), or a ``.parquet`` table (its columns).

    Raises :class:`DataFileError` (``argument``) for a file that cannot be read, and InvalidParameterError
    (``argument``) for strata :func:`strata_columns` refuses (a NaN, an empty file, ``n_rows`` not matching).
    """
    from .files import read_strata_file

    cols = read_strata_file(path, argument)
    n = n_rows if n_rows is not None else len(cols[0])
    return strata_columns(cols, argument, int(n))
