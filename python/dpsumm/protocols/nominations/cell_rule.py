"""The cell family's rule: what cell a row is in, and what a party counts and sells by it (the purchases of
:mod:`.cell_purchase`: :class:`~.by_label.ByLabel`, :class:`~.by_strata.ByStrata`,
:class:`~.by_direction.ByDirection`; docs/explanation/label-purchase.md).

A row's *key* is a public function of the row and the public numbers a request carries (its :class:`CellRule`):
its label, when the rule is empty (the label purchase: the request's ``key_set`` is the label set); else its cell
(:func:`row_cells`): its label's position in a crossed label set, its stratum's position in the product of the
declared levels (:mod:`dpsumm.strata`) and the bin of its score along a released direction, in mixed radix. A row
outside the declared sets is in no cell (-1): it is never counted, never sold. Replacing one row moves at most one
count from one key to another: the sensitivities of the cell purchases' releases rest on that.

Here too are what the parties do with their keys: an owner's counts per key (:func:`key_counts`), its rows sold
per key (:func:`cell_rows`, :func:`substitute_counts`) and the consumer's counts per cell of its histogram
(:func:`histogram_counts`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ... import _core
from ...errors import DpsummError, ProtocolError
from ...hashing import RFFHasher
from ...parties import nominate_rows
from ...privacy import Csprng
from ...sources import row_blocks, take_rows, whole_rows
from ...strata import Levels, label_index, label_slots, levels_from_json, levels_json, stratum_index

__all__ = [
    "CellRule",
    "row_cells",
    "key_counts",
    "substitute_counts",
    "cell_rows",
    "histogram_counts",
    "misplaced_rows",
    "MAX_HISTOGRAM_CELLS",
]


@dataclass(frozen=True, kw_only=True)
class CellRule:
    """The cell rule a request of the cell purchases carries: the declared strata levels as JSON, a crossed label
    set, a direction with its centre and its bins' edges, and the direction's space (``direction_dim`` 0: the rows'
    features; else that many random features, :meth:`direction_space`). All empty (:meth:`by_label`): the rows'
    keys are their labels, in the request's key set. Keyword fields, after each request's own (a request of the
    cell family is a :class:`CellRule` with its own fields, so that the rule crosses the wire field by field)."""

    levels: str = ""
    cross_labels: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    direction: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    centre: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    edges: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    direction_dim: int = 0
    direction_gamma: float = 0.0
    direction_seed: str = ""

    @classmethod
    def of(cls, request: CellRule) -> CellRule:
        """The rule part of a request of the cell family."""
        return cls(**rule_fields(request))

    def fields(self) -> dict[str, Any]:
        """The rule's fields by name (a request of the cell family is built with them after its own)."""
        return rule_fields(self)

    def by_label(self) -> bool:
        """Whether the rows' keys are their labels (no strata, crossed labels or direction)."""
        return not self.levels and not np.size(self.cross_labels) and not np.size(self.direction)

    def with_levels(self, levels: Levels | None) -> CellRule:
        """This rule crossed with the declared ``levels`` (none: the rule as is)."""
        return dataclasses.replace(self, levels=levels_json(levels)) if levels else self

    def with_edges(self, edges: np.ndarray) -> CellRule:
        """This rule with other bins' edges (the direction's bins merged)."""
        return dataclasses.replace(self, edges=np.asarray(edges, dtype=np.float64))

    def direction_space(self, n_features: int) -> RFFHasher | None:
        """The random features the direction lies in (``direction_dim`` of them at ``direction_gamma``, seeded
        ``direction_seed``: the kernel's witness space), or ``None`` when ``direction_dim`` is 0 (the rows' own
        features). Public numbers of the request only."""
        dim = self.direction_dim
        if isinstance(dim, (int, np.integer)) and not isinstance(dim, bool) and dim == 0:
            return None
        try:
            return RFFHasher(n_features, dim=dim, gamma=self.direction_gamma, seed=str(self.direction_seed))
        except DpsummError as exc:
            raise ProtocolError(f"a direction's random features are malformed: {exc}") from exc

    def row_keys(
        self,
        data: np.ndarray,
        labels: np.ndarray | None,
        strata: Sequence[np.ndarray] | None,
        memo: Callable[..., np.ndarray] | None = None,
    ) -> np.ndarray | None:
        """What a party counts and sells its rows by: its labels, when the rule is empty (:meth:`by_label`); else
        each row's cell (:func:`row_cells`). With a ``memo`` (a party's :meth:`~dpsumm.parties.OwnerParty.memo`)
        the rows' cells under one rule are computed once in a run."""
        if self.by_label():
            return labels
        direction = np.asarray(self.direction)
        cross = np.asarray(self.cross_labels)
        return row_cells(
            data,
            labels,
            strata,
            levels=levels_from_json(self.levels) if self.levels else None,
            cross_labels=cross if cross.size else None,
            direction=direction if direction.size else None,
            centre=np.asarray(self.centre),
            edges=np.asarray(self.edges),
            direction_map=self.direction_space(data.shape[1]) if direction.size else None,
            memo=memo,
        )


