"""The aggregator of the paper's protocol (Sarpatwar et al. 2019, Alg. 3): h2 releases every epoch and the private
auction. The method objects that run it are in :mod:`dpsumm.protocols.paper.method`.

The aggregator of Alg. 3 reaches the owners and the consumer only through a
:class:`~dpsumm.transport.Transport`; the parties themselves are in :mod:`dpsumm.parties`. With
``private=False`` the same aggregator runs the paper's non-private greedy baseline (exact hashed means,
the best bid wins each round, the public seed set inside the summary while it runs).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ... import _core, accounting
from ...errors import DpsummError, ProtocolError
from ...h2 import H2
from ...kernels import h1_peak
from ...messages import (
    Bid,
    BidRequest,
    Message,
    PointReply,
    PointRequest,
    Setup,
    SetupReply,
    ValidationRelease,
    ValidationRequest,
    real_array,
)
from ...privacy import Csprng
from ...results import Access, SummaryResult
from ...transport import PartyUnavailable, Transport
from ..base import BaseAggregator, HashedConfig, RunSetup

__all__ = [
    "Aggregator",
    "ProtocolConfig",
    "RoundRecord",
    "make_config",
    "run_protocol",
]

# ---------------------------------------------------------------------------------------------- aggregator


@dataclass(frozen=True)
class ProtocolConfig(HashedConfig):
    """Every number the aggregator needs, resolved from a schedule (see :mod:`dpsumm.accounting`).

    ``epsilon_epoch`` maps an epoch ``l >= 2`` to the per-step epsilon of that epoch's h2 release.
    """

    reveal: str
    private: bool
    eta: float
    t_init: int
    t_subs: int
    epsilon_validation_step: float
    epsilon_first_epoch_step: float
    epsilon_epoch: Callable[[int], float]
    epsilon_auction: float
    tau: int
    neighbour: str = "replace-one"
    # 0.0: a bid must equal the aggregator's recomputation bit for bit. Both sides use the same
    # deterministic kernels (h1 is row-canonical, rust/src/rff.rs; a bid is `row_dots`, exact f32
    # products summed in f64 in a fixed order, rust/src/simd.rs), so an honest owner's bid is reproduced
    # exactly; any positive tolerance would let an owner inflate its bid by that much.
    verify_tolerance: float = 0.0


@dataclass
class RoundRecord:
    """What happened in one round (one entry of ``result.trace``)."""

    round: int
    bids: dict[str, float | None] = field(default_factory=dict)
    requested: list[str] = field(default_factory=list)
    tau_requests: list[str] = field(default_factory=list)
    winner: tuple[str, int] | None = None
    winning_bid: float | None = None
    pool_size: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Pooled:
    owner: str
    token: int
    point: np.ndarray | None
    hash: np.ndarray
    label: Any


class Aggregator(BaseAggregator[ProtocolConfig]):
    """The trusted, parsimonious aggregator of Alg. 3.

    It reaches owners and the consumer only through ``transport``. Per round ``l`` it releases
    ``g_l = h2(h1(D_s))``, broadcasts ``v = g~ - q/(q+1) g_l`` (docs/explanation/paper.md), collects bids, runs the
    private auction (docs/explanation/paper.md), verifies every received row against its claimed bid, and adds the best
    pooled row to the summary. A party that fails, sends a malformed message or fails verification is
    excluded for the rest of the run, with an event in the trace.

    Parameters
    ----------
    transport : Transport
    owners : list of str
        Owner party names, in the order used for tie-breaks and result indices.
    consumer : str
        The consumer's party name.
    config : ProtocolConfig
    seed_points : ndarray of shape (m, n_features)
        The public seed set ``D_init``; part of ``D_s`` while the protocol runs, not of the result.
    rng : Csprng
        The aggregator's CSPRNG (h2 noise and the auction's coins).
    record : callable, optional
        ``record(party, mechanism, epsilon, count, round, label)``: called for every privacy-relevant
        release (the privacy ledger).
    """

    def __init__(
        self,
        transport: Transport,
        owners: list[str],
        consumer: str,
        config: ProtocolConfig,
        seed_points: np.ndarray,
        rng: Csprng,
        record: Callable[..., None] | None = None,
    ) -> None:
        super().__init__(transport, owners, consumer, config, rng, record)
        self.seed_points = seed_points
        self.seed_hashes = (
            self.hasher.transform(seed_points) if len(seed_points) else np.zeros((0, config.dim), np.float32)
        )
        self._received: dict[str, set[int]] = {o: set() for o in self.owners}
        # Every broadcast v (by round) and, per (owner, token), the rounds and values it was bid at: a
        # row (or hash) sent later must reproduce all of them exactly.
        self._broadcasts: dict[int, np.ndarray] = {}
        self._bid_history: dict[tuple[str, int], list[tuple[int, float]]] = {}

    # -- helpers -----------------------------------------------------------------------------------

    def _exclude(self, owner: str, reason: str, rnd: int, record: RoundRecord | None = None) -> None:
        event = self.exclude(owner, reason, {"round": rnd})
        if event is not None and record is not None:
            record.events.append(event)

    def setup(self) -> None:
        """Send :class:`Setup` to every owner; exclude any that fails or reports a wrong shape."""
        c = self.config
        msg = Setup(**c.h1_fields(), reveal=c.reveal)
        replies = self.transport.request_many({o: msg for o in self.owners})
        for o in self.owners:
            r = replies[o]
            if isinstance(r, PartyUnavailable):
                self._exclude(o, r.reason, 0)
            elif (
                not isinstance(r, SetupReply)
                or not (_is_count(r.n_rows) and _is_count(r.n_features))
                or r.n_features != c.n_features
            ):
                self._exclude(o, f"malformed setup reply {r!r}", 0)
            else:
                self.n_rows[o] = int(r.n_rows)

    def validation_release(self, exact: bool) -> np.ndarray:
        """Ask the consumer for ``g~`` and record its privacy cost."""
        c = self.config
        req = ValidationRequest(
            **c.h1_fields(),
            method="exact" if exact else "private",
            steps=c.t_init,
            epsilon=c.epsilon_validation_step,
            eta=c.eta,
        )
        reply = self.transport.request(self.consumer, req)
        mean_hash = real_array(reply.mean_hash) if isinstance(reply, ValidationRelease) else None
        if mean_hash is None or mean_hash.shape != (c.dim,):
            raise ProtocolError(f"consumer sent a malformed validation release: {reply!r}")
        g = mean_hash.astype(np.float64)
        if not np.isfinite(g).all():
            raise ProtocolError("consumer sent a validation release with NaN or infinite values")
        if np.abs(g).max() > np.finfo(np.float32).max:  # the broadcast v is float32
            raise ProtocolError("consumer sent a validation release beyond the float32 range")
        if not exact:
            self.record("validation", "mwem", c.epsilon_validation_step, c.t_init, 0, "h2(h1(D_v))")
        return g

    def _verify(self, owner: str, bid: Bid, reply: Message, v: np.ndarray) -> _Pooled | str:
        """Check a reply to a point request against the claimed bid; a pooled entry or a reason.

        What is verified (DESIGN notes in ``docs/reliability.md``):

        * ``reveal="points"``: the row is hashed with the public h1 and its value ``h1(x)·v`` is
          recomputed with the owner's kernel; it must equal the bid **exactly**, and equal every earlier
          bid the owner made for the same row. A row altered by more than its float32 rounding, another
          row of the owner, or an inflated bid is caught. (h1 hashes the float32 rounding of a row, so a
          change below float32 resolution of the row is invisible to it.)
        * ``reveal="hashes"``: the hash must have shape ``(dim,)``, be float32-exact and finite, lie in
          the h1 cube ``|h_j| <= sqrt(2/dim)``, and its value must equal, exactly, the bid of this round
          and every earlier bid made for the same row (each a linear constraint ``h·v_r = b_r``).
          **Not verifiable**: that the hash is ``h1`` of a real row of the owner. A fabricated vector in
          the cube that satisfies the committed bids cannot be told from a true hash without the row.
        """
        c = self.config
        if not isinstance(reply, PointReply) or not _is_count(reply.token) or reply.token != bid.token:
            return f"malformed point reply {type(reply).__name__}"
        if np.ndim(reply.label) != 0:
            return "sent a label that is not one value"
        x: np.ndarray | None
        if c.reveal == "points":
            try:
                x = np.asarray(reply.point) if reply.point is not None else None
            except Exception:  # an object numpy cannot convert
                x = None
            if x is None or x.shape != (c.n_features,) or x.dtype.kind not in "fiu" or not np.isfinite(x).all():
                return "sent a malformed row"
            if x.dtype not in (np.float32, np.float64):
                x = x.astype(np.float64)
            if np.abs(x).max(initial=0.0) > np.finfo(np.float32).max:
                return "sent a row beyond the float32 range"
            try:
                h = self.hasher.transform(x.reshape(1, -1))[0]
            except DpsummError as exc:
                return f"sent a row that cannot be hashed: {exc}"
        else:
            try:
                h_raw = np.asarray(reply.hash) if reply.hash is not None else None
            except Exception:
                h_raw = None
            if (
                h_raw is None
                or h_raw.shape != (c.dim,)
                or h_raw.dtype.kind != "f"
                or not np.isfinite(h_raw).all()
                or np.abs(h_raw).max() > np.finfo(np.float32).max
            ):
                return "sent a malformed hash"
            h = h_raw.astype(np.float32)
            if not np.array_equal(h.astype(np.float64), h_raw.astype(np.float64)):
                return "sent a hash that is not float32 (h1 is computed in float32)"
            bound = h1_peak(c.dim)
            if float(np.abs(h).max()) > bound:
                return f"sent a hash outside the h1 cube |h_j| <= sqrt(2/dim) = {bound:.6g}"
            x = None
        assert bid.value is not None
        history = self._bid_history.get((owner, int(bid.token)), [])
        if not history or history[-1][1] != float(bid.value):
            history = history + [(-1, float(bid.value))]
        H = np.ascontiguousarray(h.reshape(1, -1), dtype=np.float32)
        for rnd, claimed in history:
            v_r = v if rnd < 0 else self._broadcasts[rnd]
            actual = float(_core.row_dots(H, np.ascontiguousarray(v_r, dtype=np.float32))[0])
            if not math.isfinite(actual) or abs(actual - claimed) > c.verify_tolerance * max(1.0, abs(claimed)):
                when = "its bid" if rnd < 0 else f"its bid of round {rnd}"
                return f"{when} {claimed!r} does not match the row it sent (recomputed {actual!r})"
        return _Pooled(owner=owner, token=int(bid.token), point=x, hash=h, label=reply.label)

    def _valid_bid(self, owner: str, bid: object, rnd: int) -> str | None:
        if not isinstance(bid, Bid) or not _is_count(bid.round) or bid.round != rnd:
            return f"malformed bid {bid!r}"
        if bid.value is None:
            return None if bid.token is None else "bid without a value"
        if isinstance(bid.value, bool) or not isinstance(bid.value, (float, int, np.floating, np.integer)):
            return f"bid value of type {type(bid.value).__name__}"
        if not math.isfinite(float(bid.value)) or abs(float(bid.value)) > 8.0:
            return f"bid value {bid.value!r} is impossible (|h1(x).v| <= 8)"
        t = bid.token
        if isinstance(t, bool) or not isinstance(t, (int, np.integer)) or not (0 <= t < self.n_rows.get(owner, 0)):
            return f"bid token {t!r} is not a row of this owner"
        if int(t) in self._received[owner]:
            return f"bid token {t} was already sent"
        return None

    # -- the protocol --------------------------------------------------------------------------------

    def run(self, size: int, *, progress: bool = False) -> dict[str, Any]:
        """Run Alg. 3 for ``size`` rounds (or until every owner is exhausted or excluded)."""
        c = self.config
        self.setup()
        g_valid = self.validation_release(exact=not c.private)
        summary_hashes = [h for h in self.seed_hashes]
        h2 = H2(c.dim, c.eta, self.rng.derive("summary-h2"), neighbour=c.neighbour) if c.private else None
        if h2 is not None:
            h2.add(self.seed_hashes)
        exact_sum = self.seed_hashes.astype(np.float64).sum(0)
        auction = _Auction(self.rng.derive("auction"), {o: k for k, o in enumerate(self.owners)})
        pool = _Pool(c.dim)
        winners: list[_Pooled] = []
        win_values: list[float] = []
        trace: list[RoundRecord] = []
        bar = _progress(size, progress)
        for rnd in range(1, size + 1):
            record = RoundRecord(round=rnd)
            q = len(self.seed_hashes) + rnd - 1
            g_sum = self._summary_mean(rnd, q, h2, exact_sum)  # line 5: g_l = h2(h1(D_s))
            # docs/explanation/paper.md: b(x) = h1(x).(g~ - q/(q+1) g_l)
            v = (g_valid - (q / (q + 1.0)) * g_sum).astype(np.float32)
            bids = self._bids(rnd, v, record)  # line 6
            self._auction(rnd, bids, v, record, pool, auction)  # lines 11-17
            # line 15: best pooled row under the current v
            if not pool:
                excluded = sum(not a for a in self.active.values())
                reason = "no row left to add: every owner is exhausted" + (
                    f" or excluded ({excluded} excluded)" if excluded else ""
                )
                record.events.append({"round": rnd, "event": "stopped", "reason": reason})
                self.events.append(record.events[-1])
                trace.append(record)
                break
            win, value = pool.pop_best(v)
            winners.append(win)
            win_values.append(value)
            record.winner = (win.owner, win.token)
            record.winning_bid = value
            record.pool_size = len(pool)
            summary_hashes.append(win.hash)
            exact_sum += win.hash.astype(np.float64)
            if h2 is not None:
                h2.add(win.hash.reshape(1, -1))
            trace.append(record)
            bar.update(1)
        bar.close()
        return {"winners": winners, "win_values": win_values, "trace": trace}

    def _summary_mean(self, rnd: int, q: int, h2: H2 | None, exact_sum: np.ndarray) -> np.ndarray:
        """Line 5 of round ``rnd``: the summary's mean hash ``g_l`` over its ``q`` rows, released by h2 (private) or
        exact."""
        c = self.config
        if not c.private:
            return exact_sum / q if q > 0 else np.zeros(c.dim)
        assert h2 is not None
        if rnd == 1:
            g_sum = h2.release(c.t_init, c.epsilon_first_epoch_step)
            # Epoch 1 runs on the public seed set only: free (paper Section 4).
            self.record("owners", "mwem-public", c.epsilon_first_epoch_step, c.t_init, rnd, "h2(h1(D_init))")
            return g_sum
        eps = c.epsilon_epoch(rnd)
        g_sum = h2.release(c.t_subs, eps)
        self.record("owners", "mwem", eps, c.t_subs, rnd, f"h2(h1(D_s)) epoch {rnd}")
        return g_sum

    def _bids(self, rnd: int, v: np.ndarray, record: RoundRecord) -> dict[str, Bid]:
        """Line 6: every live owner's bid under ``v`` (an owner with no row left bids no value); an owner that fails
        to answer or sends a malformed bid is excluded."""
        live = [o for o in self.owners if self.active[o]]
        replies = self.transport.request_many({o: BidRequest(round=rnd, v=v) for o in live})
        bids: dict[str, Bid] = {}
        for o in live:
            r = replies[o]
            if isinstance(r, PartyUnavailable):
                self._exclude(o, r.reason, rnd, record)
                continue
            problem = self._valid_bid(o, r, rnd)
            if problem is not None:
                self._exclude(o, problem, rnd, record)
                continue
            assert isinstance(r, Bid)
            record.bids[o] = None if r.value is None else float(r.value)
            if r.value is not None:
                bids[o] = r
        self._broadcasts[rnd] = v
        for o, b in bids.items():
            self._bid_history.setdefault((o, int(b.token)), []).append((rnd, float(b.value)))  # type: ignore[arg-type]
        return bids

    def _auction(
        self, rnd: int, bids: dict[str, Bid], v: np.ndarray, record: RoundRecord, pool: _Pool, auction: _Auction
    ) -> None:
        """Lines 11-17: the private auction, the rows it requests verified into ``pool``. When every requested row of
        the round fails (the owner raised, or its row failed verification) and the pool is empty, the auction is run
        again over the remaining bidders (the failed ones are excluded), so one faulty owner never ends the run."""
        c = self.config
        attempt = 0
        while True:
            attempt += 1
            ranked = sorted(
                (o for o in bids if self.active[o]),
                key=lambda o: (-float(bids[o].value), auction.position[o]),  # type: ignore[arg-type]
            )
            to_ask: list[str] = []
            for r_idx, o in enumerate(ranked):
                key = (o, int(bids[o].token))  # type: ignore[arg-type]
                if attempt == 1:  # a row's rank count grows once per round (the tau rule)
                    auction.chosen_count[key] = auction.chosen_count.get(key, 0) + 1
                if not c.private:
                    ask = r_idx == 0
                else:
                    ask = r_idx == 0 or auction.rng.bernoulli_exp(c.epsilon_auction * r_idx)
                    if not ask and auction.chosen_count[key] >= c.tau:
                        ask = True
                        record.tau_requests.append(o)
                if ask:
                    to_ask.append(o)
            if c.private and ranked:
                label = (
                    f"auction round {rnd}"
                    if attempt == 1
                    else f"auction round {rnd}, re-run {attempt - 1} after a fault"
                )
                self.record("owners", "auction", c.epsilon_auction, 1, rnd, label)
            record.requested.extend(to_ask)
            point_replies = self.transport.request_many(
                {o: PointRequest(round=rnd, token=int(bids[o].token)) for o in to_ask}  # type: ignore[arg-type]
            )
            for o in to_ask:
                r = point_replies[o]
                b = bids.pop(o)  # asked once per round, whatever the outcome
                if isinstance(r, PartyUnavailable):
                    self._exclude(o, r.reason, rnd, record)
                    continue
                self.accessed[o] += 1
                self._received[o].add(int(b.token))  # type: ignore[arg-type]
                entry = self._verify(o, b, r, v)
                if isinstance(entry, str):
                    self._exclude(o, entry, rnd, record)
                    continue
                pool.add(entry)
            if pool or not ranked:
                break


def _is_count(value: object) -> bool:
    """Whether a reply's count or token is an integer >= 0 (not a bool, a float or an array)."""
    return not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, np.integer)) and bool(value >= 0)


