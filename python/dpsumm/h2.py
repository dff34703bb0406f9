"""h2: the differentially private hash of a set of hashed rows (paper Alg. 2; docs/explanation/paper.md).

:class:`H2` holds a growing multiset of h1 rows as the column sums of their quantized values (each row is
quantized once, when it is added) and a warm-started product-distribution MWEM
(:class:`dpsumm.privacy.ProductMWEM`). :meth:`H2.release` runs ``steps`` MWEM steps at ``epsilon`` each and
returns the DP estimate of ``mean h1`` over the rows held so far. Carrying the MWEM state from one
release to the next is post-processing of earlier releases (docs/explanation/paper.md).

Privacy of one release (docs/explanation/paper.md): each of the ``steps`` steps is one exponential-mechanism
selection and one Laplace measurement, each ``epsilon``-DP with respect to the rows held, under the
neighbour relation given at construction (``"replace-one"``: sensitivity 2 for both).
"""

from __future__ import annotations

import numpy as np

from ._validation import bounded_int, float32_array, instance_of, real_matrix
from .errors import InvalidParameterError
from .privacy import MAX_DIM, Csprng, ProductMWEM, quantize_column_sums

__all__ = ["H2"]


class H2:
    """Warm-started h2 over a growing set of h1 rows.

    Parameters
    ----------
    dim : int
        Dimension ``d`` of the h1 rows.
    eta : float
        Quantization step (``2 / eta`` an integer).
    rng : Csprng
        The CSPRNG for quantization and MWEM noise.
    neighbour : {"replace-one", "add-remove"}
        Neighbour relation the releases are private under.
    """

    def __init__(self, dim: int, eta: float, rng: Csprng, neighbour: str = "replace-one") -> None:
        dim = bounded_int(dim, "dim", 1, MAX_DIM)
        rng = instance_of(rng, Csprng, "rng", "a dpsumm.privacy.Csprng")
        self.dim = dim
        self.eta = eta
        self.neighbour = neighbour
        self._rng = rng
        self._scale = np.float32(np.sqrt(dim / 2.0))
        self.mwem = ProductMWEM(dim, eta, neighbour=neighbour, random_state=rng.derive("mwem"))
        self.column_sums = np.zeros(dim, dtype=np.float64)
        self.n_rows = 0

    def add(self, hashes: np.ndarray) -> None:
        """Quantize h1 rows (shape (m, dim)) once and add them to the column sums."""
        hashes = real_matrix(hashes, "hashes", " (rows x dim)")
        if hashes.shape[1] != self.dim:
            raise InvalidParameterError(f"`hashes` must have {self.dim} columns, got {hashes.shape[1]}", "hashes")
        if hashes.shape[0] == 0:
            return
        scaled = np.clip(float32_array(hashes, "hashes") * self._scale, -1.0, 1.0)
        self.column_sums += quantize_column_sums(scaled, self.eta, self._rng)
        self.n_rows += hashes.shape[0]

    def release(self, steps: int, epsilon: float) -> np.ndarray:
        """The DP estimate of ``mean h1`` over the rows held: ``sqrt(2/d) * w(P_avg) / q`` (Alg. 2 line 9)."""
        estimate = self.mwem.release(self.column_sums, self.n_rows, steps, epsilon)
        return (np.asarray(estimate, dtype=np.float64) / float(self._scale)).astype(np.float64)
