"""dpsumm.transport (InProcessTransport): parties answer concurrently with the same replies; a BaseException in a
party is contained, Ctrl-C is not.
"""

from __future__ import annotations

import numpy as np
import pytest

import dpsumm
from dpsumm.messages import Message, NominationReply, Setup
from dpsumm.parties import ConsumerParty, OwnerParty
from dpsumm.privacy import Csprng
from dpsumm.transport import InProcessTransport, PartyUnavailable, Transport


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


class _UserTransport(Transport):
    """A user's transport over in-process parties that drops owner-0 from its many replies, or fails in ``mode``."""

    def __init__(self, inner: InProcessTransport, mode: str) -> None:
        self.inner, self.mode = inner, mode

    @property
    def parties(self) -> list[str]:
        return self.inner.parties

    def request(self, party: str, message: Message) -> Message:
        if self.mode == "consumer-raises" and party == "consumer":
            raise KeyError("no route")
        reply = self.inner.request(party, message)
        if self.mode == "missing-field" and party == "owner-0" and isinstance(reply, NominationReply):
            object.__delattr__(reply, "tokens")
        return reply

    def request_many(self, requests):  # type: ignore[no-untyped-def]
        replies = super().request_many(requests)
        if self.mode == "drops-owner":
            replies.pop("owner-0", None)
        if self.mode == "returns-list":
            return list(replies.values())
        return replies


@pytest.mark.parametrize("mode", ["drops-owner", "returns-list", "missing-field", "consumer-raises"])
def test_a_user_transport_that_loses_replies_costs_the_run_the_party_not_a_crash(mode):
    """A user's transport whose request_many drops a party (used to raise KeyError) or returns a list (TypeError), a
    reply missing a field (AttributeError), a transport that raises for the consumer (KeyError): the owner is
    excluded, or the run is a ProtocolError naming the consumer."""
    rng = np.random.default_rng(1)
    datas = [rng.normal(size=(30, 3)) for _ in range(3)]
    validation = rng.normal(size=(20, 3))
    names = [f"owner-{k}" for k in range(3)]
    parties: dict = {n: OwnerParty(d, None, n) for n, d in zip(names, datas)}
    parties["consumer"] = ConsumerParty(validation, Csprng(5))
    transport = _UserTransport(InProcessTransport(parties), mode)

    def run():
        return dpsumm.summarize(
            [dpsumm.Owner(d, name=n) for d, n in zip(datas, names)],
            validation,
            6,
            method=dpsumm.Nominations(dim=16, purchase=dpsumm.Nominees()),
            random_state=0,
            progress=False,
            transport=transport,
        )

    if mode == "consumer-raises":
        with pytest.raises(PartyUnavailable, match="'consumer' is unavailable: KeyError"):
            run()
        return
    result = run()
    excluded = [e["owner"] for e in result.events if e.get("event") == "excluded"]
    if mode == "returns-list":  # no owner answered
        assert excluded == names and len(result) == 0
    else:
        assert excluded == ["owner-0"] and len(result) == 6
