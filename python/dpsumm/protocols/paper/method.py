"""The paper's methods as objects (Sarpatwar et al. 2019): :class:`PaperProtocol` (Alg. 3, private) and
:class:`PaperGreedy` (its non-private greedy baseline), their options and plan; both run the aggregator of
:mod:`dpsumm.protocols.paper.aggregator`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from ... import accounting
from ..._validation import Interval, real_number
from ...errors import InvalidParameterError
from ...privacy import MAX_MWEM_STEPS, MAX_MWEM_WORK
from ...results import SummaryResult
from ..base import (
    MAX_COUNT,
    Plan,
    RunSetup,
    RunShape,
    SummaryMethod,
    dim_option,
    hash_seed_option,
    option,
    reveal_option,
)
from .aggregator import make_config, run_protocol

__all__ = ["PaperProtocol", "PaperGreedy", "PAPER_DIM"]

#: h1's dimension for the paper's methods: the paper's d = 140 (h2's grid has d^1.5 MWEM steps).
PAPER_DIM = 140


@dataclass(frozen=True, repr=False)
class _PaperMethod(SummaryMethod):
    """Options and planning shared by the paper's private protocol and its greedy baseline."""

    schedule: accounting.Schedule | Literal["paper"] = "paper"
    t_init: int | None = option(
        None, help="override the schedule's MWEM steps in the first epoch", constraint=Interval(int, 1, MAX_COUNT)
    )
    t_subs: int | None = option(
        None, help="override the schedule's MWEM steps in later epochs", constraint=Interval(int, 1, MAX_COUNT)
    )
    reveal: Literal["points", "hashes"] = reveal_option()
    dim: int = dim_option(PAPER_DIM)
    hash_seed: int | str = hash_seed_option()

    def _validate(self) -> None:
        super()._validate()
        if not (
            isinstance(self.schedule, accounting.Schedule)
            or (isinstance(self.schedule, str) and self.schedule == "paper")
        ):
            raise InvalidParameterError(
                f"`schedule` must be 'paper' or a dpsumm.accounting.Schedule, got {self.schedule!r}", "schedule"
            )
        if isinstance(self.schedule, accounting.Schedule) and self.schedule.dim != self.dim:
            raise InvalidParameterError(
                f"`schedule` was made for dim {self.schedule.dim}, the method has dim {self.dim}", "schedule"
            )

    def _epsilon_auction(self) -> float | Literal["theorem6"]:
        return 0.0

    def _schedule(self, size: int, owners: int, privacy: accounting.Budget | None) -> accounting.Schedule:
        if privacy is not None:
            if isinstance(self.schedule, accounting.Schedule):
                raise InvalidParameterError(
                    "give `privacy` (a budget to calibrate to) or a `schedule`, not both", "schedule"
                )
            if self.t_init is not None or self.t_subs is not None:
                raise InvalidParameterError(
                    "`t_init`/`t_subs` override the paper's schedule; a budget calibrates its "
                    "own: give one or the other",
                    "t_init",
                )
            if not privacy.has_owners_budget:
                raise InvalidParameterError(
                    f"method {self.name!r} releases the owners' hashes every round: `privacy` needs the owners' "
                    "epsilon and delta too (Budget(epsilon, delta, validation_epsilon, validation_delta))",
                    "privacy",
                )
            return accounting.calibrate(privacy, size, owners, self.dim, epsilon_auction=self._epsilon_auction())  # type: ignore[arg-type]
        if isinstance(self.schedule, accounting.Schedule):
            sched = self.schedule
            if sched.size < size:
                raise InvalidParameterError(
                    f"`schedule` was made for size {sched.size}; this run has size {size}", "schedule"
                )
        else:
            sched = accounting.paper_schedule(size, owners, self.dim, epsilon_auction=self._epsilon_auction())
        changes: dict[str, Any] = {k: v for k, v in (("t_init", self.t_init), ("t_subs", self.t_subs)) if v is not None}
        return dataclasses.replace(sched, **changes) if changes else sched

    @property
    def reads_seed_rows(self) -> bool:
        """The seed rows are the paper's ``D_init``."""
        return True

    def planned_spend(self, privacy: accounting.Budget | None, plan: Plan) -> dict[str, tuple[float, float]]:
        """The consumer's: h2's ``t_init`` steps on D_v (the owners' auction spends nothing at the default)."""
        if plan.schedule is None:
            return {}
        return {"consumer": (plan.schedule.t_init * plan.schedule.epsilon_validation_step, 0.0)}

    def _plan(self, shape: RunShape) -> Plan:
        super()._plan(shape)
        size, owners, validation_rows, privacy = shape.size, shape.owners, shape.validation_rows, shape.privacy
        if privacy is not None and validation_rows is not None:  # delta_v >= 1/|D_v| would allow releasing a row
            privacy.check_validation_size(validation_rows)
        sched = self._schedule(size, owners, privacy)
        if self.private:  # every epoch's h2 release runs t MWEM steps of O(dim) each: the sampler's caps
            for name in ("t_init", "t_subs"):
                t = int(getattr(sched, name))
                if t > MAX_MWEM_STEPS or t * self.dim > MAX_MWEM_WORK:
                    blame = (
                        name if getattr(self, name) is not None else ("privacy" if privacy is not None else "schedule")
                    )
                    raise InvalidParameterError(
                        f"`{blame}`: {name} = {t} MWEM steps of {self.dim} values each exceed the caps of "
                        f"{MAX_MWEM_STEPS} steps and {MAX_MWEM_WORK} values per release",
                        blame,
                    )
        return Plan(seed_rows=sched.seed_set_size, uses_seed=True, schedule=sched)

    def run(self, setup: RunSetup) -> SummaryResult:
        sched = setup.plan.schedule
        assert sched is not None and setup.transport is not None
        if setup.seed.shape[0] == 0:
            raise InvalidParameterError(
                f"method {self.name!r} needs a non-empty seed set (h2 of an empty set is undefined)", "seed_set"
            )
        config = make_config(
            sched,
            n_features=setup.n_features,
            dim=setup.hasher.dim,
            gamma=setup.hasher.gamma,
            hash_seed=setup.hasher.seed,
            reveal=self.reveal,
            private=self.private,
        )
        result = run_protocol(config, setup, method=self.name)
        if result.privacy is not None:
            if setup.seeded:
                result.privacy.mark_seeded()
            if setup.privacy is not None:  # a Budget: report at its deltas by default
                result.privacy.set_deltas(**setup.privacy.ledger_deltas())
        return result


