"""The ledger: every privacy-relevant release of one run, by party, and its text and JSON forms."""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..access import Access
from ..errors import InvalidParameterError, LedgerFormatError
from ._checks import PARTIES, AccountantName, Party, _delta, _flag, _party
from ._schema import LEDGER_SCHEMA_VERSION, ledger_from_dict
from ._schema import SEEDED_WARNING as _SEEDED_WARNING
from .composition import ACCOUNTANTS, _accountant_name
from .events import _EVENT_TYPES, AuctionEvent, Event, ExponentialEvent, GaussianEvent, LaplaceEvent, _private


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


#: The δ a ledger is read at when neither the caller nor the run's budget gives one (both parties; the API,
#: the CLI and the reports share it). A budget's δ, when the run had one, takes precedence.
DEFAULT_DELTA = 1e-6
_DEFAULT_DELTAS = {"owners": DEFAULT_DELTA, "validation": DEFAULT_DELTA}

#: Version of the dict form :meth:`Ledger.to_dict` writes and :meth:`Ledger.from_dict` reads.

#: The four statuses of :func:`certification`, in the words every surface prints.
NOT_PRIVATE: Final = "not private"
SEEDED: Final = "seeded: NOT private"
CERTIFIED: Final = "private, certified"
NOT_CERTIFIED: Final = "private, NOT certified"


_EVENT_KINDS: dict[str, type] = {
    "LaplaceEvent": LaplaceEvent,
    "ExponentialEvent": ExponentialEvent,
    "AuctionEvent": AuctionEvent,
    "GaussianEvent": GaussianEvent,
}


