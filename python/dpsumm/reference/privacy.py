"""Numpy twins of the quantizer, the exponential mechanism and product-distribution MWEM.

Randomness comes from a ``numpy.random.Generator``: these twins are NOT private (they exist to test and
benchmark the Rust core). Arguments are checked as the Rust-backed twins in :mod:`dpsumm.privacy` check them
(an :class:`~dpsumm.InvalidParameterError` naming the argument, before any draw), except that the generator is
numpy's.
"""

from __future__ import annotations

from typing import cast

import numpy as np

from .._validation import bool_flag, bounded_int, choice_of, positive_float, real_vector
from ..errors import InvalidParameterError
from ..privacy import MAX_DIM, MAX_MWEM_STEPS, MAX_MWEM_WORK, NEIGHBOURS, _eta, _unit_matrix

__all__ = ["stochastic_round", "quantize_column_sums", "exponential_mechanism_probabilities", "ProductMWEM"]


def _generator(rng: object, name: str) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise InvalidParameterError(
            f"`{name}` must be a numpy.random.Generator (np.random.default_rng(seed)), got {type(rng).__name__}", name
        )
    return rng


def stochastic_round(values: np.ndarray, eta: float, rng: np.random.Generator) -> np.ndarray:
    """Unbiased rounding of ``values`` (n, d), finite and in [-1, 1], to ``{-1, -1+eta, ..., 1}`` (``2/eta`` an
    integer)."""
    values = _unit_matrix(values, np.float64)
    eta = _eta(eta)
    rng = _generator(rng, "rng")
    if not np.isfinite(values).all():
        raise InvalidParameterError("`values` contains NaN or infinite values", "values")
    if (np.abs(values) > 1.0).any():
        raise InvalidParameterError(f"`values` must lie in [-1, 1], got {float(np.abs(values).max()):g}", "values")
    m = int(round(2.0 / eta))
    t = (np.clip(np.asarray(values, dtype=np.float64), -1, 1) + 1.0) * m / 2.0
    k = np.minimum(np.floor(t), m - 1)
    up = rng.random(t.shape) < (t - k)
    return -1.0 + (k + up) * (2.0 / m)


def quantize_column_sums(values: np.ndarray, eta: float, rng: np.random.Generator) -> np.ndarray:
    """Column sums of :func:`stochastic_round`."""
    return cast(np.ndarray, stochastic_round(values, eta, rng).sum(0))


def exponential_mechanism_probabilities(scores: np.ndarray, epsilon: float, sensitivity: float) -> np.ndarray:
    """``exp(eps s_i / (2 Delta)) / sum_j exp(eps s_j / (2 Delta))`` over the finite ``scores`` (at least one)."""
    s = real_vector(scores, "scores", kinds="fiu")
    if s.size == 0:
        raise InvalidParameterError("`scores` must not be empty", "scores")
    epsilon = positive_float(epsilon, "epsilon")
    sensitivity = positive_float(sensitivity, "sensitivity")
    # s - max s <= 0: a difference or quotient beyond float64 overflows only to -inf, whose weight exp(-inf) = 0 is
    # the exact limit (as the Rust sampler's), so numpy's overflow warning is not a fault here.
    with np.errstate(over="ignore"):
        w = np.exp(epsilon * (s - s.max()) / (2.0 * sensitivity))
    return cast(np.ndarray, w / w.sum())


class ProductMWEM:
    """Naive numpy MWEM over a product distribution: O(d |S|) per step (recomputes everything).

    ``dim``, ``eta`` and ``neighbour`` as :class:`dpsumm.ProductMWEM`; ``random_state`` a numpy Generator or None
    (a fresh ``np.random.default_rng()``).
    """

    def __init__(
        self, dim: int, eta: float, neighbour: str = "replace-one", random_state: np.random.Generator | None = None
    ) -> None:
        self.dim = bounded_int(dim, "dim", 1, MAX_DIM)
        eta = _eta(eta)
        self.eta = 2.0 / round(2.0 / eta)
        self.grid_ = -1.0 + self.eta * np.arange(round(2.0 / eta) + 1)
        self.neighbour = choice_of(neighbour, "neighbour", NEIGHBOURS)
        self.rng = _generator(random_state, "random_state") if random_state is not None else np.random.default_rng()
        self.marginals_ = np.full((self.dim, len(self.grid_)), 1.0 / len(self.grid_))
        self.steps_taken_ = 0

    def release(
        self, column_sums: np.ndarray, n_rows: int, steps: int, epsilon: float = 1.0, noise: bool = True
    ) -> np.ndarray:
        """``steps`` steps against ``column_sums`` (dim,) of ``n_rows`` quantized rows (``|sum| <= n_rows``), as
        :meth:`dpsumm.ProductMWEM.release`; ``noise=False``: argmax selection and exact measurements.

        Raises :class:`~dpsumm.InvalidParameterError` naming ``epsilon`` when a Laplace measurement overflows the
        naive multiplicative update (``exp`` beyond the float range: a noise scale of about ``1400 n_rows`` or
        more; the Rust twin keeps log-weights), leaving the marginals as they were.
        """
        column_sums = real_vector(column_sums, "column_sums", self.dim)
        n_rows = bounded_int(n_rows, "n_rows", 1, 2**63 - 1)
        if (np.abs(column_sums) > n_rows * (1.0 + 1e-9)).any():
            raise InvalidParameterError("`column_sums`: a column sum exceeds n_rows in absolute value", "column_sums")
        steps = bounded_int(steps, "steps", 1, MAX_MWEM_STEPS)
        if steps * self.dim > MAX_MWEM_WORK:
            raise InvalidParameterError(
                f"`steps`: steps * dim = {steps} * {self.dim} exceeds the cap of {MAX_MWEM_WORK} (each step is O(dim))",
                "steps",
            )
        epsilon = positive_float(epsilon, "epsilon")
        noise = bool_flag(noise, "noise")
        q = float(n_rows)
        d_measure = 2.0 if self.neighbour == "replace-one" else 1.0
        if noise and d_measure / self.eta / epsilon >= 8.0e12:  # the Rust twin's bound (rust/src/mwem.rs)
            raise InvalidParameterError(
                f"`epsilon` is too small for the grid (noise scale {d_measure / self.eta / epsilon:.3e} grid steps)",
                "epsilon",
            )
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
            with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below
                P[i] = P[i] * np.exp(self.grid_ * (mu - w_p[i]) / (2.0 * q))
                P[i] /= P[i].sum()
            if not np.isfinite(P[i]).all():
                raise InvalidParameterError(
                    f"`epsilon`: the Laplace measurement at epsilon={epsilon:g} overflowed this naive twin's update "
                    f"(measurement {mu:.3g} for a column sum of {column_sums[i]:.3g}); dpsumm.ProductMWEM takes it",
                    "epsilon",
                )
            total += P
        self.marginals_ = P
        self.steps_taken_ += steps
        return (total / steps) @ self.grid_
