"""The numpy twin of rust/src/owner_sketch.rs: an owner's hash sum (the cell purchases' owner release, before noise)
and its rows' scores along a released direction (the direction purchase's cells in the kernel space).

It hashes every row at once (``n x d``: for tests only) and must agree with the Rust kernels
``_core.owner_hash_sum`` and ``_core.owner_hash_scores`` to float64 rounding. It checks its arguments as the
kernels do (which take the raw rows and the projection where this takes the hashes ``H``): ``H`` must have rows,
finite in float32, and a direction one finite value per hash, or an :class:`~dpsumm.InvalidParameterError` names
the argument before any work.
"""

from __future__ import annotations

import numpy as np

from ..errors import InvalidParameterError
from .kernels import _float32_rows

__all__ = ["hash_scores", "hash_sum"]


def _hashes(H: object) -> np.ndarray:
    """``H`` as the Rust kernels' rows: 2-D, at least one row and one column, finite in float32."""
    return _float32_rows(H, "H")


def hash_sum(H: np.ndarray) -> np.ndarray:
    """``sum_x h1(x)`` from the float32 hashes ``H`` (n, d), in float64."""
    H = _hashes(H)
    out: np.ndarray = np.asarray(H, dtype=np.float64).sum(axis=0)
    return out


def hash_scores(H: np.ndarray, direction: np.ndarray, shift: float) -> np.ndarray:
    """Every row's ``h1(x) . direction - shift`` from the float32 hashes ``H`` (n, d), in float64."""
    H = _hashes(H)
    w = np.asarray(direction, dtype=np.float64)
    if w.shape != (H.shape[1],) or not np.isfinite(w).all() or not np.isfinite(shift):
        raise InvalidParameterError(
            f"`direction` must be {H.shape[1]} finite values and `shift` finite, got shape {w.shape}", "direction"
        )
    out: np.ndarray = np.asarray(H, dtype=np.float64) @ w - float(shift)
    return out
