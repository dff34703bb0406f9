"""``dpsumm.summarize``: run the protocol of Sarpatwar et al. (2019) with every party in this process."""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Sequence
import logging
from typing import Any, Literal

import numpy as np

from . import accounting
from ._validation import float_matrix, positive_float, positive_int, seed_value
from .errors import InvalidParameterError
from .hashing import RFFHasher
from .preprocessing import check_kernel, median_gamma
from .parties import ConsumerParty, OwnerParty
from .protocols.baselines import exact_greedy, uniform_picks
from .protocols.paper import make_config, run_protocol
from .results import Access, Owner, SummaryResult
from .privacy import Csprng, check_random_state
from .transport import InProcessTransport, Transport
from .types import METHODS, NON_PRIVATE_METHODS, REVEALS, ArrayLike, Method, RandomState, Reveal

__all__ = ["Owner", "SummaryResult", "Access", "summarize", "METHODS"]

_log = logging.getLogger("dpsumm")


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
        lo, hi = feature_range
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise InvalidParameterError("`feature_range` must be (low, high) with low < high", "feature_range")
        u = np.array([rng.uniform() for _ in range(m * n_features)], dtype=np.float64).reshape(m, n_features)
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


def _choose_gamma(gamma: float | str, seed: np.ndarray, validation: np.ndarray, *, user_seed: bool) -> float:
    """The run's RBF width: ``gamma``, or the median heuristic on the public seed rows; warns when degenerate."""
    if gamma == "median":
        if seed.shape[0] < 2:
            raise InvalidParameterError("gamma='median' needs a seed set of at least two public rows", "gamma")
        g = median_gamma(seed)
        _log.info("gamma='median': %.6g from %d public seed rows", g, seed.shape[0])
        if not user_seed:  # generated rows in the public box: the data may not live in that box
            check_kernel(validation, g, what="the validation rows (gamma='median' of generated seed rows)")
        return g
    g = float(gamma)
    if user_seed and seed.shape[0] >= 2:
        check_kernel(seed, g, what="the public seed set")
    else:
        check_kernel(validation, g, what="the validation rows")
    return g


# ------------------------------------------------------------------------------------------ summarize


def summarize(
    owners: Sequence[Owner | ArrayLike],
    validation: ArrayLike,
    size: int,
    *,
    method: Method = "paper",
    seed_set: ArrayLike | int | None = None,
    gamma: float | Literal["median"] = 0.1,
    dim: int = 140,
    privacy: accounting.Budget | None = None,
    schedule: accounting.Schedule | Literal["paper"] | None = None,
    reveal: Reveal = "points",
    random_state: RandomState = None,
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
    gamma : float or "median"
        RBF kernel width. ``"median"``: the median heuristic ``1 / median ||x - y||²`` over pairs of the
        public seed-set rows (the user's ``seed_set`` array, or the rows generated in ``feature_range``);
        no private row is used, no budget spent. A ``DegenerateKernelWarning`` (a ``UserWarning``, also
        logged on ``logging.getLogger("dpsumm")``) is issued when ``gamma * median ||x - y||²`` over the
        public seed set (or, when the seed set is generated, over ``validation``: a local diagnostic
        shown to the caller only, sent to no party) is outside ``[0.001, 5]``
        (:mod:`dpsumm.preprocessing`): scale features with a public range
        (:func:`dpsumm.scale_to_unit`) or use ``"median"``.
    dim : int
        Number of random features of h1.
    privacy : dpsumm.Budget or None
        A target budget: the per-step parameters are calibrated to it (budget-first use). Only for the
        private methods; a non-private ``method`` with ``privacy`` is an error, and so is ``privacy``
        together with ``schedule`` (the budget decides the schedule).
    schedule : "paper", dpsumm.accounting.Schedule or None
        The privacy schedule when ``privacy`` is None. None or ``"paper"`` is Section 4's.
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
    if method not in METHODS:
        raise InvalidParameterError(f"`method` must be one of {METHODS}, got {method!r}", "method")
    # Refusals that would otherwise cost a calibration and then silently not do what was asked.
    if privacy is not None and method in NON_PRIVATE_METHODS:
        raise InvalidParameterError(
            f"`privacy` was given but method={method!r} is not private (no budget is spent or certified); "
            f"use a private method ({', '.join(m for m in METHODS if m not in NON_PRIVATE_METHODS)}) or drop `privacy`",
            "privacy")
    if privacy is not None and schedule is not None:
        raise InvalidParameterError("give `privacy` (a budget to calibrate to) or `schedule`, not both", "schedule")
    if schedule is None:
        schedule = "paper"
    if not (gamma == "median" or (isinstance(gamma, numbers.Real) and not isinstance(gamma, bool))):
        raise InvalidParameterError(f"`gamma` must be a positive number or 'median', got {gamma!r}", "gamma")
    if method in ("nominations", "central-greedy"):  # being built (issue 12)
        raise NotImplementedError(method)
    if reveal not in REVEALS:
        raise InvalidParameterError(f"`reveal` must be one of {REVEALS}, got {reveal!r}", "reveal")
    if method == "exact-greedy" and reveal != "points":
        raise InvalidParameterError("`reveal='hashes'` needs a hash-based method", "reveal")
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
    dim = positive_int(dim, "dim")
    h_seed = seed_value(hash_seed, "hash_seed")
    if gamma != "median":
        positive_float(gamma, "gamma")
    from tqdm.auto import tqdm

    # Setup has its own bar: a calibration to a budget can take seconds.
    setup = tqdm(total=3, desc="setup", unit="step", disable=not progress, leave=False)
    try:
        t_cal = time.perf_counter()
        setup.set_postfix_str("calibrating the schedule to the budget" if privacy is not None else "schedule")
        sched = _resolve_schedule(schedule, privacy, size=size, owners=len(datas), dim=dim)
        if privacy is not None:
            _log.info("calibrated the schedule to %s in %.2f s: %s", privacy, time.perf_counter() - t_cal,
                      sched.describe().replace("\n", "; "))
        setup.update(1)
        setup.set_postfix_str("seed set")
        rng = check_random_state(random_state)
        rng_seed, rng_consumer, rng_aggregator, rng_uniform = (rng.derive(s) for s in ("seed-set", "consumer", "aggregator", "uniform"))
        seed = _seed_set(seed_set, sched.seed_set_size, n_features, feature_range, rng_seed)
        setup.update(1)
        setup.set_postfix_str("kernel width and h1")
        gamma_value = _choose_gamma(gamma, seed, val, user_seed=not (seed_set is None or isinstance(seed_set, numbers.Integral)))
        hasher = RFFHasher(n_features, dim=dim, gamma=gamma_value, seed=h_seed)
        setup.update(1)
    finally:
        setup.close()
    _log.info("summarize: method=%s size=%d owners=%d rows=%d features=%d gamma=%.6g dim=%d seed rows=%d seeded=%s",
              method, size, len(datas), total, n_features, gamma_value, dim, seed.shape[0], rng.is_seeded)
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
            hasher=hasher, method=method, schedule=sched, seconds=time.perf_counter() - t0, seeded=rng.is_seeded,
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
    result.seeded = rng.is_seeded
    for event in result.events:
        _log.warning("run event: %s", event)
    _log.info("summarize: %d rows in %.2f s, aggregator saw %d raw rows; %s", len(result), result.seconds,
              result.accessed.total, result.privacy_status())
    return result
