"""dpsumm.sources: an owner's rows read from a .npy file (memory-mapped), a parquet file or directory, or chunks;
the same summary bit for bit as from the same rows in memory; bad files refused naming the file and column."""

from __future__ import annotations

import os

import numpy as np
import pytest

import dpsumm
from dpsumm import Owner
from dpsumm.errors import DataFileError, InvalidParameterError
from dpsumm.parties import OwnerParty
from dpsumm.sources import ParquetRows, open_rows, pass_rows, row_blocks, take_rows
from refusal import refused
from table_reads import whole_reads_refused

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


@pytest.mark.parametrize(
    "method", ["nominations", dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=range(3))), "paper"]
)
def test_a_summary_from_npy_files_and_parquet_is_the_in_memory_one_bit_for_bit(tmp_path, method, monkeypatch):
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    if method != "paper":  # the cell purchases read parquet in record batches: never a copy of every row
        monkeypatch.setattr(ParquetRows, "mapped", lambda self: pytest.fail("the rows were written out whole"))
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
    (tmp_path / "spill").mkdir()
    spilled = open_rows(iter([ROWS[0][:5], ROWS[0][5:]]), spill_dir=tmp_path / "spill")
    assert isinstance(spilled.data, np.memmap) and np.array_equal(spilled.data, ROWS[0])
    assert not any((tmp_path / "spill").iterdir())  # the spill file is gone, its mapping stays


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


def _table(rows: np.ndarray, labels: np.ndarray):  # type: ignore[no-untyped-def]
    pa = pytest.importorskip("pyarrow")
    return pa.table({**{f"f{j}": rows[:, j] for j in range(rows.shape[1])}, "label": labels})


def test_parquet_rows_are_read_in_record_batches_and_rows_sold_by_row_group(tmp_path, monkeypatch):
    pq = pytest.importorskip("pyarrow.parquet")
    rows = RNG.normal(size=(1000, 5)).astype(np.float32)
    labels = RNG.integers(0, 4, size=1000)
    pq.write_table(_table(rows, labels), tmp_path / "t.parquet", row_group_size=100)
    src = open_rows(tmp_path / "t.parquet", labels="label", chunk_rows=300)
    assert isinstance(src.data, ParquetRows) and src.data.shape == (1000, 5) and src.data.dtype == np.float32
    assert src.peak == float(np.abs(rows).max()) and np.array_equal(src.labels, labels)
    # A pass: whole blocks of 256 rows at a time (the Rust passes' block), the same rows in the same order.
    assert pass_rows(300) == 512 and pass_rows(1) == 256
    pieces = list(row_blocks(src.data, 300))
    assert [(start, len(block)) for start, block in pieces] == [(0, 512), (512, 488)]
    assert np.concatenate([block for _, block in pieces]).tobytes() == rows.tobytes()
    # Rows fetched by index read only the row groups that hold them, each once, in the order asked.
    read = []
    real = pq.ParquetFile.read_row_group
    monkeypatch.setattr(pq.ParquetFile, "read_row_group", lambda self, i, **kw: read.append(i) or real(self, i, **kw))
    want = np.array([950, 5, 120, 7, 999])
    assert take_rows(src.data, want).tobytes() == rows[want].tobytes()
    assert sorted(read) == [0, 1, 9]
    read.clear()  # rows among the latest fetch (the rows sold among the candidates): not read again
    assert take_rows(src.data, np.array([999, 5])).tobytes() == rows[[999, 5]].tobytes() and read == []
    assert np.array_equal(src.data[3], rows[3]) and np.array_equal(src.data[2:5], rows[2:5])
    assert take_rows(src.data, np.zeros(0, dtype=np.int64)).shape == (0, 5)
    with pytest.raises(IndexError):
        take_rows(src.data, np.array([1000]))
    # The one owner pass that sums: piece by piece, the bits of one call over the rows in memory.
    hasher = dpsumm.RFFHasher(5, dim=40, gamma=0.3, seed=2)
    streamed = OwnerParty(src.data, name="o").hash_sum(hasher)
    assert streamed.tobytes() == OwnerParty(rows, name="o").hash_sum(hasher).tobytes()


