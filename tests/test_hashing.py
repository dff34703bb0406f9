"""dpsumm.hashing: RFFHasher (the numpy twin, layouts and dtypes, the RBF kernel, scikit-learn conventions,
pickling), h1 across thread counts and call sizes (bit-identical, the stated float32 bound), hash digests, bad
input.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dpsumm
from dpsumm import reference
from refusal import refused


def test_an_unfitted_hasher_attribute_is_a_not_fitted_error_and_an_attribute_error():
    h = dpsumm.RFFHasher(dim=4)
    with pytest.raises(dpsumm.NotFittedError):
        h.omega_  # noqa: B018 (the attribute access is what is tested)
    assert not hasattr(h, "omega_") and not hasattr(h, "offset_")


@pytest.fixture(scope="module")
def data() -> tuple[dpsumm.RFFHasher, np.ndarray]:
    rng = np.random.default_rng(22)
    X = (rng.normal(size=(5003, 64)) * 2.0).astype(np.float32)
    return dpsumm.RFFHasher(64, dim=500, gamma=0.1, seed="floor"), X


def test_bit_identical_for_every_thread_count_and_chunking(data):
    h, X = data
    whole = h.transform(X)
    for threads in (1, 2, 3, 8):
        ht = dpsumm.RFFHasher(64, dim=500, gamma=0.1, seed="floor", threads=threads)
        assert np.array_equal(ht.transform(X), whole), threads
        for chunk in (1, 256, 4096, 5003):
            parts = np.concatenate([ht.transform(X[s : s + chunk]) for s in range(0, len(X), chunk)])
            # Bit for bit: the aggregator verifies a bought row by recomputing its h1 and comparing bits.
            assert parts.tobytes() == whole.tobytes(), (threads, chunk)
    # One row alone, and rows in another memory order or dtype, hash to the same bits.
    assert np.array_equal(h.transform(X[17:18])[0], whole[17])
    assert np.array_equal(h.transform(np.asfortranarray(X)), whole)


def test_float32_error_within_the_stated_bound(data):
    h, X = data
    got = h.transform(X).astype(np.float64)
    W, b = h.omega_.astype(np.float64), h.offset_.astype(np.float64)
    X64 = X.astype(np.float64)
    want = reference.rff_transform(X64, W, b)
    # The docstring's bound, element by element: sqrt(2/d) (n 2^-24 sum_k |x_k w_kj| + 3e-7).
    bound = np.sqrt(2 / h.dim) * (X.shape[1] * 2.0**-24 * (np.abs(X64) @ np.abs(W)) + 3e-7)
    assert np.all(np.abs(got - want) <= bound)
    # And against numpy's own float32 product + cosine (a different summation order): same bound twice.
    np32 = (np.sqrt(2 / h.dim) * np.cos(X @ h.omega_ + h.offset_)).astype(np.float64)
    assert np.all(np.abs(got - np32) <= 2 * bound + 1e-7)


@pytest.mark.parametrize("bad", [0, -1, 4097, 1.5, "2", True])
def test_threads_option_is_validated(bad):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.RFFHasher(3, dim=4, threads=bad)
    assert e.value.argument == "threads"
    h = dpsumm.RFFHasher(3, dim=4)
    with pytest.raises(dpsumm.InvalidParameterError):
        h.set_params(threads=bad)
    assert h.threads is None


def test_threads_option_is_a_parameter():
    h = dpsumm.RFFHasher(3, dim=4, threads=2)
    assert h.get_params()["threads"] == 2 and "threads=2" in repr(h)
    assert pickle.loads(pickle.dumps(h)).threads == 2
    old = dpsumm.RFFHasher(3, dim=4)
    state = old.__getstate__()
    del state["threads"]
    fresh = dpsumm.RFFHasher.__new__(dpsumm.RFFHasher)
    fresh.__setstate__(state)
    assert fresh.threads is None and np.array_equal(fresh.transform(np.ones((2, 3))), old.transform(np.ones((2, 3))))


def test_unhashable_rows_are_refused_in_the_pass(data):
    h, X = data
    # threads=1 hashes on the calling thread (no pool): the same refusals.
    for hasher in (h, dpsumm.RFFHasher(64, dim=500, gamma=0.1, seed="floor", threads=1)):
        for value, match in [(np.nan, "NaN"), (np.inf, "NaN"), (1e30, "4089")]:
            bad = X[:300].copy()
            bad[257, 3] = value
            with pytest.raises(dpsumm.InvalidParameterError, match=match) as e:
                hasher.transform(bad)
            assert e.value.argument == "X"
    with pytest.raises(dpsumm.InvalidParameterError, match="float32 range"):
        h.transform(np.full((2, 64), 1e300))


def test_large_results_reuse_only_freed_memory(data):
    """A large result (>= 32 MB) reuses the memory of the projection's last freed large result: never
    one still referenced, and every value is rewritten (the same bits as a fresh hasher's)."""
    h, X = data
    h = dpsumm.RFFHasher(64, dim=500, gamma=0.1, seed="floor")
    fresh = dpsumm.RFFHasher(64, dim=500, gamma=0.1, seed="floor")
    big = np.concatenate([X] * 4)  # 20,012 rows: a 40 MB result
    ptr = lambda a: a.__array_interface__["data"][0]  # noqa: E731
    a = h.transform(big)
    keep = a.copy()
    b = h.transform(big[::-1].copy())  # `a` is alive: its memory is not reused
    assert not np.shares_memory(a, b) and a.tobytes() == keep.tobytes()
    old = ptr(a)
    del a
    c = h.transform(big[:17_000])  # 34 MB fits the freed 40 MB buffer
    assert ptr(c) == old
    assert c.tobytes() == fresh.transform(big[:17_000]).tobytes()
    assert c.flags.c_contiguous and c.flags.writeable and c.shape == (17_000, 500) and c.dtype == np.float32
    c[0, 0] = 5.0  # the caller owns the result
    assert b.tobytes() == fresh.transform(big[::-1].copy()).tobytes()
    del c
    bad = big.copy()
    bad[19_000, 1] = np.nan
    with pytest.raises(dpsumm.InvalidParameterError, match="NaN"):
        h.transform(bad)
    # A result less than half the freed buffer's size gets fresh memory; the results stay exact.
    d = h.transform(X)
    assert d.tobytes() == fresh.transform(X).tobytes()
    e = h.transform(big)
    assert e.tobytes() == fresh.transform(big).tobytes() and pickle.loads(pickle.dumps(e)).tobytes() == e.tobytes()


def test_check_hashable_exact_pass_in_blocks(data):
    """Where the fast bound fails, the rows are hashed in blocks of at most 4M values (no full-size
    output); a row beyond the cosine's domain in a later block is still found."""
    from dpsumm._validation import check_hashable

    h, X = data
    rows = np.concatenate([X] * 4)  # 20,012 rows: three blocks of 8,388 at dim 500
    l1 = float(np.abs(h.omega_.astype(np.float64)).sum(axis=0).max())
    fine = rows.copy()
    fine[15_000] = 0.0
    fine[15_000, np.argmin(np.abs(h.omega_).max(axis=1))] = 4089.0 / l1 * 1.5  # fast bound fails, hash is fine
    check_hashable(fine, "owners", h)
    bad = rows.copy()
    bad[15_000] = 1e4
    with pytest.raises(dpsumm.InvalidParameterError, match="cannot hash") as e:
        check_hashable(bad, "owners", h)
    assert e.value.argument == "owners"


def test_transform_into_out_writes_the_same_bits_and_returns_out(data):
    """``out=``: the hashes land in the caller's array (returned as is), bit-identical to a new result, for
    float32 and float64 rows in any memory order and any thread count; the array is reused call after call."""
    h, X = data
    whole = h.transform(X)
    out = np.full((len(X), 500), np.nan, dtype=np.float32)
    for rows, expected in [
        (X, whole),
        (X.astype(np.float64), whole),
        (np.asfortranarray(X), whole),
        (X[::-1].copy(), whole[::-1]),
    ]:
        for threads in (None, 1, 3):
            ht = dpsumm.RFFHasher(64, dim=500, gamma=0.1, seed="floor", threads=threads)
            out.fill(np.nan)
            got = ht.transform(rows, out=out)
            assert got is out
            assert out.tobytes() == np.ascontiguousarray(expected).tobytes()
    # A slice of a larger C-contiguous array (whole rows) is C-contiguous: the rows outside it stay untouched.
    big = np.zeros((len(X) + 10, 500), dtype=np.float32)
    h.transform(X, out=big[5:-5])
    assert big[5:-5].tobytes() == whole.tobytes() and not big[:5].any() and not big[-5:].any()
    empty = np.empty((0, 500), dtype=np.float32)
    assert h.transform(X[:0], out=empty) is empty


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda n: np.empty((n, 500)), "float32"),  # float64
        (lambda n: np.empty((n, 500), dtype=np.float16), "float32"),
        (lambda n: np.empty((n * 500,), dtype=np.float32), "2-D numpy array of float32"),  # 1-D
        (lambda n: np.empty((n, 500, 1), dtype=np.float32), "2-D numpy array of float32"),
        (lambda n: np.empty((n, 500), dtype=">f4"), "native byte order"),  # big-endian float32
        (lambda n: np.empty((n - 1, 500), dtype=np.float32), r"shape \(299, 500\)"),
        (lambda n: np.empty((n, 499), dtype=np.float32), r"shape \(300, 499\)"),
        (lambda n: np.empty((n, 500), dtype=np.float32, order="F"), "C-contiguous"),
        (lambda n: np.empty((n, 1000), dtype=np.float32)[:, ::2], "C-contiguous"),
        (lambda n: np.empty((n, 500), dtype=np.float32).tolist(), "numpy array"),
        (lambda n: np.ma.masked_array(np.empty((n, 500), dtype=np.float32)), "numpy array"),
        (lambda n: "out", "numpy array"),
    ],
)
def test_a_bad_out_is_refused_naming_it(data, make, match):
    h, X = data
    with pytest.raises(dpsumm.InvalidParameterError, match=match) as e:
        h.transform(X[:300], out=make(300))
    assert e.value.argument == "out"


