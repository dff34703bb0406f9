"""A party wrapper for privacy tests: what a party receives, as bytes, and its releases (optionally replaced)."""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np

from dpsumm.messages import LabelHistogramRelease, Message, SketchReply

#: The replies that are DP releases (a test may feed a first run's releases back into a second run).
RELEASES = (SketchReply, LabelHistogramRelease)


class Recorder:
    """Wrap a party: keep every message it receives as bytes; keep its releases, or replace them by
    ``replace[i]`` (the i-th release it makes) to show that what the others see depends on it only through them."""

    def __init__(self, party: Any, replace: list[Message] | None = None) -> None:
        self.party, self.replace = party, replace
        self.received: list[bytes] = []
        self.sketches: list[Message] = []

    def handle(self, message: Message) -> Message:
        d = message.to_dict()
        self.received.append(pickle.dumps({k: (v.tobytes() if isinstance(v, np.ndarray) else v) for k, v in d.items()}))
        reply = self.party.handle(message)
        if isinstance(reply, RELEASES):
            if self.replace is not None:
                reply = self.replace[len(self.sketches)]
            self.sketches.append(reply)
        return reply
