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
    "Event",
    "ExponentialEvent",
    "LaplaceEvent",
    "Ledger",
    "LedgerEntry",
    "Schedule",
    "account",
    "advanced",
    "basic",
    "calibrate",
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


Event = Union[LaplaceEvent, ExponentialEvent, AuctionEvent]
_EVENT_TYPES = (LaplaceEvent, ExponentialEvent, AuctionEvent)


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
        return [events]  # type: ignore[list-item]
    if not isinstance(events, Iterable):
        raise InvalidParameterError("`events` must be a list of events", "events")
    out = list(events)
    for e in out:
        if not isinstance(e, _EVENT_TYPES):
            raise InvalidParameterError(
                f"`events` must hold LaplaceEvent / ExponentialEvent / AuctionEvent, got {type(e).__name__}",
                "events",
            )
    return out  # type: ignore[return-value]


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
    """(ε, multiplicity) of every pure ε-DP mechanism in the private events."""
    acc: dict[float, int] = {}
    for e in events:
        acc[e.epsilon] = acc.get(e.epsilon, 0) + e.count
    return sorted(acc.items())


def _uncertified(events: Sequence[Event]) -> bool:
    return any(isinstance(e, AuctionEvent) for e in events)  # free auctions were dropped already


# ----------------------------------------------------------------------------------------------
# accountants
# ----------------------------------------------------------------------------------------------


def basic(events: Sequence[Event], delta: float) -> float:
    """Basic composition: ``ε = Σ_ℓ ε_ℓ`` (Dwork & Roth 2014, Thm 3.14; the first term of Thm 7).

    Holds for every δ (it is pure DP); ``delta`` is validated and otherwise unused.
    """
    _delta(delta)
    evs = _private(_check_events(events))
    if _uncertified(evs):
        return math.inf
    _check_relations(evs)
    return float(math.fsum(eps * k for eps, k in _groups(evs)))


def advanced(events: Sequence[Event], delta: float) -> float:
    """Advanced composition (Dwork, Rothblum & Vadhan 2010), heterogeneous form.

    ``ε = sqrt(2 ln(1/δ) Σ_ℓ ε_ℓ²) + Σ_ℓ ε_ℓ (e^{ε_ℓ} - 1)`` for pure ε_ℓ-DP mechanisms; with equal
    ε_ℓ = ε this is the primer's ``sqrt(2K ln(1/δ')) ε + K ε (e^ε - 1)`` (bellet2021 slides,
    "Advanced composition"). It dominates the second expression of Theorem 7 term by term, so it
    is a valid bound.
    """
    d = _delta(delta)
    evs = _private(_check_events(events))
    if _uncertified(evs):
        return math.inf
    _check_relations(evs)
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
    δ ∈ (0, 1], and we accept δ ∈ (0, 1).
    """
    d = _delta(delta)
    evs = _private(_check_events(events))
    if _uncertified(evs):
        return math.inf
    _check_relations(evs)
    return _kov_from_groups(_groups(evs), d)


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

    No PLD or RDP curve is derived here; every curve comes from the library.
    """
    d = _delta(delta)
    evs = _private(_check_events(events))
    if _uncertified(evs):
        return {"pld": math.inf, "rdp": math.inf, "kov": math.inf, "epsilon": math.inf, "method": "uncertified"}
    _check_relations(evs)
    if not evs:
        return {"pld": 0.0, "rdp": 0.0, "kov": 0.0, "epsilon": 0.0, "method": "none"}
    pld_eps = _pld_epsilon(evs, d)
    rdp_eps = _rdp_epsilon(evs, d)
    kov_eps = _kov_from_groups(_groups(evs), d)
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
        if isinstance(e, LaplaceEvent):
            key = ("laplace", e.epsilon, e.sensitivity, e.granularity)
        else:
            key = ("exponential", e.epsilon, 1.0, None)
        acc[key] = acc.get(key, 0) + e.count
    return acc


