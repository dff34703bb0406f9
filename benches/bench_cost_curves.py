"""Cost curves of the nominations protocol at its defaults: owners against N_k and d, the
aggregator against the pooled nominee count K*M.

1. One owner's ``dpsumm.kernels.nominate`` (the streaming pass + the greedy among its candidates) at the
   defaults for size p = 1000: M = 2000 nominees, C = 8000 candidates, the stochastic greedy (factor
   ``STOCHASTIC_GREEDY_FACTOR``), T = 0.2, 64 features: against N_k (d = 500) and against d (N_k = 100,000);
   ``RFFHasher.transform`` of the same rows alone for reference, and the exact owner greedy at one point.
2. The aggregator against K*M (p = 1000, 64 features, |D_v| = 2000, d = 500): verification (h1 of every
   bought row), the exact-kernel choice (``kernels.exact_greedy``: validation kernel means +
   the fused Rust greedy; the default ``choice="kernel"``) and the hash choice (``greedy_select``).

Rows are N(0, I) (owners) and N(0.5, I) (validation); synthetic timing data only.

Run: ``python benches/bench_cost_curves.py`` (about 2 minutes on 2 cores) -> JSON lines,
``benches/results/cost_curves.json``, ``benches/results/cost_owner.png``, ``benches/results/cost_aggregator.png``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

import dpsumm
from dpsumm.kernels import exact_greedy, greedy_select, nominate
from dpsumm.protocols.nominations.aggregator import STOCHASTIC_GREEDY_FACTOR

OUT = Path(__file__).resolve().parent / "results"
F, P, M, C = 64, 1000, 2000, 8000


def wall(fn, reps: int = 2) -> float:
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    rows: list[dict] = []

    def emit(row: dict) -> None:
        print(json.dumps(row), flush=True)
        rows.append(row)

    rng = np.random.default_rng(0)
    Xbig = rng.standard_normal((1_000_000, F), dtype=np.float32)
    V = rng.standard_normal((2000, F), dtype=np.float32) + np.float32(0.5)

    def g_for(h: dpsumm.RFFHasher) -> np.ndarray:
        return h.transform(V).astype(np.float64).mean(0) + np.random.default_rng(1).normal(0, 0.03, h.dim)

    h500 = dpsumm.RFFHasher(F, dim=500, gamma=1 / (2 * F), seed=0)
    g500 = g_for(h500)
    for n in [10_000, 30_000, 100_000, 300_000, 1_000_000]:
        X = Xbig[:n]
        t = wall(
            lambda: nominate(
                X,
                h500,
                g500,
                temperature=0.2,
                nominees=M,
                candidates=C,
                random_state=0,
                greedy_sample_factor=STOCHASTIC_GREEDY_FACTOR,
            )
        )
        th = wall(lambda: h500.transform(X), reps=1) if n <= 300_000 else None
        emit(
            {
                "bench": "owner_vs_rows",
                "n": n,
                "d": 500,
                "M": M,
                "C": C,
                "greedy": "stochastic",
                "seconds": round(t, 4),
                "transform_only_s": None if th is None else round(th, 4),
            }
        )
    X = Xbig[:100_000]
    t = wall(lambda: nominate(X, h500, g500, temperature=0.2, nominees=M, candidates=C, random_state=0), reps=1)
    emit(
        {
            "bench": "owner_exact_greedy",
            "n": 100_000,
            "d": 500,
            "M": M,
            "C": C,
            "greedy": "exact",
            "seconds": round(t, 4),
        }
    )
    for d in [140, 250, 500, 1000]:
        h = dpsumm.RFFHasher(F, dim=d, gamma=1 / (2 * F), seed=0)
        g = g_for(h)
        t = wall(
            lambda: nominate(
                X,
                h,
                g,
                temperature=0.2,
                nominees=M,
                candidates=C,
                random_state=0,
                greedy_sample_factor=STOCHASTIC_GREEDY_FACTOR,
            )
        )
        emit(
            {
                "bench": "owner_vs_dim",
                "n": 100_000,
                "d": d,
                "M": M,
                "C": C,
                "greedy": "stochastic",
                "seconds": round(t, 4),
            }
        )

    g_v = h500.transform(V).astype(np.float64).mean(0)
    for pool in [2_000, 20_000, 50_000, 200_000]:
        R = Xbig[:pool]
        t_ver = wall(lambda: h500.transform(R), reps=1)
        H = h500.transform(R)
        t_kernel = wall(lambda: exact_greedy([R], V, np.zeros((0, F), np.float32), min(P, pool), 1 / (2 * F)), reps=1)
        t_hash = wall(lambda: greedy_select(H, g_v, min(P, pool)), reps=1)
        emit(
            {
                "bench": "aggregator_vs_pool",
                "pooled": pool,
                "d": 500,
                "p": P,
                "validation_rows": len(V),
                "verify_s": round(t_ver, 4),
                "kernel_choice_s": round(t_kernel, 4),
                "hash_choice_s": round(t_hash, 4),
            }
        )

    OUT.mkdir(parents=True, exist_ok=True)
    meta = {"load": os.getloadavg(), "cpus": len(os.sched_getaffinity(0)), "command": " ".join(sys.argv)}
    (OUT / "cost_curves.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    own = [r for r in rows if r["bench"] == "owner_vs_rows"]
    dims = [r for r in rows if r["bench"] == "owner_vs_dim"]
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    ax[0].loglog(
        [r["n"] for r in own], [r["seconds"] for r in own], "o-", label="nominate (M=2000, C=8000, stochastic)"
    )
    tr = [(r["n"], r["transform_only_s"]) for r in own if r["transform_only_s"] is not None]
    ax[0].loglog([a for a, _ in tr], [b for _, b in tr], "s--", label="RFFHasher.transform alone")
    ax[0].set_xlabel("owner rows N_k (64 features)")
    ax[0].set_ylabel("seconds")
    ax[0].set_title("one owner's nomination, d = 500")
    ax[0].legend()
    ax[1].plot([r["d"] for r in dims], [r["seconds"] for r in dims], "o-")
    ax[1].set_xlabel("d")
    ax[1].set_ylabel("seconds")
    ax[1].set_title("one owner's nomination, N_k = 100,000")
    fig.tight_layout()
    fig.savefig(OUT / "cost_owner.png", dpi=120)
    agg = [r for r in rows if r["bench"] == "aggregator_vs_pool"]
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for key, label in [
        ("kernel_choice_s", "exact-kernel choice (default)"),
        ("hash_choice_s", "hash choice"),
        ("verify_s", "verification (h1 of bought rows)"),
    ]:
        ax.loglog([r["pooled"] for r in agg], [r[key] for r in agg], "o-", label=label)
    ax.set_xlabel("pooled nominees K*M")
    ax.set_ylabel("seconds")
    ax.set_title("aggregator, p = 1000, d = 500, 64 features")
    ax.legend()
    fig.tight_layout()
    fig.savefig(OUT / "cost_aggregator.png", dpi=120)


if __name__ == "__main__":
    import argparse

    # no options; --help prints what the script measures
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
