"""Validated entry points to the Rust kernels: bid maximisation, exact RBF kernel sums, and the
nominations protocol's greedy selection and streaming owner nomination."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from . import _core
from ._validation import (
    as_array,
    check_score_bound,
    float32_array,
    float_matrix,
    instance_of,
    positive_float,
    real_matrix,
)
from .errors import InvalidParameterError

if TYPE_CHECKING:
    from .hashing import RFFHasher

__all__ = [
    "BidIndex",
    "best_row",
    "best_rows",
    "mmd2",
    "kernel_sum",
    "kernel_row_means",
    "greedy_select",
    "exact_greedy",
    "stochastic_greedy_select",
    "stochastic_sample_size",
    "nominate",
    "Nomination",
    "DEFAULT_CANDIDATE_FACTOR",
]


def _hashes(H: object, name: str = "hashes") -> np.ndarray:
    arr = as_array(H, name)
    if arr.ndim != 2:
        raise InvalidParameterError(f"`{name}` must be 2-D, got {arr.ndim}-D", name)
    if arr.dtype.kind not in "fiub":
        raise InvalidParameterError(f"`{name}` must hold real numbers, got dtype {arr.dtype}", name)
    if arr.shape[1] == 0:
        raise InvalidParameterError(f"`{name}` has no columns (a hash has dim >= 1)", name)
    return float32_array(arr, name)


def _vector(v: object, d: int) -> np.ndarray:
    try:
        raw = np.asarray(v)
        if raw.dtype.kind not in "fiub":
            raise TypeError(f"dtype {raw.dtype}")
    except Exception as exc:  # numpy raises many types on ragged or exotic input
        raise InvalidParameterError(f"`v` must be a vector of real numbers: {exc}", "v") from exc
    arr = float32_array(raw, "v")
    if arr.shape != (d,):
        raise InvalidParameterError(f"`v` must have shape ({d},), got {arr.shape}", "v")
    if not np.isfinite(arr).all():
        raise InvalidParameterError("`v` contains NaN or infinite values", "v")
    return arr


def _mask(m: object, n: int, name: str = "offered") -> np.ndarray | None:
    if m is None:
        return None
    arr = as_array(m, name)
    if arr.dtype.kind not in "biu":
        raise InvalidParameterError(f"`{name}` must be a boolean mask, got dtype {arr.dtype}", name)
    arr = np.ascontiguousarray(arr, dtype=bool)
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
        Hashed rows (converted to C-contiguous float32 if needed: values beyond the float32 range are refused).
    v : ndarray of shape (d,)
        The broadcast vector (read in float32: finite, within the float32 range).
    offered : ndarray of shape (n,), bool, optional
        Rows to skip.

    Returns
    -------
    (value, index) or None
        None when every row is offered or ``hashes`` is empty.
    """
    H = _hashes(hashes)
    return _core.best_row(H, _vector(v, H.shape[1]), _mask(offered, H.shape[0]))


def best_rows(
    hashes: Sequence[object], v: object, offered: Sequence[object] | None = None
) -> list[tuple[float, int] | None]:
    """:func:`best_row` for several owners against the same ``v``, in parallel."""
    if isinstance(hashes, (str, bytes, np.ndarray)) or not isinstance(hashes, Sequence):
        raise InvalidParameterError("`hashes` must be a list of 2-D float32 arrays (one per owner)", "hashes")
    if offered is not None and (isinstance(offered, (str, bytes, np.ndarray)) or not isinstance(offered, Sequence)):
        raise InvalidParameterError("`offered` must be a list of bool masks (one per owner) or None", "offered")
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


def _from_core(name: str, doc: str) -> Any:
    """A read-only property: ``self._core``'s own ``name`` (the compiled index's value, not copied here)."""
    return property(lambda self: getattr(self._core, name), doc=doc)


