"""The strict reader of a ledger's dict form (:meth:`Ledger.from_dict`), schema version 1.

A dict is accepted only when it is exactly what :meth:`Ledger.to_dict` writes for the ledger it describes:
every key known and present, every value of its type (``bool`` is not an ``int``, ``"false"`` is not a bool),
and every derived figure (costs, totals, flags, certification, notes) equal to what the entries give.
Anything else raises :class:`~dpsumm.errors.LedgerFormatError` naming the offending value.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import TYPE_CHECKING, Any

from ..errors import DpsummError, LedgerFormatError
from ._checks import PARTIES
from .composition import ACCOUNTANTS
from .events import AuctionEvent, ExponentialEvent, GaussianEvent, LaplaceEvent

if TYPE_CHECKING:
    from .ledger import Ledger

#: Most entries (or uncertified messages) a ledger dict may hold: a run records a handful per epoch.
MAX_RECORDS = 100_000
#: Relative tolerance when stored totals are compared with those recomputed (other dp-accounting builds).
_RTOL = 1e-6

_KINDS: dict[str, type] = {
    "LaplaceEvent": LaplaceEvent,
    "ExponentialEvent": ExponentialEvent,
    "AuctionEvent": AuctionEvent,
    "GaussianEvent": GaussianEvent,
}
_TOP_KEYS = {
    "version",
    "seeded",
    "private",
    "entries",
    "uncertified",
    "notes",
    "certified",
    "certification",
    "calibrated_deltas",
    "delta",
    "totals",
    "owners_excluding_auction",
}


def _type_name(v: object) -> str:
    return "null" if v is None else type(v).__name__


def _fail(where: str, msg: str) -> LedgerFormatError:
    return LedgerFormatError(msg, where)


def _dict(v: object, where: str, keys: set[str], optional: frozenset[str] = frozenset()) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise _fail(where, f"expected an object, got {_type_name(v)}")
    bad = [k for k in v if not isinstance(k, str)]
    if bad:
        raise _fail(where, f"keys must be strings, got {bad[0]!r}")
    unknown = sorted(set(v) - keys - optional)
    if unknown:
        raise _fail(where, f"unknown key(s) {', '.join(map(repr, unknown))}")
    missing = sorted(keys - set(v))
    if missing:
        raise _fail(where, f"missing key(s) {', '.join(map(repr, missing))}")
    return v


def _list(v: object, where: str) -> list[Any]:
    if not isinstance(v, list):
        raise _fail(where, f"expected a list, got {_type_name(v)}")
    if len(v) > MAX_RECORDS:
        raise _fail(where, f"holds {len(v)} records, more than the {MAX_RECORDS} a ledger may hold")
    return v


def _bool(v: object, where: str) -> bool:
    if not isinstance(v, bool):
        raise _fail(where, f"expected true or false, got {_type_name(v)} {v!r}")
    return v


def _int(v: object, where: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise _fail(where, f"expected an integer, got {_type_name(v)} {v!r}")
    return v


def _real(v: object, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _fail(where, f"expected a number, got {_type_name(v)} {v!r}")
    try:
        x = float(v)
    except OverflowError:
        raise _fail(where, f"number {v!r} is out of range") from None
    if not math.isfinite(x):
        raise _fail(where, f"expected a finite number, got {v!r}")
    return x


def _str(v: object, where: str, *, nonempty: bool = False) -> str:
    if not isinstance(v, str):
        raise _fail(where, f"expected a string, got {_type_name(v)}")
    if nonempty and not v:
        raise _fail(where, "expected a non-empty string")
    return v


def _optional_real(v: object, where: str) -> float | None:
    return None if v is None else _real(v, where)


def _delta_value(v: object, where: str) -> float:
    x = _real(v, where)
    if not 0.0 < x < 1.0:
        raise _fail(where, f"a delta must lie in (0, 1), got {v!r}")
    return x


def _check_field(v: object, annotation: str, where: str) -> object:
    """``v`` checked against a dataclass field's annotation (the events' annotations are strings)."""
    ann = annotation.replace(" ", "")
    if ann == "bool":
        return _bool(v, where)
    if ann == "int":
        return _int(v, where)
    if ann == "float":
        return _real(v, where)
    if ann == "float|None":
        return _optional_real(v, where)
    if ann in ("str", "Neighbour"):
        return _str(v, where)
    raise _fail(where, f"unsupported field type {annotation}")  # pragma: no cover - a new event field


def _event(v: object, where: str) -> Any:
    if not isinstance(v, dict):
        raise _fail(where, f"expected an object, got {_type_name(v)}")
    kind = v.get("kind")
    if not isinstance(kind, str) or kind not in _KINDS:
        raise _fail(f"{where}.kind", f"must be one of {', '.join(map(repr, _KINDS))}, got {kind!r}")
    cls = _KINDS[kind]
    fields = {f.name: f for f in dataclasses.fields(cls)}
    _dict(v, where, set(fields) | {"kind"})
    kwargs = {name: _check_field(v[name], str(f.type), f"{where}.{name}") for name, f in fields.items()}
    try:
        return cls(**kwargs)
    except DpsummError as exc:
        raise _fail(where, f"bad {kind}: {exc}") from exc


def _same(stored: object, computed: object) -> bool:
    """Equal, with numbers compared to a relative tolerance (``None`` stands for infinity)."""
    if isinstance(computed, dict):
        return (
            isinstance(stored, dict)
            and set(stored) == set(computed)
            and all(_same(stored[k], computed[k]) for k in computed)
        )
    if isinstance(computed, list):
        return (
            isinstance(stored, list)
            and len(stored) == len(computed)
            and all(_same(a, b) for a, b in zip(stored, computed))
        )
    if isinstance(computed, bool) or computed is None or isinstance(computed, str):
        return type(stored) is type(computed) and stored == computed
    if isinstance(computed, numbers.Real):
        if isinstance(stored, bool) or not isinstance(stored, (int, float)):
            return False
        a, b = float(stored), float(computed)
        return a == b or abs(a - b) <= _RTOL * max(abs(a), abs(b))
    return stored == computed  # pragma: no cover


def ledger_from_dict(cls: type[Ledger], data: object) -> Ledger:
    """The ledger ``data`` describes (see the module docstring), or :class:`LedgerFormatError`."""
    from .ledger import _SEEDED_WARNING, LEDGER_SCHEMA_VERSION

    if not isinstance(data, dict):
        raise _fail("", f"expected a dict from Ledger.to_dict(), got {_type_name(data)}")
    version = data.get("version")
    if "version" not in data:
        raise _fail("version", "missing: the dict predates the versioned schema (write it again with this dpsumm)")
    if _int(version, "version") != LEDGER_SCHEMA_VERSION:
        raise _fail("version", f"schema version {version} is not supported (this dpsumm reads {LEDGER_SCHEMA_VERSION})")
    seeded = _bool(data.get("seeded"), "seeded") if "seeded" in data else None
    _dict(data, "", _TOP_KEYS, frozenset({"warning"}) if seeded else frozenset())
    assert seeded is not None
    if seeded and data.get("warning") != _SEEDED_WARNING:
        raise _fail("warning", f"a seeded ledger carries the warning {_SEEDED_WARNING!r}, got {data.get('warning')!r}")
    if _bool(data["private"], "private") != (not seeded):
        raise _fail(
            "private", f"is {data['private']} but seeded is {seeded}: a ledger is private exactly when not seeded"
        )

    cal = data["calibrated_deltas"]
    deltas: dict[str, float | None] | None = None
    if cal is not None:
        _dict(cal, "calibrated_deltas", set(PARTIES))
        deltas = {p: None if cal[p] is None else _delta_value(cal[p], f"calibrated_deltas.{p}") for p in PARTIES}
    led = cls(seeded=seeded, deltas=deltas)

    for i, rec in enumerate(_list(data["entries"], "entries")):
        w = f"entries[{i}]"
        _dict(rec, w, {"party", "label", "round", "event", "cost"})
        party = _str(rec["party"], f"{w}.party")
        if party not in PARTIES:
            raise _fail(f"{w}.party", f"must be one of {', '.join(map(repr, PARTIES))}, got {party!r}")
        label = _str(rec["label"], f"{w}.label", nonempty=True)
        rnd = rec["round"]
        if rnd is not None and _int(rnd, f"{w}.round") < 0:
            raise _fail(f"{w}.round", f"must be null or an integer >= 0, got {rnd}")
        event = _event(rec["event"], f"{w}.event")
        try:
            entry = led.record(party, event, label=label, round=rnd)  # type: ignore[arg-type]
        except DpsummError as exc:
            raise _fail(w, str(exc)) from exc
        cost = None if math.isinf(entry.cost) else entry.cost
        if rec["cost"] is not None:
            _real(rec["cost"], f"{w}.cost")
        if not _same(rec["cost"], cost):
            raise _fail(f"{w}.cost", f"is {rec['cost']!r} but the event costs {cost!r}")

    for i, u in enumerate(_list(data["uncertified"], "uncertified")):
        w = f"uncertified[{i}]"
        _dict(u, w, {"party", "label", "reason"})
        party = _str(u["party"], f"{w}.party")
        if party not in PARTIES:
            raise _fail(f"{w}.party", f"must be one of {', '.join(map(repr, PARTIES))}, got {party!r}")
        led.record_uncertified(
            party,
            label=_str(u["label"], f"{w}.label", nonempty=True),  # type: ignore[arg-type]
            reason=_str(u["reason"], f"{w}.reason", nonempty=True),
        )

    dl = _dict(data["delta"], "delta", set(PARTIES))
    d_own = _delta_value(dl["owners"], "delta.owners")
    d_val = _delta_value(dl["validation"], "delta.validation")
    for key in ("totals", "owners_excluding_auction"):
        _check_totals_shape(data[key], key)
    try:
        expected = led.to_dict(d_own, d_val)
    except DpsummError as exc:
        raise _fail("entries", f"the entries cannot be accounted: {exc}") from exc
    except (ArithmeticError, ValueError, MemoryError) as exc:
        raise _fail("entries", f"the entries cannot be accounted ({type(exc).__name__}: {exc})") from exc
    for key in ("certified", "certification", "notes", "totals", "owners_excluding_auction"):
        if not _same(data[key], expected[key]):
            raise _fail(key, f"contradicts the entries: stored {data[key]!r}, the entries give {expected[key]!r}")
    return led


def _check_totals_shape(v: object, where: str) -> None:
    parties = {"owners"} if where == "owners_excluding_auction" else set(PARTIES)
    rows: dict[str, Any] = {"owners": v} if where == "owners_excluding_auction" else _dict(v, where, parties)
    for p, row in rows.items():
        w = where if where == "owners_excluding_auction" else f"{where}.{p}"
        _dict(row, w, set(ACCOUNTANTS))
        for a in ACCOUNTANTS:
            _optional_real(row[a], f"{w}.{a}")
