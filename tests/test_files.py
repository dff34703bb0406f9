"""The file readers of dpsumm.files: .npy, .csv and .parquet rows and labels, typed errors naming the file and
the argument, never a pickle."""

from __future__ import annotations

import errno
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpsumm
from dpsumm import datasets, files
from dpsumm.errors import DataFileError
from refusal import refused

FAST = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)

WORDS = ["cat", "dog", "bird"]

label_text = st.text(alphabet=st.sampled_from(list("abcxyz0123456789 -_.eE+")), min_size=1, max_size=12).filter(
    lambda s: bool(s.strip())
)


RNG = np.random.default_rng(7)


TRAIN = (RNG.uniform(size=(200, 4)), RNG.integers(0, 10, 200))


TEST = (RNG.uniform(size=(200, 4)), RNG.integers(0, 10, 200))


SPLIT = dict(groups=((0, 1), (3, 4)), seed_set_size=10, random_state=0)


def _npy_with_header(path, shape, descr="<f8", body=b"\0" * 80):
    hdr = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"
    hdr += " " * (64 - (10 + len(hdr) + 1) % 64) + "\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + body)
    return path


def _write(path, X, header=None):
    """``X`` (2-D floats) as ``path``'s format: .npy, .csv (``repr`` of each value, so nan and inf too) or .parquet."""
    if path.suffix == ".npy":
        np.save(path, X)
    elif path.suffix == ".csv":
        lines = ([",".join(header)] if header else []) + [",".join(repr(float(x)) for x in r) for r in X]
        path.write_text("\n".join(lines) + "\n")
    else:
        pd = pytest.importorskip("pandas")
        pytest.importorskip("pyarrow")
        pd.DataFrame(X, columns=header or [f"f{j}" for j in range(X.shape[1])]).to_parquet(path, index=False)
    return path


@pytest.mark.parametrize(
    "path,why",
    [
        ("/tmp/" + "a" * 5000 + ".csv", "too long"),
        ("/tmp/" + "b" * 300 + ".npy", "too long"),
        ("/tmp/x\x00y.csv", "NUL"),
        ("", "empty"),
        ("/", "directory"),
        ("/nonexistent-dir/x.npy", "not found"),
    ],
)
@pytest.mark.parametrize("reader", ["read_table", "load_array", "load_labels", "read_idx"])
def test_bad_paths_name_the_argument(path, why, reader):
    with pytest.raises(DataFileError) as err:
        getattr(datasets, reader)(path)
    assert why in str(err.value)
    assert err.value.argument == ("labels" if reader == "load_labels" else "path")


def test_mnist_directory_errors_are_typed():
    with pytest.raises(DataFileError, match="too long"):
        datasets.mnist("/tmp/" + "c" * 5000)
    with pytest.raises(dpsumm.InvalidParameterError):
        datasets.mnist("/nonexistent-dir")


def test_os_error_mapping_says_what_to_do():
    exc = files._os_error(OSError(errno.EACCES, "Permission denied"), "/x.csv", "path")
    assert isinstance(exc, DataFileError) and "permission" in str(exc) and exc.path == "/x.csv"


@pytest.mark.parametrize(
    "shape,match",
    [
        ((10**6, 10**6), "claims shape"),  # 10^12 values: refused before any allocation
        ((2**40, 2**40), "claims shape"),
        ((5, 3), "truncated"),  # 120 bytes claimed, 80 present
        ((2, 3), "truncated"),  # 48 claimed, 80 present: trailing bytes
    ],
)
@pytest.mark.parametrize("reader", ["read_table", "load_labels"])
def test_npy_header_is_checked_before_allocating(tmp_path, shape, match, reader):
    p = _npy_with_header(tmp_path / "x.npy", shape)
    with pytest.raises(DataFileError, match=match):
        getattr(datasets, reader)(p)


@pytest.mark.parametrize("descr", ["|O", "<c16", "|S4", "<M8[s]"])
def test_npy_non_real_dtypes_are_refused(tmp_path, descr):
    p = _npy_with_header(tmp_path / "x.npy", (2, 2), descr=descr, body=b"\0" * 64)
    with pytest.raises(DataFileError):
        datasets.read_table(p)


