"""Scaling curves of one round of bids (issue 8): time per round against N (rows), K (owners) and dim,
for the owners' 8-bit ``BidIndex`` (built from raw rows) and for numpy's float32 matvec + argmax over the
same hashed rows. Rows come from the clustered generator of bench_scale.py (64 features); the broadcast
is greedy-like, ``v = mean h1(validation) - q/(q+1) mean h1(summary)``. Each point is the median over 7
broadcasts of one round (every owner answers once, in turn, as in the protocol), after a warm-up.

Run: ``python benches/scaling_curves.py`` -> ``benches/results/scaling.png`` and ``scaling.json``
(about 4 minutes; needs matplotlib, and threadpoolctl for the 1-thread numpy line; ``--replot``
redraws the PNG from the saved JSON).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

import dpsumm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import make_data  # noqa: E402

OUT = Path(__file__).resolve().parent / "results"


def broadcasts(hasher, datas, V, count=7, seed=0):
    rng = np.random.default_rng(seed)
    g = hasher.transform(V).astype(np.float64).mean(0)
    out = []
    for _ in range(count):
        picks = np.concatenate([hasher.transform(X[rng.integers(0, len(X), 200 // len(datas) + 1)]) for X in datas])
        q = len(picks)
        out.append((g - q / (q + 1) * picks.astype(np.float64).mean(0)).astype(np.float32))
    return out


def point(n, k, d, with_numpy=True):
    datas, V = make_data(n, k, 64, seed=n + k + d)
    hasher = dpsumm.RFFHasher(64, dim=d, gamma=0.1, seed=0)
    vs = broadcasts(hasher, datas, V)
    idx = [dpsumm.kernels.BidIndex.from_rows(X, hasher) for X in datas]

    def ours(v):
        return [i.best(v) for i in idx]

    res = {"n": n, "k": k, "dim": d}
    ours(vs[0])
    ts, resc = [], []
    for v in vs:
        t = time.perf_counter()
        ours(v)
        ts.append(time.perf_counter() - t)
        resc.append(sum(i.last_rescored for i in idx))
    res["bid_index_ms"] = 1e3 * float(np.median(ts))
    res["rescored_per_round"] = float(np.median(resc))
    if with_numpy:
        hashes = [hasher.transform(X) for X in datas]
        del idx

        def numpy_round(v):
            return [int(np.argmax(H @ v)) for H in hashes]

        def timed():
            numpy_round(vs[0])
            ts = []
            for v in vs:
                t = time.perf_counter()
                numpy_round(v)
                ts.append(time.perf_counter() - t)
            return 1e3 * float(np.median(ts))

        # OpenBLAS with 2 threads has a per-call cost of several ms on small matrices on this loaded
        # machine (thread wake-ups), so numpy's number is the better of 2 and 1 BLAS threads.
        res["numpy_2_threads_ms"] = timed()
        try:
            from threadpoolctl import threadpool_limits

            with threadpool_limits(1, user_api="blas"):
                res["numpy_1_thread_ms"] = timed()
        except ImportError:
            res["numpy_1_thread_ms"] = float("inf")
        res["numpy_ms"] = min(res["numpy_2_threads_ms"], res["numpy_1_thread_ms"])
    print(json.dumps(res), flush=True)
    return res


def main() -> None:
    if "--replot" in sys.argv:
        saved = json.loads((OUT / "scaling.json").read_text())
        return plot(saved["curves"], saved["meta"])
    curves = {
        "rows (K = 10, dim = 140)": [
            point(n, 10, 140) for n in (125_000, 250_000, 500_000, 1_000_000, 2_000_000, 4_000_000)
        ],
        "owners (N = 1,000,000, dim = 140)": [point(1_000_000, k, 140) for k in (1, 3, 10, 30, 100, 300)],
        "dim (N = 1,000,000, K = 10)": [point(1_000_000, 10, d) for d in (35, 70, 140, 280, 560)],
    }
    meta = {"load": os.getloadavg(), "cpus": len(os.sched_getaffinity(0))}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "scaling.json").write_text(json.dumps({"meta": meta, "curves": curves}, indent=1))
    plot(curves, meta)


def plot(curves, meta) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker  # noqa: F401

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    for ax, (title, pts), key in zip(axes, curves.items(), ("n", "k", "dim")):
        x = [p[key] for p in pts]
        ax.loglog(x, [p["bid_index_ms"] for p in pts], "o-", label="dpsumm BidIndex (8-bit screen + exact)")
        ax.loglog(
            x, [p["numpy_ms"] for p in pts], "s--", label="numpy float32 matvec + argmax (best of 1, 2 BLAS threads)"
        )
        ax.set_xlabel(title)
        ax.set_ylabel("ms per round of bids")
        ax.grid(True, which="both", alpha=0.3)
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xticks(x, [f"{v:,}" for v in x], rotation=30, fontsize=8)
    axes[0].legend(fontsize=8)
    fig.suptitle(f"One round of bids (every owner answers once); 2-core machine, load {meta['load'][0]:.1f}")
    fig.tight_layout()
    fig.savefig(OUT / "scaling.png", dpi=110)
    print("wrote", OUT / "scaling.png")


if __name__ == "__main__":
    import argparse

    _p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _p.add_argument("--replot", action="store_true", help="redraw scaling.png from scaling.json without measuring")
    _p.parse_args()
    main()
