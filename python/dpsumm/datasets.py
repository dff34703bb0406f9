"""Data for experiments: an IDX reader, MNIST and the paper's label split (App. G), file loaders.

The library never downloads anything: MNIST is read from a directory holding the four IDX files
(gzipped or not). Data generation here (splits, seed sets) is not privacy noise and uses numpy
randomness with scikit-learn's ``random_state`` convention.
"""

from __future__ import annotations

import gzip
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from .errors import InvalidParameterError

__all__ = ["read_idx", "mnist", "digits", "LabelSplit", "label_split", "mnist_label_split", "digits_label_split", "covariate_shift", "load_array", "load_labels", "load_owners"]

_IDX_DTYPES: dict[int, Any] = {0x08: np.uint8, 0x09: np.int8, 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}


def _generator(random_state: object) -> np.random.Generator:
    if random_state is None or isinstance(random_state, numbers.Integral):
        return np.random.default_rng(None if random_state is None else int(random_state))  # data generation, not privacy noise
    if isinstance(random_state, np.random.Generator):
        return random_state
    raise InvalidParameterError("`random_state` must be None, an int or a numpy.random.Generator", "random_state")


def read_idx(path: str | Path) -> np.ndarray:
    """Read an IDX file (LeCun's MNIST format), gzipped or not (detected from the first bytes).

    Returns an array of the file's dtype (native byte order) and shape.
    """
    p = Path(path)
    if not p.is_file():
        raise InvalidParameterError(f"IDX file not found: {p}", "path")
    raw = p.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise InvalidParameterError(f"{p} is a corrupt gzip file: {exc}", "path") from exc
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        raise InvalidParameterError(f"{p} is not an IDX file (bad magic number)", "path")
    dtype = np.dtype(_IDX_DTYPES[raw[2]])
    ndim = raw[3]
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise InvalidParameterError(f"{p}: truncated IDX header", "path")
    shape = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(raw) - header != expected:
        raise InvalidParameterError(f"{p}: IDX body has {len(raw) - header} bytes, shape {shape} needs {expected}", "path")
    return np.frombuffer(raw, dtype=dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))


def _find(directory: Path, stem: str) -> Path:
    for name in (f"{stem}.gz", stem, stem.replace("-idx", ".idx"), stem.replace("-idx", ".idx") + ".gz"):
        if (directory / name).is_file():
            return directory / name
    raise InvalidParameterError(f"{stem}[.gz] not found in {directory}", "directory")


