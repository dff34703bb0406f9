"""``dpsumm.summarize``: run the protocol of Sarpatwar et al. (2019) with every party in this process."""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import accounting
from ._validation import float_matrix, positive_int, seed_value
from .errors import InvalidParameterError
from .hashing import RFFHasher
from .kernels import kernel_row_means
from .parties import Aggregator, ConsumerParty, OwnerParty, ProtocolConfig, RoundRecord
from .privacy import Csprng, check_random_state
from .transport import InProcessTransport, Transport

__all__ = ["Owner", "SummaryResult", "Access", "summarize", "METHODS"]

METHODS = ("private", "greedy", "uniform", "exact-greedy")
REVEALS = ("points", "hashes")


@dataclass(frozen=True)
class Owner:
    """A data owner's rows (and optional labels) with a display name.

    Parameters
    ----------
    data : array-like of shape (n_rows, n_features)
        The owner's private rows (float32 or float64; other real dtypes are converted).
    labels : array-like of shape (n_rows,), optional
        Sent along with a row when the aggregator asks for it.
    name : str, optional
        Defaults to ``"owner-<k>"``.
    """

    data: Any
    labels: Any = None
    name: str | None = None


@dataclass(frozen=True)
class Access:
    """Raw rows the aggregator saw (its parsimony, paper Lemma 5): in total and per owner."""

    total: int
    per_owner: dict[str, int]


@dataclass
class SummaryResult:
    """The summary and everything a user needs to audit it.

    Attributes
    ----------
    points : ndarray of shape (size, n_features) or None
        The summary rows (the seed set removed, Alg. 3 line 10). None when ``reveal="hashes"``.
    hashes : ndarray of shape (size, dim)
        ``h1`` of the summary rows. With ``reveal="hashes"`` this is all the aggregator received: train a
        linear model on it and apply it to ``hasher.transform(X_test)`` (random Fourier features make a
        linear model on ``h1`` an approximate RBF-kernel machine).
    labels : ndarray of shape (size,) or None
        The owners' labels of the summary rows, when the owners were given labels.
    owner : ndarray of shape (size,), int
        Index (into ``owners``) of the owner of each row.
    index : ndarray of shape (size,), int
        Row index of each summary row within its owner's data.
    owner_names : list of str
    accessed : Access
        Raw rows the aggregator saw, total and per owner.
    contribution : ndarray of shape (n_owners,)
        Per owner, the sum of its winning marginal bids ``h1(x).v`` (the paper's value attribution;
        each bid is the marginal gain of Eq. 3 up to the positive factor ``2/(q+1)``).
    privacy : dpsumm.accounting.Ledger or None
        Every privacy-relevant release with its cost (None for the non-private methods).
    trace : list of RoundRecord
        Per round: bids, requests, winner, pool size, and fault events.
    events : list of dict
        Every fault event of the run (owners excluded, early stop).
    hasher : RFFHasher
        The public h1 used.
    method : str
    seconds : float
    """

    points: np.ndarray | None
    hashes: np.ndarray
    labels: np.ndarray | None
    owner: np.ndarray
    index: np.ndarray
    owner_names: list[str]
    accessed: Access
    contribution: np.ndarray
    privacy: Any
    trace: list[RoundRecord]
    events: list[dict[str, Any]]
    hasher: RFFHasher
    method: str
    schedule: Any = None
    seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.owner.shape[0])

    def __repr__(self) -> str:
        return (
            f"SummaryResult(method={self.method!r}, size={len(self)}, accessed={self.accessed.total}, "
            f"owners={self.owner_names}, excluded={[e['owner'] for e in self.events if e.get('event') == 'excluded']})"
        )


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


def _config(schedule: Any, *, n_features: int, dim: int, gamma: float, hash_seed: int | str, reveal: str, private: bool) -> ProtocolConfig:
    return ProtocolConfig(
        n_features=n_features,
        dim=dim,
        gamma=gamma,
        hash_seed=hash_seed,
        reveal=reveal,
        private=private,
        eta=schedule.eta,
        t_init=schedule.t_init,
        t_subs=schedule.t_subs,
        epsilon_validation_step=schedule.epsilon_validation_step,
        epsilon_first_epoch_step=schedule.epsilon_first_epoch_step,
        epsilon_epoch=lambda epoch: schedule.epsilon_epoch_step[epoch - 1],
        epsilon_auction=schedule.epsilon_auction,
        tau=int(math.ceil(schedule.tau)),
    )


# ------------------------------------------------------------------------------------------ baselines


def _uniform(datas: list[np.ndarray], size: int, rng: Csprng) -> list[tuple[int, int]]:
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
    picks = []
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


def _exact_greedy(datas: list[np.ndarray], validation: np.ndarray, seed: np.ndarray, size: int, gamma: float) -> tuple[list[tuple[int, int]], list[float]]:
    """Greedy on the exact RBF kernel (centralised, non-private): each round adds the row maximising
    ``mean_{y in D_v} k(x, y) - q/(q+1) mean_{z in D_s} k(x, z)`` (DESIGN.md §4 with the exact kernel)."""
    X = np.concatenate(datas).astype(np.float32)
    owner_of = np.concatenate([np.full(len(d), k) for k, d in enumerate(datas)])
    index_of = np.concatenate([np.arange(len(d)) for d in datas])
    kv = kernel_row_means(X, validation, gamma)
    ks_sum = np.zeros(len(X)) if len(seed) == 0 else kernel_row_means(X, seed, gamma) * len(seed)
    taken = np.zeros(len(X), dtype=bool)
    picks, values = [], []
    q = len(seed)
    # k(X, x_i) for the row just added: one float32 matrix-vector product per round against norms computed
    # once (kernel_row_means would re-read and re-validate all of X each round).
    sq = np.einsum("ij,ij->i", X, X, dtype=np.float64)
    for _ in range(size):
        mean_s = ks_sum / q if q > 0 else np.zeros(len(X))
        score = kv - (q / (q + 1.0)) * mean_s
        score[taken] = -np.inf
        i = int(np.argmax(score))
        taken[i] = True
        picks.append((int(owner_of[i]), int(index_of[i])))
        values.append(float(score[i]))
        d2 = sq + sq[i] - 2.0 * (X @ X[i]).astype(np.float64)
        ks_sum += np.exp(-gamma * np.maximum(d2, 0.0))
        q += 1
    return picks, values


