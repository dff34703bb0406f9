"""Privacy accounting for the dpsumm protocol (Sarpatwar et al., NeurIPS 2019).

Everything here is pure Python and computes *before* or *after* a run what the releases cost;
nothing here touches private data.

Vocabulary
----------
Event
    One (or ``count`` identical) runs of a mechanism the code actually executes, with its privacy
    parameter and the neighbour relation under which that parameter holds:

    * :class:`LaplaceEvent` - a Laplace (or discrete Laplace) measurement at scale Δ/ε: ε-DP.
    * :class:`ExponentialEvent` - the exponential mechanism sampling ∝ exp(ε·score/(2Δ)): ε-DP and
      ε-bounded-range, hence ε²/8-zCDP (Cesar & Rogers 2021, Lemma 3.2).
    * :class:`AuctionEvent` - one round of the paper's PrivAuction (Alg. 3 lines 11-17). See its
      docstring: the paper's privacy argument (proof of Theorem 6) is wrong, and no finite ε can be
      certified for ε_auc > 0. ε_auc = 0 ("ask every owner every round") is free.

    One MWEM step of h2 (Alg. 2 lines 5-6) is one ExponentialEvent + one LaplaceEvent, both at the
    step's ε with sensitivity 2 under replace-one (DESIGN §3.5).

Accountant
    A function ``(events, delta) -> epsilon`` giving an ε such that the adaptive composition of the
    events is (ε, δ)-DP (all events are pure ε-DP, so the composed δ is exactly the ``delta`` given):
    :func:`basic`, :func:`advanced`, :func:`kov` (Theorem 7 of the appendix) and :func:`tight`
    (numerical, Google's ``dp-accounting``). Always ``tight <= kov <= advanced`` and ``kov <= basic``.

Ledger
    :class:`Ledger` records every release of a protocol run by party (``"owners"`` or
    ``"validation"``) and reports ε at a δ with any accountant.

Schedules
    :func:`paper_schedule` (Section 4), :func:`theorem2_schedule` (Theorem 2) and :func:`calibrate`
    (budget first), with :func:`schedule_events` / :func:`account` to cost a schedule before running.

What the numbers mean (the README, section "Privacy")
-----------------------------------------------------
* ``"validation"``: ε of all releases computed from the consumer's validation set ``D_v``, with
  respect to replacing one row of ``D_v`` (``|D_v|`` public).
* ``"owners"``: ε of all releases seen by a data owner that are computed from the summary ``D_s``,
  with respect to replacing one row of the summary (its size q is public), composed over epochs.
  This transfers to "with respect to the other owners' data" when neighbouring owner data give
  summaries that differ in at most one row in every epoch given the public transcript; that holds
  for deterministic point collection (``ε_auc = 0``) and is *not* established for the paper's
  randomized auction, whose hidden coins also make its own requests leak (see :class:`AuctionEvent`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers

import numpy as np
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Union

from ._validation import positive_float, positive_int
from .errors import InvalidParameterError, PrivacyBudgetError

__all__ = [
    "ACCOUNTANTS",
    "NEIGHBOURS",
    "PARTIES",
    "AuctionEvent",
    "Budget",
    "BudgetAccountant",
    "Event",
    "ExponentialEvent",
    "GaussianCalibration",
    "GaussianEvent",
    "LaplaceEvent",
    "Ledger",
    "LedgerEntry",
    "Schedule",
    "account",
    "advanced",
    "basic",
    "calibrate",
    "calibrate_mwem_steps",
    "calibrate_gaussian",
    "compose",
    "kov",
    "mwem_step_events",
    "paper_schedule",
    "schedule_events",
    "schedule_ledger",
    "theorem2_schedule",
    "tight",
    "tight_details",
]

Neighbour = Literal["replace-one", "add-remove"]
Party = Literal["owners", "validation"]
AccountantName = Literal["basic", "advanced", "kov", "tight"]

NEIGHBOURS: tuple[str, ...] = ("replace-one", "add-remove")
PARTIES: tuple[str, ...] = ("owners", "validation")

#: Smallest per-step ε :func:`calibrate` will hand out (below this the releases are noise).
_MIN_STEP_EPSILON = 1e-9
_MAX_STEP_EPSILON = 50.0


# ----------------------------------------------------------------------------------------------
# argument checks
# ----------------------------------------------------------------------------------------------


def _delta(value: object, name: str = "delta") -> float:
    """``value`` as a float in the open interval (0, 1)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidParameterError(f"`{name}` must be a real number, got {type(value).__name__}", name)
    v = float(value)
    if not (0.0 < v < 1.0):
        raise InvalidParameterError(f"`{name}` must lie in the open interval (0, 1), got {value!r}", name)
    return v


