"""The nominations protocol: owners nominate, the aggregator chooses (docs/design.md §2-§5).

Three exchanges in all, whatever the summary size:

1. **Target.** The consumer releases ``g~ = mean h1(D_v) + noise`` once (a discrete Gaussian calibrated to
   ``(epsilon_v, delta_v)`` under replace-one in ``D_v``; or the paper's h2 as the alternative), and gives the
   exact mean to the trusted aggregator.
2. **Nominations.** Every owner ranks its own rows using only its data, ``g~`` and public parameters, and
   sends the h1 hashes of its ``M`` nominees (``M`` is public and fixed before the run).
3. **Purchase.** ``purchase="nominees"`` (default): the aggregator buys the rows of every nominee (a request
   that depends on nobody's data), runs the exact greedy over the pooled hashes toward the exact validation
   mean, and keeps ``size`` rows. ``purchase="winners"``: it chooses first and buys only the winners (fewer raw
   rows, but an owner learns which of its nominees won, which depends on the other owners' data: that one
   message is outside the DP guarantee, and the ledger says so).

With ``purchase="nominees"`` what an owner receives is a function of its own data, ``g~`` and public
parameters, so the owners' epsilon of the run is 0; the consumer's is the release's ``(epsilon_v, delta_v)``.

``purchase="quotas"`` (an option; docs/design.md §2.5) replaces exchanges 2 and 3: every
owner releases ``sum h1(D_k)`` and then the histogram of its rows' scores ``h1(x).(g~ - mu~)`` in public bins,
each through the discrete Gaussian (owners' ``(OWNER_EPSILON, OWNER_DELTA)`` in all, replace-one in that
owner's rows); the aggregator reads quotas off the released histograms (post-processing) and buys
``PURCHASE_FACTOR * size`` rows in all, each owner selling its quota of its best rows by its own ranking.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, ClassVar, Literal

import numpy as np

from .. import accounting
from .._validation import as_array, bounded_int, choice_of, positive_float, real_number
from ..errors import InvalidParameterError, ProtocolError
from ..hashing import DIGEST_BYTES, RFFHasher, hash_digests
from ..kernels import DEFAULT_CANDIDATE_FACTOR, greedy_select, h1_peak
from ..messages import (
    LabelHistogramRelease,
    LabelHistogramRequest,
    NominationReply,
    NominationRequest,
    PurchaseReply,
    PurchaseRequest,
    QuotaReply,
    QuotaRequest,
    SketchReply,
    SketchRequest,
    TargetRelease,
    TargetRequest,
)
from ..parties import SKETCH_RELEASES as _SKETCH_RELEASES
from ..parties import (
    count_release_event,
    label_index,
    mean_release_sensitivity,
    nominate_rows,
    owner_sketch,
    quota_rows,
    sketch_calibration,
)
from ..privacy import MAX_MWEM_STEPS, MAX_MWEM_WORK, Csprng
from ..results import Access, SummaryResult
from ..transport import PartyUnavailable, Transport
from .base import MAX_COUNT, Plan, RunSetup, SummaryMethod
from .baselines import exact_greedy

_log = logging.getLogger("dpsumm")

__all__ = [
    "Nominations",
    "DEFAULT_VALIDATION_BUDGET",
    "DEFAULT_DIM",
    "NominationsConfig",
    "NominationsAggregator",
    "nominate_rows",
    "temperature_for",
    "run_nominations",
    "TEMPERATURE_PER_SIGMA",
    "TEMPERATURE_FLOOR",
    "STOCHASTIC_GREEDY_FACTOR",
    "PURCHASE",
    "PURCHASE_FACTOR",
    "OWNER_EPSILON",
    "OWNER_DELTA",
    "QUOTA_POOL_FACTOR",
    "QUOTA_UNIFORM_SHARE",
    "SKETCH_TEMPERATURE_PER_SIGMA",
    "SKETCH_TEMPERATURE_FLOOR",
    "HISTOGRAM_BINS",
    "HISTOGRAM_BIN_PER_SIGMA",
    "HISTOGRAM_BIN_FLOOR",
    "TILT_ROUNDS",
    "owner_sketch",
    "owner_groups",
    "LabelCells",
    "label_cells",
    "cell_threshold",
    "quotas_from_cells",
    "herded_sales",
    "CELL_DIM",
    "GROUP_LEVEL",
    "HOLDER_SIGMAS",
    "SHORTFALL_SIGMAS",
    "SALE_TILT_SHARE",
    "sketch_calibration",
    "sketch_temperature_for",
    "histogram_edges",
    "quotas_from_histograms",
    "quota_rows",
]

#: The tilt's temperature in units of the noise in an owner's relevance score ``h1(x).g~`` (whose standard
#: deviation is ``sigma ||h1(x)|| ~ sigma``), measured on MNIST (docs/experiments/nominations-temperature).
TEMPERATURE_PER_SIGMA = 5.0
#: The temperature when the release has (almost) no noise, measured likewise.
TEMPERATURE_FLOOR = 0.2
#: ``owner_greedy="stochastic"``: each round of an owner's greedy evaluates ``ceil((C/M) * factor)`` random
#: candidates (Mirzasoleiman et al. 2015, factor = ln(1/eps)); measured on MNIST in
#: benches/nominate_stochastic_mnist.py (README.md, "Performance of the nominations protocol").
STOCHASTIC_GREEDY_FACTOR = 8.0

# -- the quota purchase (issue 19, docs/design.md §2.5); every number below is public ------------------------
#: The default purchase, ``"auto"``: ``"labels"`` when the run has a public ``label_set`` (every owner releases its
#: counts per label and a 64-coordinate hash sum once, owners' epsilon <= 1; ``PURCHASE_FACTOR * size`` raw rows
#: bought whatever K; certified), else ``"nominees"`` (owners' epsilon 0, ``K * nominees`` raw rows bought: 10 x size
#: at K = 5, 200 x size at K = 100). On the issue-19 test beds the label purchase is better than the nominees at
#: K = 5 and worse at K = 100, where the nominees buy 67 times more rows (docs/experiments/testbeds/targets.md).
#: ``"quotas"`` (two DP sketches per owner, ``PURCHASE_FACTOR * size`` rows) misses the quality targets: an option.
PURCHASE = "auto"
#: Raw owner rows bought with ``purchase="quotas"``, in units of the summary size (whatever K).
PURCHASE_FACTOR = 3.0
#: The owners' budget for their two sketch releases (each owner, replace-one in its own rows).
OWNER_EPSILON = 1.0
OWNER_DELTA = 1e-6
#: Quotas are the owners' shares of the pooled rows whose score is among the top ``QUOTA_POOL_FACTOR * size``
#: (read off the released histograms), mixed with a uniform share ``QUOTA_UNIFORM_SHARE``.
QUOTA_POOL_FACTOR = 10.0
QUOTA_UNIFORM_SHARE = 0.3
#: ... at up to this many owners; beyond, the uniform share is ``QUOTA_UNIFORM_SHARE * QUOTA_UNIFORM_OWNERS / K``.
QUOTA_UNIFORM_OWNERS = 5
#: The owners' ranking tilt ``exp(h1(x).(g~ - mu~) / T)``, ``T = max(floor, per_sigma * sigma)``: about the
#: noise of a row's score (``sigma ||h1(x)||``); the nominees' ``TEMPERATURE_PER_SIGMA = 5`` is far flatter.
SKETCH_TEMPERATURE_PER_SIGMA = 1.5
SKETCH_TEMPERATURE_FLOOR = 0.02
#: The score histogram: ``HISTOGRAM_BINS`` bins of width ``max(HISTOGRAM_BIN_FLOOR, HISTOGRAM_BIN_PER_SIGMA *
#: sigma)``, 8 of them above the score a typical validation row has, plus two open-ended bins.
HISTOGRAM_BINS = 64
HISTOGRAM_BIN_PER_SIGMA = 0.3
HISTOGRAM_BIN_FLOOR = 0.005

# -- the label purchase (docs/design.md §2.7); every number below is public ------------------------------------
#: The dimension of the h1 in which the owners release their hash sums and the consumer places its rows in cells
#: (the same gamma as the run's h1, its own seed): 64 keeps the release's noise short (its L2 sensitivity does not
#: depend on the dimension) while the mean hashes still tell owners with different data apart.
CELL_DIM = 64
#: Owners stay in separate cells unless their mean hashes are equal at this significance level
#: (:func:`owner_groups`): a small level merges owners readily, so that owners of one distribution share a cell.
GROUP_LEVEL = 1e-3
#: An owner holds a label when its noisy count of it reaches this many standard deviations of the noise.
HOLDER_SIGMAS = 3.0
#: An owner that sells fewer rows of a label than asked claims to hold no more: the aggregator excludes it when its
#: released count of the label is more than this many noise sigmas above (false alarm 2.9e-7 per label).
SHORTFALL_SIGMAS = 5.0
#: ``purchase="labels"``: the default share of the consumer's epsilon_v spent on its hashed mean ``g~`` (the discrete
#: Gaussian of the nominees purchase, at ``(share * epsilon_v, delta_v)``), which tilts each owner's sale of a label
#: toward the consumer's rows inside the label (``w(x) ~ exp(h1(x).g~ / T)``, ``T = temperature_for(sigma)``); the
#: cell histogram gets the rest, ``(1 - share) * epsilon_v``. 0: no tilt. Measured on the issue-19 test beds
#: (docs/design.md §2.7, "The tilted sale"): a share of 0.3 takes the MNIST "subgroup" bed (a shift inside a label)
#: from +146 % to +116 % against the exact greedy at p = 200 (6 repeats), but the histogram's threshold then rises
#: above a cell of 15 validation rows, and on the synthetic K = 100 bed 2 draws of 10 lose a component of the
#: consumer's mixture (12 to 30 times the exact greedy's MMD²): an option, not the default.
SALE_TILT_SHARE = 0.0
#: The consumer's noisy mean may differ from its exact mean by at most this many noise sigmas per coordinate (plus the
#: grid step): the discrete Gaussian is subgaussian (Canonne, Kamath & Steinke 2020), so an honest release is further
#: with probability at most 2 exp(-72) = 1.1e-31 per coordinate. A release further away (a faulty consumer's
#: g~ of 1e300, say) is refused before it reaches the owners.
RELEASE_SIGMAS = 12.0
#: Self-consistent steps of each owner's tilt toward g~ (stopped earlier by the discrepancy principle).
TILT_ROUNDS = 0


#: The purchases in which every owner makes a DP release (and spends the owners' budget); the others' owners'
#: epsilon is 0.
OWNER_RELEASE_PURCHASES = ("quotas", "labels")


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
    means: np.ndarray, noise_var: np.ndarray, n_rows: np.ndarray, *, level: float = GROUP_LEVEL
) -> list[list[int]]:
    """Owners grouped where their released mean hashes cannot be told apart (post-processing; docs/design.md §2.7).

    ``means`` (K, d) are the owners' released hash sums over their public row counts ``n_rows``, each with noise
    of variance ``noise_var[k]`` per coordinate. Two owners cannot be told apart when the squared distance of
    their means, ``D = ||m_a - m_b||^2``, exceeds its expectation for two equal distributions, ``E0 = v_a + v_b``
    (``v_k = d noise_var[k] + (1 - ||m_k||^2) / n_k``: the release's noise and the rows' sampling), by at most
    ``z = Phi^-1(1 - level)`` standard deviations ``sqrt(2/d) E0`` (a chi-square approximation). The groups are
    the connected components of that relation (single linkage; each pair is tested once on the owners' own
    releases: re-testing merged groups would test means fitted to the noise): owners that hold one distribution
    end in one group, owners whose data differ stay apart. Returns the groups (lists of owner indices, each
    sorted), ordered by their first owner.
    """
    m = _finite(means, "means", (None, None))
    K, d = m.shape
    n = _finite(n_rows, "n_rows", (K,))
    noise = _finite(noise_var, "noise_var", (K,))
    if not 0.0 < level < 1.0:
        raise InvalidParameterError(f"`level` must be in (0, 1), got {level!r}", "level")
    if K == 0:
        return []
    if d == 0 or np.any(n <= 0) or np.any(noise < 0):
        raise InvalidParameterError(
            "owner_groups needs d >= 1, every owner's row count > 0 and noise variances >= 0",
            "n_rows" if np.any(n <= 0) else "noise_var" if np.any(noise < 0) else "means",
        )
    z = float(NormalDist().inv_cdf(1.0 - level))
    sq = (m * m).sum(1)
    v = d * noise + np.maximum(1.0 - sq, 0.0) / n
    parent = list(range(K))

    def root(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    step = max(1, (1 << 22) // K)  # (step, K) distances at a time
    for start in range(0, K, step):
        rows = np.arange(start, min(K, start + step))
        D = np.maximum(sq[rows, None] + sq[None, :] - 2.0 * (m[rows] @ m.T), 0.0)
        e0 = v[rows, None] + v[None, :]
        alike = ((D - e0) <= z * math.sqrt(2.0 / d) * e0) & (np.arange(K)[None, :] > rows[:, None])
        for a, b in zip(*np.nonzero(alike)):
            ra, rb = root(int(rows[a])), root(int(b))
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for k in range(K):
        groups.setdefault(root(k), []).append(k)
    return sorted(groups.values(), key=lambda g: g[0])


@dataclass(frozen=True)
class LabelCells:
    """The public cells of the label purchase: (group of owners, label) pairs with their centres."""

    labels: np.ndarray  # (J,) int64: each cell's position in the label set
    owners: tuple[tuple[int, ...], ...]  # each cell's owners (indices into the owners that released)
    centres: np.ndarray  # (J, dim) float64: the pooled released mean hash of the cell's owners
    bias: np.ndarray  # (J,) float64: the expected squared norm of each centre's noise


def label_cells(
    counts: np.ndarray, sums: np.ndarray, n_rows: np.ndarray, sigma: float, *, level: float = GROUP_LEVEL
) -> LabelCells:
    """The label purchase's cells from the owners' releases only (post-processing; docs/design.md §2.7).

    ``counts`` (K, L) are the owners' noisy row counts per label, ``sums`` (K, d) their noisy hash sums over all
    their rows (noise ``sigma`` per coordinate), ``n_rows`` their public row counts. Owners are grouped by
    :func:`owner_groups` on their mean hashes; owner k holds label j when its noisy count reaches
    ``HOLDER_SIGMAS * sigma`` (the noise alone reaches 3 sigma with probability 0.13 %). Each group's holders of
    label j form one cell, centred at their pooled mean hash, whose rows are sold by every owner of the group with a
    positive count of j (a holder too small to reach the threshold still sells). A label no owner reaches the
    threshold for (owners too small for their counts to stand out of the noise) is one cell over every owner whose
    count of it is positive.
    """
    counts = _finite(counts, "counts", (None, None))
    K, L = counts.shape
    sums = _finite(sums, "sums", (K, None))
    n = _finite(n_rows, "n_rows", (K,))
    d = sums.shape[1]
    sigma = _number(sigma, "sigma")
    groups = owner_groups(sums / n[:, None], np.full(K, sigma**2) / n**2, n, level=level) if K else []
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
    """The count a cell of the consumer's noisy histogram must reach to be bought (docs/design.md §2.7).

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
) -> np.ndarray:
    """Rows of each label to buy from each owner, from released values only (post-processing; docs/design.md §2.7).

    ``consumer_counts`` (J,) is the consumer's noisy histogram over ``cells`` (discrete Laplace noise of scale
    ``consumer_scale``,
    ``|D_v| = validation_rows`` public); ``owner_counts`` (K, L) the owners' noisy counts per label. A cell is
    *wanted* when its count reaches :func:`cell_threshold` ``t`` (if none does, the positive counts are used); owner
    k is taken to hold ``s_kl = floor(max(0, n~_kl))`` rows of label l (an owner with fewer sells all it has). The
    budget ``B = ceil(factor * size)`` is split in proportion to the wanted cells' counts, each cell's share over
    its owners in proportion to ``s_kl``, by largest remainders, capped at ``s_kl``. What the caps leave goes to the
    open wanted cells in proportion to their counts *above the threshold*, ``c~ - t``: a cell the noise alone put
    there barely passes ``t`` and gets little of it, a cell of many validation rows most (with ``t = 0`` this is
    the first split's own rule). What the wanted cells cannot hold goes to the wanted labels' rows at their other
    owners (in proportion to the labels' counts, each label's share by the owners' spare ``s_kl``); if all that
    holds fewer than ``size`` rows, the rest of ``B`` comes from the other labels in proportion to ``s_kl`` (the
    summary needs rows of other labels). Returns (K, L) int64.
    """
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
            got = np.minimum(_largest_remainders(flat, B), caps)  # the first split, capped
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


