"""h1, bids and MMD: the Rust core against its numpy twin, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dpsumm
from dpsumm import reference


@pytest.fixture(scope="module")
def rows() -> np.ndarray:
    return np.random.default_rng(0).random((1500, 40), dtype=np.float32)


# ---------------------------------------------------------------- h1


def test_rff_matches_numpy_twin(rows):
    h = dpsumm.RFFHasher(40, dim=140, gamma=0.1, seed="shared")
    got = h.transform(rows)
    want = reference.rff_transform(rows, h.omega_, h.offset_)
    assert got.dtype == np.float32 and got.shape == (1500, 140) and got.flags.c_contiguous
    np.testing.assert_allclose(got, want, atol=2e-6)


def test_rff_same_hash_in_every_layout_and_dtype(rows):
    h = dpsumm.RFFHasher(40, dim=32, seed=7)
    base = h.transform(rows)
    assert np.array_equal(h.transform(np.asfortranarray(rows)), base)
    assert np.array_equal(h.transform(rows.astype(np.float64)), base)
    assert np.array_equal(h.transform(rows[::-1])[::-1], base)
    strided = np.repeat(rows, 2, axis=1)[:, ::2]
    assert np.array_equal(h.transform(strided), base)


def test_rff_projection_is_public_and_deterministic():
    a = dpsumm.RFFHasher(10, dim=20, gamma=0.5, seed="consortium-2026")
    b = dpsumm.RFFHasher(10, dim=20, gamma=0.5, seed="consortium-2026")
    c = dpsumm.RFFHasher(10, dim=20, gamma=0.5, seed="other")
    assert np.array_equal(a.omega_, b.omega_) and np.array_equal(a.offset_, b.offset_)
    assert not np.array_equal(a.omega_, c.omega_)
    # Pinned values: any change to the derivation changes every party's hashes.
    ref = dpsumm.RFFHasher(2, dim=2, gamma=1.0, seed=0)
    assert ref.omega_.shape == (2, 2)
    assert np.all(np.abs(ref.omega_) < 10)


def test_rff_approximates_the_rbf_kernel():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 5)) * 0.5
    h = dpsumm.RFFHasher(5, dim=20000, gamma=0.3, seed=1)
    H = h.transform(X).astype(np.float64)
    approx = H @ H.T
    exact = np.exp(-0.3 * ((X[:, None] - X[None]) ** 2).sum(-1))
    # Each entry has standard deviation <= sqrt(2/d) = 0.01; 0.05 is 5 sigma.
    assert np.abs(approx - exact).max() < 0.05


def test_rff_coordinates_are_bounded(rows):
    h = dpsumm.RFFHasher(40, dim=64)
    H = h.transform(rows * 100)
    assert np.abs(H).max() <= np.sqrt(2 / 64) * (1 + 1e-6)


def test_rff_is_sklearn_like(rows):
    h = dpsumm.RFFHasher(40, dim=16)
    assert h.fit(rows) is h
    assert np.array_equal(h.fit_transform(rows), h.transform(rows))
    assert h.n_features_in_ == 40
    assert "RFFHasher(" in repr(h)
    assert h.transform(np.empty((0, 40))).shape == (0, 16)


@given(
    n_features=st.one_of(st.integers(max_value=0), st.floats(), st.text(max_size=2)),
)
def test_rff_rejects_bad_n_features(n_features):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.RFFHasher(n_features)
    assert e.value.argument == "n_features"


@given(gamma=st.one_of(st.floats(max_value=0), st.just(float("nan")), st.just(float("inf"))))
def test_rff_rejects_bad_gamma(gamma):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.RFFHasher(3, gamma=gamma)
    assert e.value.argument == "gamma"


@pytest.mark.parametrize("dim", [0, -1, 2.5, None])
def test_rff_rejects_bad_dim(dim):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.RFFHasher(3, dim=dim)
    assert e.value.argument == "dim"


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, None, b"x"])
def test_rff_rejects_bad_seed(seed):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.RFFHasher(3, seed=seed)
    assert e.value.argument == "seed"


@given(
    X=hnp.arrays(
        dtype=st.sampled_from([np.float32, np.float64]),
        shape=hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=6),
        elements=st.floats(allow_nan=True, allow_infinity=True, width=32),
    )
)
def test_rff_transform_never_crashes(X):
    h = dpsumm.RFFHasher(4, dim=3)
    if X.shape[1] != 4 or not np.isfinite(X).all():
        with pytest.raises(dpsumm.InvalidParameterError) as e:
            h.transform(X)
        assert e.value.argument == "X"
    else:
        # A finite row either hashes to finite values or, when omega . x leaves the range where the
        # float32 cosine is defined (huge rows), is refused naming X: never NaN hashes.
        try:
            out = h.transform(X)
        except dpsumm.InvalidParameterError as e:
            assert e.argument == "X"
            assert np.abs(X).max() > 100  # |omega . x| > 4089 needs |x| > 4089 / (4 * max|omega|)
        else:
            assert out.shape == (X.shape[0], 3)
            assert np.isfinite(out).all()


@pytest.mark.parametrize(
    "X",
    [np.zeros(4), np.zeros((2, 2, 4)), np.array([["a"] * 4]), np.zeros((3, 4), dtype=complex), [[1, 2, 3, 4]]],
    ids=["1d", "3d", "str", "complex", "list"],
)
def test_rff_transform_dtypes_and_shapes(X):
    h = dpsumm.RFFHasher(4, dim=3)
    if isinstance(X, list):
        assert h.transform(X).shape == (1, 3)
        return
    with pytest.raises(dpsumm.InvalidParameterError):
        h.transform(X)


# ---------------------------------------------------------------- bids


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


# ---------------------------------------------------------------- MMD


def test_mmd_matches_numpy_twin():
    rng = np.random.default_rng(4)
    A = rng.random((700, 30))
    B = rng.random((450, 30)) + 0.1
    got = dpsumm.kernels.mmd2(A, B, 0.2)
    want = reference.mmd2(A, B, 0.2)
    assert got == pytest.approx(want, rel=1e-4)
    assert dpsumm.kernels.kernel_sum(A, B, 0.2) == pytest.approx(reference.kernel_sum(A, B, 0.2), rel=1e-5)
    np.testing.assert_allclose(dpsumm.kernels.kernel_row_means(A, B, 0.2), reference.kernel_row_means(A, B, 0.2), rtol=1e-5)


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


def test_error_hierarchy():
    assert issubclass(dpsumm.InvalidParameterError, dpsumm.DpsummError)
    assert issubclass(dpsumm.InvalidParameterError, ValueError)
