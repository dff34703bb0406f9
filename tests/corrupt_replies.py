"""Runs of dpsumm.summarize in which one party's reply is corrupted on its way to the aggregator (a field replaced
by junk, or the whole reply), for the tests of the aggregators' checks of replies: a consumer's bad release is a
ProtocolError, an owner's bad reply excludes that owner; never another exception or a numpy warning on the way."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dpsumm
from dpsumm.messages import Message
from dpsumm.parties import ConsumerParty, OwnerParty
from dpsumm.privacy import Csprng
from dpsumm.transport import InProcessTransport

OWNERS, ROWS, SIZE = 3, 40, 8
LETTERS = np.array(["a", "b", "c"])

#: A reply changed on its way: ``(reply, request) -> reply``.
Change = Callable[[Message, Message], Any]


def replace(**fields: Any) -> Change:
    """The reply with ``fields`` replaced (by values of any type: a faulty party's)."""
    return lambda reply, request: dataclasses.replace(reply, **fields)


class Corrupting(InProcessTransport):
    """Delivers to in-process parties, then changes the ``nth`` reply of ``kind`` from ``party`` by ``change``."""

    def __init__(self, parties: dict[str, Any], party: str, kind: str, change: Change, nth: int = 0) -> None:
        super().__init__(parties, max_workers=1)
        self.party, self.kind, self.change, self.nth, self.seen = party, kind, change, nth, 0

    def request(self, party: str, message: Message) -> Message:
        reply = super().request(party, message)
        if party == self.party and reply.kind == self.kind:
            self.seen += 1
            if self.seen == self.nth + 1:
                return self.change(reply, message)
        return reply


def run(method: Any, party: str, kind: str, change: Change, *, nth: int = 0, private: bool = False) -> Any:
    """A small run of ``method`` (strata for a ByStrata purchase, labels otherwise) with the ``nth`` ``kind`` reply
    of ``party`` changed; numpy warnings are errors. Checks the change happened."""
    rng = np.random.default_rng(21)
    labels = [rng.integers(0, 3, ROWS) for _ in range(OWNERS)]
    datas = [rng.normal(size=(ROWS, 4)) * 0.4 + y[:, None] + 0.3 * k for k, y in enumerate(labels)]
    yv = rng.integers(0, 3, 30)
    validation = rng.normal(size=(30, 4)) * 0.4 + yv[:, None]
    purchase = getattr(method, "purchase", None)
    by_strata = isinstance(purchase, dpsumm.ByStrata)
    names = [f"owner-{k}" for k in range(OWNERS)]
    strata = [[LETTERS[y]] if by_strata else None for y in labels]
    parties: dict[str, Any] = {
        n: OwnerParty(d, y, n, rng=Csprng(100 + k), strata=s)
        for k, (n, d, y, s) in enumerate(zip(names, datas, labels, strata))
    }
    parties["consumer"] = ConsumerParty(validation, Csprng(5), labels=yv, strata=[LETTERS[yv]] if by_strata else None)
    transport = Corrupting(parties, party, kind, change, nth)
    kw: dict[str, Any] = {}
    if isinstance(purchase, dpsumm.ByLabel):
        kw["validation_labels"] = yv
    if by_strata:
        kw["validation_strata"] = LETTERS[yv]
    if private:
        kw["privacy"] = dpsumm.Budget(epsilon=4.0, delta=1e-4, validation_epsilon=4.0, validation_delta=1e-2)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            warnings.simplefilter("ignore", UserWarning)
            return dpsumm.summarize(
                [dpsumm.Owner(d, labels=y, name=n, strata=s) for d, y, n, s in zip(datas, labels, names, strata)],
                validation,
                SIZE,
                method=method,
                random_state=3,
                progress=False,
                transport=transport,
                **kw,
            )
    finally:
        assert transport.seen > nth, f"no {kind} reply #{nth} from {party} to change"


def refused(method: Any, kind: str, change: Change, match: str, **kw: Any) -> None:
    """The consumer's ``kind`` release changed by ``change`` is a ProtocolError matching ``match``."""
    with pytest.raises(dpsumm.ProtocolError, match=match):
        run(method, "consumer", kind, change, **kw)


def excluded(method: Any, kind: str, change: Change, match: str, **kw: Any) -> Any:
    """``owner-0``'s ``kind`` reply changed by ``change`` excludes it (reason matching ``match``); the run's result."""
    result = run(method, "owner-0", kind, change, **kw)
    events = [e for e in result.events if e.get("event") == "excluded"]
    assert [e["owner"] for e in events] == ["owner-0"], result.events
    assert match in events[0]["reason"], events[0]["reason"]
    return result
