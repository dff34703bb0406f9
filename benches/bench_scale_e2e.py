"""The nominations protocol end to end at scale, through ``dpsumm.summarize`` (issue 15's first target).

N = 10,000,000 rows x 64 float32 features over K = 100 owners (``bench_scale.make_data``: covariate
shift, 2.56 GB of raw rows, one array per owner, never copied by the library), size 1000, every
nominations parameter at its default (d = 500, M = 2p = 2000 nominees per owner, C = 4M, the default
validation budget, purchase="nominees", choice="kernel", owner_greedy="stochastic"), seeded
(random_state=0: NOT private, for measurement). Timed through a transport that times each message kind:

- ``target`` = the consumer hashes D_v and releases g~ (and D_v to the trusted aggregator);
- ``nominations`` = every owner's streaming pass (hashing included) and greedy;
- ``purchase`` = the owners' replies with the raw rows of their nominees;
- ``aggregator`` = everything else (verification: re-hashing all K*M bought rows; the exact-kernel greedy
  over the pooled nominees; ledger, result).

Then, in the same process and on the same data, the paper's protocol (``method="paper"``, its default
d = 140) for ``--paper-rounds`` summary rows: its setup (hashing + bid index) is paid once, its rounds cost
the same each, so its time for 1,000 rows is extrapolated linearly as setup + validation + rounds * 1000 /
paper_rounds (stated in the output). ``--paper-rounds 1000`` runs it in full.

Quality: on a subsample (``--sub`` rows per owner, all K owners), ``method="central-greedy"`` (every hash
in one place, the same d) and nominations are both run; MMD² (exact kernel, ``dpsumm.metrics.mmd2``)
against the validation set is reported for both, and for the full-data nominations summary.

Run: ``python benches/bench_scale_e2e.py`` (``--rows 1000000`` for a quick run) -> JSON lines, writes
``benches/results/scale_e2e.json``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dpsumm  # noqa: E402
from bench_scale import make_data, vm  # noqa: E402
from dpsumm.metrics import mmd2  # noqa: E402
from dpsumm.parties import ConsumerParty, OwnerParty  # noqa: E402
from dpsumm.transport import InProcessTransport  # noqa: E402


class TimingTransport(InProcessTransport):
    """The in-process transport, timing each message kind (request_many goes through request)."""

    def __init__(self, parties):
        super().__init__(parties)
        self.seconds: dict[str, float] = defaultdict(float)
        self.count: dict[str, int] = defaultdict(int)

    def request(self, party, message):
        t = time.perf_counter()
        try:
            return super().request(party, message)
        finally:
            self.seconds[message.kind] += time.perf_counter() - t
            self.count[message.kind] += 1


def timed_run(method: str, datas, V, size: int, **kw):
    names = [f"owner-{k}" for k in range(len(datas))]
    parties = {n: OwnerParty(d, None, n) for n, d in zip(names, datas)}
    parties["consumer"] = ConsumerParty(V, dpsumm.privacy.Csprng(0).derive("consumer"))
    transport = TimingTransport(parties)
    t0 = time.perf_counter()
    res = dpsumm.summarize(datas, V, size, method=method, random_state=0, progress=False, transport=transport, **kw)
    total = time.perf_counter() - t0
    return res, total, transport


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--owners", type=int, default=100)
    ap.add_argument("--features", type=int, default=64)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--paper-rounds", type=int, default=20)
    ap.add_argument("--sub", type=int, default=2000, help="rows per owner of the quality subsample (0: skip)")
    ap.add_argument("--owner-greedy", default="stochastic", choices=["stochastic", "exact"])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "scale_e2e.json"))
    a = ap.parse_args()

    t = time.perf_counter()
    datas, V = make_data(a.rows, a.owners, a.features)
    base = {
        "rows": int(sum(len(d) for d in datas)),
        "owners": a.owners,
        "features": a.features,
        "size": a.size,
        "generate_s": round(time.perf_counter() - t, 1),
        "raw_gb": round(sum(d.nbytes for d in datas) / 1e9, 3),
        "rss_gb_after_data": round(vm("VmRSS"), 3),
        "cpus": len(os.sched_getaffinity(0)),
        "load_before": os.getloadavg(),
        "command": " ".join(sys.argv),
    }
    print(json.dumps(base), flush=True)
    results: dict = {"data": base}

    res, total, tr = timed_run("nominations", datas, V, a.size, owner_greedy=a.owner_greedy)
    assert res.points is not None
    phases = {
        "target": tr.seconds["target_request"],
        "nominations": tr.seconds["nomination_request"],
        "purchase": tr.seconds["purchase_request"],
    }
    phases["aggregator (verify + choice + ledger)"] = total - sum(phases.values())
    nom = {
        "method": "nominations",
        "owner_greedy": a.owner_greedy,
        "total_s": round(total, 2),
        "phases_s": {k: round(v, 2) for k, v in phases.items()},
        "aggregator_timings_s": {k: round(v, 2) for k, v in res.extra["timings"].items()},
        "nominees_per_owner": res.extra["nominees"],
        "candidates_per_owner": res.extra["candidates"],
        "dim": res.hasher.dim,
        "pooled_hashes": res.accessed.hashes,
        "raw_rows_bought": res.accessed.total,
        "peak_rss_gb": round(vm("VmHWM"), 3),
        "mmd2": float(mmd2(res.points, V, res.hasher.gamma)),
        "load_after": os.getloadavg(),
    }
    print(json.dumps(nom), flush=True)
    results["nominations"] = nom
    gamma = res.hasher.gamma
    del res, tr
    gc.collect()

    if a.paper_rounds > 0:
        res, total, tr = timed_run("paper", datas, V, a.paper_rounds)
        fixed = tr.seconds["setup"] + tr.seconds["validation_request"]
        per_round = (total - fixed) / a.paper_rounds
        paper = {
            "method": "paper",
            "dim": res.hasher.dim,
            "rounds_run": a.paper_rounds,
            "total_s": round(total, 2),
            "setup_and_validation_s": round(fixed, 2),
            "per_round_s": round(per_round, 3),
            "extrapolated_s_for_size": round(fixed + per_round * a.size, 1),
            "extrapolation": "setup + validation + per_round * size (linear in rounds)",
            "peak_rss_gb": round(vm("VmHWM"), 3),
        }
        paper["ratio_nominations_to_paper"] = round(nom["total_s"] / paper["extrapolated_s_for_size"], 4)
        print(json.dumps(paper), flush=True)
        results["paper"] = paper
        del res, tr
        gc.collect()

    if a.sub > 0:
        sub = [d[: a.sub] for d in datas]
        t = time.perf_counter()
        central = dpsumm.summarize(
            sub, V, a.size, method=dpsumm.CentralGreedy(dim=nom["dim"]), gamma=gamma, progress=False
        )
        t_c = time.perf_counter() - t
        t = time.perf_counter()
        nsub = dpsumm.summarize(
            sub,
            V,
            a.size,
            method=dpsumm.Nominations(owner_greedy=a.owner_greedy),
            gamma=gamma,
            random_state=0,
            progress=False,
        )
        t_n = time.perf_counter() - t
        assert central.points is not None and nsub.points is not None
        c_mmd = float(mmd2(central.points, V, gamma))
        n_mmd = float(mmd2(nsub.points, V, gamma))
        quality = {
            "subsample_rows": int(sum(len(d) for d in sub)),
            "central_greedy_mmd2": c_mmd,
            "central_greedy_s": round(t_c, 2),
            "nominations_subsample_mmd2": n_mmd,
            "nominations_subsample_s": round(t_n, 2),
            "nominations_subsample_vs_central_pct": round(100 * (n_mmd / c_mmd - 1), 1),
            "nominations_full_mmd2": nom["mmd2"],
            "nominations_full_vs_central_subsample_pct": round(100 * (nom["mmd2"] / c_mmd - 1), 1),
        }
        print(json.dumps(quality), flush=True)
        results["quality"] = quality
    results["peak_rss_gb_process"] = round(vm("VmHWM"), 3)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