def rule_fields(value: object) -> dict[str, Any]:
    """The :class:`CellRule` fields of ``value`` (a rule or a request of the cell family) by name."""
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(CellRule)}


#: Rows an owner's per-row arrays are worked through at a time (its keys, bins and counts): no temporary of every row.
_ROW_STEP = 1 << 20


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
    memo: Callable[..., np.ndarray] | None = None,
) -> np.ndarray:
    """Each row's cell (int32, int64 when there are ``2**31`` cells or more; -1 for none): its label's position in
    ``cross_labels`` (when given), then its stratum's position in the product of ``levels`` (when given), then the bin
    of its score ``(f(x) - centre) . direction`` among ``edges`` (``len(edges) + 1`` bins, when a direction is given),
    in mixed radix, the first most significant; ``f`` is ``direction_map``'s random features (the kernel's witness
    space) when given, else the row itself. A row with a label or stratum outside the declared sets is in no cell. A
    public function of the row: replacing one row moves at most one count from one cell to another.

    The scores are computed and binned block by block (:func:`dpsumm.sources.row_blocks`): the one array of every
    row is the cells themselves. With a ``memo`` (a party's own, :meth:`dpsumm.parties.OwnerParty.memo`, kept
    between its messages of a run) the cells are computed once under a rule: the owner's release and its sale key
    its rows alike without scoring them twice, and a sale under merged bins (edges among the released ones) maps
    the cells it keeps instead of scoring the rows again."""
    check_direction(data, direction, centre, edges, direction_map)

    def compute() -> np.ndarray:
        # Each part in place (one int per row, and one bool per row for those outside a declared set): an owner of
        # many rows holds no temporary of every row beyond them.
        n = int(np.shape(data)[0])
        cells = (len(cross_labels) if cross_labels is not None and len(cross_labels) else 1) * (
            math.prod(len(a) for a in levels) if levels else 1
        )
        if direction is not None and len(direction):
            cells *= len(np.asarray(edges)) + 1
        kind = np.int32 if cells < 2**31 else np.int64
        out: np.ndarray | None = None
        outside: np.ndarray | None = None
        if cross_labels is not None and len(cross_labels):
            if labels is None:
                raise ProtocolError("the cells cross the labels, but the party has no labels")
            out = np.asarray(label_index(np.asarray(labels), np.asarray(cross_labels)), dtype=kind)
            outside = out < 0
            np.maximum(out, 0, out=out)
        if levels:
            if strata is None:
                raise ProtocolError("the cells are by strata, but the party has no strata")
            pos = np.asarray(stratum_index(strata, levels), dtype=kind)
            outside = pos < 0 if outside is None else np.logical_or(outside, pos < 0, out=outside)
            np.maximum(pos, 0, out=pos)
            if out is None:
                out = pos
            else:
                out *= math.prod(len(a) for a in levels)
                out += pos
        if direction is not None and len(direction):
            assert centre is not None and edges is not None
            e = np.asarray(edges, dtype=np.float64)
            d = np.asarray(direction, dtype=np.float64)
            if out is None:
                out = np.zeros(n, dtype=kind)
            else:
                out *= len(e) + 1
            if not d.any():  # a zero direction (one bin, no edges): every score is 0, no row is scored
                out += kind(np.searchsorted(e, 0.0, side="right"))
            else:  # each block scored and binned at once: no score of every row is held
                for start, scores in _score_blocks(data, np.asarray(centre, dtype=np.float64), d, direction_map):
                    out[start : start + len(scores)] += np.searchsorted(e, scores, side="right").astype(kind)
        if out is None:
            return np.zeros(n, dtype=kind)
        if outside is not None:
            out[outside] = -1
        return out

    if memo is None:
        return compute()
    has_direction = direction is not None and len(direction) > 0
    e = np.asarray(edges if has_direction else np.zeros(0), dtype=np.float64)
    base = _rule_digest(levels, cross_labels, direction if has_direction else None, centre, direction_map)

    def derive(old_key: bytes, old: np.ndarray) -> np.ndarray | None:
        if not has_direction or old_key[: len(base)] != base:
            return None
        return _merged_bins(old, np.frombuffer(old_key[len(base) :], dtype=np.float64), e)

    return memo(
        base + e.tobytes(),
        compute,
        derive,
    )


