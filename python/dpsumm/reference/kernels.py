"""Numpy twins of the deterministic kernels: h1, bids, RBF kernel sums, MMD², greedy selection and an
owner's nomination.

Each twin checks its arguments as the Rust-backed function of the same name does (:mod:`dpsumm.kernels`,
:class:`dpsumm.RFFHasher`): a bad argument is an :class:`~dpsumm.InvalidParameterError` naming it, of the same
class as the Rust-backed twin raises, before any work. Matrices must be finite in float32 (the Rust kernels read
them in float32; in float64 here, a larger value could overflow to NaN).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import cast

import numpy as np

from .._validation import (
    as_array,
    check_score_bound,
    float32_array,
    float_matrix,
    float_matrix_peak,
    positive_float,
    real_vector,
)
from ..errors import InvalidParameterError
from ..kernels import (
    _count,
    _f64_vector,
    _mask,
    _seed,
    _taken,
    _vector,
    h1_peak,
    hash_peak,
    stochastic_sample_size,  # plain arithmetic, no Rust kernel to mirror: the library's own
)

__all__ = [
    "rff_transform",
    "best_row",
    "best_rows",
    "mmd2",
    "kernel_sum",
    "kernel_row_means",
    "greedy_select",
    "kernel_greedy",
    "nominate",
    "stochastic_greedy_select",
    "stochastic_sample_size",
]


def _float32_rows(X: object, name: str, *, n_features: int | None = None, allow_empty: bool = False) -> np.ndarray:
    """``X`` as :func:`~dpsumm._validation.float_matrix` (2-D, real, at least one column, finite; float32 and
    float64 kept as given) whose values are also finite in float32, as the Rust kernels read them."""
    if allow_empty and as_array(X, name).shape[:1] == (0,):
        return float_matrix(X, name, n_features=n_features, allow_empty=True)
    arr, peak = float_matrix_peak(X, name, n_features=n_features)
    if not math.isfinite(peak):
        raise InvalidParameterError(f"`{name}` has values beyond the float32 range (|x| > 3.4e38)", name)
    return arr


def rff_transform(X: np.ndarray, omega: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """``sqrt(2/d) * cos(X @ omega + offset)`` in float64, returned as float32 (paper Alg. 1).

    ``omega`` (n_features, d) and ``offset`` (d,) are the projection (``RFFHasher.omega_``, ``offset_``).
    Unlike :meth:`dpsumm.RFFHasher.transform`, no bound on ``|omega . x|``: the cosine is float64's."""
    omega = _float32_rows(omega, "omega")
    d = omega.shape[1]
    X = _float32_rows(X, "X", n_features=omega.shape[0], allow_empty=True)
    offset = real_vector(offset, "offset", d)
    Z = np.asarray(X, dtype=np.float64) @ omega.astype(np.float64)
    Z += offset.astype(np.float64)
    np.cos(Z, out=Z)
    Z *= np.sqrt(2.0 / d)
    return Z.astype(np.float32)


def best_row(hashes: np.ndarray, v: np.ndarray, offered: np.ndarray | None = None) -> tuple[float, int] | None:
    """Max of ``hashes @ v`` over rows not in ``offered`` (float32 matvec, lowest index on ties)."""
    hashes = _float32_rows(hashes, "hashes", allow_empty=True)
    _vector(v, hashes.shape[1])  # the Rust twin's check; the product below keeps v's own dtype
    v = np.asarray(v)
    offered = _mask(offered, hashes.shape[0])
    if hashes.shape[0] == 0:
        return None
    scores = hashes @ v
    if offered is not None:
        if offered.all():
            return None
        scores = np.where(offered, -np.inf, scores)
    i = int(np.argmax(scores))
    return float(scores[i]), i


