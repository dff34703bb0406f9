"""dpsumm.kernels: best rows, the 8-bit bid index, MMD, the greedy and an owner's streaming nomination, each
against its numpy twin, by hand, and on bad input.
"""

from __future__ import annotations

import hashlib
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dpsumm
from dpsumm import InvalidParameterError, kernels, reference
from dpsumm import accounting as acc
from dpsumm import reference as ref
from dpsumm.kernels import (  # noqa: E402
    DEFAULT_CANDIDATE_FACTOR,
    BidIndex,
    Nomination,
    best_row,
    greedy_select,
    nominate,
    stochastic_greedy_select,
    stochastic_sample_size,
)
from refusal import refused
from thread_counts import digests_per_thread_count

RNG = np.random.default_rng(7)


VALIDATION = RNG.uniform(size=(20, 3))


def test_bid_index_from_rows_names_rows_and_the_unfitted_hasher():
    h = dpsumm.RFFHasher(3, dim=4)
    refused(lambda: dpsumm.kernels.BidIndex.from_rows(np.full((4, 3), np.nan), h), "rows")
    refused(lambda: dpsumm.kernels.BidIndex.from_rows(VALIDATION * 1e30, h), "rows")
    refused(lambda: dpsumm.kernels.BidIndex.from_rows(VALIDATION, dpsumm.RFFHasher(dim=4)), "hasher")
    fitted = dpsumm.RFFHasher(dim=4).fit(VALIDATION)
    assert dpsumm.kernels.BidIndex.from_rows(VALIDATION, fitted).n_rows == 20


KH = dpsumm.RFFHasher(3, dim=64, gamma=0.5, seed=0)


KX = RNG.uniform(size=(50, 3))


KHASH = KH.transform(KX)  # entries up to sqrt(2/64) = 0.18


KSTEP = np.where(np.arange(64) % 2, 1e308, -1e308)  # finite; scores h . v far beyond float64


@pytest.mark.parametrize(
    "call,argument",
    [
        # was: scores [inf, inf, inf]
        (lambda: kernels.greedy_select(KHASH, KSTEP, 3), "target"),
        # was: scores [1.7e308, inf, inf]
        (lambda: kernels.stochastic_greedy_select(KHASH, KSTEP, 3, 5), "target"),
        # was: a nan target (weights exp(inf - inf)), nominees chosen toward it
        (lambda: kernels.nominate(KX, KH, KSTEP, temperature=1.0, nominees=3, random_state=0), "g_tilde"),
        (lambda: kernels.nominate(KX, KH, KSTEP, temperature=1.0, nominees=3, sampling="top"), "g_tilde"),
        # was: accepted; s / T = inf for every row with a positive score, the Gumbel keys tied at +inf
        (
            lambda: kernels.nominate(KX, KH, KHASH.mean(0) * 1e10, temperature=1e-300, nominees=3, random_state=0),
            "g_tilde",
        ),
        # hashes that are not h1's: max|h| 3e38 times ||target||_1 4e270 (was: scores inf)
        (lambda: kernels.greedy_select(np.full((3, 4), 3e38), np.full(4, 1e270), 2), "target"),
    ],
)
def test_a_finite_vector_whose_scores_overflow_float64_is_refused(call, argument):
    err = refused(call, argument)
    assert "overflow float64" in str(err)


@pytest.mark.parametrize(
    "call,argument",
    [
        (lambda: kernels.best_row(KHASH, np.full(64, 1e308)), "v"),
        (lambda: kernels.best_row(np.full((3, 4), 1e39), np.ones(4)), "hashes"),
        (lambda: kernels.best_rows([KHASH], np.full(64, -4e38)), "v"),
        (lambda: kernels.best_rows([np.full((3, 4), 1e39)], np.ones(4)), "hashes"),
        (lambda: dpsumm.kernels.BidIndex.from_hashes(KHASH).best(np.full(64, 1e308)), "v"),
        (lambda: dpsumm.kernels.BidIndex.from_hashes(np.full((3, 4), 1e39)), "hashes"),
        (lambda: kernels.greedy_select(np.full((3, 4), 1e39), np.zeros(4), 2), "hashes"),
        (lambda: kernels.stochastic_greedy_select(np.full((3, 4), -1e39), np.zeros(4), 2, 2), "hashes"),
        # was: no refusal at all, the digests of float32 infinities
        (lambda: dpsumm.hashing.hash_digests(np.full((3, 4), 1e39)), "hashes"),
    ],
)
def test_values_beyond_float32_are_refused_before_the_cast_warns(call, argument):
    # Was: numpy's "overflow encountered in cast" RuntimeWarning, then "contains NaN or infinite values"
    # (values the caller never passed); refused() turns any RuntimeWarning into an error.
    err = refused(call, argument)
    assert "float32 range" in str(err)


def test_the_noisiest_release_is_still_scored():
    # epsilon 1e-6, the least a target may be; one row's replace-one sensitivity 2 sqrt(2); at dim 64 the noisiest
    # the exact sampler allows (delta 1e-3; 1e-4 is refused): sigma ~ 1.8e3 per coordinate, ||g||_1 * sqrt(2/64)
    # ~ 2e4, against a bound of 4.5e307 (times the temperature for nominate).
    cal = acc.calibrate_gaussian(1e-6, 1e-3, sensitivity=2 * math.sqrt(2), dim=64)
    g = dpsumm.privacy.gaussian_mean_release(KHASH.astype(np.float64).mean(0), cal, dpsumm.privacy.Csprng(1))
    assert cal.sigma > 1e3 and np.abs(g).max() > 1e3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isfinite(kernels.greedy_select(KHASH, g, 5)[1]).all()
        assert np.isfinite(kernels.stochastic_greedy_select(KHASH, g, 5, 10)[1]).all()
        for temperature in (1e-6, 0.02, 0.2, 5 * cal.sigma):
            nom = kernels.nominate(KX, KH, g, temperature=temperature, nominees=5, random_state=0)
            assert np.isfinite(nom.target).all() and len(nom.indices) == 5
        assert kernels.best_row(KHASH, g) is not None
        # float32's largest values themselves are not beyond its range
        assert kernels.best_row(np.full((2, 4), np.finfo(np.float32).max, dtype=np.float64), np.ones(4))[1] == 0


