"""h1 across thread counts and call sizes (issue 22): bit-identical hashes, the stated float32 error bound
against a float64 evaluation, and the `threads` option's validation. Timings live in benches/bench_floor.py."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import dpsumm
from dpsumm import reference


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
    for value, match in [(np.nan, "NaN"), (np.inf, "NaN"), (1e30, "4089")]:
        bad = X[:300].copy()
        bad[257, 3] = value
        with pytest.raises(dpsumm.InvalidParameterError, match=match) as e:
            h.transform(bad)
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
