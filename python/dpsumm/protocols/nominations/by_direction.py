"""The direction purchase: cells along the consumer's released direction, crossed with the strata when given; the
label purchase's exchanges on those cells (docs/explanation/direction-purchase.md).

Exchanges:

1. every owner releases the sum of the cells' hash over its rows, the first part of its one release
   (:meth:`ByDirection.releases`), and the aggregator groups the owners on them;
2. the consumer releases its mean once in the direction's space centred on the public seed rows' mean, each row
   clipped to the public norm ``C`` (:func:`public_geometry`: in the kernel space the median of the centred seed
   rows' norms, in the features twice their 90th percentile): L2 sensitivity ``2 C / |D_v|`` under replace-one in
   ``D_v``, a discrete Gaussian at ``(direction_share * epsilon_v, delta_v)`` (:class:`DirectionRequest`); but
   only when it holds at least ``min_rows = G S b`` rows (``G`` owner groups, ``S`` strata, ``b`` its histogram's
   noise scale), so that its histogram can pay for bins; otherwise it releases nothing, every row is in one bin and
   the histogram spends that share too;
3. every row's cell is the bin of its score ``(x - centre) . w`` along the released direction ``w`` (normalised),
   ``bins - 1`` edges at the public seed rows' score mean ``+ t sd``, ``t`` from -2 to 8, crossed with its stratum
   when ``levels`` are declared: a public function of the row once ``w`` is released (post-processing; no budget);
4. the cell family's exchanges on those cells (:class:`~dpsumm.protocols.nominations.cell_purchase.CellPurchase`):
   the owners' counts per cell (the second part of their release: both parts at the one calibration to the owners'
   ``(epsilon, delta)``), the consumer's histogram over (owner group, cell) at the rest of ``epsilon_v``,
   ``purchase_factor * size`` rows bought by cell.

Every party is certified: the owners at their ``(epsilon, delta)``, the consumer at ``(epsilon_v, delta_v)`` by
sequential composition of its two releases (dp-accounting's RDP accountant over the ledger's events).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numpy as np

from ... import accounting
from ..._validation import Interval, OneOf, choice_of
from ...errors import InvalidParameterError, ProtocolError
from ...hashing import MAX_GAMMA, RFFHasher
from ...messages import ConsumerRequest, Message, real_number
from ...preprocessing import DEGENERATE_HIGH, DEGENERATE_LOW, median_gamma
from ...privacy import count_release_event, gaussian_mean_release
from ...strata import Levels, levels_tuple
from ..base import option
from .aggregator import RELEASE_SIGMAS, Aggregator
from .cell_messages import consumer_release_stream
from .cell_purchase import (
    CellPurchase,
    CellReleases,
    KeyMerge,
    label_set_option,
    label_set_tuple,
    levels_option,
    reserve_option,
)
from .cell_rule import CellRule
from .cells import CELL_DIM, RESERVE_SHARE, label_cells, owner_groups, seed_split_distance

__all__ = [
    "ByDirection",
    "DirectionRequest",
    "DirectionRelease",
    "DIRECTION_BINS",
    "DIRECTION_SHARE",
    "DIRECTION_SPACES",
    "KERNEL_DIM",
    "direction_hash_seed",
    "kernel_gamma",
    "EDGE_SPAN",
    "CLIP_QUANTILE",
    "KERNEL_CLIP_QUANTILE",
    "public_geometry",
    "kept_edges",
    "bin_edges",
    "direction_sensitivity",
]

#: Cells along the released direction (the bins of a row's score).
DIRECTION_BINS = 12
#: The default share of the consumer's epsilon_v spent on the direction; its histogram over the cells gets the rest.
DIRECTION_SHARE = 0.5
#: Where the direction lies: the kernel's random features (the released direction is the consumer's kernel mean
#: embedding minus the public seed rows', the MMD witness) or the rows' own features (a linear direction).
DIRECTION_SPACES = ("kernel", "features")
#: Random features of the kernel space (gamma by :func:`kernel_gamma`; seeded by :func:`direction_hash_seed`).
KERNEL_DIM = 256
#: The bins' edges, in standard deviations of the public seed rows' scores around their mean: below the first edge,
#: between consecutive ones, above the last (the consumer lies along +w, away from the seed rows' mean).
EDGE_SPAN = (-2.0, 8.0)
#: In the rows' features, the clipping norm is twice this quantile of the centred public seed rows' norms (norms
#: spread widely there: the margin keeps most of the consumer's rows whole).
CLIP_QUANTILE = 0.9
#: In the kernel space, the clipping norm is this quantile of the centred seed rows' norms itself: every row's random
#: features have norm about 1 (``k(x, x) = 1``), so the centred norms lie in a narrow band, and clipping at its
#: median shrinks the longer half of the consumer's rows by no more than the band's width, while the release's
#: noise is proportional to the clipping norm.
KERNEL_CLIP_QUANTILE = 0.5


def direction_hash_seed(hash_seed: int | str) -> str:
    """The seed of the kernel space's random features (public, derived from the run's hash seed)."""
    return f"direction:{hash_seed}"


def kernel_gamma(seed_rows: np.ndarray) -> float:
    """The kernel space's gamma: the median heuristic over the public seed rows (whatever the run's gamma, so that
    the witness separates the rows the seed rows spread over; capped at the random features' largest gamma)."""
    try:
        return min(median_gamma(seed_rows), MAX_GAMMA)
    except InvalidParameterError as exc:
        raise InvalidParameterError(
            f"the ByDirection purchase's kernel space needs public seed rows that are not all equal: {exc}", "seed_set"
        ) from exc