def test_out_that_is_read_only_or_shares_memory_with_x_is_refused(data):
    """Writing hashes over rows still being read would hash half-overwritten rows: the binding holds X borrowed
    read-only, and numpy's borrow checker refuses a writeable borrow of memory X shares (also through the
    Rust core directly, below the Python wrapper)."""
    h, X = data
    frozen = np.empty((300, 500), dtype=np.float32)
    frozen.flags.writeable = False
    shared = np.zeros((300, 500), dtype=np.float32)
    shared[:, :64] = X[:300]
    for x, out in [(X[:300], frozen), (shared[:, :64], shared), (shared[:, 100:164], shared)]:
        for call in (lambda: h.transform(x, out=out), lambda: h._projection.transform(x, out=out)):
            with pytest.raises(dpsumm.InvalidParameterError, match="writeable and share no memory") as e:
                call()
            assert e.value.argument == "out"
    assert np.array_equal(shared[:, :64], X[:300]) and not shared[:, 64:].any()  # untouched


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(0, 40),
    cols=st.sampled_from([0, 1, 15, 16, 17, 32]),
    dtype=st.sampled_from([np.float32, np.float64, np.int32, np.float16]),
    order=st.sampled_from("CF"),
    step=st.sampled_from([1, 2]),
)
def test_any_out_is_filled_exactly_or_refused_naming_it(rows, cols, dtype, order, step):
    """Property: whatever array is passed as ``out``, the call either writes exactly the new result's bits into it
    or raises InvalidParameterError naming ``out`` (never a panic, never scrambled hashes)."""
    h = dpsumm.RFFHasher(8, dim=16, gamma=0.5, seed=3)
    X = np.random.default_rng(rows).random((20, 8), dtype=np.float32)
    out = np.zeros((rows, cols * step), dtype=dtype, order=order)[:, ::step]
    try:
        got = h.transform(X, out=out)
    except dpsumm.InvalidParameterError as e:
        assert e.argument == "out"
        assert not (rows == 20 and cols == 16 and dtype == np.float32 and out.flags.c_contiguous)
        return
    assert got is out and got.tobytes() == h.transform(X).tobytes()


