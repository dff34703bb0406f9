"""The label purchase of the nominations protocol (issue 19, docs/design.md §2.7): the quota rule by hand, the
uniform draw within a label, the two DP releases and their ledger, what an owner sees, parsimony, faults and
bad input."""

from __future__ import annotations

import dataclasses
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpsumm
from dpsumm import accounting
from dpsumm.errors import InvalidParameterError, ProtocolError
from dpsumm.messages import Message
from dpsumm.parties import ConsumerParty, OwnerParty, label_rows, owner_stream, substitute_counts
from dpsumm.protocols.nominations.by_label import LabelRelease, LabelSale, LabelSaleRequest
from dpsumm.protocols.nominations.cells import (LabelCells, cell_threshold, herded_sales, label_cells, owner_groups,
                                               quotas_from_cells)
from dpsumm.transport import InProcessTransport
from recording import Recorder

LABELS = (0, 1, 2)
METHOD = dpsumm.Nominations(dim=64, purchase=dpsumm.ByLabel(label_set=LABELS))
TILTED = METHOD.set_params(purchase=METHOD.purchase.set_params(sale_tilt_share=0.3))
KW = dict(method=METHOD, gamma=0.3, progress=False)


def label_shift(seed=0, K=4, n=120, f=5, m=60):
    """Owner k holds labels 0, 1, 2 with different mixes; the consumer wants mostly label 2 and some label 0."""
    rng = np.random.default_rng(seed)
    mixes = [(0.6, 0.3, 0.1), (0.2, 0.7, 0.1), (0.1, 0.3, 0.6), (0.4, 0.4, 0.2)][:K]
    owners, labels = [], []
    for mix in mixes:
        y = rng.choice(3, size=n, p=mix)
        owners.append(rng.normal(loc=y[:, None] * 1.5, scale=0.5, size=(n, f)))
        labels.append(y)
    yv = rng.choice([0, 2], size=m, p=[0.3, 0.7])
    validation = rng.normal(loc=yv[:, None] * 1.5, scale=0.5, size=(m, f))
    return owners, labels, validation, yv


# ---------------------------------------------------------------------------------- the quota rule, by hand


def _dlap_tail(t, b, kmax=4000):
    """P(Z >= t) and E[Z 1{Z >= t}] of the discrete Laplace of scale b, by summing its pmf (independent of the
    closed forms in cell_threshold)."""
    r = math.exp(-1.0 / b)
    pmf = [(1 - r) / (1 + r) * r ** k for k in range(t, kmax)]
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
    for J, m, b, factor in [(10, 37, 4.7, 3.0), (1000, 350, 2.0, 3.0), (200, 300, 0.5, 2.0), (50, 5, 3.0, 5.0),
                            (3, 1000, 2.0, 3.0), (100_000, 40, 1.0, 3.0), (500, 100, 8.0, 1.0)]:
        t = int(cell_threshold(J, m, b, factor))
        cap = m / (factor - 1) if factor > 1 else math.inf

        def ok(k):
            p, mass = _dlap_tail(k, b)
            return J * p <= 1 + 1e-9 and J * mass <= cap * (1 + 1e-9)

        assert t >= 1 and ok(t) and (t == 1 or not ok(t - 1)), (J, m, b, factor, t)
    # Noise-free counts: a cell with one row. factor <= 1: only the first rule.
    assert cell_threshold(3, 10, 0.0) == 1.0
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
    many = LabelCells(labels=np.array([0, 2, 2] + [1] * 297), owners=((0, 1), (0,), (1,)) + ((0,),) * 297,
                      centres=np.zeros((300, 4)), bias=np.zeros(300))
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
    cells = LabelCells(labels=np.array([0, 0, 0] + [1] * 297), owners=((0,), (1,), (2,)) + ((0,),) * 297,
                       centres=np.zeros((300, 4)), bias=np.zeros(300))
    counts = np.concatenate([[60.0, 40.0, 13.0], np.zeros(297)])
    owners = np.array([[10.0, 5.0], [100.0, 5.0], [100.0, 5.0]])
    t = cell_threshold(300, 100, 2.0)
    assert 22 * (40 - t) / (53 - 2 * t) == pytest.approx(20.58, abs=0.01)
    assert quotas_from_cells(counts, 2.0, 100, cells, owners, 20).tolist() == [[10, 0], [42, 0], [8, 0]]
    # With noise-free counts (threshold 1) the counts above it are nearly the counts: 39 : 12 -> 16.82, 5.18.
    assert quotas_from_cells(counts, 0.0, 100, cells, owners, 20).tolist() == [[10, 0], [38, 0], [12, 0]]


def test_quotas_from_cells_follow_only_released_values_and_never_exceed_the_budget():
    rng = np.random.default_rng(0)
    for _ in range(50):
        L, K = int(rng.integers(1, 6)), int(rng.integers(1, 7))
        cells = [(j, tuple(sorted(rng.choice(K, size=int(rng.integers(1, K + 1)), replace=False).tolist())))
                 for j in range(L) for _ in range(int(rng.integers(0, 3)))]
        lc = LabelCells(labels=np.array([j for j, _ in cells], dtype=np.int64), owners=tuple(o for _, o in cells),
                        centres=np.zeros((len(cells), 2)), bias=np.zeros(len(cells)))
        consumer = rng.normal(scale=30, size=len(cells))
        owners = rng.normal(loc=40, scale=40, size=(K, L))
        size = int(rng.integers(1, 60))
        q = quotas_from_cells(consumer, 3.0, 100, lc, owners, size)
        held = np.floor(np.maximum(owners, 0))
        assert q.shape == (K, L) and q.dtype == np.int64 and (q >= 0).all()
        assert (q <= held).all()  # never more than an owner's noisy count
        assert q.sum() <= math.ceil(3 * size)
        assert q.sum() >= min(size, held.sum())  # at least size rows when the owners hold them


def test_owner_groups_merge_owners_of_one_distribution_and_keep_others_apart():
    """Two pairs of owners with equal means, ||m_a - m_b||^2 = 0.5 apart, 1,000 rows each: with little noise the
    pairs are two groups (the pair's excess is -5.7 standard deviations, the other pairs' far above 3.09); with a
    noise variance of 1 per coordinate nothing can be told apart and all four are one group."""
    d = 64
    a = np.zeros(d)
    a[0] = math.sqrt(0.5)
    b = np.zeros(d)
    b[1] = math.sqrt(0.5)
    means = np.stack([a, a, b, b])
    n = np.full(4, 1000.0)
    assert owner_groups(means, np.zeros(4), n) == [[0, 1], [2, 3]]
    assert owner_groups(means, np.ones(4), n) == [[0, 1, 2, 3]]
    assert owner_groups(means[[0, 2, 1, 3]], np.zeros(4), n) == [[0, 2], [1, 3]]
    assert owner_groups(np.zeros((0, d)), np.zeros(0), np.zeros(0)) == []
    # 100 owners of one distribution (means that differ by their rows' sampling only) end in one group.
    rng = np.random.default_rng(0)
    many = a + rng.normal(scale=math.sqrt(0.5 / (600 * d)), size=(100, d))
    assert owner_groups(many, np.zeros(100), np.full(100, 600.0)) == [list(range(100))]
    with pytest.raises(InvalidParameterError):
        owner_groups(means, np.zeros(4), np.array([1000.0, 0.0, 1.0, 1.0]))


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
    np.testing.assert_allclose(cells.bias, [d * 2 / 200.0 ** 2, d / 100.0 ** 2, d / 100.0 ** 2])
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


