"""dpsumm.protocols.nominations.cells: the label purchase's public post-processing (cell thresholds, quotas from
cells, owner groups, label cells, herded sales) by hand, as properties, and on bad input.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cdist

from dpsumm.errors import InvalidParameterError
from dpsumm.protocols.nominations.cells import (
    GROUP_LEVEL,
    LabelCells,
    cell_threshold,
    herded_sales,
    label_cells,
    owner_groups,
    quotas_from_cells,
    seed_split_distance,
)


def _dlap_tail(t, b, kmax=4000):
    """P(Z >= t) and E[Z 1{Z >= t}] of the discrete Laplace of scale b, by summing its pmf (independent of the
    closed forms in cell_threshold)."""
    r = math.exp(-1.0 / b)
    pmf = [(1 - r) / (1 + r) * r**k for k in range(t, kmax)]
    return sum(pmf), sum(k * p for k, p in zip(range(t, kmax), pmf))


def test_cell_threshold_hand_checked():
    # Scale 2 (epsilon_v = 1), r = exp(-1/2) = 0.60653. 10 cells, |D_v| = 100: 10 r^t / (1 + r) <= 1 first at
    # t >= 2 ln(10 / 1.60653) = 3.657, so t = 4; the noise's mass there, 10 e^-2 (4 (1 - r) + r) / ((1 - r)(1 + r))
    # = 4.67, is below 100 / 2.
    assert cell_threshold(10, 100, 2.0) == 4.0
    # 200 cells, |D_v| = 300: 2 ln(200 / 1.60653) = 9.648 -> 10 (mass 9.68 <= 150).
    assert cell_threshold(200, 300, 2.0) == 10.0
    # 1,000 cells, |D_v| = 10: the first rule gives 13 (2 ln(1000 / 1.60653) = 12.87), but the noise's mass at 13,
    # 14, 15 is 13.6, 8.82, 5.70 > 10 / 2; at 16 it is 3.66: t = 16.
    assert cell_threshold(1000, 10, 2.0) == 16.0
    for J, m, b, factor in [
        (10, 37, 4.7, 3.0),
        (1000, 350, 2.0, 3.0),
        (200, 300, 0.5, 2.0),
        (50, 5, 3.0, 5.0),
        (3, 1000, 2.0, 3.0),
        (100_000, 40, 1.0, 3.0),
        (500, 100, 8.0, 1.0),
    ]:
        t = int(cell_threshold(J, m, b, factor))
        cap = m / (factor - 1) if factor > 1 else math.inf

        def ok(k):
            p, mass = _dlap_tail(k, b)
            return J * p <= 1 + 1e-9 and J * mass <= cap * (1 + 1e-9)

        assert t >= 1 and ok(t) and (t == 1 or not ok(t - 1)), (J, m, b, factor, t)
    # Noise-free counts: a cell with one row. factor <= 1: only the first rule.
    assert cell_threshold(3, 10, 0.0) == 1.0
    # A scale beyond any count (a consumer's epsilon of 1e-300): refused naming it, never an overflow.
    with pytest.raises(InvalidParameterError) as err:
        cell_threshold(3, 10, 2.0e300)
    assert err.value.argument == "scale"
    assert cell_threshold(3, 10, 2.0**40) > 2.0**40
    assert cell_threshold(1000, 10, 2.0, factor=1.0) == 13.0
    with pytest.raises(InvalidParameterError):
        cell_threshold(0, 10, 1.0)


CELLS = LabelCells(labels=np.array([0, 2, 2]), owners=((0, 1), (0,), (1,)), centres=np.zeros((3, 4)), bias=np.zeros(3))


OWNER_COUNTS = np.array([[60.0, 10.0, 5.0], [40.7, 20.0, 100.0]])  # rows taken as held: [[60, 10, 5], [40, 20, 100]]


def test_quotas_from_cells_hand_checked():
    # Cells: label 0 at owners 0 and 1 (one group), label 2 at owner 0, label 2 at owner 1. |D_v| = 150, noise-free
    # counts (scale 0): threshold 1, every count of one row or more is wanted. Masses: cell 0's 100 split 60 : 40 by
    # the owners' label-0 rows, then 2 and 50: [0,0] 60, [1,0] 40, [0,2] 2, [1,2] 50 of 152.
    c = np.array([100.0, 2.0, 50.0])
    # B = 60: 23.68, 15.79, 0.789, 19.74 -> floors 23, 15, 0, 19 and the 3 largest remainders (0.789 twice, 0.737).
    assert quotas_from_cells(c, 0.0, 150, CELLS, OWNER_COUNTS, 20).tolist() == [[23, 0, 1], [16, 0, 20]]
    # B = 180: 71.05, 47.37, 2.37, 59.21 -> 71, 47, 3 (the tied remainder goes to the first cell), 59; capped at 60
    # and 40 for label 0, the 18 left go to the open cells by their counts above the threshold, 1 : 49 (0.36, 17.64
    # -> 0, 18).
    assert quotas_from_cells(c, 0.0, 150, CELLS, OWNER_COUNTS, 60).tolist() == [[60, 0, 3], [40, 0, 77]]
    # The consumer wants only label 2 at owner 0, which holds 5: the other 25 rows of B = 30 are label 2's rows at
    # its other owner (the label's spare rows), and 30 >= size 10: nothing else is bought.
    only = np.array([0.0, 30.0, 0.0])
    assert quotas_from_cells(only, 0.0, 30, CELLS, OWNER_COUNTS, 10).tolist() == [[0, 0, 5], [0, 0, 25]]
    # size 200 (B = 600): label 2 holds 105 < 200 rows, so the rest comes from the other labels (all 130 of them).
    assert quotas_from_cells(only, 0.0, 30, CELLS, OWNER_COUNTS, 200).tolist() == [[60, 10, 5], [40, 20, 100]]
    # A cell under the threshold is not bought: 300 cells, scale 2, |D_v| = 100: 2 ln(300 / 1.60653) = 10.46, t = 11
    # (the noise's mass there, 9.57, is below 50); the cell counting 10 is left out and its label (2) is bought only
    # at owner 0, through the cell counting 30.
    many = LabelCells(
        labels=np.array([0, 2, 2] + [1] * 297),
        owners=((0, 1), (0,), (1,)) + ((0,),) * 297,
        centres=np.zeros((300, 4)),
        bias=np.zeros(300),
    )
    counts = np.concatenate([[0.0, 30.0, 10.0], np.zeros(297)])
    assert cell_threshold(300, 100, 2.0) == 11.0
    q = quotas_from_cells(counts, 2.0, 100, many, OWNER_COUNTS, 1)
    assert q.tolist() == [[0, 0, 3], [0, 0, 0]]
    counts[2] = 11.0  # at the threshold it is bought: 3 x 11 / 41 of B = 3 -> 1 row at owner 1
    assert quotas_from_cells(counts, 2.0, 100, many, OWNER_COUNTS, 1).tolist() == [[0, 0, 2], [0, 0, 1]]


def test_what_a_cap_leaves_goes_by_the_evidence_above_the_threshold():
    # Three cells of label 0 at owners 0, 1, 2 (they hold 10, 100 and 100 rows of it) among 300 cells: scale 2,
    # |D_v| = 100, threshold t = 11 (as above). Counts 60, 40 and 13 are wanted; size 20, B = 60. The first
    # split, 60 x (60, 40, 13) / 113 = 31.86, 21.24, 6.90, gives 32, 21, 7 (the two largest remainders); owner 0
    # holds 10, so 22 rows are left. They go by the counts above t, 49 : 29 : 2 over the open cells: 20.58 and
    # 1.42 -> 21 and 1. Split by the counts instead (40 : 13), the cell that barely passed the threshold, as the
    # noise's cells do, would have taken 5 of them.
    cells = LabelCells(
        labels=np.array([0, 0, 0] + [1] * 297),
        owners=((0,), (1,), (2,)) + ((0,),) * 297,
        centres=np.zeros((300, 4)),
        bias=np.zeros(300),
    )
    counts = np.concatenate([[60.0, 40.0, 13.0], np.zeros(297)])
    owners = np.array([[10.0, 5.0], [100.0, 5.0], [100.0, 5.0]])
    t = cell_threshold(300, 100, 2.0)
    assert 22 * (40 - t) / (53 - 2 * t) == pytest.approx(20.58, abs=0.01)
    assert quotas_from_cells(counts, 2.0, 100, cells, owners, 20).tolist() == [[10, 0], [42, 0], [8, 0]]
    # With noise-free counts (threshold 1) the counts above it are nearly the counts: 39 : 12 -> 16.82, 5.18.
    assert quotas_from_cells(counts, 0.0, 100, cells, owners, 20).tolist() == [[10, 0], [38, 0], [12, 0]]


def test_with_within_keys_what_a_cap_leaves_stays_in_its_key():
    # Key 0's cells at owners 0 (holds 10 rows of it) and 1 (holds 100), key 1's at owner 2 (holds 100), among 300
    # cells: scale 2, |D_v| = 100, threshold t = 11. Counts 60 (key 0 at owner 0), 5 (key 0 at owner 1, below t)
    # and 40 (key 1); size 20, B = 60. The first split gives 36 and 24; owner 0 holds 10 of key 0, so 26 are left.
    cells = LabelCells(
        labels=np.array([0, 0, 1] + [1] * 297),
        owners=((0,), (1,), (2,)) + ((0,),) * 297,
        centres=np.zeros((300, 4)),
        bias=np.zeros(300),
    )
    counts = np.concatenate([[60.0, 5.0, 40.0], np.zeros(297)])
    owners = np.array([[10.0, 5.0], [100.0, 5.0], [5.0, 100.0]])
    # By the evidence above t (the label and strata purchases): to the one open wanted cell, key 1.
    assert quotas_from_cells(counts, 2.0, 100, cells, owners, 20).tolist() == [[10, 0], [0, 0], [0, 50]]
    # Within keys (the direction purchase): to key 0 at its other seller, whose cell the consumer counted 5 rows in.
    assert quotas_from_cells(counts, 2.0, 100, cells, owners, 20, within_keys=True).tolist() == [
        [10, 0],
        [26, 0],
        [0, 24],
    ]
    # No positive count at key 0's other cells: by their spare rows, 100 : 5 -> 24.76, 1.24 -> 25, 1.
    counts[1] = -3.0
    assert quotas_from_cells(counts, 2.0, 100, cells, owners, 20, within_keys=True).tolist() == [
        [10, 0],
        [25, 0],
        [1, 24],
    ]
    # No cap binds: the same quotas either way.
    roomy = np.array([[100.0, 5.0], [100.0, 5.0], [5.0, 100.0]])
    np.testing.assert_array_equal(
        quotas_from_cells(counts, 2.0, 100, cells, roomy, 20, within_keys=True),
        quotas_from_cells(counts, 2.0, 100, cells, roomy, 20),
    )


def test_quotas_from_cells_follow_only_released_values_and_never_exceed_the_budget():
    rng = np.random.default_rng(0)
    for _ in range(50):
        L, K = int(rng.integers(1, 6)), int(rng.integers(1, 7))
        cells = [
            (j, tuple(sorted(rng.choice(K, size=int(rng.integers(1, K + 1)), replace=False).tolist())))
            for j in range(L)
            for _ in range(int(rng.integers(0, 3)))
        ]
        lc = LabelCells(
            labels=np.array([j for j, _ in cells], dtype=np.int64),
            owners=tuple(o for _, o in cells),
            centres=np.zeros((len(cells), 2)),
            bias=np.zeros(len(cells)),
        )
        consumer = rng.normal(scale=30, size=len(cells))
        owners = rng.normal(loc=40, scale=40, size=(K, L))
        size = int(rng.integers(1, 60))
        for within_keys in (False, True):
            q = quotas_from_cells(consumer, 3.0, 100, lc, owners, size, within_keys=within_keys)
            held = np.floor(np.maximum(owners, 0))
            assert q.shape == (K, L) and q.dtype == np.int64 and (q >= 0).all()
            assert (q <= held).all()  # never more than an owner's noisy count
            assert q.sum() <= math.ceil(3 * size)
            assert q.sum() >= min(size, held.sum())  # at least size rows when the owners hold them


def _two_pairs(d: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Four owners' mean hashes, two pairs of equal means ||m_a - m_b||^2 = 0.5 apart, and their 1,000 rows each."""
    a = np.zeros(d)
    a[0] = math.sqrt(0.5)
    b = np.zeros(d)
    b[1] = math.sqrt(0.5)
    return np.stack([a, a, b, b]), np.full(4, 1000.0)


