"""The rows, labels and files of a small federation (three owners and a consumer, as .npy files): shared by the
tests that run it in process, on Flower nodes and through `dpsumm flower`."""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["N_FEATURES", "DIM", "RANDOM_STATE", "LABEL_SET", "_data", "_labelled_data", "_labels_cli_flags"]

N_FEATURES = 5
#: h1's dimension and the seed of the federation tests' runs.
DIM, RANDOM_STATE = 64, 7


def _data(
    tmp: Path, n_owners: int = 3, rows: int = 60
) -> tuple[dict[str, np.ndarray], np.ndarray, dict[str, Path], Path]:
    rng = np.random.default_rng(0)
    owners = {f"owner-{k}": rng.normal(loc=k * 0.7, scale=0.5, size=(rows, N_FEATURES)) for k in range(n_owners)}
    validation = rng.normal(loc=1.0, scale=0.5, size=(40, N_FEATURES))
    paths = {}
    for name, rows_ in owners.items():
        paths[name] = tmp / f"{name}.npy"
        np.save(paths[name], rows_)
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
