"""Kernel-level end to end of the nominations protocol at scale (issue 15's first target).

N = 10,000,000 rows x 64 float32 features over K = 100 owners (one 2.56 GB array; each owner gets a
view of 100,000 rows, never a copy), d = 500: every owner runs ``dpsumm.kernels.nominate`` (M = 20
nominees, C = 160 candidates drawn by the weighted sample, T = 0.1) against a released validation mean, then the aggregator runs
``greedy_select`` over the 2,000 pooled nominee hashes toward the exact validation mean, size 1,000.
Reports the seconds of each phase, the total, and the peak resident memory of the process (VmHWM,
the raw rows included). Targets: < 30 s and < 5 GB.

This times the kernels only (no messages, ledger or transport): the protocol adds the validation
release and three exchanges. The rows are synthetic: owner k's rows are N(mu_k, I) with mu_k a
random shift; the validation set is 1,000 rows from near owners 0-9's shifts (covariate shift); the
released mean is perturbed by N(0, 0.03^2) per coordinate (measurement only: the library's noise
comes from its CSPRNG).

Run: ``python benches/bench_scale_nominations.py`` (``--rows 1000000`` for a quick run) -> prints JSON,
writes ``benches/results/scale_nominations.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

import dpsumm
from dpsumm.kernels import greedy_select, nominate


def vm(field: str) -> float:
    """A field of /proc/self/status in GB (VmHWM = peak resident, VmRSS = current)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024**2
    return float("nan")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--owners", type=int, default=100)
    ap.add_argument("--features", type=int, default=64)
    ap.add_argument("--dim", type=int, default=500)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--nominees", type=int, default=20)
    ap.add_argument("--candidates", type=int, default=160)
    ap.add_argument("--temperature", type=float, default=0.1)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "scale_nominations.json"))
    a = ap.parse_args()

    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    per = a.rows // a.owners
    X = np.empty((per * a.owners, a.features), dtype=np.float32)
    shifts = rng.normal(0, 1.0, (a.owners, a.features)).astype(np.float32)
    for k in range(a.owners):
        block = X[k * per : (k + 1) * per]
        rng.standard_normal(out=block, dtype=np.float32)
        block += shifts[k]
    V = (rng.standard_normal((1000, a.features), dtype=np.float32) + shifts[rng.integers(0, 10, 1000)]).astype(
        np.float32
    )
    t_gen = time.perf_counter() - t0
    rss_data = vm("VmRSS")

    gamma = 1.0 / (2.0 * a.features)
    h = dpsumm.RFFHasher(a.features, dim=a.dim, gamma=gamma, seed=0)
    t = time.perf_counter()
    g_v = h.transform(V).astype(np.float64).mean(0)
    g_tilde = g_v + np.random.default_rng(1).normal(0, 0.03, a.dim)
    t_validation = time.perf_counter() - t

    t = time.perf_counter()
    pooled_h, pooled_owner, pooled_row = [], [], []
    per_owner = []
    for k in range(a.owners):
        s = time.perf_counter()
        nom = nominate(
            X[k * per : (k + 1) * per],
            h,
            g_tilde,
            temperature=a.temperature,
            nominees=a.nominees,
            candidates=a.candidates,
            random_state=k,
        )
        per_owner.append(time.perf_counter() - s)
        pooled_h.append(nom.hashes)
        pooled_owner.append(np.full(len(nom.indices), k))
        pooled_row.append(nom.indices)
    t_owners = time.perf_counter() - t

    t = time.perf_counter()
    H = np.concatenate(pooled_h)
    idx, _ = greedy_select(H, g_v, a.size)
    t_aggregator = time.perf_counter() - t
    total = t_validation + t_owners + t_aggregator
    owners_hit = np.bincount(np.concatenate(pooled_owner)[idx], minlength=a.owners)

    result = {
        "rows": per * a.owners,
        "owners": a.owners,
        "features": a.features,
        "dim": a.dim,
        "size": a.size,
        "nominees": a.nominees,
        "candidates": a.candidates,
        "temperature": a.temperature,
        "seconds": {
            "generate_data": round(t_gen, 2),
            "validation_mean": round(t_validation, 3),
            "owners_nominate": round(t_owners, 2),
            "owner_median": round(float(np.median(per_owner)), 4),
            "aggregator_greedy": round(t_aggregator, 3),
            "total_kernels": round(total, 2),
        },
        "pooled_hashes": int(H.shape[0]),
        "selected": int(len(idx)),
        "selected_from_owners_0_9": int(owners_hit[:10].sum()),
        "memory_gb": {
            "raw_rows": round(X.nbytes / 1024**3, 3),
            "rss_after_data": round(rss_data, 3),
            "peak_rss": round(vm("VmHWM"), 3),
        },
        "load": os.getloadavg(),
        "cpus": os.cpu_count(),
    }
    print(json.dumps(result, indent=1), flush=True)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