def _flag(value: object, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidParameterError(f"`{name}` must be a bool, got {type(value).__name__}", name)
    return bool(value)


#: Largest summary size a schedule is made for (one entry per epoch).
MAX_SIZE = 10_000_000


def _size(value: object) -> int:
    p = positive_int(value, "size")
    if p > MAX_SIZE:
        raise InvalidParameterError(f"`size` must be at most {MAX_SIZE}, got {p}", "size")
    return p


#: Largest h1 dimension a schedule is made for (rust/src/limits.rs MAX_DIM).
MAX_DIM = 1 << 20


def _dim(value: object) -> int:
    d = positive_int(value, "dim")
    if d > MAX_DIM:
        raise InvalidParameterError(f"`dim` must be at most {MAX_DIM}, got {d}", "dim")
    return d


def _neighbour(value: object, name: str = "neighbour") -> str:
    if not isinstance(value, str) or value not in NEIGHBOURS:
        raise InvalidParameterError(
            f"`{name}` must be one of {', '.join(repr(n) for n in NEIGHBOURS)}, got {value!r}", name
        )
    return str(value)


def _party(value: object, name: str = "party") -> str:
    if not isinstance(value, str) or value not in PARTIES:
        raise InvalidParameterError(
            f"`{name}` must be one of {', '.join(repr(p) for p in PARTIES)}, got {value!r}", name
        )
    return str(value)


def _accountant_name(value: object, name: str = "accountant") -> str:
    if not isinstance(value, str) or value not in ACCOUNTANTS:
        raise InvalidParameterError(
            f"`{name}` must be one of {', '.join(repr(a) for a in ACCOUNTANTS)}, got {value!r}", name
        )
    return str(value)


def _nonneg_float(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidParameterError(f"`{name}` must be a real number, got {type(value).__name__}", name)
    v = float(value)
    if not math.isfinite(v) or v < 0:
        raise InvalidParameterError(f"`{name}` must be a finite number >= 0, got {value!r}", name)
    return v


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)


# ----------------------------------------------------------------------------------------------
# events
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LaplaceEvent:
    """``count`` Laplace measurements ``f(D) + Lap(Δ/ε)``, each ε-DP (Dwork et al. 2006).

    Used by h2 (Alg. 2 line 6): ``μ = w(D_Q, i) + Lap(Δ/ε)`` with Δ = 2 under replace-one (a row's
    quantized value lies in [-1, 1], DESIGN §3.5).

    Parameters
    ----------
    epsilon : float
        Privacy parameter of one measurement; the noise scale is ``sensitivity / epsilon``.
    sensitivity : float
        L1 sensitivity Δ of the measured quantity under ``neighbour``.
    neighbour : {"replace-one", "add-remove"}
        Neighbour relation under which ``sensitivity`` (hence ε) holds.
    count : int, default 1
        Number of identical, adaptively composed repetitions this record stands for.
    granularity : float or None, default None
        ``None``: continuous Laplace noise. A positive number ``g``: discrete Laplace noise on the
        lattice ``gZ`` with ``P(kg) ∝ exp(-ε|k|g/Δ)``; ``Δ/g`` must be an integer. Only the tight
        accountant distinguishes the two (the discrete one has a slightly worse privacy curve).
    public : bool, default False
        The measurement was computed on public data only (e.g. the seed set D_init): costs nothing.
    """

    epsilon: float
    sensitivity: float
    neighbour: Neighbour
    count: int = 1
    granularity: float | None = None
    public: bool = False

    def __post_init__(self) -> None:
        _set(self, "epsilon", positive_float(self.epsilon, "epsilon"))
        _set(self, "sensitivity", positive_float(self.sensitivity, "sensitivity"))
        _set(self, "neighbour", _neighbour(self.neighbour))
        _set(self, "count", positive_int(self.count, "count"))
        _set(self, "public", _flag(self.public, "public"))
        if self.granularity is not None:
            g = positive_float(self.granularity, "granularity")
            steps = self.sensitivity / g
            if abs(steps - round(steps)) > 1e-9 * max(1.0, steps) or round(steps) < 1:
                raise InvalidParameterError(
                    f"`granularity` must divide `sensitivity` an integer number of times, got "
                    f"sensitivity / granularity = {steps!r}",
                    "granularity",
                )
            _set(self, "granularity", g)

    @property
    def mechanisms(self) -> int:
        """Number of ε-DP mechanisms this record stands for (``count``)."""
        return self.count

    @property
    def cost(self) -> float:
        """Basic-composition cost of the record: ``count · ε`` (0 when public)."""
        return 0.0 if self.public else self.count * self.epsilon


@dataclass(frozen=True)
class ExponentialEvent:
    """``count`` runs of the exponential mechanism, each ε-DP and ε-bounded-range.

    Samples an index ∝ ``exp(ε · score / (2Δ))`` for a score of sensitivity Δ (McSherry & Talwar
    2007). That is ε-DP, and ε-bounded-range (the log-probability ratio between neighbours varies
    over a range of width at most ε; Durfee & Rogers 2019), hence ε²/8-zCDP (Cesar & Rogers 2021,
    Lemma 3.2) - four times better than the ε²/2 of a generic ε-DP mechanism. Used by h2
    (Alg. 2 line 5) with score ``ψ_i = |w(P, i) - w(D_Q, i)|`` and Δ = 2 under replace-one; the
    paper's ``exp(ε ψ)`` would be 2εΔ-DP, the implementation must use ``exp(ε ψ / (2Δ))``
    (DESIGN §3.5).

    Parameters
    ----------
    epsilon, sensitivity, neighbour, count, public
        As for :class:`LaplaceEvent`.
    """

    epsilon: float
    sensitivity: float
    neighbour: Neighbour
    count: int = 1
    public: bool = False

    def __post_init__(self) -> None:
        _set(self, "epsilon", positive_float(self.epsilon, "epsilon"))
        _set(self, "sensitivity", positive_float(self.sensitivity, "sensitivity"))
        _set(self, "neighbour", _neighbour(self.neighbour))
        _set(self, "count", positive_int(self.count, "count"))
        _set(self, "public", _flag(self.public, "public"))

    @property
    def mechanisms(self) -> int:
        """Number of ε-DP mechanisms this record stands for (``count``)."""
        return self.count

    @property
    def cost(self) -> float:
        """Basic-composition cost of the record: ``count · ε`` (0 when public)."""
        return 0.0 if self.public else self.count * self.epsilon


@dataclass(frozen=True)
class AuctionEvent:
    """``count`` rounds of PrivAuction (Alg. 3 lines 11-17) as seen by one data owner.

    In a round the aggregator ranks the owners by bid and asks the owner at rank r (r = 0 first)
    for its best point independently with probability ``exp(-ε_auc · r)``; a point that was its
    owner's best τ times is asked for regardless. Owner j observes only whether it was asked.

    What the paper charges (proof of Theorem 6, appendix D). Neighbour relation: add-remove on
    the union of the other owners' data, ``D' = D ∪ {x}`` with x at owner i' ≠ j. A round is "bad"
    if x is i''s best point and not yet taken; there are at most τ bad rounds; in a bad round j's
    rank moves by at most one, so ``P[j asked]`` changes by a factor at most ``e^{ε_auc}``; hence
    each bad round is claimed ε_auc-DP, the other rounds free, and the auction costs the τ-fold
    composition of ε_auc (Theorem 7, Eqs. 8-9: at most ε/3 + ε²/18 with the Theorem 6 defaults
    ``ε_auc = ε/(3 sqrt(2 ln(1/δ))) K^(-1/3)``, ``τ = K^(2/3)``).

    Why that is wrong.

    1. *Rank 0 is asked with probability 1.* If j is top-ranked without x and second with x, then
       ``P[j not asked]`` is 0 under D and ``1 - e^{-ε_auc}`` under D'. One round therefore has
       total variation ``1 - e^{-ε_auc}``: it is not (ε, δ)-DP for *any* ε when
       ``δ < 1 - e^{-ε_auc}``. With the Theorem 6 defaults (K = 5, ε = 1, δ = 1e-4) that is
       δ ≥ 0.044, against a claimed 1e-4.
    2. *Only "asked" was bounded.* For ranks r ≥ 1 the "not asked" ratio is
       ``(1 - e^{-ε_auc (r+1)}) / (1 - e^{-ε_auc r}) ≈ (r+1)/r``: a privacy loss of about ln 2 at
       r = 1 however small ε_auc is.
    3. *At most τ bad rounds is false.* With or without x, owner i' offers different points
       later (it never offers a point twice), so its bid - and j's rank - can differ in every
       later round, not only while x is its best: the difference moves to another point of i'
       each time i' is asked.
    4. *Hidden state.* Which owners were asked is not shown to j but changes every owner's later
       bids and the summary D_s, so the rounds are not an adaptive composition over j's view and
       per-round bounds do not compose as the proof assumes.

    What dpsumm certifies. For ``epsilon > 0`` the accountants return ``math.inf`` (no finite ε at
    any δ < 1 - e^{-ε_auc}; no useful bound at all is known). ``epsilon == 0`` is the auction with
    every owner asked every round (the paper's "acquire from all sources" alternative, Section 3):
    the requests are a constant, cost nothing, and the summary becomes a deterministic function of
    the owners' data and the public h2 releases. That is the only auction setting under which
    dpsumm reports a finite owners' ε. :meth:`paper_claim` returns what Theorem 6 would charge,
    for comparison only.

    Parameters
    ----------
    epsilon : float
        ε_auc >= 0.
    tau : int
        τ >= 1, the forced-request threshold.
    owners : int
        K, the number of data owners.
    neighbour : {"replace-one", "add-remove"}, default "add-remove"
        The relation of the paper's proof (add-remove on the other owners' data).
    count : int, default 1
        Number of rounds.
    """

    epsilon: float
    tau: int
    owners: int
    neighbour: Neighbour = "add-remove"
    count: int = 1

    def __post_init__(self) -> None:
        _set(self, "epsilon", _nonneg_float(self.epsilon, "epsilon"))
        _set(self, "tau", positive_int(self.tau, "tau"))
        _set(self, "owners", positive_int(self.owners, "owners"))
        _set(self, "neighbour", _neighbour(self.neighbour))
        _set(self, "count", positive_int(self.count, "count"))

    @property
    def public(self) -> bool:
        """Always False: the auction ranks private bids."""
        return False

    @property
    def certified_free(self) -> bool:
        """True when every owner is asked every round (ε_auc = 0): the requests carry no information."""
        return self.epsilon == 0.0 or self.owners == 1

    @property
    def mechanisms(self) -> int:
        """Number of rounds (``count``)."""
        return self.count

    @property
    def cost(self) -> float:
        """0 for ε_auc = 0, otherwise ``math.inf`` (no certified bound; see the class docstring)."""
        return 0.0 if self.certified_free else math.inf

    def paper_claim(self, delta: float) -> float:
        """What the proof of Theorem 6 charges for the auction: Theorem 7 over min(τ, count) rounds.

        For comparison only - the argument is wrong (class docstring); dpsumm never adds this
        figure to a certified total.
        """
        d = _delta(delta)
        k = min(self.tau, self.count)
        if self.epsilon == 0.0:
            return 0.0
        return _kov_from_groups([(self.epsilon, k)], d)


@dataclass(frozen=True)
class GaussianEvent:
    """``count`` Gaussian releases ``f(D) + N(0, σ² I)`` of a vector query of L2 sensitivity Δ.

    Recorded by its noise multiplier ``z = σ / Δ`` where Δ is the *effective* L2 sensitivity of what
    is perturbed (for a lattice release: the query's sensitivity plus the grid's ``g·sqrt(d)``, see
    :func:`calibrate_gaussian`). It is approximate DP: no pure ε, its ε depends on δ.

    Privacy statement. Continuous noise (``discrete=False``): the Gaussian mechanism, whose exact
    (ε, δ) curve (Balle & Wang 2018) and privacy-loss distribution dp-accounting computes.
    Discrete noise on a lattice (``discrete=True``, :func:`dpsumm.privacy.gaussian_mean_release`): for
    integer shifts the Rényi divergence of order α between ``N_Z(μ, s²)`` and ``N_Z(ν, s²)`` is exactly
    ``α(μ-ν)²/(2s²)`` (Canonne, Kamath & Steinke 2020, Prop. 5), and independent coordinates add, so the
    d-dimensional lattice mechanism has, at every order α, at most the Rényi divergence
    ``α/(2z²)`` of the continuous Gaussian with the same noise multiplier (ρ-zCDP with ρ = 1/(2z²),
    CKS 2020's multivariate zCDP theorem). dpsumm therefore accounts a discrete Gaussian through its
    RDP curve only (dp-accounting's ``RdpAccountant`` with ``GaussianDpEvent(z)`` and its RDP-to-(ε, δ)
    conversion). The continuous Gaussian's tighter PLD/analytic curve is *not* used for it.

    Parameters
    ----------
    noise_multiplier : float
        ``σ / Δ_eff`` > 0.
    neighbour : {"replace-one", "add-remove"}, default "replace-one"
        Relation under which Δ holds.
    count : int, default 1
        Number of identical, adaptively composed releases.
    discrete : bool, default True
        Lattice noise from the exact discrete Gaussian sampler (accounted through RDP only).
    releases : str, default ""
        What was released (for the ledger's readers), e.g. ``"noisy validation hash mean"``.
    public : bool, default False
        Computed on public data only: costs nothing.
    """

    noise_multiplier: float
    neighbour: Neighbour = "replace-one"
    count: int = 1
    discrete: bool = True
    releases: str = ""
    public: bool = False

    def __post_init__(self) -> None:
        _set(self, "noise_multiplier", positive_float(self.noise_multiplier, "noise_multiplier"))
        _set(self, "neighbour", _neighbour(self.neighbour))
        _set(self, "count", positive_int(self.count, "count"))
        _set(self, "discrete", bool(self.discrete))
        if not isinstance(self.releases, str):
            raise InvalidParameterError("`releases` must be a str", "releases")
        _set(self, "public", bool(self.public))

    @property
    def mechanisms(self) -> int:
        """Number of releases (``count``)."""
        return self.count

    @property
    def cost(self) -> float:
        """No pure-ε cost: ``math.inf`` (0 when public). Its (ε, δ) comes from the accountants."""
        return 0.0 if self.public else math.inf

    def epsilon_at(self, delta: float) -> float:
        """ε at ``delta`` of this record alone (RDP for discrete noise, analytic Gaussian otherwise)."""
        return _gaussian_part_epsilon([self], _delta(delta))


Event = Union[LaplaceEvent, ExponentialEvent, AuctionEvent, GaussianEvent]
_EVENT_TYPES = (LaplaceEvent, ExponentialEvent, AuctionEvent, GaussianEvent)
_PURE_TYPES = (LaplaceEvent, ExponentialEvent, AuctionEvent)


def mwem_step_events(
    epsilon: float,
    steps: int = 1,
    *,
    sensitivity: float = 2.0,
    neighbour: Neighbour = "replace-one",
    granularity: float | None = None,
    public: bool = False,
) -> list[Event]:
    """The events of ``steps`` MWEM steps of h2 (Alg. 2 lines 5-6) at per-step ``epsilon``.

    Each step is one :class:`ExponentialEvent` (coordinate choice) and one :class:`LaplaceEvent`
    (its measurement), both at ``epsilon`` with ``sensitivity`` under ``neighbour`` (DESIGN §3.5:
    Δ = 2 under replace-one with q public).
    """
    return [
        ExponentialEvent(epsilon, sensitivity, neighbour, count=steps, public=public),
        LaplaceEvent(epsilon, sensitivity, neighbour, count=steps, granularity=granularity, public=public),
    ]


def _check_events(events: object) -> list[Event]:
    if isinstance(events, _EVENT_TYPES):
        return [events]
    if not isinstance(events, Iterable):
        raise InvalidParameterError("`events` must be a list of events", "events")
    out = list(events)
    for e in out:
        if not isinstance(e, _EVENT_TYPES):
            raise InvalidParameterError(
                f"`events` must hold LaplaceEvent / ExponentialEvent / AuctionEvent / GaussianEvent, got {type(e).__name__}",
                "events",
            )
    return out


def _private(events: Sequence[Event]) -> list[Event]:
    """Events that cost something (drops public records and free auctions)."""
    return [e for e in events if not e.public and not (isinstance(e, AuctionEvent) and e.certified_free)]


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


def _gaussian_part_epsilon(gauss: Sequence[GaussianEvent], delta: float) -> float:
    """ε at ``delta`` of the composition of Gaussian records alone.

    Discrete (lattice) noise: RDP only (see :class:`GaussianEvent`). All continuous: the composition
    of Gaussians with multipliers z_i is one Gaussian with ``z = (Σ count_i / z_i²)^(-1/2)`` (exact),
    whose ε is the analytic one (Balle & Wang 2018, ``dp_accounting.get_epsilon_gaussian``).
    """
    gauss = [g for g in gauss if not g.public]
    if not gauss:
        return 0.0
    inv = math.fsum(g.count / g.noise_multiplier**2 for g in gauss)
    z = 1.0 / math.sqrt(inv)
    if any(g.discrete for g in gauss):
        return _rdp_gaussian_epsilon(z, delta)
    import dp_accounting

    return float(dp_accounting.get_epsilon_gaussian(z, delta))


@functools.lru_cache(maxsize=256)
def _rdp_gaussian_epsilon(noise_multiplier: float, delta: float) -> float:
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    acc = rdp.RdpAccountant(neighboring_relation=rdp.NeighborRel.REPLACE_ONE)
    acc.compose(dp_event.GaussianDpEvent(noise_multiplier=noise_multiplier))
    return float(acc.get_epsilon(delta))


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


# ----------------------------------------------------------------------------------------------
# accountants
# ----------------------------------------------------------------------------------------------


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


def _kov_terms(groups: Sequence[tuple[float, int]], delta: float) -> tuple[float, float, float]:
    """The three expressions of Theorem 7 (appendix; Kairouz, Oh & Viswanath 2017, Thm 3.5)."""
    basic_ = math.fsum(k * eps for eps, k in groups)
    # (e^ε - 1) ε / (e^ε + 1) = ε tanh(ε / 2)
    lin = math.fsum(k * eps * math.tanh(eps / 2.0) for eps, k in groups)
    s2 = math.fsum(2.0 * k * eps * eps for eps, k in groups)  # Σ 2 ε_ℓ²
    second = lin + math.sqrt(s2 * math.log(1.0 / delta))
    third = lin + math.sqrt(s2 * math.log(math.e + math.sqrt(s2) / delta))
    return basic_, second, third


def _kov_from_groups(groups: Sequence[tuple[float, int]], delta: float) -> float:
    if not groups:
        return 0.0
    return float(min(_kov_terms(groups, delta)))


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
    total = None
    for (kind, eps, sens, gran), count in sorted(kinds.items(), key=lambda kv: repr(kv[0])):
        if kind == "laplace" and gran is None:
            one = pld.from_laplace_mechanism(
                parameter=sens / eps, sensitivity=sens, value_discretization_interval=vdi
            )
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
        # Self-composing tens of millions of events builds PLDs that do not fit in memory (the process is
        # killed, not given a MemoryError): refuse them with a typed error at once.
        if count > _PLD_MAX_COUNT:
            raise InvalidParameterError(
                f"`events`: the tight accountant cannot compose {count} {kind} events (at most {_PLD_MAX_COUNT:.0e} "
                "of one kind); use fewer MWEM steps (a smaller dim) or another accountant",
                "events",
            )
        try:
            many = one.self_compose(count) if count > 1 else one
            total = many if total is None else total.compose(many)
        except MemoryError as exc:
            raise InvalidParameterError(
                f"`events`: the tight accountant ran out of memory composing {count} {kind} events at epsilon {eps:.3g}",
                "events",
            ) from exc
    assert total is not None
    return float(total.get_epsilon_for_delta(delta))


#: Most identical events the PLD accountant self-composes (the paper schedule at dim 10,000 has 1e6).
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


# ----------------------------------------------------------------------------------------------
# ledger
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LedgerEntry:
    """One recorded release: who saw it, what it was, and its basic-composition cost."""

    party: str
    label: str
    round: int | None
    event: Event
    cost: float

    def to_dict(self) -> dict[str, Any]:
        ev = dataclasses.asdict(self.event)
        ev["kind"] = type(self.event).__name__
        return {
            "party": self.party,
            "label": self.label,
            "round": self.round,
            "event": ev,
            "cost": _json_number(self.cost),
        }


def _json_number(x: float) -> float | None:
    """JSON has no infinity: ``None`` (null) means "no finite guarantee"."""
    return None if math.isinf(x) else x


_DEFAULT_DELTAS = {"owners": 1e-4, "validation": 0.01}
_SEEDED_WARNING = "seeded run: NOT private (the noise is reproducible from the seed)"
_EVENT_KINDS: dict[str, type] = {
    "LaplaceEvent": LaplaceEvent,
    "ExponentialEvent": ExponentialEvent,
    "AuctionEvent": AuctionEvent,
    "GaussianEvent": GaussianEvent,
}


def _event_from_dict(d: dict[str, Any]) -> Event:
    if not isinstance(d, dict) or d.get("kind") not in _EVENT_KINDS:
        raise InvalidParameterError(f"unknown event record {d!r}", "data")
    fields = {k: v for k, v in d.items() if k != "kind"}
    try:
        return _EVENT_KINDS[d["kind"]](**fields)  # type: ignore[no-any-return]
    except TypeError as exc:
        raise InvalidParameterError(f"bad {d['kind']} record: {exc}", "data") from exc


class Ledger:
    """Every privacy-relevant release of one protocol run, by party.

    Parties: ``"owners"`` - releases a data owner sees (h2 of the summary each epoch, the auction
    requests); ``"validation"`` - releases of the consumer's validation set (its h2 release, or the
    one noisy validation mean of the nominations protocol, a :class:`GaussianEvent`). A party with no
    records has ε = 0 and is certified.

    Parameters
    ----------
    seeded : bool, default False
        The run drew its noise from a seeded (reproducible) stream: it is NOT private, whatever the
        figures say. ``table()``, ``to_dict()`` and ``repr`` say so first.
    deltas : dict or None, default None
        ``{"owners": δ, "validation": δ}`` the run was calibrated to (set from a :class:`Budget`);
        ``table()`` and ``to_dict()`` report at these δ's by default (else 1e-4 and 0.01).

    Examples
    --------
    >>> led = Ledger()
    >>> for e in mwem_step_events(0.01, 1656):
    ...     _ = led.record("validation", e, label="h2(D_v)")
    >>> round(led.epsilon("validation", 0.01, "basic"), 2)
    33.12
    >>> led.certified("owners"), led.epsilon("owners", 1e-6)
    (True, 0.0)
    """

    def __init__(self, *, seeded: bool = False, deltas: dict[str, float | None] | None = None) -> None:
        self._entries: list[LedgerEntry] = []
        self._uncertified: list[dict[str, str]] = []
        self.seeded: bool = bool(seeded)
        self.deltas: dict[str, float | None] | None = None
        if deltas is not None:
            self.set_deltas(**deltas)

    def record_uncertified(self, party: Party, *, label: str, reason: str) -> None:
        """Record a message ``party`` receives that is outside the differential-privacy guarantee.

        The party is then not certified and its ε is infinite (no finite guarantee), whatever else it saw;
        ``reason`` appears in :meth:`notes`. Example: the nominations protocol's ``purchase="winners"``
        request, which tells an owner which of its nominees won.
        """
        p = _party(party)
        if not isinstance(label, str) or not label or not isinstance(reason, str) or not reason:
            raise InvalidParameterError("`label` and `reason` must be non-empty strings", "label")
        self._uncertified.append({"party": p, "label": label, "reason": reason})

    @property
    def uncertified(self) -> list[dict[str, str]]:
        """Messages outside the DP guarantee (party, label, reason), in order (a copy)."""
        return [dict(u) for u in self._uncertified]

    def mark_seeded(self) -> None:
        """Mark the run as seeded (reproducible noise): NOT private."""
        self.seeded = True

    def set_deltas(self, owners: float | None = None, validation: float | None = None) -> None:
        """Store the δ's the run was calibrated to (defaults of :meth:`table` and :meth:`to_dict`)."""
        self.deltas = {
            "owners": None if owners is None else _delta(owners, "owners"),
            "validation": None if validation is None else _delta(validation, "validation"),
        }

    def _default_delta(self, party: str) -> float:
        if self.deltas is not None and self.deltas.get(party) is not None:
            return float(self.deltas[party])  # type: ignore[arg-type]
        return _DEFAULT_DELTAS[party]

    def record(self, party: Party, event: Event, *, label: str, round: int | None = None) -> LedgerEntry:
        """Record one release (or ``event.count`` identical ones) seen by ``party``.

        A release computed on public data only (the seed set) is recorded with ``public=True`` on
        the event and costs 0.
        """
        p = _party(party)
        if not isinstance(event, _EVENT_TYPES):
            raise InvalidParameterError(
                "`event` must be a LaplaceEvent, ExponentialEvent, AuctionEvent or GaussianEvent, "
                f"got {type(event).__name__}",
                "event",
            )
        if not isinstance(label, str) or not label:
            raise InvalidParameterError("`label` must be a non-empty string", "label")
        if round is not None:
            if isinstance(round, bool) or not isinstance(round, numbers.Integral) or round < 0:
                raise InvalidParameterError(f"`round` must be None or an int >= 0, got {round!r}", "round")
            round = int(round)
        if p == "validation" and isinstance(event, AuctionEvent):
            raise InvalidParameterError("auction rounds are seen by the owners, not the validation set", "party")
        entry = LedgerEntry(p, label, round, event, event.cost)
        self._entries.append(entry)
        return entry

    @property
    def entries(self) -> list[LedgerEntry]:
        """The records, in order (a copy)."""
        return list(self._entries)

    def events(self, party: Party, *, include_auction: bool = True) -> list[Event]:
        """The events recorded for ``party``."""
        p = _party(party)
        return [
            e.event
            for e in self._entries
            if e.party == p and (include_auction or not isinstance(e.event, AuctionEvent))
        ]

    def certified(self, party: Party) -> bool:
        """False when ``party``'s records hold an uncertified auction (PrivAuction with ε_auc > 0) or a
        message outside the DP guarantee (:meth:`record_uncertified`)."""
        p = _party(party)
        if any(u["party"] == p for u in self._uncertified):
            return False
        return not any(
            isinstance(e, AuctionEvent) and not e.certified_free for e in self.events(party)
        )

    def neighbours(self, party: Party) -> list[str]:
        """The neighbour relations of ``party``'s private records, sorted."""
        return sorted({e.neighbour for e in _private(self.events(party))})

    def epsilon(
        self,
        party: Party,
        delta: float | None = None,
        accountant: AccountantName = "tight",
        *,
        include_auction: bool = True,
    ) -> float:
        """ε of everything ``party`` saw, at ``delta`` (default: the ledger's δ), by ``accountant``.

        ``include_auction=False`` leaves the auction rounds out (so the h2 part can be read when
        the auction is uncertified); that figure does not cover the whole run.
        """
        name = _accountant_name(accountant)
        d = self._default_delta(_party(party)) if delta is None else delta
        if any(u["party"] == _party(party) for u in self._uncertified):
            _delta(d)
            return math.inf
        return ACCOUNTANTS[name](self.events(party, include_auction=include_auction), d)

    def totals(
        self,
        delta_owners: float | None = None,
        delta_validation: float | None = None,
        *,
        include_auction: bool = True,
    ) -> dict[str, dict[str, float]]:
        """``{"owners": {accountant: ε}, "validation": {accountant: ε}}`` at the given δ's (default:
        the ledger's)."""
        out: dict[str, dict[str, float]] = {}
        given = {"owners": delta_owners, "validation": delta_validation}
        for party in PARTIES:
            d = given[party]
            d = self._default_delta(party) if d is None else d
            _delta(d, "delta_owners" if party == "owners" else "delta_validation")
            evs = self.events(party, include_auction=include_auction)  # type: ignore[arg-type]
            if any(u["party"] == party for u in self._uncertified):
                out[party] = {name: math.inf for name in ACCOUNTANTS}
                continue
            out[party] = {name: fn(evs, d) for name, fn in ACCOUNTANTS.items()}
        return out

    def notes(self) -> list[str]:
        """Plain-language caveats that apply to this ledger's totals (one line per party first)."""
        notes: list[str] = []
        if self.seeded:
            notes.append(_SEEDED_WARNING)
        for party in PARTIES:
            evs = _private(self.events(party))  # type: ignore[arg-type]
            cert = "certified" if self.certified(party) else "NOT certified"  # type: ignore[arg-type]
            if not evs:
                notes.append(f"{party}: no private releases recorded: eps = 0 ({cert}).")
                continue
            rels = ", ".join(self.neighbours(party))  # type: ignore[arg-type]
            what = "one row of D_v (|D_v| public)" if party == "validation" else "one row of the summary D_s (its size public)"
            notes.append(f"{party}: neighbour relation {rels} on {what}; {cert}.")
        if any(isinstance(e.event, GaussianEvent) and e.event.discrete for e in self._entries):
            notes.append(
                "Gaussian releases on a lattice (exact discrete Gaussian) are accounted through their RDP "
                "curve (Canonne, Kamath & Steinke 2020, Prop. 5); basic/advanced/kov add them at their own "
                "epsilon, at delta/2 when pure events are also present."
            )
        for u in self._uncertified:
            notes.append(f"{u['party']}: {u['label']} is OUTSIDE the differential-privacy guarantee: {u['reason']}")
        if any(e.party == "owners" and not isinstance(e.event, AuctionEvent) for e in self._entries):
            notes.append(
                "owners: h2 releases are composed over epochs; seed-set-only releases are public and free."
            )
        if not self.certified("owners") and not any(u["party"] == "owners" for u in self._uncertified):
            notes.append(
                "owners: PrivAuction with eps_auc > 0 is not differentially private as specified "
                "(proof of Theorem 6 is wrong; see dpsumm.accounting.AuctionEvent): no finite "
                "owners' epsilon can be certified."
            )
        elif any(isinstance(e.event, AuctionEvent) for e in self._entries):
            notes.append("owners: every owner asked every round (eps_auc = 0): the requests cost nothing.")
        return notes

    def to_dict(
        self, delta_owners: float | None = None, delta_validation: float | None = None
    ) -> dict[str, Any]:
        """A JSON-ready summary for ``result.privacy``: entries, notes, totals at the δ's (default:
        the ledger's), per-party certification and the seeded flag.

        Infinite ε (no certified guarantee, or the pure-ε cost of a Gaussian record) appears as
        ``None``. :meth:`from_dict` rebuilds the ledger from this dict.
        """
        d_own = self._default_delta("owners") if delta_owners is None else delta_owners
        d_val = self._default_delta("validation") if delta_validation is None else delta_validation
        out: dict[str, Any] = {}
        if self.seeded:
            out["warning"] = _SEEDED_WARNING
        out["seeded"] = self.seeded
        out["private"] = not self.seeded
        out["entries"] = [e.to_dict() for e in self._entries]
        out["uncertified"] = self.uncertified
        out["notes"] = self.notes()
        out["certified"] = {p: self.certified(p) for p in PARTIES}  # type: ignore[arg-type]
        out["calibrated_deltas"] = None if self.deltas is None else dict(self.deltas)
        tot = self.totals(d_own, d_val)
        out["delta"] = {"owners": d_own, "validation": d_val}
        out["totals"] = {p: {a: _json_number(v) for a, v in t.items()} for p, t in tot.items()}
        h2 = self.totals(d_own, d_val, include_auction=False)["owners"]
        out["owners_excluding_auction"] = {a: _json_number(v) for a, v in h2.items()}
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Ledger:
        """The ledger :meth:`to_dict` described (entries, seeded flag, calibrated δ's)."""
        if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
            raise InvalidParameterError("`data` must be a dict from Ledger.to_dict()", "data")
        deltas = data.get("calibrated_deltas")
        led = cls(seeded=bool(data.get("seeded", False)), deltas=deltas if isinstance(deltas, dict) else None)
        for rec in data["entries"]:
            if not isinstance(rec, dict):
                raise InvalidParameterError("`data['entries']` must hold dicts", "data")
            led.record(rec["party"], _event_from_dict(rec["event"]), label=rec["label"], round=rec.get("round"))
        for u in data.get("uncertified") or []:
            led.record_uncertified(u["party"], label=u["label"], reason=u["reason"])
        return led

    def table(self, delta_owners: float | None = None, delta_validation: float | None = None) -> str:
        """A plain-text table of ε per party and accountant (default δ's: the ledger's)."""
        d_own = self._default_delta("owners") if delta_owners is None else delta_owners
        d_val = self._default_delta("validation") if delta_validation is None else delta_validation
        tot = self.totals(d_own, d_val)
        h2 = self.totals(d_own, d_val, include_auction=False)["owners"]
        rows = [
            ("owners", d_own, tot["owners"]),
            ("owners, h2 only", d_own, h2),
            ("validation", d_val, tot["validation"]),
        ]
        if h2 == tot["owners"]:
            rows.pop(1)
        text = _format_table(rows, self.notes())
        if self.seeded:
            text = f"*** {_SEEDED_WARNING} ***\n" + text
        return text

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Ledger):
            return NotImplemented
        return (self._entries == other._entries and self._uncertified == other._uncertified
                and self.seeded == other.seeded and self.deltas == other.deltas)

    __hash__ = None  # type: ignore[assignment]

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        counts = {p: sum(1 for e in self._entries if e.party == p) for p in PARTIES}
        flag = ", seeded run: NOT private" if self.seeded else ""
        return (
            f"Ledger(entries={len(self._entries)}, owners={counts['owners']}, "
            f"validation={counts['validation']}{flag})"
        )