class BidIndex:
    """An owner's stateful bid index: answers :func:`best_row` round after round, faster.

    Built once from an owner's hashed rows (:meth:`from_hashes`) or from its raw rows and the public
    hasher (:meth:`from_rows`), it stores every hash coordinate in 8 bits (a quarter of float32) and keeps
    the mask of rows already offered. :meth:`best` screens all rows with exact integer arithmetic, bounds
    the error of the 8-bit codes rigorously (every rounding included), and re-scores exactly, from the
    float32 hash, every row whose bound could still win. So its answer is *identical* to
    ``best_row(hashes, v, offered)``: the same value (float32 products summed in float64 in a fixed order)
    and the same winner (lowest index on ties), whatever the thread count.

    With :meth:`from_rows` the index holds no float32 hashes at all: h1 is row-canonical (a row hashed
    alone gives the same bits as inside a matrix), so the hash of a row to re-score is recomputed from the
    raw row. The raw rows (or hashes) are referenced, never copied, and must not change afterwards.

    Examples
    --------
    >>> import numpy as np, dpsumm
    >>> X = np.random.default_rng(0).random((1000, 5), dtype=np.float32)
    >>> h = dpsumm.RFFHasher(5, dim=16, seed=0)
    >>> index = dpsumm.kernels.BidIndex.from_rows(X, h)
    >>> v = np.ones(16, dtype=np.float32)
    >>> index.best(v) == dpsumm.kernels.best_row(h.transform(X), v)
    True
    """

    def __init__(self, core: _core.BidIndex) -> None:
        self._core = core

    @classmethod
    def from_hashes(cls, hashes: object) -> BidIndex:
        """The index of hashed rows (n, d): float32 C-contiguous arrays are referenced, others converted."""
        return cls(_core.BidIndex.from_hashes(_hashes(hashes)))

    @classmethod
    def from_rows(cls, rows: object, hasher: object) -> BidIndex:
        """The index of ``hasher.transform(rows)`` without storing it.

        Parameters
        ----------
        rows : ndarray of shape (n, n_features)
            float32 or float64, any memory order: referenced, not copied (other dtypes are converted to
            float64 once). Values must be finite.
        hasher : RFFHasher
        """
        from .hashing import RFFHasher

        hasher = instance_of(hasher, RFFHasher, "hasher", "a dpsumm.RFFHasher")
        n_features = hasher.n_features if hasher.n_features is not None else getattr(hasher, "n_features_in_", None)
        if n_features is None:
            raise InvalidParameterError(
                "`hasher` has no n_features: give RFFHasher(n_features=...) or fit it first", "hasher"
            )
        arr = as_array(rows, "rows")
        if arr.ndim != 2:
            raise InvalidParameterError(f"`rows` must be 2-D, got {arr.ndim}-D", "rows")
        if arr.dtype not in (np.float32, np.float64):
            if arr.dtype.kind not in "iub":
                raise InvalidParameterError(f"`rows` must hold real numbers, got dtype {arr.dtype}", "rows")
            arr = arr.astype(np.float64)
        if arr.shape[1] != n_features:
            raise InvalidParameterError(f"`rows` has {arr.shape[1]} features, the hasher {n_features}", "rows")
        projection = hasher._projection
        try:
            return cls(_core.BidIndex.from_rows(arr, projection))
        except InvalidParameterError as exc:  # the core names its input X
            if exc.argument != "X":
                raise
            raise InvalidParameterError(str(exc).replace("`X`", "`rows`"), "rows") from exc

    def best(self, v: object) -> tuple[float, int] | None:
        """``(value, index)`` of the best row not offered for ``v`` (as :func:`best_row`), or None."""
        return self._core.best(_vector(v, self._core.dim))

    def mark_offered(self, index: int) -> bool:
        """Exclude row ``index`` from all later bids; False if it already was."""
        return self._core.mark_offered(_index(index, self._core.n_rows))

    def is_offered(self, index: int) -> bool:
        return self._core.is_offered(_index(index, self._core.n_rows))

    def hash_row(self, index: int) -> np.ndarray:
        """The exact float32 hash of row ``index``."""
        return self._core.hash_row(_index(index, self._core.n_rows))

    offered: np.ndarray = _from_core("offered", "A copy of the offered mask (one bool per row).")
    n_rows: int = _from_core("n_rows", "Rows in the index.")
    dim: int = _from_core("dim", "Values per hash.")
    n_offered: int = _from_core("n_offered", "Rows offered so far.")
    nbytes: int = _from_core("nbytes", "Bytes held by the 8-bit codes (about ``n_rows * dim``).")
    last_rescored: int = _from_core("last_rescored", "How many rows the last :meth:`best` re-scored exactly.")

    def __len__(self) -> int:
        return self._core.n_rows

    def __repr__(self) -> str:
        src = "rows" if self._core.from_raw_rows else "hashes"
        return f"BidIndex(n_rows={self.n_rows}, dim={self.dim}, offered={self.n_offered}, from={src})"