def _rule_digest(
    levels: Levels | None,
    cross_labels: np.ndarray | None,
    direction: np.ndarray | None,
    centre: np.ndarray | None,
    direction_map: RFFHasher | None,
) -> bytes:
    """A digest (32 bytes) of a cell rule but its edges: the key of a party's memo of its cells, before the edges."""
    parts = [
        repr(None if levels is None else levels_json(levels)),
        repr(None if cross_labels is None else np.asarray(cross_labels).tolist()),
        repr(None if direction_map is None else direction_map.get_params()),
    ]
    h = hashlib.sha256("\x00".join(parts).encode())
    if direction is not None:
        h.update(np.asarray(direction, dtype=np.float64).tobytes())
        h.update(np.asarray(centre, dtype=np.float64).tobytes())
    return h.digest()


def _merged_bins(cells: np.ndarray, old_edges: np.ndarray, edges: np.ndarray) -> np.ndarray | None:
    """The cells under ``edges`` from the ``cells`` under ``old_edges`` (the same rule but its edges), in place, when
    every edge is one of the old ones (bins merged: a row's new bin is a function of its old one); else None. A score
    in old bin ``b >= 1`` is at least ``old_edges[b - 1]`` and below ``old_edges[b]``: an edge among the old ones is
    at most that score exactly when it is at most ``old_edges[b - 1]``."""
    if not np.isin(edges, old_edges).all():
        return None
    old_bins, bins = len(old_edges) + 1, len(edges) + 1
    table = np.concatenate([[0], np.searchsorted(edges, old_edges, side="right")]).astype(cells.dtype)
    for start in range(0, len(cells), _ROW_STEP):  # a piece at a time, in place: no temporary of every row
        part = cells[start : start + _ROW_STEP]
        inside = part >= 0
        prefix, b = np.divmod(part, old_bins)
        merged = prefix * bins + table[b]
        part[inside] = merged[inside]
    return cells