def _fmt(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.4g}"


def _format_table(rows: Sequence[tuple[str, float, dict[str, float]]], notes: Sequence[str]) -> str:
    head = f"{'party':<18}{'delta':>9}" + "".join(f"{a:>11}" for a in ACCOUNTANTS)
    lines = [head, "-" * len(head)]
    for name, d, vals in rows:
        lines.append(f"{name:<18}{d:>9.3g}" + "".join(f"{_fmt(vals[a]):>11}" for a in ACCOUNTANTS))
    if notes:
        lines.append("")
        lines.extend(f"* {n}" for n in notes)
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# schedules
# ----------------------------------------------------------------------------------------------


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
        _set(self, "size", positive_int(self.size, "size"))
        _set(self, "owners", positive_int(self.owners, "owners"))
        _set(self, "dim", positive_int(self.dim, "dim"))
        _set(self, "gamma", positive_float(self.gamma, "gamma"))
        _set(self, "t_init", positive_int(self.t_init, "t_init"))
        _set(self, "t_subs", positive_int(self.t_subs, "t_subs"))
        _set(self, "epsilon_validation_step", positive_float(self.epsilon_validation_step, "epsilon_validation_step"))
        _set(self, "epsilon_first_epoch_step", positive_float(self.epsilon_first_epoch_step, "epsilon_first_epoch_step"))
        eps = tuple(positive_float(e, "epsilon_epoch_step") for e in self.epsilon_epoch_step)
        if len(eps) != self.size:
            raise InvalidParameterError(
                f"`epsilon_epoch_step` must have one entry per epoch ({self.size}), got {len(eps)}",
                "epsilon_epoch_step",
            )
        _set(self, "epsilon_epoch_step", eps)
        _set(self, "epsilon_auction", _nonneg_float(self.epsilon_auction, "epsilon_auction"))
        _set(self, "tau", positive_int(self.tau, "tau"))
        _set(self, "eta", positive_float(self.eta, "eta"))
        _set(self, "seed_set_size", positive_int(self.seed_set_size, "seed_set_size"))

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
    k = positive_int(owners, "owners")
    d = _dim(dim)
    t_init = int(math.floor(d**1.5))
    t_subs = 5
    later = 0.01 / math.sqrt(p * t_subs)
    theorem6_eps, tau_ = _theorem6_auction(0.043, 1e-4, k)
    if isinstance(epsilon_auction, str):
        if epsilon_auction != "theorem6":
            raise InvalidParameterError(
                f"`epsilon_auction` must be a number >= 0 or 'theorem6', got {epsilon_auction!r}", "epsilon_auction")
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
    eps = positive_float(epsilon, "epsilon")
    dlt = _delta(delta)
    p = _size(size)
    if p < 2:
        raise InvalidParameterError("`size` must be >= 2 for Theorem 2 (it divides by ln p)", "size")
    k = positive_int(owners, "owners")
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
    return schedule_ledger(schedule).totals(delta, validation_delta, include_auction=include_auction)


