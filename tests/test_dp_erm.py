"""DP-ERM baselines for the PFDS comparison: objective perturbation and the functional mechanism."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from scipy.optimize import minimize

from dpsumm import InvalidParameterError
from dpsumm.dp_erm import _gamma_int, _gaussian, functional_mechanism, objective_perturbation, unit_features
from dpsumm.privacy import Csprng
from refusal import refused


def classification(n=400, seed=0):
    g = np.random.default_rng(seed)
    X = g.uniform(0, 10, (n, 3))
    y = np.where(X[:, 0] - X[:, 1] + g.normal(0, 1, n) > 0, 1.0, -1.0)
    return unit_features(X, np.zeros(3), np.full(3, 10.0)), y


def test_unit_features_have_norm_at_most_one():
    Z, _ = classification()
    assert np.linalg.norm(Z, axis=1).max() <= 1 + 1e-12 and Z.min() >= 0


def test_noise_samplers_have_the_right_distribution():
    rng = Csprng(5)
    z = _gaussian(rng, 20001)
    assert stats.kstest(z, "norm").pvalue > 1e-3
    g = np.array([_gamma_int(rng, 4, 2.0) for _ in range(4000)])
    assert stats.kstest(g, stats.gamma(a=4, scale=2.0).cdf).pvalue > 1e-3


@pytest.mark.parametrize("loss", ["logistic", "huber"])
def test_objective_perturbation_tends_to_the_regularised_minimiser(loss):
    Z, y = classification()
    lam = 0.01
    f_priv = objective_perturbation(Z, y, 1e6, loss=loss, lam=lam, random_state=1)

    def obj(f):
        z = y * (Z @ f)
        if loss == "logistic":
            val = np.logaddexp(0, -z)
        else:
            val = np.where(z > 1.5, 0, np.where(z < 0.5, 1 - z, (1.5 - z) ** 2 / 2))
        return val.mean() + 0.5 * lam * f @ f

    f_np = minimize(obj, np.zeros(Z.shape[1]), method="BFGS", options={"gtol": 1e-10}).x
    assert np.allclose(f_priv, f_np, atol=2e-3 * (1 + np.abs(f_np).max()))
    # at a small epsilon the noise moves the solution far away
    f_noisy = objective_perturbation(Z, y, 0.1, loss=loss, lam=lam, random_state=1)
    assert np.linalg.norm(f_noisy - f_np) > 0.1 * np.linalg.norm(f_np)


def test_objective_perturbation_extra_regulariser_branch_and_reproducibility():
    Z, y = classification(n=20)
    a = objective_perturbation(Z, y, 0.05, lam=1e-4, random_state=3)  # epsilon' <= 0: Delta > 0
    b = objective_perturbation(Z, y, 0.05, lam=1e-4, random_state=3)
    assert np.all(np.isfinite(a)) and np.array_equal(a, b)


def test_objective_perturbation_bad_input():
    Z, y = classification(n=10)
    with pytest.raises(InvalidParameterError, match="norm"):
        objective_perturbation(Z * 3, y, 1.0)
    with pytest.raises(InvalidParameterError, match=r"\{-1, \+1\}"):
        objective_perturbation(Z, (y + 1) / 2, 1.0)
    with pytest.raises(InvalidParameterError) as e:
        objective_perturbation(Z, y, 1.0, loss="hinge")
    assert e.value.argument == "loss"


def test_functional_mechanism_tends_to_least_squares():
    g = np.random.default_rng(0)
    Z = np.hstack([g.uniform(0, 1, (500, 3)), np.ones((500, 1))])
    y = np.clip(Z @ np.array([0.5, -0.3, 0.2, -0.1]) + g.normal(0, 0.05, 500), -1, 1)
    w_ls = np.linalg.lstsq(Z, y, rcond=None)[0]
    assert np.allclose(functional_mechanism(Z, y, 1e8, random_state=1), w_ls, atol=1e-3)
    assert not np.allclose(functional_mechanism(Z, y, 0.5, random_state=1), w_ls, atol=0.05)
    with pytest.raises(InvalidParameterError):
        functional_mechanism(Z * 2, y, 1.0)


def _unit():
    Z, y = classification(n=40)
    return Z, y


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda Z, y: objective_perturbation(np.array([["a"] * 4] * 40), y, 1.0), "Z"),
        (lambda Z, y: objective_perturbation(Z, y.astype(complex), 1.0), "y"),
        (lambda Z, y: objective_perturbation(Z, y, 1.0, loss=["logistic"]), "loss"),
        (lambda Z, y: objective_perturbation(Z, y, 1.0, lam=1e-320), "lam"),
        (lambda Z, y: objective_perturbation(Z, y, 1e-320), "epsilon"),
        (lambda Z, y: objective_perturbation(Z, y[:-1], 1.0), "y"),
        (lambda Z, y: functional_mechanism(Z, y, 1.0, ridge="junk"), "ridge"),
        (lambda Z, y: functional_mechanism(Z, y, 1.0, ridge=np.zeros(2)), "ridge"),
        (lambda Z, y: functional_mechanism(Z, np.full(40, 10**400), 1.0), "y"),
        (lambda Z, y: unit_features(np.zeros((2, 3)), np.zeros(2), np.ones(3)), "lower"),
        (lambda Z, y: unit_features(np.zeros((2, 3)), np.zeros(3), None), "upper"),
        (lambda Z, y: unit_features(np.zeros((2, 3)), np.full(3, -1e308), np.full(3, 1e308)), "upper"),
        (lambda Z, y: unit_features(np.array([1 + 1j, 2j]), np.zeros(3), np.ones(3)), "X"),
    ],
    ids=[
        "Z-str",
        "y-complex",
        "loss-list",
        "lam-tiny",
        "epsilon-tiny",
        "y-short",
        "ridge-str",
        "ridge-array",
        "y-huge-int",
        "lower-shape",
        "upper-none",
        "span-overflow",
        "X-complex",
    ],
)
def test_bad_input_is_refused_naming_the_argument(call, argument):
    """Each used to raise a raw TypeError, ValueError, ZeroDivisionError, OverflowError or UFuncTypeError, a
    ComplexWarning or a numpy RuntimeWarning (an epsilon of 1e-320 made the regulariser infinite)."""
    Z, y = _unit()
    refused(lambda: call(Z, y), argument)
