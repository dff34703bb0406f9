"""The random streams of one run, derived exactly as :func:`dpsumm.summarize` derives them.

``Csprng.derive`` consumes the parent stream, so the order matters: ``seed-set``, ``consumer``,
``aggregator``, ``uniform``. With a seeded ``random_state`` the ServerApp (seed set, aggregator) and
the consumer's node each derive the same streams as an in-process run with that ``random_state``:
the Flower run is then bit-for-bit the in-process run. With ``random_state=None`` every party draws
from its own machine's OS entropy (the only private mode).
"""

from __future__ import annotations

from ..privacy import Csprng, check_random_state

__all__ = ["party_streams", "STREAMS"]

STREAMS = ("seed-set", "consumer", "aggregator", "uniform")


def party_streams(random_state: int | None) -> dict[str, Csprng]:
    """The four derived streams, keyed by label (see :data:`STREAMS`)."""
    rng = check_random_state(random_state)
    return {label: rng.derive(label) for label in STREAMS}
