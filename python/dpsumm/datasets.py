"""Data for experiments: an IDX reader, MNIST and the paper's label split (App. G); the file loaders of
:mod:`dpsumm.files`, re-exported.

The library never downloads anything: MNIST is read from a directory holding the four IDX files
(gzipped or not). Data generation here (splits, seed sets) is not privacy noise and uses numpy
randomness with scikit-learn's ``random_state`` convention.
"""

from __future__ import annotations

import gzip
import math
import numbers
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from ._validation import _scan, as_array, float_matrix, positive_float, real_vector
from .errors import DataFileError, InvalidParameterError
from .files import (
    LABEL_NAMES,
    MAX_FILE_BYTES,
    MAX_FILE_VALUES,
    MAX_LABEL_CHARS,
    Table,
    _is_dir,
    _is_file,
    _path_arg,
    _path_like,
    _read_bytes,
    _refuse_non_finite,
    load_array,
    load_labels,
    load_owners,
    read_table,
)
from .party_tables import PartyTable, read_party_table

__all__ = [
    "read_idx",
    "mnist",
    "digits",
    "LabelSplit",
    "label_split",
    "mnist_label_split",
    "digits_label_split",
    "covariate_shift",
    "load_array",
    "load_labels",
    "load_owners",
    "read_table",
    "read_party_table",
    "PartyTable",
    "write_region_tables",
    "REGIONS",
    "Table",
    "MAX_FILE_BYTES",
    "MAX_FILE_VALUES",
    "MAX_LABEL_CHARS",
    "LABEL_NAMES",
]

_IDX_DTYPES: dict[int, Any] = {
    0x08: np.uint8,
    0x09: np.int8,
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}


#: Largest number of values (rows x features) a generator here makes.
_MAX_CELLS = 1 << 28


#: Largest ``shift * n_owners`` of :func:`covariate_shift` (its rows are float32).
_MAX_SHIFT = 1e30


def _int_arg(value: object, name: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidParameterError(f"`{name}` must be an integer, got {type(value).__name__}", name)
    if not low <= int(value) <= high:
        raise InvalidParameterError(f"`{name}` must be between {low} and {high}, got {int(value)}", name)
    return int(value)


def _generator(random_state: object) -> np.random.Generator:
    if random_state is None or (
        isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool) and int(random_state) >= 0
    ):
        return np.random.default_rng(
            None if random_state is None else int(random_state)
        )  # data generation, not privacy noise
    if isinstance(random_state, np.random.Generator):
        return random_state
    raise InvalidParameterError("`random_state` must be None, an int or a numpy.random.Generator", "random_state")


def read_idx(path: str | Path) -> np.ndarray:
    """Read an IDX file (LeCun's MNIST format), gzipped or not (detected from the first bytes).

    Returns an array of the file's dtype (native byte order) and shape. A float file holding a NaN or an
    infinity is refused (:class:`DataFileError` naming the file and the index of the first one).
    """
    p = _path_arg(path)
    raw = _read_bytes(p, "path")
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise DataFileError(f"{p} is a corrupt gzip file: {exc}", p, "path") from exc
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        raise DataFileError(f"{p} is not an IDX file (bad magic number)", p, "path")
    dtype = np.dtype(_IDX_DTYPES[raw[2]])
    ndim = raw[3]
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise DataFileError(f"{p}: truncated IDX header", p, "path")
    shape = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    expected = math.prod(shape) * dtype.itemsize
    if len(raw) - header != expected:
        raise DataFileError(f"{p}: IDX body has {len(raw) - header} bytes, shape {shape} needs {expected}", p, "path")
    arr = np.frombuffer(raw, dtype=dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))
    _refuse_non_finite(arr, p, "path")
    return arr


def _find(directory: Path, stem: str) -> Path:
    for name in (f"{stem}.gz", stem, stem.replace("-idx", ".idx"), stem.replace("-idx", ".idx") + ".gz"):
        if _is_file(directory / name, "directory"):
            return directory / name
    raise InvalidParameterError(f"{stem}[.gz] not found in {directory}", "directory")


