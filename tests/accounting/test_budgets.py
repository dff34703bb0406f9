"""dpsumm.accounting.budgets: Budget (a cap, validated) and BudgetAccountant (refuses before a run what it
cannot book, books a certified run, matches the tight composition); bad input never leaks a foreign exception.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpsumm
from certification_paths import PATHS, run_paths
from dpsumm import (
    DpsummError,
    accounting,
)
from dpsumm import accounting as acc
from dpsumm.accounting.ledger import CERTIFIED


def _ledger():
    led = acc.Ledger()
    led.record("validation", acc.calibrate_gaussian(1.0, 1e-6, sensitivity=0.1, dim=3).event(), label="g~")
    return led


def test_a_refused_plan_leaves_the_accountant_unchanged():
    a = acc.BudgetAccountant(validation_epsilon=1.6, validation_delta=1e-6)
    a.spend(_ledger())
    before = (len(a.spent), a.epsilon_spent("validation"), a.remaining())
    seeded = _ledger()
    seeded.mark_seeded()
    over = _ledger()
    for _ in range(3):
        over.record("validation", acc.calibrate_gaussian(1.0, 1e-6, sensitivity=0.1, dim=3).event(), label="x")
    for plan in (seeded, over, "x", 5, None):
        with pytest.raises(DpsummError):
            a.spend(plan)
    for plan in ([("validation", 5)], {"bogus": []}, [("owners", _ledger().events("validation")[0])]):
        with pytest.raises(DpsummError):
            a.check(plan)
    assert (len(a.spent), a.epsilon_spent("validation"), a.remaining()) == before


finite_or_not = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**30), 10**30),
    st.sampled_from([1e300, 1e-300, 5e-324, -0.0, 0.0, True, "1", None]),
)


@settings(max_examples=120, deadline=None)
@given(finite_or_not, finite_or_not, finite_or_not, finite_or_not)
def test_budgets_never_leak(e, d, ve, vd):
    for make in (lambda: accounting.Budget(e, d, ve, vd), lambda: accounting.BudgetAccountant(e, d, ve, vd)):
        try:
            make()
        except dpsumm.DpsummError as exc:
            assert exc.argument in {"epsilon", "delta", "validation_epsilon", "validation_delta"}


def nominations_ledger(seeded=False):
    cal = acc.calibrate_gaussian(1.0, 1e-6, sensitivity=2 * math.sqrt(2) / 400, dim=128)
    led = acc.Ledger(seeded=seeded)
    led.record("validation", cal.event(), label="noisy validation mean")
    led.set_deltas(None, 1e-6)
    return led


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


@pytest.fixture(scope="module")
def results():
    return run_paths()


@pytest.mark.parametrize("path", [p for p, (_, s) in PATHS.items() if s != CERTIFIED])
def test_budget_accountant_refuses_every_uncertified_run(path, results):
    res = results[path]
    acct = accounting.BudgetAccountant(epsilon=10.0, delta=1e-6, validation_epsilon=10.0, validation_delta=1e-6)
    if res.privacy is None:
        with pytest.raises(dpsumm.InvalidParameterError):
            acct.spend(res.privacy)
    else:
        with pytest.raises(dpsumm.PrivacyBudgetError, match="cannot be booked"):
            acct.spend(res.privacy)
    assert acct.spent == [] and acct.epsilon_spent("owners") == 0.0


def test_budget_accountant_books_a_certified_run(results):
    # the default purchase (ByDirection) spends both parties' budgets: the owners release counts per cell
    acct = accounting.BudgetAccountant(epsilon=10.0, delta=1e-6, validation_epsilon=10.0, validation_delta=1e-6)
    acct.spend(results["certified nominations"].privacy)
    assert len(acct.spent) == 1 and 0 < acct.epsilon_spent("validation") < 10
    assert 0 < acct.epsilon_spent("owners") < 10
    with pytest.raises(dpsumm.PrivacyBudgetError, match="owners"):
        accounting.BudgetAccountant(validation_epsilon=10.0, validation_delta=1e-6).spend(
            results["certified nominations"].privacy
        )