def test_cell_counts_put_each_row_in_the_nearest_cell_of_its_label():
    """Rows at A, A, B of label 0, one at A of label 1 (no cell of label 1), one of a label outside the set; cells of
    label 0 centred at h_c(A) and h_c(B), one of label 2 at h_c(A): counts 2, 1, 0. A bias lowers a centre's score
    (the expected squared norm of its noise), so a large one moves rows to that cell."""
    from dpsumm.hashing import RFFHasher
    from dpsumm.messages import LabelHistogramRequest
    from dpsumm.parties import cell_counts

    A, B = np.zeros(3), np.array([3.0, 0.0, 0.0])
    X = np.stack([A, A, B, A, B])
    y = np.array([0, 0, 0, 1, 7])
    h = RFFHasher(3, dim=64, gamma=0.5, seed="cells:x")
    centres = h.transform(np.stack([A, B, A])).astype(np.float64)

    def req(bias):
        return LabelHistogramRequest(label_set=np.array([0, 1, 2]), epsilon=1.0, send_rows=False,
                                     n_features=3, dim=64, gamma=0.5, hash_seed="cells:x",
                                     cell_labels=np.array([0, 0, 2]), centres=centres, bias=np.asarray(bias, float))

    assert cell_counts(X, y, req([0.0, 0.0, 0.0])).tolist() == [2.0, 1.0, 0.0]
    assert cell_counts(X, y, req([0.0, 10.0, 0.0])).tolist() == [0.0, 3.0, 0.0]
    with pytest.raises(ProtocolError):
        cell_counts(X, y, dataclasses.replace(req([0.0, 0.0, 0.0]), cell_labels=np.array([0, 0, 3])))
    with pytest.raises(ProtocolError):
        cell_counts(X, y, dataclasses.replace(req([0.0, 0.0, 0.0]), centres=centres[:2]))


# ---------------------------------------------------------------------------------- the owner's draw


def test_substitute_counts_hand_checked():
    held = np.array([5, 10, 3, 0])
    # Nothing short: the asks, unchanged.
    assert substitute_counts(held, np.array([5, 2, 3, 0]), None).tolist() == [5, 2, 3, 0]
    # 3 short of label 0 and 2 of label 3: the 5 come from label 2 (preference 0.9, but only 3 - 3 = 0 left), then
    # label 1 (0.5): [5, 5, 3, 0], 13 rows as asked.
    assert substitute_counts(held, np.array([8, 0, 3, 2]), np.array([0.1, 0.5, 0.9, 2.0])).tolist() == [5, 5, 3, 0]
    # Equal preferences: the labels the owner holds most of first (label 1), then label order.
    assert substitute_counts(held, np.array([0, 0, 5, 0]), None).tolist() == [0, 2, 3, 0]
    assert substitute_counts(held, np.array([7, 0, 0, 0]), np.array([0.0, 0.0, 1.0, 0.0])).tolist() == [5, 0, 2, 0]
    # Asked for more than it holds in all: everything it has.
    assert substitute_counts(held, np.array([30, 0, 0, 0]), None).tolist() == [5, 10, 3, 0]


def test_label_rows_sells_the_asked_counts_of_each_label_herded_from_its_rows():
    """Counts per label are exact (a label short of its ask made up from the others), and the herded sample of a
    label represents its rows better than uniform draws do: over 40 seeds, its MMD² to the label's rows is below
    the uniform draws' in at least 36 (a sign test; under "no better than uniform" the chance of >= 36 of 40 is
    1e-7)."""
    from dpsumm.hashing import RFFHasher
    from dpsumm.metrics import mmd2

    rng = np.random.default_rng(0)
    labels = np.array([0] * 300 + [1] * 10 + [2] * 5)
    X = np.concatenate([rng.normal(size=(300, 4)) * np.array([1.0, 2.0, 0.5, 1.0]), rng.normal(size=(15, 4)) + 3])
    hasher = RFFHasher(4, dim=256, gamma=0.2, seed=1)
    wins = 0
    for seed in range(40):
        tok, hashes = label_rows(X, labels, np.array([0, 1]), np.array([20, 12]), hasher, candidates=128,
                                 sample_seed=seed)
        np.testing.assert_array_equal(hashes, hasher.transform(X[tok]))
        assert np.all(np.diff(tok) > 0)
        # all 10 of label 1, the 2 it lacks from label 0 (the only other label asked about), none of label 2
        assert (labels[tok] == 0).sum() == 22 and (labels[tok] == 1).sum() == 10 and len(tok) == 32
        herded = X[tok[labels[tok] == 0]]
        uniform = X[rng.choice(300, size=22, replace=False)]
        wins += mmd2(herded, X[:300], 0.2) < mmd2(uniform, X[:300], 0.2)
    assert wins >= 36
    assert label_rows(X, labels, np.array([2]), np.array([9]), hasher, candidates=36, sample_seed=0)[0].tolist() == \
        [310, 311, 312, 313, 314]
    assert label_rows(X, None, np.array([0]), np.array([3]), hasher, candidates=12, sample_seed=0)[0].tolist() == []


def test_herded_sales_hand_checked():
    """An owner herds its sale of a label when it is asked for at least as many rows as there are owners asked for
    that label in its cell; otherwise (many owners of one distribution, a few rows each) it draws uniformly."""
    # Label 0: one cell over owners 0, 1, 2 (one group); label 1: a cell at owner 0 and a cell over owners 1 and 2.
    cells = LabelCells(labels=np.array([0, 1, 1]), owners=((0, 1, 2), (0,), (1, 2)), centres=np.zeros((3, 4)),
                       bias=np.zeros(3))
    q = np.array([[3, 1],    # label 0: 3 asked, 3 sellers in its cell -> herded; label 1: alone in its cell
                  [2, 2],    # label 0: 2 < 3 -> uniform; label 1: 2 sellers (owners 1, 2) -> herded
                  [4, 1],    # label 0: herded; label 1: 1 < 2 -> uniform
                  [0, 5]])   # owner 3 is in no cell (asked by the purchase's later steps): herded
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
    cells = LabelCells(labels=np.array(labels, dtype=np.int64), owners=tuple(owners),
                       centres=np.zeros((len(labels), 2)), bias=np.zeros(len(labels)))
    out = herded_sales(q, cells)
    assert out.shape == (K, L) and out.dtype == np.bool_
    expected = np.ones((K, L), dtype=bool)
    for j, own in zip(labels, owners):
        asked = [k for k in own if q[k, j] > 0]
        for k in asked:
            expected[k, j] = q[k, j] >= len(asked)
    np.testing.assert_array_equal(out, expected)


