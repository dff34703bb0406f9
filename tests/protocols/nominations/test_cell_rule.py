"""The cell family's rule (dpsumm.protocols.nominations.cell_rule): the keys the parties count and sell their rows by,
an owner's counts per key and rows sold per key, the consumer's counts per cell."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpsumm
from dpsumm import InvalidParameterError, accounting
from dpsumm.errors import ProtocolError
from dpsumm.hashing import RFFHasher
from dpsumm.parties import ConsumerParty
from dpsumm.protocols.nominations.cell_messages import CellHistogramRequest
from dpsumm.protocols.nominations.cell_rule import cell_rows, histogram_counts, key_counts, row_cells, substitute_counts
from dpsumm.strata import stratum_index


def cell_counts(X: np.ndarray, keys: np.ndarray, m: CellHistogramRequest) -> np.ndarray:
    """The consumer's counts per cell for a histogram request."""
    return histogram_counts(
        X,
        keys,
        m.key_set,
        m.cell_keys,
        m.centres,
        m.bias,
        m.dim,
        lambda: RFFHasher(m.n_features, dim=m.dim, gamma=m.gamma, seed=m.hash_seed),
    )


def test_cell_counts_put_each_row_in_the_nearest_cell_of_its_label():
    """Rows at A, A, B of label 0, one at A of label 1 (no cell of label 1), one of a label outside the set; cells of
    label 0 centred at h_c(A) and h_c(B), one of label 2 at h_c(A): counts 2, 1, 0. A bias lowers a centre's score
    (the expected squared norm of its noise), so a large one moves rows to that cell."""

    A, B = np.zeros(3), np.array([3.0, 0.0, 0.0])
    X = np.stack([A, A, B, A, B])
    y = np.array([0, 0, 0, 1, 7])
    h = RFFHasher(3, dim=64, gamma=0.5, seed="cells:x")
    centres = h.transform(np.stack([A, B, A])).astype(np.float64)

    def req(bias):
        return CellHistogramRequest(
            key_set=np.array([0, 1, 2]),
            epsilon=1.0,
            send_rows=False,
            n_features=3,
            dim=64,
            gamma=0.5,
            hash_seed="cells:x",
            cell_keys=np.array([0, 0, 2]),
            centres=centres,
            bias=np.asarray(bias, float),
        )

    assert cell_counts(X, y, req([0.0, 0.0, 0.0])).tolist() == [2.0, 1.0, 0.0]
    assert cell_counts(X, y, req([0.0, 10.0, 0.0])).tolist() == [0.0, 3.0, 0.0]
    with pytest.raises(ProtocolError):
        cell_counts(X, y, dataclasses.replace(req([0.0, 0.0, 0.0]), cell_keys=np.array([0, 0, 3])))
    with pytest.raises(ProtocolError):
        cell_counts(X, y, dataclasses.replace(req([0.0, 0.0, 0.0]), centres=centres[:2]))


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
    from dpsumm.metrics import mmd2

    rng = np.random.default_rng(0)
    labels = np.array([0] * 300 + [1] * 10 + [2] * 5)
    X = np.concatenate([rng.normal(size=(300, 4)) * np.array([1.0, 2.0, 0.5, 1.0]), rng.normal(size=(15, 4)) + 3])
    hasher = RFFHasher(4, dim=256, gamma=0.2, seed=1)
    wins = 0
    for seed in range(40):
        tok, hashes = cell_rows(
            X, labels, np.array([0, 1]), np.array([20, 12]), hasher, candidates=128, sample_seed=seed
        )
        np.testing.assert_array_equal(hashes, hasher.transform(X[tok]))
        assert np.all(np.diff(tok) > 0)
        # all 10 of label 1, the 2 it lacks from label 0 (the only other label asked about), none of label 2
        assert (labels[tok] == 0).sum() == 22 and (labels[tok] == 1).sum() == 10 and len(tok) == 32
        herded = X[tok[labels[tok] == 0]]
        uniform = X[rng.choice(300, size=22, replace=False)]
        wins += mmd2(herded, X[:300], 0.2) < mmd2(uniform, X[:300], 0.2)
    assert wins >= 36
    assert cell_rows(X, labels, np.array([2]), np.array([9]), hasher, candidates=36, sample_seed=0)[0].tolist() == [
        310,
        311,
        312,
        313,
        314,
    ]
    assert cell_rows(X, None, np.array([0]), np.array([3]), hasher, candidates=12, sample_seed=0)[0].tolist() == []


