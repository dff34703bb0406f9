"""The cell family's messages (docs/explanation/label-purchase.md, direction-purchase.md): an owner's one DP release
of its counts per key and hash sum, whole or in two parts; its sale of rows by key; the consumer's one release of its
histogram over the cells. Each request carries its handler (:meth:`~dpsumm.messages.OwnerRequest.answer`,
:meth:`~dpsumm.messages.ConsumerRequest.draw`), so that any party (in process or on a Flower node) answers it
without knowing the purchase; :class:`~.by_label.ByLabel`, :class:`~.by_strata.ByStrata` and
:class:`~.by_direction.ByDirection` differ only in the :class:`~.cell_rule.CellRule` their requests carry.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ... import accounting
from ...errors import InvalidParameterError, ProtocolError
from ...hashing import RFFHasher
from ...messages import ConsumerRequest, Message, OwnerRequest
from ...parties import GAUSSIAN_STREAM
from ...privacy import count_release_event, gaussian_mean_release, laplace_count_release
from ...sources import take_rows
from .cell_rule import CellRule, cell_rows, histogram_counts, key_counts

__all__ = [
    "CellReleaseRequest",
    "CellRelease",
    "CellSaleRequest",
    "CellSale",
    "CellHistogramRequest",
    "CellHistogramRelease",
    "RELEASE_PARTS",
    "RELEASE_STAGES",
    "owner_release_calibration",
    "owner_release_part",
]

_SUM_SENSITIVITY = 2.0 * math.sqrt(2.0)  # ||h1(x) - h1(x')|| <= 2 sqrt(2)
_COUNTS_SENSITIVITY = math.sqrt(2.0)  # one row leaves one key's count and enters another's
#: The owner's release, counts per key and the hash sum: sqrt(2 + (2 sqrt(2))^2).
_RELEASE_SENSITIVITY = math.sqrt(_COUNTS_SENSITIVITY**2 + _SUM_SENSITIVITY**2)


def owner_release_calibration(
    dim: int, epsilon: float, delta: float
) -> tuple[accounting.GaussianCalibration, accounting.GaussianEvent]:
    """The discrete Gaussian of an owner's one DP release in the label purchase (its row counts per public label and
    the sum of the cells' h1 over its rows, ``dim`` values), and its ledger event.

    Calibrated at ``(1 + 2^-9)`` times the release's L2 sensitivity ``Δ = sqrt(2 + 8)`` under replace-one in the
    owner's rows (one row leaves one label's count and enters another's: ``sqrt(2)``; it moves the hash sum by at
    most ``2 sqrt(2)``), so that the noise multiplier against the effective sensitivity ``Δ + g sqrt(d)``
    (``g sqrt(d) <= Δ / 2^10``, :func:`dpsumm.accounting.calibrate_gaussian`) still meets ``(epsilon, delta)``. The
    event records the actual multiplier.
    """
    base = _RELEASE_SENSITIVITY
    cal = accounting.calibrate_gaussian(epsilon, delta, sensitivity=base * (1 + 2.0**-9), dim=dim)
    z = cal.sigma / (base + cal.granularity * math.sqrt(dim))
    return cal, accounting.GaussianEvent(
        noise_multiplier=z,
        neighbour="replace-one",
        discrete=True,
        releases="each owner's row counts per public label and sum of the cells' h1 + discrete Gaussian",
    )


#: The parts an owner's release can be made in (:func:`owner_release_part`).
RELEASE_PARTS = ("all", "sums", "counts")


def owner_release_part(
    joint_dim: int, part: str, dim: int, epsilon: float, delta: float
) -> tuple[accounting.GaussianCalibration, accounting.GaussianEvent]:
    """The discrete Gaussian of one part of an owner's release made in two (``"sums"``: the cells' h1 summed over
    its rows, ``"counts"``: its row counts per key; ``dim`` values), and its ledger event: the noise and lattice of
    :func:`owner_release_calibration` over both parts' ``joint_dim`` values.

    Each part is a discrete Gaussian of effective L2 sensitivity ``Δ_part + g sqrt(dim)`` (``2 sqrt(2)`` for the
    sum, ``sqrt(2)`` for the counts, under replace-one in the owner's rows); the two compose adaptively (the counts'
    keys may depend on what the sums released) to at most the Rényi divergence of the one release of both: by
    Minkowski, ``(Δ_s + g sqrt(d_s))^2 + (Δ_c + g sqrt(d_c))^2 <= (sqrt(Δ_s^2 + Δ_c^2) + g sqrt(d_s + d_c))^2``
    when ``d_s + d_c <= joint_dim``."""
    if part not in ("sums", "counts"):
        raise InvalidParameterError(f"`part` must be 'sums' or 'counts', got {part!r}", "part")
    if not 0 < dim <= joint_dim:
        raise InvalidParameterError(f"`dim` must be in [1, joint_dim = {joint_dim}], got {dim!r}", "dim")
    cal, _ = owner_release_calibration(joint_dim, epsilon, delta)
    base = _SUM_SENSITIVITY if part == "sums" else _COUNTS_SENSITIVITY
    effective = base + cal.granularity * math.sqrt(dim)
    z = cal.sigma / effective
    part_cal = dataclasses.replace(cal, dim=int(dim), base_sensitivity=base, sensitivity=effective, noise_multiplier=z)
    what = "sum of the cells' h1" if part == "sums" else "row counts per public cell"
    return part_cal, accounting.GaussianEvent(
        noise_multiplier=z,
        neighbour="replace-one",
        discrete=True,
        releases=f"each owner's {what} + discrete Gaussian (one part of its release)",
    )


#: The stage an owner records each part of its release under (:meth:`dpsumm.parties.OwnerParty.release_once`): the
#: whole release excludes both parts, a part excludes the whole.
RELEASE_STAGES = {"all": "cells", "sums": "cells-sums", "counts": "cells-counts"}
#: The owner's noise streams of its cell release, children of its own stream derived in this order whichever
#: release is asked for first (:meth:`dpsumm.parties.OwnerParty.release_stream`): the whole release draws from the
#: third; a release in two parts draws each part from its own child of the fourth (independent noise, the same
#: whether the party lives through the run or is rebuilt for every message, as a Flower node is). The names are
#: those the streams had when owners made three kinds of release: seeded runs draw the same noise as then.
OWNER_STREAMS = ("sketch-sum", "sketch-histogram", "sketch-labels", "sketch-label-parts")
_PART_STREAMS = {"sums": "labels-sums", "counts": "labels-counts"}


#: The consumer's noise streams of the cell purchases' releases (the histogram over cells, the direction), children
#: of its own stream derived after :data:`dpsumm.parties.GAUSSIAN_STREAM` and in this order, whichever release is
#: asked for first, so that a consumer rebuilt for every message draws the same noise as one that answers them all.
CONSUMER_STREAMS = (GAUSSIAN_STREAM, "validation-labels", "validation-direction")


def consumer_release_stream(consumer: Any, name: str) -> Any:
    """The consumer's stream ``name`` of :data:`CONSUMER_STREAMS` (every earlier one derived first)."""
    if name not in CONSUMER_STREAMS:
        raise ProtocolError(f"consumer {consumer.name!r}: no cell-release stream {name!r}")
    for earlier in CONSUMER_STREAMS[: CONSUMER_STREAMS.index(name)]:
        consumer.release_stream(earlier)
    return consumer.release_stream(name)