def _index(i: object, n: int) -> int:
    if isinstance(i, bool) or not isinstance(i, numbers.Integral):
        raise InvalidParameterError(f"`index` must be an integer, got {type(i).__name__}", "index")
    if not 0 <= int(i) < n:
        raise InvalidParameterError(f"`index` must be a row in [0, {n}), got {int(i)}", "index")
    return int(i)


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


# --- The nominations protocol's kernels -------------------------------------------------------------

#: ``nominate(..., candidates=None)`` keeps ``DEFAULT_CANDIDATE_FACTOR * nominees`` candidates. With the
#: weighted candidate sample, C = 2M already matched C = all rows on MNIST (benches/nominate_candidates_mnist.py).
DEFAULT_CANDIDATE_FACTOR = 4


def _f64_vector(v: object, d: int, name: str) -> np.ndarray:
    arr = as_array(v, name)
    if arr.dtype.kind not in "fiu":
        raise InvalidParameterError(f"`{name}` must hold real numbers, got dtype {arr.dtype}", name)
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if arr.shape != (d,):
        raise InvalidParameterError(f"`{name}` must have shape ({d},), got {arr.shape}", name)
    if not np.isfinite(arr).all():
        raise InvalidParameterError(f"`{name}` contains NaN or infinite values", name)
    return arr


def hash_peak(hashes: np.ndarray) -> float:
    """``max |h|`` over float32 ``hashes`` (0 when empty or when a value is not finite: the kernel refuses those)."""
    if hashes.size == 0:
        return 0.0
    peak = _core.finite_max_abs(hashes)
    return 0.0 if peak is None else float(peak)


def h1_peak(dim: int) -> float:
    """The largest ``|h|`` of an h1 hash of ``dim`` coordinates: ``sqrt(2/dim) |cos|``, with float32's rounding."""
    return math.sqrt(2.0 / dim) * (1.0 + 2.0**-20)