def check_direction(
    data: Any,
    direction: np.ndarray | None,
    centre: np.ndarray | None,
    edges: np.ndarray | None,
    direction_map: RFFHasher | None,
) -> None:
    """Refuse a cell rule's direction, centre and edges that do not fit the rows (a request's numbers)."""
    if direction is None or not len(direction):
        return
    d = np.asarray(direction, dtype=np.float64)
    width = int(np.shape(data)[1]) if direction_map is None else int(direction_map.dim)
    c = np.asarray(centre)
    if d.shape != (width,) or c.shape != d.shape:
        space = "features" if direction_map is None else "random features"
        raise ProtocolError(f"a direction and centre of {width} {space} are needed, got {d.shape}, {c.shape}")
    e = np.asarray(edges, dtype=np.float64)
    if e.ndim != 1 or not np.isfinite(e).all() or np.any(np.diff(e) < 0):
        raise ProtocolError("the bins' edges must be a finite, non-decreasing 1-D array")


def _direction_scores(
    data: np.ndarray,
    direction: np.ndarray,
    centre: np.ndarray,
    edges: np.ndarray,
    direction_map: RFFHasher | None,
) -> np.ndarray:
    """The rows' scores along a checked direction (float64, one per row: for the few rows sold)."""
    check_direction(data, direction, centre, edges, direction_map)
    d = np.asarray(direction, dtype=np.float64)
    out = np.zeros(int(np.shape(data)[0]))
    if d.any():  # a zero direction (one bin, no edges): every score is 0, no row need be scored
        for start, scores in _score_blocks(data, np.asarray(centre, dtype=np.float64), d, direction_map):
            out[start : start + len(scores)] = scores
    return out


def _score_blocks(
    data: np.ndarray, centre: np.ndarray, direction: np.ndarray, direction_map: RFFHasher | None = None
) -> Iterator[tuple[int, np.ndarray]]:
    """``(first row, (f(x) - centre) . direction)`` for the rows block by block (:func:`dpsumm.sources.row_blocks`,
    in memory or read from files: the same blocks), as ``f(x) . direction - centre . direction`` (no centred copy
    of the rows, nor of their random features): ``f`` is ``direction_map``'s transform, each row hashed and dotted
    in one streaming Rust pass (``_core.owner_hash_scores``; a row's score does not depend on the block), or the
    identity (numpy)."""
    shift = float(centre @ direction)
    w = np.ascontiguousarray(direction, dtype=np.float64)
    for start, block in row_blocks(data):
        if direction_map is not None:
            rows = block if block.dtype in (np.float32, np.float64) else np.asarray(block, float)
            yield start, _core.owner_hash_scores(rows, direction_map._projection, w, shift)
        else:
            yield start, np.asarray(block, dtype=np.float64) @ direction - shift


#: A sold row's score may lie this far (relative to ``1 + |score|``) on the wrong side of an edge of the bin its owner
#: sold it as: the owner scored it among all of its rows, the aggregator among the rows sold, and a product of the
#: same numbers summed in another order may differ in its last bits.
EDGE_TOLERANCE = 1e-9


def misplaced_rows(rule: CellRule, points: np.ndarray, labels: np.ndarray | None, cells: np.ndarray) -> np.ndarray:
    """Which sold rows do not lie in the cell their owner sold them as (bool, one per row), recomputed by the
    aggregator from what it holds: the row itself (the bin of its score along the rule's direction, :func:`row_cells`'
    scores) and the label sold with it (its position in the crossed label set). ``cells`` are the owner's claims, in
    :func:`row_cells`' mixed radix. A row's stratum is an attribute beside the row, not a function of it: that part of
    a claim is the owner's statement and is not recomputed (docs/explanation/lying-owners.md)."""
    cells = np.asarray(cells, dtype=np.int64)
    bad = np.zeros(len(cells), dtype=bool)
    direction, cross = np.asarray(rule.direction), np.asarray(rule.cross_labels)
    edges = np.asarray(rule.edges, dtype=np.float64)
    bins = len(edges) + 1 if direction.size else 1
    strata = math.prod(len(a) for a in levels_from_json(rule.levels)) if rule.levels else 1
    if cross.size:
        claimed = cells // (bins * strata)
        pos = np.full(len(cells), -1) if labels is None else label_index(np.asarray(labels), cross)
        bad |= pos != claimed
    if direction.size and len(cells):
        space = rule.direction_space(int(np.shape(points)[1]))
        score = _direction_scores(points, direction, np.asarray(rule.centre), edges, space)
        b = cells % bins
        tol = EDGE_TOLERANCE * (1.0 + np.abs(score))
        low = np.concatenate([[-np.inf], edges])[b]
        high = np.concatenate([edges, [np.inf]])[b]
        bad |= (score < low - tol) | (score >= high + tol)
    return bad


