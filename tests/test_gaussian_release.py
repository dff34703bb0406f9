"""The validation mean's Gaussian release: exact discrete Gaussian sampler, calibration, ledger and budgets."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import dpsumm
from dpsumm import accounting as acc
from dpsumm import privacy

ALPHA = 1e-3  # significance of every statistical test here (fixed seeds: deterministic outcomes)


# ------------------------------------------------------------------ sampler and mechanism


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
    sigma=st.one_of(st.floats(allow_nan=True, allow_infinity=True).filter(lambda x: not (x > 0 and math.isfinite(x))), st.just(1e12)),
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


# ------------------------------------------------------------------ calibration


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


# ------------------------------------------------------------------ accountants


def test_gaussian_event_in_every_accountant():
    z, delta = 3.0, 1e-6
    g = acc.GaussianEvent(z, releases="g~")
    rdp_eps = acc._rdp_gaussian_epsilon(z, delta)
    for name in ("basic", "advanced", "kov", "tight"):
        assert acc.compose([g], delta, name) == pytest.approx(rdp_eps, rel=1e-12)
    # Mixed with pure events: basic gives the pure sum plus the Gaussian at delta; advanced/kov split delta.
    lap = acc.LaplaceEvent(0.1, 2.0, "replace-one", count=10)
    assert acc.basic([g, lap], delta) == pytest.approx(1.0 + rdp_eps, rel=1e-12)
    assert acc.kov([g, lap], delta) == pytest.approx(
        acc.kov([lap], delta / 2) + acc._rdp_gaussian_epsilon(z, delta / 2), rel=1e-12
    )
    t = acc.tight_details([g, lap], delta)
    assert t["pld"] == math.inf  # a discrete Gaussian is never accounted through the continuous PLD
    assert t["epsilon"] <= acc.kov([g, lap], delta) * (1 + 1e-9)
    # A continuous Gaussian: PLD and the analytic curve agree.
    import dp_accounting

    c = acc.GaussianEvent(z, discrete=False)
    assert acc.tight([c], delta) == pytest.approx(dp_accounting.get_epsilon_gaussian(z, delta), rel=0.02)
    assert acc.basic([c, c], delta) == pytest.approx(dp_accounting.get_epsilon_gaussian(z / math.sqrt(2), delta), rel=1e-9)


# ------------------------------------------------------------------ ledger


def nominations_ledger(seeded=False):
    cal = acc.calibrate_gaussian(1.0, 1e-6, sensitivity=2 * math.sqrt(2) / 400, dim=128)
    led = acc.Ledger(seeded=seeded)
    led.record("validation", cal.event(), label="noisy validation mean")
    led.set_deltas(None, 1e-6)
    return led


def test_nominations_ledger_reports_owners_free_and_validation_at_its_delta():
    led = nominations_ledger()
    assert led.certified("owners") and led.certified("validation")
    assert led.epsilon("owners") == 0.0
    assert led.epsilon("validation") == pytest.approx(1.0, abs=1e-6)
    text = led.table()
    assert "1e-06" in text and "NOT private" not in text
    assert "owners: no private releases recorded: eps = 0 (certified)" in text
    assert "neighbour relation replace-one" in text
    d = led.to_dict()
    assert d["certified"] == {"owners": True, "validation": True}
    assert d["delta"]["validation"] == 1e-6 and d["totals"]["owners"]["tight"] == 0.0


def test_uncertified_auction_marks_the_party():
    led = acc.Ledger()
    led.record("owners", acc.AuctionEvent(0.01, 3, 5), label="auction")
    assert not led.certified("owners") and led.certified("validation")
    assert "NOT certified" in led.table()


def test_seeded_ledger_says_so_everywhere():
    led = nominations_ledger(seeded=True)
    assert led.table().startswith("*** seeded run: NOT private")
    assert "NOT private" in repr(led)
    assert "NOT private" in led.to_dict()["warning"]
    plain = nominations_ledger()
    plain.mark_seeded()
    assert plain.seeded


def test_ledger_round_trips_through_pickle_and_dict():
    import json

    led = nominations_ledger(seeded=True)
    for e in acc.mwem_step_events(0.01, 20):
        led.record("owners", e, label="h2(D_s)", round=2)
    led.record("owners", acc.AuctionEvent(0.0, 2, 4, count=3), label="auction")
    again = pickle.loads(pickle.dumps(led))
    assert again == led and again.entries == led.entries
    back = acc.Ledger.from_dict(json.loads(json.dumps(led.to_dict())))
    assert back == led and back.entries == led.entries and back.deltas == led.deltas
    assert back.table() == led.table()
    with pytest.raises(dpsumm.InvalidParameterError):
        acc.Ledger.from_dict({"entries": [{"party": "owners", "label": "x", "event": {"kind": "Magic"}}]})


# ------------------------------------------------------------------ budgets


def test_validation_only_budget():
    b = acc.Budget(validation_epsilon=1.0, validation_delta=1e-6)
    assert not b.has_owners_budget and b.ledger_deltas() == {"owners": None, "validation": 1e-6}
    b.check_validation_size(1000)
    with pytest.raises(dpsumm.PrivacyBudgetError) as e:
        acc.Budget(validation_epsilon=1.0, validation_delta=1e-3).check_validation_size(1000)
    assert e.value.argument == "validation_delta"
    with pytest.raises(dpsumm.InvalidParameterError) as e2:
        acc.calibrate(b, 100, 5)
    assert e2.value.argument == "budget"
    with pytest.raises(dpsumm.InvalidParameterError) as e2:
        acc.Budget(epsilon=1.0, validation_epsilon=1.0, validation_delta=1e-6)
    assert e2.value.argument == "delta"
    with pytest.raises(dpsumm.InvalidParameterError) as e2:
        acc.Budget(epsilon=1.0, delta=1e-6)
    assert e2.value.argument == "validation_epsilon"


def test_budget_accountant_refuses_before_the_run():
    acct = acc.BudgetAccountant(validation_epsilon=1.6, validation_delta=1e-6)
    run = nominations_ledger()  # eps 1 at 1e-6
    acct.spend(run)
    acct.spend(run)  # two compose to 1.451 under RDP (z -> z/sqrt(2)), within 1.6; a third gives 1.807
    assert acct.epsilon_spent("validation") == pytest.approx(1.451, abs=1e-3)
    with pytest.raises(dpsumm.PrivacyBudgetError):
        acct.check(run)
    with pytest.raises(dpsumm.PrivacyBudgetError):
        acct.spend(run)
    assert len(acct.spent) == 2
    rem = acct.remaining()
    assert rem["owners"] is None and rem["validation"] == pytest.approx(1.6 - 1.451, abs=1e-3)
    # Owners have no budget here: any private owners' release is refused, a free one passes.
    with pytest.raises(dpsumm.PrivacyBudgetError):
        acct.check([("owners", acc.LaplaceEvent(0.1, 2.0, "replace-one"))])
    acct.check({"owners": [acc.AuctionEvent(0.0, 1, 3)]})


def test_budget_accountant_matches_the_tight_composition():
    acct = acc.BudgetAccountant(epsilon=1.0, delta=1e-6, validation_epsilon=1.0, validation_delta=1e-6)
    evs = acc.mwem_step_events(0.01, 50)
    led = acc.Ledger()
    for e in evs:
        led.record("owners", e, label="h2")
    acct.spend(led)
    got = acct.check(led)["owners"]
    assert got == pytest.approx(acc.tight(evs + evs, 1e-6), rel=1e-12)


@pytest.mark.parametrize("steps,target", [(1, 1.0), (5, 3.0), (50, 1.0), (1656, 1.0), (4995, 0.5)])
def test_fast_step_calibration_spends_within_one_percent_by_tight(steps, target):
    eps = acc._calibrate_mwem_steps(steps, target, 1e-6, "owners")
    spent = acc.tight(acc.mwem_step_events(eps, steps), 1e-6)
    assert 0.99 * target <= spent <= target
