"""dpsumm.accounting.events: the privacy events and the accountants over them: any input is used or refused with
a DpsummError, never a foreign exception.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

import dpsumm
from dpsumm import accounting

finite_or_not = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(10**30), 10**30),
    st.sampled_from([1e300, 1e-300, 5e-324, -0.0, 0.0, True, "1", None]),
)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["laplace", "exponential", "auction", "gaussian"]),
    finite_or_not,
    st.integers(-2, 10**14),
    finite_or_not,
)
def test_events_and_accountants_never_leak(kind, x, count, delta):
    try:
        if kind == "laplace":
            ev = accounting.LaplaceEvent(x, 2.0, "replace-one", count=count)
        elif kind == "exponential":
            ev = accounting.ExponentialEvent(x, 2.0, "replace-one", count=count)
        elif kind == "auction":
            ev = accounting.AuctionEvent(x, 2, 3, count=count)
        else:
            ev = accounting.GaussianEvent(x, count=count)
    except dpsumm.DpsummError:
        return
    for name in ("basic", "advanced", "kov", "tight"):
        try:
            eps = accounting.compose([ev], delta, name)
        except dpsumm.DpsummError:
            continue
        assert eps >= 0 and not math.isnan(eps)
