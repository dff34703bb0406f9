"""Non-private baselines: uniform sampling, central greedy over all hashes, and the exact-kernel greedy."""

from __future__ import annotations

import numpy as np

from .. import _core
from ..hashing import RFFHasher
from ..kernels import greedy_select, kernel_row_means
from ..privacy import Csprng

__all__ = ["uniform_picks", "exact_greedy", "central_greedy"]

# ------------------------------------------------------------------------------------------ baselines


def uniform_picks(datas: list[np.ndarray], size: int, rng: Csprng) -> list[tuple[int, int]]:
    """``size // K`` rows from each owner, uniformly without replacement; the remainder (and the share of
    owners with too few rows) goes to owners in a random order, one row at a time."""
    K = len(datas)
    counts = [0] * K
    remaining = size
    quota = size // K
    for k in range(K):
        counts[k] = min(quota, len(datas[k]))
        remaining -= counts[k]
    while remaining > 0:
        order = [k for k in _permutation(K, rng) if counts[k] < len(datas[k])]
        for k in order[:remaining]:
            counts[k] += 1
        remaining -= len(order[:remaining])
    picks: list[tuple[int, int]] = []
    for k in range(K):
        rows = _permutation(len(datas[k]), rng)[: counts[k]]
        picks.extend((k, int(i)) for i in sorted(rows))
    return picks


def _permutation(n: int, rng: Csprng) -> list[int]:
    """A uniform permutation of range(n) (Fisher-Yates on the CSPRNG)."""
    p = list(range(n))
    for i in range(n - 1, 0, -1):
        j = rng.integers(i + 1)
        p[i], p[j] = p[j], p[i]
    return p


def exact_greedy(datas: list[np.ndarray], validation: np.ndarray, seed: np.ndarray, size: int, gamma: float) -> tuple[list[tuple[int, int]], list[float]]:
    """Greedy on the exact RBF kernel (centralised, non-private): each round adds the row maximising
    ``mean_{y in D_v} k(x, y) - q/(q+1) mean_{z in D_s} k(x, z)`` (docs/design.md §6.3 with the exact kernel)."""
    X = np.concatenate(datas).astype(np.float32)
    owner_of = np.concatenate([np.full(len(d), k) for k, d in enumerate(datas)])
    index_of = np.concatenate([np.arange(len(d)) for d in datas])
    kv = kernel_row_means(X, validation, gamma)
    ks_sum = np.zeros(len(X)) if len(seed) == 0 else kernel_row_means(X, seed, gamma) * len(seed)
    # One fused Rust pass per round (rust/src/kernel_greedy.rs): the numpy loop it replaces cost 11 ms per
    # round at 200,000 pooled rows (benches/bench_scale_e2e.py).
    idx, vals = _core.kernel_greedy(np.ascontiguousarray(X, dtype=np.float32), np.ascontiguousarray(kv, dtype=np.float64),
                                    np.ascontiguousarray(ks_sum, dtype=np.float64), len(seed), size, float(gamma))
    picks = [(int(owner_of[i]), int(index_of[i])) for i in idx]
    values = [float(v) for v in vals]
    return picks, values


def central_greedy(datas: list[np.ndarray], validation: np.ndarray, size: int, hasher: RFFHasher) -> tuple[list[tuple[int, int]], list[float]]:
    """Central greedy over all hashes (non-private; the strongest hashed baseline).

    Every owner's rows are hashed in one place; each round adds the row maximising
    ``h1(x).(g_v - q/(q+1) mean_{s in S} h1(s))`` with ``g_v = mean h1(D_v)`` exact and ``S`` the summary so far,
    which starts empty (no seed rows). Ties go to the lowest (owner, row). This is the greedy the nominations
    protocol's aggregator runs, over every row instead of the nominees.
    """
    H = np.concatenate([hasher.transform(d) for d in datas])
    owner_of = np.concatenate([np.full(len(d), k) for k, d in enumerate(datas)])
    index_of = np.concatenate([np.arange(len(d)) for d in datas])
    g_v = hasher.transform(validation).astype(np.float64).mean(0)
    picks, values = greedy_select(H, g_v, size)
    return [(int(owner_of[i]), int(index_of[i])) for i in picks], [float(v) for v in values]