def _pld_epsilon(evs: Sequence[Event], delta: float) -> float:
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    kinds = _by_kind(evs)
    min_eps = min(k[1] for k in kinds)
    # The pessimistic rounding moves every loss value up by up to one interval; keep it far below
    # the per-mechanism ε, or tiny per-step ε get inflated many times over.
    vdi = min(1e-4, min_eps / 100.0)
    total = None
    for (kind, eps, sens, gran), count in sorted(kinds.items(), key=lambda kv: repr(kv[0])):
        if kind == "laplace" and gran is None:
            one = pld.from_laplace_mechanism(
                parameter=sens / eps, sensitivity=sens, value_discretization_interval=vdi
            )
        elif kind == "laplace":
            steps = int(round(sens / gran))
            one = pld.from_discrete_laplace_mechanism(
                parameter=eps / steps, sensitivity=steps, value_discretization_interval=vdi
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
        if kind == "laplace" and gran is None:
            ev: Any = dp_event.LaplaceDpEvent(noise_multiplier=1.0 / eps)
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


class Ledger:
    """Every privacy-relevant release of one protocol run, by party.

    Parties: ``"owners"`` - releases a data owner sees (h2 of the summary each epoch, the auction
    requests); ``"validation"`` - releases of the consumer's validation set (its one h2 release).

    Examples
    --------
    >>> led = Ledger()
    >>> for e in mwem_step_events(0.01, 1656):
    ...     _ = led.record("validation", e, label="h2(D_v)")
    >>> round(led.epsilon("validation", 0.01, "basic"), 2)
    33.12
    """

    def __init__(self, seeded: bool = False) -> None:
        self._entries: list[LedgerEntry] = []
        #: True when the run drew its noise from a seeded (reproducible) stream: NOT private.
        self.seeded = _flag(seeded, "seeded")

    def mark_seeded(self) -> None:
        """Mark the ledger's run as seeded: its ε figures describe the mechanism, not a private release."""
        self.seeded = True

    def record(self, party: Party, event: Event, *, label: str, round: int | None = None) -> LedgerEntry:
        """Record one release (or ``event.count`` identical ones) seen by ``party``.

        A release computed on public data only (the seed set) is recorded with ``public=True`` on
        the event and costs 0.
        """
        p = _party(party)
        if not isinstance(event, _EVENT_TYPES):
            raise InvalidParameterError(
                f"`event` must be a LaplaceEvent, ExponentialEvent or AuctionEvent, got {type(event).__name__}",
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

    def epsilon(
        self,
        party: Party,
        delta: float,
        accountant: AccountantName = "tight",
        *,
        include_auction: bool = True,
    ) -> float:
        """ε of everything ``party`` saw, at ``delta``, by ``accountant``.

        ``include_auction=False`` leaves the auction rounds out (so the h2 part can be read when
        the auction is uncertified); that figure does not cover the whole run.
        """
        name = _accountant_name(accountant)
        return ACCOUNTANTS[name](self.events(party, include_auction=include_auction), delta)

    def totals(
        self, delta_owners: float, delta_validation: float, *, include_auction: bool = True
    ) -> dict[str, dict[str, float]]:
        """``{"owners": {accountant: ε}, "validation": {accountant: ε}}`` at the given δ's."""
        out: dict[str, dict[str, float]] = {}
        for party, d in (("owners", delta_owners), ("validation", delta_validation)):
            _delta(d, "delta_owners" if party == "owners" else "delta_validation")
            evs = self.events(party, include_auction=include_auction)  # type: ignore[arg-type]
            out[party] = {name: fn(evs, d) for name, fn in ACCOUNTANTS.items()}
        return out

    def notes(self) -> list[str]:
        """Plain-language caveats that apply to this ledger's totals."""
        notes = [
            "NOT PRIVATE: this run used a seeded random_state; anyone with the seed can remove the noise. "
            "The figures below are what an unseeded run would cost.",
        ] if self.seeded else []
        notes += [
            "validation: w.r.t. replacing one row of D_v (|D_v| public).",
            "owners: h2 releases are w.r.t. replacing one row of the summary D_s (its size public), "
            "composed over epochs; seed-set-only releases are public and free.",
        ]
        if any(isinstance(e.event, AuctionEvent) and not e.event.certified_free for e in self._entries):
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
        """A JSON-ready summary for ``result.privacy``: entries, notes and (given δ's) totals.

        Infinite ε (no certified guarantee) appears as ``None``.
        """
        out: dict[str, Any] = {
            "private": not self.seeded,
            "entries": [e.to_dict() for e in self._entries],
            "notes": self.notes(),
        }
        if delta_owners is not None and delta_validation is not None:
            tot = self.totals(delta_owners, delta_validation)
            out["delta"] = {"owners": delta_owners, "validation": delta_validation}
            out["totals"] = {p: {a: _json_number(v) for a, v in t.items()} for p, t in tot.items()}
            h2 = self.totals(delta_owners, delta_validation, include_auction=False)["owners"]
            out["owners_excluding_auction"] = {a: _json_number(v) for a, v in h2.items()}
        return out

    def table(self, delta_owners: float = 1e-4, delta_validation: float = 0.01) -> str:
        """A plain-text table of ε per party and accountant."""
        tot = self.totals(delta_owners, delta_validation)
        h2 = self.totals(delta_owners, delta_validation, include_auction=False)["owners"]
        rows = [
            ("owners", delta_owners, tot["owners"]),
            ("owners, h2 only", delta_owners, h2),
            ("validation", delta_validation, tot["validation"]),
        ]
        if h2 == tot["owners"]:
            rows.pop(1)
        return _format_table(rows, self.notes())

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        counts = {p: sum(1 for e in self._entries if e.party == p) for p in PARTIES}
        mark = ", seeded: NOT private" if self.seeded else ""
        return f"Ledger(entries={len(self._entries)}, owners={counts['owners']}, validation={counts['validation']}{mark})"


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
    epsilon_auction: float | None = None,
    tau: int | None = None,
) -> Schedule:
    """Section 4's parameters ("Experimental Evaluation").

    γ = 0.1, d = 140, T_init = floor(d^1.5) = 1656, T_subs = 5, ε_v = 0.01 per step (validation,
    once), ε = 0.05 per step in epoch 1 (seed set only: public, free), ε_l = 0.01 / sqrt(p T_subs)
    for l > 1, |D_init| ≈ 150, η = 1/d (Theorem 2: η ≤ 1/d; Section 4 does not say).

    Section 4 does not give ε_auc or τ; by default they are Theorem 6's,
    ``ε_auc = ε/(3 sqrt(2 ln(1/δ))) K^(-1/3)`` and ``τ = ceil(K^(2/3))``, evaluated at the
    summary's reported (ε, δ) = (0.043, 1e-4). Pass ``epsilon_auction=0.0`` for the certified
    "ask everyone" auction (see :class:`AuctionEvent`).
    """
    p = _size(size)
    k = positive_int(owners, "owners")
    d = _dim(dim)
    t_init = int(math.floor(d**1.5))
    t_subs = 5
    later = 0.01 / math.sqrt(p * t_subs)
    eps_auc, tau_ = _theorem6_auction(0.043, 1e-4, k)
    if epsilon_auction is not None:
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
    """Target (ε, δ) for the owners' releases and for the validation set's release."""

    epsilon: float
    delta: float
    validation_epsilon: float
    validation_delta: float

    def __post_init__(self) -> None:
        _set(self, "epsilon", positive_float(self.epsilon, "epsilon"))
        _set(self, "delta", _delta(self.delta, "delta"))
        _set(self, "validation_epsilon", positive_float(self.validation_epsilon, "validation_epsilon"))
        _set(self, "validation_delta", _delta(self.validation_delta, "validation_delta"))


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
    p = _size(size)
    k = positive_int(owners, "owners")
    eps_auc = _nonneg_float(epsilon_auction, "epsilon_auction")
    if eps_auc > 0 and k > 1:
        raise PrivacyBudgetError(
            f"no budget can be met with PrivAuction at epsilon_auction = {eps_auc:g}: its requests are "
            "not differentially private as specified (proof of Theorem 6 is wrong; see "
            "dpsumm.accounting.AuctionEvent); use epsilon_auction = 0 (ask every owner every round)"
        )
    base = paper_schedule(p, k, dim, seed_set_size=seed_set_size, epsilon_auction=0.0)
    t_init, t_subs = base.t_init, base.t_subs

    def f_val(eps: float) -> float:
        return tight(mwem_step_events(eps, t_init), budget.validation_delta)

    eps_v = _bisect_scale(f_val, budget.validation_epsilon, "validation", _MIN_STEP_EPSILON, _MAX_STEP_EPSILON)

    steps = (p - 1) * t_subs
    if steps == 0:
        later = base.epsilon_epoch_step[1:] if p > 1 else ()
        eps_l = 0.01 / math.sqrt(p * t_subs)
    else:

        def f_own(eps: float) -> float:
            return tight(mwem_step_events(eps, steps), budget.delta)

        eps_l = _bisect_scale(f_own, budget.epsilon, "owners", _MIN_STEP_EPSILON, _MAX_STEP_EPSILON)
        later = (eps_l,) * (p - 1)
    return dataclasses.replace(
        base,
        name="calibrated",
        epsilon_validation_step=eps_v,
        epsilon_epoch_step=(base.epsilon_first_epoch_step,) + tuple(later),
        epsilon_auction=0.0,
    )
