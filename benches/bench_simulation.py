"""A thousand owners on Flower's Simulation Engine: wall time and peak memory against the same run in process.

On the synthetic rows of ``bench_scale.make_data`` (covariate shift, 64 float32 features), K owners of ``--rows``
rows each, every owner's rows and the consumer's in a ``.npy`` file, this script runs, in one process:

* the run in process: ``dpsumm.summarize`` with every default and ``random_state`` (seeded: the same releases as the
  federation's), over the owners' rows in memory; its wall time and its peak resident memory (``VmHWM``, reset just
  before the run) and peak anonymous memory;
* the same run on the Simulation Engine (:class:`dpsumm.flower.simulation.SimulatedFederation`: the ServerApp and
  the ClientApp of a deployment, each owner and the consumer a virtual SuperNode with its deployment's node config,
  ClientApps in Ray actors of one CPU each): its wall time (Ray's start, discovery, the exchanges, the stop), the
  ServerApp's discovery and exchange seconds, and the peak over the run of the resident and anonymous memory summed
  over every process of the run's process group (the ServerApp's process and every Ray process), sampled every
  0.2 s from ``/proc`` (``VmRSS``, ``RssAnon``: Ray's shared-memory object store counts in the first, not the second);
* whether the two summaries are equal: the owners, row indices and points bought, the rows accessed, and no owner
  excluded (the run config's ``reply-timeout`` and ``node-wait`` are ``--timeout``: virtual nodes answer one after
  another on Ray's actors, so an exchange with 1,000 owners, or their hellos, may outlast a deployment's 60 and
  120 s).

Run: ``python benches/bench_simulation.py`` (K = 1,000 owners of 10,000 rows: about 10 minutes on a 2-core machine)
-> ``benches/results/simulation.json``; ``--owners 5 --rows 300`` for a trial.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import dpsumm  # noqa: E402
from bench_scale import make_data  # noqa: E402
from dpsumm.flower.local import group_members  # noqa: E402
from dpsumm.flower.simulation import SimulatedFederation  # noqa: E402

GB = 1e9


def _status_kb(pid: int | str, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _reset_peak() -> None:
    """Reset this process's VmHWM (Linux: writing 5 to clear_refs)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


class GroupMemory:
    """Peak over time of the summed VmRSS and RssAnon of every process in one process group, sampled in a thread."""

    def __init__(self, interval: float = 0.2) -> None:
        self.interval, self.peak_rss_kb, self.peak_anon_kb, self.processes = interval, 0, 0, 0
        self._stop = threading.Event()

    def watch(self, pgid_of: Callable[[], int | None]) -> threading.Thread:
        def loop() -> None:
            while not self._stop.is_set():
                pgid = pgid_of()
                if pgid is not None:
                    members = group_members(pgid)
                    self.processes = max(self.processes, len(members))
                    self.peak_rss_kb = max(self.peak_rss_kb, sum(_status_kb(p, "VmRSS") for p in members))
                    self.peak_anon_kb = max(self.peak_anon_kb, sum(_status_kb(p, "RssAnon") for p in members))
                time.sleep(self.interval)

        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        return thread

    def stop(self, thread: threading.Thread) -> None:
        self._stop.set()
        thread.join()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--owners", type=int, default=1000)
    p.add_argument("--rows", type=int, default=10_000, help="rows per owner")
    p.add_argument("--features", type=int, default=64)
    p.add_argument("--size", type=int, default=1000, help="summary size p")
    p.add_argument("--seed", type=int, default=0, help="random_state of both runs (seeded: NOT private)")
    p.add_argument("--cpus", type=int, default=2, help="CPUs Ray may use")
    p.add_argument("--timeout", type=float, default=3600.0)
    p.add_argument("--workdir", default=None, help="data files and logs (default: a temporary directory)")
    p.add_argument("--out", default="benches/results/simulation.json")
    args = p.parse_args()
    load_before = os.getloadavg()[0]

    datas, V = make_data(args.owners * args.rows, args.owners, args.features, seed=args.seed)
    names = [f"owner-{k}" for k in range(args.owners)]
    with tempfile.TemporaryDirectory(prefix="dpsumm-simulation-") as tmp:
        work = Path(args.workdir or tmp)
        work.mkdir(parents=True, exist_ok=True)
        paths = {}
        for name, rows in zip(names, datas):
            paths[name] = work / f"{name}.npy"
            np.save(paths[name], rows)
        np.save(work / "validation.npy", V)

        owners = [dpsumm.Owner(d, name=n) for n, d in zip(names, datas)]
        dpsumm.summarize(owners[:3], V, 10, random_state=1, progress=False)  # warm-up: imports, accountant
        _reset_peak()
        t0 = time.perf_counter()
        ref = dpsumm.summarize(owners, V, args.size, random_state=args.seed, progress=False)
        in_process = {
            "wall_s": time.perf_counter() - t0,
            "peak_rss_gb": _status_kb("self", "VmHWM") * 1e3 / GB,
            "anon_after_gb": _status_kb("self", "RssAnon") * 1e3 / GB,
        }
        del owners

        fed = SimulatedFederation(work / "sim", paths, work / "validation.npy", allow_seeded=True, cpus=args.cpus)
        memory = GroupMemory()
        watcher = memory.watch(lambda: fed.pid)
        t0 = time.perf_counter()
        try:
            run_config = {"size": args.size, "n-features": args.features, "random-state": args.seed}
            # The virtual nodes answer one after another on the CPUs' actors: an exchange with K owners (and the
            # hellos of discovery) may take minutes, and no owner is excluded for its place in that queue.
            run_config["reply-timeout"] = run_config["node-wait"] = args.timeout
            res = fed.run(run_config, args.timeout)
        finally:
            memory.stop(watcher)
        wall = time.perf_counter() - t0
        exchanges = res.extra.get("exchanges_log", [])
        simulation = {
            "wall_s": wall,
            "server_s": res.seconds,
            "discovery_s": res.extra.get("discovery_seconds"),
            "exchanges_s": sum(float(e["seconds"]) for e in exchanges),
            "exchanges": [
                {"kind": e["kind"], "parties": len(e["parties"]), "seconds": e["seconds"]} for e in exchanges
            ],
            "peak_rss_gb": memory.peak_rss_kb * 1e3 / GB,
            "peak_anon_gb": memory.peak_anon_kb * 1e3 / GB,
            "processes": memory.processes,
            "left_after": len(group_members(fed.pid)) if fed.pid is not None else None,
        }
    equal = {
        "owner": bool(np.array_equal(res.owner, ref.owner)),
        "index": bool(np.array_equal(res.index, ref.index)),
        "points": bool(np.array_equal(res.points, ref.points)),
        "accessed": res.accessed == ref.accessed,
        "events": res.events == ref.events,
    }
    out = {
        "command": "python " + " ".join(sys.argv),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_before": load_before,
            "load_after": os.getloadavg()[0],
        },
        "owners": args.owners,
        "rows_per_owner": args.rows,
        "rows": args.owners * args.rows,
        "features": args.features,
        "size": args.size,
        "data_gb": sum(d.nbytes for d in datas) / GB,
        "in_process": in_process,
        "simulation": simulation,
        "simulation_over_in_process_wall": wall / in_process["wall_s"],
        "equal": equal,
        "all_equal": all(equal.values()),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
