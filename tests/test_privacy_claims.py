"""Privacy claims cannot lie: one certification decides, every surface prints it; the ledger's dict form is
read strictly (versioned schema, types, consistency), including hypothesis-generated dicts."""

from __future__ import annotations

import copy
import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpsumm
from dpsumm import accounting
from dpsumm.accounting.ledger import CERTIFIED, NOT_CERTIFIED, NOT_PRIVATE, SEEDED
from dpsumm.errors import LedgerFormatError

# ---------------------------------------------------------------------------------------------- the paths


def _data():
    rng = np.random.default_rng(0)
    owners = [dpsumm.Owner(rng.normal(loc=k * 0.7, scale=0.5, size=(40, 4)), labels=np.full(40, k), name=f"o{k}")
              for k in range(3)]
    validation = rng.normal(loc=1.0, scale=0.5, size=(30, 4))
    seed_set = rng.normal(size=(12, 4))
    return owners, validation, seed_set


RUN = dict(gamma=0.3, progress=False)
LABELS = dpsumm.Nominations(dim=32, purchase=dpsumm.ByLabel(label_set=(0, 1, 2)))

# Each path: (how to run it, the status every surface must print).
PATHS = {
    "certified nominations": (lambda o, v, s: dpsumm.summarize(o, v, 6, dpsumm.Nominations(dim=32), **RUN), CERTIFIED),
    "purchase='winners'": (
        lambda o, v, s: dpsumm.summarize(o, v, 6, dpsumm.Nominations(dim=32, purchase=dpsumm.Winners()), **RUN),
        NOT_CERTIFIED),
    "paper, Theorem-6 auction": (
        lambda o, v, s: dpsumm.summarize(o, v, 5, dpsumm.PaperProtocol(dim=16, epsilon_auction="theorem6"),
                                         seed_set=s, **RUN),
        NOT_CERTIFIED),
    "seeded": (lambda o, v, s: dpsumm.summarize(o, v, 6, dpsumm.Nominations(dim=32), random_state=0, **RUN), SEEDED),
    # The owner-release purchase: certified by default, NOT private when seeded, on every surface.
    "purchase='labels'": (lambda o, v, s: dpsumm.summarize(o, v, 6, LABELS, validation_labels=np.arange(len(v)) % 3,
                                                           **RUN), CERTIFIED),
    "seeded labels": (lambda o, v, s: dpsumm.summarize(o, v, 6, LABELS, validation_labels=np.arange(len(v)) % 3,
                                                       random_state=0, **RUN), SEEDED),
    "validation_release='exact'": (
        lambda o, v, s: dpsumm.summarize(o, v, 6, dpsumm.Nominations(dim=32, validation_release="exact"), **RUN),
        NOT_PRIVATE),
    "non-private method": (lambda o, v, s: dpsumm.summarize(o, v, 6, "uniform", **RUN), NOT_PRIVATE),
}


@pytest.fixture(scope="module")
def results():
    owners, validation, seed_set = _data()
    return {name: run(owners, validation, seed_set) for name, (run, _) in PATHS.items()}


def _surfaces(res, tmp_path):
    """Every place a user reads whether a result is private and certified: name -> what it says."""
    out = {
        "repr": repr(res),
        "privacy_status()": res.privacy_status(),
        "certification()": res.certification().status,
        "privacy_text()": res.privacy_text().splitlines()[0 if res.privacy is None else (1 if res.privacy.seeded else 0)],
    }
    if res.privacy is not None:
        out["ledger.table()"] = res.privacy.table()
        d = json.loads(json.dumps(res.privacy.to_dict()))
        out["ledger.to_dict()"] = d["certification"]["status"]
        out["Ledger.from_dict(to_dict())"] = accounting.Ledger.from_dict(d).certification().status
    pytest.importorskip("flwr")
    from dpsumm.flower.server_app import load_result, save_result

    back = load_result(save_result(res, tmp_path / f"r{abs(hash(repr(res)))}.npz"))
    out["flower save/load: privacy_status()"] = back.privacy_status()
    out["flower save/load: repr"] = repr(back)
    return out


@pytest.mark.parametrize("path", list(PATHS))
def test_every_surface_says_what_the_ledger_certifies(path, results, tmp_path):
    res, status = results[path], PATHS[path][1]
    assert res.certification().status == status
    for surface, text in _surfaces(res, tmp_path).items():
        assert status in text, f"{path}: {surface} says {text!r}, not {status!r}"
        others = {CERTIFIED, NOT_CERTIFIED, SEEDED, NOT_PRIVATE} - {status}
        # "private, certified" is not a substring of the others, and vice versa
        assert not any(o in text for o in others if o not in status), f"{path}: {surface} also says {text!r}"
    verdict = res.privacy_text().splitlines()[-1]
    assert verdict.startswith("certified: yes" if status == CERTIFIED else "certified: NO")


