"""The 8-bit bid index (issue 8) picks exactly the winner of the exact kernel.

Reference: ``dpsumm.kernels.best_row`` (float32 products summed in float64 in a fixed order, lowest index on
ties), itself tested against numpy in test_kernels.py. Every case compares the value bit for bit and the
index, on random and adversarial inputs: ties, near-ties, all-equal rows, offered masks, a zero vector,
huge and tiny scales.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dpsumm
from dpsumm import InvalidParameterError
from dpsumm.kernels import BidIndex, best_row


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


def test_owner_party_bids_with_the_index():
    from dpsumm.messages import BidRequest, PointRequest, Setup

    rng = np.random.default_rng(9)
    X = rng.random((6000, 10), dtype=np.float32)
    owner = dpsumm.parties.OwnerParty(X, None, "o")
    owner.handle(Setup(n_features=10, dim=140, gamma=0.5, hash_seed=3, reveal="hashes"))
    H = dpsumm.RFFHasher(10, dim=140, gamma=0.5, seed=3).transform(X)
    offered = np.zeros(6000, dtype=bool)
    for rnd in range(1, 6):
        v = rng.normal(size=140).astype(np.float32)
        bid = owner.handle(BidRequest(round=rnd, v=v))
        want = exact(H, v, offered)
        assert (bid.value, bid.token) == want
        reply = owner.handle(PointRequest(round=rnd, token=bid.token))
        np.testing.assert_array_equal(reply.hash, H[bid.token])
        offered[bid.token] = True


def test_row_dots_are_the_exact_kernel_values():
    from dpsumm import _core

    rng = np.random.default_rng(10)
    H = rng.uniform(-0.1, 0.1, size=(10_000, 140)).astype(np.float32)
    v = rng.normal(size=140).astype(np.float32)
    s = _core.row_dots(H, v)
    value, index = best_row(H, v)
    assert s[index] == value and s.max() == value and int(np.argmax(s)) == index
    np.testing.assert_allclose(s, H.astype(np.float64) @ v.astype(np.float64), rtol=1e-12, atol=1e-15)