# ----------------------------------------------------------------------------------------------
# budget-first calibration
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Budget:
    """Target (ε, δ) for the owners' releases and for the validation set's release.

    ``epsilon``/``delta`` may both be None for a validation-only budget (the nominations protocol
    releases nothing computed from other owners' data to an owner: owners' ε = 0), e.g.
    ``Budget(validation_epsilon=1.0, validation_delta=1e-6)``. The validation pair is required.

    A δ of 1/|D_v| or more allows releasing one row of D_v outright; call
    :meth:`check_validation_size` once |D_v| is known (before any noise is drawn).
    """

    epsilon: float | None = None
    delta: float | None = None
    validation_epsilon: float | None = None
    validation_delta: float | None = None

    def __post_init__(self) -> None:
        if (self.epsilon is None) != (self.delta is None):
            name = "delta" if self.delta is None else "epsilon"
            raise InvalidParameterError("`epsilon` and `delta` must be given together (or both None)", name)
        if self.epsilon is not None:
            _set(self, "epsilon", positive_float(self.epsilon, "epsilon"))
            _set(self, "delta", _delta(self.delta, "delta"))
        if self.validation_epsilon is None:
            raise InvalidParameterError("`validation_epsilon` is required", "validation_epsilon")
        if self.validation_delta is None:
            raise InvalidParameterError("`validation_delta` is required", "validation_delta")
        _set(self, "validation_epsilon", positive_float(self.validation_epsilon, "validation_epsilon"))
        _set(self, "validation_delta", _delta(self.validation_delta, "validation_delta"))

    @property
    def has_owners_budget(self) -> bool:
        """True when an owners' (ε, δ) is set."""
        return self.epsilon is not None

    def check_validation_size(self, m: int) -> None:
        """Refuse a validation δ >= 1/m for a validation set of ``m`` rows.

        Raises
        ------
        PrivacyBudgetError
            ``validation_delta >= 1/m``: such a δ permits publishing a random row of D_v.
        """
        n = positive_int(m, "m")
        assert self.validation_delta is not None
        if self.validation_delta >= 1.0 / n:
            err = PrivacyBudgetError(
                f"validation_delta = {self.validation_delta:g} is >= 1/|D_v| = {1.0 / n:g}: it would allow "
                "publishing a row of the validation set; use a delta well below 1/|D_v|"
            )
            err.argument = "validation_delta"
            raise err

    def ledger_deltas(self) -> dict[str, float | None]:
        """``{"owners": δ, "validation": δ}`` for :meth:`Ledger.set_deltas`."""
        return {"owners": self.delta, "validation": self.validation_delta}


