"""Budgets: a target (ε, δ) per party (:class:`Budget`) and a total spent run by run
(:class:`BudgetAccountant`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Union

from .._validation import instance_of, positive_int
from ..errors import InvalidParameterError, PrivacyBudgetError
from ._checks import PARTIES, Party, _delta, _epsilon, _party, _set
from .composition import tight
from .events import Event, _check_events, _private
from .ledger import Ledger, certification


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
            _set(self, "epsilon", _epsilon(self.epsilon, "epsilon", target=True))
            _set(self, "delta", _delta(self.delta, "delta"))
        if self.validation_epsilon is None:
            raise InvalidParameterError("`validation_epsilon` is required", "validation_epsilon")
        if self.validation_delta is None:
            raise InvalidParameterError("`validation_delta` is required", "validation_delta")
        _set(self, "validation_epsilon", _epsilon(self.validation_epsilon, "validation_epsilon", target=True))
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


def _planned_events(events: object) -> list[Event]:
    """:func:`_check_events`, naming the accountant's argument ``planned``."""
    try:
        return _check_events(events)
    except InvalidParameterError as exc:
        raise InvalidParameterError(str(exc).replace("`events`", "`planned`", 1), "planned") from exc


PlannedEvents = Union["Ledger", Sequence[tuple[str, Event]], dict[str, Sequence[Event]]]


class BudgetAccountant:
    """A total privacy budget per party, spent run by run (like diffprivlib's ``BudgetAccountant``).

    Runs on the same data compose: the accountant keeps every spent :class:`Ledger` and, before a
    new run, composes all recorded events of a party with the planned ones by the :func:`tight`
    accountant at that party's δ. :meth:`check` raises :class:`PrivacyBudgetError` before anything is
    drawn if a party would exceed its ε; :meth:`spend` checks, then records.

    A party without a budget (None) may not spend anything private: the nominations protocol's nominees
    purchase (owners release nothing) only needs the validation pair; its label purchase (the default with a
    label set) also needs the owners' pair.

    Parameters
    ----------
    epsilon, delta : float or None
        Owners' total (ε, δ) (both or neither).
    validation_epsilon, validation_delta : float or None
        Validation set's total (ε, δ) (both or neither).

    Examples
    --------
    >>> from dpsumm.accounting import calibrate_gaussian
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
            self._totals[party] = None if e is None else (_epsilon(e, en, target=True), _delta(d, dn))
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
                out[_party(p, "planned")].extend(_planned_events(evs))
            return out
        if isinstance(planned, Iterable) and not isinstance(planned, (str, bytes)):
            for item in planned:
                if not (isinstance(item, tuple) and len(item) == 2):
                    raise InvalidParameterError("`planned` pairs must be (party, event)", "planned")
                out[_party(item[0], "planned")].extend(_planned_events([item[1]]))
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
        if isinstance(planned, Ledger):
            self._refuse_uncertified(planned)
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

    @staticmethod
    def _refuse_uncertified(ledger: Ledger) -> None:
        """A seeded run, or one with a party whose ε is not certified, has no finite ε to book: refuse it
        (booking it at its recorded events alone would count the uncertified messages at ε = 0)."""
        cert = certification(ledger)
        if cert.certified:
            return
        err = PrivacyBudgetError(
            f"the run cannot be booked against a privacy budget: it is {cert.status} ("
            + "; ".join(cert.reasons)
            + "); its epsilon is not finite"
        )
        err.argument = "planned"
        raise err

    def spend(self, ledger: Ledger) -> None:
        """Check ``ledger`` against the remaining budget, then record it as spent.

        A seeded run, or one whose owners or validation set are not certified (the nominations protocol's
        ``purchase="winners"``, the paper's PrivAuction with ε_auc > 0), is refused with
        :class:`PrivacyBudgetError`: no finite ε covers it.
        """
        ledger = instance_of(ledger, Ledger, "ledger", "a dpsumm.Ledger")
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
