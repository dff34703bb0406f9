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

With ``purchase="quotas"`` (an option) the nominations and purchase exchanges are replaced by two DP sketch
releases of every owner and one quota purchase (docs/design.md §2.5):

========================  =====================  ==========================================================
message                   from -> to             content
========================  =====================  ==========================================================
:class:`SketchRequest`    aggregator -> owner    stage ``"sum"``: public h1 parameters and the owners' budget;
                                                 stage ``"histogram"``: also a public direction and bin edges
:class:`SketchReply`      owner -> aggregator    its row count and the release: ``sum h1(D_k)`` or the counts
                                                 of its scores per bin, plus a discrete Gaussian (DP)
:class:`QuotaRequest`     aggregator -> owner    public tilt parameters, ``g~`` and the owner's quota ``n_k``
:class:`QuotaReply`       owner -> aggregator    its ``n_k`` best rows (by its own ranking): tokens, h1 hashes,
                                                 rows (``reveal="points"``) and labels
========================  =====================  ==========================================================

A token is the owner's opaque, stable handle for a row (the aggregator uses it only to count how many
rounds a row was its owner's best, the ``tau`` rule, and to ask for it).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .errors import ProtocolError

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
    "SketchRequest",
    "SketchReply",
    "QuotaRequest",
    "QuotaReply",
    "LabelHistogramRequest",
    "LabelHistogramRelease",
    "from_dict",
]

_REGISTRY: dict[str, type[Message]] = {}


@dataclass(frozen=True)
class Message:
    """Base class: a typed message with a ``kind`` tag."""

    kind: ClassVar[str] = "message"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _REGISTRY[cls.kind] = cls

    def to_dict(self) -> dict[str, Any]:
        """A plain dict of the fields plus ``"kind"``; arrays stay numpy arrays."""
        out: dict[str, Any] = {"kind": self.kind}
        for f in dataclasses.fields(self):
            out[f.name] = getattr(self, f.name)
        return out


def from_dict(data: dict[str, Any]) -> Message:
    """Rebuild a message from :meth:`Message.to_dict` output, checking the schema."""
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
class Setup(Message):
    kind: ClassVar[str] = "setup"
    n_features: int
    dim: int
    gamma: float
    hash_seed: int | str
    reveal: str  # "points" or "hashes"


@dataclass(frozen=True)
class SetupReply(Message):
    kind: ClassVar[str] = "setup_reply"
    n_rows: int
    n_features: int


@dataclass(frozen=True)
class BidRequest(Message):
    kind: ClassVar[str] = "bid_request"
    round: int
    v: np.ndarray = field(repr=False)  # (dim,) float32


@dataclass(frozen=True)
class Bid(Message):
    kind: ClassVar[str] = "bid"
    round: int
    value: float | None  # None: nothing left to offer
    token: int | None


@dataclass(frozen=True)
class PointRequest(Message):
    kind: ClassVar[str] = "point_request"
    round: int
    token: int


@dataclass(frozen=True)
class PointReply(Message):
    kind: ClassVar[str] = "point_reply"
    round: int
    token: int
    point: np.ndarray | None = field(repr=False)  # (n_features,) when reveal="points"
    hash: np.ndarray | None = field(repr=False)  # (dim,) when reveal="hashes"
    label: Any = None


@dataclass(frozen=True)
class ValidationRequest(Message):
    kind: ClassVar[str] = "validation_request"
    n_features: int
    dim: int
    gamma: float
    hash_seed: int | str
    method: str  # "private" (h2) or "exact" (non-private baselines)
    steps: int
    epsilon: float
    eta: float


@dataclass(frozen=True)
class ValidationRelease(Message):
    kind: ClassVar[str] = "validation_release"
    mean_hash: np.ndarray = field(repr=False)  # (dim,) estimate of mean h1(D_v)
    n_rows: int
    private: bool


# ---------------------------------------------------------------------------------- nominations protocol


@dataclass(frozen=True)
class TargetRequest(Message):
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
class NominationRequest(Message):
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


@dataclass(frozen=True)
class NominationReply(Message):
    kind: ClassVar[str] = "nomination_reply"
    n_rows: int
    tokens: np.ndarray = field(repr=False)  # (M,) int64, distinct, in [0, n_rows)
    hashes: np.ndarray | None = field(repr=False)  # (M, dim) float32: h1 of the nominated rows (commit="hashes")
    digests: np.ndarray | None = field(default=None, repr=False)  # (M, 16) uint8 (commit="digests")


@dataclass(frozen=True)
class PurchaseRequest(Message):
    kind: ClassVar[str] = "purchase_request"
    tokens: np.ndarray = field(repr=False)  # (n,) int64: nominated tokens


@dataclass(frozen=True)
class PurchaseReply(Message):
    kind: ClassVar[str] = "purchase_reply"
    tokens: np.ndarray = field(repr=False)  # (n,) int64, as requested
    points: np.ndarray | None = field(repr=False)  # (n, n_features) when reveal="points"
    labels: np.ndarray | None = field(repr=False)  # (n,) when the owner has labels


# ---------------------------------------------------------------------------------- quota purchase (issue 19)


