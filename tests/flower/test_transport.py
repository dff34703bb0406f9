"""dpsumm.flower.transport (FlowerTransport) against a fake grid: replies, errors and timeouts."""

from __future__ import annotations

import numpy as np
import pytest

import dpsumm  # noqa: E402
from dpsumm.flower import encode  # noqa: E402
from dpsumm.messages import (  # noqa: E402
    Bid,
    BidRequest,
)
from dpsumm.transport import PartyUnavailable  # noqa: E402

flwr = pytest.importorskip("flwr", reason="Flower is not installed: pip install 'dpsumm[flower]' (flwr==1.41.0)")


def test_transport_times_out_and_reports_errors(task_identity: None) -> None:
    """FlowerTransport against a fake grid: one party answers, one errs, one never answers."""
    from flwr.app import Error, Message

    from dpsumm.flower import FlowerTransport

    class FakeGrid:
        def __init__(self) -> None:
            self.sent: dict[str, Message] = {}

        def push_messages(self, messages):  # noqa: ANN001
            ids = []
            for i, m in enumerate(messages):
                mid = f"m{len(self.sent)}-{i}"
                self.sent[mid] = m
                ids.append(mid)
            return ids

        def pull_messages(self, ids):  # noqa: ANN001
            out = []
            for mid in ids:
                m = self.sent[mid]
                if m.metadata.dst_node_id == 1:
                    reply = Message(encode(Bid(round=1, value=0.5, token=3)), reply_to=m)
                elif m.metadata.dst_node_id == 2:
                    reply = Message(Error(code=0, reason="boom"), reply_to=m)
                else:
                    continue
                reply.metadata.__dict__["_reply_to_message_id"] = mid
                out.append(reply)
            return out

    now = [0.0]
    t = FlowerTransport(
        FakeGrid(),
        {"a": 1, "b": 2, "c": 3},
        timeout=2.0,
        poll_interval=0.5,  # type: ignore[arg-type]
        clock=lambda: now[0],
        sleep=lambda s: now.__setitem__(0, now[0] + s),
    )
    req = BidRequest(round=1, v=np.zeros(4, np.float32))
    out = t.request_many({"a": req, "b": req, "c": req})
    assert isinstance(out["a"], Bid) and out["a"].token == 3
    assert isinstance(out["b"], PartyUnavailable) and "boom" in out["b"].reason
    assert isinstance(out["c"], PartyUnavailable) and "no reply within 2 s" in out["c"].reason
    assert t.exchanges[-1]["failed"] == ["b", "c"]
    with pytest.raises(dpsumm.InvalidParameterError, match="`timeout`"):
        FlowerTransport(FakeGrid(), {"a": 1}, timeout=0)  # type: ignore[arg-type]
