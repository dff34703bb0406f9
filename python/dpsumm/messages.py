"""The protocol's messages: every value that crosses between parties, with a fixed schema.

Each message is a frozen dataclass of scalars, strings and numpy arrays, convertible to and from a plain
``dict`` (:meth:`Message.to_dict`, :func:`from_dict`) so that the same protocol runs in one process, across
processes, or across organisations (the Flower transport carries these dicts).

Direction and content (paper Alg. 3):

========================  =====================  ==========================================================
message                   from -> to             content
========================  =====================  ==========================================================
:class:`Setup`            aggregator -> owner    public h1 parameters; what to reveal on request
:class:`SetupReply`       owner -> aggregator    number of rows and features (public sizes)
:class:`BidRequest`       aggregator -> owner    round ``l`` and the broadcast ``v = g~ - q/(q+1) g_l``
:class:`Bid`              owner -> aggregator    ``max_x h1(x).v`` over rows not yet offered, and its token
:class:`PointRequest`     aggregator -> owner    "send the row behind this token"
:class:`PointReply`       owner -> aggregator    the row (or only its hash), its label if any
:class:`ValidationRequest` aggregator -> consumer the h2 parameters for the validation release
:class:`ValidationRelease` consumer -> aggregator ``g~ = h2(h1(D_v))``, a DP estimate of ``mean h1(D_v)``
========================  =====================  ==========================================================

The nominations protocol (:mod:`dpsumm.protocols.nominations`) uses three exchanges in all:

========================  =====================  ==========================================================
message                   from -> to             content
========================  =====================  ==========================================================
:class:`TargetRequest`    aggregator -> consumer public h1 parameters and the release to make (mechanism, budget)
:class:`TargetRelease`    consumer -> aggregator ``g~`` (for the owners), the exact mean (for the trusted
                                                 aggregator only), ``|D_v|`` and the noise scale
:class:`NominationRequest` aggregator -> owner   public h1 parameters, ``g~``, the nominee count ``M``,
                                                 temperature and candidate count
:class:`NominationReply`  owner -> aggregator    the owner's row count, its nominees' tokens and h1 hashes
                                                 (or, by default, a 16-byte digest of each hash)
:class:`PurchaseRequest`  aggregator -> owner    the tokens whose rows (or labels) the aggregator buys
:class:`PurchaseReply`    owner -> aggregator    those rows (``reveal="points"``) and labels
========================  =====================  ==========================================================

Every request carries its handler: a request to an owner is an :class:`OwnerRequest`, answered by
:meth:`OwnerRequest.answer`; a request to the consumer a :class:`ConsumerRequest`, answered once a run by
:meth:`ConsumerRequest.draw`. A party answers any request by :func:`answer` (its ``handle`` is that one line),
so that each purchase (:mod:`dpsumm.protocols.nominations`) adds its own requests in its own module (the cell
family's :mod:`dpsumm.protocols.nominations.cell_messages`) and every party, in process or on a Flower node, runs
them without knowing the purchase.

A token is the owner's opaque, stable handle for a row (the aggregator uses it only to count how many
rounds a row was its owner's best, the ``tau`` rule, and to ask for it).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .errors import InvalidParameterError, ProtocolError

__all__ = [
    "Message",
    "Setup",
    "SetupReply",
    "BidRequest",
    "Bid",
    "PointRequest",
    "PointReply",
    "ValidationRequest",
    "ValidationRelease",
    "TargetRequest",
    "TargetRelease",
    "NominationRequest",
    "NominationReply",
    "PurchaseRequest",
    "PurchaseReply",
    "OwnerRequest",
    "ConsumerRequest",
    "answer",
    "from_dict",
    "request_key",
    "real_array",
    "real_number",
]

_REGISTRY: dict[str, type[Message]] = {}


@dataclass(frozen=True)
class Message:
    """Base class: a typed message with a ``kind`` tag."""

    kind: ClassVar[str] = "message"
    #: The role of the party that answers this message ("owner", "consumer"); None: a reply, answered by nobody.
    answered_by: ClassVar[str | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "kind" not in cls.__dict__:  # a subclass keeping its parent's kind decodes as the parent
            return
        taken = _REGISTRY.get(cls.kind)
        if taken is not None and (taken.__module__, taken.__qualname__) != (cls.__module__, cls.__qualname__):
            # A second class under one kind would silently change what every later message of that kind decodes to.
            raise InvalidParameterError(
                f"message kind {cls.kind!r} is already registered to {taken.__module__}.{taken.__qualname__}; "
                f"{cls.__module__}.{cls.__qualname__} needs a kind of its own",
                "kind",
            )
        _REGISTRY[cls.kind] = cls

    def to_dict(self) -> dict[str, Any]:
        """A plain dict of the fields plus ``"kind"``; arrays stay numpy arrays."""
        out: dict[str, Any] = {"kind": self.kind}
        for f in dataclasses.fields(self):
            out[f.name] = getattr(self, f.name)
        return out

    def answer(self, party: Any) -> Message:
        """The reply of ``party`` (whose role is :attr:`answered_by`); raises ProtocolError."""
        raise ProtocolError(f"{party.role} {party.name!r} cannot handle {self.kind!r}")

    def group(self) -> str:
        """The group a transport may file the message under (Flower's ``group_id``): the round of a request of the
        paper protocol's rounds, ``""`` otherwise."""
        return ""

    def releases_exact(self) -> bool:
        """Whether answering it releases a party's data without noise (a Flower node answers only when its own
        operator allows it: node config ``allow-exact-release``)."""
        return False

    def spend(self) -> tuple[str, float, float] | None:
        """``(release, epsilon, delta)`` that answering this request may spend of its party's budget (composed by
        basic composition), ``release`` naming what is released: requests of one release name the same, and a
        release asked again costs nothing more. None when it releases nothing under a budget: a bid, a row, an
        exact release (governed by ``allow-exact-release``). A request that makes a DP release says what it spends
        here; a Flower node caps it (:mod:`dpsumm.flower.caps`)."""
        return None


def answer(message: object, party: Any) -> Message:
    """``party``'s reply to ``message``: the message's own handler, when it is a request to a party of that role
    (``party.role``); ProtocolError otherwise."""
    if not isinstance(message, Message) or message.answered_by != party.role:
        kind = message.kind if isinstance(message, Message) else type(message).__name__
        raise ProtocolError(f"{party.role} {party.name!r} cannot handle {kind!r}")
    return message.answer(party)


@dataclass(frozen=True)
class OwnerRequest(Message):
    """A request that an owner answers by :meth:`answer`: the shared exchanges' requests below, and each purchase's
    own requests to the owners, in the purchase's module, so that an owner (in process or on a Flower node) runs any
    purchase without knowing it."""

    kind: ClassVar[str] = "owner_request"
    answered_by: ClassVar[str | None] = "owner"

    def answer(self, owner: Any) -> Message:
        """The owner's reply (``owner`` is a :class:`dpsumm.parties.OwnerParty`); raises ProtocolError (here: a
        request of no purchase, which no owner answers)."""
        return super().answer(owner)


@dataclass(frozen=True)
class ConsumerRequest(Message):
    """A request that the consumer answers once a run: the shared releases below, and a purchase's own release
    asked of the consumer, in the purchase's module (:class:`dpsumm.protocols.nominations.by_direction.
    DirectionRequest`), so that the consumer (in process or on a Flower node) runs any purchase without knowing it.

    :meth:`answer` is the consumer's :meth:`~dpsumm.parties.ConsumerParty.release_once` of :meth:`draw`: a
    repeated identical request gets the first release back (post-processing), another request of the same kind is
    refused (a second release would spend budget no ledger records)."""

    kind: ClassVar[str] = "consumer_request"
    answered_by: ClassVar[str | None] = "consumer"

    def answer(self, consumer: Any) -> Message:
        """The consumer's one release for this request (made by :meth:`draw` the first time)."""
        reply: Message = consumer.release_once(self, lambda: self.draw(consumer))
        return reply

    def draw(self, consumer: Any) -> Message:
        """The release itself (``consumer`` is a :class:`dpsumm.parties.ConsumerParty`); raises ProtocolError (here: a
        request of no purchase, which the consumer does not answer)."""
        return Message.answer(self, consumer)


def from_dict(data: dict[str, Any]) -> Message:
    """Rebuild a message from :meth:`Message.to_dict` output, checking the schema."""
    if not isinstance(data, dict):
        raise ProtocolError(f"a message must be a mapping of its fields, got {type(data).__name__}")
    kind = data.get("kind")
    cls = _REGISTRY.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ProtocolError(f"unknown message kind {kind!r}")
    names = {f.name for f in dataclasses.fields(cls)}
    missing = names - data.keys()
    if missing:
        raise ProtocolError(f"{kind} message is missing {sorted(missing)}")
    return cls(**{n: data[n] for n in names})


@dataclass(frozen=True)
class Setup(OwnerRequest):
    kind: ClassVar[str] = "setup"
    n_features: int
    dim: int
    gamma: float
    hash_seed: int | str
    reveal: str  # "points" or "hashes"

    def answer(self, owner: Any) -> Message:
        reply: Message = owner.setup(self)
        return reply


@dataclass(frozen=True)
class SetupReply(Message):
    kind: ClassVar[str] = "setup_reply"
    n_rows: int
    n_features: int


@dataclass(frozen=True)
class BidRequest(OwnerRequest):
    kind: ClassVar[str] = "bid_request"
    round: int
    v: np.ndarray = field(repr=False)  # (dim,) float32

    def answer(self, owner: Any) -> Message:
        reply: Message = owner.bid(self)
        return reply

    def group(self) -> str:
        return str(self.round)


@dataclass(frozen=True)
class Bid(Message):
    kind: ClassVar[str] = "bid"
    round: int
    value: float | None  # None: nothing left to offer
    token: int | None


@dataclass(frozen=True)
class PointRequest(OwnerRequest):
    kind: ClassVar[str] = "point_request"
    round: int
    token: int

    def answer(self, owner: Any) -> Message:
        reply: Message = owner.point(self)
        return reply

    def group(self) -> str:
        return str(self.round)


@dataclass(frozen=True)
class PointReply(Message):
    kind: ClassVar[str] = "point_reply"
    round: int
    token: int
    point: np.ndarray | None = field(repr=False)  # (n_features,) when reveal="points"
    hash: np.ndarray | None = field(repr=False)  # (dim,) when reveal="hashes"
    label: Any = None


#: The release of ``mean h1(D_v)`` that the paper's validation request and the nominations' target request both
#: ask for: one spend between them (:meth:`Message.spend`).
HASHED_MEAN = "hashed_mean"


@dataclass(frozen=True)
class ValidationRequest(ConsumerRequest):
    kind: ClassVar[str] = "validation_request"
    n_features: int
    dim: int
    gamma: float
    hash_seed: int | str
    method: str  # "private" (h2) or "exact" (non-private baselines)
    steps: int
    epsilon: float
    eta: float

    def draw(self, consumer: Any) -> Message:
        reply: Message = consumer.h2_release(self)
        return reply

    def releases_exact(self) -> bool:
        return self.method == "exact"

    def spend(self) -> tuple[str, float, float] | None:
        if self.releases_exact():
            return None
        # The paper's h2: `steps` MWEM steps of `epsilon` each, pure.
        return HASHED_MEAN, float(self.epsilon) * (float(self.steps) if self.method == "private" else 1.0), 0.0


@dataclass(frozen=True)
class ValidationRelease(Message):
    kind: ClassVar[str] = "validation_release"
    mean_hash: np.ndarray = field(repr=False)  # (dim,) estimate of mean h1(D_v)
    n_rows: int
    private: bool


# ---------------------------------------------------------------------------------- nominations protocol


@dataclass(frozen=True)
class TargetRequest(ConsumerRequest):
    """Ask the consumer for the one release of its validation set's hash mean.

    ``release`` is ``"gaussian"`` (discrete Gaussian at ``(epsilon, delta)``, replace-one in ``D_v``),
    ``"mwem"`` (the paper's h2 with ``steps`` steps of ``epsilon`` each on the grid ``eta``) or ``"exact"``
    (no noise: the non-private run).
    """

    kind: ClassVar[str] = "target_request"
    n_features: int
    dim: int
    gamma: float
    hash_seed: int | str
    release: str
    epsilon: float
    delta: float
    steps: int
    eta: float
    send_rows: bool  # also send D_v's raw rows to the trusted aggregator (exact-kernel choice)

    def draw(self, consumer: Any) -> Message:
        reply: Message = consumer.target_release(self)
        return reply

    def releases_exact(self) -> bool:
        return self.release == "exact"

    def spend(self) -> tuple[str, float, float] | None:
        if self.releases_exact():
            return None
        if self.release == "mwem":  # the paper's h2: `steps` MWEM steps of `epsilon` each, pure
            return HASHED_MEAN, float(self.epsilon) * float(self.steps), 0.0
        return HASHED_MEAN, float(self.epsilon), float(self.delta)


@dataclass(frozen=True)
class TargetRelease(Message):
    """The consumer's answer: ``noisy_mean`` goes to the owners; ``exact_mean`` stays with the trusted aggregator."""

    kind: ClassVar[str] = "target_release"
    noisy_mean: np.ndarray = field(repr=False)  # (dim,) float64: g~
    exact_mean: np.ndarray = field(repr=False)  # (dim,) float64: mean h1(D_v)
    n_rows: int
    sigma: float  # noise standard deviation per coordinate (0 for "exact"; the Gaussian's sigma otherwise)
    granularity: float  # grid step of the release (0 when not on a grid)
    rows: np.ndarray | None = field(default=None, repr=False)  # D_v, for the trusted aggregator, when asked


@dataclass(frozen=True)
class NominationRequest(OwnerRequest):
    """Everything an owner needs to nominate: public h1 parameters, ``g~`` and public counts."""

    kind: ClassVar[str] = "nomination_request"
    n_features: int
    dim: int
    gamma: float
    hash_seed: int | str
    target: np.ndarray = field(repr=False)  # (dim,) float64: g~
    nominees: int
    temperature: float
    candidates: int  # rows each owner samples for its herding (>= nominees)
    reveal: str
    sample_seed: int  # public seed of the owner's candidate sample (not privacy noise)
    greedy_sample_factor: float | None = None  # None: exact greedy among the candidates; r > 0: stochastic greedy
    # What the owner commits to for each nominee: "hashes" (its h1 hash, the aggregator chooses on hashes) or
    # "digests" (a BLAKE2b-128 digest of that hash, dpsumm.hashing.hash_digests: the aggregator chooses on the
    # raw rows it buys and only verifies them against the digests).
    commit: str = "hashes"

    def answer(self, owner: Any) -> Message:
        reply: Message = owner.nominate(self)
        return reply


@dataclass(frozen=True)
class NominationReply(Message):
    kind: ClassVar[str] = "nomination_reply"
    n_rows: int
    tokens: np.ndarray = field(repr=False)  # (M,) int64, distinct, in [0, n_rows)
    hashes: np.ndarray | None = field(repr=False)  # (M, dim) float32: h1 of the nominated rows (commit="hashes")
    digests: np.ndarray | None = field(default=None, repr=False)  # (M, 16) uint8 (commit="digests")


@dataclass(frozen=True)
class PurchaseRequest(OwnerRequest):
    kind: ClassVar[str] = "purchase_request"
    tokens: np.ndarray = field(repr=False)  # (n,) int64: nominated tokens

    def answer(self, owner: Any) -> Message:
        reply: Message = owner.sell(self)
        return reply


@dataclass(frozen=True)
class PurchaseReply(Message):
    kind: ClassVar[str] = "purchase_reply"
    tokens: np.ndarray = field(repr=False)  # (n,) int64, as requested
    points: np.ndarray | None = field(repr=False)  # (n, n_features) when reveal="points"
    labels: np.ndarray | None = field(repr=False)  # (n,) when the owner has labels


def request_key(message: Message) -> str:
    """What a request asks for, as a digest of every field (arrays with their dtype and shape): a party that keeps
    a release answers a repeated request with the same key by the same release, and refuses another."""
    h = hashlib.sha256()
    for k, v in sorted(message.to_dict().items()):
        arr = v if isinstance(v, np.ndarray) else None
        h.update(
            json.dumps(
                [k, None if arr is not None else repr(v), None if arr is None else [str(arr.dtype), list(arr.shape)]]
            ).encode()
        )
        if arr is not None:
            h.update(np.ascontiguousarray(arr).tobytes() if arr.dtype.kind != "O" else repr(arr.tolist()).encode())
    return h.hexdigest()


def real_array(value: object) -> np.ndarray | None:
    """A reply's array field as an array of real numbers (integer or floating dtype), or None when it is not one
    (None, a Python object, or an array of objects, strings, booleans or complex numbers): the receiver refuses it
    before it computes with it."""
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "fiu":
        return None
    return value


def real_number(value: object) -> float | None:
    """A reply's scalar field as a finite float (from an int or float, not a bool), or None when it is not one."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an int beyond the float range
        return None
    return number if math.isfinite(number) else None
