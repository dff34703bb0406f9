"""The paper's schedules: Section 4 (:func:`paper_schedule`), Theorem 2 (:func:`theorem2_schedule`),
and their events and cost before a run (:func:`schedule_events`, :func:`account`)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from .._validation import bounded_int, positive_float, positive_int
from ..errors import InvalidParameterError
from ._checks import MAX_COUNT, MAX_SIZE, _delta, _dim, _epsilon, _flag, _nonneg_float, _set, _size
from .events import AuctionEvent, Event, mwem_step_events
from .ledger import Ledger


@dataclass(frozen=True)
class Schedule:
    """Every privacy-relevant parameter of one protocol run (Alg. 3 inputs plus h2's T and η).

    ``epsilon_epoch_step[l - 1]`` is the per-step ε of epoch l (l = 1..size); epoch 1 runs
    ``t_init`` steps on the seed set only (public, free) and epochs l > 1 run ``t_subs`` steps.
    The validation set's release runs ``t_init`` steps at ``epsilon_validation_step``.
    """

    name: str
    size: int
    owners: int
    dim: int
    gamma: float
    t_init: int
    t_subs: int
    epsilon_validation_step: float
    epsilon_first_epoch_step: float
    epsilon_epoch_step: tuple[float, ...]
    epsilon_auction: float
    tau: int
    eta: float
    seed_set_size: int

    def __post_init__(self) -> None:
        _set(self, "size", _size(self.size))
        _set(self, "owners", bounded_int(self.owners, "owners", 1, MAX_SIZE))
        _set(self, "dim", positive_int(self.dim, "dim"))
        _set(self, "gamma", positive_float(self.gamma, "gamma"))
        # Step counts within what an event records (a diagnostic may take per-step epsilons beyond an event's:
        # broadcast_error's noise-free limit; accounting such a schedule names it, see schedule_events).
        _set(self, "t_init", bounded_int(self.t_init, "t_init", 1, MAX_COUNT))
        _set(self, "t_subs", bounded_int(self.t_subs, "t_subs", 1, MAX_COUNT))
        _set(self, "epsilon_validation_step", positive_float(self.epsilon_validation_step, "epsilon_validation_step"))
        _set(
            self, "epsilon_first_epoch_step", positive_float(self.epsilon_first_epoch_step, "epsilon_first_epoch_step")
        )
        steps = self.epsilon_epoch_step
        if isinstance(steps, (str, bytes)) or not isinstance(steps, (tuple, list, np.ndarray)):
            raise InvalidParameterError(
                f"`epsilon_epoch_step` must be a sequence of one epsilon per epoch, got {type(steps).__name__}",
                "epsilon_epoch_step",
            )
        eps = tuple(positive_float(e, "epsilon_epoch_step") for e in steps)
        if len(eps) != self.size:
            raise InvalidParameterError(
                f"`epsilon_epoch_step` must have one entry per epoch ({self.size}), got {len(eps)}",
                "epsilon_epoch_step",
            )
        _set(self, "epsilon_epoch_step", eps)
        _set(self, "epsilon_auction", _nonneg_float(self.epsilon_auction, "epsilon_auction"))
        _set(self, "tau", positive_int(self.tau, "tau"))
        _set(self, "eta", positive_float(self.eta, "eta"))
        _set(self, "seed_set_size", bounded_int(self.seed_set_size, "seed_set_size", 1, MAX_SEED_SET_SIZE))

    def steps(self, epoch: int) -> int:
        """MWEM steps of epoch ``epoch`` (1-based)."""
        return self.t_init if epoch == 1 else self.t_subs

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["epsilon_epoch_step"] = list(self.epsilon_epoch_step)
        return d

    def describe(self) -> str:
        """A plain-text listing of the parameters."""
        e = self.epsilon_epoch_step
        later = "-" if self.size < 2 else (f"{e[1]:.4g}" if len(set(e[1:])) == 1 else f"{e[1]:.4g} .. {e[-1]:.4g}")
        return "\n".join(
            [
                f"schedule {self.name}: p = {self.size} points, K = {self.owners} owners, d = {self.dim}",
                f"  gamma = {self.gamma:g}, eta = {self.eta:.4g}, |D_init| = {self.seed_set_size}",
                f"  validation: {self.t_init} MWEM steps at eps = {self.epsilon_validation_step:.4g} per step",
                f"  epoch 1 (seed set, public): {self.t_init} steps at eps = {self.epsilon_first_epoch_step:.4g}",
                f"  epochs 2..{self.size}: {self.t_subs} steps at eps = {later} per step",
                f"  auction: eps_auc = {self.epsilon_auction:.4g}, tau = {self.tau}",
            ]
        )


def _theorem6_auction(epsilon: float, delta: float, owners: int) -> tuple[float, int]:
    """Theorem 6 defaults: ``ε_auc = ε / (3 sqrt(2 ln(1/δ))) K^(-1/3)``, ``τ = ceil(K^(2/3))``."""
    eps_auc = epsilon / (3.0 * math.sqrt(2.0 * math.log(1.0 / delta))) * owners ** (-1.0 / 3.0)
    tau = max(1, math.ceil(owners ** (2.0 / 3.0) - 1e-12))
    return eps_auc, tau


def paper_schedule(
    size: int,
    owners: int,
    dim: int = 140,
    *,
    seed_set_size: int = 150,
    epsilon_auction: float | Literal["theorem6"] = 0.0,
    tau: int | None = None,
) -> Schedule:
    """Section 4's parameters ("Experimental Evaluation").

    γ = 0.1, d = 140, T_init = floor(d^1.5) = 1656, T_subs = 5, ε_v = 0.01 per step (validation,
    once), ε = 0.05 per step in epoch 1 (seed set only: public, free), ε_l = 0.01 / sqrt(p T_subs)
    for l > 1, |D_init| ≈ 150, η = 1/d (Theorem 2: η ≤ 1/d; Section 4 does not say).

    Section 4 does not give ε_auc or τ. The default ``epsilon_auction=0.0`` asks every owner every round,
    the only certified auction (see :class:`AuctionEvent`); ``epsilon_auction="theorem6"`` (explicitly)
    gives Theorem 6's ``ε_auc = ε/(3 sqrt(2 ln(1/δ))) K^(-1/3)`` at the summary's reported
    (ε, δ) = (0.043, 1e-4), the paper's PrivAuction, which is NOT certified. ``τ = ceil(K^(2/3))``.
    """
    p = _size(size)
    k = bounded_int(owners, "owners", 1, MAX_SIZE)  # (10**400: K^(-1/3) would overflow)
    d = _dim(dim)
    t_init = int(math.floor(d**1.5))
    t_subs = 5
    later = 0.01 / math.sqrt(p * t_subs)
    theorem6_eps, tau_ = _theorem6_auction(0.043, 1e-4, k)
    if isinstance(epsilon_auction, str):
        if epsilon_auction != "theorem6":
            raise InvalidParameterError(
                f"`epsilon_auction` must be a number >= 0 or 'theorem6', got {epsilon_auction!r}", "epsilon_auction"
            )
        eps_auc = theorem6_eps
    else:
        eps_auc = _nonneg_float(epsilon_auction, "epsilon_auction")
    if tau is not None:
        tau_ = positive_int(tau, "tau")
    return Schedule(
        name="paper",
        size=p,
        owners=k,
        dim=d,
        gamma=0.1,
        t_init=t_init,
        t_subs=t_subs,
        epsilon_validation_step=0.01,
        epsilon_first_epoch_step=0.05,
        epsilon_epoch_step=(0.05,) + (later,) * (p - 1),
        epsilon_auction=eps_auc,
        tau=tau_,
        eta=1.0 / d,
        seed_set_size=positive_int(seed_set_size, "seed_set_size"),
    )


#: Largest public seed set a schedule may ask for (Theorem 2's grows as d² ln²d ln⁵p).
MAX_SEED_SET_SIZE = 10**8


def theorem2_schedule(epsilon: float, delta: float, size: int, owners: int, dim: int = 140) -> Schedule:
    """Theorem 2's calibration (with Theorem 6's auction defaults).

    T = d² in every epoch, η = 1/d, ε_v = ε/(16T), ε_{l,T} = ε / sqrt(16 T l ln(1/δ) ln p),
    |D_init| = ceil(121·8 d² ln²d ln(1/δ) ln⁵p), ε_auc = ε/(3 sqrt(2 ln(1/δ))) K^(-1/3),
    τ = ceil(K^(2/3)); γ = 0.1 (Theorem 2 does not fix it). Logarithms are natural. Needs p ≥ 2
    (ln p = 0 otherwise). Raises :class:`InvalidParameterError` (``argument="dim"``) when the seed set
    would exceed :data:`MAX_SEED_SET_SIZE` rows, as it does for every practical ``d`` and ``p``.

    Theorem 6 states ε_v = ε/sqrt(16T) and its proof uses ε_{l,T} = ε / sqrt(36 T l ln(1/δ) ln p);
    we follow Theorem 2 as printed in the main text. Whether the result is really (ε, δ)-DP is
    for :func:`account` to say, not this function.
    """
    eps = _epsilon(epsilon, "epsilon", target=True)
    dlt = _delta(delta)
    p = _size(size)
    if p < 2:
        raise InvalidParameterError("`size` must be >= 2 for Theorem 2 (it divides by ln p)", "size")
    k = bounded_int(owners, "owners", 1, MAX_SIZE)
    d = _dim(dim)
    t = d * d
    lnp = math.log(p)
    per_epoch = tuple(eps / math.sqrt(16.0 * t * l * math.log(1.0 / dlt) * lnp) for l in range(1, p + 1))
    eps_auc, tau = _theorem6_auction(eps, dlt, k)
    seed_f = 121 * 8 * d * d * math.log(d) ** 2 * math.log(1.0 / dlt) * lnp**5
    if seed_f > MAX_SEED_SET_SIZE:
        raise InvalidParameterError(
            f"Theorem 2 asks for a public seed set of {seed_f:.3g} rows at dim={d}, size={p}, delta={dlt:g}, more than "
            f"the {MAX_SEED_SET_SIZE:.0e} a run can hold (and its accounting would not finish): lower `dim` or `size`",
            "dim",
        )
    seed = math.ceil(seed_f)
    return Schedule(
        name="theorem2",
        size=p,
        owners=k,
        dim=d,
        gamma=0.1,
        t_init=t,
        t_subs=t,
        epsilon_validation_step=eps / (16.0 * t),
        epsilon_first_epoch_step=per_epoch[0],
        epsilon_epoch_step=per_epoch,
        epsilon_auction=eps_auc,
        tau=tau,
        eta=1.0 / d,
        seed_set_size=max(1, seed),
    )


def schedule_events(schedule: Schedule, size: int | None = None, owners: int | None = None) -> list[tuple[str, Event]]:
    """The (party, event) records a run of ``schedule`` will make, in protocol order.

    * validation: ``t_init`` MWEM steps at ``epsilon_validation_step`` (Alg. 3 line 3);
    * epoch 1: ``t_init`` steps on the seed set only - public, recorded with ``public=True``;
    * epoch l = 2..p: ``t_subs`` steps at ``epsilon_epoch_step[l-1]`` on the summary;
    * each epoch's auction round (p rounds).

    MWEM steps use Δ = 2 under replace-one (DESIGN §3.5); the auction is add-remove (Theorem 6).
    """
    if not isinstance(schedule, Schedule):
        raise InvalidParameterError("`schedule` must be a Schedule", "schedule")
    if size is not None and positive_int(size, "size") != schedule.size:
        raise InvalidParameterError(f"`size` {size} does not match the schedule's {schedule.size}", "size")
    if owners is not None and positive_int(owners, "owners") != schedule.owners:
        raise InvalidParameterError(f"`owners` {owners} does not match the schedule's {schedule.owners}", "owners")
    try:
        return _events(schedule)
    except InvalidParameterError as exc:  # a per-step epsilon or count no event takes: the schedule's value
        raise InvalidParameterError(f"`schedule` cannot be accounted: {exc}", "schedule") from exc


def _events(schedule: Schedule) -> list[tuple[str, Event]]:
    out: list[tuple[str, Event]] = []
    for e in mwem_step_events(schedule.epsilon_validation_step, schedule.t_init):
        out.append(("validation", e))
    for e in mwem_step_events(schedule.epsilon_epoch_step[0], schedule.t_init, public=True):
        out.append(("owners", e))
    # group epochs with equal ε into one record per mechanism kind
    runs: dict[float, int] = {}
    for l in range(2, schedule.size + 1):
        eps = schedule.epsilon_epoch_step[l - 1]
        runs[eps] = runs.get(eps, 0) + schedule.t_subs
    for eps, steps in runs.items():
        for e in mwem_step_events(eps, steps):
            out.append(("owners", e))
    out.append(("owners", AuctionEvent(schedule.epsilon_auction, schedule.tau, schedule.owners, count=schedule.size)))
    return out


def schedule_ledger(schedule: Schedule) -> Ledger:
    """A :class:`Ledger` pre-filled with :func:`schedule_events`."""
    led = Ledger()
    for party, ev in schedule_events(schedule):
        label = "auction" if isinstance(ev, AuctionEvent) else ("h2(D_v)" if party == "validation" else "h2(D_s)")
        led.record(party, ev, label=label)  # type: ignore[arg-type]
    return led


def account(
    schedule: Schedule,
    size: int | None = None,
    owners: int | None = None,
    delta: float = 1e-4,
    validation_delta: float = 0.01,
    *,
    include_auction: bool = True,
) -> dict[str, dict[str, float]]:
    """ε of a schedule before running it: ``{"owners": {...}, "validation": {...}}`` by accountant."""
    schedule_events(schedule, size, owners)  # validates size / owners
    return schedule_ledger(schedule).totals(
        _delta(delta, "delta"),
        _delta(validation_delta, "validation_delta"),
        include_auction=_flag(include_auction, "include_auction"),
    )
