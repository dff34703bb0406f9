"""A transport that counts the DP releases it delivers: a test of "refused before any budget is spent" runs the call
with :func:`counting_releases` and asserts that none was asked of any party."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from dpsumm.transport import InProcessTransport


def is_release(message: Any) -> bool:
    """Whether answering ``message`` makes a DP release: it carries the ``epsilon`` it spends (the consumer's target,
    validation, histogram and direction requests; an owner's cell release), and is not a release without noise."""
    if getattr(message, "epsilon", None) is None:
        return False
    return getattr(message, "release", None) != "exact" and getattr(message, "method", None) != "exact"


@contextlib.contextmanager
def counting_releases(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str]]]:
    """Within the block, every in-process delivery of a release request is recorded as ``(party, kind)``."""
    released: list[tuple[str, str]] = []
    deliver = InProcessTransport.request

    def counted(self: InProcessTransport, party: str, message: Any) -> Any:
        if is_release(message):
            released.append((party, message.kind))
        return deliver(self, party, message)

    with monkeypatch.context() as patch:
        patch.setattr(InProcessTransport, "request", counted)
        yield released
