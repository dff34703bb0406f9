"""Quality of a summary: MMD², the objective J, the paper's MMD² increase, downstream accuracy.

* :func:`mmd2` — the biased (V-statistic) squared MMD between two row sets under the exact RBF kernel
  ``k(x, y) = exp(-gamma ||x - y||^2)``, computed by the Rust kernel (no hashing).
* :func:`population_mmd2` — the population view: MMD² between a summary and the consumer's *held-out* rows with
  the held-out rows' own diagonal dropped, an estimate of ``||mu_S - mu_target||^2`` that does not add the held-out
  sample's noise to every method; :func:`offdiagonal_kernel_mean` is its held-out term, computed once for many
  summaries.
* :func:`objective` — the paper's normalised MMD objective J (Eq. 3),
  ``J(D_s) = mean_{i,j in D_v} k(y_i, y_j) - MMD²(D_v, D_s)``; the greedy maximises it.
* :func:`mmd_increase_pct` — Figures 1 and 2's y-axis,
  ``100 (MMD²(alg) - MMD²(greedy)) / MMD²(greedy)``.
* :func:`svm_accuracy`, :func:`mlp_accuracy` — test accuracy of a classifier trained on a summary
  (Figure 1: a linear SVM; Figure 2: a network with one hidden layer of 32 units). These need
  scikit-learn (``pip install 'dpsumm[experiments]'``).

Everything here is evaluation on data the evaluator holds; nothing here is a private release.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from . import _core
from ._validation import (
    _scan,
    bounded_float,
    bounded_int,
    float32_array,
    float_matrix,
    label_vector,
    positive_float,
    positive_int,
    real_number,
)
from .errors import InvalidParameterError
from .kernels import mmd2

__all__ = [
    "mmd2",
    "population_mmd2",
    "offdiagonal_kernel_mean",
    "validation_fit",
    "validation_fit_warning",
    "SummaryFitWarning",
    "objective",
    "mmd_increase_pct",
    "svm_accuracy",
    "mlp_accuracy",
    "accuracy",
]


def objective(summary: object, validation: object, gamma: float) -> float:
    """The objective J of the paper's Eq. 3 (larger is better).

    ``J(D_s) = sum_{i,j in D_v} k(y_i, y_j) / m^2 - MMD²(D_v, D_s)
             = 2 sum_{i in D_v, j in D_s} k(y_i, x_j) / (m |D_s|) - sum_{i,j in D_s} k(x_i, x_j) / |D_s|^2``.

    Parameters
    ----------
    summary : array-like of shape (p, n_features)
    validation : array-like of shape (m, n_features)
    gamma : float
        RBF kernel width.
    """
    g = positive_float(gamma, "gamma")
    S = float_matrix(summary, "summary")
    V = float_matrix(validation, "validation", n_features=S.shape[1])
    for arr, name in ((S, "summary"), (V, "validation")):  # the kernel computes in float32
        if _scan(arr) is None:
            raise InvalidParameterError(f"`{name}` has values beyond the float32 range (|x| > 3.4e38)", name)
    (S, V), g = _kernel_frame([S, V], g)
    p, m = S.shape[0], V.shape[0]
    return float(2.0 * _kernel_sum(V, S, g) / (m * p) - _kernel_sum(S, S, g) / (p * p))


#: Rows per block of :func:`offdiagonal_kernel_mean`'s sum over the held-out rows' pairs: only the blocks on or above
#: the diagonal are computed (the kernel is symmetric), each by the Rust kernel sum (itself blockwise and parallel).
_HELD_OUT_BLOCK = 2048


def _kernel_rows(X: object, name: str, n_features: int | None = None, min_rows: int = 1) -> np.ndarray:
    """``X`` as float rows for the exact kernel (finite, within the float32 range), still in their own precision:
    :func:`_kernel_frame` casts them to float32 once it has moved them."""
    arr = float_matrix(X, name, n_features=n_features)
    if _scan(arr) is None:  # the kernel computes in float32
        raise InvalidParameterError(f"`{name}` has values beyond the float32 range (|x| > 3.4e38)", name)
    if arr.shape[0] < min_rows:
        raise InvalidParameterError(f"`{name}` must have at least {min_rows} rows, got {arr.shape[0]}", name)
    return arr


#: Largest width (in the frame of :func:`_kernel_frame`, rows in ``[-1, 1]``) at which the float32 kernel sums are
#: used: the float32 inner products err by about ``2^-24`` on such rows, which a width above ``2^12`` would turn into
#: an error of ``2^-12`` or more in ``gamma ||x - y||^2``. Above it the sums are computed from float64 differences.
_FLOAT32_MAX_FRAME_GAMMA = 2.0**12
#: Largest width :func:`_kernel_frame` passes on (``exp(-1e300 d^2)`` is 0 for any float64 ``d^2`` that is not 0 or
#: subnormal: a wider kernel changes nothing, and its width would overflow).
_MAX_FRAME_GAMMA = 1e300
#: Entries of one block of float64 differences (rows x rows x features) in :func:`_kernel_sum`'s float64 path.
_FLOAT64_BLOCK_ENTRIES = 1 << 21


def _kernel_frame(rows: list[np.ndarray], gamma: float) -> tuple[list[np.ndarray], float]:
    """The rows moved to a frame where the float32 kernel loses nothing to their magnitude, and the width there.

    ``k(x, y) = exp(-gamma ||x - y||^2)`` is unchanged by a common shift ``c`` and, with ``gamma s^2``, by a common
    scale ``s``: ``k(x, y) = exp(-gamma s^2 ||(x - c) / s - (y - c) / s||^2)``. The shift is the midpoint of the
    rows' per-feature range and ``s`` the power of two at or above their largest distance to it (computed in float64,
    before the float32 cast), so every row lies in ``[-1, 1]``: the kernel's ``||x||^2 + ||y||^2 - 2 x.y`` no longer
    cancels to nothing on rows far from the origin (1e10 + [0, 1]) nor overflows float32 on rows of magnitude 1e20.
    A power of two scales exactly.
    """
    stacked = [np.asarray(r, dtype=np.float64) for r in rows]
    lo = np.min([r.min(axis=0) for r in stacked], axis=0)
    hi = np.max([r.max(axis=0) for r in stacked], axis=0)
    centre = lo / 2.0 + hi / 2.0
    reach = float(np.max(np.maximum(hi - centre, centre - lo))) if lo.size else 0.0
    scale = 2.0 ** math.ceil(math.log2(reach)) if reach > 0.0 else 1.0
    moved = [np.ascontiguousarray((r - centre) / scale, dtype=np.float64) for r in stacked]
    return moved, min(gamma * scale * scale, _MAX_FRAME_GAMMA)


def _kernel_sum(A: np.ndarray, B: np.ndarray, gamma: float) -> float:
    """``sum_{a in A, b in B} k(a, b)`` for rows in :func:`_kernel_frame`'s frame: the Rust kernel sum (float32
    inner products), or, at a width where float32 cannot resolve ``gamma ||a - b||^2`` (rows far apart at the
    kernel's scale, such as distinct rows of magnitude 1e20 under ``gamma = 1``), float64 differences blockwise."""
    if gamma <= _FLOAT32_MAX_FRAME_GAMMA:
        return float(_core.kernel_sum(float32_array(A, "A"), float32_array(B, "B"), gamma))
    d = max(int(A.shape[1]), 1)
    step = max(1, int(math.isqrt(max(_FLOAT64_BLOCK_ENTRIES // d, 1))))
    total = 0.0
    with np.errstate(over="ignore", under="ignore"):
        for i in range(0, A.shape[0], step):
            for j in range(0, B.shape[0], step):
                diff = A[i : i + step, None, :] - B[None, j : j + step, :]
                total += float(np.exp(-gamma * np.einsum("abk,abk->ab", diff, diff)).sum())
    return total


def _offdiagonal_mean(T: np.ndarray, gamma: float) -> float:
    n = int(T.shape[0])
    total = 0.0
    for i in range(0, n, _HELD_OUT_BLOCK):
        Ti = T[i : i + _HELD_OUT_BLOCK]
        for j in range(i, n, _HELD_OUT_BLOCK):
            block = _kernel_sum(Ti, T[j : j + _HELD_OUT_BLOCK], gamma)
            total += block if i == j else 2.0 * block
    # k(t, t) = 1 exactly: the n diagonal terms leave the sum, the n (n - 1) ordered pairs i != j remain.
    return (total - n) / (n * (n - 1.0))


def offdiagonal_kernel_mean(rows: object, gamma: float) -> float:
    """``mean_{i != j} k(t_i, t_j)`` over the rows ``t_1 .. t_n`` (n >= 2) under ``k(x, y) = exp(-gamma ||x - y||^2)``.

    The held-out term of :func:`population_mmd2` (the U-statistic estimate of ``E k(t, t')`` for ``t, t'`` drawn
    independently from the rows' distribution): compute it once and pass it as ``held_out_term`` when several
    summaries are measured against the same held-out rows.

    ``mean_{i != j} k(t_i, t_j) = (sum_{i, j} k(t_i, t_j) - n) / (n (n - 1))``, since ``k(t, t) = 1``. The sum is
    exact-kernel (no hashing), blockwise in blocks of 2,048 rows, only the blocks on or above the diagonal computed
    (``O(n^2 d / 2)`` work, memory bounded whatever ``n``); inner products in float32, kernel values summed in
    float64, as :func:`mmd2`.

    Parameters
    ----------
    rows : array-like of shape (n, n_features)
        At least 2 rows; finite, within the float32 range.
    gamma : float
        RBF kernel width (> 0).

    Returns
    -------
    float
        In ``[0, 1]`` up to float rounding.
    """
    g = positive_float(gamma, "gamma")
    T = _kernel_rows(rows, "rows", min_rows=2)
    (T,), g = _kernel_frame([T], g)
    return _offdiagonal_mean(T, g)


def population_mmd2(summary: object, held_out: object, gamma: float, *, held_out_term: float | None = None) -> float:
    """MMD² between a summary and the consumer's population, estimated from held-out rows (the population view).

    For a summary ``S = {s_1 .. s_p}`` and held-out rows ``T = {t_1 .. t_n}`` of the consumer's population (rows no
    party has seen) under ``k(x, y) = exp(-gamma ||x - y||^2)``:

    ``MMD²_pop(S, T) = mean_{a, b} k(s_a, s_b) - 2 mean_{a, i} k(s_a, t_i) + mean_{i != j} k(t_i, t_j)``

    that is, the biased MMD² to ``T`` (:func:`mmd2`) with ``T``'s own diagonal dropped:

    ``MMD²_pop(S, T) = MMD²(S, T) + mean_{i != j} k(t_i, t_j) - mean_{i, j} k(t_i, t_j)``.

    It estimates ``||mu_S - mu_target||^2`` (``mu`` the kernel mean embeddings; ``S`` is the summary's empirical
    distribution, so its own term keeps its diagonal): the held-out term is unbiased for ``E k(t, t')``, while the
    biased MMD² adds ``(1 - mean_{i != j} k(t_i, t_j)) / n`` (the held-out sample's noise, the same for every
    summary) to every value, which compresses every relative difference between methods. Unlike a squared norm it
    can be slightly negative when ``S`` is itself close to a large sample of the population.

    Exact kernel, computed by the Rust kernel sums (no hashing, float32 inner products summed in float64); the
    held-out term blockwise (:func:`offdiagonal_kernel_mean`), ``O(n^2 d / 2)``, the rest ``O((p^2 + p n) d)``.

    Parameters
    ----------
    summary : array-like of shape (p, n_features)
        The summary's rows (at least one).
    held_out : array-like of shape (n, n_features)
        The consumer's held-out rows (at least two).
    gamma : float
        RBF kernel width (> 0).
    held_out_term : float, optional
        ``offdiagonal_kernel_mean(held_out, gamma)``, computed once for many summaries; computed here when None.
        A finite number in ``[0, 1]``.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from dpsumm.metrics import population_mmd2
    >>> T = np.array([[0.0], [1.0]])
    >>> print(f"{population_mmd2(T, T, 1.0):.6f}")  # (1 + e^-1) / 2 - (1 + e^-1) + e^-1 = (e^-1 - 1) / 2
    -0.316060
    """
    g = positive_float(gamma, "gamma")
    S = _kernel_rows(summary, "summary")
    T = _kernel_rows(held_out, "held_out", n_features=S.shape[1], min_rows=2)
    if held_out_term is None:  # in the held-out rows' own frame: the value offdiagonal_kernel_mean(T) passes
        (T_alone,), g_alone = _kernel_frame([T], g)
        tt = _offdiagonal_mean(T_alone, g_alone)
    else:
        tt = real_number(held_out_term, "held_out_term")
        if not (math.isfinite(tt) and 0.0 <= tt <= 1.0):
            raise InvalidParameterError(
                f"`held_out_term` must be a kernel mean in [0, 1], got {held_out_term!r:.60}", "held_out_term"
            )
    (S, T), g = _kernel_frame([S, T], g)
    p, n = S.shape[0], T.shape[0]
    ss = _kernel_sum(S, S, g) / (p * p)
    st = _kernel_sum(S, T, g) / (p * n)
    return float(ss - 2.0 * st + tt)


#: :func:`validation_fit` reads at most this many validation rows (evenly spaced), so that it costs little whatever
#: ``|D_v|``.
FIT_MAX_ROWS = 4096


def validation_fit(summary: object, validation: object, gamma: float) -> float:
    """The summary's MMD² to the validation rows in units of what ``p`` rows drawn at random from their own
    distribution would give: below 1 the summary is closer to ``D_v`` than such rows, 1 or more it is not.

    For a summary ``S`` of ``p`` rows and validation rows ``V`` of ``n`` rows, with ``k(x, x) = 1``:

    ``fit(S, V) = MMD²(S, V) / ((1/p + 1/n) (1 - mean_{i != j} k(v_i, v_j)))``,

    the biased MMD² (:func:`mmd2`) over its expectation when ``S`` and ``V`` are independent samples of one
    distribution ``q``: ``E MMD²(S, V) = (1/p + 1/n) (1 - E k(v, v'))``, the off-diagonal kernel mean of ``V``
    estimating ``E k(v, v')``. A greedy summary of rows like ``D_v`` is well below 1 (it fits ``D_v``); a purchase
    that did not reach the owners' rows like ``D_v`` (cells that do not carry the consumer's shift) is at 1 or
    above. It reads only ``S`` and ``V``, which the consumer holds: no privacy cost. At most
    :data:`FIT_MAX_ROWS` validation rows are read (evenly spaced), so the figure costs ``O((p + 4096) 4096 d)``.

    Parameters
    ----------
    summary : array-like of shape (p, n_features)
        The summary's rows (at least one).
    validation : array-like of shape (n, n_features)
        The consumer's validation rows (at least two, not all equal).
    gamma : float
        RBF kernel width (> 0).

    Returns
    -------
    float
        ``>= 0``; ``inf`` when the validation rows are all equal (no spread to measure against).

    Examples
    --------
    >>> import numpy as np
    >>> from dpsumm.metrics import validation_fit
    >>> V = np.array([[0.0], [1.0]])
    >>> print(f"{validation_fit(V, V, 1.0):.6f}")  # the rows themselves: MMD² 0
    0.000000
    >>> # one far row: (1 - (e^-9 + e^-4) + (1 + e^-1) / 2) / ((1 + 1/2) (1 - e^-1))
    >>> print(f"{validation_fit(np.array([[3.0]]), V, 1.0):.4f}")
    1.7565
    """
    g = positive_float(gamma, "gamma")
    S = _kernel_rows(summary, "summary")
    V = _kernel_rows(validation, "validation", n_features=S.shape[1], min_rows=2)
    if V.shape[0] > FIT_MAX_ROWS:
        V = np.ascontiguousarray(V[np.linspace(0, V.shape[0] - 1, FIT_MAX_ROWS).round().astype(np.int64)])
    (S, V), g = _kernel_frame([S, V], g)
    p, n = S.shape[0], V.shape[0]
    spread = float((1.0 / p + 1.0 / n) * (1.0 - _offdiagonal_mean(V, g)))
    value = _kernel_sum(S, S, g) / (p * p) + _kernel_sum(V, V, g) / (n * n) - 2.0 * _kernel_sum(S, V, g) / (p * n)
    if not spread > 0:
        return math.inf if value > 0 else 0.0
    return float(value / spread)


class SummaryFitWarning(UserWarning):
    """A private run's summary is no closer to ``D_v`` than as many rows drawn at random from ``D_v``'s own
    distribution would be (:func:`validation_fit` >= 1). Filter it by this class where a run is one of several
    being compared (an experiment measures every method's MMD² itself)."""


def validation_fit_warning(fit: float, size: int, advice: str) -> str | None:
    """The warning a private run gives when its summary's :func:`validation_fit` is 1 or more (else None), ending
    with ``advice``: what the method that chose the rows suggests
    (:meth:`dpsumm.protocols.base.SummaryMethod.fit_advice`)."""
    fit = real_number(fit, "fit")  # NaN (no measure) gives no warning, as before
    size = bounded_int(size, "size", 0, 2**63 - 1)
    if not isinstance(advice, str):
        raise InvalidParameterError(f"`advice` must be a str, got {type(advice).__name__}", "advice")
    if not fit >= 1.0:
        return None
    return (
        f"the summary is no closer to the validation rows than {size} rows drawn at random from their own "
        f"distribution would be (result.extra['validation_fit'] = {fit:.2f} >= 1): {advice}."
    )


def mmd_increase_pct(alg: float, greedy: float) -> float:
    """``100 · (alg − greedy) / greedy``: how much larger an algorithm's MMD² is than the greedy's.

    Negative when the algorithm beats the greedy. ``greedy`` must be positive.
    """
    a = real_number(alg, "alg")
    g = real_number(greedy, "greedy")
    if not (math.isfinite(a) and a >= 0):
        raise InvalidParameterError(f"`alg` must be a finite MMD² >= 0, got {alg!r}", "alg")
    if not (math.isfinite(g) and g > 0):
        raise InvalidParameterError(f"`greedy` must be a finite MMD² > 0, got {greedy!r}", "greedy")
    out = 100.0 * ((a - g) / g)
    if not math.isfinite(out):
        raise InvalidParameterError(f"`alg` / `greedy` overflows ({alg!r} / {greedy!r})", "alg")
    return out


def _training_data(
    X: object, y: object, X_test: object, y_test: object
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    Xa = float_matrix(X, "X")
    Xt = float_matrix(X_test, "X_test", n_features=Xa.shape[1])
    ya = _class_labels(y, "y", Xa.shape[0])
    yt = _class_labels(y_test, "y_test", Xt.shape[0])
    if (ya.dtype.kind in "US") != (yt.dtype.kind in "US"):
        raise InvalidParameterError(
            f"`y_test` holds {'strings' if yt.dtype.kind in 'US' else 'numbers'} but `y` holds "
            f"{'strings' if ya.dtype.kind in 'US' else 'numbers'}: no prediction would ever match a test label",
            "y_test",
        )
    return Xa, ya, Xt, yt


#: Largest |label| of a class given as a float (integers beyond 2**53 are not exact in float64).
_MAX_FLOAT_LABEL = 2.0**53


def _class_labels(value: object, name: str, n: int) -> np.ndarray:
    """Class labels: integers, bools, strings, or floats with integer values (a classifier has no use for 0.5)."""
    arr = label_vector(value, name, n, kinds="biufUS")
    if arr.dtype.kind == "f" and arr.size:
        v = arr.astype(np.float64)
        bad = (v != np.round(v)) | (np.abs(v) > _MAX_FLOAT_LABEL)
        if bad.any():
            raise InvalidParameterError(
                f"`{name}` must hold class labels (integers or strings), got non-integer "
                f"numbers such as {v[bad][:3].tolist()}",
                name,
            )
    return arr


def _seed(random_state: object) -> int | None:
    """A scikit-learn classifier's seed: None or an int in [0, 2**32)."""
    if random_state is None:
        return None
    return bounded_int(random_state, "random_state", 0, 2**32 - 1)


def _sklearn() -> None:
    try:
        import sklearn  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise InvalidParameterError(
            "accuracy helpers need scikit-learn: pip install 'dpsumm[experiments]'", "classifier"
        ) from exc


def accuracy(classifier: object, X: object, y: object, X_test: object, y_test: object) -> float:
    """Fit an unfitted scikit-learn classifier on ``(X, y)`` and return its accuracy on ``(X_test, y_test)``.

    With a single class in ``y`` the classifier predicts that class (no fit is possible).
    """
    if not (callable(getattr(classifier, "fit", None)) and callable(getattr(classifier, "predict", None))):
        raise InvalidParameterError(
            f"`classifier` must be an unfitted scikit-learn classifier (with fit and predict), "
            f"got {type(classifier).__name__}",
            "classifier",
        )
    Xa, ya, Xt, yt = _training_data(X, y, X_test, y_test)
    classes = np.unique(ya)
    if classes.size == 1:
        return float(np.mean(yt == classes[0]))
    model = classifier.fit(Xa, ya)  # type: ignore[attr-defined]
    return float(np.mean(model.predict(Xt) == yt))


def svm_accuracy(
    X: object, y: object, X_test: object, y_test: object, *, C: float = 1.0, random_state: int | None = 0
) -> float:
    """Test accuracy of a linear SVM (``sklearn.svm.LinearSVC``) trained on a summary (paper Figure 1)."""
    _sklearn()
    from sklearn.svm import LinearSVC

    c = bounded_float(C, "C", _MIN_C, _MAX_C, " (liblinear's solver does not terminate beyond)")
    seed = _seed(random_state)
    Xa, ya, Xt, yt = _training_data(X, y, X_test, y_test)
    peak = _feature_peak(Xa, "X", Xt)
    if c * max(1.0, peak) ** 2 > _MAX_C:
        raise InvalidParameterError(
            f"`X` has values up to {peak:.3g}: at C = {c:g}, C * max|x|^2 must be at most "
            f"{_MAX_C:g} for liblinear's solver to terminate; scale the features "
            "(dpsumm.scale_to_unit)",
            "X",
        )
    return accuracy(LinearSVC(C=c, random_state=seed, max_iter=5000), Xa, ya, Xt, yt)


#: Largest |feature| the classifier helpers train or predict on: beyond, their float64 products overflow (MLP's
#: squared gradients, the linear decision values) and the accuracy is garbage.
_MAX_FEATURE = 1e100


def _feature_peak(X: np.ndarray, name: str, X_test: np.ndarray) -> float:
    """max |x| of the training rows; refuse rows (or test rows) beyond :data:`_MAX_FEATURE`."""
    peaks = []
    for arr, arg in ((X, name), (X_test, "X_test")):
        peak = _scan(arr)
        if peak is None or peak > _MAX_FEATURE:
            raise InvalidParameterError(
                f"`{arg}` has values beyond {_MAX_FEATURE:g} in magnitude: the classifier's "
                "arithmetic overflows; scale the features (dpsumm.scale_to_unit)",
                arg,
            )
        peaks.append(peak)
    return peaks[0]


#: The range of LinearSVC's C that liblinear's dual solver handles (it loops without end at C = 1e-200 or 1e200,
#: and whenever C * max|x|^2 overflows its products).
_MIN_C = 1e-100
_MAX_C = 1e100
#: Largest hidden layer and L2 penalty of :func:`mlp_accuracy` (beyond, MLPClassifier's arrays do not fit in memory,
#: or its penalty overflows).
_MAX_HIDDEN = 1 << 20
_MAX_ALPHA = 1e100


def mlp_accuracy(
    X: object,
    y: object,
    X_test: object,
    y_test: object,
    *,
    hidden: int = 32,
    alpha: float = 1e-3,
    max_iter: int = 300,
    random_state: int | None = 0,
) -> float:
    """Test accuracy of a network with one hidden layer of ``hidden`` (32) ReLU units (paper Figure 2).

    ``sklearn.neural_network.MLPClassifier`` (Adam, L2 penalty ``alpha``). The paper's network also
    uses dropout 0.2, which scikit-learn does not offer; the L2 penalty is the regulariser here.
    ``random_state`` seeds the weight initialisation (evaluation, not privacy).
    """
    _sklearn()

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    hidden = bounded_int(hidden, "hidden", 1, _MAX_HIDDEN)
    max_iter = positive_int(max_iter, "max_iter")
    a = positive_float(alpha, "alpha")
    if a > _MAX_ALPHA:
        raise InvalidParameterError(
            f"`alpha` must be at most {_MAX_ALPHA:g} (the L2 penalty overflows beyond), got {alpha!r:.60}", "alpha"
        )
    model = MLPClassifier(hidden_layer_sizes=(hidden,), alpha=a, max_iter=max_iter, random_state=_seed(random_state))
    Xa, ya, Xt, yt = _training_data(X, y, X_test, y_test)
    _feature_peak(Xa, "X", Xt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return accuracy(model, Xa, ya, Xt, yt)