def mnist(directory: str | Path, *, kind: str = "train", normalize: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """MNIST images and labels from ``directory``.

    Returns ``(X, y)``: ``X`` of shape (n, 784), float32 in [0, 1] when ``normalize`` (else uint8), ``y`` int64.
    """
    if not isinstance(kind, str) or kind not in ("train", "test"):
        raise InvalidParameterError("`kind` must be 'train' or 'test'", "kind")
    if not isinstance(normalize, (bool, np.bool_)):
        raise InvalidParameterError(f"`normalize` must be a bool, got {type(normalize).__name__}", "normalize")
    d = _path_like(directory, "directory")
    if not _is_dir(d, "directory"):
        raise InvalidParameterError(f"`directory`: not a directory: {d}", "directory")
    prefix = "train" if kind == "train" else "t10k"
    X = read_idx(_find(d, f"{prefix}-images-idx3-ubyte"))
    y = read_idx(_find(d, f"{prefix}-labels-idx1-ubyte"))
    if X.ndim != 3 or y.ndim != 1 or X.shape[0] != y.shape[0]:
        raise InvalidParameterError(f"inconsistent MNIST files in {d}", "directory")
    X = X.reshape(X.shape[0], X.shape[1] * X.shape[2])
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
    seed_set_size = _int_arg(seed_set_size, "seed_set_size", 0, 10**8)
    if isinstance(validation_fraction, bool) or not isinstance(validation_fraction, numbers.Real):
        raise InvalidParameterError(
            f"`validation_fraction` must be a number in (0, 1), got {validation_fraction!r}", "validation_fraction"
        )
    for name, pair in (("train", train), ("test", test)):
        if isinstance(pair, (str, bytes)) or not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise InvalidParameterError(f"`{name}` must be an (X, y) pair", name)
    rng = _generator(random_state)
    X, y = _labelled_rows(train, "train")
    Xt, yt = _labelled_rows(test, "test")
    if X.shape[1] != Xt.shape[1]:
        raise InvalidParameterError(f"`test` rows have {Xt.shape[1]} features, `train` rows {X.shape[1]}", "test")
    if not 0.0 < validation_fraction < 1.0:
        raise InvalidParameterError("`validation_fraction` must be in (0, 1)", "validation_fraction")
    try:
        groups_t = tuple(tuple(_label_int(v) for v in g) for g in groups)  # type: ignore[union-attr]
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidParameterError(f"`groups` must be a list of lists of integer labels: {exc}", "groups") from exc
    if not groups_t or any(not g for g in groups_t):
        raise InvalidParameterError("`groups` must be a non-empty list of non-empty label lists", "groups")
    owners = [X[np.isin(y, g)] for g in groups_t]
    owner_labels = [y[np.isin(y, g)] for g in groups_t]
    for g, o in zip(groups_t, owners):
        if len(o) == 0:
            raise InvalidParameterError(f"no training row has a label in group {list(g)}", "groups")
    if isinstance(target_labels, (str, bytes)) or not isinstance(target_labels, Sequence) or not target_labels:
        raise InvalidParameterError(
            f"`target_labels` must be a non-empty list of labels, got {target_labels!r:.60}", "target_labels"
        )
    try:
        for v in target_labels:
            _label_int(v)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidParameterError(f"`target_labels` must hold integer labels: {exc}", "target_labels") from None
    n_targets = len(target_labels)
    ratio = real_vector(target_ratio, "target_ratio") if not isinstance(target_ratio, (str, bytes)) else np.zeros(0)
    if ratio.ndim != 1 or len(ratio) != n_targets or (ratio <= 0).any():
        raise InvalidParameterError(
            f"`target_ratio` needs one positive number per target label ({n_targets})", "target_ratio"
        )
    ratio = ratio / ratio.max()  # in (0, 1]: the sum below cannot overflow
    ratio = ratio / ratio.sum()
    available = np.array([(yt == lab).sum() for lab in target_labels])
    if (available == 0).any():
        raise InvalidParameterError("every target label needs test rows", "target_labels")
    with np.errstate(over="ignore", divide="ignore"):  # a tiny ratio: that label cannot bind (inf)
        binding = int(np.argmin(available / ratio))
    counts = np.minimum(np.round(ratio / ratio[binding] * available[binding]).astype(int), available)
    picked = np.concatenate(
        [rng.choice(np.flatnonzero(yt == lab), size=c, replace=False) for lab, c in zip(target_labels, counts)]
    )
    rng.shuffle(picked)
    to_validation = rng.random(len(picked)) < validation_fraction
    val_idx, test_idx = picked[to_validation], picked[~to_validation]
    seed_labels = None
    if isinstance(seed_set, str):
        if seed_set == "test-pool":
            pool = np.flatnonzero(~np.isin(yt, target_labels))
            if seed_set_size > len(pool):
                raise InvalidParameterError(
                    f"`seed_set_size` ({seed_set_size}) exceeds the {len(pool)} non-target test rows", "seed_set_size"
                )
            s_idx = rng.choice(pool, size=seed_set_size, replace=False)
            seed, seed_labels = Xt[s_idx], yt[s_idx]
        elif seed_set == "uniform":
            seed = rng.random((seed_set_size, X.shape[1]), dtype=np.float32)
        else:
            raise InvalidParameterError("`seed_set` must be 'test-pool', 'uniform' or an array", "seed_set")
    else:
        seed = float_matrix(seed_set, "seed_set", n_features=X.shape[1], allow_empty=True)
        if seed.size and _scan(seed) is None:
            raise InvalidParameterError("`seed_set` has values beyond the float32 range (|x| > 3.4e38)", "seed_set")
        seed = seed.astype(np.float32)
    return LabelSplit(
        owners, owner_labels, Xt[val_idx], yt[val_idx], Xt[test_idx], yt[test_idx], seed, seed_labels, groups_t
    )


def _labelled_rows(pair: object, name: str) -> tuple[np.ndarray, np.ndarray]:
    """An ``(X, y)`` pair: 2-D real rows and one finite number (or string) label per row, naming ``name``."""
    if isinstance(pair, (str, bytes)) or not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise InvalidParameterError(f"`{name}` must be an (X, y) pair", name)
    X = float_matrix(pair[0], name, allow_empty=True)
    y = as_array(pair[1], name)
    if y.shape != (X.shape[0],):
        raise InvalidParameterError(
            f"`{name}` labels must have shape ({X.shape[0]},), one per row, got {y.shape}", name
        )
    if y.dtype.kind not in "biufUS" or (y.dtype.kind == "f" and not np.isfinite(y).all()):
        raise InvalidParameterError(f"`{name}` labels must be finite numbers or strings, got dtype {y.dtype}", name)
    return X, y


def _label_int(v: object) -> int:
    """An integer label of ``groups`` (a bool or a fractional number is refused, never truncated)."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        raise ValueError(f"{v!r} is not an integer label")
    x = float(v)
    if not x.is_integer():
        raise ValueError(f"{v!r} is not an integer label")
    return int(v) if isinstance(v, numbers.Integral) else int(x)


def mnist_label_split(directory: str | Path, **kwargs: Any) -> LabelSplit:
    """The MNIST setup of the paper's Appendix G: :func:`label_split` on MNIST train and test.

    Owners: the 60,000 training rows in five label groups. Test: all 1,010 test threes and
    round(1010 · 3/7) = 433 fours (1,443 rows) before ~25% move to validation. Seed set: 150 test rows
    with labels other than 3 and 4. Pixels are float32 in [0, 1]. Keyword arguments go to
    :func:`label_split` (``random_state``, ``groups``, ``seed_set``, ...).
    """
    _path_like(directory, "directory")
    return label_split(mnist(directory, kind="train"), mnist(directory, kind="test"), **kwargs)


def digits(*, normalize: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled 8x8 digits (1,797 rows, 64 features; no download).

    Returns ``(X, y)``: ``X`` float32 in [0, 1] when ``normalize`` (pixel values / 16).
    """
    if not isinstance(normalize, (bool, np.bool_)):
        raise InvalidParameterError(f"`normalize` must be a bool, got {type(normalize).__name__}", "normalize")
    try:
        from sklearn.datasets import load_digits
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise InvalidParameterError(
            "the digits data needs scikit-learn: pip install 'dpsumm[experiments]'", "digits"
        ) from exc
    d = load_digits()
    X = d.data.astype(np.float32)
    return (X / 16.0 if normalize else X), d.target.astype(np.int64)


def digits_label_split(
    *, test_fraction: float = 0.5, seed_set_size: int = 60, random_state: object = None, **kwargs: Any
) -> LabelSplit:
    """The Appendix G design on scikit-learn's digits (a demo that needs no files).

    The 1,797 rows are split at random into a training part (owners) and a test pool of
    ``test_fraction``; then :func:`label_split` as for MNIST (owners by label groups, test rows of
    labels 3 and 4 in ratio 0.7 : 0.3, validation with probability 0.25, a seed set of
    ``seed_set_size`` non-target test-pool rows).
    """
    if isinstance(test_fraction, bool) or not isinstance(test_fraction, numbers.Real) or not 0.0 < test_fraction < 1.0:
        raise InvalidParameterError(
            f"`test_fraction` must be a number in (0, 1), got {test_fraction!r}", "test_fraction"
        )
    rng = _generator(random_state)
    X, y = digits()
    order = rng.permutation(len(X))
    n_test = int(round(test_fraction * len(X)))
    te, tr = order[:n_test], order[n_test:]
    return label_split((X[tr], y[tr]), (X[te], y[te]), seed_set_size=seed_set_size, random_state=rng, **kwargs)


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
    n_owners = _int_arg(n_owners, "n_owners", 1, 10_000)
    rows_per_owner = _int_arg(rows_per_owner, "rows_per_owner", 1, 10**8)
    n_features = _int_arg(n_features, "n_features", 2, 1 << 20)
    validation_size = _int_arg(validation_size, "validation_size", 1, 10**8)
    test_size = _int_arg(test_size, "test_size", 1, 10**8)
    seed_set_size = _int_arg(seed_set_size, "seed_set_size", 0, 10**8)
    shift = positive_float(shift, "shift")
    if shift * n_owners > _MAX_SHIFT:  # the rows are float32: centres up to shift * n_owners must stay far inside it
        raise InvalidParameterError(
            f"`shift` * n_owners must be at most {_MAX_SHIFT:g} (the rows are float32), got {shift:g} * {n_owners}",
            "shift",
        )
    for name, count in (
        ("rows_per_owner", n_owners * rows_per_owner),
        ("validation_size", validation_size),
        ("test_size", test_size),
    ):
        if count * n_features > _MAX_CELLS:
            raise InvalidParameterError(
                f"`{name}`: {count} rows of {n_features} features exceed the cap of {_MAX_CELLS} values", name
            )
    rng = _generator(random_state)
    e = np.ones(n_features) / np.sqrt(n_features)

    def label(X: np.ndarray) -> np.ndarray:
        return cast(np.ndarray, (X[:, 0] - X[:, 1] > 0).astype(np.int64))

    owners = [
        (rng.normal(size=(rows_per_owner, n_features)) * 0.5 + shift * k * e).astype(np.float32)
        for k in range(n_owners)
    ]

    def target(n: int) -> np.ndarray:
        centre = np.where(rng.random(n) < 0.5, 0.5, 1.5)[:, None] * shift * e
        return cast(np.ndarray, (rng.normal(size=(n, n_features)) * 0.5 + centre).astype(np.float32))

    validation, test = target(validation_size), target(test_size)
    seed = rng.uniform(-1.0, shift * n_owners, size=(seed_set_size, n_features)).astype(np.float32)
    return LabelSplit(
        owners,
        [label(o) for o in owners],
        validation,
        label(validation),
        test,
        label(test),
        seed,
        None,
        tuple((k,) for k in range(n_owners)),
    )


#: The regions of :func:`write_region_tables`' tables.
REGIONS = ("north", "south", "east", "west")


def write_region_tables(
    directory: str | Path,
    *,
    owners: int = 4,
    owner_rows: int = 1200,
    validation_rows: int = 300,
    test_rows: int = 1000,
    wanted_share: float = 0.68,
    random_state: object = 0,
) -> list[Path]:
    """Write a data buyer's task as CSV files, the way users hold tables: one per owner, the buyer's validation rows
    and held-out test rows from the buyer's population (columns ``age,income,region,outcome``: two numbers on their
    own scales, a text region, a yes/no outcome).

    The owners' rows are spread evenly over :data:`REGIONS`; the buyer's population holds ``wanted_share`` of its rows
    in ``"east"`` (a region shift). Age and income depend on the region, the outcome on both. Synthetic, seeded data
    for the command-line walk-through (docs/guide/buyer.md) and its test; no pandas needed.

    Returns the paths written: ``owner-1.csv`` ... ``owner-K.csv``, ``validation.csv``, ``test.csv``.
    """
    if not isinstance(directory, (str, os.PathLike)):
        raise InvalidParameterError(f"`directory` must be a path, got {type(directory).__name__}", "directory")
    owners = _int_arg(owners, "owners", 1, 10_000)
    owner_rows, validation_rows, test_rows = (
        _int_arg(n, name, 1, 10**7)
        for n, name in ((owner_rows, "owner_rows"), (validation_rows, "validation_rows"), (test_rows, "test_rows"))
    )
    if isinstance(wanted_share, bool) or not isinstance(wanted_share, numbers.Real) or not 0 <= wanted_share <= 1:
        raise InvalidParameterError(
            f"`wanted_share` must be a number in [0, 1], got {wanted_share!r:.40}", "wanted_share"
        )
    rng = _generator(random_state)
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    centre = {"north": (35.0, 42000.0), "south": (52.0, 31000.0), "east": (29.0, 78000.0), "west": (61.0, 55000.0)}

    def rows(n: int, share_east: float) -> list[list[str]]:
        others = (1.0 - share_east) / 3.0
        probs = [others, others, share_east, others]
        region = rng.choice(len(REGIONS), size=n, p=probs)
        out_rows = []
        for r in region:
            name = REGIONS[int(r)]
            age_c, inc_c = centre[name]
            age = float(np.clip(rng.normal(age_c, 8.0), 18, 90))
            income = float(np.clip(rng.normal(inc_c, 12000.0), 0, 200000))
            yes = rng.random() < 1 / (1 + np.exp(-(income - 50000) / 15000 + (age - 45) / 20))
            out_rows.append([f"{age:.0f}", f"{income:.0f}", name, "yes" if yes else "no"])
        return out_rows

    import csv

    written = []
    files = [(f"owner-{k + 1}.csv", owner_rows, 0.25) for k in range(owners)]
    files += [("validation.csv", validation_rows, wanted_share), ("test.csv", test_rows, wanted_share)]
    for name, n, share in files:
        path = out / name
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["age", "income", "region", "outcome"])
            w.writerows(rows(n, share))
        written.append(path)
    return written
