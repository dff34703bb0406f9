"""Rust core against the numpy twin, in one run: h1, an owner's scores along a direction, bids, MMD².

Run: ``python -m pytest benches/bench_kernels.py --benchmark-only --benchmark-group-by=group``
(set DPSUMM_BENCH_SMALL=1 for a quick smoke run at a tenth of the sizes).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

import dpsumm
from dpsumm import reference

SCALE = 10 if os.environ.get("DPSUMM_BENCH_SMALL") else 1


def _pedantic(benchmark, fn, rounds=3):
    return benchmark.pedantic(fn, rounds=rounds, iterations=1, warmup_rounds=1)


@pytest.fixture(scope="module")
def h1_input():
    rng = np.random.default_rng(0)
    X = rng.random((200_000 // SCALE, 784), dtype=np.float32)
    return X, dpsumm.RFFHasher(784, dim=140, gamma=0.1, seed=0)


@pytest.mark.parametrize("impl", ["rust", "numpy"])
def test_h1(benchmark, h1_input, impl):
    """h1 on 200,000 x 784 -> 140 (float32 input)."""
    X, h = h1_input
    benchmark.group = "h1 200000x784->140"
    if impl == "rust":
        _pedantic(benchmark, lambda: h.transform(X))
    else:
        _pedantic(benchmark, lambda: reference.rff_transform(X, h.omega_, h.offset_))


@pytest.mark.parametrize("impl", ["rust", "numpy-float32"])
def test_h1_float32_numpy_expression(benchmark, h1_input, impl):
    """The same, against the float32 numpy expression a user would write (BLAS sgemm + np.cos)."""
    X, h = h1_input
    benchmark.group = "h1 vs float32 numpy expression"
    scale = np.float32(np.sqrt(2 / 140))
    if impl == "rust":
        _pedantic(benchmark, lambda: h.transform(X))
    else:
        _pedantic(benchmark, lambda: scale * np.cos(X @ h.omega_ + h.offset_))


@pytest.fixture(scope="module", params=[(1024, 500), (1024, 2048)], ids=["1024->500", "1024->2048"])
def wide_h1_input(request):
    f, dim = request.param
    rng = np.random.default_rng(4)
    X = (rng.standard_normal((20_000 // SCALE, f), dtype=np.float32) / np.sqrt(f)).astype(np.float32)
    return X, dpsumm.RFFHasher(f, dim=dim, gamma=0.5, seed=0)


@pytest.mark.parametrize("impl", ["rust", "numpy-float32-chunked"])
def test_h1_wide_inputs(benchmark, wide_h1_input, impl):
    """h1 at wide inputs (the shapes the cache blocks are for) against numpy's chunked float32 expression
    (benches/bench_hashing_sweep.py's reference, writing into one preallocated output)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_hashing_sweep import numpy_h1

    X, h = wide_h1_input
    benchmark.group = f"h1 {X.shape[0]}x{X.shape[1]}->{h.dim} vs chunked float32 numpy"
    if impl == "rust":
        _pedantic(benchmark, lambda: h.transform(X))
    else:
        out = np.empty((X.shape[0], h.dim), np.float32)
        _pedantic(benchmark, lambda: numpy_h1(X, h.omega_, h.offset_, out))


@pytest.fixture(scope="module")
def scores_input():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((1_000_000 // SCALE, 64)).astype(np.float32)
    h = dpsumm.RFFHasher(64, dim=256, gamma=0.02, seed="direction:0")
    w = rng.normal(size=256)
    return X, h, w / np.linalg.norm(w), 0.01


@pytest.mark.parametrize("impl", ["rust", "numpy"])
def test_direction_scores(benchmark, scores_input, impl):
    """An owner's scores along a released direction in 256 random features (the direction purchase's cells):
    1,000,000 x 64 rows, streamed in Rust against hashing 65,536-row blocks and a float64 product in numpy."""
    from dpsumm import _core
    from dpsumm.reference import owner_sketch

    X, h, w, shift = scores_input
    benchmark.group = "direction scores 1000000x64->256"
    if impl == "rust":
        _pedantic(benchmark, lambda: _core.owner_hash_scores(X, h._projection, w, shift))
    else:
        step = 1 << 16
        _pedantic(
            benchmark,
            lambda: np.concatenate(
                [owner_sketch.hash_scores(h.transform(X[i : i + step]), w, shift) for i in range(0, len(X), step)]
            ),
        )


@pytest.fixture(scope="module")
def bid_input():
    rng = np.random.default_rng(1)
    n = 1_000_000 // SCALE
    H = rng.uniform(-0.12, 0.12, size=(n, 140)).astype(np.float32)
    owners = np.array_split(H, 10)
    owners = [np.ascontiguousarray(o) for o in owners]
    v = rng.normal(size=140).astype(np.float32)
    return owners, v


@pytest.mark.parametrize("impl", ["rust", "numpy"])
def test_bids(benchmark, bid_input, impl):
    """Per-round bids: max of H @ v over 1,000,000 x 140 float32 rows in 10 owners."""
    owners, v = bid_input
    benchmark.group = "bids 1e6x140 / 10 owners"
    if impl == "rust":
        res = _pedantic(benchmark, lambda: dpsumm._core.best_rows(owners, v, None), rounds=10)
    else:
        res = _pedantic(benchmark, lambda: reference.best_rows(owners, v), rounds=10)
    assert len(res) == 10


@pytest.fixture(scope="module")
def mmd_input():
    rng = np.random.default_rng(2)
    n = 10_000 // SCALE
    return rng.random((n, 784)), rng.random((n, 784)) * 0.9


@pytest.mark.parametrize("impl", ["rust", "numpy"])
def test_mmd(benchmark, mmd_input, impl):
    """Exact MMD² between 10,000 and 10,000 rows of 784 features."""
    A, B = mmd_input
    benchmark.group = "mmd2 10000 vs 10000 x 784"
    if impl == "rust":
        _pedantic(benchmark, lambda: dpsumm.kernels.mmd2(A, B, 0.01), rounds=2)
    else:
        _pedantic(benchmark, lambda: reference.mmd2(A, B, 0.01), rounds=2)


@pytest.fixture(scope="module", params=[(40_000, 64, 1000), (20_000, 784, 200)], ids=["40000x64", "20000x784"])
def greedy_input(request):
    n, f, k = request.param
    rng = np.random.default_rng(1)
    X = rng.random((n // SCALE, f), dtype=np.float32)
    V = rng.random((300, f), dtype=np.float32)
    gamma = 1.0 / f
    kv = np.ascontiguousarray(dpsumm.kernels.kernel_row_means(X, V, gamma), dtype=np.float64)
    return X, kv, k, gamma


@pytest.mark.parametrize("impl", ["rust", "numpy"])
def test_exact_kernel_greedy(benchmark, greedy_input, impl):
    """The aggregator's exact-kernel greedy (every round: one kernel value per row against the last pick)."""
    from dpsumm import _core

    X, kv, k, gamma = greedy_input
    benchmark.group = f"exact-kernel greedy {len(X)}x{X.shape[1]}, {k} picks"
    ks0 = np.zeros(len(X))
    if impl == "rust":
        _pedantic(benchmark, lambda: _core.kernel_greedy(X, kv, ks0, 0, k, gamma))
    else:
        _pedantic(benchmark, lambda: reference.kernel_greedy(X, kv, ks0, 0, k, gamma), rounds=1)
