"""Feature scaling with public ranges and the RBF width (γ) heuristics.

Every function here is meant for *public* inputs: a feature range known before seeing any private row
(pixel intensities 0-16 or 0-255, a sensor's specified range, ...) and public rows such as the seed set.
Nothing is fitted on an owner's or the consumer's rows, so nothing here spends privacy budget.
"""

from __future__ import annotations

import logging
import math
import warnings
from typing import Any

import numpy as np

from ._validation import all_finite, as_array, float_matrix, positive_float
from .errors import InvalidParameterError

__all__ = [
    "scale_to_unit",
    "parse_range",
    "seed_range",
    "median_gamma",
    "kernel_scale",
    "check_kernel",
    "DEGENERATE_LOW",
    "DEGENERATE_HIGH",
    "DegenerateKernelWarning",
]

_log = logging.getLogger("dpsumm")
# A library logs, the application decides what is shown: without this handler Python's last-resort handler
# prints every WARNING record to stderr, so a DegenerateKernelWarning appeared twice (the record and the
# warning). The record stays available to any handler the application configures.
if not any(isinstance(h, logging.NullHandler) for h in _log.handlers):
    _log.addHandler(logging.NullHandler())

#: ``gamma * median squared distance`` below this: every pair of rows looks alike to the kernel
#: (``exp(-0.001) = 0.999``). Measured (benches/kernel_scale.py, docs/usability.md): on the digits label
#: split, paper-greedy picks 19 of 20 target rows down to 0.001, 16-18 at 0.0001.
DEGENERATE_LOW = 0.001
#: ``gamma * median squared distance`` above this: distinct rows look unrelated (``exp(-10) = 5e-5``)
#: and the greedy matches only near-duplicates. Measured: 20 of 20 target rows at 5, 11-14 at 10, 4-6 at
#: 20, 3-5 at 240 (raw 0-16 digits pixels at the paper's gamma = 0.1 give about 240; scaled to [0, 1],
#: 0.94).
DEGENERATE_HIGH = 5.0

#: Pairs of rows used by the median heuristic at most (a deterministic stride subsample of the rows).
_MAX_ROWS = 1000

#: Rows :func:`check_kernel` uses at most (the same kind of subsample). Its warning is a range check over a factor
#: of 5,000 (``DEGENERATE_LOW`` to ``DEGENERATE_HIGH``), which needs the median squared distance to within a few
#: per cent, not the heuristic's 1,000 rows: 256 rows (32,640 pairs) take about a sixteenth of the time, and the
#: check runs on the caller's thread in every run that is given a number gamma.
_CHECK_ROWS = 256


class DegenerateKernelWarning(UserWarning):
    """The RBF kernel's width does not suit the data's scale (see :func:`check_kernel`)."""