def test_label_rows_draws_uniformly_where_not_herded():
    """With ``herded`` False for a label the owner sells a uniform sample of its rows of it: the asked count, rows
    of that label only, hashes equal to h1 of the rows; over 200 seeds every row of the label is sold about equally
    often (chi-square over 30 rows, 29 degrees of freedom, p = 0.001 threshold 58.3), unlike herding, which keeps
    choosing the label's central rows. ``herded=None`` is herding for every label."""
    from dpsumm.hashing import RFFHasher

    rng = np.random.default_rng(1)
    labels = np.array([0] * 30 + [1] * 40)
    X = rng.normal(size=(70, 3))
    hasher = RFFHasher(3, dim=64, gamma=0.3, seed=2)
    sold = np.zeros(30)
    herd_sold = np.zeros(30)
    for seed in range(200):
        tok, hashes = label_rows(X, labels, np.array([0, 1]), np.array([3, 5]), hasher, candidates=32,
                                 sample_seed=seed, herded=np.array([False, True]))
        np.testing.assert_array_equal(hashes, hasher.transform(X[tok]))
        assert np.all(np.diff(tok) > 0) and (labels[tok] == 0).sum() == 3 and (labels[tok] == 1).sum() == 5
        sold += np.bincount(tok[labels[tok] == 0], minlength=30)
        default = label_rows(X, labels, np.array([0, 1]), np.array([3, 5]), hasher, candidates=32, sample_seed=seed)
        herd = label_rows(X, labels, np.array([0, 1]), np.array([3, 5]), hasher, candidates=32, sample_seed=seed,
                          herded=np.array([True, True]))
        np.testing.assert_array_equal(default[0], herd[0])
        herd_sold += np.bincount(herd[0][labels[herd[0]] == 0], minlength=30)
    expected = 200 * 3 / 30
    assert ((sold - expected) ** 2 / expected).sum() < 58.3
    assert ((herd_sold - expected) ** 2 / expected).sum() > 58.3


def test_owners_of_one_distribution_draw_their_small_sales_uniformly_in_a_run():
    """30 owners of one distribution share each label's cell; asked for a few rows each of the wanted label, they
    are told to draw them uniformly (fewer rows asked than owners asked), and the run still buys at most 3 x size,
    fills the summary and certifies both parties."""
    rng = np.random.default_rng(5)
    K, n = 30, 90
    owners, labels = [], []
    for _ in range(K):
        y = rng.integers(0, 3, size=n)
        owners.append(rng.normal(loc=y[:, None] * 1.5, scale=0.5, size=(n, 4)))
        labels.append(y)
    yv = np.full(60, 2)
    validation = rng.normal(loc=3.0, scale=0.5, size=(60, 4))
    modes: list[np.ndarray] = []

    class Owner(OwnerParty):
        def handle(self, message):
            if isinstance(message, LabelSaleRequest):
                assert message.label_herded is not None and message.label_herded.dtype == np.bool_
                modes.append(np.asarray(message.label_herded))
            return super().handle(message)

    parties = {f"owner-{k}": Owner(o, y, f"owner-{k}", rng=owner_stream(0, f"owner-{k}"))
               for k, (o, y) in enumerate(zip(owners, labels))}
    parties["consumer"] = ConsumerParty(validation, dpsumm.privacy.Csprng(0).derive("consumer"), labels=yv)
    res = dpsumm.summarize([dpsumm.Owner(o, labels=y) for o, y in zip(owners, labels)], validation, 20,
                           validation_labels=yv, random_state=0, transport=InProcessTransport(parties), **KW)
    assert len(modes) >= 10 and sum(not m[2] for m in modes) >= 10  # label 2's sales: uniform draws
    assert len(res) == 20 and res.accessed.total <= 60
    assert res.privacy.certified("owners") and res.privacy.certified("validation")


def test_an_owner_refuses_a_malformed_sale_mode():
    X = np.random.default_rng(0).normal(size=(20, 3))
    owner = OwnerParty(X, np.array([0, 1] * 10), "o")
    base = dict(n_features=3, dim=8, gamma=0.3, hash_seed=0, target=np.zeros(0), temperature=1.0, count=3,
                candidates=12, reveal="points", sample_seed=1, label_set=np.array([0, 1]),
                label_counts=np.array([1, 2]), label_preference=np.zeros(2))
    for bad in (np.array([True]), np.array([1, 0]), np.array([[True, False]])):
        with pytest.raises(ProtocolError, match="label_herded"):
            owner.handle(LabelSaleRequest(**base, label_herded=bad))
    reply = owner.handle(LabelSaleRequest(**base, label_herded=np.array([False, True])))
    assert isinstance(reply, LabelSale) and len(reply.tokens) == 3


# ---------------------------------------------------------------------------------- the run


def test_a_run_certifies_every_party_buys_at_most_three_times_size_and_only_wanted_labels():
    owners, labels, validation, yv = label_shift()
    res = dpsumm.summarize([dpsumm.Owner(o, labels=y) for o, y in zip(owners, labels)], validation, 20,
                           validation_labels=yv, random_state=0, **KW)
    led = res.privacy
    assert led.certified("owners") and led.certified("validation")
    assert 0.97 < led.epsilon("owners", 1e-6) <= 1.0
    # the consumer's histogram: the discrete Laplace at scale 2 / epsilon_v, pure epsilon_v-DP (at any delta)
    # (the tight accountant's PLD gives 1 - 2e-6 at delta = 1e-6: the pure bound is reached with probability > 1e-6)
    assert [type(e).__name__ for e in led.events("validation")] == ["LaplaceEvent"]
    for delta in (1e-6, 1e-12):
        assert 0.9999 < led.epsilon("validation", delta) <= 1.0
    assert res.accessed.total <= 3 * 20 and res.accessed.hashes == 0
    assert len(res) == 20 and sum(res.extra["quotas"].values()) == res.accessed.total
    # Label 1 (no validation row) is bought only for the noise on its count: most of the purchase is labels 0 and 2.
    bought = np.sum([q for q in res.extra["label_quotas"].values()], axis=0)
    assert bought[0] > 0 and bought[2] > bought[0] and bought[1] <= bought.sum() / 3
    assert res.extra["owner_epsilon"] == pytest.approx(1.0)
    assert "NOT private" in repr(res)


