"""The cell family's purchase (docs/explanation/label-purchase.md): rows bought by public cell from the owners' and
the consumer's DP counts. :class:`CellPurchase` is the machinery of :class:`~.by_label.ByLabel`,
:class:`~.by_strata.ByStrata` and :class:`~.by_direction.ByDirection`, which differ only in what a row's key is
(:class:`~.cell_rule.CellRule`) and in what the consumer releases before its histogram.

Exchanges:

1. every owner releases its row count per key of the public key set and the sum of the cells' h1 over its rows
   (:class:`~.cell_messages.CellReleaseRequest`; one discrete Gaussian release, replace-one in that owner's rows, at
   the owners' ``(epsilon, delta)``); the aggregator groups owners whose released means cannot be told apart and
   forms the cells (group of owners, key) from these releases only (:func:`~.cells.label_cells`);
2. the consumer releases ``D_v``'s counts per cell (:class:`~.cell_messages.CellHistogramRequest`; discrete Laplace,
   pure ``epsilon_v``, replace-one in ``D_v``) and sends its rows to the trusted aggregator;
3. the aggregator asks each owner for rows of each key (:func:`~.cells.quotas_with_reserve`: ``purchase_factor *
   size`` rows in all, whatever K; post-processing) and each owner sells them, herded or drawn uniformly among its
   rows of the key (:class:`~.cell_messages.CellSaleRequest`); with ``sale_tilt_share > 0`` the consumer first
   spends that share of ``epsilon_v`` on its hashed mean ``g~``, toward which every sale leans.

The aggregator then chooses the summary on the exact kernel of the bought rows toward ``D_v``. Every party is
certified: the owners at their ``(epsilon, delta)``, the consumer at ``(epsilon_v, delta_v)``.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ... import accounting
from ..._validation import Interval
from ...accounting._checks import MIN_EVENT_EPSILON, MIN_TARGET_EPSILON
from ...errors import InvalidParameterError, ProtocolError
from ...kernels import DEFAULT_CANDIDATE_FACTOR, h1_peak
from ...messages import real_array, real_number
from ...privacy import COUNT_SENSITIVITY, count_release_event, mean_release_sensitivity
from ...strata import label_index, public_value_set
from ..base import MAX_COUNT, PartyData, option
from ..release_checks import check_consumer_counts, check_hash_sum, check_owner_label_counts
from .aggregator import Aggregator, Pool, array_kind, temperature_for
from .cell_inputs import check_cell_party_data
from .cell_messages import (
    CellHistogramRelease,
    CellHistogramRequest,
    CellRelease,
    CellReleaseRequest,
    CellSale,
    CellSaleRequest,
    owner_release_calibration,
    owner_release_part,
)
from .cell_rule import CellRule, misplaced_rows
from .cells import (
    CELL_DIM,
    MAX_COUNT_SCALE,
    PURCHASE_FACTOR,
    LabelCells,
    herded_sales,
    label_cells,
    quotas_with_reserve,
)
from .purchase import Purchase, PurchaseShape

__all__ = [
    "CellPurchase",
    "CellReleases",
    "KeyMerge",
    "SALE_TILT_SHARE",
    "SHORTFALL_SIGMAS",
    "label_set_tuple",
    "label_set_option",
    "cell_hash_seed",
]

#: The default share of the consumer's epsilon_v spent on its hashed mean ``g~``, which tilts each owner's sale of a
#: key toward the consumer's rows inside the key; 0: no tilt (docs/explanation/label-purchase.md, "The tilted sale").
SALE_TILT_SHARE = 0.0
#: An owner that sells fewer rows of a key than asked claims to hold no more: the aggregator excludes it when its
#: released count of the key is more than this many noise sigmas above (false alarm 2.9e-7 per key).
SHORTFALL_SIGMAS = 5.0


@dataclass(frozen=True)
class KeyMerge:
    """Keys merged after the owners' releases (:meth:`CellPurchase.merge_keys`): ``matrix`` (L, L') maps each key
    to the one merged key it joins (0/1, one 1 per row), ``keys`` and ``names`` are the merged keys, ``rule`` the
    cell rule that keys the rows by them (the consumer's histogram and the sales use it)."""

    matrix: np.ndarray
    keys: tuple[Any, ...]
    names: tuple[Any, ...]
    rule: CellRule


# -- the purchase object --------------------------------------------------------------------------------------


def _check_part(epsilon: float, smallest: float, argument: str, what: str, eps_v: float) -> None:
    """Refuse a part of ``epsilon_v`` below ``smallest``, the least epsilon its release accepts, naming ``argument``
    (the share), or ``privacy`` when even half of ``epsilon_v`` would be too small (the budget is the cause)."""
    if not epsilon >= smallest:
        argument = "privacy" if eps_v / 2.0 < smallest else argument
        raise InvalidParameterError(
            f"{what} leaves an epsilon of {epsilon:.3g}, below the smallest its release accepts "
            f"({smallest:g}): lower the share or raise epsilon_v",
            argument,
        )


def label_set_tuple(value: object) -> tuple[Any, ...]:
    """The public label set as a tuple of distinct int, float or str labels (non-empty)."""
    return public_value_set(value, "label_set", "labels")


def reserve_option(default: float) -> Any:
    """The cell purchases' ``reserve`` option, declared once (each purchase gives its own default)."""
    return option(
        default,
        help="the share of the rows bought kept for every cell the consumer's release counts any row in, below "
        "the noise threshold too (ByStrata, ByDirection: 1/3; ByLabel: 0)",
        constraint=Interval(float, 0, 1, "left"),
    )


def set_required_keys(purchase: CellPurchase, name: str, convert: Callable[[Any], Any], what: str) -> None:
    """Set ``purchase``'s option ``name`` (its public keys: ``label_set``, ``levels``) to ``convert(value)``, in its
    ``_validate``; left at its empty default it is an InvalidParameterError naming it (``what``: what it holds, with
    an example), since the keys must not be read off anybody's data."""
    value = getattr(purchase, name)
    if isinstance(value, tuple) and value == ():  # an array is compared by type first
        raise InvalidParameterError(
            f"{type(purchase).__name__} needs `{name}`, {what}: it must not be read off anybody's data", name
        )
    object.__setattr__(purchase, name, convert(value))


def label_set_option() -> Any:
    """The public label set of the purchases by label (``ByLabel``; ``ByDirection``, whose bins it crosses), declared
    once."""
    return option(
        (),
        help="the public labels a row may have, comma-separated (0,1,2; numbers read as numbers) or a JSON list "
        '(\'["cat", "dog"]\')',
        parse="label_set",
    )


def levels_option() -> Any:
    """The strata purchases' ``levels`` option, declared once."""
    return option(
        (),
        help="the public values of each stratum attribute: attributes separated by ';', values by ',' "
        "('a,b,c;0,1'; numbers read as numbers) or a JSON list of lists ('[[\"a\",\"b\"],[0,1]]')",
        parse="levels",
    )


@dataclass(frozen=True)
class CellReleases:
    """What a cell purchase has before the consumer's histogram: every active owner's released values (counts per
    key, then the cells' hash sum), their noise ``sigma``, the cell rule, the keys and their names, the share
    of ``epsilon_v`` left for the histogram, and the owner groups' ``resolution`` (:func:`~.cells.owner_groups`;
    None: every pair its test passes joins)."""

    values: dict[str, np.ndarray]
    sigma: float
    rule: CellRule
    keys: tuple[Any, ...]
    names: tuple[Any, ...]
    histogram_share: float
    resolution: float | None = None


@dataclass(frozen=True, repr=False)
class CellPurchase(Purchase):
    """Buy rows by public cell from the owners' and the consumer's DP counts: the machinery of :class:`ByLabel`,
    :class:`~dpsumm.ByStrata` and :class:`~dpsumm.methods.ByDirection`, which differ only in what a row's key is (its label,
    its stratum, the bin of its score along a released direction, or their product) and in what the consumer
    releases before its histogram (:meth:`cell_rule`). Not a purchase by itself."""

    owner_release: ClassVar[bool] = True
    nominates: ClassVar[bool] = False
    #: Where a cell's rows go when its sellers hold fewer than the first split asks (:func:`~.cells.quotas_from_cells`):
    #: False, to the other wanted cells by their evidence (the label and strata purchases' measured rule); True, first
    #: to the same key's rows at its other sellers (the direction purchase).
    overflow_within_keys: ClassVar[bool] = False

    purchase_factor: float = option(
        PURCHASE_FACTOR,
        help="raw owner rows bought, in units of the size",
        constraint=Interval(
            float, 1, MAX_COUNT, why="rows bought per summary row: below 1 the summary could not be filled"
        ),
    )
    sale_tilt_share: float = option(
        SALE_TILT_SHARE,
        help="the share of the validation budget spent on the hashed mean that tilts each owner's "
        "sale toward the consumer inside a label (0: none)",
        constraint=Interval(
            float, 0, 1, "left", why="the share of epsilon_v spent on the tilt's g~; the histogram needs the rest"
        ),
    )
    reserve: float = reserve_option(0.0)

    # -- what a subclass says ---------------------------------------------------------------------------------

    def fit_advice(self) -> str:
        """The labels or strata that chose the rows as the likely cause, when the purchase reads any; else the
        default purchase (:meth:`Purchase.fit_advice`)."""
        if not (self.public_labels() or self.public_levels()):
            return super().fit_advice()
        return (
            "the labels or strata that chose the rows may not carry the consumer's shift: name the attribute that "
            "does (dpsumm.ByStrata, or dpsumm.ByDirection(levels=...) to cross it with the consumer's direction), or "
            "buy without them (dpsumm.Nominations(), the default: cells along the consumer's released direction)"
        )

    def key_set(self) -> tuple[Any, ...]:
        """The public keys the parties count their rows by (the label set; the cells ``0 .. J - 1``)."""
        raise NotImplementedError

    def cells_gamma(self, agg: Aggregator) -> float:
        """The width of the cells' h1 (public): the run's gamma."""
        return float(agg.config.gamma)

    def cells_h1(self, agg: Aggregator) -> dict[str, Any]:
        """The cells' h1 as a request carries it: ``CELL_DIM`` features of width :meth:`cells_gamma`, seeded by
        :func:`cell_hash_seed`."""
        c = agg.config
        return {**c.h1_fields(CELL_DIM, cell_hash_seed(c.hash_seed)), "gamma": self.cells_gamma(agg)}

    def key_name(self, j: int) -> Any:
        """How the result's report names key ``j``."""
        return self.key_set()[j]

    def histogram_share(self) -> float:
        """The share of ``epsilon_v`` the consumer's histogram over the cells spends."""
        return 1.0 - self.sale_tilt_share

    def reserve_share(self) -> float:
        """The share of the rows bought kept for every cell with a positive released count (:func:`~.cells.
        quotas_with_reserve`); 0: the thresholded split alone."""
        return float(self.reserve)

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
        """Coarser keys for the consumer's histogram and the sales, chosen from the owners' releases (``counts``
        per key, ``sums`` of the cells' h1, noise ``sigma``; owners grouped at ``resolution``) and public numbers;
        ``None``: the keys stand."""
        return None

    def cell_rule(self, agg: Aggregator) -> CellRule:
        """The rule that tells the parties each row's key (:meth:`~.cell_rule.CellRule.row_keys`): the empty rule
        (the rows' labels) for the label purchase; a subclass may first have the consumer release what the rule
        needs."""
        return CellRule()

    def check_release_plan(self, method: Any, eps_v: float, delta_v: float, validation_rows: int) -> None:
        """Calibrate the consumer's releases before the histogram (public numbers), raising InvalidParameterError."""

    def check_party_data(self, method: Any, data: PartyData, size: int) -> PartyData:
        return check_cell_party_data(method, data, size)

    def check_method(self, method: Any) -> None:
        cls = type(self).__name__
        if method.reveal != "points" or method.choice == "hashes" or method.validation_release != "gaussian":
            raise InvalidParameterError(
                f"the {cls} purchase buys raw rows and chooses on the exact kernel: it needs "
                "reveal='points', choice='kernel' (or None) and validation_release='gaussian'",
                "purchase",
            )
        for unread in ("nominees", "candidates"):
            if getattr(method, unread) is not None:
                raise InvalidParameterError(
                    f"`{unread}` applies to the purchases in which owners nominate rows "
                    f"(Nominees, Winners), not to {cls}",
                    unread,
                )
        if method.temperature is not None and self.sale_tilt_share == 0:
            raise InvalidParameterError(
                f"`temperature` tilts the owners' rows toward g~: with {cls} it applies only with sale_tilt_share > 0",
                "temperature",
            )

    def check_plan(self, method: Any, shape: PurchaseShape) -> None:
        size, owner_rows, validation_rows, budget = shape.size, shape.owner_rows, shape.validation_rows, shape.budget
        if self.purchase_factor * size > MAX_COUNT:
            raise InvalidParameterError(
                f"`purchase_factor` * size = {self.purchase_factor:g} * {size} rows to buy "
                f"exceeds the cap of {MAX_COUNT}",
                "purchase_factor",
            )
        if owner_rows is not None and sum(owner_rows) < size:
            raise InvalidParameterError(f"the owners hold {sum(owner_rows)} rows, fewer than `size` ({size})", "size")
        if budget is None:
            return
        eps_v, delta_v = budget.validation_epsilon, budget.validation_delta
        assert eps_v is not None and delta_v is not None
        self._check_shares(eps_v)
        if validation_rows is None:
            return
        try:
            self.check_release_plan(method, eps_v, delta_v, validation_rows)
            count_release_event(eps_v * self.histogram_share())
            if self.sale_tilt_share > 0:
                accounting.calibrate_gaussian(
                    eps_v * self.sale_tilt_share,
                    delta_v,
                    sensitivity=mean_release_sensitivity(validation_rows),
                    dim=method.dim,
                )
            owner_release_calibration(len(self.key_set()) + CELL_DIM, shape.owner_epsilon, shape.owner_delta)
        except InvalidParameterError as exc:
            raise InvalidParameterError(f"`privacy`: {exc}", "privacy") from exc

    def _check_shares(self, eps_v: float) -> None:
        """Each part of ``epsilon_v`` (the histogram's, the tilt's, a direction's) is an epsilon the releases accept,
        before any release and whether or not ``|D_v|`` is known: a share that leaves a part below the smallest
        epsilon is refused naming that share (the user's option), not the noise scale it would have made."""
        shares = {"sale_tilt_share": self.sale_tilt_share, **self.release_shares()}
        for argument, share in shares.items():
            if share > 0:  # a discrete Gaussian calibrated to its part: a target epsilon
                _check_part(
                    eps_v * share,
                    MIN_TARGET_EPSILON,
                    argument,
                    f"`{argument}` ({share!r}) of epsilon_v ({eps_v!r})",
                    eps_v,
                )
        rest = self.histogram_share()
        blame = max(shares, key=lambda k: shares[k]) if any(v > 0 for v in shares.values()) else "privacy"
        _check_part(  # the histogram's discrete Laplace: one event's epsilon, a scale its threshold takes
            eps_v * rest,
            max(MIN_EVENT_EPSILON, COUNT_SENSITIVITY / MAX_COUNT_SCALE),
            blame,
            f"the histogram's share of epsilon_v (1 - {' - '.join(f'`{k}`' for k in shares)} = {rest!r}, of {eps_v!r})",
            eps_v,
        )

    def release_shares(self) -> dict[str, float]:
        """The shares of ``epsilon_v`` the purchase's own consumer releases spend besides the tilt and the
        histogram, by option name (the direction purchase's ``direction_share``)."""
        return {}

    # -- the aggregator's side ------------------------------------------------------------------------------------

    def buy(self, aggregator: Aggregator, size: int) -> Pool:
        agg, c = aggregator, aggregator.config
        rel = self.releases(agg)
        released, sigma, rule, keys, names = rel.values, rel.sigma, rel.rule, rel.keys, list(rel.names)
        L = len(keys)
        owners = [o for o in agg.owners if o in released and agg.active[o]]
        counts = np.array([released[o][:L] for o in owners]).reshape(len(owners), L)
        nonempty = [k for k, o in enumerate(owners) if agg.n_rows[o] > 0]  # a mean hash needs rows
        sums = np.array([released[owners[k]][L:] for k in nonempty]).reshape(len(nonempty), CELL_DIM)
        n_rows = np.array([agg.n_rows[owners[k]] for k in nonempty])
        # Coarser keys, when the purchase merges some (post-processing of the owners' releases and public numbers):
        # the merged counts are sums of released counts, each merged key's noise sigma * sqrt(keys merged).
        merge = self.merge_keys(agg, counts[nonempty], sums, n_rows, sigma, rule, rel.resolution)
        widths = np.ones(L)  # keys merged into each key
        if merge is not None:
            counts = counts @ merge.matrix
            widths = merge.matrix.sum(0)
            keys, names, rule = merge.keys, list(merge.names), merge.rule
            L = len(keys)
        # label_cells reads counts against one noise sigma: a merged key's count is compared at its own, sigma sqrt(m)
        sub = label_cells(counts[nonempty] / np.sqrt(widths), sums, n_rows, sigma, resolution=rel.resolution)
        cells = LabelCells(
            labels=sub.labels,
            owners=tuple(tuple(nonempty[i] for i in own) for own in sub.owners),
            centres=sub.centres,
            bias=sub.bias,
        )
        if not len(cells.labels):
            raise ProtocolError(
                f"no owner's released count of any {'label of `label_set`' if rule.by_label() else 'cell'} is positive: "
                "there is nothing to buy (the consumer released nothing)"
            )
        t1 = time.perf_counter()
        histogram, scale = self._consumer_histogram(agg, cells, rule, keys, rel.histogram_share)
        agg.timings["target"] = time.perf_counter() - t1
        q = self._quotas(agg, histogram, scale, cells, counts, size)
        target, temperature = self._sale_tilt(agg)
        seeds = agg.rng.derive("label-samples")
        # An owner short of a label sells its rows of the labels the consumer's release weighs most (post-processing).
        preference = np.zeros(L)
        np.add.at(preference, cells.labels, np.maximum(histogram, 0.0))
        herded = herded_sales(q, cells)
        label_set = np.asarray(keys)
        msgs = {
            o: CellSaleRequest(
                **c.h1_fields(),
                count=int(q[k].sum()),
                candidates=int(DEFAULT_CANDIDATE_FACTOR * q[k].sum()),
                reveal=c.reveal,
                sample_seed=int(seeds.integers(2**63)),
                key_set=label_set,
                key_counts=q[k].astype(np.int64),
                key_preference=preference,
                key_herded=herded[k],
                target=target,
                temperature=float(temperature),
                greedy_sample_factor=c.greedy_sample_factor,
                **rule.fields(),
            )
            for k, o in enumerate(owners)
            if q[k].sum() > 0 and agg.active[o]
        }
        t2 = time.perf_counter()
        released_counts = {o: counts[k] for k, o in enumerate(owners)}
        sale_sigma = sigma * math.sqrt(float(widths.max())) if L else sigma  # a key's largest noise: the check's bar

        def check_sale(o: str, r: object) -> str | None:
            problem = self._check_sale(agg, r, msgs[o], released_counts[o], sale_sigma)
            return problem if problem is not None else agg.check_rows(o, getattr(r, "n_rows", None))

        replies = agg.request_owners(msgs, "cell-sale", check_sale)
        replies.update(self._rebuy(agg, replies, msgs, q, histogram, scale, cells, counts, owners, size, check_sale))
        replies = {o: r for o, r in replies.items() if agg.active[o]}
        pool = Pool(
            report={
                "count_scale": scale,
                "owner_epsilon": c.owner_epsilon,
                "owner_delta": c.owner_delta,
                "quotas": {o: int(v) for o, v in zip(owners, q.sum(1))},
                "label_quotas": {o: q[k].astype(np.int64).tolist() for k, o in enumerate(owners)},
                "label_cells": [
                    {"label": names[int(j)], "owners": [owners[k] for k in own]}
                    for j, own in zip(cells.labels, cells.owners)
                ],
            }
        )
        _fill_pool(agg, pool, replies)
        agg.timings["purchase"] = time.perf_counter() - t2
        return pool

    def _sale_tilt(self, agg: Aggregator) -> tuple[np.ndarray, float]:
        """The tilt of the sales: with ``sale_tilt_share > 0`` the consumer's hashed mean at that share of
        ``epsilon_v``, toward which each owner's sale of a key leans (post-processing of a DP release), and the
        temperature; else no target."""
        c = agg.config
        if self.sale_tilt_share <= 0:
            return np.zeros(0), 1.0
        t1 = time.perf_counter()
        g_release = agg.target(epsilon=c.epsilon * self.sale_tilt_share, send_rows=False)
        agg.timings["target"] += time.perf_counter() - t1
        temperature = c.temperature if c.temperature is not None else temperature_for(agg.sigma)
        agg.temperature = float(temperature)
        return np.asarray(g_release.noisy_mean, dtype=np.float64), temperature

    def releases(self, agg: Aggregator) -> CellReleases:
        """The cell rule (:meth:`cell_rule`) and every active owner's one release over its keys."""
        t0 = time.perf_counter()
        rule = self.cell_rule(agg)
        agg.timings["direction"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        released, sigma = self._owner_releases(agg, rule)
        agg.timings["sketches"] = time.perf_counter() - t0
        keys = self.key_set()
        return CellReleases(
            released, sigma, rule, keys, tuple(self.key_name(j) for j in range(len(keys))), self.histogram_share()
        )

    def _owner_releases(
        self,
        agg: Aggregator,
        rule: CellRule,
        keys: tuple[Any, ...] | None = None,
        *,
        part: str = "all",
        joint_dim: int = 0,
    ) -> tuple[dict[str, np.ndarray], float]:
        """Every active owner's DP release over ``keys`` (default :meth:`key_set`): its counts per key and the
        cells' hash sum, or one ``part`` of them ("sums", "counts") calibrated over ``joint_dim`` values; checked,
        recorded once."""
        c = agg.config
        keys = self.key_set() if keys is None else keys
        L = 0 if part == "sums" else len(keys)
        dim = L + (0 if part == "counts" else CELL_DIM)
        if part == "all":
            cal, event = owner_release_calibration(dim, c.owner_epsilon, c.owner_delta)
        else:
            cal, event = owner_release_part(joint_dim, part, dim, c.owner_epsilon, c.owner_delta)
        req = CellReleaseRequest(
            **self.cells_h1(agg),
            epsilon=c.owner_epsilon,
            delta=c.owner_delta,
            key_set=np.asarray(keys),
            **rule.fields(),
            part=part,
            joint_dim=0 if part == "all" else joint_dim,
        )
        owners = [o for o in agg.owners if agg.active[o]]
        # Parallel composition: owner k's release depends on D_k only, so one record covers every owner.
        what = {
            "all": f"row counts per public {'label' if rule.by_label() else 'cell'} and sum of the cells' h1",
            "sums": "sum of the cells' h1 (the first part of its release)",
            "counts": "row counts per public cell (the second part of its release)",
        }[part]
        agg.record("owners", event, f"each owner's {what} (replace-one in that owner's rows)")

        def check(o: str, r: object) -> str | None:
            if not isinstance(r, CellRelease):
                return f"replied with {type(r).__name__}, not a cell release"
            stated = agg.check_rows(o, r.n_rows)  # its public size, and its other part's statement
            if stated is not None:
                return stated
            values = real_array(r.values)
            if values is None:
                return f"sent a malformed release ({array_kind(r.values)})"
            if values.shape != (dim,) or not np.isfinite(values).all():
                return f"sent a malformed release (shape {values.shape}, expected ({dim},))"
            sigma = real_number(r.sigma)
            if sigma is None or not math.isclose(sigma, float(cal.sigma), rel_tol=1e-9):
                return f"released with sigma {r.sigma!r}, the calibration gives {cal.sigma!r}"
            return _implausible_release(
                np.asarray(r.values, dtype=np.float64), int(r.n_rows), L, cal, sums=part != "counts"
            )

        replies = agg.request_owners({o: req for o in owners}, "cell-release", check)
        out: dict[str, np.ndarray] = {}
        for o, r in replies.items():
            agg.n_rows[o] = int(r.n_rows)
            out[o] = np.asarray(r.values, dtype=np.float64)
        return out, float(cal.sigma)

    def _consumer_histogram(
        self, agg: Aggregator, cells: LabelCells, rule: CellRule, keys: tuple[Any, ...], share: float
    ) -> tuple[np.ndarray, float]:
        """The consumer's histogram release over ``cells`` (counts + discrete Laplace, at ``share`` of
        ``epsilon_v``) and its scale; keeps ``D_v``'s rows for the choice."""
        c = agg.config
        J = len(cells.labels)
        epsilon = c.epsilon * share
        req = CellHistogramRequest(
            key_set=np.asarray(keys),
            epsilon=epsilon,
            send_rows=True,
            **self.cells_h1(agg),
            cell_keys=cells.labels,
            centres=cells.centres,
            bias=cells.bias,
            **rule.fields(),
        )
        agg.exchanges += 1
        reply = agg.transport.request(agg.consumer, req)
        if not isinstance(reply, CellHistogramRelease):
            raise ProtocolError(f"consumer sent {type(reply).__name__}, not a cell histogram release")
        counts = np.asarray(reply.counts)
        if counts.shape != (J,) or counts.dtype.kind not in "fiu" or not np.isfinite(counts).all():
            raise ProtocolError(f"consumer sent a malformed cell histogram (shape {counts.shape}, expected ({J},))")
        agg.check_validation_size(reply.n_rows)
        agg.keep_validation_rows(reply.rows, int(reply.n_rows))
        event = count_release_event(epsilon)
        if (
            isinstance(reply.scale, bool)
            or not isinstance(reply.scale, (int, float, np.floating))
            or not math.isclose(float(reply.scale), event.scale, rel_tol=1e-12)
        ):
            raise ProtocolError(f"consumer released with scale {reply.scale!r}, the mechanism's is {event.scale!r}")
        if not (counts == np.round(counts)).all():
            raise ProtocolError("consumer sent a cell histogram that is not integer (counts + discrete Laplace are)")
        try:
            problem = check_consumer_counts(counts, int(reply.n_rows), float(event.scale))
        except InvalidParameterError as exc:
            problem = str(exc)
        if problem is not None:  # never forwarded to the owners
            raise ProtocolError(f"consumer released an impossible cell histogram: {problem}")
        agg.record("validation", event, "counts of D_v's rows per cell (owner group, label) + discrete Laplace")
        return counts.astype(np.float64), float(event.scale)

    def _quotas(
        self, agg: Aggregator, histogram: np.ndarray, scale: float, cells: LabelCells, counts: np.ndarray, size: int
    ) -> np.ndarray:
        """Each owner's quota per key (:func:`~.cells.quotas_with_reserve` at this purchase's factor and reserve)."""
        return quotas_with_reserve(
            histogram,
            scale,
            agg.validation_rows,
            cells,
            counts,
            size,
            factor=self.purchase_factor,
            reserve=self.reserve_share(),
            within_keys=self.overflow_within_keys,
        )

    def _rebuy(
        self,
        agg: Aggregator,
        replies: dict[str, Any],
        msgs: dict[str, CellSaleRequest],
        q: np.ndarray,
        histogram: np.ndarray,
        scale: float,
        cells: LabelCells,
        counts: np.ndarray,
        owners: list[str],
        size: int,
        check: Any,
    ) -> dict[str, Any]:
        """Buy again from the other owners what an owner excluded at the sale did not deliver, within the same
        budget: the quotas are recomputed from the same released counts and
        histogram with that owner's counts set to 0 (post-processing of released values), and each remaining owner
        whose quota grows is sent one more sale for its new quota, whose rows replace its first sale's. Nothing
        else is released; the summary keeps its size when the others hold the rows."""
        # Only an owner excluded at the sale: an honest owner short of a cell already sold substitutes (its run,
        # and every honest run, is unchanged).
        short = [k for k, o in enumerate(owners) if o in msgs and (o not in replies or not agg.active[o])]
        if not short:
            return {}
        kept = counts.copy()
        for k in short:
            kept[k] = 0.0
        q2 = self._quotas(agg, histogram, scale, cells, kept, size)
        seeds = agg.rng.derive("cell-rebuy")
        more = {
            o: dataclasses.replace(
                msgs[o],
                count=int(q2[k].sum()),
                candidates=int(DEFAULT_CANDIDATE_FACTOR * q2[k].sum()),
                key_counts=q2[k].astype(np.int64),
                sample_seed=int(seeds.integers(2**63)),
            )
            for k, o in enumerate(owners)
            if k not in short and o in replies and agg.active[o] and int(q2[k].sum()) > int(q[k].sum())
        }
        if not more:
            return {}
        agg.events.append(
            {
                "phase": "cell-sale",
                "event": "rebought",
                "reason": f"{sum(int(q[k].sum()) for k in short)} rows not delivered by "
                f"{[owners[k] for k in short]} bought again from {sorted(more)}",
            }
        )
        msgs.update(more)
        first = {o: set(np.asarray(replies[o].tokens).tolist()) for o in more}
        again = agg.request_owners(more, "cell-sale", check)
        for o, r in again.items():  # the first sale's rows the second does not repeat were bought too
            extra = len(first[o] - set(np.asarray(r.tokens).tolist()))
            if r.points is not None:
                agg.accessed[o] += extra
            else:
                agg.hashes_seen[o] += extra
        return again

    def _check_sale(
        self, agg: Aggregator, r: object, req: CellSaleRequest, released: np.ndarray, sigma: float
    ) -> str | None:
        """A sale against its request: well-formed rows that hash to the hashes sent, labels in the set,
        substitutes only for a shortfall, rows in the cells they were sold as, and a shortfall the owner's own
        released counts make plausible. The rows' cells are checked before that shortfall: a misplaced row is
        proof, recomputed from the row, where an implausible shortfall is evidence from noisy counts, so a sale
        that fails both is refused for the proof."""
        c = agg.config
        if not isinstance(r, CellSale):
            return f"replied with {type(r).__name__}, not a cell sale"
        n = r.n_rows
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            return f"reported an impossible row count {n!r}"
        tokens, hashes = np.asarray(r.tokens), np.asarray(r.hashes)
        problem = _check_cell_sale(r, req, released, 0.0)  # its form; the shortfall's plausibility last
        if problem is not None:
            return problem
        if r.labels is None and agg.with_labels:
            return "sold no labels, but the run's rows are labelled"
        want = len(tokens)
        if tokens.dtype.kind not in "iu" or want > req.count:
            return f"sold {tokens.shape} tokens, the request asks for {req.count}"
        if np.any(np.diff(tokens) <= 0) or (len(tokens) and (tokens.min() < 0 or tokens.max() >= n)):
            return "sold repeated, unsorted or out-of-range tokens"
        if (
            hashes.shape != (want, c.dim)
            or hashes.dtype.kind != "f"
            or not np.isfinite(hashes).all()
            or (hashes.size and np.abs(hashes).max() > h1_peak(c.dim))
        ):
            return "sent malformed hashes or hashes outside the range of h1"
        if c.reveal == "points":
            pts = None if r.points is None else np.asarray(r.points)
            if (
                pts is None
                or pts.shape != (want, c.n_features)
                or pts.dtype.kind not in "fiu"
                or not np.isfinite(pts).all()
            ):
                return "sold malformed rows"
            got = agg.hashes_of(pts)
            if got is None:
                return "sold rows that h1 cannot hash (beyond the float32 range at this gamma)"
            if not np.array_equal(got, np.ascontiguousarray(hashes, dtype=np.float32)):
                return "sold rows that do not hash to the hashes it sent"
            problem = _check_cells(r, req, pts)
            if problem is not None:
                return problem
        return _check_cell_sale(r, req, released, sigma)


def _check_cells(r: CellSale, req: CellSaleRequest, points: np.ndarray) -> str | None:
    """Each sold row lies in the cell its owner sold it as, recomputed from the row and the label sold with it
    (:func:`~.cell_rule.misplaced_rows`); the label purchase's cells are the labels themselves."""
    rule = CellRule.of(req)
    if rule.by_label() or r.cells is None:
        return None
    labels = None if r.labels is None else np.asarray(r.labels)
    if labels is not None and (labels.shape != (len(points),) or labels.dtype.kind not in "biufUS"):
        return "sold labels that are not one number or string per row"
    bad = np.flatnonzero(misplaced_rows(rule, points, labels, np.asarray(r.cells)))
    if len(bad):
        i = int(bad[0])
        return (
            f"sold {len(bad)} rows that do not lie in the cells it sold them as (token {int(np.asarray(r.tokens)[i])}, "
            f"sold as cell {int(np.asarray(r.cells)[i])}; recomputed from the row and its label)"
        )
    return None


def _fill_pool(agg: Aggregator, pool: Pool, replies: dict[str, Any]) -> None:
    """The owners' checked sales into the pool: their tokens and hashes, rows and labels; the rows the aggregator
    saw counted."""
    for o, r in replies.items():
        tokens = np.asarray(r.tokens).astype(np.int64)
        pool.offered[o] = (tokens, np.ascontiguousarray(r.hashes, dtype=np.float32))
        pool.rows[o] = None if r.points is None else np.asarray(r.points)
        pool.labels[o] = None if r.labels is None else np.asarray(r.labels)
        agg.hashes_seen[o] += 0 if r.points is not None else len(tokens)
        if r.points is not None:
            agg.accessed[o] += len(tokens)


def _implausible_release(values: np.ndarray, n_rows: int, labels: int, cal: Any, *, sums: bool = True) -> str | None:
    """Why an owner's released counts per label (the first ``labels`` values) and hash sum (the rest, when ``sums``)
    are not ones an honest owner of ``n_rows`` rows could release (:mod:`dpsumm.protocols.release_checks`, false
    alarm 1e-9 per owner), or None."""
    try:
        problem = check_owner_label_counts(values[:labels], n_rows, cal.sigma, cal.granularity) if labels else None
        return problem or (check_hash_sum(values[labels:], n_rows, cal.sigma, cal.granularity) if sums else None)
    except InvalidParameterError as exc:  # a row count beyond any data set
        return f"released an impossible row count ({exc})"


def cell_hash_seed(hash_seed: int | str) -> str:
    """The seed of the cells' h1 (public, derived from the run's hash seed)."""
    return f"cells:{hash_seed}"


def _check_cell_sale(r: CellSale, req: CellSaleRequest, released: np.ndarray, sigma: float) -> str | None:
    """A cell sale against its request: labels in the set, substitutes only for a shortfall, and a shortfall the
    owner's own released counts make plausible (``released`` its noisy counts, noise ``sigma``)."""
    tokens = np.asarray(r.tokens)
    if tokens.ndim != 1:
        return "sold tokens that are not a 1-D array"
    label_set, asked = np.asarray(req.key_set), np.asarray(req.key_counts, dtype=np.int64)
    if not CellRule.of(req).by_label():  # a cell rule: the owner names each row's cell
        if r.cells is None or np.shape(r.cells) != tokens.shape or np.asarray(r.cells).dtype.kind not in "iu":
            return "sold rows without their cells (a purchase by cells buys rows of given cells)"
        idx = np.asarray(r.cells, dtype=np.int64)
        if len(idx) and (idx.min() < 0 or idx.max() >= len(label_set)):
            return "sold rows of a cell outside the purchase's cells"
    else:
        if r.labels is None or np.shape(r.labels) != tokens.shape:
            return "sold rows without their labels (the ByLabel purchase buys rows of given labels)"
        labs = np.asarray(r.labels)
        if labs.dtype.kind not in "biufUS":
            return f"sold labels of dtype {labs.dtype}, not numbers or strings"
        idx = label_index(labs, label_set)  # the owners' own matching of labels to the set
        if (idx < 0).any():
            return "sold rows of a label outside the label set"
    got = np.bincount(idx, minlength=len(label_set))
    # An owner short of a label sells as many rows of other labels instead (substitute_counts): rows beyond a
    # label's ask must be matched by rows missing from the others'.
    extra, missing = int(np.maximum(got - asked, 0).sum()), int(np.maximum(asked - got, 0).sum())
    if extra > missing:
        return (
            f"sold {extra} rows beyond the labels' asks but is short of only {missing} (substitutes must make "
            "up a shortfall)"
        )
    if sigma > 0:
        # Short of label j, the owner sold all it holds of it: its released count must agree, within the noise.
        implausible = np.flatnonzero((got < asked) & (np.asarray(released) - got > SHORTFALL_SIGMAS * sigma))
        if len(implausible):
            j = int(implausible[0])
            return (
                f"sold {got[j]} rows of label {label_set[j].item()!r} (short of the {asked[j]} asked), but "
                f"released a count of {released[j]:.1f}, more than {SHORTFALL_SIGMAS:g} noise sigmas above"
            )
    return None
