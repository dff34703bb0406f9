"""The nominees purchase: the aggregator buys every owner's nominees and chooses among them (docs/explanation/nominations.md-§3).

Exchanges: the consumer's hashed mean ``g~`` (one DP release), every owner's ``M`` nominees ranked against it,
and one purchase of every nominee's row, a request that depends on nobody's data. What an owner receives is a
function of its own data, ``g~`` and public numbers: the owners' epsilon is 0 and every party is certified.
The aggregator buys ``K * M`` raw rows (``M = 2 * size`` by default).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .aggregator import Aggregator, Pool
from .purchase import Purchase

__all__ = ["Nominees"]


@dataclass(frozen=True, repr=False)
class Nominees(Purchase):
    """Buy the rows of every nominee; owners' epsilon 0, every party certified."""

    name: ClassVar[str] = "nominees"
    brief: ClassVar[str] = "owners' epsilon 0, K x nominees raw rows"

    def commitment(self, reveal: str, choice: str) -> str:
        # A digest of each hash when the aggregator never needs the hashes (it buys every nominee and chooses on
        # the exact kernel): 16 bytes per nominee instead of 4 d, and no hash of a row it does not buy.
        return "digests" if choice == "kernel" and reveal == "points" else "hashes"

    def buy(self, aggregator: Aggregator, size: int) -> Pool:
        t0 = time.perf_counter()
        release = aggregator.target()
        aggregator.timings["target"] = time.perf_counter() - t0
        aggregator.temperature = aggregator.nominations_temperature()
        t1 = time.perf_counter()
        nominated = aggregator.nominations(release.noisy_mean, aggregator.temperature)
        aggregator.timings["nominations"] = time.perf_counter() - t1
        t2 = time.perf_counter()
        bought = aggregator.buy({o: tokens for o, (tokens, _) in nominated.items()}, nominated)
        aggregator.timings["purchase"] = time.perf_counter() - t2
        pool = Pool(exact_mean=np.asarray(release.exact_mean, dtype=np.float64))
        for o, offer in nominated.items():
            if o in bought:
                pool.offered[o] = offer
                pool.rows[o], pool.labels[o] = bought[o]
        return pool
