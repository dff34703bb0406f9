"""``FlowerTransport``: the protocol's :class:`~dpsumm.transport.Transport` over a Flower ``Grid``.

The aggregator (inside a Flower ``ServerApp``) reaches each party (a Flower SuperNode) by its node id.
A request is one Flower message of type ``"query.dpsumm"`` whose content is the encoded protocol
message (:mod:`dpsumm.flower.codec`); the reply is the party's encoded reply.

Flower's own ``Grid.send_and_receive`` sleeps 3 s between polls. This transport pushes all requests of
one exchange at once and polls ``Grid.pull_messages`` every ``poll_interval`` seconds (default 0.05),
so the ServerApp side adds at most ``poll_interval`` to an exchange.

Failures: a party that does not reply within ``timeout`` seconds, replies with a Flower error (its
``ClientApp`` raised, or the SuperLink reports the node or message unavailable) or sends a payload
that is not a protocol message surfaces as :class:`~dpsumm.transport.PartyUnavailable`; the
aggregator excludes it and records the event.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from typing import Any

from flwr.app import Message as FlowerMessage
from flwr.serverapp import Grid

from ..errors import InvalidParameterError, ProtocolError
from ..messages import Message
from ..transport import PartyUnavailable, Transport
from .codec import decode, encode

__all__ = ["FlowerTransport", "MESSAGE_TYPE"]

MESSAGE_TYPE = "query.dpsumm"


class FlowerTransport(Transport):
    """Request/reply to named parties living on Flower SuperNodes.

    Parameters
    ----------
    grid : flwr.serverapp.Grid
        The ServerApp's grid.
    nodes : mapping of str to int
        Party name to Flower node id, in the order :attr:`parties` reports.
    timeout : float, default 60.0
        Seconds one exchange (one :meth:`request_many` call: every bid request of a round, or every
        point request of a round) waits for replies before the missing parties are declared
        unavailable. A round has two exchanges, so a dead owner costs a round at most ``2 * timeout``.
    poll_interval : float, default 0.05
        Seconds between two ``pull_messages`` calls while replies are outstanding.
    clock : callable, optional
        ``time.monotonic`` by default (tests may inject a fake clock).
    sleep : callable, optional
        ``time.sleep`` by default.

    Attributes
    ----------
    exchanges : list of dict
        One entry per exchange: ``kind`` (message kind), ``round`` (or None), ``parties``, ``failed``
        (parties that did not answer) and ``seconds`` (wall time from push to the last reply).
    """

    def __init__(
        self,
        grid: Grid,
        nodes: Mapping[str, int],
        *,
        timeout: float = 60.0,
        poll_interval: float = 0.05,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not isinstance(nodes, Mapping) or not nodes:
            raise InvalidParameterError("`nodes` must be a non-empty mapping of party name to node id", "nodes")
        for name, node in nodes.items():
            if not isinstance(name, str) or isinstance(node, bool) or not isinstance(node, int):
                raise InvalidParameterError(f"`nodes` must map str to int node ids, got {name!r}: {node!r}", "nodes")
        if len(set(nodes.values())) != len(nodes):
            raise InvalidParameterError("`nodes` maps two parties to the same node id", "nodes")
        for value, name in ((timeout, "timeout"), (poll_interval, "poll_interval")):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise InvalidParameterError(f"`{name}` must be a finite number > 0, got {value!r}", name)
        self._grid = grid
        self._nodes = dict(nodes)
        self.timeout = float(timeout)
        self.poll_interval = float(poll_interval)
        self._clock = clock
        self._sleep = sleep
        self.exchanges: list[dict[str, Any]] = []

    @property
    def parties(self) -> list[str]:
        return list(self._nodes)

    @property
    def nodes(self) -> dict[str, int]:
        """Party name to Flower node id."""
        return dict(self._nodes)

    def request(self, party: str, message: Message) -> Message:
        reply = self.request_many({party: message})[party]
        if isinstance(reply, PartyUnavailable):
            raise reply
        return reply

    def request_many(self, requests: Mapping[str, Message]) -> dict[str, Message | PartyUnavailable]:
        """Push every request at once, then poll for the replies until they are in or ``timeout`` passes."""
        out: dict[str, Message | PartyUnavailable] = {}
        if not requests:
            return out
        start = self._clock()
        outgoing: list[tuple[str, FlowerMessage]] = []
        for party, message in requests.items():
            node = self._nodes.get(party)
            if node is None:
                out[party] = PartyUnavailable(party, "no such party")
                continue
            outgoing.append(
                (
                    party,
                    FlowerMessage(
                        encode(message),
                        dst_node_id=node,
                        message_type=MESSAGE_TYPE,
                        group_id=message.group(),
                        ttl=max(self.timeout, 1.0),
                    ),
                )
            )
        pending: dict[str, str] = {}
        if outgoing:
            ids = list(self._grid.push_messages([m for _, m in outgoing]))
            for (party, _), mid in zip(outgoing, ids):
                if mid:
                    pending[mid] = party
                else:
                    out[party] = PartyUnavailable(party, "the SuperLink refused the message")
            for party, _ in outgoing[len(ids) :]:
                out[party] = PartyUnavailable(party, "the SuperLink refused the message")
        deadline = start + self.timeout
        while pending:
            for reply in self._grid.pull_messages(list(pending)):
                replied = pending.pop(reply.metadata.reply_to_message_id, None)  # type: ignore[arg-type]
                if replied is None:
                    continue
                out[replied] = self._unpack(replied, reply)
            if not pending:
                break
            if self._clock() >= deadline:
                for party in pending.values():
                    out[party] = PartyUnavailable(party, f"no reply within {self.timeout:g} s")
                break
            self._sleep(self.poll_interval)
        first = next(iter(requests.values()))
        self.exchanges.append(
            {
                "kind": first.kind,
                "round": getattr(first, "round", None),
                "parties": list(requests),
                "failed": [p for p, r in out.items() if isinstance(r, PartyUnavailable)],
                "seconds": self._clock() - start,
            }
        )
        return {party: out[party] for party in requests}

    @staticmethod
    def _unpack(party: str, reply: FlowerMessage) -> Message | PartyUnavailable:
        if reply.has_error():
            err = reply.error
            return PartyUnavailable(party, f"Flower error {err.code}: {err.reason}")
        try:
            return decode(reply.content)
        except ProtocolError as exc:
            return PartyUnavailable(party, f"malformed reply: {exc}")
