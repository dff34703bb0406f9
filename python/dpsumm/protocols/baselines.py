"""Non-private baselines: uniform sampling, central greedy over all hashes, and the exact-kernel greedy."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..errors import InvalidParameterError
from ..hashing import RFFHasher
from ..kernels import exact_greedy, greedy_select
from ..privacy import Csprng
from ..results import Access, SummaryResult
from .base import LocalData, RunSetup, SummaryMethod, dim_option, hash_seed_option

__all__ = ["CentralGreedy", "ExactGreedy", "Uniform", "BASELINE_DIM", "uniform_picks", "central_greedy"]

# ------------------------------------------------------------------------------------------ baselines


def uniform_picks(datas: list[np.ndarray], size: int, rng: Csprng) -> list[tuple[int, int]]:
    """``size // K`` rows from each owner, uniformly without replacement; the remainder (and the share of
    owners with too few rows) goes to owners in a random order, one row at a time."""
    K = len(datas)
    counts = [0] * K
    remaining = size
    quota = size // K
    for k in range(K):
        counts[k] = min(quota, len(datas[k]))
        remaining -= counts[k]
    while remaining > 0:
        order = [k for k in _permutation(K, rng) if counts[k] < len(datas[k])]
        for k in order[:remaining]:
            counts[k] += 1
        remaining -= len(order[:remaining])
    picks: list[tuple[int, int]] = []
    for k in range(K):
        rows = _permutation(len(datas[k]), rng)[: counts[k]]
        picks.extend((k, int(i)) for i in sorted(rows))
    return picks


def _permutation(n: int, rng: Csprng) -> list[int]:
    """A uniform permutation of range(n) (Fisher-Yates on the CSPRNG)."""
    p = list(range(n))
    for i in range(n - 1, 0, -1):
        j = rng.integers(i + 1)
        p[i], p[j] = p[j], p[i]
    return p


def central_greedy(
    datas: list[np.ndarray], validation: np.ndarray, size: int, hasher: RFFHasher
) -> tuple[list[tuple[int, int]], list[float]]:
    """Central greedy over all hashes (non-private; the strongest hashed baseline).

    Every owner's rows are hashed in one place; each round adds the row maximising
    ``h1(x).(g_v - q/(q+1) mean_{s in S} h1(s))`` with ``g_v = mean h1(D_v)`` exact and ``S`` the summary so far,
    which starts empty (no seed rows). Ties go to the lowest (owner, row). This is the greedy the nominations
    protocol's aggregator runs, over every row instead of the nominees.
    """
    H = np.concatenate([hasher.transform(d) for d in datas])
    owner_of = np.concatenate([np.full(len(d), k) for k, d in enumerate(datas)])
    index_of = np.concatenate([np.arange(len(d)) for d in datas])
    g_v = hasher.transform(validation).astype(np.float64).mean(0)
    picks, values = greedy_select(H, g_v, size)
    return [(int(owner_of[i]), int(index_of[i])) for i in picks], [float(v) for v in values]


# ------------------------------------------------------------------------------------------ the method objects

#: h1's dimension for the baselines (central greedy hashes with it; the others report their summary's hashes).
BASELINE_DIM = 500


@dataclass(frozen=True, repr=False)
class _CentralMethod(SummaryMethod):
    """A non-private baseline that sees every row in one place (never over a transport)."""

    distributed: ClassVar[bool] = False

    dim: int = dim_option(BASELINE_DIM)
    hash_seed: int | str = hash_seed_option()

    def picks(self, local: LocalData, size: int, hasher: RFFHasher) -> tuple[list[tuple[int, int]], list[float]]:
        """``(owner, row)`` of each summary row, and its greedy gain."""
        raise NotImplementedError

    def run(self, setup: RunSetup) -> SummaryResult:
        local = setup.local
        if local is None:
            raise InvalidParameterError(f"method {self.name!r} needs every party's rows in this process", "method")
        datas, labels, hasher = local.datas, local.labels, setup.hasher
        K, n_features = len(datas), setup.n_features
        picks, values = self.picks(local, setup.size, hasher)
        owner_idx = np.array([k for k, _ in picks], dtype=np.int64)
        index = np.array([i for _, i in picks], dtype=np.int64)
        pts = np.stack([datas[k][i] for k, i in picks]) if picks else np.zeros((0, n_features))
        labs = None if labels[0] is None else np.array([labels[k][i] for k, i in picks])  # type: ignore[index]
        if self.name == "uniform":
            per_owner = {setup.owners[k]: int((owner_idx == k).sum()) for k in range(K)}
        else:  # a central method sees every row
            per_owner = {setup.owners[k]: int(datas[k].shape[0]) for k in range(K)}
        contribution = np.zeros(K)
        for k, v in zip(owner_idx, values):
            contribution[k] += v
        return SummaryResult(
            points=pts,
            hashes=hasher.transform(pts),
            labels=labs,
            owner=owner_idx,
            index=index,
            owner_names=list(setup.owners),
            accessed=Access(int(sum(per_owner.values())), per_owner, validation_rows=int(local.validation.shape[0])),
            contribution=contribution,
            privacy=None,
            trace=[],
            events=[],
            hasher=hasher,
            method=self.name,
            schedule=None,
            seconds=time.perf_counter() - setup.started,
        )


@dataclass(frozen=True, repr=False)
class CentralGreedy(_CentralMethod):
    """Central greedy over all hashes (non-private; the strongest hashed baseline): every row hashed in one place,
    the exact hashed validation mean, no seed rows (:func:`central_greedy`).

    Parameters
    ----------
    dim : int, default=500
        h1's number of random features.
    hash_seed : int or str, default=0
    """

    name: ClassVar[str] = "central-greedy"

    def picks(self, local: LocalData, size: int, hasher: RFFHasher) -> tuple[list[tuple[int, int]], list[float]]:
        return central_greedy(local.datas, local.validation, size, hasher)


@dataclass(frozen=True, repr=False)
class ExactGreedy(_CentralMethod):
    """Greedy on the exact RBF kernel over every raw row (non-private; the bar every private method is measured
    against): no hashing, no seed rows (:func:`exact_greedy`).

    Parameters
    ----------
    dim : int, default=500
        Dimension of the h1 hashes reported with the summary (``result.hashes``); the choice does not use them.
    hash_seed : int or str, default=0
    """

    name: ClassVar[str] = "exact-greedy"

    def picks(self, local: LocalData, size: int, hasher: RFFHasher) -> tuple[list[tuple[int, int]], list[float]]:
        n_features = local.validation.shape[1]
        return exact_greedy(local.datas, local.validation, np.zeros((0, n_features), np.float32), size, hasher.gamma)


@dataclass(frozen=True, repr=False)
class Uniform(_CentralMethod):
    """Uniform sampling (non-private): ``size // K`` rows from each owner, the remainder spread
    (:func:`uniform_picks`).

    Parameters
    ----------
    dim : int, default=500
        Dimension of the h1 hashes reported with the summary.
    hash_seed : int or str, default=0
    """

    name: ClassVar[str] = "uniform"

    def picks(self, local: LocalData, size: int, hasher: RFFHasher) -> tuple[list[tuple[int, int]], list[float]]:
        picks = uniform_picks(local.datas, size, local.rng_uniform)
        return picks, [0.0] * len(picks)