def _bisect_scale(f: Callable[[float], float], target: float, what: str, lo: float, hi: float) -> float:
    """Largest x in [lo, hi] (to 1%) with f(x) <= target, f increasing."""
    if f(lo) > target:
        raise PrivacyBudgetError(
            f"{what}: target epsilon {target:g} is unreachable - even a per-step epsilon of {lo:g} costs "
            f"{f(lo):.4g}"
        )
    if f(hi) <= target:
        return hi
    flo = f(lo)
    for _ in range(200):
        if flo >= 0.995 * target:
            break
        mid = math.sqrt(lo * hi)
        fm = f(mid)
        if fm <= target:
            lo, flo = mid, fm
        else:
            hi = mid
        if hi / lo - 1.0 < 1e-12:
            break
    if flo < 0.99 * target:  # pragma: no cover - numerical plateau
        raise PrivacyBudgetError(f"{what}: could not get within 1% of target epsilon {target:g} (reached {flo:.4g})")
    return lo


def _cheap_epsilon(events: list[Event], delta: float) -> float:
    """min(RDP, Theorem 7) of pure events: an upper bound on :func:`tight` in milliseconds."""
    return min(_rdp_epsilon(events, delta), _kov_from_groups(_groups(events), delta))


@functools.lru_cache(maxsize=512)
def _calibrate_mwem_steps(steps: int, target: float, delta: float, what: str) -> float:
    """Largest per-step ε (to 1%) such that ``steps`` MWEM steps cost at most ``target`` by :func:`tight`.

    Fast path: bisect on the cheap bound min(RDP, Theorem 7) (closed forms, each monotone in ε) -
    every point it accepts also satisfies :func:`tight` (tight is the minimum of PLD, RDP and Theorem 7).
    Then one :func:`tight` evaluation: if it is within 1% below ``target`` the answer stands;
    otherwise the PLD wins there and the bisection continues on :func:`tight` from that point.
    """

    def cheap(eps: float) -> float:
        return _cheap_epsilon(mwem_step_events(eps, steps), delta)

    def full(eps: float) -> float:
        return tight(mwem_step_events(eps, steps), delta)

    x = _bisect_scale(cheap, target, what, _MIN_STEP_EPSILON, _MAX_STEP_EPSILON)
    # The PLD candidate rounds every mechanism's losses up by up to one interval (``_pld_epsilon``:
    # min(1e-4, ε/100)), about steps·interval/2 in total: once that alone exceeds 1% of the target the
    # PLD cannot improve on the cheap bound by enough to matter, and its evaluation (the slow part:
    # 0.65 s at 11,180 steps) is skipped. Skipping can only leave the schedule more conservative.
    interval = min(1e-4, x / 100.0)
    if steps * interval / 2.0 >= 0.01 * target or x >= _MAX_STEP_EPSILON:
        return x
    fx = full(x)
    if fx >= 0.99 * target:
        return x
    hi = x
    while hi < _MAX_STEP_EPSILON and full(hi) <= target:
        hi = min(_MAX_STEP_EPSILON, hi * 1.5)
    return _bisect_scale(full, target, what, x, hi)