class Ledger:
    """Every privacy-relevant release of one protocol run, by party.

    Parties: ``"owners"`` - releases a data owner sees (h2 of the summary each epoch and the auction
    requests of the paper's protocol; the other owners' label-count releases of the nominations
    protocol's ByLabel purchase, Gaussian events under replace-one in one owner's rows);
    ``"validation"`` - releases of the consumer's validation set (its h2 release, or the
    one noisy validation mean of the nominations protocol, a :class:`GaussianEvent`). A party with no
    records has ε = 0 and is certified.

    Parameters
    ----------
    seeded : bool, default False
        The run drew its noise from a seeded (reproducible) stream: it is NOT private, whatever the
        figures say. ``table()``, ``to_dict()`` and ``repr`` say so first.
    deltas : dict or None, default None
        ``{"owners": δ, "validation": δ}`` the run was calibrated to (set from a :class:`Budget`);
        ``table()`` and ``to_dict()`` report at these δ's by default (else :data:`DEFAULT_DELTA`).

    Examples
    --------
    >>> from dpsumm.accounting import mwem_step_events
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
        self.seeded: bool = _flag(seeded, "seeded")
        self.deltas: dict[str, float | None] | None = None
        if deltas is not None:
            if not isinstance(deltas, dict) or not set(deltas) <= set(PARTIES):
                raise InvalidParameterError(
                    f"`deltas` must be None or a dict with keys 'owners' and/or 'validation', got {deltas!r:.80}",
                    "deltas",
                )
            try:
                self.set_deltas(**deltas)
            except InvalidParameterError as exc:
                raise InvalidParameterError(f"`deltas`: {exc}", "deltas") from exc

    def record_uncertified(self, party: Party, *, label: str, reason: str) -> None:
        """Record a message ``party`` receives that is outside the differential-privacy guarantee.

        The party is then not certified and its ε is infinite (no finite guarantee), whatever else it saw;
        ``reason`` appears in :meth:`notes`. Example: the nominations protocol's ``purchase="winners"``
        request, which tells an owner which of its nominees won.
        """
        p = _party(party)
        for name, value in (("label", label), ("reason", reason)):
            if not isinstance(value, str) or not value:
                raise InvalidParameterError(f"`{name}` must be a non-empty string, got {value!r:.60}", name)
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
        with_auction = _flag(include_auction, "include_auction")
        return [
            e.event for e in self._entries if e.party == p and (with_auction or not isinstance(e.event, AuctionEvent))
        ]

    def certified(self, party: Party) -> bool:
        """False when ``party``'s records hold an uncertified auction (PrivAuction with ε_auc > 0) or a
        message outside the DP guarantee (:meth:`record_uncertified`)."""
        p = _party(party)
        if any(u["party"] == p for u in self._uncertified):
            return False
        return not any(isinstance(e, AuctionEvent) and not e.certified_free for e in self.events(party))

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
        include_auction = _flag(include_auction, "include_auction")
        for party in PARTIES:
            d = given[party]
            d = self._default_delta(party) if d is None else d
            d = _delta(d, "delta_owners" if party == "owners" else "delta_validation")
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
                notes.append(
                    f"{party}: no private releases recorded: eps = 0 ({cert})."
                    if cert == "certified"
                    else f"{party}: no private releases recorded, but a message outside the guarantee: "
                    f"eps = inf ({cert})."
                )
                continue
            rels = ", ".join(self.neighbours(party))  # type: ignore[arg-type]
            what = (
                "one row of D_v (|D_v| public)"
                if party == "validation"
                else "one row of one owner's data D_k (n_k public)"
                if _owner_releases(evs)
                else "one row of the summary D_s (its size public)"
            )
            notes.append(f"{party}: neighbour relation {rels} on {what}; {cert}.")
        if any(isinstance(e.event, GaussianEvent) and e.event.discrete for e in self._entries):
            notes.append(
                "Gaussian releases on a lattice (exact discrete Gaussian) are accounted through their RDP "
                "curve (Canonne, Kamath & Steinke 2020, Prop. 5); basic/advanced/kov add them at their own "
                "epsilon, at delta/2 when pure events are also present."
            )
        for u in self._uncertified:
            notes.append(f"{u['party']}: {u['label']} is OUTSIDE the differential-privacy guarantee: {u['reason']}")
        owner_evs = _private(self.events("owners"))
        if owner_evs and _owner_releases(owner_evs):
            notes.append(
                "owners: each owner's releases are computed from its own rows only, recorded once for all owners "
                "(parallel composition); the rows an owner sells are bought, outside the guarantee."
            )
        elif any(e.party == "owners" and not isinstance(e.event, AuctionEvent) for e in self._entries):
            notes.append("owners: h2 releases are composed over epochs; seed-set-only releases are public and free.")
        if not self.certified("owners") and not any(u["party"] == "owners" for u in self._uncertified):
            notes.append(
                "owners: PrivAuction with eps_auc > 0 is not differentially private as specified "
                "(proof of Theorem 6 is wrong; see dpsumm.accounting.AuctionEvent): no finite "
                "owners' epsilon can be certified."
            )
        elif any(isinstance(e.event, AuctionEvent) for e in self._entries):
            notes.append("owners: every owner asked every round (eps_auc = 0): the requests cost nothing.")
        return notes

    def certification(self) -> Certification:
        """Whether this run is private and certified: :func:`certification` of this ledger."""
        return certification(self)

    def parties(self, delta_owners: float | None = None, delta_validation: float | None = None) -> list[str]:
        """One line per party: its neighbour relation, what its ε bounds and against whom, at the δ it is read at
        (default: the run's budget's, else :data:`DEFAULT_DELTA`)."""
        given = {"owners": delta_owners, "validation": delta_validation}
        return [_party_line(self, p, given[p]) for p in PARTIES]

    def to_dict(self, delta_owners: float | None = None, delta_validation: float | None = None) -> dict[str, Any]:
        """The ledger's dict form, version :data:`LEDGER_SCHEMA_VERSION` (JSON-ready; ``result.privacy`` in files).

        Keys: ``version``; ``seeded``, ``private`` (and ``warning`` when seeded); ``entries`` (party, label,
        round, event with its ``kind``, basic cost); ``uncertified`` (messages outside the DP guarantee);
        ``calibrated_deltas``; ``delta`` (the δ's the totals are read at: the arguments, else the run's,
        else :data:`DEFAULT_DELTA`); ``totals`` and ``owners_excluding_auction`` (ε per accountant);
        ``certified`` (per party); ``certification`` (:func:`certification`); ``notes``. Infinite ε (no
        certified guarantee, or the pure-ε cost of a Gaussian record) appears as ``None``.
        :meth:`from_dict` reads exactly this form back and refuses anything else.
        """
        d_own = self._default_delta("owners") if delta_owners is None else _delta(delta_owners, "delta_owners")
        d_val = (
            self._default_delta("validation")
            if delta_validation is None
            else _delta(delta_validation, "delta_validation")
        )
        out: dict[str, Any] = {"version": LEDGER_SCHEMA_VERSION}
        if self.seeded:
            out["warning"] = _SEEDED_WARNING
        out["seeded"] = self.seeded
        out["private"] = not self.seeded
        out["entries"] = [e.to_dict() for e in self._entries]
        out["uncertified"] = self.uncertified
        out["notes"] = self.notes()
        out["certified"] = {p: self.certified(p) for p in PARTIES}  # type: ignore[arg-type]
        out["certification"] = self.certification().to_dict()
        out["calibrated_deltas"] = None if self.deltas is None else dict(self.deltas)
        tot = self.totals(d_own, d_val)
        out["delta"] = {"owners": d_own, "validation": d_val}
        out["totals"] = {p: {a: _json_number(v) for a, v in t.items()} for p, t in tot.items()}
        h2 = self.totals(d_own, d_val, include_auction=False)["owners"]
        out["owners_excluding_auction"] = {a: _json_number(v) for a, v in h2.items()}
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Ledger:
        """The ledger a :meth:`to_dict` dict describes, validated strictly.

        Every key, type and figure is checked against the schema of version :data:`LEDGER_SCHEMA_VERSION`:
        unknown or missing keys, a wrong type (a string ``"false"`` is not a bool), an unsupported version,
        and totals, costs, flags or notes that differ from what the entries give are refused.

        Raises
        ------
        dpsumm.errors.LedgerFormatError
            The dict is not one :meth:`to_dict` writes; ``where`` names the offending value.
        """
        ledger: Ledger = ledger_from_dict(cls, data)
        return ledger

    def table(self, delta_owners: float | None = None, delta_validation: float | None = None) -> str:
        """A plain-text table of ε per party and accountant (default δ's: the run's budget's, else
        :data:`DEFAULT_DELTA`), then what each party's ε is relative to, and the notes."""
        d_own = self._default_delta("owners") if delta_owners is None else _delta(delta_owners, "delta_owners")
        d_val = (
            self._default_delta("validation")
            if delta_validation is None
            else _delta(delta_validation, "delta_validation")
        )
        tot = self.totals(d_own, d_val)
        h2 = self.totals(d_own, d_val, include_auction=False)["owners"]
        rows = [
            ("owners", d_own, tot["owners"]),
            ("owners, h2 only", d_own, h2),
            ("validation", d_val, tot["validation"]),
        ]
        if h2 == tot["owners"]:
            rows.pop(1)
        parties = self.parties(
            d_own if delta_owners is not None else None, d_val if delta_validation is not None else None
        )
        text = _format_table(rows, parties + self.notes())
        text = f"privacy: {self.certification().status}\n" + text
        if self.seeded:
            text = f"*** {_SEEDED_WARNING} ***\n" + text
        return text

    def report(
        self, accessed: Access | None = None, delta_owners: float | None = None, delta_validation: float | None = None
    ) -> str:
        """:meth:`table`, then what the trusted aggregator saw (``result.accessed``), and the verdict.

        The text the CLI prints after a run (``dpsumm summarize``, ``dpsumm flower --run``).
        """
        if accessed is not None and not isinstance(accessed, Access):
            raise InvalidParameterError(
                f"`accessed` must be a dpsumm.results.Access (a result's `accessed`) or None, got "
                f"{type(accessed).__name__}",
                "accessed",
            )
        lines = [self.table(delta_owners, delta_validation)]
        if accessed is not None:
            lines.append(aggregator_line(accessed))
        lines.append(verdict_line(self.certification()))
        return "\n".join(lines)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Ledger):
            return NotImplemented
        return (
            self._entries == other._entries
            and self._uncertified == other._uncertified
            and self.seeded == other.seeded
            and self.deltas == other.deltas
        )

    __hash__ = None  # type: ignore[assignment]

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        counts = {p: sum(1 for e in self._entries if e.party == p) for p in PARTIES}
        return (
            f"Ledger(entries={len(self._entries)}, owners={counts['owners']}, "
            f"validation={counts['validation']}, {self.certification().status})"
        )