def test_label_rows_draws_uniformly_where_not_herded():
    """With ``herded`` False for a label the owner sells a uniform sample of its rows of it: the asked count, rows
    of that label only, hashes equal to h1 of the rows; over 200 seeds every row of the label is sold about equally
    often (chi-square over 30 rows, 29 degrees of freedom, p = 0.001 threshold 58.3), unlike herding, which keeps
    choosing the label's central rows. ``herded=None`` is herding for every label."""

    rng = np.random.default_rng(1)
    labels = np.array([0] * 30 + [1] * 40)
    X = rng.normal(size=(70, 3))
    hasher = RFFHasher(3, dim=64, gamma=0.3, seed=2)
    sold = np.zeros(30)
    herd_sold = np.zeros(30)
    for seed in range(200):
        tok, hashes = cell_rows(
            X,
            labels,
            np.array([0, 1]),
            np.array([3, 5]),
            hasher,
            candidates=32,
            sample_seed=seed,
            herded=np.array([False, True]),
        )
        np.testing.assert_array_equal(hashes, hasher.transform(X[tok]))
        assert np.all(np.diff(tok) > 0) and (labels[tok] == 0).sum() == 3 and (labels[tok] == 1).sum() == 5
        sold += np.bincount(tok[labels[tok] == 0], minlength=30)
        default = cell_rows(X, labels, np.array([0, 1]), np.array([3, 5]), hasher, candidates=32, sample_seed=seed)
        herd = cell_rows(
            X,
            labels,
            np.array([0, 1]),
            np.array([3, 5]),
            hasher,
            candidates=32,
            sample_seed=seed,
            herded=np.array([True, True]),
        )
        np.testing.assert_array_equal(default[0], herd[0])
        herd_sold += np.bincount(herd[0][labels[herd[0]] == 0], minlength=30)
    expected = 200 * 3 / 30
    assert ((sold - expected) ** 2 / expected).sum() < 58.3
    assert ((herd_sold - expected) ** 2 / expected).sum() > 58.3


def test_a_tilted_sale_leans_toward_the_target_inside_a_label():
    """One label whose rows come from two clusters A (x ~ +2) and B (x ~ -2), 150 each; the target is A's mean hash.
    Untilted, a herded sale of 40 rows represents the label (about half A); tilted at T = 0.05 toward A, at least
    35 of the 40 are A rows, herded and drawn alike; with the tilt pointed at B, at most 5 are. Fixed seeds."""

    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(2.0, 0.5, size=(150, 3)), rng.normal(-2.0, 0.5, size=(150, 3))])
    y = np.zeros(300, dtype=np.int64)
    is_a = np.arange(300) < 150
    hasher = RFFHasher(3, dim=128, gamma=0.3, seed=1)
    H = hasher.transform(X).astype(np.float64)
    toward_a, toward_b = H[is_a].mean(0), H[~is_a].mean(0)
    counts = np.array([40])
    plain, _ = cell_rows(X, y, np.array([0]), counts, hasher, candidates=160, sample_seed=3)
    assert 10 <= is_a[plain].sum() <= 30
    for herded in (True, False):
        mode = np.array([herded])
        a, ha = cell_rows(
            X,
            y,
            np.array([0]),
            counts,
            hasher,
            candidates=160,
            sample_seed=3,
            herded=mode,
            target=toward_a,
            temperature=0.05,
        )
        b, _ = cell_rows(
            X,
            y,
            np.array([0]),
            counts,
            hasher,
            candidates=160,
            sample_seed=3,
            herded=mode,
            target=toward_b,
            temperature=0.05,
        )
        assert len(a) == len(b) == 40 and len(np.unique(a)) == 40
        assert is_a[a].sum() >= 35 and is_a[b].sum() <= 5, (herded, is_a[a].sum(), is_a[b].sum())
        np.testing.assert_allclose(ha, hasher.transform(X[a]), rtol=0, atol=1e-6)