def test_with_the_tilt_the_consumer_makes_two_releases_that_compose_within_its_budget():
    """``sale_tilt_share=0.3``: the consumer's histogram at 0.7 epsilon_v (the discrete Laplace at scale 2 / 0.7,
    pure) and its g~ (the discrete Gaussian at (0.3 epsilon_v, 1e-6)), composed by the ledger below epsilon_v = 1 at
    delta_v = 1e-6; every owner's sale request carries g~ (d values) and the temperature max(0.2, 5 sigma)."""
    owners, labels, validation, yv = label_shift()
    asked: list[LabelSaleRequest] = []

    class Owner(OwnerParty):
        def handle(self, message):
            if isinstance(message, LabelSaleRequest):
                asked.append(message)
            return super().handle(message)

    parties = {f"owner-{k}": Owner(np.asarray(o), y, f"owner-{k}", rng=owner_stream(0, f"owner-{k}"))
               for k, (o, y) in enumerate(zip(owners, labels))}
    parties["consumer"] = ConsumerParty(np.asarray(validation), dpsumm.privacy.Csprng(0).derive("consumer"), labels=yv)
    res = dpsumm.summarize([dpsumm.Owner(o, labels=y) for o, y in zip(owners, labels)], validation, 20,
                           validation_labels=yv, random_state=0, transport=InProcessTransport(parties),
                           **{**KW, "method": TILTED})
    led = res.privacy
    assert led.certified("validation") and led.certified("owners")
    events = led.events("validation")
    assert sorted(type(e).__name__ for e in events) == ["GaussianEvent", "LaplaceEvent"]
    laplace = next(e for e in events if isinstance(e, accounting.LaplaceEvent))
    assert laplace.epsilon == pytest.approx(0.7) and laplace.scale == pytest.approx(2 / 0.7, rel=1e-5)
    assert 0.98 < led.epsilon("validation", 1e-6) <= 1.0
    temperature = max(0.2, 5 * res.extra["sigma"])
    assert res.extra["temperature"] == pytest.approx(temperature)
    assert asked and all(np.asarray(m.target).shape == (64,) and m.temperature == pytest.approx(temperature)
                         for m in asked)
    assert len(res) == 20 and res.accessed.total <= 60 and res.extra["exchanges"] == 4


def test_a_tilted_sale_leans_toward_the_target_inside_a_label():
    """One label whose rows come from two clusters A (x ~ +2) and B (x ~ -2), 150 each; the target is A's mean hash.
    Untilted, a herded sale of 40 rows represents the label (about half A); tilted at T = 0.05 toward A, at least
    35 of the 40 are A rows, herded and drawn alike; with the tilt pointed at B, at most 5 are. Fixed seeds."""
    from dpsumm.hashing import RFFHasher

    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(2.0, 0.5, size=(150, 3)), rng.normal(-2.0, 0.5, size=(150, 3))])
    y = np.zeros(300, dtype=np.int64)
    is_a = np.arange(300) < 150
    hasher = RFFHasher(3, dim=128, gamma=0.3, seed=1)
    H = hasher.transform(X).astype(np.float64)
    toward_a, toward_b = H[is_a].mean(0), H[~is_a].mean(0)
    counts = np.array([40])
    plain, _ = label_rows(X, y, np.array([0]), counts, hasher, candidates=160, sample_seed=3)
    assert 10 <= is_a[plain].sum() <= 30
    for herded in (True, False):
        mode = np.array([herded])
        a, ha = label_rows(X, y, np.array([0]), counts, hasher, candidates=160, sample_seed=3, herded=mode,
                           target=toward_a, temperature=0.05)
        b, _ = label_rows(X, y, np.array([0]), counts, hasher, candidates=160, sample_seed=3, herded=mode,
                          target=toward_b, temperature=0.05)
        assert len(a) == len(b) == 40 and len(np.unique(a)) == 40
        assert is_a[a].sum() >= 35 and is_a[b].sum() <= 5, (herded, is_a[a].sum(), is_a[b].sum())
        np.testing.assert_allclose(ha, hasher.transform(X[a]), rtol=0, atol=1e-6)


def test_an_owner_refuses_a_malformed_tilt():
    """A tilted label sale with a g~ of the wrong length, a non-finite g~ or a temperature that is not > 0 is a
    protocol error, before the owner reads its rows."""
    X = np.random.default_rng(0).normal(size=(20, 3))
    owner = OwnerParty(X, np.array([0, 1] * 10), "o")
    base = dict(n_features=3, dim=16, gamma=0.5, hash_seed=0, count=4, candidates=16, reveal="points", sample_seed=1,
                greedy_sample_factor=None, label_set=np.array([0, 1]), label_counts=np.array([2, 2]),
                label_preference=np.zeros(2), label_herded=np.array([True, True]))
    ok = owner.handle(LabelSaleRequest(target=np.full(16, 0.1), temperature=0.5, **base))
    assert len(ok.tokens) == 4
    for target, temperature in [(np.full(15, 0.1), 0.5), (np.full(16, np.nan), 0.5), (np.full(16, 0.1), 0.0),
                                (np.full(16, 0.1), float("inf")), (np.full(16, 0.1), True)]:
        with pytest.raises(ProtocolError, match="tilted label sale"):
            owner.handle(LabelSaleRequest(target=target, temperature=temperature, **base))


def test_owners_short_of_a_label_sell_other_rows_so_that_the_summary_is_full():
    """Owner a holds 60 rows of label 0 (the only label the consumer has) and 40 of label 1; owner b 100 of label 2.
    With counts released at sigma ~ 14, the aggregator often asks a for more than its 60 rows of label 0 and, the
    ask being >= size, for nothing else: before owners made up a shortfall from their other rows, 4 of these 20
    seeds gave a summary shorter than size (60, 60, 60 and 56 rows of 70)."""
    rng = np.random.default_rng(0)
    A = rng.normal(0, 1, (100, 4))
    yA = np.array([0] * 60 + [1] * 40)
    A[yA == 1] += 3
    B = rng.normal(5, 1, (100, 4))
    owners = [dpsumm.Owner(A, labels=yA, name="a"), dpsumm.Owner(B, labels=np.full(100, 2), name="b")]
    V = rng.normal(0, 1, (40, 4))
    for seed in range(20):
        res = dpsumm.summarize(owners, V, 70, method=dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=(0, 1, 2)), dim=64),
                               validation_labels=np.zeros(40, int), gamma=0.3, random_state=seed, progress=False)
        asked = {o: sum(q) for o, q in res.extra["label_quotas"].items()}
        assert len(res) == 70 and not [e for e in res.events if e.get("event") in ("short", "excluded")], seed
        # each owner sold what it was asked for, or all its rows
        assert res.accessed.per_owner == {o: min(asked[o], 100) for o in asked}, seed


