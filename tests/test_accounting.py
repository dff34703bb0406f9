"""Accounting: closed forms, orderings, the paper's numbers, calibration, the CLI, bad input."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpsumm
from dpsumm import accounting as acc
from dpsumm.cli import main as cli_main


def laplace(eps, count=1):
    return acc.LaplaceEvent(eps, 2.0, "replace-one", count=count)


def expo(eps, count=1):
    return acc.ExponentialEvent(eps, 2.0, "replace-one", count=count)


# ------------------------------------------------------------------ closed forms


def test_basic_is_the_sum():
    assert acc.basic([laplace(0.1, 3), expo(0.2, 2)], 1e-5) == pytest.approx(0.7, rel=1e-12)


def test_advanced_by_hand():
    eps, k, delta = 0.05, 400, 1e-6
    want = math.sqrt(2 * k * math.log(1 / delta)) * eps + k * eps * math.expm1(eps)
    assert acc.advanced([laplace(eps, k)], delta) == pytest.approx(want, rel=1e-12)


def test_kov_homogeneous_by_hand():
    eps, k, delta = 0.01, 3312, 0.01
    lin = k * eps * (math.exp(eps) - 1) / (math.exp(eps) + 1)
    second = lin + math.sqrt(2 * k * eps**2 * math.log(1 / delta))
    third = lin + math.sqrt(2 * k * eps**2 * math.log(math.e + math.sqrt(2 * k * eps**2) / delta))
    assert acc.kov([laplace(eps, k)], delta) == pytest.approx(min(k * eps, second, third), rel=1e-12)


def test_paper_numbers():
    """Section 4: 0.043 for the summary at delta = 1e-4 (Theorem 7 with k = 5p steps of one mechanism);
    the validation set's 1.4 at delta = 0.01. dpsumm counts two mechanisms per MWEM step."""
    p = 500
    eps_l = 0.01 / math.sqrt(p * 5)
    # What the paper counted: Theorem 7's second expression over 5p mechanisms at eps_l -> 0.0430 for
    # every p (5p eps_l^2 = 1e-4); the third expression is smaller (0.0316), so Theorem 7 gives 0.0316.
    terms = acc._kov_terms([(eps_l, 5 * p)], 1e-4)
    assert terms[1] == pytest.approx(0.0430, abs=2e-4)
    assert acc.kov([laplace(eps_l, 5 * p)], 1e-4) == pytest.approx(0.0316, abs=2e-4)
    # What runs: 5p steps, each an exponential-mechanism selection and a Laplace measurement.
    owners = acc.kov(acc.mwem_step_events(eps_l, 5 * p), 1e-4)
    assert owners == pytest.approx(0.0461, abs=5e-4)
    # Validation: 1656 steps at 0.01; one mechanism per step gives ~1.25 (paper: 1.4), two give ~1.88.
    assert acc.kov([laplace(0.01, 1656)], 0.01) == pytest.approx(1.25, abs=0.02)
    assert acc.kov(acc.mwem_step_events(0.01, 1656), 0.01) == pytest.approx(1.879, abs=0.01)
    # The tight accountant is well below Theorem 7 for the same events.
    assert acc.tight(acc.mwem_step_events(0.01, 1656), 0.01) < 0.6 * 1.879


@settings(max_examples=8, deadline=None)
@given(
    eps=st.lists(st.floats(min_value=1e-3, max_value=1.0), min_size=1, max_size=3),
    count=st.integers(min_value=1, max_value=300),
    delta=st.sampled_from([1e-2, 1e-4, 1e-6]),
)
def test_accountant_ordering(eps, count, delta):
    events = [laplace(e, count) for e in eps] + [expo(eps[0], count)]
    b, a, k, t = (f(events, delta) for f in (acc.basic, acc.advanced, acc.kov, acc.tight))
    assert k <= b * (1 + 1e-12)
    assert k <= a * (1 + 1e-12)
    assert t <= k * (1 + 1e-9)


def test_tight_agrees_with_dp_accounting_called_directly():
    from dp_accounting.pld import privacy_loss_distribution as pld

    eps, k, delta = 0.1, 50, 1e-5
    d = pld.from_laplace_mechanism(parameter=2.0 / eps, sensitivity=2.0, value_discretization_interval=1e-4)
    want = d.self_compose(k).get_epsilon_for_delta(delta)
    assert acc.tight([laplace(eps, k)], delta) == pytest.approx(want, rel=0.02)


def test_auction_is_not_certified_except_ask_everyone():
    assert acc.kov([acc.AuctionEvent(0.01, 3, 5)], 1e-4) == math.inf
    assert acc.kov([acc.AuctionEvent(0.0, 3, 5), laplace(0.1)], 1e-4) == pytest.approx(0.1)


# ------------------------------------------------------------------ ledger and schedules


