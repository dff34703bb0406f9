"""dpsumm.accounting.calibration: calibrate spends the budget and no more, the Gaussian calibration is
dp-accounting's own and tight, cached, and bad input names the user's argument (never an internal one).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpsumm
from dpsumm import (
    accounting,
)
from dpsumm import accounting as acc
from refusal import refused


def test_calibrate_spends_the_budget_and_no_more():
    budget = dpsumm.Budget(epsilon=1.0, delta=1e-6, validation_epsilon=1.0, validation_delta=1e-6)
    sched = acc.calibrate(budget, size=200, owners=5, dim=140)
    totals = acc.account(sched, 200, 5, delta=1e-6, validation_delta=1e-6, include_auction=False)
    assert 0.99 <= totals["validation"]["tight"] <= 1.0
    assert 0.99 <= totals["owners"]["tight"] <= 1.0
    # Calibration keeps the certified auction (ask every owner): the owners' total is finite.
    assert acc.account(sched, 200, 5, delta=1e-6, validation_delta=1e-6)["owners"]["tight"] <= 1.0


def test_impossible_budget_is_refused():
    # below MIN_TARGET_EPSILON: refused when the budget is made, naming the argument
    with pytest.raises(dpsumm.InvalidParameterError) as err:
        dpsumm.Budget(epsilon=1e-12, delta=1e-6, validation_epsilon=1.0, validation_delta=1e-6)
    assert err.value.argument == "epsilon"
    # in range but unreachable by the schedule: refused by the calibration, naming the argument
    with pytest.raises(dpsumm.PrivacyBudgetError) as err2:
        acc.calibrate(dpsumm.Budget(epsilon=1e-6, delta=1e-6, validation_epsilon=1.0, validation_delta=1e-6), 2000, 5)
    assert err2.value.argument == "epsilon"


def test_calibrate_names_the_auction_and_is_a_privacy_budget_error():
    err = refused(
        lambda: acc.calibrate(dpsumm.Budget(1.0, 1e-6, 1.0, 1e-6), 5, 3, 16, epsilon_auction=0.5),
        "epsilon_auction",
        dpsumm.PrivacyBudgetError,
    )
    assert "PrivAuction" in str(err)


finite_or_not = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**30), 10**30),
    st.sampled_from([1e300, 1e-300, 5e-324, -0.0, 0.0, True, "1", None]),
)


@settings(max_examples=150, deadline=None)
@given(finite_or_not, finite_or_not, finite_or_not, st.integers(-5, 10**7))
def test_calibrate_gaussian_never_leaks(eps, delta, sens, dim):
    try:
        cal = accounting.calibrate_gaussian(eps, delta, sensitivity=sens, dim=dim)
    except dpsumm.DpsummError as exc:
        assert getattr(exc, "argument", None) in {"epsilon", "delta", "sensitivity", "dim", "granularity"}
        return
    assert math.isfinite(cal.sigma) and cal.sigma > 0 and cal.achieved_epsilon() <= cal.epsilon * (1 + 1e-9)


@pytest.mark.parametrize("eps", [1e300, 1e-300, 101.0, 5e-7])
def test_calibrations_name_the_users_argument(eps):
    with pytest.raises(dpsumm.InvalidParameterError) as err:
        accounting.calibrate_gaussian(eps, 1e-6, sensitivity=0.01, dim=64)
    assert err.value.argument == "epsilon" and "granularity" not in str(err.value)
    with pytest.raises(dpsumm.InvalidParameterError) as err:
        accounting.calibrate_mwem_steps(eps, 1e-6, 10)
    assert err.value.argument == "epsilon"


def test_tiny_epsilon_at_high_dim_names_epsilon_not_granularity():
    with pytest.raises(dpsumm.InvalidParameterError) as err:
        accounting.calibrate_gaussian(1e-6, 1e-6, sensitivity=0.01, dim=4096)
    assert err.value.argument == "epsilon" and "lower `dim`" in str(err.value)


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-6), (1.0, 1e-6), (1.0, 1e-9), (4.0, 1e-5)])
def test_calibration_is_dp_accountings_own_and_tight(eps, delta):
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    sens, d = 2 * math.sqrt(2) / 1000, 256
    cal = acc.calibrate_gaussian(eps, delta, sensitivity=sens, dim=d)
    want = dp_accounting.calibrate_dp_mechanism(
        lambda: rdp.RdpAccountant(neighboring_relation=rdp.NeighborRel.REPLACE_ONE),
        lambda z: dp_accounting.GaussianDpEvent(z),
        eps,
        delta,
        dp_accounting.LowerEndpointAndGuess(1e-3, 1.0),
    )
    assert cal.noise_multiplier == pytest.approx(want, rel=1e-6)
    # The grid: a power of two, counted in the sensitivity, at most 2^-10 of it, >= 2^10 steps per sigma.
    g = cal.granularity
    assert math.log2(g) == int(math.log2(g))
    assert cal.sensitivity == pytest.approx(sens + g * math.sqrt(d), rel=1e-15)
    assert cal.sensitivity <= sens * (1 + 2.0**-10)
    assert cal.sigma / g >= 2.0**10
    assert cal.sigma == pytest.approx(cal.noise_multiplier * cal.sensitivity, rel=1e-15)
    # Meets the target and is close to it (a 1% smaller multiplier would not).
    assert cal.achieved_epsilon() <= eps
    assert acc.GaussianEvent(cal.noise_multiplier * 0.99).epsilon_at(delta) > eps
    # Certified route costs more noise than the continuous analytic Gaussian, by a bounded factor.
    analytic = dp_accounting.get_sigma_gaussian(eps, delta)
    assert 1.0 < cal.noise_multiplier / analytic < 1.2


def test_calibration_is_cached_and_rejects_bad_grids():
    acc.calibrate_gaussian(1.0, 1e-6, sensitivity=0.01, dim=10)
    before = acc._gaussian_noise_multiplier.cache_info().hits
    acc.calibrate_gaussian(1.0, 1e-6, sensitivity=0.02, dim=20)
    assert acc._gaussian_noise_multiplier.cache_info().hits == before + 1
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        acc.calibrate_gaussian(1.0, 1e-6, sensitivity=0.01, dim=10, granularity=1e-15)
    assert e.value.argument == "granularity"
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        acc.calibrate_gaussian(1.0, 1.5, sensitivity=0.01, dim=10)
    assert e.value.argument == "delta"


@pytest.mark.parametrize("steps,target", [(1, 1.0), (5, 3.0), (50, 1.0), (1656, 1.0), (4995, 0.5)])
def test_fast_step_calibration_spends_within_one_percent_by_tight(steps, target):
    eps = acc._calibrate_mwem_steps(steps, target, 1e-6, "owners")
    spent = acc.tight(acc.mwem_step_events(eps, steps), 1e-6)
    assert 0.99 * target <= spent <= target


def test_the_known_noise_multipliers_are_what_dp_accounting_computes():
    """The table that spares the first run in a process the import of dp-accounting holds the library's figures."""
    from dpsumm.accounting.calibration import _KNOWN_MULTIPLIERS, _library_noise_multiplier

    assert (1.0, 1e-06) in _KNOWN_MULTIPLIERS  # the default validation budget
    for (eps, delta), z in _KNOWN_MULTIPLIERS.items():
        assert _library_noise_multiplier(eps, delta) == z


@pytest.mark.slow
def test_a_first_run_does_not_import_dp_accounting():
    """The first summarize in a process calibrates the default release from the table: no dp-accounting (seconds)."""
    import subprocess
    import sys

    script = (
        "import sys, numpy as np, dpsumm\n"
        "r = np.random.default_rng(0)\n"
        "dpsumm.summarize([r.random((100, 3)) for _ in range(3)], r.random((50, 3)), 10, progress=False)\n"
        "assert 'dp_accounting' not in sys.modules\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_an_owner_count_beyond_the_float_range_is_refused_naming_owners():
    # Was: Python's OverflowError from K ** (-1/3) in Theorem 6's auction defaults.
    refused(lambda: acc.calibrate(acc.Budget(1.0, 1e-6, 1.0, 1e-6), 5, 10**400), "owners")