def test_the_default_purchase_is_nominees_and_the_deprecated_label_set_is_the_label_purchase():
    assert dpsumm.Nominations().purchase == dpsumm.Nominees() and dpsumm.Nominations().purchase.name == "nominees"
    with pytest.warns(DeprecationWarning, match="ByLabel"):
        legacy = dpsumm.Nominations(dim=64, label_set=LABELS)
    assert type(legacy.purchase) is dpsumm.ByLabel and legacy.purchase == METHOD.purchase
    assert legacy.needs_labels and METHOD.needs_labels and not dpsumm.Nominations().needs_labels
    owners, labels, validation, yv = label_shift()
    labelled = [dpsumm.Owner(o, labels=y) for o, y in zip(owners, labels)]
    runs = [dpsumm.summarize(labelled, validation, 20, method=m, gamma=0.3, progress=False, validation_labels=yv,
                             random_state=3)
            for m in (legacy, METHOD)]
    # The deprecated spelling is the label purchase, run for run: same rows, same releases, same ledger.
    assert runs[0].extra["purchase"] == runs[1].extra["purchase"] == "labels"
    assert np.array_equal(runs[0].owner, runs[1].owner) and np.array_equal(runs[0].index, runs[1].index)
    assert runs[0].extra["label_quotas"] == runs[1].extra["label_quotas"]
    assert runs[0].privacy.epsilon("owners", 1e-6) == runs[1].privacy.epsilon("owners", 1e-6) > 0.97
    assert runs[0].accessed.total <= 3 * 20
    # Without one it is the nominees purchase: the owners release nothing (epsilon 0) and K * 2 * size rows are bought.
    plain = dpsumm.summarize(owners, validation, 20, method=dpsumm.Nominations(dim=64), gamma=0.3, progress=False,
                             random_state=3)
    assert plain.extra["purchase"] == "nominees" and plain.extra["owner_epsilon"] == 0.0
    assert plain.accessed.total == sum(min(40, len(o)) for o in owners)


def test_the_label_purchase_beats_uniform_sampling_on_a_label_shift():
    """The point of the purchase: on a label shift its summary's MMD² is below uniform sampling's."""
    from dpsumm.metrics import mmd2

    owners, labels, validation, yv = label_shift(seed=2, n=300)
    ours, uni = [], []
    for seed in range(3):
        res = dpsumm.summarize([dpsumm.Owner(o, labels=y) for o, y in zip(owners, labels)], validation, 30,
                               validation_labels=yv, random_state=seed, **KW)
        ours.append(mmd2(res.points, validation, 0.3))
        u = dpsumm.summarize(owners, validation, 30, "uniform", gamma=0.3, random_state=seed, progress=False)
        uni.append(mmd2(u.points, validation, 0.3))
    assert np.mean(ours) < 0.5 * np.mean(uni)


def run_recorded(owners, labels, validation, yv, size, seed, replace=None):
    replace = replace or {}
    parties = {f"owner-{k}": Recorder(OwnerParty(np.asarray(o), y, f"owner-{k}", rng=owner_stream(seed, f"owner-{k}")),
                                      replace.get(f"owner-{k}"))
               for k, (o, y) in enumerate(zip(owners, labels))}
    parties["consumer"] = Recorder(ConsumerParty(np.asarray(validation), dpsumm.privacy.Csprng(seed).derive("consumer"),
                                                 labels=yv), replace.get("consumer"))
    res = dpsumm.summarize([dpsumm.Owner(o, labels=y) for o, y in zip(owners, labels)], validation, size,
                           validation_labels=yv, random_state=seed, transport=InProcessTransport(parties), **KW)
    return res, parties


def test_an_owners_view_changes_only_through_released_values():
    """Owner 0's messages are a function of its own data, public numbers and the other parties' DP releases:
    replace every other owner's rows and the consumer's, feed the aggregator the first run's releases, and owner 0
    receives byte-identical messages; without that substitution they differ (the test can fail)."""
    owners, labels, validation, yv = label_shift(seed=3)
    rng = np.random.default_rng(9)
    changed = [owners[0]] + [rng.normal(loc=3.0, size=o.shape) for o in owners[1:]]
    changed_labels = [labels[0]] + [rng.choice(3, size=len(y), p=[0.05, 0.05, 0.9]) for y in labels[1:]]
    yv2 = np.where(rng.random(len(yv)) < 0.5, 1, yv)
    _, a = run_recorded(owners, labels, validation, yv, 15, seed=5)
    kinds = [pickle.loads(b)["kind"] for b in a["owner-0"].received]
    assert kinds == ["label_release_request", "label_sale_request"]
    _, b = run_recorded(changed, changed_labels, validation, yv2, 15, seed=5)
    assert a["owner-0"].received[0] == b["owner-0"].received[0]  # the first request is public
    assert a["owner-0"].received != b["owner-0"].received
    released = {name: a[name].replies for name in a if name != "owner-0"}
    _, c = run_recorded(changed, changed_labels, validation, yv2, 15, seed=5, replace=released)
    assert a["owner-0"].received == c["owner-0"].received


class Liar(OwnerParty):
    """An owner that misreports its noise, sells labels it was not asked for, or sells rows without labels."""

    def __init__(self, data, labels, mode, name="owner-1"):
        super().__init__(data, labels, name, rng=owner_stream(0, name))
        self.mode = mode

    def handle(self, message: Message) -> Message:
        reply = super().handle(message)
        if self.mode == "sigma" and isinstance(reply, LabelRelease):
            return LabelRelease(n_rows=reply.n_rows, values=reply.values, sigma=reply.sigma * 0.9,
                               granularity=reply.granularity)
        if isinstance(reply, LabelSale) and len(reply.tokens):
            if self.mode in ("label", "hidden"):
                # "label": a label outside the set; "hidden": everything as label 1, which it holds, claiming to
                # hold none of the labels asked for (its released counts say otherwise)
                labs = np.full(len(reply.tokens), 7 if self.mode == "label" else 1)
                return LabelSale(n_rows=reply.n_rows, tokens=reply.tokens, hashes=reply.hashes, points=reply.points,
                                  labels=labs)
            if self.mode == "surplus":  # one row more than asked, hashed and labelled correctly
                from dpsumm.hashing import RFFHasher

                extra = int(np.setdiff1d(np.arange(reply.n_rows), reply.tokens)[0])
                tokens = np.sort(np.append(reply.tokens, extra))
                h = RFFHasher(message.n_features, dim=message.dim, gamma=message.gamma, seed=message.hash_seed)
                return LabelSale(n_rows=reply.n_rows, tokens=tokens, hashes=h.transform(self._data[tokens]),
                                  points=np.array(self._data[tokens]), labels=np.asarray(self._labels)[tokens])
            if self.mode == "unlabelled":
                return LabelSale(n_rows=reply.n_rows, tokens=reply.tokens, hashes=reply.hashes, points=reply.points,
                                  labels=None)
            if self.mode == "rows":
                pts = reply.points.copy()
                pts[0, 0] += 1e-3
                return LabelSale(n_rows=reply.n_rows, tokens=reply.tokens, hashes=reply.hashes, points=pts,
                                  labels=reply.labels)
        return reply


