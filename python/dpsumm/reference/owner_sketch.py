"""Numpy twins of rust/src/owner_sketch.rs (an owner's sketches and self-consistent tilt, issue 19).

Each function hashes every row at once (``n x d``: for tests only) and must agree with the Rust kernel of
the same name: exactly for the histogram counts, to float64 rounding for sums and means.

Each checks its arguments as the Rust kernel does (``_core.owner_hash_sum``, ``owner_score_histogram``,
``owner_tilted_mean``, ``owner_self_consistent_tilt``, which take the raw rows and the projection where these take
the hashes ``H``): a bad one is an :class:`~dpsumm.InvalidParameterError` naming it, before any work. ``H`` must
have rows, finite in float32; a vector whose scores ``h1(x) . v`` could overflow float64 is refused
(``||v||_1 * max(sqrt(2/d), max|H|) <= 4.5e307``, :func:`dpsumm._validation.check_score_bound`).
"""

from __future__ import annotations

import numpy as np

from .._validation import bounded_int, check_score_bound, finite_float, float32_array, positive_float, real_vector
from ..errors import InvalidParameterError
from ..kernels import h1_peak, hash_peak
from .kernels import _float32_rows

__all__ = ["hash_sum", "score_histogram", "tilted_mean", "self_consistent_tilt"]

#: Most edges of a score histogram (rust/src/owner_sketch.rs).
MAX_EDGES = 65535
#: Most self-consistent steps (rust/src/owner_sketch.rs).
MAX_TILT_ROUNDS = 10_000


def _hashes(H: object) -> np.ndarray:
    """``H`` as the Rust kernels' rows: 2-D, at least one row and one column, finite in float32."""
    return _float32_rows(H, "H")


def _peak(H: np.ndarray) -> float:
    """The bound on ``|h|`` the Rust kernels use (h1's ``sqrt(2/d)``), or ``max|H|`` for hashes that are not h1's."""
    return max(h1_peak(H.shape[1]), hash_peak(float32_array(H, "H")))


def _direction(v: object, name: str, H: np.ndarray) -> np.ndarray:
    """A finite float64 vector of ``H``'s width whose scores ``H @ v`` cannot overflow."""
    out = real_vector(v, name, H.shape[1])
    check_score_bound(out, name, _peak(H))
    return out


def hash_sum(H: np.ndarray) -> np.ndarray:
    """``sum_x h1(x)`` from the float32 hashes ``H`` (n, d), in float64."""
    H = _hashes(H)
    out: np.ndarray = np.asarray(H, dtype=np.float64).sum(axis=0)
    return out


def score_histogram(H: np.ndarray, direction: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Counts of ``h1(x).direction`` in ``len(edges) + 1`` bins: bin ``i`` counts the scores with exactly ``i``
    edges at or below them (bin 0: below the first edge; the last: at or above the last edge). ``edges``: 1 to
    65535 finite, strictly increasing values."""
    H = _hashes(H)
    direction = _direction(direction, "direction", H)
    edges = real_vector(edges, "edges")
    if not 1 <= len(edges) <= MAX_EDGES:
        raise InvalidParameterError(f"`edges` needs between 1 and {MAX_EDGES} edges, got {len(edges)}", "edges")
    if not (np.diff(edges) > 0).all():
        raise InvalidParameterError("`edges` must be strictly increasing", "edges")
    s = np.asarray(H, dtype=np.float64) @ direction
    b = np.searchsorted(edges, s, side="right")
    return np.bincount(b, minlength=len(edges) + 1).astype(np.int64)


def tilted_mean(H: np.ndarray, lam: np.ndarray) -> tuple[np.ndarray, float]:
    """``(sum w h1 / sum w, log sum w)`` with ``w = exp(h1(x).lambda)``."""
    H = _hashes(H)
    return _tilted_mean(np.asarray(H, dtype=np.float64), _direction(lam, "lam", H))


def _tilted_mean(H64: np.ndarray, lam: np.ndarray) -> tuple[np.ndarray, float]:
    """:func:`tilted_mean` of checked float64 hashes and tilt."""
    s = H64 @ lam
    m = float(s.max())
    w = np.exp(s - m)
    z = float(w.sum())
    return (w @ H64) / z, m + float(np.log(z))


def self_consistent_tilt(
    H: np.ndarray, g_tilde: np.ndarray, lambda0: np.ndarray, temperature: float, max_rounds: int, stop_sq: float
) -> tuple[np.ndarray, int, float]:
    """``lambda <- lambda + (g~ - m_lambda)/T`` from ``lambda0`` until ``||g~ - m_lambda||^2 <= stop_sq`` or
    ``max_rounds`` steps (0 to 10000): ``(lambda, steps, residual_sq)``. ``stop_sq``: finite, ``>= 0``."""
    H = _hashes(H)
    g = real_vector(g_tilde, "g_tilde", H.shape[1])
    lam = _direction(lambda0, "lambda0", H).copy()
    temperature = positive_float(temperature, "temperature")
    max_rounds = bounded_int(max_rounds, "max_rounds", 0, MAX_TILT_ROUNDS)
    stop_sq = finite_float(stop_sq, "stop_sq")
    if stop_sq < 0:
        raise InvalidParameterError(f"`stop_sq` must be finite and >= 0, got {stop_sq!r}", "stop_sq")
    H64 = np.asarray(H, dtype=np.float64)
    rounds = 0
    while True:
        m, _ = _tilted_mean(H64, lam)
        r = float(((g - m) ** 2).sum())
        if r <= stop_sq or rounds >= max_rounds:
            return lam, rounds, r
        lam = lam + (g - m) / temperature
        rounds += 1