def test_owner_groups_merge_owners_of_one_distribution_and_keep_others_apart():
    """Two pairs of owners with equal means, ||m_a - m_b||^2 = 0.5 apart, 1,000 rows each: with little noise the
    pairs are two groups (the pair's excess is -5.7 standard deviations, the other pairs' far above 3.09); with a
    noise variance of 1 per coordinate nothing can be told apart and all four are one group."""
    d = 64
    means, n = _two_pairs(d)
    assert owner_groups(means, np.zeros(4), n) == [[0, 1], [2, 3]]
    assert owner_groups(means, np.ones(4), n) == [[0, 1, 2, 3]]
    assert owner_groups(means[[0, 2, 1, 3]], np.zeros(4), n) == [[0, 2], [1, 3]]
    assert owner_groups(np.zeros((0, d)), np.zeros(0), np.zeros(0)) == []
    # 100 owners of one distribution (means that differ by their rows' sampling only) end in one group.
    rng = np.random.default_rng(0)
    many = means[0] + rng.normal(scale=math.sqrt(0.5 / (600 * d)), size=(100, d))
    assert owner_groups(many, np.zeros(100), np.full(100, 600.0)) == [list(range(100))]
    with pytest.raises(InvalidParameterError):
        owner_groups(means, np.zeros(4), np.array([1000.0, 0.0, 1.0, 1.0]))


