"""Argument checks and the vocabulary shared by the accounting modules (parties, neighbour relations)."""

from __future__ import annotations

import math
import numbers
from typing import Literal

import numpy as np

from .._validation import positive_int
from ..errors import InvalidParameterError


Neighbour = Literal["replace-one", "add-remove"]


Party = Literal["owners", "validation"]


AccountantName = Literal["basic", "advanced", "kov", "tight"]


NEIGHBOURS: tuple[str, ...] = ("replace-one", "add-remove")


PARTIES: tuple[str, ...] = ("owners", "validation")


def _delta(value: object, name: str = "delta") -> float:
    """``value`` as a float in the open interval (0, 1)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidParameterError(f"`{name}` must be a real number, got {type(value).__name__}", name)
    v = float(value)
    if not (0.0 < v < 1.0):
        raise InvalidParameterError(f"`{name}` must lie in the open interval (0, 1), got {value!r}", name)
    return v


def _flag(value: object, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidParameterError(f"`{name}` must be a bool, got {type(value).__name__}", name)
    return bool(value)


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
    if not isinstance(value, str) or value not in NEIGHBOURS:
        raise InvalidParameterError(
            f"`{name}` must be one of {', '.join(repr(n) for n in NEIGHBOURS)}, got {value!r}", name
        )
    return str(value)


def _party(value: object, name: str = "party") -> str:
    if not isinstance(value, str) or value not in PARTIES:
        raise InvalidParameterError(
            f"`{name}` must be one of {', '.join(repr(p) for p in PARTIES)}, got {value!r}", name
        )
    return str(value)


def _nonneg_float(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidParameterError(f"`{name}` must be a real number, got {type(value).__name__}", name)
    v = float(value)
    if not math.isfinite(v) or v < 0:
        raise InvalidParameterError(f"`{name}` must be a finite number >= 0, got {value!r}", name)
    return v


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)