@pytest.fixture(scope="module")
def rows() -> np.ndarray:
    return np.random.default_rng(0).random((1500, 40), dtype=np.float32)


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


def test_hash_digests_are_blake2b_of_the_little_endian_float32_bytes():
    import hashlib

    from dpsumm.hashing import DIGEST_BYTES, hash_digests

    H = dpsumm.RFFHasher(3, dim=8, gamma=0.5, seed=1).transform(np.arange(12.0).reshape(4, 3))
    want = np.array(
        [list(hashlib.blake2b(np.asarray(row, "<f4").tobytes(), digest_size=16).digest()) for row in H], np.uint8
    )
    np.testing.assert_array_equal(hash_digests(H), want)
    np.testing.assert_array_equal(hash_digests(H.astype(">f4")), want)  # byte order of the input does not matter
    assert hash_digests(H).shape == (4, DIGEST_BYTES) and hash_digests(H[:0]).shape == (0, DIGEST_BYTES)
    one_ulp = H.copy()
    one_ulp[2, 5] = np.nextafter(one_ulp[2, 5], np.float32(1))
    assert (hash_digests(one_ulp) != want).any(1).tolist() == [False, False, True, False]
    with pytest.raises(dpsumm.InvalidParameterError, match="hashes"):
        hash_digests(np.zeros(3))


def test_huge_gamma_or_huge_rows_never_give_nan_hashes():
    h = dpsumm.RFFHasher(3, dim=8, gamma=1e30)
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        h.transform(np.full((2, 3), 1e9))
    assert e.value.argument == "X"
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.RFFHasher(3, dim=8).transform(np.full((1, 3), 1e300))
    assert e.value.argument == "X" and "float32" in str(e.value)