def mnist(directory: str | Path, *, kind: str = "train", normalize: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """MNIST images and labels from ``directory``.

    Returns ``(X, y)``: ``X`` of shape (n, 784), float32 in [0, 1] when ``normalize`` (else uint8), ``y`` int64.
    """
    if kind not in ("train", "test"):
        raise InvalidParameterError("`kind` must be 'train' or 'test'", "kind")
    d = Path(directory)
    prefix = "train" if kind == "train" else "t10k"
    X = read_idx(_find(d, f"{prefix}-images-idx3-ubyte"))
    y = read_idx(_find(d, f"{prefix}-labels-idx1-ubyte"))
    if X.ndim != 3 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise InvalidParameterError(f"inconsistent MNIST files in {d}", "directory")
    X = X.reshape(X.shape[0], -1)
    return (X.astype(np.float32) / 255.0 if normalize else X), y.astype(np.int64)


@dataclass(frozen=True)
class LabelSplit:
    """Owners, consumer data and a public seed set for a covariate-shift experiment."""

    owners: list[np.ndarray]
    owner_labels: list[np.ndarray]
    validation: np.ndarray
    validation_labels: np.ndarray
    test: np.ndarray
    test_labels: np.ndarray
    seed_set: np.ndarray
    seed_labels: np.ndarray | None
    groups: tuple[tuple[int, ...], ...]

    def __repr__(self) -> str:
        return (
            f"LabelSplit(owners={[len(o) for o in self.owners]}, groups={self.groups}, "
            f"validation={len(self.validation)}, test={len(self.test)}, seed_set={len(self.seed_set)})"
        )


def label_split(
    train: tuple[np.ndarray, np.ndarray],
    test: tuple[np.ndarray, np.ndarray],
    *,
    groups: Sequence[Sequence[int]] = ((0, 1), (3, 4), (5, 6), (7, 8), (9, 2)),
    target_labels: Sequence[int] = (3, 4),
    target_ratio: Sequence[float] = (0.7, 0.3),
    validation_fraction: float = 0.25,
    seed_set_size: int = 150,
    seed_set: str | np.ndarray = "test-pool",
    random_state: object = None,
) -> LabelSplit:
    """The paper's label-split design (Appendix G) on any labelled data.

    * Owners: the ``train`` rows, one owner per label group (default ``[0,1], [3,4], [5,6], [7,8],
      [9,2]``); rows whose label is in no group are left out.
    * Test: ``test`` rows of ``target_labels`` sampled in ``target_ratio`` (0.7 : 0.3), as many as the
      rarer-needed label allows.
    * Validation: each test row moves to the validation set independently with probability
      ``validation_fraction`` (0.25) and is removed from the test set.
    * Seed set (public, never owners' data): ``"test-pool"`` draws ``seed_set_size`` rows from the
      ``test`` rows whose labels are not targets (another public population); ``"uniform"`` draws
      uniform random features in [0, 1]; or pass an array.

    Parameters
    ----------
    train, test : (X, y) pairs
        Rows (n, n_features) and integer labels (n,).
    random_state : None, int or numpy.random.Generator
        Data sampling only (not privacy noise).

    Returns
    -------
    LabelSplit
    """
    rng = _generator(random_state)
    X, y = (np.asarray(a) for a in train)
    Xt, yt = (np.asarray(a) for a in test)
    if X.ndim != 2 or Xt.ndim != 2 or X.shape[1] != Xt.shape[1] or y.shape != (len(X),) or yt.shape != (len(Xt),):
        raise InvalidParameterError("`train` and `test` must be (X, y) pairs with 2-D X of equal width", "train")
    if not 0.0 < validation_fraction < 1.0:
        raise InvalidParameterError("`validation_fraction` must be in (0, 1)", "validation_fraction")
    groups_t = tuple(tuple(int(v) for v in g) for g in groups)
    if not groups_t or any(not g for g in groups_t):
        raise InvalidParameterError("`groups` must be a non-empty list of non-empty label lists", "groups")
    owners = [X[np.isin(y, g)] for g in groups_t]
    owner_labels = [y[np.isin(y, g)] for g in groups_t]
    for g, o in zip(groups_t, owners):
        if len(o) == 0:
            raise InvalidParameterError(f"no training row has a label in group {list(g)}", "groups")
    ratio = np.asarray(target_ratio, dtype=float)
    if len(ratio) != len(target_labels) or (ratio <= 0).any():
        raise InvalidParameterError("`target_ratio` needs one positive entry per target label", "target_ratio")
    ratio = ratio / ratio.sum()
    available = np.array([(yt == lab).sum() for lab in target_labels])
    if (available == 0).any():
        raise InvalidParameterError("every target label needs test rows", "target_labels")
    binding = int(np.argmin(available / ratio))
    counts = np.minimum(np.round(ratio / ratio[binding] * available[binding]).astype(int), available)
    picked = np.concatenate([rng.choice(np.flatnonzero(yt == lab), size=c, replace=False) for lab, c in zip(target_labels, counts)])
    rng.shuffle(picked)
    to_validation = rng.random(len(picked)) < validation_fraction
    val_idx, test_idx = picked[to_validation], picked[~to_validation]
    seed_labels = None
    if isinstance(seed_set, str):
        if seed_set == "test-pool":
            pool = np.flatnonzero(~np.isin(yt, target_labels))
            if seed_set_size > len(pool):
                raise InvalidParameterError(f"`seed_set_size` ({seed_set_size}) exceeds the {len(pool)} non-target test rows", "seed_set_size")
            s_idx = rng.choice(pool, size=seed_set_size, replace=False)
            seed, seed_labels = Xt[s_idx], yt[s_idx]
        elif seed_set == "uniform":
            seed = rng.random((seed_set_size, X.shape[1]), dtype=np.float32)
        else:
            raise InvalidParameterError("`seed_set` must be 'test-pool', 'uniform' or an array", "seed_set")
    else:
        seed = np.asarray(seed_set, dtype=np.float32)
    return LabelSplit(owners, owner_labels, Xt[val_idx], yt[val_idx], Xt[test_idx], yt[test_idx], seed, seed_labels, groups_t)


def mnist_label_split(directory: str | Path, **kwargs: Any) -> LabelSplit:
    """The MNIST setup of the paper's Appendix G: :func:`label_split` on MNIST train and test.

    Owners: the 60,000 training rows in five label groups. Test: all 1,010 test threes and
    round(1010 · 3/7) = 433 fours (1,443 rows) before ~25% move to validation. Seed set: 150 test rows
    with labels other than 3 and 4. Pixels are float32 in [0, 1]. Keyword arguments go to
    :func:`label_split` (``random_state``, ``groups``, ``seed_set``, ...).
    """
    return label_split(mnist(directory, kind="train"), mnist(directory, kind="test"), **kwargs)


def digits(*, normalize: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled 8x8 digits (1,797 rows, 64 features; no download).

    Returns ``(X, y)``: ``X`` float32 in [0, 1] when ``normalize`` (pixel values / 16).
    """
    try:
        from sklearn.datasets import load_digits
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise InvalidParameterError("the digits data needs scikit-learn: pip install 'dpsumm[experiments]'", "digits") from exc
    d = load_digits()
    X = d.data.astype(np.float32)
    return (X / 16.0 if normalize else X), d.target.astype(np.int64)


def digits_label_split(*, test_fraction: float = 0.5, seed_set_size: int = 60, random_state: object = None,
                       **kwargs: Any) -> LabelSplit:
    """The Appendix G design on scikit-learn's digits (a demo that needs no files).

    The 1,797 rows are split at random into a training part (owners) and a test pool of
    ``test_fraction``; then :func:`label_split` as for MNIST (owners by label groups, test rows of
    labels 3 and 4 in ratio 0.7 : 0.3, validation with probability 0.25, a seed set of
    ``seed_set_size`` non-target test-pool rows).
    """
    if not 0.0 < test_fraction < 1.0:
        raise InvalidParameterError("`test_fraction` must be in (0, 1)", "test_fraction")
    rng = _generator(random_state)
    X, y = digits()
    order = rng.permutation(len(X))
    n_test = int(round(test_fraction * len(X)))
    te, tr = order[:n_test], order[n_test:]
    return label_split((X[tr], y[tr]), (X[te], y[te]), seed_set_size=seed_set_size, random_state=rng, **kwargs)


def load_array(path: str | Path) -> np.ndarray:
    """Rows from a ``.npy``, ``.csv`` (numeric; a header line is skipped) or ``.parquet`` file."""
    p = Path(path)
    if not p.is_file():
        raise InvalidParameterError(f"file not found: {p}", "path")
    suffix = p.suffix.lower()
    if suffix == ".npy":
        arr = np.load(p, allow_pickle=False)
    elif suffix == ".csv":
        with p.open() as f:
            first = f.readline()
        try:
            [float(v) for v in first.strip().split(",") if v.strip()]
            skip = 0
        except ValueError:
            skip = 1
        try:
            arr = np.loadtxt(p, delimiter=",", skiprows=skip, ndmin=2)
        except ValueError as exc:
            raise InvalidParameterError(f"{p}: not a numeric CSV ({exc})", "path") from exc
    elif suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError as exc:
            raise InvalidParameterError("reading .parquet needs pyarrow: pip install 'dpsumm[parquet]'", "path") from exc
        table = pq.read_table(p)
        try:
            arr = np.column_stack([table.column(i).to_numpy() for i in range(table.num_columns)]).astype(np.float64)
        except (ValueError, TypeError) as exc:
            raise InvalidParameterError(f"{p}: non-numeric columns ({exc})", "path") from exc
    else:
        raise InvalidParameterError(f"unknown file type {suffix!r} (use .npy, .csv or .parquet)", "path")
    if arr.ndim != 2:
        raise InvalidParameterError(f"{p}: expected a 2-D table, got {arr.ndim}-D", "path")
    return cast(np.ndarray, arr)


def load_labels(path: str | Path) -> np.ndarray:
    """Labels from a ``.npy`` file (1-D, or one column) or a one-column ``.csv``/``.parquet`` file, as a 1-D array."""
    p = Path(path)
    if p.suffix.lower() == ".npy" and p.is_file():
        arr = np.load(p, allow_pickle=False)
        if arr.ndim == 1:
            return cast(np.ndarray, arr)
    else:
        arr = load_array(p)
    if arr.ndim != 2 or arr.shape[1] != 1:
        raise InvalidParameterError(f"{p}: labels must be 1-D or one column, got shape {arr.shape}", "labels")
    return cast(np.ndarray, arr[:, 0])


def load_owners(paths: Sequence[str | Path]) -> list[np.ndarray]:
    """:func:`load_array` for each owner's file."""
    return [load_array(p) for p in paths]


def covariate_shift(
    n_owners: int = 5,
    rows_per_owner: int = 2000,
    n_features: int = 10,
    shift: float = 1.0,
    validation_size: int = 300,
    test_size: int = 1000,
    seed_set_size: int = 150,
    random_state: object = None,
) -> LabelSplit:
    """Synthetic owners under covariate shift, with labels.

    Generative model: owner k's rows are ``N(shift · k · e, 0.5² I)`` with ``e = (1, …, 1)/sqrt(n_features)``
    (owners sit at increasing distances along one direction). The consumer's target distribution is the
    equal mixture of ``N(shift · 0.5 · e, 0.5² I)`` and ``N(shift · 1.5 · e, 0.5² I)``: close to owners 0, 1
    and 2, far from the others. Validation and test rows are drawn from the target. Labels:
    ``y = 1[x_0 - x_1 > 0]`` for every row. The seed set is uniform in the public box ``[-1, shift · n_owners]``
    per feature (data-independent).
    """
    rng = _generator(random_state)
    e = np.ones(n_features) / np.sqrt(n_features)

    def label(X: np.ndarray) -> np.ndarray:
        return cast(np.ndarray, (X[:, 0] - X[:, 1] > 0).astype(np.int64))

    owners = [(rng.normal(size=(rows_per_owner, n_features)) * 0.5 + shift * k * e).astype(np.float32) for k in range(n_owners)]

    def target(n: int) -> np.ndarray:
        centre = np.where(rng.random(n) < 0.5, 0.5, 1.5)[:, None] * shift * e
        return cast(np.ndarray, (rng.normal(size=(n, n_features)) * 0.5 + centre).astype(np.float32))

    validation, test = target(validation_size), target(test_size)
    seed = rng.uniform(-1.0, shift * n_owners, size=(seed_set_size, n_features)).astype(np.float32)
    return LabelSplit(owners, [label(o) for o in owners], validation, label(validation), test, label(test), seed, None,
                      tuple((k,) for k in range(n_owners)))