def exact(H, v, offered=None):
    return best_row(H, v, offered)


def run_rounds(index, H, rng, rounds, v_scale=1.0):
    offered = np.zeros(H.shape[0], dtype=bool)
    for _ in range(rounds):
        v = (rng.normal(size=H.shape[1]) * v_scale).astype(np.float32)
        want = exact(H, v, offered)
        got = index.best(v)
        assert got == want
        if want is None:
            break
        index.mark_offered(want[1])
        offered[want[1]] = True
    return offered


@pytest.mark.parametrize("n,d", [(1, 1), (17, 3), (5000, 140), (20_000, 33)])
def test_random_hashes_over_rounds(n, d):
    rng = np.random.default_rng(n + d)
    H = rng.uniform(-0.12, 0.12, size=(n, d)).astype(np.float32)
    index = BidIndex.from_hashes(H)
    offered = run_rounds(index, H, rng, 25)
    np.testing.assert_array_equal(index.offered, offered)
    assert index.n_offered == offered.sum()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("order", ["C", "F"])
def test_raw_rows_equal_the_exact_kernel_on_their_hashes(dtype, order):
    rng = np.random.default_rng(3)
    X = np.asarray(rng.normal(size=(12_000, 9)) * 2, dtype=dtype, order=order)
    hasher = dpsumm.RFFHasher(9, dim=140, gamma=0.2, seed="t")
    H = hasher.transform(X)
    index = BidIndex.from_rows(X, hasher)
    assert index.nbytes == 12_000 * 140 and index.dim == 140 and len(index) == 12_000
    run_rounds(index, H, rng, 15)
    for i in [0, 1, 4095, 4096, 11_999]:
        np.testing.assert_array_equal(index.hash_row(i), H[i])  # row-canonical h1: bit-identical


def test_all_equal_rows_and_duplicates():
    H = np.full((9000, 140), 0.05, dtype=np.float32)
    index = BidIndex.from_hashes(H)
    v = np.linspace(-1, 1, 140).astype(np.float32)
    assert index.best(v) == exact(H, v)
    assert index.best(v)[1] == 0
    for i in (0, 1, 2, 5000):
        index.mark_offered(i)
    assert index.best(v)[1] == 3
    # duplicates of the best row spread over chunks: the lowest index not offered wins
    rng = np.random.default_rng(4)
    H = rng.uniform(-0.1, 0.1, size=(20_000, 140)).astype(np.float32)
    top = np.sign(v) * 0.12
    for r in (7, 4100, 9000, 19_999):
        H[r] = top
    index = BidIndex.from_hashes(H)
    offered = np.zeros(20_000, dtype=bool)
    for r in (7, 4100, 9000, 19_999):
        assert index.best(v) == exact(H, v, offered)
        assert index.best(v)[1] == r
        index.mark_offered(r)
        offered[r] = True


def test_near_ties_one_ulp_apart():
    d = 140
    v = (((np.arange(d) % 17) - 8) * 0.01).astype(np.float32)
    H = ((((np.arange(9000)[:, None] * 13 + np.arange(d)[None, :] * 7) % 101) - 50) * 1e-3).astype(np.float32)
    for r in (10, 4500, 8999):
        H[r] = 0.1 * np.sign(v)
    H[4500, 3] = np.nextafter(H[4500, 3], np.float32(np.inf) * np.sign(H[4500, 3]))
    assert BidIndex.from_hashes(H).best(v) == exact(H, v)
    H[4500, 3] = H[10, 3]
    got = BidIndex.from_hashes(H).best(v)
    assert got == exact(H, v) and got[1] == 10
    # a one-ulp change in v flips nothing the exact kernel would not flip
    for j in range(0, d, 13):
        w = v.copy()
        w[j] = np.nextafter(w[j], np.float32(1))
        assert BidIndex.from_hashes(H).best(w) == exact(H, w)


def test_zero_vector_is_a_tie_of_every_row():
    rng = np.random.default_rng(5)
    H = rng.uniform(-0.1, 0.1, size=(10_000, 140)).astype(np.float32)
    index = BidIndex.from_hashes(H)
    zero = np.zeros(140, dtype=np.float32)
    assert index.best(zero) == exact(H, zero) == (0.0, 0)
    assert index.last_rescored <= 4  # one per 4096-row chunk, not one per row
    index.mark_offered(0)
    assert index.best(zero) == (0.0, 1)


@pytest.mark.parametrize("h_scale", [1e-30, 1e-6, 1.0, 1e6, 1e30])
@pytest.mark.parametrize("v_scale", [1e-30, 1.0, 1e30])
def test_huge_and_tiny_scales(h_scale, v_scale):
    rng = np.random.default_rng(6)
    H = (rng.uniform(-1, 1, size=(3000, 40)) * h_scale).astype(np.float32)
    run_rounds(BidIndex.from_hashes(H), H, rng, 5, v_scale=v_scale)