def test_label_counts_equal_a_count_per_label():

    rng = np.random.default_rng(3)
    y = rng.integers(-2, 12, size=500)
    for label_set in (np.arange(10), np.array([7, 3, 11, 0]), np.array([2.0, 5.5])):
        want = [np.count_nonzero(y == lab) for lab in label_set]
        assert key_counts(y, label_set).tolist() == want
    ys = np.array(["cat", "dog", "cat", "emu"])
    assert key_counts(ys, np.array(["emu", "cat", "ant"])).tolist() == [1, 2, 0]
    assert key_counts(ys, np.array([0, 1])).tolist() == [0, 0]
    assert key_counts(y, np.array(["a"])).tolist() == [0]
    assert key_counts(None, np.array([0, 1])).tolist() == [0, 0]


@settings(max_examples=300, deadline=None)
@given(
    dtype=st.sampled_from(["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float64"]),
    values=st.lists(st.integers(-(2**63), 2**64 - 1), min_size=0, max_size=40),
    allowed=st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=6),
)
def test_the_label_positions_by_table_equal_the_sorted_search_for_every_integer_dtype(dtype, values, allowed):
    """The owners' label positions (a lookup table for a set of integers over a small range) are the sorted search's,
    at the dtype's extremes too (a label below or above the set's range must not wrap into it); the count of rows in
    the set, which summarize checks before a label purchase, is np.isin's."""
    from dpsumm.strata import label_index
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
        assert np.array_equal(key_counts(labels, arr), np.bincount(positions[positions >= 0], minlength=len(arr)))
        assert key_counts(labels, arr).sum() == int(np.isin(labels, arr).sum())


def test_cell_counts_equal_the_nearest_cell_of_the_rows_label_over_every_cell():
    """The consumer's counts per cell (each row scored against its own label's cells only) equal the definition: the
    first nearest cell, by ``||c||^2 - bias - 2 h.c``, among every cell with the other labels' cells masked; a row whose
    label has no cell, or is outside the set, is not counted."""

    rng = np.random.default_rng(11)
    for _ in range(40):
        L, J, n = int(rng.integers(1, 6)), int(rng.integers(1, 12)), int(rng.integers(1, 200))
        X, labels = rng.normal(size=(n, 3)), rng.integers(-1, L + 1, n)
        m = CellHistogramRequest(
            key_set=np.arange(L),
            epsilon=1.0,
            send_rows=False,
            n_features=3,
            dim=8,
            gamma=0.5,
            hash_seed="s",
            cell_keys=rng.integers(0, L, J),
            centres=rng.normal(size=(J, 8)) * 0.3,
            bias=rng.random(J) * 0.01,
        )
        H = np.asarray(RFFHasher(3, dim=8, gamma=0.5, seed="s").transform(X), dtype=np.float64)
        score = (m.centres**2).sum(1) - m.bias - 2.0 * H @ m.centres.T
        score[m.cell_keys[None, :] != labels[:, None]] = np.inf
        want = np.zeros(J)
        for row in score:
            if np.isfinite(row).any():
                want[np.argmin(row)] += 1
        assert np.array_equal(cell_counts(X, labels, m), want)


