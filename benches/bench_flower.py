"""Per-round overhead of running the parties on Flower (loopback, 3 owners + consumer).

    python benches/bench_flower.py --rounds 2 20 --mode fast stock --json benches/bench_flower_results.json

For each (mode, rounds): start a LocalFederation (SuperLink + 4 SuperNodes on 127.0.0.1), run the
private protocol with a seeded random_state, and report: end-to-end wall time from ``flwr run`` to the
result file, the ServerApp's own time, discovery time, mean seconds per round (bid exchange + point
exchange, measured by FlowerTransport) and the same for setup / validation. The in-process run of the
same summary is timed for comparison (its per-round time is the protocol's compute, so the difference
is Flower's overhead). ``stock``: flower-supernode as shipped (3 s idle poll, a fresh ``flwr-clientapp``
process per message); ``fast``: ``python -m dpsumm.flower.supernode --poll-interval 0.05`` (capped polls, each
message's ClientApp forked from a warm process).

The nominations protocol on Flower (MNIST, 5 owners + consumer, TLS and node authentication, size 1000,
end to end from the first command, beside the paper protocol's 20 rounds in the same federation) is
``benches/bench_flower_mnist.py`` (results in ``benches/results/flower_mnist.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

import dpsumm
from dpsumm import accounting
from dpsumm.flower import LocalFederation


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, nargs="+", default=[2, 20])
    ap.add_argument("--mode", nargs="+", default=["stock", "fast"], choices=["stock", "fast"])
    ap.add_argument("--rows", type=int, default=200)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    owners = {f"owner-{k}": rng.normal(loc=k * 0.7, scale=0.5, size=(args.rows, 5)) for k in range(3)}
    validation = rng.normal(loc=1.0, scale=0.5, size=(100, 5))
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-flower-") as tmp:
        work = Path(tmp)
        paths = {}
        for n, a in owners.items():
            paths[n] = work / f"{n}.npy"
            np.save(paths[n], a)
        np.save(work / "validation.npy", validation)
        for mode in args.mode:
            for size in args.rounds:
                sched = accounting.paper_schedule(size=size, owners=3, dim=140)
                t = time.perf_counter()
                dpsumm.summarize(
                    [dpsumm.Owner(a, name=n) for n, a in owners.items()],
                    validation,
                    size,
                    method=dpsumm.PaperProtocol(schedule=sched),
                    random_state=1,
                    progress=False,
                )
                in_process = time.perf_counter() - t
                poll = None if mode == "stock" else 0.05
                with LocalFederation(
                    work / f"fed-{mode}-{size}",
                    paths,
                    work / "validation.npy",
                    node_poll_interval=poll,
                    allow_seeded=True,
                    consumer_caps=(1e4, 0.5),  # the paper's schedule spends more than a consumer node allows by default
                ) as fed:
                    t = time.perf_counter()
                    res = fed.run({"size": size, "n-features": 5, "random-state": 1, "method": "paper"}, timeout=3600)
                    e2e = time.perf_counter() - t
                ex = res.extra["exchanges_log"]
                per_round: dict[int, float] = {}
                for e in ex:
                    if e["round"] is not None:
                        per_round[e["round"]] = per_round.get(e["round"], 0.0) + e["seconds"]
                row = {
                    "mode": mode,
                    "rounds": size,
                    "end_to_end_s": e2e,
                    "serverapp_s": res.seconds,
                    "discovery_s": res.extra["discovery_seconds"],
                    "setup_s": next(e["seconds"] for e in ex if e["kind"] == "setup"),
                    "validation_s": next(e["seconds"] for e in ex if e["kind"] == "validation_request"),
                    "round_mean_s": statistics.mean(per_round.values()),
                    "round_median_s": statistics.median(per_round.values()),
                    "in_process_total_s": in_process,
                    "load_avg_1min": os.getloadavg()[0],
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