def test_one_dominant_coordinate_and_sparse_v():
    rng = np.random.default_rng(7)
    H = rng.uniform(-0.12, 0.12, size=(8000, 140)).astype(np.float32)
    index = BidIndex.from_hashes(H)
    v = np.zeros(140, dtype=np.float32)
    v[5] = 1e4
    v[77] = 1e-4
    assert index.best(v) == exact(H, v)
    v = np.full(140, 1e-3, dtype=np.float32)
    v[0] = 50.0
    assert index.best(v) == exact(H, v)


def test_every_row_offered_gives_none():
    H = np.ones((5, 3), dtype=np.float32)
    index = BidIndex.from_hashes(H)
    for i in range(5):
        assert index.mark_offered(i)
    assert not index.mark_offered(2)
    assert index.best(np.ones(3, np.float32)) is None
    assert BidIndex.from_hashes(np.zeros((0, 3), np.float32)).best(np.ones(3, np.float32)) is None


@st.composite
def problems(draw):
    n = draw(st.integers(1, 300))
    d = draw(st.integers(1, 24))
    # few distinct values: many exact ties and near-ties
    values = st.sampled_from([0.0, 0.1, -0.1, 0.1000001, 1e-8, -0.05, 0.05, 0.0999999])
    H = draw(hnp.arrays(np.float32, (n, d), elements=values))
    v = draw(hnp.arrays(np.float32, (d,), elements=st.floats(-10, 10, width=32)))
    offered = draw(hnp.arrays(np.bool_, (n,)))
    return H, v, offered


@settings(max_examples=150, deadline=None)
@given(problems())
def test_hypothesis_same_winner(p):
    H, v, offered = p
    index = BidIndex.from_hashes(H)
    for i in np.flatnonzero(offered):
        index.mark_offered(int(i))
    assert index.best(v) == exact(H, v, offered)


@settings(max_examples=50, deadline=None)
@given(
    st.integers(1, 50),
    st.sampled_from([np.nan, np.inf, -np.inf]),
    st.integers(0, 7),
)
def test_hypothesis_bad_inputs_raise_clear_errors(n, bad, where):
    H = np.ones((n, 8), dtype=np.float32)
    index = BidIndex.from_hashes(H)
    v = np.ones(8, dtype=np.float32)
    v[where] = bad
    with pytest.raises(InvalidParameterError) as e:
        index.best(v)
    assert e.value.argument == "v"
    H2 = H.copy()
    H2[n - 1, where] = bad
    with pytest.raises(InvalidParameterError):
        BidIndex.from_hashes(H2)
    X = np.ones((n, 3))
    X[0, where % 3] = bad
    with pytest.raises(InvalidParameterError):
        BidIndex.from_rows(X, dpsumm.RFFHasher(3, dim=8))


def test_bad_arguments():
    H = np.ones((4, 8), dtype=np.float32)
    index = BidIndex.from_hashes(H)
    for v in (np.ones(7), np.ones((8, 1)), "abc", [1, 2]):
        with pytest.raises(InvalidParameterError) as e:
            index.best(v)
        assert e.value.argument == "v"
    for i in (-1, 4, 2**70, 1.5, True):
        with pytest.raises(InvalidParameterError) as e:
            index.mark_offered(i)
        assert e.value.argument == "index"
    with pytest.raises(InvalidParameterError):
        BidIndex.from_hashes(np.ones(5, np.float32))
    with pytest.raises(InvalidParameterError):
        BidIndex.from_rows(np.ones((4, 3)), dpsumm.RFFHasher(4, dim=8))
    with pytest.raises(InvalidParameterError):
        BidIndex.from_rows(np.ones((4, 3)), "not a hasher")
    with pytest.raises(InvalidParameterError):
        BidIndex.from_rows(np.array([["a", "b"]]), dpsumm.RFFHasher(2, dim=8))


def test_rows_are_referenced_not_copied():
    X = np.random.default_rng(8).random((100, 4), dtype=np.float32)
    h = dpsumm.RFFHasher(4, dim=16, seed=1)
    index = BidIndex.from_rows(X, h)
    before = index.hash_row(3)
    np.testing.assert_array_equal(before, h.transform(X[3:4])[0])
    saved = X[3].copy()
    X[3] += 1.0  # the index reads the owner's own array (not a copy), and refuses a row changed since
    with pytest.raises(dpsumm.InvalidParameterError, match="changed since"):
        index.hash_row(3)
    X[3] = saved  # the same values again: the index reads them (it holds no copy)
    np.testing.assert_array_equal(index.hash_row(3), before)