def sketch_temperature_for(sigma: float) -> float:
    """The owners' ranking temperature for a release with per-coordinate noise ``sigma`` (public)."""
    if not math.isfinite(sigma) or sigma < 0:
        raise InvalidParameterError(f"`sigma` must be finite and >= 0, got {sigma!r}", "sigma")
    return max(SKETCH_TEMPERATURE_FLOOR, SKETCH_TEMPERATURE_PER_SIGMA * sigma)


def histogram_edges(g_tilde: np.ndarray, direction: np.ndarray, sigma: float) -> np.ndarray:
    """Public bin edges of the score histogram: around the score of a typical validation row.

    ``s_ref = g~.direction - d sigma^2`` estimates ``E[h1(v).direction]`` for a validation row ``v`` (the
    release's noise adds ``d sigma^2`` to ``g~.g~`` in expectation); bins of width
    ``max(HISTOGRAM_BIN_FLOOR, HISTOGRAM_BIN_PER_SIGMA sigma)``, 8 above ``s_ref``. Public numbers only.
    """
    d = len(g_tilde)
    s_ref = float(g_tilde @ direction) - d * sigma**2
    width = max(HISTOGRAM_BIN_FLOOR, HISTOGRAM_BIN_PER_SIGMA * sigma)
    return s_ref + width * (np.arange(HISTOGRAM_BINS + 1, dtype=np.float64) - HISTOGRAM_BINS + 8)


def quotas_from_histograms(
    histograms: np.ndarray,
    n_rows: np.ndarray,
    size: int,
    *,
    factor: float = PURCHASE_FACTOR,
    pool: float = QUOTA_POOL_FACTOR,
    uniform: float | None = None,
) -> np.ndarray:
    """Rows to buy from each owner, from the released histograms only (post-processing).

    Budget ``B = min(ceil(factor * size), sum n_rows)``. Each owner's noisy counts are accumulated from the top
    bin down (not clipped bin by bin: clipping each bin at 0 would add about ``0.4 sigma`` phantom rows per bin
    to every owner, a bias toward uniform shares that grows with the number of bins and owners); the edge is the
    first where the pooled accumulation reaches ``pool * size``; each owner's accumulated count there, clipped at
    0, is its share. Mixed with a uniform share (default ``QUOTA_UNIFORM_SHARE * min(1, 5 / K)``: the hedge
    against noise, thinner as K grows), times ``B``, rounded by largest remainders and capped at the owner's
    rows (what a cap leaves goes to the others by the same rule).
    """
    h = np.asarray(histograms, dtype=np.float64)
    n = np.asarray(n_rows, dtype=np.int64)
    K = len(n)
    if K == 0:
        return np.zeros(0, dtype=np.int64)
    if uniform is None:
        uniform = QUOTA_UNIFORM_SHARE * min(1.0, QUOTA_UNIFORM_OWNERS / K)
    B = int(min(math.ceil(factor * size), int(n.sum())))
    cum = np.cumsum(h[:, ::-1], axis=1)
    reached = np.flatnonzero(cum.sum(0) >= pool * size)
    j = int(reached[0]) if len(reached) else h.shape[1] - 1
    share = np.clip(cum[:, j], 0.0, None)
    q = share / share.sum() if share.sum() > 0 else np.full(K, 1.0 / K)
    q = (1.0 - uniform) * q + uniform / K
    return _split(q, B, n)


def temperature_for(sigma: float) -> float:
    """The default temperature of the owners' tilt for a release with per-coordinate noise ``sigma``.

    ``T = max(TEMPERATURE_FLOOR, TEMPERATURE_PER_SIGMA * sigma)``. The relevance score of a row is
    ``s(x) = h1(x).g~ = h1(x).g_v + h1(x).z`` with ``z ~ N(0, sigma^2 I)``: its noise has standard deviation
    ``sigma ||h1(x)||`` (``||h1(x)|| ~ 1``). A tilt ``exp(s/T)`` with ``T`` several times that noise keeps the
    weights' noise factor ``exp(h1(x).z/T)`` near 1, while still concentrating on relevant rows.
    """
    if not math.isfinite(sigma) or sigma < 0:
        raise InvalidParameterError(f"`sigma` must be finite and >= 0, got {sigma!r}", "sigma")
    return max(TEMPERATURE_FLOOR, TEMPERATURE_PER_SIGMA * sigma)


@dataclass(frozen=True)
class NominationsConfig:
    """Every public number of a nominations run."""

    n_features: int
    dim: int
    gamma: float
    hash_seed: int | str
    reveal: str  # "points" or "hashes"
    purchase: str  # "quotas", "nominees", "labels" or "winners"
    nominees: int  # M per owner
    candidates: int  # C per owner (rows sampled for the herding, >= nominees)
    temperature: float | None  # None: temperature_for(sigma of the release)
    release: str  # "gaussian", "mwem" or "exact"
    choice: str = "hashes"  # the aggregator's greedy: on the pooled "hashes", or on the exact "kernel" (raw rows)
    greedy_sample_factor: float | None = None  # owners' greedy: None exact, r > 0 stochastic (ceil((C/M) r) per round)
    epsilon: float = 0.0  # the release's (epsilon_v, delta_v); 0 for "exact"
    delta: float = 0.0
    mwem_steps: int = 0  # "mwem": steps and per-step epsilon, on the grid eta
    mwem_step_epsilon: float = 0.0
    eta: float = 0.0
    owner_epsilon: float = OWNER_EPSILON  # purchase="quotas": each owner's budget for its two sketch releases
    owner_delta: float = OWNER_DELTA
    purchase_factor: float = PURCHASE_FACTOR  # purchase="quotas": rows bought / size
    tilt_rounds: int = TILT_ROUNDS  # purchase="quotas": self-consistent steps of each owner's ranking
    label_set: tuple[Any, ...] = ()  # purchase="labels": the public label set
    sale_tilt_share: float = 0.0  # purchase="labels": the share of epsilon_v spent on g~, which tilts the sales


