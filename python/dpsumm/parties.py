"""The parties shared by both protocols: data owners and the consumer (docs/explanation/protocol.md).

Each party is a separate object that answers messages (:mod:`dpsumm.messages`): every request carries its handler,
so that a party knows no purchase and its ``handle`` is one line. What a party offers the handlers is generic: its
rows, labels and strata, its noise streams, its one release per stage (:meth:`OwnerParty.release_once`,
:meth:`ConsumerParty.release_once`) and its kept state (``state`` / ``restore``, for a party rebuilt for every
message, as a Flower node is). The aggregators (:mod:`dpsumm.protocols.paper`, :mod:`dpsumm.protocols.nominations`)
reach the parties only through a :class:`~dpsumm.transport.Transport` and never hold a reference to an owner's rows.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _core, accounting
from .errors import DpsummError, InvalidParameterError, ProtocolError
from .h2 import H2
from .hashing import RFFHasher, hash_digests
from .kernels import BidIndex, nominate
from .messages import (
    Bid,
    BidRequest,
    Message,
    NominationReply,
    NominationRequest,
    PointReply,
    PointRequest,
    PurchaseReply,
    PurchaseRequest,
    Setup,
    SetupReply,
    TargetRelease,
    TargetRequest,
    ValidationRelease,
    ValidationRequest,
    answer,
    from_dict,
    request_key,
)
from .privacy import Csprng, check_random_state, gaussian_mean_release, mean_release_sensitivity
from .sources import row_blocks, take_rows, whole_rows

# The 8-bit index sums integers in i32: dim up to 65,000 (rust/src/bid_index.rs MAX_DIM).
_BID_INDEX_MAX_DIM = 65_000

__all__ = [
    "OwnerParty",
    "ConsumerParty",
    "nominate_rows",
    "owner_stream",
    "release_request_key",
]


def owner_stream(random_state: object, name: str) -> Csprng | None:
    """Owner ``name``'s own noise stream for its DP releases, derived the same way in process and on Flower.

    None: None (the owner keys a stream from operating-system entropy: the only private mode). An int seed:
    ``Csprng(seed).derive("owners").derive("owner:" + name)`` (reproducible, NOT private). A Csprng: a child
    stream derived from it (NOT private).
    """
    if random_state is None:
        return None
    if isinstance(random_state, Csprng):
        return random_state.derive(f"owner:{name}")

    return check_random_state(random_state).derive("owners").derive(f"owner:{name}")


class _Party:
    """What the owners and the consumer share: a name, a role, the rows' labels and strata, and :meth:`handle`."""

    #: The party's role ("owner", "consumer"): it answers the requests whose ``answered_by`` it is.
    role = ""
    name: str
    _labels: np.ndarray | None
    _strata: list[np.ndarray] | None
    _rng: Csprng | None
    _streams: dict[tuple[str, ...], Csprng]

    @property
    def labels(self) -> np.ndarray | None:
        """The party's row labels, or None."""
        return self._labels

    @property
    def strata(self) -> list[np.ndarray] | None:
        """The party's public attributes of its rows, one column per attribute, or None."""
        return self._strata

    def release_stream(self, *path: str) -> Csprng:
        """The party's noise stream at ``path`` below its own (``("a",)``: its child ``"a"``; ``("a", "b")``: the
        child ``"b"`` of that), each derived once, when first asked for. Deriving a stream draws from its parent, so
        a purchase whose handlers must draw what an earlier layout of streams drew asks for them in that layout's
        order, whichever release comes first: then a party rebuilt for every message (a Flower node) draws the same
        noise as one that answers them all. A party given no stream keys one from operating-system entropy (the
        only private mode)."""
        if self._rng is None:
            self._rng = Csprng()
        if not path:
            raise ProtocolError(f"{self.role} {self.name!r}: a release stream needs a name")
        stream = self._streams.get(path)
        if stream is None:
            parent = self._rng if len(path) == 1 else self.release_stream(*path[:-1])
            stream = self._streams[path] = parent.derive(path[-1])
        return stream

    def handle(self, message: Message) -> Message:
        """The party's reply to ``message``: the request's own handler (:func:`dpsumm.messages.answer`); a request
        whose fields are not of their kind (an array where a number goes, a ragged list) is refused with a
        :class:`ProtocolError`, as every other malformed request (:func:`answer_checked`)."""
        return answer_checked(message, self, self.role)