@FAST
@given(st.binary(max_size=300))
def test_random_bytes_never_leak_a_foreign_exception(tmp_path_factory, raw):
    d = tmp_path_factory.mktemp("raw")
    for suffix in (".npy", ".csv", ".parquet"):
        p = d / f"f{suffix}"
        p.write_bytes(raw)
        for read in (datasets.read_table, datasets.load_labels):
            try:
                out = read(p)
            except dpsumm.DpsummError:
                continue
            arr = out.data if isinstance(out, datasets.Table) else out
            # labels may be words (issue 43): a unicode array, never objects
            assert np.issubdtype(arr.dtype, np.number) or (read is datasets.load_labels and arr.dtype.kind == "U")


@FAST
@given(st.binary(max_size=200))
def test_random_npy_headers(tmp_path_factory, tail):
    p = tmp_path_factory.mktemp("npy") / "x.npy"
    p.write_bytes(b"\x93NUMPY\x01\x00" + tail)
    try:
        datasets.read_table(p)
    except dpsumm.DpsummError:
        pass


def test_pandas_default_index_column_is_dropped_and_said(tmp_path):
    pd = pytest.importorskip("pandas")
    X = np.random.default_rng(0).uniform(size=(12, 4))
    pd.DataFrame(X).to_csv(tmp_path / "a.csv")  # the default: index and header
    t = datasets.read_table(tmp_path / "a.csv")
    np.testing.assert_allclose(t.data, X)
    assert t.data.shape == (12, 4) and "row index column '' dropped" in t.describe()
    pd.DataFrame(X, index=np.arange(3, 15)).to_parquet(tmp_path / "a.parquet")
    t = datasets.read_table(tmp_path / "a.parquet")
    assert t.data.shape == (12, 4) and "__index_level_0__" in t.describe()


def test_headerless_row_numbers_are_refused_with_a_way_out(tmp_path):
    pd = pytest.importorskip("pandas")
    X = np.random.default_rng(1).uniform(size=(12, 3))
    pd.DataFrame(X).to_csv(tmp_path / "b.csv", header=False)
    with pytest.raises(DataFileError, match="row numbers") as err:
        datasets.read_table(tmp_path / "b.csv")
    assert "b.csv" in str(err.value) and "index=True" in str(err.value)
    np.testing.assert_allclose(datasets.read_table(tmp_path / "b.csv", index=True).data, X)
    assert datasets.read_table(tmp_path / "b.csv", index=False).data.shape == (12, 4)


