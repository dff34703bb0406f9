"""The paper protocol tests' small data and schedule, shared by tests/protocols/paper/test_aggregator.py and the
numpy reference's tests (tests/reference/test_protocol.py)."""

from __future__ import annotations

import dataclasses

import numpy as np

from dpsumm import accounting

__all__ = ["blobs", "small_schedule"]


def blobs(seed: int = 0, K: int = 4, n: int = 60, f: int = 5) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """``K`` owners of ``n`` rows (owner k's a Gaussian blob at ``0.7 k``), 40 validation rows at 1.0 and 20 public
    seed rows uniform in [-1, 3]: ``(owners, validation, seed_set)``."""
    rng = np.random.default_rng(seed)
    owners = [rng.normal(loc=k * 0.7, scale=0.5, size=(n, f)) for k in range(K)]
    validation = rng.normal(loc=1.0, scale=0.5, size=(40, f))
    seed_set = rng.uniform(-1, 3, size=(20, f))
    return owners, validation, seed_set


def small_schedule(size: int, owners: int, dim: int = 64, **changes: object) -> accounting.Schedule:
    """The paper's schedule with 300 MWEM steps in the first epoch and 5 in later ones (or ``changes``)."""
    base = accounting.paper_schedule(size=size, owners=owners, dim=dim)
    defaults: dict[str, object] = dict(t_init=300, t_subs=5)
    defaults.update(changes)
    return dataclasses.replace(base, **defaults)  # type: ignore[arg-type]
