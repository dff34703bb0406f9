"""The nominations method object and the one place a nominations run becomes a result (docs/explanation/nominations.md, design.md)."""

from __future__ import annotations

import logging
import math
import time
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np

from ... import accounting
from ..._validation import Interval, OneOf
from ...errors import InvalidParameterError
from ...hashing import RFFHasher
from ...kernels import DEFAULT_CANDIDATE_FACTOR
from ...metrics import validation_fit
from ...privacy import MAX_MWEM_STEPS, MAX_MWEM_WORK, mean_release_sensitivity
from ...results import Access, SummaryResult
from ..base import (
    MAX_COUNT,
    MEDIAN_SAMPLE_ROWS,
    PartyData,
    Plan,
    RunSetup,
    RunShape,
    SummaryMethod,
    dim_option,
    hash_seed_option,
    option,
    reveal_option,
)
from .aggregator import STOCHASTIC_GREEDY_FACTOR, Aggregator, NominationsConfig
from .by_direction import ByDirection
from .by_label import ByLabel
from .nominees import Nominees
from .purchase import Purchase, PurchaseShape
from .winners import Winners

_log = logging.getLogger("dpsumm")

__all__ = [
    "Nominations",
    "run_nominations",
    "DEFAULT_VALIDATION_BUDGET",
    "DEFAULT_DIM",
    "NOMINEES_PER_SIZE",
    "OWNER_EPSILON",
    "OWNER_DELTA",
]

#: The validation release's budget when a run gives none: ``(epsilon_v, delta_v) = (1, 1e-6)``.
DEFAULT_VALIDATION_BUDGET = accounting.Budget(validation_epsilon=1.0, validation_delta=1e-6)
#: Without a budget, a validation set of more than ``DEFAULT_DELTA_SHARE / 1e-6`` rows gets the default delta
#: ``DEFAULT_DELTA_SHARE / |D_v|``: a delta must stay well below ``1 / |D_v|`` (above it a release may publish a row).
DEFAULT_DELTA_SHARE = 0.01


def default_validation_budget(validation_rows: int | None) -> accounting.Budget:
    """The validation budget of a run given none: :data:`DEFAULT_VALIDATION_BUDGET`, its delta lowered to
    ``DEFAULT_DELTA_SHARE / |D_v|`` for a validation set so large that ``1e-6`` is not well below ``1 / |D_v|``
    (``|D_v|`` is public; None: not known yet, the default as is)."""
    base = DEFAULT_VALIDATION_BUDGET
    assert base.validation_delta is not None
    if (
        validation_rows is None
        or validation_rows <= 0
        or base.validation_delta * validation_rows <= DEFAULT_DELTA_SHARE
    ):
        return base
    return accounting.Budget(
        validation_epsilon=base.validation_epsilon, validation_delta=DEFAULT_DELTA_SHARE / validation_rows
    )


#: h1's dimension for nominations: no per-coordinate noise is added to an owner's hashes, so ``d`` costs no
#: privacy here; d = 500 gives several times lower MMD² than the paper's 140 (docs/experiments/).
DEFAULT_DIM = 500
#: Rows each owner nominates per summary row when ``nominees`` is None (``M = 2 * size``): smaller ``M`` loses on
#: skewed splits (docs/experiments/mnist-nominees).
NOMINEES_PER_SIZE = 2
#: The owners' budget for a purchase in which every owner makes a DP release, when the run's budget has none.
OWNER_EPSILON = 1.0
OWNER_DELTA = 1e-6

_CHOICES = ("kernel", "hashes")
_OWNER_GREEDY = ("stochastic", "exact")
_RELEASES = ("gaussian", "mwem", "exact")


