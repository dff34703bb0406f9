"""dpsumm.pfds.domain: a Domain refuses what it cannot describe, naming the argument."""

from __future__ import annotations

import numpy as np
import pytest

from dpsumm import InvalidParameterError
from dpsumm.pfds import (
    Domain,
)
from refusal import refused


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


def test_bucket_refuses_labels_that_are_not_numbers_and_a_classification_domain():
    """``Domain.bucket`` used to raise a TypeError (unpacking a classification domain's label_range None, or
    arithmetic on strings)."""
    regression = Domain([(0.0, 1.0)], label_range=(0.0, 10.0))
    assert (
        regression.bucket(np.array([0.0, 5.0, 10.0])).tolist()
        == regression.check_labels([0.0, 5.0, 10.0], 3, "y").tolist()
    )
    refused(lambda: regression.bucket(np.array(["a"])), "y")
    refused(lambda: regression.bucket(None), "y")
    refused(lambda: Domain([(0.0, 1.0)], classes=[0, 1]).bucket(np.array([0.5])), "y")


@pytest.mark.parametrize(
    "make, argument",
    [
        (lambda: Domain([np.array([0, 1], dtype=complex), (0.0, 1.0)], classes=[0, 1]), "bounds"),
        (lambda: Domain([None, (0.0, 1.0)], {0: np.array([1, 2], dtype=complex)}, classes=[0, 1]), "categories"),
        (lambda: Domain([(0.0, 1.0)], label_range=np.array([0, 1], dtype=complex)), "label_range"),
    ],
    ids=["bounds", "categories", "label_range"],
)
def test_complex_numbers_are_refused_without_a_complex_warning(make, argument):
    """numpy's complex values used to be cast to float with a ComplexWarning, their imaginary part dropped."""
    refused(make, argument)