@pytest.mark.parametrize("name", ["label", "Target", "class", "labels"])
def test_label_columns_are_refused_or_read_as_labels(tmp_path, name):
    X = np.random.default_rng(2).uniform(size=(10, 3))
    y = np.arange(10) % 2
    lines = [f"a,b,c,{name}"] + [",".join(map(str, list(r) + [int(l)])) for r, l in zip(X, y)]
    (tmp_path / "c.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(DataFileError, match="looks like labels") as err:
        datasets.read_table(tmp_path / "c.csv")
    assert "c.csv" in str(err.value) and f"label_column={name!r}" in str(err.value)
    t = datasets.read_table(tmp_path / "c.csv", label_column=name)
    np.testing.assert_allclose(t.data, X)
    np.testing.assert_array_equal(t.labels, y)
    t2 = datasets.read_table(tmp_path / "c.csv", label_column=-1)
    np.testing.assert_array_equal(t2.labels, y)
    with pytest.raises(dpsumm.InvalidParameterError) as err2:
        datasets.read_table(tmp_path / "c.csv", label_column="nope")
    assert err2.value.argument == "label_column"


@FAST
@given(
    rows=st.integers(1, 8),
    cols=st.integers(1, 5),
    header=st.booleans(),
    index=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_csv_reader_reads_exactly_the_features(tmp_path_factory, rows, cols, header, index, seed):
    """A CSV written with or without header and index reads back as the feature matrix, or is refused;
    never with an extra column."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, cols)).round(6)
    lines = []
    if header:
        lines.append(",".join(([""] if index else []) + [f"f{j}" for j in range(cols)]))
    for i, r in enumerate(X):
        lines.append(",".join(([str(i)] if index else []) + [repr(float(x)) for x in r]))
    p = tmp_path_factory.mktemp("csv") / "x.csv"
    p.write_text("\n".join(lines) + "\n")
    try:
        t = datasets.read_table(p)
    except DataFileError as exc:
        assert index and not header and rows >= 2, exc  # only the ambiguous headerless index is refused
        return
    if index and not header and rows == 1:  # one headerless row: its index "0" cannot be told from a feature
        assert t.data.shape[0] == 1
        return
    assert t.data.shape == (rows, cols)
    np.testing.assert_allclose(t.data, X)


@FAST
@given(st.text(alphabet=st.sampled_from(list('0123456789,.-e\n"x ;nainf\r')), max_size=120))
def test_csv_fuzz(tmp_path_factory, text):
    p = tmp_path_factory.mktemp("fz") / "x.csv"
    p.write_text(text)
    try:
        t = datasets.read_table(p)
    except dpsumm.DpsummError:
        return
    assert t.data.ndim == 2 and t.data.dtype == np.float64 and np.isfinite(t.data).all()


@pytest.mark.parametrize("suffix", [".npy", ".csv", ".parquet"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_value_is_refused_when_read_naming_the_file_and_its_position(tmp_path, suffix, bad):
    # Was: the array returned with the NaN/inf in it, refused (if at all) by whatever used it, far from the file.
    X = np.arange(12.0).reshape(4, 3) + 0.5
    X[2, 1] = bad
    X[3, 0] = np.nan  # a later one: the first is named
    p = _write(tmp_path / f"rows{suffix}", X, header=["a", "b", "c"])
    np.save(tmp_path / "ok.npy", np.ones((2, 3)))
    for read, argument in (
        (datasets.read_table, "path"),
        (datasets.load_array, "path"),
        (lambda q: datasets.load_owners([tmp_path / "ok.npy", q]), "paths"),
    ):
        with pytest.raises(DataFileError) as err:
            read(p)
        msg = str(err.value)
        assert err.value.argument == argument and err.value.path == str(p)
        assert f"rows{suffix}" in msg and "row 2, column 1" in msg and str(bad) in msg, msg
        assert ("'b'" in msg) == (suffix != ".npy") and ("line 4 of the file" in msg) == (suffix == ".csv"), msg
    assert "`paths[1]`" in str(pytest.raises(DataFileError, datasets.load_owners, [tmp_path / "ok.npy", p]).value)


def test_a_csv_number_beyond_the_float_range_is_refused_as_infinite(tmp_path):
    # Was: float("1e400") = inf, returned.
    (tmp_path / "big.csv").write_text("1,2\n3,-1e400\n")
    with pytest.raises(DataFileError, match=r"-inf \(or a number beyond the float range.*row 1, column 1.*line 2"):
        datasets.read_table(tmp_path / "big.csv")


@pytest.mark.parametrize(
    "name,content,where",
    [
        ("y.npy", np.array([0.0, 1.0, np.nan, 1.0]), "entry 2"),
        ("y2.npy", np.array([[0.0], [np.inf]]), "row 1, column 0"),
        ("y.csv", "label\n0\n1\nnan\n", "row 2, column 0 ('label'; counting from 0; line 4 of the file)"),
    ],
)
def test_labels_with_a_non_finite_value_are_refused_when_read(tmp_path, name, content, where):
    p = tmp_path / name
    np.save(p, content) if name.endswith(".npy") else p.write_text(content)
    with pytest.raises(DataFileError) as err:
        datasets.load_labels(p)
    assert err.value.argument == "labels" and name in str(err.value) and where in str(err.value), str(err.value)


def test_an_idx_file_with_a_non_finite_value_is_refused(tmp_path):
    body = np.array([[[1, 2], [3, 4]], [[5, np.inf], [7, 8]]], dtype=">f4")
    raw = b"\x00\x00\x0d\x03" + b"".join(n.to_bytes(4, "big") for n in body.shape) + body.tobytes()
    (tmp_path / "f-idx3").write_bytes(raw)
    with pytest.raises(DataFileError, match=r"holds inf at index \(1, 0, 1\)") as err:
        datasets.read_idx(tmp_path / "f-idx3")
    assert err.value.argument == "path"
    (tmp_path / "g-idx3").write_bytes(raw.replace(body.tobytes(), np.nan_to_num(body, posinf=6).tobytes()))
    np.testing.assert_array_equal(datasets.read_idx(tmp_path / "g-idx3")[1, 0], [5, 6])


@FAST
@given(
    rows=st.integers(1, 30),
    cols=st.integers(1, 4),
    suffix=st.sampled_from([".npy", ".csv"]),
    bad=st.lists(
        st.tuples(st.integers(0, 29), st.integers(0, 3), st.sampled_from([np.nan, np.inf, -np.inf])), max_size=3
    ),
    seed=st.integers(0, 2**16),
)
def test_a_file_reads_back_finite_or_is_refused_at_its_first_non_finite_value(
    tmp_path_factory, rows, cols, suffix, bad, seed
):
    X = np.random.default_rng(seed).normal(size=(rows, cols))
    for i, j, v in bad:
        X[i % rows, j % cols] = v
    p = _write(tmp_path_factory.mktemp("nf") / f"x{suffix}", X, header=[f"f{j}" for j in range(cols)])
    first = np.argwhere(~np.isfinite(X))
    try:
        t = datasets.read_table(p, index=False)
    except DataFileError as exc:
        assert len(first) and f"at row {first[0][0]}, column {first[0][1]} (" in str(exc), (first, str(exc))
        return
    assert not len(first)
    np.testing.assert_array_equal(t.data, X)


def test_string_labels_are_read_from_every_format(tmp_path):
    """Issue 43: a .npy of strings (unicode or bytes), a CSV column of words (with a label-named header, or none,
    spaces dropped), a parquet column of strings or of pandas categories, and a CSV or parquet label column of words
    (read_table's label_column) all read as a unicode array of the words."""
    y = np.array(WORDS * 3)
    np.save(tmp_path / "u.npy", y)
    np.save(tmp_path / "s.npy", y.astype("S"))
    np.save(tmp_path / "col.npy", y[:, None])
    (tmp_path / "h.csv").write_text("Target\n" + "\n".join(y) + "\n")
    (tmp_path / "n.csv").write_text("\n".join(f"  {w} " for w in y) + "\n")
    for name in ("u.npy", "s.npy", "col.npy", "h.csv", "n.csv"):
        got = datasets.load_labels(tmp_path / name)
        assert got.dtype.kind == "U", name
        np.testing.assert_array_equal(got, y)
    X = np.arange(18.0).reshape(9, 2) / 7
    (tmp_path / "t.csv").write_text(
        "a,species,b\n" + "".join(f"{float(r[0])!r},{w},{float(r[1])!r}\n" for r, w in zip(X, y))
    )
    t = datasets.read_table(tmp_path / "t.csv", label_column="species")
    np.testing.assert_array_equal(t.data, X)
    np.testing.assert_array_equal(t.labels, y)
    assert t.header == ["a", "b"]
    (tmp_path / "t2.csv").write_text(
        "".join(f"{w},{float(r[0])!r},{float(r[1])!r}\n" for r, w in zip(X, y))
    )  # no header
    t2 = datasets.read_table(tmp_path / "t2.csv", label_column=0)
    np.testing.assert_array_equal(t2.data, X)
    np.testing.assert_array_equal(t2.labels, y)
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    pd.DataFrame({"label": y}).to_parquet(tmp_path / "y.parquet", index=False)
    pd.DataFrame({"label": pd.Categorical(y)}).to_parquet(tmp_path / "c.parquet", index=False)
    for name in ("y.parquet", "c.parquet"):
        np.testing.assert_array_equal(datasets.load_labels(tmp_path / name), y)
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "label": y}).to_parquet(tmp_path / "t.parquet", index=False)
    t3 = datasets.read_table(tmp_path / "t.parquet", label_column="label")
    np.testing.assert_array_equal(t3.data, X)
    np.testing.assert_array_equal(t3.labels, y)


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda p: np.save(p / "x.npy", np.array(WORDS, dtype=object), allow_pickle=True), "pickled"),
        (lambda p: np.save(p / "x.npy", np.array(["cat", ""])), "empty label at entry 1"),
        (lambda p: np.save(p / "x.npy", np.array(["cat", "d" * 300])), "label of 300 characters at entry 1"),
        (lambda p: np.save(p / "x.npy", np.array([b"cat", b"\xff\xfe"])), "not UTF-8"),
        (lambda p: np.save(p / "x.npy", np.array([WORDS, WORDS])), "1-D or one column"),
        (lambda p: np.save(p / "x.npy", np.array("cat")), "1-D or one column"),
        (lambda p: (p / "x.csv").write_text("label\ncat\n" + "e" * 1000 + "\n"), "label of 1000 characters"),
        (lambda p: (p / "x.csv").write_text("cat,1\ndog,2\n"), "one column"),
    ],
)
def test_string_labels_that_cannot_be_used_are_refused_naming_the_file(tmp_path, make, match):
    make(tmp_path)
    p = next(tmp_path.iterdir())
    with pytest.raises(DataFileError, match=match) as err:
        datasets.load_labels(p)
    assert err.value.argument == "labels" and err.value.path == str(p)


