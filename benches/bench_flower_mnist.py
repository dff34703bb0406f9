"""The nominations protocol on Flower, separate processes on loopback, MNIST (issue 15's Flower target).

MNIST label split (``dpsumm.datasets.mnist_label_split(..., random_state=0)``): 5 owners and the consumer as
SuperNodes, the aggregator as the ServerApp, TLS and SuperNode authentication on
(``LocalFederation(tls=True, node_auth=True)``, nodes polling every 0.05 s), size 1000, method
"nominations" with every default (d = 500, M = 2000 per owner, C = 8000, owner_greedy="stochastic",
choice="kernel"), gamma from the median heuristic on the public seed set (passed as a number), seeded
(``random-state`` with ``allow_seeded``: NOT private, to compare with the in-process run).

Reported: end-to-end seconds from the first command (starting the SuperLink; certificates and node keys
included) to the summary on disk, the ServerApp's own time and per exchange, whether the summary equals the
in-process one for the same seed, and, in the same federation, the paper protocol (``method="paper"``) for
``--paper-rounds`` rounds (its submit-to-result time and ServerApp time).

Run: ``python benches/bench_flower_mnist.py [--paper-rounds 20]`` -> JSON lines, writes
``benches/results/flower_mnist.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import dpsumm
from dpsumm.datasets import mnist_label_split
from dpsumm.experiments import median_gamma
from dpsumm.flower import LocalFederation

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _data import mnist_dir  # noqa: E402

MNIST = mnist_dir()  # $DPSUMM_MNIST_DIR, $MNIST_DIR or ./mnist


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mnist", default=str(MNIST))
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--paper-rounds", type=int, default=20)
    ap.add_argument("--random-state", type=int, default=1)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "flower_mnist.json"))
    a = ap.parse_args()

    split = mnist_label_split(a.mnist, random_state=0)
    gamma = float(median_gamma(split.seed_set))
    names = [f"owner-{k}" for k in range(len(split.owners))]
    n_features = int(split.validation.shape[1])
    out: dict = {
        "command": " ".join(sys.argv),
        "size": a.size,
        "gamma": gamma,
        "owners": len(names),
        "rows": [len(o) for o in split.owners],
        "validation_rows": len(split.validation),
        "load_before": os.getloadavg(),
    }

    t = time.perf_counter()
    ref = dpsumm.summarize(
        [dpsumm.Owner(x, name=n) for n, x in zip(names, split.owners)],
        split.validation,
        a.size,
        gamma=gamma,
        random_state=a.random_state,
        progress=False,
    )
    out["in_process_s"] = round(time.perf_counter() - t, 2)
    print(json.dumps(out), flush=True)

    with tempfile.TemporaryDirectory(prefix="bench-flower-mnist-") as tmp:
        work = Path(tmp)
        paths = {}
        for n, x in zip(names, split.owners):
            paths[n] = work / f"{n}.npy"
            np.save(paths[n], x)
        vpath = work / "validation.npy"
        np.save(vpath, split.validation)
        t0 = time.perf_counter()
        fed = LocalFederation(
            work / "fed", paths, vpath, tls=True, node_auth=True, node_poll_interval=0.05, allow_seeded=True
        )
        try:
            fed.start()
            t_started = time.perf_counter() - t0
            res = fed.run(
                {
                    "size": a.size,
                    "n-features": n_features,
                    "method": "nominations",
                    "gamma": gamma,
                    "random-state": a.random_state,
                },
                timeout=1800,
            )
            e2e = time.perf_counter() - t0
            row = {
                "method": "nominations",
                "end_to_end_s": round(e2e, 2),
                "federation_start_s": round(t_started, 2),
                "serverapp_s": round(res.seconds, 2),
                "discovery_s": res.extra.get("discovery_seconds"),
                "timings_s": {k: round(v, 2) for k, v in res.extra.get("timings", {}).items()},
                "exchanges": res.extra.get("exchanges"),
                "same_as_in_process": bool(
                    np.array_equal(res.owner, ref.owner)
                    and np.array_equal(res.index, ref.index)
                    and res.points is not None
                    and ref.points is not None
                    and np.array_equal(res.points, ref.points)
                ),
                "accessed_equal": res.accessed == ref.accessed,
                "load_after": os.getloadavg(),
            }
            print(json.dumps(row), flush=True)
            out["nominations"] = row
            if a.paper_rounds > 0:
                t = time.perf_counter()
                pres = fed.run(
                    {
                        "size": a.paper_rounds,
                        "n-features": n_features,
                        "method": "paper",
                        "gamma": gamma,
                        "random-state": a.random_state,
                    },
                    timeout=3600,
                )
                ps = time.perf_counter() - t
                prow = {
                    "method": "paper",
                    "rounds": a.paper_rounds,
                    "submit_to_result_s": round(ps, 2),
                    "serverapp_s": round(pres.seconds, 2),
                    "per_round_s": round(ps / a.paper_rounds, 2),
                    "load_after": os.getloadavg(),
                }
                print(json.dumps(prow), flush=True)
                out["paper"] = prow
        finally:
            fed.close()
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
