"""``dpsumm.summarize``: run the protocol of Sarpatwar et al. (2019) with every party in this process."""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import accounting
from ._validation import bounded_int, check_hashable, float_matrix, positive_int, real_pair, seed_value
from .errors import InvalidParameterError
from .hashing import MAX_DIM, RFFHasher
from .parties import ConsumerParty, OwnerParty
from .protocols.baselines import exact_greedy, uniform_picks
from .protocols.paper import make_config, run_protocol
from .results import Access, Owner, SummaryResult
from .privacy import Csprng, check_random_state
from .transport import InProcessTransport, Transport
from .types import METHODS, REVEALS

__all__ = ["Owner", "SummaryResult", "Access", "summarize", "METHODS"]

#: Largest number of values (rows x features) of a generated seed set.
MAX_SEED_CELLS = 1 << 26



# ------------------------------------------------------------------------------------------ validation


def _as_owners(owners: object, n_features: int | None) -> tuple[list[np.ndarray], list[np.ndarray | None], list[str]]:
    if isinstance(owners, np.ndarray) or not isinstance(owners, Sequence) or len(owners) == 0:
        raise InvalidParameterError("`owners` must be a non-empty list of arrays or dpsumm.Owner", "owners")
    datas, labels, names = [], [], []
    for k, o in enumerate(owners):
        if isinstance(o, Owner):
            data, lab, name = o.data, o.labels, o.name or f"owner-{k}"
        else:
            data, lab, name = o, None, f"owner-{k}"
        arr = float_matrix(data, "owners", n_features=n_features)
        if n_features is None:
            n_features = arr.shape[1]
        if lab is not None:
            lab = np.asarray(lab)
            if lab.shape != (arr.shape[0],):
                raise InvalidParameterError(f"labels of {name!r} must have shape ({arr.shape[0]},), got {lab.shape}", "owners")
        datas.append(arr)
        labels.append(lab)
        names.append(str(name))
    if len(set(names)) != len(names):
        raise InvalidParameterError("owner names must be unique", "owners")
    if any(lab is None for lab in labels) and any(lab is not None for lab in labels):
        raise InvalidParameterError("give labels for every owner or for none", "owners")
    return datas, labels, names


def _seed_set(seed_set: object, count: int, n_features: int, feature_range: tuple[float, float], rng: Csprng) -> np.ndarray:
    """The public seed set: the user's array, or ``count`` rows uniform in the public box ``feature_range``."""
    if seed_set is None or (isinstance(seed_set, numbers.Integral) and not isinstance(seed_set, bool)):
        m = count if seed_set is None else int(seed_set)
        if m < 0:
            raise InvalidParameterError("`seed_set` as a count must be >= 0", "seed_set")
        if m * n_features > MAX_SEED_CELLS:
            raise InvalidParameterError(
                f"`seed_set`: {m} generated rows of {n_features} features exceed the cap of {MAX_SEED_CELLS} values", "seed_set"
            )
        lo, hi = real_pair(feature_range, "feature_range")
        # The same stream as m * n_features calls of rng.uniform(), drawn in one call.
        u = np.asarray(rng.uniform_array(m * n_features), dtype=np.float64).reshape(m, n_features)
        return (lo + (hi - lo) * u).astype(np.float32)
    return float_matrix(seed_set, "seed_set", n_features=n_features, allow_empty=True)


def _resolve_schedule(schedule: Any, privacy: Any, *, size: int, owners: int, dim: int) -> accounting.Schedule:
    """The schedule of a run: calibrated to ``privacy`` when given, else ``"paper"`` or the user's."""
    if privacy is not None:
        if not isinstance(privacy, accounting.Budget):
            raise InvalidParameterError("`privacy` must be a dpsumm.Budget or None", "privacy")
        return accounting.calibrate(privacy, size, owners, dim)
    if isinstance(schedule, str):
        if schedule != "paper":
            raise InvalidParameterError(f"`schedule` must be 'paper' or a dpsumm.accounting.Schedule, got {schedule!r}", "schedule")
        return accounting.paper_schedule(size, owners, dim)
    if not isinstance(schedule, accounting.Schedule):
        raise InvalidParameterError("`schedule` must be 'paper' or a dpsumm.accounting.Schedule", "schedule")
    if schedule.size < size or schedule.dim != dim:
        raise InvalidParameterError(
            f"`schedule` was made for size {schedule.size} and dim {schedule.dim}; this run has size {size} and dim {dim}",
            "schedule",
        )
    return schedule


