"""End to end at scale (issue 8): N rows x 64 features over K owners, size 1000, dim 140.

Generates the owners' rows with numpy (non-private generation; float32, one array per owner, 2.6 GB at
N = 10,000,000), runs ``dpsumm.summarize`` with ``method="paper-greedy"`` and ``method="paper"`` through a
timing transport, and reports the time of each phase and the peak resident memory of the process.

Phases: ``setup`` = owners hash their rows and build their 8-bit bid index (``Setup`` messages);
``validation`` = the consumer's release; ``bids`` = all ``BidRequest`` round trips; ``points`` = all
``PointRequest`` round trips; ``aggregator`` = everything else in ``summarize`` (h2/MWEM releases, the
auction, verification of received rows, bookkeeping).

Run: ``python benches/bench_scale.py`` (defaults: the issue's 10M x 64, K = 100, size 1000, dim 140);
``python benches/bench_scale.py --rows 1000000 --owners 10`` for a quick run. Prints one JSON object
per method and writes them to ``--out`` (default ``benches/results/scale.json``).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

import dpsumm
from dpsumm.parties import ConsumerParty, OwnerParty
from dpsumm.transport import InProcessTransport


def vm(field: str) -> float:
    """A field of /proc/self/status in GB (VmHWM = peak resident, VmRSS = current)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024**2
    return float("nan")


class TimingTransport(InProcessTransport):
    """The in-process transport, timing each message kind."""

    def __init__(self, parties):
        super().__init__(parties)
        self.seconds: dict[str, float] = defaultdict(float)
        self.count: dict[str, int] = defaultdict(int)
        self.rescored = 0

    def request(self, party, message):
        t = time.perf_counter()
        try:
            return super().request(party, message)
        finally:
            self.seconds[message.kind] += time.perf_counter() - t
            self.count[message.kind] += 1
            index = getattr(self._parties.get(party), "_index", None)
            if message.kind == "bid_request" and index is not None:
                self.rescored += index.last_rescored


def make_data(rows: int, owners: int, features: int, seed: int = 0, labels: bool = False):
    """K owners with covariate shift: owner k draws mostly from its own clusters; the validation set
    (the consumer's target) from a few of them. Values in about [0, 1]. With ``labels``, also each row's cluster
    (one of 20) as its label: ``(datas, V, owner_labels, V_labels)``; the rows are the same either way."""
    rng = np.random.default_rng(seed)
    n_clusters = 20
    centres = rng.random((n_clusters, features), dtype=np.float32)
    sizes = np.full(owners, rows // owners)
    sizes[: rows % owners] += 1
    datas, owner_labels = [], []
    for k in range(owners):
        own = rng.choice(n_clusters, size=3, replace=False)
        which = np.where(
            rng.random(sizes[k]) < 0.8, own[rng.integers(0, 3, sizes[k])], rng.integers(0, n_clusters, sizes[k])
        )
        X = rng.standard_normal((sizes[k], features), dtype=np.float32)
        X *= np.float32(0.08)
        X += centres[which]
        datas.append(X)
        if labels:
            owner_labels.append(which.astype(np.int64))
    target = rng.choice(n_clusters, size=4, replace=False)
    v_which = target[rng.integers(0, 4, 2000)]
    V = centres[v_which] + np.float32(0.08) * rng.standard_normal((2000, features), dtype=np.float32)
    if labels:
        return datas, V.astype(np.float32), owner_labels, v_which.astype(np.int64)
    return datas, V.astype(np.float32)


def run(method: str, datas, V, size: int, dim: int, seed: int = 0) -> dict:
    names = [f"owner-{k}" for k in range(len(datas))]
    parties = {n: OwnerParty(d, None, n) for n, d in zip(names, datas)}
    parties["consumer"] = ConsumerParty(V, dpsumm.privacy.Csprng(seed).derive("consumer"))
    transport = TimingTransport(parties)
    t0 = time.perf_counter()
    res = dpsumm.summarize(
        datas,
        V,
        size,
        method=dpsumm.methods.resolve_method(method).set_params(dim=dim),
        random_state=seed,
        progress=False,
        transport=transport,
    )
    total = time.perf_counter() - t0
    index_bytes = sum(p._index.nbytes for n, p in parties.items() if n != "consumer")
    rescored = transport.rescored
    phases = {
        "setup (hash + index)": transport.seconds["setup"],
        "validation release": transport.seconds["validation_request"],
        "bids": transport.seconds["bid_request"],
        "points": transport.seconds["point_request"],
    }
    phases["aggregator (h2, auction, verify)"] = total - sum(phases.values())
    rounds = len(res.trace)
    out = {
        "method": method,
        "rows": int(sum(len(d) for d in datas)),
        "owners": len(datas),
        "features": int(datas[0].shape[1]),
        "size": size,
        "dim": dim,
        "rounds": rounds,
        "total_s": round(total, 2),
        "phases_s": {k: round(v, 2) for k, v in phases.items()},
        "bid_round_ms": round(1e3 * phases["bids"] / max(1, rounds), 2),
        "bid_requests": transport.count["bid_request"],
        "index_gb": round(index_bytes / 1e9, 3),
        "peak_rss_gb": round(vm("VmHWM"), 3),
        "rss_gb_after": round(vm("VmRSS"), 3),
        "accessed": res.accessed.total,
        "rescored": rescored,
    }
    del parties, transport, res
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--owners", type=int, default=100)
    ap.add_argument("--features", type=int, default=64)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--dim", type=int, default=140)
    ap.add_argument("--methods", default="greedy,private")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "scale.json"))
    a = ap.parse_args()
    t = time.perf_counter()
    datas, V = make_data(a.rows, a.owners, a.features)
    gen = time.perf_counter() - t
    base = {
        "generate_s": round(gen, 1),
        "rss_gb_data": round(vm("VmRSS"), 3),
        "raw_gb": round(sum(d.nbytes for d in datas) / 1e9, 3),
        "machine": platform.processor() or platform.machine(),
        "cpus": len(__import__("os").sched_getaffinity(0)),
        "load_before": __import__("os").getloadavg(),
    }
    print(json.dumps(base), flush=True)
    results = [base]
    for m in a.methods.split(","):
        r = run(m, datas, V, a.size, a.dim)
        r["load_after"] = __import__("os").getloadavg()
        print(json.dumps(r), flush=True)
        results.append(r)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
