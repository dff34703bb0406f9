"""The trusted aggregator of the nominations protocol: the exchanges every purchase shares (docs/explanation/nominations.md, design.md).

:class:`Aggregator` reaches the consumer and the owners only through a transport. It knows no purchase by name:
the run's purchase object (:mod:`dpsumm.protocols.nominations.purchase`) drives it (``purchase.buy`` fills a
:class:`Pool` through these exchanges, ``purchase.choose`` picks the summary from it). An owner that fails, sends a
malformed or non-finite reply, too many or too few nominees, or rows that do not hash to what it committed to, is
excluded with an event and the run completes with the others.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ... import accounting
from ...errors import InvalidParameterError, ProtocolError
from ...hashing import DIGEST_BYTES, hash_digests
from ...kernels import exact_greedy, greedy_select, h1_peak
from ...messages import (
    NominationReply,
    NominationRequest,
    PurchaseReply,
    PurchaseRequest,
    TargetRelease,
    TargetRequest,
    real_array,
    real_number,
)
from ...privacy import Csprng, mean_release_sensitivity
from ...transport import PartyUnavailable, Transport
from ..base import BaseAggregator, HashedConfig
from ..release_checks import MAX_ROWS

__all__ = [
    "NominationsConfig",
    "Aggregator",
    "Pool",
    "Choice",
    "temperature_for",
    "TEMPERATURE_PER_SIGMA",
    "TEMPERATURE_FLOOR",
    "STOCHASTIC_GREEDY_FACTOR",
    "RELEASE_SIGMAS",
]

#: The tilt's temperature in units of the noise in an owner's relevance score ``h1(x).g~`` (whose standard
#: deviation is ``sigma ||h1(x)|| ~ sigma``), measured on MNIST (docs/experiments/nominations-temperature).
TEMPERATURE_PER_SIGMA = 5.0
#: The temperature when the release has (almost) no noise, measured likewise.
TEMPERATURE_FLOOR = 0.2
#: ``owner_greedy="stochastic"``: each round of an owner's greedy evaluates ``ceil((C/M) * factor)`` random
#: candidates (Mirzasoleiman et al. 2015, factor = ln(1/eps)); measured on MNIST in
#: benches/nominate_stochastic_mnist.py (README.md, "Performance of the nominations protocol").
STOCHASTIC_GREEDY_FACTOR = 8.0
#: The consumer's noisy mean may differ from its exact mean by at most this many noise sigmas per coordinate (plus the
#: grid step): the discrete Gaussian is subgaussian (Canonne, Kamath & Steinke 2020), so an honest release is further
#: with probability at most 2 exp(-72) = 1.1e-31 per coordinate. A release further away (a faulty consumer's
#: g~ of 1e300, say) is refused before it reaches the owners.
RELEASE_SIGMAS = 12.0


def array_kind(value: object) -> str:
    """What a reply's field holds instead of an array of real numbers, for a ProtocolError or an exclusion."""
    return f"dtype {value.dtype}" if isinstance(value, np.ndarray) else f"{type(value).__name__}, not an array"


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
class NominationsConfig(HashedConfig):
    """Every public number of a nominations run."""

    reveal: str  # "points" or "hashes"
    commit: str  # how owners commit to their offers: "hashes" (h1), or "digests" (16 bytes of each hash)
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
    owner_epsilon: float = 0.0  # the owners' budget, for a purchase in which every owner makes a DP release
    owner_delta: float = 0.0


@dataclass
class Pool:
    """What a purchase gathered for the choice: per owner, its offered tokens (sorted) with their commitments (h1
    hashes, or digests of them), and the rows and labels bought so far (None where not bought)."""

    offered: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    rows: dict[str, np.ndarray | None] = field(default_factory=dict)
    labels: dict[str, np.ndarray | None] = field(default_factory=dict)
    exact_mean: np.ndarray | None = None  # the consumer's exact hashed mean (the choice on hashes)
    report: dict[str, Any] = field(default_factory=dict)  # the purchase's public numbers, for the result's extra


@dataclass
class Choice:
    """The summary chosen from a pool: ``(owner, position in its offer, position in the pooled order)`` per row,
    and each row's gain in the greedy."""

    winners: list[tuple[str, int, int]]
    values: np.ndarray