@dataclass
class _Nominee:
    owner: str
    token: int
    hash: np.ndarray


class NominationsAggregator:
    """The trusted aggregator of the nominations protocol.

    It reaches the consumer and the owners only through ``transport``; an owner that fails, sends a
    malformed or non-finite reply, too many or too few nominees, or rows that do not hash to its nominated
    hashes, is excluded with an event and the run completes with the others.
    """

    def __init__(
        self,
        transport: Transport,
        owners: list[str],
        consumer: str,
        config: NominationsConfig,
        rng: Csprng,
        record: Callable[..., None] | None = None,
    ) -> None:
        self.transport = transport
        self.owners = list(owners)
        self.consumer = consumer
        self.config = config
        self.rng = rng
        self._record = record or (lambda *a, **k: None)
        self.hasher = RFFHasher(config.n_features, dim=config.dim, gamma=config.gamma, seed=config.hash_seed)
        self.active = {o: True for o in self.owners}
        self.accessed = {o: 0 for o in self.owners}
        self.hashes_seen = {o: 0 for o in self.owners}
        # The owners commit to their nominees by a digest of each hash when the aggregator never needs the hashes
        # (it buys every nominee's row and chooses on the exact kernel): 16 bytes per nominee instead of 4 d, and
        # no hash of a row it does not buy. Verification stays exact (docs/design.md §3).
        self.commit = (
            "digests"
            if config.purchase == "nominees" and config.choice == "kernel" and config.reveal == "points"
            else "hashes"
        )
        self.n_rows: dict[str, int] = {}
        self.events: list[dict[str, Any]] = []
        self.timings: dict[str, float] = {}
        self.exchanges = 0
        self.temperature = float("nan")
        self.quotas: dict[str, int] = {}
        self.label_quotas: dict[str, np.ndarray] = {}
        self.cells: LabelCells | None = None  # purchase="labels": its cells (owner indices into cell_owner_names)
        self.cell_owner_names: list[str] = []
        self.released_counts: dict[str, np.ndarray] = {}  # purchase="labels": each owner's released counts per label
        self.sketch_sigma: dict[str, float] = {}  # each sketch stage's calibrated sigma (public)
        self._size = 0
        self.validation_rows = 0
        self.sigma = float("nan")
        self.count_scale = float("nan")  # purchase="labels": the consumer's discrete Laplace scale (public)
        self.validation: np.ndarray | None = None

    def _exclude(self, owner: str, reason: str, phase: str) -> None:
        if not self.active.get(owner, False):
            return
        self.active[owner] = False
        self.events.append({"phase": phase, "owner": owner, "event": "excluded", "reason": reason})

    # -- exchange 1 ------------------------------------------------------------------------------------

    def target(self, epsilon: float | None = None, send_rows: bool | None = None) -> TargetRelease:
        """The consumer's hashed mean ``g~`` at ``(epsilon, delta_v)`` (default: the whole ``epsilon_v``), with
        ``D_v``'s rows for the exact-kernel choice unless ``send_rows`` is False (the label purchase has them from
        its histogram)."""
        c = self.config
        eps = c.epsilon if epsilon is None else float(epsilon)
        rows_wanted = c.choice == "kernel" if send_rows is None else bool(send_rows)
        req = TargetRequest(
            n_features=c.n_features,
            dim=c.dim,
            gamma=c.gamma,
            hash_seed=c.hash_seed,
            release=c.release,
            epsilon=c.mwem_step_epsilon if c.release == "mwem" else eps,
            delta=c.delta,
            steps=c.mwem_steps,
            eta=c.eta,
            send_rows=rows_wanted,
        )
        self.exchanges += 1
        reply = self.transport.request(self.consumer, req)
        if not isinstance(reply, TargetRelease):
            raise ProtocolError(f"consumer sent {type(reply).__name__}, not a target release")
        for name in ("noisy_mean", "exact_mean"):
            arr = np.asarray(getattr(reply, name))
            if arr.shape != (c.dim,) or not np.isfinite(arr).all():
                raise ProtocolError(
                    f"consumer sent a malformed {name} (shape {arr.shape}, finite {np.isfinite(arr).all()})"
                )
        if isinstance(reply.n_rows, bool) or not isinstance(reply.n_rows, (int, np.integer)) or reply.n_rows < 1:
            raise ProtocolError(f"consumer sent an impossible validation size {reply.n_rows!r}")
        if self.validation_rows and int(reply.n_rows) != self.validation_rows:
            raise ProtocolError(
                f"consumer released a mean over {reply.n_rows} rows, its histogram over {self.validation_rows}"
            )
        self.validation_rows = int(reply.n_rows)
        if rows_wanted:
            rows = None if reply.rows is None else np.asarray(reply.rows)
            if rows is None or rows.shape != (reply.n_rows, c.n_features) or not np.isfinite(rows).all():
                raise ProtocolError("consumer did not send its validation rows for the exact-kernel choice")
            self.validation = rows
        self.sigma = float(reply.sigma)
        exact = np.asarray(reply.exact_mean, dtype=np.float64)
        if np.abs(exact).max() > h1_peak(c.dim):
            raise ProtocolError("consumer sent an exact mean outside the range of h1 (|g_i| <= sqrt(2/d))")
        if c.release == "gaussian":
            cal = accounting.calibrate_gaussian(
                eps, c.delta, sensitivity=mean_release_sensitivity(reply.n_rows), dim=c.dim
            )
            if not math.isclose(float(reply.sigma), float(cal.sigma), rel_tol=1e-9):
                raise ProtocolError(
                    f"consumer released with sigma {reply.sigma!r}, the calibration gives {cal.sigma!r}"
                )
            self._check_release_noise(
                np.asarray(reply.noisy_mean, dtype=np.float64),
                exact,
                RELEASE_SIGMAS * float(cal.sigma) + float(cal.granularity),
            )
            self._record("validation", cal.event(), "g~ = mean h1(D_v) + discrete Gaussian")
        elif c.release == "exact":
            self._check_release_noise(np.asarray(reply.noisy_mean, dtype=np.float64), exact, 0.0)
        elif c.release == "mwem":
            for event in accounting.mwem_step_events(c.mwem_step_epsilon, c.mwem_steps):
                self._record("validation", event, "g~ = h2(h1(D_v))")
        return reply

    @staticmethod
    def _check_release_noise(noisy: np.ndarray, exact: np.ndarray, reach: float) -> None:
        """Refuse a release farther from the exact mean than its noise reaches (``RELEASE_SIGMAS``)."""
        far = float(np.abs(noisy - exact).max())
        if not far <= reach:
            raise ProtocolError(
                f"consumer released a noisy mean {far:.3g} away from its exact mean in a coordinate, "
                f"more than its noise reaches ({reach:.3g}: {RELEASE_SIGMAS:g} sigmas and the grid step)"
            )

    # -- exchange 2 ------------------------------------------------------------------------------------

    def nominations(self, g_tilde: np.ndarray, temperature: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        c = self.config
        seeds = self.rng.derive("nomination-samples")
        msgs = {
            o: NominationRequest(
                n_features=c.n_features,
                dim=c.dim,
                gamma=c.gamma,
                hash_seed=c.hash_seed,
                target=np.asarray(g_tilde, dtype=np.float64),
                nominees=c.nominees,
                temperature=float(temperature),
                candidates=int(c.candidates),
                reveal=c.reveal,
                sample_seed=int(seeds.integers(2**63)),
                greedy_sample_factor=c.greedy_sample_factor,
                commit=self.commit,
            )
            for o in self.owners
        }
        self.exchanges += 1
        replies = self.transport.request_many(msgs)
        out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        bound = h1_peak(c.dim)
        for o in self.owners:
            # pop: each reply's arrays are freed once copied into `out` (K·M·d float32 held once, not twice)
            r = replies.pop(o)
            if isinstance(r, PartyUnavailable):
                self._exclude(o, r.reason, "nominations")
                continue
            problem = self._check_nomination(r, bound)
            if problem is not None:
                self._exclude(o, problem, "nominations")
                continue
            assert isinstance(r, NominationReply)
            tokens = np.asarray(r.tokens).astype(np.int64)
            if self.commit == "digests":
                committed = np.ascontiguousarray(r.digests, dtype=np.uint8)
            else:
                committed = np.ascontiguousarray(r.hashes, dtype=np.float32)
                self.hashes_seen[o] = int(len(tokens))
            order = np.argsort(tokens, kind="stable")  # pool in (owner, row) order: ties go to the lowest row
            self.n_rows[o] = int(r.n_rows)
            out[o] = (tokens[order], committed[order])
        return out

    def _check_nomination(self, r: object, bound: float) -> str | None:
        c = self.config
        if not isinstance(r, NominationReply):
            return f"replied with {type(r).__name__}, not nominations"
        n = r.n_rows
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            return f"reported an impossible row count {n!r}"
        tokens = np.asarray(r.tokens)
        hashes = np.asarray(r.hashes)
        want = min(c.nominees, int(n))
        if tokens.ndim != 1 or tokens.dtype.kind not in "iu":
            return "sent tokens that are not a 1-D integer array"
        if len(tokens) != want:
            return f"sent {len(tokens)} nominees, the run asks for {want} (min(M, rows))"
        if len(np.unique(tokens)) != len(tokens) or (len(tokens) and (tokens.min() < 0 or tokens.max() >= n)):
            return "sent repeated or out-of-range tokens"
        if self.commit == "digests":
            digests = np.asarray(r.digests) if r.digests is not None else None
            if digests is None or digests.shape != (want, DIGEST_BYTES) or digests.dtype != np.uint8:
                got = "none" if digests is None else f"shape {digests.shape} and dtype {digests.dtype}"
                return f"sent digests of {got}, expected shape ({want}, {DIGEST_BYTES}) and dtype uint8"
            return None
        if r.hashes is None:
            return "sent no hashes"
        if hashes.shape != (want, c.dim) or hashes.dtype.kind != "f":
            return f"sent hashes of shape {hashes.shape}, expected ({want}, {c.dim})"
        if not np.isfinite(hashes).all() or (hashes.size and np.abs(hashes).max() > bound):
            return "sent non-finite hashes or hashes outside the range of h1"
        return None

    # -- exchange 3 ------------------------------------------------------------------------------------

    def purchase(
        self, wanted: dict[str, np.ndarray], nominated: dict[str, tuple[np.ndarray, np.ndarray]]
    ) -> dict[str, tuple[np.ndarray | None, np.ndarray | None]]:
        """Buy ``wanted[o]`` (nominated tokens) from each owner; verify every row against its nominated hash.

        Verification is exact: h1 is deterministic and bit-identical on every machine, so the aggregator
        recomputes h1 of each received row and compares it with the hash nominated for that token, bit for bit.
        With ``reveal="hashes"`` only labels are bought and nothing can be verified (the aggregator never sees
        the rows).
        """
        c = self.config
        requests = {o: PurchaseRequest(tokens=np.asarray(t, dtype=np.int64)) for o, t in wanted.items() if len(t)}
        if not requests:
            return {}
        self.exchanges += 1
        replies = self.transport.request_many(requests)
        out: dict[str, tuple[np.ndarray | None, np.ndarray | None]] = {}
        for o, req in requests.items():
            r = replies[o]
            if isinstance(r, PartyUnavailable):
                self._exclude(o, r.reason, "purchase")
                continue
            problem = self._check_purchase(r, req.tokens)
            if problem is None and c.reveal == "points":
                assert isinstance(r, PurchaseReply) and r.points is not None
                self.accessed[o] += len(req.tokens)
                tokens, committed = nominated[o]
                expected = committed[np.searchsorted(tokens, req.tokens)]
                got = self.hasher.transform(np.asarray(r.points))
                if self.commit == "digests":
                    got = hash_digests(got)
                if not np.array_equal(got, expected):
                    bad = int(np.flatnonzero(~(got == expected).all(1))[0])
                    problem = (
                        f"row for token {int(req.tokens[bad])} does not hash to its nominated "
                        f"{'digest' if self.commit == 'digests' else 'hash'}"
                    )
            if problem is not None:
                self._exclude(o, problem, "purchase")
                continue
            assert isinstance(r, PurchaseReply)
            out[o] = (
                None if r.points is None else np.asarray(r.points),
                None if r.labels is None else np.asarray(r.labels),
            )
        return out

    def _check_purchase(self, r: object, tokens: np.ndarray) -> str | None:
        c = self.config
        if not isinstance(r, PurchaseReply):
            return f"replied with {type(r).__name__}, not a purchase reply"
        if not np.array_equal(np.asarray(r.tokens), tokens):
            return "sold other tokens than requested"
        if c.reveal == "points":
            pts = None if r.points is None else np.asarray(r.points)
            if (
                pts is None
                or pts.shape != (len(tokens), c.n_features)
                or pts.dtype.kind not in "fiu"
                or not np.isfinite(pts).all()
            ):
                return "sold malformed rows"
        if r.labels is not None and np.shape(r.labels) != (len(tokens),):
            return "sold labels of the wrong shape"
        return None

    # -- quota purchase: two sketch releases and one purchase (docs/design.md §2.5) ---------------------

    def sketch(self, stage: str, direction: np.ndarray, edges: np.ndarray) -> dict[str, np.ndarray]:
        """Every active owner's DP release of ``stage``; checks each owner's calibration and records it once."""
        c = self.config
        dim = {"sum": c.dim, "labels": len(c.label_set) + CELL_DIM}.get(stage, len(edges) + 1)
        releases = 1 if stage == "labels" else _SKETCH_RELEASES
        cal, event = sketch_calibration(stage, dim, c.owner_epsilon, c.owner_delta, releases)
        self.sketch_sigma[stage] = float(cal.sigma)
        # the label purchase's release hashes in the cells' h1 (CELL_DIM, its own seed)
        hash_dim, hash_seed = (CELL_DIM, self.cell_hash_seed) if stage == "labels" else (c.dim, c.hash_seed)
        req = SketchRequest(
            n_features=c.n_features,
            dim=hash_dim,
            gamma=c.gamma,
            hash_seed=hash_seed,
            stage=stage,
            epsilon=c.owner_epsilon,
            delta=c.owner_delta,
            releases=releases,
            direction=np.asarray(direction, dtype=np.float64),
            edges=np.asarray(edges, dtype=np.float64),
            label_set=np.asarray(c.label_set) if stage == "labels" else None,
        )
        owners = [o for o in self.owners if self.active[o]]
        self.exchanges += 1
        replies = self.transport.request_many({o: req for o in owners})
        # Parallel composition: owner k's release depends on D_k only, so one record covers every owner.
        self._record("owners", event, f"sketch '{stage}' of each owner (replace-one in that owner's rows)")
        out: dict[str, np.ndarray] = {}
        for o in owners:
            r = replies[o]
            if isinstance(r, PartyUnavailable):
                self._exclude(o, r.reason, f"sketch-{stage}")
                continue
            problem = None
            if not isinstance(r, SketchReply):
                problem = f"replied with {type(r).__name__}, not a sketch"
            elif isinstance(r.n_rows, bool) or not isinstance(r.n_rows, (int, np.integer)) or r.n_rows < 0:
                problem = f"reported an impossible row count {r.n_rows!r}"
            elif o in self.n_rows and self.n_rows[o] != int(r.n_rows):
                problem = "reported another row count than in its first sketch"
            elif np.shape(r.values) != (dim,) or not np.isfinite(np.asarray(r.values, dtype=np.float64)).all():
                problem = f"sent a malformed sketch (shape {np.shape(r.values)}, expected ({dim},))"
            elif not math.isclose(float(r.sigma), float(cal.sigma), rel_tol=1e-9):
                problem = f"released with sigma {r.sigma!r}, the calibration gives {cal.sigma!r}"
            if problem is not None:
                self._exclude(o, problem, f"sketch-{stage}")
                continue
            assert isinstance(r, SketchReply)
            self.n_rows[o] = int(r.n_rows)
            out[o] = np.asarray(r.values, dtype=np.float64)
        return out

    def quota_purchase(
        self, g_tilde: np.ndarray, direction: np.ndarray, temperature: float, quotas: dict[str, int]
    ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], dict[str, np.ndarray | None], dict[str, np.ndarray | None]]:
        """Buy each owner's ``quotas[o]`` best rows; check them (exactly where the rows came: their h1)."""
        c = self.config
        seeds = self.rng.derive("quota-samples")
        stop_sq = c.dim * self.sigma**2 if math.isfinite(self.sigma) else 0.0
        msgs = {
            o: QuotaRequest(
                n_features=c.n_features,
                dim=c.dim,
                gamma=c.gamma,
                hash_seed=c.hash_seed,
                target=np.asarray(g_tilde, dtype=np.float64),
                direction=np.asarray(direction, np.float64),
                temperature=float(temperature),
                tilt_rounds=int(c.tilt_rounds),
                stop_sq=float(stop_sq),
                count=int(q),
                candidates=int(DEFAULT_CANDIDATE_FACTOR * q),
                reveal=c.reveal,
                sample_seed=int(seeds.integers(2**63)),
                greedy_sample_factor=c.greedy_sample_factor,
            )
            for o, q in quotas.items()
            if q > 0 and self.active[o]
        }
        return self._buy_quotas(msgs)

    def _buy_quotas(
        self, msgs: dict[str, QuotaRequest]
    ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], dict[str, np.ndarray | None], dict[str, np.ndarray | None]]:
        """Send the quota requests; check every reply (exactly where rows came: their h1); exclude the faulty."""
        c = self.config
        if not msgs:
            return {}, {}, {}
        self.exchanges += 1
        replies = self.transport.request_many(msgs)
        bound = h1_peak(c.dim)
        nominated: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        rows: dict[str, np.ndarray | None] = {}
        labels: dict[str, np.ndarray | None] = {}
        for o, req in msgs.items():
            r = replies[o]
            if isinstance(r, PartyUnavailable):
                self._exclude(o, r.reason, "quota")
                continue
            problem = self._check_quota(r, req, bound, o)
            if problem is not None:
                self._exclude(o, problem, "quota")
                continue
            assert isinstance(r, QuotaReply)
            tokens = np.asarray(r.tokens).astype(np.int64)
            hashes = np.ascontiguousarray(r.hashes, dtype=np.float32)
            self.hashes_seen[o] = 0 if r.points is not None else len(tokens)
            if r.points is not None:
                self.accessed[o] += len(tokens)
            nominated[o] = (tokens, hashes)
            rows[o] = None if r.points is None else np.asarray(r.points)
            labels[o] = None if r.labels is None else np.asarray(r.labels)
        return nominated, rows, labels

    def _check_quota(self, r: object, req: QuotaRequest, bound: float, owner: str) -> str | None:
        c = self.config
        if not isinstance(r, QuotaReply):
            return f"replied with {type(r).__name__}, not a quota reply"
        n = r.n_rows
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            return f"reported an impossible row count {n!r}"
        tokens, hashes = np.asarray(r.tokens), np.asarray(r.hashes)
        want = min(req.count, int(n))
        if req.label_counts is not None:  # min(count, rows) per label: the aggregator knows only the upper bound
            problem = self._check_label_quota(
                r, req, self.released_counts.get(owner), self.sketch_sigma.get("labels", 0.0)
            )
            if problem is not None:
                return problem
            want = len(tokens)
        if tokens.ndim != 1 or tokens.dtype.kind not in "iu" or len(tokens) != want:
            return f"sold {tokens.shape} tokens, the request asks for {want} (min(quota, rows))"
        if np.any(np.diff(tokens) <= 0) or (len(tokens) and (tokens.min() < 0 or tokens.max() >= n)):
            return "sold repeated, unsorted or out-of-range tokens"
        if (
            hashes.shape != (want, c.dim)
            or hashes.dtype.kind != "f"
            or not np.isfinite(hashes).all()
            or (hashes.size and np.abs(hashes).max() > bound)
        ):
            return "sent malformed hashes or hashes outside the range of h1"
        if c.reveal == "points":
            pts = None if r.points is None else np.asarray(r.points)
            if (
                pts is None
                or pts.shape != (want, c.n_features)
                or pts.dtype.kind not in "fiu"
                or not np.isfinite(pts).all()
            ):
                return "sold malformed rows"
            if not np.array_equal(self.hasher.transform(pts), np.ascontiguousarray(hashes, dtype=np.float32)):
                return "sold rows that do not hash to the hashes it sent"
        if r.labels is not None and np.shape(r.labels) != (want,):
            return "sold labels of the wrong shape"
        return None

    @staticmethod
    def _check_label_quota(r: QuotaReply, req: QuotaRequest, released: np.ndarray | None, sigma: float) -> str | None:
        """A label sale against its request: labels in the set, substitutes only for a shortfall, and a shortfall the
        owner's own released counts make plausible (``released`` its noisy counts, noise ``sigma``)."""
        tokens = np.asarray(r.tokens)
        if tokens.ndim != 1:
            return "sold tokens that are not a 1-D array"
        if r.labels is None or np.shape(r.labels) != tokens.shape:
            return "sold rows without their labels (purchase='labels' buys rows of given labels)"
        labs = np.asarray(r.labels)
        if labs.dtype.kind not in "biufUS":
            return f"sold labels of dtype {labs.dtype}, not numbers or strings"
        assert req.label_set is not None and req.label_counts is not None
        label_set, asked = np.asarray(req.label_set), np.asarray(req.label_counts, dtype=np.int64)
        idx = label_index(labs, label_set)  # the owners' own matching of labels to the set
        if (idx < 0).any():
            return "sold rows of a label outside the label set"
        got = np.bincount(idx, minlength=len(label_set))
        # An owner short of a label sells as many rows of other labels instead (substitute_counts): rows beyond a
        # label's ask must be matched by rows missing from the others'.
        extra, missing = int(np.maximum(got - asked, 0).sum()), int(np.maximum(asked - got, 0).sum())
        if extra > missing:
            return (
                f"sold {extra} rows beyond the labels' asks but is short of only {missing} (substitutes must make "
                "up a shortfall)"
            )
        if released is not None and sigma > 0:
            # Short of label j, the owner sold all it holds of it: its released count must agree, within the noise.
            implausible = np.flatnonzero((got < asked) & (np.asarray(released) - got > SHORTFALL_SIGMAS * sigma))
            if len(implausible):
                j = int(implausible[0])
                return (
                    f"sold {got[j]} rows of label {label_set[j].item()!r} (short of the {asked[j]} asked), but "
                    f"released a count of {released[j]:.1f}, more than {SHORTFALL_SIGMAS:g} noise sigmas above"
                )
        return None

    # -- label purchase: the owners' counts and hash sums, the consumer's cell histogram, one purchase (§2.7) --

    @property
    def cell_hash_seed(self) -> str:
        """The seed of the cells' h1 (public, derived from the run's hash seed)."""
        return f"cells:{self.config.hash_seed}"

    @property
    def histogram_epsilon(self) -> float:
        """The consumer's epsilon for its cell histogram: what the tilt's ``g~`` leaves of ``epsilon_v``."""
        c = self.config
        return c.epsilon * (1.0 - c.sale_tilt_share)

    def label_target(self, cells: LabelCells) -> LabelHistogramRelease:
        """The consumer's histogram release: ``D_v``'s counts per cell + discrete Laplace; ``D_v``'s rows."""
        c = self.config
        J = len(cells.labels)
        req = LabelHistogramRequest(
            label_set=np.asarray(c.label_set),
            epsilon=self.histogram_epsilon,
            send_rows=True,
            n_features=c.n_features,
            dim=CELL_DIM,
            gamma=c.gamma,
            hash_seed=self.cell_hash_seed,
            cell_labels=cells.labels,
            centres=cells.centres,
            bias=cells.bias,
        )
        self.exchanges += 1
        reply = self.transport.request(self.consumer, req)
        if not isinstance(reply, LabelHistogramRelease):
            raise ProtocolError(f"consumer sent {type(reply).__name__}, not a label histogram release")
        counts = np.asarray(reply.counts)
        if counts.shape != (J,) or counts.dtype.kind not in "fiu" or not np.isfinite(counts).all():
            raise ProtocolError(f"consumer sent a malformed cell histogram (shape {counts.shape}, expected ({J},))")
        if isinstance(reply.n_rows, bool) or not isinstance(reply.n_rows, (int, np.integer)) or reply.n_rows < 1:
            raise ProtocolError(f"consumer sent an impossible validation size {reply.n_rows!r}")
        rows = None if reply.rows is None else np.asarray(reply.rows)
        if rows is None or rows.shape != (reply.n_rows, c.n_features) or not np.isfinite(rows).all():
            raise ProtocolError("consumer did not send its validation rows for the exact-kernel choice")
        event = count_release_event(self.histogram_epsilon)
        scale = event.scale
        if (
            isinstance(reply.scale, bool)
            or not isinstance(reply.scale, (int, float, np.floating))
            or not math.isclose(float(reply.scale), scale, rel_tol=1e-12)
        ):
            raise ProtocolError(f"consumer released with scale {reply.scale!r}, the mechanism's is {scale!r}")
        if not (counts == np.round(counts)).all():
            raise ProtocolError("consumer sent a cell histogram that is not integer (counts + discrete Laplace are)")
        self.validation_rows = int(reply.n_rows)
        self.validation = rows
        self.count_scale = scale
        self._record("validation", event, "counts of D_v's rows per cell (owner group, label) + discrete Laplace")
        return reply

    def label_run(
        self,
    ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], dict[str, np.ndarray | None], dict[str, np.ndarray | None]]:
        """Exchanges 1-3 of ``purchase="labels"``: the owners' releases, the consumer's histogram, the purchase."""
        c = self.config
        L = len(c.label_set)
        t0 = time.perf_counter()
        released = self.sketch("labels", np.zeros(0), np.zeros(0))
        self.timings["sketches"] = time.perf_counter() - t0
        owners = [o for o in self.owners if o in released and self.active[o]]
        counts = np.array([released[o][:L] for o in owners]).reshape(len(owners), L)
        nonempty = [k for k, o in enumerate(owners) if self.n_rows[o] > 0]  # a mean hash needs rows
        sub = label_cells(
            counts[nonempty],
            np.array([released[owners[k]][L:] for k in nonempty]).reshape(len(nonempty), CELL_DIM),
            np.array([self.n_rows[owners[k]] for k in nonempty]),
            self.sketch_sigma["labels"],
        )
        cells = LabelCells(
            labels=sub.labels,
            owners=tuple(tuple(nonempty[i] for i in own) for own in sub.owners),
            centres=sub.centres,
            bias=sub.bias,
        )
        if not len(cells.labels):
            raise ProtocolError(
                "no owner's released count of any label of `label_set` is positive: there is nothing "
                "to buy (the consumer released nothing)"
            )
        self.cells, self.cell_owner_names = cells, owners
        self.released_counts = {o: counts[k] for k, o in enumerate(owners)}
        t1 = time.perf_counter()
        release = self.label_target(cells)
        self.timings["target"] = time.perf_counter() - t1
        q = quotas_from_cells(
            np.asarray(release.counts, dtype=np.float64),
            self.count_scale,
            self.validation_rows,
            cells,
            counts,
            self._size,
            factor=c.purchase_factor,
        )
        self.quotas = {o: int(v) for o, v in zip(owners, q.sum(1))}
        self.label_quotas = {o: q[k].astype(np.int64) for k, o in enumerate(owners)}
        # The tilt of the sales (SALE_TILT_SHARE): the consumer's hashed mean at the rest of epsilon_v; each owner's
        # sale of a label then leans toward the consumer's rows inside it (post-processing of a DP release).
        target, temperature = np.zeros(0), 1.0
        if c.sale_tilt_share > 0:
            t1 = time.perf_counter()
            g_release = self.target(epsilon=c.epsilon * c.sale_tilt_share, send_rows=False)
            self.timings["target"] += time.perf_counter() - t1
            target = np.asarray(g_release.noisy_mean, dtype=np.float64)
            temperature = c.temperature if c.temperature is not None else temperature_for(self.sigma)
            self.temperature = float(temperature)
        seeds = self.rng.derive("label-samples")
        label_set = np.asarray(c.label_set)
        # An owner short of a label sells its rows of the labels the consumer's release weighs most (post-processing).
        preference = np.zeros(L)
        np.add.at(preference, cells.labels, np.maximum(np.asarray(release.counts, dtype=np.float64), 0.0))
        herded = herded_sales(q, cells)
        msgs = {
            o: QuotaRequest(
                n_features=c.n_features,
                dim=c.dim,
                gamma=c.gamma,
                hash_seed=c.hash_seed,
                target=target,
                direction=np.zeros(0),
                temperature=float(temperature),
                tilt_rounds=0,
                stop_sq=0.0,
                count=int(q[k].sum()),
                candidates=int(DEFAULT_CANDIDATE_FACTOR * q[k].sum()),
                reveal=c.reveal,
                sample_seed=int(seeds.integers(2**63)),
                greedy_sample_factor=c.greedy_sample_factor,
                label_set=label_set,
                label_counts=q[k].astype(np.int64),
                label_preference=preference,
                label_herded=herded[k],
            )
            for k, o in enumerate(owners)
            if q[k].sum() > 0 and self.active[o]
        }
        t2 = time.perf_counter()
        out = self._buy_quotas(msgs)
        self.timings["purchase"] = time.perf_counter() - t2
        return out

    def quota_run(
        self, release: TargetRelease
    ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], dict[str, np.ndarray | None], dict[str, np.ndarray | None]]:
        """Exchanges 2-4 of ``purchase="quotas"``: the two sketches, the quotas, the purchase."""
        c = self.config
        g_tilde = np.asarray(release.noisy_mean, dtype=np.float64)
        sigma = self.public_sigma()
        t1 = time.perf_counter()
        sums = self.sketch("sum", np.zeros(0), np.zeros(0))
        total = sum(self.n_rows[o] for o in sums)
        mu = sum(sums.values()) / max(total, 1) if sums else np.zeros(c.dim)
        direction = g_tilde - np.asarray(mu, dtype=np.float64)
        edges = histogram_edges(g_tilde, direction, sigma)
        hists = self.sketch("histogram", direction, edges)
        self.timings["sketches"] = time.perf_counter() - t1
        owners = [o for o in self.owners if o in hists and self.active[o]]
        q = quotas_from_histograms(
            np.array([hists[o] for o in owners]).reshape(len(owners), len(edges) + 1),
            np.array([self.n_rows[o] for o in owners], dtype=np.int64),
            self._size,
            factor=c.purchase_factor,
        )
        self.quotas = {o: int(v) for o, v in zip(owners, q)}
        temperature = c.temperature if c.temperature is not None else sketch_temperature_for(sigma)
        self.temperature = float(temperature)
        t2 = time.perf_counter()
        out = self.quota_purchase(g_tilde, direction, temperature, self.quotas)
        self.timings["purchase"] = time.perf_counter() - t2
        return out

    def public_sigma(self) -> float:
        """The release's per-coordinate noise (the Gaussian's at the same budget for "mwem"; 0 for "exact")."""
        c = self.config
        if c.release == "mwem":
            return float(
                accounting.calibrate_gaussian(
                    c.epsilon, c.delta, dim=c.dim, sensitivity=mean_release_sensitivity(self.validation_rows)
                ).sigma
            )
        return 0.0 if c.release == "exact" else float(self.sigma)

    # -- the run ---------------------------------------------------------------------------------------

    def run(self, size: int) -> dict[str, Any]:
        c = self.config
        self._size = int(size)
        if c.purchase == "labels":
            return self._choose(size, None, *self.label_run())
        t0 = time.perf_counter()
        release = self.target()
        self.timings["target"] = time.perf_counter() - t0
        if c.purchase == "quotas":
            return self._choose(size, release.exact_mean, *self.quota_run(release))
        if c.temperature is not None:
            temperature = c.temperature
        else:
            sigma = self.sigma
            if c.release == "mwem":  # the Gaussian's sigma at the same (epsilon_v, delta_v): a public number
                sigma = accounting.calibrate_gaussian(
                    c.epsilon, c.delta, dim=c.dim, sensitivity=mean_release_sensitivity(self.validation_rows)
                ).sigma
            temperature = temperature_for(sigma)
        self.temperature = float(temperature)
        t1 = time.perf_counter()
        nominated = self.nominations(release.noisy_mean, temperature)
        self.timings["nominations"] = time.perf_counter() - t1
        rows: dict[str, np.ndarray | None] = {}
        labels: dict[str, np.ndarray | None] = {}
        t2 = time.perf_counter()
        if c.purchase == "nominees":
            bought = self.purchase({o: nominated[o][0] for o in nominated}, nominated)
            for o in list(nominated):
                if o not in bought:
                    nominated.pop(o)
                else:
                    rows[o], labels[o] = bought[o]
        self.timings["purchase"] = time.perf_counter() - t2
        return self._choose(size, release.exact_mean, nominated, rows, labels)

    def _choose(
        self,
        size: int,
        exact_mean: np.ndarray | None,
        nominated: dict[str, tuple[np.ndarray, np.ndarray]],
        rows: dict[str, np.ndarray | None],
        labels: dict[str, np.ndarray | None],
    ) -> dict[str, Any]:
        """The aggregator's greedy over the pooled bought rows (or hashes); with "winners", buy the winners."""
        c = self.config
        bought_positions: dict[str, set[int]] = {}
        t3 = time.perf_counter()
        while True:
            owners = [o for o in self.owners if o in nominated]
            if not owners:
                winners: list[tuple[str, int, int]] = []
                values = np.zeros(0)
                break
            pool_owner = np.concatenate([np.full(len(nominated[o][0]), k) for k, o in enumerate(owners)])
            pool_pos = np.concatenate([np.arange(len(nominated[o][0])) for o in owners])
            if c.choice == "kernel":
                assert self.validation is not None
                kpicks, kvalues = exact_greedy(
                    [np.asarray(rows[o]) for o in owners],
                    self.validation,
                    np.zeros((0, c.n_features), np.float32),
                    min(size, len(pool_owner)),
                    c.gamma,
                )
                offsets = np.cumsum([0] + [len(nominated[o][0]) for o in owners])
                kp = np.asarray(kpicks, dtype=np.int64).reshape(-1, 2)
                picks = offsets[kp[:, 0]] + kp[:, 1]
                values = np.asarray(kvalues)
            else:
                # The pooled hashes are needed only here (K*M*d float32: 0.4 GB at K*M = 200,000, d = 500).
                pool_h = np.concatenate([nominated[o][1] for o in owners])
                assert exact_mean is not None
                picks, values = greedy_select(pool_h, np.asarray(exact_mean, dtype=np.float64), min(size, len(pool_h)))
            picks = np.asarray(picks, dtype=np.int64)
            winners = list(
                zip([owners[k] for k in pool_owner[picks].tolist()], pool_pos[picks].tolist(), picks.tolist())
            )
            if c.purchase != "winners":
                break
            want: dict[str, list[int]] = {}
            for o, pos, _ in winners:
                if pos not in bought_positions.setdefault(o, set()):
                    want.setdefault(o, []).append(pos)
            if not want:
                break
            wanted = {o: np.sort(nominated[o][0][np.asarray(p)]) for o, p in want.items()}
            bought = self.purchase(wanted, nominated)
            for o in wanted:
                if o not in bought:
                    nominated.pop(o)  # excluded: choose again without its nominees
                    continue
                pts, labs = bought[o]
                positions = np.searchsorted(nominated[o][0], wanted[o])
                n_nom = len(nominated[o][0])
                if pts is not None:
                    if rows.get(o) is None:
                        rows[o] = np.zeros((n_nom, c.n_features), dtype=pts.dtype)
                    rows[o][positions] = pts  # type: ignore[index]
                if labs is not None:
                    if labels.get(o) is None:
                        labels[o] = np.zeros(n_nom, dtype=labs.dtype)
                    labels[o][positions] = labs  # type: ignore[index]
                bought_positions[o].update(int(q) for q in positions)
        self.timings["choice"] = time.perf_counter() - t3
        if len(winners) < size:
            self.events.append(
                {
                    "phase": "choice",
                    "event": "short",
                    "reason": f"the pool holds {sum(len(v[0]) for v in nominated.values())} usable nominees, "
                    f"fewer than size {size}",
                }
            )
        return {
            "winners": winners,
            "values": np.asarray(values, dtype=np.float64),
            "nominated": nominated,
            "rows": rows,
            "labels": labels,
        }