def test_owner_groups_at_a_resolution_keep_apart_the_pairs_whose_test_cannot_see_it():
    """The pairs of the test above at a resolution: with little noise the alike pairs' margin is
    z sqrt(2/64) E0 = 3.09 x 0.177 x 0.001, so a resolution just above it keeps the two groups and one just below
    keeps every owner apart; with a noise variance of 1 per coordinate (margin about 70) no pair can see a
    difference of 0.5 (the pairs' own distance), so the four owners that were one group stay apart, and a
    resolution of 1,000 joins them again."""
    d = 64
    means, n = _two_pairs(d)
    margin = NormalDist().inv_cdf(1.0 - GROUP_LEVEL) * math.sqrt(2.0 / d) * 2 * (1.0 - 0.5) / 1000
    assert owner_groups(means, np.zeros(4), n, resolution=margin * (1 + 1e-9)) == [[0, 1], [2, 3]]
    assert owner_groups(means, np.zeros(4), n, resolution=margin * (1 - 1e-9)) == [[0], [1], [2], [3]]
    assert owner_groups(means, np.ones(4), n, resolution=0.5) == [[0], [1], [2], [3]]
    assert owner_groups(means, np.ones(4), n, resolution=1000.0) == [[0, 1, 2, 3]]
    for bad in (-1.0, math.nan, "0.5"):
        with pytest.raises(InvalidParameterError) as err:
            owner_groups(means, np.zeros(4), n, resolution=bad)  # type: ignore[arg-type]
        assert err.value.argument == "resolution"


