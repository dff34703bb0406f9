"""dpsumm.flower.supernode: the SuperNode wrapper's idle-poll cap (no process started: the argument checks and the
patched sleep)."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("flwr")

from dpsumm.flower import supernode  # noqa: E402


def test_the_capped_time_caps_sleep_and_passes_everything_else_through(monkeypatch):
    slept = []
    monkeypatch.setattr(time, "sleep", slept.append)
    capped = supernode._CappedTime(0.2)
    capped.sleep(3.0)
    capped.sleep(0.05)
    assert slept == [0.2, 0.05]
    assert capped.monotonic is time.monotonic and capped.time is time.time


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--poll-interval"], "needs a number"),
        (["--poll-interval", "soon"], "needs a number"),
        (["--poll-interval", "0.001"], "between 0.01 and 3"),
        (["--poll-interval", "5"], "between 0.01 and 3"),
        (["--poll-interval", "nan"], "between 0.01 and 3"),
    ],
)
def test_a_bad_poll_interval_exits_2_before_flower_starts(argv, message, capsys, monkeypatch):
    monkeypatch.setattr(supernode, "patch_idle_sleep", lambda cap: pytest.fail("reached Flower"))
    assert supernode.main(argv) == 2
    assert message in capsys.readouterr().err


def test_patching_the_loop_replaces_its_time_module_once(monkeypatch):
    import flwr.supernode.start_client_internal as loop

    monkeypatch.setattr(loop, "time", time)
    assert supernode.patch_idle_sleep(0.3) is True
    assert isinstance(loop.time, supernode._CappedTime)
    assert supernode.patch_idle_sleep(0.3) is False  # already patched: the loop's time is not the module any more
