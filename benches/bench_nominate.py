"""The nominations protocol's kernels: Rust against the numpy twins, and how they scale.

1. ``greedy_select`` and ``nominate`` against ``dpsumm.reference`` on the same inputs in the same run
   (the twin of ``nominate`` is given the full hash matrix, so it does not even pay for hashing in
   blocks; its time includes ``RFFHasher.transform``). Wall time, best of 3, all threads.
2. One owner's ``nominate`` time against its row count N_k (64 features, d = 500, M = 20, C = 160)
   and against d (N_k = 100,000) -> ``benches/results/nominate_owner.png``.
3. The aggregator's ``greedy_select`` time against the pooled hash count K*M (k = 1000, d = 500)
   -> ``benches/results/nominate_aggregator.png``.

Run: ``python benches/bench_nominate.py`` (about 2-4 minutes on 2 cores) -> prints JSON lines, writes
``benches/results/nominate.json`` and the two plots. ``--quick`` for smaller sizes.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

import dpsumm
from dpsumm import reference as ref
from dpsumm.kernels import greedy_select, nominate

OUT = Path(__file__).resolve().parent / "results"


def wall(fn, reps: int = 3) -> float:
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def owner_data(n: int, f: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, f), dtype=np.float32)


def g_tilde(h: dpsumm.RFFHasher, f: int, seed: int) -> np.ndarray:
    """A validation hash mean of 500 shifted rows plus N(0, 0.03^2) noise (measurement only)."""
    rng = np.random.default_rng(seed)
    V = rng.standard_normal((500, f), dtype=np.float32) + 0.5
    return h.transform(V).astype(np.float64).mean(0) + rng.normal(0, 0.03, h.dim)


def hashes(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    X = owner_data(n, 64, seed)
    h = dpsumm.RFFHasher(64, dim=d, gamma=1 / 128, seed=seed)
    return h.transform(X), g_tilde(h, 64, seed + 1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rows: list[dict[str, object]] = []

    def emit(row: dict[str, object]) -> None:
        print(json.dumps(row), flush=True)
        rows.append(row)

    # 1. Rust vs numpy twin.
    for n, d, k in [(2000, 500, 1000), (20_000, 500, 200)]:
        H, g = hashes(n, d, 1)
        t_rust = wall(lambda: greedy_select(H, g, k))
        t_np = wall(lambda: ref.greedy_select(H, g, k), reps=1)
        same = bool((greedy_select(H, g, k)[0] == ref.greedy_select(H, g, k)[0]).all()) if n <= 2000 else None
        emit(
            {
                "bench": "greedy_vs_numpy",
                "n": n,
                "d": d,
                "k": k,
                "rust_s": round(t_rust, 4),
                "numpy_s": round(t_np, 4),
                "speedup": round(t_np / t_rust, 2),
                "same_indices": same,
            }
        )
    for n in [100_000] if not args.quick else [20_000]:
        X = owner_data(n, 64, 2)
        h = dpsumm.RFFHasher(64, dim=500, gamma=1 / 128, seed=2)
        g = g_tilde(h, 64, 3)
        t_rust = wall(lambda: nominate(X, h, g, temperature=0.1, nominees=20, candidates=160, random_state=0))
        t_np = wall(lambda: ref.nominate(h.transform(X), g, 0.1, 20, 160, sample_seed=0), reps=1)
        a = nominate(X, h, g, temperature=0.1, nominees=20, candidates=160, random_state=0)
        b = ref.nominate(h.transform(X), g, 0.1, 20, 160, sample_seed=0)
        emit(
            {
                "bench": "nominate_vs_numpy",
                "n": n,
                "features": 64,
                "d": 500,
                "M": 20,
                "C": 160,
                "rust_s": round(t_rust, 4),
                "numpy_s": round(t_np, 4),
                "speedup": round(t_np / t_rust, 2),
                "same_indices": bool((a.indices == b[0]).all()),
            }
        )

    # 2. Owner time against N_k and d.
    sizes = [10_000, 30_000, 100_000, 300_000, 1_000_000] if not args.quick else [10_000, 100_000]
    owner_n = []
    for n in sizes:
        X = owner_data(n, 64, 4)
        h = dpsumm.RFFHasher(64, dim=500, gamma=1 / 128, seed=4)
        g = g_tilde(h, 64, 5)
        t = wall(
            lambda: nominate(X, h, g, temperature=0.1, nominees=20, candidates=160, random_state=0),
            reps=2 if n >= 300_000 else 3,
        )
        t_hash = wall(lambda: h.transform(X), reps=1) if n <= 300_000 else None
        row = {
            "bench": "owner_vs_rows",
            "n": n,
            "features": 64,
            "d": 500,
            "M": 20,
            "C": 160,
            "seconds": round(t, 4),
            "rows_per_s": round(n / t),
            "transform_only_s": None if t_hash is None else round(t_hash, 4),
        }
        emit(row)
        owner_n.append(row)
    owner_d = []
    n = 100_000 if not args.quick else 20_000
    X = owner_data(n, 64, 6)
    for d in [140, 250, 500, 1000]:
        h = dpsumm.RFFHasher(64, dim=d, gamma=1 / 128, seed=6)
        g = g_tilde(h, 64, 7)
        t = wall(lambda: nominate(X, h, g, temperature=0.1, nominees=20, candidates=160, random_state=0))
        row = {"bench": "owner_vs_dim", "n": n, "features": 64, "d": d, "M": 20, "C": 160, "seconds": round(t, 4)}
        emit(row)
        owner_d.append(row)

    # 3. Aggregator greedy against the pooled count.
    agg = []
    for n in [1000, 2000, 5000, 10_000, 30_000, 100_000] if not args.quick else [1000, 2000, 10_000]:
        H, g = hashes(n, 500, 8)
        k = min(1000, n)
        t = wall(lambda: greedy_select(H, g, k), reps=1 if n >= 30_000 else 3)
        row = {
            "bench": "aggregator_vs_pool",
            "pooled": n,
            "d": 500,
            "k": k,
            "seconds": round(t, 4),
            "ns_per_row_round_dim": round(1e9 * t / (n * k * 500), 4),
        }
        emit(row)
        agg.append(row)

    OUT.mkdir(parents=True, exist_ok=True)
    meta = {"load": os.getloadavg(), "cpus": os.cpu_count(), "rayon_threads": os.environ.get("RAYON_NUM_THREADS")}
    (OUT / "nominate.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    ax[0].loglog([r["n"] for r in owner_n], [r["seconds"] for r in owner_n], "o-", label="nominate (M=20, C=160)")
    tr = [(r["n"], r["transform_only_s"]) for r in owner_n if r["transform_only_s"] is not None]
    ax[0].loglog([a for a, _ in tr], [b for _, b in tr], "s--", label="RFFHasher.transform alone")
    ax[0].set_xlabel("owner rows N_k (64 features)")
    ax[0].set_ylabel("seconds")
    ax[0].set_title("one owner's nomination, d = 500")
    ax[0].legend()
    ax[1].plot([r["d"] for r in owner_d], [r["seconds"] for r in owner_d], "o-")
    ax[1].set_xlabel("d")
    ax[1].set_ylabel("seconds")
    ax[1].set_title(f"one owner's nomination, N_k = {n:,}")
    fig.tight_layout()
    fig.savefig(OUT / "nominate_owner.png", dpi=120)
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.loglog([r["pooled"] for r in agg], [r["seconds"] for r in agg], "o-")
    ax.set_xlabel("pooled nominee hashes K*M")
    ax.set_ylabel("seconds")
    ax.set_title("aggregator greedy, k = 1000, d = 500")
    fig.tight_layout()
    fig.savefig(OUT / "nominate_aggregator.png", dpi=120)


if __name__ == "__main__":
    main()
