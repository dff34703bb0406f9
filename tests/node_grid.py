"""A Flower grid whose nodes are the ClientApp's handlers called in this process: the ServerApp's run over the
ClientApp's code with no SuperLink and no SuperNode process (a federation's messages, encoded as on the wire)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import SimpleNamespace
from typing import Any

from dpsumm.flower.codec import decode, encode
from dpsumm.messages import Message as ProtocolMessage


class NodeGrid:
    """The grid :func:`dpsumm.flower.server_app.run_summary` drives: ``node_configs`` (node id -> node config) are the
    nodes, answering each message at once through ``client_app.hello`` / ``client_app.handle`` with their own
    ``Context`` (state kept between messages, as a SuperNode keeps it). ``tamper`` (node id -> function) rewrites
    that node's protocol replies: a faulty or lying node."""

    def __init__(
        self,
        node_configs: Mapping[int, dict[str, Any]],
        run_config: dict[str, Any],
        tamper: Mapping[int, Callable[[ProtocolMessage], ProtocolMessage]] | None = None,
    ) -> None:
        from flwr.app import Context, RecordDict

        self.contexts = {
            n: Context(run_id=1, node_id=n, node_config=dict(cfg), state=RecordDict(), run_config=dict(run_config))
            for n, cfg in node_configs.items()
        }
        self.tamper = dict(tamper or {})
        self.replies: dict[str, Any] = {}
        self.sent: list[str] = []  # the message type of every message pushed

    def get_nodes(self) -> list[Any]:
        return [SimpleNamespace(node_id=n, name="") for n in self.contexts]

    def push_messages(self, messages: Iterable[Any]) -> list[str]:
        from flwr.app import Error, Message

        from dpsumm.flower import client_app

        ids = []
        for m in messages:
            mid = f"m{len(self.replies)}"
            node = m.metadata.dst_node_id
            self.sent.append(m.metadata.message_type)
            handler = client_app.hello if m.metadata.message_type == client_app.HELLO_TYPE else client_app.handle
            try:
                reply = handler(m, self.contexts[node])
                if node in self.tamper and m.metadata.message_type != client_app.HELLO_TYPE:
                    reply = Message(encode(self.tamper[node](decode(reply.content))), reply_to=m)
            except Exception as exc:  # a node's exception is an error reply, as Flower sends it
                reply = Message(Error(code=0, reason=f"{type(exc).__name__}: {exc}"), reply_to=m)
            reply.metadata.__dict__["_reply_to_message_id"] = mid
            self.replies[mid] = reply
            ids.append(mid)
        return ids

    def pull_messages(self, ids: Iterable[str]) -> list[Any]:
        return [self.replies.pop(mid) for mid in list(ids) if mid in self.replies]
