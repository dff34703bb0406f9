"""The one transport interface between the aggregator and the other parties.

The aggregator talks to a party only through :meth:`Transport.request` (one message out, one reply
back). :class:`InProcessTransport` delivers to party objects in the same process; the Flower transport
(``dpsumm.flower``) delivers across processes and machines. A party that raises, does not answer in
time, or is gone surfaces as :class:`PartyUnavailable`, so the aggregator handles every failure in one
place.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Protocol

from .errors import ProtocolError
from .messages import Message

__all__ = ["Party", "Transport", "InProcessTransport", "PartyUnavailable"]


class PartyUnavailable(ProtocolError):
    """A party raised, timed out or disappeared while handling a request."""

    def __init__(self, party: str, reason: str) -> None:
        super().__init__(f"party {party!r} is unavailable: {reason}")
        self.party = party
        self.reason = reason


class Party(Protocol):
    """Anything that answers protocol messages."""

    def handle(self, message: Message) -> Message: ...


class Transport(ABC):
    """Request/reply delivery from the aggregator to named parties."""

    @property
    @abstractmethod
    def parties(self) -> list[str]:
        """The names of the parties reachable through this transport, in a fixed order."""

    @abstractmethod
    def request(self, party: str, message: Message) -> Message:
        """Deliver ``message`` to ``party`` and return its reply, or raise :class:`PartyUnavailable`."""

    def request_many(self, requests: Mapping[str, Message]) -> dict[str, Message | PartyUnavailable]:
        """Deliver one message to each of several parties; failures come back as values, not raised."""
        out: dict[str, Message | PartyUnavailable] = {}
        for party, message in requests.items():
            try:
                out[party] = self.request(party, message)
            except PartyUnavailable as exc:
                out[party] = exc
        return out

    def close(self) -> None:
        """Release resources (connections, processes). The default does nothing."""


class InProcessTransport(Transport):
    """Deliver messages to party objects living in this process.

    Parameters
    ----------
    parties : mapping of str to Party
        Party name to an object with ``handle(message) -> message``.
    """

    def __init__(self, parties: Mapping[str, Party]) -> None:
        self._parties = dict(parties)

    @property
    def parties(self) -> list[str]:
        return list(self._parties)

    def request(self, party: str, message: Message) -> Message:
        target = self._parties.get(party)
        if target is None:
            raise PartyUnavailable(party, "no such party")
        try:
            reply = target.handle(message)
        except PartyUnavailable:
            raise
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException as exc:  # a party's failure must not end the run
            # BaseException, not Exception: a Rust panic inside a party surfaces as
            # pyo3_runtime.PanicException, which derives from BaseException.
            raise PartyUnavailable(party, f"{type(exc).__name__}: {exc}") from exc
        if not isinstance(reply, Message):
            raise PartyUnavailable(party, f"replied with {type(reply).__name__}, not a protocol message")
        return reply
