"""Data sets and the discrete Laplace variance for the PFDS tests (the tree and the synthetic data)."""

from __future__ import annotations

import math

import numpy as np

from dpsumm.pfds import Domain

__all__ = ["dlap_var", "mixed_data", "numeric_data"]


def numeric_data(n=600, d=4, seed=0):
    g = np.random.default_rng(seed)
    X = g.uniform(-1.0, 2.0, size=(n, d))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0.75, "b", "a")
    return X, y, Domain.box(d, -1.0, 2.0, classes=["a", "b"])


def mixed_data(n=600, seed=0):
    """Two numeric attributes in [0, 10], a categorical one with codes {1, 5, 7}, three classes."""
    g = np.random.default_rng(seed)
    X = np.column_stack([g.uniform(0, 10, n), g.choice([1.0, 5.0, 7.0], n), g.uniform(0, 10, n)])
    y = (X[:, 0] > 5).astype(int) + (X[:, 1] == 7).astype(int)
    dom = Domain([(0.0, 10.0), None, (0.0, 10.0)], {1: [7, 1, 5]}, classes=[0, 1, 2])
    return X, y, dom


def dlap_var(scale):
    """Variance of the discrete Laplace distribution P(z) ∝ exp(-|z|/scale)."""
    q = math.exp(-1.0 / scale)
    return 2 * q / (1 - q) ** 2
