"""Owner groups at K = 1,000, 3,000, 10,000: the k-d tree's candidate pairs against testing all K^2 pairs.

``dpsumm.protocols.nominations.cells.owner_groups`` groups owners whose released mean hashes (64-d, the cells' h1)
cannot be told apart. It used to test all K^2 pairs (vectorised, in blocks, joined by scipy's connected components:
:func:`all_pairs_groups` below is that code); it now tests only the pairs a k-d tree (over the means' first principal axes) finds within each
owner's reach, or all pairs when most are candidates.
Both run here on the same released means, best of ``--reps``, and must give the same groups. Times are the
process's CPU seconds (``time.process_time``; run it single-threaded, ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1``):
on a machine shared with other jobs, wall time measures the load as much as the work.

The means are those of the population beds: 20 clusters of rows (``bench_scale.make_data``'s centres, spread 0.08,
64 features), each hashed by the cells' h1 (RFF, 64 dimensions, gamma by the median heuristic on 2,000 rows);
owner k draws 80 % of its rows from 3 clusters of its own, the rest from all 20, so that its mean hash is the
mixture of the clusters' mean hashes, plus its rows' sampling noise (variance ``(1 - ||m||^2) / (n d)`` per
coordinate) and the release's Gaussian noise (``sigma / n``). Two settings (``data``), ``--rows`` rows per owner
(10,000) each: ``mixes`` (each owner's own mix), and ``alike`` (every owner of one distribution, all 20 clusters
alike: every pair is joined, the index's worst case).

Run: ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benches/bench_owner_groups.py --reps 5`` ->
``benches/results/owner_groups.json`` (two minutes on a 2-core machine).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from statistics import NormalDist

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dpsumm.hashing import RFFHasher  # noqa: E402
from dpsumm.preprocessing import median_gamma  # noqa: E402
from dpsumm.protocols.nominations.cells import CELL_DIM, GROUP_LEVEL, owner_groups  # noqa: E402


def all_pairs_groups(means: np.ndarray, noise_var: np.ndarray, n: np.ndarray) -> list[list[int]]:
    """owner_groups before the k-d tree: every pair tested, (step, K) distances at a time."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    m = means
    K, d = m.shape
    z = float(NormalDist().inv_cdf(1.0 - GROUP_LEVEL))
    sq = (m * m).sum(1)
    v = d * noise_var + np.maximum(1.0 - sq, 0.0) / n
    label = np.arange(K)
    step = max(1, (1 << 22) // K)
    for start in range(0, K, step):
        rows = np.arange(start, min(K, start + step))
        D = np.maximum(sq[rows, None] + sq[None, :] - 2.0 * (m[rows] @ m.T), 0.0)
        e0 = v[rows, None] + v[None, :]
        alike = ((D - e0) <= z * math.sqrt(2.0 / d) * e0) & (np.arange(K)[None, :] > rows[:, None])
        alike &= label[rows, None] != label[None, :]
        a, b = np.nonzero(alike)
        if len(a):
            edges = coo_matrix((np.ones(len(a), dtype=np.int8), (label[rows[a]], label[b])), shape=(K, K))
            label = connected_components(edges, directed=False)[1][label]
    groups: dict[int, list[int]] = {}
    for k in range(K):
        groups.setdefault(int(label[k]), []).append(k)
    return sorted(groups.values(), key=lambda g: g[0])


def released_means(
    K: int, rows: int, sigma: float, alike: bool, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Owners' released mean hashes, noise variances and row counts (module docstring)."""
    rng = np.random.default_rng(seed)
    features, n_clusters = 64, 20
    centres = rng.random((n_clusters, features))
    sample = centres[rng.integers(0, n_clusters, 2000)] + 0.08 * rng.standard_normal((2000, features))
    hasher = RFFHasher(features, CELL_DIM, median_gamma(sample), seed=seed)
    cluster_means = np.stack(
        [hasher.transform(c + 0.08 * rng.standard_normal((4000, features))).mean(0) for c in centres]
    )
    weights = np.full((K, n_clusters), 0.2 / n_clusters)
    if alike:
        weights[:] = 1.0 / n_clusters
    else:
        for k in range(K):
            weights[k, rng.choice(n_clusters, 3, replace=False)] += 0.8 / 3
    means = weights @ cluster_means
    n = np.full(K, float(rows))
    sampling = np.maximum(1.0 - (means**2).sum(1), 0.0) / (n * CELL_DIM)
    means += rng.standard_normal(means.shape) * np.sqrt(sampling)[:, None]
    means += rng.standard_normal(means.shape) * (sigma / n)[:, None]
    return means, np.full(K, sigma**2) / n**2, n


def best_of(reps: int, f, *args):  # type: ignore[no-untyped-def]
    times, out = [], None
    for _ in range(reps):
        t0 = time.process_time()
        out = f(*args)
        times.append(time.process_time() - t0)
    return min(times), out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--owners", type=int, nargs="+", default=[1000, 3000, 10000])
    p.add_argument("--rows", type=int, default=10_000, help="rows per owner")
    p.add_argument("--sigma", type=float, default=5.0, help="the hash sums' release noise (standard deviation)")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--out", default="benches/results/owner_groups.json")
    args = p.parse_args()
    warm = released_means(50, args.rows, args.sigma, False, seed=1)
    owner_groups(*warm), all_pairs_groups(*warm)  # imports (scipy.spatial, csgraph)
    records = []
    for alike in (False, True):
        for K in args.owners:
            means, noise, n = released_means(K, args.rows, args.sigma, alike, seed=K)
            t_tree, tree = best_of(args.reps, owner_groups, means, noise, n)
            t_all, every = best_of(args.reps, all_pairs_groups, means, noise, n)
            rec = {
                "owners": K,
                "one_distribution": alike,
                "data": "alike" if alike else "mixes",
                "groups": len(tree),
                "largest_group": max(len(g) for g in tree),
                "tree_s": t_tree,
                "all_pairs_s": t_all,
                "all_pairs_over_tree": t_all / t_tree,
                "equal": tree == every,
            }
            records.append(rec)
            print(json.dumps(rec), flush=True)
    for alike in (False, True):
        rs = [r for r in records if r["one_distribution"] == alike]
        for a, b in zip(rs, rs[1:]):  # growth of each from one K to the next, against K log K's
            b["tree_growth"] = b["tree_s"] / a["tree_s"]
            b["all_pairs_growth"] = b["all_pairs_s"] / a["all_pairs_s"]
            b["k_log_k_growth"] = b["owners"] * math.log(b["owners"]) / (a["owners"] * math.log(a["owners"]))
    out = {
        "command": "python " + " ".join(sys.argv),
        "machine": {"cpus": os.cpu_count(), "load": os.getloadavg()[0]},
        "rows_per_owner": args.rows,
        "sigma": args.sigma,
        "records": records,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