# -- the owners' side ---------------------------------------------------------------------------------------------


def key_counts(keys: np.ndarray | None, key_set: np.ndarray) -> np.ndarray:
    """Rows per key of ``key_set`` (float64; a key outside the set is not counted, ``None``: all zero).

    One pass over ``keys`` whatever the number of keys: a count per slot of :func:`dpsumm.strata.label_index`'s
    table for integer keys against a set of integers over a small range, else a sorted search of each key in the set.
    """
    key_set = np.asarray(key_set)
    if keys is None:
        return np.zeros(len(key_set))
    keys = np.asarray(keys)
    if keys.ndim != 1:  # one key per row: a row counts in at most one cell (L2 sensitivity sqrt(2))
        raise ProtocolError(f"labels must be one per row (1-D), got shape {keys.shape}")
    counts = np.zeros(len(key_set), dtype=np.int64)
    for start in range(0, len(keys), _ROW_STEP):  # a piece at a time: no temporary of every row
        part = keys[start : start + _ROW_STEP]
        by_table = label_slots(part, key_set)
        if by_table is not None:  # count per slot, then read off the set's slots
            slot, table = by_table
            per_slot = np.bincount(slot, minlength=len(table))
            in_set = table >= 0
            counts[table[in_set]] += per_slot[in_set]
        else:
            idx = label_index(part, key_set)
            counts += np.bincount(idx[idx >= 0], minlength=len(key_set))
    return counts.astype(np.float64)


