"""dpsumm.accounting.ledger: totals per party, the text that names relations and deltas, one default delta,
uncertified and seeded marks, and the round trip through pickle and dict.
"""

from __future__ import annotations

import math
import pickle
from fractions import Fraction

import numpy as np
import pytest

import dpsumm
from certification_paths import run_paths
from dpsumm import (
    accounting,
)
from dpsumm import accounting as acc
from refusal import refused


def test_ledger_totals_per_party():
    ledger = acc.Ledger()
    for e in acc.mwem_step_events(0.01, 100):
        ledger.record("validation", e, label="h2(h1(D_v))", round=0)
    for e in acc.mwem_step_events(0.05, 100, public=True):
        ledger.record("owners", e, label="seed", round=1)
    totals = ledger.totals(1e-4, 1e-2)
    assert totals["validation"]["basic"] == pytest.approx(2.0)
    assert totals["owners"]["basic"] == 0.0
    assert len(ledger.entries) == 4
    assert "validation" in ledger.table(1e-4, 1e-2)


RNG = np.random.default_rng(7)


OWNERS = [RNG.uniform(size=(30, 3)) for _ in range(3)]


VALIDATION = RNG.uniform(size=(20, 3))


KW = dict(progress=False, random_state=0)


def _ledger():
    led = acc.Ledger()
    led.record("validation", acc.calibrate_gaussian(1.0, 1e-6, sensitivity=0.1, dim=3).event(), label="g~")
    return led


def test_ledger_table_takes_any_real_delta_and_checks_the_report_arguments():
    led = _ledger()
    assert led.table(Fraction(1, 10**6)) == led.table(1e-6)  # was TypeError in the format string
    refused(lambda: led.table(delta_validation="0.1"), "delta_validation")
    refused(lambda: led.report("x"), "accessed")
    res = dpsumm.summarize(OWNERS, VALIDATION, 5, "uniform", **KW)
    refused(lambda: acc.privacy_text(res, delta_owners="x"), "delta_owners")
    refused(lambda: acc.privacy_text(res, delta_validation=2.0), "delta_validation")


def test_each_party_line_names_the_delta_its_row_is_read_at():
    """A table read at other deltas than the run's says so in each party's line, beside the row it explains."""
    led = nominations_ledger()
    text = led.table(1e-7, 1e-5)
    lines: dict[str, str] = {}
    for ln in text.splitlines():  # each party's own line comes first; the notes follow
        if ln.startswith("* "):
            lines.setdefault(ln[2:].split(":", 1)[0], ln)
    assert "read at delta 1e-05 (as asked)" in lines["validation"]
    assert "read at delta 1e-07 (as asked)" in lines["owners"]
    rows = {ln.split()[0]: ln.split() for ln in text.splitlines()[2:5] if ln.split()}
    assert float(rows["validation"][1]) == 1e-5 and float(rows["owners"][1]) == 1e-7
    default = led.table()
    assert "read at delta 1e-06 (the run's budget)" in default and "(as asked)" not in default
    assert led.epsilon("validation", 1e-5) < led.epsilon("validation", 1e-6)


def nominations_ledger(seeded=False):
    cal = acc.calibrate_gaussian(1.0, 1e-6, sensitivity=2 * math.sqrt(2) / 400, dim=128)
    led = acc.Ledger(seeded=seeded)
    led.record("validation", cal.event(), label="noisy validation mean")
    led.set_deltas(None, 1e-6)
    return led


def test_nominations_ledger_reports_owners_free_and_validation_at_its_delta():
    led = nominations_ledger()
    assert led.certified("owners") and led.certified("validation")
    assert led.epsilon("owners") == 0.0
    assert led.epsilon("validation") == pytest.approx(1.0, abs=1e-6)
    text = led.table()
    assert "1e-06" in text and "NOT private" not in text
    assert "owners: no private releases recorded: eps = 0 (certified)" in text
    assert "neighbour relation replace-one" in text
    d = led.to_dict()
    assert d["certified"] == {"owners": True, "validation": True}
    assert d["delta"]["validation"] == 1e-6 and d["totals"]["owners"]["tight"] == 0.0


def test_uncertified_auction_marks_the_party():
    led = acc.Ledger()
    led.record("owners", acc.AuctionEvent(0.01, 3, 5), label="auction")
    assert not led.certified("owners") and led.certified("validation")
    assert "NOT certified" in led.table()


def test_seeded_ledger_says_so_everywhere():
    led = nominations_ledger(seeded=True)
    assert led.table().startswith("*** seeded run: NOT private")
    assert "NOT private" in repr(led)
    assert "NOT private" in led.to_dict()["warning"]
    plain = nominations_ledger()
    plain.mark_seeded()
    assert plain.seeded


def test_ledger_round_trips_through_pickle_and_dict():
    import json

    led = nominations_ledger(seeded=True)
    for e in acc.mwem_step_events(0.01, 20):
        led.record("owners", e, label="h2(D_s)", round=2)
    led.record("owners", acc.AuctionEvent(0.0, 2, 4, count=3), label="auction")
    again = pickle.loads(pickle.dumps(led))
    assert again == led and again.entries == led.entries
    back = acc.Ledger.from_dict(json.loads(json.dumps(led.to_dict())))
    assert back == led and back.entries == led.entries and back.deltas == led.deltas
    assert back.table() == led.table()
    with pytest.raises(dpsumm.InvalidParameterError):
        acc.Ledger.from_dict({"entries": [{"party": "owners", "label": "x", "event": {"kind": "Magic"}}]})


@pytest.fixture(scope="module")
def results():
    return run_paths()


def test_privacy_text_names_relations_deltas_and_what_the_aggregator_saw(results):
    res = results["certified nominations"]
    text = res.privacy_text()
    assert "privacy: private, certified" in text.splitlines()[0]
    assert "validation: replace-one of one row of the consumer's D_v" in text
    assert "owners:" in text and "read at delta" in text
    assert f"aggregator saw: {res.accessed.total} raw owner rows" in text
    assert f"|D_v| = {res.accessed.validation_rows}" in text
    # the default purchase's owners release counts per cell: their relation, and the delta both parties are read at
    # (the run's budgets)
    assert "owners: replace-one of one row of one owner's data D_k" in text
    assert text.count(f"read at delta {accounting.DEFAULT_DELTA:g} (the run's budget)") == 2


def test_one_default_delta():
    led = accounting.Ledger()
    for e in accounting.mwem_step_events(0.01, 10):
        led.record("validation", e, label="h2")
    d = led.to_dict()
    assert d["delta"] == {"owners": accounting.DEFAULT_DELTA, "validation": accounting.DEFAULT_DELTA}
    assert led.epsilon("validation") == led.epsilon("validation", accounting.DEFAULT_DELTA)
