"""``python -m dpsumm.flower.supernode``: ``flower-supernode`` with a shorter idle poll (optional).

Flower 1.41's SuperNode asks the SuperLink for a new message, and when there is none sleeps **3 s**
before asking again (``flwr/supernode/start_client_internal.py``; not configurable). In a protocol of
short request/reply exchanges that sleep dominates the latency: a request typically waits most of
3 s before its node picks it up. This launcher runs the stock ``flower-supernode`` with that module's
sleeps capped at ``--poll-interval`` seconds (default 0.2) and nothing else changed; it also sets
``FLWR_SUPEREXEC_TASK_POLL_INTERVAL`` (the SuperExec's 1 s task poll, configurable in Flower) to the
same value unless already set. Every other argument goes to ``flower-supernode`` unchanged.

The cost is more polling: each node sends about ``1 / poll_interval`` requests per second to the
SuperLink while idle. It patches a private module of the pinned Flower version and falls back to the
stock behaviour (with a warning) if that module changes.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

__all__ = ["main", "patch_idle_sleep"]


class _CappedTime:
    """Stands in for the ``time`` module inside one Flower module: ``sleep`` is capped."""

    def __init__(self, cap: float) -> None:
        self._cap = cap

    def sleep(self, seconds: float) -> None:
        time.sleep(min(seconds, self._cap))

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


def patch_idle_sleep(cap: float) -> bool:
    """Cap the sleeps of Flower's SuperNode main loop at ``cap`` seconds; False if Flower changed."""
    try:
        import flwr.supernode.start_client_internal as loop
    except ImportError:
        return False
    if getattr(loop, "time", None) is not time:
        return False
    loop.time = _CappedTime(cap)  # type: ignore[attr-defined, assignment]
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``flower-supernode`` with ``argv`` (minus ``--poll-interval S``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    cap = 0.2
    if "--poll-interval" in args:
        i = args.index("--poll-interval")
        try:
            cap = float(args[i + 1])
        except (IndexError, ValueError):
            print("dpsumm.flower.supernode: --poll-interval needs a number of seconds", file=sys.stderr)
            return 2
        del args[i : i + 2]
    if not (math.isfinite(cap) and 0.01 <= cap <= 3.0):
        print("dpsumm.flower.supernode: --poll-interval must be between 0.01 and 3 seconds", file=sys.stderr)
        return 2
    os.environ.setdefault("FLWR_SUPEREXEC_TASK_POLL_INTERVAL", str(cap))
    if not patch_idle_sleep(cap):
        print(
            "dpsumm.flower.supernode: this Flower version's SuperNode loop is not the expected one; "
            "running it unpatched (3 s idle poll)",
            file=sys.stderr,
        )
    from flwr.supernode.cli import flower_supernode

    sys.argv = ["flower-supernode", *args]
    flower_supernode()
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
