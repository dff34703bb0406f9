"""Numpy twins of rust/src/owner_sketch.rs (an owner's sketches and self-consistent tilt, issue 19).

Each function hashes every row at once (``n x d``: for tests only) and must agree with the Rust kernel of
the same name: exactly for the histogram counts, to float64 rounding for sums and means.
"""

from __future__ import annotations

import numpy as np

__all__ = ["hash_sum", "score_histogram", "tilted_mean", "self_consistent_tilt"]


def hash_sum(H: np.ndarray) -> np.ndarray:
    """``sum_x h1(x)`` from the float32 hashes ``H`` (n, d), in float64."""
    out: np.ndarray = np.asarray(H, dtype=np.float64).sum(axis=0)
    return out


def score_histogram(H: np.ndarray, direction: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Counts of ``h1(x).direction`` in ``len(edges) + 1`` bins: bin ``i`` counts the scores with exactly ``i``
    edges at or below them (bin 0: below the first edge; the last: at or above the last edge)."""
    s = np.asarray(H, dtype=np.float64) @ np.asarray(direction, dtype=np.float64)
    b = np.searchsorted(np.asarray(edges, dtype=np.float64), s, side="right")
    return np.bincount(b, minlength=len(edges) + 1).astype(np.int64)


def tilted_mean(H: np.ndarray, lam: np.ndarray) -> tuple[np.ndarray, float]:
    """``(sum w h1 / sum w, log sum w)`` with ``w = exp(h1(x).lambda)``."""
    H64 = np.asarray(H, dtype=np.float64)
    s = H64 @ np.asarray(lam, dtype=np.float64)
    m = float(s.max())
    w = np.exp(s - m)
    z = float(w.sum())
    return (w @ H64) / z, m + float(np.log(z))


def self_consistent_tilt(H: np.ndarray, g_tilde: np.ndarray, lambda0: np.ndarray, temperature: float, max_rounds: int,
                         stop_sq: float) -> tuple[np.ndarray, int, float]:
    """``lambda <- lambda + (g~ - m_lambda)/T`` from ``lambda0`` until ``||g~ - m_lambda||^2 <= stop_sq`` or
    ``max_rounds`` steps: ``(lambda, steps, residual_sq)``."""
    g = np.asarray(g_tilde, dtype=np.float64)
    lam = np.array(lambda0, dtype=np.float64)
    rounds = 0
    while True:
        m, _ = tilted_mean(H, lam)
        r = float(((g - m) ** 2).sum())
        if r <= stop_sq or rounds >= max_rounds:
            return lam, rounds, r
        lam = lam + (g - m) / temperature
        rounds += 1