def test_seed_split_distance_hand_checked_and_against_numpy():
    """Two rows at the origin and two at (2, 0): the halves along the top principal direction are the pairs, 4.0
    apart (squared); on 151 random rows, the rows below and above the median score along the top right singular
    vector of the centred rows (numpy's SVD; the median row in neither half, so the sign does not matter)."""
    assert seed_split_distance(np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 0.0], [2.0, 0.0]])) == pytest.approx(4.0)
    rng = np.random.default_rng(4)
    H = rng.normal(size=(151, 6)) * np.array([3.0, 1, 1, 1, 1, 1])
    c = H - H.mean(0)
    score = c @ np.linalg.svd(c)[2][0]
    low = score < np.median(score)
    high = score > np.median(score)
    want = ((H[high].mean(0) - H[low].mean(0)) ** 2).sum()
    assert seed_split_distance(H) == pytest.approx(want, rel=1e-12)
    for bad in (np.zeros((1, 3)), np.zeros((3, 0)), np.full((3, 2), np.nan)):
        with pytest.raises(InvalidParameterError):
            seed_split_distance(bad)


def test_owner_groups_are_the_components_of_the_pairwise_test_across_blocks():
    """2,100 owners (the pairs are tested in two blocks of rows): the groups are the connected components of the
    documented pairwise test, found here by a breadth-first search over the dense relation."""
    rng = np.random.default_rng(3)
    K, d = 2100, 8
    centres = rng.normal(size=(40, d)) * 0.05
    means = centres[rng.integers(0, 40, K)] + rng.normal(size=(K, d)) * 0.004
    n = rng.integers(500, 5000, K).astype(np.float64)
    noise = np.full(K, 1e-6)
    v = d * noise + np.maximum(1.0 - (means**2).sum(1), 0.0) / n
    D = cdist(means, means, "sqeuclidean")
    e0 = v[:, None] + v[None, :]
    z = NormalDist().inv_cdf(1.0 - GROUP_LEVEL)
    alike = (D - e0) <= z * math.sqrt(2.0 / d) * e0
    seen = np.zeros(K, dtype=bool)
    want = []
    for k in range(K):
        if seen[k]:
            continue
        seen[k] = True
        group, frontier = [k], [k]
        while frontier:
            nxt = np.flatnonzero(alike[frontier].any(0) & ~seen)
            seen[nxt] = True
            group += nxt.tolist()
            frontier = nxt.tolist()
        want.append(sorted(group))
    got = owner_groups(means, noise, n)
    assert got == want
    assert 1 < len(got) < K and max(len(g) for g in got) > 1  # a real mix of merged and separate owners