def test_a_parquet_file_that_changes_between_passes_is_refused_naming_it(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    rows = RNG.normal(size=(300, 4)).astype(np.float32)
    path = tmp_path / "owner.parquet"
    pq.write_table(_table(rows, np.zeros(300, dtype=np.int64)), path, row_group_size=64)
    src = open_rows(path, labels="label")
    party = OwnerParty(src.data, name="o", check=src.check_unchanged)
    hasher = dpsumm.RFFHasher(4, dim=16, gamma=0.3, seed=2)
    party.hash_sum(hasher)
    changed = rows.copy()
    changed[10, 2] = 7.0
    pq.write_table(_table(changed, np.zeros(300, dtype=np.int64)), path, row_group_size=64)
    os.utime(path, ns=(1, 1))
    for read in (lambda: party.hash_sum(hasher), lambda: take_rows(src.data, np.array([3]))):
        with pytest.raises(DataFileError, match=r"owner\.parquet changed"):
            read()
    with pytest.raises(DataFileError, match=r"owner\.parquet changed"):
        party.handle(dpsumm.messages.BidRequest(round=0, v=np.zeros(4, dtype=np.float32)))
    # A truncated file is refused when opened, naming it.
    size = os.path.getsize(path)
    with open(path, "r+b") as fh:
        fh.truncate(size - 40)
    with pytest.raises(DataFileError, match=r"owner\.parquet"):
        open_rows(path)
    # A column of the wrong type or a NaN: named with the file, before anything is read further.
    pa = pytest.importorskip("pyarrow")
    pq.write_table(pa.table({"a": np.ones(3, np.float32), "b": pa.array([[1], [2], [3]])}), tmp_path / "list.parquet")
    with pytest.raises(DataFileError, match=r"column 'b' of .*list\.parquet"):
        open_rows(tmp_path / "list.parquet")
    nan = rows.copy()
    nan[200, 1] = np.nan
    pq.write_table(_table(nan, np.zeros(300, dtype=np.int64)), tmp_path / "nan.parquet", row_group_size=64)
    with pytest.raises(DataFileError, match=r"nan\.parquet.*row 200, column 'f1'"):
        open_rows(tmp_path / "nan.parquet", labels="label", chunk_rows=50)


def test_a_party_table_by_column_name_streams_as_read_party_table_reads_it(tmp_path, monkeypatch):
    """open_party_table of a parquet file with a text label column, a strata column of whole numbers and a column
    left out: the features (float32, as stored), labels (strings) and strata (int64) read_party_table reads, every
    record batch at most chunk_rows rows, never the table whole; a NaN in the label column, a text feature, a
    missing column refused naming the file and the column, before any release."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from dpsumm.party_tables import open_party_table, read_party_table

    n = 1500
    rows = RNG.normal(size=(n, 3)).astype(np.float32)
    words = np.array(["north", "south", "east"])[RNG.integers(0, 3, n)]
    region = RNG.integers(1, 4, n)
    table = pa.table(
        {"a": rows[:, 0], "note": ["x"] * n, "b": rows[:, 1], "y": words, "region": region, "c": rows[:, 2]}
    )
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=400)
    want = read_party_table(path, features="c,a,b", label_column="y", strata_columns="region")
    sizes = whole_reads_refused(monkeypatch)
    got = open_party_table(path, features="c,a,b", label_column="y", strata_columns="region", chunk_rows=300)
    assert isinstance(got.data, ParquetRows) and got.data.dtype == np.float32 and tuple(got.columns) == want.features
    assert np.array_equal(np.asarray(got.data[np.arange(n)], dtype=np.float64), want.data)
    assert got.labels is not None and got.labels.dtype == want.labels.dtype and np.array_equal(got.labels, want.labels)
    assert got.strata is not None and want.strata is not None
    assert got.strata[0].dtype == want.strata[0].dtype == np.int64 and np.array_equal(got.strata[0], want.strata[0])
    assert sizes and max(sizes) <= 400 and sum(sizes) >= n  # record batches, no read of the table whole
    sizes.clear()
    assert sum(len(b) for _, b in row_blocks(got.data)) == n and max(sizes) <= pass_rows(300)
    with pytest.raises(DataFileError, match=r"column 'note' of .*t\.parquet is string"):
        open_party_table(path, label_column="y", strata_columns="region")
    with pytest.raises(InvalidParameterError, match="no column 'd'"):
        open_party_table(path, features="a,d", label_column="y")
    monkeypatch.undo()
    bad = table.set_column(3, "y", pa.array([1.0] * 700 + [None] + [2.0] * (n - 701), pa.float64()))
    pq.write_table(bad, tmp_path / "bad.parquet")
    with pytest.raises(DataFileError, match=r"label column 'y' of .*bad\.parquet holds nan .* row 700"):
        open_party_table(tmp_path / "bad.parquet", features="a,b", label_column="y")


def test_scaled_rows_give_the_summary_of_the_whole_table_scaled_bit_for_bit(tmp_path, monkeypatch):
    """An owner's parquet rows scaled at every read (ScaledRows: each block of a pass, each fetch by index) give the
    summary, bit for bit, of the rows scaled in memory (float64, as dpsumm.scale_to_unit gives them)."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from dpsumm.sources import ScaledRows, scaled

    paths = []
    for k, rows in enumerate(ROWS):
        paths.append(tmp_path / f"o{k}.parquet")
        pq.write_table(pa.table({f"f{j}": 2 * rows[:, j] for j in range(6)}), paths[-1], row_group_size=128)
    scale = lambda X: dpsumm.scale_to_unit(X, 0.0, 1.5)  # noqa: E731 - clips the top quarter
    want = dpsumm.summarize([scale(2 * r) for r in ROWS], VALIDATION, 12, **KW)
    sizes = whole_reads_refused(monkeypatch)
    sources = [scaled(open_rows(p, chunk_rows=256), scale, 1.0) for p in paths]
    assert all(isinstance(s.data, ScaledRows) and s.data.dtype == np.float64 for s in sources)
    _same(want, dpsumm.summarize([Owner(s) for s in sources], VALIDATION, 12, **KW))
    assert max(sizes) <= pass_rows(256)


def test_an_empty_npy_and_rows_beyond_float32_are_refused_as_data_file_errors(tmp_path):
    # Was: numpy's EOFError for an empty file, and its "overflow encountered in cast" RuntimeWarning on the way to the
    # refusal of a float64 value beyond float32 (in a .npy file or in chunks).
    empty = tmp_path / "empty.npy"
    empty.write_bytes(b"")
    refused(lambda: open_rows(empty), "data", DataFileError)
    big = np.full((4, 3), 0.5)
    big[2, 1] = 1e308
    np.save(tmp_path / "big.npy", big)
    assert "row 2, column 'column 1'" in str(refused(lambda: open_rows(tmp_path / "big.npy"), "data", DataFileError))
    refused(lambda: open_rows(iter([big[:2], big[2:]])), "data", DataFileError)