def _release_stream(owner: Any, part: str) -> Any:
    """The owner's stream of ``part`` of its cell release (every stream derived in the order of OWNER_STREAMS)."""
    for name in OWNER_STREAMS:
        owner.release_stream(name)
    for child in _PART_STREAMS.values():
        owner.release_stream(OWNER_STREAMS[-1], child)
    if part == "all":
        return owner.release_stream(OWNER_STREAMS[2])
    return owner.release_stream(OWNER_STREAMS[-1], _PART_STREAMS[part])


@dataclass(frozen=True)
class CellReleaseRequest(OwnerRequest, CellRule):
    """Ask an owner for its one DP release: its row count per key of ``key_set`` and the sum of the cells' h1
    (``n_features``, ``dim``, ``gamma``, ``hash_seed``) over its rows, plus a discrete Gaussian that the owner
    calibrates itself to ``(epsilon, delta)`` (L2 sensitivity ``sqrt(2 + 8)`` under replace-one in its rows: one
    row leaves one key's count and enters another's, and moves the sum by at most ``2 sqrt(2)``).

    ``part`` "all" releases both at once; a purchase that needs the sums before it can say the keys asks for
    ``"sums"`` and then ``"counts"``, each drawn at the one calibration over ``joint_dim`` values (the sum's
    ``dim`` and at most ``joint_dim - dim`` keys): the two parts compose to no more than the one release
    (:func:`owner_release_part`), and an owner that made one kind refuses the other."""

    kind: ClassVar[str] = "cell_release_request"
    n_features: int
    dim: int
    gamma: float
    hash_seed: int | str
    epsilon: float
    delta: float
    key_set: np.ndarray = field(repr=False)
    # "all", or one of the two parts "sums" and "counts", calibrated over joint_dim values.
    part: str = "all"
    joint_dim: int = 0

    def spend(self) -> tuple[str, float, float]:
        return self.kind, float(self.epsilon), float(self.delta)

    def answer(self, owner: Any) -> CellRelease:
        if self.n_features != owner.n_features:
            raise ProtocolError(
                f"owner {owner.name!r} has {owner.n_features} features, the request says {self.n_features}"
            )
        if self.part not in RELEASE_PARTS:
            raise ProtocolError(f"owner {owner.name!r}: a cell release's part must be one of {RELEASE_PARTS}")
        keys_wanted = self.part != "sums"
        if keys_wanted and (np.ndim(self.key_set) != 1 or len(self.key_set) == 0):
            raise ProtocolError(f"owner {owner.name!r}: a cell release needs a non-empty 1-D key set")
        values = (len(self.key_set) if keys_wanted else 0) + (self.dim if self.part != "counts" else 0)
        joint = values if self.part == "all" else self.joint_dim
        if (
            isinstance(joint, bool)
            or not isinstance(joint, (int, np.integer))
            or joint < values + (self.dim if self.part == "counts" else 0)
        ):
            raise ProtocolError(
                f"owner {owner.name!r}: a release in parts is calibrated over both parts' values, "
                f"at least {values + (self.dim if self.part == 'counts' else 0)}; the request says {joint!r}"
            )

        def release() -> CellRelease:
            hasher = RFFHasher(self.n_features, dim=self.dim, gamma=self.gamma, seed=self.hash_seed)
            parts = []
            if keys_wanted:
                parts.append(key_counts(owner_keys(owner, self), np.asarray(self.key_set)))
            if self.part != "counts":
                parts.append(owner.hash_sum(hasher))
            if self.part == "all":
                cal, _ = owner_release_calibration(values, self.epsilon, self.delta)
            else:
                cal, _ = owner_release_part(int(joint), self.part, values, self.epsilon, self.delta)
            noisy = gaussian_mean_release(np.concatenate(parts), cal, _release_stream(owner, self.part))
            return CellRelease(
                n_rows=owner.n_rows, values=noisy, sigma=float(cal.sigma), granularity=float(cal.granularity)
            )

        stage = RELEASE_STAGES[self.part]
        # the two parts go together: "all" excludes both, a part excludes "all"
        excludes = tuple(s for s in RELEASE_STAGES.values() if s != stage) if self.part == "all" else ("cells",)
        reply = owner.release_once(stage, self, release, excludes=excludes)
        assert isinstance(reply, CellRelease)
        return reply


