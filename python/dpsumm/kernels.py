"""Validated entry points to the Rust kernels: bid maximisation and exact RBF kernel sums."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import _core
from ._validation import float_matrix, positive_float
from .errors import InvalidParameterError

__all__ = ["best_row", "best_rows", "mmd2", "kernel_sum", "kernel_row_means"]


def _hashes(H: object, name: str = "hashes") -> np.ndarray:
    arr = np.asarray(H)
    if arr.ndim != 2:
        raise InvalidParameterError(f"`{name}` must be 2-D, got {arr.ndim}-D", name)
    if arr.dtype != np.float32 or not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr, dtype=np.float32)
    return arr


def _vector(v: object, d: int) -> np.ndarray:
    arr = np.ascontiguousarray(v, dtype=np.float32)
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