# ------------------------------------------------------------------------------------------ summarize


def summarize(
    owners: Sequence[Any],
    validation: Any,
    size: int,
    *,
    method: str = "paper",
    seed_set: Any = None,
    gamma: float = 0.1,
    dim: int = 140,
    privacy: Any = None,
    schedule: Any = "paper",
    reveal: str = "points",
    random_state: Any = None,
    progress: bool = True,
    hash_seed: int | str = 0,
    feature_range: tuple[float, float] = (0.0, 1.0),
    transport: Transport | None = None,
) -> SummaryResult:
    """Build a summary of ``size`` rows from the owners' data whose MMD to ``validation`` is small.

    Runs Algorithm 3 of Sarpatwar et al. (2019) with the corrections of DESIGN.md, all parties in this
    process, exchanging typed messages through one transport.

    Parameters
    ----------
    owners : list of array-like or Owner
        Each owner's rows, shape (n_k, n_features).
    validation : array-like of shape (m, n_features)
        The consumer's validation rows (target distribution).
    size : int
        Summary size ``p`` (1 <= size <= total rows).
    method : {"paper", "paper-greedy", "uniform", "exact-greedy"}
        ``"paper"``: Algorithm 3 (h2 releases and the private auction). ``"paper-greedy"``: non-private
        greedy: the aggregator broadcasts the exact hashed means and takes the best bid (the paper's
        baseline, equivalent to Kim et al. 2016). ``"uniform"``: ``size // K`` rows from each owner, the
        remainder spread. ``"exact-greedy"``: greedy on the exact RBF kernel (centralised; small data).
    seed_set : array-like, int or None
        Public seed rows ``D_init``: an array, a count of rows to generate, or None for the schedule's
        count. Generated rows are uniform in the public box ``feature_range`` (never drawn from the
        owners' data). Removed from the returned summary.
    gamma, dim : float, int
        RBF kernel width and number of random features of h1.
    privacy : dpsumm.Budget or None
        A target budget: the per-step parameters are calibrated to it (budget-first use).
    schedule : "paper" or dpsumm.accounting.Schedule
        The privacy schedule when ``privacy`` is None. ``"paper"`` is Section 4's.
    reveal : {"points", "hashes"}
        ``"hashes"``: the aggregator receives only ``h1(x)`` of requested rows (paper App. F).
    random_state : None, int or Csprng
        None draws every random bit from OS entropy (the only private mode). An int makes the run
        bit-for-bit reproducible (independent of thread count) and is NOT private.
    progress : bool
        Show a progress bar over rounds.
    hash_seed : int or str
        Public seed of h1.
    feature_range : (float, float)
        Public box for generated seed rows.
    transport : Transport, optional
        Deliver messages through this transport instead of in-process party objects (the parties must
        be named ``owner names`` and ``"consumer"``).

    Returns
    -------
    SummaryResult
    """
    t0 = time.perf_counter()
    if not isinstance(method, str) or method not in METHODS:
        raise InvalidParameterError(f"`method` must be one of {METHODS}, got {method!r}", "method")
    if method in ("nominations", "central-greedy"):  # being built (issue 12)
        raise NotImplementedError(method)
    if not isinstance(reveal, str) or reveal not in REVEALS:
        raise InvalidParameterError(f"`reveal` must be one of {REVEALS}, got {reveal!r}", "reveal")
    if method == "exact-greedy" and reveal != "points":
        raise InvalidParameterError("`reveal='hashes'` needs a hash-based method", "reveal")
    if not isinstance(progress, (bool, np.bool_)):
        raise InvalidParameterError(f"`progress` must be a bool, got {type(progress).__name__}", "progress")
    if transport is not None and not isinstance(transport, Transport):
        raise InvalidParameterError("`transport` must be a dpsumm.transport.Transport or None", "transport")
    real_pair(feature_range, "feature_range")
    datas, labels, names = _as_owners(owners, None)
    n_features = datas[0].shape[1]
    val = float_matrix(validation, "validation", n_features=n_features)
    for k, d in enumerate(datas):
        if d.shape[0] == 0:
            raise InvalidParameterError(f"owner {names[k]!r} has no rows", "owners")
    size = positive_int(size, "size")
    total = sum(d.shape[0] for d in datas)
    if size > total:
        raise InvalidParameterError(f"`size` ({size}) exceeds the owners' total rows ({total})", "size")
    dim = bounded_int(dim, "dim", 1, MAX_DIM)
    hasher = RFFHasher(n_features, dim=dim, gamma=gamma, seed=seed_value(hash_seed, "hash_seed"))
    # Every row is hashed in float32: refuse rows whose projection would overflow, before any noise.
    for d in datas:
        check_hashable(d, "owners", hasher)
    check_hashable(val, "validation", hasher)
    sched = _resolve_schedule(schedule, privacy, size=size, owners=len(datas), dim=dim)
    rng = check_random_state(random_state)
    rng_seed, rng_consumer, rng_aggregator, rng_uniform = (rng.derive(s) for s in ("seed-set", "consumer", "aggregator", "uniform"))
    seed = _seed_set(seed_set, sched.seed_set_size, n_features, feature_range, rng_seed)
    generated = seed_set is None or (isinstance(seed_set, numbers.Integral) and not isinstance(seed_set, bool))
    check_hashable(seed, "feature_range" if generated else "seed_set", hasher)
    if method == "paper" and seed.shape[0] == 0:
        raise InvalidParameterError("the private method needs a non-empty seed set (h2 of an empty set is undefined)", "seed_set")
    K = len(datas)

    if method in ("uniform", "exact-greedy"):
        if method == "uniform":
            picks = uniform_picks(datas, size, rng_uniform)
            values = [0.0] * len(picks)
        else:
            picks, values = exact_greedy(datas, val, seed, size, hasher.gamma)
        owner_idx = np.array([k for k, _ in picks], dtype=np.int64)
        index = np.array([i for _, i in picks], dtype=np.int64)
        pts = np.stack([datas[k][i] for k, i in picks]) if picks else np.zeros((0, n_features))
        labs = None if labels[0] is None else np.array([labels[k][i] for k, i in picks])  # type: ignore[index]
        per_owner = {names[k]: int((owner_idx == k).sum()) for k in range(K)}
        accessed_total = total if method == "exact-greedy" else len(picks)
        if method == "exact-greedy":
            per_owner = {names[k]: int(datas[k].shape[0]) for k in range(K)}
        contribution = np.zeros(K)
        for k, v in zip(owner_idx, values):
            contribution[k] += v
        return SummaryResult(
            points=pts, hashes=hasher.transform(pts), labels=labs, owner=owner_idx, index=index, owner_names=names,
            accessed=Access(accessed_total, per_owner), contribution=contribution, privacy=None, trace=[], events=[],
            hasher=hasher, method=method, schedule=sched, seconds=time.perf_counter() - t0,
            seeded=bool(rng.is_seeded),
        )

    config = make_config(sched, n_features=n_features, dim=dim, gamma=hasher.gamma, hash_seed=hasher.seed, reveal=reveal,
                     private=method == "paper")
    if transport is None:
        parties: dict[str, Any] = {n: OwnerParty(d, lab, n) for n, d, lab in zip(names, datas, labels)}
        parties["consumer"] = ConsumerParty(val, rng_consumer)
        transport = InProcessTransport(parties)

    result = run_protocol(transport, names, "consumer", config, seed, rng_aggregator, hasher=hasher, method=method,
                          schedule=sched, size=size, progress=progress, started=t0,
                          with_labels=labels[0] is not None)
    result.seeded = bool(rng.is_seeded)
    if result.privacy is not None and result.seeded and hasattr(result.privacy, "mark_seeded"):
        result.privacy.mark_seeded()
    return result
