"""A party wrapper for privacy tests: what a party receives, as bytes, and its DP releases (optionally replaced)."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import numpy as np

from dpsumm.messages import LabelHistogramRelease, Message, TargetRelease
from dpsumm.protocols.nominations.by_label import LabelRelease

#: Each DP release reply and its field that the other parties may see (the rest of the reply is public or stays
#: with the trusted aggregator).
RELEASED = {LabelRelease: "values", LabelHistogramRelease: "counts", TargetRelease: "noisy_mean"}


class Recorder:
    """Wrap a party: keep every message it receives as bytes (``received``) and its DP release replies
    (``replies``, with their released values in ``released``). A test may feed a first run's releases back into a
    second run, to show that what the others see depends on this party only through them: ``replace[i]`` replaces
    its i-th release reply whole, ``values[i]`` only the released field of it."""

    def __init__(
        self, party: Any, replace: list[Message] | None = None, values: list[np.ndarray] | None = None
    ) -> None:
        self.party, self.replace, self.values = party, replace, values
        self.received: list[bytes] = []
        self.replies: list[Message] = []
        self.released: list[np.ndarray] = []

    def handle(self, message: Message) -> Message:
        d = message.to_dict()
        self.received.append(pickle.dumps({k: (v.tobytes() if isinstance(v, np.ndarray) else v) for k, v in d.items()}))
        reply = self.party.handle(message)
        field = RELEASED.get(type(reply))
        if field is not None:
            if self.replace is not None:
                reply = self.replace[len(self.replies)]
            elif self.values is not None:
                reply = dataclasses.replace(reply, **{field: self.values[len(self.replies)]})
            self.replies.append(reply)
            self.released.append(np.array(getattr(reply, field)))
        return reply
