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
from ._validation import bounded_int, check_hashable, float_matrix, positive_float, positive_int, real_pair, seed_value
from .errors import InvalidParameterError
from .hashing import MAX_DIM, RFFHasher
from .kernels import DEFAULT_CANDIDATE_FACTOR
from .preprocessing import check_kernel, median_gamma
from .parties import ConsumerParty, OwnerParty, owner_stream
from .protocols.baselines import exact_greedy, uniform_picks
from .protocols.paper import make_config, run_protocol
from .results import Access, Owner, SummaryResult
from .privacy import Csprng, check_random_state
from .transport import InProcessTransport, Transport
from .protocols.baselines import central_greedy
from .protocols.nominations import (OWNER_DELTA, OWNER_EPSILON, PURCHASE, STOCHASTIC_GREEDY_FACTOR, NominationsConfig,
                                   run_nominations)
from .types import METHODS, NON_PRIVATE_METHODS, PURCHASES, REVEALS, ArrayLike, Method, Purchase, RandomState, Reveal

#: h1's default dimension for the nominations protocol and central greedy. No per-coordinate noise is added
#: to hashes, so d costs no privacy there; measured on MNIST (docs/experiments/), d = 500 gives several times
#: lower MMD² than the paper's 140.
DEFAULT_DIM = 500
#: The nominations protocol's validation budget when none is given.
DEFAULT_VALIDATION_BUDGET = accounting.Budget(validation_epsilon=1.0, validation_delta=1e-6)

__all__ = ["Owner", "SummaryResult", "Access", "summarize", "METHODS"]

_log = logging.getLogger("dpsumm")
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


def _nominations_config(privacy: accounting.Budget | None, *, size: int, owners: int, n_features: int,
                        hasher: RFFHasher, reveal: str, purchase: str, nominees: int | None,
                        candidates: int | None, temperature: float | None, release: str,
                        validation_rows: int | None, choice: str | None = None,
                        owner_greedy: str = "stochastic") -> NominationsConfig:
    """Check the nominations parameters (before any noise is drawn) and resolve the defaults."""
    budget = privacy if privacy is not None else DEFAULT_VALIDATION_BUDGET
    assert budget.validation_epsilon is not None and budget.validation_delta is not None  # Budget requires them
    eps_v, delta_v = budget.validation_epsilon, budget.validation_delta
    if validation_rows is not None and delta_v >= 1.0 / validation_rows:
        raise InvalidParameterError(
            f"`privacy.validation_delta` ({delta_v:g}) is not small for |D_v| = {validation_rows}: it must be below "
            f"1/|D_v| = {1.0 / validation_rows:.3g} (a delta that large allows releasing a validation row outright)",
            "privacy")
    M = 2 * size if nominees is None else positive_int(nominees, "nominees")
    if purchase != "quotas" and M * owners < size:
        raise InvalidParameterError(f"`nominees` ({M}) times the {owners} owners is below `size` ({size})", "nominees")
    C = DEFAULT_CANDIDATE_FACTOR * M if candidates is None else positive_int(candidates, "candidates")
    if C < M:
        raise InvalidParameterError(f"`candidates` ({C}) must be >= `nominees` ({M})", "candidates")
    T = None if temperature is None else positive_float(temperature, "temperature")
    if choice is None:
        choice = "kernel" if purchase in ("nominees", "quotas") and reveal == "points" else "hashes"
    if choice not in ("kernel", "hashes"):
        raise InvalidParameterError(f"`choice` must be 'kernel' or 'hashes', got {choice!r}", "choice")
    if choice == "kernel" and (purchase not in ("nominees", "quotas") or reveal != "points"):
        raise InvalidParameterError("`choice='kernel'` scores raw rows: it needs purchase='quotas' or 'nominees' and "
                                    "reveal='points'", "choice")
    if owner_greedy not in ("stochastic", "exact"):
        raise InvalidParameterError(f"`owner_greedy` must be 'stochastic' or 'exact', got {owner_greedy!r}", "owner_greedy")
    factor = STOCHASTIC_GREEDY_FACTOR if owner_greedy == "stochastic" else None
    steps, step_eps, eta = 0, 0.0, 0.0
    if release == "mwem":
        steps, eta = int(math.floor(hasher.dim ** 1.5)), 1.0 / hasher.dim
        step_eps = accounting.calibrate_mwem_steps(eps_v, delta_v, steps)
    return NominationsConfig(n_features=n_features, dim=hasher.dim, gamma=hasher.gamma, hash_seed=hasher.seed,
                             reveal=reveal, purchase=purchase, nominees=M, candidates=C, temperature=T,
                             release=release, choice=choice, epsilon=eps_v, delta=delta_v, mwem_steps=steps,
                             mwem_step_epsilon=step_eps, eta=eta, greedy_sample_factor=factor,
                             owner_epsilon=budget.epsilon if budget.epsilon is not None else OWNER_EPSILON,
                             owner_delta=budget.delta if budget.delta is not None else OWNER_DELTA)


