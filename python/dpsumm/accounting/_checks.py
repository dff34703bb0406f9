"""Argument checks and the vocabulary shared by the accounting modules (parties, neighbour relations)."""

from __future__ import annotations

import math
from typing import Literal

from .._validation import bool_flag, bounded_float, choice_of, positive_int, real_number
from ..errors import InvalidParameterError

Neighbour = Literal["replace-one", "add-remove"]


Party = Literal["owners", "validation"]


AccountantName = Literal["basic", "advanced", "kov", "tight"]


NEIGHBOURS: tuple[str, ...] = ("replace-one", "add-remove")


PARTIES: tuple[str, ...] = ("owners", "validation")


def _delta(value: object, name: str = "delta") -> float:
    """``value`` as a float in the open interval (0, 1)."""
    v = real_number(value, name)
    if not (0.0 < v < 1.0):
        raise InvalidParameterError(f"`{name}` must lie in the open interval (0, 1), got {value!r}", name)
    return v


#: A Python or numpy bool (the accounting modules' name for it).
_flag = bool_flag

#: Largest summary size a schedule is made for (one entry per epoch).
MAX_SIZE = 10_000_000


def _size(value: object) -> int:
    p = positive_int(value, "size")
    if p > MAX_SIZE:
        raise InvalidParameterError(f"`size` must be at most {MAX_SIZE}, got {p}", "size")
    return p


#: Largest h1 dimension a schedule is made for (rust/src/limits.rs MAX_DIM).
MAX_DIM = 1 << 20


def _dim(value: object) -> int:
    d = positive_int(value, "dim")
    if d > MAX_DIM:
        raise InvalidParameterError(f"`dim` must be at most {MAX_DIM}, got {d}", "dim")
    return d


def _neighbour(value: object, name: str = "neighbour") -> str:
    return choice_of(value, name, NEIGHBOURS)


def _party(value: object, name: str = "party") -> str:
    if not isinstance(value, str) or value not in PARTIES:
        raise InvalidParameterError(
            f"`{name}` must be one of {', '.join(repr(p) for p in PARTIES)}, got {value!r}", name
        )
    return str(value)


def _nonneg_float(value: object, name: str) -> float:
    v = real_number(value, name)
    if not math.isfinite(v) or v < 0:
        raise InvalidParameterError(f"`{name}` must be a finite number >= 0, got {value!r}", name)
    return v


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)


#: Largest ε of one mechanism (an event) or of a target (a budget): e^100 between neighbours is no privacy,
#: and the numerical accountants need time and memory that grow with ε.
MAX_EPSILON = 100.0
#: Smallest target ε a budget or a calibration takes (below it no release carries signal, and the
#: accountants' numerics lose their precision).
MIN_TARGET_EPSILON = 1e-6
#: Smallest ε of one mechanism (an event): below it the numerical accountants lose their precision.
MIN_EVENT_EPSILON = 1e-12
#: Range of a Gaussian event's noise multiplier σ/Δ (outside it the privacy-loss distributions do not fit in
#: memory, or ε is 0 to double precision).
MIN_NOISE_MULTIPLIER = 1e-2
MAX_NOISE_MULTIPLIER = 1e9


def _real(value: object, name: str) -> float:
    return real_number(value, name)


def _epsilon(value: object, name: str = "epsilon", *, target: bool = False, zero: bool = False) -> float:
    """An ε in [:data:`MIN_EVENT_EPSILON`, :data:`MAX_EPSILON`] (or 0 with ``zero``); a target in
    [:data:`MIN_TARGET_EPSILON`, :data:`MAX_EPSILON`]."""
    v = _real(value, name)
    if target:
        ok = MIN_TARGET_EPSILON <= v <= MAX_EPSILON
    else:
        ok = (v == 0.0 and zero) or MIN_EVENT_EPSILON <= v <= MAX_EPSILON
    if not ok:
        what = (
            f"between {MIN_TARGET_EPSILON:g} and {MAX_EPSILON:g}"
            if target
            else f"{'0 or ' if zero else ''}between {MIN_EVENT_EPSILON:g} and {MAX_EPSILON:g}"
        )
        raise InvalidParameterError(f"`{name}` must be a finite number {what}, got {value!r}", name)
    return v


def _noise_multiplier(value: object, name: str = "noise_multiplier") -> float:
    return bounded_float(value, name, MIN_NOISE_MULTIPLIER, MAX_NOISE_MULTIPLIER)


#: Most identical repetitions one event may stand for.
MAX_COUNT = 10**12


def _count(value: object, name: str = "count") -> int:
    v = positive_int(value, name)
    if v > MAX_COUNT:
        raise InvalidParameterError(f"`{name}` must be at most {MAX_COUNT:.0e}, got {v}", name)
    return v
