"""dpsumm.errors: the error hierarchy."""

from __future__ import annotations

import dpsumm


def test_error_hierarchy():
    assert issubclass(dpsumm.InvalidParameterError, dpsumm.DpsummError)
    assert issubclass(dpsumm.InvalidParameterError, ValueError)
