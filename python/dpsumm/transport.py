"""The one transport interface between the aggregator and the other parties.

The aggregator talks to a party only through :meth:`Transport.request` (one message out, one reply
back). :class:`InProcessTransport` delivers to party objects in the same process; the Flower transport
(``dpsumm.flower``) delivers across processes and machines. A party that raises, does not answer in
time, or is gone surfaces as :class:`PartyUnavailable`, so the aggregator handles every failure in one
place.
"""

from __future__ import annotations

import dataclasses
import os
from abc import ABC, abstractmethod
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from ._validation import bounded_int
from .errors import ProtocolError
from .messages import Message

__all__ = ["Party", "Transport", "InProcessTransport", "PartyUnavailable", "CheckedTransport", "checked_reply"]


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

    def close(self) -> None:  # noqa: B027 (optional to override: not abstract)
        """Release resources (connections, processes). The default does nothing."""


class InProcessTransport(Transport):
    """Deliver messages to party objects living in this process.

    :meth:`request_many` asks the parties concurrently, from a pool of threads: the heavy party work (an
    owner's streaming pass and greedy, in the Rust core) releases the GIL, so owners sharing a process
    answer in parallel, and a party's serial work (its greedy) overlaps another's. The replies, and
    every result of a run, are the same as when the parties answer one after another: each party is
    asked once per call, parties share no state, and the replies come back keyed by party in the order
    of the requests.

    Parameters
    ----------
    parties : mapping of str to Party
        Party name to an object with ``handle(message) -> message``.
    max_workers : int or None, default=None
        Most parties answering at once. None: the number of CPUs this process may use; 1: one party
        after another, on the calling thread.
    """

    def __init__(self, parties: Mapping[str, Party], max_workers: int | None = None) -> None:
        self._parties = dict(parties)
        if max_workers is None:
            max_workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        self.max_workers = bounded_int(max_workers, "max_workers", 1, 1024)
        self._pool: ThreadPoolExecutor | None = None
        self._pool_pid = 0  # the process that started the pool: a forked child has none of its threads

    @property
    def parties(self) -> list[str]:
        return list(self._parties)

    def request_many(self, requests: Mapping[str, Message]) -> dict[str, Message | PartyUnavailable]:
        """Deliver one message to each of several parties, concurrently (class docs).

        Failures come back as values, not raised; ``KeyboardInterrupt`` and ``SystemExit`` inside a party
        propagate, as from :meth:`request`.
        """
        workers = min(self.max_workers, len(requests))
        if workers <= 1:
            return super().request_many(requests)

        def one(item: tuple[str, Message]) -> Message | PartyUnavailable:
            try:
                return self.request(*item)
            except PartyUnavailable as exc:
                return exc

        # One pool for the transport's life (a protocol asks every round): its idle threads end with
        # close() or when the transport is garbage-collected. A forked child inherits the pool without its
        # threads (work sent to it would wait for ever): it starts its own and leaves the parent's alone.
        if self._pool is None or self._pool_pid != os.getpid():
            self._pool = ThreadPoolExecutor(max_workers=self.max_workers, thread_name_prefix="dpsumm-party")
            self._pool_pid = os.getpid()
        replies = list(self._pool.map(one, requests.items()))
        return dict(zip(requests, replies))

    def close(self) -> None:
        """Stop the pool of :meth:`request_many` (a later call starts a new one)."""
        pool, self._pool = self._pool, None
        if pool is not None and self._pool_pid == os.getpid():
            pool.shutdown(wait=True)

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


def checked_reply(party: str, reply: object) -> Message:
    """``reply`` when it is a protocol message holding every one of its fields; :class:`PartyUnavailable` otherwise
    (a party, or a transport, that answers with something else has not answered)."""
    if not isinstance(reply, Message):
        raise PartyUnavailable(party, f"replied with {type(reply).__name__}, not a protocol message")
    missing = [f.name for f in dataclasses.fields(reply) if not hasattr(reply, f.name)]
    if missing:
        raise PartyUnavailable(party, f"replied with a {reply.kind} message missing {missing}")
    return reply


class CheckedTransport(Transport):
    """Any transport, as the aggregators use it: every reply a whole protocol message (:func:`checked_reply`), every
    party asked answered or :class:`PartyUnavailable`, whatever the transport (a user's included) returns or raises.

    Parameters
    ----------
    inner : Transport
        The transport that delivers the messages.
    """

    def __init__(self, inner: Transport) -> None:
        self.inner: Transport = inner.inner if isinstance(inner, CheckedTransport) else inner

    @property
    def parties(self) -> list[str]:
        return self.inner.parties

    def request(self, party: str, message: Message) -> Message:
        try:
            reply = self.inner.request(party, message)
        except PartyUnavailable:
            raise
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException as exc:  # the transport's failure to deliver: the party did not answer
            raise PartyUnavailable(party, f"{type(exc).__name__}: {exc}") from exc
        return checked_reply(party, reply)

    def request_many(self, requests: Mapping[str, Message]) -> dict[str, Message | PartyUnavailable]:
        try:
            replies: object = self.inner.request_many(requests)
        except (KeyboardInterrupt, SystemExit, GeneratorExit):
            raise
        except BaseException as exc:
            reason = exc.reason if isinstance(exc, PartyUnavailable) else f"{type(exc).__name__}: {exc}"
            return {p: PartyUnavailable(p, reason) for p in requests}
        out: dict[str, Message | PartyUnavailable] = {}
        for p in requests:
            r = replies.get(p) if isinstance(replies, Mapping) else None
            if isinstance(r, PartyUnavailable):
                out[p] = r
                continue
            try:
                out[p] = checked_reply(p, r)
            except PartyUnavailable as exc:
                out[p] = exc
        return out

    def close(self) -> None:
        self.inner.close()
