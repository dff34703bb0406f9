"""dpsumm.accounting._schema (Ledger.from_dict): a ledger's dict form round-trips, and a dict that lies (a tampered
value, a dropped flag, random JSON) is refused with LedgerFormatError or changes nothing.
"""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpsumm
from dpsumm import accounting
from dpsumm.accounting.ledger import CERTIFIED
from dpsumm.errors import LedgerFormatError


def _ledgers():
    a = accounting.Ledger()
    cal = accounting.calibrate_gaussian(1.0, 1e-6, sensitivity=0.01, dim=16)
    a.record("validation", cal.event(), label="g~")
    a.set_deltas(validation=1e-6)
    b = accounting.schedule_ledger(accounting.paper_schedule(4, 3, 8))
    b.mark_seeded()
    c = accounting.Ledger()
    c.record("owners", accounting.AuctionEvent(0.1, 2, 3, count=3), label="auction", round=2)
    c.record("owners", accounting.LaplaceEvent(0.5, 2.0, "replace-one", granularity=0.5), label="lap")
    c.record_uncertified("owners", label="winners", reason="tells an owner which nominee won")
    return [a, b, c]


@pytest.mark.parametrize("k", range(3))
def test_round_trip(k):
    led = _ledgers()[k]
    d = json.loads(json.dumps(led.to_dict()))
    back = accounting.Ledger.from_dict(d)
    assert back == led and back.to_dict() == led.to_dict() and back.table() == led.table()
    assert d["version"] == accounting.LEDGER_SCHEMA_VERSION


TAMPER = [
    ("string boolean", lambda d: d["entries"][0]["event"].__setitem__("public", "false"), "entries[0].event.public"),
    ("seeded as string", lambda d: d.__setitem__("seeded", "false"), "seeded"),
    ("unknown key", lambda d: d.__setitem__("extra", 1), ""),
    ("missing key", lambda d: d.pop("totals"), ""),
    ("missing entry key", lambda d: d["entries"][0].pop("label"), "entries[0]"),
    ("version", lambda d: d.__setitem__("version", 2), "version"),
    ("no version", lambda d: d.pop("version"), "version"),
    ("bool version", lambda d: d.__setitem__("version", True), "version"),
    ("totals lie", lambda d: d["totals"]["validation"].__setitem__("tight", 0.001), "totals"),
    ("certified lies", lambda d: d["certified"].__setitem__("validation", False), "certified"),
    ("certification lies", lambda d: d["certification"].__setitem__("status", CERTIFIED + "!"), "certification"),
    ("private lies", lambda d: d.__setitem__("private", False), "private"),
    ("cost lies", lambda d: d["entries"][0].__setitem__("cost", 0.0), "entries[0].cost"),
    ("count as float", lambda d: d["entries"][0]["event"].__setitem__("count", 1.0), "entries[0].event.count"),
    ("bad kind", lambda d: d["entries"][0]["event"].__setitem__("kind", "Nope"), "entries[0].event.kind"),
    ("nan", lambda d: d["delta"].__setitem__("owners", float("nan")), "delta.owners"),
    ("bad party", lambda d: d["entries"][0].__setitem__("party", "aggregator"), "entries[0].party"),
    ("entries not a list", lambda d: d.__setitem__("entries", {}), "entries"),
    ("notes edited", lambda d: d["notes"].append("all good"), "notes"),
    ("event rejects", lambda d: d["entries"][0]["event"].__setitem__("noise_multiplier", -1.0), "entries[0].event"),
    ("negative round", lambda d: d["entries"][0].__setitem__("round", -1), "entries[0].round"),
]


@pytest.mark.parametrize("name,tamper,where", TAMPER, ids=[t[0] for t in TAMPER])
def test_tampered_dicts_are_refused(name, tamper, where):
    d = json.loads(json.dumps(_ledgers()[0].to_dict()))
    tamper(d)
    with pytest.raises(LedgerFormatError) as err:
        accounting.Ledger.from_dict(d)
    assert err.value.where == where and err.value.argument == "data"
    assert isinstance(err.value, dpsumm.DpsummError)


def test_uncertified_dropped_is_caught():
    d = json.loads(json.dumps(_ledgers()[2].to_dict()))
    d["uncertified"] = []
    with pytest.raises(LedgerFormatError):
        accounting.Ledger.from_dict(d)


def test_seeded_flag_cannot_be_dropped():
    d = json.loads(json.dumps(_ledgers()[1].to_dict()))
    d["seeded"] = False
    with pytest.raises(LedgerFormatError):
        accounting.Ledger.from_dict(d)


json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 10**20),
    st.floats(allow_nan=True),
    st.text(max_size=8),
    st.sampled_from(["false", "true", "owners", "validation", "LaplaceEvent", "GaussianEvent", "replace-one"]),
)


json_value = st.recursive(
    json_leaf,
    lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.text(max_size=8), c, max_size=4)),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_value)
def test_random_json_is_refused_with_the_typed_error(value):
    with pytest.raises(LedgerFormatError):
        accounting.Ledger.from_dict(value)


def _paths(d, prefix=()):
    if isinstance(d, dict):
        for k, v in d.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            yield from _paths(v, prefix + (i,))
    yield prefix


BASE = [json.loads(json.dumps(led.to_dict())) for led in _ledgers()]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(BASE) - 1), st.data(), json_value)
def test_one_changed_value_is_refused_or_changes_nothing(k, data, value):
    d = copy.deepcopy(BASE[k])
    paths = [p for p in _paths(d) if p]
    path = data.draw(st.sampled_from(paths))
    node = d
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    try:
        led = accounting.Ledger.from_dict(d)
    except LedgerFormatError:
        return
    # Accepted: the dict must be exactly (to the float tolerance) what the ledger writes.
    again = json.loads(json.dumps(led.to_dict(d["delta"]["owners"], d["delta"]["validation"])))
    assert _close(again, d), (path, value)


def _close(a, b):
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        return a == pytest.approx(b, rel=1e-6)
    return type(a) is type(b) and a == b or (isinstance(a, (int, float)) and a == b and not isinstance(b, bool))
