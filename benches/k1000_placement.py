"""Where the consumer's rows of each of its owners land on the synthetic K = 1,000 bed: a measurement of the cell
purchases' placement (docs/explanation/direction-purchase.md, "The reserve"), not a purchase.

On ``synthetic-k1000`` (benches/testbeds.py: 1,000 owners of 500 rows, owner ``k`` drawn from ``N(c_k, 0.5² I)``
in 10 features, the consumer a mixture of owners 0..3) the histogram cannot pay for a direction, and its cells are
the owners themselves. The consumer places each of its rows in the cell whose centre is nearest
(``dpsumm.protocols.nominations.cell_rule.histogram_counts``: ``argmin ||c||² − bias − 2 h·c`` over the cells'
centres ``c``, ``h`` the row's hash), and an owner's cell is bought only when its noisy count reaches the
threshold of a histogram over that many cells (``cell_threshold``). This script counts, for every repeat and for
each of the consumer's owners, how many of its validation rows land in that owner's own cell under four placements,
each one step closer to what the purchase does:

* ``exact_kernel``: the nearest kernel mean embedding with the exact Gaussian kernel at the run's γ,
  ``argmin_k mean_{x,x' ∈ X_k} k(x, x') − 2 mean_{x ∈ X_k} k(v, x)`` (no random features, no noise): what
  every hash space approximates;
* ``hash_exact``: the cells' random features (``CELL_DIM`` of them, the run's γ), each owner's exact mean hash;
* ``hash_released``: the same with each owner's hash sum released as the purchase releases it (the lattice
  discrete Gaussian of ``owner_release_calibration`` at the owners' ``(1, 1e-6)`` over the release's
  ``CELL_DIM + 12`` values, drawn from the library's CSPRNG; the centre's noise bias subtracted as the consumer
  subtracts it): the purchase's own placement;
* ``hash256_released``: as ``hash_released`` in 256 random features (the noise per coordinate the same).

The threshold is that of 1,000 single-owner cells at the consumer's whole ``epsilon_v = 1`` (the histogram's
discrete Laplace scale ``2``). Seeded: reproducible and NOT private. Writes ``--out/placement-TAG.json`` and ``.md``.

Usage: ``python benches/k1000_placement.py --repeats 40 --tag k1000-40``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import testbeds  # noqa: E402
from dpsumm.hashing import RFFHasher  # noqa: E402
from dpsumm.preprocessing import median_gamma  # noqa: E402
from dpsumm.privacy import check_random_state, count_release_event, gaussian_on_grid  # noqa: E402
from dpsumm.protocols.nominations.by_direction import DIRECTION_BINS  # noqa: E402
from dpsumm.protocols.nominations.cell_messages import owner_release_calibration  # noqa: E402
from dpsumm.protocols.nominations.cells import CELL_DIM, cell_threshold  # noqa: E402

BED = "synthetic-k1000"
COMPONENTS = len(testbeds.SYNTHETIC_MIX)
OWNER_EPS, OWNER_DELTA, EPS_V = 1.0, 1e-6, 1.0
PLACEMENTS = ("exact_kernel", "hash_exact", "hash_released", "hash256_released")
#: Validation rows scored against every owner's rows at a time in the exact kernel (bounds the distance block).
_ROW_BLOCK = 8


def exact_kernel_cells(owners: np.ndarray, rows: np.ndarray, gamma: float) -> np.ndarray:
    """Each row's nearest owner in the exact kernel's mean embedding (``owners``: (K, n, f))."""
    K = owners.shape[0]
    sq = (owners * owners).sum(-1)  # (K, n)
    self_term = np.empty(K)
    for k in range(K):
        d2 = sq[k][:, None] + sq[k][None, :] - 2.0 * owners[k] @ owners[k].T
        self_term[k] = np.exp(-gamma * np.maximum(d2, 0.0)).mean()
    out = np.empty(len(rows), dtype=np.int64)
    for start in range(0, len(rows), _ROW_BLOCK):
        block = rows[start : start + _ROW_BLOCK]
        d2 = (block * block).sum(-1)[:, None, None] + sq[None] - 2.0 * np.einsum("bf,knf->bkn", block, owners)
        cross = np.exp(-gamma * np.maximum(d2, 0.0)).mean(-1)  # (b, K)
        out[start : start + len(block)] = np.argmin(self_term[None] - 2.0 * cross, axis=1)
    return out


def hash_cells(owners: np.ndarray, rows: np.ndarray, gamma: float, dim: int, seed: int, rng: Any | None) -> np.ndarray:
    """Each row's nearest owner centre in ``dim`` random features; the centres' sums released with ``rng`` (None:
    the exact means)."""
    K, n, f = owners.shape
    hasher = RFFHasher(f, dim=dim, gamma=gamma, seed=seed)
    sums = np.asarray(hasher.transform(owners.reshape(K * n, f)), dtype=np.float64).reshape(K, n, dim).sum(1)
    bias = 0.0
    if rng is not None:
        cal, _ = owner_release_calibration(dim + DIRECTION_BINS, OWNER_EPS, OWNER_DELTA)
        sums = np.stack([np.asarray(gaussian_on_grid(s, cal.sigma, cal.granularity, rng)) for s in sums])
        bias = dim * cal.sigma**2 / n**2
    centres = sums / n
    H = np.asarray(hasher.transform(rows), dtype=np.float64)
    score = ((centres * centres).sum(1) - bias)[None, :] - 2.0 * H @ centres.T
    out: np.ndarray = np.argmin(score, axis=1)
    return out


def run_repeat(repeat: int) -> dict[str, Any]:
    """One repeat's record: the consumer's validation rows of each component, and how many land in that
    component's own cell under each placement."""
    data = testbeds.load_bed_data(BED, repeat, None)
    split = data.split
    gamma = median_gamma(split.seed_set)
    owners = np.stack([np.asarray(o, dtype=np.float64) for o in split.owners])
    rows = np.asarray(split.validation, dtype=np.float64)
    comp = np.asarray(data.consumer_cells[: len(rows)])
    rng = check_random_state(5000 + repeat)
    cells = {
        "exact_kernel": exact_kernel_cells(owners, rows, gamma),
        "hash_exact": hash_cells(owners, rows, gamma, CELL_DIM, repeat, None),
        "hash_released": hash_cells(owners, rows, gamma, CELL_DIM, repeat, rng),
        "hash256_released": hash_cells(owners, rows, gamma, 256, repeat, rng),
    }
    return dict(
        bed=BED,
        repeat=repeat,
        gamma=float(gamma),
        owners=int(owners.shape[0]),
        threshold=cell_threshold(int(owners.shape[0]), len(rows), count_release_event(EPS_V).scale),
        validation_per_component={str(c): int((comp == c).sum()) for c in range(COMPONENTS)},
        placed_own={
            name: {str(c): int(((placed == c) & (comp == c)).sum()) for c in range(COMPONENTS)}
            for name, placed in cells.items()
        },
    )