@dataclass(frozen=True)
class SketchRequest(Message):
    """Ask an owner for one of its two DP sketch releases (docs/design.md §2.5).

    ``stage="sum"``: ``sum_x h1(x)`` over its rows (L2 sensitivity ``2 sqrt(2)`` under replace-one);
    ``stage="histogram"``: the counts of ``h1(x).direction`` in the bins of ``edges`` (sensitivity
    ``sqrt(2)``). The owner calibrates the discrete Gaussian itself so that its ``releases`` releases
    together meet ``(epsilon, delta)``.
    """

    kind: ClassVar[str] = "sketch_request"
    n_features: int
    dim: int
    gamma: float
    hash_seed: int | str
    stage: str  # "sum" or "histogram"
    epsilon: float
    delta: float
    releases: int
    direction: np.ndarray = field(repr=False)  # (dim,) float64; empty for "sum" and "labels"
    edges: np.ndarray = field(repr=False)  # (bins - 1,) float64, increasing; empty for "sum" and "labels"
    # stage="labels" (purchase="labels"): the public label set; the owner releases its row count per label and
    # the sum of h1 (n_features, dim, gamma, hash_seed: the cells' h1) over all its rows (L2 sensitivity
    # sqrt(2 + 8): one row leaves one label's count and enters another's, and moves the sum by at most 2 sqrt(2)).
    label_set: np.ndarray | None = field(default=None, repr=False)


@dataclass(frozen=True)
class SketchReply(Message):
    kind: ClassVar[str] = "sketch_reply"
    n_rows: int
    values: np.ndarray = field(repr=False)  # (dim,) or (bins,) float64: the noisy release
    sigma: float  # the noise's standard deviation per coordinate (the owner's calibration)
    granularity: float


@dataclass(frozen=True)
class QuotaRequest(Message):
    """Buy an owner's ``count`` best rows, ranked from its own data, ``g~`` and public numbers only."""

    kind: ClassVar[str] = "quota_request"
    n_features: int
    dim: int
    gamma: float
    hash_seed: int | str
    target: np.ndarray = field(repr=False)  # (dim,) float64: g~
    direction: np.ndarray = field(repr=False)  # (dim,) float64: the public tilt direction
    temperature: float
    tilt_rounds: int  # self-consistent steps toward g~ (0: the public tilt direction/temperature)
    stop_sq: float  # the discrepancy principle's threshold on ||g~ - m_lambda||^2
    count: int
    candidates: int
    reveal: str
    sample_seed: int
    greedy_sample_factor: float | None = None
    # purchase="labels": sell ``label_counts[j]`` rows of label ``label_set[j]``, drawn by herding among its rows of
    # that label (``count`` is their sum; ``candidates`` the herding's candidates in all; target, direction,
    # temperature, tilt_rounds and stop_sq are unused). An owner holding fewer rows of a label than asked sells as
    # many of its other rows instead, from the labels of highest ``label_preference`` first (public: the consumer's
    # released mass per label), so that it sells ``min(count, its rows)`` rows.
    label_set: np.ndarray | None = field(default=None, repr=False)
    label_counts: np.ndarray | None = field(default=None, repr=False)
    label_preference: np.ndarray | None = field(default=None, repr=False)
    # purchase="labels": ``label_herded[j]`` says whether label j's rows are herded (True) or drawn uniformly among the
    # owner's rows of the label (False); public, from the asks (protocols.nominations.herded_sales). None: all herded.
    label_herded: np.ndarray | None = field(default=None, repr=False)


@dataclass(frozen=True)
class LabelHistogramRequest(Message):
    """Ask the consumer for its one release of ``D_v``'s histogram over the label purchase's cells.

    Cell ``j`` holds the validation rows of label ``label_set[cell_labels[j]]`` whose hash in the cells' h1
    (``n_features``, ``dim``, ``gamma``, ``hash_seed``) is nearest to ``centres[j]`` among the cells of that label,
    by ``||c||^2 - bias - 2 h.c`` (the cells are functions of the owners' releases and public numbers). The
    consumer draws the discrete Laplace itself at ``epsilon`` (pure), scale ``2 / epsilon``: L1 sensitivity 2
    under replace-one in ``D_v`` (one row leaves one cell's count and enters another's).
    """

    kind: ClassVar[str] = "label_histogram_request"
    label_set: np.ndarray = field(repr=False)  # (L,) the public label set
    epsilon: float
    send_rows: bool  # also send D_v's raw rows to the trusted aggregator (exact-kernel choice)
    n_features: int
    dim: int  # the cells' h1
    gamma: float
    hash_seed: int | str
    cell_labels: np.ndarray = field(repr=False)  # (J,) int64: each cell's position in label_set
    centres: np.ndarray = field(repr=False)  # (J, dim) float64
    bias: np.ndarray = field(repr=False)  # (J,) float64


@dataclass(frozen=True)
class LabelHistogramRelease(Message):
    """The consumer's answer: ``counts`` may go to the owners; ``rows`` stay with the trusted aggregator."""

    kind: ClassVar[str] = "label_histogram_release"
    counts: np.ndarray = field(repr=False)  # (J,) float64: noisy counts of D_v's rows per cell (integers)
    n_rows: int
    scale: float  # the discrete Laplace's scale, 2 / epsilon
    rows: np.ndarray | None = field(default=None, repr=False)


@dataclass(frozen=True)
class QuotaReply(Message):
    kind: ClassVar[str] = "quota_reply"
    n_rows: int
    tokens: np.ndarray = field(repr=False)  # (n,) int64, distinct, in [0, n_rows)
    hashes: np.ndarray = field(repr=False)  # (n, dim) float32: h1 of the sold rows
    points: np.ndarray | None = field(repr=False)  # (n, n_features) when reveal="points"
    labels: np.ndarray | None = field(repr=False)  # (n,) when the owner has labels
