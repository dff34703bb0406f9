"""The rows, labels and files of the tests' small federations: owners and a consumer, in memory (``blobs``,
``label_shift``) or as files (``_data``, ``_labelled_data``, ``label_shift_files``, ``small_files``); shared by the
tests that run them in process, on Flower nodes and through `dpsumm summarize` and `dpsumm flower`."""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = [
    "N_FEATURES",
    "DIM",
    "RANDOM_STATE",
    "LABEL_SET",
    "blobs",
    "label_shift",
    "label_shift_files",
    "small_files",
    "_data",
    "_labelled_data",
    "_labels_cli_flags",
]

N_FEATURES = 5
#: h1's dimension and the seed of the federation tests' runs.
DIM, RANDOM_STATE = 64, 7


def blobs(
    seed: int = 0, K: int = 4, n: int = 60, f: int = N_FEATURES, m: int = 40
) -> tuple[list[np.ndarray], np.ndarray]:
    """``K`` owners of ``n`` rows, owner k's a Gaussian blob at ``0.7 k`` (scale 0.5), and a validation set of ``m``
    rows at 1.0 (between owners 1 and 2)."""
    rng = np.random.default_rng(seed)
    owners = [rng.normal(loc=k * 0.7, scale=0.5, size=(n, f)) for k in range(K)]
    validation = rng.normal(loc=1.0, scale=0.5, size=(m, f))
    return owners, validation


def label_shift(
    seed: int = 0, K: int = 4, n: int = 120, f: int = N_FEATURES, m: int = 60
) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray, np.ndarray]:
    """Owner k holds labels 0, 1, 2 with different mixes (row features follow the label); the consumer wants
    mostly label 2 and some label 0: ``(owners, labels, validation, validation_labels)``."""
    rng = np.random.default_rng(seed)
    mixes = [(0.6, 0.3, 0.1), (0.2, 0.7, 0.1), (0.1, 0.3, 0.6), (0.4, 0.4, 0.2)][:K]
    owners, labels = [], []
    for mix in mixes:
        y = rng.choice(3, size=n, p=mix)
        owners.append(rng.normal(loc=y[:, None] * 1.5, scale=0.5, size=(n, f)))
        labels.append(y)
    yv = rng.choice([0, 2], size=m, p=[0.3, 0.7])
    validation = rng.normal(loc=yv[:, None] * 1.5, scale=0.5, size=(m, f))
    return owners, labels, validation, yv


def _data(
    tmp: Path, n_owners: int = 3, rows: int = 60
) -> tuple[dict[str, np.ndarray], np.ndarray, dict[str, Path], Path]:
    """``blobs(0, n_owners, rows)`` as files: ``owner-k.npy`` and ``validation.npy`` in ``tmp``."""
    arrays, validation = blobs(0, n_owners, rows)
    owners = {f"owner-{k}": x for k, x in enumerate(arrays)}
    paths = {}
    for name, x in owners.items():
        paths[name] = tmp / f"{name}.npy"
        np.save(paths[name], x)
    np.save(tmp / "validation.npy", validation)
    return owners, validation, paths, tmp / "validation.npy"


def _labelled_data(
    tmp: Path,
) -> tuple[
    dict[str, np.ndarray], dict[str, np.ndarray], np.ndarray, np.ndarray, dict[str, Path], dict[str, Path], Path, Path
]:
    """Three owners holding labels 0, 1, 2 in different mixes (row features follow the label); the consumer wants
    mostly label 2 and some label 0 (a label shift)."""
    rng = np.random.default_rng(3)
    owners, labels, paths, label_paths = {}, {}, {}, {}
    for k, mix in enumerate([(0.6, 0.3, 0.1), (0.2, 0.7, 0.1), (0.1, 0.3, 0.6)]):
        name = f"owner-{k}"
        y = rng.choice(3, size=60, p=mix)
        owners[name] = rng.normal(loc=y[:, None] * 1.5, scale=0.5, size=(60, N_FEATURES))
        labels[name] = y
        paths[name], label_paths[name] = tmp / f"{name}.npy", tmp / f"{name}-labels.npy"
        np.save(paths[name], owners[name])
        np.save(label_paths[name], y)
    yv = rng.choice([0, 2], size=40, p=[0.3, 0.7])
    validation = rng.normal(loc=yv[:, None] * 1.5, scale=0.5, size=(40, N_FEATURES))
    np.save(tmp / "validation.npy", validation)
    np.save(tmp / "validation-labels.npy", yv)
    return owners, labels, validation, yv, paths, label_paths, tmp / "validation.npy", tmp / "validation-labels.npy"


