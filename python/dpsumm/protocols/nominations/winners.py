"""The winners purchase: the aggregator chooses among the nominees' hashes first and buys only the winners.

Exchanges: the consumer's hashed mean ``g~``, every owner's ``M`` nominees with their h1 hashes, the greedy on
the pooled hashes toward the consumer's exact mean, then one purchase of the ``size`` winners (again, without an
owner that failed to sell). Only ``size`` raw rows are bought, but the request tells each owner which of its
nominees won, which depends on the other owners' data and on ``D_v``: that message is outside the DP guarantee,
no owners' epsilon is certified, and the ledger says so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ...errors import InvalidParameterError
from .aggregator import Aggregator, Choice, Pool
from .purchase import Purchase

__all__ = ["Winners"]


@dataclass(frozen=True, repr=False)
class Winners(Purchase):
    """Buy only the winners' rows (``size`` raw rows); each owner learns which of its nominees won: uncertified."""

    name: ClassVar[str] = "winners"
    brief: ClassVar[str] = "size raw rows; owners NOT certified"
    uncertified: ClassVar[str | None] = (
        "the purchase request tells each owner which of its nominees won, which depends on the other owners' data "
        "and on D_v; no finite owners' epsilon is certified for this run (the Nominees purchase is)"
    )

    def check_method(self, method: Any) -> None:
        if method.choice == "kernel":
            raise InvalidParameterError(
                "`choice='kernel'` scores raw rows, which the Winners purchase buys only after "
                "choosing: it chooses on the hashes (choice='hashes' or None)",
                "choice",
            )

    def default_choice(self, reveal: str) -> str:
        return "hashes"

    def buy(self, aggregator: Aggregator, size: int) -> Pool:
        t0 = time.perf_counter()
        release = aggregator.target()
        aggregator.timings["target"] = time.perf_counter() - t0
        aggregator.temperature = aggregator.nominations_temperature()
        t1 = time.perf_counter()
        offered = aggregator.nominations(release.noisy_mean, aggregator.temperature)
        aggregator.timings["nominations"] = time.perf_counter() - t1
        aggregator.timings["purchase"] = 0.0
        return Pool(offered=offered, exact_mean=np.asarray(release.exact_mean, dtype=np.float64))

    def choose(self, aggregator: Aggregator, size: int, pool: Pool) -> Choice:
        """Choose on the hashes, buy the winners not bought yet; an owner that fails to sell is excluded and the
        choice is made again without its nominees."""
        n_features = aggregator.config.n_features
        bought_positions: dict[str, set[int]] = {}
        while True:
            choice = aggregator.greedy(size, pool)
            want: dict[str, list[int]] = {}
            for o, pos, _ in choice.winners:
                if pos not in bought_positions.setdefault(o, set()):
                    want.setdefault(o, []).append(pos)
            if not want:
                return choice
            wanted = {o: np.sort(pool.offered[o][0][np.asarray(p)]) for o, p in want.items()}
            t0 = time.perf_counter()
            bought = aggregator.buy(wanted, pool.offered)
            aggregator.timings["purchase"] += time.perf_counter() - t0
            for o in wanted:
                if o not in bought:
                    pool.offered.pop(o)  # excluded: choose again without its nominees
                    continue
                pts, labs = bought[o]
                positions = np.searchsorted(pool.offered[o][0], wanted[o])
                n_offered = len(pool.offered[o][0])
                if pts is not None:
                    kept = pool.rows.get(o)
                    if kept is None:
                        kept = pool.rows[o] = np.zeros((n_offered, n_features), dtype=pts.dtype)
                    kept[positions] = pts
                if labs is not None:
                    kept_labels = pool.labels.get(o)
                    if kept_labels is None:
                        kept_labels = pool.labels[o] = np.zeros(n_offered, dtype=labs.dtype)
                    kept_labels[positions] = labs
                bought_positions[o].update(int(q) for q in positions)
