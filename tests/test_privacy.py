"""dpsumm.privacy: the CSPRNG and its samplers (discrete Laplace and Gaussian, exponential mechanism), the
quantizer, MWEM and the Gaussian mean release: statistical tests, the numpy twin, fork, bad input.
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

import dpsumm
from dpsumm import (
    InvalidParameterError,
    privacy,
    reference,
)
from dpsumm import accounting as acc
from refusal import refused

RNG = np.random.default_rng(7)


U = RNG.uniform(-1, 1, size=(10, 4))


def test_eta_whose_grid_overflows_is_refused():
    # 2 / 5e-324 is infinite: round() raised OverflowError.
    refused(lambda: dpsumm.privacy.stochastic_round(U, 5e-324, dpsumm.privacy.Csprng(0)), "eta")
    refused(lambda: dpsumm.privacy.ProductMWEM(4, 5e-324), "eta")


def test_complex_scores_are_refused_not_truncated_with_a_warning():
    # Was: a ComplexWarning, the imaginary parts dropped, an index returned.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(InvalidParameterError) as info:
            dpsumm.privacy.Csprng(0).exponential_mechanism(np.array([0.0, 1.0 + 5j, 2.0]), 1.0, 1.0)
    assert info.value.argument == "scores" and not caught


def test_csprng_gaussian_on_grid_takes_any_real_sequence():
    rng = dpsumm.privacy.Csprng(0)
    for values in ([0.0, 1.0, 2.0], np.zeros(3, np.float32), np.arange(3), (0, 1, 2)):
        out = rng.gaussian_on_grid(values, 1.0, 0.1)
        assert out.shape == (3,) and np.isfinite(out).all()


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(
        dtype=st.one_of(hnp.scalar_dtypes(), hnp.byte_string_dtypes(), hnp.unicode_string_dtypes()), shape=st.just((4,))
    )
)
def test_a_vector_of_any_dtype_is_used_or_refused_naming_it(values):
    """ProductMWEM.release and gaussian_on_grid: real numbers of any width are used; anything else (bools, complex,
    strings, datetimes) is refused naming the argument. No warning either way."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # (call, argument, largest |value| it takes: column sums of 10 rows in [-1, 1]; the lattice's integer range)
        for call, argument, bound in (
            (
                lambda: dpsumm.privacy.ProductMWEM(4, 0.5, random_state=0).release(values, 10, 2, 0.5),
                "column_sums",
                10.0,
            ),
            (lambda: dpsumm.privacy.gaussian_on_grid(values, 1.0, 0.5, dpsumm.privacy.Csprng(0)), "values", 2.0**50),
        ):  # |value / granularity| below 2**52
            real = values.dtype.kind in "fiu"
            try:
                with np.errstate(over="ignore"):
                    finite = bool(np.isfinite(values.astype(np.float64)).all()) if real else False
                out = call()
            except InvalidParameterError as exc:
                assert exc.argument == argument, (values.dtype, exc.argument, str(exc))
                assert not real or not finite or np.abs(values.astype(np.float64)).max() > bound
            else:
                assert real and finite and out.shape == (4,) and np.isfinite(out).all()


def test_gaussian_mean_release_names_mean_not_values():
    cal = acc.calibrate_gaussian(1.0, 1e-6, sensitivity=0.1, dim=3)
    refused(lambda: dpsumm.privacy.gaussian_mean_release(np.full(3, 1e300), cal, dpsumm.privacy.Csprng(0)), "mean")


ALPHA = 1e-3  # significance of every statistical test here (fixed seeds: deterministic outcomes)


def test_discrete_gaussian_pmf_through_the_binding():
    rng = dpsumm.privacy.Csprng(31)
    sigma = 2.0
    draws = np.array([privacy.discrete_gaussian(sigma, rng) for _ in range(30_000)])
    cells = np.arange(-6, 7)
    support = np.arange(-200, 201)
    w = np.exp(-(support**2) / (2 * sigma**2))
    pmf = w / w.sum()
    inside = pmf[(support >= -6) & (support <= 6)]
    tail = (1 - inside.sum()) / 2
    observed = [np.sum(draws < -6)] + [np.sum(draws == c) for c in cells] + [np.sum(draws > 6)]
    expected = np.concatenate([[tail], inside, [tail]]) * len(draws)
    assert stats.chisquare(observed, expected).pvalue > ALPHA


def test_gaussian_on_grid_is_on_the_grid_with_the_stated_variance():
    rng = dpsumm.privacy.Csprng(32)
    g = 2.0**-12
    values = np.linspace(-1, 1, 20_000)
    out = privacy.gaussian_on_grid(values, 0.3, g, rng)
    assert out.shape == values.shape and out.dtype == np.float64
    assert np.array_equal(np.round(out / g), out / g)
    noise = out - np.round(values / g) * g  # exactly g * N_Z(0, (0.3/g)^2)
    # Two-sided z-test of the mean and chi-square test of the variance (n - 1 dof), alpha each.
    n = len(noise)
    assert abs(noise.mean()) / (0.3 / math.sqrt(n)) < stats.norm.ppf(1 - ALPHA / 2)
    chi = (noise**2).sum() / 0.3**2
    assert stats.chi2.ppf(ALPHA / 2, n) < chi < stats.chi2.ppf(1 - ALPHA / 2, n)