@dataclass(frozen=True, repr=False)
class Nominations(SummaryMethod):
    """The nominations protocol: the consumer releases what it wants privately, the owners offer rows ranked
    against it, and the aggregator buys them and chooses (docs/explanation/nominations.md, design.md).

    How the aggregator gets rows is the ``purchase`` object (:class:`dpsumm.ByDirection`, the default;
    :class:`dpsumm.Nominees`; :class:`dpsumm.ByLabel`; :class:`dpsumm.ByStrata`; :class:`dpsumm.Winners`); its own
    options live on it. Every purchase but :class:`~dpsumm.Winners` certifies every party.

    Parameters
    ----------
    purchase : Purchase, default=ByDirection()
        :class:`~dpsumm.ByDirection`: cells along the consumer's released direction (its clipped kernel mean),
        crossed with the label set or strata levels declared on it; the owners' and the consumer's DP counts per
        cell; ``3 * size`` raw rows whatever K (docs/explanation/direction-purchase.md).
        :class:`~dpsumm.Nominees` (the earlier default): the consumer releases its hashed validation mean ``g~`` once, every owner
        nominates ``nominees`` rows ranked against it and the aggregator buys them all (``K * nominees`` raw rows;
        owners' epsilon 0). :class:`~dpsumm.ByLabel`: rows bought by public label from the owners' and the
        consumer's DP counts (``3 * size`` raw rows whatever K; needs labels). :class:`~dpsumm.ByStrata`: the same
        by public stratum (needs strata). :class:`~dpsumm.Winners`: only the
        ``size`` winners are bought, and each owner learns which of its rows won (NOT certified for the owners).
    nominees : int, optional
        Rows each owner nominates (Nominees, Winners; public, the same for every owner). Default ``2 * size``.
    candidates : int, optional
        Each owner herds among ``candidates`` of its rows, sampled with probability ``~ exp(h1(x).g~ / T)``
        (default ``4 * nominees``; a number >= the owner's rows uses them all). Must be >= ``nominees``.
    temperature : float, optional
        The owners' tilt ``w(x) ~ exp(h1(x).g~ / T)``; default :func:`temperature_for` of the release's noise.
        A sharper tilt (e.g. ``0.1`` with the median-heuristic gamma) finds wanted rows that are a small share at
        every owner, when the validation set has hundreds of rows (docs/experiments/nominations-temperature).
    choice : {"kernel", "hashes"}, optional
        The aggregator's greedy: the exact RBF kernel of the bought rows against ``D_v`` (``"kernel"``; the
        consumer then sends ``D_v`` to the trusted aggregator), or their h1 hashes against ``mean h1(D_v)``
        (``"hashes"``). Default: the purchase's (the kernel when raw rows are bought before choosing).
    owner_greedy : {"stochastic", "exact"}, default="stochastic"
        How each owner picks its rows among its candidates: the stochastic greedy (each round evaluates
        ``ceil((C/M) * STOCHASTIC_GREEDY_FACTOR)`` random candidates, Mirzasoleiman et al. 2015) or the exact one.
    validation_release : {"gaussian", "mwem", "exact"}, default="gaussian"
        The mechanism of the validation release: the discrete Gaussian, the paper's h2 (MWEM) at the same
        ``(epsilon_v, delta_v)``, or ``"exact"``: the exact mean, NOT private for the consumer (no ledger).
    reveal : {"points", "hashes"}, default="points"
        ``"hashes"``: the aggregator receives only the h1 hashes of the rows it buys (labels, no raw row).
    dim : int, default=500
        h1's number of random features.
    hash_seed : int or str, default=0
        h1's public seed.
    """

    name: ClassVar[str] = "nominations"
    private: ClassVar[bool] = True

    purchase: Purchase = option(
        ByDirection(),
        help="how the aggregator gets rows",  # dpsumm.methods.option_declarations lists the registered purchases
        parse="purchase",
    )
    nominees: int | None = option(
        None, help="rows each owner nominates (default 2 x size)", constraint=Interval(int, 1, MAX_COUNT)
    )
    candidates: int | None = option(
        None,
        help="rows each owner samples for its herding (default 4 x nominees)",
        constraint=Interval(int, 1, MAX_COUNT),
    )
    temperature: float | None = option(
        None,
        help="the owners' tilt toward g~ (default: from the release's noise)",
        constraint=Interval(float, 0, None, "neither"),
    )
    choice: Literal["kernel", "hashes"] | None = option(
        None,
        help="the aggregator's greedy on the exact kernel or on the hashes (default: the purchase's)",
        constraint=OneOf(_CHOICES),
    )
    owner_greedy: Literal["stochastic", "exact"] = option(
        "stochastic", help="stochastic (default) or exact", constraint=OneOf(_OWNER_GREEDY)
    )
    validation_release: Literal["gaussian", "mwem", "exact"] = option(
        "gaussian",
        help="the consumer's release: gaussian (default), mwem, or exact (the consumer's exact hashed mean, no "
        "noise: NOT private for the consumer, for tests and non-private baselines; on Flower the consumer's node "
        "must allow it in its own node config, allow-exact-release=true)",
        constraint=OneOf(_RELEASES),
    )
    reveal: Literal["points", "hashes"] = reveal_option()
    dim: int = dim_option(DEFAULT_DIM)
    hash_seed: int | str = hash_seed_option()

    @classmethod
    def _legacy_options(cls, kwargs: dict[str, Any]) -> dict[str, Any]:
        """0.1's ``Nominations(purchase="labels", label_set=..., purchase_factor=..., sale_tilt_share=...)``: the
        purchase by name with its options on the method. Rewritten to the purchase object, with a
        DeprecationWarning; gone in the next release."""
        moved = {
            k: kwargs[k] for k in ("label_set", "purchase_factor", "sale_tilt_share", "tilt_rounds") if k in kwargs
        }
        name = kwargs.get("purchase")
        if not moved and not isinstance(name, str):
            return kwargs

        if name is not None and not isinstance(name, str):  # a purchase object (or not one) with 0.1's options
            raise InvalidParameterError(
                f"{sorted(moved)} are options of the purchase object: pass them to it, not to Nominations",
                sorted(moved)[0],
            )
        if name == "quotas" or "tilt_rounds" in moved:
            raise InvalidParameterError(
                "the quota purchase (purchase='quotas', tilt_rounds) was removed in 0.2: use "
                "purchase=dpsumm.ByLabel(label_set=...) with labels, else the default "
                "dpsumm.ByDirection()",
                "purchase",
            )
        if name in (None, "auto"):
            name = "labels" if "label_set" in moved else "nominees"
        classes: dict[str, type[Purchase]] = {"nominees": Nominees, "winners": Winners, "labels": ByLabel}
        if name not in classes:
            raise InvalidParameterError(
                f"`purchase` must be a purchase object (dpsumm.Nominees(), dpsumm.ByLabel("
                f"label_set=...), dpsumm.Winners()), got {name!r}",
                "purchase",
            )
        given = ", ".join([f"purchase={name!r}", *(f"{k}=..." for k in moved)])
        warnings.warn(
            f"Nominations({given}) is deprecated: pass "
            f"purchase=dpsumm.{classes[name].__name__}(...) with the purchase's options on it",
            DeprecationWarning,
            stacklevel=3,
        )
        rest = {k: v for k, v in kwargs.items() if k not in moved and k != "purchase"}
        return {**rest, "purchase": classes[name](**moved)}

    def _validate(self) -> None:
        super()._validate()
        if not isinstance(self.purchase, Purchase):
            raise InvalidParameterError(
                f"`purchase` must be a purchase object (dpsumm.Nominees(), dpsumm.ByLabel("
                f"label_set=...), dpsumm.Winners()), got {self.purchase!r}",
                "purchase",
            )
        if self.nominees is not None and self.candidates is not None and self.candidates < self.nominees:
            raise InvalidParameterError(
                f"`candidates` ({self.candidates}) must be >= `nominees` ({self.nominees})", "candidates"
            )
        if self.validation_release == "mwem":  # h2's floor(dim^1.5) steps of O(dim) each: the sampler's caps
            steps = int(math.floor(self.dim**1.5))
            if steps > MAX_MWEM_STEPS or steps * self.dim > MAX_MWEM_WORK:
                raise InvalidParameterError(
                    f"`dim` {self.dim} is too large for validation_release='mwem' (floor(dim^1.5) "
                    f"= {steps} steps of {self.dim} values each exceed the caps of "
                    f"{MAX_MWEM_STEPS} steps and {MAX_MWEM_WORK} values)",
                    "dim",
                )
        if self.choice == "kernel" and self.reveal != "points":
            raise InvalidParameterError("`choice='kernel'` scores raw rows: it needs reveal='points'", "choice")
        self.purchase.check_method(self)

    @property
    def resolved_choice(self) -> str:
        """``choice``, or its default for the purchase and reveal."""
        return self.choice if self.choice is not None else self.purchase.default_choice(self.reveal)

    @property
    def needs_labels(self) -> bool:
        """Whether a run needs the owners' and the consumer's labels: the purchase's, or a public label set it
        declares (``ByDirection(label_set=...)``)."""
        return self.purchase.needs_labels or self.purchase.public_labels() is not None

    def public_labels(self) -> tuple[Any, ...] | None:
        """The public label set of the run's purchase (None: it reads no labels)."""
        return self.purchase.public_labels()

    @property
    def needs_strata(self) -> bool:
        """Whether a run needs the owners' and the consumer's strata (the purchase declares levels)."""
        return self.purchase.public_levels() is not None

    def public_levels(self) -> tuple[tuple[Any, ...], ...] | None:
        """The declared strata levels of the run's purchase (None: it reads no strata)."""
        return self.purchase.public_levels()

    def check_party_data(self, data: PartyData, size: int) -> PartyData:
        """The purchase's check of the parties' labels and strata (:meth:`Purchase.check_party_data`)."""
        return self.purchase.check_party_data(self, data, size)

    @property
    def reads_seed_rows(self) -> bool:
        """Whether the purchase reads the public seed rows (:meth:`Purchase.uses_seed_rows`)."""
        return self.purchase.uses_seed_rows()

    def fit_advice(self) -> str:
        """The purchase's advice (:meth:`Purchase.fit_advice`)."""
        return self.purchase.fit_advice()

    def generated_seed_warning(self) -> str | None:
        if not self.purchase.uses_seed_rows():
            return None
        return (
            f"the {self.purchase.name!r} purchase keys its cells on public rows of the data's domain, and none were "
            "given: rows drawn uniformly in `feature_range` stand in, which do not look like anybody's data. "
            "Pass public rows as `seed_set`."
        )

    def budget(self, privacy: accounting.Budget | None, validation_rows: int | None = None) -> accounting.Budget | None:
        """The run's validation budget: ``privacy``, or the default (:func:`default_validation_budget` of
        ``validation_rows``); None for the exact (non-private) release."""
        if self.validation_release == "exact":
            return None
        return privacy if privacy is not None else default_validation_budget(validation_rows)

    @staticmethod
    def owner_budget(privacy: accounting.Budget | None) -> tuple[float, float]:
        """The owners' ``(epsilon, delta)`` for a purchase with owners' releases: ``privacy``'s, or the default.

        A budget is a cap: a purchase with no owners' release spends none of it (the ledger says what was spent).
        """
        if (
            privacy is not None
            and privacy.has_owners_budget
            and privacy.epsilon is not None
            and privacy.delta is not None
        ):
            return float(privacy.epsilon), float(privacy.delta)
        return OWNER_EPSILON, OWNER_DELTA

    def planned_spend(self, privacy: accounting.Budget | None, plan: Plan) -> dict[str, tuple[float, float]]:
        """The validation budget (:meth:`budget`), and the owners' (:meth:`owner_budget`) when the purchase's owners
        release."""
        out: dict[str, tuple[float, float]] = {}
        budget = self.budget(privacy, None)
        if budget is not None:
            out["consumer"] = (float(budget.validation_epsilon), float(budget.validation_delta))  # type: ignore[arg-type]
        if self.purchase.owner_release:
            eps_o, delta_o = self.owner_budget(privacy)
            out["owners"] = (float(eps_o), float(delta_o))
        return out

    def _plan(self, shape: RunShape) -> Plan:
        plan = super()._plan(shape)
        size, owners, owner_rows = shape.size, shape.owners, shape.owner_rows
        validation_rows, privacy = shape.validation_rows, shape.privacy
        if self.validation_release == "exact" and privacy is not None:
            raise InvalidParameterError(
                "`validation_release='exact'` releases D_v's mean without noise: no budget applies", "privacy"
            )
        budget = self.budget(privacy, validation_rows)
        if budget is not None and validation_rows is not None:  # delta_v >= 1/|D_v| would allow releasing a row
            budget.check_validation_size(validation_rows)
            self._check_release_calibration(budget, validation_rows)
        if self.purchase.uses_seed_rows() and plan.seed_rows == 0:  # the purchase reads public rows: draw them
            plan = Plan(seed_rows=MEDIAN_SAMPLE_ROWS, uses_seed=True, schedule=plan.schedule)
        elif self.purchase.uses_seed_rows():
            plan = Plan(seed_rows=plan.seed_rows, uses_seed=True, schedule=plan.schedule)
        eps_o, delta_o = self.owner_budget(privacy)
        self.purchase.check_plan(self, PurchaseShape(size, owners, owner_rows, validation_rows, budget, eps_o, delta_o))
        if not self.purchase.nominates:
            return plan
        M = self.resolved_nominees(size)
        if M * owners < size:
            raise InvalidParameterError(
                f"`nominees` ({M}) times the {owners} owners is below `size` ({size})", "nominees"
            )
        if self.candidates is not None and self.candidates < M:
            raise InvalidParameterError(f"`candidates` ({self.candidates}) must be >= `nominees` ({M})", "candidates")
        if owner_rows is not None:
            pool = sum(min(M, n) for n in owner_rows)
            if pool < size:
                raise InvalidParameterError(
                    f"the owners can nominate only {pool} rows (min(nominees, rows) each, nominees = {M}), fewer than "
                    f"`size` ({size}): raise `nominees` or lower `size`",
                    "nominees",
                )
        return plan

    def _check_release_calibration(self, budget: accounting.Budget, validation_rows: int) -> None:
        """Calibrate the consumer's hashed-mean release as the consumer will (public numbers only), so that a budget
        no sampler can meet is refused here, naming ``privacy``, before any party is asked anything."""
        if not self.purchase.nominates:
            return
        if self.validation_release != "gaussian" and self.temperature is not None:
            return
        assert budget.validation_epsilon is not None and budget.validation_delta is not None
        try:
            accounting.calibrate_gaussian(
                budget.validation_epsilon,
                budget.validation_delta,
                sensitivity=mean_release_sensitivity(validation_rows),
                dim=self.dim,
            )
        except InvalidParameterError as exc:
            raise InvalidParameterError(f"`privacy`: {exc}", "privacy") from exc

    def resolved_nominees(self, size: int) -> int:
        """``nominees``, or its default ``NOMINEES_PER_SIZE * size``."""
        return self.nominees if self.nominees is not None else NOMINEES_PER_SIZE * size

    def config(
        self,
        *,
        size: int,
        n_features: int,
        hasher: RFFHasher,
        privacy: accounting.Budget | None,
        validation_rows: int | None = None,
    ) -> NominationsConfig:
        """Every public number of a run (the defaults resolved); the protocol's messages carry them."""
        M = self.resolved_nominees(size)
        C = self.candidates if self.candidates is not None else DEFAULT_CANDIDATE_FACTOR * M
        budget = self.budget(privacy, validation_rows)
        eps_v = delta_v = 0.0
        if budget is not None:
            assert budget.validation_epsilon is not None and budget.validation_delta is not None
            eps_v, delta_v = budget.validation_epsilon, budget.validation_delta
        steps, step_eps, eta = 0, 0.0, 0.0
        if self.validation_release == "mwem":
            steps, eta = int(math.floor(hasher.dim**1.5)), 1.0 / hasher.dim
            step_eps = accounting.calibrate_mwem_steps(eps_v, delta_v, steps)
        factor = STOCHASTIC_GREEDY_FACTOR if self.owner_greedy == "stochastic" else None
        eps_o, delta_o = self.owner_budget(privacy) if self.purchase.owner_release else (0.0, 0.0)
        return NominationsConfig(
            n_features=n_features,
            dim=hasher.dim,
            gamma=hasher.gamma,
            hash_seed=hasher.seed,
            reveal=self.reveal,
            commit=self.purchase.commitment(self.reveal, self.resolved_choice),
            nominees=M,
            candidates=C,
            temperature=self.temperature,
            release=self.validation_release,
            choice=self.resolved_choice,
            epsilon=eps_v,
            delta=delta_v,
            mwem_steps=steps,
            mwem_step_epsilon=step_eps,
            eta=eta,
            greedy_sample_factor=factor,
            owner_epsilon=eps_o,
            owner_delta=delta_o,
        )

    def run(self, setup: RunSetup) -> SummaryResult:
        assert setup.transport is not None
        config = self.config(
            size=setup.size,
            n_features=setup.n_features,
            hasher=setup.hasher,
            privacy=setup.privacy,
            validation_rows=setup.validation_rows,
        )
        result = run_nominations(self.purchase, config, setup)
        _log.info(
            "nominations (%s): temperature %.4g, sigma %.4g, choice on %s; timings %s",
            self.purchase.name,
            result.extra["temperature"],
            result.extra["sigma"],
            config.choice,
            result.extra["timings"],
        )
        return result


