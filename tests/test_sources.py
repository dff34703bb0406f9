"""dpsumm.sources: an owner's rows read from a .npy file (memory-mapped), a parquet file or directory, or chunks;
the same summary bit for bit as from the same rows in memory; bad files refused naming the file and column."""

from __future__ import annotations

import os

import numpy as np
import pytest

import dpsumm
from dpsumm import Owner
from dpsumm.errors import DataFileError, InvalidParameterError
from dpsumm.sources import open_rows

RNG = np.random.default_rng(11)
ROWS = [RNG.uniform(size=(700 + 50 * k, 6)).astype(np.float32) for k in range(3)]
LABELS = [RNG.integers(0, 3, size=r.shape[0]) for r in ROWS]
VALIDATION = RNG.uniform(size=(60, 6))
KW = dict(progress=False, random_state=3)
VALIDATION_LABELS = RNG.integers(0, 3, size=60)


def _same(a: dpsumm.SummaryResult, b: dpsumm.SummaryResult) -> None:
    assert np.array_equal(a.owner, b.owner) and np.array_equal(a.index, b.index)
    assert a.points is not None and b.points is not None
    assert a.points.tobytes() == b.points.tobytes()
    assert a.hashes.tobytes() == b.hashes.tobytes()


@pytest.mark.parametrize("method", ["nominations", dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=range(3)))])
def test_a_summary_from_npy_files_and_parquet_is_the_in_memory_one_bit_for_bit(tmp_path, method):
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    kw = dict(KW, validation_labels=VALIDATION_LABELS) if isinstance(method, dpsumm.Nominations) else KW
    memory = [Owner(r, labels=lab, name=f"o{k}") for k, (r, lab) in enumerate(zip(ROWS, LABELS))]
    npy, parquet = [], []
    for k, (r, lab) in enumerate(zip(ROWS, LABELS)):
        np.save(tmp_path / f"o{k}.npy", r)
        npy.append(Owner(str(tmp_path / f"o{k}.npy"), labels=lab, name=f"o{k}", chunk_rows=97))
        table = pa.table({**{f"f{j}": r[:, j] for j in range(r.shape[1])}, "label": lab})
        d = tmp_path / f"p{k}"
        d.mkdir()
        # Two files, small row groups: the dataset is read in many record batches.
        pq.write_table(table.slice(0, 300), d / "a.parquet", row_group_size=64)
        pq.write_table(table.slice(300), d / "b.parquet", row_group_size=64)
        parquet.append(Owner(d, labels="label", name=f"o{k}", chunk_rows=50))
    want = dpsumm.summarize(memory, VALIDATION, 12, method, **kw)
    _same(want, dpsumm.summarize(npy, VALIDATION, 12, method, **kw))
    _same(want, dpsumm.summarize(parquet, VALIDATION, 12, method, **kw))
    chunks = [
        Owner(iter(np.array_split(r, 7)), labels=lab, name=f"o{k}") for k, (r, lab) in enumerate(zip(ROWS, LABELS))
    ]
    _same(want, dpsumm.summarize(chunks, VALIDATION, 12, method, **kw))


def test_the_rows_are_memory_mapped_not_copied(tmp_path):
    np.save(tmp_path / "rows.npy", ROWS[0])
    src = open_rows(tmp_path / "rows.npy", chunk_rows=10)
    assert isinstance(src.data, np.memmap) and not src.data.flags.writeable
    assert np.array_equal(src.data, ROWS[0])
    spilled = open_rows(iter([ROWS[0][:5], ROWS[0][5:]]), spill_dir=tmp_path)
    assert isinstance(spilled.data, np.memmap) and np.array_equal(spilled.data, ROWS[0])


def test_bad_files_are_refused_naming_the_file_and_column(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    bad = ROWS[0].copy()
    bad[123, 4] = np.nan
    np.save(tmp_path / "nan.npy", bad)
    with pytest.raises(DataFileError, match=r"nan\.npy.*row 123, column 'column 4'"):
        open_rows(tmp_path / "nan.npy", chunk_rows=50)
    np.save(tmp_path / "cut.npy", ROWS[0])
    with open(tmp_path / "cut.npy", "r+b") as fh:
        fh.truncate(os.path.getsize(tmp_path / "cut.npy") - 8)
    with pytest.raises(DataFileError, match="cut.npy"):
        open_rows(tmp_path / "cut.npy")
    np.save(tmp_path / "ints.npy", np.arange(12).reshape(3, 4))
    with pytest.raises(DataFileError, match="ints.npy.*float32 or float64"):
        open_rows(tmp_path / "ints.npy")
    table = pa.table({"a": [1.0, 2.0], "b": ["x", "y"]})
    pq.write_table(table, tmp_path / "words.parquet")
    with pytest.raises(DataFileError, match=r"column 'b' of .*words\.parquet"):
        open_rows(tmp_path / "words.parquet")
    pq.write_table(pa.table({"a": [1.0, float("inf"), 3.0]}), tmp_path / "inf.parquet")
    with pytest.raises(DataFileError, match=r"inf\.parquet.*row 1, column 'a'"):
        open_rows(tmp_path / "inf.parquet")
    pq.write_table(pa.table({"a": [1.0, None, 3.0]}), tmp_path / "null.parquet")
    with pytest.raises(DataFileError, match=r"column 'a' of .*null\.parquet holds a null"):
        open_rows(tmp_path / "null.parquet")
    with pytest.raises(DataFileError, match="no column 'label'"):
        open_rows(tmp_path / "inf.parquet", labels="label")
    with pytest.raises(DataFileError, match="does not exist"):
        open_rows(tmp_path / "missing.npy")
    with pytest.raises(InvalidParameterError, match="chunk_rows"):
        open_rows(tmp_path / "nan.npy", chunk_rows=0)
    with pytest.raises(InvalidParameterError, match="chunk 1"):
        open_rows(iter([np.zeros((2, 3)), np.zeros((2, 4))]), spill_dir=tmp_path)
    # Refused before the run: the summary's owner is named.
    owners = [Owner(str(tmp_path / "nan.npy"), name="hospital"), ROWS[1]]
    with pytest.raises(DataFileError, match="owner 'hospital'.*nan.npy"):
        dpsumm.summarize(owners, VALIDATION, 5, **KW)


def test_a_file_that_changes_during_a_run_is_refused_before_the_next_message(tmp_path):
    np.save(tmp_path / "rows.npy", ROWS[0])
    src = open_rows(tmp_path / "rows.npy")
    src.check_unchanged()
    os.utime(tmp_path / "rows.npy", ns=(1, 1))
    with pytest.raises(DataFileError, match="rows.npy changed"):
        src.check_unchanged()
    party = dpsumm.parties.OwnerParty(src.data, name="o", check=src.check_unchanged)
    with pytest.raises(DataFileError, match="changed"):
        party.handle(dpsumm.messages.BidRequest(round=0, v=np.zeros(4, dtype=np.float32)))
