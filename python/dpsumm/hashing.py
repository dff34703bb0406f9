"""h1: random Fourier features (paper Algorithm 1)."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _core
from ._validation import as_array, bounded_int, float32_array, float_matrix, positive_float, seed_value
from .errors import InvalidParameterError, NotFittedError

__all__ = [
    "RFFHasher",
    "hash_digests",
    "DIGEST_BYTES",
    "MAX_DIM",
    "MAX_N_FEATURES",
    "MAX_PROJECTION",
    "MAX_GAMMA",
    "MAX_THREADS",
]

#: Caps on the projection (rust/src/limits.rs): checked before anything is allocated.
MAX_DIM = 1 << 20
MAX_N_FEATURES = 1 << 24
MAX_PROJECTION = 1 << 28
MAX_GAMMA = 1e74
#: Most threads a transform may be given (rust/src/bindings/threads.rs).
MAX_THREADS = 4096
#: Length of a hash digest (:func:`hash_digests`): BLAKE2b-128.
DIGEST_BYTES = 16


def hash_digests(hashes: object) -> np.ndarray:
    """A BLAKE2b-128 digest of each row of ``hashes``: the commitment an owner sends instead of its h1 hashes.

    Each digest covers the row's float32 values in little-endian byte order, so it is the same on every
    machine, as h1 itself is (docs/explanation/design.md). An owner that nominates digests instead of hashes commits to
    its nominees as firmly (BLAKE2b is collision-resistant: selling a row whose h1 differs from the nominated
    one is detected, exactly as with the hash itself) while the aggregator holds 16 bytes per nominee instead
    of ``4 d`` and sees no hash of a row it does not buy.

    Parameters
    ----------
    hashes : array-like of shape (n, d)
        h1 hashes (converted to little-endian float32: values beyond the float32 range are refused).

    Returns
    -------
    ndarray of shape (n, DIGEST_BYTES), uint8
    """
    H = np.asarray(hashes)
    if H.ndim != 2 or H.dtype.kind != "f":
        raise InvalidParameterError(
            f"`hashes` must be a 2-D float array, got shape {H.shape} and dtype {H.dtype}", "hashes"
        )
    # float32 values (the digest covers their little-endian bytes: the Rust kernel writes each value with
    # to_le_bytes, whatever the input's byte order); digested in parallel without the GIL (rust/src/digest.rs).
    digests: np.ndarray = _core.row_digests(float32_array(H, "hashes"))
    return digests


def _input(X: object) -> np.ndarray:
    """``X`` as an array, with scikit-learn's messages for sparse, complex and 1-D input."""
    if hasattr(X, "toarray") or hasattr(X, "tocsr"):
        raise InvalidParameterError("`X`: sparse input is not supported, pass a dense array (X.toarray())", "X")
    arr = as_array(X, "X")
    if np.iscomplexobj(arr):
        raise InvalidParameterError("`X` must hold real numbers: Complex data not supported", "X")
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(f"`X` must hold real numbers: {exc}", "X") from None
        except OverflowError:  # an int beyond the float range (10**400)
            raise InvalidParameterError("`X` has values beyond the float range (|x| > 1.8e308)", "X") from None
    if arr.ndim == 2 and arr.shape[1] == 0:
        raise InvalidParameterError(f"`X` has 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required.", "X")
    if arr.ndim == 1:
        raise InvalidParameterError(
            "`X` must be 2-D (rows x features), got 1-D: Reshape your data with "
            "X.reshape(-1, 1) (one feature) or X.reshape(1, -1) (one row)",
            "X",
        )
    return arr