def _resolve_schedule(schedule: Any, privacy: Any, *, size: int, owners: int, dim: int,
                      epsilon_auction: float = 0.0) -> accounting.Schedule:
    """The schedule of a run: calibrated to ``privacy`` when given, else ``"paper"`` or the user's."""
    if privacy is not None:
        if not isinstance(privacy, accounting.Budget):
            raise InvalidParameterError("`privacy` must be a dpsumm.Budget or None", "privacy")
        if not (isinstance(schedule, str) and schedule == "paper"):
            raise InvalidParameterError("give `privacy` (a budget to calibrate to) or `schedule`, not both", "schedule")
        return accounting.calibrate(privacy, size, owners, dim, epsilon_auction=epsilon_auction)
    if isinstance(schedule, str):
        if schedule != "paper":
            raise InvalidParameterError(f"`schedule` must be 'paper' or a dpsumm.accounting.Schedule, got {schedule!r}", "schedule")
        return accounting.paper_schedule(size, owners, dim, epsilon_auction=epsilon_auction)
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
    method: Method = "nominations",
    privacy: accounting.Budget | None = None,
    purchase: Purchase = PURCHASE,  # type: ignore[assignment]
    nominees: int | None = None,
    candidates: int | None = None,
    temperature: float | None = None,
    validation_release: Literal["gaussian", "mwem", "exact"] = "gaussian",
    choice: Literal["kernel", "hashes"] | None = None,
    owner_greedy: Literal["stochastic", "exact"] = "stochastic",
    seed_set: ArrayLike | int | None = None,
    gamma: float | Literal["median"] = 0.1,
    dim: int | None = None,
    schedule: accounting.Schedule | Literal["paper"] | None = None,
    epsilon_auction: float = 0.0,
    reveal: Reveal = "points",
    random_state: RandomState = None,
    progress: bool = True,
    hash_seed: int | str = 0,
    feature_range: tuple[float, float] = (0.0, 1.0),
    transport: Transport | None = None,
) -> SummaryResult:
    """Build a summary of ``size`` rows from the owners' data whose MMD to ``validation`` is small.

    All parties run in this process and exchange typed messages through one transport. The default is the
    nominations protocol with ``purchase="quotas"``, whose ledger certifies every party: each owner's
    two sketch releases at ``(OWNER_EPSILON, OWNER_DELTA) = (1, 1e-6)`` (or ``privacy.epsilon/delta``), the
    consumer's release at the validation budget, and ``3 * size`` raw owner rows bought (docs/design.md §2.5).

    Parameters
    ----------
    owners : list of array-like or Owner
        Each owner's rows, shape (n_k, n_features).
    validation : array-like of shape (m, n_features)
        The consumer's validation rows (target distribution).
    size : int
        Summary size ``p`` (1 <= size <= total rows).
    method : {"nominations", "paper", "central-greedy", "paper-greedy", "exact-greedy", "uniform"}
        ``"nominations"`` (recommended): the consumer releases its hashed validation mean once with
        Gaussian noise; every owner nominates ``nominees`` rows ranked against it; the aggregator buys
        them and keeps the exact greedy choice (:mod:`dpsumm.protocols.nominations`).
        ``"paper"``: Algorithm 3 of Sarpatwar et al. (2019) (h2 releases every round and the auction).
        Non-private baselines: ``"central-greedy"`` (all hashes in one place, exact hashed means, no seed
        rows: the strongest hashed baseline), ``"paper-greedy"`` (the paper's greedy, public seed rows inside
        the summary while it runs), ``"exact-greedy"`` (greedy on the exact RBF kernel, no seed rows),
        ``"uniform"`` (``size // K`` rows from each owner, the remainder spread).
    privacy : dpsumm.Budget or None
        ``"nominations"``: the validation release's ``(validation_epsilon, validation_delta)`` (a
        validation-only budget is enough); None means ``Budget(validation_epsilon=1, validation_delta=1e-6)``.
        ``"paper"``: per-step parameters calibrated to the budget. An error for the non-private methods.
    purchase : {"quotas", "nominees", "winners"}
        Nominations only. ``"quotas"`` (default): every owner releases two DP sketches of its rows (its own
        budget ``privacy.epsilon/delta``, default ``OWNER_EPSILON = 1``, ``OWNER_DELTA = 1e-6``, replace-one in
        its rows); the aggregator buys ``3 * size`` raw rows in all, split by quotas read off the sketches
        (docs/design.md §2.5; certified). ``"nominees"``: buy every nominee's row (``K * nominees`` raw rows;
        certified with owners' epsilon 0).
        ``"winners"``: buy only the ``size`` winners; each owner then learns which of its rows won, which is
        outside the DP guarantee (the ledger marks the owners uncertified).
    nominees : int, optional
        Nominations only: rows each owner nominates (public, the same for every owner). Default ``2 * size``.
    candidates : int, optional
        Nominations only: each owner herds among ``candidates`` of its rows, sampled with probability
        ``~ exp(h1(x).g~ / T)`` (default ``4 * nominees``; a number >= the owner's rows uses them all).
    temperature : float, optional
        Nominations only: the owners' tilt ``w(x) ~ exp(h1(x).g~ / T)``; default
        :func:`dpsumm.protocols.nominations.temperature_for` of the release's noise.
    validation_release : {"gaussian", "mwem", "exact"}
        Nominations only: the mechanism of the one validation release (``"mwem"`` is the paper's h2 at the
        same ``(epsilon_v, delta_v)``, for comparison). ``"exact"`` releases the exact mean: NOT private for
        the consumer (the result has no ledger; the epsilon_v = infinity point of the experiments).
    choice : {"kernel", "hashes"}, optional
        Nominations only: the aggregator's greedy over the pooled nominees scores with the exact RBF kernel
        against ``D_v`` (``"kernel"``; needs the raw rows: the default with ``purchase="nominees"`` and
        ``reveal="points"``; the consumer then sends ``D_v`` to the trusted aggregator) or with their h1 hashes
        against ``mean h1(D_v)`` (``"hashes"``; the default otherwise).
    owner_greedy : {"stochastic", "exact"}, default="stochastic"
        Nominations only: how each owner's greedy picks its ``nominees`` among its ``candidates``.
        ``"stochastic"``: each round evaluates ``ceil((C/M) * STOCHASTIC_GREEDY_FACTOR)`` random candidates
        (Mirzasoleiman et al. 2015; seeded by the public per-owner sample seed), ``O(C d)`` per owner;
        ``"exact"``: the exact greedy, ``O(M C d)`` per owner (8e9 operations per owner at size 1,000).
        Measured quality: README.md, "Performance of the nominations protocol".
    seed_set : array-like, int or None
        Paper methods only: public seed rows ``D_init``: an array, a count of rows to generate, or None for the
        schedule's count. Generated rows are uniform in the public box ``feature_range``. Removed from the
        returned summary.
    gamma, dim : float, int
        RBF kernel width and number of random features of h1 (default 500 for nominations and central greedy,
        140, the paper's, for the paper's methods).
    schedule : "paper" or dpsumm.accounting.Schedule
        ``"paper"``'s privacy schedule when ``privacy`` is None (Section 4's).
    epsilon_auction : float
        ``"paper"`` only: PrivAuction's epsilon. 0 (default) asks every owner every round (certified); a
        positive value runs the paper's randomized auction, which is NOT certified (see
        :class:`dpsumm.accounting.AuctionEvent`).
    reveal : {"points", "hashes"}
        ``"hashes"``: the aggregator receives only ``h1(x)`` of collected rows (paper App. F).
    random_state : None, int or Csprng
        None draws every random bit from OS entropy (the only private mode). An int makes the run
        bit-for-bit reproducible and is NOT private (the ledger and the result say so).
    progress : bool
        Show a progress bar over rounds (paper methods).
    hash_seed : int or str
        Public seed of h1.
    feature_range : (float, float)
        Public box for generated seed rows.
    transport : Transport, optional
        Deliver messages through this transport instead of in-process party objects (the parties must
        be named as the owners and ``"consumer"``).

    Returns
    -------
    SummaryResult
    """
    t0 = time.perf_counter()
    if not isinstance(method, str) or method not in METHODS:
        raise InvalidParameterError(f"`method` must be one of {METHODS}, got {method!r}", "method")
    if not isinstance(reveal, str) or reveal not in REVEALS:
        raise InvalidParameterError(f"`reveal` must be one of {REVEALS}, got {reveal!r}", "reveal")
    if purchase not in PURCHASES:
        raise InvalidParameterError(f"`purchase` must be one of {PURCHASES}, got {purchase!r}", "purchase")
    if validation_release not in ("gaussian", "mwem", "exact"):
        raise InvalidParameterError(
            f"`validation_release` must be 'gaussian', 'mwem' or 'exact', got {validation_release!r}", "validation_release")
    if validation_release == "exact" and privacy is not None:
        raise InvalidParameterError("`validation_release='exact'` releases D_v's mean without noise: no budget applies",
                                    "privacy")
    if method == "exact-greedy" and reveal != "points":
        raise InvalidParameterError("`reveal='hashes'` needs a hash-based method", "reveal")
    # Refusals that would otherwise cost a calibration and then silently not do what was asked.
    if privacy is not None and method in NON_PRIVATE_METHODS:
        raise InvalidParameterError(
            f"`privacy` was given but method={method!r} is not private (no budget is spent or certified); "
            f"use a private method ({', '.join(m for m in METHODS if m not in NON_PRIVATE_METHODS)}) or drop `privacy`",
            "privacy")
    if privacy is not None and schedule is not None:
        raise InvalidParameterError("give `privacy` (a budget to calibrate to) or `schedule`, not both", "schedule")
    if not (gamma == "median" or (isinstance(gamma, numbers.Real) and not isinstance(gamma, bool))):
        raise InvalidParameterError(f"`gamma` must be a positive number or 'median', got {gamma!r}", "gamma")
    if gamma != "median":
        positive_float(gamma, "gamma")
    if privacy is not None and not isinstance(privacy, accounting.Budget):
        raise InvalidParameterError("`privacy` must be a dpsumm.Budget or None", "privacy")
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
    if seed_set is not None and not (isinstance(seed_set, numbers.Integral) and not isinstance(seed_set, bool)):
        seed_set = float_matrix(seed_set, "seed_set", n_features=n_features, allow_empty=True)
    if method not in ("paper", "paper-greedy") and schedule is not None:
        raise InvalidParameterError(f"`schedule` is the paper's privacy schedule; method {method!r} has none", "schedule")
    if dim is None:
        dim = 140 if method in ("paper", "paper-greedy") else DEFAULT_DIM
    dim = bounded_int(dim, "dim", 1, MAX_DIM)
    h_seed = seed_value(hash_seed, "hash_seed")
    K = len(datas)
    paper_method = method in ("paper", "paper-greedy")
    from tqdm.auto import tqdm

    # Setup has its own bar: a calibration to a budget can take a moment.
    setup = tqdm(total=3, desc="setup", unit="step", disable=not progress, leave=False)
    try:
        sched: accounting.Schedule | None = None
        if paper_method:
            t_cal = time.perf_counter()
            setup.set_postfix_str("calibrating the schedule to the budget" if privacy is not None else "schedule")
            sched = _resolve_schedule("paper" if schedule is None else schedule, privacy, size=size, owners=K, dim=dim,
                                      epsilon_auction=epsilon_auction)
            if privacy is not None:
                _log.info("calibrated the schedule to %s in %.2f s: %s", privacy, time.perf_counter() - t_cal,
                          sched.describe().replace("\n", "; "))
        setup.update(1)
        setup.set_postfix_str("seed set")
        rng = check_random_state(random_state)
        rng_seed, rng_consumer, rng_aggregator, rng_uniform = (rng.derive(s) for s in ("seed-set", "consumer", "aggregator", "uniform"))
        seed = np.zeros((0, n_features), np.float32)
        if paper_method or gamma == "median":  # public rows: the paper's D_init, or the median heuristic's sample
            count = sched.seed_set_size if sched is not None else 150
            seed = _seed_set(seed_set, count, n_features, feature_range, rng_seed)
        setup.update(1)
        setup.set_postfix_str("kernel width and h1")
        user_seed = not (seed_set is None or isinstance(seed_set, numbers.Integral))
        gamma_value = _choose_gamma(gamma, seed, val, user_seed=user_seed)
        hasher = RFFHasher(n_features, dim=dim, gamma=gamma_value, seed=h_seed)
        # Every row is hashed in float32: refuse rows whose projection would overflow, before any noise.
        # A number gamma the user chose is what makes rows unhashable; with "median" it is the data's scale.
        blame = "gamma" if gamma != "median" else None
        for d in datas:
            check_hashable(d, "owners", hasher, projection_blame=blame)
        check_hashable(val, "validation", hasher, projection_blame=blame)
        if seed.shape[0]:
            check_hashable(seed, "seed_set" if user_seed else "feature_range", hasher)
        setup.update(1)
    finally:
        setup.close()
    seeded = bool(rng.is_seeded)
    _log.info("summarize: method=%s size=%d owners=%d rows=%d features=%d gamma=%.6g dim=%d seeded=%s",
              method, size, K, total, n_features, gamma_value, dim, seeded)

    if method == "nominations":
        config = _nominations_config(privacy, size=size, owners=K, n_features=n_features, hasher=hasher,
                                     reveal=reveal, purchase=purchase, nominees=nominees, candidates=candidates,
                                     temperature=temperature, release=validation_release,
                                     validation_rows=val.shape[0], choice=choice, owner_greedy=owner_greedy)
        if transport is None:
            transport = _in_process(names, datas, labels, val, rng_consumer, random_state)
        result = run_nominations(transport, names, "consumer", config, rng_aggregator, hasher=hasher, size=size, seeded=seeded,
                                 started=t0, with_labels=labels[0] is not None)
        _log.info("nominations: temperature %.4g, sigma %.4g, %d nominees per owner, choice on %s; timings %s",
                  result.extra["temperature"], result.extra["sigma"], config.nominees, config.choice,
                  result.extra["timings"])
        return _finish(result, seeded)

    if method in ("uniform", "exact-greedy", "central-greedy"):
        if method == "uniform":
            picks = uniform_picks(datas, size, rng_uniform)
            values = [0.0] * len(picks)
        elif method == "exact-greedy":
            picks, values = exact_greedy(datas, val, np.zeros((0, n_features), np.float32), size, hasher.gamma)
        else:
            picks, values = central_greedy(datas, val, size, hasher)
        owner_idx = np.array([k for k, _ in picks], dtype=np.int64)
        index = np.array([i for _, i in picks], dtype=np.int64)
        pts = np.stack([datas[k][i] for k, i in picks]) if picks else np.zeros((0, n_features))
        labs = None if labels[0] is None else np.array([labels[k][i] for k, i in picks])  # type: ignore[index]
        if method == "uniform":
            per_owner = {names[k]: int((owner_idx == k).sum()) for k in range(K)}
        else:  # a central method sees every row
            per_owner = {names[k]: int(datas[k].shape[0]) for k in range(K)}
        contribution = np.zeros(K)
        for k, v in zip(owner_idx, values):
            contribution[k] += v
        return _finish(SummaryResult(
            points=pts, hashes=hasher.transform(pts), labels=labs, owner=owner_idx, index=index, owner_names=names,
            accessed=Access(int(sum(per_owner.values())), per_owner, validation_rows=int(val.shape[0])),
            contribution=contribution, privacy=None, trace=[], events=[],
            hasher=hasher, method=method, schedule=None, seconds=time.perf_counter() - t0,
        ), seeded)

    assert sched is not None
    if seed.shape[0] == 0:
        raise InvalidParameterError(f"method {method!r} needs a non-empty seed set (h2 of an empty set is undefined)",
                                    "seed_set")
    paper_config = make_config(sched, n_features=n_features, dim=dim, gamma=hasher.gamma, hash_seed=hasher.seed, reveal=reveal,
                         private=method == "paper")
    if transport is None:
        transport = _in_process(names, datas, labels, val, rng_consumer)

    result = run_protocol(transport, names, "consumer", paper_config, seed, rng_aggregator, hasher=hasher, method=method,
                          schedule=sched, size=size, progress=progress, started=t0,
                          with_labels=labels[0] is not None)
    if result.privacy is not None:
        if seeded:
            result.privacy.mark_seeded()
        if privacy is not None:  # a Budget: report at its deltas by default
            result.privacy.set_deltas(**privacy.ledger_deltas())
    return _finish(result, seeded)


def _in_process(names: list[str], datas: list[np.ndarray], labels: list[np.ndarray | None], validation: np.ndarray,
                rng_consumer: Csprng, random_state: object = None) -> InProcessTransport:
    """Every party as an object in this process: one owner per name, and the consumer."""
    parties: dict[str, Any] = {n: OwnerParty(d, lab, n, rng=owner_stream(random_state, n))
                               for n, d, lab in zip(names, datas, labels)}
    parties["consumer"] = ConsumerParty(validation, rng_consumer)
    return InProcessTransport(parties)


def _finish(result: SummaryResult, seeded: bool) -> SummaryResult:
    """Mark a seeded result and log what the run decided."""
    result.seeded = seeded
    for event in result.events:
        _log.warning("run event: %s", event)
    _log.info("summarize: %d rows in %.2f s, aggregator saw %d raw rows; %s", len(result), result.seconds,
              result.accessed.total, result.privacy_status())
    return result