def _count(value: object, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidParameterError(f"`{name}` must be an integer, got {type(value).__name__}", name)
    v = int(value)
    if v < minimum:
        raise InvalidParameterError(f"`{name}` must be >= {minimum}, got {v}", name)
    if v >= 2**63:
        raise InvalidParameterError(f"`{name}` must be below 2**63, got {v}", name)
    return v


def _greedy_inputs(hashes: object, target: object) -> tuple[np.ndarray, np.ndarray]:
    """The greedy selections' ``(hashes, target)``: float32 rows with at least one column, and a float64 target of
    their width whose scores stay within the float range."""
    H = real_matrix(hashes, "hashes")
    if H.shape[1] == 0:
        raise InvalidParameterError("`hashes` has no columns", "hashes")
    H = float32_array(H, "hashes")
    t = _f64_vector(target, H.shape[1], "target")
    check_score_bound(t, "target", hash_peak(H))
    return H, t


def greedy_select(hashes: object, target: object, k: int, taken: object = None) -> tuple[np.ndarray, np.ndarray]:
    """Greedy selection of up to ``k`` rows of ``hashes`` whose mean approaches ``target``.

    Round ``r`` (``q = r`` rows chosen so far, set ``S``) picks, among rows neither chosen nor ``taken``,

    ``argmax_x  h(x) . target - (1 / (q + 1)) * sum_{s in S} h(x) . h(s)``

    (the greedy step minimising ``||target - mean_{S + x} h||^2`` without the ``||h(x)||^2`` term), ties
    to the lowest index. ``h(x) . target`` sums float32 x float64 products in float64 and
    ``h(x) . h(s)`` exact float32 x float32 products in float64, both in a fixed order, so the result does
    not depend on the thread count. One pass over ``hashes`` per round (``O(k n d)`` in all, ``O(n)``
    extra memory, no ``n x n`` matrix), parallel, without the GIL.

    Parameters
    ----------
    hashes : array-like of shape (n, d)
        Hashed rows, converted to C-contiguous float32 if needed. Values must be finite.
    target : array-like of shape (d,)
        The vector to approach (float64), e.g. the validation hash mean. Finite, with
        ``||target||_1 * max|hashes| <= 4.5e307`` (float64 max / 4) so that no score overflows
        (:func:`dpsumm._validation.check_score_bound`); a released mean is below it by ~290 orders of magnitude.
    k : int
        Rows to pick (``>= 0``).
    taken : array-like of bool, shape (n,), optional
        Rows that may not be picked.

    Returns
    -------
    indices : ndarray of int64, shape (m,)
        Rows in selection order, ``m = min(k, number of rows not taken)``: fewer than ``k`` when the
        rows run out.
    scores : ndarray of float64, shape (m,)
        The score of each pick when it was picked.
    """
    H, t = _greedy_inputs(hashes, target)
    kk = _count(k, "k", 0)
    return _core.greedy_select(H, t, kk, _taken(taken, H.shape[0]))


def _taken(taken: object, n: int) -> np.ndarray | None:
    """None, or ``taken`` as a C-contiguous bool array of shape (n,) (bool dtype only: not a 0/1 array)."""
    if taken is None:
        return None
    mask = as_array(taken, "taken")
    if mask.dtype != np.bool_:
        raise InvalidParameterError(f"`taken` must be a bool array, got dtype {mask.dtype}", "taken")
    if mask.shape != (n,):
        raise InvalidParameterError(f"`taken` must have shape ({n},), got {mask.shape}", "taken")
    return np.ascontiguousarray(mask)


def stochastic_sample_size(n: int, k: int, factor: float) -> int:
    """Rows a round of :func:`stochastic_greedy_select` evaluates in :func:`nominate`: ``ceil(n / min(k, n) *
    factor)`` clipped to ``[1, n]`` (0 when ``n`` or ``k`` is 0). Mirzasoleiman et al. (2015) take
    ``factor = ln(1 / eps)``. ``n`` and ``k`` are integers ``>= 0``, ``factor`` a finite number ``> 0``."""
    n = _count(n, "n", 0)
    k = _count(k, "k", 0)
    factor = positive_float(factor, "factor")
    if n <= 0 or k <= 0:
        return 0
    rows = n / min(k, n) * factor
    return n if rows >= n else int(max(1, math.ceil(rows)))


def stochastic_greedy_select(
    hashes: object, target: object, k: int, sample_size: int, random_state: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Stochastic greedy (Mirzasoleiman et al. 2015, "Lazier than lazy greedy") toward ``target``.

    The greedy of :func:`greedy_select`, except that each round evaluates only ``sample_size`` rows drawn
    uniformly without replacement from the rows not yet chosen, and picks the best of them (ties to the
    lowest index). The score after ``q`` picks is ``h(x) . target - h(x) . sum_S h / (q + 1)`` with
    ``sum_S h`` the float64 sum of the chosen hashes: ``O(d)`` per evaluation, ``O(k * sample_size * d +
    n * d)`` in all instead of ``O(k * n * d)``. The draws come from SplitMix64 keyed by ``random_state``
    (public randomness, not a privacy mechanism; the exact stream is documented in rust/src/greedy.rs), so
    the result is a deterministic function of the inputs, whatever the thread count. With
    ``sample_size >= n`` it is the exact greedy (up to float64 rounding of the cross term).

    Parameters
    ----------
    hashes : array-like of shape (n, d)
        Hashed rows (converted to C-contiguous float32). Values must be finite.
    target : array-like of shape (d,)
        The vector to approach (float64): finite, ``||target||_1 * max|hashes| <= 4.5e307``, as in
        :func:`greedy_select`.
    k : int
        Rows to pick (``>= 0``; at most ``n`` are returned).
    sample_size : int
        Rows evaluated per round (``>= 1``).
    random_state : int, default=0
        Seed of the draws, ``0 <= random_state < 2**64``.

    Returns
    -------
    indices : ndarray of int64, shape (min(k, n),)
    scores : ndarray of float64, shape (min(k, n),)
    """
    H, t = _greedy_inputs(hashes, target)
    kk = _count(k, "k", 0)
    s = _count(sample_size, "sample_size", 1)
    seed = _seed(random_state)
    return _core.stochastic_greedy_select(H, t, kk, s, seed)


def _seed(random_state: object, name: str = "random_state") -> int:
    if (
        isinstance(random_state, bool)
        or not isinstance(random_state, numbers.Integral)
        or not 0 <= int(random_state) < 2**64
    ):
        raise InvalidParameterError(f"`{name}` must be an int in [0, 2**64), got {random_state!r}", name)
    return int(random_state)


@dataclass(frozen=True)
class Nomination:
    """An owner's nominees (the result of :func:`nominate`).

    Attributes
    ----------
    indices : ndarray of int64, shape (m,)
        Rows of the owner's ``X`` in selection order; ``m = min(nominees, n)``.
    hashes : ndarray of float32, shape (m, d)
        Their h1 hashes, bit-identical to ``hasher.transform(X[indices])``.
    target : ndarray of float64, shape (d,)
        The tilted target the greedy approached: ``sum_x w(x) h1(x) / sum_x w(x)``,
        ``w(x) = exp(h1(x) . g_tilde / temperature)`` over all the owner's rows.
    n_candidates : int
        ``min(candidates, n)``: how many top-scoring rows the greedy chose from.
    """

    indices: np.ndarray
    hashes: np.ndarray
    target: np.ndarray
    n_candidates: int


def nominate(
    X: object,
    hasher: RFFHasher,
    g_tilde: object,
    *,
    temperature: float,
    nominees: int,
    candidates: int | None = None,
    sampling: Literal["weighted", "top"] = "weighted",
    random_state: int | None = None,
    block_rows: int = 256,
    greedy_sample_factor: float | None = None,
) -> Nomination:
    """An owner's nominations: ``nominees`` of its rows, chosen from its data and ``g_tilde`` only.

    One streaming pass over ``X`` in blocks of ``block_rows`` rows (parallel, without the GIL, never
    holding an ``n x d`` matrix): hash each block with ``hasher``, score every row
    ``s(x) = h1(x) . g_tilde``, accumulate the tilted target ``t = sum_x w(x) h1(x) / sum_x w(x)`` with
    ``w(x) = exp(s(x) / temperature)`` (an online log-sum-exp in float64: safe for any temperature, from
    1e-6, where ``t`` is the best row's hash, to 1e6, where it is the plain mean), and keep
    ``candidates`` rows: with ``sampling="weighted"`` (default) a sample without replacement with
    probabilities proportional to ``w`` (the Gumbel-top-k trick: the largest ``s(x)/T + G(x)``, ``G(x)`` a
    standard Gumbel variate derived from ``random_state`` and the row index), a sample of the tilted
    distribution whose mean is ``t``; with ``sampling="top"`` the rows with the largest score (ties to
    the lowest index). Then :func:`greedy_select` picks ``nominees`` of the candidates toward ``t``.
    With ``candidates >= n`` every row is a candidate and the result is the greedy over all rows toward
    ``t``.

    Measured on MNIST (d = 500, T = 0.1, p = 200, M = 2p, 5 owners): the top-score candidates lack
    diversity (C = 8M: +95 % MMD² over central greedy, C = all: +6 %), the weighted sample reaches the
    quality of C = all from C = 2M.

    The result depends only on ``X``, the public hasher, ``g_tilde``, the parameters and
    ``random_state``: it is the same whatever the thread count (bit for bit) and whatever
    ``block_rows`` (up to float64 rounding of ``target``). The sampling randomness is not a privacy
    mechanism (an owner's nominees are a function of its own data and ``g_tilde``).

    Parameters
    ----------
    X : array-like of shape (n, n_features)
        The owner's rows, float32 or float64 in any memory order: referenced, never copied whole
        (other real dtypes are converted to float64 once). Values must be finite.
    hasher : RFFHasher
        The public h1.
    g_tilde : array-like of shape (hasher.dim,)
        The released noisy validation hash mean. Finite, with ``||g_tilde||_1 * sqrt(2 / dim) / temperature <=
        4.5e307`` (float64 max / 4; ``sqrt(2/dim)`` bounds an h1 entry) so that no weight exponent
        ``h1(x) . g_tilde / temperature`` overflows (:func:`dpsumm._validation.check_score_bound`): a release at any
        epsilon the library accepts (``|g_tilde_i|`` below ~1e12) is far below it for any temperature above 1e-280.
    temperature : float
        ``T > 0`` of the relevance weights.
    nominees : int
        ``M >= 1``, the rows to nominate (fewer when ``n < M``).
    candidates : int, optional
        ``C >= M``, the rows the greedy chooses from; default ``DEFAULT_CANDIDATE_FACTOR * nominees``.
    sampling : {"weighted", "top"}, default="weighted"
        How the candidates are chosen (see above).
    random_state : int, optional
        Seed (``0 <= seed < 2**64``) of the weighted sample; None draws one from the CSPRNG.
    block_rows : int, default=256
        Rows per block of the streaming pass (memory ``block_rows x d`` floats per thread).
    greedy_sample_factor : float, optional
        None (default): the exact greedy among the candidates, ``O(M C d)``. A float ``r > 0``: the
        stochastic greedy (:func:`stochastic_greedy_select`), each round evaluating
        ``stochastic_sample_size(C, M, r)`` (``~ (C / M) r``) random candidates, keyed by ``random_state``
        (0 with ``sampling="top"`` and no seed): ``O(M (C/M) r d) = O(C r d)``.

    Returns
    -------
    Nomination
    """
    from .hashing import RFFHasher

    hasher = instance_of(hasher, RFFHasher, "hasher", "a dpsumm.RFFHasher")
    arr = real_matrix(X, "X")
    if arr.shape[0] == 0:
        raise InvalidParameterError("`X` has no rows", "X")
    if arr.shape[1] != hasher.n_features:
        raise InvalidParameterError(f"`X` has {arr.shape[1]} features per row, the hasher {hasher.n_features}", "X")
    g = _f64_vector(g_tilde, hasher.dim, "g_tilde")
    T = positive_float(temperature, "temperature")
    check_score_bound(g, "g_tilde", h1_peak(hasher.dim), T)
    M = _count(nominees, "nominees", 1)
    C = DEFAULT_CANDIDATE_FACTOR * M if candidates is None else _count(candidates, "candidates", 1)
    if C < M:
        raise InvalidParameterError(f"`candidates` must be >= nominees = {M}, got {C}", "candidates")
    B = _count(block_rows, "block_rows", 1)
    if sampling not in ("weighted", "top"):
        raise InvalidParameterError(f"`sampling` must be 'weighted' or 'top', got {sampling!r}", "sampling")
    seed: int | None = None
    if sampling == "weighted":
        if random_state is None:
            seed = int(_core.Csprng().integers(2**63))
        else:
            if (
                isinstance(random_state, bool)
                or not isinstance(random_state, numbers.Integral)
                or not 0 <= int(random_state) < 2**64
            ):
                raise InvalidParameterError(
                    f"`random_state` must be None or an int in [0, 2**64), got {random_state!r}", "random_state"
                )
            seed = int(random_state)
    factor: float | None = None
    if greedy_sample_factor is not None:
        factor = positive_float(greedy_sample_factor, "greedy_sample_factor")
    indices, hashes, target, n_candidates = _core.nominate(arr, hasher._projection, g, T, M, C, seed, B, factor)
    return Nomination(indices=indices, hashes=hashes, target=target, n_candidates=int(n_candidates))


def exact_greedy(
    datas: list[np.ndarray], validation: np.ndarray, seed: np.ndarray, size: int, gamma: float
) -> tuple[list[tuple[int, int]], list[float]]:
    """Greedy on the exact RBF kernel (centralised, non-private): each round adds the row maximising
    ``mean_{y in D_v} k(x, y) - q/(q+1) mean_{z in D_s} k(x, z)`` (docs/explanation/nomination-kernels.md)."""
    X = np.concatenate(datas).astype(np.float32)
    owner_of = np.concatenate([np.full(len(d), k) for k, d in enumerate(datas)])
    index_of = np.concatenate([np.arange(len(d)) for d in datas])
    kv = kernel_row_means(X, validation, gamma)
    ks_sum = np.zeros(len(X)) if len(seed) == 0 else kernel_row_means(X, seed, gamma) * len(seed)
    # One fused Rust pass per round (rust/src/kernel_greedy.rs; its speed against the numpy loop it replaces:
    # benches/bench_scale_e2e.py).
    idx, vals = _core.kernel_greedy(
        np.ascontiguousarray(X, dtype=np.float32),
        np.ascontiguousarray(kv, dtype=np.float64),
        np.ascontiguousarray(ks_sum, dtype=np.float64),
        len(seed),
        size,
        float(gamma),
    )
    idx = np.asarray(idx, dtype=np.int64)
    picks = list(zip(owner_of[idx].tolist(), index_of[idx].tolist()))
    return picks, np.asarray(vals, dtype=np.float64).tolist()
