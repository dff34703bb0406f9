"""dpsumm.cli.output: the ledger's lines a run prints (exact, for a ledger written by hand), report.json saying what
the ledger certifies, the summary files written exactly, and the epsilon lines of an experiment."""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

import dpsumm
from dpsumm import accounting
from dpsumm.access import Access
from dpsumm.accounting.ledger import NOT_CERTIFIED, certification
from dpsumm.cli import main
from dpsumm.cli._common import NOT_PRIVATE
from dpsumm.cli.output import build_report, ledger_text, print_epsilon, write_outputs
from dpsumm.errors import LedgerFormatError
from dpsumm.experiments import Record
from dpsumm.methods import DEFAULT_DELTA
from federation_data import _data, blobs

SEEDED_LINE = "seeded run (--random-state): reproducible and NOT private."
#: What the aggregator of the hand-written result saw.
ACCESSED = Access(12, {"owner-0": 5, "owner-1": 7}, validation_rows=30)


def hand_ledger():
    """A label run's ledger by hand: the consumer's histogram once, the owners' counts in a record of 3 and one of 1."""
    led = accounting.Ledger()
    led.record("validation", accounting.LaplaceEvent(2.0, 2.0, "replace-one"), label="histogram")
    led.record("owners", accounting.LaplaceEvent(0.25, 1.0, "replace-one", count=3), label="counts")
    led.record("owners", accounting.LaplaceEvent(0.25, 1.0, "replace-one"), label="counts")
    return led


def test_cli_report_json_says_so(tmp_path, capsys):
    _, _, paths, vpath = _data(tmp_path)
    out = tmp_path / "out"
    flags = ["--size", "6", "--purchase", "winners", "--dim", "32", "--gamma", "0.3", "--out", str(out)]
    code = main(
        ["summarize", "--owners", *map(str, paths.values()), "--validation", str(vpath), *flags, "--no-progress"]
    )
    assert code == 0, capsys.readouterr().err
    report = json.loads((out / "report.json").read_text())
    assert report["certified"] is False
    assert report["privacy"]["certification"]["status"] == NOT_CERTIFIED
    assert accounting.Ledger.from_dict(report["privacy"]).certification().status == NOT_CERTIFIED


def test_a_run_without_a_ledger_prints_one_line_and_a_seeded_run_says_so_first():
    res = SimpleNamespace(privacy=None, method="uniform", accessed=ACCESSED)
    line = "method 'uniform' is not private: no party's privacy is protected or certified."
    assert ledger_text(res, 1e-6, 1e-6, seeded=False) == [line]
    assert ledger_text(res, 1e-6, 1e-6, seeded=True) == [SEEDED_LINE, line]


def test_the_ledger_lines_of_a_hand_written_ledger():
    """The table at the deltas asked, each party's epsilon at its delta, what each party saw (counts of a label
    summed over the records, in the order first seen), what the aggregator saw, the verdict."""
    led = hand_ledger()
    res = SimpleNamespace(privacy=led, method="nominations", accessed=ACCESSED)
    eps_o, eps_v = led.epsilon("owners", 1e-6), led.epsilon("validation", 1e-5)
    assert 0.99 < eps_o <= 1.0 and 1.99 < eps_v <= 2.0  # four 0.25-DP counts; one 2-DP histogram (pure)
    assert ledger_text(res, 1e-6, 1e-5, seeded=False) == [
        led.table(1e-6, 1e-5),
        f"owners: epsilon {eps_o:.4g} at delta 1e-06; validation set: epsilon {eps_v:.4g} at delta 1e-05 "
        "(tight accountant).",
        "validation saw: histogram x1",
        "owners saw: counts x4",
        "aggregator saw: 12 raw owner rows (owner-0 5, owner-1 7); |D_v| = 30. The aggregator is trusted: no "
        "epsilon covers what it sees.",
        "certified: yes, for every party.",
    ]
    seeded = ledger_text(res, 1e-6, 1e-5, seeded=True)
    assert seeded[0] == SEEDED_LINE
    assert seeded[-1] == "certified: NO (seeded run): its noise is reproducible, so the run is NOT private."
    led.record_uncertified("owners", label="the request", reason="it names the winners")
    assert ledger_text(res, 1e-6, 1e-5, seeded=False)[-1] == (
        "certified: NO (owners: no finite epsilon is certified; see the notes)."
    )


def test_a_flower_result_s_ledger_dict_prints_as_the_ledger_and_a_corrupt_one_is_refused():
    """A Flower result carries the ledger's dict form: the same lines as the ledger itself. A dict that is not a
    ledger written by Ledger.to_dict() is refused with a LedgerFormatError saying what is wrong, not a KeyError."""
    led = hand_ledger()
    as_ledger = SimpleNamespace(privacy=led, method="nominations", accessed=ACCESSED)
    as_dict = SimpleNamespace(privacy=json.loads(json.dumps(led.to_dict())), method="nominations", accessed=ACCESSED)
    assert ledger_text(as_dict, 1e-6, 1e-5, seeded=False) == ledger_text(as_ledger, 1e-6, 1e-5, seeded=False)
    corrupt = {**led.to_dict(), "version": "no such version"}
    for privacy in (corrupt, {"entries": []}):
        with pytest.raises(LedgerFormatError, match="not a ledger"):
            ledger_text(SimpleNamespace(privacy=privacy, method="nominations", accessed=ACCESSED), 1e-6, 1e-6, False)


