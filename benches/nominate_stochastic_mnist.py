"""Does the owners' stochastic greedy lose quality against their exact greedy? (issue 15, MNIST, end to end.)

MNIST label split (``dpsumm.datasets.mnist_label_split``, random_state 0: 5 owners of about 12,000 rows,
the consumer's validation set, the public seed set), gamma from the median heuristic on the seed set, every
other parameter at the ``dpsumm.summarize`` default (method="nominations", d = 500, M = 2p, C = 4M, the
default validation budget eps_v = 1, delta_v = 1e-6, purchase="nominees", choice="kernel"). For each summary
size p in {50, 200, 1000} and random_state in {0, 1, 2} (seeded runs: NOT private, for measurement), the
owners' greedy is run as ``owner_greedy="exact"`` and as ``"stochastic"`` with the factor r in
``--factors`` (each round evaluates ceil((C/M) r) = ceil(4 r) random candidates). Reported: MMD² (exact
kernel, ``dpsumm.metrics.mmd2``) of the summary's raw rows against the validation set, in % over
``method="central-greedy"`` (all hashes in one place, same d), and the run's seconds.

Run: ``python benches/nominate_stochastic_mnist.py [--sizes 50 200 1000] [--factors 2 4 8]`` -> prints a
table, writes ``benches/results/nominate_stochastic_mnist.json``.
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
from dpsumm.metrics import mmd2

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _data import mnist_dir  # noqa: E402

MNIST = mnist_dir()  # $DPSUMM_MNIST_DIR, $MNIST_DIR or ./mnist
# Nominations.config reads STOCHASTIC_GREEDY_FACTOR from the method's module (imported there from .aggregator).
summarize_module = sys.modules["dpsumm.protocols.nominations.method"]


def run(
    owners: list[np.ndarray], V: np.ndarray, p: int, gamma: float, seed: int, greedy: str, factor: float | None = None
) -> tuple[float, float]:
    saved = summarize_module.STOCHASTIC_GREEDY_FACTOR
    if factor is not None:
        summarize_module.STOCHASTIC_GREEDY_FACTOR = factor
    try:
        t = time.perf_counter()
        res = dpsumm.summarize(
            owners, V, p, method=dpsumm.Nominations(owner_greedy=greedy), gamma=gamma, random_state=seed, progress=False
        )  # type: ignore[arg-type]
        secs = time.perf_counter() - t
    finally:
        summarize_module.STOCHASTIC_GREEDY_FACTOR = saved
    assert res.points is not None
    return float(mmd2(res.points, V, gamma)), secs


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mnist", default=str(MNIST))
    ap.add_argument("--sizes", type=int, nargs="+", default=[50, 200, 1000])
    ap.add_argument("--factors", type=float, nargs="+", default=[2.0, 8.0])
    ap.add_argument("--seeds", type=int, default=3)
    a = ap.parse_args()

    split = mnist_label_split(a.mnist, random_state=0)
    gamma = median_gamma(split.seed_set)
    owners, V = split.owners, split.validation
    rows = []
    for p in a.sizes:
        t = time.perf_counter()
        central = dpsumm.summarize(owners, V, p, method="central-greedy", gamma=gamma, progress=False)
        assert central.points is not None
        c_mmd, c_secs = float(mmd2(central.points, V, gamma)), time.perf_counter() - t
        print(f"p={p}: central greedy MMD2 {c_mmd:.5f} ({c_secs:.1f} s)", flush=True)
        variants: list[tuple[str, float | None]] = [("exact", None)] + [("stochastic", f) for f in a.factors]
        for greedy, factor in variants:
            vals, secs = [], []
            for seed in range(a.seeds):
                v, s = run(owners, V, p, gamma, seed, greedy, factor)
                vals.append(v)
                secs.append(s)
            row = {
                "size": p,
                "owner_greedy": greedy,
                "factor": factor,
                "mmd2": vals,
                "vs_central_pct": [100 * (v / c_mmd - 1) for v in vals],
                "seconds": secs,
                "central_mmd2": c_mmd,
                "central_seconds": c_secs,
            }
            rows.append(row)
            name = greedy if factor is None else f"stochastic r={factor:g}"
            print(
                f"p={p:5d} {name:>16}: MMD2 {np.mean(vals):.5f} +- {np.std(vals):.5f}  "
                f"{np.mean(row['vs_central_pct']):+6.1f}% vs central (per seed "
                f"{', '.join(f'{x:+.1f}' for x in row['vs_central_pct'])})  {np.mean(secs):.2f} s",
                flush=True,
            )
    out = Path(__file__).resolve().parent / "results" / "nominate_stochastic_mnist.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"gamma": gamma, "dim": 500, "rows": rows, "command": " ".join(sys.argv)}, indent=1))


if __name__ == "__main__":
    main()
