r"""Differentially private ERM baselines for the PFDS comparison (paper Table 2, "DP-Pred").

* :func:`objective_perturbation` - Chaudhuri, Monteleoni & Sarwate, *Differentially Private
  Empirical Risk Minimization*, JMLR 12 (2011), Algorithm 2 (objective perturbation), for
  L2-regularised logistic regression (loss :math:`\log(1+e^{-z})`, :math:`c = 1/4`) and the Huber
  SVM of their Section 3.4.2 (:math:`c = 1/(2h)`). PFDS's reference [4] is the 2009 NeurIPS version
  for logistic regression; the JMLR algorithm is its corrected and extended form.
* :func:`functional_mechanism` - Zhang et al., *Functional Mechanism*, PVLDB 5(11) (2012),
  Algorithm 1 for linear regression, with the sensitivity :math:`\Delta = 2(1 + 2d + d^2)` quoted
  in the PFDS paper (Section 5) and spectral trimming of the noisy quadratic (their Section 5.2).

Both are ε-DP under **replace-one** (one row of the agent's data changed, n public) - the relation of
both papers. (PFDS's guarantee is stated under add/remove; under replace-one PFDS at ε is 2ε-DP.)
Rows must satisfy the papers' norm assumptions, which :func:`unit_features` enforces from the public
domain bounds (no private data is read for scaling).

All noise comes from :class:`dpsumm.privacy.Csprng`: continuous quantities (the Gamma norm, the Gaussian
direction) are computed in floating point from its uniforms; the functional mechanism's Laplace noise
uses the exact grid sampler :meth:`Csprng.laplace` with the grid-rounding term added to Δ.
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np

from ._validation import as_array, float64_array, positive_float, real_number
from .errors import InvalidParameterError
from .privacy import Csprng, check_random_state

__all__ = ["objective_perturbation", "functional_mechanism", "unit_features", "LOSSES"]

#: Loss name -> curvature bound c (|l''| <= c) of Chaudhuri et al. (2011).
LOSSES = {"logistic": 0.25, "huber": 1.0}  # Huber with h = 0.5: c = 1/(2h) = 1
_HUBER_H = 0.5


def _reals(value: object, name: str, ndim: tuple[int, ...]) -> np.ndarray:
    """``value`` as a float64 array of finite real numbers with ``ndim`` dimensions; InvalidParameterError naming
    ``name`` otherwise (strings, objects and complex numbers are refused, never cast)."""
    arr = as_array(value, name)
    if arr.dtype.kind not in "fiub":
        raise InvalidParameterError(f"`{name}` must hold real numbers, got dtype {arr.dtype}", name)
    if arr.ndim not in ndim:
        raise InvalidParameterError(f"`{name}` must be {' or '.join(f'{d}-D' for d in ndim)}, got {arr.ndim}-D", name)
    arr = float64_array(arr, name)
    if not np.isfinite(arr).all():
        raise InvalidParameterError(f"`{name}` contains NaN or infinite values", name)
    return arr


def unit_features(X: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Rows scaled to [0, 1] per attribute by the *public* bounds, a constant 1 appended (intercept),
    all divided by sqrt(d + 1): every row then has L2 norm <= 1 and every entry lies in [0, 1].

    ``lower`` and ``upper`` are one bound per attribute (or one for all), with ``lower < upper``."""
    d = _reals(X, "X", (2,)).shape[1]
    bounds = []
    for name, bound in (("lower", lower), ("upper", upper)):
        arr = _reals(bound, name, (0, 1))
        if arr.ndim == 1 and arr.shape != (d,):
            raise InvalidParameterError(
                f"`{name}` must hold one bound per attribute ({d}), got shape {arr.shape}", name
            )
        bounds.append(arr)
    with np.errstate(over="ignore"):
        span = bounds[1] - bounds[0]
    if not (np.all(span > 0) and np.isfinite(span).all()):
        raise InvalidParameterError("`upper` must exceed `lower` in every attribute, by a finite span", "upper")
    with np.errstate(over="ignore"):  # a row beyond the bounds by more than the float range: clipped below
        Z = (np.asarray(X, dtype=np.float64) - lower) / (upper - lower)
    Z = np.clip(Z, 0.0, 1.0)
    Z = np.hstack([Z, np.ones((Z.shape[0], 1))])
    return Z / math.sqrt(Z.shape[1])


