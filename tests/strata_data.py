"""A small federation with strata, shared by the strata tests (tests/test_strata.py) and the strata purchase's
(tests/protocols/nominations/test_by_strata.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

import dpsumm

LEVELS = (("north", "south", "east"), (0, 1))
N_FEATURES = 3


def strata_data(seed: int = 0) -> tuple[list[dpsumm.Owner], np.ndarray, list[np.ndarray]]:
    """Three owners; a row's features follow its region and its flag; the consumer wants region "south" with flag 1.
    Some owner rows hold a region outside the declared levels ("west"): they must never be sold."""
    rng = np.random.default_rng(seed)
    regions = np.array(["north", "south", "east", "west"])
    owners = []
    for k in range(3):
        r = regions[rng.integers(0, 4, 150)]
        f = rng.integers(0, 2, 150)
        X = rng.normal(size=(150, N_FEATURES)) * 0.3 + np.stack([(r == "south") * 2.0, f * 1.0, (r == "west") * 3.0], 1)
        owners.append(dpsumm.Owner(X, labels=rng.integers(0, 5, 150), strata=[r, f], name=f"o{k}"))
    rv, fv = np.array(["south"] * 36 + ["north"] * 4), np.array([1] * 36 + [0] * 4)
    V = rng.normal(size=(40, N_FEATURES)) * 0.3 + np.stack([(rv == "south") * 2.0, fv * 1.0, 0 * fv], 1)
    return owners, V, [rv, fv]


def strata_method(**kw: Any) -> dpsumm.Nominations:
    """The strata purchase over :data:`LEVELS`, with ``kw`` as its options."""
    return dpsumm.Nominations(purchase=dpsumm.ByStrata(levels=LEVELS, **kw))
