"""The privacy-status paths every surface must report alike (the result, the ledger, its dict form, the CLI, Flower's
saved results): one run per path, shared by the tests of each surface."""

from __future__ import annotations

from typing import Any

import numpy as np

import dpsumm
from dpsumm.accounting.ledger import CERTIFIED, NOT_CERTIFIED, NOT_PRIVATE, SEEDED

__all__ = ["PATHS", "RUN", "LABELS", "run_paths", "_data"]


def _data():
    rng = np.random.default_rng(0)
    owners = [
        dpsumm.Owner(rng.normal(loc=k * 0.7, scale=0.5, size=(40, 4)), labels=np.full(40, k), name=f"o{k}")
        for k in range(3)
    ]
    validation = rng.normal(loc=1.0, scale=0.5, size=(30, 4))
    seed_set = rng.normal(size=(12, 4))
    return owners, validation, seed_set


RUN = dict(gamma=0.3, progress=False)


LABELS = dpsumm.Nominations(dim=32, purchase=dpsumm.ByLabel(label_set=(0, 1, 2)))


# Each path: (how to run it, the status every surface must print).
PATHS = {
    "certified nominations": (lambda o, v, s: dpsumm.summarize(o, v, 6, dpsumm.Nominations(dim=32), **RUN), CERTIFIED),
    "purchase='winners'": (
        lambda o, v, s: dpsumm.summarize(o, v, 6, dpsumm.Nominations(dim=32, purchase=dpsumm.Winners()), **RUN),
        NOT_CERTIFIED,
    ),
    "paper, Theorem-6 auction": (
        lambda o, v, s: dpsumm.summarize(
            o, v, 5, dpsumm.PaperProtocol(dim=16, epsilon_auction="theorem6"), seed_set=s, **RUN
        ),
        NOT_CERTIFIED,
    ),
    "seeded": (lambda o, v, s: dpsumm.summarize(o, v, 6, dpsumm.Nominations(dim=32), random_state=0, **RUN), SEEDED),
    # The owner-release purchase: certified by default, NOT private when seeded, on every surface.
    "purchase='labels'": (
        lambda o, v, s: dpsumm.summarize(o, v, 6, LABELS, validation_labels=np.arange(len(v)) % 3, **RUN),
        CERTIFIED,
    ),
    "seeded labels": (
        lambda o, v, s: dpsumm.summarize(
            o, v, 6, LABELS, validation_labels=np.arange(len(v)) % 3, random_state=0, **RUN
        ),
        SEEDED,
    ),
    "validation_release='exact'": (
        lambda o, v, s: dpsumm.summarize(
            o, v, 6, dpsumm.Nominations(dim=32, purchase=dpsumm.Nominees(), validation_release="exact"), **RUN
        ),
        NOT_PRIVATE,
    ),
    "non-private method": (lambda o, v, s: dpsumm.summarize(o, v, 6, "uniform", **RUN), NOT_PRIVATE),
}


def run_paths() -> dict[str, Any]:
    """Every path's result, by name."""
    owners, validation, seed_set = _data()
    return {name: run(owners, validation, seed_set) for name, (run, _) in PATHS.items()}