def owner_keys(owner: Any, request: CellRule) -> np.ndarray | None:
    """The owner's rows' keys under a request's cell rule (its scores along a direction computed once a run)."""
    return CellRule.of(request).row_keys(owner.data, owner.labels, owner.strata, owner.memo)


@dataclass(frozen=True)
class CellRelease(Message):
    kind: ClassVar[str] = "cell_release"
    n_rows: int
    values: np.ndarray = field(repr=False)  # (L + dim,) float64: noisy counts per key, then the noisy hash sum
    sigma: float  # the noise's standard deviation per coordinate (the owner's calibration)
    granularity: float


@dataclass(frozen=True)
class CellSaleRequest(OwnerRequest, CellRule):
    """Buy ``key_counts[j]`` rows of key ``key_set[j]`` from an owner, drawn among its rows of that key (herded where
    ``key_herded[j]``, else uniformly); a key it holds fewer rows of is made up from its other keys by
    ``key_preference`` (public: the consumer's released mass per key). With a non-empty ``target`` (``g~``) each
    sale leans toward it at ``temperature``."""

    kind: ClassVar[str] = "cell_sale_request"
    n_features: int
    dim: int
    gamma: float
    hash_seed: int | str
    count: int
    candidates: int
    reveal: str
    sample_seed: int
    key_set: np.ndarray = field(repr=False)
    key_counts: np.ndarray = field(repr=False)
    key_preference: np.ndarray = field(repr=False)
    key_herded: np.ndarray = field(repr=False)
    target: np.ndarray = field(repr=False)  # (dim,) float64 g~, or empty: no tilt
    temperature: float = 1.0
    greedy_sample_factor: float | None = None

    def _problem(self, owner: Any) -> str | None:
        """What makes the request one an owner refuses, or None."""
        if self.n_features != owner.n_features:
            return f"has {owner.n_features} features, the request says {self.n_features}"
        if isinstance(self.count, bool) or not isinstance(self.count, (int, np.integer)) or self.count < 1:
            return f"a cell sale needs a count >= 1, got {self.count!r}"
        if np.ndim(self.key_set) != 1 or np.shape(self.key_set) != np.shape(self.key_counts):
            return "a cell sale needs a key set and one count per key"
        counts = np.asarray(self.key_counts)
        if counts.dtype.kind not in "iu" or (counts < 0).any() or int(counts.sum()) != int(self.count):
            return "key counts must be integers >= 0 summing to count"
        pref = np.asarray(self.key_preference)
        if pref.shape != counts.shape or pref.dtype.kind not in "fiu" or not np.isfinite(pref).all():
            return "a key preference needs one finite number per key"
        herded = np.asarray(self.key_herded)
        if herded.shape != counts.shape or herded.dtype != np.bool_:
            return "key_herded needs one bool per key"
        target = np.asarray(self.target)
        if target.size and (
            target.shape != (self.dim,) or target.dtype.kind not in "fiu" or not np.isfinite(target).all()
        ):
            return (
                f"a tilted cell sale needs a finite g~ of {self.dim} values, got {target.dtype} of shape {target.shape}"
            )
        if target.size and (
            isinstance(self.temperature, bool)
            or not isinstance(self.temperature, (int, float, np.floating))
            or not (math.isfinite(self.temperature) and self.temperature > 0)
        ):
            return f"a tilted cell sale needs a temperature > 0, got {self.temperature!r}"
        return None

    def answer(self, owner: Any) -> CellSale:
        problem = self._problem(owner)
        if problem is not None:
            raise ProtocolError(f"owner {owner.name!r}: {problem}")
        target = np.asarray(self.target)
        hasher = RFFHasher(self.n_features, dim=self.dim, gamma=self.gamma, seed=self.hash_seed)
        keys = owner_keys(owner, self)
        tokens, hashes = cell_rows(
            owner.data,
            keys,
            np.asarray(self.key_set),
            np.asarray(self.key_counts),
            hasher,
            candidates=int(self.candidates),
            sample_seed=self.sample_seed,
            greedy_sample_factor=self.greedy_sample_factor,
            preference=np.asarray(self.key_preference),
            herded=np.asarray(self.key_herded),
            target=target.astype(np.float64) if target.size else None,
            temperature=float(self.temperature),
        )
        return CellSale(
            n_rows=owner.n_rows,
            tokens=tokens,
            hashes=hashes,
            points=take_rows(owner.data, tokens) if self.reveal == "points" else None,
            labels=None if owner.labels is None else np.asarray(owner.labels)[tokens],
            cells=None if keys is owner.labels or keys is None else np.asarray(keys)[tokens].astype(np.int64),
        )


