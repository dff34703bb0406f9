"""Accountants: ``(events, delta) -> epsilon`` for the adaptive composition of events
(:func:`basic`, :func:`advanced`, :func:`kov`, :func:`tight`)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

from .._validation import choice_of
from ..errors import InvalidParameterError
from ._bounds import _gaussian_part_epsilon, _kov_from_groups
from ._checks import AccountantName, _delta
from .events import AuctionEvent, Event, GaussianEvent, LaplaceEvent, _check_events, _private


def _sound(fn: Callable[[Sequence[Event], float], float]) -> Callable[[Sequence[Event], float], float]:
    """``fn``, with a floating-point overflow, a division by zero or a NaN read as ``math.inf`` (no finite
    guarantee: still a valid upper bound, never a smaller ε than the truth)."""

    @functools.wraps(fn)
    def wrapped(events: Sequence[Event], delta: float) -> float:
        try:
            eps = fn(events, delta)
        except (OverflowError, ZeroDivisionError, FloatingPointError):
            return math.inf
        return math.inf if math.isnan(eps) else eps

    return wrapped


def _accountant_name(value: object, name: str = "accountant") -> str:
    return choice_of(value, name, tuple(ACCOUNTANTS))


def _check_relations(events: Sequence[Event]) -> None:
    rels = {e.neighbour for e in events}
    if len(rels) > 1:
        raise InvalidParameterError(
            "`events` mix neighbour relations "
            f"({', '.join(sorted(rels))}); a composed ε is only meaningful under one relation - "
            "convert the events first (a replace-one is an add plus a remove)",
            "events",
        )


def _groups(events: Sequence[Event]) -> list[tuple[float, int]]:
    """(ε, multiplicity) of every pure ε-DP mechanism in the private events (Gaussians skipped)."""
    acc: dict[float, int] = {}
    for e in events:
        if isinstance(e, GaussianEvent):
            continue
        acc[e.epsilon] = acc.get(e.epsilon, 0) + e.count
    return sorted(acc.items())


def _split(events: Sequence[Event]) -> tuple[list[Event], list[GaussianEvent]]:
    """(pure ε-DP events, Gaussian events)."""
    pure: list[Event] = [e for e in events if not isinstance(e, GaussianEvent)]
    gauss = [e for e in events if isinstance(e, GaussianEvent)]
    return pure, gauss


def _mixed(pure_fn: Callable[[list[Event], float], float], events: list[Event], delta: float) -> float:
    """A pure-ε accountant extended to Gaussian records by basic composition of (ε, δ) pairs.

    Pure events only: ``pure_fn`` at δ. Gaussians only: their own ε at δ. Both: the pure part at δ/2
    plus the Gaussian part at δ/2 (the composition of an (ε₁, δ/2)-DP and an (ε₂, δ/2)-DP
    mechanism is (ε₁ + ε₂, δ)-DP).
    """
    pure, gauss = _split(events)
    gauss = [g for g in gauss if not g.public]
    if not gauss:
        return pure_fn(pure, delta)
    if not _groups(pure):
        return _gaussian_part_epsilon(gauss, delta)
    return pure_fn(pure, delta / 2.0) + _gaussian_part_epsilon(gauss, delta / 2.0)


def _uncertified(events: Sequence[Event]) -> bool:
    return any(isinstance(e, AuctionEvent) for e in events)  # free auctions were dropped already


@_sound
def basic(events: Sequence[Event], delta: float) -> float:
    """Basic composition: ``ε = Σ_ℓ ε_ℓ`` (Dwork & Roth 2014, Thm 3.14; the first term of Thm 7).

    Holds for every δ (it is pure DP). :class:`GaussianEvent` records are added with their own ε at the
    whole ``delta`` (basic composition of (ε, δ) pairs; the pure part has δ = 0).
    """
    d = _delta(delta)
    evs = _private(_check_events(events))
    if _uncertified(evs):
        return math.inf
    _check_relations(evs)
    pure, gauss = _split(evs)
    # The pure part is (Σε, 0)-DP: the Gaussian part takes all of δ.
    return float(math.fsum(eps * k for eps, k in _groups(pure))) + _gaussian_part_epsilon(gauss, d)


@_sound
def advanced(events: Sequence[Event], delta: float) -> float:
    """Advanced composition (Dwork, Rothblum & Vadhan 2010), heterogeneous form.

    ``ε = sqrt(2 ln(1/δ) Σ_ℓ ε_ℓ²) + Σ_ℓ ε_ℓ (e^{ε_ℓ} - 1)`` for pure ε_ℓ-DP mechanisms; with equal
    ε_ℓ = ε this is the primer's ``sqrt(2K ln(1/δ')) ε + K ε (e^ε - 1)`` (bellet2021 slides,
    "Advanced composition"). It dominates the second expression of Theorem 7 term by term, so it
    is a valid bound. With :class:`GaussianEvent` records present the pure part is taken at δ/2 and
    the Gaussian part at δ/2 (see ``_mixed``).
    """
    d = _delta(delta)
    evs = _private(_check_events(events))
    if _uncertified(evs):
        return math.inf
    _check_relations(evs)
    return _mixed(_advanced_pure, evs, d)


def _advanced_pure(evs: list[Event], d: float) -> float:
    g = _groups(evs)
    if not g:
        return 0.0
    s2 = math.fsum(k * eps * eps for eps, k in g)
    lin = math.fsum(k * eps * math.expm1(eps) for eps, k in g)
    return float(math.sqrt(2.0 * math.log(1.0 / d) * s2) + lin)


@_sound
def kov(events: Sequence[Event], delta: float) -> float:
    """Theorem 7 of the appendix (Kairouz, Oh & Viswanath 2017, Theorem 3.5), exactly as printed.

    For pure ε_ℓ-DP mechanisms the k-fold adaptive composition is (ε̃, δ)-DP with ::

        ε̃ = min{ Σ ε_ℓ,
                 Σ (e^{ε_ℓ}-1) ε_ℓ / (e^{ε_ℓ}+1) + sqrt( Σ 2 ε_ℓ² ln(1/δ) ),
                 Σ (e^{ε_ℓ}-1) ε_ℓ / (e^{ε_ℓ}+1) + sqrt( Σ 2 ε_ℓ² ln(e + sqrt(Σ 2 ε_ℓ²) / δ) ) }.

    The appendix writes ``sqrt(Σ 2 ε_ℓ²)`` inside the last logarithm where Kairouz et al. have
    ``sqrt(Σ ε_ℓ²)``; the printed term is larger, so the printed bound is still valid (slightly
    looser) and is what we implement. The appendix restricts δ ≤ 1/e; Kairouz et al. allow
    δ ∈ (0, 1], and we accept δ ∈ (0, 1). :class:`GaussianEvent` records: pure part at δ/2, Gaussian
    part at δ/2.
    """
    d = _delta(delta)
    evs = _private(_check_events(events))
    if _uncertified(evs):
        return math.inf
    _check_relations(evs)
    return _mixed(lambda pure, dd: _kov_from_groups(_groups(pure), dd), evs, d)


def tight_details(events: Sequence[Event], delta: float) -> dict[str, float | str]:
    """Numerical accounting with Google's ``dp-accounting``; every candidate and the minimum.

    Two sound numerical bounds are computed for the same adaptive composition, and the smallest
    of them and Theorem 7 is reported (a mechanism that is (ε₁, δ)-DP and (ε₂, δ)-DP is
    (min(ε₁, ε₂), δ)-DP):

    ``"pld"``
        Privacy-loss-distribution accounting (``dp_accounting.pld``, pessimistic discretisation):
        continuous Laplace via ``from_laplace_mechanism`` (its exact dominating pair), discrete
        Laplace via ``from_discrete_laplace_mechanism``, and each exponential mechanism via
        ``from_privacy_parameters(ε, 0)`` - the worst-case pair of *any* ε-DP mechanism
        (randomized response; Kairouz et al. 2017), which ignores the bounded-range property.
    ``"rdp"``
        Rényi accounting (``dp_accounting.rdp.RdpAccountant``): continuous Laplace via
        ``LaplaceDpEvent`` (its exact RDP curve), each exponential mechanism via
        ``ZCDpEvent(ε²/8)`` (bounded range ⇒ ε²/8-zCDP, Cesar & Rogers 2021), discrete Laplace via
        the two-bucket ``RandomizedResponseDpEvent`` with the same ε (worst case of ε-DP); RDP is
        converted to (ε, δ) by the library's ``compute_epsilon``.
    ``"kov"``
        Theorem 7 (:func:`kov`).

    :class:`GaussianEvent` records: continuous ones enter the PLD as ``from_gaussian_mechanism`` and
    the RDP as ``GaussianDpEvent``; a *discrete* (lattice) Gaussian only through ``GaussianDpEvent`` in
    the RDP accountant (its exact RDP curve is at most the continuous one's, CKS 2020 Prop. 5), so the
    ``"pld"`` candidate is ``inf`` whenever one is present.

    No PLD or RDP curve is derived here; every curve comes from the library.
    """
    d = _delta(delta)
    evs = _private(_check_events(events))
    if _uncertified(evs):
        return {"pld": math.inf, "rdp": math.inf, "kov": math.inf, "epsilon": math.inf, "method": "uncertified"}
    _check_relations(evs)
    if not evs:
        return {"pld": 0.0, "rdp": 0.0, "kov": 0.0, "epsilon": 0.0, "method": "none"}
    # A discrete (lattice) Gaussian is certified through its RDP curve only (GaussianEvent).
    discrete_gauss = any(isinstance(e, GaussianEvent) and e.discrete for e in evs)
    pld_eps = math.inf if discrete_gauss else _pld_epsilon(evs, d)
    rdp_eps = _rdp_epsilon(evs, d)
    kov_eps = _mixed(lambda pure, dd: _kov_from_groups(_groups(pure), dd), evs, d)
    cands = {"pld": pld_eps, "rdp": rdp_eps, "kov": kov_eps}
    method = min(cands, key=lambda m: cands[m])
    return {"pld": pld_eps, "rdp": rdp_eps, "kov": kov_eps, "epsilon": cands[method], "method": method}


@_sound
def tight(events: Sequence[Event], delta: float) -> float:
    """The smallest sound ε from :func:`tight_details` (PLD, RDP with ε²/8 for the exponential
    mechanism, Theorem 7)."""
    return float(tight_details(events, delta)["epsilon"])


def _by_kind(evs: Sequence[Event]) -> dict[tuple[str, float, float, float | None], int]:
    acc: dict[tuple[str, float, float, float | None], int] = {}
    for e in evs:
        key: tuple[str, float, float, float | None]
        if isinstance(e, GaussianEvent):
            key = ("gaussian", e.noise_multiplier, 1.0, None)
        elif isinstance(e, LaplaceEvent):
            key = ("laplace", e.epsilon, e.sensitivity, e.granularity)
        else:
            key = ("exponential", e.epsilon, 1.0, None)
        acc[key] = acc.get(key, 0) + e.count
    return acc


def _pld_epsilon(evs: Sequence[Event], delta: float) -> float:
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    kinds = _by_kind(evs)
    pure_eps = [k[1] for k in kinds if k[0] != "gaussian"]
    min_eps = min(pure_eps) if pure_eps else 1.0
    # The pessimistic rounding moves every loss value up by up to one interval; keep it far below
    # the per-mechanism ε, or tiny per-step ε get inflated many times over.
    vdi = min(1e-4, min_eps / 100.0)
    # The composed PLD spans about the privacy loss's mean plus a dozen standard deviations, in steps of
    # vdi. Beyond _PLD_MAX_POINTS it takes minutes and gigabytes (ε = 1 composed 10^5 times: 10^9 points);
    # skip it then: tight is the minimum of sound candidates, and RDP and Theorem 7 remain.
    # Self-composing tens of millions of events builds PLDs that do not fit in memory (the process is
    # killed, not given a MemoryError): skip those too.
    points = _pld_points(kinds, vdi)
    if (
        points > _PLD_MAX_POINTS
        or points * len(kinds) > _PLD_MAX_WORK
        or max(kinds.values(), default=0) > _PLD_MAX_COUNT
    ):
        return math.inf
    total = None
    for (kind, eps, sens, gran), count in sorted(kinds.items(), key=lambda kv: repr(kv[0])):
        if kind == "laplace" and gran is None:
            one = pld.from_laplace_mechanism(parameter=sens / eps, sensitivity=sens, value_discretization_interval=vdi)
        elif kind == "laplace" and gran is not None:
            steps = int(round(sens / gran))
            one = pld.from_discrete_laplace_mechanism(
                parameter=eps / steps, sensitivity=steps, value_discretization_interval=vdi
            )
        elif kind == "gaussian":  # continuous only (tight_details skips PLD for discrete ones)
            one = pld.from_gaussian_mechanism(
                standard_deviation=eps, sensitivity=1.0, value_discretization_interval=vdi
            )
        else:
            one = pld.from_privacy_parameters(
                common.DifferentialPrivacyParameters(eps, 0.0), value_discretization_interval=vdi
            )
        try:
            many = one.self_compose(count) if count > 1 else one
            total = many if total is None else total.compose(many)
        except MemoryError:
            return math.inf  # a candidate that cannot be computed is left out; RDP and Theorem 7 remain
    assert total is not None
    return float(total.get_epsilon_for_delta(delta))


#: Largest composed privacy-loss distribution (grid points) the tight accountant builds (about 32 MB).
_PLD_MAX_POINTS = 4_000_000
#: Largest (grid points x distinct mechanism kinds) the tight accountant composes (each kind is one more
#: convolution over the grid; many distinct per-event ε would otherwise take minutes).
_PLD_MAX_WORK = 200_000_000


def _pld_points(kinds: dict[tuple[str, float, float, float | None], int], vdi: float) -> float:
    """An estimate of the composed PLD's grid size: for each kind with per-mechanism loss scale e (ε, or
    1/z for a Gaussian), mean ``count·e²`` plus 12 standard deviations ``sqrt(count)·e`` (a pure ε-DP
    mechanism's loss never exceeds ``count·e``), over the discretisation interval."""
    width = 0.0
    for (kind, x, _sens, _gran), count in kinds.items():
        e = 1.0 / x if kind == "gaussian" else x
        w = count * e * e + 12.0 * math.sqrt(count) * e + e
        width += w if kind == "gaussian" else min(w, count * e + e)
    return width / vdi


#: Most identical events the PLD candidate self-composes (beyond, it is skipped; the paper schedule at dim 10,000 has 1e6).
_PLD_MAX_COUNT = 5_000_000


def _rdp_epsilon(evs: Sequence[Event], delta: float) -> float:
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    acc = rdp.RdpAccountant(neighboring_relation=rdp.NeighborRel.REPLACE_ONE)
    for (kind, eps, _sens, gran), count in _by_kind(evs).items():
        if kind == "gaussian":
            ev: Any = dp_event.GaussianDpEvent(noise_multiplier=eps)
        elif kind == "laplace" and gran is None:
            ev = dp_event.LaplaceDpEvent(noise_multiplier=1.0 / eps)
        elif kind == "laplace":
            ev = dp_event.RandomizedResponseDpEvent(noise_parameter=2.0 / (1.0 + math.exp(eps)), num_buckets=2)
        else:
            ev = dp_event.ZCDpEvent(rho=eps * eps / 8.0)
        acc.compose(ev, count)
    return float(acc.get_epsilon(delta))


ACCOUNTANTS: dict[str, Callable[[Sequence[Event], float], float]] = {
    "basic": basic,
    "advanced": advanced,
    "kov": kov,
    "tight": tight,
}


def compose(events: Sequence[Event], delta: float, accountant: AccountantName = "tight") -> float:
    """ε of the adaptive composition of ``events`` at ``delta`` with the named accountant."""
    return ACCOUNTANTS[_accountant_name(accountant)](events, delta)
