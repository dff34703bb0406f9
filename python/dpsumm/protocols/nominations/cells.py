"""The label purchase's cells and asks, from released values and public numbers only (docs/explanation/label-purchase.md).

Pure functions of the owners' and the consumer's DP releases: every number they return is post-processing.
:mod:`dpsumm.protocols.nominations.by_label` runs the exchanges that feed them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from ..._validation import as_array, real_number
from ...errors import InvalidParameterError

__all__ = [
    "CELL_DIM",
    "RESERVE_SHARE",
    "GROUP_LEVEL",
    "HOLDER_SIGMAS",
    "MAX_COUNT_SCALE",
    "PURCHASE_FACTOR",
    "LabelCells",
    "owner_groups",
    "seed_split_distance",
    "label_cells",
    "cell_threshold",
    "quotas_from_cells",
    "quotas_with_reserve",
    "herded_sales",
]

#: Raw owner rows the label purchase buys, in units of the summary size (whatever K).
PURCHASE_FACTOR = 3.0
#: The share of the rows bought that the purchases by strata and by direction keep for every cell the consumer's
#: release counts any row in (:func:`quotas_with_reserve`): a third of the default 3p, so that the thresholded
#: split still buys 2p >= p rows of the wanted cells, and a stratum the consumer wants a few rows of (below the
#: histogram's noise threshold) is still offered to the aggregator's greedy (docs/guide/strata.md).
RESERVE_SHARE = 1.0 / 3.0
#: The dimension of the h1 in which the owners release their hash sums and the consumer places its rows in cells
#: (the same gamma as the run's h1, its own seed): 64 keeps the release's noise short (its L2 sensitivity does not
#: depend on the dimension) while the mean hashes still tell owners with different data apart.
CELL_DIM = 64
#: Owners stay in separate cells unless their mean hashes are equal at this significance level
#: (:func:`owner_groups`): a small level merges owners readily, so that owners of one distribution share a cell.
GROUP_LEVEL = 1e-3
#: An owner holds a label when its noisy count of it reaches this many standard deviations of the noise.
HOLDER_SIGMAS = 3.0
#: The largest noise scale :func:`cell_threshold` takes: its threshold, about ``scale * log(J)`` and at most a few
#: hundred times ``scale``, stays an exact integer in a float (no row count comes near it either way).
MAX_COUNT_SCALE = 2.0**40


def _largest_remainders(weights: np.ndarray, total: int) -> np.ndarray:
    """``total`` split in proportion to ``weights`` (>= 0, not all 0) by largest remainders (ties to the first)."""
    w = np.asarray(weights, dtype=np.float64)
    want = w / w.sum() * total
    add: np.ndarray = np.floor(want).astype(np.int64)
    order = np.lexsort((np.arange(len(w)), -(want - add)))
    add[order[: total - int(add.sum())]] += 1
    return add


def _split(weights: np.ndarray, total: int, caps: np.ndarray) -> np.ndarray:
    """``total`` split in proportion to ``weights`` by largest remainders, capped at ``caps``; what a cap leaves
    goes to the open entries by the same rule (uniformly among them when their weights are all 0)."""
    q = np.asarray(weights, dtype=np.float64)
    n = np.asarray(caps, dtype=np.int64)
    out = np.zeros(len(n), dtype=np.int64)
    open_ = out < n
    left = int(total)
    while left > 0 and open_.any():
        w = np.where(open_, q, 0.0)
        add = np.minimum(_largest_remainders(w if w.sum() > 0 else open_.astype(np.float64), left), n - out)
        out += add
        left = int(total) - int(out.sum())
        open_ = out < n
    return out


def _finite(value: object, name: str, shape: tuple[int | None, ...]) -> np.ndarray:
    """``value`` as a finite float64 array of ``shape`` (``None``: any length), or InvalidParameterError naming it."""
    arr = as_array(value, name)
    if (
        arr.dtype.kind not in "fiub"
        or arr.ndim != len(shape)
        or any(want is not None and got != want for got, want in zip(arr.shape, shape))
    ):
        raise InvalidParameterError(
            f"`{name}` must be a real array of shape "
            f"{tuple('?' if w is None else w for w in shape)}, got {arr.dtype} {arr.shape}",
            name,
        )
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        raise InvalidParameterError(f"`{name}` must be finite", name)
    return arr


def _number(value: object, name: str, *, positive: bool = False) -> float:
    """``value`` as a finite real number >= 0 (> 0 with ``positive``), or InvalidParameterError naming it."""
    v = real_number(value, name) if isinstance(value, (int, float, np.integer, np.floating)) else math.nan
    if not math.isfinite(v) or v < 0 or (positive and v == 0):
        raise InvalidParameterError(
            f"`{name}` must be a finite number {'>' if positive else '>='} 0, got {value!r:.60}", name
        )
    return v


def owner_groups(
    means: np.ndarray,
    noise_var: np.ndarray,
    n_rows: np.ndarray,
    *,
    level: float = GROUP_LEVEL,
    resolution: float | None = None,
) -> list[list[int]]:
    """Owners grouped where their released mean hashes cannot be told apart (post-processing; docs/explanation/label-purchase.md).

    ``means`` (K, d) are the owners' released hash sums over their public row counts ``n_rows``, each with noise
    of variance ``noise_var[k]`` per coordinate. Two owners cannot be told apart when the squared distance of
    their means, ``D = ||m_a - m_b||^2``, exceeds its expectation for two equal distributions, ``E0 = v_a + v_b``
    (``v_k = d noise_var[k] + (1 - ||m_k||^2) / n_k``: the release's noise and the rows' sampling), by at most
    ``z = Phi^-1(1 - level)`` standard deviations ``sqrt(2/d) E0`` (a chi-square approximation). The groups are
    the connected components of that relation (single linkage; each pair is tested once on the owners' own
    releases: re-testing merged groups would test means fitted to the noise): owners that hold one distribution
    end in one group, owners whose data differ stay apart. The pairs are found without testing all K^2 of them
    (:func:`_alike_components`). Returns the groups (lists of owner indices, each sorted), ordered by their first owner.

    With ``resolution`` (a squared distance >= 0), a pair joins only when its test can see a difference of that
    size: when the test's margin ``z sqrt(2/d) E0`` is at most ``resolution``. A pair whose noise hides such a
    difference (owners of a few hundred rows, whose released means are mostly noise) passes the test whatever its
    owners hold, so passing it is no evidence that they are alike, and the pair stays apart
    (:func:`seed_split_distance` gives the reference the direction purchase uses).
    """
    m = _finite(means, "means", (None, None))
    K, d = m.shape
    n = _finite(n_rows, "n_rows", (K,))
    noise = _finite(noise_var, "noise_var", (K,))
    if not 0.0 < level < 1.0:
        raise InvalidParameterError(f"`level` must be in (0, 1), got {level!r}", "level")
    reach = math.inf if resolution is None else _number(resolution, "resolution")
    if K == 0:
        return []
    if d == 0 or np.any(n <= 0) or np.any(noise < 0):
        raise InvalidParameterError(
            "owner_groups needs d >= 1, every owner's row count > 0 and noise variances >= 0",
            "n_rows" if np.any(n <= 0) else "noise_var" if np.any(noise < 0) else "means",
        )
    z = float(NormalDist().inv_cdf(1.0 - level))
    v = d * noise + np.maximum(1.0 - (m * m).sum(1), 0.0) / n
    label = _alike_components(m, v, z * math.sqrt(2.0 / d), reach)
    groups: dict[int, list[int]] = {}
    for k in range(K):
        groups.setdefault(int(label[k]), []).append(k)
    return sorted(groups.values(), key=lambda g: g[0])


#: The dimension of the principal subspace whose k-d tree finds :func:`owner_groups`' candidate pairs.
_INDEX_DIM = 8
#: Owners (evenly spaced) whose balls estimate how many pairs are candidates, before any is listed.
_PROBES = 256


def _join(label: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The components ``label`` (owner -> component) joined by the pairs ``(a, b)`` (scipy's csgraph)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    K = len(label)
    if not len(a):
        return label
    edges = coo_matrix((np.ones(len(a), dtype=np.int8), (label[a], label[b])), shape=(K, K))
    joined: np.ndarray = connected_components(edges, directed=False)[1][label]
    return joined


def _alike_components(m: np.ndarray, v: np.ndarray, c: float, reach: float = math.inf) -> np.ndarray:
    """The connected components (owner -> component) of the pairs ``a != b`` of rows of ``m`` with
    ``D - E0 <= c E0`` and ``c E0 <= reach`` (``D = ||m_a - m_b||^2``, ``E0 = v_a + v_b``; :func:`owner_groups`'
    resolution), without testing all K^2 pairs when few pairs are close.

    Such a pair has ``D <= (1 + c) E0 <= 2 (1 + c) max(v_a, v_b)``: it lies in the ball of radius
    ``sqrt(2 (1 + c) v_k)`` around the owner ``k`` of the two with the larger ``v``, and so does its projection on
    any subspace (a projection shortens distances). A k-d tree over the means projected on their first
    :data:`_INDEX_DIM` principal axes (where a k-d tree prunes well, unlike in the means' 64 dimensions) finds every
    owner in each owner's ball, the radius widened by a rounding margin so that no pair is lost, and each candidate
    pair is tested exactly: the work is the tree's ``K log K`` plus the candidates. When most pairs are candidates
    (most owners alike: the relation itself then has about K^2 pairs; estimated from the balls of
    :data:`_PROBES` owners), every pair is tested instead, (step, K) at a
    time (a matrix product), each block's pairs joining the components found so far: no more work than the
    candidates', and memory for one block."""
    from scipy.spatial import cKDTree

    K, d = m.shape
    label = np.arange(K)
    centred = m - m.mean(0)
    axes = np.linalg.svd(centred, full_matrices=False)[2][:_INDEX_DIM]
    radius = np.sqrt(2.0 * (1.0 + c) * v) * (1.0 + 1e-9) + 1e-12
    tree = cKDTree(centred @ axes.T)
    probe = np.unique(np.linspace(0, K - 1, min(K, _PROBES)).astype(np.int64))  # the candidates, estimated
    if tree.query_ball_point(tree.data[probe], radius[probe], return_length=True).mean() * K <= K * K / 4:
        found = tree.query_ball_point(tree.data, radius, return_sorted=False)
        counts = np.fromiter((len(f) for f in found), dtype=np.int64, count=K)
        a = np.repeat(np.arange(K), counts)
        b = np.fromiter((j for f in found for j in f), dtype=np.int64, count=int(counts.sum()))
        keep = a != b
        a, b = a[keep], b[keep]
        step = max(1, (1 << 22) // d)  # (step, d) differences at a time
        for start in range(0, len(a), step):
            i, j = a[start : start + step], b[start : start + step]
            D = ((m[i] - m[j]) ** 2).sum(1)
            e0 = v[i] + v[j]
            alike = ((D - e0) <= c * e0) & (c * e0 <= reach)
            label = _join(label, i[alike], j[alike])
        return label
    sq = (m * m).sum(1)
    step = max(1, (1 << 22) // K)
    for start in range(0, K, step):
        rows = np.arange(start, min(K, start + step))
        D = np.maximum(sq[rows, None] + sq[None, :] - 2.0 * (m[rows] @ m.T), 0.0)
        e0 = v[rows, None] + v[None, :]
        alike = ((D - e0) <= c * e0) & (c * e0 <= reach) & (np.arange(K)[None, :] > rows[:, None])
        alike &= label[rows, None] != label[None, :]  # pairs already in one component join nothing
        a, b = np.nonzero(alike)
        label = _join(label, rows[a], b)
    return label


def seed_split_distance(hashes: np.ndarray) -> float:
    """The squared distance between the mean hashes of the two halves of the public seed rows, below and above the
    median of their scores along the top principal direction of their centred hashes (``hashes`` (n, d), n >= 2;
    the median row of an odd count in neither): the size of the difference between two parts of the public
    population, which :func:`owner_groups` must be able to see for a pair of owners that passes its test to count
    as alike. Public numbers only."""
    H = _finite(hashes, "hashes", (None, None))
    if H.shape[0] < 2 or H.shape[1] < 1:
        raise InvalidParameterError(f"`hashes` must hold at least 2 rows of at least 1 value, got {H.shape}", "hashes")
    centred = H - H.mean(0)
    top = np.linalg.svd(centred, full_matrices=False)[2][0]
    order = np.argsort(centred @ top, kind="stable")
    half = len(order) // 2  # an odd count's median row joins neither half: the halves do not depend on top's sign
    gap = H[order[len(order) - half :]].mean(0) - H[order[:half]].mean(0)
    return float(gap @ gap)


@dataclass(frozen=True)
class LabelCells:
    """The public cells of the label purchase: (group of owners, label) pairs with their centres."""

    labels: np.ndarray  # (J,) int64: each cell's position in the label set
    owners: tuple[tuple[int, ...], ...]  # each cell's owners (indices into the owners that released)
    centres: np.ndarray  # (J, dim) float64: the pooled released mean hash of the cell's owners
    bias: np.ndarray  # (J,) float64: the expected squared norm of each centre's noise


def label_cells(
    counts: np.ndarray,
    sums: np.ndarray,
    n_rows: np.ndarray,
    sigma: float,
    *,
    level: float = GROUP_LEVEL,
    resolution: float | None = None,
) -> LabelCells:
    """The label purchase's cells from the owners' releases only (post-processing; docs/explanation/label-purchase.md).

    ``counts`` (K, L) are the owners' noisy row counts per label, ``sums`` (K, d) their noisy hash sums over all
    their rows (noise ``sigma`` per coordinate), ``n_rows`` their public row counts. Owners are grouped by
    :func:`owner_groups` on their mean hashes; owner k holds label j when its noisy count reaches
    ``HOLDER_SIGMAS * sigma`` (the noise alone reaches 3 sigma with probability 0.13 %). Each group's holders of
    label j form one cell, centred at their pooled mean hash, whose rows are sold by every owner of the group with a
    positive count of j (a holder too small to reach the threshold still sells). A label no owner reaches the
    threshold for (owners too small for their counts to stand out of the noise) is one cell over every owner whose
    count of it is positive. ``resolution``: :func:`owner_groups`' (None: every pair its test passes joins).
    """
    counts = _finite(counts, "counts", (None, None))
    K, L = counts.shape
    sums = _finite(sums, "sums", (K, None))
    n = _finite(n_rows, "n_rows", (K,))
    d = sums.shape[1]
    sigma = _number(sigma, "sigma")
    groups = (
        owner_groups(sums / n[:, None], np.full(K, sigma**2) / n**2, n, level=level, resolution=resolution) if K else []
    )
    labels, owners, centres, bias = [], [], [], []
    for j in range(L):
        holds = counts[:, j] >= HOLDER_SIGMAS * sigma
        positive = counts[:, j] > 0
        # A label no owner can be shown to hold (small owners: counts within the noise) is one cell over every owner
        # whose count of it is positive: the histogram over labels, where owners cannot be resolved.
        if not holds.any():
            holds = positive
            label_groups = [[int(k) for k in np.flatnonzero(positive)]]
        else:
            label_groups = groups
        for g in label_groups:
            placing = [k for k in g if holds[k]]
            if not placing:
                continue
            total = float(n[placing].sum())
            labels.append(j)
            # sold by every member of the group whose count is positive: an owner too small to stand out of the
            # noise still sells its rows of the label (the holders only place the cell)
            owners.append(tuple(k for k in g if holds[k] or positive[k]))
            centres.append(sums[placing].sum(0) / total)
            bias.append(d * len(placing) * sigma**2 / total**2)
    return LabelCells(
        labels=np.asarray(labels, dtype=np.int64),
        owners=tuple(owners),
        centres=np.asarray(centres, dtype=np.float64).reshape(len(labels), d),
        bias=np.asarray(bias, dtype=np.float64),
    )


def cell_threshold(cells: int, validation_rows: int, scale: float, factor: float = PURCHASE_FACTOR) -> float:
    """The count a cell of the consumer's noisy histogram must reach to be bought (docs/explanation/label-purchase.md).

    The histogram's noise is the discrete Laplace of scale ``b`` (``P(z) ∝ r^|z|``, ``r = exp(-1/b)``). A cell the
    consumer has no row in still gets a positive noisy count, and the rows bought for it are wasted (the
    aggregator's exact greedy leaves them out), while a wanted cell left out is missing from the summary. The
    threshold is the lowest integer ``t >= 1`` that meets both of:

    * the noise alone is expected to lift at most one of the ``J`` empty cells to ``t``:
      ``J P(Z >= t) = J r^t / (1 + r) <= 1`` (a real cell of ``c`` rows is kept unless its noise is below
      ``t - c``: probability ``r^(c - t + 1) / (1 + r)``);
    * the count the noise alone is expected to put on the empty cells that reach ``t``,
      ``J E[Z 1{Z >= t}] = J r^t (t (1 - r) + r) / ((1 - r)(1 + r))``, is at most ``|D_v| / (factor - 1)``: the
      noise then takes at most about ``1 / factor`` of the ``factor * size`` rows bought (no bound when
      ``factor <= 1``).

    ``scale == 0`` (noise-free counts): ``t = 1``, a cell with a row. Public numbers only.
    """
    for name, count in (("cells", cells), ("validation_rows", validation_rows)):
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
            raise InvalidParameterError(f"`{name}` must be an integer >= 1, got {count!r}", name)
    scale, factor = _number(scale, "scale"), _number(factor, "factor", positive=True)
    if scale == 0:
        return 1.0
    if scale > MAX_COUNT_SCALE:
        raise InvalidParameterError(
            f"`scale` {scale:g} is above {MAX_COUNT_SCALE:g}: the threshold would be beyond any count of rows (a "
            "consumer's epsilon that small buys nothing)",
            "scale",
        )
    r = math.exp(-1.0 / scale)
    one_minus_r = -math.expm1(-1.0 / scale)
    # J r^t / (1 + r) <= 1: t >= b log(J / (1 + r)); the smallest integer, at least 1
    t = max(1, math.ceil(scale * math.log(cells / (1.0 + r)) - 1e-9))
    if factor > 1:
        log_cap = math.log(validation_rows / (factor - 1.0))

        def too_much(k: int) -> bool:  # log J E[Z 1{Z >= k}] > log cap, in logs (no underflow at large k / b)
            return (
                math.log(cells) - k / scale + math.log(k * one_minus_r + r) - math.log(one_minus_r * (1.0 + r))
            ) > log_cap

        if too_much(t):  # the mass decreases in k >= 1: find the first k where it is low enough by bisection
            low, step = t, 1
            while too_much(low + step):
                low, step = low + step, 2 * step
            high = low + step  # too_much(low), not too_much(high)
            while high - low > 1:
                mid = (low + high) // 2
                low, high = (mid, high) if too_much(mid) else (low, mid)
            t = high
    return float(t)


def quotas_from_cells(
    consumer_counts: np.ndarray,
    consumer_scale: float,
    validation_rows: int,
    cells: LabelCells,
    owner_counts: np.ndarray,
    size: int,
    *,
    factor: float = PURCHASE_FACTOR,
    within_keys: bool = False,
) -> np.ndarray:
    """Rows of each label to buy from each owner, from released values only (post-processing; docs/explanation/label-purchase.md).

    ``consumer_counts`` (J,) is the consumer's noisy histogram over ``cells`` (discrete Laplace noise of scale
    ``consumer_scale``,
    ``|D_v| = validation_rows`` public); ``owner_counts`` (K, L) the owners' noisy counts per label. A cell is
    *wanted* when its count reaches :func:`cell_threshold` ``t`` (if none does, the positive counts are used); owner
    k is taken to hold ``s_kl = floor(max(0, n~_kl))`` rows of label l (an owner with fewer sells all it has). The
    budget ``B = ceil(factor * size)`` is split in proportion to the wanted cells' counts, each cell's share over
    its owners in proportion to ``s_kl``, by largest remainders, capped at ``s_kl``. What the caps leave goes to the
    open wanted cells in proportion to their counts *above the threshold*, ``c~ - t``: a cell the noise alone put
    there barely passes ``t`` and gets little of it, a cell of many validation rows most (with ``t = 0`` this is
    the first split's own rule). With ``within_keys`` (the direction purchase's rule), what the caps leave of each
    key's ask goes first to that key's rows at its other sellers, in proportion to the consumer's positive counts of
    their cells (below the threshold too), by their spare rows when none is positive (:func:`_within_keys`): the
    consumer asked for rows of that key, and the key is the public attribute the purchase buys by. What the wanted
    cells cannot hold goes to the wanted labels' rows at their other owners (in proportion to the labels' counts,
    each label's share by the owners' spare ``s_kl``); if all that holds fewer than ``size`` rows, the rest of ``B``
    comes from the other labels in proportion to ``s_kl`` (the summary needs rows of other labels). Returns (K, L) int64.
    """
    within_keys = bool(within_keys)
    N = _finite(owner_counts, "owner_counts", (None, None))
    K, L = N.shape
    J = len(cells.labels)
    c = _finite(consumer_counts, "consumer_counts", (J,))
    if (
        len(cells.owners) != J
        or any(not own or min(own) < 0 or max(own) >= K for own in cells.owners)
        or (J and (int(np.min(cells.labels)) < 0 or int(np.max(cells.labels)) >= L))
    ):
        raise InvalidParameterError(
            f"`cells` must name owners in [0, {K}) and labels in [0, {L}), one entry per cell", "cells"
        )
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
        raise InvalidParameterError(f"`size` must be an integer >= 0, got {size!r}", "size")
    factor = _number(factor, "factor", positive=True)
    supply = np.floor(np.maximum(N, 0.0)).astype(np.int64)
    B = int(math.ceil(factor * size))
    out = np.zeros((K, L), dtype=np.int64)
    if J:
        t = cell_threshold(J, validation_rows, consumer_scale, factor)
        want = np.where(c >= t, np.maximum(c, 0.0), 0.0)
        if want.sum() <= 0:
            want = np.maximum(c, 0.0)
        above = np.where(want > 0, np.maximum(c - t, 0.0), 0.0)  # the evidence beyond the noise's reach
        mass = np.zeros((K, L))
        mass_above = np.zeros((K, L))
        label_mass = np.zeros(L)
        for w, a, j, own in zip(want, above, cells.labels, cells.owners):
            held = supply[list(own), j].astype(np.float64)
            if w <= 0 or held.sum() <= 0:
                continue
            mass[list(own), j] += w * held / held.sum()
            mass_above[list(own), j] += a * held / held.sum()
            label_mass[j] += w
        flat, caps = mass.ravel(), np.where(mass.ravel() > 0, supply.ravel(), 0)
        if flat.sum() > 0:
            asked = _largest_remainders(flat, B)
            got = np.minimum(asked, caps)  # the first split, capped
            if within_keys:  # what a cell's cap leaves of its ask: first the same key at its other sellers
                got = _within_keys(got, asked, c, cells, supply)
            for w in (mass_above.ravel(), flat):  # what the caps leave: by the evidence, then by the counts
                got += _split(w, B - int(got.sum()), np.where(w > 0, caps - got, 0))
            out = got.reshape(K, L)
        left = B - int(out.sum())
        if left > 0 and label_mass.sum() > 0:  # the wanted labels' rows at their other owners
            spare = (supply - out).astype(np.float64)
            per = np.divide(spare, spare.sum(0), out=np.zeros((K, L)), where=spare.sum(0) > 0)
            w2 = (label_mass[None, :] * per).ravel()
            out += _split(w2, left, np.where(w2 > 0, (supply - out).ravel(), 0)).reshape(K, L)
    if int(out.sum()) < int(size):  # the wanted labels cannot fill the summary: the rest of B from the others
        out += _split(supply.ravel().astype(np.float64), B - int(out.sum()), (supply - out).ravel()).reshape(K, L)
    return out


def _within_keys(
    got: np.ndarray, asked: np.ndarray, counts: np.ndarray, cells: LabelCells, supply: np.ndarray
) -> np.ndarray:
    """``got`` (K * L,) plus, for every key, the rows of the first split ``asked`` that its sellers' caps left,
    asked of the key's other sellers: in proportion to the consumer's positive counts ``counts`` (J,) of their cells
    (below the threshold too), each cell's share by its owners' released supply, capped at what they hold beyond
    ``got``; by the spare supply alone when none of them has a positive count (post-processing)."""
    K, L = supply.shape
    out = got.reshape(K, L).copy()
    short = (asked.reshape(K, L) - out).sum(0)
    weight = np.zeros((K, L))
    for w, j, own in zip(np.maximum(counts, 0.0), cells.labels, cells.owners):
        held = supply[list(own), j].astype(np.float64)
        if w > 0 and held.sum() > 0:
            weight[list(own), j] += w * held / held.sum()
    for j in np.flatnonzero(short > 0):
        spare = supply[:, j] - out[:, j]
        w = np.where(spare > 0, weight[:, j], 0.0)
        if w.sum() <= 0:
            w = np.maximum(spare, 0).astype(np.float64)
        out[:, j] += _split(w, int(short[j]), np.where(w > 0, spare, 0))
    flat: np.ndarray = out.ravel()
    return flat


def quotas_with_reserve(
    consumer_counts: np.ndarray,
    consumer_scale: float,
    validation_rows: int,
    cells: LabelCells,
    owner_counts: np.ndarray,
    size: int,
    *,
    factor: float = PURCHASE_FACTOR,
    reserve: float = 0.0,
    within_keys: bool = False,
) -> np.ndarray:
    """:func:`quotas_from_cells` with a share ``reserve`` of the ``ceil(factor * size)`` rows kept for every cell
    the consumer's release puts a positive count on, thresholded or not (post-processing; docs/explanation/label-purchase.md).

    The first ``B - R`` rows (``R = floor(reserve * B)``) go by :func:`quotas_from_cells` (at ``factor * (1 -
    reserve)``); the ``R`` reserved rows in proportion to ``max(c~_j, 0)`` over all cells, each cell's share over
    its owners in proportion to their released counts, capped at what they hold beyond the first split. A cell
    whose few validation rows are below the noise's threshold (a stratum the consumer wants a little of) is then
    still offered to the aggregator's greedy, which keeps its rows only where ``D_v`` wants them. ``reserve = 0``:
    :func:`quotas_from_cells` itself. ``within_keys``: :func:`quotas_from_cells`'. Returns (K, L) int64."""
    reserve = _number(reserve, "reserve")
    if reserve >= 1:
        raise InvalidParameterError(f"`reserve` must be in [0, 1), got {reserve!r}", "reserve")
    B = int(math.ceil(_number(factor, "factor", positive=True) * size))
    R = int(math.floor(reserve * B))
    main = quotas_from_cells(
        consumer_counts,
        consumer_scale,
        validation_rows,
        cells,
        owner_counts,
        size,
        factor=factor if R == 0 else (B - R) / max(size, 1),
        within_keys=within_keys,
    )
    if R == 0:
        return main
    c = _finite(consumer_counts, "consumer_counts", (len(cells.labels),))
    return _reserve_split(np.maximum(c, 0.0), R, main, cells, _finite(owner_counts, "owner_counts", (None, None)))


def _reserve_split(
    weights: np.ndarray, rows: int, main: np.ndarray, cells: LabelCells, owner_counts: np.ndarray
) -> np.ndarray:
    """``main`` (K, L) plus ``rows`` more split over the cells in proportion to ``weights`` (J,) (>= 0), each
    cell's share over its owners in proportion to their released counts ``owner_counts`` (K, L), capped at what
    they hold beyond ``main``."""
    supply = np.floor(np.maximum(owner_counts, 0.0)).astype(np.int64)
    mass = np.zeros(owner_counts.shape)
    for w, j, own in zip(weights, cells.labels, cells.owners):
        held = supply[list(own), j].astype(np.float64)
        if w > 0 and held.sum() > 0:
            mass[list(own), j] += w * held / held.sum()
    flat = mass.ravel()
    out: np.ndarray = main + _split(flat, rows, np.where(flat > 0, (supply - main).ravel(), 0)).reshape(main.shape)
    return out


def herded_sales(quotas: np.ndarray, cells: LabelCells) -> np.ndarray:
    """Which of the label purchase's per-label sales each owner draws by herding (post-processing; §2.7).

    ``quotas`` (K, L) are the rows of each label asked of each owner (:func:`quotas_from_cells`). Owner k's sale of
    label j is herded when its ask ``b`` is at least the number ``G`` of owners asked for label j in the same cell
    (owners that cannot be told apart), and drawn uniformly among its rows of the label otherwise. Herding ``b`` of
    an owner's rows represents its distribution with an error of order ``1/b``, but that error is a bias toward the
    centre of the distribution, which ``G`` owners of one distribution each repeat: the union of their herds keeps
    it. Uniform draws are independent, and their union of ``G b`` rows is off by order ``1/sqrt(G b)``. The first is
    smaller when ``b >= G``: an owner that sells a cell alone (``G = 1``) always herds; 100 owners asked for 4 rows
    each of one label draw them uniformly. An ask outside every cell (the purchase's later steps) is herded, and so
    is (vacuously) a label not asked for. Public numbers only. Returns (K, L) bool.
    """
    q = np.asarray(quotas)
    if q.ndim != 2 or q.dtype.kind not in "iu":
        raise InvalidParameterError(f"`quotas` must be a 2-D integer array, got {q.dtype} of shape {q.shape}", "quotas")
    K, L = q.shape
    sellers = np.ones((K, L), dtype=np.int64)
    for j, cell_owners in zip(cells.labels, cells.owners):
        if not 0 <= int(j) < L:
            continue
        asked = [k for k in cell_owners if 0 <= k < K and q[k, j] > 0]
        sellers[asked, j] = max(len(asked), 1)
    out: np.ndarray = (q >= sellers) | (q == 0)
    return out
