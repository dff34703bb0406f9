"""MWEM (h2) in Rust against the numpy twin: T = 1656 steps, d = 140, |S| = 2d + 1 = 281 (eta = 1/140).

Run: ``python -m pytest benches/bench_mwem.py --benchmark-only --benchmark-group-by=group``
"""

from __future__ import annotations

import numpy as np
import pytest

import dpsumm
from dpsumm import reference

D, T, ETA, Q = 140, 1656, 1.0 / 140, 2000


@pytest.fixture(scope="module")
def sums():
    return np.random.default_rng(0).uniform(-0.3, 0.3, D) * Q


@pytest.mark.parametrize("impl", ["rust", "numpy"])
def test_mwem(benchmark, sums, impl):
    benchmark.group = "mwem T=1656 d=140 |S|=281"
    if impl == "rust":
        run = lambda: dpsumm.privacy.ProductMWEM(D, ETA, random_state=1).release(sums, Q, T, 0.01)  # noqa: E731
        rounds = 10
    else:
        gen = np.random.default_rng(1)
        run = lambda: reference.ProductMWEM(D, ETA, random_state=gen).release(sums, Q, T, 0.01)  # noqa: E731
        rounds = 2
    out = benchmark.pedantic(run, rounds=rounds, iterations=1, warmup_rounds=1)
    assert out.shape == (D,)
