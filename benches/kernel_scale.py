"""How the paper-greedy summary degrades as gamma * median squared distance moves away from 1.

digits label split (scikit-learn's digits scaled to [0, 1]; the consumer wants 3s and 4s), summary size
20, d = 140, three repeats: gamma = s / median ||x - y||^2 over the public seed set, for a range of s.
Prints the number of target rows (labels 3 or 4) among the 20 picked and writes them to
``benches/results/kernel_scale.json``. The thresholds of dpsumm.preprocessing (DEGENERATE_LOW,
DEGENERATE_HIGH) come from this table (docs/usability.md).

    python benches/kernel_scale.py
"""

from __future__ import annotations

import json
import logging
import warnings
from pathlib import Path

import numpy as np

import dpsumm
from dpsumm.preprocessing import kernel_scale

SCALES = (0.0001, 0.001, 0.01, 0.1, 1, 3, 5, 10, 20, 50, 240)


def main() -> None:
    warnings.simplefilter("ignore", dpsumm.preprocessing.DegenerateKernelWarning)
    logging.getLogger("dpsumm").setLevel(logging.ERROR)
    X = dpsumm.datasets.digits()[0]
    out = {
        "command": "python benches/kernel_scale.py",
        "size": 20,
        "dim": 140,
        "scale_unit_pixels": round(float(kernel_scale(X, 0.1)), 4),
        "scale_raw_pixels": round(float(kernel_scale(X * 16, 0.1)), 4),
        "rows": [],
    }
    print(
        f"all digits rows: gamma=0.1 gives gamma * median squared distance {out['scale_unit_pixels']:.3g} on [0, 1] "
        f"pixels and {out['scale_raw_pixels']:.3g} on raw 0-16 pixels"
    )
    print("s = gamma * median sq. distance (seed set) | target rows picked of 20, per repeat")
    for s in SCALES:
        picked = []
        for rep in range(3):
            split = dpsumm.datasets.digits_label_split(random_state=rep)
            gamma = s * dpsumm.median_gamma(split.seed_set)
            res = dpsumm.summarize(
                split.owners,
                split.validation,
                20,
                method=dpsumm.PaperGreedy(dim=140),
                seed_set=split.seed_set,
                gamma=gamma,
                random_state=rep,
                progress=False,
            )
            labels = np.array([split.owner_labels[k][i] for k, i in zip(res.owner, res.index)])
            picked.append(int(np.isin(labels, [3, 4]).sum()))
        print(f"{s:>8g} | {picked}")
        out["rows"].append({"s": s, "picked": picked})
    path = Path(__file__).resolve().parent / "results" / "kernel_scale.json"
    path.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    import argparse

    # no options; --help prints what the script measures
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