@dataclass
class _Auction:
    """The auction's state across rounds: its random stream, each owner's place (ties go to the earlier owner) and how
    many rounds each bid row was ranked (the tau rule)."""

    rng: Csprng
    position: dict[str, int]
    chosen_count: dict[tuple[str, int], int] = field(default_factory=dict)


class _Pool:
    """The rows requested and verified, not yet added to the summary. Row k of ``hashes[:len(rows)]`` is
    ``rows[k].hash``: a growable buffer kept in step with the list. The pool is unordered (a winner is swap-removed in
    O(d), not shifted in O(pool)); ``seq[k]`` is the arrival number of ``rows[k]``, so that a tie still goes to the
    earliest pooled row."""

    def __init__(self, dim: int) -> None:
        self.rows: list[_Pooled] = []
        self.hashes = np.zeros((64, dim), dtype=np.float32)
        self.seq = np.zeros(64, dtype=np.int64)
        self.arrivals = 0

    def __len__(self) -> int:
        return len(self.rows)

    def add(self, entry: _Pooled) -> None:
        if len(self.rows) == self.hashes.shape[0]:
            self.hashes = np.concatenate([self.hashes, np.zeros_like(self.hashes)])
            self.seq = np.concatenate([self.seq, np.zeros_like(self.seq)])
        self.hashes[len(self.rows)] = entry.hash
        self.seq[len(self.rows)] = self.arrivals
        self.arrivals += 1
        self.rows.append(entry)

    def pop_best(self, v: np.ndarray) -> tuple[_Pooled, float]:
        """The pooled row with the largest ``h1(x).v`` (the earliest pooled on a tie) and its value, removed."""
        n_pool = len(self.rows)
        # Exact values (float32 products summed in float64, fixed order), computed in Rust: a BLAS
        # gemv here would leave OpenBLAS threads spinning on a core the owners' bids need.
        scores = _core.row_dots(self.hashes[:n_pool], v)
        top = np.flatnonzero(scores == scores.max())
        best = int(top[np.argmin(self.seq[top])])  # the earliest pooled row wins a tie
        win = self.rows[best]
        last = n_pool - 1
        self.rows[best] = self.rows[last]
        self.rows.pop()
        self.hashes[best] = self.hashes[last]
        self.seq[best] = self.seq[last]
        return win, float(scores[best])


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, enabled: bool) -> Any:
    if not enabled:
        return _NoBar()
    try:
        from tqdm.auto import tqdm
    except ImportError:  # tqdm is a dependency, but never fail a run over a progress bar
        return _NoBar()
    return tqdm(total=total, desc="dpsumm rounds", unit="round")


