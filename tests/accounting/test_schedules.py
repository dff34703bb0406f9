"""dpsumm.accounting.schedules: a schedule names its bad field, account() names the schedule, include_auction is
a bool.
"""

from __future__ import annotations

import dataclasses

import pytest

from dpsumm import accounting as acc
from refusal import refused


def _ledger():
    led = acc.Ledger()
    led.record("validation", acc.calibrate_gaussian(1.0, 1e-6, sensitivity=0.1, dim=3).event(), label="g~")
    return led


@pytest.mark.parametrize(
    "call",
    [
        lambda: _ledger().totals(include_auction="no"),
        lambda: _ledger().epsilon("validation", include_auction="False"),
        lambda: _ledger().events("owners", include_auction=2),
        lambda: acc.account(acc.paper_schedule(5, 3, 16), include_auction="no"),
    ],
)
def test_include_auction_must_be_a_bool(call):
    # Was: any truthy value, so include_auction="False" counted the auction.
    refused(call, "include_auction")


def test_a_schedule_names_its_bad_field_and_account_names_the_schedule():
    s = acc.paper_schedule(5, 3, 16)
    refused(lambda: dataclasses.replace(s, epsilon_epoch_step=None), "epsilon_epoch_step")
    refused(lambda: dataclasses.replace(s, t_init=2**70), "t_init")
    refused(lambda: dataclasses.replace(s, size=2**70), "size")
    big = dataclasses.replace(s, epsilon_validation_step=1e3)  # a diagnostic (broadcast_error's noise-free limit)
    refused(lambda: acc.account(big), "schedule")


@pytest.mark.parametrize(
    "call",
    [
        lambda: acc.paper_schedule(5, 10**400),
        lambda: acc.theorem2_schedule(1.0, 1e-4, 5, 10**400),
    ],
)
def test_an_owner_count_beyond_the_float_range_is_refused_naming_owners(call):
    # Was: Python's OverflowError from K ** (-1/3) in Theorem 6's auction defaults.
    refused(call, "owners")