def run_nominations(
    transport: Transport,
    owners: list[str],
    consumer: str,
    config: NominationsConfig,
    rng: Csprng,
    *,
    hasher: RFFHasher,
    size: int,
    method: str = "nominations",
    seeded: bool = False,
    started: float | None = None,
    extra: dict[str, Any] | None = None,
    with_labels: bool | None = None,
) -> SummaryResult:
    """Run the nominations protocol through ``transport`` and assemble the :class:`SummaryResult` and ledger.

    The one place that turns a nominations run into a result, for :func:`dpsumm.summarize` (in-process
    parties) and for ``dpsumm.flower`` (parties on Flower nodes).
    """
    t0 = time.perf_counter() if started is None else started
    private = config.release != "exact"
    ledger = accounting.Ledger() if private else None
    if ledger is not None:
        ledger.set_deltas(
            validation=config.delta, owners=config.owner_delta if config.purchase in OWNER_RELEASE_PURCHASES else None
        )
        if seeded:
            ledger.mark_seeded()

    def record(party: str, event: Any, label: str) -> None:
        if ledger is not None:
            ledger.record(party, event, label=label)  # type: ignore[arg-type]

    agg = NominationsAggregator(transport, owners, consumer, config, rng, record)
    out = agg.run(size)
    if ledger is not None and config.purchase == "winners":
        ledger.record_uncertified(
            "owners",
            label="the purchase='winners' request",
            reason="it tells each owner which of its nominees won, which depends on the other owners' data and on "
            "D_v; no finite owners' epsilon is certified for this run (purchase='nominees' is).",
        )
    winners = out["winners"]
    position = {name: k for k, name in enumerate(owners)}
    nominated = out["nominated"]
    owner_idx = np.array([position[o] for o, _, _ in winners], dtype=np.int64)
    index = np.array([int(nominated[o][0][pos]) for o, pos, _ in winners], dtype=np.int64)
    pts = None
    if config.reveal == "points":
        pts = np.stack([out["rows"][o][pos] for o, pos, _ in winners]) if winners else np.zeros((0, config.n_features))
    if agg.commit == "digests":  # the rows were verified against their digests: their h1 is the nominated one
        assert pts is not None
        hashes = agg.hasher.transform(pts) if winners else np.zeros((0, config.dim), np.float32)
    else:
        hashes = (
            np.stack([nominated[o][1][pos] for o, pos, _ in winners]).astype(np.float32)
            if winners
            else np.zeros((0, config.dim), np.float32)
        )
    if with_labels is None:
        with_labels = any(out["labels"].get(o) is not None for o, _, _ in winners)
    labs = np.array([out["labels"][o][pos] for o, pos, _ in winners]) if with_labels and winners else None
    contribution = np.zeros(len(owners))
    for k, v in zip(owner_idx, out["values"]):
        contribution[k] += v
    extra = dict(extra or {})
    sketched = config.purchase in OWNER_RELEASE_PURCHASES
    extra.update(
        choice=config.choice,
        greedy_sample_factor=config.greedy_sample_factor,
        temperature=agg.temperature,
        sigma=agg.sigma,
        count_scale=agg.count_scale,
        nominees=config.nominees,
        candidates=config.candidates,
        release=config.release,
        purchase=config.purchase,
        quotas=dict(agg.quotas),
        owner_epsilon=config.owner_epsilon if sketched else 0.0,
        owner_delta=config.owner_delta if sketched else None,
        label_quotas={o: v.tolist() for o, v in agg.label_quotas.items()},
        label_cells=None
        if agg.cells is None
        else [
            {"label": config.label_set[int(j)], "owners": [agg.cell_owner_names[k] for k in own]}
            for j, own in zip(agg.cells.labels, agg.cells.owners)
        ],
        timings=dict(agg.timings),
        exchanges=agg.exchanges,
    )
    access = Access(
        int(sum(agg.accessed.values())),
        dict(agg.accessed),
        hashes=int(sum(agg.hashes_seen.values())),
        hashes_per_owner=dict(agg.hashes_seen),
        validation_rows=agg.validation_rows,
        validation_raw_rows=agg.validation_rows if config.choice == "kernel" else 0,
    )
    return SummaryResult(
        points=pts,
        hashes=hashes,
        labels=labs,
        owner=owner_idx,
        index=index,
        owner_names=list(owners),
        accessed=access,
        contribution=contribution,
        privacy=ledger,
        trace=[],
        events=list(agg.events),
        hasher=hasher,
        method=method,
        schedule=None,
        seconds=time.perf_counter() - t0,
        extra=extra,
    )


