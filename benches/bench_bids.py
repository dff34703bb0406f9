"""Per-round bidding (issue 8): the 8-bit ``BidIndex`` against numpy's float32 matvec + argmax over the
same hashed rows, and against the exact kernel, in one pytest-benchmark run. Every implementation's
winners are checked to be identical to the exact kernel's.

Inputs: 1,000,000 rows in 10 owners, dim 140, two kinds of hashed rows:
* ``rff``: h1 of clustered data (64 features, the generator of bench_scale.py) with a greedy-like
  broadcast ``v = mean h1(validation) - q/(q+1) mean h1(summary)``;
* ``uniform``: i.i.d. uniform hashes in [-0.12, 0.12] and a Gaussian v (the bench_kernels.py input).

numpy runs with OpenBLAS's default threads and with one BLAS thread (needs ``threadpoolctl``): on
this 2-core machine one thread is faster; compare against the faster of the two.

Run: ``python -m pytest benches/bench_bids.py --benchmark-only --benchmark-group-by=group``
(DPSUMM_BENCH_SMALL=1 for a tenth of the rows).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

import dpsumm
from dpsumm import _core

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import make_data  # noqa: E402

SCALE = 10 if os.environ.get("DPSUMM_BENCH_SMALL") else 1
N, K, D = 1_000_000 // SCALE, 10, 140


@pytest.fixture(scope="module", params=["rff", "uniform"])
def case(request):
    rng = np.random.default_rng(1)
    if request.param == "rff":
        datas, V = make_data(N, K, 64, seed=2)
        hasher = dpsumm.RFFHasher(64, dim=D, gamma=0.1, seed=0)
        hashes = [hasher.transform(X) for X in datas]
        g_valid = hasher.transform(V).astype(np.float64).mean(0)
        summary = np.concatenate([h[rng.integers(0, len(h), 30)] for h in hashes]).astype(np.float64)
        q = len(summary)
        vs = [
            (g_valid - q / (q + 1) * summary.mean(0) + 0.01 * rng.normal(size=D) * r / 10).astype(np.float32)
            for r in range(5)
        ]
        index_rows = [dpsumm.kernels.BidIndex.from_rows(X, hasher) for X in datas]
    else:
        H = rng.uniform(-0.12, 0.12, size=(N, D)).astype(np.float32)
        hashes = [np.ascontiguousarray(h) for h in np.array_split(H, K)]
        del H
        vs = [rng.normal(size=D).astype(np.float32) for _ in range(5)]
        index_rows = None
    index_hashes = [dpsumm.kernels.BidIndex.from_hashes(h) for h in hashes]
    want = [_core.best_rows(hashes, v, None) for v in vs]
    return {
        "name": request.param,
        "hashes": hashes,
        "vs": vs,
        "want": want,
        "index_hashes": index_hashes,
        "index_rows": index_rows,
    }


def numpy_bids(hashes, v):
    out = []
    for H in hashes:
        s = H @ v
        i = int(np.argmax(s))
        out.append((float(s[i]), i))
    return out


IMPLS = [
    "numpy-f32-matvec-argmax",
    "numpy-f32-matvec-argmax-1-blas-thread",
    "exact-kernel",
    "bid-index-hashes",
    "bid-index-raw-rows",
]


@pytest.mark.parametrize("impl", IMPLS)
def test_round_of_bids(benchmark, case, impl):
    benchmark.group = f"one round of bids, {N} x {D} in {K} owners, {case['name']} hashes"
    hashes, vs = case["hashes"], case["vs"]
    state = {"k": 0}

    def next_v():
        state["k"] += 1
        return vs[state["k"] % len(vs)]

    if impl == "numpy-f32-matvec-argmax":
        fn = lambda: numpy_bids(hashes, next_v())  # noqa: E731
    elif impl == "numpy-f32-matvec-argmax-1-blas-thread":
        # On this 2-core machine OpenBLAS's sgemv is faster with one thread than with two.
        threadpoolctl = pytest.importorskip("threadpoolctl")

        def fn():
            with threadpoolctl.threadpool_limits(1, user_api="blas"):
                return numpy_bids(hashes, next_v())
    elif impl == "exact-kernel":
        fn = lambda: _core.best_rows(hashes, next_v(), None)  # noqa: E731
    else:
        idx = case["index_hashes"] if impl == "bid-index-hashes" else case["index_rows"]
        if idx is None:
            pytest.skip("raw rows only for the rff case")
        fn = lambda: [i.best(v) for v in [next_v()] for i in idx]  # noqa: E731
    benchmark.pedantic(fn, rounds=15, iterations=1, warmup_rounds=2)
    # same winners as the exact kernel (numpy's f32 sums may differ in the last bits: compare indices)
    for v, want in zip(vs, case["want"]):
        if impl.startswith("bid-index"):
            got = [i.best(v) for i in (case["index_hashes"] if impl == "bid-index-hashes" else case["index_rows"])]
            assert got == want
