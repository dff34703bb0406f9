"""Quality of a summary: MMD², the objective J, the paper's MMD² increase, downstream accuracy.

* :func:`mmd2` — the biased (V-statistic) squared MMD between two row sets under the exact RBF kernel
  ``k(x, y) = exp(-gamma ||x - y||^2)``, computed by the Rust kernel (no hashing).
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

from typing import cast

import math
import numbers

import numpy as np

from ._validation import _scan, bounded_int, float_matrix, label_vector, positive_float, positive_int
from .errors import InvalidParameterError
from .kernels import kernel_sum, mmd2

__all__ = ["mmd2", "objective", "mmd_increase_pct", "svm_accuracy", "mlp_accuracy", "accuracy"]


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
    p, m = S.shape[0], V.shape[0]
    return cast(float, 2.0 * kernel_sum(V, S, g) / (m * p) - kernel_sum(S, S, g) / (p * p))


def mmd_increase_pct(alg: float, greedy: float) -> float:
    """``100 · (alg − greedy) / greedy``: how much larger an algorithm's MMD² is than the greedy's.

    Negative when the algorithm beats the greedy. ``greedy`` must be positive.
    """
    for name, x in (("alg", alg), ("greedy", greedy)):
        if isinstance(x, bool) or not isinstance(x, numbers.Real):
            raise InvalidParameterError(f"`{name}` must be a real number, got {type(x).__name__}", name)
    a = float(alg)
    g = float(greedy)
    if not (math.isfinite(a) and a >= 0):
        raise InvalidParameterError(f"`alg` must be a finite MMD² >= 0, got {alg!r}", "alg")
    if not (math.isfinite(g) and g > 0):
        raise InvalidParameterError(f"`greedy` must be a finite MMD² > 0, got {greedy!r}", "greedy")
    out = 100.0 * ((a - g) / g)
    if not math.isfinite(out):
        raise InvalidParameterError(f"`alg` / `greedy` overflows ({alg!r} / {greedy!r})", "alg")
    return out


def _training_data(X: object, y: object, X_test: object, y_test: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    Xa = float_matrix(X, "X")
    Xt = float_matrix(X_test, "X_test", n_features=Xa.shape[1])
    ya = label_vector(y, "y", Xa.shape[0], kinds="biufUS")
    yt = label_vector(y_test, "y_test", Xt.shape[0], kinds="biufUS")
    return Xa, ya, Xt, yt


def _seed(random_state: object) -> int | None:
    """A scikit-learn classifier's seed: None or an int in [0, 2**32)."""
    if random_state is None:
        return None
    return bounded_int(random_state, "random_state", 0, 2**32 - 1)


def _sklearn() -> None:
    try:
        import sklearn  # noqa: F401
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise InvalidParameterError("accuracy helpers need scikit-learn: pip install 'dpsumm[experiments]'", "classifier") from exc


def accuracy(classifier: object, X: object, y: object, X_test: object, y_test: object) -> float:
    """Fit an unfitted scikit-learn classifier on ``(X, y)`` and return its accuracy on ``(X_test, y_test)``.

    With a single class in ``y`` the classifier predicts that class (no fit is possible).
    """
    if not (callable(getattr(classifier, "fit", None)) and callable(getattr(classifier, "predict", None))):
        raise InvalidParameterError(f"`classifier` must be an unfitted scikit-learn classifier (with fit and predict), "
                                    f"got {type(classifier).__name__}", "classifier")
    Xa, ya, Xt, yt = _training_data(X, y, X_test, y_test)
    classes = np.unique(ya)
    if classes.size == 1:
        return float(np.mean(yt == classes[0]))
    model = classifier.fit(Xa, ya)  # type: ignore[attr-defined]
    return float(np.mean(model.predict(Xt) == yt))


def svm_accuracy(X: object, y: object, X_test: object, y_test: object, *, C: float = 1.0, random_state: int | None = 0) -> float:
    """Test accuracy of a linear SVM (``sklearn.svm.LinearSVC``) trained on a summary (paper Figure 1)."""
    _sklearn()
    from sklearn.svm import LinearSVC

    return accuracy(LinearSVC(C=positive_float(C, "C"), random_state=_seed(random_state), max_iter=5000), X, y, X_test,
                    y_test)


def mlp_accuracy(X: object, y: object, X_test: object, y_test: object, *, hidden: int = 32, alpha: float = 1e-3,
                 max_iter: int = 300, random_state: int | None = 0) -> float:
    """Test accuracy of a network with one hidden layer of ``hidden`` (32) ReLU units (paper Figure 2).

    ``sklearn.neural_network.MLPClassifier`` (Adam, L2 penalty ``alpha``). The paper's network also
    uses dropout 0.2, which scikit-learn does not offer; the L2 penalty is the regulariser here.
    ``random_state`` seeds the weight initialisation (evaluation, not privacy).
    """
    _sklearn()
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    hidden = positive_int(hidden, "hidden")
    max_iter = positive_int(max_iter, "max_iter")
    model = MLPClassifier(hidden_layer_sizes=(hidden,), alpha=positive_float(alpha, "alpha"), max_iter=max_iter,
                          random_state=_seed(random_state))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return accuracy(model, X, y, X_test, y_test)