# ------------------------------------------------------------------------------------------ the method object

#: The validation release's budget when a run gives none: ``(epsilon_v, delta_v) = (1, 1e-6)``.
DEFAULT_VALIDATION_BUDGET = accounting.Budget(validation_epsilon=1.0, validation_delta=1e-6)
#: Without a budget, a validation set of more than ``DEFAULT_DELTA_SHARE / 1e-6`` rows gets the default delta
#: ``DEFAULT_DELTA_SHARE / |D_v|``: a delta must stay well below ``1 / |D_v|`` (above it a release may publish a row).
DEFAULT_DELTA_SHARE = 0.01


def default_validation_budget(validation_rows: int | None) -> accounting.Budget:
    """The validation budget of a run given none: :data:`DEFAULT_VALIDATION_BUDGET`, its delta lowered to
    ``DEFAULT_DELTA_SHARE / |D_v|`` for a validation set so large that ``1e-6`` is not well below ``1 / |D_v|``
    (``|D_v|`` is public; None: not known yet, the default as is)."""
    base = DEFAULT_VALIDATION_BUDGET
    assert base.validation_delta is not None
    if (
        validation_rows is None
        or validation_rows <= 0
        or base.validation_delta * validation_rows <= DEFAULT_DELTA_SHARE
    ):
        return base
    return accounting.Budget(
        validation_epsilon=base.validation_epsilon, validation_delta=DEFAULT_DELTA_SHARE / validation_rows
    )


