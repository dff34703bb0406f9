"""The nominations protocol: owners nominate, the aggregator chooses (docs/design.md §2-§5).

Three exchanges in all, whatever the summary size:

1. **Target.** The consumer releases ``g~ = mean h1(D_v) + noise`` once (a discrete Gaussian calibrated to
   ``(epsilon_v, delta_v)`` under replace-one in ``D_v``; or the paper's h2 as the alternative), and gives the
   exact mean to the trusted aggregator.
2. **Nominations.** Every owner ranks its own rows using only its data, ``g~`` and public parameters, and
   sends the h1 hashes of its ``M`` nominees (``M`` is public and fixed before the run).
3. **Purchase.** ``purchase="nominees"`` (default): the aggregator buys the rows of every nominee (a request
   that depends on nobody's data), runs the exact greedy over the pooled hashes toward the exact validation
   mean, and keeps ``size`` rows. ``purchase="winners"``: it chooses first and buys only the winners (fewer raw
   rows, but an owner learns which of its nominees won, which depends on the other owners' data: that one
   message is outside the DP guarantee, and the ledger says so).

What an owner receives is a function of its own data, ``g~`` and public parameters, so the owners' epsilon of
the run is 0; the consumer's is the release's ``(epsilon_v, delta_v)``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
import logging
from typing import Any, Callable, ClassVar, Literal

import numpy as np

from .. import accounting
from .._validation import bounded_int, choice_of, positive_float
from ..errors import InvalidParameterError, ProtocolError
from ..hashing import RFFHasher
from ..kernels import DEFAULT_CANDIDATE_FACTOR, greedy_select
from ..parties import nominate_rows
from ..privacy import Csprng
from ..messages import NominationReply, NominationRequest, PurchaseReply, PurchaseRequest, TargetRelease, TargetRequest
from ..results import Access, SummaryResult
from ..transport import PartyUnavailable, Transport
from .base import MAX_COUNT, Plan, RunSetup, SummaryMethod
from .baselines import exact_greedy

_log = logging.getLogger("dpsumm")

__all__ = ["Nominations", "DEFAULT_VALIDATION_BUDGET", "DEFAULT_DIM", "NominationsConfig", "NominationsAggregator", "nominate_rows", "temperature_for", "run_nominations",
           "TEMPERATURE_PER_SIGMA", "TEMPERATURE_FLOOR", "STOCHASTIC_GREEDY_FACTOR"]

#: The tilt's temperature in units of the noise in an owner's relevance score ``h1(x).g~`` (whose standard
#: deviation is ``sigma ||h1(x)|| ~ sigma``), measured on MNIST (docs/experiments/nominations-temperature).
TEMPERATURE_PER_SIGMA = 5.0
#: The temperature when the release has (almost) no noise, measured likewise.
TEMPERATURE_FLOOR = 0.2
#: ``owner_greedy="stochastic"``: each round of an owner's greedy evaluates ``ceil((C/M) * factor)`` random
#: candidates (Mirzasoleiman et al. 2015, factor = ln(1/eps)); measured on MNIST in
#: benches/nominate_stochastic_mnist.py (README.md, "Performance of the nominations protocol").
STOCHASTIC_GREEDY_FACTOR = 8.0


def temperature_for(sigma: float) -> float:
    """The default temperature of the owners' tilt for a release with per-coordinate noise ``sigma``.

    ``T = max(TEMPERATURE_FLOOR, TEMPERATURE_PER_SIGMA * sigma)``. The relevance score of a row is
    ``s(x) = h1(x).g~ = h1(x).g_v + h1(x).z`` with ``z ~ N(0, sigma^2 I)``: its noise has standard deviation
    ``sigma ||h1(x)||`` (``||h1(x)|| ~ 1``). A tilt ``exp(s/T)`` with ``T`` several times that noise keeps the
    weights' noise factor ``exp(h1(x).z/T)`` near 1, while still concentrating on relevant rows.
    """
    if not math.isfinite(sigma) or sigma < 0:
        raise InvalidParameterError(f"`sigma` must be finite and >= 0, got {sigma!r}", "sigma")
    return max(TEMPERATURE_FLOOR, TEMPERATURE_PER_SIGMA * sigma)


@dataclass(frozen=True)
class NominationsConfig:
    """Every public number of a nominations run."""

    n_features: int
    dim: int
    gamma: float
    hash_seed: int | str
    reveal: str  # "points" or "hashes"
    purchase: str  # "nominees" or "winners"
    nominees: int  # M per owner
    candidates: int  # C per owner (rows sampled for the herding, >= nominees)
    temperature: float | None  # None: temperature_for(sigma of the release)
    release: str  # "gaussian", "mwem" or "exact"
    choice: str = "hashes"  # the aggregator's greedy: on the pooled "hashes", or on the exact "kernel" (raw rows)
    greedy_sample_factor: float | None = None  # owners' greedy: None exact, r > 0 stochastic (ceil((C/M) r) per round)
    epsilon: float = 0.0  # the release's (epsilon_v, delta_v); 0 for "exact"
    delta: float = 0.0
    mwem_steps: int = 0  # "mwem": steps and per-step epsilon, on the grid eta
    mwem_step_epsilon: float = 0.0
    eta: float = 0.0


@dataclass
class _Nominee:
    owner: str
    token: int
    hash: np.ndarray


class NominationsAggregator:
    """The trusted aggregator of the nominations protocol.

    It reaches the consumer and the owners only through ``transport``; an owner that fails, sends a
    malformed or non-finite reply, too many or too few nominees, or rows that do not hash to its nominated
    hashes, is excluded with an event and the run completes with the others.
    """

    def __init__(self, transport: Transport, owners: list[str], consumer: str, config: NominationsConfig,
                 rng: Csprng, record: Callable[..., None] | None = None) -> None:
        self.transport = transport
        self.owners = list(owners)
        self.consumer = consumer
        self.config = config
        self.rng = rng
        self._record = record or (lambda *a, **k: None)
        self.hasher = RFFHasher(config.n_features, dim=config.dim, gamma=config.gamma, seed=config.hash_seed)
        self.active = {o: True for o in self.owners}
        self.accessed = {o: 0 for o in self.owners}
        self.hashes_seen = {o: 0 for o in self.owners}
        self.n_rows: dict[str, int] = {}
        self.events: list[dict[str, Any]] = []
        self.timings: dict[str, float] = {}
        self.exchanges = 0
        self.temperature = float("nan")
        self.validation_rows = 0
        self.sigma = float("nan")
        self.validation: np.ndarray | None = None

    def _exclude(self, owner: str, reason: str, phase: str) -> None:
        if not self.active.get(owner, False):
            return
        self.active[owner] = False
        self.events.append({"phase": phase, "owner": owner, "event": "excluded", "reason": reason})

    # -- exchange 1 ------------------------------------------------------------------------------------

    def target(self) -> TargetRelease:
        c = self.config
        req = TargetRequest(n_features=c.n_features, dim=c.dim, gamma=c.gamma, hash_seed=c.hash_seed,
                            release=c.release, epsilon=c.mwem_step_epsilon if c.release == "mwem" else c.epsilon,
                            delta=c.delta, steps=c.mwem_steps, eta=c.eta, send_rows=c.choice == "kernel")
        self.exchanges += 1
        reply = self.transport.request(self.consumer, req)
        if not isinstance(reply, TargetRelease):
            raise ProtocolError(f"consumer sent {type(reply).__name__}, not a target release")
        for name in ("noisy_mean", "exact_mean"):
            arr = np.asarray(getattr(reply, name))
            if arr.shape != (c.dim,) or not np.isfinite(arr).all():
                raise ProtocolError(f"consumer sent a malformed {name} (shape {arr.shape}, finite {np.isfinite(arr).all()})")
        if isinstance(reply.n_rows, bool) or not isinstance(reply.n_rows, (int, np.integer)) or reply.n_rows < 1:
            raise ProtocolError(f"consumer sent an impossible validation size {reply.n_rows!r}")
        self.validation_rows = int(reply.n_rows)
        if c.choice == "kernel":
            rows = None if reply.rows is None else np.asarray(reply.rows)
            if rows is None or rows.shape != (reply.n_rows, c.n_features) or not np.isfinite(rows).all():
                raise ProtocolError("consumer did not send its validation rows for the exact-kernel choice")
            self.validation = rows
        self.sigma = float(reply.sigma)
        if c.release == "gaussian":
            cal = accounting.calibrate_gaussian(c.epsilon, c.delta, sensitivity=2.0 * math.sqrt(2.0) / reply.n_rows,
                                                dim=c.dim)
            if not math.isclose(float(reply.sigma), float(cal.sigma), rel_tol=1e-9):
                raise ProtocolError(f"consumer released with sigma {reply.sigma!r}, the calibration gives {cal.sigma!r}")
            self._record("validation", cal.event(), "g~ = mean h1(D_v) + discrete Gaussian")
        elif c.release == "mwem":
            for event in accounting.mwem_step_events(c.mwem_step_epsilon, c.mwem_steps):
                self._record("validation", event, "g~ = h2(h1(D_v))")
        return reply

    # -- exchange 2 ------------------------------------------------------------------------------------

    def nominations(self, g_tilde: np.ndarray, temperature: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        c = self.config
        seeds = self.rng.derive("nomination-samples")
        msgs = {o: NominationRequest(n_features=c.n_features, dim=c.dim, gamma=c.gamma, hash_seed=c.hash_seed,
                                     target=np.asarray(g_tilde, dtype=np.float64), nominees=c.nominees,
                                     temperature=float(temperature), candidates=int(c.candidates), reveal=c.reveal,
                                     sample_seed=int(seeds.integers(2**63)),
                                     greedy_sample_factor=c.greedy_sample_factor)
                for o in self.owners}
        self.exchanges += 1
        replies = self.transport.request_many(msgs)
        out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        bound = math.sqrt(2.0 / c.dim) * (1 + 1e-6)
        for o in self.owners:
            r = replies[o]
            if isinstance(r, PartyUnavailable):
                self._exclude(o, r.reason, "nominations")
                continue
            problem = self._check_nomination(r, bound)
            if problem is not None:
                self._exclude(o, problem, "nominations")
                continue
            assert isinstance(r, NominationReply)
            tokens = np.asarray(r.tokens).astype(np.int64)
            hashes = np.ascontiguousarray(r.hashes, dtype=np.float32)
            order = np.argsort(tokens, kind="stable")  # pool in (owner, row) order: ties go to the lowest row
            self.n_rows[o] = int(r.n_rows)
            self.hashes_seen[o] = int(len(tokens))
            out[o] = (tokens[order], hashes[order])
        return out

    def _check_nomination(self, r: object, bound: float) -> str | None:
        c = self.config
        if not isinstance(r, NominationReply):
            return f"replied with {type(r).__name__}, not nominations"
        n = r.n_rows
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            return f"reported an impossible row count {n!r}"
        tokens = np.asarray(r.tokens)
        hashes = np.asarray(r.hashes)
        want = min(c.nominees, int(n))
        if tokens.ndim != 1 or tokens.dtype.kind not in "iu":
            return "sent tokens that are not a 1-D integer array"
        if len(tokens) != want:
            return f"sent {len(tokens)} nominees, the run asks for {want} (min(M, rows))"
        if len(np.unique(tokens)) != len(tokens) or (len(tokens) and (tokens.min() < 0 or tokens.max() >= n)):
            return "sent repeated or out-of-range tokens"
        if hashes.shape != (want, c.dim) or hashes.dtype.kind != "f":
            return f"sent hashes of shape {hashes.shape}, expected ({want}, {c.dim})"
        if not np.isfinite(hashes).all() or (hashes.size and np.abs(hashes).max() > bound):
            return "sent non-finite hashes or hashes outside the range of h1"
        return None

    # -- exchange 3 ------------------------------------------------------------------------------------

    def purchase(self, wanted: dict[str, np.ndarray], nominated: dict[str, tuple[np.ndarray, np.ndarray]]
                 ) -> dict[str, tuple[np.ndarray | None, np.ndarray | None]]:
        """Buy ``wanted[o]`` (nominated tokens) from each owner; verify every row against its nominated hash.

        Verification is exact: h1 is deterministic and bit-identical on every machine, so the aggregator
        recomputes h1 of each received row and compares it with the hash nominated for that token, bit for bit.
        With ``reveal="hashes"`` only labels are bought and nothing can be verified (the aggregator never sees
        the rows).
        """
        c = self.config
        requests = {o: PurchaseRequest(tokens=np.asarray(t, dtype=np.int64)) for o, t in wanted.items() if len(t)}
        if not requests:
            return {}
        self.exchanges += 1
        replies = self.transport.request_many(requests)
        out: dict[str, tuple[np.ndarray | None, np.ndarray | None]] = {}
        for o, req in requests.items():
            r = replies[o]
            if isinstance(r, PartyUnavailable):
                self._exclude(o, r.reason, "purchase")
                continue
            problem = self._check_purchase(r, req.tokens)
            if problem is None and c.reveal == "points":
                assert isinstance(r, PurchaseReply) and r.points is not None
                self.accessed[o] += len(req.tokens)
                tokens, hashes = nominated[o]
                expected = hashes[np.searchsorted(tokens, req.tokens)]
                got = self.hasher.transform(np.asarray(r.points))
                if not np.array_equal(got, expected):
                    bad = int(np.flatnonzero(~(got == expected).all(1))[0])
                    problem = f"row for token {int(req.tokens[bad])} does not hash to its nominated hash"
            if problem is not None:
                self._exclude(o, problem, "purchase")
                continue
            assert isinstance(r, PurchaseReply)
            out[o] = (None if r.points is None else np.asarray(r.points), None if r.labels is None else np.asarray(r.labels))
        return out

    def _check_purchase(self, r: object, tokens: np.ndarray) -> str | None:
        c = self.config
        if not isinstance(r, PurchaseReply):
            return f"replied with {type(r).__name__}, not a purchase reply"
        if not np.array_equal(np.asarray(r.tokens), tokens):
            return "sold other tokens than requested"
        if c.reveal == "points":
            pts = None if r.points is None else np.asarray(r.points)
            if pts is None or pts.shape != (len(tokens), c.n_features) or pts.dtype.kind not in "fiu" or not np.isfinite(pts).all():
                return "sold malformed rows"
        if r.labels is not None and np.shape(r.labels) != (len(tokens),):
            return "sold labels of the wrong shape"
        return None

    # -- the run ---------------------------------------------------------------------------------------

    def run(self, size: int) -> dict[str, Any]:
        c = self.config
        t0 = time.perf_counter()
        release = self.target()
        self.timings["target"] = time.perf_counter() - t0
        if c.temperature is not None:
            temperature = c.temperature
        else:
            sigma = self.sigma
            if c.release == "mwem":  # the Gaussian's sigma at the same (epsilon_v, delta_v): a public number
                sigma = accounting.calibrate_gaussian(c.epsilon, c.delta, dim=c.dim,
                                                      sensitivity=2.0 * math.sqrt(2.0) / self.validation_rows).sigma
            temperature = temperature_for(sigma)
        self.temperature = float(temperature)
        t1 = time.perf_counter()
        nominated = self.nominations(release.noisy_mean, temperature)
        self.timings["nominations"] = time.perf_counter() - t1
        rows: dict[str, np.ndarray | None] = {}
        labels: dict[str, np.ndarray | None] = {}
        t2 = time.perf_counter()
        if c.purchase == "nominees":
            bought = self.purchase({o: nominated[o][0] for o in nominated}, nominated)
            for o in list(nominated):
                if o not in bought:
                    nominated.pop(o)
                else:
                    rows[o], labels[o] = bought[o]
        self.timings["purchase"] = time.perf_counter() - t2
        exact = np.asarray(release.exact_mean, dtype=np.float64)
        bought_positions: dict[str, set[int]] = {}
        t3 = time.perf_counter()
        while True:
            owners = [o for o in self.owners if o in nominated]
            if not owners:
                winners: list[tuple[str, int, int]] = []
                values = np.zeros(0)
                break
            pool_owner = np.concatenate([np.full(len(nominated[o][0]), k) for k, o in enumerate(owners)])
            pool_pos = np.concatenate([np.arange(len(nominated[o][0])) for o in owners])
            if c.choice == "kernel":
                assert self.validation is not None
                kpicks, kvalues = exact_greedy([np.asarray(rows[o]) for o in owners], self.validation,
                                               np.zeros((0, c.n_features), np.float32), min(size, len(pool_owner)), c.gamma)
                offsets = np.cumsum([0] + [len(nominated[o][0]) for o in owners])
                picks = np.array([offsets[k] + i for k, i in kpicks], dtype=np.int64)
                values = np.asarray(kvalues)
            else:
                # The pooled hashes are needed only here (K*M*d float32: 0.4 GB at K*M = 200,000, d = 500).
                pool_h = np.concatenate([nominated[o][1] for o in owners])
                picks, values = greedy_select(pool_h, exact, min(size, len(pool_h)))
            winners = [(owners[pool_owner[i]], int(pool_pos[i]), int(i)) for i in picks]
            if c.purchase != "winners":
                break
            want: dict[str, list[int]] = {}
            for o, pos, _ in winners:
                if pos not in bought_positions.setdefault(o, set()):
                    want.setdefault(o, []).append(pos)
            if not want:
                break
            wanted = {o: np.sort(nominated[o][0][np.asarray(p)]) for o, p in want.items()}
            bought = self.purchase(wanted, nominated)
            for o in wanted:
                if o not in bought:
                    nominated.pop(o)  # excluded: choose again without its nominees
                    continue
                pts, labs = bought[o]
                positions = np.searchsorted(nominated[o][0], wanted[o])
                n_nom = len(nominated[o][0])
                if pts is not None:
                    if rows.get(o) is None:
                        rows[o] = np.zeros((n_nom, c.n_features), dtype=pts.dtype)
                    rows[o][positions] = pts  # type: ignore[index]
                if labs is not None:
                    if labels.get(o) is None:
                        labels[o] = np.zeros(n_nom, dtype=labs.dtype)
                    labels[o][positions] = labs  # type: ignore[index]
                bought_positions[o].update(int(q) for q in positions)
        self.timings["choice"] = time.perf_counter() - t3
        if len(winners) < size:
            self.events.append({"phase": "choice", "event": "short",
                                "reason": f"the pool holds {sum(len(v[0]) for v in nominated.values())} usable nominees, "
                                          f"fewer than size {size}"})
        return {"winners": winners, "values": np.asarray(values, dtype=np.float64), "nominated": nominated,
                "rows": rows, "labels": labels}


def run_nominations(transport: Transport, owners: list[str], consumer: str, config: NominationsConfig, rng: Csprng, *,
                    hasher: RFFHasher, size: int, method: str = "nominations", seeded: bool = False,
                    started: float | None = None, extra: dict[str, Any] | None = None,
                    with_labels: bool | None = None) -> SummaryResult:
    """Run the nominations protocol through ``transport`` and assemble the :class:`SummaryResult` and ledger.

    The one place that turns a nominations run into a result, for :func:`dpsumm.summarize` (in-process
    parties) and for ``dpsumm.flower`` (parties on Flower nodes).
    """
    t0 = time.perf_counter() if started is None else started
    private = config.release != "exact"
    ledger = accounting.Ledger() if private else None
    if ledger is not None:
        ledger.set_deltas(validation=config.delta)
        if seeded:
            ledger.mark_seeded()

    def record(party: str, event: Any, label: str) -> None:
        if ledger is not None:
            ledger.record(party, event, label=label)  # type: ignore[arg-type]

    agg = NominationsAggregator(transport, owners, consumer, config, rng, record)
    out = agg.run(size)
    if ledger is not None and config.purchase == "winners":
        ledger.record_uncertified(
            "owners", label="the purchase='winners' request",
            reason="it tells each owner which of its nominees won, which depends on the other owners' data and on "
                   "D_v; no finite owners' epsilon is certified for this run (purchase='nominees' is).")
    winners = out["winners"]
    position = {name: k for k, name in enumerate(owners)}
    nominated = out["nominated"]
    owner_idx = np.array([position[o] for o, _, _ in winners], dtype=np.int64)
    index = np.array([int(nominated[o][0][pos]) for o, pos, _ in winners], dtype=np.int64)
    hashes = (np.stack([nominated[o][1][pos] for o, pos, _ in winners]).astype(np.float32) if winners
              else np.zeros((0, config.dim), np.float32))
    pts = None
    if config.reveal == "points":
        pts = (np.stack([out["rows"][o][pos] for o, pos, _ in winners]) if winners
               else np.zeros((0, config.n_features)))
    if with_labels is None:
        with_labels = any(out["labels"].get(o) is not None for o, _, _ in winners)
    labs = np.array([out["labels"][o][pos] for o, pos, _ in winners]) if with_labels and winners else None
    contribution = np.zeros(len(owners))
    for k, v in zip(owner_idx, out["values"]):
        contribution[k] += v
    extra = dict(extra or {})
    extra.update(choice=config.choice, greedy_sample_factor=config.greedy_sample_factor, temperature=agg.temperature, sigma=agg.sigma, nominees=config.nominees,
                 candidates=config.candidates, release=config.release, purchase=config.purchase,
                 timings=dict(agg.timings), exchanges=agg.exchanges)
    access = Access(int(sum(agg.accessed.values())), dict(agg.accessed), hashes=int(sum(agg.hashes_seen.values())),
                    hashes_per_owner=dict(agg.hashes_seen), validation_rows=agg.validation_rows,
                    validation_raw_rows=agg.validation_rows if config.choice == "kernel" else 0)
    return SummaryResult(
        points=pts, hashes=hashes, labels=labs, owner=owner_idx, index=index, owner_names=list(owners),
        accessed=access, contribution=contribution, privacy=ledger, trace=[], events=list(agg.events),
        hasher=hasher, method=method, schedule=None, seconds=time.perf_counter() - t0, extra=extra,
    )


# ------------------------------------------------------------------------------------------ the method object

#: The validation release's budget when a run gives none: ``(epsilon_v, delta_v) = (1, 1e-6)``.
DEFAULT_VALIDATION_BUDGET = accounting.Budget(validation_epsilon=1.0, validation_delta=1e-6)
#: h1's dimension for nominations: no per-coordinate noise is added to an owner's hashes, so ``d`` costs no
#: privacy here; measured on MNIST (docs/experiments/), d = 500 gives several times lower MMD² than the paper's 140.
DEFAULT_DIM = 500
#: Rows each owner nominates per summary row when ``nominees`` is None (``M = 2 * size``): smaller ``M`` loses on
#: skewed splits (docs/experiments/mnist-nominees).
NOMINEES_PER_SIZE = 2

_PURCHASES = ("nominees", "winners")
_CHOICES = ("kernel", "hashes")
_OWNER_GREEDY = ("stochastic", "exact")
_RELEASES = ("gaussian", "mwem", "exact")
_REVEALS = ("points", "hashes")


@dataclass(frozen=True, repr=False)
class Nominations(SummaryMethod):
    """The nominations protocol: the consumer releases its hashed validation mean once, every owner nominates
    rows ranked against it, and the aggregator buys them and chooses (docs/design.md §2-§5).

    The default run certifies every party: the owners' epsilon is 0 (what an owner receives depends only on its
    own data, the one release and public numbers) and the consumer's is the validation budget (``privacy``,
    default :data:`DEFAULT_VALIDATION_BUDGET`; replace-one in ``D_v``).

    Parameters
    ----------
    nominees : int, optional
        Rows each owner nominates (public, the same for every owner). Default ``2 * size``.
    candidates : int, optional
        Each owner herds among ``candidates`` of its rows, sampled with probability ``~ exp(h1(x).g~ / T)``
        (default ``4 * nominees``; a number >= the owner's rows uses them all). Must be >= ``nominees``.
    temperature : float, optional
        The owners' tilt ``w(x) ~ exp(h1(x).g~ / T)``; default :func:`temperature_for` of the release's noise.
    purchase : {"nominees", "winners"}, default="nominees"
        ``"nominees"``: buy every nominee's row (``K * nominees`` raw rows; certified). ``"winners"``: buy only the
        ``size`` winners; each owner then learns which of its rows won, which depends on the other owners' data:
        outside the DP guarantee, and the ledger marks the owners NOT certified.
    choice : {"kernel", "hashes"}, optional
        The aggregator's greedy over the pooled nominees: the exact RBF kernel against ``D_v`` (``"kernel"``;
        needs the raw rows: the default with ``purchase="nominees"`` and ``reveal="points"``; the consumer then
        sends ``D_v`` to the trusted aggregator), or their h1 hashes against ``mean h1(D_v)`` (``"hashes"``, the
        default otherwise).
    owner_greedy : {"stochastic", "exact"}, default="stochastic"
        How each owner picks its nominees among its candidates: the stochastic greedy (each round evaluates
        ``ceil((C/M) * STOCHASTIC_GREEDY_FACTOR)`` random candidates, Mirzasoleiman et al. 2015; ``O(C d)`` per
        owner) or the exact greedy (``O(M C d)``).
    validation_release : {"gaussian", "mwem", "exact"}, default="gaussian"
        The mechanism of the one validation release: the discrete Gaussian, the paper's h2 (MWEM) at the same
        ``(epsilon_v, delta_v)``, or ``"exact"``: the exact mean, NOT private for the consumer (the result has no
        ledger; the epsilon_v = infinity point of the experiments).
    reveal : {"points", "hashes"}, default="points"
        ``"hashes"``: the aggregator receives only the h1 hashes of the rows it buys (labels, no raw row).
    dim : int, default=500
        h1's number of random features.
    hash_seed : int or str, default=0
        h1's public seed.
    """

    name: ClassVar[str] = "nominations"
    private: ClassVar[bool] = True

    nominees: int | None = None
    candidates: int | None = None
    temperature: float | None = None
    purchase: Literal["nominees", "winners"] = "nominees"
    choice: Literal["kernel", "hashes"] | None = None
    owner_greedy: Literal["stochastic", "exact"] = "stochastic"
    validation_release: Literal["gaussian", "mwem", "exact"] = "gaussian"
    reveal: Literal["points", "hashes"] = "points"
    dim: int = DEFAULT_DIM
    hash_seed: int | str = 0

    def _validate(self) -> None:
        super()._validate()
        set_ = object.__setattr__
        if self.nominees is not None:
            set_(self, "nominees", bounded_int(self.nominees, "nominees", 1, MAX_COUNT))
        if self.candidates is not None:
            set_(self, "candidates", bounded_int(self.candidates, "candidates", 1, MAX_COUNT))
        if self.nominees is not None and self.candidates is not None and self.candidates < self.nominees:
            raise InvalidParameterError(f"`candidates` ({self.candidates}) must be >= `nominees` ({self.nominees})",
                                        "candidates")
        if self.temperature is not None:
            set_(self, "temperature", positive_float(self.temperature, "temperature"))
        choice_of(self.purchase, "purchase", _PURCHASES)
        choice_of(self.owner_greedy, "owner_greedy", _OWNER_GREEDY)
        choice_of(self.validation_release, "validation_release", _RELEASES)
        choice_of(self.reveal, "reveal", _REVEALS)
        if self.choice is not None:
            choice_of(self.choice, "choice", _CHOICES)
            if self.choice == "kernel" and (self.purchase != "nominees" or self.reveal != "points"):
                raise InvalidParameterError("`choice='kernel'` scores raw rows: it needs purchase='nominees' and "
                                            "reveal='points'", "choice")

    @property
    def resolved_choice(self) -> str:
        """``choice``, or its default for the purchase and reveal options."""
        if self.choice is not None:
            return self.choice
        return "kernel" if self.purchase == "nominees" and self.reveal == "points" else "hashes"

    def budget(self, privacy: accounting.Budget | None) -> accounting.Budget | None:
        """The run's validation budget: ``privacy``, or the default; None for the exact (non-private) release."""
        if self.validation_release == "exact":
            return None
        return privacy if privacy is not None else DEFAULT_VALIDATION_BUDGET

    def plan(self, *, size: int, owners: int, owner_rows: list[int] | None, validation_rows: int | None,
             privacy: accounting.Budget | None, gamma_median: bool, transport_given: bool = False) -> Plan:
        plan = super().plan(size=size, owners=owners, owner_rows=owner_rows, validation_rows=validation_rows,
                            privacy=privacy, gamma_median=gamma_median, transport_given=transport_given)
        if self.validation_release == "exact" and privacy is not None:
            raise InvalidParameterError("`validation_release='exact'` releases D_v's mean without noise: no budget "
                                        "applies", "privacy")
        if privacy is not None and privacy.has_owners_budget:
            raise InvalidParameterError(
                "nominations releases nothing computed from one owner's data to another (owners' epsilon is 0): an "
                "owners' epsilon/delta in `privacy` would not be spent; give a validation-only budget, "
                "Budget(validation_epsilon=..., validation_delta=...)", "privacy")
        budget = self.budget(privacy)
        if budget is not None and validation_rows is not None:  # delta_v >= 1/|D_v| would allow releasing a row
            budget.check_validation_size(validation_rows)
        M = self.resolved_nominees(size)
        if M * owners < size:
            raise InvalidParameterError(f"`nominees` ({M}) times the {owners} owners is below `size` ({size})", "nominees")
        if self.candidates is not None and self.candidates < M:
            raise InvalidParameterError(f"`candidates` ({self.candidates}) must be >= `nominees` ({M})", "candidates")
        if owner_rows is not None:
            pool = sum(min(M, n) for n in owner_rows)
            if pool < size:
                raise InvalidParameterError(
                    f"the owners can nominate only {pool} rows (min(nominees, rows) each, nominees = {M}), fewer than "
                    f"`size` ({size}): raise `nominees` or lower `size`", "nominees")
        return plan

    def resolved_nominees(self, size: int) -> int:
        """``nominees``, or its default ``NOMINEES_PER_SIZE * size``."""
        return self.nominees if self.nominees is not None else NOMINEES_PER_SIZE * size

    def config(self, *, size: int, n_features: int, hasher: RFFHasher, privacy: accounting.Budget | None
               ) -> NominationsConfig:
        """Every public number of a run (the defaults resolved); the protocol's messages carry them."""
        M = self.resolved_nominees(size)
        C = self.candidates if self.candidates is not None else DEFAULT_CANDIDATE_FACTOR * M
        budget = self.budget(privacy)
        eps_v = delta_v = 0.0
        if budget is not None:
            assert budget.validation_epsilon is not None and budget.validation_delta is not None
            eps_v, delta_v = budget.validation_epsilon, budget.validation_delta
        steps, step_eps, eta = 0, 0.0, 0.0
        if self.validation_release == "mwem":
            steps, eta = int(math.floor(hasher.dim ** 1.5)), 1.0 / hasher.dim
            step_eps = accounting.calibrate_mwem_steps(eps_v, delta_v, steps)
        factor = STOCHASTIC_GREEDY_FACTOR if self.owner_greedy == "stochastic" else None
        return NominationsConfig(n_features=n_features, dim=hasher.dim, gamma=hasher.gamma, hash_seed=hasher.seed,
                                 reveal=self.reveal, purchase=self.purchase, nominees=M, candidates=C,
                                 temperature=self.temperature, release=self.validation_release,
                                 choice=self.resolved_choice, epsilon=eps_v, delta=delta_v, mwem_steps=steps,
                                 mwem_step_epsilon=step_eps, eta=eta, greedy_sample_factor=factor)

    def run(self, setup: RunSetup) -> SummaryResult:
        assert setup.transport is not None
        config = self.config(size=setup.size, n_features=setup.n_features, hasher=setup.hasher, privacy=setup.privacy)
        result = run_nominations(setup.transport, setup.owners, setup.consumer, config, setup.rng, hasher=setup.hasher,
                                 size=setup.size, seeded=setup.seeded, started=setup.started, extra=setup.extra,
                                 with_labels=setup.with_labels)
        _log.info("nominations: temperature %.4g, sigma %.4g, %d nominees per owner, choice on %s; timings %s",
                  result.extra["temperature"], result.extra["sigma"], config.nominees, config.choice,
                  result.extra["timings"])
        return result
