"""The bad-input tests' check: a call is refused with a typed error naming the argument, before any numpy warning."""

from __future__ import annotations

import warnings

import pytest

from dpsumm import DpsummError, InvalidParameterError

#: An int beyond the float range: ``float(HUGE)`` raises OverflowError.
HUGE = 10**400


def refused(call, argument, kind=InvalidParameterError):
    """``call()`` raises ``kind`` (a DpsummError) whose ``argument`` is ``argument``, with a one-line message."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no numpy overflow on the way to the refusal
        with pytest.raises(DpsummError) as info:
            call()
    assert isinstance(info.value, kind), info.value
    assert info.value.argument == argument, (info.value.argument, str(info.value))
    assert str(info.value).strip() and "Traceback" not in str(info.value)
    return info.value