def scale_to_unit(X: Any, low: Any, high: Any, *, clip: bool = True) -> np.ndarray:
    """Map features from a *public* range ``[low, high]`` to ``[0, 1]``: ``(X - low) / (high - low)``.

    Use ranges known without looking at private rows (a pixel's 0-16 or 0-255, a documented sensor
    range); never the min/max of the owners' or the consumer's data, which would leak through the
    summary. Apply the same call to every owner's rows, the validation rows, the seed set and test
    rows.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    low, high : float or array-like of shape (n_features,)
        The public range, per feature or for all; ``low < high`` everywhere.
    clip : bool, default=True
        Clip the result to [0, 1] (values outside the declared range are clamped to it).

    Returns
    -------
    ndarray of shape (n_samples, n_features), float64

    Examples
    --------
    >>> import numpy as np, dpsumm
    >>> dpsumm.scale_to_unit(np.array([[0.0, 8.0, 16.0]]), 0, 16)
    array([[0. , 0.5, 1. ]])
    """
    arr = float_matrix(X, "X", allow_empty=True).astype(np.float64)
    lo, hi = _bound(low, "low", arr.shape[1]), _bound(high, "high", arr.shape[1])
    if not isinstance(clip, (bool, np.bool_)):
        raise InvalidParameterError(f"`clip` must be a bool, got {type(clip).__name__}", "clip")
    if not np.isfinite(lo).all():
        raise InvalidParameterError("`low` must be finite for every feature", "low")
    if not np.isfinite(hi).all():
        raise InvalidParameterError("`high` must be finite for every feature", "high")
    if not (lo < hi).all():
        raise InvalidParameterError("`high` must be above `low` for every feature", "high")
    with np.errstate(over="ignore"):
        width = hi - lo
    if not np.isfinite(width).all():
        raise InvalidParameterError("`high` - `low` overflows: the range is beyond the float range", "high")
    with np.errstate(over="ignore", invalid="ignore"):
        out: np.ndarray = (arr - lo) / width
    if clip:
        np.clip(out, 0.0, 1.0, out=out)  # a value beyond the float range lies outside [low, high]: clipped
    elif not all_finite(out):
        raise InvalidParameterError(
            "`X` has values so far outside [low, high] that (X - low) / (high - low) is beyond "
            "the float range; check the range or pass clip=True",
            "X",
        )
    return out


def seed_range(seed_rows: Any) -> tuple[np.ndarray, np.ndarray]:
    """Each feature's smallest and largest value over *public* rows (the seed set), for :func:`scale_to_unit`.

    ``scale_to_unit(X, *seed_range(seed))`` scales every party's rows by a range every party knows; values outside
    it are clipped. Never pass private rows: their range would leak through the summary.

    Raises InvalidParameterError (``seed_set``) for fewer than two rows or a feature with one value only.
    """
    arr = float_matrix(seed_rows, "seed_set").astype(np.float64)
    if arr.shape[0] < 2:
        raise InvalidParameterError("`seed_set` needs at least two public rows to give a range", "seed_set")
    low, high = arr.min(axis=0), arr.max(axis=0)
    flat = np.flatnonzero(high <= low)
    if flat.size:
        raise InvalidParameterError(
            f"`seed_set`: feature {int(flat[0])} (counting from 0) has one value only ({low[flat[0]]:g}) in the public "
            "rows: declare its range instead (CLI: --scale 'NAME=LOW:HIGH,...')",
            "seed_set",
        )
    return low, high


def parse_range(text: str, features: list[str] | None = None) -> tuple[np.ndarray | float, np.ndarray | float]:
    """A declared public range: ``"LOW:HIGH"`` for every feature, or ``"NAME=LOW:HIGH,..."`` for each named feature
    (every one of ``features``, in any order). Returns ``(low, high)`` for :func:`scale_to_unit`.

    >>> parse_range("0:255")
    (0.0, 255.0)
    >>> parse_range("b=0:1,a=18:90", ["a", "b"])
    (array([18.,  0.]), array([90.,  1.]))
    """

    def pair(part: str) -> tuple[float, float]:
        lo, sep, hi = part.partition(":")
        try:
            low, high = float(lo), float(hi)
        except ValueError:
            low = high = math.nan
        if not sep or not (math.isfinite(low) and math.isfinite(high) and low < high):
            raise InvalidParameterError(
                f"`scale`: {part!r} is not a range LOW:HIGH with LOW < HIGH (write e.g. 0:255 or age=18:90)", "scale"
            )
        return low, high

    if not isinstance(text, str) or not text.strip():
        raise InvalidParameterError("`scale` must be 'LOW:HIGH' or 'NAME=LOW:HIGH,...'", "scale")
    if "=" not in text:
        return pair(text.strip())
    given: dict[str, tuple[float, float]] = {}
    for part in text.split(","):
        name, sep, rng = part.partition("=")
        if not sep or not name.strip():
            raise InvalidParameterError(f"`scale`: {part!r} is not NAME=LOW:HIGH", "scale")
        given[name.strip()] = pair(rng.strip())
    if features is None:
        raise InvalidParameterError(
            "`scale`: ranges by name need the tables' header names; give one range for all (LOW:HIGH)", "scale"
        )
    if (
        isinstance(features, str)
        or not isinstance(features, (list, tuple))
        or not all(isinstance(f, str) for f in features)
    ):
        raise InvalidParameterError(
            f"`features` must be a list of the tables' header names (str), got {features!r:.60}", "features"
        )
    missing = [f for f in features if f not in given]
    unknown = [g for g in given if g not in features]
    if missing or unknown:
        raise InvalidParameterError(
            f"`scale` must give a range for every feature ({', '.join(features)})"
            + (f"; missing: {', '.join(missing)}" if missing else "")
            + (f"; not a feature: {', '.join(unknown)}" if unknown else ""),
            "scale",
        )
    return np.array([given[f][0] for f in features]), np.array([given[f][1] for f in features])