# ----------------------------------------------------------------------------------------------
# certification: the one decision every surface prints
# ----------------------------------------------------------------------------------------------

CertificationStatus = Literal["not private", "seeded: NOT private", "private, certified", "private, NOT certified"]


@dataclass(frozen=True)
class Certification:
    """Whether a run's result is a differentially private release and whether every party is certified.

    Built by :func:`certification` from the run's ledger alone; every surface (the result's repr and
    ``privacy_status()``, the ledger's table and dict form, the CLI's report.json, Flower's saved results,
    :class:`~dpsumm.accounting.BudgetAccountant`) prints or checks this object.

    Attributes
    ----------
    status : str
        ``"not private"`` (no ledger: a non-private method or the exact validation release),
        ``"seeded: NOT private"``, ``"private, certified"`` or ``"private, NOT certified"``.
    private : bool
        A ledger exists and the noise came from OS entropy (not seeded).
    certified : bool
        ``private`` and every party has a finite, certified ε.
    seeded : bool
    parties : tuple of (str, bool)
        Per party, whether its ε is certified (empty without a ledger).
    reasons : tuple of str
        Why the result is not private or not certified (empty when certified).
    """

    status: CertificationStatus
    private: bool
    certified: bool
    seeded: bool
    parties: tuple[tuple[str, bool], ...]
    reasons: tuple[str, ...]

    def __str__(self) -> str:
        return self.status

    def party(self, name: str) -> bool:
        """Whether ``name``'s ε is certified (False without a ledger)."""
        return dict(self.parties).get(_party(name), False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"status", "private", "certified", "seeded", "parties": {party: bool}, "reasons"}``."""
        return {
            "status": self.status,
            "private": self.private,
            "certified": self.certified,
            "seeded": self.seeded,
            "parties": dict(self.parties),
            "reasons": list(self.reasons),
        }


_NO_LEDGER_REASON = (
    "no privacy ledger: the method releases data without differential privacy (a non-private "
    "method, or the nominations protocol's validation_release='exact')"
)


def certification(ledger: Ledger | dict[str, Any] | None, *, seeded: bool = False) -> Certification:
    """Whether the result a ``ledger`` belongs to is private and certified: the one decision every surface uses.

    Parameters
    ----------
    ledger : Ledger, its dict form (:meth:`Ledger.to_dict`) or None
        The run's ``result.privacy``. None (no ledger) means the run was not private. A dict is read with
        the strict :meth:`Ledger.from_dict` first.
    seeded : bool, default False
        The run was seeded even if its ledger does not say so (``result.seeded``); a ledger marked seeded
        is seeded whatever this says.

    Returns
    -------
    Certification
        ``private`` only for a ledger from OS entropy; ``certified`` only when, in addition, no party saw a
        message outside the guarantee (the nominations protocol's ``purchase="winners"`` request) or an
        uncertified mechanism (the paper's PrivAuction with ε_auc > 0, e.g. Theorem 6's auction).

    Examples
    --------
    >>> certification(None).status
    'not private'
    >>> led = Ledger()
    >>> led.record_uncertified("owners", label="winners", reason="depends on the others' data")
    >>> certification(led).status, certification(led).party("validation")
    ('private, NOT certified', True)
    """
    seeded = _flag(seeded, "seeded")
    if isinstance(ledger, dict):
        ledger = _ledger_of(ledger, "ledger")
    if ledger is None:
        return Certification(NOT_PRIVATE, False, False, bool(seeded), (), (_NO_LEDGER_REASON,))
    if not isinstance(ledger, Ledger):
        raise InvalidParameterError(
            f"`ledger` must be a dpsumm.Ledger, its dict form or None, got {type(ledger).__name__}", "ledger"
        )
    parties = tuple((p, ledger.certified(p)) for p in PARTIES)  # type: ignore[arg-type]
    reasons: list[str] = []
    is_seeded = bool(seeded) or ledger.seeded
    if is_seeded:
        reasons.append(_SEEDED_WARNING)
    for p, ok in parties:
        if ok:
            continue
        why = [f"{u['label']}: {u['reason']}" for u in ledger.uncertified if u["party"] == p]
        if any(isinstance(e, AuctionEvent) and not e.certified_free for e in ledger.events(p)):  # type: ignore[arg-type]
            why.append(
                "the paper's PrivAuction with eps_auc > 0 is not differentially private as specified "
                "(see dpsumm.accounting.AuctionEvent)"
            )
        reasons.append(f"{p}: no finite epsilon is certified ({'; '.join(why)})")
    certified = not is_seeded and all(ok for _, ok in parties)
    if is_seeded:
        status: CertificationStatus = SEEDED
    else:
        status = CERTIFIED if certified else NOT_CERTIFIED
    return Certification(status, not is_seeded, certified, is_seeded, parties, tuple(reasons))


def _ledger_of(data: dict[str, Any], argument: str) -> Ledger:
    """:meth:`Ledger.from_dict` of an argument's dict form; a :class:`LedgerFormatError` names ``argument``."""
    try:
        return Ledger.from_dict(data)
    except LedgerFormatError as exc:
        err = LedgerFormatError("", exc.where, argument)
        err.args = (str(exc).replace("`data`", f"`{argument}`", 1),)
        raise err from exc


def verdict_line(cert: Certification) -> str:
    """The one-line verdict the CLI prints under a run's privacy table."""
    if cert.certified:
        return "certified: yes, for every party."
    if cert.status == NOT_PRIVATE:
        return "certified: NO (not private: no party's privacy is protected or certified)."
    if cert.seeded:
        return "certified: NO (seeded run): its noise is reproducible, so the run is NOT private."
    bad = [p for p, ok in cert.parties if not ok]
    return f"certified: NO ({', '.join(bad)}: no finite epsilon is certified; see the notes)."


def aggregator_line(accessed: Access) -> str:
    """What the trusted aggregator saw, from ``result.accessed`` (its parsimony)."""
    per = ", ".join(f"{k} {v}" for k, v in accessed.per_owner.items())
    parts = [f"aggregator saw: {accessed.total} raw owner rows" + (f" ({per})" if per else "")]
    if accessed.hashes:
        parts.append(f"{accessed.hashes} h1 hashes of nominated rows")
    if accessed.hashed_rows:
        unbought = accessed.hashed_rows - accessed.total
        parts.append(
            f"the h1 hashes of {accessed.hashed_rows} rows"
            + (f" ({unbought} of them not bought)" if unbought > 0 else " (only the rows bought)")
        )
    parts.append(f"|D_v| = {accessed.validation_rows}")
    if accessed.validation_raw_rows:
        parts.append(f"{accessed.validation_raw_rows} raw validation rows (the exact mean and D_v itself)")
    return "; ".join(parts) + ". The aggregator is trusted: no epsilon covers what it sees."


def privacy_text(result: Any, delta_owners: float | None = None, delta_validation: float | None = None) -> str:
    """Everything a user should read about a result's privacy, in the words every surface uses.

    ``result`` is a :class:`~dpsumm.SummaryResult` (its ``privacy``, ``accessed`` and ``seeded``). For a
    private run: :meth:`Ledger.report` at the given δ's (default: the run's, else :data:`DEFAULT_DELTA`).
    """
    if not hasattr(result, "privacy"):
        raise InvalidParameterError(
            f"`result` must be a dpsumm.SummaryResult (with a privacy ledger or None), got {type(result).__name__}",
            "result",
        )
    for name, d in (("delta_owners", delta_owners), ("delta_validation", delta_validation)):
        if d is not None:
            _delta(d, name)  # checked even when a non-private result does not read it
    led: Ledger | None = _ledger_of(result.privacy, "result") if isinstance(result.privacy, dict) else result.privacy
    cert = certification(led, seeded=bool(getattr(result, "seeded", False)))
    if led is None:
        lines = [f"privacy: {cert.status} (method {getattr(result, 'method', '?')!r})"]
        accessed = getattr(result, "accessed", None)
        if accessed is not None:
            lines.append(aggregator_line(accessed))
        lines.append(verdict_line(cert))
        return "\n".join(lines)
    if cert.seeded and not led.seeded:
        led = Ledger.from_dict(led.to_dict())
        led.mark_seeded()
    return led.report(getattr(result, "accessed", None), delta_owners, delta_validation)


def _party_line(ledger: Ledger, party: str, delta: float | None = None) -> str:
    """What ``party``'s ε is relative to, against whom, and at which δ (``delta``, the one asked for; else the
    run's budget's, else :data:`DEFAULT_DELTA`)."""
    if delta is not None:
        d, src = _delta(delta, f"delta_{party}"), "as asked"
    else:
        d = ledger._default_delta(party)
        src = (
            "the run's budget"
            if ledger.deltas is not None and ledger.deltas.get(party) is not None
            else "dpsumm.accounting.DEFAULT_DELTA"
        )
    evs = _private(ledger.events(party))  # type: ignore[arg-type]
    rels = ", ".join(ledger.neighbours(party)) or "replace-one"  # type: ignore[arg-type]
    if party == "validation":
        return (
            f"validation: {rels} of one row of the consumer's D_v (|D_v| public); eps bounds what the owners "
            f"(and anyone they tell) learn about that row from the releases of D_v; read at delta {d:g} "
            f"({src})."
        )
    if not evs:
        return (
            f"owners: eps bounds what an owner's view (every message it receives) reveals about one row of "
            f"another owner's data or of D_v; no release computed from them reaches an owner (eps = 0) unless "
            f"a message is outside the guarantee (see below); read at delta {d:g} ({src})."
        )
    if _owner_releases(evs):
        return (
            f"owners: {rels} of one row of one owner's data D_k (n_k public); eps bounds what the other owners "
            f"and the consumer learn about that row from that owner's releases (not from the rows it sells); "
            f"read at delta {d:g} ({src})."
        )
    return (
        f"owners: {rels} of one row of the summary D_s (its size public in every epoch); eps bounds what "
        f"each owner learns from the releases computed from D_s (the other owners' rows in it); read at "
        f"delta {d:g} ({src})."
    )


def _owner_releases(events: Sequence[Event]) -> bool:
    """Whether the owners' private records are the owners' own releases (the nominations protocol's sketches and
    label counts: Gaussian events, each owner's computed from its rows only) rather than h2 of the summary D_s
    (the paper's protocol: MWEM steps and auction rounds)."""
    return bool(events) and all(isinstance(e, GaussianEvent) for e in events)


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