def test_ledger_totals_per_party():
    ledger = acc.Ledger()
    for e in acc.mwem_step_events(0.01, 100):
        ledger.record("validation", e, label="h2(h1(D_v))", round=0)
    for e in acc.mwem_step_events(0.05, 100, public=True):
        ledger.record("owners", e, label="seed", round=1)
    totals = ledger.totals(1e-4, 1e-2)
    assert totals["validation"]["basic"] == pytest.approx(2.0)
    assert totals["owners"]["basic"] == 0.0
    assert len(ledger.entries) == 4
    assert "validation" in ledger.table(1e-4, 1e-2)


def test_calibrate_spends_the_budget_and_no_more():
    budget = dpsumm.Budget(epsilon=1.0, delta=1e-6, validation_epsilon=1.0, validation_delta=1e-6)
    sched = acc.calibrate(budget, size=200, owners=5, dim=140)
    totals = acc.account(sched, 200, 5, delta=1e-6, validation_delta=1e-6, include_auction=False)
    assert 0.99 <= totals["validation"]["tight"] <= 1.0
    assert 0.99 <= totals["owners"]["tight"] <= 1.0
    # Calibration keeps the certified auction (ask every owner): the owners' total is finite.
    assert acc.account(sched, 200, 5, delta=1e-6, validation_delta=1e-6)["owners"]["tight"] <= 1.0


def test_impossible_budget_is_refused():
    with pytest.raises(dpsumm.PrivacyBudgetError):
        acc.calibrate(dpsumm.Budget(epsilon=1e-12, delta=1e-6, validation_epsilon=1.0, validation_delta=1e-6), 100, 5)


def test_summarize_with_a_budget_stays_within_it():
    rng = np.random.default_rng(0)
    owners = [rng.normal(size=(80, 4)) + k for k in range(3)]
    budget = dpsumm.Budget(epsilon=1.0, delta=1e-6, validation_epsilon=2.0, validation_delta=1e-6)
    res = dpsumm.summarize(owners, rng.normal(size=(50, 4)), 10, method=dpsumm.PaperProtocol(dim=32), privacy=budget, seed_set=rng.normal(size=(20, 4)), random_state=0, progress=False)
    totals = res.privacy.totals(1e-6, 1e-6)
    assert totals["owners"]["tight"] <= 1.0 + 1e-9
    assert totals["validation"]["tight"] <= 2.0 + 1e-9
    # The ledger reports at the budget's deltas by default, and says the seeded run is not private.
    assert res.privacy.deltas == {"owners": 1e-6, "validation": 1e-6}
    assert res.privacy.totals() == totals
    assert res.privacy.seeded and res.privacy.table().startswith("*** seeded run: NOT private")


@pytest.mark.parametrize(
    "make,arg",
    [
        (lambda: acc.LaplaceEvent(0.0, 1.0, "replace-one"), "epsilon"),
        (lambda: acc.LaplaceEvent(1.0, 1.0, "swap"), "neighbour"),
        (lambda: acc.kov([laplace(0.1)], 0.0), "delta"),
        (lambda: acc.kov([laplace(0.1)], 1.0), "delta"),
        (lambda: acc.Ledger().record("everyone", laplace(0.1), label="x"), "party"),
        (lambda: acc.Ledger().epsilon("owners", 1e-5, accountant="magic"), "accountant"),
        (lambda: dpsumm.Budget(epsilon=-1, delta=1e-6, validation_epsilon=1, validation_delta=1e-6), "epsilon"),
    ],
)
def test_bad_input(make, arg):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        make()
    assert e.value.argument == arg


# ------------------------------------------------------------------ CLI


def test_cli_account_json_matches_the_api(capsys):
    code = cli_main(["account", "--schedule", "paper", "--size", "500", "--owners", "5", "--delta", "1e-4",
                     "--validation-delta", "0.01", "--json"])
    assert code in (0, None)
    out = json.loads(capsys.readouterr().out)
    want = acc.account(acc.paper_schedule(500, 5), 500, 5, 1e-4, 0.01)
    assert set(out) >= {"owners", "validation"}
    for key in ("basic", "advanced", "kov", "tight"):
        assert out["validation"][key] == pytest.approx(want["validation"][key])
        # the default auction asks every owner every round (certified): the owners' total is the h2 releases'
        assert out["owners"][key] == pytest.approx(want["owners"][key]) and math.isfinite(want["owners"][key])
    code = cli_main(["account", "--schedule", "paper", "--size", "500", "--owners", "5", "--delta", "1e-4",
                     "--validation-delta", "0.01", "--epsilon-auction", "0.01", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert all(out["owners"][key] is None for key in ("basic", "advanced", "kov", "tight"))  # the paper's auction
    assert acc.paper_schedule(500, 5, epsilon_auction="theorem6").epsilon_auction > 0


def test_cli_user_error_exits_2(capsys):
    try:
        code = cli_main(["account", "--schedule", "paper", "--size", "-3", "--owners", "5"])
    except SystemExit as e:
        code = e.code
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "size" in err[0]