def table(recs: list[dict[str, Any]], command: str) -> str:
    """The share of each component's validation rows placed in its own cell, per placement (mean over repeats), and
    the repeats in which a component's own cell gets fewer rows than the threshold."""
    lines = [
        "# Where the consumer's rows of each of its owners land (synthetic K = 1,000)",
        "<!-- docs-test: inline commands help (a run takes about 10 minutes: tests/docs/test_docs.py checks that "
        "the script accepts the options quoted, with --help) -->",
        "",
        f"Written by `{command}`. For each placement, the share of the consumer's validation rows of each of its "
        "owners that land in that owner's own cell, over all repeats, and the repeats in which some owner's own cell "
        "gets fewer of its rows than the threshold of a histogram over that many cells (the placements: the script's "
        "docstring). Seeded: reproducible, NOT private.",
        "",
        "| placement | " + " | ".join(f"owner {c}: own cell / its rows" for c in range(COMPONENTS)) + " | repeats with "
        "an own cell below the threshold |",
        "|---|" + "---|" * (COMPONENTS + 1),
    ]
    for name in PLACEMENTS:
        cols = []
        for c in range(COMPONENTS):
            own = sum(r["placed_own"][name][str(c)] for r in recs)
            total = sum(r["validation_per_component"][str(c)] for r in recs)
            cols.append(f"{own / max(total, 1):.2f}")
        short = sum(any(r["placed_own"][name][str(c)] < r["threshold"] for c in range(COMPONENTS)) for r in recs)
        lines.append(f"| `{name}` | " + " | ".join(cols) + f" | {short} of {len(recs)} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=40)
    ap.add_argument("--out", default="docs/experiments/testbeds")
    ap.add_argument("--tag", default="k1000", help="write placement-TAG.json / .md")
    args = ap.parse_args()
    if args.repeats < 1:
        raise SystemExit("--repeats must be at least 1")
    command = " ".join(["python", "benches/k1000_placement.py", *sys.argv[1:]])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    recs = []
    for r in range(args.repeats):
        recs.append(run_repeat(r))
        print(f"[{time.perf_counter() - t0:7.1f} s] repeat {r}: {recs[-1]['placed_own']}", flush=True)
    meta = dict(command=command, seconds=time.perf_counter() - t0, cpus=os.cpu_count())
    (out / f"placement-{args.tag}.json").write_text(json.dumps(dict(meta=meta, records=recs), indent=1))
    (out / f"placement-{args.tag}.md").write_text(table(recs, command))
    print(table(recs, command))


if __name__ == "__main__":
    main()
