"""Argument checks shared by the Python API. Each raises :class:`InvalidParameterError` naming the argument."""

from __future__ import annotations

import math
import numbers

import numpy as np

from .errors import InvalidParameterError


def positive_float(value: object, name: str) -> float:
    """``value`` as a finite float > 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidParameterError(f"`{name}` must be a real number, got {type(value).__name__}", name)
    v = float(value)
    if not np.isfinite(v) or v <= 0:
        raise InvalidParameterError(f"`{name}` must be a finite number > 0, got {value!r}", name)
    return v


def positive_int(value: object, name: str) -> int:
    """``value`` as an int >= 1."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidParameterError(f"`{name}` must be an integer, got {type(value).__name__}", name)
    v = int(value)
    if v < 1:
        raise InvalidParameterError(f"`{name}` must be >= 1, got {v}", name)
    return v


def bounded_int(value: object, name: str, low: int, high: int) -> int:
    """``value`` as an int in ``[low, high]`` (bools and floats refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidParameterError(f"`{name}` must be an integer, got {type(value).__name__}", name)
    v = int(value)
    if not low <= v <= high:
        raise InvalidParameterError(f"`{name}` must be between {low} and {high}, got {v}", name)
    return v


def real_pair(value: object, name: str) -> tuple[float, float]:
    """``value`` as ``(low, high)``: two finite reals with ``low < high``."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)) or len(value) != 2:
        raise InvalidParameterError(f"`{name}` must be a pair (low, high), got {value!r}", name)
    lo, hi = value
    for x in (lo, hi):
        if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(float(x)):
            raise InvalidParameterError(f"`{name}` must hold two finite real numbers, got {value!r}", name)
    if not float(lo) < float(hi):
        raise InvalidParameterError(f"`{name}` must be (low, high) with low < high, got {value!r}", name)
    return float(lo), float(hi)


def check_hashable(arr: np.ndarray, name: str, hasher_omega_max: float) -> None:
    """Refuse rows whose h1 projection ``omega . x`` could overflow float32.

    ``|omega_j . x| <= n_features * max|x| * max|omega|``; h1 computes in float32, so the bound must stay
    below ``float32.max``. Values beyond the float32 range are refused outright.
    """
    if arr.size == 0:
        return
    peak = float(np.abs(arr).max())
    f32max = float(np.finfo(np.float32).max)
    if peak > f32max:
        raise InvalidParameterError(f"`{name}` has values beyond the float32 range (|x| = {peak:.3g} > 3.4e38)", name)
    if peak * arr.shape[1] * hasher_omega_max >= f32max:
        raise InvalidParameterError(
            f"`{name}` has values too large for h1 at this gamma (|x| up to {peak:.3g}): omega . x would overflow float32; "
            "rescale the data or lower gamma",
            name,
        )


def float_matrix(X: object, name: str, *, n_features: int | None = None, allow_empty: bool = False) -> np.ndarray:
    """``X`` as a 2-D float32 or float64 array with finite values (no copy when it already is one)."""
    if X is None:
        raise InvalidParameterError(f"`{name}` must be an array, got None", name)
    try:
        arr = np.asarray(X)
    except Exception as exc:  # numpy raises many types on ragged or exotic input
        raise InvalidParameterError(f"`{name}` cannot be converted to an array: {exc}", name) from exc
    if arr.dtype.kind not in "fiub":
        raise InvalidParameterError(f"`{name}` must hold real numbers, got dtype {arr.dtype}", name)
    if arr.ndim != 2:
        raise InvalidParameterError(f"`{name}` must be 2-D (rows x features), got {arr.ndim}-D", name)
    if arr.dtype not in (np.float32, np.float64):
        arr = arr.astype(np.float64)
    if not allow_empty and arr.shape[0] == 0:
        raise InvalidParameterError(f"`{name}` has no rows", name)
    if arr.shape[1] == 0:
        raise InvalidParameterError(f"`{name}` has no features", name)
    if n_features is not None and arr.shape[1] != n_features:
        raise InvalidParameterError(
            f"`{name}` has {arr.shape[1]} features per row, expected {n_features}", name
        )
    if not all_finite(arr):
        raise InvalidParameterError(f"`{name}` contains NaN or infinite values", name)
    return arr


def all_finite(arr: np.ndarray, block_bytes: int = 1 << 24) -> bool:
    """``np.isfinite(arr).all()`` in row blocks of about 16 MB, so that no full-size temporary is made."""
    if arr.ndim == 0 or arr.size == 0:
        return bool(np.isfinite(arr).all())
    row_bytes = max(1, arr.itemsize * (arr.size // max(1, arr.shape[0])))
    step = max(1, block_bytes // row_bytes)
    for start in range(0, arr.shape[0], step):
        if not np.isfinite(arr[start : start + step]).all():
            return False
    return True


def seed_value(seed: object, name: str = "seed") -> int | str:
    """A public seed: a non-negative int or a str."""
    if isinstance(seed, str):
        return seed
    if isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and int(seed) >= 0:
        if int(seed) >= 2**64:
            raise InvalidParameterError(f"`{name}` must be below 2**64", name)
        return int(seed)
    raise InvalidParameterError(f"`{name}` must be a non-negative int or a str, got {seed!r}", name)
