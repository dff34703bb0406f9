"""dpsumm.pfds.domain: a Domain refuses what it cannot describe, naming the argument."""

from __future__ import annotations

import pytest

from dpsumm import InvalidParameterError
from dpsumm.pfds import (
    Domain,
)


def test_domain_errors():
    with pytest.raises(InvalidParameterError, match="missing bounds for numeric attribute 1") as e:
        Domain([(0, 1), None], classes=[0, 1])
    assert e.value.argument == "bounds"
    with pytest.raises(InvalidParameterError, match="low < high"):
        Domain([(1, 1)], classes=[0, 1])
    with pytest.raises(InvalidParameterError, match="exactly one"):
        Domain([(0, 1)])
    with pytest.raises(InvalidParameterError, match="both bounds and categories"):
        Domain([(0, 1)], {0: [1, 2]}, classes=[0, 1])
    with pytest.raises(InvalidParameterError, match="repeated"):
        Domain([None], {0: [1, 1]}, classes=[0, 1])
    with pytest.raises(InvalidParameterError) as e:
        Domain([(0, float("nan"))], classes=[0, 1])
    assert e.value.argument == "bounds"
