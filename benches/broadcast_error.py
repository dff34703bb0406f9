"""How far the private broadcast of Alg. 3 is from the exact one on MNIST (README, "Reproducing the paper").

Replays the h2 releases of the private protocol along the non-private greedy path with
``dpsumm.experiments.broadcast_error``, at the paper's schedule and with the noise switched off
(ε = 1e4 per step), for γ = 0.1 and the median-heuristic γ of the public seed set. Seeded: NOT private.

    python benches/broadcast_error.py --data $MNIST_DIR --out docs/experiments/broadcast_error.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import dpsumm
from dpsumm import datasets, experiments


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=None, help="MNIST directory (default $DPSUMM_MNIST_DIR, $MNIST_DIR or ./mnist)")
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--out", default=None, help="write the rows as JSON here")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _data import mnist_dir

    split = datasets.mnist_label_split(mnist_dir(args.data), random_state=0)
    paper = dpsumm.accounting.paper_schedule(args.size, len(split.owners))
    noiseless = dataclasses.replace(
        paper, epsilon_validation_step=1e4, epsilon_first_epoch_step=1e4, epsilon_epoch_step=(1e4,) * args.size
    )
    out = {}
    for gname, gamma in (("0.1", 0.1), ("median", experiments.median_gamma(split.seed_set))):
        for sname, schedule in (("paper", paper), ("noiseless", noiseless)):
            rows = experiments.broadcast_error(split, schedule, gamma=gamma, rounds=(1, 10, 100, 1000), random_state=0)
            out[f"{gname}/{sname}"] = rows
            for r in rows:
                print(f"gamma {gname:6} {sname:9}", {k: round(v, 3) for k, v in r.items()}, flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