@dataclass(frozen=True, repr=False)
class PaperProtocol(_PaperMethod):
    """Sarpatwar et al. (2019), Alg. 3, reproduced: h2 releases every epoch and the auction (docs/explanation/paper.md).

    Private, but no better than uniform sampling at any useful epsilon (README, "Reproducing the paper"). With
    ``privacy`` (a :class:`dpsumm.Budget` with the owners' and the validation pair) the per-step parameters are
    calibrated to it; otherwise the paper's schedule (Section 4) runs.

    Parameters
    ----------
    schedule : "paper" or dpsumm.accounting.Schedule, default="paper"
        The privacy schedule when ``privacy`` is None.
    epsilon_auction : float or "theorem6", default=0.0
        PrivAuction's epsilon. 0 asks every owner every round (certified). A positive number, or ``"theorem6"``
        (the value of the paper's Theorem 6), runs the paper's randomized auction, which is NOT certified (see
        :class:`dpsumm.accounting.AuctionEvent`).
    t_init, t_subs : int, optional
        Override the schedule's MWEM steps in the first and in later epochs.
    reveal : {"points", "hashes"}, default="points"
        ``"hashes"``: the aggregator receives only ``h1(x)`` of collected rows (paper App. F).
    dim : int, default=140
        h1's number of random features (the paper's).
    hash_seed : int or str, default=0
        h1's public seed.
    """

    name: ClassVar[str] = "paper"
    private: ClassVar[bool] = True

    epsilon_auction: float | Literal["theorem6"] = option(
        0.0,
        help="PrivAuction's epsilon (default 0: ask every owner, certified; > 0 or 'theorem6': the paper's "
        "uncertified auction)",
        parse="epsilon_auction",
    )

    def _validate(self) -> None:
        super()._validate()
        e = self.epsilon_auction
        if isinstance(e, str):
            if e != "theorem6":
                raise InvalidParameterError(
                    f"`epsilon_auction` must be a number >= 0 or 'theorem6', got {e!r}", "epsilon_auction"
                )
        else:
            v = real_number(e, "epsilon_auction")
            if not math.isfinite(v) or v < 0:
                raise InvalidParameterError(
                    f"`epsilon_auction` must be a finite number >= 0 or 'theorem6', got {e!r}", "epsilon_auction"
                )
            object.__setattr__(self, "epsilon_auction", v)
        if isinstance(self.schedule, accounting.Schedule) and not (isinstance(e, float) and e == 0.0):
            raise InvalidParameterError(
                "`epsilon_auction` applies to the paper's schedule; a `schedule` object carries its own",
                "epsilon_auction",
            )

    def _epsilon_auction(self) -> float | Literal["theorem6"]:
        return self.epsilon_auction


@dataclass(frozen=True, repr=False)
class PaperGreedy(_PaperMethod):
    """The paper's non-private greedy baseline: exact hashed means, the best bid wins each round, the public seed
    rows inside the summary while it runs (removed from the result). The schedule sets only the seed set's size.

    Parameters
    ----------
    schedule : "paper" or dpsumm.accounting.Schedule, default="paper"
    t_init, t_subs : int, optional
    reveal : {"points", "hashes"}, default="points"
    dim : int, default=140
    hash_seed : int or str, default=0
    """

    name: ClassVar[str] = "paper-greedy"
    private: ClassVar[bool] = False
