"""Numpy twins of the quantizer, the exponential mechanism and product-distribution MWEM.

Randomness comes from a ``numpy.random.Generator``: these twins are NOT private (they exist to test and
benchmark the Rust core).
"""

from __future__ import annotations

from typing import cast

import numpy as np

__all__ = ["stochastic_round", "quantize_column_sums", "exponential_mechanism_probabilities", "ProductMWEM"]


def stochastic_round(values: np.ndarray, eta: float, rng: np.random.Generator) -> np.ndarray:
    """Unbiased rounding of values in [-1, 1] to ``{-1, -1+eta, ..., 1}``."""
    m = int(round(2.0 / eta))
    t = (np.clip(np.asarray(values, dtype=np.float64), -1, 1) + 1.0) * m / 2.0
    k = np.minimum(np.floor(t), m - 1)
    up = rng.random(t.shape) < (t - k)
    return -1.0 + (k + up) * (2.0 / m)


def quantize_column_sums(values: np.ndarray, eta: float, rng: np.random.Generator) -> np.ndarray:
    """Column sums of :func:`stochastic_round`."""
    return cast(np.ndarray, stochastic_round(values, eta, rng).sum(0))


def exponential_mechanism_probabilities(scores: np.ndarray, epsilon: float, sensitivity: float) -> np.ndarray:
    """``exp(eps s_i / (2 Delta)) / sum_j exp(eps s_j / (2 Delta))``."""
    s = np.asarray(scores, dtype=np.float64)
    w = np.exp(epsilon * (s - s.max()) / (2.0 * sensitivity))
    return cast(np.ndarray, w / w.sum())


class ProductMWEM:
    """Naive numpy MWEM over a product distribution: O(d |S|) per step (recomputes everything)."""

    def __init__(self, dim: int, eta: float, neighbour: str = "replace-one", random_state: np.random.Generator | None = None) -> None:
        self.dim = dim
        self.eta = 2.0 / round(2.0 / eta)
        self.grid_ = -1.0 + self.eta * np.arange(round(2.0 / eta) + 1)
        self.neighbour = neighbour
        self.rng = random_state if random_state is not None else np.random.default_rng()
        self.marginals_ = np.full((dim, len(self.grid_)), 1.0 / len(self.grid_))
        self.steps_taken_ = 0

    def release(self, column_sums: np.ndarray, n_rows: int, steps: int, epsilon: float = 1.0, noise: bool = True) -> np.ndarray:
        q = float(n_rows)
        d_measure = 2.0 if self.neighbour == "replace-one" else 1.0
        P = self.marginals_
        total = np.zeros_like(P)
        for _ in range(steps):
            w_p = q * (P @ self.grid_)
            psi = np.abs(w_p - column_sums)
            if noise:
                i = int(self.rng.choice(self.dim, p=exponential_mechanism_probabilities(psi, epsilon, 2.0)))
                mu = column_sums[i] + self.rng.laplace(scale=d_measure / epsilon)
            else:
                i = int(np.argmax(psi))
                mu = column_sums[i]
            P = P.copy()
            P[i] = P[i] * np.exp(self.grid_ * (mu - w_p[i]) / (2.0 * q))
            P[i] /= P[i].sum()
            total += P
        self.marginals_ = P
        self.steps_taken_ += steps
        return (total / steps) @ self.grid_
