"""dpsumm.transport (InProcessTransport): parties answer concurrently with the same replies; a BaseException in a
party is contained, Ctrl-C is not.
"""

from __future__ import annotations

import pytest

import dpsumm
from dpsumm.messages import Setup
from dpsumm.transport import InProcessTransport, PartyUnavailable


class _Panicking:
    def handle(self, message):
        raise type("PanicException", (BaseException,), {})("called `Option::unwrap()` on a `None` value")


class _Interrupted:
    def handle(self, message):
        raise KeyboardInterrupt


def test_base_exception_in_a_party_is_contained_but_ctrl_c_is_not():
    t = InProcessTransport({"a": _Panicking(), "b": _Interrupted()})
    msg = Setup(n_features=1, dim=1, gamma=1.0, hash_seed=0, reveal="points")
    with pytest.raises(PartyUnavailable) as e:
        t.request("a", msg)
    assert "PanicException" in str(e.value)
    with pytest.raises(KeyboardInterrupt):
        t.request("b", msg)


class _Slow:
    """Records which thread answered and how many parties were inside handle() at once."""

    def __init__(self, log):
        self.log = log

    def handle(self, message):
        import threading
        import time

        self.log["inside"] += 1
        self.log["peak"] = max(self.log["peak"], self.log["inside"])
        time.sleep(0.05)
        self.log["inside"] -= 1
        self.log["threads"].add(threading.get_ident())
        return message


def test_in_process_parties_answer_concurrently_with_the_same_replies():
    log = {"inside": 0, "peak": 0, "threads": set()}
    msg = Setup(n_features=1, dim=1, gamma=1.0, hash_seed=0, reveal="points")
    parties = {f"p{k}": _Slow(log) for k in range(4)}
    parties["bad"] = _Panicking()
    t = InProcessTransport(parties, max_workers=4)
    out = t.request_many({name: msg for name in reversed(list(parties))})
    assert list(out) == list(reversed(list(parties)))  # keyed in the order asked
    assert isinstance(out["bad"], PartyUnavailable) and all(out[f"p{k}"] is msg for k in range(4))
    assert log["peak"] >= 2 and len(log["threads"]) >= 2
    t.close()
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C inside a party is not contained, from any thread
        InProcessTransport({"p0": _Slow(log), "int": _Interrupted()}, max_workers=2).request_many(
            {"p0": msg, "int": msg}
        )
    serial = InProcessTransport(parties, max_workers=1)
    log["peak"] = 0
    assert list(serial.request_many({name: msg for name in parties})) == list(parties)
    assert log["peak"] == 1
    for bad in (0, -1, 1.5, True):
        with pytest.raises(dpsumm.InvalidParameterError):
            InProcessTransport(parties, max_workers=bad)