def _all_pairs_groups(
    means: np.ndarray, noise: np.ndarray, n: np.ndarray, resolution: float = math.inf
) -> list[list[int]]:
    """The groups as owner_groups defines them, without its spatial index: all K^2 pairs tested (a pair's margin
    at most ``resolution``), then the connected components of the relation (scipy's csgraph)."""
    from scipy.sparse.csgraph import connected_components

    K, d = means.shape
    v = d * noise + np.maximum(1.0 - (means**2).sum(1), 0.0) / n
    D = ((means[:, None, :] - means[None, :, :]) ** 2).sum(-1)
    e0 = v[:, None] + v[None, :]
    margin = NormalDist().inv_cdf(1.0 - GROUP_LEVEL) * math.sqrt(2.0 / d) * e0
    alike = ((D - e0) <= margin) & (margin <= resolution)
    label = connected_components(alike, directed=False)[1]
    groups: dict[int, list[int]] = {}
    for k in range(K):
        groups.setdefault(int(label[k]), []).append(k)
    return sorted(groups.values(), key=lambda g: g[0])


@settings(max_examples=150, deadline=None)
@given(
    K=st.integers(1, 80),
    d=st.integers(1, 12),
    clusters=st.integers(1, 6),
    spread=st.sampled_from([0.0, 1e-4, 1e-3, 1e-2, 0.1]),
    noise_scale=st.sampled_from([0.0, 1e-7, 1e-5, 1e-3]),
    resolution=st.sampled_from([None, 0.0, 1e-6, 1e-4, 1e-2]),
    seed=st.integers(0, 2**32 - 1),
)
def test_owner_groups_equal_the_all_pairs_groups(K, d, clusters, spread, noise_scale, resolution, seed):
    """The spatial index finds the same groups as testing all K^2 pairs, whatever the owners' sizes, noise, spread
    (from owners all alike to owners all apart; equal means included) and resolution."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(clusters, d)) * 0.3 / math.sqrt(d)
    means = centres[rng.integers(0, clusters, K)] + rng.normal(size=(K, d)) * spread / math.sqrt(d)
    n = rng.integers(1, 20_000, K).astype(np.float64)
    noise = rng.uniform(0.0, noise_scale, K)
    want = _all_pairs_groups(means, noise, n, math.inf if resolution is None else resolution)
    assert owner_groups(means, noise, n, resolution=resolution) == want


def test_label_cells_hand_checked():
    """Owners 0 and 1 share a distribution, owner 2 differs; a count reaching 3 sigma = 3 makes a holder."""
    d = 64
    a, b = np.zeros(d), np.zeros(d)
    a[0], b[1] = 0.7, 0.7
    n = np.array([100.0, 100.0, 100.0])
    sums = np.stack([a, a, b]) * n[:, None]
    counts = np.array([[100.0, -3.0], [90.0, 80.0], [-1.0, 70.0]])
    cells = label_cells(counts, sums, n, 1.0)
    assert cells.labels.tolist() == [0, 1, 1] and cells.owners == ((0, 1), (1,), (2,))
    np.testing.assert_allclose(cells.centres, np.stack([a, a, b]))
    np.testing.assert_allclose(cells.bias, [d * 2 / 200.0**2, d / 100.0**2, d / 100.0**2])
    # Counts within the noise (sigma 40: threshold 120): a label nobody can be shown to hold is one cell over the
    # owners whose count is positive (label 0: owners 0 and 1; label 1: owners 1 and 2), whatever the groups.
    # sigma 10 (threshold 30; the means' noise makes every owner one group): label 1 is placed by its holders 1 and
    # 2, and sold by owner 0 too, whose count 20 is positive but under the threshold.
    some = label_cells(np.array([[100.0, 20.0], [90.0, 80.0], [-1.0, 70.0]]), sums, n, 10.0)
    assert some.labels.tolist() == [0, 1] and some.owners == ((0, 1), (0, 1, 2))
    np.testing.assert_allclose(some.centres[1], (a + b) / 2)
    small = label_cells(counts, sums, n, 40.0)
    assert small.labels.tolist() == [0, 1] and small.owners == ((0, 1), (1, 2))
    np.testing.assert_allclose(small.centres[1], (a + b) / 2)


def test_herded_sales_hand_checked():
    """An owner herds its sale of a label when it is asked for at least as many rows as there are owners asked for
    that label in its cell; otherwise (many owners of one distribution, a few rows each) it draws uniformly."""
    # Label 0: one cell over owners 0, 1, 2 (one group); label 1: a cell at owner 0 and a cell over owners 1 and 2.
    cells = LabelCells(
        labels=np.array([0, 1, 1]), owners=((0, 1, 2), (0,), (1, 2)), centres=np.zeros((3, 4)), bias=np.zeros(3)
    )
    q = np.array(
        [
            [3, 1],  # label 0: 3 asked, 3 sellers in its cell -> herded; label 1: alone in its cell
            [2, 2],  # label 0: 2 < 3 -> uniform; label 1: 2 sellers (owners 1, 2) -> herded
            [4, 1],  # label 0: herded; label 1: 1 < 2 -> uniform
            [0, 5],
        ]
    )  # owner 3 is in no cell (asked by the purchase's later steps): herded
    assert herded_sales(q, cells).tolist() == [[True, True], [False, True], [True, False], [True, True]]
    # An owner asked for nothing does not count as a seller: owners 1 and 2 alone share label 0's ask.
    q[0, 0] = 0
    assert herded_sales(q, cells)[:, 0].tolist() == [True, True, True, True]
    with pytest.raises(InvalidParameterError, match="quotas"):
        herded_sales(q.astype(float), cells)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 7), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_herded_sales_compares_each_ask_with_the_askers_of_its_cell(K, L, seed):
    """For random asks and cells (each label's owners split into groups): an ask of 0 is True (vacuously), an ask
    in a cell is herded exactly when it is at least the number of owners asked in that cell, an ask outside every
    cell is herded."""
    rng = np.random.default_rng(seed)
    q = rng.integers(0, 6, size=(K, L)) * (rng.random((K, L)) < 0.7)
    labels, owners = [], []
    for j in range(L):
        members = [k for k in range(K) if rng.random() < 0.8]
        groups = rng.integers(0, 2, size=len(members))
        for g in (0, 1):
            own = tuple(k for k, gk in zip(members, groups) if gk == g)
            if own:
                labels.append(j)
                owners.append(own)
    cells = LabelCells(
        labels=np.array(labels, dtype=np.int64),
        owners=tuple(owners),
        centres=np.zeros((len(labels), 2)),
        bias=np.zeros(len(labels)),
    )
    out = herded_sales(q, cells)
    assert out.shape == (K, L) and out.dtype == np.bool_
    expected = np.ones((K, L), dtype=bool)
    for j, own in zip(labels, owners):
        asked = [k for k in own if q[k, j] > 0]
        for k in asked:
            expected[k, j] = q[k, j] >= len(asked)
    np.testing.assert_array_equal(out, expected)


_ANY = st.one_of(
    st.none(),
    st.integers(-3, 3),
    st.floats(allow_nan=True, allow_infinity=True),
    st.lists(st.floats(-5, 5), max_size=4),
    st.lists(st.lists(st.floats(allow_nan=True), max_size=3), max_size=3),
    st.text(max_size=3),
)


@settings(max_examples=150, deadline=None)
@given(means=_ANY, noise=_ANY, n=_ANY, counts=_ANY, consumer=_ANY, sigma=_ANY)
def test_the_cell_functions_refuse_bad_input_naming_it(means, noise, n, counts, consumer, sigma):
    """Whatever they are given, the label purchase's public post-processing functions return or raise
    InvalidParameterError naming an argument: never another exception."""
    cells = LabelCells(labels=np.array([0]), owners=((0,),), centres=np.zeros((1, 2)), bias=np.zeros(1))
    calls = [
        lambda: owner_groups(means, noise, n),
        lambda: label_cells(counts, means, n, sigma),
        lambda: quotas_from_cells(consumer, 1.0, 10, cells, counts, 3),
        lambda: cell_threshold(3, 10, sigma),
    ]
    for call in calls:
        try:
            call()
        except InvalidParameterError as err:
            assert err.argument