def test_the_consumers_histogram_is_its_counts_plus_the_discrete_laplace():
    """The consumer's one release is its counts per cell plus the discrete Laplace of scale 2 / epsilon_v drawn from
    its own stream (equality with the sampler), and that sampler's noise has the discrete Laplace's pmf: chi-square
    over z in [-6, 6] and the two tails (15 cells, 14 dof), critical value 36.12 at alpha = 0.001, fixed seed."""
    from dpsumm.privacy import count_release_event, laplace_count_release

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(40, 3)), rng.integers(0, 3, size=40)
    h = RFFHasher(3, dim=16, gamma=0.5, seed="cells:t")
    req = CellHistogramRequest(
        key_set=np.array([0, 1, 2]),
        epsilon=0.5,
        send_rows=False,
        n_features=3,
        dim=16,
        gamma=0.5,
        hash_seed="cells:t",
        cell_keys=np.array([0, 1, 2, 2]),
        centres=h.transform(rng.normal(size=(4, 3))).astype(np.float64),
        bias=np.zeros(4),
    )
    reply = ConsumerParty(X, dpsumm.privacy.Csprng(7), labels=y).handle(req)
    assert reply.scale == 4.0
    # its stream: the second of the consumer's release streams (cell_messages.CONSUMER_STREAMS: g~'s, then this one)
    root = dpsumm.privacy.Csprng(7)
    root.derive("validation-gaussian")
    expected = laplace_count_release(cell_counts(X, y, req), count_release_event(0.5), root.derive("validation-labels"))
    np.testing.assert_array_equal(reply.counts, expected)
    noise = laplace_count_release(np.zeros(20_000), count_release_event(1.0), dpsumm.privacy.Csprng(3))
    assert (noise == np.round(noise)).all()
    r = math.exp(-1 / 2.0)
    norm = (1 - r) / (1 + r)
    probs = np.array([norm * r**7 / (1 - r)] + [norm * r ** abs(z) for z in range(-6, 7)] + [norm * r**7 / (1 - r)])
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


def test_label_counts_move_by_at_most_sqrt2_for_any_replaced_row():
    """Every replacement of one row's label (in the set, out of it, float for int, a string, NaN) moves the count
    vector by at most sqrt(2) in L2, 1 when one side is outside the set; exhaustively over a small alphabet."""
    label_set = np.array([0, 1, 2])
    alphabet = [0, 1, 2, 1.0, 2.5, -1, np.nan, 7]
    base = np.array([0, 1, 1, 2, 2, 2, 5], dtype=np.float64)
    for i in range(len(base)):
        for new in alphabet:
            y = base.copy()
            y[i] = new
            move = np.linalg.norm(key_counts(y, label_set) - key_counts(base, label_set))
            assert move <= math.sqrt(2) + 1e-12
            inside = [v in (0.0, 1.0, 2.0) for v in (base[i], new)]
            if not all(inside):
                assert move <= 1.0
    strings = np.array(["a", "b", "c"])
    assert np.linalg.norm(key_counts(np.array(["a", "b"]), strings) - key_counts(np.array(["a", "z"]), strings)) == 1


def test_the_cells_are_the_product_of_the_levels_in_mixed_radix() -> None:
    cols = [np.array(["b", "a", "c", "z"]), np.array([1, 0, 1, 1])]
    np.testing.assert_array_equal(stratum_index(cols, (("a", "b", "c"), (0, 1))), [3, 0, 5, -1])
    X = np.array([[0.0], [1.0], [2.5], [9.0]])
    cells = row_cells(
        X,
        np.array([0, 1, 0, 1]),
        cols,
        levels=(("a", "b", "c"), (0, 1)),
        cross_labels=np.array([0, 1]),
        direction=np.array([1.0]),
        centre=np.array([0.5]),
        edges=np.array([0.0, 1.0]),
    )
    # label position x 6 strata x 3 bins (scores -0.5, 0.5, 2): (0, 3, bin 0) (1, 0, bin 1) (0, 5, bin 2) (outside)
    np.testing.assert_array_equal(cells, [0 * 18 + 3 * 3 + 0, 1 * 18 + 0 * 3 + 1, 0 * 18 + 5 * 3 + 2, -1])


