"""The IDX reader, MNIST and the paper's label split, file loaders."""

from __future__ import annotations

import gzip
import hashlib

import numpy as np
import pytest
from scipy import stats

import dpsumm
from dpsumm import datasets


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
    for kw, arg in [(dict(validation_fraction=1.5), "validation_fraction"), (dict(groups=((11,),)), "groups"),
                    (dict(target_ratio=(1.0,)), "target_ratio"), (dict(seed_set_size=100), "seed_set_size")]:
        with pytest.raises(dpsumm.InvalidParameterError) as e:
            datasets.label_split((X, y), (X, y), **kw)
        assert e.value.argument == arg
    with pytest.raises(dpsumm.InvalidParameterError):
        datasets.label_split((X, y), (X[:, :2], y))