def _bound(value: Any, name: str, n_features: int) -> np.ndarray:
    if isinstance(value, (bool, np.bool_)) or (isinstance(value, np.ndarray) and value.dtype.kind == "b"):
        raise InvalidParameterError(f"`{name}` must be a number or one number per feature, got a bool", name)
    raw = as_array(value, name)
    if raw.dtype.kind not in "fiu":  # strings, objects (ints beyond the float range), complex numbers, datetimes
        raise InvalidParameterError(
            f"`{name}` must be a number or one number per feature, got {type(value).__name__} of dtype {raw.dtype}",
            name,
        )
    b = raw.astype(np.float64)
    if b.ndim > 1 or (b.ndim == 1 and b.shape[0] != n_features):
        raise InvalidParameterError(
            f"`{name}` must be a scalar or have one value per feature ({n_features}), got shape {b.shape}", name
        )
    return np.broadcast_to(b, (n_features,))


def _upper_pairs(d2: np.ndarray) -> np.ndarray:
    """The entries above the diagonal of a square matrix, row by row (``d2[np.triu_indices(n, 1)]``, without
    building the index arrays: a fifth of the time at n = 1,000)."""
    n = len(d2)
    return np.concatenate([d2[i, i + 1 :] for i in range(n - 1)]) if n > 1 else np.zeros(0, dtype=d2.dtype)


def _median_sq_distance(rows: np.ndarray, max_rows: int = _MAX_ROWS) -> float:
    """The median squared distance over pairs of ``rows`` (of an evenly spaced subsample of ``max_rows`` rows when
    there are more): 0 when they are all equal, NaN when it is beyond the float range (overflow or underflow of the
    squares)."""
    R = np.asarray(rows, dtype=np.float64)
    if len(R) > max_rows:
        R = R[np.linspace(0, len(R) - 1, max_rows).astype(np.int64)]
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        sq = (R * R).sum(1)
        d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * R @ R.T, 0.0)
        med = float(np.median(_upper_pairs(d2)))
    if 0.0 < med < math.inf:
        return med
    # Out of range (or all equal): again on the rows scaled to |x| <= 1, where the squares neither overflow nor
    # underflow, then scaled back.
    scale = float(np.abs(R).max(initial=0.0))
    if not 0.0 < scale < math.inf:
        return 0.0 if scale == 0.0 else math.nan
    Rs = R / scale
    sq = (Rs * Rs).sum(1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * Rs @ Rs.T, 0.0)
    med = float(np.median(_upper_pairs(d2)))
    if med == 0.0:
        return 0.0
    with np.errstate(over="ignore", under="ignore"):
        out = float(np.float64(med) * np.float64(scale) * np.float64(scale))
    return out if 0.0 < out < math.inf else math.nan