@settings(max_examples=25, deadline=None)
@given(
    sigma=st.one_of(
        st.floats(allow_nan=True, allow_infinity=True).filter(lambda x: not (x > 0 and math.isfinite(x))), st.just(1e12)
    ),
)
def test_bad_sigma_is_a_typed_error_naming_it(sigma):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        privacy.gaussian_on_grid(np.zeros(3), sigma, 2.0**-10, dpsumm.privacy.Csprng(1))
    assert e.value.argument == "sigma"


@pytest.mark.parametrize(
    "values,granularity,arg",
    [
        (np.array([0.0, np.nan]), 2.0**-10, "values"),
        (np.array([np.inf]), 2.0**-10, "values"),
        (np.zeros((2, 2)), 2.0**-10, "values"),
        (np.zeros(2), 0.0, "granularity"),
        (np.zeros(2), -1.0, "granularity"),
        (np.array([1e300]), 2.0**-10, "values"),
    ],
)
def test_bad_values_and_grid_are_typed_errors(values, granularity, arg):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        privacy.gaussian_on_grid(values, 1.0, granularity, dpsumm.privacy.Csprng(1))
    assert e.value.argument == arg


def test_gaussian_mean_release_is_unbiased_on_its_lattice():
    d, m = 64, 500
    cal = acc.calibrate_gaussian(1.0, 1e-6, sensitivity=2 * math.sqrt(2) / m, dim=d)
    mean = np.random.default_rng(0).uniform(-math.sqrt(2 / d), math.sqrt(2 / d), size=d) / 3
    rng = dpsumm.privacy.Csprng(33)
    reps = np.array([privacy.gaussian_mean_release(mean, cal, rng) for _ in range(300)])
    g = cal.granularity
    assert np.array_equal(np.round(reps / g), reps / g)
    # Per coordinate: mean of 300 releases vs the rounded mean, z-test; all d at once via chi-square.
    z = (reps.mean(axis=0) - np.round(mean / g) * g) / (cal.sigma / math.sqrt(300))
    assert stats.chi2.sf((z**2).sum(), d) > ALPHA
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        privacy.gaussian_mean_release(mean[:-1], cal, rng)
    assert e.value.argument == "mean"
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        privacy.gaussian_mean_release(mean, cal, np.random.default_rng(0))  # type: ignore[arg-type]
    assert e.value.argument == "rng"


ALPHA_pk = 1e-3  # significance of every statistical test in this file (fixed seeds: deterministic outcomes)


def test_seeded_streams_repeat_and_os_streams_differ():
    a, b = dpsumm.privacy.Csprng(5), dpsumm.privacy.Csprng(5)
    assert [a.integers(1000) for _ in range(20)] == [b.integers(1000) for _ in range(20)]
    assert a.is_seeded and not dpsumm.privacy.Csprng().is_seeded
    assert [dpsumm.privacy.Csprng().integers(2**62) for _ in range(2)] != [
        dpsumm.privacy.Csprng().integers(2**62) for _ in range(2)
    ]
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
    assert stats.chisquare(observed, expected).pvalue > ALPHA_pk


def test_laplace_on_grid_matches_the_continuous_law():
    rng = dpsumm.privacy.Csprng(8)
    g = 2.0**-10
    draws = np.array([rng.laplace(1.0, 0.5, g) for _ in range(20_000)])
    assert np.all(np.round(draws / g) == draws / g)
    # KS against Laplace(1, 0.5): the grid (2^-10) is far below the KS resolution at this n.
    assert stats.kstest(draws, stats.laplace(loc=1.0, scale=0.5).cdf).pvalue > ALPHA_pk


def test_bernoulli_exp_frequencies():
    rng = dpsumm.privacy.Csprng(9)
    for x in (0.0, 0.3, 1.0, 3.0):
        hits = sum(rng.bernoulli_exp(x) for _ in range(20_000))
        assert stats.binomtest(hits, 20_000, math.exp(-x)).pvalue > ALPHA_pk or x == 0.0
    assert rng.bernoulli_exp(0.0) is True
    assert rng.bernoulli_exp(1e9) is False


def test_exponential_mechanism_matches_the_twin_probabilities():
    rng = dpsumm.privacy.Csprng(10)
    scores = np.array([0.0, 3.0, 1.0, -2.0, 2.5, 3.0])
    p = reference.exponential_mechanism_probabilities(scores, 0.8, 1.0)
    counts = np.bincount([rng.exponential_mechanism(scores.tolist(), 0.8, 1.0) for _ in range(30_000)], minlength=6)
    assert stats.chisquare(counts, p * counts.sum()).pvalue > ALPHA_pk


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
            assert stats.chi2_contingency(table).pvalue > ALPHA_pk
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


