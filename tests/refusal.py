"""The bad-input tests' checks: a call is refused with a typed error naming the argument, before any numpy warning;
a command line is refused with one line on stderr and exit status 2."""

from __future__ import annotations

import warnings

import pytest
from hypothesis import strategies as st

from dpsumm import DpsummError, InvalidParameterError

#: An int beyond the float range: ``float(HUGE)`` raises OverflowError.
HUGE = 10**400

#: Values of every type a node config or run config (TOML, or a hand-built mapping) may hold where a key is read.
config_junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.lists(st.integers(), max_size=2),
    st.binary(max_size=4),
    st.sampled_from(["true", "True", "1", "yes", " ", "/", "\x00", "x" * 5000, "median", "a=1,b=2", "owner-0=5"]),
)


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


def one_line_exit_2(code, capsys):
    """The CLI's refusal: ``code`` (what ``dpsumm.cli.main`` returned) is 2 and stderr holds one line,
    ``dpsumm: error: ...``, which is returned."""
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dpsumm: error:"), err
    return err[0]
