"""dpsumm.preprocessing: median gamma, the kernel-scale check and scale_to_unit, by hand and on bad input."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpsumm
from dpsumm import InvalidParameterError
from dpsumm.preprocessing import DEGENERATE_HIGH, DEGENERATE_LOW, kernel_scale
from refusal import refused

RNG = np.random.default_rng(7)


VALIDATION = RNG.uniform(size=(20, 3))


def test_kernel_scale_refuses_rows_without_a_finite_median_distance():
    # Was: NaN returned silently for fewer than two rows and for rows beyond the float range.
    from dpsumm.preprocessing import check_kernel, kernel_scale

    refused(lambda: kernel_scale(VALIDATION[:1], 0.1), "rows")
    refused(lambda: kernel_scale(VALIDATION * 1e300, 0.1), "rows")
    refused(lambda: kernel_scale(VALIDATION * 1e-310, 0.1), "rows")
    assert kernel_scale(VALIDATION, 0.1) > 0
    assert math.isnan(check_kernel(VALIDATION[:1], 0.1))  # documented: nothing is checked


def test_scale_to_unit_with_a_range_too_narrow_for_the_float_range():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        out = dpsumm.scale_to_unit(VALIDATION + 1.0, 0.0, 5e-324)  # was a RuntimeWarning (overflow)
    assert (out == 1.0).all()
    refused(lambda: dpsumm.scale_to_unit(VALIDATION + 1.0, 0.0, 5e-324, clip=False), "X")  # was inf in the output


RNG_audit = np.random.default_rng(0)


@pytest.mark.parametrize(
    "rows",
    [
        np.array([[0.0], [1e300], [-1e300]]),
        np.arange(6.0).reshape(3, 2) * 1e-200,
        np.full((3, 2), 1e300) * np.arange(1, 4)[:, None],
    ],
)
def test_median_gamma_never_returns_nan_or_zero(rows):
    refused(lambda: dpsumm.median_gamma(rows), "rows")


def test_median_gamma_is_unchanged_on_ordinary_rows():
    R = RNG_audit.uniform(size=(50, 4))
    d2 = ((R[:, None] - R[None]) ** 2).sum(-1)[np.triu_indices(50, 1)]
    assert dpsumm.median_gamma(R) == pytest.approx(1.0 / np.median(d2), rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True), st.floats(min_value=1e-300, max_value=1e300))
def test_median_gamma_is_finite_and_positive_or_refused(a, scale):
    rows = np.array([[0.0, 0.0], [a, 1.0], [scale, -scale]])
    try:
        g = dpsumm.median_gamma(rows)
    except InvalidParameterError as exc:
        assert exc.argument == "rows"
    else:
        assert math.isfinite(g) and g > 0


def test_median_gamma_hand_computed():
    # pairwise squared distances of (0,0), (1,0), (0,2): 1, 4, 5 -> median 4 -> gamma 0.25
    assert dpsumm.median_gamma(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])) == pytest.approx(0.25)


def test_kernel_scale_thresholds_bracket_the_measurements():
    """The thresholds separate raw and scaled digits at the paper's gamma=0.1 (docs/usability.md)."""
    X = dpsumm.datasets.digits()[0]  # scaled to [0, 1]
    scaled, raw = kernel_scale(X, 0.1), kernel_scale(X * 16.0, 0.1)
    assert DEGENERATE_LOW <= scaled <= DEGENERATE_HIGH < raw
    assert raw == pytest.approx(256 * scaled)
    assert kernel_scale(X, dpsumm.median_gamma(X)) == pytest.approx(1.0)


def test_the_kernel_check_is_the_scale_of_an_evenly_spaced_subsample_within_a_few_percent_of_every_row():
    """check_kernel's median is over 256 evenly spaced rows (exactly), and on digits (1,797 rows) that is within 5 %
    of the median over the heuristic's 1,000 rows: far inside the warning's range of a factor of 5,000."""
    from dpsumm.preprocessing import check_kernel

    X = dpsumm.datasets.digits()[0]
    sub = X[np.linspace(0, len(X) - 1, 256).astype(np.int64)]
    assert check_kernel(X, 0.1) == kernel_scale(sub, 0.1)
    assert check_kernel(X[:200], 0.1) == kernel_scale(X[:200], 0.1)  # 256 rows or fewer: every row
    assert check_kernel(X, 0.1) == pytest.approx(kernel_scale(X, 0.1), rel=0.05)


def test_scale_to_unit():
    X = np.array([[0.0, 10.0], [8.0, 20.0], [16.0, 40.0]])
    out = dpsumm.scale_to_unit(X, [0, 10], [16, 30])
    np.testing.assert_allclose(out, [[0, 0], [0.5, 0.5], [1.0, 1.0]])  # 40 is outside [10, 30]: clipped
    np.testing.assert_allclose(dpsumm.scale_to_unit(X, 0, 40, clip=False)[:, 1], [0.25, 0.5, 1.0])
    with pytest.raises(dpsumm.InvalidParameterError):
        dpsumm.scale_to_unit(X, 5, 5)
    with pytest.raises(dpsumm.InvalidParameterError):
        dpsumm.scale_to_unit(X, [0, 1, 2], 16)


@given(
    low=st.floats(allow_nan=True, allow_infinity=True), width=st.one_of(st.floats(max_value=0.0), st.just(float("nan")))
)
def test_scale_to_unit_refuses_an_empty_or_non_finite_range(low, width):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.scale_to_unit(np.zeros((2, 3)), low, low + width)
    assert e.value.argument in ("low", "high")


@given(
    values=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=20), low=st.floats(-1e3, 1e3), width=st.floats(1e-3, 1e3)
)
def test_scale_to_unit_is_the_affine_map_clipped(values, low, width):
    X = np.array(values)[:, None]
    np.testing.assert_allclose(dpsumm.scale_to_unit(X, low, low + width), np.clip((X - low) / width, 0, 1))


@pytest.mark.parametrize("features", [[1, 2], ["a", None], "ab", ("a", b"b")])
def test_parse_range_refuses_feature_names_that_are_not_strings(features):
    # Was: a TypeError from str.join on the way to the message.
    refused(lambda: dpsumm.preprocessing.parse_range("a=0:1,b=0:1", features), "features")