def calibrate_mwem_steps(epsilon: float, delta: float, steps: int) -> float:
    """The per-step ε of ``steps`` MWEM steps of h2 whose composition is ``(epsilon, delta)``-DP (tight accountant).

    Each step is one exponential-mechanism choice and one Laplace measurement at the step's ε
    (:func:`mwem_step_events`, replace-one). Used by the nominations protocol's ``validation_release="mwem"``
    to compare the paper's h2 with the Gaussian release at the same ``(epsilon, delta)``.
    """
    return _calibrate_mwem_steps(positive_int(steps, "steps"), positive_float(epsilon, "epsilon"),
                                 _delta(delta, "delta"), "validation")


def calibrate(
    budget: Budget,
    size: int,
    owners: int,
    dim: int = 140,
    *,
    seed_set_size: int = 150,
    epsilon_auction: float = 0.0,
) -> Schedule:
    """Budget-first schedule: the paper's shape, per-step ε's scaled to spend ``budget``.

    Keeps Section 4's shape (T_init = floor(d^1.5), T_subs = 5, ε_l ∝ 1/sqrt(p T_subs) constant over
    epochs l > 1, the public epoch 1 at 0.05) and bisects the two scale factors so that the
    :func:`tight` ε of the validation release is within 1% below ``budget.validation_epsilon`` at
    ``budget.validation_delta`` and that of the owners' releases within 1% below
    ``budget.epsilon`` at ``budget.delta``.

    The auction must be ``epsilon_auction = 0`` (every owner asked every round): PrivAuction with
    ε_auc > 0 has no finite certified ε (:class:`AuctionEvent`), so no budget can be met with it.

    Raises
    ------
    PrivacyBudgetError
        The budget cannot be met (ε_auc > 0, or a target so small that the per-step ε would fall
        below 1e-9).
    """
    if not isinstance(budget, Budget):
        raise InvalidParameterError("`budget` must be a Budget", "budget")
    if not budget.has_owners_budget:
        raise InvalidParameterError(
            "the paper's schedule needs an owners' budget: give Budget(epsilon=..., delta=...) too", "budget"
        )
    p = _size(size)
    k = positive_int(owners, "owners")
    eps_auc = _nonneg_float(epsilon_auction, "epsilon_auction")
    if eps_auc > 0 and k > 1:
        raise PrivacyBudgetError(
            f"no budget can be met with PrivAuction at epsilon_auction = {eps_auc:g}: its requests are "
            "not differentially private as specified (proof of Theorem 6 is wrong; see "
            "dpsumm.accounting.AuctionEvent); use epsilon_auction = 0 (ask every owner every round)"
        )
    own_eps, own_delta = budget.epsilon, budget.delta
    val_eps, val_delta = budget.validation_epsilon, budget.validation_delta
    assert own_eps is not None and own_delta is not None and val_eps is not None and val_delta is not None
    base = paper_schedule(p, k, dim, seed_set_size=seed_set_size, epsilon_auction=0.0)
    t_init, t_subs = base.t_init, base.t_subs
    eps_v = _calibrate_mwem_steps(t_init, val_eps, val_delta, "validation")

    steps = (p - 1) * t_subs
    if steps == 0:
        later = base.epsilon_epoch_step[1:] if p > 1 else ()
        eps_l = 0.01 / math.sqrt(p * t_subs)
    else:
        eps_l = _calibrate_mwem_steps(steps, own_eps, own_delta, "owners")
        later = (eps_l,) * (p - 1)
    return dataclasses.replace(
        base,
        name="calibrated",
        epsilon_validation_step=eps_v,
        epsilon_epoch_step=(base.epsilon_first_epoch_step,) + tuple(later),
        epsilon_auction=0.0,
    )


