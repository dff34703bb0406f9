"""Validated entry points to the Rust kernels: bid maximisation and exact RBF kernel sums."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import _core
from ._validation import float_matrix, positive_float
from .errors import InvalidParameterError

__all__ = ["BidIndex", "best_row", "best_rows", "mmd2", "kernel_sum", "kernel_row_means"]


def _hashes(H: object, name: str = "hashes") -> np.ndarray:
    arr = np.asarray(H)
    if arr.ndim != 2:
        raise InvalidParameterError(f"`{name}` must be 2-D, got {arr.ndim}-D", name)
    if arr.dtype != np.float32 or not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr, dtype=np.float32)
    return arr


def _vector(v: object, d: int) -> np.ndarray:
    try:
        arr = np.ascontiguousarray(v, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"`v` must be a vector of real numbers: {exc}", "v") from exc
    if arr.shape != (d,):
        raise InvalidParameterError(f"`v` must have shape ({d},), got {arr.shape}", "v")
    if not np.isfinite(arr).all():
        raise InvalidParameterError("`v` contains NaN or infinite values", "v")
    return arr


def _mask(m: object, n: int, name: str = "offered") -> np.ndarray | None:
    if m is None:
        return None
    arr = np.ascontiguousarray(m, dtype=bool)
    if arr.shape != (n,):
        raise InvalidParameterError(f"`{name}` must have shape ({n},), got {arr.shape}", name)
    return arr


def best_row(hashes: object, v: object, offered: object = None) -> tuple[float, int] | None:
    """The row of ``hashes`` with the largest ``h . v`` among rows not ``offered``.

    Products of float32 values are summed exactly in float64 in a fixed order, so the result does not
    depend on the number of threads; ties go to the lowest index.

    Parameters
    ----------
    hashes : ndarray of shape (n, d)
        Hashed rows (converted to C-contiguous float32 if needed).
    v : ndarray of shape (d,)
        The broadcast vector.
    offered : ndarray of shape (n,), bool, optional
        Rows to skip.

    Returns
    -------
    (value, index) or None
        None when every row is offered or ``hashes`` is empty.
    """
    H = _hashes(hashes)
    return _core.best_row(H, _vector(v, H.shape[1]), _mask(offered, H.shape[0]))


def best_rows(hashes: Sequence[object], v: object, offered: Sequence[object] | None = None) -> list[tuple[float, int] | None]:
    """:func:`best_row` for several owners against the same ``v``, in parallel."""
    if isinstance(hashes, (str, bytes, np.ndarray)) or not isinstance(hashes, Sequence):
        raise InvalidParameterError("`hashes` must be a list of 2-D float32 arrays (one per owner)", "hashes")
    if offered is not None and (isinstance(offered, (str, bytes, np.ndarray)) or not isinstance(offered, Sequence)):
        raise InvalidParameterError("`offered` must be a list of bool masks (one per owner) or None", "offered")
    Hs = [_hashes(h) for h in hashes]
    if not Hs:
        return []
    d = Hs[0].shape[1]
    for H in Hs:
        if H.shape[1] != d:
            raise InvalidParameterError("every entry of `hashes` must have the same number of columns", "hashes")
    if offered is not None and len(offered) != len(Hs):
        raise InvalidParameterError(f"`offered` has {len(offered)} entries, `hashes` has {len(Hs)}", "offered")
    masks = None if offered is None else [_mask(m, H.shape[0]) for m, H in zip(offered, Hs)]
    return _core.best_rows(Hs, _vector(v, d), masks)


class BidIndex:
    """An owner's stateful bid index: answers :func:`best_row` round after round, faster.

    Built once from an owner's hashed rows (:meth:`from_hashes`) or from its raw rows and the public
    hasher (:meth:`from_rows`), it stores every hash coordinate in 8 bits (a quarter of float32) and keeps
    the mask of rows already offered. :meth:`best` screens all rows with exact integer arithmetic, bounds
    the error of the 8-bit codes rigorously (every rounding included), and re-scores exactly, from the
    float32 hash, every row whose bound could still win. So its answer is *identical* to
    ``best_row(hashes, v, offered)``: the same value (float32 products summed in float64 in a fixed order)
    and the same winner (lowest index on ties), whatever the thread count.

    With :meth:`from_rows` the index holds no float32 hashes at all: h1 is row-canonical (a row hashed
    alone gives the same bits as inside a matrix), so the hash of a row to re-score is recomputed from the
    raw row. The raw rows (or hashes) are referenced, never copied, and must not change afterwards.

    Examples
    --------
    >>> import numpy as np, dpsumm
    >>> X = np.random.default_rng(0).random((1000, 5), dtype=np.float32)
    >>> h = dpsumm.RFFHasher(5, dim=16, seed=0)
    >>> index = dpsumm.BidIndex.from_rows(X, h)
    >>> v = np.ones(16, dtype=np.float32)
    >>> index.best(v) == dpsumm.best_row(h.transform(X), v)
    True
    """

    def __init__(self, core: "_core.BidIndex") -> None:
        self._core = core

    @classmethod
    def from_hashes(cls, hashes: object) -> "BidIndex":
        """The index of hashed rows (n, d): float32 C-contiguous arrays are referenced, others converted."""
        return cls(_core.BidIndex.from_hashes(_hashes(hashes)))

    @classmethod
    def from_rows(cls, rows: object, hasher: object) -> "BidIndex":
        """The index of ``hasher.transform(rows)`` without storing it.

        Parameters
        ----------
        rows : ndarray of shape (n, n_features)
            float32 or float64, any memory order: referenced, not copied (other dtypes are converted to
            float64 once). Values must be finite.
        hasher : RFFHasher
        """
        from .hashing import RFFHasher

        if not isinstance(hasher, RFFHasher):
            raise InvalidParameterError("`hasher` must be a dpsumm.RFFHasher", "hasher")
        arr = np.asarray(rows)
        if arr.ndim != 2:
            raise InvalidParameterError(f"`rows` must be 2-D, got {arr.ndim}-D", "rows")
        if arr.dtype not in (np.float32, np.float64):
            if arr.dtype.kind not in "iub":
                raise InvalidParameterError(f"`rows` must hold real numbers, got dtype {arr.dtype}", "rows")
            arr = arr.astype(np.float64)
        if arr.shape[1] != hasher.n_features:
            raise InvalidParameterError(f"`rows` has {arr.shape[1]} features, the hasher {hasher.n_features}", "rows")
        return cls(_core.BidIndex.from_rows(arr, hasher._projection))

    def best(self, v: object) -> tuple[float, int] | None:
        """``(value, index)`` of the best row not offered for ``v`` (as :func:`best_row`), or None."""
        return self._core.best(_vector(v, self._core.dim))

    def mark_offered(self, index: int) -> bool:
        """Exclude row ``index`` from all later bids; False if it already was."""
        return self._core.mark_offered(_index(index, self._core.n_rows))

    def is_offered(self, index: int) -> bool:
        return self._core.is_offered(_index(index, self._core.n_rows))

    def hash_row(self, index: int) -> np.ndarray:
        """The exact float32 hash of row ``index``."""
        return self._core.hash_row(_index(index, self._core.n_rows))

    @property
    def offered(self) -> np.ndarray:
        """A copy of the offered mask (one bool per row)."""
        return self._core.offered

    @property
    def n_rows(self) -> int:
        return self._core.n_rows

    @property
    def dim(self) -> int:
        return self._core.dim

    @property
    def n_offered(self) -> int:
        return self._core.n_offered

    @property
    def nbytes(self) -> int:
        """Bytes held by the 8-bit codes (about ``n_rows * dim``)."""
        return self._core.nbytes

    @property
    def last_rescored(self) -> int:
        """How many rows the last :meth:`best` re-scored exactly."""
        return self._core.last_rescored

    def __len__(self) -> int:
        return self._core.n_rows

    def __repr__(self) -> str:
        src = "rows" if self._core.from_raw_rows else "hashes"
        return f"BidIndex(n_rows={self.n_rows}, dim={self.dim}, offered={self.n_offered}, from={src})"


def _index(i: object, n: int) -> int:
    import numbers

    if isinstance(i, bool) or not isinstance(i, numbers.Integral):
        raise InvalidParameterError(f"`index` must be an integer, got {type(i).__name__}", "index")
    if not 0 <= int(i) < n:
        raise InvalidParameterError(f"`index` must be a row in [0, {n}), got {int(i)}", "index")
    return int(i)


def mmd2(A: object, B: object, gamma: float) -> float:
    """Biased (V-statistic) squared MMD between the rows of ``A`` and ``B`` under ``exp(-gamma ||x-y||^2)``.

    Exact kernel (no hashing), blockwise with bounded extra memory, parallel. Inner products are
    computed in float32 and the kernel values summed in float64.
    """
    g = positive_float(gamma, "gamma")
    A_ = float_matrix(A, "A")
    B_ = float_matrix(B, "B", n_features=A_.shape[1])
    return _core.mmd2(A_, B_, g)


def kernel_sum(A: object, B: object, gamma: float) -> float:
    """``sum_{a in A, b in B} exp(-gamma ||a - b||^2)`` (exact kernel)."""
    g = positive_float(gamma, "gamma")
    A_ = float_matrix(A, "A")
    B_ = float_matrix(B, "B", n_features=A_.shape[1])
    return _core.kernel_sum(A_, B_, g)


def kernel_row_means(A: object, B: object, gamma: float) -> np.ndarray:
    """For every row ``a`` of ``A``, ``mean_{b in B} exp(-gamma ||a - b||^2)`` (float64)."""
    g = positive_float(gamma, "gamma")
    A_ = float_matrix(A, "A", allow_empty=True)
    B_ = float_matrix(B, "B", n_features=A_.shape[1])
    return _core.kernel_row_means(A_, B_, g)
