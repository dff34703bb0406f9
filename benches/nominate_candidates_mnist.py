"""How many candidates C does an owner's nomination need? (issue 15, kernel level, MNIST.)

MNIST label split (``dpsumm.datasets.mnist_label_split``, 5 owners of about 12,000 rows, random_state
0), d = 500, gamma from the median heuristic on the public seed set, T = 0.1, summary size p = 200,
M = 2p = 400 nominees per owner. The consumer's validation hash mean g_v is released either exactly or
with N(0, 0.03^2) noise per coordinate (numpy, for measurement only: the library's noise comes from its
CSPRNG). Each owner runs ``nominate`` with C in {M, 2M, 4M, 8M, all}, candidates by top score or by
the weighted sample (``sampling="weighted"``, random_state = repeat); the aggregator runs
``greedy_select`` over the 2,000 pooled nominee hashes toward the exact g_v, p rows. Reported: MMD²
(exact kernel, ``dpsumm.metrics.mmd2``) between the summary's raw rows and the validation set, beside
central greedy (``greedy_select`` over all 60,000 hashes toward g_v) and uniform sampling (mean of 5).

Run: ``python benches/nominate_candidates_mnist.py [--repeats 3]`` -> prints a table, writes
``benches/results/nominate_candidates_mnist.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import dpsumm
from dpsumm.datasets import mnist_label_split
from dpsumm.experiments import median_gamma
from dpsumm.kernels import greedy_select, nominate
from dpsumm.metrics import mmd2

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _data import mnist_dir  # noqa: E402

MNIST = mnist_dir()  # $DPSUMM_MNIST_DIR, $MNIST_DIR or ./mnist


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mnist", default=str(MNIST))
    ap.add_argument("--size", type=int, default=200)
    ap.add_argument("--dim", type=int, default=500)
    ap.add_argument("--temperature", type=float, default=0.1)
    ap.add_argument("--noise", type=float, default=0.03)
    ap.add_argument("--repeats", type=int, default=3, help="noise draws / sample seeds")
    a = ap.parse_args()

    split = mnist_label_split(a.mnist, random_state=0)
    gamma = median_gamma(split.seed_set)
    h = dpsumm.RFFHasher(split.owners[0].shape[1], dim=a.dim, gamma=gamma, seed=0)
    V = split.validation
    g_v = h.transform(V).astype(np.float64).mean(0)
    p, M = a.size, 2 * a.size
    owners = split.owners
    all_X = np.concatenate(owners)

    t = time.perf_counter()
    central, _ = greedy_select(h.transform(all_X), g_v, p)
    central_mmd = mmd2(all_X[central], V, gamma)
    t_central = time.perf_counter() - t
    rng = np.random.default_rng(0)
    uniform_mmd = float(np.mean([mmd2(all_X[rng.choice(len(all_X), p, replace=False)], V, gamma) for _ in range(5)]))
    print(f"gamma={gamma:.5f} d={a.dim} p={p} M={M} owners={[len(o) for o in owners]} validation={len(V)}")
    print(f"central greedy MMD2 {central_mmd:.5f} ({t_central:.1f} s), uniform {uniform_mmd:.5f}")

    factors: list[int | None] = [1, 2, 4, 8, None]
    rows = []
    for noise, sampling in [(0.0, "top"), (0.0, "weighted"), (a.noise, "top"), (a.noise, "weighted")]:
        for f in factors:
            draws = 1 if (noise == 0.0 and sampling == "top") or f is None else a.repeats
            vals, secs = [], []
            for r in range(draws):
                g_tilde = g_v + (np.random.default_rng(100 + r).normal(0, noise, a.dim) if noise else 0.0)
                s = time.perf_counter()
                pool_h, pool_x = [], []
                for X in owners:
                    C = len(X) if f is None else f * M
                    nom = nominate(
                        X,
                        h,
                        g_tilde,
                        temperature=a.temperature,
                        nominees=M,
                        candidates=C,
                        sampling=sampling,
                        random_state=r,
                    )
                    pool_h.append(nom.hashes)
                    pool_x.append(X[nom.indices])
                idx, _ = greedy_select(np.concatenate(pool_h), g_v, p)
                secs.append(time.perf_counter() - s)
                vals.append(mmd2(np.concatenate(pool_x)[idx], V, gamma))
            row = {
                "noise_std": noise,
                "sampling": sampling,
                "C": "all" if f is None else f"{f}M",
                "mmd2": float(np.mean(vals)),
                "mmd2_sd": float(np.std(vals)),
                "vs_central_pct": 100 * (float(np.mean(vals)) / central_mmd - 1),
                "seconds": float(np.mean(secs)),
                "draws": draws,
            }
            rows.append(row)
            print(
                f"noise {noise:.2f}  {sampling:>8}  C={row['C']:>4}  MMD2 {row['mmd2']:.5f} +- {row['mmd2_sd']:.5f}  "
                f"{row['vs_central_pct']:+6.1f}% vs central  {row['seconds']:.2f} s",
                flush=True,
            )
    out = Path(__file__).resolve().parent / "results" / "nominate_candidates_mnist.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "gamma": gamma,
                "dim": a.dim,
                "size": p,
                "nominees": M,
                "temperature": a.temperature,
                "central_greedy_mmd2": central_mmd,
                "uniform_mmd2": uniform_mmd,
                "rows": rows,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
