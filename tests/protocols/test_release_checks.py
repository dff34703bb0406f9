"""dpsumm.protocols.release_checks (issue 43): an honest party's release passes at the stated false-alarm probability
(the tail constants checked by hand and against exact distributions, honest releases drawn by the library's own
mechanisms at their worst case); releases no honest party makes are refused (the issue's examples); bad arguments
are typed errors and a malformed release is a reason, never an exception."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpsumm
from dpsumm import accounting
from dpsumm.privacy import Csprng, gaussian_mean_release, laplace_count_release
from dpsumm.protocols.release_checks import (
    DEFAULT_FALSE_ALARM,
    check_consumer_counts,
    check_hash_sum,
    check_owner_label_counts,
    gaussian_tail_sigmas,
    hash_sum_norm_bound,
    laplace_sum_bound,
    laplace_tail_scales,
)

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def test_tail_constants_by_hand():
    assert gaussian_tail_sigmas(1e-9) == pytest.approx(math.sqrt(2 * math.log(1e9)))
    assert gaussian_tail_sigmas(1e-9, 21) == pytest.approx(math.sqrt(2 * math.log(21e9)))
    assert laplace_tail_scales(1e-6, 7) == pytest.approx(math.log(7e6))
    # 60 rows, 64 coordinates, no noise: exactly sqrt(2)·60
    assert hash_sum_norm_bound(60, 64, 0.0, 0.0, 1e-9) == pytest.approx(math.sqrt(2) * 60, rel=1e-4)
    assert hash_sum_norm_bound(60, 64, 0.0, 0.0, 1e-9) > math.sqrt(2) * 60
    t = math.log(1e9)
    assert hash_sum_norm_bound(0, 64, 2.0, 0.5, 1e-9) == pytest.approx(
        0.25 * 8 + 2 * math.sqrt(64 + 2 * math.sqrt(64 * t) + 2 * t)
    )


def _dlap_pmf(b: float, support: int) -> tuple[np.ndarray, np.ndarray]:
    k = np.arange(-support, support + 1)
    p = np.exp(-np.abs(k) / b)
    return k, p / p.sum()


@pytest.mark.parametrize("b", [0.5, 2.0, 20.0])
@pytest.mark.parametrize("cells", [1, 2, 5])
def test_the_laplace_sum_bound_holds_for_the_exact_distribution(b, cells):
    """P(sum of `cells` discrete Laplace noises >= bound), computed exactly by convolution, is at most the stated
    false alarm, and the bound is within a factor 3 of the exact (1 - alarm) quantile (not vacuous)."""
    alarm = 1e-6
    bound = laplace_sum_bound(b, cells, alarm)
    k, p = _dlap_pmf(b, int(60 * b) + 60)
    dist = p
    for _ in range(cells - 1):
        dist = np.convolve(dist, p)
    values = np.arange(len(dist)) + cells * k[0]
    assert dist[values >= bound].sum() <= alarm
    quantile = values[np.searchsorted(np.cumsum(dist), 1 - alarm)]
    assert quantile <= bound <= 3 * max(quantile, 1)


def test_the_issues_impossible_releases_are_refused():
    # an owner releasing 10^6 rows per label while its public row count is 60
    reason = check_owner_label_counts(np.full(10, 1e6), 60, sigma=3.0, granularity=0.01)
    assert reason is not None and "60 rows" in reason
    # a consumer histogram count of 1e300 for 30 validation rows
    reason = check_consumer_counts([1e300, 0.0, 3.0], 30, scale=2.0)
    assert reason is not None and "30 validation rows" in reason
    # a hash sum far beyond sqrt(2)·n
    reason = check_hash_sum(np.full(64, 100.0), 60, sigma=1.0)
    assert reason is not None and "norm" in reason
    # counts each plausible alone but too many together: 10 labels of 59 rows for 60 rows
    assert check_owner_label_counts(np.full(10, 59.0), 60, sigma=0.5) is not None
    assert check_owner_label_counts(np.full(10, 59.0), 60, sigma=0.5, false_alarm=0.5) is not None
    assert check_consumer_counts(np.full(10, 29.0), 30, scale=0.5) is not None
    # far negative counts
    assert check_owner_label_counts([-1e6, 3.0], 60, sigma=3.0) is not None
    assert check_consumer_counts([-1e6, 3.0], 30, scale=2.0) is not None


@pytest.mark.parametrize(
    "values", [[np.nan, 1.0], [np.inf], [], [[1.0, 2.0]], ["a", "b"], None, "12", object(), [1 + 2j], [True, False]]
)
def test_a_malformed_release_is_a_reason_never_an_exception(values):
    for check in (
        lambda v: check_owner_label_counts(v, 60, 1.0),
        lambda v: check_hash_sum(v, 60, 1.0),
        lambda v: check_consumer_counts(v, 30, 2.0),
    ):
        reason = check(values)
        if values == [True, False]:  # bools read as 1 and 0: an array of numbers
            continue
        assert isinstance(reason, str) and reason


def test_a_hash_sum_beyond_the_float_range_is_a_reason_without_an_overflow_warning():
    """A released hash sum of 1e300s used to overflow in its norm (a numpy RuntimeWarning) before it was refused."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        reason = check_hash_sum(np.full(64, 1e300), 60, sigma=1.0)
    assert reason is not None and "norm inf" in reason


