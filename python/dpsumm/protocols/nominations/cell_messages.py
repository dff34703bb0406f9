"""The cell purchases' owner messages (docs/explanation/label-purchase.md, direction-purchase.md): the owner's
one DP release of its counts per key and hash sum, whole or in two parts, and its sale of rows by key.

Each is an :class:`~dpsumm.messages.OwnerRequest` that any owner answers (in process or on a Flower node) without
knowing the purchase: :class:`~.by_label.ByLabel`, :class:`~.by_strata.ByStrata` and
:class:`~.by_direction.ByDirection` differ only in the cell rule their requests carry.
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
from ...messages import CellRule, Message, OwnerRequest
from ...parties import label_counts, label_rows
from ...privacy import gaussian_mean_release

__all__ = [
    "LabelReleaseRequest",
    "LabelRelease",
    "LabelSaleRequest",
    "LabelSale",
    "RELEASE_PARTS",
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


@dataclass(frozen=True)
class LabelReleaseRequest(OwnerRequest, CellRule):
    """Ask an owner for its one DP release: its row count per label of ``label_set`` and the sum of the cells' h1
    (``n_features``, ``dim``, ``gamma``, ``hash_seed``) over its rows, plus a discrete Gaussian that the owner
    calibrates itself to ``(epsilon, delta)`` (L2 sensitivity ``sqrt(2 + 8)`` under replace-one in its rows: one
    row leaves one label's count and enters another's, and moves the sum by at most ``2 sqrt(2)``).

    ``part`` "all" releases both at once; a purchase that needs the sums before it can say the keys asks for
    ``"sums"`` and then ``"counts"``, each drawn at the one calibration over ``joint_dim`` values (the sum's
    ``dim`` and at most ``joint_dim - dim`` keys): the two parts compose to no more than the one release
    (:func:`dpsumm.parties.owner_release_part_event`), and an owner that made one kind refuses the other."""

    kind: ClassVar[str] = "label_release_request"
    n_features: int
    dim: int
    gamma: float
    hash_seed: int | str
    epsilon: float
    delta: float
    label_set: np.ndarray = field(repr=False)
    # "all", or one of the two parts "sums" and "counts", calibrated over joint_dim values.
    part: str = "all"
    joint_dim: int = 0

    def answer(self, owner: Any) -> LabelRelease:
        if self.n_features != owner.n_features:
            raise ProtocolError(
                f"owner {owner.name!r} has {owner.n_features} features, the request says {self.n_features}"
            )
        if self.part not in RELEASE_PARTS:
            raise ProtocolError(f"owner {owner.name!r}: a label release's part must be one of {RELEASE_PARTS}")
        keys_wanted = self.part != "sums"
        if keys_wanted and (np.ndim(self.label_set) != 1 or len(self.label_set) == 0):
            raise ProtocolError(f"owner {owner.name!r}: a label release needs a non-empty 1-D label set")
        values = (len(self.label_set) if keys_wanted else 0) + (self.dim if self.part != "counts" else 0)
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

        def release(stream: Any) -> LabelRelease:
            hasher = RFFHasher(self.n_features, dim=self.dim, gamma=self.gamma, seed=self.hash_seed)
            parts = []
            if keys_wanted:
                parts.append(label_counts(owner.keys(self), np.asarray(self.label_set)))
            if self.part != "counts":
                parts.append(owner.hash_sum(hasher))
            if self.part == "all":
                cal, _ = owner_release_calibration(values, self.epsilon, self.delta)
            else:
                cal, _ = owner_release_part(int(joint), self.part, values, self.epsilon, self.delta)
            noisy = gaussian_mean_release(np.concatenate(parts), cal, stream)
            return LabelRelease(
                n_rows=owner.n_rows, values=noisy, sigma=float(cal.sigma), granularity=float(cal.granularity)
            )

        stage = "labels" if self.part == "all" else f"labels-{self.part}"
        others = tuple(f"labels{s}" for s in ("", "-sums", "-counts") if f"labels{s}" != stage)
        # the two parts go together: "all" excludes both, a part excludes "all"
        excludes = others if self.part == "all" else ("labels",)
        reply = owner.release_once(stage, self, release, excludes=excludes)
        assert isinstance(reply, LabelRelease)
        return reply


@dataclass(frozen=True)
class LabelRelease(Message):
    kind: ClassVar[str] = "label_release"
    n_rows: int
    values: np.ndarray = field(repr=False)  # (L + dim,) float64: noisy counts per label, then the noisy hash sum
    sigma: float  # the noise's standard deviation per coordinate (the owner's calibration)
    granularity: float


@dataclass(frozen=True)
class LabelSaleRequest(OwnerRequest, CellRule):
    """Buy ``label_counts[j]`` rows of label ``label_set[j]`` from an owner, drawn among its rows of that label
    (herded where ``label_herded[j]``, else uniformly); a label it holds fewer rows of is made up from its other
    labels by ``label_preference`` (public: the consumer's released mass per label). With a non-empty ``target``
    (``g~``) each sale leans toward it at ``temperature``."""

    kind: ClassVar[str] = "label_sale_request"
    n_features: int
    dim: int
    gamma: float
    hash_seed: int | str
    count: int
    candidates: int
    reveal: str
    sample_seed: int
    label_set: np.ndarray = field(repr=False)
    label_counts: np.ndarray = field(repr=False)
    label_preference: np.ndarray = field(repr=False)
    label_herded: np.ndarray = field(repr=False)
    target: np.ndarray = field(repr=False)  # (dim,) float64 g~, or empty: no tilt
    temperature: float = 1.0
    greedy_sample_factor: float | None = None

    def answer(self, owner: Any) -> LabelSale:
        name = owner.name
        if self.n_features != owner.n_features:
            raise ProtocolError(f"owner {name!r} has {owner.n_features} features, the request says {self.n_features}")
        if isinstance(self.count, bool) or not isinstance(self.count, (int, np.integer)) or self.count < 1:
            raise ProtocolError(f"owner {name!r}: a label sale needs a count >= 1, got {self.count!r}")
        if np.ndim(self.label_set) != 1 or np.shape(self.label_set) != np.shape(self.label_counts):
            raise ProtocolError(f"owner {name!r}: a label sale needs a label set and one count per label")
        counts = np.asarray(self.label_counts)
        if counts.dtype.kind not in "iu" or (counts < 0).any() or int(counts.sum()) != int(self.count):
            raise ProtocolError(f"owner {name!r}: label counts must be integers >= 0 summing to count")
        pref = np.asarray(self.label_preference)
        if pref.shape != counts.shape or pref.dtype.kind not in "fiu" or not np.isfinite(pref).all():
            raise ProtocolError(f"owner {name!r}: a label preference needs one finite number per label")
        herded = np.asarray(self.label_herded)
        if herded.shape != counts.shape or herded.dtype != np.bool_:
            raise ProtocolError(f"owner {name!r}: label_herded needs one bool per label")
        target = np.asarray(self.target)
        if target.size and (
            target.shape != (self.dim,) or target.dtype.kind not in "fiu" or not np.isfinite(target).all()
        ):
            raise ProtocolError(
                f"owner {name!r}: a tilted label sale needs a finite g~ of {self.dim} values, "
                f"got {target.dtype} of shape {target.shape}"
            )
        if target.size and (
            isinstance(self.temperature, bool)
            or not isinstance(self.temperature, (int, float, np.floating))
            or not (math.isfinite(self.temperature) and self.temperature > 0)
        ):
            raise ProtocolError(
                f"owner {name!r}: a tilted label sale needs a temperature > 0, got {self.temperature!r}"
            )
        hasher = RFFHasher(self.n_features, dim=self.dim, gamma=self.gamma, seed=self.hash_seed)
        keys = owner.keys(self)
        tokens, hashes = label_rows(
            owner.data,
            keys,
            np.asarray(self.label_set),
            counts,
            hasher,
            candidates=int(self.candidates),
            sample_seed=self.sample_seed,
            greedy_sample_factor=self.greedy_sample_factor,
            preference=pref,
            herded=herded,
            target=target.astype(np.float64) if target.size else None,
            temperature=float(self.temperature),
        )
        return LabelSale(
            n_rows=owner.n_rows,
            tokens=tokens,
            hashes=hashes,
            points=np.array(owner.data[tokens]) if self.reveal == "points" else None,
            labels=None if owner.labels is None else np.asarray(owner.labels)[tokens],
            cells=None if keys is owner.labels or keys is None else np.asarray(keys, dtype=np.int64)[tokens],
        )


@dataclass(frozen=True)
class LabelSale(Message):
    kind: ClassVar[str] = "label_sale"
    n_rows: int
    tokens: np.ndarray = field(repr=False)  # (n,) int64, distinct, sorted, in [0, n_rows)
    hashes: np.ndarray = field(repr=False)  # (n, dim) float32: h1 of the sold rows
    points: np.ndarray | None = field(repr=False)  # (n, n_features) when reveal="points"
    labels: np.ndarray | None = field(repr=False)  # (n,) when the owner has labels
    cells: np.ndarray | None = field(default=None, repr=False)  # (n,) int64 each row's cell, under a cell rule