def median_gamma(rows: Any) -> float:
    """The median heuristic ``1 / median ||x - y||²`` over pairs of ``rows``.

    Use public rows (the seed set). Above 1000 rows, an evenly spaced subsample of 1000 rows is used
    (deterministic).

    Raises
    ------
    InvalidParameterError
        Fewer than two rows, or all rows equal.
    """
    R = float_matrix(rows, "rows", allow_empty=True)
    if len(R) < 2:
        raise InvalidParameterError("the median heuristic needs at least two rows", "rows")
    med = _median_sq_distance(R)
    if med == 0:
        raise InvalidParameterError("the rows are all equal: no median distance", "rows")
    gamma = 1.0 / med if math.isfinite(med) else math.nan
    if not 0.0 < gamma < math.inf:
        raise InvalidParameterError(
            "the rows' median squared distance is beyond the float range (|x| too large or "
            "too small): no finite gamma; rescale the rows",
            "rows",
        )
    return gamma


def kernel_scale(rows: Any, gamma: float) -> float:
    """``gamma * median ||x - y||²`` over pairs of ``rows``: about 1 for a kernel that suits the data.

    Raises
    ------
    InvalidParameterError
        ``rows`` has fewer than two rows (no pair), or a median squared distance beyond the float range
        (argument ``"rows"``); ``gamma`` is not a finite number > 0.
    """
    g = positive_float(gamma, "gamma")
    R = float_matrix(rows, "rows", allow_empty=True)
    if len(R) < 2:
        raise InvalidParameterError(f"`rows` needs at least two rows for a median distance, got {len(R)}", "rows")
    med = _median_sq_distance(R)
    if not math.isfinite(med):
        raise InvalidParameterError(
            "the rows' median squared distance is beyond the float range (|x| too large or too "
            "small): rescale the rows",
            "rows",
        )
    return _times(g, med)


def _times(g: float, med: float) -> float:
    with np.errstate(over="ignore"):
        scale = float(np.float64(g) * np.float64(med))
    if not math.isfinite(scale):
        raise InvalidParameterError(
            f"gamma * median squared distance overflows (gamma = {g:g}, median = {med:g})", "gamma"
        )
    return scale


def check_kernel(rows: Any, gamma: float, *, what: str = "the rows") -> float:
    """Warn (:class:`DegenerateKernelWarning`, a ``UserWarning``, and a log record on ``"dpsumm"``) when
    ``gamma * median ||x - y||²`` over ``rows`` is outside ``[DEGENERATE_LOW, DEGENERATE_HIGH]``.

    Above 256 rows, the median is taken over an evenly spaced subsample of 256 rows (deterministic; enough for a
    range check over a factor of 5,000).

    Returns the scale, or NaN when nothing is checked: fewer than two rows, or a median squared distance beyond
    the float range (rows an entry point refuses on its own terms).
    """
    g = positive_float(gamma, "gamma")
    R = float_matrix(rows, "rows", allow_empty=True)
    med = _median_sq_distance(R, _CHECK_ROWS) if len(R) >= 2 else math.nan
    if not math.isfinite(med):
        return math.nan
    s = _times(g, med)
    if math.isfinite(s) and not (DEGENERATE_LOW <= s <= DEGENERATE_HIGH):
        side = (
            "far apart: every row looks unrelated to every other"
            if s > DEGENERATE_HIGH
            else "close: every row looks like every other"
        )
        msg = (
            f"gamma={gamma:.4g} is degenerate for {what}: gamma * median squared distance = {s:.3g} (outside "
            f"[{DEGENERATE_LOW}, {DEGENERATE_HIGH}]), the kernel sees rows as {side}. "
            + (
                "Scale the features with a public range: scale_to_unit(X, low, high) or "
                "scale_to_unit(X, *dpsumm.preprocessing.seed_range(seed_set)) (CLI: --scale 'NAME=LOW:HIGH,...' or --scale seed)."
                if "median" in what
                else "Use gamma='median' or scale the features with a public range (dpsumm.scale_to_unit; CLI: --scale)."
            )
        )
        _log.warning(msg)
        warnings.warn(msg, DegenerateKernelWarning, stacklevel=3)
    return s
