r"""Plausibility checks of a party's noisy release against public facts: is it a release an honest party could make?

An aggregator that receives a noisy release cannot check the values behind the noise, but it knows public facts
that bound them: a party's row count ``n`` (public in every protocol here), that each row is counted in at most one
cell, that ``||h1(x)||_2 <= sqrt(2)`` for every row. An honest release is the exact value plus noise whose tails
are known, so it lies within a bound computed from those facts and the noise with probability at least
``1 - false_alarm``. A release outside the bound is not one an honest party makes (except with probability
``false_alarm``): the aggregator excludes the party with an event, as it already does for a consumer's hashed
mean more than 12 noise sigmas from its exact mean. An owner releasing 10^6 rows of a label while its public row
count is 60, or a consumer releasing a histogram count of 1e300 for 30 validation rows, fails here.

Each check is a pure function of the release, the public facts and the noise's public parameters: it returns
``None`` for a plausible release, else the reason (one sentence for the exclusion event). ``false_alarm`` is the
probability that an honest release fails *any* test of one call; it is split evenly over the call's one-sided tests
(a union bound), so the real rate is at most it. The checks look at public values only (the release, which every
recipient sees, and public counts and noise scales): running them reveals nothing more about any party.

Noise models (the mechanisms of :mod:`dpsumm.privacy`):

* Gaussian (owners' sketches, the consumer's hashed mean): ``released = round(x/g)·g + g·N_Z(0, (σ/g)²)`` per
  coordinate. The discrete Gaussian ``N_Z(0, s²)`` is ``s²``-subgaussian (Canonne, Kamath & Steinke 2020, Cor. 9),
  so ``g·N_Z(0, (σ/g)²)`` is ``σ²``-subgaussian: ``P(noise >= t) <= exp(-t²/(2σ²))`` per coordinate, and a sum of
  ``J`` independent coordinates is ``Jσ²``-subgaussian. Rounding moves each coordinate by at most ``g/2``. For the
  norm of ``d`` coordinates: ``P(||noise||² > σ²(d + 2 sqrt(d t) + 2t)) <= exp(-t)`` (Hsu, Kakade & Zhang 2012,
  Thm. 1, for independent ``σ²``-subgaussian coordinates).
* Discrete Laplace (the consumer's label histogram): ``released = counts + DLap(b)`` per cell on the integers,
  ``P(z) ∝ exp(-|z|/b)``: ``P(noise >= k) = exp(-k/b) / (1 + exp(-1/b)) <= exp(-k/b)`` for an integer ``k >= 1``.
  A sum of ``J`` cells is bounded by the Chernoff bound with the exact moment generating function
  ``M(λ) = (1-p)² / ((1 - p e^λ)(1 - p e^-λ))``, ``p = exp(-1/b)``, ``0 < λ < 1/b``:
  ``P(sum >= s) <= min_λ M(λ)^J e^(-λ s)`` (any ``λ`` gives a valid bound; the best of a fixed grid is used).

Where each check belongs (the aggregator calls them on receipt, before a value is used or forwarded):

* :func:`check_owner_label_counts`: an owner's released counts per label (the first ``len(label_set)`` values of
  its ``SketchReply`` for ``stage="labels"``) against its public row count;
* :func:`check_hash_sum`: an owner's released hash sum (the ``SketchReply`` of ``stage="sum"``, or the values after
  the label counts for ``stage="labels"``) against ``sqrt(2)·n``;
* :func:`check_consumer_counts`: the consumer's ``LabelHistogramRelease.counts`` against its row count ``|D_v|``,
  before the histogram is forwarded to any owner.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import as_array, bounded_int, finite_float
from ..errors import InvalidParameterError

__all__ = [
    "DEFAULT_FALSE_ALARM",
    "HASH_NORM_SLACK",
    "MAX_ROWS",
    "MAX_SCALE",
    "check_consumer_counts",
    "check_hash_sum",
    "check_owner_label_counts",
    "gaussian_tail_sigmas",
    "hash_sum_norm_bound",
    "laplace_sum_bound",
    "laplace_tail_scales",
]

#: The default probability that an honest release fails one call's checks (a party wrongly excluded).
DEFAULT_FALSE_ALARM = 1e-9
#: Largest row count a check takes (2^53: every count is exact in float64).
MAX_ROWS = 2**53
#: Relative slack on ``sqrt(2)·n`` in :func:`hash_sum_norm_bound`: h1 is computed in float32, whose rounding (of the
#: cosine, of ``sqrt(2/d)``, of the sum) can take an honest norm a few float32 ulps beyond the exact bound.
HASH_NORM_SLACK = 2.0**-16
#: Points of the grid of Chernoff parameters of :func:`laplace_sum_bound`.
_CHERNOFF_GRID = 256


def _false_alarm(value: object) -> float:
    p = finite_float(value, "false_alarm")
    if not 0.0 < p < 1.0:
        raise InvalidParameterError(f"`false_alarm` must be in (0, 1), got {p!r}", "false_alarm")
    return p


def _non_negative(value: object, name: str) -> float:
    v = finite_float(value, name)
    if v < 0.0:
        raise InvalidParameterError(f"`{name}` must be a finite number >= 0, got {v!r}", name)
    return v


#: Largest discrete Laplace scale a check takes (a noise this large hides any count: the checks would pass anything).
MAX_SCALE = 2.0**50


def _positive_scale(value: object, name: str) -> float:
    v = finite_float(value, name)
    if not 0.0 < v <= MAX_SCALE:
        raise InvalidParameterError(f"`{name}` must be a number in (0, {MAX_SCALE:g}], got {v!r}", name)
    return v


def _released(values: object, what: str) -> tuple[np.ndarray | None, str | None]:
    """The release as a 1-D float64 array, or the reason it is not a release at all (a faulty party's values)."""
    try:
        arr = as_array(values, "values")
    except InvalidParameterError:
        return None, f"{what} is not an array of numbers"
    if arr.dtype.kind not in "fiu" or arr.ndim != 1:
        return None, f"{what} is not a 1-D array of real numbers (dtype {arr.dtype}, shape {arr.shape})"
    out = arr.astype(np.float64)
    if not np.isfinite(out).all():
        return None, f"{what} holds NaN or infinite values"
    if len(out) == 0:
        return None, f"{what} {'are' if what.endswith('counts') else 'is'} empty"
    return out, None


def _gaussian_release_args(
    n_rows: int, sigma: float, granularity: float, false_alarm: float
) -> tuple[int, float, float, float]:
    """The aggregator's public numbers about an owner's Gaussian release, checked: ``(n_rows, sigma, granularity,
    false_alarm)``."""
    return (
        bounded_int(n_rows, "n_rows", 0, MAX_ROWS),
        _non_negative(sigma, "sigma"),
        _non_negative(granularity, "granularity"),
        _false_alarm(false_alarm),
    )


def _counts_within(
    values: np.ndarray, n: int, reach: float, total_reach: float, p: float, *, cell: str, rows: str, sigmas: str = ""
) -> str | None:
    """Why released counts over ``n`` rows are impossible, or None: a count above ``n + reach`` or below
    ``-reach``, or a sum above ``n + total_reach`` (``cell``: what a count is per, ``"label"`` or ``"cell"``;
    ``rows``: the rows counted; ``sigmas``: the reach in noise sigmas, said beside it)."""
    where = "for label" if cell == "label" else f"in {cell}"
    low, high = int(np.argmin(values)), int(np.argmax(values))
    if values[high] > n + reach:
        return (
            f"released a count of {values[high]:.6g} {where} {high}, more than its {n} {rows} allow (with the "
            f"noise: at most {n + reach:.6g}{sigmas}, false alarm {p:.2g})"
        )
    if values[low] < -reach:
        return (
            f"released a count of {values[low]:.6g} {where} {low}, below what its noise reaches "
            f"({-reach:.6g}{sigmas}, false alarm {p:.2g})"
        )
    total = float(values.sum())
    if total > n + total_reach:
        return (
            f"released counts summing to {total:.6g} over {len(values)} {cell}s, more than its {n} {rows} allow "
            f"(with the noise: at most {n + total_reach:.6g}, false alarm {p:.2g})"
        )
    return None


def gaussian_tail_sigmas(false_alarm: float, tails: int = 1) -> float:
    """The number ``z`` of noise sigmas beyond which each of ``tails`` one-sided subgaussian tails has probability
    at most ``false_alarm / tails``: ``z = sqrt(2 ln(tails / false_alarm))`` (``P(X >= zσ) <= exp(-z²/2)``).

    >>> round(gaussian_tail_sigmas(1e-9), 3)
    6.438
    """
    p = _false_alarm(false_alarm)
    k = bounded_int(tails, "tails", 1, MAX_ROWS)
    return math.sqrt(2.0 * math.log(k / p))


def laplace_tail_scales(false_alarm: float, tails: int = 1) -> float:
    """The number ``t`` of discrete Laplace scales ``b`` beyond which each of ``tails`` one-sided tails has
    probability at most ``false_alarm / tails``: ``t = ln(tails / false_alarm)`` (``P(X >= tb) <= exp(-t)``)."""
    p = _false_alarm(false_alarm)
    k = bounded_int(tails, "tails", 1, MAX_ROWS)
    return math.log(k / p)


def laplace_sum_bound(scale: float, cells: int, false_alarm: float) -> float:
    """A bound ``s`` with ``P(X_1 + ... + X_J >= s) <= false_alarm`` for ``J = cells`` independent discrete Laplace
    noises of scale ``b = scale`` (module docs: Chernoff with the exact moment generating function, the best
    ``λ = (k / 256) / b``, ``k = 1..255``)."""
    b = _positive_scale(scale, "scale")
    j = bounded_int(cells, "cells", 1, MAX_ROWS)
    log_inv = -math.log(_false_alarm(false_alarm))
    log_one_minus_p = math.log(-math.expm1(-1.0 / b))
    best = math.inf
    for k in range(1, _CHERNOFF_GRID):
        lam = k / (_CHERNOFF_GRID * b)
        log_m = 2.0 * log_one_minus_p - math.log(-math.expm1(lam - 1.0 / b)) - math.log(-math.expm1(-lam - 1.0 / b))
        best = min(best, (j * log_m + log_inv) / lam)
    return best


def hash_sum_norm_bound(n_rows: int, dim: int, sigma: float, granularity: float, false_alarm: float) -> float:
    """The largest norm an honest released hash sum of ``n_rows`` rows in ``dim`` coordinates has with probability
    at least ``1 - false_alarm``: ``sqrt(2)·n·(1 + HASH_NORM_SLACK)`` (each ``||h1(x)|| <= sqrt(2)``, computed in
    float32) + ``g·sqrt(d)/2`` (the rounding to the grid ``g``) + ``σ sqrt(d + 2 sqrt(d t) + 2t)``,
    ``t = ln(1/false_alarm)`` (the noise's norm, module docs)."""
    n = bounded_int(n_rows, "n_rows", 0, MAX_ROWS)
    d = bounded_int(dim, "dim", 1, MAX_ROWS)
    s = _non_negative(sigma, "sigma")
    g = _non_negative(granularity, "granularity")
    t = -math.log(_false_alarm(false_alarm))
    return (
        math.sqrt(2.0) * n * (1.0 + HASH_NORM_SLACK)
        + g * math.sqrt(d) / 2.0
        + s * math.sqrt(d + 2.0 * math.sqrt(d * t) + 2.0 * t)
    )


def check_owner_label_counts(
    counts: object, n_rows: int, sigma: float, granularity: float = 0.0, *, false_alarm: float = DEFAULT_FALSE_ALARM
) -> str | None:
    """Are an owner's released counts per label ones an honest owner of ``n_rows`` rows could release?

    Honest exact counts ``c_j`` are integers with ``c_j >= 0`` and ``sum_j c_j <= n_rows`` (each row has one label;
    a label outside the set is not counted). Released: ``c_j`` rounded to the grid ``granularity`` plus Gaussian
    noise of standard deviation ``sigma`` (module docs). Tests, each one-sided at ``false_alarm / (2J + 1)``
    with ``z = gaussian_tail_sigmas(false_alarm, 2J + 1)``:

    * every count ``>= -(zσ + g/2)`` and ``<= n_rows + zσ + g/2``;
    * their sum ``<= n_rows + z·σ·sqrt(J) + J·g/2``.

    Parameters
    ----------
    counts : array_like of shape (J,)
        The released counts, as received (a malformed or non-finite release fails).
    n_rows : int
        The owner's public row count.
    sigma, granularity : float
        The release's noise standard deviation and grid step (``SketchReply.sigma``, ``.granularity``; ``>= 0``).
    false_alarm : float, default=DEFAULT_FALSE_ALARM (1e-9)
        Probability that an honest release fails.

    Returns
    -------
    str or None
        None for a plausible release, else why it is not.

    Raises
    ------
    InvalidParameterError
        ``n_rows``, ``sigma``, ``granularity`` or ``false_alarm`` out of range (the aggregator's values, not the
        party's).
    """
    n, s, g, p = _gaussian_release_args(n_rows, sigma, granularity, false_alarm)
    values, bad = _released(counts, "the released label counts")
    if values is None:
        return bad
    j = len(values)
    z = gaussian_tail_sigmas(p, 2 * j + 1)
    reach, total_reach = z * s + g / 2.0, z * s * math.sqrt(j) + j * g / 2.0
    return _counts_within(values, n, reach, total_reach, p, cell="label", rows="rows", sigmas=f", {z:.3g} sigmas")


def check_hash_sum(
    values: object, n_rows: int, sigma: float, granularity: float = 0.0, *, false_alarm: float = DEFAULT_FALSE_ALARM
) -> str | None:
    """Is an owner's released hash sum ``sum_x h1(x)`` + noise one an honest owner of ``n_rows`` rows could release?

    Its norm must be at most :func:`hash_sum_norm_bound` ``(n_rows, d, sigma, granularity, false_alarm)``: ``sqrt(2)
    n`` plus what the rounding and the noise reach (module docs). Parameters, return value and errors as
    :func:`check_owner_label_counts` (``values``: the released sum, shape ``(d,)``).
    """
    n, s, g, p = _gaussian_release_args(n_rows, sigma, granularity, false_alarm)
    released, bad = _released(values, "the released hash sum")
    if released is None:
        return bad
    bound = hash_sum_norm_bound(n, len(released), s, g, p)
    with np.errstate(over="ignore"):  # a norm beyond the float range is inf, refused below
        norm = float(np.linalg.norm(released))
    if not norm <= bound:  # also catches an overflow to inf
        return (
            f"released a hash sum of norm {norm:.6g}, more than {n} rows of norm sqrt(2) and the noise reach "
            f"({bound:.6g}, false alarm {p:.2g})"
        )
    return None


def check_consumer_counts(
    counts: object, n_rows: int, scale: float, *, false_alarm: float = DEFAULT_FALSE_ALARM
) -> str | None:
    """Is the consumer's released histogram (counts per cell + discrete Laplace of scale ``b``) one an honest
    consumer of ``n_rows`` validation rows could release?

    Honest exact counts are integers with ``c_j >= 0`` and ``sum_j c_j <= n_rows`` (each row in at most one cell).
    Tests, each one-sided at ``false_alarm / (2J + 1)``: every count ``>= -t·b`` and ``<= n_rows + t·b`` with
    ``t = laplace_tail_scales(false_alarm, 2J + 1)``; their sum ``<= n_rows + laplace_sum_bound(b, J,
    false_alarm / (2J + 1))``.

    Parameters
    ----------
    counts : array_like of shape (J,)
        ``LabelHistogramRelease.counts`` as received.
    n_rows : int
        The consumer's row count ``|D_v|`` (public).
    scale : float
        The discrete Laplace scale ``b`` (``LabelHistogramRelease.scale``, > 0).
    false_alarm : float, default=DEFAULT_FALSE_ALARM (1e-9)

    Returns
    -------
    str or None
        None for a plausible release, else why it is not.
    """
    n = bounded_int(n_rows, "n_rows", 0, MAX_ROWS)
    b = _positive_scale(scale, "scale")
    p = _false_alarm(false_alarm)
    values, bad = _released(counts, "the released histogram")
    if values is None:
        return bad
    j = len(values)
    tests = 2 * j + 1
    reach = laplace_tail_scales(p, tests) * b
    return _counts_within(values, n, reach, laplace_sum_bound(b, j, p / tests), p, cell="cell", rows="validation rows")