def test_honest_releases_at_their_worst_case_pass_at_the_stated_false_alarm():
    """300 honest releases of each kind drawn by the library's own mechanisms, at the worst case the bounds allow
    (every row in one label or cell, a hash sum of norm exactly sqrt(2)·n): failures at a stated false alarm of
    0.2 are at most 85 of 300 (a binomial(300, 0.2) exceeds 85 with probability below 1e-4); at the default 1e-9,
    none."""
    rng = Csprng(43)
    n, labels, dim = 60, 5, 64
    cal_counts = accounting.calibrate_gaussian(1.0, 1e-6, sensitivity=math.sqrt(2), dim=labels)
    cal_sum = accounting.calibrate_gaussian(1.0, 1e-6, sensitivity=2 * math.sqrt(2), dim=dim)
    event = accounting.LaplaceEvent(1.0, 2.0, "replace-one", granularity=1.0)
    exact_counts = np.array([n, 0, 0, 0, 0], dtype=np.float64)
    exact_sum = np.full(dim, n * math.sqrt(2 / dim))
    failures = {"counts": [0, 0], "sum": [0, 0], "consumer": [0, 0]}
    for _ in range(300):
        counts = gaussian_mean_release(exact_counts, cal_counts, rng)
        total = gaussian_mean_release(exact_sum, cal_sum, rng)
        hist = laplace_count_release(exact_counts, event, rng)
        for i, alarm in enumerate((0.2, DEFAULT_FALSE_ALARM)):
            failures["counts"][i] += (
                check_owner_label_counts(counts, n, cal_counts.sigma, cal_counts.granularity, false_alarm=alarm)
                is not None
            )
            failures["sum"][i] += (
                check_hash_sum(total, n, cal_sum.sigma, cal_sum.granularity, false_alarm=alarm) is not None
            )
            failures["consumer"][i] += check_consumer_counts(hist, n, event.scale, false_alarm=alarm) is not None
    for kind, (loose, default) in failures.items():
        assert loose <= 85 and default == 0, (kind, loose, default)


def test_a_real_noise_free_hash_sum_passes():
    """The exact sum of real float32 h1 hashes (identical rows: the largest norm rows can reach together) passes with
    no noise at all: the float32 rounding stays inside the bound's slack."""
    hasher = dpsumm.RFFHasher(4, dim=64, gamma=0.5)
    for seed in range(20):
        rows = np.repeat(np.random.default_rng(seed).random((1, 4)), 5000, axis=0)
        total = hasher.transform(rows).astype(np.float64).sum(0)
        assert check_hash_sum(total, 5000, 0.0) is None


@FAST
@given(
    n=st.integers(0, 10**6),
    cells=st.integers(1, 40),
    sigma=st.floats(0, 1e4),
    grid=st.floats(0, 10),
    alarm=st.floats(1e-15, 0.5),
    where=st.integers(0, 39),
    excess=st.floats(1e-6, 1e6),
)
def test_the_exact_worst_case_passes_and_anything_beyond_the_bound_fails(n, cells, sigma, grid, alarm, where, excess):
    """Noise-free honest extremes (every row in one cell; a hash sum of norm sqrt(2)·n) always pass; a count moved
    just beyond its stated reach always fails, whatever the sizes, noise and false alarm."""
    where %= cells
    exact = np.zeros(cells)
    exact[where] = n
    assert check_owner_label_counts(exact, n, sigma, grid, false_alarm=alarm) is None
    assert check_consumer_counts(exact, n, max(sigma, 1e-3), false_alarm=alarm) is None
    assert check_hash_sum(np.full(cells, n * math.sqrt(2 / cells)), n, sigma, grid, false_alarm=alarm) is None
    reach = gaussian_tail_sigmas(alarm, 2 * cells + 1) * sigma + grid / 2
    beyond = exact.copy()
    beyond[where] = n + reach + excess * max(1.0, n + reach) * 1e-6 + 1e-6 * max(1.0, n + reach)
    assert check_owner_label_counts(beyond, n, sigma, grid, false_alarm=alarm) is not None
    bound = hash_sum_norm_bound(n, cells, sigma, grid, alarm)
    assert (
        check_hash_sum(
            np.full(cells, (bound * (1 + 1e-9) + 1e-9) / math.sqrt(cells)), n, sigma, grid, false_alarm=alarm
        )
        is not None
    )


junk = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=3),
    st.lists(st.integers(), max_size=2),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**80), 2**80),
)


@FAST
@given(x=junk)
def test_the_aggregators_arguments_are_typed_errors_naming_them(x):
    calls = [
        ("n_rows", lambda: check_owner_label_counts([1.0], x, 1.0)),
        ("sigma", lambda: check_owner_label_counts([1.0], 5, x)),
        ("granularity", lambda: check_owner_label_counts([1.0], 5, 1.0, x)),
        ("false_alarm", lambda: check_owner_label_counts([1.0], 5, 1.0, false_alarm=x)),
        ("n_rows", lambda: check_hash_sum([1.0], x, 1.0)),
        ("sigma", lambda: check_hash_sum([1.0], 5, x)),
        ("n_rows", lambda: check_consumer_counts([1.0], x, 1.0)),
        ("scale", lambda: check_consumer_counts([1.0], 5, x)),
        ("false_alarm", lambda: gaussian_tail_sigmas(x)),
        ("tails", lambda: laplace_tail_scales(0.1, x)),
        ("cells", lambda: laplace_sum_bound(1.0, x, 0.1)),
        ("dim", lambda: hash_sum_norm_bound(1, x, 1.0, 0.0, 0.1)),
    ]
    for argument, call in calls:
        try:
            call()
        except dpsumm.InvalidParameterError as exc:
            assert exc.argument == argument, (argument, str(exc))