def test_mwem_noiseless_path_equals_the_numpy_twin():
    rng = np.random.default_rng(2)
    d, q = 12, 300
    sums = rng.uniform(-0.6, 0.6, d) * q
    rust = dpsumm.privacy.ProductMWEM(d, 0.1, random_state=0)
    twin = reference.ProductMWEM(d, 0.1)
    for steps in (1, 7, 40):  # warm start: the state carries over between calls in both
        np.testing.assert_allclose(
            rust._release_noiseless(sums, q, steps), twin.release(sums, q, steps, noise=False), atol=1e-12
        )
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
    assert stats.ks_2samp(errs_rust, errs_twin).pvalue > ALPHA_pk


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


FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


# Objects a confused caller might pass where a number is expected.
junk = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=3),
    st.lists(st.integers(), max_size=2),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**80), max_value=2**80),
)


def _typed(fn, argument, also=()):
    """Call ``fn``: it either returns or raises InvalidParameterError naming ``argument`` (or one of ``also``)."""
    try:
        return fn()
    except dpsumm.InvalidParameterError as exc:
        if exc.argument in also:
            return exc
        assert exc.argument == argument, (exc.argument, str(exc))
        assert f"`{argument}`" in str(exc) or argument in str(exc)
        return exc


@FAST
@given(x=junk)
def test_samplers_take_only_valid_numbers(x):
    c = dpsumm.privacy.Csprng(1)
    for name, fn in [
        ("n", lambda: c.integers(x)),
        ("n", lambda: c.uniform_array(x)),
        ("x", lambda: c.bernoulli_exp(x)),
        ("scale", lambda: c.discrete_laplace(x)),
        ("scale", lambda: c.laplace(0.0, x)),
        ("value", lambda: c.laplace(x, 1.0)),
        ("granularity", lambda: c.laplace(0.0, 1.0, x)),
        ("epsilon", lambda: c.exponential_mechanism([0.0, 1.0], x, 1.0)),
        ("scores", lambda: c.exponential_mechanism(x, 1.0, 1.0)),
        ("label", lambda: c.derive(x)),
        ("seed", lambda: dpsumm.privacy.Csprng(x)),
    ]:
        # A tiny granularity makes scale / granularity too large: either argument may be named.
        out = _typed(fn, name, also=("scale",) if name == "granularity" else ())
        if x is None and name in ("seed", "granularity"):
            continue  # Csprng(None) is the OS-keyed generator; granularity=None the default grid
        if isinstance(x, (bool, str, list, type(None))) and not (name == "label" and isinstance(x, str)):
            if name == "scores" and isinstance(x, list) and x:
                continue  # a list of ints is a valid score vector
            assert isinstance(out, dpsumm.InvalidParameterError), (name, x, out)
        if isinstance(x, float) and not np.isfinite(x) and name not in ("label", "seed", "scores"):
            assert isinstance(out, dpsumm.InvalidParameterError), (name, x, out)


def test_laplace_scale_in_user_units_and_large_values():
    c = dpsumm.privacy.Csprng(1)
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        c.laplace(0, -1)
    assert e.value.argument == "scale" and "got -1" in str(e.value) and "1048576" not in str(e.value)
    # 1e10 on the default 2^-20 grid: k = 1e10 * 2^20 > 2^53, still computed exactly as k + z.
    draws = np.array([c.laplace(1e10, 1) for _ in range(200)])
    assert np.all(np.abs(draws - 1e10) < 30)  # P(|Lap(1)| > 30) = e^-30 per draw
    assert len(np.unique(draws)) > 20


def _draw_after_fork(c):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: draw and report, never return into pytest
        try:
            os.write(w, np.asarray(c.uniform_array(4)).tobytes())
        finally:
            os._exit(0)
    os.close(w)
    child = np.frombuffer(os.read(r, 64), dtype=np.float64)
    os.close(r)
    os.waitpid(pid, 0)
    return np.asarray(c.uniform_array(4)), child


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_os_keyed_stream_is_rekeyed_after_fork():
    parent, child = _draw_after_fork(dpsumm.privacy.Csprng())
    assert child.shape == (4,)
    assert not np.array_equal(parent, child)  # equal with probability 2^-212
    derived = dpsumm.privacy.Csprng().derive("owner")
    parent, child = _draw_after_fork(derived)
    assert not np.array_equal(parent, child)
    # A seeded stream is reproducible by design: both sides draw the same numbers (and it is NOT private).
    parent, child = _draw_after_fork(dpsumm.privacy.Csprng(5))
    np.testing.assert_array_equal(parent, child)


@pytest.mark.parametrize("n_rows", [0, -3, 2.5, "10", None, 10**400, True], ids=repr)
def test_mean_release_sensitivity_refuses_a_row_count_that_is_not_one(n_rows):
    """Used to divide by it: a ZeroDivisionError, TypeError or OverflowError, or a negative sensitivity."""
    refused(lambda: privacy.mean_release_sensitivity(n_rows), "n_rows")


def test_quantize_column_sums_refuses_values_beyond_float32_without_a_warning():
    """A float64 value beyond float32 used to overflow in the cast (numpy's RuntimeWarning)."""
    refused(lambda: privacy.quantize_column_sums(np.full((2, 2), 1e300), 0.5, privacy.Csprng(0)), "values")
