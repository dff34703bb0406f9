"""dpsumm.protocols.base: a method object refuses an option it does not have (MethodOptionError naming it), for
any value.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpsumm
from dpsumm.methods import MethodOptionError
from refusal import refused


@pytest.mark.parametrize(
    "build,argument,hint",
    [
        (lambda: dpsumm.Nominations(nominee=5), "nominee", "nominees"),
        (lambda: dpsumm.PaperProtocol(nominees=5), "nominees", "Nominations"),
        (lambda: dpsumm.Uniform(foo=1), "foo", ""),
        (lambda: dpsumm.CentralGreedy(140, 0, 3), "hash_seed", "positionally"),
    ],
)
def test_a_method_object_refuses_an_option_it_does_not_have(build, argument, hint):
    err = refused(build, argument, MethodOptionError)
    assert isinstance(err, TypeError) and hint in str(err)


@settings(max_examples=60, deadline=None)
@given(
    st.one_of(
        st.text(max_size=8),
        st.integers(),
        st.floats(allow_nan=True),
        st.none(),
        st.booleans(),
        st.lists(st.integers(), max_size=3),
    )
)
def test_an_unknown_option_of_any_value_is_a_method_option_error(value):
    for cls in (dpsumm.Nominations, dpsumm.PaperProtocol, dpsumm.PaperGreedy, dpsumm.Uniform):
        refused(lambda: cls(not_an_option=value), "not_an_option", MethodOptionError)