@pytest.mark.parametrize("source", ["hashes", "rows"])
@pytest.mark.parametrize("change", ["nan", "overwrite", "one row", "reshape", "reversed rows"])
def test_a_changed_source_array_is_refused_never_a_panic_or_nan(source, change):
    rng = np.random.default_rng(12)
    h = dpsumm.RFFHasher(6, dim=24, gamma=0.5, seed=2)
    X = rng.normal(size=(257, 6))
    A = h.transform(X).astype(np.float32) if source == "hashes" else X
    index = BidIndex.from_hashes(A) if source == "hashes" else BidIndex.from_rows(A, h)
    v = rng.normal(size=24).astype(np.float32)
    value, win = index.best(v)
    if change == "nan":
        A[:] = np.nan
    elif change == "overwrite":
        A[:] = rng.normal(size=A.shape) * 3
    elif change == "one row":
        A[win] = A[win] + 0.5  # the winner: it is re-scored on the next query
    elif change == "reshape":
        A.shape = (A.shape[0] // 257, A.shape[1] * 257)
    else:
        A[:] = A[::-1].copy()  # the same rows, in another order
    with pytest.raises(dpsumm.InvalidParameterError):
        index.best(v)
    with pytest.raises(dpsumm.InvalidParameterError):
        index.hash_row(win)


def test_row_dots_are_the_exact_kernel_values():
    from dpsumm import _core

    rng = np.random.default_rng(10)
    H = rng.uniform(-0.1, 0.1, size=(10_000, 140)).astype(np.float32)
    v = rng.normal(size=140).astype(np.float32)
    s = _core.row_dots(H, v)
    value, index = best_row(H, v)
    assert s[index] == value and s.max() == value and int(np.argmax(s)) == index
    np.testing.assert_allclose(s, H.astype(np.float64) @ v.astype(np.float64), rtol=1e-12, atol=1e-15)


def test_best_row_matches_numpy_twin():
    rng = np.random.default_rng(2)
    H = rng.uniform(-0.1, 0.1, size=(20000, 140)).astype(np.float32)
    v = rng.normal(size=140).astype(np.float32)
    offered = rng.random(20000) < 0.3
    got = dpsumm.kernels.best_row(H, v, offered)
    want = reference.best_row(H, v, offered)
    assert got[1] == want[1]
    assert got[0] == pytest.approx(want[0], rel=1e-5)
    assert not offered[got[1]]


def test_best_row_exact_on_ties():
    H = np.ones((10, 4), dtype=np.float32)
    offered = np.zeros(10, dtype=bool)
    offered[:3] = True
    assert dpsumm.kernels.best_row(H, np.ones(4, np.float32), offered) == (4.0, 3)
    assert dpsumm.kernels.best_row(H, np.ones(4, np.float32), np.ones(10, bool)) is None
    assert dpsumm.kernels.best_row(np.empty((0, 4), np.float32), np.ones(4, np.float32)) is None


def test_best_rows_batch_matches_single():
    rng = np.random.default_rng(3)
    Hs = [rng.normal(size=(n, 16)).astype(np.float32) for n in (100, 0, 5000, 1)]
    masks = [rng.random(len(H)) < 0.5 for H in Hs]
    v = rng.normal(size=16).astype(np.float32)
    got = dpsumm.kernels.best_rows(Hs, v, masks)
    assert got == [dpsumm.kernels.best_row(H, v, m) for H, m in zip(Hs, masks)]
    assert [g and g[1] for g in got] == [w and w[1] for w in reference.best_rows(Hs, v, masks)]


def test_best_row_bad_input():
    H = np.zeros((5, 3), np.float32)
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.kernels.best_row(H, np.zeros(4))
    assert e.value.argument == "v"
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.kernels.best_row(H, np.array([np.nan, 0, 0]))
    assert e.value.argument == "v"
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.kernels.best_row(H, np.zeros(3), np.zeros(4, bool))
    assert e.value.argument == "offered"
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.kernels.best_rows([H, np.zeros((2, 4), np.float32)], np.zeros(3))
    assert e.value.argument == "hashes"
    # The raw binding refuses what the wrapper would convert.
    with pytest.raises(dpsumm.InvalidParameterError):
        dpsumm._core.best_row(H.astype(np.float64), np.zeros(3, np.float32))
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm._core.best_row(np.asfortranarray(np.zeros((5, 3), np.float32)), np.zeros(3, np.float32))
    assert e.value.argument == "hashes"


def test_mmd_matches_numpy_twin():
    rng = np.random.default_rng(4)
    A = rng.random((700, 30))
    B = rng.random((450, 30)) + 0.1
    got = dpsumm.kernels.mmd2(A, B, 0.2)
    want = reference.mmd2(A, B, 0.2)
    assert got == pytest.approx(want, rel=1e-4)
    assert dpsumm.kernels.kernel_sum(A, B, 0.2) == pytest.approx(reference.kernel_sum(A, B, 0.2), rel=1e-5)
    np.testing.assert_allclose(
        dpsumm.kernels.kernel_row_means(A, B, 0.2), reference.kernel_row_means(A, B, 0.2), rtol=1e-5
    )


def test_mmd_hand_computed():
    # Two single points at squared distance 2: MMD^2 = 1 + 1 - 2 exp(-2 gamma).
    A = np.array([[0.0, 0.0]])
    B = np.array([[1.0, 1.0]])
    assert dpsumm.kernels.mmd2(A, B, 0.5) == pytest.approx(2 - 2 * np.exp(-1.0), rel=1e-7)
    assert dpsumm.kernels.mmd2(A, A, 0.5) == 0.0


def test_mmd_is_thread_count_independent_and_symmetric():
    rng = np.random.default_rng(5)
    A, B = rng.random((600, 8)), rng.random((300, 8))
    assert dpsumm.kernels.mmd2(A, B, 1.0) == pytest.approx(dpsumm.kernels.mmd2(B, A, 1.0), rel=1e-12)
    assert dpsumm.kernels.mmd2(A, B, 1.0) == dpsumm.kernels.mmd2(A, B, 1.0)


@pytest.mark.parametrize(
    "A,B,gamma,arg",
    [
        (np.zeros((0, 2)), np.zeros((1, 2)), 1.0, "A"),
        (np.zeros((1, 2)), np.zeros((1, 3)), 1.0, "B"),
        (np.zeros((1, 2)), np.full((1, 2), np.inf), 1.0, "B"),
        (np.zeros((1, 2)), np.zeros((1, 2)), 0.0, "gamma"),
    ],
)
def test_mmd_bad_input(A, B, gamma, arg):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.kernels.mmd2(A, B, gamma)
    assert e.value.argument == arg


def random_hashes(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Hash-like rows (entries in +-sqrt(2/d)) and a target shaped like a mean of 30 of them."""
    rng = np.random.default_rng(seed)
    H = ((rng.random((n, d)) * 2 - 1) * np.sqrt(2 / d)).astype(np.float32)
    t = H[rng.choice(n, min(n, 30), replace=False)].astype(np.float64).mean(0)
    return H, t


def owner(n: int, f: int, dim: int, seed: int) -> tuple[np.ndarray, dpsumm.RFFHasher, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, f)).astype(np.float32)
    h = dpsumm.RFFHasher(f, dim=dim, gamma=0.5 / f, seed=seed)
    g = h.transform(rng.normal(loc=0.3, size=(60, f))).astype(np.float64).mean(0)
    return X, h, g


@pytest.mark.parametrize("n,d,k", [(1, 5, 1), (300, 7, 300), (2500, 140, 60), (900, 500, 40)])
def test_greedy_equals_numpy_reference(n, d, k):
    H, t = random_hashes(n, d, seed=n + d)
    idx, scores = greedy_select(H, t, k)
    want_idx, want_scores = ref.greedy_select(H, t, k)
    assert idx.dtype == np.int64 and scores.dtype == np.float64
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_allclose(scores, want_scores, rtol=0, atol=1e-9)


def test_greedy_with_taken_rows_equals_reference_and_never_picks_them():
    H, t = random_hashes(1000, 64, seed=1)
    taken = np.zeros(1000, dtype=bool)
    taken[np.random.default_rng(2).choice(1000, 400, replace=False)] = True
    idx, scores = greedy_select(H, t, 700, taken=taken)
    want_idx, want_scores = ref.greedy_select(H, t, 700, taken=taken)
    # Only 600 rows are open: the selection stops there.
    assert len(idx) == 600 and not taken[idx].any() and len(set(idx.tolist())) == 600
    np.testing.assert_array_equal(idx, want_idx)
    np.testing.assert_allclose(scores, want_scores, rtol=0, atol=1e-9)


def test_greedy_hand_computed_three_rows():
    # h0 = (1, 0), h1 = (0, 1), h2 = (0.5, 0.5); t = (0.6, 0.5).
    # Round 0: h.t = 0.6, 0.5, 0.55 -> row 0.
    # Round 1: h.t - h.h0 / 2 = -, 0.5 - 0, 0.55 - 0.25 -> row 1 (0.5).
    # Round 2: row 2: 0.55 - (0.5 + 0.5) / 3 = 0.21666...
    H = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]], dtype=np.float32)
    idx, scores = greedy_select(H, [0.6, 0.5], 3)
    assert idx.tolist() == [0, 1, 2]
    np.testing.assert_allclose(scores, [0.6, 0.5, 0.55 - 1 / 3], rtol=0, atol=1e-15)
    assert greedy_select(H, [0.6, 0.5], 0)[0].tolist() == []


def test_greedy_ties_go_to_the_lowest_index():
    H = np.ones((7, 3), dtype=np.float32)
    assert greedy_select(H, np.ones(3), 7)[0].tolist() == list(range(7))
    H, t = random_hashes(200, 16, seed=3)
    H[150] = H[20]
    idx = greedy_select(H, t, 200)[0].tolist()
    assert idx.index(20) < idx.index(150)


def test_greedy_minimises_the_hashed_mean_distance_better_than_random():
    # A property of the objective: the greedy mean of 50 rows is far closer to the target than a
    # random 50 rows (which would be ~ sqrt(2 / 50) away); 30 random draws, all worse.
    H, t = random_hashes(3000, 64, seed=4)
    idx, _ = greedy_select(H, t, 50)
    greedy_err = np.linalg.norm(H[idx].astype(np.float64).mean(0) - t)
    rng = np.random.default_rng(5)
    random_errs = [
        np.linalg.norm(H[rng.choice(3000, 50, replace=False)].astype(np.float64).mean(0) - t) for _ in range(30)
    ]
    assert greedy_err < 0.5 * min(random_errs)


@pytest.mark.parametrize("seed", [None, 5, 2**64 - 1])
@pytest.mark.parametrize(
    "n,dim,T,M,C", [(4000, 64, 0.1, 20, 160), (3000, 140, 0.01, 10, 10), (2000, 32, 1.0, 25, 4000)]
)
def test_nominate_equals_numpy_reference(n, dim, T, M, C, seed):
    X, h, g = owner(n, 12, dim, seed=n)
    sampling = "top" if seed is None else "weighted"
    got = nominate(X, h, g, temperature=T, nominees=M, candidates=C, sampling=sampling, random_state=seed)
    H = h.transform(X)
    idx, hashes, target, nc = ref.nominate(H, g, T, M, C, sample_seed=seed)
    assert isinstance(got, Nomination)
    np.testing.assert_array_equal(got.indices, idx)
    np.testing.assert_array_equal(got.hashes, hashes)
    np.testing.assert_allclose(got.target, target, rtol=1e-12, atol=1e-15)
    assert got.n_candidates == nc == min(C, n)
    assert got.hashes.dtype == np.float32 and got.target.dtype == np.float64 and got.indices.dtype == np.int64


def test_all_candidates_is_the_greedy_over_every_row():
    X, h, g = owner(1500, 8, 48, seed=7)
    nom = nominate(X, h, g, temperature=0.2, nominees=30, candidates=1500)
    full, _ = greedy_select(h.transform(X), nom.target, 30)
    np.testing.assert_array_equal(nom.indices, full)
    # More candidates than rows is the same thing.
    np.testing.assert_array_equal(nominate(X, h, g, temperature=0.2, nominees=30, candidates=10**9).indices, full)


def test_block_size_and_layout_do_not_change_the_nomination():
    X, h, g = owner(5000, 10, 64, seed=8)
    base = nominate(X, h, g, temperature=0.05, nominees=20, candidates=100, random_state=3)
    for B in (1, 17, 1000, 65536):
        other = nominate(X, h, g, temperature=0.05, nominees=20, candidates=100, random_state=3, block_rows=B)
        np.testing.assert_array_equal(other.indices, base.indices)
        np.testing.assert_array_equal(other.hashes, base.hashes)
        np.testing.assert_allclose(other.target, base.target, rtol=1e-13, atol=1e-16)
    for variant in (np.asfortranarray(X), X.astype(np.float64), np.asfortranarray(X.astype(np.float64))):
        other = nominate(variant, h, g, temperature=0.05, nominees=20, candidates=100, random_state=3)
        np.testing.assert_array_equal(other.indices, base.indices)
        np.testing.assert_array_equal(other.target, base.target)


@pytest.mark.slow
def test_nomination_does_not_depend_on_the_thread_count():
    script = (
        "import numpy as np, dpsumm, hashlib\n"
        "from dpsumm.kernels import nominate, greedy_select\n"
        "rng = np.random.default_rng(0)\n"
        "X = rng.normal(size=(60000, 8)).astype(np.float32)\n"
        "h = dpsumm.RFFHasher(8, dim=40, gamma=0.1, seed=0)\n"
        "g = h.transform(X[:50] + 0.5).astype(np.float64).mean(0)\n"
        "n = nominate(X, h, g, temperature=0.05, nominees=30, candidates=240, random_state=7)\n"
        "i, s = greedy_select(h.transform(X[:20000]), g, 50)\n"
        "print(hashlib.sha256(n.indices.tobytes() + n.hashes.tobytes() + n.target.tobytes() + i.tobytes() + s.tobytes()).hexdigest())\n"
    )
    assert len(digests_per_thread_count(script)) == 1


def test_extreme_temperatures_are_numerically_safe():
    X, h, g = owner(3000, 6, 32, seed=9)
    H = h.transform(X).astype(np.float64)
    s = H @ g
    cold = nominate(X, h, g, temperature=1e-6, nominees=5, candidates=40)
    # The scores' top gap is far above 1e-6 * 700 here, so the weight is all on the best row.
    assert np.sort(s)[-1] - np.sort(s)[-2] > 1e-3
    np.testing.assert_allclose(cold.target, H[np.argmax(s)], rtol=0, atol=1e-12)
    hot = nominate(X, h, g, temperature=1e6, nominees=5, candidates=40)
    np.testing.assert_allclose(hot.target, H.mean(0), rtol=0, atol=1e-6)
    for nom in (cold, hot):
        assert np.isfinite(nom.target).all() and len(nom.indices) == 5


def test_fewer_rows_than_nominees_and_default_candidates():
    X, h, g = owner(4, 3, 8, seed=10)
    nom = nominate(X, h, g, temperature=0.1, nominees=9)
    assert sorted(nom.indices.tolist()) == [0, 1, 2, 3] and nom.n_candidates == 4 and nom.hashes.shape == (4, 8)
    X, h, g = owner(1000, 3, 8, seed=11)
    assert nominate(X, h, g, temperature=0.1, nominees=9).n_candidates == DEFAULT_CANDIDATE_FACTOR * 9


def test_nomination_is_frozen():
    X, h, g = owner(50, 3, 8, seed=12)
    nom = nominate(X, h, g, temperature=0.1, nominees=3)
    with pytest.raises(AttributeError):
        nom.n_candidates = 7  # type: ignore[misc]


_X, _H, _G = owner(30, 4, 8, seed=13)


_GOOD = {"temperature": 0.1, "nominees": 3, "candidates": 6}


_bad_nominate = st.sampled_from(
    [
        ("X", lambda: (np.zeros((30, 5), np.float32), _H, _G, _GOOD)),
        ("X", lambda: (np.zeros((0, 4), np.float32), _H, _G, _GOOD)),
        ("X", lambda: (np.zeros(4, np.float32), _H, _G, _GOOD)),
        ("X", lambda: (np.array([["a"] * 4]), _H, _G, _GOOD)),
        ("X", lambda: (np.where(np.arange(120).reshape(30, 4) == 77, np.nan, _X), _H, _G, _GOOD)),
        ("X", lambda: (np.full((30, 4), 1e300), _H, _G, _GOOD)),
        ("hasher", lambda: (_X, "not a hasher", _G, _GOOD)),
        ("g_tilde", lambda: (_X, _H, _G[:7], _GOOD)),
        ("g_tilde", lambda: (_X, _H, np.full(8, np.inf), _GOOD)),
        ("g_tilde", lambda: (_X, _H, ["x"] * 8, _GOOD)),
        ("temperature", lambda: (_X, _H, _G, {**_GOOD, "temperature": 0.0})),
        ("temperature", lambda: (_X, _H, _G, {**_GOOD, "temperature": -1.0})),
        ("temperature", lambda: (_X, _H, _G, {**_GOOD, "temperature": float("nan")})),
        ("temperature", lambda: (_X, _H, _G, {**_GOOD, "temperature": "hot"})),
        ("nominees", lambda: (_X, _H, _G, {**_GOOD, "nominees": 0})),
        ("nominees", lambda: (_X, _H, _G, {**_GOOD, "nominees": 2.5})),
        ("nominees", lambda: (_X, _H, _G, {**_GOOD, "nominees": True})),
        ("candidates", lambda: (_X, _H, _G, {**_GOOD, "candidates": 2})),
        ("candidates", lambda: (_X, _H, _G, {**_GOOD, "candidates": 2**70})),
        ("block_rows", lambda: (_X, _H, _G, {**_GOOD, "block_rows": 0})),
        ("block_rows", lambda: (_X, _H, _G, {**_GOOD, "block_rows": 2**17})),
        ("sampling", lambda: (_X, _H, _G, {**_GOOD, "sampling": "random"})),
        ("random_state", lambda: (_X, _H, _G, {**_GOOD, "random_state": -1})),
        ("random_state", lambda: (_X, _H, _G, {**_GOOD, "random_state": 2**64})),
        ("random_state", lambda: (_X, _H, _G, {**_GOOD, "random_state": 1.5})),
    ]
)


@given(_bad_nominate)
def test_nominate_bad_input_names_the_argument(case):
    name, make = case
    X, h, g, kw = make()
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        nominate(X, h, g, **kw)
    assert e.value.argument == name


@given(
    n=st.integers(0, 20),
    d=st.integers(0, 6),
    k=st.one_of(st.integers(-5, -1), st.floats(allow_nan=True), st.just(True)),
)
def test_greedy_bad_k_is_rejected(n, d, k):
    H = np.zeros((n, max(d, 1)), np.float32)
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        greedy_select(H, np.zeros(max(d, 1)), k)
    assert e.value.argument == "k"


@given(st.data())
def test_greedy_bad_arrays_name_the_argument(data):
    n = data.draw(st.integers(1, 12))
    d = data.draw(st.integers(1, 6))
    H = np.random.default_rng(n * 7 + d).random((n, d)).astype(np.float32)
    t = np.zeros(d)
    kind = data.draw(
        st.sampled_from(
            ["nan_hash", "inf_target", "target_len", "hash_1d", "hash_str", "no_cols", "taken_len", "taken_dtype"]
        )
    )
    if kind == "nan_hash":
        H[data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, d - 1))] = np.nan
        args, name = (H, t, 1, None), "hashes"
    elif kind == "inf_target":
        t[data.draw(st.integers(0, d - 1))] = data.draw(st.sampled_from([np.inf, -np.inf, np.nan]))
        args, name = (H, t, 1, None), "target"
    elif kind == "target_len":
        args, name = (H, np.zeros(d + data.draw(st.integers(1, 3))), 1, None), "target"
    elif kind == "hash_1d":
        args, name = (H.ravel(), t, 1, None), "hashes"
    elif kind == "hash_str":
        args, name = (H.astype(str), t, 1, None), "hashes"
    elif kind == "no_cols":
        args, name = (np.zeros((n, 0), np.float32), np.zeros(0), 1, None), "hashes"
    elif kind == "taken_len":
        args, name = (H, t, 1, np.zeros(n + 1, bool)), "taken"
    else:
        args, name = (H, t, 1, np.zeros(n, np.int64)), "taken"
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        greedy_select(*args)
    assert e.value.argument == name


def test_results_depend_only_on_the_inputs():
    # Two calls, same bytes (no hidden state between calls).
    X, h, g = owner(2000, 5, 16, seed=14)
    a = nominate(X, h, g, temperature=0.1, nominees=7, candidates=50, random_state=1)
    b = nominate(X, h, g, temperature=0.1, nominees=7, candidates=50, random_state=1)
    digest = lambda n: hashlib.sha256(n.indices.tobytes() + n.hashes.tobytes() + n.target.tobytes()).hexdigest()  # noqa: E731
    assert digest(a) == digest(b)


def test_weighted_candidates_are_a_sample_proportional_to_the_weights():
    # One candidate from 3 rows over 3000 seeds: row i is picked with probability w_i / sum w, where
    # w = exp(s / T). Chi-square goodness of fit at the 0.1 % level (2 degrees of freedom: 13.8).
    X, h, g = owner(3, 4, 16, seed=15)
    H = h.transform(X).astype(np.float64)
    T = float(np.ptp(H @ g))  # weights between 1 and e: every row is likely enough
    w = np.exp((H @ g - (H @ g).max()) / T)
    p = w / w.sum()
    assert p.min() > 0.05  # every cell has an expected count above 150
    counts = np.zeros(3)
    for seed in range(3000):
        nom = nominate(X, h, g, temperature=T, nominees=1, candidates=1, random_state=seed)
        counts[nom.indices[0]] += 1
    chi2 = float((((counts - 3000 * p) ** 2) / (3000 * p)).sum())
    assert chi2 < 13.8, (counts, 3000 * p)


def test_top_sampling_keeps_the_best_scores():
    X, h, g = owner(2000, 6, 32, seed=16)
    s = h.transform(X).astype(np.float64) @ g
    nom = nominate(X, h, g, temperature=0.1, nominees=10, candidates=10, sampling="top")
    assert sorted(nom.indices.tolist()) == sorted(np.argsort(-s)[:10].tolist())


@pytest.mark.parametrize("n,d,k,s,seed", [(300, 16, 40, 7, 0), (1000, 64, 100, 25, 2**64 - 1), (50, 8, 80, 3, 12345)])
def test_stochastic_greedy_equals_numpy_reference(n, d, k, s, seed):
    H, t = random_hashes(n, d, seed=n)
    idx, scores = stochastic_greedy_select(H, t, k, s, random_state=seed)
    ridx, rscores = ref.stochastic_greedy_select(H, t, k, s, seed)
    np.testing.assert_array_equal(idx, ridx)
    np.testing.assert_allclose(scores, rscores, rtol=1e-10, atol=1e-12)
    assert len(idx) == min(k, n) and len(set(idx.tolist())) == len(idx)


def test_stochastic_greedy_sampling_every_row_is_the_exact_greedy():
    H, t = random_hashes(800, 32, seed=3)
    exact, escores = greedy_select(H, t, 60)
    idx, scores = stochastic_greedy_select(H, t, 60, 800, random_state=9)
    np.testing.assert_array_equal(idx, exact)
    np.testing.assert_allclose(scores, escores, rtol=1e-10, atol=1e-12)


def test_stochastic_greedy_is_deterministic_and_depends_on_the_seed():
    H, t = random_hashes(2000, 24, seed=4)
    a = stochastic_greedy_select(H, t, 100, 20, random_state=1)
    b = stochastic_greedy_select(H, t, 100, 20, random_state=1)
    c = stochastic_greedy_select(H, t, 100, 20, random_state=2)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])


@pytest.mark.parametrize("seed", [None, 7])
@pytest.mark.parametrize("factor", [0.5, 3.0])
def test_nominate_with_stochastic_greedy_equals_numpy_reference(seed, factor):
    X, h, g = owner(3000, 12, 64, seed=21)
    sampling = "top" if seed is None else "weighted"
    got = nominate(
        X,
        h,
        g,
        temperature=0.1,
        nominees=40,
        candidates=320,
        sampling=sampling,
        random_state=seed,
        greedy_sample_factor=factor,
    )
    idx, hashes, target, nc = ref.nominate(
        h.transform(X), g, 0.1, 40, 320, sample_seed=seed, greedy_sample_factor=factor
    )
    np.testing.assert_array_equal(got.indices, idx)
    np.testing.assert_array_equal(got.hashes, hashes)
    assert got.n_candidates == nc == 320


def test_stochastic_sample_size_hand_cases():
    assert stochastic_sample_size(8000, 2000, 8.0) == 32  # the default at size 1000: C/M = 4, r = 8
    assert stochastic_sample_size(8000, 2000, np.log(100)) == 19  # Mirzasoleiman et al.'s eps = 0.01
    assert stochastic_sample_size(10, 20, 3.0) == 3  # M capped at n: n/min(M, n) = 1
    assert stochastic_sample_size(10, 5, 9.0) == 10  # capped at n
    assert stochastic_sample_size(0, 5, 1.0) == 0
    assert ref.stochastic_sample_size(8000, 2000, 8.0) == 32


@pytest.mark.parametrize(
    "kw, arg",
    [
        (dict(sample_size=0), "sample_size"),
        (dict(sample_size=-3), "sample_size"),
        (dict(k=-1), "k"),
        (dict(random_state=-1), "random_state"),
        (dict(random_state=2**64), "random_state"),
        (dict(random_state=1.5), "random_state"),
        (dict(target=np.full(16, np.nan)), "target"),
    ],
)
def test_stochastic_greedy_bad_input_names_the_argument(kw, arg):
    H, t = random_hashes(30, 16, seed=1)
    args = dict(hashes=H, target=t, k=5, sample_size=4, random_state=0)
    args.update(kw)
    with pytest.raises(dpsumm.DpsummError) as info:
        stochastic_greedy_select(**args)
    assert info.value.argument == arg


@given(st.one_of(st.floats(max_value=0.0), st.just(float("nan")), st.just(float("inf")), st.just(True)))
def test_nominate_bad_greedy_sample_factor_is_rejected(factor):
    X, h, g = owner(50, 4, 8, seed=2)
    with pytest.raises(dpsumm.DpsummError) as info:
        nominate(X, h, g, temperature=0.1, nominees=5, greedy_sample_factor=factor)
    assert info.value.argument == "greedy_sample_factor"


@pytest.mark.parametrize("n,f,q0,k", [(500, 6, 0, 40), (400, 64, 3, 60), (300, 300, 0, 30)])
def test_exact_kernel_greedy_equals_numpy_reference(n, f, q0, k):
    """The Rust greedy picks the numpy twin's rows, and its gains agree to float64 rounding; 64 and 300 features
    take the two dot-product paths (four rows at a time, one at a time)."""
    from dpsumm import _core

    rng = np.random.default_rng(n + f)
    X = rng.random((n, f), dtype=np.float32)
    V = rng.random((50, f), dtype=np.float32)
    gamma = 1.0 / f
    kv = ref.kernel_row_means(X, V, gamma)
    ks0 = ref.kernel_row_means(X, V[:q0], gamma) * q0 if q0 else np.zeros(n)
    idx, vals = _core.kernel_greedy(X, np.ascontiguousarray(kv), np.ascontiguousarray(ks0), q0, k, gamma)
    ridx, rvals = ref.kernel_greedy(X, kv, ks0, q0, k, gamma)
    assert list(idx) == list(ridx)
    np.testing.assert_allclose(vals, rvals, rtol=0, atol=1e-12)


def test_exact_greedy_over_owners_equals_its_definition_with_seed_rows():
    """kernels.exact_greedy: each round adds the row (owner, index) maximising the exact kernel's
    ``mean_v k(x, v) - q/(q+1) mean_s k(x, s)`` over the seed rows and the rows chosen so far (numpy, by hand)."""
    from dpsumm.kernels import exact_greedy

    rng = np.random.default_rng(5)
    datas = [rng.normal(size=(12, 3)).astype(np.float32), rng.normal(size=(9, 3)).astype(np.float32) + 1.0]
    V, seed, gamma = rng.normal(size=(15, 3)) + 0.5, rng.normal(size=(4, 3)).astype(np.float32), 0.4
    X = np.concatenate(datas).astype(np.float64)

    def k(A, B):
        return np.exp(-gamma * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))

    chosen: list[int] = []
    S = [s for s in seed.astype(np.float64)]
    for _ in range(6):
        q = len(S)
        gain = k(X, V).mean(1) - (q / (q + 1)) * (k(X, np.array(S)).mean(1) if q else 0.0)
        gain[chosen] = -np.inf
        i = int(np.argmax(gain))
        chosen.append(i)
        S.append(X[i])
    picks, _ = exact_greedy(datas, V, seed, 6, gamma)
    owner_index = [(0, i) if i < 12 else (1, i - 12) for i in chosen]
    assert picks == owner_index