@dataclass(frozen=True)
class CellSale(Message):
    kind: ClassVar[str] = "cell_sale"
    n_rows: int
    tokens: np.ndarray = field(repr=False)  # (n,) int64, distinct, sorted, in [0, n_rows)
    hashes: np.ndarray = field(repr=False)  # (n, dim) float32: h1 of the sold rows
    points: np.ndarray | None = field(repr=False)  # (n, n_features) when reveal="points"
    labels: np.ndarray | None = field(repr=False)  # (n,) when the owner has labels
    cells: np.ndarray | None = field(default=None, repr=False)  # (n,) int64 each row's cell, under a cell rule


@dataclass(frozen=True)
class CellHistogramRequest(ConsumerRequest, CellRule):
    """Ask the consumer for its one release of ``D_v``'s histogram over the cells.

    Cell ``j`` holds the validation rows of key ``key_set[cell_keys[j]]`` whose hash in the cells' h1
    (``n_features``, ``dim``, ``gamma``, ``hash_seed``) is nearest to ``centres[j]`` among the cells of that key,
    by ``||c||^2 - bias - 2 h.c`` (the cells are functions of the owners' releases and public numbers). The
    consumer draws the discrete Laplace itself at ``epsilon`` (pure), scale ``2 / epsilon``: L1 sensitivity 2
    under replace-one in ``D_v`` (one row leaves one cell's count and enters another's;
    :func:`dpsumm.privacy.count_release_event`). Its rows go only to the trusted aggregator, when asked.
    """

    kind: ClassVar[str] = "cell_histogram_request"
    key_set: np.ndarray = field(repr=False)  # (L,) the public keys
    epsilon: float
    send_rows: bool  # also send D_v's raw rows to the trusted aggregator (exact-kernel choice)
    n_features: int
    dim: int  # the cells' h1
    gamma: float
    hash_seed: int | str
    cell_keys: np.ndarray = field(repr=False)  # (J,) int64: each cell's position in key_set
    centres: np.ndarray = field(repr=False)  # (J, dim) float64
    bias: np.ndarray = field(repr=False)  # (J,) float64

    def spend(self) -> tuple[str, float, float]:
        return self.kind, float(self.epsilon), 0.0  # pure

    def draw(self, consumer: Any) -> CellHistogramRelease:
        X = consumer.validation
        rule = CellRule.of(self)
        keys = rule.row_keys(X, consumer.labels, consumer.strata)
        if keys is None:
            raise ProtocolError(
                f"consumer {consumer.name!r}: the purchase counts the validation rows by label, but it holds no "
                "validation labels (summarize(..., validation_labels=...); on Flower, node config labels=PATH)"
            )
        key_set = np.asarray(self.key_set)
        if key_set.ndim != 1 or len(key_set) == 0:
            raise ProtocolError("consumer: a cell histogram needs a non-empty 1-D key set")
        event = count_release_event(self.epsilon)
        if self.n_features != np.shape(X)[1]:
            raise ProtocolError(f"the consumer has {np.shape(X)[1]} features, the request says {self.n_features}")
        counts = histogram_counts(
            X,
            keys,
            key_set,
            self.cell_keys,
            self.centres,
            self.bias,
            self.dim,
            lambda: RFFHasher(self.n_features, dim=self.dim, gamma=self.gamma, seed=self.hash_seed),
        )
        noisy = laplace_count_release(counts, event, consumer_release_stream(consumer, "validation-labels"))
        return CellHistogramRelease(
            counts=noisy,
            n_rows=int(len(X)),
            scale=event.scale,
            rows=np.array(X) if self.send_rows else None,
        )


@dataclass(frozen=True)
class CellHistogramRelease(Message):
    """The consumer's answer: ``counts`` may go to the owners; ``rows`` stay with the trusted aggregator."""

    kind: ClassVar[str] = "cell_histogram_release"
    counts: np.ndarray = field(repr=False)  # (J,) float64: noisy counts of D_v's rows per cell (integers)
    n_rows: int
    scale: float  # the discrete Laplace's scale, 2 / epsilon
    rows: np.ndarray | None = field(default=None, repr=False)
