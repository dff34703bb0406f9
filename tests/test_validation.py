"""dpsumm._validation: the argument checks every entry point shares, by hand and as properties: each returns the
value in its canonical type or raises InvalidParameterError naming the argument, never a foreign exception."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsumm import _validation as v
from dpsumm.errors import DpsummError, InvalidParameterError


def _refused(call, name="x"):
    with pytest.raises(InvalidParameterError) as info:
        call()
    assert info.value.argument == name, info.value
    return info.value


def test_real_number_takes_reals_and_refuses_the_rest():
    assert v.real_number(3, "x") == 3.0 and type(v.real_number(3, "x")) is float
    assert v.real_number(np.float32(0.5), "x") == 0.5 and v.real_number(Fraction(1, 4), "x") == 0.25
    assert math.isnan(v.real_number(math.nan, "x"))
    for bad in (True, np.bool_(True), "1", 1j, None, [1.0], 10**400):
        _refused(lambda bad=bad: v.real_number(bad, "x"))


def test_finite_positive_and_bool_checks_by_hand():
    assert v.finite_float(-2, "x") == -2.0
    for bad in (math.inf, -math.inf, math.nan):
        _refused(lambda bad=bad: v.finite_float(bad, "x"))
    assert v.positive_float(1e-300, "x") == 1e-300
    for bad in (0, -1.0, math.inf):
        _refused(lambda bad=bad: v.positive_float(bad, "x"))
    assert v.bool_flag(np.bool_(False), "x") is False and v.bool_flag(True, "x") is True
    for bad in ("False", 0, 1, None):
        _refused(lambda bad=bad: v.bool_flag(bad, "x"))


def test_integer_checks_by_hand():
    assert v.positive_int(np.int64(3), "x") == 3 and type(v.positive_int(np.int64(3), "x")) is int
    for bad in (0, -1, 1.0, True, "2"):
        _refused(lambda bad=bad: v.positive_int(bad, "x"))
    assert v.bounded_int(5, "x", 5, 7) == 5 and v.bounded_int(7, "x", 5, 7) == 7
    for bad in (4, 8, 6.0, False):
        _refused(lambda bad=bad: v.bounded_int(bad, "x", 5, 7))


def test_real_pair_seed_and_choice_by_hand():
    assert v.real_pair((0, 1), "x") == (0.0, 1.0)
    assert v.real_pair(np.array([-1.0, 2.0]), "x") == (-1.0, 2.0)
    for bad in ((1, 1), (2, 1), (0, math.inf), (0,), "ab", None):
        _refused(lambda bad=bad: v.real_pair(bad, "x"))
    assert v.seed_value(0, "x") == 0 and v.seed_value("abc", "x") == "abc"
    for bad in (-1, 1.5, None, True):
        _refused(lambda bad=bad: v.seed_value(bad, "x"))
    assert v.choice_of("b", "x", ("a", "b")) == "b"
    for bad in ("c", None, 1):
        _refused(lambda bad=bad: v.choice_of(bad, "x", ("a", "b")))


def test_arrays_by_hand():
    out = v.real_vector([1, 2.5], "x")
    assert out.dtype == np.float64 and out.flags.c_contiguous and out.tolist() == [1.0, 2.5]
    for bad in ([[1.0, 2.0]], ["a"], [1j]):
        _refused(lambda bad=bad: v.real_vector(bad, "x"))
    _refused(lambda: v.as_array([[1.0], [1.0, 2.0]], "x"))  # ragged
    f32 = v.float32_array(np.array([1.0, -2.0]), "x")
    assert f32.dtype == np.float32 and f32.tolist() == [1.0, -2.0]
    _refused(lambda: v.float32_array(np.array([1e39]), "x"))  # beyond float32: refused, not cast to inf
    X = v.float_matrix(np.ones((2, 3), np.float32), "x")
    assert X.shape == (2, 3) and X.dtype in (np.float32, np.float64)
    _refused(lambda: v.float_matrix(np.array([[1.0, np.nan]]), "x"))
    assert v.all_finite(np.ones((4, 4))) and not v.all_finite(np.array([[1.0, np.inf]]))


def test_label_vector_by_hand():
    assert list(v.label_vector([0, 1, 1], "y", 3)) == [0, 1, 1]
    assert list(v.label_vector(np.array(["a", "b"]), "y", 2)) == ["a", "b"]
    for bad in ([0, 1], [[0], [1], [1]], [0.5, np.nan, 1.0]):
        _refused(lambda bad=bad: v.label_vector(bad, "y", 3), "y")


def test_instance_bounded_float_and_same_kind_by_hand():
    ledger = object()
    assert v.instance_of(ledger, object, "x", "an object") is ledger
    assert "`x` must be a str, got int" in str(_refused(lambda: v.instance_of(3, str, "x", "a str")))
    assert v.bounded_float(2, "x", 1.0, 2.0) == 2.0 and type(v.bounded_float(1, "x", 1.0, 2.0)) is float
    for bad in (0.99, 2.01, math.nan, math.inf, True, "1"):
        _refused(lambda bad=bad: v.bounded_float(bad, "x", 1.0, 2.0))
    assert "[1, 2] (why)" in str(_refused(lambda: v.bounded_float(3, "x", 1.0, 2.0, " (why)")))
    assert v.same_kind(np.array(["a"]), ("a", "b"), "y", "`y`", "the set") is None
    assert v.same_kind(np.array([0.5]), (0, 1), "y", "`y`", "the set") is None
    error = _refused(lambda: v.same_kind(np.array(["0"]), (0, 1), "y", "`y`", "the set"), "y")
    assert str(error).startswith("`y` holds strings but the set (0, 1) are numbers")
    _refused(lambda: v.same_kind(np.array([0]), ("a",), "y", "`y`", "the set"), "y")


@settings(max_examples=80, deadline=None)
@given(
    st.one_of(
        st.integers(),
        st.floats(allow_nan=True),
        st.booleans(),
        st.text(max_size=3),
        st.none(),
        st.complex_numbers(),
        st.lists(st.floats(), max_size=2),
    )
)
def test_any_value_is_accepted_in_its_type_or_refused_naming_the_argument(value):
    for check in (v.real_number, v.finite_float, v.positive_float, v.positive_int, v.bool_flag, v.seed_value):
        try:
            out = check(value, "x")
        except DpsummError as exc:
            assert exc.argument == "x"
        else:
            assert type(out) in (float, int, bool, str)
            if check is v.positive_int:
                assert out >= 1 and out == value
            if check in (v.finite_float, v.positive_float):
                assert math.isfinite(out)


def test_declared_constraints_by_hand():
    """An option's declared constraint: the range's text, what it takes (normalised) and what it refuses, naming the
    option with the range and why."""
    counts = v.Interval(int, 1, 10)
    assert str(counts) == "[1, 10]" and counts.check(np.int64(3), "k") == 3 and type(counts.check(3, "k")) is int
    for bad, words in ((0, "between 1 and 10"), (11, "between 1 and 10"), (True, "integer"), (2.0, "integer")):
        with pytest.raises(InvalidParameterError, match=words) as info:
            counts.check(bad, "k")
        assert info.value.argument == "k"
    share = v.Interval(float, 0, 1, "left", why="the rest goes elsewhere")
    assert str(share) == "[0, 1)" and share.check(0, "s") == 0.0 and share.check(Fraction(1, 2), "s") == 0.5
    for bad in (1, 1.0, -0.1, math.nan, math.inf, "0.5", None):
        with pytest.raises(InvalidParameterError) as info:
            share.check(bad, "s")
        assert info.value.argument == "s"
    with pytest.raises(InvalidParameterError, match=r"`s` must be a number in \[0, 1\) \(the rest goes elsewhere\)"):
        share.check(1, "s")
    assert str(v.Interval(float, 0, None, "neither")) == "(0, inf)"
    with pytest.raises(InvalidParameterError, match="finite number > 0"):
        v.Interval(float, 0, None, "neither").check(0.0, "t")
    choice = v.OneOf(("a", "b"))
    assert str(choice) == "one of 'a', 'b'" and choice.check("b", "c") == "b"
    with pytest.raises(InvalidParameterError, match="must be one of 'a', 'b'"):
        choice.check("z", "c")
    with pytest.raises(TypeError):
        v.Interval(int, 0, None)


@settings(max_examples=200, deadline=None)
@given(
    low=st.integers(-5, 5),
    width=st.integers(0, 5),
    closed=st.sampled_from(["both", "left", "right", "neither"]),
    x=st.floats(-12, 12),
)
def test_a_float_interval_takes_exactly_its_members(low, width, closed, x):
    interval = v.Interval(float, low, low + width, closed)
    inside = (x > low or (x == low and closed in ("both", "left"))) and (
        x < low + width or (x == low + width and closed in ("both", "right"))
    )
    if inside:
        assert interval.check(x, "x") == x
    else:
        with pytest.raises(InvalidParameterError):
            interval.check(x, "x")


@pytest.mark.parametrize("check", [lambda x: v.float_matrix(x, "X"), lambda x: v.real_vector(x[0], "X")])
def test_a_wider_float_beyond_the_float64_range_is_refused_without_an_overflow_warning(check):
    # Was: numpy's "overflow encountered in cast" RuntimeWarning on the way (np.longdouble to float64).
    rows = np.full((3, 2), np.longdouble(1e308)) * 10
    if np.isinf(rows).any():  # a platform whose long double is float64: nothing wider to cast from
        pytest.skip("np.longdouble is float64 here")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        err = _refused(lambda: check(rows), "X")
    assert "float64 range" in str(err)
    assert check(np.full((3, 2), np.longdouble(0.5))).dtype == np.float64  # a value within the range: as before