def test_rff_hasher_pickles_and_joblib_dumps(tmp_path):
    import joblib

    X = np.random.default_rng(1).normal(size=(7, 5))
    for h in (dpsumm.RFFHasher(5, dim=12, gamma=0.3, seed="s"), dpsumm.RFFHasher(dim=12, seed=4).fit(X)):
        want = h.transform(X)
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(h)).transform(X), want)
        joblib.dump(h, tmp_path / "h.joblib")
        loaded = joblib.load(tmp_path / "h.joblib")
        np.testing.assert_array_equal(loaded.transform(X), want)
        np.testing.assert_array_equal(loaded.omega_, h.omega_)


def test_rff_hasher_params_clone_and_n_features_in():
    from sklearn.base import clone

    h = dpsumm.RFFHasher(dim=8, gamma=0.5, seed="x")
    assert h.get_params() == {"n_features": None, "dim": 8, "gamma": 0.5, "seed": "x", "threads": None}
    assert not hasattr(h, "n_features_in_")
    with pytest.raises(dpsumm.NotFittedError):
        h.transform(np.zeros((2, 3)))
    X = np.random.default_rng(0).normal(size=(6, 3))
    h.fit(X)
    assert h.n_features_in_ == 3
    c = clone(h)
    assert c.get_params() == h.get_params() and not hasattr(c, "n_features_in_")
    np.testing.assert_array_equal(c.fit(X).transform(X), h.transform(X))
    h.set_params(gamma=2.0)
    np.testing.assert_array_equal(h.transform(X), dpsumm.RFFHasher(3, dim=8, gamma=2.0, seed="x").transform(X))
    with pytest.raises(dpsumm.InvalidParameterError):
        h.set_params(dim=0)
    assert h.dim == 8  # a refused set_params changes nothing
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        h.set_params(bogus=1)
    assert e.value.argument == "bogus"
    with pytest.raises(dpsumm.InvalidParameterError, match="expecting 3 features"):
        h.transform(np.zeros((2, 4)))
    with pytest.raises(dpsumm.InvalidParameterError):
        dpsumm.RFFHasher(3).fit(np.zeros((2, 4)))


def test_rff_hasher_in_pipeline_and_cross_val_score():
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline

    X, y = dpsumm.datasets.digits()
    X, y = X[:400], y[:400]
    pipe = make_pipeline(dpsumm.RFFHasher(dim=300, gamma=0.05, seed=0), LogisticRegression(max_iter=500))
    scores = cross_val_score(pipe, X, y, cv=3)
    # ten classes: chance is about 0.1; an RBF feature map plus a linear model does far better
    assert scores.shape == (3,) and scores.min() > 0.6


@pytest.mark.filterwarnings("ignore:Estimator RFFHasher does not inherit")
@pytest.mark.filterwarnings("ignore:.*It is recommended to delay parameter validation")
def test_rff_hasher_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    results = check_estimator(
        dpsumm.RFFHasher(dim=8),
        on_fail=None,
        expected_failed_checks={
            # dpsumm validates parameters when they are set, so that errors come first (house rule)
            "check_do_not_raise_errors_in_init_or_set_params": "parameters are validated in __init__/set_params",
            # an object array holding a dict raises InvalidParameterError (a ValueError), not TypeError
            "check_dtype_object": "non-numbers raise dpsumm.InvalidParameterError",
        },
    )
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert failed == [] and len(results) > 40


@settings(max_examples=25, deadline=None)
@given(
    shape=st.sampled_from([(3, 17), (64, 140), (300, 97), (784, 140), (1024, 500), (600, 2048)]),
    sizes=st.lists(st.integers(1, 300), min_size=1, max_size=5),
    threads=st.sampled_from([1, 2]),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_row_hashes_to_the_same_bits_alone_and_in_batches_of_any_size(shape, sizes, threads, seed):
    # Wide rows are hashed in passes over the features and panels of columns (the cache blocks): the
    # blocking must never change a row's bits, which the aggregator and the streamed owners rely on.
    n_features, dim = shape
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((sum(sizes), n_features), dtype=np.float32)
    h = dpsumm.RFFHasher(n_features, dim=dim, gamma=0.5 / n_features, seed=seed % 5, threads=threads)
    starts = np.cumsum([0, *sizes[:-1]])
    batches = np.concatenate([h.transform(X[s : s + k]) for s, k in zip(starts, sizes, strict=True)])
    assert batches.tobytes() == h.transform(X).tobytes()
    for i in rng.choice(len(X), size=min(len(X), 6), replace=False):
        assert h.transform(X[i : i + 1]).tobytes() == batches[i : i + 1].tobytes(), i


def test_an_object_array_holding_an_int_beyond_the_float_range_is_refused_naming_x():
    # Was: Python's bare OverflowError from the cast to float64.
    X = np.array([[10**400, 0.5, 0.5]], dtype=object)
    refused(lambda: dpsumm.RFFHasher(3, dim=8).transform(X), "X")
    refused(lambda: dpsumm.RFFHasher(None, dim=8).fit_transform(X), "X")