def substitute_counts(held: np.ndarray, counts: np.ndarray, preference: np.ndarray | None) -> np.ndarray:
    """The rows of each key an owner sells for a quota per key (docs/explanation/label-purchase.md):
    ``min(counts[j], held[j])``, and the shortfall ``sum_j max(0, counts[j] - held[j])`` taken from its other rows,
    key by key in decreasing ``preference`` (then decreasing ``held``, then key order), so that it sells
    ``min(sum(counts), sum(held))`` rows. ``held`` is the owner's own count per key: the substitution depends on its
    data and the request only.
    """
    held = np.asarray(held, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    out: np.ndarray = np.minimum(counts, held)
    short = int((counts - out).sum())
    if short <= 0:
        return out
    pref = np.zeros(len(held)) if preference is None else np.asarray(preference, dtype=np.float64)
    for j in np.lexsort((np.arange(len(held)), -held, -pref)):  # the last key is the primary one
        take = min(short, int(held[j] - out[j]))
        out[j] += take
        short -= take
        if short == 0:
            break
    return out


def cell_rows(
    X: np.ndarray,
    keys: np.ndarray | None,
    key_set: np.ndarray,
    counts: np.ndarray,
    hasher: RFFHasher,
    *,
    candidates: int,
    sample_seed: int,
    greedy_sample_factor: float | None = None,
    preference: np.ndarray | None = None,
    herded: np.ndarray | None = None,
    target: np.ndarray | None = None,
    temperature: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """``counts[j]`` rows of key ``key_set[j]`` each, a key the owner holds fewer rows of made up from its other keys
    (:func:`substitute_counts`, by ``preference``): for each key, a herded sample of the owner's rows of that key, or
    a uniform one where ``herded[j]`` is False (docs/explanation/label-purchase.md). Returns ``(tokens int64, sorted;
    hashes float32)``.

    With a ``target`` (the consumer's released ``g~``, the tilted sale) every sale leans toward it: each key's
    candidates are drawn with probability ``~ exp(h1(x).g~ / temperature)`` among all its rows (one streaming pass
    that hashes every row of the key, :func:`dpsumm.parties.nominate_rows`), and the herded sale herds toward their
    tilted mean; a sale that is not herded is the tilted draw itself.

    Each key's ``ceil(candidates * counts[j] / sum(counts))`` candidates are drawn uniformly among its rows (a stream
    keyed from the public ``sample_seed`` and the key: a sample, not privacy noise) and only they are hashed;
    ``counts[j]`` of them are herded toward the candidates' mean hash (:func:`dpsumm.parties.nominate_rows` with no
    tilt): a sample that represents the key's rows better than a uniform draw, with no information from anybody
    else. A key with ``herded[j]`` False keeps the first ``counts[j]`` rows of that uniform draw instead (owners of
    one distribution that share a cell: their herds would all lean to its centre).
    """
    empty = (np.zeros(0, dtype=np.int64), np.zeros((0, hasher.dim), dtype=np.float32))
    if keys is None:
        return empty
    key_set = np.asarray(key_set)
    keys = np.asarray(keys)
    held = key_counts(keys, key_set).astype(np.int64)
    counts = substitute_counts(held, np.asarray(counts, dtype=np.int64), preference)
    total = max(int(counts.sum()), 1)
    stream = Csprng(int(sample_seed))
    tilt = np.asarray(target, dtype=np.float64) if target is not None and len(target) > 0 else None
    tokens_out: list[np.ndarray] = []
    hashes_out: list[np.ndarray] = []
    # Each key's pool: the ranks, among the key's rows in row order, of its candidates (a uniform draw with no tilt,
    # else all of them); the rows themselves found in one pass over the keys (_key_ranks_rows)
    ranked: list[tuple[int, np.ndarray, int, int, bool, Csprng]] = []
    for j, (key, count) in enumerate(zip(key_set, counts)):
        n_key = int(held[j]) if count > 0 else 0
        if n_key == 0:
            continue
        herd = herded is None or bool(herded[j])
        c = max(int(count), math.ceil(candidates * int(count) / total)) if herd else int(count)
        # the stream of one key: "label:" is its name since the label purchase's first sales (seeded runs reproduce)
        key_stream = stream.derive(f"label:{key!r}")
        if tilt is None and c < n_key:  # with no tilt the candidates are a uniform sample: drawn first
            ranks = np.sort(_smallest_draws(key_stream.derive("candidates"), n_key, c))
        else:
            ranks = np.arange(n_key, dtype=np.int64)
        ranked.append((j, ranks, int(count), c, herd, key_stream))
    pools = _key_ranks_rows(keys, key_set, {j: ranks for j, ranks, *_ in ranked})
    keyed = [(pools[j], count, c, herd, key_stream) for j, _, count, c, herd, key_stream in ranked]
    if tilt is None and keyed:  # only the candidates are read, every key's at once (rows in files: each row group once)
        fetched = take_rows(X, np.concatenate([pool for pool, *_ in keyed]))
        starts = np.cumsum([0] + [len(pool) for pool, *_ in keyed])
        candidate_rows = [fetched[a:b] for a, b in zip(starts[:-1], starts[1:])]
    for k, (pool, count, c, herd, key_stream) in enumerate(keyed):
        # a tilted sale draws among all the key's rows: rows in files are written out once to be mapped for it
        rows = candidate_rows[k] if tilt is None else take_rows(whole_rows(X), pool)
        tokens, hashes = _key_rows(
            rows, pool, hasher, count, c, herd, key_stream, tilt, temperature, greedy_sample_factor
        )
        tokens_out.append(tokens)
        hashes_out.append(hashes)
    if not tokens_out:
        return empty
    tokens_all = np.concatenate(tokens_out).astype(np.int64)
    order = np.argsort(tokens_all, kind="stable")
    return tokens_all[order], np.ascontiguousarray(np.concatenate(hashes_out)[order], dtype=np.float32)


def _smallest_draws(stream: Csprng, n: int, c: int, step: int = _ROW_STEP) -> np.ndarray:
    """Positions of the ``c`` smallest of ``n`` uniforms drawn from ``stream`` (``0 < c < n``): the draws of
    ``stream.uniform_array(n)``, made ``step`` at a time (the stream gives the same values in pieces) keeping the ``c``
    smallest so far, so that a key of many rows holds no array of a draw per row."""
    if n <= step:
        return np.argpartition(stream.uniform_array(n), c - 1)[:c]
    positions, values = np.zeros(0, dtype=np.int64), np.zeros(0)
    for start in range(0, n, step):
        draw = stream.uniform_array(min(step, n - start))
        keep = np.argpartition(draw, c - 1)[:c] if c < len(draw) else np.arange(len(draw))
        positions, values = np.concatenate([positions, keep + start]), np.concatenate([values, draw[keep]])
        if len(values) > c:
            kept = np.argpartition(values, c - 1)[:c]
            positions, values = positions[kept], values[kept]
    return positions


def _key_ranks_rows(
    keys: np.ndarray, key_set: np.ndarray, ranks: dict[int, np.ndarray], step: int = _ROW_STEP
) -> dict[int, np.ndarray]:
    """The rows (int64, increasing) at ``ranks[j]`` (increasing) among the rows of key ``key_set[j]`` in row order:
    one pass over ``keys``, ``step`` rows at a time (:func:`dpsumm.strata.label_index` of each piece), so that an
    owner of many rows holds no array of every row's key position, nor of every row of a key."""
    out = {j: np.zeros(len(r), dtype=np.int64) for j, r in ranks.items()}
    if not ranks:
        return out
    seen = np.zeros(len(key_set), dtype=np.int64)  # rows of each key before the piece
    found = dict.fromkeys(ranks, 0)  # ranks of each key found so far
    for start in range(0, len(keys), step):
        idx = label_index(keys[start : start + step], key_set)
        per_key = np.bincount(idx[idx >= 0], minlength=len(key_set))
        for j, r in ranks.items():
            done = found[j]
            if done == len(r) or r[done] >= seen[j] + per_key[j]:  # none of this key's ranks in the piece
                continue
            upto = int(np.searchsorted(r, seen[j] + per_key[j], side="left"))
            out[j][done:upto] = start + np.flatnonzero(idx == j)[r[done:upto] - seen[j]]
            found[j] = upto
        seen += per_key
    return out


def _key_rows(
    rows: np.ndarray,
    pool: np.ndarray,
    hasher: RFFHasher,
    count: int,
    c: int,
    herd: bool,
    key_stream: Csprng,
    target: np.ndarray | None,
    temperature: float,
    greedy_sample_factor: float | None,
) -> tuple[np.ndarray, np.ndarray]:
    """One key's rows sold among its candidates ``pool`` (``rows``: their rows; with no tilt, already drawn): ``count``
    of ``c`` candidates (:func:`cell_rows`)."""
    if target is not None:  # the tilted draw of c candidates among all the key's rows; herded (c > count) or as drawn
        tokens, hashes = nominate_rows(
            rows,
            hasher,
            target,
            temperature=float(temperature),
            nominees=count,
            candidates=c,
            sample_seed=int(key_stream.integers(2**63)),
            greedy_sample_factor=greedy_sample_factor,
        )
        return pool[tokens], hashes
    if not herd:  # the uniform sample itself: every candidate is sold
        return pool, np.ascontiguousarray(hasher.transform(rows), dtype=np.float32)
    tokens, hashes = nominate_rows(
        rows,
        hasher,
        np.zeros(hasher.dim),
        temperature=1.0,
        nominees=count,
        candidates=len(pool),
        sample_seed=int(key_stream.integers(2**63)),
        greedy_sample_factor=greedy_sample_factor,
    )
    return pool[tokens], hashes


# -- the consumer's side ------------------------------------------------------------------------------------------

_CELL_BLOCK = 4096
_CELL_SCORES = 1 << 22  # 32 MB of scores at a time
#: The most cells a consumer's histogram request may name (K owners x L keys).
MAX_HISTOGRAM_CELLS = 1 << 24


def histogram_counts(
    X: np.ndarray,
    keys: np.ndarray,
    key_set: np.ndarray,
    cell_keys: np.ndarray,
    centres: np.ndarray,
    bias: np.ndarray,
    dim: int,
    hasher: Callable[[], RFFHasher],
) -> np.ndarray:
    """Rows per cell of the consumer's histogram (float64, shape ``(J,)``; docs/explanation/label-purchase.md).

    A row of key ``key_set[j]`` goes to the nearest centre, ``argmin ||c||^2 - bias - 2 h.c`` with ``h`` its hash in
    the cells' h1 (``hasher()``, of ``dim`` features, made once the request is checked), among the cells of key ``j``
    (``cell_keys``: each cell's position in ``key_set``); a row whose key is outside the set, or that no cell holds,
    is not counted. Each row is counted at most once (L1
    sensitivity 2 under replace-one). The arrays are the request's, checked here.
    """
    centres = np.asarray(centres, dtype=np.float64)
    cell_keys = np.asarray(cell_keys)
    bias = np.asarray(bias, dtype=np.float64)
    J = len(cell_keys)
    if (
        cell_keys.ndim != 1
        or cell_keys.dtype.kind not in "iu"
        or centres.shape != (J, dim)
        or bias.shape != (J,)
        or not np.isfinite(centres).all()
        or not np.isfinite(bias).all()
    ):
        raise ProtocolError(
            f"a cell histogram request needs (J,) integer cell keys, (J, {dim}) centres and (J,) "
            f"biases, all finite; got {cell_keys.shape}, {centres.shape}, {bias.shape}"
        )
    key_set = np.asarray(key_set)
    if J and (cell_keys.min() < 0 or cell_keys.max() >= len(key_set)):
        raise ProtocolError("a cell histogram request names a cell key outside the key set")
    if J > MAX_HISTOGRAM_CELLS:
        raise ProtocolError(f"a cell histogram request names {J} cells, more than {MAX_HISTOGRAM_CELLS}")
    out = np.zeros(J)
    idx = label_index(np.asarray(keys), key_set)
    if J == 0 or not (idx >= 0).any():
        return out
    h1 = hasher()
    rows = np.flatnonzero(idx >= 0)
    base = (centres * centres).sum(1) - bias
    # a row is scored against its own key's cells only (the first nearest in cell order, as an argmin over every
    # cell with the others masked would pick): the work is |D_v| x J / L, not |D_v| x J
    cells_of_key = {j: np.flatnonzero(cell_keys == j) for j in np.unique(cell_keys).tolist()}
    step = max(1, min(_CELL_BLOCK, _CELL_SCORES // max(J, 1)))
    for start in range(0, len(rows), step):  # at most (step, J) scores at a time: _CELL_SCORES float64
        block = rows[start : start + step]
        H = np.asarray(h1.transform(np.ascontiguousarray(np.asarray(X)[block])), dtype=np.float64)
        row_keys = idx[block]
        for j in np.unique(row_keys).tolist():
            cells = cells_of_key.get(j)
            if cells is None:  # no cell holds this key: its rows are not counted
                continue
            score = base[cells][None, :] - 2.0 * (H[row_keys == j] @ centres[cells].T)
            np.add.at(out, cells[np.argmin(score, axis=1)], 1.0)
    return out