def test_the_report_says_what_the_ledger_certifies_at_the_deltas_asked():
    owners, validation = blobs(seed=1, K=3, n=40)
    budget = dpsumm.Budget(validation_epsilon=0.9, validation_delta=1e-7)
    res = dpsumm.summarize(owners, validation, 5, dpsumm.Nominations(dim=32), privacy=budget, gamma=0.3, random_state=2)
    seeded = argparse.Namespace(random_state=2, delta=None, validation_delta=1e-7)
    report = build_report(res, seeded, budget, owners=["a.npy", "b.npy", "c.npy"])
    assert report["warning"] == NOT_PRIVATE and report["seeded"] is True
    assert report["private"] is False and report["certified"] is False
    assert report["certification"] == certification(res.privacy, seeded=True).to_dict()
    assert report["privacy"] == res.privacy.to_dict(DEFAULT_DELTA, 1e-7)
    assert report["owners"] == ["a.npy", "b.npy", "c.npy"] and report["method"] == "nominations"
    assert (report["size"], report["gamma"], report["dim"], report["hash_seed"]) == (5, 0.3, 32, 0)
    assert report["budget"] == dataclasses.asdict(budget)
    assert report["accessed"] == dataclasses.asdict(res.accessed)
    assert report["contribution"] == res.contribution.tolist() and report["events"] == res.events
    unseeded = build_report(res, argparse.Namespace(random_state=None, delta=1e-5, validation_delta=None), None)
    assert "warning" not in unseeded and unseeded["seeded"] is False and unseeded["budget"] is None
    assert unseeded["privacy"] == res.privacy.to_dict(1e-5, DEFAULT_DELTA)
    plain = dpsumm.summarize(owners, validation, 5, "uniform", random_state=2)
    report = build_report(plain, argparse.Namespace(random_state=None, delta=None, validation_delta=None), None)
    assert report["privacy"] is None and report["certification"]["status"] == "not private"


def test_write_outputs_writes_the_rows_or_their_hashes_the_provenance_and_json_without_infinities(tmp_path):
    rows = SimpleNamespace(
        points=np.array([[1.0, 2.0], [3.0, 4.0]]), hashes=None, labels=None, owner=np.array([1, 0]), index=[5, 2]
    )
    out = write_outputs(rows, str(tmp_path / "a" / "b"), {"eps": math.inf, "all": [math.inf, 1.5], "n": 2})
    assert out == tmp_path / "a" / "b"
    np.testing.assert_array_equal(np.load(out / "summary.npy"), rows.points)
    assert not (out / "labels.npy").exists()
    assert (out / "provenance.csv").read_text() == "owner,index\n1,5\n0,2\n"
    assert json.loads((out / "report.json").read_text()) == {"eps": None, "all": [None, 1.5], "n": 2}
    hashed = SimpleNamespace(
        points=None, hashes=np.eye(2, dtype=np.float32), labels=np.array(["cat", "dog"]), owner=[0, 0], index=[3, 1]
    )
    out = write_outputs(hashed, str(tmp_path / "h"), {})
    np.testing.assert_array_equal(np.load(out / "summary.npy"), hashed.hashes)
    np.testing.assert_array_equal(np.load(out / "labels.npy"), hashed.labels)
    assert (out / "provenance.csv").read_text() == "owner,index\n0,3\n0,1\n"


def record(method, size, eps_owners, **kw):
    return Record(method, size, 0, 0.1, None, None, 0, eps_owners, 0.5, 1.0, delta_validation=1e-6, **kw)


def test_print_epsilon_states_the_largest_size_of_each_private_method(capsys):
    print_epsilon([record("uniform", 20, None)])
    assert capsys.readouterr().out == ""
    print_epsilon(
        [
            record("nominations", 20, 0.0),
            record("nominations", 10, 0.0),
            record("paper", 10, 3.0, epsilon_owners_h2=2.0, delta_owners=1e-4),
            record("paper", 20, None, epsilon_owners_h2=2.5, delta_owners=1e-4),
        ]
    )
    assert capsys.readouterr().out.splitlines() == [
        "nominations (nominees purchase), size 20: epsilon owners 0 (certified: what an owner receives depends only "
        "on its own data and the consumer's release); validation 0.5 (delta 1e-06; replace-one in D_v); tight "
        "accountant.",
        "paper, size 20: epsilon owners not certified (paper's PrivAuction, see the ledger's notes); h2 releases alone "
        "2.5 (delta 0.0001); validation 0.5 (delta 1e-06); tight accountant.",
    ]
    for uncertified in (None, math.inf):  # a Winners run: its owners' epsilon is not certified
        print_epsilon([record("nominations", 8, uncertified, purchase="winners")])
        assert capsys.readouterr().out == (
            "nominations (winners purchase), size 8: epsilon owners not certified (a message to the owners depends on "
            "the others' data; see the ledger's notes); validation 0.5 (delta 1e-06; replace-one in D_v); tight "
            "accountant.\n"
        )
    print_epsilon([record("nominations", 6, 0.97, purchase="labels")])
    assert capsys.readouterr().out == (
        "nominations (labels purchase), size 6: epsilon owners 0.97 (certified: each owner's one DP release, "
        "replace-one in its rows); validation 0.5 (delta 1e-06; replace-one in D_v); tight accountant.\n"
    )
