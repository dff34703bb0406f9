"""Events: one (or ``count`` identical) runs of a mechanism the code executes, with its privacy parameter
and the neighbour relation under which it holds."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Union

from .._validation import positive_float, positive_int
from ..errors import InvalidParameterError
from ._bounds import _gaussian_part_epsilon, _kov_from_groups
from ._checks import Neighbour, _count, _delta, _epsilon, _flag, _neighbour, _noise_multiplier, _nonneg_float, _set

#: Most lattice steps per sensitivity of a discrete Laplace event (the PLD grows with it).
_MAX_LATTICE_STEPS = float(1 << 20)


def _check_pure(event: Any) -> None:
    """A pure ε-DP event's ``epsilon``, ``sensitivity``, ``neighbour``, ``count`` and ``public``, checked and
    normalised in place (InvalidParameterError naming the field)."""
    _set(event, "epsilon", _epsilon(event.epsilon))
    _set(event, "sensitivity", positive_float(event.sensitivity, "sensitivity"))
    _set(event, "neighbour", _neighbour(event.neighbour))
    _set(event, "count", _count(event.count))
    _set(event, "public", _flag(event.public, "public"))


class _Counted:
    """What every event shares: it stands for ``count`` mechanisms (releases, or auction rounds)."""

    count: int

    @property
    def mechanisms(self) -> int:
        """Number of mechanisms this record stands for (``count``: releases, or auction rounds)."""
        return self.count


@dataclass(frozen=True)
class LaplaceEvent(_Counted):
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
        _check_pure(self)
        if self.granularity is not None:
            g = positive_float(self.granularity, "granularity")
            steps = self.sensitivity / g
            if not steps <= _MAX_LATTICE_STEPS:
                raise InvalidParameterError(
                    f"`granularity` must be at least sensitivity / 2^20, got sensitivity / granularity = {steps!r}",
                    "granularity",
                )
            if abs(steps - round(steps)) > 1e-9 * max(1.0, steps) or round(steps) < 1:
                raise InvalidParameterError(
                    f"`granularity` must divide `sensitivity` an integer number of times, got "
                    f"sensitivity / granularity = {steps!r}",
                    "granularity",
                )
            _set(self, "granularity", g)

    @property
    def cost(self) -> float:
        """Basic-composition cost of the record: ``count · ε`` (0 when public)."""
        return 0.0 if self.public else self.count * self.epsilon

    @property
    def scale(self) -> float:
        """The noise scale of one measurement, ``Δ/ε``."""
        return self.sensitivity / self.epsilon


@dataclass(frozen=True)
class ExponentialEvent(_Counted):
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
        _check_pure(self)

    @property
    def cost(self) -> float:
        """Basic-composition cost of the record: ``count · ε`` (0 when public)."""
        return 0.0 if self.public else self.count * self.epsilon


@dataclass(frozen=True)
class AuctionEvent(_Counted):
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
        _set(self, "epsilon", _nonneg_float(self.epsilon, "epsilon"))  # any ε_auc > 0 costs inf (no numerics)
        _set(self, "tau", positive_int(self.tau, "tau"))
        _set(self, "owners", positive_int(self.owners, "owners"))
        _set(self, "neighbour", _neighbour(self.neighbour))
        _set(self, "count", _count(self.count))

    @property
    def public(self) -> bool:
        """Always False: the auction ranks private bids."""
        return False

    @property
    def certified_free(self) -> bool:
        """True when every owner is asked every round (ε_auc = 0): the requests carry no information."""
        return self.epsilon == 0.0 or self.owners == 1

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
class GaussianEvent(_Counted):
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
        _set(self, "noise_multiplier", _noise_multiplier(self.noise_multiplier))
        _set(self, "neighbour", _neighbour(self.neighbour))
        _set(self, "count", _count(self.count))
        _set(self, "discrete", _flag(self.discrete, "discrete"))
        if not isinstance(self.releases, str):
            raise InvalidParameterError("`releases` must be a str", "releases")
        _set(self, "public", _flag(self.public, "public"))

    @property
    def cost(self) -> float:
        """No pure-ε cost: ``math.inf`` (0 when public). Its (ε, δ) comes from the accountants."""
        return 0.0 if self.public else math.inf

    def epsilon_at(self, delta: float) -> float:
        """ε at ``delta`` of this record alone (RDP for discrete noise, analytic Gaussian otherwise)."""
        return _gaussian_part_epsilon([self], _delta(delta))


Event = Union[LaplaceEvent, ExponentialEvent, AuctionEvent, GaussianEvent]  # noqa: UP007 (a runtime alias: 3.10)


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
    steps = _count(steps, "steps")
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
