"""Could the consumer's one release say whether the labels carry its shift? Signal against noise.

The label purchase is at the exact greedy when the consumer's rows inside each label are distributed like the
owners' rows of that label, and far above it when they are not (a group inside the labels carries the shift). A
private test of that needs a release of the consumer's: the natural one is its hashed mean ``g~ = mean h(D_v) + Z``
in an h1 of ``d`` coordinates (the same gamma, ``||h|| <= sqrt(2)``), compared with the mixture of the owners'
per-label mean hashes ``m = sum_l pi_l mu_l`` (``pi_l`` the consumer's label shares; the owners' means are over
thousands of rows, their noise negligible). The statistic ``T = ||g~ - m||^2 - d sigma^2`` estimates

* the signal ``||mean h(population) - m||^2``, 0 when the labels carry the shift (computed here from the consumer's
  held-out rows and labels, which no party sees: the value the test would have to detect), against
* the noise of ``T``: the release's, standard deviation ``sqrt(2 d) sigma^2`` (``Z`` Gaussian with ``sigma`` from
  :func:`dpsumm.accounting.calibrate_gaussian` at ``share * eps_v``, delta_v = 1e-6, L2 sensitivity
  ``2 sqrt(2) / |D_v|``), beside the validation sample's own ``(1 - ||mean h||^2) / |D_v|``.

The mixture pools every owner's rows of a label: it is the label purchase's null only where the owners of a label
hold one distribution; where the owners differ (synthetic K = 100, whose consumer wants some owners' clusters) the
signal is large although the label purchase's cells (owner group x label) carry the shift. For each bed, repeat,
``d`` and share of eps_v the results file records the signal, the noise's standard deviation and their ratio.
Seeded data (the test beds' splits); no summary is built. Run:
``python benches/shift_test.py --data DIR --out benches/results/shift-test.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dpsumm import accounting  # noqa: E402
from dpsumm.hashing import RFFHasher  # noqa: E402
from dpsumm.preprocessing import median_gamma  # noqa: E402
from testbeds import load_bed_data  # noqa: E402

BEDS = (
    "synthetic-census",
    "mnist-subgroup",
    "mnist-minority",
    "mnist-apart",
    "mnist-groups",
    "mnist-spread",
    "synthetic-k100",
)
DIMS = (4, 8, 64)
SHARES = (0.3, 0.5, 1.0)
DELTA_V = 1e-6
EPSILON_V = 1.0


def measure(bed: str, repeat: int, data: str | None) -> list[dict[str, Any]]:
    """One repeat of ``bed``: the within-label signal and the release's noise at every ``d`` and share."""
    split = load_bed_data(bed, repeat, data).split
    gamma = median_gamma(split.seed_set)
    X = np.concatenate(split.owners)
    y = np.concatenate(split.owner_labels)
    out = []
    for d in DIMS:
        hasher = RFFHasher(X.shape[1], dim=d, gamma=gamma, seed=f"shift-test-{repeat}")

        def h(rows: np.ndarray, hasher: RFFHasher = hasher) -> np.ndarray:
            return np.asarray(hasher.transform(np.asarray(rows, dtype=np.float32)), dtype=np.float64)

        hx, hv, ht = h(X), h(split.validation), h(split.test)
        labels = np.unique(y)
        shares = np.array([(split.test_labels == lab).mean() for lab in labels])
        mixture = sum(s * hx[y == lab].mean(0) for s, lab in zip(shares, labels))
        signal = float(np.sum((ht.mean(0) - mixture) ** 2))
        n = len(hv)
        sampling = float((1.0 - np.sum(hv.mean(0) ** 2)) / n)
        for share in SHARES:
            sigma = float(
                accounting.calibrate_gaussian(
                    share * EPSILON_V, DELTA_V, sensitivity=2.0 * math.sqrt(2.0) / n, dim=d
                ).sigma
            )
            noise_sd = math.sqrt(2.0 * d) * sigma**2
            out.append(
                dict(
                    bed=bed,
                    repeat=repeat,
                    dim=d,
                    epsilon_share=share,
                    validation_rows=n,
                    gamma=float(gamma),
                    signal=signal,
                    sigma=sigma,
                    noise_sd=noise_sd,
                    sampling=sampling,
                    signal_to_noise=signal / noise_sd,
                )
            )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", help="directory of the MNIST IDX files (the MNIST beds need it)")
    ap.add_argument("--beds", nargs="+", default=list(BEDS), choices=BEDS)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default="benches/results/shift-test.json")
    args = ap.parse_args()
    beds = [b for b in args.beds if args.data is not None or not b.startswith("mnist")]
    t0 = time.perf_counter()
    records = [rec for bed in beds for r in range(args.repeats) for rec in measure(bed, r, args.data)]
    command = "python benches/shift_test.py" + (" --data DIR" if args.data else "")
    command += f" --beds {' '.join(beds)} --repeats {args.repeats} --out {args.out}"
    meta = dict(command=command, seconds=time.perf_counter() - t0, dims=DIMS, shares=SHARES, delta_v=DELTA_V)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(dict(meta=meta, records=records), indent=1) + "\n")
    for bed in beds:
        for d in DIMS:
            for share in SHARES:
                sel = [x for x in records if x["bed"] == bed and x["dim"] == d and x["epsilon_share"] == share]
                snr = [x["signal_to_noise"] for x in sel]
                print(f"{bed:18} d={d:<3} share={share:<4} signal/noise {min(snr):8.3f} .. {max(snr):8.3f}")


if __name__ == "__main__":
    main()
