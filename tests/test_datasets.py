"""dpsumm.datasets: the IDX reader, MNIST and the paper's label split, the file readers (npy, CSV, parquet,
labels; bad paths, bad bytes, non-finite values, string labels), the generators, and bad arguments.
"""

from __future__ import annotations

import gzip
import hashlib
import pickle
import struct
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

import dpsumm
from dpsumm import (
    datasets,
)
from refusal import refused

RNG = np.random.default_rng(7)


TRAIN = (RNG.uniform(size=(200, 4)), RNG.integers(0, 10, 200))


TEST = (RNG.uniform(size=(200, 4)), RNG.integers(0, 10, 200))


SPLIT = dict(groups=((0, 1), (3, 4)), seed_set_size=10, random_state=0)


@pytest.mark.parametrize(
    "change,argument",
    [
        (dict(test=(TEST[0][:, :2], TEST[1])), "test"),  # named `train` before
        (dict(test=("abc", TEST[1])), "test"),
        (dict(groups=((0.5, 1.5),)), "groups"),  # int(0.5): label 0, silently
        (dict(groups=((True, False),)), "groups"),
        (dict(target_labels=None), "target_labels"),  # named `target_ratio` before
        (dict(target_labels=5), "target_labels"),
        (dict(train=(TRAIN[0], np.where(TRAIN[1] == 0, np.nan, TRAIN[1]))), "train"),  # NaN labels dropped silently
        (dict(train=(TRAIN[0], TRAIN[1].astype(complex))), "train"),
        (dict(seed_set=np.full((5, 4), 1e300)), "seed_set"),  # overflowed to inf in float32
        (dict(target_labels=[[3, 4], [5]]), "target_labels"),  # numpy's broadcast ValueError before
    ],
)
def test_label_split_names_the_bad_argument(change, argument):
    refused(lambda: datasets.label_split(**{"train": TRAIN, "test": TEST, **SPLIT, **change}), argument)


def test_label_split_ratios_at_the_ends_of_the_float_range():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for ratio in ((1e308, 1e308), (1e-320, 1.0)):  # was ValueError (NaN counts) and an overflow warning
            s = datasets.label_split(TRAIN, TEST, target_ratio=ratio, **SPLIT)
            assert len(s.test) + len(s.validation) > 0


def test_covariate_shift_caps_the_shift():
    refused(lambda: datasets.covariate_shift(2, 10, 3, shift=1e308), "shift")  # numpy OverflowError before


def test_load_owners_names_paths(tmp_path):
    err = refused(lambda: datasets.load_owners([tmp_path / "missing.npy"]), "paths", dpsumm.DataFileError)
    assert "paths[0]" in str(err)
    refused(lambda: datasets.load_owners([None]), "paths")


def test_mnist_files_without_rows_give_empty_arrays(tmp_path):
    (tmp_path / "train-images-idx3-ubyte").write_bytes(
        b"\x00\x00\x08\x03" + (0).to_bytes(4, "big") + (28).to_bytes(4, "big") * 2
    )
    (tmp_path / "train-labels-idx1-ubyte").write_bytes(b"\x00\x00\x08\x01" + (0).to_bytes(4, "big"))
    X, y = dpsumm.datasets.mnist(tmp_path)
    assert X.shape == (0, 784) and y.shape == (0,)


def write_idx(path, arr, compress):
    header = bytes([0, 0, 0x08, arr.ndim]) + b"".join(int(s).to_bytes(4, "big") for s in arr.shape)
    data = header + arr.astype(np.uint8).tobytes()
    path.write_bytes(gzip.compress(data) if compress else data)


@pytest.mark.parametrize("compress", [False, True])
def test_idx_roundtrip(tmp_path, compress):
    arr = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    write_idx(tmp_path / "a.idx", arr, compress)
    np.testing.assert_array_equal(datasets.read_idx(tmp_path / "a.idx"), arr)


def test_idx_malformed(tmp_path):
    (tmp_path / "bad").write_bytes(b"\x01\x02\x08\x01\x00\x00\x00\x05abcde")
    with pytest.raises(dpsumm.InvalidParameterError):
        datasets.read_idx(tmp_path / "bad")
    write_idx(tmp_path / "t", np.zeros((4, 4)), False)
    (tmp_path / "t").write_bytes((tmp_path / "t").read_bytes()[:-3])
    with pytest.raises(dpsumm.InvalidParameterError, match="needs"):
        datasets.read_idx(tmp_path / "t")
    with pytest.raises(dpsumm.InvalidParameterError):
        datasets.read_idx(tmp_path / "missing")


def test_real_mnist(mnist_dir):
    raw = gzip.decompress((mnist_dir / "train-labels-idx1-ubyte.gz").read_bytes())
    assert hashlib.md5(raw).hexdigest() == "a25bea736e30d166cdddb491f175f624"
    X, y = datasets.mnist(mnist_dir)
    Xt, yt = datasets.mnist(mnist_dir, kind="test")
    assert X.shape == (60000, 784) and Xt.shape == (10000, 784) and X.dtype == np.float32
    assert 0.0 <= X.min() and X.max() <= 1.0
    assert np.bincount(yt).tolist()[3:5] == [1010, 982]


