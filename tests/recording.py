"""A party wrapper for privacy tests: what a party receives, as bytes, and its DP releases (optionally replaced);
and seeded in-process runs whose every party is so wrapped."""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import numpy as np

import dpsumm
from dpsumm.messages import Message, TargetRelease
from dpsumm.parties import ConsumerParty, OwnerParty, owner_stream
from dpsumm.protocols.nominations.cell_messages import CellHistogramRelease, CellRelease
from dpsumm.transport import InProcessTransport

#: Each DP release reply and its field that the other parties may see (the rest of the reply is public or stays
#: with the trusted aggregator).
RELEASED = {CellRelease: "values", CellHistogramRelease: "counts", TargetRelease: "noisy_mean"}


class Recorder:
    """Wrap a party: keep every message it receives as bytes (``received``) and as the message itself
    (``messages``), every reply it sends (``sent``), and its DP release replies (``replies``, with their released
    values in ``released``). A test may feed a first run's releases back into a second run, to show that what the
    others see depends on this party only through them: ``replace[i]`` replaces its i-th release reply whole,
    ``values[i]`` only the released field of it."""

    def __init__(
        self, party: Any, replace: list[Message] | None = None, values: list[np.ndarray] | None = None
    ) -> None:
        self.party, self.replace, self.values = party, replace, values
        self.received: list[bytes] = []
        self.messages: list[Message] = []
        self.sent: list[Message] = []
        self.replies: list[Message] = []
        self.released: list[np.ndarray] = []

    def handle(self, message: Message) -> Message:
        d = message.to_dict()
        self.received.append(pickle.dumps({k: (v.tobytes() if isinstance(v, np.ndarray) else v) for k, v in d.items()}))
        self.messages.append(message)
        reply = self.party.handle(message)
        field = RELEASED.get(type(reply))
        if field is not None:
            if self.replace is not None:
                reply = self.replace[len(self.replies)]
            elif self.values is not None:
                reply = dataclasses.replace(reply, **{field: self.values[len(self.replies)]})
            self.replies.append(reply)
            self.released.append(np.array(getattr(reply, field)))
        self.sent.append(reply)
        return reply


def recorded_parties(
    owners: list[np.ndarray],
    validation: np.ndarray,
    seed: int,
    *,
    labels: list[np.ndarray | None] | None = None,
    validation_labels: np.ndarray | None = None,
    replace: dict[str, list[Message]] | None = None,
    values: dict[str, list[np.ndarray]] | None = None,
) -> dict[str, Recorder]:
    """The in-process parties of a run seeded with ``seed``, each in a :class:`Recorder`: ``owner-k`` (with its
    noise stream ``owner_stream(seed, "owner-k")``) and ``consumer`` (``Csprng(seed).derive("consumer")``).
    ``replace`` and ``values`` give a party's (by name) release replacements."""
    replace, values = replace or {}, values or {}
    labels = labels if labels is not None else [None] * len(owners)
    parties = {}
    for k, (o, y) in enumerate(zip(owners, labels)):
        name = f"owner-{k}"
        party = OwnerParty(np.asarray(o), y, name, rng=owner_stream(seed, name))
        parties[name] = Recorder(party, replace.get(name), values.get(name))
    consumer = ConsumerParty(
        np.asarray(validation), dpsumm.privacy.Csprng(seed).derive("consumer"), labels=validation_labels
    )
    parties["consumer"] = Recorder(consumer, replace.get("consumer"), values.get("consumer"))
    return parties


def run_recorded(
    method: dpsumm.methods.SummaryMethod,
    owners: list[np.ndarray],
    validation: np.ndarray,
    size: int,
    seed: int,
    *,
    labels: list[np.ndarray | None] | None = None,
    validation_labels: np.ndarray | None = None,
    replace: dict[str, list[Message]] | None = None,
    values: dict[str, list[np.ndarray]] | None = None,
    parties: dict[str, Any] | None = None,
    **kw: Any,
) -> tuple[dpsumm.SummaryResult, dict[str, Any]]:
    """``dpsumm.summarize`` of ``method`` (gamma 0.3, ``random_state=seed``, no progress bar, ``kw`` on top) through
    ``parties`` (default: :func:`recorded_parties`); the result and the parties."""
    if parties is None:
        parties = recorded_parties(
            owners, validation, seed, labels=labels, validation_labels=validation_labels, replace=replace, values=values
        )
    ys = labels if labels is not None else [None] * len(owners)
    res = dpsumm.summarize(
        [dpsumm.Owner(o, labels=y) for o, y in zip(owners, ys)],
        validation,
        size,
        method=method,
        validation_labels=validation_labels,
        transport=InProcessTransport(parties),
        **{"gamma": 0.3, "random_state": seed, "progress": False, **kw},
    )
    return res, parties
