"""h1 against numpy's chunked float32 ``cos(X @ W + b)`` at every shape of a sweep (issue 54, target 4).

For n_features in {16, 64, 256, 784, 1024} and d in {64, 140, 500, 2048}, on 2 threads (numpy's BLAS and
dpsumm's pool alike): the reference is numpy's float32 ``sqrt(2/d) * cos(X @ omega + b)`` computed in
chunks of 8,192 rows into one preallocated output (so that numpy, like ``RFFHasher.transform``, never
holds a full-size float32 temporary beside its output); ``RFFHasher(..., threads=2).transform(X)`` is
timed on the same X in the same run. Wall time, best of ``--repeats`` rounds in which the two alternate. Each shape also checks that the
two outputs agree within 1e-5 (``max_abs_diff``). The ratio is ``t_numpy / t_dpsumm`` (>= 1: dpsumm is
at least numpy's speed).

Run: ``python benches/bench_hashing_sweep.py`` -> prints one JSON line per shape and writes
``benches/results/hashing_sweep.json``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")
os.environ.setdefault("OMP_NUM_THREADS", "2")
os.environ.setdefault("MKL_NUM_THREADS", "2")

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import dpsumm  # noqa: E402

FEATURES = (16, 64, 256, 784, 1024)
DIMS = (64, 140, 500, 2048)
CHUNK = 8192


def numpy_h1(X: np.ndarray, omega: np.ndarray, offset: np.ndarray, out: np.ndarray) -> np.ndarray:
    """numpy's float32 ``sqrt(2/d) * cos(X @ omega + b)``, chunk by chunk into ``out``."""
    scale = np.float32(np.sqrt(2.0 / omega.shape[1]))
    for s in range(0, X.shape[0], CHUNK):
        z = out[s : s + CHUNK]
        np.matmul(X[s : s + CHUNK], omega, out=z)
        z += offset
        np.cos(z, out=z)
        z *= scale
    return out


def walls(fns, repeats: int) -> list[float]:
    """The best wall time of each of ``fns`` over ``repeats`` rounds, the calls alternating within a round (so
    that a change in the machine's load during the run falls on both sides of a ratio alike)."""
    for fn in fns:
        fn()
    best = [float("inf")] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            t = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - t)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--flop", type=float, default=4e9, help="multiply-adds x 2 per timed call (sets the rows)")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--features", type=int, nargs="*", default=list(FEATURES))
    parser.add_argument("--dims", type=int, nargs="*", default=list(DIMS))
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "hashing_sweep.json"))
    args = parser.parse_args()
    rows = []
    for f in args.features:
        for dim in args.dims:
            n = int(min(400_000, max(20_000, args.flop / (2.0 * f * dim))))
            X = (np.random.default_rng(0).standard_normal((n, f), dtype=np.float32) / np.sqrt(f)).astype(np.float32)
            h = dpsumm.RFFHasher(f, dim=dim, gamma=0.5, seed=0, threads=2)
            out = np.empty((n, dim), dtype=np.float32)
            ours = h.transform(X)
            ref = numpy_h1(X, h.omega_, h.offset_, out)
            diff = float(np.max(np.abs(ours.astype(np.float64) - ref)))
            del ours
            t_np, t_us = walls([lambda: numpy_h1(X, h.omega_, h.offset_, out), lambda: h.transform(X)], args.repeats)
            row = {
                "rows": n,
                "features": f,
                "dim": dim,
                "numpy_ms": round(1e3 * t_np, 1),
                "dpsumm_ms": round(1e3 * t_us, 1),
                "ratio": round(t_np / t_us, 3),
                "max_abs_diff": diff,
            }
            print(json.dumps(row), flush=True)
            rows.append(row)
    result = {
        "command": "python benches/bench_hashing_sweep.py",
        "threads": 2,
        "load": os.getloadavg(),
        "min_ratio": min(r["ratio"] for r in rows),
        "max_abs_diff": max(r["max_abs_diff"] for r in rows),
        "rows": rows,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: result[k] for k in ("min_ratio", "max_abs_diff", "load")}))


if __name__ == "__main__":
    main()