def test_mnist_label_split(mnist_dir):
    s = datasets.mnist_label_split(mnist_dir, random_state=0)
    assert sum(len(o) for o in s.owners) == 60000
    for g, lab in zip(s.groups, s.owner_labels):
        assert set(np.unique(lab)) == set(g)
    labels = np.concatenate([s.validation_labels, s.test_labels])
    assert set(np.unique(labels)) == {3, 4}
    assert len(labels) == 1443 and (labels == 3).sum() == 1010
    # Validation fraction: binomial test at alpha = 0.001.
    assert stats.binomtest(len(s.validation), len(labels), 0.25).pvalue > 1e-3
    # Disjoint validation and test; seed rows are not owners' rows and not target digits.
    vt = {r.tobytes() for r in s.validation}
    assert not vt & {r.tobytes() for r in s.test}
    assert not set(np.unique(s.seed_labels)) & {3, 4} and len(s.seed_set) == 150
    again = datasets.mnist_label_split(mnist_dir, random_state=0)
    np.testing.assert_array_equal(again.validation, s.validation)
    assert "LabelSplit(" in repr(s)


def test_loaders(tmp_path):
    a = np.arange(12, dtype=float).reshape(4, 3)
    np.save(tmp_path / "a.npy", a)
    np.savetxt(tmp_path / "a.csv", a, delimiter=",", header="x,y,z", comments="")
    np.savetxt(tmp_path / "b.csv", a, delimiter=",")
    for name in ("a.npy", "a.csv", "b.csv"):
        np.testing.assert_array_equal(datasets.load_array(tmp_path / name), a)
    (tmp_path / "c.csv").write_text("1,2\n3,x\n")
    for bad in ("c.csv", "a.txt", "missing.npy"):
        if bad == "a.txt":
            (tmp_path / bad).write_text("1")
        with pytest.raises(dpsumm.InvalidParameterError):
            datasets.load_array(tmp_path / bad)
    assert len(datasets.load_owners([tmp_path / "a.npy", tmp_path / "b.csv"])) == 2


def test_label_split_design_on_digits():
    s = datasets.digits_label_split(random_state=3)
    assert s.groups == ((0, 1), (3, 4), (5, 6), (7, 8), (9, 2))
    for g, lab in zip(s.groups, s.owner_labels):
        assert set(np.unique(lab)) == set(g)
    labels = np.concatenate([s.validation_labels, s.test_labels])
    n3, n4 = (labels == 3).sum(), (labels == 4).sum()
    # The 3s are the binding label: all test-pool 3s are used and the 4s are round(n3 * 3/7).
    assert n4 == round(n3 * 3 / 7)
    assert set(np.unique(s.seed_labels)).isdisjoint({3, 4}) and len(s.seed_set) == 60
    # Owners' rows, test-pool rows and the seed set are disjoint subsets of the 1,797 digits.
    X, _ = datasets.digits()
    rows = [r.tobytes() for part in (*s.owners, s.validation, s.test) for r in part]
    assert len(rows) <= len(X) and s.owners[0].dtype == np.float32 and s.owners[0].max() <= 1.0
    owner_rows = {r.tobytes() for o in s.owners for r in o}
    assert not owner_rows & {r.tobytes() for r in s.seed_set}
    assert not owner_rows & {r.tobytes() for r in s.validation}


def test_label_split_rejects_bad_arguments():
    X = np.random.default_rng(0).random((40, 3))
    y = np.arange(40) % 10
    for kw, arg in [
        (dict(validation_fraction=1.5), "validation_fraction"),
        (dict(groups=((11,),)), "groups"),
        (dict(target_ratio=(1.0,)), "target_ratio"),
        (dict(seed_set_size=100), "seed_set_size"),
    ]:
        with pytest.raises(dpsumm.InvalidParameterError) as e:
            datasets.label_split((X, y), (X, y), **kw)
        assert e.value.argument == arg
    with pytest.raises(dpsumm.InvalidParameterError):
        datasets.label_split((X, y), (X[:, :2], y))


FAST = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)


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


WORDS = ["cat", "dog", "bird"]


label_text = st.text(alphabet=st.sampled_from(list("abcxyz0123456789 -_.eE+")), min_size=1, max_size=12).filter(
    lambda s: bool(s.strip())
)


FAST_rel = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _write_rel(tmp_path, name, content: bytes):
    p = tmp_path / name
    p.write_bytes(content)
    return p


def _npy_bytes(arr) -> bytes:
    import io

    b = io.BytesIO()
    np.save(b, arr, allow_pickle=True)
    return b.getvalue()