# ------------------------------------------------------------------------------------------ summarize


def summarize(
    owners: Sequence[Any],
    validation: Any,
    size: int,
    *,
    method: str = "private",
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
    method : {"private", "greedy", "uniform", "exact-greedy"}
        ``"private"``: Algorithm 3 (h2 releases and the private auction). ``"greedy"``: non-private
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
    if method not in METHODS:
        raise InvalidParameterError(f"`method` must be one of {METHODS}, got {method!r}", "method")
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
    hasher = RFFHasher(n_features, dim=dim, gamma=gamma, seed=seed_value(hash_seed, "hash_seed"))
    sched = _resolve_schedule(schedule, privacy, size=size, owners=len(datas), dim=dim)
    rng = check_random_state(random_state)
    rng_seed, rng_consumer, rng_aggregator, rng_uniform = (rng.derive(s) for s in ("seed-set", "consumer", "aggregator", "uniform"))
    seed = _seed_set(seed_set, sched.seed_set_size, n_features, feature_range, rng_seed)
    if method == "private" and seed.shape[0] == 0:
        raise InvalidParameterError("the private method needs a non-empty seed set (h2 of an empty set is undefined)", "seed_set")
    K = len(datas)

    if method in ("uniform", "exact-greedy"):
        if method == "uniform":
            picks = _uniform(datas, size, rng_uniform)
            values = [0.0] * len(picks)
        else:
            picks, values = _exact_greedy(datas, val, seed, size, hasher.gamma)
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
        )

    config = _config(sched, n_features=n_features, dim=dim, gamma=hasher.gamma, hash_seed=hasher.seed, reveal=reveal,
                     private=method == "private")
    if transport is None:
        parties: dict[str, Any] = {n: OwnerParty(d, lab, n) for n, d, lab in zip(names, datas, labels)}
        parties["consumer"] = ConsumerParty(val, rng_consumer)
        transport = InProcessTransport(parties)

    return run_protocol(transport, names, "consumer", config, seed, rng_aggregator, hasher=hasher, method=method,
                        schedule=sched, size=size, progress=progress, started=t0,
                        with_labels=labels[0] is not None)


def run_protocol(
    transport: Transport,
    owners: list[str],
    consumer: str,
    config: ProtocolConfig,
    seed: np.ndarray,
    rng: Csprng,
    *,
    hasher: RFFHasher,
    method: str,
    schedule: accounting.Schedule,
    size: int,
    progress: bool = False,
    started: float | None = None,
    extra: dict[str, Any] | None = None,
    with_labels: bool | None = None,
) -> SummaryResult:
    """Run Alg. 3 with an :class:`~dpsumm.parties.Aggregator` through ``transport`` and assemble the result.

    The one place that turns an aggregator run into a :class:`SummaryResult` and its privacy ledger, for
    :func:`summarize` (in-process parties) and for ``dpsumm.flower`` (parties on Flower nodes).
    ``with_labels=None`` keeps labels when any winning row came with one.
    """
    t0 = time.perf_counter() if started is None else started
    K = len(owners)
    ledger = accounting.Ledger() if config.private else None

    def record(party: str, mechanism: str, epsilon: float, count: int, rnd: int, label: str) -> None:
        """Put one release on the ledger: h2 releases as MWEM steps, auction rounds as AuctionEvents."""
        if ledger is None:
            return
        if mechanism == "auction":
            events = [accounting.AuctionEvent(epsilon, config.tau, K, count=count)]
        else:
            events = accounting.mwem_step_events(epsilon, count, neighbour=config.neighbour, public=mechanism == "mwem-public")
        for event in events:
            ledger.record(party, event, label=label, round=rnd)

    agg = Aggregator(transport, owners, consumer, config, seed, rng, record)
    out = agg.run(size, progress=progress)
    winners = out["winners"]
    position = {name: k for k, name in enumerate(owners)}
    owner_idx = np.array([position[w.owner] for w in winners], dtype=np.int64)
    index = np.array([w.token for w in winners], dtype=np.int64)
    hashes = np.stack([w.hash for w in winners]).astype(np.float32) if winners else np.zeros((0, config.dim), np.float32)
    pts = None
    if config.reveal == "points":
        pts = np.stack([w.point for w in winners]) if winners else np.zeros((0, config.n_features))
    if with_labels is None:
        with_labels = any(w.label is not None for w in winners)
    labs = np.array([w.label for w in winners]) if with_labels else None
    contribution = np.zeros(K)
    for k, v in zip(owner_idx, out["win_values"]):
        contribution[k] += v
    extra = dict(extra or {})
    extra["pool_left"] = out["trace"][-1].pool_size if out["trace"] else 0
    return SummaryResult(
        points=pts, hashes=hashes, labels=labs, owner=owner_idx, index=index, owner_names=list(owners),
        accessed=Access(int(sum(agg.accessed.values())), dict(agg.accessed)), contribution=contribution,
        privacy=ledger, trace=out["trace"], events=list(agg.events), hasher=hasher, method=method,
        schedule=schedule, seconds=time.perf_counter() - t0, extra=extra,
    )
