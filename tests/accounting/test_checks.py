"""dpsumm.accounting._checks: the accounting entry points' argument checks (events, accountants, ledger, budget)
name the bad argument; a delta beyond the float range is refused, never read as an infinite epsilon.
"""

from __future__ import annotations

import pytest

import dpsumm
from dpsumm import accounting as acc
from refusal import HUGE, refused


def laplace(eps, count=1):
    return acc.LaplaceEvent(eps, 2.0, "replace-one", count=count)


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


def test_a_delta_beyond_the_float_range_is_refused_not_read_as_infinite_epsilon():
    # Was: each accountant returned inf (its OverflowError read as "no finite guarantee").
    for name in ("basic", "advanced", "kov", "tight"):
        refused(lambda name=name: getattr(acc, name)(acc.mwem_step_events(0.1, 3), HUGE), "delta")