def public_geometry(seed_rows: np.ndarray, space: str = "features") -> tuple[np.ndarray, float]:
    """The centre (the public seed rows' mean) and the clipping norm ``C`` of the direction release, from the seed
    rows as they lie in the direction's ``space``: in ``"features"`` twice the ``CLIP_QUANTILE`` quantile of the
    centred seed rows' norms, in ``"kernel"`` (rows given as their random features) the ``KERNEL_CLIP_QUANTILE``
    quantile itself. Public numbers only."""
    seed = np.asarray(seed_rows, dtype=np.float64)
    if seed.ndim != 2 or seed.shape[0] < 2 or not np.isfinite(seed).all():
        raise InvalidParameterError(
            "the ByDirection purchase needs at least two finite public seed rows (`seed_set`)", "seed_set"
        )
    space = choice_of(space, "space", DIRECTION_SPACES)
    centre = seed.mean(0)
    norms = np.linalg.norm(seed - centre, axis=1)
    if space == "kernel":
        clip = float(np.quantile(norms, KERNEL_CLIP_QUANTILE))
    else:
        clip = 2.0 * float(np.quantile(norms, CLIP_QUANTILE))
    if not (math.isfinite(clip) and clip > 0):
        raise InvalidParameterError(
            "the public seed rows are (nearly) all equal: the ByDirection purchase cannot set a clipping norm "
            "from them",
            "seed_set",
        )
    return centre, clip


def kept_edges(n_edges: int, bins: int) -> np.ndarray:
    """The positions of the edges kept when ``n_edges + 1`` bins merge into at most ``bins`` (evenly spaced, each
    merged bin a run of adjacent bins): ``bins - 1`` positions, fewer when they coincide."""
    if bins > n_edges:
        return np.arange(n_edges)
    return np.unique(np.round(np.linspace(0, n_edges - 1, bins + 1)[1:-1]).astype(np.int64))


def direction_sensitivity(clip: float, n_rows: int) -> float:
    """The L2 sensitivity of the clipped, centred mean of ``n_rows`` rows under replace-one: ``2 C / n``."""
    return 2.0 * float(clip) / int(n_rows)


def bin_edges(seed_rows: np.ndarray, centre: np.ndarray, direction: np.ndarray, bins: int) -> np.ndarray:
    """``bins - 1`` edges at the seed rows' score mean ``+ t sd``, ``t`` evenly from ``EDGE_SPAN[0]`` to
    ``EDGE_SPAN[1]`` (scores ``(x - centre) . direction``; public numbers and a released direction only)."""
    scores = (np.asarray(seed_rows, dtype=np.float64) - centre) @ direction
    sd = float(scores.std())
    if not sd > 0:
        sd = 1e-12
    return np.asarray(float(scores.mean()) + sd * np.linspace(*EDGE_SPAN, bins - 1), dtype=np.float64)


