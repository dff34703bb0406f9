"""CSPRNG samplers, quantizer and MWEM: statistical tests, Rust against the numpy twin, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

import dpsumm
from dpsumm import reference

ALPHA = 1e-3  # significance of every statistical test in this file (fixed seeds: deterministic outcomes)


# ------------------------------------------------------------------ the CSPRNG


def test_seeded_streams_repeat_and_os_streams_differ():
    a, b = dpsumm.privacy.Csprng(5), dpsumm.privacy.Csprng(5)
    assert [a.integers(1000) for _ in range(20)] == [b.integers(1000) for _ in range(20)]
    assert a.is_seeded and not dpsumm.privacy.Csprng().is_seeded
    assert [dpsumm.privacy.Csprng().integers(2**62) for _ in range(2)] != [dpsumm.privacy.Csprng().integers(2**62) for _ in range(2)]
    # Derived streams: deterministic from a seeded parent, different per label.
    assert dpsumm.privacy.Csprng(1).derive("x").uniform() == dpsumm.privacy.Csprng(1).derive("x").uniform()
    assert dpsumm.privacy.Csprng(1).derive("x").uniform() != dpsumm.privacy.Csprng(1).derive("y").uniform()
    assert "NOT private" in repr(dpsumm.privacy.Csprng(1))


def test_discrete_laplace_pmf():
    rng = dpsumm.privacy.Csprng(7)
    scale = 2.5
    draws = np.array([rng.discrete_laplace(scale) for _ in range(40_000)])
    cells = np.arange(-8, 9)
    r = math.exp(-1 / scale)
    pmf = (1 - r) / (1 + r) * r ** np.abs(cells)
    tail = (1 - r) / (1 + r) * r**9 / (1 - r)
    observed = [np.sum(draws < -8)] + [np.sum(draws == c) for c in cells] + [np.sum(draws > 8)]
    expected = np.concatenate([[tail], pmf, [tail]]) * len(draws)
    assert stats.chisquare(observed, expected).pvalue > ALPHA


def test_laplace_on_grid_matches_the_continuous_law():
    rng = dpsumm.privacy.Csprng(8)
    g = 2.0**-10
    draws = np.array([rng.laplace(1.0, 0.5, g) for _ in range(20_000)])
    assert np.all(np.round(draws / g) == draws / g)
    # KS against Laplace(1, 0.5): the grid (2^-10) is far below the KS resolution at this n.
    assert stats.kstest(draws, stats.laplace(loc=1.0, scale=0.5).cdf).pvalue > ALPHA


def test_bernoulli_exp_frequencies():
    rng = dpsumm.privacy.Csprng(9)
    for x in (0.0, 0.3, 1.0, 3.0):
        hits = sum(rng.bernoulli_exp(x) for _ in range(20_000))
        assert stats.binomtest(hits, 20_000, math.exp(-x)).pvalue > ALPHA or x == 0.0
    assert rng.bernoulli_exp(0.0) is True
    assert rng.bernoulli_exp(1e9) is False


def test_exponential_mechanism_matches_the_twin_probabilities():
    rng = dpsumm.privacy.Csprng(10)
    scores = np.array([0.0, 3.0, 1.0, -2.0, 2.5, 3.0])
    p = reference.exponential_mechanism_probabilities(scores, 0.8, 1.0)
    counts = np.bincount([rng.exponential_mechanism(scores.tolist(), 0.8, 1.0) for _ in range(30_000)], minlength=6)
    assert stats.chisquare(counts, p * counts.sum()).pvalue > ALPHA


@pytest.mark.parametrize(
    "call,arg",
    [
        (lambda r: r.bernoulli_exp(-1.0), "x"),
        (lambda r: r.bernoulli_exp(float("nan")), "x"),
        (lambda r: r.discrete_laplace(0.0), "scale"),
        (lambda r: r.laplace(1.0, -1.0), "scale"),
        (lambda r: r.laplace(float("inf"), 1.0), "value"),
        (lambda r: r.laplace(1.0, 1.0, 0.0), "granularity"),
        (lambda r: r.exponential_mechanism([], 1.0, 1.0), "scores"),
        (lambda r: r.exponential_mechanism([1.0, float("nan")], 1.0, 1.0), "scores"),
        (lambda r: r.exponential_mechanism([1.0], 0.0, 1.0), "epsilon"),
        (lambda r: r.exponential_mechanism([1.0], 1.0, 0.0), "sensitivity"),
        (lambda r: r.integers(0), "n"),
    ],
)
def test_sampler_bad_input(call, arg):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        call(dpsumm.privacy.Csprng(1))
    assert e.value.argument == arg


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, "x", True])
def test_csprng_bad_seed(seed):
    with pytest.raises(dpsumm.InvalidParameterError):
        dpsumm.privacy.Csprng(seed)


# ------------------------------------------------------------------ quantizer


def test_quantizer_is_unbiased_and_matches_the_twin_in_distribution():
    x = np.linspace(-1, 1, 13)
    values = np.tile(x, (20_000, 1))
    got = dpsumm.privacy.stochastic_round(values, 0.25, dpsumm.privacy.Csprng(11))
    twin = reference.stochastic_round(values, 0.25, np.random.default_rng(11))
    for j in range(len(x)):
        lo = -1 + np.minimum(np.floor((x[j] + 1) / 0.25), 7) * 0.25
        assert set(np.unique(got[:, j])) <= {lo, lo + 0.25}
        # Each column is lo + 0.25 * Binomial(n, p): compare Rust and twin by a two-sample chi-square.
        up_rust, up_twin = int((got[:, j] > lo).sum()), int((twin[:, j] > lo).sum())
        if 0 < up_rust + up_twin < 40_000:
            table = [[up_rust, 20_000 - up_rust], [up_twin, 20_000 - up_twin]]
            assert stats.chi2_contingency(table).pvalue > ALPHA
        # Unbiased: the mean is x (5 sd of a mean of 20000 values with variance <= 1/64).
        assert abs(got[:, j].mean() - x[j]) < 5 * 0.125 / math.sqrt(20_000)


def test_column_sums_are_on_the_lattice():
    rng = np.random.default_rng(0)
    values = rng.uniform(-1, 1, size=(3001, 7)).astype(np.float32)
    sums = dpsumm.privacy.quantize_column_sums(values, 1 / 140, dpsumm.privacy.Csprng(3))
    k = (sums + 3001) * 140
    np.testing.assert_allclose(k, np.round(k), atol=1e-6)
    assert np.abs(sums - values.sum(0)).max() < 5 * math.sqrt(3001) / 280
    # Same seed, same sums (independent of thread count by construction).
    assert np.array_equal(sums, dpsumm.privacy.quantize_column_sums(values, 1 / 140, dpsumm.privacy.Csprng(3)))


@given(eta=st.floats(min_value=1e-3, max_value=2.0).filter(lambda e: abs(2 / e - round(2 / e)) > 1e-6))
def test_quantizer_rejects_eta_without_integer_grid(eta):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.privacy.quantize_column_sums(np.zeros((2, 2), np.float32), eta, dpsumm.privacy.Csprng(1))
    assert e.value.argument == "eta"


@pytest.mark.parametrize(
    "values",
    [np.full((2, 2), 1.5), np.full((2, 2), np.nan), np.zeros(3), np.array([["a"]]), np.full((2, 2), -np.inf)],
    ids=["range", "nan", "1d", "str", "inf"],
)
def test_quantizer_bad_values(values):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.privacy.quantize_column_sums(values, 0.5, dpsumm.privacy.Csprng(1))
    assert e.value.argument == "values"


def test_quantizer_accepts_fortran_order():
    v = np.asfortranarray(np.random.default_rng(1).uniform(-1, 1, (50, 3)))
    assert dpsumm.privacy.quantize_column_sums(v, 0.5, dpsumm.privacy.Csprng(1)).shape == (3,)


# ------------------------------------------------------------------ MWEM


def test_mwem_noiseless_path_equals_the_numpy_twin():
    rng = np.random.default_rng(2)
    d, q = 12, 300
    sums = rng.uniform(-0.6, 0.6, d) * q
    rust = dpsumm.privacy.ProductMWEM(d, 0.1, random_state=0)
    twin = reference.ProductMWEM(d, 0.1)
    for steps in (1, 7, 40):  # warm start: the state carries over between calls in both
        np.testing.assert_allclose(rust._release_noiseless(sums, q, steps), twin.release(sums, q, steps, noise=False), atol=1e-12)
        np.testing.assert_allclose(rust.marginals_, twin.marginals_, atol=1e-12)
    assert rust.steps_taken_ == 48


def test_mwem_private_release_matches_the_twin_in_distribution():
    """Both estimate the same mean; their errors are alike (two-sample KS on per-coordinate errors)."""
    d, q = 8, 500
    truth = np.linspace(-0.5, 0.5, d)
    sums = truth * q
    errs_rust, errs_twin = [], []
    gen = np.random.default_rng(3)
    for rep in range(60):
        r = dpsumm.privacy.ProductMWEM(d, 0.1, random_state=rep).release(sums, q, 60, 0.5)
        t = reference.ProductMWEM(d, 0.1, random_state=gen).release(sums, q, 60, 0.5)
        errs_rust.extend(r - truth)
        errs_twin.extend(t - truth)
    assert stats.ks_2samp(errs_rust, errs_twin).pvalue > ALPHA


def test_mwem_error_shrinks_with_steps_and_warm_start_helps():
    d, q = 16, 1000
    truth = np.sin(np.arange(d))
    sums = 0.8 * truth * q
    m = dpsumm.privacy.ProductMWEM(d, 1 / 16, random_state=4)
    e1 = np.abs(m.release(sums, q, 30, 1.0) - 0.8 * truth).max()
    e2 = np.abs(m.release(sums, q, 600, 1.0) - 0.8 * truth).max()
    assert e2 < e1 and e2 < 0.1


@pytest.mark.parametrize(
    "kwargs,arg",
    [
        (dict(dim=0, eta=0.5), "dim"),
        (dict(dim=3, eta=0.7), "eta"),
        (dict(dim=3, eta=0.5, neighbour="swap"), "neighbour"),
        (dict(dim=3, eta=0.5, random_state="seed"), "random_state"),
    ],
)
def test_mwem_bad_construction(kwargs, arg):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.privacy.ProductMWEM(**kwargs)
    assert e.value.argument == arg


@pytest.mark.parametrize(
    "args,arg",
    [
        ((np.zeros(2), 5, 1, 1.0), "column_sums"),
        ((np.array([0, np.nan, 0]), 5, 1, 1.0), "column_sums"),
        ((np.zeros(3), 0, 1, 1.0), "n_rows"),
        ((np.array([9.0, 0, 0]), 5, 1, 1.0), "column_sums"),
        ((np.zeros(3), 5, 0, 1.0), "steps"),
        ((np.zeros(3), 5, 1, 0.0), "epsilon"),
        ((np.zeros(3), 5, 1, float("inf")), "epsilon"),
    ],
)
def test_mwem_bad_release(args, arg):
    m = dpsumm.privacy.ProductMWEM(3, 0.5, neighbour="add-remove", random_state=1)
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        m.release(*args)
    assert e.value.argument == arg
    assert m.steps_taken_ == 0