def _winners_rows(
    agg: Aggregator, pool: Any, winners: list[Any], config: NominationsConfig, with_labels: bool | None
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray | None]:
    """The winners' rows (with ``reveal="points"``), h1 hashes and labels (when any owner sent labels, or as
    ``with_labels`` says), in the order they were chosen."""
    offered = pool.offered
    pts = None
    if config.reveal == "points":
        pts = (
            np.stack([np.asarray(pool.rows[o])[pos] for o, pos, _ in winners])
            if winners
            else np.zeros((0, config.n_features))
        )
    if agg.commit == "digests":  # the rows were verified against their digests: their h1 is the nominated one
        assert pts is not None
        hashes = agg.hasher.transform(pts) if winners else np.zeros((0, config.dim), np.float32)
    else:
        hashes = (
            np.stack([offered[o][1][pos] for o, pos, _ in winners]).astype(np.float32)
            if winners
            else np.zeros((0, config.dim), np.float32)
        )
    if with_labels is None:
        with_labels = any(pool.labels.get(o) is not None for o, _, _ in winners)
    labs = np.array([np.asarray(pool.labels[o])[pos] for o, pos, _ in winners]) if with_labels and winners else None
    return pts, hashes, labs


def _access(agg: Aggregator, config: NominationsConfig) -> Access:
    """What the aggregator saw of each party in a nominations run: the rows bought, the hashes, the validation rows."""
    access = Access(
        int(sum(agg.accessed.values())),
        dict(agg.accessed),
        hashes=int(sum(agg.hashes_seen.values())),
        hashes_per_owner=dict(agg.hashes_seen),
        validation_rows=agg.validation_rows,
        validation_raw_rows=agg.validation_rows if config.choice == "kernel" else 0,
        # Every row bought is hashed at the aggregator (it holds the row); the nominees' hashes reach it without
        # the rows. The rows bought are among the nominees, or the nominees among the rows bought: the larger count.
        hashed_rows=int(sum(max(agg.hashes_seen[o], agg.accessed[o]) for o in agg.owners)),
        hashed_rows_per_owner={o: max(agg.hashes_seen[o], agg.accessed[o]) for o in agg.owners},
    )
    return access