@dataclass(frozen=True)
class DirectionRequest(ConsumerRequest):
    """Ask the consumer for its one release of its clipped, centred mean: ``mean_v clip_C(f(v) - centre)`` plus a
    discrete Gaussian that the consumer calibrates itself to ``(epsilon, delta)`` at L2 sensitivity ``2 C / |D_v|``
    (replace-one in ``D_v``); ``f`` is the public random feature map of ``direction_dim``, ``direction_gamma``,
    ``direction_seed`` (the kernel space), or the identity when ``direction_dim`` is 0. Its rows are not sent."""

    kind: ClassVar[str] = "direction_request"
    centre: np.ndarray = field(repr=False)  # (n_features,) float64: the public seed rows' mean
    clip: float
    epsilon: float
    delta: float
    # The space: 0, the rows' features; else that many random features (dpsumm.strata.direction_space).
    direction_dim: int = 0
    direction_gamma: float = 0.0
    direction_seed: str = ""
    # The consumer releases nothing (spends nothing) when it holds fewer rows than this: its histogram could not
    # pay for the direction's bins (public numbers: ByDirection.releases).
    min_rows: int = 0

    def spend(self) -> tuple[str, float, float]:
        return self.kind, float(self.epsilon), float(self.delta)

    def draw(self, consumer: Any) -> DirectionRelease:
        X = np.asarray(consumer.validation, dtype=np.float64)
        if isinstance(self.min_rows, bool) or not isinstance(self.min_rows, (int, np.integer)) or self.min_rows < 0:
            raise ProtocolError(
                f"consumer: a direction request's min_rows must be an integer >= 0, got {self.min_rows!r}"
            )
        if X.shape[0] < self.min_rows:
            return DirectionRelease(noisy_mean=np.zeros(0), n_rows=int(X.shape[0]), sigma=0.0, granularity=0.0)
        features = CellRule(
            direction_dim=self.direction_dim, direction_gamma=self.direction_gamma, direction_seed=self.direction_seed
        ).direction_space(X.shape[1])
        if features is not None:
            X = np.asarray(features.transform(X), dtype=np.float64)
        n, d = X.shape
        centre = np.asarray(self.centre)
        if centre.dtype.kind not in "fiu" or centre.shape != (d,) or not np.isfinite(centre).all():
            raise ProtocolError(f"consumer: a direction request needs a finite centre of {d} real values")
        centre = centre.astype(np.float64)
        if (
            isinstance(self.clip, bool)
            or not isinstance(self.clip, (int, float))
            or not (math.isfinite(self.clip) and self.clip > 0)
        ):
            raise ProtocolError(f"consumer: a direction request needs a clipping norm > 0, got {self.clip!r}")
        if not 0.0 < self.delta < 1.0 / n:
            raise ProtocolError(f"consumer: delta {self.delta!r} is not in (0, 1/|D_v|) = (0, {1.0 / n:.3g})")
        cal = accounting.calibrate_gaussian(
            self.epsilon, self.delta, sensitivity=direction_sensitivity(self.clip, n), dim=d
        )
        noisy = gaussian_mean_release(
            clipped_mean(X, centre, float(self.clip)), cal, consumer_release_stream(consumer, "validation-direction")
        )
        return DirectionRelease(noisy_mean=noisy, n_rows=n, sigma=float(cal.sigma), granularity=float(cal.granularity))


def clipped_mean(X: np.ndarray, centre: np.ndarray, clip: float) -> np.ndarray:
    """``mean_i clip_C(x_i - centre)``, each centred row scaled to norm at most ``clip`` (float64)."""
    Z = np.asarray(X, dtype=np.float64) - centre
    norms = np.linalg.norm(Z, axis=1)
    scale = np.minimum(1.0, clip / np.maximum(norms, 1e-300))
    out: np.ndarray = (Z * scale[:, None]).mean(0)
    return out