LABEL_SET = (0, 1, 2)

#: `dpsumm account` for the paper's schedule at p = 500 over 5 owners, read at the deltas of its tests.
PAPER_ACCOUNT_ARGS = [
    "account",
    "--schedule",
    "paper",
    "--size",
    "500",
    "--owners",
    "5",
    "--delta",
    "1e-4",
    "--validation-delta",
    "0.01",
]
#: `dpsumm flower` for two owners and their labels (the paths are what the printed commands carry, never read).
FLOWER_TWO_LABELLED_OWNERS = [
    "flower",
    "--owner",
    "a=/data/a.npy",
    "--owner",
    "b=/data/b.npy",
    "--labels",
    "a=/data/ya.npy",
    "--labels",
    "b=/data/yb.npy",
]


def _labels_cli_flags(paths: dict[str, Path], label_paths: dict[str, Path], vpath: Path, ypath: Path) -> list[str]:
    """`dpsumm flower` flags of a seeded label purchase over the `_labelled_data` files (summary of 6 rows)."""
    return [
        "flower",
        *(a for n, p in paths.items() for a in ("--owner", f"{n}={p}")),
        *(a for n, p in label_paths.items() for a in ("--labels", f"{n}={p}")),
        "--consumer",
        str(vpath),
        "--validation-labels",
        str(ypath),
        "--size",
        "6",
        "--purchase",
        "labels",
        "--label-set",
        "0,1,2",
        "--dim",
        str(DIM),
        "--random-state",
        str(RANDOM_STATE),
    ]


def label_shift_files(
    tmp: Path,
) -> tuple[list[np.ndarray], list[np.ndarray], list[str], list[str], np.ndarray, np.ndarray]:
    """Three owners holding labels 0, 1, 2 in different mixes (labels in one-column CSV files, features in [0, 1]
    following the label); the consumer wants mostly label 2 and some label 0. Writes ``owner{k}.npy``,
    ``labels{k}.csv``, ``val.npy`` and ``val-labels.csv`` to ``tmp``; returns ``(owners, labels, owner paths, label
    paths, validation, validation labels)``."""
    rng = np.random.default_rng(4)
    owners, labels, paths, label_paths = [], [], [], []
    for k, mix in enumerate([(0.6, 0.3, 0.1), (0.2, 0.7, 0.1), (0.1, 0.3, 0.6)]):
        y = rng.choice(3, size=40, p=mix)
        X = np.clip(rng.normal(loc=0.2 + 0.3 * y[:, None], scale=0.1, size=(40, 4)), 0, 1)
        owners.append(X)
        labels.append(y)
        paths.append(str(tmp / f"owner{k}.npy"))
        np.save(paths[-1], X)
        label_paths.append(str(tmp / f"labels{k}.csv"))
        np.savetxt(label_paths[-1], y, delimiter=",", fmt="%d")
    yv = rng.choice([0, 2], size=30, p=[0.3, 0.7])
    val = np.clip(rng.normal(loc=0.2 + 0.3 * yv[:, None], scale=0.1, size=(30, 4)), 0, 1)
    np.save(tmp / "val.npy", val)
    np.savetxt(tmp / "val-labels.csv", yv, delimiter=",", fmt="%d")
    return owners, labels, paths, label_paths, val, yv


def small_files(tmp: Path) -> tuple[list[str], str]:
    """Two owners of 20 rows and a validation set of 8 (3 features, standard normal) as ``o0.npy``, ``o1.npy`` and
    ``v.npy`` in ``tmp``: ``(owner paths, validation path)``."""
    rng = np.random.default_rng(0)
    paths = []
    for k in range(2):
        p = tmp / f"o{k}.npy"
        np.save(p, rng.normal(size=(20, 3)))
        paths.append(str(p))
    v = tmp / "v.npy"
    np.save(v, rng.normal(size=(8, 3)))
    return paths, str(v)
