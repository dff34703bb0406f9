"""dpsumm.flower.pulls: the first retry of Flower's object pulls, and only that, made shorter in the calling
process; nothing changed when Flower's pull functions are not the expected ones."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("flwr")

from flwr.supercore.inflatable import inflatable_utils  # noqa: E402
from flwr.supercore.inflatable.inflatable_utils import ObjectUnavailableError  # noqa: E402

from dpsumm.flower.pulls import patch_object_pulls  # noqa: E402

NAMES = ("pull_objects", "pull_and_inflate_object_from_tree")


@pytest.fixture
def flower_defaults(monkeypatch):
    """Flower's pull defaults, restored after the test (the patch changes them in place)."""
    for name in NAMES:
        fn = getattr(inflatable_utils, name)
        monkeypatch.setattr(fn, "__kwdefaults__", dict(fn.__kwdefaults__))
    return {name: dict(getattr(inflatable_utils, name).__kwdefaults__) for name in NAMES}


class _RecordingEvent(threading.Event):
    waits: list[float] = []

    def wait(self, timeout: float | None = None) -> bool:
        """A back-off (a wait with a timeout) is recorded and not slept; any other wait is a real one."""
        if timeout is None:
            return super().wait()
        type(self).waits.append(timeout)
        return super().wait(0)


def _retry_waits(monkeypatch, unavailable: int) -> list[float]:
    """The back-off waits of one pull_objects call whose object is unavailable ``unavailable`` times."""
    _RecordingEvent.waits = []
    monkeypatch.setattr(inflatable_utils.threading, "Event", _RecordingEvent)
    calls = []

    def pull(object_id: str) -> bytes:
        calls.append(object_id)
        if len(calls) <= unavailable:
            raise ObjectUnavailableError(object_id)
        return b"content"

    assert inflatable_utils.pull_objects(["a"], pull) == {"a": b"content"}
    return list(_RecordingEvent.waits)


def test_the_first_retry_is_the_given_seconds_and_the_doubling_and_cap_are_flowers(flower_defaults, monkeypatch):
    assert flower_defaults["pull_objects"]["initial_backoff"] == 1  # Flower's own, which the patch replaces
    stock = _retry_waits(monkeypatch, 3)
    assert len(stock) == 3 and 0.8 <= stock[0] <= 1.2 and 1.6 <= stock[1] <= 2.4  # 1 s, doubling, +-20 % jitter
    assert patch_object_pulls(0.05) is True
    for name in NAMES:
        got = getattr(inflatable_utils, name).__kwdefaults__
        assert got == {**flower_defaults[name], "initial_backoff": 0.05}  # nothing else changed: cap, tries, time
    waits = _retry_waits(monkeypatch, 3)
    assert len(waits) == 3
    for k, w in enumerate(waits):
        assert 0.8 * 0.05 * 2**k <= w <= 1.2 * 0.05 * 2**k


def test_nothing_changes_when_flowers_pull_functions_are_not_the_expected_ones(flower_defaults, monkeypatch):
    monkeypatch.setattr(inflatable_utils.pull_and_inflate_object_from_tree, "__kwdefaults__", {"max_time": 1.0})
    assert patch_object_pulls(0.05) is False
    assert inflatable_utils.pull_objects.__kwdefaults__ == flower_defaults["pull_objects"]
    monkeypatch.delattr(inflatable_utils, "pull_objects")
    assert patch_object_pulls(0.05) is False