# ----------------------------------------------------------------------------------------------
# the Gaussian release: calibration
# ----------------------------------------------------------------------------------------------

#: Grid steps per unit of sensitivity: the lattice adds at most 2^-10 of Δ to the sensitivity.
_GRID_BITS = 10
#: Largest σ in grid units the exact sampler takes (rust/src/noise.rs, MAX_GAUSSIAN_SIGMA).
_MAX_SIGMA_STEPS = float(2**26)


@functools.lru_cache(maxsize=256)
def _gaussian_noise_multiplier(epsilon: float, delta: float) -> float:
    """Smallest noise multiplier z whose RDP curve α/(2z²) gives (ε, δ)-DP through dp-accounting's
    RDP-to-DP conversion (``dp_accounting.calibrate_dp_mechanism`` with an ``RdpAccountant`` and
    ``GaussianDpEvent(z)``; the library's bracket search returns a z meeting the target)."""
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    z = dp_accounting.calibrate_dp_mechanism(
        lambda: rdp.RdpAccountant(neighboring_relation=rdp.NeighborRel.REPLACE_ONE),
        lambda x: dp_accounting.GaussianDpEvent(noise_multiplier=x),
        epsilon,
        delta,
        dp_accounting.LowerEndpointAndGuess(1e-4, 1.0),
    )
    return float(z)


@dataclass(frozen=True)
class GaussianCalibration:
    """The parameters of one lattice Gaussian release, calibrated by :func:`calibrate_gaussian`.

    Attributes
    ----------
    sigma : float
        Noise standard deviation (in the units of the released vector).
    granularity : float
        Lattice step g (a power of two): the release lies on ``g·Z^d``.
    sensitivity : float
        Effective L2 sensitivity ``Δ + g·sqrt(d)`` of the rounded vector (grid included).
    base_sensitivity : float
        Δ, the query's own L2 sensitivity under ``neighbour``.
    epsilon, delta : float
        The target the release meets.
    dim : int
        d, the vector length.
    noise_multiplier : float
        ``sigma / sensitivity``.
    neighbour : str
        The relation under which Δ holds (``"replace-one"`` for the validation mean, |D_v| public).
    """

    sigma: float
    granularity: float
    sensitivity: float
    base_sensitivity: float
    epsilon: float
    delta: float
    dim: int
    noise_multiplier: float
    neighbour: str = "replace-one"

    def event(self, releases: str = "noisy validation hash mean", count: int = 1) -> GaussianEvent:
        """The :class:`GaussianEvent` to record for ``count`` releases with these parameters."""
        return GaussianEvent(
            self.noise_multiplier, self.neighbour, count=count, discrete=True, releases=releases  # type: ignore[arg-type]
        )

    def achieved_epsilon(self, delta: float | None = None) -> float:
        """ε at ``delta`` (default: the target δ) of one release, by the same RDP accounting."""
        return _rdp_gaussian_epsilon(self.noise_multiplier, self.delta if delta is None else _delta(delta))


def calibrate_gaussian(
    epsilon: float,
    delta: float,
    *,
    sensitivity: float,
    dim: int,
    granularity: float | None = None,
    neighbour: Neighbour = "replace-one",
) -> GaussianCalibration:
    r"""σ and the lattice step of a d-dimensional discrete Gaussian release meeting (ε, δ).

    Mechanism (:func:`dpsumm.privacy.gaussian_mean_release`): round each coordinate to the nearest
    multiple of g, add ``g · N_Z(0, (σ/g)²)`` independently per coordinate.

    Sensitivity. Rounding moves a vector by at most ``g·sqrt(d)/2`` in L2, so two inputs at L2
    distance Δ become lattice points at distance at most ``Δ_eff = Δ + g·sqrt(d)``; σ is
    ``z · Δ_eff``.

    Grid. By default ``g`` is the largest power of two with ``g <= Δ / (2^10 · max(sqrt(d), 1/z))``:
    the grid adds at most ``2^-10`` of Δ (0.1% more noise) and ``σ/g >= 2^10`` grid steps, where the
    discrete Gaussian's variance equals σ² up to a factor ``1 - O(e^{-2π²·2^20})``. A power of two
    keeps ``v/g`` and the grid points exact in floating point.

    Privacy (replace-one on the rows behind the query, or ``neighbour``). The lattice mechanism with
    integer shifts of L2 norm at most ``Δ_eff/g`` and per-coordinate ``N_Z(0, (σ/g)²)`` has Rényi
    divergence of order α at most ``α Δ_eff² / (2σ²) = α / (2z²)`` (Canonne, Kamath & Steinke 2020,
    Prop. 5 per coordinate - an equality for integer shifts - summed over independent coordinates;
    their multivariate zCDP theorem). It therefore satisfies every (ε, δ) that the *RDP curve* of the
    continuous Gaussian with multiplier z gives; z is the smallest such (dp-accounting's
    ``calibrate_dp_mechanism`` with ``RdpAccountant`` and ``GaussianDpEvent(z)``). The continuous
    Gaussian's exact (analytic/PLD) calibration would allow a 5-14% smaller σ, but is not certified for
    the discrete Gaussian without CKS's multivariate (ε, δ) bound and its extra τ term, which dpsumm
    does not rely on.

    Parameters
    ----------
    epsilon : float
        Target ε > 0.
    delta : float
        Target δ in (0, 1).
    sensitivity : float
        Δ, L2 sensitivity of the vector under ``neighbour`` (the validation hash mean: ``2·sqrt(2)/m``).
    dim : int
        d.
    granularity : float, optional
        The lattice step g; default as above. Must leave ``σ/g`` in [2^-10, 2^26].
    neighbour : {"replace-one", "add-remove"}

    Returns
    -------
    GaussianCalibration

    Examples
    --------
    >>> cal = calibrate_gaussian(1.0, 1e-6, sensitivity=2 * 2**0.5 / 1000, dim=256)
    >>> cal.achieved_epsilon() <= 1.0
    True
    """
    eps = positive_float(epsilon, "epsilon")
    dlt = _delta(delta)
    sens = positive_float(sensitivity, "sensitivity")
    d = positive_int(dim, "dim")
    rel = _neighbour(neighbour)
    z = _gaussian_noise_multiplier(eps, dlt)
    root = math.sqrt(d)
    if granularity is None:
        target = sens / (2.0**_GRID_BITS * max(root, 1.0 / z))
        g = 2.0 ** math.floor(math.log2(target))
    else:
        g = positive_float(granularity, "granularity")
    eff = sens + g * root
    sigma = z * eff
    steps = sigma / g
    if not (2.0**-10 <= steps <= _MAX_SIGMA_STEPS):
        raise InvalidParameterError(
            f"`granularity` {g:g} gives sigma / granularity = {steps:g}, outside [2^-10, 2^26]", "granularity"
        )
    return GaussianCalibration(
        sigma=sigma,
        granularity=g,
        sensitivity=eff,
        base_sensitivity=sens,
        epsilon=eps,
        delta=dlt,
        dim=d,
        noise_multiplier=z,
        neighbour=rel,
    )