def best_rows(
    hashes: list[np.ndarray], v: np.ndarray, offered: list[np.ndarray] | None = None
) -> list[tuple[float, int] | None]:
    """:func:`best_row` for each owner."""
    if isinstance(hashes, (str, bytes, np.ndarray)) or not isinstance(hashes, Sequence):
        raise InvalidParameterError("`hashes` must be a list of 2-D float32 arrays (one per owner)", "hashes")
    if offered is not None and (isinstance(offered, (str, bytes, np.ndarray)) or not isinstance(offered, Sequence)):
        raise InvalidParameterError("`offered` must be a list of bool masks (one per owner) or None", "offered")
    hashes = [_float32_rows(h, "hashes", allow_empty=True) for h in hashes]
    if any(h.shape[1] != hashes[0].shape[1] for h in hashes):
        raise InvalidParameterError("every entry of `hashes` must have the same number of columns", "hashes")
    if offered is not None and len(offered) != len(hashes):
        raise InvalidParameterError(f"`offered` has {len(offered)} entries, `hashes` has {len(hashes)}", "offered")
    masks = offered if offered is not None else [None] * len(hashes)
    return [best_row(h, v, m) for h, m in zip(hashes, masks)]


def _sq_dists(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    d = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * (A @ B.T)
    return cast(np.ndarray, np.maximum(d, 0.0))


def kernel_sum(A: np.ndarray, B: np.ndarray, gamma: float, block: int = 2048) -> float:
    """``sum_{a, b} exp(-gamma ||a - b||^2)`` in float64, blockwise (``block`` rows of ``A`` at a time)."""
    gamma = positive_float(gamma, "gamma")
    A = _float32_rows(A, "A")
    B = _float32_rows(B, "B", n_features=A.shape[1])
    block = _count(block, "block", 1)
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    total = 0.0
    for i in range(0, A.shape[0], block):
        total += float(np.exp(-gamma * _sq_dists(A[i : i + block], B)).sum())
    return total


def mmd2(A: np.ndarray, B: np.ndarray, gamma: float) -> float:
    """Biased (V-statistic) MMD² under the RBF kernel, in float64."""
    gamma = positive_float(gamma, "gamma")
    A = _float32_rows(A, "A")
    B = _float32_rows(B, "B", n_features=A.shape[1])
    n, m = len(A), len(B)
    value = kernel_sum(A, A, gamma) / n**2 + kernel_sum(B, B, gamma) / m**2 - 2 * kernel_sum(A, B, gamma) / (n * m)
    return max(value, 0.0)


def kernel_row_means(A: np.ndarray, B: np.ndarray, gamma: float) -> np.ndarray:
    """For each row ``a`` of ``A``, ``mean_b exp(-gamma ||a - b||^2)``."""
    gamma = positive_float(gamma, "gamma")
    A = _float32_rows(A, "A", allow_empty=True)
    B = _float32_rows(B, "B", n_features=A.shape[1])
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    return cast(np.ndarray, np.exp(-gamma * _sq_dists(A, B)).mean(1))


def greedy_select(
    hashes: np.ndarray, target: np.ndarray, k: int, taken: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Greedy toward ``target``: round ``r`` picks ``argmax h.t - (1/(r+1)) sum_{s chosen} h.h_s`` over
    rows not chosen or taken (lowest index on ties), in float64 matrix-vector products. ``target`` is bounded as in
    :func:`dpsumm.kernels.greedy_select` (``||target||_1 * max|hashes| <= 4.5e307``)."""
    hashes = _float32_rows(hashes, "hashes", allow_empty=True)
    target = _f64_vector(target, hashes.shape[1], "target")
    check_score_bound(target, "target", hash_peak(float32_array(hashes, "hashes")))  # as the Rust twin reads them
    k = _count(k, "k", 0)
    taken = _taken(taken, hashes.shape[0])
    H = np.asarray(hashes, dtype=np.float64)
    n = H.shape[0]
    base = H @ np.asarray(target, dtype=np.float64)
    cross = np.zeros(n)
    blocked = np.zeros(n, dtype=bool) if taken is None else np.array(taken, dtype=bool)
    indices: list[int] = []
    scores: list[float] = []
    for r in range(k):
        if blocked.all():
            break
        if indices:
            cross += H @ H[indices[-1]]
        score = np.where(blocked, -np.inf, base - cross / (r + 1))
        i = int(np.argmax(score))
        indices.append(i)
        scores.append(float(score[i]))
        blocked[i] = True
    return np.array(indices, dtype=np.int64), np.array(scores, dtype=np.float64)


def kernel_greedy(
    X: np.ndarray, kv: np.ndarray, ks0: np.ndarray, q0: int, k: int, gamma: float
) -> tuple[np.ndarray, np.ndarray]:
    """The exact-kernel greedy (``rust/src/kernel_greedy.rs``): round ``q`` (``q0`` seed rows, then the picks)
    takes ``argmax kv[i] - (q/(q+1)) ks[i]/q`` over rows not picked (``kv[i]`` at ``q = 0``; lowest index on ties)
    and adds ``exp(-gamma ||x_i - x_pick||^2)`` to every ``ks[i]``; float64 throughout."""
    X = _float32_rows(X, "X", allow_empty=True)
    kv = _f64_vector(kv, X.shape[0], "kv")
    ks0 = _f64_vector(ks0, X.shape[0], "ks0")
    q0 = _count(q0, "q0", 0)
    k = _count(k, "k", 0)
    gamma = positive_float(gamma, "gamma")
    X = np.asarray(X, dtype=np.float64)
    ks = np.array(ks0, dtype=np.float64)
    kv = np.asarray(kv, dtype=np.float64)
    sq = np.einsum("ij,ij->i", X, X)
    taken = np.zeros(len(X), dtype=bool)
    indices: list[int] = []
    scores: list[float] = []
    for q in range(q0, q0 + min(k, len(X))):
        if indices:
            p = indices[-1]
            ks += np.exp(-gamma * np.maximum(sq + sq[p] - 2.0 * (X @ X[p]), 0.0))
        score = kv - (q / (q + 1)) * (ks / q) if q > 0 else kv.copy()
        score[taken] = -np.inf
        i = int(np.argmax(score))
        indices.append(i)
        scores.append(float(score[i]))
        taken[i] = True
    return np.array(indices, dtype=np.int64), np.array(scores, dtype=np.float64)


def gumbel(seed: int, n: int) -> np.ndarray:
    """The standard Gumbel variates of rows ``0..n-1`` for ``seed``: SplitMix64 at stream position
    ``seed + (i+1) * 0x9E3779B97F4A7C15``, ``u = (z >> 11 + 1/2) / 2^53``, ``-log(-log u)``."""
    with np.errstate(over="ignore"):
        i = np.arange(1, n + 1, dtype=np.uint64)
        z = np.uint64(seed) + i * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    u = ((z >> np.uint64(11)).astype(np.float64) + 0.5) / 2.0**53
    return np.asarray(-np.log(-np.log(u)), dtype=np.float64)


_MASK64 = (1 << 64) - 1
STOCHASTIC_DOMAIN = 0x5354_4F43_4841_5354


def splitmix64(seed: int, i: int) -> int:
    """SplitMix64's output at stream position ``seed + (i+1) * 0x9E3779B97F4A7C15`` (Python ints, mod 2^64)."""
    z = (seed + (i + 1) * 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def stochastic_greedy_select(
    hashes: np.ndarray, target: np.ndarray, k: int, sample_size: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Stochastic greedy: each round a partial Fisher-Yates shuffle draws ``sample_size`` rows of the open
    list (``0..n`` initially, a pick leaves by swap-remove), position ``j`` swapped with ``j + u mod (open -
    j)``, ``u`` the next ``splitmix64(seed ^ STOCHASTIC_DOMAIN, counter)``; the best of them by ``h.t -
    h.sum_S / (q+1)`` (lowest index on ties) is picked."""
    hashes = _float32_rows(hashes, "hashes", allow_empty=True)
    target = _f64_vector(target, hashes.shape[1], "target")
    check_score_bound(target, "target", hash_peak(float32_array(hashes, "hashes")))  # as the Rust twin reads them
    k = _count(k, "k", 0)
    sample_size = _count(sample_size, "sample_size", 1)
    seed = _seed(seed, "seed")
    H = np.asarray(hashes, dtype=np.float64)
    n = H.shape[0]
    base = H @ np.asarray(target, dtype=np.float64)
    total = np.zeros(H.shape[1])
    open_ = list(range(n))
    stream = (seed ^ STOCHASTIC_DOMAIN) & _MASK64
    counter = 0
    indices: list[int] = []
    scores: list[float] = []
    for r in range(min(k, n)):
        m = len(open_)
        s = min(sample_size, m)
        for j in range(s):
            u = splitmix64(stream, counter)
            counter += 1
            jj = j + u % (m - j)
            open_[j], open_[jj] = open_[jj], open_[j]
        sample = np.array(open_[:s])
        v = base[sample] - (H[sample] @ total) / (r + 1)
        best = max(range(s), key=lambda q: (v[q], -sample[q]))
        i = int(sample[best])
        open_[best] = open_[-1]
        open_.pop()
        total += H[i]
        indices.append(i)
        scores.append(float(v[best]))
    return np.array(indices, dtype=np.int64), np.array(scores, dtype=np.float64)


def nominate(
    hashes: np.ndarray,
    g_tilde: np.ndarray,
    temperature: float,
    nominees: int,
    candidates: int,
    sample_seed: int | None = None,
    greedy_sample_factor: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """An owner's nomination from its full hash matrix (the Rust kernel streams the raw rows instead).

    Scores ``s = H g``, weights ``exp((s - max s) / T)``, target ``t = w H / sum w``, the ``candidates``
    rows with the largest key (``s``, or ``s / T + gumbel(sample_seed)`` for the weighted sample; ties to
    the lowest index) in row order, then :func:`greedy_select` of ``nominees`` of them toward ``t``.
    Returns ``(indices, hashes, target, n_candidates)``. ``g_tilde`` is bounded as in :func:`dpsumm.kernels.nominate`
    (``||g_tilde||_1 * max(sqrt(2/d), max|hashes|) / temperature <= 4.5e307``).
    """
    hashes = _float32_rows(hashes, "hashes")
    g_tilde = _f64_vector(g_tilde, hashes.shape[1], "g_tilde")
    temperature = positive_float(temperature, "temperature")
    # The Rust twin bounds h1's entries by sqrt(2/d); hashes that are not h1's may be larger.
    check_score_bound(
        g_tilde, "g_tilde", max(h1_peak(hashes.shape[1]), hash_peak(float32_array(hashes, "hashes"))), temperature
    )
    nominees = _count(nominees, "nominees", 1)
    candidates = _count(candidates, "candidates", 1)
    if candidates < nominees:
        raise InvalidParameterError(f"`candidates` must be >= nominees = {nominees}, got {candidates}", "candidates")
    if sample_seed is not None:
        sample_seed = _seed(sample_seed, "sample_seed")
    if greedy_sample_factor is not None:
        greedy_sample_factor = positive_float(greedy_sample_factor, "greedy_sample_factor")
    H = np.asarray(hashes, dtype=np.float64)
    n = H.shape[0]
    s = H @ np.asarray(g_tilde, dtype=np.float64)
    w = np.exp((s - s.max()) / temperature)
    t = (w @ H) / w.sum()
    key = s if sample_seed is None else s / temperature + gumbel(sample_seed, n)
    order = np.lexsort((np.arange(n), -key))
    cand = np.sort(order[: min(candidates, n)])
    if greedy_sample_factor is None:
        picks, _ = greedy_select(hashes[cand], t, nominees)
    else:
        picks, _ = stochastic_greedy_select(
            hashes[cand],
            t,
            nominees,
            stochastic_sample_size(len(cand), nominees, greedy_sample_factor),
            0 if sample_seed is None else sample_seed,
        )
    idx = cand[picks].astype(np.int64)
    return idx, np.asarray(hashes)[idx], t, len(cand)