def test_a_direction_in_random_features_bins_each_row_by_its_features_score() -> None:
    """The kernel space: a row's score is ``(h1(x) - centre) . direction`` in the map's random features, by hand."""
    from dpsumm.hashing import RFFHasher

    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 3))
    h = RFFHasher(3, dim=16, gamma=0.5, seed="direction:7")
    w = rng.normal(size=16)
    centre = rng.normal(size=16) * 0.1
    edges = np.array([-0.3, 0.0, 0.4])
    cells = row_cells(
        X, None, None, levels=None, cross_labels=None, direction=w, centre=centre, edges=edges, direction_map=h
    )
    score = (np.asarray(h.transform(X), dtype=np.float64) - centre) @ w
    np.testing.assert_array_equal(cells, np.searchsorted(edges, score, side="right"))
    assert len(set(cells.tolist())) == 4  # the case exercises every bin
    with pytest.raises(dpsumm.ProtocolError, match="16 random features"):
        row_cells(
            X,
            None,
            None,
            levels=None,
            cross_labels=None,
            direction=w[:3],
            centre=centre[:3],
            edges=edges,
            direction_map=h,
        )


def test_misplaced_rows_recomputes_the_label_and_bin_of_each_row_sold() -> None:
    """Exact small case: bins at edges 0 and 1 along the first feature, crossed with labels (0, 1). A claim is kept
    when the row's label and score put it in the claimed cell (a score on an edge in either bin it bounds), refused
    otherwise; a strata part is the owner's statement and is not recomputed."""
    from dpsumm.protocols.nominations.cell_rule import CellRule, misplaced_rows

    rule = CellRule(
        direction=np.array([1.0, 0.0]), centre=np.zeros(2), edges=np.array([0.0, 1.0]), cross_labels=np.array([0, 1])
    )
    points = np.array([[-1.0, 5.0], [0.5, 0.0], [2.0, 0.0], [1.0, 0.0]])
    labels = np.array([1, 0, 1, 0])
    truth = np.array([3, 1, 5, 2])  # label * 3 + bin
    assert not misplaced_rows(rule, points, labels, truth).any()
    assert not misplaced_rows(rule, points, labels, np.array([3, 1, 5, 1])).any()  # on the edge: either bin
    np.testing.assert_array_equal(misplaced_rows(rule, points, labels, np.array([4, 1, 2, 0])), [1, 0, 1, 1])
    np.testing.assert_array_equal(misplaced_rows(rule, points, None, truth), [1, 1, 1, 1])  # no labels sold
    strata = CellRule(levels='[["a", "b"]]')
    assert not misplaced_rows(strata, points, None, np.array([0, 1, 1, 0])).any()


@pytest.mark.parametrize(
    ("n", "c", "step"), [(1000, 37, 100), (1001, 5, 64), (5000, 400, 333), (300, 299, 7), (10, 3, 100)]
)
def test_the_candidates_drawn_in_pieces_are_the_smallest_of_one_draw(n: int, c: int, step: int) -> None:
    """A key's uniform candidates drawn a piece at a time (an owner of many rows) are the ``c`` smallest of the one
    draw of every row: the same candidates, whatever the piece size."""
    from dpsumm.privacy import Csprng
    from dpsumm.protocols.nominations.cell_rule import _smallest_draws

    whole = np.argpartition(Csprng(3).derive("k").uniform_array(n), c - 1)[:c]
    assert np.array_equal(np.sort(whole), np.sort(_smallest_draws(Csprng(3).derive("k"), n, c, step)))


