"""h1 throughput against this machine's float32 matrix multiply plus the cosine (issue 8, target 3).

Single thread, CPU time (``time.process_time``, so that other users' load disturbs it less than wall
time), best of 5: numpy's float32 ``X @ omega`` (OpenBLAS sgemm), numpy's float32 ``np.cos`` on that
product (the cosine cost), and ``RFFHasher.transform`` (fused product + cosine + scale). The target is
``(t_sgemm + t_cos) / t_dpsumm >= 0.7`` (issue 8, d = 140) and ``>= 0.8`` at the nominations' d = 500
(issue 15).

Run: ``python benches/bench_hashing.py`` -> prints a table, writes ``benches/results/hashing.json``.
"""

from __future__ import annotations

import os

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

import dpsumm  # noqa: E402


def cpu(fn, reps=5):
    fn()
    best = float("inf")
    for _ in range(reps):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def main() -> None:
    rows = []
    for n, f, dim in [(200_000, 64, 140), (50_000, 784, 140), (100_000, 64, 500), (20_000, 784, 500)]:
        rng = np.random.default_rng(0)
        X = rng.random((n, f), dtype=np.float32)
        h = dpsumm.RFFHasher(f, dim=dim, gamma=0.1, seed=0)
        Z = X @ h.omega_
        t_mm = cpu(lambda: X @ h.omega_)
        t_cos = cpu(lambda: np.cos(Z))
        t_ours = cpu(lambda: h.transform(X))
        flop = 2.0 * n * f * dim
        row = {
            "rows": n,
            "features": f,
            "dim": dim,
            "sgemm_ms": round(1e3 * t_mm, 1),
            "sgemm_gflops": round(flop / t_mm / 1e9, 1),
            "cos_ms": round(1e3 * t_cos, 1),
            "dpsumm_ms": round(1e3 * t_ours, 1),
            "dpsumm_gflops": round(flop / t_ours / 1e9, 1),
            "ratio": round((t_mm + t_cos) / t_ours, 3),
        }
        print(json.dumps(row), flush=True)
        rows.append(row)
    out = Path(__file__).resolve().parent / "results" / "hashing.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"load": os.getloadavg(), "rows": rows}, indent=1))


if __name__ == "__main__":
    import argparse

    # no options; --help prints what the script measures
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