# ----------------------------------------------------------------------------------------------
# a budget across runs
# ----------------------------------------------------------------------------------------------

PlannedEvents = Union["Ledger", Sequence[tuple[str, Event]], dict[str, Sequence[Event]]]


class BudgetAccountant:
    """A total privacy budget per party, spent run by run (like diffprivlib's ``BudgetAccountant``).

    Runs on the same data compose: the accountant keeps every spent :class:`Ledger` and, before a
    new run, composes all recorded events of a party with the planned ones by the :func:`tight`
    accountant at that party's δ. :meth:`check` raises :class:`PrivacyBudgetError` before anything is
    drawn if a party would exceed its ε; :meth:`spend` checks, then records.

    A party without a budget (None) may not spend anything private: the nominations protocol, whose
    owners see nothing computed from other owners' data, only needs the validation pair.

    Parameters
    ----------
    epsilon, delta : float or None
        Owners' total (ε, δ) (both or neither).
    validation_epsilon, validation_delta : float or None
        Validation set's total (ε, δ) (both or neither).

    Examples
    --------
    >>> acct = BudgetAccountant(validation_epsilon=1.6, validation_delta=1e-6)
    >>> cal = calibrate_gaussian(1.0, 1e-6, sensitivity=0.01, dim=64)
    >>> run = Ledger()
    >>> _ = run.record("validation", cal.event(), label="g~")
    >>> acct.spend(run)
    >>> acct.spend(run)                       # two releases at eps 1 compose to 1.45 (RDP)
    >>> try:
    ...     acct.check(run)                   # a third would give 1.81 > 1.6
    ... except PrivacyBudgetError as e:
    ...     print("refused")
    refused
    >>> len(acct.spent)
    2
    """

    def __init__(
        self,
        epsilon: float | None = None,
        delta: float | None = None,
        validation_epsilon: float | None = None,
        validation_delta: float | None = None,
    ) -> None:
        self._totals: dict[str, tuple[float, float] | None] = {}
        for party, e, d, en, dn in (
            ("owners", epsilon, delta, "epsilon", "delta"),
            ("validation", validation_epsilon, validation_delta, "validation_epsilon", "validation_delta"),
        ):
            if (e is None) != (d is None):
                raise InvalidParameterError(f"`{en}` and `{dn}` must be given together", en if e is None else dn)
            self._totals[party] = None if e is None else (positive_float(e, en), _delta(d, dn))
        if all(v is None for v in self._totals.values()):
            raise InvalidParameterError("give at least one party's (epsilon, delta)", "epsilon")
        self._spent: list[Ledger] = []

    @property
    def spent(self) -> list[Ledger]:
        """The ledgers spent so far (a copy of the list)."""
        return list(self._spent)

    def total(self, party: Party) -> tuple[float, float] | None:
        """The (ε, δ) budget of ``party`` (None: no budget)."""
        return self._totals[_party(party)]

    @staticmethod
    def _planned(planned: object) -> dict[str, list[Event]]:
        out: dict[str, list[Event]] = {p: [] for p in PARTIES}
        if isinstance(planned, Ledger):
            for p in PARTIES:
                out[p] = planned.events(p)  # type: ignore[arg-type]
            return out
        if isinstance(planned, dict):
            for p, evs in planned.items():
                out[_party(p, "planned")].extend(_check_events(evs))
            return out
        if isinstance(planned, Iterable):
            for item in planned:
                if not (isinstance(item, tuple) and len(item) == 2):
                    raise InvalidParameterError("`planned` pairs must be (party, event)", "planned")
                out[_party(item[0], "planned")].extend(_check_events([item[1]]))
            return out
        raise InvalidParameterError(
            "`planned` must be a Ledger, a list of (party, event) or a dict party -> events", "planned"
        )

    def _spent_events(self, party: str) -> list[Event]:
        return [e for led in self._spent for e in led.events(party)]  # type: ignore[arg-type]

    def epsilon_spent(self, party: Party) -> float:
        """The tight ε of everything spent by ``party``, at its budget's δ (0 without a budget)."""
        p = _party(party)
        tot = self._totals[p]
        if tot is None:
            return 0.0
        return tight(self._spent_events(p), tot[1])

    def check(self, planned: PlannedEvents) -> dict[str, float]:
        """The ε per party after ``planned`` on top of what was spent; refuse if over budget.

        Parameters
        ----------
        planned : Ledger, list of (party, event) or dict party -> list of events
            The run about to happen (e.g. a ledger pre-filled from a schedule or a calibration).

        Returns
        -------
        dict
            ``{party: ε}`` of the composition (tight accountant at the party's δ) for the parties
            with a budget.

        Raises
        ------
        PrivacyBudgetError
            A party would exceed its ε, or would spend privately without a budget.
        """
        plan = self._planned(planned)
        out: dict[str, float] = {}
        for p in PARTIES:
            tot = self._totals[p]
            new = _private(plan[p])
            if tot is None:
                if new:
                    err = PrivacyBudgetError(f"{p}: the run releases private data but the accountant has no {p} budget")
                    err.argument = "planned"
                    raise err
                continue
            eps = tight(self._spent_events(p) + list(plan[p]), tot[1])
            if eps > tot[0] * (1.0 + 1e-9):
                err = PrivacyBudgetError(
                    f"{p}: the run would bring the composed epsilon to {eps:.4g} at delta = {tot[1]:g}, "
                    f"over the total {tot[0]:g} (spent so far: {self.epsilon_spent(p):.4g})"  # type: ignore[arg-type]
                )
                err.argument = "planned"
                raise err
            out[p] = eps
        return out

    def spend(self, ledger: Ledger) -> None:
        """Check ``ledger`` against the remaining budget, then record it as spent."""
        if not isinstance(ledger, Ledger):
            raise InvalidParameterError("`ledger` must be a dpsumm.Ledger", "ledger")
        self.check(ledger)
        self._spent.append(ledger)

    def remaining(self) -> dict[str, float | None]:
        """``{party: total ε - tight ε spent}`` (None: no budget).

        Composition is not additive under the tight accountant (a further release may cost less or
        more than this difference suggests); use :meth:`check` to decide whether a run fits.
        """
        out: dict[str, float | None] = {}
        for p in PARTIES:
            tot = self._totals[p]
            out[p] = None if tot is None else max(0.0, tot[0] - self.epsilon_spent(p))  # type: ignore[arg-type]
        return out

    def __repr__(self) -> str:
        return f"BudgetAccountant(totals={self._totals}, runs={len(self._spent)})"