def test_an_owners_cells_under_merged_bins_are_mapped_from_its_kept_cells() -> None:
    """The owner's memo keeps its cells under a rule; a sale under merged bins (its edges among the released ones,
    crossed with labels and strata) maps them in place, equal to scoring the rows again; an edge that is not among the
    kept ones scores them again; the memo holds one array of every row at a time."""
    from dpsumm.parties import OwnerParty
    from dpsumm.protocols.nominations import cell_rule

    rng = np.random.default_rng(5)
    n = 5000
    X = rng.normal(size=(n, 3)).astype(np.float32)
    labels, strata = rng.integers(0, 3, n), [rng.integers(0, 2, n)]
    owner = OwnerParty(X, labels=labels, strata=strata)
    h = RFFHasher(3, dim=16, gamma=0.5, seed="direction:3")
    w, centre = rng.normal(size=16), rng.normal(size=16) * 0.1
    edges = np.array([-0.6, -0.2, -0.2, 0.1, 0.5, 0.9])
    rule = dict(levels=((0, 1),), cross_labels=np.array([0, 1]), direction=w, centre=centre, direction_map=h)
    computed = []  # one entry per pass that scores the rows
    real = cell_rule._score_blocks

    def counted(*args: object, **kwargs: object) -> Iterator[tuple[int, np.ndarray]]:
        computed.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    cell_rule._score_blocks = counted  # type: ignore[assignment]
    try:
        first = row_cells(X, labels, strata, edges=edges, memo=owner.memo, **rule)  # type: ignore[arg-type]
        assert len(set(first.tolist())) > 20 and (first == -1).any()  # every part and rows outside the labels
        for kept in ([0, 1, 2, 4, 5], [1, 4, 5], [2, 5], []):  # each among the latest: a duplicate kept once, none
            direct = row_cells(X, labels, strata, edges=edges[kept], **rule)  # type: ignore[arg-type]
            got = row_cells(X, labels, strata, edges=edges[kept], memo=owner.memo, **rule)  # type: ignore[arg-type]
            np.testing.assert_array_equal(got, direct)
            assert got.dtype == direct.dtype == np.int32 and len(owner._memo) == 1
        assert len(computed) == 1 + 4  # the memo itself computed once; each direct call once
        row_cells(X, labels, strata, edges=np.array([0.0]), memo=owner.memo, **rule)  # type: ignore[arg-type]
        assert len(computed) == 6  # an edge not among the kept ones (none are): the rows scored again
    finally:
        cell_rule._score_blocks = real  # type: ignore[assignment]


def test_the_rows_sold_are_found_from_each_keys_ranks_in_pieces() -> None:
    """The rows at given ranks among each key's rows, found a piece of keys at a time, are those of a pass over
    every row, whatever the piece (one row, a prime number, all); keys outside the set are skipped."""
    from dpsumm.protocols.nominations.cell_rule import _key_ranks_rows

    rng = np.random.default_rng(6)
    keys = rng.integers(-1, 5, 1000).astype(np.int32)
    key_set = np.array([0, 1, 2, 3, 7])
    ranks = {j: np.sort(rng.choice(int((keys == k).sum()), 9, replace=False)) for j, k in enumerate(key_set[:4])}
    ranks[4] = np.zeros(0, dtype=np.int64)  # a key no row holds
    for step in (1, 37, 1000, 4096):
        got = _key_ranks_rows(keys, key_set, ranks, step=step)
        for j, r in ranks.items():
            np.testing.assert_array_equal(got[j], np.flatnonzero(keys == key_set[j])[r])


def test_scores_in_blocks_are_those_of_every_row_at_once() -> None:
    """A row's score along a direction in random features does not depend on the block it is scored in: the cells
    binned block by block are those of the whole array's scores."""
    from dpsumm import _core

    rng = np.random.default_rng(7)
    X = rng.normal(size=(70_000, 5)).astype(np.float32)  # more than one block of rows
    h = RFFHasher(5, dim=32, gamma=0.3, seed="direction:1")
    w, centre = rng.normal(size=32), rng.normal(size=32) * 0.1
    whole = _core.owner_hash_scores(X, h._projection, w, float(centre @ w))
    edges = np.quantile(whole, [0.1, 0.5, 0.9])
    cells = row_cells(
        X, None, None, levels=None, cross_labels=None, direction=w, centre=centre, edges=edges, direction_map=h
    )
    np.testing.assert_array_equal(cells, np.searchsorted(edges, whole, side="right"))