@pytest.mark.parametrize("mode,phase,why,n,liar", [("sigma", "label-release", "sigma", 200, 1),
                                                   ("label", "label-sale", "outside the label set", 200, 1),
                                                   ("surplus", "label-sale", "beyond the labels' asks", 200, 1),
                                                   # owner 0 holds 1,184 rows of label 0 (released ~1,184 +- 14)
                                                   ("hidden", "label-sale", "noise sigmas above", 2000, 0),
                                                   ("unlabelled", "label-sale", "without their labels", 200, 1),
                                                   ("rows", "label-sale", "do not hash", 200, 1)])
def test_a_faulty_owner_is_excluded_and_the_run_completes(mode, phase, why, n, liar):
    owners, labels, validation, yv = label_shift(seed=4, n=n)
    parties = {f"owner-{k}": OwnerParty(np.asarray(o), y, f"owner-{k}", rng=owner_stream(0, f"owner-{k}"))
               for k, (o, y) in enumerate(zip(owners, labels))}
    parties[f"owner-{liar}"] = Liar(np.asarray(owners[liar]), labels[liar], mode, f"owner-{liar}")
    parties["consumer"] = ConsumerParty(np.asarray(validation), dpsumm.privacy.Csprng(0).derive("consumer"), labels=yv)
    res = dpsumm.summarize([dpsumm.Owner(o, labels=y) for o, y in zip(owners, labels)], validation, 10,
                           validation_labels=yv, random_state=0, transport=InProcessTransport(parties), **KW)
    excluded = [e for e in res.events if e.get("event") == "excluded"]
    assert [e["owner"] for e in excluded] == [f"owner-{liar}"]
    assert excluded[0]["phase"] == phase and why in excluded[0]["reason"]
    assert len(res) == 10 and liar not in set(res.owner.tolist())


class LyingConsumer(ConsumerParty):
    """A consumer whose histogram release is not the mechanism the ledger records."""

    def __init__(self, *args, mode: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.mode = mode

    def handle(self, message):
        reply = super().handle(message)
        if self.mode == "scale":  # claims less noise than the mechanism's 2 / epsilon_v
            return dataclasses.replace(reply, scale=1.0)
        if self.mode == "fraction":  # counts that integer counts + integer noise cannot give
            return dataclasses.replace(reply, counts=reply.counts + 0.5)
        if self.mode == "shape":
            return dataclasses.replace(reply, counts=reply.counts[:-1])
        return dataclasses.replace(reply, scale="2.0")


@pytest.mark.parametrize("mode,why", [("scale", "scale"), ("fraction", "not integer"), ("shape", "malformed"),
                                      ("type", "scale")])
def test_a_consumer_whose_release_is_not_the_recorded_mechanism_is_refused(mode, why):
    """The aggregator recomputes the consumer's scale (2 / epsilon_v) and checks the histogram's shape and that it
    is integer: a release the ledger would misstate stops the run before any purchase."""
    owners, labels, validation, yv = label_shift()
    asked: list[str] = []

    class Owner(OwnerParty):
        def handle(self, message):
            asked.append(type(message).__name__)
            return super().handle(message)

    parties = {f"owner-{k}": Owner(np.asarray(o), y, f"owner-{k}", rng=owner_stream(0, f"owner-{k}"))
               for k, (o, y) in enumerate(zip(owners, labels))}
    parties["consumer"] = LyingConsumer(np.asarray(validation), dpsumm.privacy.Csprng(0), labels=yv, mode=mode)
    with pytest.raises(ProtocolError, match=why):
        dpsumm.summarize([dpsumm.Owner(o, labels=y) for o, y in zip(owners, labels)], validation, 10,
                         validation_labels=yv, random_state=0, transport=InProcessTransport(parties), **KW)
    assert asked and "LabelSaleRequest" not in asked  # the owners released their counts; nobody was asked to sell


def test_a_consumer_without_labels_is_refused_before_any_release():
    owners, labels, validation, yv = label_shift()
    parties = {f"owner-{k}": OwnerParty(np.asarray(o), y, f"owner-{k}") for k, (o, y) in enumerate(zip(owners, labels))}
    parties["consumer"] = ConsumerParty(np.asarray(validation), dpsumm.privacy.Csprng(0))
    with pytest.raises(ProtocolError, match="validation_labels"):
        dpsumm.summarize([dpsumm.Owner(o, labels=y) for o, y in zip(owners, labels)], validation, 10, random_state=0,
                         transport=InProcessTransport(parties), **KW)


# ---------------------------------------------------------------------------------- bad input


def test_bad_options_and_inputs_are_refused_naming_the_argument():
    owners, labels, validation, yv = label_shift()
    labelled = [dpsumm.Owner(o, labels=y) for o, y in zip(owners, labels)]
    cases = [
        (lambda: dpsumm.ByLabel(), "label_set"),
        (lambda: dpsumm.Nominations(purchase="quotas"), "purchase"),  # removed in 0.2
        (lambda: dpsumm.Nominations(purchase="labels"), "label_set"),  # the deprecated spelling, still validated
        (lambda: dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=(0, 1)), reveal="hashes"), "purchase"),
        (lambda: dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=(0, 1)), choice="hashes"), "purchase"),
        (lambda: dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=(0, 1)), validation_release="mwem"),
         "purchase"),
        (lambda: dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=(0, 1)), nominees=5), "nominees"),
        (lambda: dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=(0, 1)), candidates=5), "candidates"),
        (lambda: dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=(0, 1)), temperature=0.5), "temperature"),
        (lambda: dpsumm.Nominations(purchase="labels_please"), "purchase"),
        (lambda: dpsumm.ByLabel(label_set=()), "label_set"),
        (lambda: dpsumm.ByLabel(label_set=(0, 0)), "label_set"),
        (lambda: dpsumm.ByLabel(label_set=(0, "a")), "label_set"),
        (lambda: dpsumm.ByLabel(label_set=(0, float("nan"))), "label_set"),
        (lambda: dpsumm.ByLabel(label_set=5), "label_set"),
        (lambda: dpsumm.summarize(labelled, validation, 10, **KW), "validation_labels"),
        (lambda: dpsumm.summarize(owners, validation, 10, validation_labels=yv, **KW), "owners"),
        (lambda: dpsumm.summarize(labelled, validation, 10, validation_labels=yv[:-1], **KW), "validation_labels"),
        (lambda: dpsumm.summarize(labelled, validation, 10, validation_labels=np.where(yv == 0, np.nan, 1.0), **KW),
         "validation_labels"),
        (lambda: dpsumm.summarize(labelled, validation, 10, validation_labels=yv, gamma=0.3, progress=False),
         "validation_labels"),
        (lambda: dpsumm.summarize(labelled, validation, 10, validation_labels=yv.astype(str), **KW),
         "validation_labels"),
        # owners whose labels lie outside the label set: nothing they hold is ever sold
        (lambda: dpsumm.summarize([dpsumm.Owner(o, labels=y + 7) for o, y in zip(owners, labels)], validation, 10,
                                  validation_labels=yv, **KW), "owners"),
        # 3 rows per owner in the set, 12 in all: a summary of 20 cannot be filled
        (lambda: dpsumm.summarize([dpsumm.Owner(o, labels=np.where(np.arange(len(y)) < 3, y, 9))
                                   for o, y in zip(owners, labels)], validation, 20, validation_labels=yv, **KW),
         "size"),
    ]
    for build, arg in cases:
        with pytest.raises(InvalidParameterError) as info:
            build()
        assert info.value.argument == arg, (arg, info.value)