#: h1's dimension for nominations: no per-coordinate noise is added to an owner's hashes, so ``d`` costs no
#: privacy here; measured on MNIST (docs/experiments/), d = 500 gives several times lower MMD² than the paper's 140.
DEFAULT_DIM = 500
#: Rows each owner nominates per summary row when ``nominees`` is None (``M = 2 * size``): smaller ``M`` loses on
#: skewed splits (docs/experiments/mnist-nominees).
NOMINEES_PER_SIZE = 2

_PURCHASES = ("auto", "quotas", "nominees", "winners", "labels")


def _label_set(value: object) -> tuple[Any, ...]:
    """The public label set as a tuple of distinct int, float or str labels (non-empty)."""
    if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise InvalidParameterError(f"`label_set` must be a sequence of labels, got {value!r}", "label_set")
    out: list[Any] = []
    for lab in value:  # type: ignore[attr-defined]
        if isinstance(lab, np.generic):
            lab = lab.item()
        if (
            isinstance(lab, bool)
            or not isinstance(lab, (int, float, str))
            or (isinstance(lab, float) and not math.isfinite(lab))
        ):
            raise InvalidParameterError(
                f"`label_set` holds {lab!r}: labels must be finite numbers or strings", "label_set"
            )
        out.append(lab)
    if not out:
        raise InvalidParameterError("`label_set` is empty", "label_set")
    if len(set(out)) != len(out):
        raise InvalidParameterError("`label_set` repeats a label", "label_set")
    if len({type(x) is str for x in out}) > 1:
        raise InvalidParameterError("`label_set` mixes strings and numbers", "label_set")
    # The parties count against np.asarray(label_set): it must keep every label distinct (2**53 + 1 and 2.0**53
    # are distinct in Python but one float64) and be a plain numeric or string array (an int beyond int64 makes an
    # object array).
    arr = np.asarray(out)
    if arr.dtype.kind not in "iufU" or len(np.unique(arr)) != len(out):
        raise InvalidParameterError(
            f"`label_set` {tuple(out)[:5]!r} is not a set of distinct int64, float64 or "
            "string labels once converted to an array",
            "label_set",
        )
    return tuple(out)


