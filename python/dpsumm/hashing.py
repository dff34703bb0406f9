"""h1: random Fourier features (paper Algorithm 1)."""

from __future__ import annotations

import numpy as np

from . import _core
from ._validation import bounded_int, float_matrix, positive_float, seed_value
from .errors import InvalidParameterError

__all__ = ["RFFHasher", "MAX_DIM", "MAX_N_FEATURES", "MAX_PROJECTION", "MAX_GAMMA"]

#: Caps on the projection (rust/src/limits.rs): checked before anything is allocated.
MAX_DIM = 1 << 20
MAX_N_FEATURES = 1 << 24
MAX_PROJECTION = 1 << 28
MAX_GAMMA = 1e74


class RFFHasher:
    r"""Random Fourier feature map ``h1`` for the RBF kernel ``exp(-gamma * ||x - y||^2)``.

    ``h1(x)_j = sqrt(2 / dim) * cos(omega_j . x + b_j)`` with ``omega_j ~ N(0, 2 gamma I)`` and
    ``b_j ~ U[0, 2 pi)`` (Rahimi & Recht 2007; paper Alg. 1), so ``h1(x) . h1(y)`` approximates the
    kernel. The projection is public: it is derived from ``seed`` with a ChaCha20 stream and portable
    arithmetic, so every party that agrees on ``(n_features, dim, gamma, seed)`` gets bit-identical
    ``omega_`` and ``offset_`` on any machine. No privacy budget is involved.

    Parameters
    ----------
    n_features : int
        Number of input features.
    dim : int, default=140
        Number of random features ``d`` (at most ``MAX_DIM`` = 2**20, and ``n_features * dim`` at most
        ``MAX_PROJECTION`` = 2**28).
    gamma : float, default=0.1
        RBF kernel width (at most ``MAX_GAMMA`` = 1e74). Rows whose projection ``|omega . x|`` leaves
        the domain of h1's float32 cosine (about 4089) are refused by :meth:`transform` with an :class:`~dpsumm.InvalidParameterError`.
    seed : int or str, default=0
        Public seed the parties agree on.

    Attributes
    ----------
    omega_ : ndarray of shape (n_features, dim), float32
        Column ``j`` is ``omega_j``.
    offset_ : ndarray of shape (dim,), float32
        The phases ``b_j``.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np, dpsumm
    >>> h = dpsumm.RFFHasher(n_features=3, dim=8, seed="demo")
    >>> h.transform(np.zeros((2, 3))).shape
    (2, 8)
    """

    def __init__(self, n_features: int, dim: int = 140, gamma: float = 0.1, seed: int | str = 0) -> None:
        self.n_features = bounded_int(n_features, "n_features", 1, MAX_N_FEATURES)
        self.dim = bounded_int(dim, "dim", 1, MAX_DIM)
        if self.n_features * self.dim > MAX_PROJECTION:
            raise InvalidParameterError(
                f"`dim`: n_features * dim = {self.n_features} * {self.dim} exceeds the cap of {MAX_PROJECTION} (the projection omega)",
                "dim",
            )
        self.gamma = positive_float(gamma, "gamma")
        if self.gamma > MAX_GAMMA:
            raise InvalidParameterError(f"`gamma` must be at most {MAX_GAMMA:g} (omega ~ N(0, 2 gamma) must fit float32), got {gamma!r}", "gamma")
        self.seed = seed_value(seed)
        self._projection = _core.RffProjection(self.n_features, self.dim, self.gamma, self.seed)
        self.omega_: np.ndarray = self._projection.omega
        self.offset_: np.ndarray = self._projection.offset
        self.n_features_in_ = self.n_features

    def fit(self, X: object = None, y: object = None) -> "RFFHasher":
        """Do nothing and return ``self``: the projection is fixed by the public seed.

        Present so that the hasher fits in scikit-learn pipelines. ``X``, if given, is validated.
        """
        if X is not None:
            float_matrix(X, "X", n_features=self.n_features, allow_empty=True)
        return self

    def transform(self, X: object) -> np.ndarray:
        """Hash the rows of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            float32 or float64 in any memory order (C-contiguous float32 is fastest); other real dtypes
            are converted to float64 first. Values must be finite.

        Returns
        -------
        ndarray of shape (n_samples, dim), float32, C-contiguous
        """
        if X is None:
            raise InvalidParameterError("`X` must be a 2-D array, got None", "X")
        arr = np.asarray(X)
        if arr.dtype not in (np.float32, np.float64) or arr.ndim != 2:
            arr = float_matrix(arr, "X", n_features=self.n_features, allow_empty=True)
        return self._projection.transform(arr)

    def fit_transform(self, X: object, y: object = None) -> np.ndarray:
        """``fit(X).transform(X)``."""
        return self.fit(X).transform(X)

    def __repr__(self) -> str:
        return f"RFFHasher(n_features={self.n_features}, dim={self.dim}, gamma={self.gamma}, seed={self.seed!r})"
