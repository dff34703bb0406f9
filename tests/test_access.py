"""dpsumm.access: Access, what the trusted aggregator saw in a run (its parsimony)."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

import dpsumm
from dpsumm.access import Access


def test_defaults_and_fields_by_hand():
    a = Access(total=3, per_owner={"owner-0": 2, "owner-1": 1})
    assert (a.total, a.hashes, a.hashes_per_owner, a.validation_rows, a.validation_raw_rows) == (3, 0, {}, 0, 0)
    assert (a.hashed_rows, a.hashed_rows_per_owner) == (0, {})
    assert [f.name for f in dataclasses.fields(Access)] == [
        "total",
        "per_owner",
        "hashes",
        "hashes_per_owner",
        "validation_rows",
        "validation_raw_rows",
        "hashed_rows",
        "hashed_rows_per_owner",
    ]


def test_frozen_equal_by_value_and_pickles():
    a = Access(total=3, per_owner={"owner-0": 3}, hashes=5, hashes_per_owner={"owner-0": 5}, validation_rows=20)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.total = 4
    assert a == Access(3, {"owner-0": 3}, 5, {"owner-0": 5}, 20) and a != dataclasses.replace(a, total=4)
    assert pickle.loads(pickle.dumps(a)) == a
    assert Access(1, {}).hashes_per_owner is not Access(1, {}).hashes_per_owner  # no shared default dict
    assert Access(1, {}).hashed_rows_per_owner is not Access(1, {}).hashed_rows_per_owner


def test_the_report_names_the_hashed_rows_and_those_not_bought():
    from dpsumm.accounting.ledger import aggregator_line

    line = aggregator_line(Access(total=10, per_owner={"owner-0": 10}, hashed_rows=80))
    assert "the h1 hashes of 80 rows (70 of them not bought)" in line
    line = aggregator_line(Access(total=30, per_owner={"owner-0": 30}, hashed_rows=30))
    assert "the h1 hashes of 30 rows (only the rows bought)" in line
    assert "h1 hashes of" not in aggregator_line(Access(total=3, per_owner={}))


def test_a_run_reports_what_the_aggregator_received(tmp_path):
    rng = __import__("numpy").random.default_rng(0)
    owners = [rng.uniform(size=(40, 3)) for _ in range(3)]
    res = dpsumm.summarize(owners, rng.uniform(size=(20, 3)), 6, method="uniform", random_state=0, progress=False)
    assert isinstance(res.accessed, Access)
    assert res.accessed.total == 6 == sum(res.accessed.per_owner.values())
    assert set(res.accessed.per_owner) <= {"owner-0", "owner-1", "owner-2"}