@settings(max_examples=40, deadline=None)
@given(st.one_of(st.none(), st.integers(), st.text(max_size=3), st.lists(st.integers(0, 3), max_size=4),
                 st.lists(st.floats(allow_nan=True), min_size=1, max_size=3)))
def test_any_label_set_is_accepted_or_refused_with_invalid_parameter(value):
    try:
        m = dpsumm.ByLabel(label_set=value)
    except InvalidParameterError as exc:
        assert exc.argument == "label_set"
    else:
        assert isinstance(m.label_set, tuple) and len(set(m.label_set)) == len(m.label_set) > 0


def test_the_estimator_takes_the_validation_labels_as_y():
    owners, labels, validation, yv = label_shift()
    labelled = [dpsumm.Owner(o, labels=y) for o, y in zip(owners, labels)]
    est = dpsumm.Summarizer(12, method=METHOD, gamma=0.3, random_state=0, progress=False).fit(labelled, validation, yv)
    res = dpsumm.summarize(labelled, validation, 12, validation_labels=yv, random_state=0, **KW)
    np.testing.assert_array_equal(est.points_, res.points)
    assert est.privacy_.certified("owners")
    with pytest.raises(InvalidParameterError, match="validation_labels"):
        dpsumm.Summarizer(12, gamma=0.3, random_state=0, progress=False).fit(labelled, validation, yv)


def test_label_counts_equal_a_count_per_label():
    from dpsumm.parties import label_counts

    rng = np.random.default_rng(3)
    y = rng.integers(-2, 12, size=500)
    for label_set in (np.arange(10), np.array([7, 3, 11, 0]), np.array([2.0, 5.5])):
        want = [np.count_nonzero(y == lab) for lab in label_set]
        assert label_counts(y, label_set).tolist() == want
    ys = np.array(["cat", "dog", "cat", "emu"])
    assert label_counts(ys, np.array(["emu", "cat", "ant"])).tolist() == [1, 2, 0]
    assert label_counts(ys, np.array([0, 1])).tolist() == [0, 0]
    assert label_counts(y, np.array(["a"])).tolist() == [0]
    assert label_counts(None, np.array([0, 1])).tolist() == [0, 0]


_ANY = st.one_of(st.none(), st.integers(-3, 3), st.floats(allow_nan=True, allow_infinity=True),
                 st.lists(st.floats(-5, 5), max_size=4), st.lists(st.lists(st.floats(allow_nan=True), max_size=3), max_size=3),
                 st.text(max_size=3))


@settings(max_examples=150, deadline=None)
@given(means=_ANY, noise=_ANY, n=_ANY, counts=_ANY, consumer=_ANY, sigma=_ANY)
def test_the_cell_functions_refuse_bad_input_naming_it(means, noise, n, counts, consumer, sigma):
    """Whatever they are given, the label purchase's public post-processing functions return or raise
    InvalidParameterError naming an argument: never another exception."""
    cells = LabelCells(labels=np.array([0]), owners=((0,),), centres=np.zeros((1, 2)), bias=np.zeros(1))
    calls = [lambda: owner_groups(means, noise, n), lambda: label_cells(counts, means, n, sigma),
             lambda: quotas_from_cells(consumer, 1.0, 10, cells, counts, 3),
             lambda: cell_threshold(3, 10, sigma)]
    for call in calls:
        try:
            call()
        except InvalidParameterError as err:
            assert err.argument


def test_a_summary_short_of_size_says_so_in_its_events_and_repr():
    # 176 rows in the label set: the aggregator's quotas follow the owners' noisy counts, so a size this close to
    # what the owners hold can come out short; the result must then say so.
    rng = np.random.default_rng(0)
    owners = [dpsumm.Owner(rng.normal(size=(300, 5)), labels=np.where(rng.random(300) < 0.2, 1, 5)) for _ in range(3)]
    validation, yv = rng.normal(size=(40, 5)), rng.integers(0, 3, 40)
    outcomes = set()
    for size in (150, 176):
        res = dpsumm.summarize(owners, validation, size, method=dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=range(3))),
                               validation_labels=yv, random_state=0, progress=False)
        short = [e for e in res.events if e.get("event") == "short"]
        assert len(res) <= size
        assert bool(short) == (len(res) < size), (size, len(res), res.events)
        assert ("fewer rows than asked" in repr(res)) == (len(res) < size)
        outcomes.add(len(res) < size)
    assert outcomes == {False, True}  # both branches are exercised (seeded: deterministic)


@settings(max_examples=300, deadline=None)
@given(dtype=st.sampled_from(["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float64"]),
       values=st.lists(st.integers(-2**63, 2**64 - 1), min_size=0, max_size=40),
       allowed=st.lists(st.integers(-2**63, 2**63 - 1), min_size=1, max_size=6))
def test_the_label_positions_by_table_equal_the_sorted_search_for_every_integer_dtype(dtype, values, allowed):
    """The owners' label positions (a lookup table for a set of integers over a small range) are the sorted search's,
    at the dtype's extremes too (a label below or above the set's range must not wrap into it); the count of rows in
    the set, which summarize checks before a label purchase, is np.isin's."""
    from dpsumm.parties import label_index, label_counts
    from dpsumm.strata import label_index_sorted as _label_index_sorted

    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        values = [min(max(v, int(info.min)), int(info.max)) for v in values] + [int(info.min), int(info.max)]
        near = [min(max(a, int(info.min)), int(info.max)) for a in allowed]
        allowed = allowed + near
    labels = np.asarray(values, dtype=dt)
    for subset in (allowed, allowed[:1], [a for a in allowed if abs(a) < 300] or [0]):
        arr = np.asarray(tuple(dict.fromkeys(subset)))  # a label set is distinct
        positions = _label_index_sorted(labels, arr)
        assert np.array_equal(label_index(labels, arr), positions)
        assert np.array_equal(label_counts(labels, arr), np.bincount(positions[positions >= 0], minlength=len(arr)))
        assert label_counts(labels, arr).sum() == int(np.isin(labels, arr).sum())


