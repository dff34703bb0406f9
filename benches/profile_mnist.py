"""Where the time goes in a full MNIST run (issues 8 and 15): the paper's label split (60,000 x 784 in 5
owners), size 1000: ``method="nominations"`` at every default (d = 500; gamma from the median heuristic on the
public seed set) beside ``method="paper-greedy"`` and ``method="paper"`` (dim 140, paper schedule), per phase.

Nominations phases: target release (the consumer hashes D_v and releases g~), nominations (every owner's
streaming pass and greedy), purchase (the owners' replies with the raw rows), verification (the aggregator
re-hashes every bought row and compares bit for bit), choice (the exact-kernel greedy over the pooled
nominees), rest (ledger, result).

Phases as in bench_scale.py: setup (owners hash their rows and build their bid index), validation
release, bids, point requests, and the aggregator (h2/MWEM releases, auction, verification, bookkeeping).

Run: ``python benches/profile_mnist.py`` (MNIST in $DPSUMM_MNIST_DIR)
-> ``benches/results/mnist_profile.json``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import dpsumm
from dpsumm import datasets
from dpsumm.parties import ConsumerParty, OwnerParty

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import TimingTransport, vm  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _data import mnist_dir  # noqa: E402

MNIST = mnist_dir()  # $DPSUMM_MNIST_DIR, $MNIST_DIR or ./mnist


def main() -> None:
    t = time.perf_counter()
    s = datasets.mnist_label_split(MNIST, random_state=0)
    load_s = time.perf_counter() - t
    rows = []
    from dpsumm.experiments import median_gamma

    gamma = float(median_gamma(s.seed_set))
    names = [f"owner-{k}" for k in range(len(s.owners))]
    parties = {n: OwnerParty(d, None, n) for n, d in zip(names, s.owners)}
    parties["consumer"] = ConsumerParty(s.validation, dpsumm.privacy.Csprng(0).derive("consumer"))
    tr = TimingTransport(parties)
    t = time.perf_counter()
    res = dpsumm.summarize(s.owners, s.validation, 1000, gamma=gamma, random_state=0, progress=False, transport=tr)
    total = time.perf_counter() - t
    tm = res.extra["timings"]
    ph = {
        "target release": tr.seconds["target_request"],
        "nominations": tr.seconds["nomination_request"],
        "purchase": tr.seconds["purchase_request"],
        "verification": tm["purchase"] - tr.seconds["purchase_request"],
        "choice (exact kernel)": tm["choice"],
    }
    ph["rest (setup, ledger, result)"] = total - sum(ph.values())
    row = {
        "method": "nominations",
        "total_s": round(total, 3),
        "phases_s": {k: round(v, 3) for k, v in ph.items()},
        "dim": res.hasher.dim,
        "gamma": gamma,
        "nominees": res.extra["nominees"],
        "candidates": res.extra["candidates"],
        "greedy_sample_factor": res.extra["greedy_sample_factor"],
        "accessed": res.accessed.total,
        "pooled_hashes": res.accessed.hashes,
        "exchanges": res.extra["exchanges"],
    }
    print(json.dumps(row), flush=True)
    rows.append(row)
    del parties, tr, res
    for method in ("paper-greedy", "paper"):
        names = [f"owner-{k}" for k in range(len(s.owners))]
        parties = {n: OwnerParty(d, None, n) for n, d in zip(names, s.owners)}
        parties["consumer"] = ConsumerParty(s.validation, dpsumm.privacy.Csprng(0).derive("consumer"))
        tr = TimingTransport(parties)
        t = time.perf_counter()
        res = dpsumm.summarize(
            s.owners,
            s.validation,
            1000,
            method=method,
            seed_set=s.seed_set,
            gamma=gamma,
            random_state=0,
            progress=False,
            transport=tr,
        )
        total = time.perf_counter() - t
        ph = {
            "setup (hash + index)": tr.seconds["setup"],
            "validation release": tr.seconds["validation_request"],
            "bids": tr.seconds["bid_request"],
            "points": tr.seconds["point_request"],
        }
        ph["aggregator (h2, auction, verify)"] = total - sum(ph.values())
        row = {
            "method": method,
            "total_s": round(total, 3),
            "phases_s": {k: round(v, 3) for k, v in ph.items()},
            "rounds": len(res.trace),
            "accessed": res.accessed.total,
            "rescored": tr.rescored,
            "bid_ms_per_owner_round": round(1e3 * ph["bids"] / max(1, tr.count["bid_request"]), 3),
        }
        print(json.dumps(row), flush=True)
        rows.append(row)
    meta = {"mnist_load_s": round(load_s, 2), "peak_rss_gb": round(vm("VmHWM"), 3), "load": os.getloadavg()}
    print(json.dumps(meta))
    out = Path(__file__).resolve().parent / "results" / "mnist_profile.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"meta": meta, "runs": rows}, indent=1))


if __name__ == "__main__":
    import argparse

    # no options; --help prints what the script measures
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
