"""Argument checks shared by the Python API. Each raises :class:`InvalidParameterError` naming the argument."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import numpy as np

from . import _core
from .errors import InvalidParameterError

_T = TypeVar("_T")


def _brief(value: object) -> str:
    """``repr(value)`` cut to 60 characters (an int of 10**400 has 401 digits)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def exc_text(exc: BaseException) -> str:
    """``"Type: message"`` of an exception from another library (pyarrow's span several lines), on one line."""
    return " ".join(f"{type(exc).__name__}: {exc}".split())


def real_number(value: object, name: str) -> float:
    """``value`` as a float: a real number (an int, a float, a numpy scalar, a Fraction; not a bool or a numpy bool),
    within the float range. An int or Fraction beyond it (``10**400``) is an :class:`InvalidParameterError` naming
    ``name``, not Python's bare ``OverflowError``. NaN and infinities pass: the caller decides."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise InvalidParameterError(f"`{name}` must be a real number, got {type(value).__name__}", name)
    try:
        return float(value)
    except (OverflowError, ValueError, TypeError) as exc:
        raise InvalidParameterError(
            f"`{name}` is beyond the float range (|x| > 1.8e308), got {_brief(value)}", name
        ) from exc


def finite_float(value: object, name: str) -> float:
    """``value`` as a finite float (:func:`real_number`, then NaN and infinities refused)."""
    v = real_number(value, name)
    if not math.isfinite(v):
        raise InvalidParameterError(f"`{name}` must be a finite number, got {_brief(value)}", name)
    return v


def instance_of(value: object, cls: type[_T], name: str, what: str) -> _T:
    """``value`` when it is a ``cls``; ``what`` names the type in the error (e.g. ``"a dpsumm.RFFHasher"``)."""
    if not isinstance(value, cls):
        raise InvalidParameterError(f"`{name}` must be {what}, got {type(value).__name__}", name)
    return value


def bool_flag(value: object, name: str) -> bool:
    """``value`` as a bool: a Python or numpy bool only (the string "False" or the int 0 is refused)."""
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidParameterError(f"`{name}` must be a bool, got {type(value).__name__}", name)
    return bool(value)


def positive_float(value: object, name: str) -> float:
    """``value`` as a finite float > 0."""
    v = real_number(value, name)
    if not math.isfinite(v) or v <= 0:
        raise InvalidParameterError(f"`{name}` must be a finite number > 0, got {_brief(value)}", name)
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
        raise InvalidParameterError(f"`{name}` must be between {low} and {high}, got {_brief(v)}", name)
    return v


def bounded_float(value: object, name: str, low: float, high: float, why: str = "") -> float:
    """``value`` as a float in ``[low, high]`` (NaN and infinities refused); ``why`` follows the range in the error."""
    v = real_number(value, name)
    if not (math.isfinite(v) and low <= v <= high):
        raise InvalidParameterError(f"`{name}` must lie in [{low:g}, {high:g}]{why}, got {_brief(value)}", name)
    return v


def real_pair(value: object, name: str) -> tuple[float, float]:
    """``value`` as ``(low, high)``: two finite reals with ``low < high``."""
    if isinstance(value, np.ndarray) and value.shape == (2,) and value.dtype.kind in "iuf":
        value = value.tolist()
    if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)) or len(value) != 2:
        raise InvalidParameterError(f"`{name}` must be a pair (low, high), got {value!r}", name)
    pair = []
    for x in value:
        try:
            pair.append(finite_float(x, name))
        except InvalidParameterError:
            raise InvalidParameterError(
                f"`{name}` must hold two finite real numbers, got {_brief(value)}", name
            ) from None
    lo, hi = pair
    if not lo < hi:
        raise InvalidParameterError(f"`{name}` must be (low, high) with low < high, got {_brief(value)}", name)
    return lo, hi


#: h1's float32 cosine is accurate for |omega . x + b| below this (rust/src/simd.rs COS_DOMAIN, margin 7).
H1_ARGUMENT_LIMIT = 4089.0


def check_hashable(
    arr: np.ndarray, name: str, hasher: Any, projection_blame: str | None = None, peak: float | None = None
) -> None:
    """Refuse rows that h1 cannot hash: beyond float32, or ``|omega . x|`` beyond the cosine's domain.

    A fast bound first: ``|omega_j . x| <= max|x| * max_j ||omega_j||_1`` (plus ``b < 2 pi``). Only when
    the bound fails are the rows hashed, which checks every projection exactly. Raises
    :class:`InvalidParameterError` naming ``name`` (or ``projection_blame`` for a projection out of range,
    when another argument, e.g. a user's ``gamma``, is what to change). ``peak``: ``max |x|`` from an earlier
    read of the same rows (:func:`float_matrix_peak`; ``inf`` when a value is beyond float32), so that the rows
    are not read again; None reads them.
    """
    if 0 in arr.shape:  # (not arr.size: rows read from files, dpsumm.sources.ParquetRows, have a shape only)
        return
    scanned = _scan(arr) if peak is None else peak  # one parallel read: finiteness in float32 and max |x|
    if scanned is None or not math.isfinite(scanned):
        raise InvalidParameterError(
            f"`{name}` contains NaN or infinite values (or values beyond the float32 range, |x| > 3.4e38)", name
        )
    peak = scanned
    l1 = float(np.abs(np.asarray(hasher.omega_, dtype=np.float64)).sum(axis=0).max())
    if peak * l1 + 2 * math.pi < H1_ARGUMENT_LIMIT:
        return
    # Blocks of at most 4M values in and out (16 MB of hashes): the check holds no full-size output.
    step = max(1, (1 << 22) // max(1, arr.shape[1], int(hasher.dim)))
    for start in range(0, arr.shape[0], step):
        try:
            hasher.transform(arr[start : start + step])
        except InvalidParameterError as exc:
            raise InvalidParameterError(
                f"`{name}` has rows h1 cannot hash at gamma={hasher.gamma:g} (|x| up to {peak:.3g}): "
                f"|omega . x| would exceed {H1_ARGUMENT_LIMIT:g}; scale the features to a public range "
                "(dpsumm.scale_to_unit; CLI: --scale 'NAME=LOW:HIGH,...' or --scale seed) or lower gamma",
                projection_blame or name,
            ) from exc


def as_array(value: object, name: str) -> np.ndarray:
    """``np.asarray(value)``, with any failure (ragged or exotic input: numpy raises many types) an
    :class:`InvalidParameterError` naming ``name``.

    A masked array with masked entries is refused: ``np.asarray`` would use the values under the mask as data.
    An iterator or generator is refused too (numpy makes a 0-d object array of it)."""
    if isinstance(value, np.ma.MaskedArray) and np.ma.getmaskarray(value).any():
        raise InvalidParameterError(
            f"`{name}` is a masked array with {int(np.ma.getmaskarray(value).sum())} masked "
            "entries: fill them (np.ma.filled) or drop their rows first",
            name,
        )
    if isinstance(value, Iterator):
        raise InvalidParameterError(
            f"`{name}` must be an array or a list, got {type(value).__name__} (an iterator): pass list(...) of it", name
        )
    try:
        return np.asarray(value)
    except Exception as exc:  # noqa: BLE001 - numpy raises many types on ragged or exotic input
        raise InvalidParameterError(f"`{name}` cannot be converted to an array: {str(exc)[:200]}", name) from exc


def real_vector(
    value: object, name: str, length: int | None = None, *, finite: bool = True, kinds: str = "fiu"
) -> np.ndarray:
    """``value`` as a C-contiguous 1-D float64 array of real numbers (numpy dtype kinds ``kinds``; strings, objects,
    complex numbers and datetimes refused, never cast), of ``length`` entries when given, finite unless
    ``finite=False``."""
    arr = as_array(value, name)
    if arr.dtype.kind not in kinds:
        raise InvalidParameterError(f"`{name}` must hold real numbers, got dtype {arr.dtype}", name)
    if arr.ndim != 1:
        raise InvalidParameterError(f"`{name}` must be a 1-D array, got shape {arr.shape}", name)
    if length is not None and arr.shape[0] != length:
        raise InvalidParameterError(f"`{name}` must have shape ({length},), got {arr.shape}", name)
    out = np.ascontiguousarray(float64_array(arr, name))
    if finite and not np.isfinite(out).all():
        raise InvalidParameterError(f"`{name}` contains NaN or infinite values", name)
    return out


#: Largest finite float32 value (3.4e38).
FLOAT32_MAX = float(np.finfo(np.float32).max)


def float32_array(arr: np.ndarray, name: str) -> np.ndarray:
    """``arr`` (real numbers) as a C-contiguous float32 array, cast without numpy's "overflow encountered in cast"
    warning: a finite value beyond the float32 range (|x| > 3.4e38, which the cast makes infinite) is an
    :class:`InvalidParameterError` naming ``name``. NaN and infinities pass: the caller (or the kernel) refuses them."""
    if arr.dtype == np.float32 and arr.flags.c_contiguous:
        return arr
    with np.errstate(over="ignore"):
        out = np.ascontiguousarray(arr, dtype=np.float32)
    if arr.dtype.kind == "f" and arr.dtype.itemsize > 4 and not all_finite(out) and all_finite(arr):
        raise InvalidParameterError(f"`{name}` has values beyond the float32 range (|x| > {FLOAT32_MAX:.3g})", name)
    return out


#: Largest ``|score|`` a float64 score ``h . v`` may reach (:func:`check_score_bound`): a quarter of float64's max.
SCORE_LIMIT = float(np.finfo(np.float64).max) / 4


def check_score_bound(vector: np.ndarray, name: str, peak: float, temperature: float = 1.0) -> None:
    """Refuse a finite float64 ``vector`` whose scores ``h . vector / temperature`` could overflow, for rows ``h``
    with ``|h_i| <= peak``: ``||vector||_1 * peak / temperature > SCORE_LIMIT`` (float64 max / 4, 4.5e307) is an
    :class:`InvalidParameterError` naming ``name``.

    Why this bound: ``|h . v| <= sum_i |h_i| |v_i| <= peak ||v||_1``; float64's rounding of a sum of ``d <= 2^20``
    terms adds at most a factor ``1 + d 2^-53 < 1 + 2^-32``. The kernels then take differences of two such scores
    (the greedy's ``h . t`` minus its cross term, the log-sum-exp's ``s - max s``) and add small terms (Gumbel
    variates, below 40): a factor 2 for the difference, 2 for the rest, hence a quarter of float64's max. Dividing
    by a ``temperature`` (``s / T`` in the exponential weights) scales the bound by it.
    ``||v||_1`` is computed as ``max|v| * sum(|v| / max|v|)`` so that it cannot overflow on the way (inf when the
    norm itself is beyond float64: refused)."""
    if vector.size == 0 or peak == 0.0:
        return
    top = float(np.abs(vector).max())
    if top == 0.0:
        return
    l1 = top * float((np.abs(vector) / top).sum())
    if not l1 * peak / temperature <= SCORE_LIMIT:  # peak > 0 here: inf (an overflowing norm or product) is refused
        per = "" if temperature == 1.0 else f" / temperature {temperature:.3g}"
        norm = f"{l1:.3g}" if math.isfinite(l1) else "beyond the float64 range"
        raise InvalidParameterError(
            f"`{name}` is too large: ||{name}||_1 = {norm} times the largest hash entry {peak:.3g}{per} exceeds "
            f"{SCORE_LIMIT:.3g}, where its scores h . {name}{per and ' / temperature'} would overflow float64",
            name,
        )


def real_matrix(X: object, name: str, what: str = "") -> np.ndarray:
    """``X`` as a 2-D float32 or float64 array without copying (other real dtypes become float64); ``what`` says what
    the two dimensions are, in the error for another shape."""
    arr = as_array(X, name)
    if arr.dtype.kind not in "fiub":
        raise InvalidParameterError(f"`{name}` must hold real numbers, got dtype {arr.dtype}", name)
    if arr.ndim != 2:
        raise InvalidParameterError(f"`{name}` must be 2-D{what}, got {arr.ndim}-D", name)
    if arr.dtype not in (np.float32, np.float64):
        arr = float64_array(arr, name)
    return arr


def float64_array(arr: np.ndarray, name: str) -> np.ndarray:
    """``arr`` (real numbers) as float64 (``arr`` itself when it is float64), cast without numpy's "overflow
    encountered in cast" warning: a finite value of a wider float (``np.longdouble``) beyond the float64 range, which
    the cast makes infinite, is an :class:`InvalidParameterError` naming ``name``. NaN and infinities pass: the caller
    refuses them."""
    if arr.dtype == np.float64:
        return arr
    if arr.dtype.kind != "f" or arr.dtype.itemsize <= 8:
        return arr.astype(np.float64)
    with np.errstate(over="ignore"):
        out = arr.astype(np.float64)
    if not all_finite(out) and all_finite(arr):
        raise InvalidParameterError(f"`{name}` has values beyond the float64 range (|x| > 1.8e308)", name)
    return out


def float_matrix(
    X: object, name: str, *, n_features: int | None = None, allow_empty: bool = False, check_finite: bool = True
) -> np.ndarray:
    """``X`` as a 2-D float32 or float64 array with finite values (no copy when it already is one;
    ``check_finite=False``: the caller checks the values itself)."""
    if X is None:
        raise InvalidParameterError(f"`{name}` must be an array, got None", name)
    arr = real_matrix(X, name, " (rows x features)")
    if not allow_empty and arr.shape[0] == 0:
        raise InvalidParameterError(f"`{name}` has no rows", name)
    if arr.shape[1] == 0:
        raise InvalidParameterError(f"`{name}` has no features", name)
    if n_features is not None and arr.shape[1] != n_features:
        raise InvalidParameterError(f"`{name}` has {arr.shape[1]} features per row, expected {n_features}", name)
    if check_finite and not all_finite(arr):
        raise InvalidParameterError(f"`{name}` contains NaN or infinite values", name)
    return arr


def float_matrix_peak(X: object, name: str, *, n_features: int | None = None) -> tuple[np.ndarray, float]:
    """:func:`float_matrix` and ``max |x|`` from the same single read of the rows (``inf`` when a value is finite
    but beyond the float32 range, which :func:`check_hashable` then refuses): for rows that are checked for
    hashing next, whose second read this saves."""
    arr = float_matrix(X, name, n_features=n_features, check_finite=False)
    peak = _scan(arr)
    if peak is None:
        if not all_finite(arr):
            raise InvalidParameterError(f"`{name}` contains NaN or infinite values", name)
        peak = math.inf
    return arr, peak


def _scan(arr: np.ndarray) -> float | None:
    """max ``|x|`` of a 2-D float32/float64 array in one parallel read (Rust), or None when a value is not
    finite in float32 (NaN, infinite, or beyond the float32 range)."""
    if arr.dtype in (np.float32, np.float64) and arr.ndim == 2:
        peak: float | None = _core.finite_max_abs(arr)
        return peak
    a32 = np.abs(np.asarray(arr, dtype=np.float64))
    if not np.isfinite(a32).all() or float(a32.max(initial=0.0)) > float(np.finfo(np.float32).max):
        return None
    return float(a32.max(initial=0.0))


def all_finite(arr: np.ndarray, block_bytes: int = 1 << 24) -> bool:
    """``np.isfinite(arr).all()`` without a full-size temporary: one parallel read in Rust for a 2-D
    float32/float64 array, else numpy in row blocks of about 16 MB."""
    if arr.ndim == 2 and arr.dtype == np.float32 and arr.size:
        return _core.finite_max_abs(arr) is not None
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


def choice_of(value: object, name: str, choices: tuple[str, ...]) -> str:
    """``value``, one of the strings ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise InvalidParameterError(
            f"`{name}` must be one of {', '.join(repr(c) for c in choices)}, got {value!r}", name
        )
    return value


def label_vector(
    value: object, name: str, n: int, label_set: tuple[Any, ...] | None = None, *, kinds: str = "iufUS"
) -> np.ndarray:
    """``value`` as ``n`` labels that a label purchase can count: a 1-D array of finite numbers or of strings (numpy
    dtype kinds ``kinds``), of the same kind (numbers or strings) as ``label_set`` when it is given."""
    arr = as_array(value, name)
    if arr.shape != (n,):
        raise InvalidParameterError(f"`{name}` must have shape ({n},), got {arr.shape}", name)
    if arr.dtype == object and arr.size and "U" in kinds and all(isinstance(v, str) for v in arr.tolist()):
        arr = arr.astype(str)  # strings in an object array (a pandas Series of str)
    if arr.dtype.kind not in kinds or (arr.dtype.kind == "f" and not np.isfinite(arr).all()):
        raise InvalidParameterError(f"`{name}` must be finite numbers or strings, got dtype {arr.dtype}", name)
    if label_set:
        same_kind(arr, label_set, name, f"`{name}`", "the label_set")
    return arr


def same_kind(values: np.ndarray, declared: Sequence[Any], name: str, subject: str, what: str) -> None:
    """Refuse ``values`` that are strings where the ``declared`` public values are numbers, or the reverse (no row
    would match one): an InvalidParameterError naming ``name``, saying ``subject`` holds one kind and ``what``
    (the declared values) the other."""
    strings = isinstance(declared[0], str)
    if strings != (values.dtype.kind in "US"):
        raise InvalidParameterError(
            f"{subject} holds {'numbers' if strings else 'strings'} but {what} {tuple(declared)[:5]!r} "
            f"{'are strings' if strings else 'are numbers'}: no row would match",
            name,
        )


# -- constraints declared with an option (scikit-learn's ``_parameter_constraints`` in spirit) -----------------------


@dataclass(frozen=True)
class Interval:
    """An option's range, declared with it (:func:`dpsumm.protocols.base.option`) and checked in one place
    (:meth:`dpsumm.protocols.base.OptionsObject.__post_init__`): an integer in ``[low, high]`` (``kind=int``, bools and
    floats refused), or a real number (``kind=float``, NaN and infinities refused) between ``low`` and ``high`` (None:
    unbounded) with the ends ``closed`` says. ``why``: what the range means, said when a value is outside it."""

    kind: type
    low: float | None
    high: float | None
    closed: Literal["both", "left", "right", "neither"] = "both"
    why: str = ""

    def __post_init__(self) -> None:
        if self.kind not in (int, float):
            raise TypeError(f"Interval kind must be int or float, got {self.kind!r}")
        if self.kind is int and (self.low is None or self.high is None or self.closed != "both"):
            raise TypeError("an Interval of integers has both ends, closed")

    def __str__(self) -> str:
        left = "[" if self.closed in ("both", "left") else "("
        right = "]" if self.closed in ("both", "right") else ")"
        low = "-inf" if self.low is None else f"{self.low}"
        high = "inf" if self.high is None else f"{self.high}"
        return f"{left}{low}, {high}{right}"

    def __contains__(self, value: object) -> bool:
        if not isinstance(value, (int, float)):
            return False
        lo_ok = self.low is None or (value >= self.low if self.closed in ("both", "left") else value > self.low)
        hi_ok = self.high is None or (value <= self.high if self.closed in ("both", "right") else value < self.high)
        return bool(lo_ok and hi_ok)

    def check(self, value: object, name: str) -> int | float:
        """``value`` as an int or a float in the interval; else :class:`InvalidParameterError` naming ``name``."""
        if self.kind is int:
            return bounded_int(value, name, int(self.low), int(self.high))  # type: ignore[arg-type]
        if self.low == 0 and self.high is None and self.closed == "neither":
            return positive_float(value, name)
        v = real_number(value, name)
        if not math.isfinite(v) or v not in self:
            why = f" ({self.why})" if self.why else ""
            raise InvalidParameterError(f"`{name}` must be a number in {self}{why}, got {_brief(value)}", name)
        return v


@dataclass(frozen=True)
class OneOf:
    """An option that is one of the strings ``choices``, declared with it (as :class:`Interval`)."""

    choices: tuple[str, ...]

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(c) for c in self.choices)

    def check(self, value: object, name: str) -> str:
        return choice_of(value, name, self.choices)