def make_config(
    schedule: Any, *, n_features: int, dim: int, gamma: float, hash_seed: int | str, reveal: str, private: bool
) -> ProtocolConfig:
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


def run_protocol(config: ProtocolConfig, setup: RunSetup, *, method: str) -> SummaryResult:
    """Run Alg. 3 with an :class:`~dpsumm.protocols.paper.Aggregator` through ``setup.transport`` (the seed set
    ``setup.seed``, the schedule ``setup.plan.schedule``) and assemble the result.

    The one place that turns an aggregator run into a :class:`SummaryResult` and its privacy ledger, for
    :func:`summarize` (in-process parties) and for ``dpsumm.flower`` (parties on Flower nodes).
    ``setup.with_labels=None`` keeps labels when any winning row came with one.
    """
    assert setup.transport is not None
    owners, schedule = setup.owners, setup.plan.schedule
    K = len(owners)
    ledger = accounting.Ledger(seeded=setup.rng.is_seeded) if config.private else None

    def record(party: str, mechanism: str, epsilon: float, count: int, rnd: int, label: str) -> None:
        """Put one release on the ledger: h2 releases as MWEM steps, auction rounds as AuctionEvents."""
        if ledger is None:
            return
        events: list[accounting.Event]
        if mechanism == "auction":
            events = [accounting.AuctionEvent(epsilon, config.tau, K, count=count)]
        else:
            events = list(
                accounting.mwem_step_events(
                    epsilon,
                    count,
                    neighbour=config.neighbour,  # type: ignore[arg-type]
                    public=mechanism == "mwem-public",
                )
            )
        for event in events:
            ledger.record(party, event, label=label, round=rnd)  # type: ignore[arg-type]

    agg = Aggregator(setup.transport, owners, setup.consumer, config, setup.seed, setup.rng, record)
    out = agg.run(setup.size, progress=setup.progress)
    winners = out["winners"]
    hashes = (
        np.stack([w.hash for w in winners]).astype(np.float32) if winners else np.zeros((0, config.dim), np.float32)
    )
    pts = None
    if config.reveal == "points":
        pts = np.stack([w.point for w in winners]) if winners else np.zeros((0, config.n_features))
    with_labels = setup.with_labels
    if with_labels is None:
        with_labels = any(w.label is not None for w in winners)
    labs = np.array([w.label for w in winners]) if with_labels else None
    extra = dict(setup.extra)
    extra["pool_left"] = out["trace"][-1].pool_size if out["trace"] else 0
    return agg.summary_result(
        [(w.owner, w.token) for w in winners],
        out["win_values"],
        (pts, hashes, labs),
        accessed=Access(int(sum(agg.accessed.values())), dict(agg.accessed)),
        privacy=ledger,
        method=method,
        started=setup.started,
        extra=extra,
        trace=out["trace"],
        schedule=schedule,
    )