@pytest.mark.parametrize("path", [p for p, (_, s) in PATHS.items() if s != CERTIFIED])
def test_budget_accountant_refuses_every_uncertified_run(path, results):
    res = results[path]
    acct = accounting.BudgetAccountant(epsilon=10.0, delta=1e-6, validation_epsilon=10.0, validation_delta=1e-6)
    if res.privacy is None:
        with pytest.raises(dpsumm.InvalidParameterError):
            acct.spend(res.privacy)
    else:
        with pytest.raises(dpsumm.PrivacyBudgetError, match="cannot be booked"):
            acct.spend(res.privacy)
    assert acct.spent == [] and acct.epsilon_spent("owners") == 0.0


def test_budget_accountant_books_a_certified_run(results):
    acct = accounting.BudgetAccountant(validation_epsilon=10.0, validation_delta=1e-6)
    acct.spend(results["certified nominations"].privacy)
    assert len(acct.spent) == 1 and 0 < acct.epsilon_spent("validation") < 10


def test_winners_owners_are_infinite_everywhere(results):
    led = results["purchase='winners'"].privacy
    assert led.epsilon("owners") == math.inf and led.totals()["owners"]["tight"] == math.inf
    d = led.to_dict()
    assert d["totals"]["owners"]["tight"] is None and d["certified"] == {"owners": False, "validation": True}
    assert d["certification"]["parties"] == {"owners": False, "validation": True}
    assert any("winners" in r.lower() for r in d["certification"]["reasons"])


def test_cli_report_json_says_so(tmp_path, capsys):
    owners, validation, _ = _data()
    paths = []
    for k, o in enumerate(owners):
        np.save(tmp_path / f"o{k}.npy", o.data)
        paths.append(str(tmp_path / f"o{k}.npy"))
    np.save(tmp_path / "v.npy", validation)
    from dpsumm.cli import main

    out = tmp_path / "out"
    code = main(["summarize", "--owners", *paths, "--validation", str(tmp_path / "v.npy"), "--size", "6",
                 "--purchase", "winners", "--dim", "32", "--gamma", "0.3", "--out", str(out), "--no-progress"])
    assert code == 0, capsys.readouterr().err
    report = json.loads((out / "report.json").read_text())
    assert report["certified"] is False
    assert report["privacy"]["certification"]["status"] == NOT_CERTIFIED
    assert accounting.Ledger.from_dict(report["privacy"]).certification().status == NOT_CERTIFIED


def test_privacy_text_names_relations_deltas_and_what_the_aggregator_saw(results):
    res = results["certified nominations"]
    text = res.privacy_text()
    assert "privacy: private, certified" in text.splitlines()[0]
    assert "validation: replace-one of one row of the consumer's D_v" in text
    assert "owners:" in text and "read at delta" in text
    assert f"aggregator saw: {res.accessed.total} raw owner rows" in text
    assert f"|D_v| = {res.accessed.validation_rows}" in text
    # the delta the table is read at: the run's (the validation budget's), and the one default for the owners
    assert f"read at delta {accounting.DEFAULT_DELTA:g} (dpsumm.accounting.DEFAULT_DELTA)" in text
    assert "(the run's budget)" in text


def test_one_default_delta():
    led = accounting.Ledger()
    for e in accounting.mwem_step_events(0.01, 10):
        led.record("validation", e, label="h2")
    d = led.to_dict()
    assert d["delta"] == {"owners": accounting.DEFAULT_DELTA, "validation": accounting.DEFAULT_DELTA}
    assert led.epsilon("validation") == led.epsilon("validation", accounting.DEFAULT_DELTA)


# ---------------------------------------------------------------------------------------------- from_dict


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


json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**20), st.floats(allow_nan=True),
                      st.text(max_size=8), st.sampled_from(["false", "true", "owners", "validation", "LaplaceEvent",
                                                            "GaussianEvent", "replace-one"]))
json_value = st.recursive(json_leaf, lambda c: st.one_of(st.lists(c, max_size=3),
                                                          st.dictionaries(st.text(max_size=8), c, max_size=4)),
                          max_leaves=12)


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


@pytest.mark.parametrize("tamper", ["certification", "seeded", "uncertified", "garbage"])
def test_flower_result_files_that_lie_are_refused(results, tmp_path, tamper):
    pytest.importorskip("flwr")
    from dpsumm.flower.server_app import load_result, save_result

    p = save_result(results["purchase='winners'"], tmp_path / "r.npz")
    if tamper == "garbage":
        p.write_bytes(b"PK\x03\x04" + bytes(200))
    else:
        with np.load(p, allow_pickle=False) as z:
            arrays = dict(z)
        report = json.loads(str(arrays["report"]))
        if tamper == "certification":
            report["certification"]["status"] = CERTIFIED
        elif tamper == "seeded":
            report["seeded"] = "false"
        else:
            report["privacy"]["uncertified"] = []
        arrays["report"] = np.array(json.dumps(report))
        np.savez(p, **arrays)
    with pytest.raises(dpsumm.DpsummError):
        load_result(p)