_CHOICES = ("kernel", "hashes")
_OWNER_GREEDY = ("stochastic", "exact")
_RELEASES = ("gaussian", "mwem", "exact")
_REVEALS = ("points", "hashes")


@dataclass(frozen=True, repr=False)
class Nominations(SummaryMethod):
    """The nominations protocol: the consumer releases its hashed validation mean once, every owner nominates
    rows ranked against it, and the aggregator buys them and chooses (docs/design.md §2-§5).

    Every purchase but ``"winners"`` certifies every party. The default, ``purchase="auto"``, is:

    * with a public ``label_set`` (labelled owners and ``validation_labels``): ``"labels"`` (docs/design.md
      §2.7). ``purchase_factor * size`` raw rows bought (3 x size, whatever K). Each owner makes one DP release
      (owners' ``(epsilon, delta)`` of ``privacy``, default ``(OWNER_EPSILON, OWNER_DELTA) = (1, 1e-6)``,
      replace-one in that owner's rows); the consumer one (the validation budget, ``privacy``, default
      :data:`DEFAULT_VALIDATION_BUDGET`; replace-one in ``D_v``).
    * without: ``"nominees"``. The owners' epsilon is 0 (what an owner receives depends only on its own data, the
      one release and public numbers) and the consumer's is the validation budget, at the price of
      ``K * nominees`` raw rows bought (10 x size at K = 5, 200 x size at K = 100).

    ``purchase="quotas"`` (docs/design.md §2.5) buys ``purchase_factor * size`` raw rows with no labels: each owner
    releases two small DP sketches of its rows (hash sum and score histogram, discrete Gaussian, owners' budget as
    above) and the aggregator reads quotas off them; its summaries are measurably worse
    (docs/experiments/testbeds/), so it is an option.

    Parameters
    ----------
    nominees : int, optional
        Rows each owner nominates (public, the same for every owner). Default ``2 * size``.
    candidates : int, optional
        Each owner herds among ``candidates`` of its rows, sampled with probability ``~ exp(h1(x).g~ / T)``
        (default ``4 * nominees``; a number >= the owner's rows uses them all). Must be >= ``nominees``.
    temperature : float, optional
        The owners' tilt ``w(x) ~ exp(h1(x).g~ / T)``; default :func:`temperature_for` of the release's noise.
        A sharper tilt (e.g. ``0.1`` with the median-heuristic gamma) finds wanted rows that are a small share at
        every owner, when the validation set has hundreds of rows; it costs a few points where owners' rows are
        largely wanted and fails with a few dozen validation rows (measured per shift:
        docs/experiments/nominations-temperature/README.md).
    purchase : {"auto", "nominees", "quotas", "labels", "winners"}, default="auto"
        ``"auto"``: ``"labels"`` when ``label_set`` is given, else ``"nominees"`` (:attr:`resolved_purchase`).
        ``"labels"`` (docs/design.md §2.7; needs ``label_set``, the owners' labels and ``validation_labels``):
        every owner releases its row count per label and its hash sum in a 64-coordinate h1 (one discrete
        Gaussian, L2 sensitivity ``sqrt(10)``, owners as for ``"quotas"``); the aggregator groups the owners whose
        mean hashes cannot be told apart and makes one cell per (group, label); the consumer releases its
        histogram over the cells (discrete Laplace of scale ``2 / epsilon_v``: L1 sensitivity 2, pure
        ``epsilon_v``-DP), and
        the aggregator buys ``purchase_factor * size`` rows split over the wanted cells and their owners, each
        owner selling a herded sample of its rows of each label; certified. Made for shifts in the labels and
        between owners; on a shift within one owner's rows of a label (a subgroup every owner holds some of) it is
        no better than a representative sample of the wanted (owner, label) cells, unless ``sale_tilt_share``
        spends part of ``epsilon_v`` on a ``g~`` that tilts each sale toward the consumer (docs/design.md §2.7,
        "The tilted sale"). ``"quotas"``: the owners' two sketch releases, then each owner's quota of its best rows (``purchase_factor
        * size`` raw rows in all; certified, owners' epsilon as above). ``"nominees"``: buy every nominee's row
        (``K * nominees`` raw rows; certified, owners' epsilon 0). ``"winners"``: buy only the
        ``size`` winners; each owner then learns which of its rows won, which depends on the other owners' data:
        outside the DP guarantee, and the ledger marks the owners NOT certified.
    choice : {"kernel", "hashes"}, optional
        The aggregator's greedy over the pooled nominees: the exact RBF kernel against ``D_v`` (``"kernel"``;
        needs the raw rows: the default with ``purchase="nominees"`` and ``reveal="points"``; the consumer then
        sends ``D_v`` to the trusted aggregator), or their h1 hashes against ``mean h1(D_v)`` (``"hashes"``, the
        default otherwise).
    owner_greedy : {"stochastic", "exact"}, default="stochastic"
        How each owner picks its nominees among its candidates: the stochastic greedy (each round evaluates
        ``ceil((C/M) * STOCHASTIC_GREEDY_FACTOR)`` random candidates, Mirzasoleiman et al. 2015; ``O(C d)`` per
        owner) or the exact greedy (``O(M C d)``).
    validation_release : {"gaussian", "mwem", "exact"}, default="gaussian"
        The mechanism of the one validation release: the discrete Gaussian, the paper's h2 (MWEM) at the same
        ``(epsilon_v, delta_v)``, or ``"exact"``: the exact mean, NOT private for the consumer (the result has no
        ledger; the epsilon_v = infinity point of the experiments).
    reveal : {"points", "hashes"}, default="points"
        ``"hashes"``: the aggregator receives only the h1 hashes of the rows it buys (labels, no raw row).
    dim : int, default=500
        h1's number of random features.
    hash_seed : int or str, default=0
        h1's public seed.
    purchase_factor : float, default=PURCHASE_FACTOR (3.0)
        ``purchase="quotas"``: raw owner rows bought, in units of ``size``.
    label_set : sequence of int, float or str, optional
        The public labels a row may have (fixed before the run, not read off anybody's data; rows with other
        labels are never bought). Giving it selects ``purchase="labels"`` by default.
    tilt_rounds : int, default=TILT_ROUNDS (0)
        ``purchase="quotas"``: self-consistent steps of each owner's ranking toward ``g~``, stopped by the
        discrepancy principle (``||g~ - m_lambda||^2 <= d sigma^2``).
    sale_tilt_share : float, default=SALE_TILT_SHARE (0)
        ``purchase="labels"``: the share of the consumer's ``epsilon_v`` spent on its hashed mean ``g~`` (the
        discrete Gaussian at ``(share * epsilon_v, delta_v)``), which tilts each owner's sale of a label toward
        the consumer's rows inside that label (``w(x) ~ exp(h1(x).g~ / T)``, ``T`` = ``temperature`` or
        :func:`temperature_for`); the cell histogram gets ``(1 - share) * epsilon_v``. ``0`` (the default) releases
        no ``g~`` and sells a representative sample of each wanted (owner, label) cell. ``0.3`` helps when the
        consumer wants a subgroup inside the labels that every owner holds some of, with hundreds of validation
        rows, and hurts when its rows fall in cells of a dozen rows each, which the histogram's higher threshold
        then drops (docs/design.md §2.7, "The tilted sale"). In ``[0, 1)``.

    ``nominees``, ``candidates`` (per nominee), ``owner_greedy`` and ``choice`` apply to both purchases;
    ``temperature`` overrides the owners' tilt (the quota ranking's default is :func:`sketch_temperature_for`).
    """

    name: ClassVar[str] = "nominations"
    private: ClassVar[bool] = True

    nominees: int | None = None
    candidates: int | None = None
    temperature: float | None = None
    purchase: Literal["auto", "quotas", "nominees", "winners", "labels"] = PURCHASE  # type: ignore[assignment]
    choice: Literal["kernel", "hashes"] | None = None
    owner_greedy: Literal["stochastic", "exact"] = "stochastic"
    validation_release: Literal["gaussian", "mwem", "exact"] = "gaussian"
    reveal: Literal["points", "hashes"] = "points"
    dim: int = DEFAULT_DIM
    hash_seed: int | str = 0
    purchase_factor: float = PURCHASE_FACTOR
    tilt_rounds: int = TILT_ROUNDS
    label_set: tuple[Any, ...] | None = None
    sale_tilt_share: float = SALE_TILT_SHARE

    def _validate(self) -> None:
        super()._validate()
        set_ = object.__setattr__
        if self.nominees is not None:
            set_(self, "nominees", bounded_int(self.nominees, "nominees", 1, MAX_COUNT))
        if self.candidates is not None:
            set_(self, "candidates", bounded_int(self.candidates, "candidates", 1, MAX_COUNT))
        if self.nominees is not None and self.candidates is not None and self.candidates < self.nominees:
            raise InvalidParameterError(
                f"`candidates` ({self.candidates}) must be >= `nominees` ({self.nominees})", "candidates"
            )
        if self.temperature is not None:
            set_(self, "temperature", positive_float(self.temperature, "temperature"))
        set_(self, "purchase_factor", positive_float(self.purchase_factor, "purchase_factor"))
        if self.purchase_factor > MAX_COUNT:
            raise InvalidParameterError(
                f"`purchase_factor` must be at most {MAX_COUNT}, got {self.purchase_factor:g}", "purchase_factor"
            )
        set_(self, "tilt_rounds", bounded_int(self.tilt_rounds, "tilt_rounds", 0, 1000))
        choice_of(self.purchase, "purchase", _PURCHASES)
        if self.label_set is not None:
            set_(self, "label_set", _label_set(self.label_set))
        purchase = self.resolved_purchase
        if purchase == "labels":
            if self.label_set is None:
                raise InvalidParameterError(
                    "`purchase='labels'` needs `label_set`, the public labels the rows may have "
                    "(e.g. label_set=range(10)): it must not be read off anybody's data",
                    "label_set",
                )
            if self.reveal != "points" or self.choice == "hashes" or self.validation_release != "gaussian":
                how = (
                    "`purchase='labels'`"
                    if self.purchase == "labels"
                    else "with a `label_set`, the default purchase ('auto') is 'labels', which"
                )
                raise InvalidParameterError(
                    f"{how} buys raw rows and chooses on the exact kernel: it needs reveal="
                    "'points', choice='kernel' (or None) and validation_release='gaussian'"
                    + (
                        ""
                        if self.purchase == "labels"
                        else "; for another reveal, choice or release give purchase='nominees' and no label_set"
                    ),
                    "purchase",
                )
        elif self.label_set is not None:
            raise InvalidParameterError(
                "`label_set` applies only to purchase='labels' (or 'auto', the default)", "label_set"
            )
        share = real_number(self.sale_tilt_share, "sale_tilt_share")
        if not 0.0 <= share < 1.0:
            raise InvalidParameterError(
                f"`sale_tilt_share` must be a number in [0, 1) (the share of epsilon_v spent on "
                f"the tilt's g~; the histogram needs the rest), got {share!r}",
                "sale_tilt_share",
            )
        set_(self, "sale_tilt_share", share)
        if purchase != "labels" and self.sale_tilt_share != SALE_TILT_SHARE:
            raise InvalidParameterError(
                "`sale_tilt_share` applies only to purchase='labels' (or 'auto' with a label_set)", "sale_tilt_share"
            )
        choice_of(self.owner_greedy, "owner_greedy", _OWNER_GREEDY)
        choice_of(self.validation_release, "validation_release", _RELEASES)
        if self.validation_release == "mwem":  # h2's floor(dim^1.5) steps of O(dim) each: the sampler's caps
            steps = int(math.floor(self.dim**1.5))
            if steps > MAX_MWEM_STEPS or steps * self.dim > MAX_MWEM_WORK:
                raise InvalidParameterError(
                    f"`dim` {self.dim} is too large for validation_release='mwem' (floor(dim^1.5) "
                    f"= {steps} steps of {self.dim} values each exceed the caps of "
                    f"{MAX_MWEM_STEPS} steps and {MAX_MWEM_WORK} values)",
                    "dim",
                )
        choice_of(self.reveal, "reveal", _REVEALS)
        if self.choice is not None:
            choice_of(self.choice, "choice", _CHOICES)
            if self.choice == "kernel" and (self.purchase == "winners" or self.reveal != "points"):
                raise InvalidParameterError(
                    "`choice='kernel'` scores raw rows: it needs purchase='quotas' or 'nominees' and reveal='points'",
                    "choice",
                )

    @property
    def resolved_purchase(self) -> str:
        """``purchase``, with ``"auto"`` (the default) resolved: ``"labels"`` when ``label_set`` is given, else
        ``"nominees"``."""
        if self.purchase != "auto":
            return self.purchase
        return "labels" if self.label_set is not None else "nominees"

    @property
    def resolved_choice(self) -> str:
        """``choice``, or its default for the purchase and reveal options."""
        if self.choice is not None:
            return self.choice
        return (
            "kernel"
            if self.resolved_purchase in ("quotas", "nominees", "labels") and self.reveal == "points"
            else "hashes"
        )

    @property
    def needs_labels(self) -> bool:
        """Whether a run needs the owners' and the consumer's labels (``purchase="labels"``, or the default with a
        ``label_set``)."""
        return self.resolved_purchase == "labels"

    def budget(self, privacy: accounting.Budget | None, validation_rows: int | None = None) -> accounting.Budget | None:
        """The run's validation budget: ``privacy``, or the default (:func:`default_validation_budget` of
        ``validation_rows``); None for the exact (non-private) release."""
        if self.validation_release == "exact":
            return None
        return privacy if privacy is not None else default_validation_budget(validation_rows)

    def plan(
        self,
        *,
        size: int,
        owners: int,
        owner_rows: list[int] | None,
        validation_rows: int | None,
        privacy: accounting.Budget | None,
        gamma_median: bool,
        transport_given: bool = False,
    ) -> Plan:
        plan = super().plan(
            size=size,
            owners=owners,
            owner_rows=owner_rows,
            validation_rows=validation_rows,
            privacy=privacy,
            gamma_median=gamma_median,
            transport_given=transport_given,
        )
        if self.validation_release == "exact" and privacy is not None:
            raise InvalidParameterError(
                "`validation_release='exact'` releases D_v's mean without noise: no budget applies", "privacy"
            )
        purchase = self.resolved_purchase
        if privacy is not None and privacy.has_owners_budget and purchase not in OWNER_RELEASE_PURCHASES:
            raise InvalidParameterError(
                "nominations releases nothing computed from one owner's data to another (owners' epsilon is 0): an "
                "owners' epsilon/delta in `privacy` would not be spent; give a validation-only budget, "
                "Budget(validation_epsilon=..., validation_delta=...)",
                "privacy",
            )
        budget = self.budget(privacy, validation_rows)
        if budget is not None and validation_rows is not None:  # delta_v >= 1/|D_v| would allow releasing a row
            budget.check_validation_size(validation_rows)
            self._check_calibrations(budget, privacy, validation_rows)
        if purchase == "quotas" and self.purchase_factor * size > MAX_COUNT:
            raise InvalidParameterError(
                f"`purchase_factor` * size = {self.purchase_factor:g} * {size} rows to buy exceeds "
                f"the cap of {MAX_COUNT}",
                "purchase_factor",
            )
        M = self.resolved_nominees(size)
        if purchase in OWNER_RELEASE_PURCHASES:
            if owner_rows is not None and sum(owner_rows) < size:
                raise InvalidParameterError(
                    f"the owners hold {sum(owner_rows)} rows, fewer than `size` ({size})", "size"
                )
            return plan
        if M * owners < size:
            raise InvalidParameterError(
                f"`nominees` ({M}) times the {owners} owners is below `size` ({size})", "nominees"
            )
        if self.candidates is not None and self.candidates < M:
            raise InvalidParameterError(f"`candidates` ({self.candidates}) must be >= `nominees` ({M})", "candidates")
        if owner_rows is not None:
            pool = sum(min(M, n) for n in owner_rows)
            if pool < size:
                raise InvalidParameterError(
                    f"the owners can nominate only {pool} rows (min(nominees, rows) each, nominees = {M}), fewer than "
                    f"`size` ({size}): raise `nominees` or lower `size`",
                    "nominees",
                )
        return plan

    def _check_calibrations(
        self, budget: accounting.Budget, privacy: accounting.Budget | None, validation_rows: int
    ) -> None:
        """Calibrate every discrete Gaussian release of the run as the parties will (public numbers only), so that a
        budget no sampler can meet is refused here, naming ``privacy``, before any party is asked anything."""
        eps_v, delta_v = budget.validation_epsilon, budget.validation_delta
        assert eps_v is not None and delta_v is not None
        owners_budget = privacy is not None and privacy.has_owners_budget
        eps_o = (
            float(privacy.epsilon)
            if owners_budget and privacy is not None and privacy.epsilon is not None
            else OWNER_EPSILON
        )
        delta_o = (
            float(privacy.delta) if owners_budget and privacy is not None and privacy.delta is not None else OWNER_DELTA
        )
        purchase = self.resolved_purchase
        try:
            if purchase == "labels":
                count_release_event(eps_v * (1.0 - self.sale_tilt_share))
                if self.sale_tilt_share > 0:
                    accounting.calibrate_gaussian(
                        eps_v * self.sale_tilt_share,
                        delta_v,
                        sensitivity=mean_release_sensitivity(validation_rows),
                        dim=self.dim,
                    )
                sketch_calibration("labels", len(self.label_set or ()), eps_o, delta_o, 1)
                return
            if self.validation_release == "gaussian" or self.temperature is None or purchase == "quotas":
                accounting.calibrate_gaussian(
                    eps_v, delta_v, sensitivity=mean_release_sensitivity(validation_rows), dim=self.dim
                )
            if purchase == "quotas":
                sketch_calibration("sum", self.dim, eps_o, delta_o, _SKETCH_RELEASES)
                sketch_calibration("histogram", HISTOGRAM_BINS + 2, eps_o, delta_o, _SKETCH_RELEASES)
        except InvalidParameterError as exc:
            raise InvalidParameterError(f"`privacy`: {exc}", "privacy") from exc

    def resolved_nominees(self, size: int) -> int:
        """``nominees``, or its default ``NOMINEES_PER_SIZE * size``."""
        return self.nominees if self.nominees is not None else NOMINEES_PER_SIZE * size

    def config(
        self,
        *,
        size: int,
        n_features: int,
        hasher: RFFHasher,
        privacy: accounting.Budget | None,
        validation_rows: int | None = None,
    ) -> NominationsConfig:
        """Every public number of a run (the defaults resolved); the protocol's messages carry them."""
        M = self.resolved_nominees(size)
        C = self.candidates if self.candidates is not None else DEFAULT_CANDIDATE_FACTOR * M
        budget = self.budget(privacy, validation_rows)
        eps_v = delta_v = 0.0
        if budget is not None:
            assert budget.validation_epsilon is not None and budget.validation_delta is not None
            eps_v, delta_v = budget.validation_epsilon, budget.validation_delta
        steps, step_eps, eta = 0, 0.0, 0.0
        if self.validation_release == "mwem":
            steps, eta = int(math.floor(hasher.dim**1.5)), 1.0 / hasher.dim
            step_eps = accounting.calibrate_mwem_steps(eps_v, delta_v, steps)
        factor = STOCHASTIC_GREEDY_FACTOR if self.owner_greedy == "stochastic" else None
        owners_budget = privacy is not None and privacy.has_owners_budget
        return NominationsConfig(
            n_features=n_features,
            dim=hasher.dim,
            gamma=hasher.gamma,
            hash_seed=hasher.seed,
            reveal=self.reveal,
            purchase=self.resolved_purchase,
            nominees=M,
            candidates=C,
            temperature=self.temperature,
            release=self.validation_release,
            choice=self.resolved_choice,
            epsilon=eps_v,
            delta=delta_v,
            mwem_steps=steps,
            mwem_step_epsilon=step_eps,
            eta=eta,
            greedy_sample_factor=factor,
            owner_epsilon=float(privacy.epsilon)
            if owners_budget and privacy is not None and privacy.epsilon is not None
            else OWNER_EPSILON,
            owner_delta=float(privacy.delta)
            if owners_budget and privacy is not None and privacy.delta is not None
            else OWNER_DELTA,
            purchase_factor=self.purchase_factor,
            tilt_rounds=self.tilt_rounds,
            label_set=tuple(self.label_set or ()),
            sale_tilt_share=self.sale_tilt_share if self.resolved_purchase == "labels" else 0.0,
        )

    def run(self, setup: RunSetup) -> SummaryResult:
        assert setup.transport is not None
        config = self.config(
            size=setup.size,
            n_features=setup.n_features,
            hasher=setup.hasher,
            privacy=setup.privacy,
            validation_rows=setup.validation_rows,
        )
        result = run_nominations(
            setup.transport,
            setup.owners,
            setup.consumer,
            config,
            setup.rng,
            hasher=setup.hasher,
            size=setup.size,
            seeded=setup.seeded,
            started=setup.started,
            extra=setup.extra,
            with_labels=setup.with_labels,
        )
        _log.info(
            "nominations: temperature %.4g, sigma %.4g, %d nominees per owner, choice on %s; timings %s",
            result.extra["temperature"],
            result.extra["sigma"],
            config.nominees,
            config.choice,
            result.extra["timings"],
        )
        return result