@pytest.mark.parametrize(
    "name, content",
    [
        ("corrupt.npy", b"this is not numpy"),
        ("truncated.npy", _npy_bytes(np.zeros((50, 4)))[:200]),
        ("object.npy", _npy_bytes(np.array([[1, "a"]], dtype=object))),
        ("pickled.npy", pickle.dumps({"rows": [1, 2]})),
        ("strings.npy", _npy_bytes(np.array([["a", "b"]]))),
        ("onedim.npy", _npy_bytes(np.zeros(4))),
        ("binary.csv", bytes(range(256)) * 4),
        ("nul.csv", b"1,2\n3,\x004\n"),
        ("ragged.csv", b"1,2,3\n4,5\n"),
        ("text.csv", b"a,b\nc,d\n"),
        ("empty.csv", b""),
        ("table.xlsx", b"1,2\n"),
    ],
)
def test_bad_files_are_typed_errors(tmp_path, name, content):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        datasets.load_array(_write_rel(tmp_path, name, content))
    assert e.value.argument == "path"


@pytest.mark.parametrize("path", [None, 3, b"x", True])
def test_load_array_path_type(path):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        datasets.load_array(path)
    assert e.value.argument == "path"


@FAST_rel
@given(blob=st.binary(max_size=300), suffix=st.sampled_from([".npy", ".csv"]))
def test_any_bytes_load_or_fail_typed(tmp_path_factory, blob, suffix):
    p = tmp_path_factory.mktemp("blob") / f"f{suffix}"
    p.write_bytes(blob)
    try:
        arr = datasets.load_array(p)
    except dpsumm.InvalidParameterError as exc:
        assert exc.argument == "path"
    else:
        assert arr.ndim == 2


def test_csv_header_forms(tmp_path):
    rows = np.arange(12, dtype=float).reshape(4, 3) / 7
    body = "\n".join(",".join(repr(float(v)) for v in r) for r in rows) + "\n"
    named = _write_rel(tmp_path, "named.csv", ("x,y,z\n" + body).encode())
    pandas_like = _write_rel(tmp_path, "pandas.csv", ("0,1,2\n" + body).encode())  # DataFrame(rows).to_csv(index=False)
    plain = _write_rel(tmp_path, "plain.csv", body.encode())
    for p in (named, pandas_like, plain):
        t = datasets.read_table(p)
        assert t.n_rows == 4
        np.testing.assert_array_equal(t.data, rows)  # row i of the file is row i: provenance is not shifted
    assert datasets.read_table(named).header == ["x", "y", "z"]
    assert datasets.read_table(pandas_like).header == ["0", "1", "2"]
    assert datasets.read_table(plain).header is None
    # Explicit rules override auto.
    t = datasets.read_table(pandas_like, header=False)
    assert t.n_rows == 5 and t.header is None
    np.testing.assert_array_equal(t.data[0], [0, 1, 2])
    assert datasets.read_table(plain, header=True).n_rows == 3
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        datasets.read_table(named, header=False)
    assert e.value.argument == "path" and "header=True" in str(e.value)
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        datasets.read_table(plain, header="yes")
    assert e.value.argument == "header"


def test_csv_written_by_pandas_if_available(tmp_path):
    pd = pytest.importorskip("pandas")
    rows = np.random.default_rng(0).normal(size=(6, 3))
    p = tmp_path / "df.csv"
    pd.DataFrame(rows).to_csv(p, index=False)
    t = datasets.read_table(p)
    assert t.n_rows == 6
    np.testing.assert_allclose(t.data, rows, rtol=1e-15)


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: datasets.covariate_shift(n_features=0), "n_features"),
        (lambda: datasets.covariate_shift(shift=float("nan")), "shift"),
        (lambda: datasets.covariate_shift(rows_per_owner=10**12), "rows_per_owner"),
        (lambda: datasets.covariate_shift(n_owners="3"), "n_owners"),
        (
            lambda: datasets.label_split(
                (np.zeros((4, 2)), np.zeros(4)), (np.zeros((4, 2)), np.zeros(4)), seed_set_size=-1
            ),
            "seed_set_size",
        ),
        (lambda: datasets.label_split(None, None), "train"),
    ],
)
def test_dataset_generators_validate(call, argument):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        call()
    assert e.value.argument == argument


@pytest.mark.parametrize(
    "change, argument",
    [
        (dict(directory=None), "directory"),
        (dict(owners=2**63), "owners"),  # wrote owner files for ever
        (dict(owners="4"), "owners"),
        (dict(owner_rows=1.5), "owner_rows"),
        (dict(validation_rows=-1), "validation_rows"),
        (dict(test_rows=np.ones(2)), "test_rows"),
        (dict(wanted_share=float("nan")), "wanted_share"),
        (dict(wanted_share=2.0), "wanted_share"),
    ],
    ids=[
        "directory-none",
        "owners-huge",
        "owners-str",
        "rows-float",
        "rows-negative",
        "rows-array",
        "share-nan",
        "share-2",
    ],
)
def test_write_region_tables_names_the_bad_argument(change, argument, tmp_path):
    """Each used to raise a raw TypeError, ValueError or OverflowError, a numpy warning, or (owners = 2**63) to write
    files without end; nothing is written."""
    refused(lambda: datasets.write_region_tables(**{"directory": tmp_path / "t", **change}), argument)
    assert not (tmp_path / "t").exists()