class Aggregator(BaseAggregator[NominationsConfig]):
    """The trusted aggregator: the exchanges every purchase shares, and what it has learnt so far.

    ``purchase.buy(aggregator, size)`` runs the purchase's exchanges through :meth:`target`, :meth:`nominations`,
    :meth:`buy` and :meth:`request_owners`; ``purchase.choose`` picks the summary with :meth:`greedy`.
    """

    def __init__(
        self,
        transport: Transport,
        owners: list[str],
        consumer: str,
        config: NominationsConfig,
        rng: Csprng,
        record: Callable[..., None] | None = None,
    ) -> None:
        super().__init__(transport, owners, consumer, config, rng, record)
        self.hashes_seen = {o: 0 for o in self.owners}
        self.commit = config.commit
        self.timings: dict[str, float] = {}
        self.exchanges = 0
        self.temperature = float("nan")
        self.validation_rows = 0
        self.sigma = float("nan")
        self.validation: np.ndarray | None = None
        self.seed_rows: np.ndarray | None = None  # the run's public seed rows (a purchase may read them)
        # Each owner's public size when the entry point knows it (in process: the rows it was given); an owner's
        # stated row count is checked against it and against its own earlier statements (check_rows).
        self.public_rows: dict[str, int] = {}

    def check_rows(self, owner: str, n_rows: object) -> str | None:
        """Why ``owner``'s stated row count ``n_rows`` cannot be believed, or None: it must be an integer >= 0,
        equal to the owner's public size when known, and to what the owner stated earlier in the run (its parts
        and messages agree). The quotas and plausibility checks read the stated count, so a count an owner could
        inflate at will would decide the purchase (docs/explanation/lying-owners.md)."""
        if isinstance(n_rows, bool) or not isinstance(n_rows, (int, np.integer)) or n_rows < 0:
            return f"reported an impossible row count {n_rows!r}"
        public = self.public_rows.get(owner)
        if public is not None and int(n_rows) != public:
            return f"stated {int(n_rows)} rows, but its public size is {public}"
        stated = self.n_rows.get(owner)
        if stated is not None and int(n_rows) != stated:
            return f"stated {int(n_rows)} rows, but {stated} earlier in the run"
        return None

    def request_owners(
        self, messages: dict[str, Any], phase: str, check: Callable[[str, Any], str | None]
    ) -> dict[str, Any]:
        """Send ``messages`` (owner -> request) in one exchange; an owner that is unavailable or whose reply
        ``check(owner, reply)`` finds a problem in is excluded (``phase`` names the exchange). Returns the good
        replies."""
        if not messages:
            return {}
        self.exchanges += 1
        replies = self.transport.request_many(messages)
        out: dict[str, Any] = {}
        for o in messages:
            r = replies.pop(o)
            if isinstance(r, PartyUnavailable):
                self.exclude(o, r.reason, {"phase": phase})
                continue
            problem = check(o, r)
            if problem is not None:
                self.exclude(o, problem, {"phase": phase})
                continue
            out[o] = r
        return out

    # -- the consumer's hashed mean --------------------------------------------------------------------

    def target(self, epsilon: float | None = None, send_rows: bool | None = None) -> TargetRelease:
        """The consumer's hashed mean ``g~`` at ``(epsilon, delta_v)`` (default: the whole ``epsilon_v``), with
        ``D_v``'s rows for the exact-kernel choice unless ``send_rows`` is False."""
        c = self.config
        eps = c.epsilon if epsilon is None else float(epsilon)
        rows_wanted = c.choice == "kernel" if send_rows is None else bool(send_rows)
        req = TargetRequest(
            **c.h1_fields(),
            release=c.release,
            epsilon=c.mwem_step_epsilon if c.release == "mwem" else eps,
            delta=c.delta,
            steps=c.mwem_steps,
            eta=c.eta,
            send_rows=rows_wanted,
        )
        self.exchanges += 1
        reply = self.transport.request(self.consumer, req)
        if not isinstance(reply, TargetRelease):
            raise ProtocolError(f"consumer sent {type(reply).__name__}, not a target release")
        for name in ("noisy_mean", "exact_mean"):
            arr = real_array(getattr(reply, name))
            if arr is None:
                raise ProtocolError(f"consumer sent a malformed {name} ({array_kind(getattr(reply, name))})")
            if arr.shape != (c.dim,) or not np.isfinite(arr).all():
                raise ProtocolError(
                    f"consumer sent a malformed {name} (shape {arr.shape}, finite {np.isfinite(arr).all()})"
                )
        self.check_validation_size(reply.n_rows)
        sigma = real_number(reply.sigma)
        if c.release == "mwem":  # no Gaussian sigma: NaN, as the consumer sends it
            sigma = reply.sigma if isinstance(reply.sigma, float) and math.isnan(reply.sigma) else None
        elif sigma is not None and c.release == "exact" and sigma != 0:
            sigma = None  # no noise
        if sigma is None or sigma < 0:
            raise ProtocolError(
                f"consumer released with an impossible sigma {reply.sigma!r} for its {c.release} release"
            )
        if rows_wanted:
            self.keep_validation_rows(reply.rows, int(reply.n_rows))
        self.sigma = sigma
        exact = np.asarray(reply.exact_mean, dtype=np.float64)
        if np.abs(exact).max() > h1_peak(c.dim):
            raise ProtocolError("consumer sent an exact mean outside the range of h1 (|g_i| <= sqrt(2/d))")
        if c.release == "gaussian":
            cal = accounting.calibrate_gaussian(
                eps, c.delta, sensitivity=mean_release_sensitivity(reply.n_rows), dim=c.dim
            )
            if not math.isclose(float(reply.sigma), float(cal.sigma), rel_tol=1e-9):
                raise ProtocolError(
                    f"consumer released with sigma {reply.sigma!r}, the calibration gives {cal.sigma!r}"
                )
            self._check_release_noise(
                np.asarray(reply.noisy_mean, dtype=np.float64),
                exact,
                RELEASE_SIGMAS * float(cal.sigma) + float(cal.granularity),
            )
            self.record("validation", cal.event(), "g~ = mean h1(D_v) + discrete Gaussian")
        elif c.release == "exact":
            self._check_release_noise(np.asarray(reply.noisy_mean, dtype=np.float64), exact, 0.0)
        elif c.release == "mwem":
            if np.abs(np.asarray(reply.noisy_mean, dtype=np.float64)).max() > h1_peak(c.dim) * (1 + 1e-6):
                raise ProtocolError("consumer sent an MWEM release outside the range of h1 (|g_i| <= sqrt(2/d))")
            for event in accounting.mwem_step_events(c.mwem_step_epsilon, c.mwem_steps):
                self.record("validation", event, "g~ = h2(h1(D_v))")
        return reply

    def check_validation_size(self, n_rows: object) -> None:
        """Refuse an impossible ``|D_v|``, or one that differs from what the consumer released before."""
        if isinstance(n_rows, bool) or not isinstance(n_rows, (int, np.integer)) or not 1 <= n_rows <= MAX_ROWS:
            raise ProtocolError(f"consumer sent an impossible validation size {n_rows!r:.40}")
        if self.validation_rows and int(n_rows) != self.validation_rows:
            raise ProtocolError(f"consumer released over {n_rows} rows, and earlier over {self.validation_rows}")
        self.validation_rows = int(n_rows)

    def keep_validation_rows(self, rows: object, n_rows: int) -> None:
        """Keep ``D_v``'s raw rows (for the exact-kernel choice), checked."""
        arr = None if rows is None else np.asarray(rows)
        if (
            arr is None
            or arr.shape != (n_rows, self.config.n_features)
            or arr.dtype.kind not in "fiu"
            or not np.isfinite(arr).all()
        ):
            raise ProtocolError("consumer did not send its validation rows for the exact-kernel choice")
        if arr.size and np.abs(arr).max() > np.finfo(np.float32).max:  # the kernels compute in float32
            raise ProtocolError("consumer sent validation rows beyond the float32 range")
        self.validation = arr

    @staticmethod
    def _check_release_noise(noisy: np.ndarray, exact: np.ndarray, reach: float) -> None:
        """Refuse a release farther from the exact mean than its noise reaches (``RELEASE_SIGMAS``)."""
        far = float(np.abs(noisy - exact).max())
        if not far <= reach:
            raise ProtocolError(
                f"consumer released a noisy mean {far:.3g} away from its exact mean in a coordinate, "
                f"more than its noise reaches ({reach:.3g}: {RELEASE_SIGMAS:g} sigmas and the grid step)"
            )

    def public_sigma(self) -> float:
        """The release's per-coordinate noise (the Gaussian's at the same budget for "mwem"; 0 for "exact")."""
        c = self.config
        if c.release == "mwem":
            return float(
                accounting.calibrate_gaussian(
                    c.epsilon, c.delta, dim=c.dim, sensitivity=mean_release_sensitivity(self.validation_rows)
                ).sigma
            )
        return 0.0 if c.release == "exact" else float(self.sigma)

    # -- nominations -----------------------------------------------------------------------------------

    def nominations(self, g_tilde: np.ndarray, temperature: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Every active owner's nominees, ranked against ``g~``: sorted tokens and their commitments."""
        c = self.config
        seeds = self.rng.derive("nomination-samples")
        msgs = {
            o: NominationRequest(
                **c.h1_fields(),
                target=np.asarray(g_tilde, dtype=np.float64),
                nominees=c.nominees,
                temperature=float(temperature),
                candidates=int(c.candidates),
                reveal=c.reveal,
                sample_seed=int(seeds.integers(2**63)),
                greedy_sample_factor=c.greedy_sample_factor,
                commit=self.commit,
            )
            for o in self.owners
        }
        bound = h1_peak(c.dim)
        replies = self.request_owners(
            msgs,
            "nominations",
            lambda o, r: self._check_nomination(r, bound) or self.check_rows(o, getattr(r, "n_rows", None)),
        )
        out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for o in self.owners:
            # pop: each reply's arrays are freed once copied into `out` (K·M·d float32 held once, not twice)
            r = replies.pop(o, None)
            if r is None:
                continue
            tokens = np.asarray(r.tokens).astype(np.int64)
            if self.commit == "digests":
                committed = np.ascontiguousarray(r.digests, dtype=np.uint8)
            else:
                committed = np.ascontiguousarray(r.hashes, dtype=np.float32)
                self.hashes_seen[o] = int(len(tokens))
            order = np.argsort(tokens, kind="stable")  # pool in (owner, row) order: ties go to the lowest row
            self.n_rows[o] = int(r.n_rows)
            out[o] = (tokens[order], committed[order])
        return out

    def nominate(self) -> tuple[TargetRelease, dict[str, tuple[np.ndarray, np.ndarray]]]:
        """The consumer's target release, then every active owner's nominations ranked against it at the owners'
        tilt (:meth:`nominations_temperature`), each step timed (``timings["target"]``, ``["nominations"]``)."""
        t0 = time.perf_counter()
        release = self.target()
        self.timings["target"] = time.perf_counter() - t0
        self.temperature = self.nominations_temperature()
        t1 = time.perf_counter()
        nominated = self.nominations(release.noisy_mean, self.temperature)
        self.timings["nominations"] = time.perf_counter() - t1
        return release, nominated

    def nominations_temperature(self) -> float:
        """The owners' tilt: the method's ``temperature``, or :func:`temperature_for` the release's public noise."""
        c = self.config
        return float(c.temperature) if c.temperature is not None else temperature_for(self.public_sigma())

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
        if self.commit == "digests":
            digests = np.asarray(r.digests) if r.digests is not None else None
            if digests is None or digests.shape != (want, DIGEST_BYTES) or digests.dtype != np.uint8:
                got = "none" if digests is None else f"shape {digests.shape} and dtype {digests.dtype}"
                return f"sent digests of {got}, expected shape ({want}, {DIGEST_BYTES}) and dtype uint8"
            return None
        if r.hashes is None:
            return "sent no hashes"
        if hashes.shape != (want, c.dim) or hashes.dtype.kind != "f":
            return f"sent hashes of shape {hashes.shape}, expected ({want}, {c.dim})"
        if not np.isfinite(hashes).all() or (hashes.size and np.abs(hashes).max() > bound):
            return "sent non-finite hashes or hashes outside the range of h1"
        return None

    # -- buying nominated rows -------------------------------------------------------------------------

    def buy(
        self, wanted: dict[str, np.ndarray], nominated: dict[str, tuple[np.ndarray, np.ndarray]]
    ) -> dict[str, tuple[np.ndarray | None, np.ndarray | None]]:
        """Buy ``wanted[o]`` (nominated tokens) from each owner; verify every row against its commitment.

        Verification is exact: h1 is deterministic and bit-identical on every machine, so the aggregator
        recomputes h1 of each received row and compares it with the hash (or digest) nominated for that token, bit
        for bit. With ``reveal="hashes"`` only labels are bought and nothing can be verified (the aggregator never
        sees the rows).
        """
        requests = {o: PurchaseRequest(tokens=np.asarray(t, dtype=np.int64)) for o, t in wanted.items() if len(t)}
        replies = self.request_owners(
            requests, "purchase", lambda o, r: self._check_purchase(o, r, requests[o].tokens, nominated)
        )
        points = self.config.reveal == "points"  # rows sent with reveal="hashes" are not the run's: dropped
        return {
            o: (
                None if r.points is None or not points else np.asarray(r.points),
                None if r.labels is None else np.asarray(r.labels),
            )
            for o, r in replies.items()
        }

    def _check_purchase(
        self, owner: str, r: object, tokens: np.ndarray, nominated: dict[str, tuple[np.ndarray, np.ndarray]]
    ) -> str | None:
        c = self.config
        if not isinstance(r, PurchaseReply):
            return f"replied with {type(r).__name__}, not a purchase reply"
        sold = real_array(r.tokens)
        if sold is None or sold.dtype.kind not in "iu" or not np.array_equal(sold, tokens):
            return "sold other tokens than requested"
        if r.labels is not None and np.shape(r.labels) != (len(tokens),):
            return "sold labels of the wrong shape"
        if r.labels is None and self.with_labels:
            return "sold no labels, but the run's rows are labelled"
        if c.reveal != "points":
            return None
        pts = None if r.points is None else np.asarray(r.points)
        if (
            pts is None
            or pts.shape != (len(tokens), c.n_features)
            or pts.dtype.kind not in "fiu"
            or not np.isfinite(pts).all()
        ):
            return "sold malformed rows"
        self.accessed[owner] += len(tokens)
        offered, committed = nominated[owner]
        expected = committed[np.searchsorted(offered, tokens)]
        got = self.hashes_of(pts)
        if got is None:
            return "sold rows that h1 cannot hash (beyond the float32 range at this gamma)"
        if self.commit == "digests":
            got = hash_digests(got)
        if not np.array_equal(got, expected):
            bad = int(np.flatnonzero(~(got == expected).all(1))[0])
            return (
                f"row for token {int(tokens[bad])} does not hash to its nominated "
                f"{'digest' if self.commit == 'digests' else 'hash'}"
            )
        return None

    # -- the choice ------------------------------------------------------------------------------------

    def greedy(self, size: int, pool: Pool) -> Choice:
        """The aggregator's greedy over the pooled offers: on the exact kernel of the bought rows toward ``D_v``
        (``choice="kernel"``), or on their h1 hashes toward the consumer's exact hashed mean."""
        c = self.config
        owners = [o for o in self.owners if o in pool.offered]
        if not owners:
            return Choice([], np.zeros(0))
        pool_owner = np.concatenate([np.full(len(pool.offered[o][0]), k) for k, o in enumerate(owners)])
        pool_pos = np.concatenate([np.arange(len(pool.offered[o][0])) for o in owners])
        if c.choice == "kernel":
            assert self.validation is not None
            kpicks, kvalues = exact_greedy(
                [np.asarray(pool.rows[o]) for o in owners],
                self.validation,
                np.zeros((0, c.n_features), np.float32),
                min(size, len(pool_owner)),
                c.gamma,
            )
            offsets = np.cumsum([0] + [len(pool.offered[o][0]) for o in owners])
            kp = np.asarray(kpicks, dtype=np.int64).reshape(-1, 2)
            picks = offsets[kp[:, 0]] + kp[:, 1]
            values = np.asarray(kvalues)
        else:
            # The pooled hashes are needed only here (K*M*d float32: 0.4 GB at K*M = 200,000, d = 500).
            pool_h = np.concatenate([pool.offered[o][1] for o in owners])
            assert pool.exact_mean is not None
            picks, values = greedy_select(pool_h, np.asarray(pool.exact_mean, dtype=np.float64), min(size, len(pool_h)))
        picks = np.asarray(picks, dtype=np.int64)
        winners = list(zip([owners[k] for k in pool_owner[picks].tolist()], pool_pos[picks].tolist(), picks.tolist()))
        return Choice(winners, np.asarray(values, dtype=np.float64))
