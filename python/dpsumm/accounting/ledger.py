"""The ledger: every privacy-relevant release of one run, by party, and its text and JSON forms."""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidParameterError
from ._checks import AccountantName, PARTIES, Party, _delta, _party
from .events import AuctionEvent, Event, ExponentialEvent, GaussianEvent, LaplaceEvent, _EVENT_TYPES, _private
from .composition import ACCOUNTANTS, _accountant_name


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