def test_a_column_of_words_among_the_features_is_refused_with_a_way_out(tmp_path):
    """read_table never turns words into features: without label_column, a column of words is refused naming its
    first word, its line and the label_column that would read it; a label column of words with another column of
    words left among the features is refused too."""
    (tmp_path / "x.csv").write_text("a,b\n1,cat\n2,dog\n")
    with pytest.raises(DataFileError, match=r"line 2 is not numeric.*'cat'.*label_column=1") as err:
        datasets.read_table(tmp_path / "x.csv")
    assert err.value.argument == "path"
    (tmp_path / "y.csv").write_text("a,b,c\n0.5,cat,x\n2.5,dog,y\n")
    with pytest.raises(DataFileError, match=r"line 2 is not numeric.*'x'"):
        datasets.read_table(tmp_path / "y.csv", label_column="b")


@FAST
@given(labels=st.lists(label_text, min_size=1, max_size=25), header=st.booleans())
def test_a_csv_column_of_labels_reads_back_as_its_words_or_numbers(tmp_path_factory, labels, header):
    """Any column of labels written with the csv module reads back exactly: as numbers when every label is one
    (refused if one is not finite), else as the words with the spaces around them dropped; never another row count."""
    import csv as csv_module

    p = tmp_path_factory.mktemp("lab") / "y.csv"
    with open(p, "w", newline="") as fh:
        w = csv_module.writer(fh)
        if header:
            w.writerow(["label"])
        w.writerows([[v] for v in labels])
    try:
        got = datasets.load_labels(p, header=header)
    except DataFileError as exc:
        assert exc.argument == "labels"
        numbers = [float(v) for v in labels] if all(files._is_number(v) for v in labels) else None
        assert numbers is not None and not np.isfinite(numbers).all(), str(exc)
        return
    if all(files._is_number(v) for v in labels):
        np.testing.assert_array_equal(got, [float(v) for v in labels])
    else:
        assert got.dtype.kind == "U"
        assert got.tolist() == [v.strip() for v in labels]


def test_a_parquet_table_pyarrow_cannot_read_is_refused_in_one_line(tmp_path):
    # Was: pyarrow's message (duplicate column names) copied into the error with its line breaks.
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "dup.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array([1.0, 2.0]), pa.array([1.0, 2.0])], names=["a", "a"]), path)
    err = refused(lambda: files.load_array(path), "path", DataFileError)
    assert "\n" not in str(err) and "dup.parquet" in str(err)