def _gaussian(rng: Csprng, n: int) -> np.ndarray:
    """n standard normals by Box-Muller on CSPRNG uniforms (floating point)."""
    m = (n + 1) // 2
    u = rng.uniform_array(2 * m)
    u1 = 1.0 - u[:m]  # (0, 1]
    r = np.sqrt(-2.0 * np.log(u1))
    z = np.concatenate([r * np.cos(2 * np.pi * u[m:]), r * np.sin(2 * np.pi * u[m:])])
    return z[:n]


def _gamma_int(rng: Csprng, shape: int, scale: float) -> float:
    """Gamma(shape, scale) for an integer shape: a sum of ``shape`` exponentials."""
    u = 1.0 - rng.uniform_array(shape)  # (0, 1]
    return float(-scale * np.log(u).sum())


def _loss(name: str, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Loss and derivative at margins z."""
    if name == "logistic":
        val = np.logaddexp(0.0, -z)
        der = -0.5 * (1.0 - np.tanh(z / 2.0))  # -1/(1+e^z)
        return val, der
    h = _HUBER_H
    val = np.where(z > 1 + h, 0.0, np.where(z < 1 - h, 1 - z, (1 + h - z) ** 2 / (4 * h)))
    der = np.where(z > 1 + h, 0.0, np.where(z < 1 - h, -1.0, -(1 + h - z) / (2 * h)))
    return val, der


def objective_perturbation(
    Z: np.ndarray,
    y: np.ndarray,
    epsilon: float,
    loss: str = "logistic",
    lam: float = 0.01,
    random_state: object = None,
) -> np.ndarray:
    r"""ε-DP linear classifier by objective perturbation (Chaudhuri et al. 2011, Algorithm 2).

    .. math::
        \varepsilon' = \varepsilon - \log\Big(1 + \frac{2c}{n\Lambda} + \frac{c^2}{n^2\Lambda^2}\Big);
        \quad \Delta = 0 \text{ if } \varepsilon' > 0, \text{ else }
        \Delta = \frac{c}{n(e^{\varepsilon/4}-1)} - \Lambda,\ \varepsilon' = \varepsilon/2;

    draw :math:`b` with density :math:`\propto e^{-\varepsilon'\|b\|/2}` (norm
    :math:`\sim\Gamma(d, 2/\varepsilon')`, uniform direction) and return

    .. math:: \arg\min_f \frac1n\sum_i \ell(y_i f^\top x_i) + \frac{\Lambda}{2}\|f\|^2
              + \frac{b^\top f}{n} + \frac{\Delta}{2}\|f\|^2 .

    Parameters
    ----------
    Z : array (n, d)
        Rows with L2 norm <= 1 (:func:`unit_features`).
    y : array (n,)
        Labels in {-1, +1}.
    epsilon : float
    loss : {"logistic", "huber"}
    lam : float
        Λ, the regularisation weight.
    random_state : None, int or Csprng

    Returns
    -------
    ndarray (d,)
        The weight vector f; predict ``sign(Z @ f)``.
    """
    from scipy.optimize import minimize

    if not isinstance(loss, str) or loss not in LOSSES:
        raise InvalidParameterError(f"`loss` must be one of {sorted(LOSSES)}, got {loss!r}", "loss")
    eps = positive_float(epsilon, "epsilon")
    lam = positive_float(lam, "lam")
    Z = _reals(Z, "Z", (2,))
    y = _reals(y, "y", (1,))
    if Z.ndim != 2 or y.shape != (Z.shape[0],) or Z.shape[0] == 0:
        bad = "Z" if Z.shape[0] == 0 else "y"
        raise InvalidParameterError("`Z` must be (n, d) with n >= 1 and `y` (n,)", bad)
    if np.any(np.linalg.norm(Z, axis=1) > 1 + 1e-9):
        raise InvalidParameterError("rows of `Z` must have L2 norm <= 1", "Z")
    if not np.all(np.isin(y, (-1.0, 1.0))):
        raise InvalidParameterError("`y` must be in {-1, +1}", "y")
    rng = check_random_state(random_state)
    n, d = Z.shape
    c = LOSSES[loss]
    if not n * n * lam * lam > 0:  # (n lam)^2 below the float range: the slack below divides by it
        raise InvalidParameterError(f"`lam` is too small for {n} rows, got {lam!r}", "lam")
    eps_p = eps - math.log(1 + 2 * c / (n * lam) + c * c / (n * n * lam * lam))
    delta = 0.0
    if eps_p <= 0:
        delta = c / (n * math.expm1(eps / 4)) - lam
        eps_p = eps / 2
        if not math.isfinite(delta):
            raise InvalidParameterError(f"`epsilon` is too small for {n} rows, got {epsilon!r}", "epsilon")
    g = _gaussian(rng, d)
    b = g / np.linalg.norm(g) * _gamma_int(rng, d, 2.0 / eps_p)
    reg = lam + delta

    def fun(f: np.ndarray) -> tuple[float, np.ndarray]:
        z = y * (Z @ f)
        val, der = _loss(loss, z)
        obj = val.mean() + 0.5 * reg * f @ f + b @ f / n
        grad = Z.T @ (der * y) / n + reg * f + b / n
        return float(obj), grad

    res = minimize(fun, np.zeros(d), jac=True, method="L-BFGS-B", options={"maxiter": 1000, "gtol": 1e-10})
    return cast(np.ndarray, res.x)


def functional_mechanism(
    Z: np.ndarray, y: np.ndarray, epsilon: float, random_state: object = None, ridge: float = 1e-6
) -> np.ndarray:
    r"""ε-DP linear regression by the functional mechanism (Zhang et al. 2012).

    The objective :math:`\sum_i (y_i - w^\top x_i)^2 = \sum_i y_i^2 - 2 (\sum_i y_i x_i)^\top w
    + w^\top (\sum_i x_i x_i^\top) w` has polynomial coefficients of sensitivity
    :math:`\Delta = 2(1 + 2d + d^2)` for :math:`x_{ij}, y_i \in [-1, 1]`; each distinct coefficient
    gets :math:`\mathrm{Lap}(\Delta/\varepsilon)` noise. The noisy quadratic form is made positive
    definite by spectral trimming (eigenvalues <= 0 dropped) and minimised (plus ``ridge`` ||w||^2).

    Parameters
    ----------
    Z : array (n, d)
        Entries in [-1, 1] (:func:`unit_features` gives [0, 1]).
    y : array (n,)
        Labels in [-1, 1].
    epsilon : float
    random_state : None, int or Csprng

    Returns
    -------
    ndarray (d,)
        w; predict ``Z @ w``.
    """
    eps = positive_float(epsilon, "epsilon")
    ridge_value = real_number(ridge, "ridge")
    if not (math.isfinite(ridge_value) and ridge_value >= 0):
        raise InvalidParameterError(f"`ridge` must be a finite number >= 0, got {ridge!r}", "ridge")
    Z = _reals(Z, "Z", (2,))
    y = _reals(y, "y", (1,))
    if Z.ndim != 2 or y.shape != (Z.shape[0],):
        raise InvalidParameterError(f"`Z` must be (n, d) and `y` (n,), got {Z.shape} and {y.shape}", "y")
    if np.abs(Z).max(initial=0) > 1 + 1e-12 or np.abs(y).max(initial=0) > 1 + 1e-12:
        raise InvalidParameterError("entries of `Z` and `y` must lie in [-1, 1]", "Z")
    rng = check_random_state(random_state)
    d = Z.shape[1]
    sens = 2.0 * (1 + 2 * d + d * d)
    g = sens / 1024.0
    scale = (sens + g) / eps  # grid rounding adds at most g to the sensitivity
    lin = -2.0 * (Z.T @ y)
    quad = Z.T @ Z
    lin_n = np.array([rng.laplace(float(v), scale, g) for v in lin])
    quad_n = np.empty_like(quad)
    for j in range(d):
        # the monomial w_j w_l (j < l) has coefficient 2 quad[j, l]: noise it once, split it evenly
        quad_n[j, j] = rng.laplace(float(quad[j, j]), scale, g)
        for k in range(j + 1, d):
            v = rng.laplace(float(2 * quad[j, k]), scale, g) / 2
            quad_n[j, k] = quad_n[k, j] = v
    vals, vecs = np.linalg.eigh(quad_n)
    keep = vals > 0
    if not keep.any():
        return np.zeros(d)
    V = vecs[:, keep]
    lv = vals[keep] + ridge
    # minimise w^T Q w + lin^T w in the kept subspace: w = -V diag(1/(2 lv)) V^T lin
    return cast(np.ndarray, -V @ ((V.T @ lin_n) / (2 * lv)))