def test_cell_counts_equal_the_nearest_cell_of_the_rows_label_over_every_cell():
    """The consumer's counts per cell (each row scored against its own label's cells only) equal the definition: the
    first nearest cell, by ``||c||^2 - bias - 2 h.c``, among every cell with the other labels' cells masked; a row whose
    label has no cell, or is outside the set, is not counted."""
    from dpsumm.hashing import RFFHasher
    from dpsumm.messages import LabelHistogramRequest
    from dpsumm.parties import cell_counts

    rng = np.random.default_rng(11)
    for _ in range(40):
        L, J, n = int(rng.integers(1, 6)), int(rng.integers(1, 12)), int(rng.integers(1, 200))
        X, labels = rng.normal(size=(n, 3)), rng.integers(-1, L + 1, n)
        m = LabelHistogramRequest(label_set=np.arange(L), epsilon=1.0, send_rows=False, n_features=3, dim=8,
                                  gamma=0.5, hash_seed="s", cell_labels=rng.integers(0, L, J),
                                  centres=rng.normal(size=(J, 8)) * 0.3, bias=rng.random(J) * 0.01)
        H = np.asarray(RFFHasher(3, dim=8, gamma=0.5, seed="s").transform(X), dtype=np.float64)
        score = (m.centres ** 2).sum(1) - m.bias - 2.0 * H @ m.centres.T
        score[m.cell_labels[None, :] != labels[:, None]] = np.inf
        want = np.zeros(J)
        for row in score:
            if np.isfinite(row).any():
                want[np.argmin(row)] += 1
        assert np.array_equal(cell_counts(X, labels, m), want)


def test_the_consumers_histogram_is_its_counts_plus_the_discrete_laplace():
    """The consumer's one release is its counts per cell plus the discrete Laplace of scale 2 / epsilon_v drawn from
    its own stream (equality with the sampler), and that sampler's noise has the discrete Laplace's pmf: chi-square
    over z in [-6, 6] and the two tails (15 cells, 14 dof), critical value 36.12 at alpha = 0.001, fixed seed."""
    from dpsumm.hashing import RFFHasher
    from dpsumm.messages import LabelHistogramRequest
    from dpsumm.parties import cell_counts, count_release_event
    from dpsumm.privacy import laplace_count_release

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), rng.integers(0, 3, size=40)
    h = RFFHasher(3, dim=16, gamma=0.5, seed="cells:t")
    req = LabelHistogramRequest(label_set=np.array([0, 1, 2]), epsilon=0.5, send_rows=False, n_features=3, dim=16,
                                gamma=0.5, hash_seed="cells:t", cell_labels=np.array([0, 1, 2, 2]),
                                centres=h.transform(rng.normal(size=(4, 3))).astype(np.float64), bias=np.zeros(4))
    reply = ConsumerParty(X, dpsumm.privacy.Csprng(7), labels=y).handle(req)
    assert reply.scale == 4.0
    # its stream: the second of the consumer's release streams (ConsumerParty.RELEASE_STREAMS: g~'s, then this one)
    root = dpsumm.privacy.Csprng(7)
    root.derive("validation-gaussian")
    expected = laplace_count_release(cell_counts(X, y, req), count_release_event(0.5), root.derive("validation-labels"))
    np.testing.assert_array_equal(reply.counts, expected)
    noise = laplace_count_release(np.zeros(20_000), count_release_event(1.0), dpsumm.privacy.Csprng(3))
    assert (noise == np.round(noise)).all()
    r = math.exp(-1 / 2.0)
    norm = (1 - r) / (1 + r)
    probs = np.array([norm * r ** 7 / (1 - r)] + [norm * r ** abs(z) for z in range(-6, 7)] + [norm * r ** 7 / (1 - r)])
    observed = np.array([(noise < -6).sum()] + [(noise == z).sum() for z in range(-6, 7)] + [(noise > 6).sum()])
    chi2 = float((((observed - len(noise) * probs) ** 2) / (len(noise) * probs)).sum())
    assert chi2 < 36.12, chi2
    with pytest.raises(InvalidParameterError) as info:
        laplace_count_release([1.5, 2.0], count_release_event(1.0), dpsumm.privacy.Csprng(0))
    assert info.value.argument == "counts"
    with pytest.raises(InvalidParameterError) as info:
        laplace_count_release([1.0], accounting.LaplaceEvent(1.0, 2.0, "replace-one"), dpsumm.privacy.Csprng(0))
    assert info.value.argument == "event"
    with pytest.raises(InvalidParameterError) as info:
        count_release_event(0.0)
    assert info.value.argument == "epsilon"


@pytest.mark.parametrize("value", [-0.1, 1.0, 1.5, float("nan"), float("inf"), "0.3", True, None, [0.3]])
def test_a_bad_sale_tilt_share_is_refused_naming_it(value):
    with pytest.raises(InvalidParameterError) as info:
        dpsumm.ByLabel(label_set=LABELS, sale_tilt_share=value)
    assert info.value.argument == "sale_tilt_share"


def test_the_sale_tilt_share_applies_only_to_the_label_purchase():
    for other in (dpsumm.Nominees, dpsumm.Winners):
        with pytest.raises(dpsumm.DpsummError) as info:
            other(sale_tilt_share=0.5)
        assert info.value.argument == "sale_tilt_share"
    with pytest.raises(dpsumm.DpsummError) as info:
        dpsumm.Nominations(sale_tilt_share=0.5)
    assert info.value.argument == "sale_tilt_share"
    assert dpsumm.ByLabel(label_set=LABELS, sale_tilt_share=0.3).sale_tilt_share == 0.3
    assert dpsumm.ByLabel(label_set=LABELS).sale_tilt_share == 0.0


def test_a_validation_budget_the_tilts_gaussian_cannot_meet_is_refused_before_any_release():
    """The g~ of the tilted sale is calibrated at (share * epsilon_v, delta_v) before anybody is asked anything: a
    budget so small that no discrete Gaussian meets it (epsilon_v = 1e-3: a noise multiplier of 7e5 at 0.3e-3,
    beyond the exact sampler's range) is refused naming `privacy`; without the tilt the histogram alone runs."""
    owners, labels, validation, yv = label_shift()
    with pytest.raises(InvalidParameterError) as info:
        dpsumm.summarize([dpsumm.Owner(o, labels=y) for o, y in zip(owners, labels)], validation, 10,
                         validation_labels=yv, random_state=0, privacy=dpsumm.Budget(validation_epsilon=1e-3,
                                                                                      validation_delta=1e-6),
                         **{**KW, "method": TILTED})
    assert info.value.argument == "privacy"
    res = dpsumm.summarize([dpsumm.Owner(o, labels=y) for o, y in zip(owners, labels)], validation, 10,
                           validation_labels=yv, random_state=0, privacy=dpsumm.Budget(validation_epsilon=1e-3,
                                                                                       validation_delta=1e-6), **KW)
    assert len(res) == 10