class RFFHasher:
    r"""Random Fourier feature map ``h1`` for the RBF kernel ``exp(-gamma * ||x - y||^2)``.

    ``h1(x)_j = sqrt(2 / dim) * cos(omega_j . x + b_j)`` with ``omega_j ~ N(0, 2 gamma I)`` and
    ``b_j ~ U[0, 2 pi)`` (Rahimi & Recht 2007; paper Alg. 1), so ``h1(x) . h1(y)`` approximates the
    kernel. The projection is public: it is derived from ``seed`` with a ChaCha20 stream and portable
    arithmetic, so every party that agrees on ``(n_features, dim, gamma, seed)`` gets bit-identical
    ``omega_`` and ``offset_`` on any machine. No privacy budget is involved.

    A scikit-learn transformer (``get_params``/``set_params``, ``clone``, ``Pipeline``,
    ``cross_val_score``, pickle and joblib): ``fit(X)`` learns ``n_features_in_`` from ``X`` (and checks
    it against ``n_features`` when that was given). With ``n_features`` given, ``transform`` works
    without ``fit``, since the projection depends on public parameters only. Unlike scikit-learn's own
    estimators, parameters are validated in ``__init__`` and ``set_params`` (errors come first).

    Parameters
    ----------
    n_features : int or None, default=None
        Number of input features; None learns it in ``fit``.
    dim : int, default=140
        Number of random features ``d`` (at most ``MAX_DIM`` = 2**20, and ``n_features * dim`` at most
        ``MAX_PROJECTION`` = 2**28).
    gamma : float, default=0.1
        RBF kernel width (at most ``MAX_GAMMA`` = 1e74). Rows whose projection ``|omega . x|`` leaves
        the domain of h1's float32 cosine (about 4089) are refused by :meth:`transform` with an :class:`~dpsumm.InvalidParameterError`.
    seed : int or str, default=0
        Public seed the parties agree on.
    threads : int or None, default=None
        Most threads :meth:`transform` uses. None: the core's default pool, sized by the environment variable
        ``RAYON_NUM_THREADS`` when set, else one thread per core (every pool survives ``fork``). The hashes
        are bit-identical for every thread count and every way of splitting the rows into calls (each
        ``h1(x)_j`` is one float32 fused-multiply-add chain over the features in index order from +0.0,
        then the cosine).

    Notes
    -----
    Accuracy (float32): ``z_j = omega_j . x`` is one fused-multiply-add chain in float32, one rounding
    per feature, so ``|z_j - exact| <= n_features * 2**-24 * sum_k |x_k omega_kj|`` (worst case; the
    rounding errors typically cancel to about ``sqrt(n_features)`` times the unit roundoff). The cosine
    adds at most 2e-7 for ``|z_j + b_j| < 4096``, and the factor ``sqrt(2 / dim)`` scales both:
    ``|h1(x)_j - exact| <= sqrt(2 / dim) * (|z_j - exact| + 3e-7)``. tests/test_hashing.py checks
    this bound element by element against a float64 evaluation.

    Attributes
    ----------
    omega_ : ndarray of shape (n_features, dim), float32
        Column ``j`` is ``omega_j``.
    offset_ : ndarray of shape (dim,), float32
        The phases ``b_j``.
    n_features_in_ : int
        Set by ``fit``.

    Examples
    --------
    >>> import numpy as np, dpsumm
    >>> h = dpsumm.RFFHasher(n_features=3, dim=8, seed="demo")
    >>> h.transform(np.zeros((2, 3))).shape
    (2, 8)
    >>> dpsumm.RFFHasher(dim=8).fit(np.zeros((5, 4))).n_features_in_
    4
    """

    def __init__(
        self,
        n_features: int | None = None,
        dim: int = 140,
        gamma: float = 0.1,
        seed: int | str = 0,
        threads: int | None = None,
    ) -> None:
        self.n_features = n_features
        self.dim = dim
        self.gamma = gamma
        self.seed = seed
        self.threads = threads
        self._check_params()
        self._cache: tuple[tuple[int, int, float, int | str], _core.RffProjection] | None = None

    # -- parameters (scikit-learn's estimator API, without depending on scikit-learn)

    def _check_params(self) -> tuple[int | None, int, float, int | str]:
        n = None if self.n_features is None else bounded_int(self.n_features, "n_features", 1, MAX_N_FEATURES)
        dim = bounded_int(self.dim, "dim", 1, MAX_DIM)
        if n is not None and n * dim > MAX_PROJECTION:
            raise InvalidParameterError(
                f"`dim`: n_features * dim = {n} * {dim} exceeds the cap of {MAX_PROJECTION} (the projection omega)",
                "dim",
            )
        gamma = positive_float(self.gamma, "gamma")
        if self.threads is not None:
            bounded_int(self.threads, "threads", 1, MAX_THREADS)
        if gamma > MAX_GAMMA:
            raise InvalidParameterError(
                f"`gamma` must be at most {MAX_GAMMA:g} (omega ~ N(0, 2 gamma) must fit float32), got {self.gamma!r}",
                "gamma",
            )
        return n, dim, gamma, seed_value(self.seed)

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's parameters (scikit-learn API)."""
        return {
            "n_features": self.n_features,
            "dim": self.dim,
            "gamma": self.gamma,
            "seed": self.seed,
            "threads": self.threads,
        }

    def set_params(self, **params: Any) -> RFFHasher:
        """Set constructor parameters (scikit-learn API); validated, the projection follows them."""
        valid = self.get_params()
        for key in params:
            if key not in valid:
                raise InvalidParameterError(f"invalid parameter {key!r} for RFFHasher; valid: {sorted(valid)}", key)
        old = dict(valid)
        for key, value in params.items():
            setattr(self, key, value)
        try:
            self._check_params()
        except InvalidParameterError:
            for key, value in old.items():
                setattr(self, key, value)
            raise
        return self

    def __sklearn_tags__(self) -> Any:
        from sklearn.utils import Tags, TargetTags, TransformerTags

        return Tags(
            estimator_type=None,
            target_tags=TargetTags(required=False),
            transformer_tags=TransformerTags(preserves_dtype=["float32"]),
            requires_fit=self.n_features is None,
        )

    # -- the projection

    def _features(self) -> int:
        n, _, _, _ = self._check_params()
        fitted = getattr(self, "n_features_in_", None)
        if n is None and fitted is None:
            raise NotFittedError("this RFFHasher has no n_features: call fit(X) first or give n_features")
        return n if n is not None else int(fitted)  # type: ignore[arg-type]

    @property
    def _projection(self) -> _core.RffProjection:
        n_features = self._features()
        _, dim, gamma, seed = self._check_params()
        key = (n_features, dim, gamma, seed)
        if self._cache is None or self._cache[0] != key:
            self._cache = (key, _core.RffProjection(n_features, dim, gamma, seed))
        return self._cache[1]

    @property
    def omega_(self) -> np.ndarray:
        """``omega`` (n_features, dim), float32."""
        return self._projection.omega  # unfitted: NotFittedError, an AttributeError (hasattr is False)

    @property
    def offset_(self) -> np.ndarray:
        """The phases ``b`` (dim,), float32."""
        return self._projection.offset  # unfitted: NotFittedError, an AttributeError (hasattr is False)

    def fit(self, X: object, y: object = None) -> RFFHasher:
        """Learn ``n_features_in_`` from ``X`` (the projection itself is fixed by the public seed).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        arr = _input(X)
        if arr.ndim == 2 and arr.shape[0] == 0:
            raise InvalidParameterError(
                f"`X` has 0 sample(s) (shape={arr.shape}) while a minimum of 1 is required.", "X"
            )
        arr = float_matrix(arr, "X")
        n, _, _, _ = self._check_params()
        if n is not None and arr.shape[1] != n:
            raise InvalidParameterError(
                f"X has {arr.shape[1]} features, but RFFHasher is expecting {n} features as input (n_features)", "X"
            )
        self.n_features_in_ = int(arr.shape[1])
        _ = self._projection  # build it now: transform leaves the estimator's state alone
        return self

    def transform(self, X: object, out: np.ndarray | None = None) -> np.ndarray:
        """Hash the rows of ``X``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            float32 or float64 in any memory order (C-contiguous float32 is fastest); other real dtypes
            are converted to float64 first. Values must be finite.
        out : ndarray of shape (n_samples, dim), float32, C-contiguous, writeable, optional
            Write the hashes into this array (sharing no memory with ``X``) and return it, as numpy's ``out=``:
            repeated calls then reuse one array. A new result of gigabytes is fresh memory the kernel must
            supply first, which can take longer than hashing into it (benches/bench_floor.py's sweep). If the
            call raises, the contents of ``out`` are unspecified.

        Returns
        -------
        ndarray of shape (n_samples, dim), float32, C-contiguous
            ``out`` when given.
        """
        n_features = self._features()
        arr = X if isinstance(X, np.ndarray) and not isinstance(X, np.ma.MaskedArray) else _input(X)
        if not (arr.dtype in (np.float32, np.float64) and arr.ndim == 2):
            arr = float_matrix(_input(arr), "X", allow_empty=True)
        if arr.shape[1] != n_features:
            raise InvalidParameterError(
                f"X has {arr.shape[1]} features, but RFFHasher is expecting {n_features} features as input", "X"
            )
        if out is not None and (not isinstance(out, np.ndarray) or isinstance(out, np.ma.MaskedArray)):
            raise InvalidParameterError(f"`out` must be a numpy array, got {type(out).__name__}", "out")
        threads = None if self.threads is None else int(self.threads)
        result: np.ndarray = self._projection.transform(arr, threads=threads, out=out)
        return result

    def fit_transform(self, X: object, y: object = None) -> np.ndarray:
        """``fit(X).transform(X)``."""
        return self.fit(X).transform(X)

    # -- persistence: the Rust projection is rebuilt from the public parameters

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_cache"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state.setdefault("threads", None)  # pickles from before the option
        self.__dict__.update(state)

    def __repr__(self) -> str:
        nf = "" if self.n_features is None else f"n_features={self.n_features}, "
        th = "" if self.threads is None else f", threads={self.threads}"
        return f"RFFHasher({nf}dim={self.dim}, gamma={self.gamma}, seed={self.seed!r}{th})"
