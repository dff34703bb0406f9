"""dpsumm.metrics: MMD², the objective J (Eq. 3), the MMD² increase, accuracy helpers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpsumm
from dpsumm import metrics


def rbf(A, B, g):
    d2 = ((A[:, None, :].astype(float) - B[None, :, :].astype(float)) ** 2).sum(-1)
    return np.exp(-g * d2)


def test_mmd2_by_hand_two_points():
    # One point each, distance 1: MMD² = k(a,a) + k(b,b) - 2 k(a,b) = 2 - 2 e^{-gamma}.
    a, b = np.array([[0.0, 0.0]]), np.array([[1.0, 0.0]])
    assert metrics.mmd2(a, b, 0.5) == pytest.approx(2 - 2 * math.exp(-0.5), rel=1e-6)
    assert metrics.mmd2(a, a, 0.5) == pytest.approx(0.0, abs=1e-7)


def test_objective_is_eq3_and_equals_mean_kvv_minus_mmd2():
    rng = np.random.default_rng(0)
    S, V = rng.normal(size=(7, 3)), rng.normal(size=(5, 3))
    g = 0.4
    eq3 = 2 * rbf(V, S, g).sum() / (5 * 7) - rbf(S, S, g).sum() / 49
    assert metrics.objective(S, V, g) == pytest.approx(eq3, rel=1e-6)
    assert metrics.objective(S, V, g) == pytest.approx(rbf(V, V, g).mean() - metrics.mmd2(S, V, g), rel=1e-6)


def test_greedy_increases_the_objective_more_than_uniform():
    s = dpsumm.datasets.covariate_shift(rows_per_owner=300, random_state=0)
    kw = dict(seed_set=s.seed_set, gamma=0.1, random_state=0, progress=False)
    g = dpsumm.summarize(s.owners, s.validation, 30, method="exact-greedy", **kw)
    u = dpsumm.summarize(s.owners, s.validation, 30, method="uniform", **kw)
    assert metrics.objective(g.points, s.validation, 0.1) > metrics.objective(u.points, s.validation, 0.1)


def test_mmd_increase_pct():
    assert metrics.mmd_increase_pct(1.1, 1.0) == pytest.approx(10.0)
    assert metrics.mmd_increase_pct(0.5, 1.0) == pytest.approx(-50.0)
    for alg, greedy, arg in [(1.0, 0.0, "greedy"), (float("nan"), 1.0, "alg"), (-1.0, 1.0, "alg"), (1.0, float("inf"), "greedy")]:
        with pytest.raises(dpsumm.InvalidParameterError) as e:
            metrics.mmd_increase_pct(alg, greedy)
        assert e.value.argument == arg


@given(st.floats(allow_nan=True, allow_infinity=True), st.floats(allow_nan=True, allow_infinity=True))
def test_mmd_increase_pct_never_returns_garbage(alg, greedy):
    try:
        out = metrics.mmd_increase_pct(alg, greedy)
    except dpsumm.InvalidParameterError:
        return
    assert math.isfinite(out) and out >= -100.0


def test_accuracy_helpers_learn_a_separable_problem():
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(-2, 1, size=(60, 4)), rng.normal(2, 1, size=(60, 4))])
    y = np.repeat([3, 4], 60)
    Xt = np.vstack([rng.normal(-2, 1, size=(100, 4)), rng.normal(2, 1, size=(100, 4))])
    yt = np.repeat([3, 4], 100)
    assert metrics.svm_accuracy(X, y, Xt, yt) > 0.95
    assert metrics.mlp_accuracy(X, y, Xt, yt) > 0.95
    # One class in the training labels: predicts it.
    assert metrics.mlp_accuracy(X[:60], y[:60], Xt, yt) == pytest.approx(0.5)
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        metrics.svm_accuracy(X, y[:-1], Xt, yt)
    assert e.value.argument == "y"
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        metrics.mlp_accuracy(X, y, Xt[:, :3], yt)
    assert e.value.argument == "X_test"