# ---------------------------------------------------------------------------------------------- owner


def _check_row_labels(labels: np.ndarray | None, n_rows: int, name: str) -> None:
    """A party's labels: one per row (1-D, ``n_rows`` long), so that a replaced row moves one count out of one
    label and into one other (the L2 sensitivity ``sqrt(2)`` of the label releases, docs/explanation/label-purchase.md)."""
    if labels is not None and np.shape(labels) != (n_rows,):
        raise InvalidParameterError(
            f"`{name}` must hold one label per row, shape ({n_rows},), got {np.shape(labels)}", name
        )


def _check_row_strata(strata: list[np.ndarray] | None, n_rows: int, name: str) -> None:
    """A party's strata: columns of one value per row each (one row is in one stratum)."""
    if strata is not None and (not strata or any(np.shape(c) != (n_rows,) for c in strata)):
        raise InvalidParameterError(f"`{name}` must be columns of {n_rows} values each", name)


def nominate_rows(
    X: np.ndarray,
    hasher: RFFHasher,
    g_tilde: np.ndarray,
    *,
    temperature: float,
    nominees: int,
    candidates: int,
    sample_seed: int,
    greedy_sample_factor: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """An owner's nominees: the tilted herding of :func:`dpsumm.kernels.nominate` (docs/explanation/nominations.md).

    One streaming pass scores every row ``s(x) = h1(x).g~``, builds the tilted target ``t = sum w(x) h1(x)``,
    ``w ~ exp(s/T)``, and samples ``candidates`` rows with probability ``~ w`` (Gumbel-top-C, seeded by the
    public ``sample_seed``: not privacy noise); the greedy then picks ``nominees`` of them toward ``t`` (exact, or
    with ``greedy_sample_factor = r`` the stochastic greedy, ``ceil((C/M) r)`` random candidates per round). An
    owner with at most ``nominees`` rows nominates them all. Returns ``(tokens int64 (M,), hashes float32
    (M, dim))``, ``M = min(nominees, n_rows)``.
    """
    n = int(X.shape[0])
    if nominees >= n:
        return np.arange(n, dtype=np.int64), np.ascontiguousarray(hasher.transform(X), dtype=np.float32)
    nom = nominate(
        X,
        hasher,
        g_tilde,
        temperature=temperature,
        nominees=nominees,
        candidates=max(candidates, nominees),
        random_state=sample_seed,
        greedy_sample_factor=greedy_sample_factor,
    )
    return np.asarray(nom.indices, dtype=np.int64), np.ascontiguousarray(nom.hashes, dtype=np.float32)


class OwnerParty(_Party):
    """A data owner: hashes its rows once, bids its best remaining row, sends a row when asked.

    The owner never offers a row twice (paper Alg. 3 line 16): a row it has sent is excluded from all
    later bids.

    At setup the owner builds a :class:`~dpsumm.kernels.BidIndex` from its raw rows: 8-bit codes of its hashes
    (about ``n_rows * dim`` bytes, no float32 copy of the hashes) and the offered mask. Each bid is exactly
    ``best_row(h1(data), v, offered)``, found with a quarter of the memory traffic.

    Parameters
    ----------
    data : ndarray or dpsumm.sources.ParquetRows of shape (n_rows, n_features)
        The owner's private rows (float32 or float64), in memory, memory-mapped or read from parquet files at each
        pass (:mod:`dpsumm.sources`). Not copied: the index refers to them to recompute the exact hash of the few
        rows it re-scores, so they must not change during a run.
    labels : ndarray of shape (n_rows,), optional
        Labels sent along with a requested row.
    name : str
    rng : Csprng, optional
        The owner's own noise stream for its DP releases (the ByLabel purchase); None keys one from
        operating-system entropy (the only private mode).
    strata : list of ndarray of shape (n_rows,), optional
        The public attributes of the rows, one column per attribute (:mod:`dpsumm.strata`).
    check : callable, optional
        Called before every message the owner answers; raises when its rows' file changed
        (:meth:`dpsumm.sources.RowSource.check_unchanged`).
    """

    def __init__(
        self,
        data: Any,
        labels: np.ndarray | None = None,
        name: str = "owner",
        rng: Csprng | None = None,
        strata: list[np.ndarray] | None = None,
        check: Callable[[], None] | None = None,
    ) -> None:
        _check_row_labels(labels, int(data.shape[0]), "labels")
        _check_row_strata(strata, int(data.shape[0]), "strata")
        self.name = name
        self._strata = strata
        self._rng = rng
        self._data = data
        self._labels = labels
        self._index: BidIndex | None = None
        # Dimensions beyond what the 8-bit index supports fall back to float32 hashes + the exact kernel.
        self._hashes: np.ndarray | None = None
        self._offered = np.zeros(0, dtype=bool)
        self._n_rows = int(data.shape[0])
        self._reveal = "points"
        # What the owner keeps between messages of a run (state() / restore()): the paper protocol's setup and the
        # tokens sent, the tokens nominated and sold, and each DP release made (answered again, never redrawn).
        self._setup_message: Setup | None = None
        self._sent: list[int] = []
        self._nominated: set[int] = set()
        self._sold: set[int] = set()
        self._releases: dict[str, tuple[str, Message]] = {}
        self._streams: dict[tuple[str, ...], Csprng] = {}
        self._memo: dict[bytes, np.ndarray] = {}  # one value a handler computed from the rows (memo)
        self._key: bytes | None = None  # the key of its state's seal (_state_key)
        self._check = check

    # -- what a purchase's handler reads -------------------------------------------------------------------

    @property
    def data(self) -> Any:
        """The owner's rows (read by the handlers of its own requests, never sent unless a row is sold): an array
        or a :class:`dpsumm.sources.ParquetRows` (:func:`dpsumm.sources.row_blocks`, :func:`~dpsumm.sources.take_rows`)."""
        return self._data

    @property
    def n_rows(self) -> int:
        return self._n_rows

    @property
    def n_features(self) -> int:
        return int(self._data.shape[1])

    def memo(
        self,
        key: bytes,
        compute: Callable[[], np.ndarray],
        derive: Callable[[bytes, np.ndarray], np.ndarray | None] | None = None,
    ) -> np.ndarray:
        """``compute()``, kept for the run's later requests under ``key`` (a handler's value computed from the rows
        and a request's public numbers, such as the rows' cells under a released rule); one value is kept, the
        latest. With ``derive``, a value kept under another key is offered first: ``derive(its key, it)`` returns
        the value under ``key`` computed from it (it may reuse the kept array's memory: the kept value is dropped),
        or None to ``compute()`` it (the cells under merged bins from the cells under the bins released)."""
        kept = self._memo.get(key)
        if kept is not None and len(kept) == self._n_rows:
            return kept
        value = None
        if derive is not None:
            for old_key, old in list(self._memo.items()):
                if len(old) == self._n_rows:
                    value = derive(old_key, old)
        self._memo.clear()  # dropped before computing: an owner of many rows holds one value of every row at a time
        if value is None:
            value = compute()
        self._memo[key] = value
        return value

    def hash_sum(self, hasher: RFFHasher) -> np.ndarray:
        """``sum h1(x)`` over the owner's rows (float64; Rust, streaming; rows read from files in pieces of whole
        blocks, each continuing the sum: the bits of one pass)."""
        if isinstance(self._data, np.ndarray):
            return np.asarray(_core.owner_hash_sum(self._data, hasher._projection), dtype=np.float64)
        total = np.zeros(hasher.dim)
        for _, block in row_blocks(self._data):
            total = _core.owner_hash_sum(block, hasher._projection, total)
        return np.asarray(total, dtype=np.float64)

    #: The owner's role: it answers the :class:`~dpsumm.messages.OwnerRequest` messages.
    role = "owner"

    def release_once(
        self,
        stage: str,
        request: Message,
        release: Callable[[], Message],
        excludes: tuple[str, ...] = (),
    ) -> Message:
        """The owner's one DP release of ``stage`` in a run: ``release()`` draws it (from a stream of
        :meth:`release_stream`) the first time; the same request later gets the same release back
        (post-processing), another request for ``stage`` is refused (it would spend more than the owner's budget),
        and so is any request for ``stage`` once one of the ``excludes`` stages was released (each spends the budget
        ``stage`` would)."""
        key = request_key(request)
        spent = [s for s in excludes if s in self._releases]
        if spent:
            raise ProtocolError(
                f"owner {self.name!r}: release {stage!r} was asked after release {spent[0]!r}, which spent its "
                "budget (one release per stage and run)"
            )
        if stage in self._releases:
            done_key, done = self._releases[stage]
            if done_key != key:
                raise ProtocolError(
                    f"owner {self.name!r}: release {stage!r} was already made with other parameters "
                    "(one release per stage and run)"
                )
            return done
        reply = release()
        self._releases[stage] = (key, reply)
        return reply

    # -- messages ------------------------------------------------------------------------------------------

    def handle(self, message: Message) -> Message:
        """The owner's reply to ``message`` (:meth:`_Party.handle`), refused once rows read from a file changed
        under it (:meth:`dpsumm.sources.RowSource.check_unchanged`)."""
        if self._check is not None:
            self._check()
        return super().handle(message)

    def state(self) -> dict[str, Any]:
        """What the owner keeps between the messages of a run, as JSON-ready values (a Flower node keeps it in its
        node state and rebuilds the party from it for every message: :meth:`restore`), sealed with a MAC keyed by
        this owner's own rows, labels and name (:meth:`_state_key`): only this owner can make a state it restores."""
        body = {
            "owner": self.name,
            "n_rows": self._n_rows,
            "setup": None if self._setup_message is None else _jsonable(self._setup_message.to_dict()),
            "sent": list(self._sent),
            "nominated": sorted(self._nominated),
            "sold": sorted(self._sold),
            "reveal": self._reveal,
            "releases": _kept_releases(self._releases),
        }
        return {**body, "mac": self._seal(body)}

    def _state_key(self) -> bytes:
        """The key of the state's MAC: a digest of this owner's rows, labels and name (its private data: nobody else
        can compute it), computed once per party."""
        if self._key is None:
            digest = hashlib.blake2b(digest_size=32, person=b"dpsumm-state")
            digest.update(self.name.encode())
            data = self._data
            digest.update(str((np.dtype(data.dtype).str, tuple(data.shape))).encode())
            for _, block in row_blocks(data):  # in chunks: rows in a file are never copied whole
                digest.update(np.ascontiguousarray(block).tobytes())
            if self._labels is not None:
                digest.update(np.asarray(self._labels).astype(str).tobytes())
            self._key = digest.digest()
        return self._key

    def _seal(self, body: dict[str, Any]) -> str:
        text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=_state_default)
        return hmac.new(self._state_key(), text.encode(), hashlib.sha256).hexdigest()

    def restore(self, state: object) -> None:
        """Rebuild the party's run from :meth:`state` (replaying the paper protocol's setup and the rows sent).

        The state is untrusted input: anything but a state this owner sealed over its own rows is refused with a
        :class:`ProtocolError` before any of it is used, whatever its form (None, a list, another message, a
        state with a field added, removed or changed: a release dropped or renamed, which would make the owner
        release again with fresh noise, or another owner's state). A fresh run passes no state at all.
        """
        if not isinstance(state, dict):
            raise ProtocolError(f"owner {self.name!r}: its kept state must be a mapping, got {type(state).__name__}")
        if set(state) != _STATE_FIELDS:
            raise ProtocolError(
                f"owner {self.name!r}: its kept state is malformed (fields {sorted(map(str, state))[:8]}, expected "
                f"{sorted(_STATE_FIELDS)})"
            )
        if state["owner"] != self.name or state["n_rows"] != self._n_rows:
            raise ProtocolError(
                f"owner {self.name!r}: the kept state is another owner's ({state['owner']!r:.40}, "
                f"{state['n_rows']!r:.20} rows)"
            )
        body = {k: v for k, v in state.items() if k != "mac"}
        try:
            expected = self._seal(body)
        except (TypeError, ValueError):
            raise ProtocolError(f"owner {self.name!r}: its kept state holds values that are not JSON") from None
        if not isinstance(state["mac"], str) or not hmac.compare_digest(state["mac"], expected):
            raise ProtocolError(
                f"owner {self.name!r}: its kept state does not carry this owner's seal (changed, or made over other "
                "rows): refused, since a changed state could make it release again"
            )
        try:
            if state["setup"] is not None:
                self.setup(from_dict(_from_jsonable(state["setup"])))  # type: ignore[arg-type]
                for token in state["sent"]:  # replay: rows already sent are never offered again
                    self.point(PointRequest(round=0, token=int(token)))
            self._nominated = {int(t) for t in state["nominated"]}
            self._sold = {int(t) for t in state["sold"]}
            self._reveal = str(state["reveal"])
            self._releases = _restored_releases(state["releases"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ProtocolError(f"owner {self.name!r}: its kept state is malformed ({exc})") from None

    def setup(self, m: Setup) -> SetupReply:
        """The paper protocol's setup: the owner indexes its rows' hashes (:class:`~dpsumm.kernels.BidIndex`)."""
        if m.n_features != self._data.shape[1]:
            raise ProtocolError(f"owner {self.name!r} has {self._data.shape[1]} features, setup says {m.n_features}")
        hasher = RFFHasher(m.n_features, dim=m.dim, gamma=m.gamma, seed=m.hash_seed)
        if m.dim <= _BID_INDEX_MAX_DIM:
            self._index = BidIndex.from_rows(whole_rows(self._data), hasher)
            self._hashes = None
        else:
            self._hashes = hasher.transform(whole_rows(self._data))
            self._offered = np.zeros(self._n_rows, dtype=bool)
        self._reveal = m.reveal
        self._setup_message = m
        self._sent = []
        return SetupReply(n_rows=int(self._data.shape[0]), n_features=int(self._data.shape[1]))

    def bid(self, m: BidRequest) -> Bid:
        """Its best row not yet offered against the broadcast ``v`` (paper Alg. 3)."""
        v = np.asarray(m.v)
        if (
            v.ndim != 1
            or v.dtype.kind not in "fiu"
            or not np.isfinite(v).all()
            or (v.size and np.abs(v).max() > np.finfo(np.float32).max)
        ):
            raise ProtocolError(
                f"owner {self.name!r}: a bid request needs a finite 1-D vector v in the float32 range, got {v.dtype} "
                f"{v.shape}"
            )
        v = np.ascontiguousarray(v, dtype=np.float32)
        if self._index is not None:
            best = self._index.best(v)
        elif self._hashes is not None:
            best = _core.best_row(self._hashes, v, self._offered)
        else:
            raise ProtocolError(f"owner {self.name!r} got a bid request before setup")
        if best is None:
            return Bid(round=m.round, value=None, token=None)
        return Bid(round=m.round, value=float(best[0]), token=int(best[1]))

    def _is_offered(self, t: int) -> bool:
        if self._index is not None:
            return self._index.is_offered(t)
        return bool(self._offered[t])

    def point(self, m: PointRequest) -> PointReply:
        """The row (or its hash) behind a token, sent once."""
        t = m.token
        if self._index is None and self._hashes is None:
            raise ProtocolError(f"owner {self.name!r} got a point request before setup")
        if not (0 <= t < self._n_rows) or self._is_offered(t):
            raise ProtocolError(f"owner {self.name!r}: token {t} is unknown or already sent")
        if self._index is not None:
            self._index.mark_offered(t)
        else:
            self._offered[t] = True
        self._sent.append(int(t))
        label = None if self._labels is None else self._labels[t].item()
        if self._reveal == "hashes":
            h = self._index.hash_row(t) if self._index is not None else self._hashes[t].copy()  # type: ignore[index]
            return PointReply(round=m.round, token=t, point=None, hash=h, label=label)
        return PointReply(round=m.round, token=t, point=take_rows(self._data, np.array([t]))[0], hash=None, label=label)

    # -- nominations protocol -------------------------------------------------------------------------

    def nominate(self, m: NominationRequest) -> NominationReply:
        """Rank this owner's rows using only its data, ``g~`` and public parameters (docs/explanation/protocol.md)."""
        if m.n_features != self._data.shape[1]:
            raise ProtocolError(
                f"owner {self.name!r} has {self._data.shape[1]} features, the request says {m.n_features}"
            )
        if m.commit not in ("hashes", "digests"):
            raise ProtocolError(
                f"owner {self.name!r}: unknown commitment {m.commit!r} (expected 'hashes' or 'digests')"
            )
        hasher = RFFHasher(m.n_features, dim=m.dim, gamma=m.gamma, seed=m.hash_seed)
        tokens, hashes = nominate_rows(
            whole_rows(self._data),
            hasher,
            np.asarray(m.target, dtype=np.float64),
            temperature=m.temperature,
            nominees=m.nominees,
            candidates=m.candidates,
            sample_seed=m.sample_seed,
            greedy_sample_factor=m.greedy_sample_factor,
        )
        self._nominated = {int(t) for t in tokens}
        self._sold = set()
        self._reveal = m.reveal
        if m.commit == "digests":
            return NominationReply(n_rows=self._n_rows, tokens=tokens, hashes=None, digests=hash_digests(hashes))
        return NominationReply(n_rows=self._n_rows, tokens=tokens, hashes=hashes)

    def sell(self, m: PurchaseRequest) -> PurchaseReply:
        """Sell the rows (or, with ``reveal="hashes"``, only the labels) of nominated tokens, each once."""
        tokens = np.asarray(m.tokens)
        if tokens.ndim != 1 or tokens.dtype.kind not in "iu":
            raise ProtocolError(f"owner {self.name!r}: a purchase request needs a 1-D integer array of tokens")
        wanted = [int(t) for t in tokens]
        if len(set(wanted)) != len(wanted):
            raise ProtocolError(f"owner {self.name!r}: a purchase request repeats a token")
        bad = [t for t in wanted if t not in self._nominated or t in self._sold]
        if bad:
            raise ProtocolError(f"owner {self.name!r}: tokens {bad[:5]} were not nominated or were already sold")
        self._sold.update(wanted)
        idx = np.asarray(wanted, dtype=np.int64)
        labels = None if self._labels is None else np.asarray(self._labels)[idx]
        points = take_rows(self._data, idx) if self._reveal == "points" else None
        return PurchaseReply(tokens=idx, points=points, labels=labels)


# ---------------------------------------------------------------------------------------------- consumer


#: The consumer's noise stream of its one Gaussian release of D_v's hashed mean (Alg. 3 line 3; the nominees
#: purchase's release), its first child stream: a purchase with releases of its own derives its streams after it.
GAUSSIAN_STREAM = "validation-gaussian"


class ConsumerParty(_Party):
    """The consumer: holds the validation set and releases ``g~ = h2(h1(D_v))`` once (Alg. 3 line 3).

    For the non-private baselines (``method="exact"`` in the request) it releases the exact mean hash.

    Each release (a :class:`~dpsumm.messages.ConsumerRequest`'s: the shared :class:`ValidationRequest` and
    :class:`TargetRequest`, and a purchase's own) is made once per party (:meth:`release_once`): a repeated identical
    request gets the first release back (post-processing, free), and a request of the same kind with other
    parameters is refused with a :class:`ProtocolError` (a second release would spend more than the run's ledger
    records). The Flower consumer keeps its releases the same way in node state (:meth:`state`, :meth:`restore`).
    """

    #: The consumer's role: it answers the :class:`~dpsumm.messages.ConsumerRequest` messages.
    role = "consumer"
    _rng: Csprng  # the consumer is always given its stream

    def __init__(
        self,
        validation: np.ndarray,
        rng: Csprng,
        name: str = "consumer",
        labels: np.ndarray | None = None,
        strata: list[np.ndarray] | None = None,
    ) -> None:
        _check_row_labels(labels, int(np.shape(validation)[0]), "labels")
        _check_row_strata(strata, int(np.shape(validation)[0]), "strata")
        self.name = name
        self._strata = strata
        self._validation = validation
        self._labels = labels
        self._rng = rng
        self._streams: dict[tuple[str, ...], Csprng] = {}
        self._released: dict[str, tuple[str, Message]] = {}  # by request kind: (the request's key, the release)

    @property
    def validation(self) -> np.ndarray:
        """The validation rows (read by the handlers of the consumer's own requests; sent only to the trusted
        aggregator, when asked)."""
        return self._validation

    def release_once(self, request: Message, release: Callable[[], Message]) -> Message:
        """The consumer's one release for a request of ``request.kind`` in a run: ``release()`` draws it the first
        time; the same request later gets the same release back (post-processing), another request of that kind is
        refused (it would spend budget no ledger records), and so is a request for the release another kind already
        made (:data:`EXCLUSIVE_RELEASES`: D_v's hashed mean). A validation set of one row releases nothing: a run's
        fit to D_v needs two."""
        if int(np.shape(self._validation)[0]) < 2:
            raise ProtocolError(
                f"consumer {self.name!r}: its validation set has {np.shape(self._validation)[0]} row(s); a run needs "
                "at least 2 (the summary's fit to D_v is measured against their spread)"
            )
        rival = EXCLUSIVE_RELEASES.get(request.kind)
        if rival is not None and rival in self._released:
            raise ProtocolError(
                f"consumer {self.name!r}: a {request.kind!r} after its {rival!r} release would release D_v's hashed "
                "mean a second time (one release of it per run: another would spend budget no ledger records)"
            )
        key = release_request_key(request)
        kept = self._released.get(request.kind)
        if kept is not None:
            if kept[0] != key:
                raise ProtocolError(
                    f"consumer {self.name!r}: its {request.kind!r} release was already made for another "
                    "request (one release per run: another would spend budget no ledger records)"
                )
            return kept[1]
        reply = release()
        self._released[request.kind] = (key, reply)
        return reply

    def state(self) -> dict[str, Any]:
        """The releases the consumer made in a run, as JSON-ready values (a Flower node keeps them in its node state
        and rebuilds the party from them for every message: :meth:`restore`)."""
        return {"releases": _kept_releases(self._released)}

    def restore(self, state: object) -> None:
        """Rebuild the consumer's run from :meth:`state` (untrusted input: anything else is a ProtocolError)."""
        if not isinstance(state, dict) or set(state) != {"releases"} or not isinstance(state["releases"], dict):
            raise ProtocolError(f"consumer {self.name!r}: its kept state is malformed ({type(state).__name__})")
        try:
            self._released = _restored_releases(state["releases"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ProtocolError(f"consumer {self.name!r}: its kept state is malformed ({exc})") from None

    def h2_release(self, m: ValidationRequest) -> ValidationRelease:
        """The paper protocol's release of ``g~ = h2(h1(D_v))`` (or, for its non-private baseline, the exact mean)."""
        hasher = RFFHasher(m.n_features, dim=m.dim, gamma=m.gamma, seed=m.hash_seed)
        H = hasher.transform(self._validation)
        n = int(H.shape[0])
        if m.method == "exact":
            return ValidationRelease(mean_hash=H.astype(np.float64).mean(0), n_rows=n, private=False)
        h2 = H2(m.dim, m.eta, self._rng.derive("validation-h2"))
        h2.add(H)
        return ValidationRelease(mean_hash=h2.release(m.steps, m.epsilon), n_rows=n, private=True)

    def target_release(self, m: TargetRequest) -> TargetRelease:
        """The nominations protocol's one release of ``mean h1(D_v)`` (docs/explanation/protocol.md).

        ``"gaussian"``: the consumer calibrates the discrete Gaussian to ``(epsilon, delta)`` itself, from its
        own ``|D_v|`` (replace-one in ``D_v``: L2 sensitivity ``2 sqrt(2) / |D_v|``), so it never releases
        more than it was asked to spend. ``"mwem"``: the paper's h2. ``"exact"``: no noise (non-private run).
        The exact mean goes only to the trusted aggregator.
        """
        hasher = RFFHasher(m.n_features, dim=m.dim, gamma=m.gamma, seed=m.hash_seed)
        H = hasher.transform(self._validation)
        n = int(H.shape[0])
        exact = H.astype(np.float64).mean(0)
        rows = np.array(self._validation) if m.send_rows else None
        if m.release == "exact":
            return TargetRelease(
                noisy_mean=exact.copy(), exact_mean=exact, n_rows=n, sigma=0.0, granularity=0.0, rows=rows
            )
        if m.release == "gaussian":
            if not 0.0 < m.delta < 1.0 / n:
                raise ProtocolError(
                    f"consumer: validation delta {m.delta!r} is not in (0, 1/|D_v|) = (0, {1.0 / n:.3g})"
                )
            cal = accounting.calibrate_gaussian(m.epsilon, m.delta, sensitivity=mean_release_sensitivity(n), dim=m.dim)
            noisy = gaussian_mean_release(exact, cal, self.release_stream(GAUSSIAN_STREAM))
            return TargetRelease(
                noisy_mean=noisy,
                exact_mean=exact,
                n_rows=n,
                sigma=float(cal.sigma),
                granularity=float(cal.granularity),
                rows=rows,
            )
        if m.release == "mwem":
            h2 = H2(m.dim, m.eta, self._rng.derive("validation-h2"))
            h2.add(H)
            noisy = h2.release(m.steps, m.epsilon)
            return TargetRelease(
                noisy_mean=np.asarray(noisy, dtype=np.float64),
                exact_mean=exact,
                n_rows=n,
                sigma=float("nan"),
                granularity=0.0,
                rows=rows,
            )
        raise ProtocolError(f"consumer: unknown release {m.release!r}")


#: Consumer requests that release the same thing (``mean h1(D_v)``: the paper protocol's h2 release, the nominations
#: protocol's target): once one was answered in a run the other is refused, as a second release of either would be.
EXCLUSIVE_RELEASES = {"validation_request": "target_request", "target_request": "validation_request"}


#: What a release request asks for (:func:`dpsumm.messages.request_key`): two requests share it exactly when every
#: field is equal (arrays by dtype, shape and bytes); a repeated request must ask for the same release.
release_request_key = request_key


def answer_checked(message: Message, party: Any, role: str) -> Message:
    """``party``'s answer to ``message`` (:func:`dpsumm.messages.answer`); a request whose fields are not of their
    kind (an array where a number goes, a ragged list) raises a :class:`ProtocolError` naming the party and the
    request, never a ValueError or TypeError from inside its handler."""
    try:
        return answer(message, party)
    except (ValueError, TypeError, IndexError, KeyError, AttributeError, OverflowError) as exc:
        if isinstance(exc, DpsummError):
            raise
        raise ProtocolError(
            f"{role} {party.name!r}: a malformed {getattr(message, 'kind', type(message).__name__)!r} request "
            f"({type(exc).__name__}: {str(exc)[:120]})"
        ) from None


#: The fields of an owner's kept state (:meth:`OwnerParty.state`).
_STATE_FIELDS = {"owner", "n_rows", "setup", "sent", "nominated", "sold", "reveal", "releases", "mac"}


def _state_default(value: object) -> Any:
    """JSON for the numpy scalars a kept state may hold (a label, a count)."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON")


def _jsonable(fields: dict[str, Any]) -> dict[str, Any]:
    """A message's fields as JSON values: arrays as ``{"array": values, "dtype": ...}`` (floats round-trip exactly)."""
    out: dict[str, Any] = {}
    for k, v in fields.items():
        if isinstance(v, np.ndarray):
            out[k] = {"array": v.tolist(), "dtype": str(v.dtype), "shape": list(v.shape)}
        elif isinstance(v, np.generic):
            out[k] = v.item()
        else:
            out[k] = v
    return out


def _from_jsonable(fields: dict[str, Any]) -> dict[str, Any]:
    return {
        k: (np.asarray(v["array"], dtype=np.dtype(v["dtype"])).reshape(v["shape"]) if isinstance(v, dict) else v)
        for k, v in fields.items()
    }


def _kept_releases(releases: dict[str, tuple[str, Message]]) -> dict[str, list[Any]]:
    """A party's releases of the run (by stage or request kind: the request's key and the release) as JSON values."""
    return {where: [key, _jsonable(reply.to_dict())] for where, (key, reply) in releases.items()}


def _restored_releases(kept: Any) -> dict[str, tuple[str, Message]]:
    """:func:`_kept_releases` read back (untrusted: a malformed entry raises KeyError, TypeError, ValueError or
    AttributeError, which the caller reports)."""
    return {str(where): (str(key), from_dict(_from_jsonable(reply))) for where, (key, reply) in kept.items()}
