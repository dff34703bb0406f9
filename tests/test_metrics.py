"""dpsumm.metrics: MMD², the objective J (Eq. 3), the MMD² increase, accuracy helpers."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpsumm
from dpsumm import metrics
from refusal import refused

RNG = np.random.default_rng(7)


VALIDATION = RNG.uniform(size=(20, 3))


Y = RNG.integers(0, 2, size=20)


@pytest.mark.parametrize(
    "call,argument",
    [
        (lambda: metrics.svm_accuracy(VALIDATION, Y, VALIDATION, Y, C=1e300), "C"),  # liblinear looped without end
        (lambda: metrics.svm_accuracy(VALIDATION, Y, VALIDATION, Y, C=1e-300), "C"),
        (lambda: metrics.svm_accuracy(VALIDATION * 1e100, Y, VALIDATION, Y), "X"),
        (lambda: metrics.mlp_accuracy(VALIDATION, Y, VALIDATION, Y, hidden=2**70), "hidden"),
        (lambda: metrics.mlp_accuracy(VALIDATION, Y, VALIDATION, Y, alpha=1e200), "alpha"),
        (lambda: metrics.svm_accuracy(VALIDATION, Y + 0.5, VALIDATION, Y), "y"),  # sklearn: "Unknown label type"
        (lambda: metrics.mlp_accuracy(VALIDATION, Y * 1e300, VALIDATION, Y), "y"),
        (lambda: metrics.mlp_accuracy(VALIDATION * 1e300, Y, VALIDATION, Y, hidden=4, max_iter=5), "X"),  # overflow
        (lambda: metrics.svm_accuracy(VALIDATION, Y, VALIDATION * 1e200, Y), "X_test"),
        (
            lambda: metrics.accuracy(
                __import__("sklearn.linear_model").linear_model.LogisticRegression(),
                VALIDATION,
                Y.astype(str),
                VALIDATION,
                Y,
            ),
            "y_test",
        ),  # was accuracy 0.0
    ],
)
def test_classifier_helpers_refuse_what_scikit_learn_cannot_fit(call, argument):
    refused(call, argument)


def test_float_labels_with_integer_values_are_classes():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # float16 labels: no overflow comparing with 2**53
        for y in (Y.astype(float), Y.astype(np.float16)):
            assert 0.0 <= metrics.svm_accuracy(VALIDATION, y, VALIDATION, Y) <= 1.0


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
    for alg, greedy, arg in [
        (1.0, 0.0, "greedy"),
        (float("nan"), 1.0, "alg"),
        (-1.0, 1.0, "alg"),
        (1.0, float("inf"), "greedy"),
    ]:
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


def population_reference(S, T, g):
    """Pure numpy (float64) MMD²_pop = mean k(S,S) - 2 mean k(S,T) + mean_{i != j} k(T,T)."""
    KT = rbf(T, T, g)
    n = len(T)
    return rbf(S, S, g).mean() - 2 * rbf(S, T, g).mean() + (KT.sum() - np.trace(KT)) / (n * (n - 1))


def test_population_mmd2_by_hand():
    # S = {0}, T = {1, 2} on the line: 1 - 2 (e^-g + e^-4g) / 2 + e^-g = 1 - e^-4g.
    g = 0.3
    S, T = np.array([[0.0]]), np.array([[1.0], [2.0]])
    assert metrics.population_mmd2(S, T, g) == pytest.approx(1 - math.exp(-4 * g), rel=1e-6)
    # S = {0}, T = {0, 1}: 1 - (1 + e^-g) + e^-g = 0 (the biased MMD² to T is (1 - e^-g) / 2 > 0).
    assert metrics.population_mmd2(S, np.array([[0.0], [1.0]]), g) == pytest.approx(0.0, abs=1e-7)
    assert metrics.mmd2(S, np.array([[0.0], [1.0]]), g) == pytest.approx((1 - math.exp(-g)) / 2, rel=1e-6)
    # The held-out term alone: T = {1, 2} has one pair, at distance 1.
    assert metrics.offdiagonal_kernel_mean(T, g) == pytest.approx(math.exp(-g), rel=1e-6)


@pytest.mark.parametrize("block", [3, 2048])
def test_population_mmd2_equals_the_numpy_reference(monkeypatch, block):
    # block = 3: 40 held-out rows in 14 blocks (the last one short), only the blocks on or above the diagonal summed.
    monkeypatch.setattr(metrics, "_HELD_OUT_BLOCK", block)
    rng = np.random.default_rng(3)
    S, T = rng.normal(size=(9, 4)), rng.normal(0.5, 1.2, size=(40, 4))
    for g in (0.05, 0.4):
        ref = population_reference(S, T, g)
        assert metrics.population_mmd2(S, T, g) == pytest.approx(ref, rel=1e-5)
        KT = rbf(T, T, g)
        assert metrics.offdiagonal_kernel_mean(T, g) == pytest.approx((KT.sum() - 40) / (40 * 39), rel=1e-6)


def test_population_mmd2_is_the_biased_mmd2_with_the_held_out_diagonal_dropped():
    rng = np.random.default_rng(4)
    S, T = rng.normal(1.0, 1.0, size=(12, 3)), rng.normal(size=(30, 3))
    g = 0.2
    correction = metrics.offdiagonal_kernel_mean(T, g) - rbf(T, T, g).mean()
    assert correction < 0  # the diagonal's ones raise the biased mean: dropping them lowers every value alike
    assert metrics.population_mmd2(S, T, g) == pytest.approx(metrics.mmd2(S, T, g) + correction, rel=1e-5)


def test_population_mmd2_of_the_held_out_rows_themselves():
    # S = T: MMD²(T, T) = 0, so the value is mean_{i != j} - mean_{i, j} = -(1 - mean_{i != j} k) / n.
    rng = np.random.default_rng(5)
    T = rng.normal(size=(25, 3))
    g = 0.3
    off = metrics.offdiagonal_kernel_mean(T, g)
    assert metrics.population_mmd2(T, T, g) == pytest.approx(-(1 - off) / 25, rel=1e-5)


def test_population_mmd2_invariances_and_cached_term():
    rng = np.random.default_rng(6)
    S, T = rng.normal(size=(8, 5)), rng.normal(0.3, 1.0, size=(33, 5))
    g = 0.15
    value = metrics.population_mmd2(S, T, g)
    # Row order of either set, a common translation, a common rotation: the kernel sees only distances.
    Q, _ = np.linalg.qr(rng.normal(size=(5, 5)))
    shift = rng.normal(size=5)
    assert metrics.population_mmd2(S[::-1], T[rng.permutation(33)], g) == pytest.approx(value, rel=1e-5)
    assert metrics.population_mmd2(S + shift, T + shift, g) == pytest.approx(value, rel=1e-4)
    assert metrics.population_mmd2(S @ Q, T @ Q, g) == pytest.approx(value, rel=1e-4)
    # The held-out term computed once and passed: the same value.
    term = metrics.offdiagonal_kernel_mean(T, g)
    assert metrics.population_mmd2(S, T, g, held_out_term=term) == pytest.approx(value, rel=1e-12)
    # A summary nearer the held-out rows' distribution scores lower.
    near = rng.normal(0.3, 1.0, size=(8, 5))
    far = rng.normal(3.0, 1.0, size=(8, 5))
    assert metrics.population_mmd2(near, T, g) < metrics.population_mmd2(far, T, g)


@pytest.mark.parametrize("magnitude", [1e6, 1e10, 1e20, 1e30])
def test_population_mmd2_keeps_its_value_at_any_magnitude(magnitude):
    """The kernel sees only ``gamma ||x - y||^2``: rows far from the origin (a shift) or of a large scale (with the
    width scaled to match) give the value of the same rows near it, not 0 from float32 cancellation or overflow."""
    rng = np.random.default_rng(11)
    S, T = rng.normal(size=(5, 3)), rng.normal(0.2, 1.0, size=(12, 3))
    g = 0.3
    ref = population_reference(S, T, g)
    assert metrics.population_mmd2(S * magnitude, T * magnitude, g / magnitude**2) == pytest.approx(ref, rel=1e-5)
    if magnitude <= 1e10:  # float64 rows 1e10 from the origin still hold their offsets to 1e-6
        assert metrics.population_mmd2(S + magnitude, T + magnitude, g) == pytest.approx(ref, rel=1e-4, abs=1e-6)
    assert metrics.objective(S * magnitude, T * magnitude, g / magnitude**2) == pytest.approx(
        metrics.objective(S, T, g), rel=1e-5
    )
    assert metrics.validation_fit(S * magnitude, T * magnitude, g / magnitude**2) == pytest.approx(
        metrics.validation_fit(S, T, g), rel=1e-5
    )
    # Distinct rows far apart at the kernel's own scale: S = {a, b} against T = {a, b, c}, every distinct pair at
    # kernel 0 exactly: 2/4 - 2 * 2/6 + 0 = -1/6.
    big = np.array([[1.0], [2.0], [3.0]]) * magnitude
    assert metrics.population_mmd2(big[:2], big, 1.0) == pytest.approx(-1 / 6, rel=1e-12)
    assert metrics.offdiagonal_kernel_mean(big, 1.0) == 0.0


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        (dict(held_out=np.zeros((1, 2))), "held_out"),
        (dict(held_out=np.zeros((4, 3))), "held_out"),
        (dict(held_out=np.array([[0.0, np.nan], [1.0, 1.0]])), "held_out"),
        (dict(summary=np.zeros((0, 2))), "summary"),
        (dict(summary=np.full((2, 2), 1e300)), "summary"),
        (dict(gamma=0.0), "gamma"),
        (dict(gamma=float("inf")), "gamma"),
        (dict(held_out_term=1.5), "held_out_term"),
        (dict(held_out_term=float("nan")), "held_out_term"),
        (dict(held_out_term=True), "held_out_term"),
    ],
)
def test_population_mmd2_refuses_bad_input(kwargs, argument):
    args = dict(summary=np.zeros((3, 2)), held_out=np.ones((4, 2)), gamma=0.5) | kwargs
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        metrics.population_mmd2(**args)
    assert e.value.argument == argument
    if argument == "held_out" and args["held_out"].shape[1] == 2:  # bad on its own, not only against the summary
        with pytest.raises(dpsumm.InvalidParameterError) as e:
            metrics.offdiagonal_kernel_mean(args["held_out"], 0.5)
        assert e.value.argument == "rows"


@given(st.integers(1, 6), st.integers(2, 9), st.floats(0.01, 3.0), st.integers(0, 2**32 - 1))
def test_population_mmd2_matches_the_reference_on_random_sets(p, n, g, seed):
    rng = np.random.default_rng(seed)
    S, T = rng.normal(size=(p, 2)), rng.normal(size=(n, 2))
    assert metrics.population_mmd2(S, T, g) == pytest.approx(population_reference(S, T, g), rel=1e-4, abs=1e-6)


def test_validation_fit_by_hand():
    V = np.array([[0.0], [1.0]])
    assert metrics.validation_fit(V, V, 1.0) == 0.0
    far = 1 - (math.exp(-9) + math.exp(-4)) + (1 + math.exp(-1)) / 2  # MMD²({3}, V), gamma = 1
    assert metrics.validation_fit(np.array([[3.0]]), V, 1.0) == pytest.approx(far / (1.5 * (1 - math.exp(-1))))
    assert metrics.validation_fit(np.array([[3.0]]), np.zeros((4, 1)), 1.0) == math.inf  # no spread in D_v
    assert metrics.validation_fit(np.zeros((2, 1)), np.zeros((4, 1)), 1.0) == 0.0


def test_validation_fit_of_independent_samples_of_one_distribution_is_one_on_average():
    """Its denominator is E MMD²(S, V) for S, V drawn from one distribution: over 400 pairs of samples the mean is 1
    within 4 standard errors (a false alarm below 1e-4), and a shifted sample is far above it."""
    rng = np.random.default_rng(2026)
    fits = [metrics.validation_fit(rng.normal(size=(10, 2)), rng.normal(size=(30, 2)), 0.5) for _ in range(400)]
    assert abs(np.mean(fits) - 1.0) < 4 * np.std(fits) / math.sqrt(len(fits))
    shifted = [metrics.validation_fit(rng.normal(size=(10, 2)) + 2.0, rng.normal(size=(30, 2)), 0.5) for _ in range(20)]
    assert min(shifted) > 3.0


def test_validation_fit_reads_at_most_fit_max_rows_of_d_v(monkeypatch):
    rng = np.random.default_rng(1)
    V, S = rng.normal(size=(50, 2)), rng.normal(size=(5, 2))
    monkeypatch.setattr(metrics, "FIT_MAX_ROWS", 10)
    kept = V[np.linspace(0, 49, 10).round().astype(np.int64)]
    assert metrics.validation_fit(S, V, 0.3) == metrics.validation_fit(S, kept, 0.3)


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        (dict(validation=np.zeros((1, 2))), "validation"),
        (dict(validation=np.zeros((4, 3))), "validation"),
        (dict(summary=np.zeros((0, 2))), "summary"),
        (dict(summary=np.array([[np.inf, 0.0]])), "summary"),
        (dict(gamma=-1.0), "gamma"),
    ],
)
def test_validation_fit_refuses_bad_input(kwargs, argument):
    args = dict(summary=np.zeros((3, 2)), validation=np.ones((4, 2)), gamma=0.5) | kwargs
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        metrics.validation_fit(**args)
    assert e.value.argument == argument


def test_the_fit_warning_points_to_the_default_purchase():
    """Below 1 no warning; a purchase by cells is told its labels or strata may be the cause, another method is
    pointed to the default (dpsumm.Nominations(), ByDirection()), and the default itself to nothing else."""

    def warning(fit: float, method: object) -> str | None:
        return metrics.validation_fit_warning(fit, 20, method.fit_advice())  # type: ignore[attr-defined]

    assert warning(0.99, dpsumm.Nominations()) is None
    labels = warning(1.2, dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=(0, 1))))
    assert labels is not None and "labels or strata" in labels and "1.20 >= 1" in labels
    strata = warning(1.2, dpsumm.Nominations(purchase=dpsumm.ByDirection(levels=[("a", "b")])))
    assert strata is not None and "labels or strata" in strata
    other = warning(1.2, dpsumm.Nominations(purchase=dpsumm.Nominees()))
    assert other is not None and "try the default, dpsumm.Nominations()" in other
    assert "try the default" in (warning(1.0, dpsumm.PaperProtocol()) or "")
    default = warning(1.2, dpsumm.Nominations())
    assert default is not None and "try the default" not in default and "labels or strata" not in default


@pytest.mark.parametrize(
    "args, argument",
    [
        (("x", 5, "advice"), "fit"),
        ((10**400, 5, "advice"), "fit"),
        ((1.5, 2.5, "advice"), "size"),
        ((1.5, -1, "advice"), "size"),
        ((1.5, 5, 5), "advice"),
    ],
)
def test_validation_fit_warning_refuses_bad_arguments(args, argument):
    # Was: a TypeError ("x" >= 1.0), an OverflowError (10**400) or a warning text built from junk.
    refused(lambda: metrics.validation_fit_warning(*args), argument)
    assert metrics.validation_fit_warning(float("nan"), 5, "advice") is None  # no measure: no warning, as before