def run_nominations(
    purchase: Purchase, config: NominationsConfig, setup: RunSetup, *, method: str = "nominations"
) -> SummaryResult:
    """Run the nominations protocol with ``purchase`` through ``setup.transport`` and assemble the
    :class:`SummaryResult` and ledger.

    The one place that turns a nominations run into a result, for :func:`dpsumm.summarize` (in-process
    parties) and for ``dpsumm.flower`` (parties on Flower nodes). ``setup.with_labels=None`` keeps labels when
    any row chosen came with one.
    """
    assert setup.transport is not None
    size = setup.size
    private = config.release != "exact"
    ledger = accounting.Ledger() if private else None
    if ledger is not None:
        ledger.set_deltas(validation=config.delta, owners=config.owner_delta if purchase.owner_release else None)
        if setup.seeded:
            ledger.mark_seeded()

    def record(party: str, event: Any, label: str) -> None:
        if ledger is not None:
            ledger.record(party, event, label=label)  # type: ignore[arg-type]

    agg = Aggregator(setup.transport, setup.owners, setup.consumer, config, setup.rng, record)
    agg.seed_rows = setup.seed
    agg.public_rows = dict(setup.public_rows or {})
    agg.with_labels = setup.with_labels
    pool = purchase.buy(agg, int(size))
    t1 = time.perf_counter()
    choice = purchase.choose(agg, int(size), pool)
    agg.timings["choice"] = time.perf_counter() - t1
    winners = choice.winners
    if len(winners) < size:
        offers = sum(len(v[0]) for v in pool.offered.values())
        reason = f"the pool holds {offers} usable offers, fewer than size {size}"
        agg.events.append({"phase": "choice", "event": "short", "reason": reason})
    if ledger is not None and purchase.uncertified is not None:
        ledger.record_uncertified(
            "owners", label=f"the {type(purchase).__name__} purchase's request", reason=purchase.uncertified
        )
    pts, hashes, labs = _winners_rows(agg, pool, winners, config, setup.with_labels)
    extra = dict(setup.extra)
    extra.update(
        choice=config.choice,
        greedy_sample_factor=config.greedy_sample_factor,
        temperature=agg.temperature,
        sigma=agg.sigma,
        count_scale=float("nan"),
        nominees=config.nominees,
        candidates=config.candidates,
        release=config.release,
        purchase=purchase.name,
        quotas={},
        owner_epsilon=config.owner_epsilon if purchase.owner_release else 0.0,
        owner_delta=config.owner_delta if purchase.owner_release else None,
        label_quotas={},
        label_cells=None,
        timings=dict(agg.timings),
        exchanges=agg.exchanges,
    )
    extra.update(pool.report)
    if pts is not None and len(pts) and agg.validation is not None and len(agg.validation) >= 2:  # it holds D_v
        extra["validation_fit"] = validation_fit(pts, agg.validation, agg.hasher.gamma)
    return agg.summary_result(
        [(o, int(pool.offered[o][0][pos])) for o, pos, _ in winners],
        choice.values,
        (pts, hashes, labs),
        accessed=_access(agg, config),
        privacy=ledger,
        method=method,
        started=setup.started,
        extra=extra,
    )