@dataclass(frozen=True)
class DirectionRelease(Message):
    kind: ClassVar[str] = "direction_release"
    noisy_mean: np.ndarray = field(repr=False)  # (n_features,) float64
    n_rows: int
    sigma: float
    granularity: float


@dataclass(frozen=True, repr=False)
class ByDirection(CellPurchase):
    """Buy rows by cells along the consumer's released direction (crossed with a declared label set and declared
    strata), from the owners' and the consumer's DP counts: no labels or strata needed, ``purchase_factor * size``
    raw rows whatever K.

    The default purchase of :class:`~dpsumm.Nominations` (``--purchase direction``). Given nothing public
    its cells are the direction's bins; given ``label_set`` (with ``validation_labels`` and the owners' labels) the
    labels x the bins; given ``levels`` (with the strata) the strata x the bins. It misses where the consumer wants a
    mix of shapes that one score cannot sort (docs/explanation/limits-3p.md), where :class:`~dpsumm.Nominees` buys
    K x 2p rows and keeps the quality. Without ``seed_set`` the run warns: rows drawn in the box do not set a useful
    centre.

    The consumer spends ``direction_share`` of ``epsilon_v`` on its clipped mean in the direction's space (the
    kernel's random features, or the rows' features) centred on the public seed rows', and the rest on its histogram
    over the cells; each owner one release, in two parts, at the owners' ``(epsilon, delta)``. When the owner groups
    x strata are already too many cells for the histogram to pay for bins (``G S b > |D_v|``, ``b`` its noise
    scale), the consumer releases no direction and its histogram spends the whole ``epsilon_v`` over one bin. Every
    party certified
    (docs/explanation/direction-purchase.md). The run's public seed rows (``seed_set``; 150 rows drawn in
    ``feature_range`` when none are given) set the centre, the clipping norm, the bins' edges and the kernel space's
    gamma.

    Parameters
    ----------
    label_set : sequence of int, float or str, optional
        The public labels to cross the bins with (``dpsumm.Owner(X, labels=...)``, ``validation_labels``), declared,
        never read off anybody's data; rows with other labels are never sold. None by default.
    levels : sequence of sequences, optional
        Declared levels of public stratum attributes to cross the bins with (``dpsumm.Owner(X, strata=...)``,
        ``validation_strata``); none by default.
    space : {"kernel", "features"}, default "kernel"
        Where the direction lies: ``KERNEL_DIM`` random features of the Gaussian kernel at the median heuristic over
        the seed rows (the released direction is the consumer's kernel mean embedding minus the seed rows', and a
        row's score is the MMD witness), or the rows' own features (one linear direction).
    bins : int, default 12
        Cells along the direction.
    direction_share : float, default 0.5
        The share of ``epsilon_v`` the direction release spends, in ``(0, 1)``.
    purchase_factor : float, default 3.0
        Raw owner rows bought, in units of the summary size.
    sale_tilt_share : float, default 0.0
        The share of ``epsilon_v`` spent on the hashed mean toward which each owner's sale of a cell leans.
    reserve : float, default 1/3
        The share of the rows bought kept for every cell the consumer's release counts any row in.
    """

    # A key's rows its sellers cannot supply are asked of the key's other sellers first (the consumer's count of a cell
    # is evidence for its key; docs/explanation/direction-purchase.md, "Quotas within a key").
    overflow_within_keys: ClassVar[bool] = True

    name: ClassVar[str] = "direction"
    brief: ClassVar[str] = (
        "3 x size raw rows by cells along the consumer's released direction, crossed with --label-set or --levels "
        "when given"
    )

    reserve: float = reserve_option(RESERVE_SHARE)

    label_set: Sequence[Any] = label_set_option()
    levels: Levels = levels_option()
    space: Literal["kernel", "features"] = option(
        "kernel",
        help="kernel (the consumer's kernel mean embedding, default) or features (a linear direction)",
        constraint=OneOf(DIRECTION_SPACES),
    )
    bins: int = option(
        DIRECTION_BINS, help="cells along the consumer's released direction", constraint=Interval(int, 1, 256)
    )
    direction_share: float = option(
        DIRECTION_SHARE,
        help="the share of the validation budget spent on the released direction",
        constraint=Interval(float, 0, 1, "neither", why="the histogram needs the rest of epsilon_v"),
    )

    def _validate(self) -> None:
        set_ = object.__setattr__
        if not (isinstance(self.label_set, tuple) and self.label_set == ()):  # an array is compared by type first
            set_(self, "label_set", label_set_tuple(self.label_set))
        if not (isinstance(self.levels, tuple) and self.levels == ()):  # an array is compared by type first
            set_(self, "levels", levels_tuple(self.levels))
        super()._validate()
        if self.direction_share + self.sale_tilt_share >= 1.0:
            raise InvalidParameterError(
                f"`direction_share` + `sale_tilt_share` ({self.direction_share:g} + {self.sale_tilt_share:g}) must "
                "be below 1: the histogram needs the rest of epsilon_v",
                "direction_share",
            )
        attributes = self.attribute_cells()
        if attributes * self.bins > 1 << 16:
            raise InvalidParameterError(
                f"`bins` x the declared labels x strata ({self.bins} x {attributes}) exceed {1 << 16} cells", "bins"
            )

    def attribute_cells(self) -> int:
        """The cells of the declared public attributes the bins are crossed with: labels x strata (1: none)."""
        strata = math.prod(len(a) for a in self.levels) if self.levels else 1
        return max(len(self.label_set), 1) * strata

    def public_labels(self) -> tuple[Any, ...] | None:
        return tuple(self.label_set) or None

    def public_levels(self) -> Levels | None:
        return self.levels or None

    def crossed(self, rule: CellRule) -> CellRule:
        """``rule`` crossed with the declared labels and strata (the rows' keys: label, stratum, bin)."""
        rule = rule.with_levels(self.levels)
        return dataclasses.replace(rule, cross_labels=np.asarray(self.label_set)) if self.label_set else rule

    def uses_seed_rows(self) -> bool:
        return True

    def cells_gamma(self, agg: Aggregator) -> float:
        """The run's gamma, unless it is degenerate on the public seed rows (gamma times their median squared
        distance outside ``[DEGENERATE_LOW, DEGENERATE_HIGH]``, the range :func:`dpsumm.preprocessing.check_kernel` warns about):
        then the kernel space's width, :func:`kernel_gamma` of the seed rows. The consumer places its rows with the
        owner groups whose mean hash is nearest, which a width at which every row looks unrelated to every other
        (or like every other) cannot do; the run's gamma is still the summary's kernel
        (docs/explanation/direction-purchase.md, "The space of the direction")."""
        if agg.seed_rows is None:
            raise InvalidParameterError("the ByDirection purchase needs public seed rows (`seed_set`)", "seed_set")
        gamma, width = float(agg.config.gamma), kernel_gamma(agg.seed_rows)
        # kernel_gamma is 1 / (the seed rows' median squared distance), so gamma / width is check_kernel's scale
        return gamma if DEGENERATE_LOW <= gamma / width <= DEGENERATE_HIGH else width

    def fit_advice(self) -> str:
        """Given nothing public, the default purchase itself: no other purchase to point to."""
        if self.public_labels() or self.public_levels():
            return super().fit_advice()
        return "the owners may hold few rows like D_v, or the purchase did not reach them"

    def key_set(self) -> tuple[Any, ...]:
        return tuple(range(self.attribute_cells() * self.bins))

    def key_name(self, j: int, bin_name: str | None = None) -> Any:
        """Key ``j``'s name: its label (when a label set is declared), its strata's levels, its bin."""
        stratum, b = divmod(j, self.bins)
        bin_name = bin_name or f"bin {b}"
        if not self.levels and not self.label_set:
            return bin_name
        out: list[Any] = []
        for lev in reversed(self.levels):
            stratum, r = divmod(stratum, len(lev))
            out.append(lev[r])
        if self.label_set:
            out.append(self.label_set[stratum])
        return (*reversed(out), bin_name)

    def histogram_share(self) -> float:
        return 1.0 - self.direction_share - self.sale_tilt_share

    def release_shares(self) -> dict[str, float]:
        return {"direction_share": self.direction_share}

    def check_release_plan(self, method: Any, eps_v: float, delta_v: float, validation_rows: int) -> None:
        accounting.calibrate_gaussian(
            eps_v * self.direction_share, delta_v, sensitivity=direction_sensitivity(1.0, validation_rows), dim=1
        )

    def merge_keys(
        self,
        agg: Aggregator,
        counts: np.ndarray,
        sums: np.ndarray,
        n_rows: np.ndarray,
        sigma: float,
        rule: CellRule,
        resolution: float | None = None,
    ) -> KeyMerge | None:
        """Merge adjacent bins until the cells are few enough for the consumer's histogram: the most bins ``B' <=
        bins`` whose cells (owner group x stratum x merged bin, :func:`~.cells.label_cells` on the merged counts,
        owners grouped at ``resolution``)
        number ``J`` with ``J b <= |D_v|``, ``b`` the histogram's discrete Laplace scale: the expected noise summed
        over the cells (``J b``) is then at most the consumer's rows. One bin when none qualifies. Post-processing
        of the owners' releases and public numbers (docs/explanation/direction-purchase.md)."""
        edges = np.asarray(rule.edges, dtype=np.float64)
        B = len(edges) + 1
        strata = counts.shape[1] // B
        scale = count_release_event(agg.config.epsilon * self.histogram_share()).scale
        chosen: tuple[np.ndarray, np.ndarray] | None = None
        for want in range(B, 0, -1):
            keep = kept_edges(len(edges), want)
            merged_bin = np.searchsorted(keep, np.arange(B), side="left")  # bin i joins the merged bin of its edges
            matrix = np.zeros((strata * B, strata * (len(keep) + 1)))
            for stratum in range(strata):
                matrix[stratum * B + np.arange(B), stratum * (len(keep) + 1) + merged_bin] = 1.0
            chosen = (keep, matrix)
            scaled = (counts @ matrix) / np.sqrt(matrix.sum(0))
            if (
                len(label_cells(scaled, sums, n_rows, sigma, resolution=resolution).labels) * scale
                <= agg.validation_rows
            ):
                break
        assert chosen is not None
        keep, matrix = chosen
        if len(keep) == len(edges):
            return None
        bins = len(keep) + 1
        bounds = np.concatenate([[0], keep + 1, [B]])  # merged bin m covers the bins bounds[m] .. bounds[m+1] - 1
        names = []
        for j in range(strata * bins):
            stratum, m = divmod(j, bins)
            first, last = int(bounds[m]), int(bounds[m + 1]) - 1
            names.append(self.key_name(stratum * B + first, f"bins {first}-{last}" if last > first else None))
        return KeyMerge(
            matrix=matrix, keys=tuple(range(strata * bins)), names=tuple(names), rule=rule.with_edges(edges[keep])
        )

    def releases(self, agg: Aggregator) -> CellReleases:
        """The owners' release in two parts around the consumer's direction (docs/explanation/direction-purchase.md).

        First every owner's hash sum (the first part of its one release), which groups the owners
        (:func:`~.cells.owner_groups`); then the direction, which the consumer releases only when it holds at least
        ``G S b`` rows (``G`` owner groups, ``S`` strata, ``b`` its histogram's noise scale): the cells without
        bins, owner groups x strata, must leave the histogram room for bins (:meth:`merge_keys`'s rule at one bin).
        Otherwise no direction is released, every row is in one bin, and the histogram spends the direction's share
        of ``epsilon_v`` too. Then the groups' resolution (:meth:`group_resolution`). Last, every owner's counts per
        key (the second part)."""
        c = agg.config
        strata = len(self.key_set()) // self.bins
        joint = CELL_DIM + len(self.key_set())
        # Every check of the public rows before the first release: the direction's space and geometry come from them.
        geometry = self.public_space(agg) if self.bins > 1 else None
        t0 = time.perf_counter()
        sums, sigma = self._owner_releases(agg, CellRule(), (), part="sums", joint_dim=joint)
        held = [o for o in agg.owners if o in sums and agg.active[o] and agg.n_rows[o] > 0]
        n = np.array([agg.n_rows[o] for o in held], dtype=np.float64)
        means = np.array([sums[o] for o in held]).reshape(len(held), CELL_DIM) / n[:, None]  # held: n_rows > 0
        groups = owner_groups(means, np.full(len(held), sigma**2) / n**2, n) if held else []
        scale = count_release_event(c.epsilon * self.histogram_share()).scale
        t_sums = time.perf_counter() - t0
        t0 = time.perf_counter()
        # One bin reads no direction: none is released (its share of epsilon_v goes to the histogram).
        min_rows = math.ceil(max(len(groups), 1) * strata * scale - 1e-9)
        rule = None if geometry is None else self.direction_rule(agg, min_rows=min_rows, geometry=geometry)
        agg.timings["direction"] = time.perf_counter() - t0
        resolution = self.group_resolution(agg, means, sigma**2 / n**2, n, strata * scale) if held else None
        if rule is not None:
            keys = self.key_set()
            names = tuple(self.key_name(j) for j in range(len(keys)))
            share = self.histogram_share()
        else:  # no direction: one bin (a zero direction in the rows' features, no edges: no row is scored)
            rule = self.crossed(
                CellRule(direction=np.zeros(c.n_features), centre=np.zeros(c.n_features), edges=np.zeros(0))
            )
            keys = tuple(range(strata))
            whole = f"bins 0-{self.bins - 1}" if self.bins > 1 else None
            names = tuple(self.key_name(j * self.bins, whole) for j in range(strata))
            share = 1.0 - self.sale_tilt_share
        t0 = time.perf_counter()
        counts, _ = self._owner_releases(agg, rule, keys, part="counts", joint_dim=joint)
        agg.timings["sketches"] = t_sums + time.perf_counter() - t0
        values = {o: np.concatenate([counts[o], sums[o]]) for o in counts if o in sums}
        return CellReleases(values, sigma, rule, keys, names, share, resolution)

    def group_resolution(
        self, agg: Aggregator, means: np.ndarray, noise_var: np.ndarray, n_rows: np.ndarray, cost: float
    ) -> float | None:
        """The resolution of the owner groups (:func:`~.cells.owner_groups`), from the owners' released means and
        public numbers (post-processing): the squared distance between the two halves of the public seed rows in the
        cells' hash space (:func:`~.cells.seed_split_distance`), when ``|D_v|`` is known (the consumer answered the
        direction request) and the consumer's histogram can pay for the groups it leaves, ``G' cost <= |D_v|``
        (``cost``: strata x the histogram's noise scale, the one-bin rule of :meth:`releases`); otherwise None, and
        every pair the test passes joins. Owners too small for their test to see that difference are then kept
        apart rather than pooled on no evidence (docs/explanation/direction-purchase.md)."""
        c = agg.config
        if not agg.validation_rows or agg.seed_rows is None or len(agg.seed_rows) < 2:
            return None
        h1 = self.cells_h1(agg)
        hasher = RFFHasher(c.n_features, dim=h1["dim"], gamma=h1["gamma"], seed=h1["hash_seed"])
        reference = seed_split_distance(np.asarray(hasher.transform(agg.seed_rows), dtype=np.float64))
        kept = owner_groups(means, noise_var, n_rows, resolution=reference)
        return reference if len(kept) * cost <= agg.validation_rows else None

    def public_space(self, agg: Aggregator) -> tuple[dict[str, Any], np.ndarray, int, np.ndarray, float]:
        """The direction's space from the public seed rows (the kernel space's width and features, or the rows' own),
        the seed rows in it, its width, and the public centre and clipping norm: computed before any release, so
        that seed rows it cannot use (none, one, all equal) are refused naming ``seed_set`` before any budget is
        spent."""
        c = agg.config
        seed = agg.seed_rows
        if seed is None or len(seed) < 2:
            raise InvalidParameterError(
                f"the ByDirection purchase needs at least 2 public seed rows (their spread places the direction's "
                f"bins), got {0 if seed is None else len(seed)}",
                "seed_set",
            )
        space: dict[str, Any] = {}
        width = c.n_features
        gamma = kernel_gamma(seed)  # the kernel space's and the cells' width: refused here, before any release
        if self.space == "kernel":
            space = {
                "direction_dim": KERNEL_DIM,
                "direction_gamma": gamma,
                "direction_seed": direction_hash_seed(c.hash_seed),
            }
            features = RFFHasher(
                c.n_features, dim=KERNEL_DIM, gamma=space["direction_gamma"], seed=space["direction_seed"]
            )
            seed = np.asarray(features.transform(seed), dtype=np.float64)
            width = KERNEL_DIM
        centre, clip = public_geometry(seed, self.space)
        return space, seed, width, centre, clip

    def direction_rule(
        self,
        agg: Aggregator,
        min_rows: int = 0,
        geometry: tuple[dict[str, Any], np.ndarray, int, np.ndarray, float] | None = None,
    ) -> CellRule | None:
        """The consumer's direction release, checked and recorded; the cells' rule from it and the public rows
        (None when the consumer holds fewer than ``min_rows`` rows and so released nothing)."""
        c = agg.config
        space, seed, width, centre, clip = geometry if geometry is not None else self.public_space(agg)
        epsilon = c.epsilon * self.direction_share
        req = DirectionRequest(centre=centre, clip=clip, epsilon=epsilon, delta=c.delta, **space, min_rows=min_rows)
        agg.exchanges += 1
        reply = agg.transport.request(agg.consumer, req)
        if not isinstance(reply, DirectionRelease):
            raise ProtocolError(f"consumer sent {type(reply).__name__}, not a direction release")
        noisy = np.asarray(reply.noisy_mean)
        if noisy.shape == (0,):  # declined: fewer rows than min_rows, nothing released
            if isinstance(reply.n_rows, bool) or not isinstance(reply.n_rows, (int, np.integer)):
                raise ProtocolError(f"consumer declined the direction with a row count {reply.n_rows!r}")
            if not 0 < reply.n_rows < min_rows:
                raise ProtocolError(
                    f"consumer declined the direction over {reply.n_rows} rows; it releases it from {min_rows} rows"
                )
            agg.check_validation_size(int(reply.n_rows))
            return None
        if noisy.shape != (width,) or noisy.dtype.kind not in "fiu" or not np.isfinite(noisy).all():
            raise ProtocolError(f"consumer sent a malformed direction (shape {noisy.shape}, expected ({width},))")
        agg.check_validation_size(reply.n_rows)
        cal = accounting.calibrate_gaussian(
            epsilon, c.delta, sensitivity=direction_sensitivity(clip, agg.validation_rows), dim=width
        )
        sigma = real_number(reply.sigma)
        if sigma is None or not math.isclose(sigma, float(cal.sigma), rel_tol=1e-9):
            raise ProtocolError(f"consumer released with sigma {reply.sigma!r}, the calibration gives {cal.sigma!r}")
        reach = float(clip) + RELEASE_SIGMAS * float(cal.sigma) + float(cal.granularity)
        if np.abs(noisy).max() > reach:  # the clipped mean has norm <= clip: a coordinate beyond it and the noise
            raise ProtocolError(
                f"consumer released a direction with a coordinate beyond the clipping norm and its noise ({reach:.3g})"
            )
        rows = "D_v's rows' random features (the kernel space)" if space else "D_v's rows"
        agg.record(
            "validation",
            cal.event("D_v's mean clipped to norm C around the seed rows' mean + discrete Gaussian"),
            f"the consumer's direction: mean of {rows} centred on the public seed rows' mean and clipped to norm C "
            "(replace-one in D_v, L2 sensitivity 2C/|D_v|)",
        )
        norm = float(np.linalg.norm(noisy))
        w = noisy / norm if norm > 0 else np.eye(width)[0]
        return self.crossed(
            CellRule(
                direction=w.astype(np.float64), centre=centre, edges=bin_edges(seed, centre, w, self.bins), **space
            )
        )
