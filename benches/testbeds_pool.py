"""What a purchase's pool holds: the wanted rows among the raw rows bought, and in the summary.

The aggregator keeps ``p`` rows of the pool it bought with the exact-kernel greedy toward ``D_v``. On the consumer's
population that greedy can do no better than the pool: when the pool holds fewer than ``p`` rows of the components
the consumer wants (the test bed's ground truth, that no party is told: the components it wants more of than the
owners hold, :func:`wanted_components`), the summary must fill up with rows the consumer does not want. This script
runs the test beds' purchases (:data:`testbeds.VARIANTS`) through ``dpsumm.summarize`` as ``benches/testbeds.py``
does, with the same seeds, and records for each run, besides the population view against the exact greedy:

* ``pool_rows``: the raw rows the aggregator bought (the pool it chose from);
* ``pool_wanted``: how many of them come from a wanted component;
* ``summary_wanted``: how many of the ``p`` summary rows do (also for the exact greedy over every row; the perfect
  purchase, ``3p`` rows drawn from the consumer's own mixture, has its quality only);
* ``pool_per_component`` and ``validation_per_component``: the pool's rows and ``D_v``'s rows of each wanted
  component (which of the consumer's components a purchase starves).

``--direction-gamma-factors`` also runs ``ByDirection()`` with the kernel width of its direction space multiplied
(``direction-kernel[gamma x F]``: ``F`` times the median heuristic over the public seed rows,
:func:`dpsumm.protocols.nominations.by_direction.kernel_gamma`; a sweep no user option offers, to tell whether the
direction's width limits the cells). The pool is read from the aggregator's greedy (instrumentation of this script
only); nothing here changes what any party releases.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import dpsumm  # noqa: E402
import testbeds  # noqa: E402
from dpsumm.metrics import SummaryFitWarning  # noqa: E402
from dpsumm.protocols.nominations import aggregator as aggregator_module  # noqa: E402
from dpsumm.protocols.nominations import by_direction  # noqa: E402


@contextlib.contextmanager
def captured_runs() -> Iterator[list[tuple[Any, Any]]]:
    """Every ``dpsumm.summarize`` call's result with the pool its aggregator chose from (None: no aggregator)."""
    runs: list[tuple[Any, Any]] = []
    pools: list[Any] = []
    greedy, summarize = aggregator_module.Aggregator.greedy, dpsumm.summarize

    def greedy_seen(self: Any, size: int, pool: Any) -> Any:
        pools.append(pool)
        return greedy(self, size, pool)

    def summarize_seen(*args: Any, **kwargs: Any) -> Any:
        pools.clear()
        res = summarize(*args, **kwargs)
        runs.append((res, pools[-1] if pools else None))
        return res

    aggregator_module.Aggregator.greedy = greedy_seen  # type: ignore[method-assign]
    dpsumm.summarize = summarize_seen
    try:
        yield runs
    finally:
        aggregator_module.Aggregator.greedy = greedy  # type: ignore[method-assign]
        dpsumm.summarize = summarize


@contextlib.contextmanager
def direction_gamma_factor(factor: float) -> Iterator[None]:
    """``ByDirection``'s kernel space at ``factor`` times its gamma (capped as the library caps it)."""
    original = by_direction.kernel_gamma

    def scaled(seed_rows: np.ndarray) -> float:
        return min(factor * original(seed_rows), by_direction.MAX_GAMMA)

    by_direction.kernel_gamma = scaled  # type: ignore[assignment]
    try:
        yield
    finally:
        by_direction.kernel_gamma = original  # type: ignore[assignment]


def _owner_index(name: str) -> int:
    return int(name.rsplit("-", 1)[1])


def wanted_components(bd: testbeds.BedData) -> np.ndarray:
    """The components the consumer wants more of than the owners hold: its share of them above their pooled share
    among the owners' rows (the digits it wants on the image beds, the consumer's owners on the synthetic K = 100
    bed, the wanted group's cells on the census-like bed)."""
    cells = np.concatenate(bd.owner_cells)
    held = {int(c): n / len(cells) for c, n in zip(*np.unique(cells, return_counts=True))}
    return np.asarray(sorted(c for c, share in bd.wanted().items() if share > held.get(c, 0.0)))


def wanted_rows(bd: testbeds.BedData, wanted: np.ndarray, owner: np.ndarray, index: np.ndarray) -> int:
    """How many of the rows ``(owner[i], index[i])`` come from a component in ``wanted``
    (:func:`wanted_components`)."""
    owner, index = np.asarray(owner), np.asarray(index)
    return int(sum(np.isin(bd.owner_cells[k][index[owner == k]], wanted).sum() for k in np.unique(owner)))


def pool_counts(bd: testbeds.BedData, wanted: np.ndarray, pool: Any) -> tuple[int, int, dict[str, int]]:
    """The raw rows in the aggregator's pool, how many come from a component in ``wanted``, and how many from each
    component in ``wanted``."""
    total = 0
    per = dict.fromkeys((int(c) for c in wanted), 0)
    for name, (tokens, _) in pool.offered.items():
        if pool.rows.get(name) is None:
            continue
        total += len(tokens)
        comps = bd.owner_cells[_owner_index(name)][np.asarray(tokens)]
        for c in per:
            per[c] += int((comps == c).sum())
    return total, sum(per.values()), {str(c): n for c, n in per.items()}


def _annotate(rec: dict[str, Any], res: Any, pool: Any, bd: testbeds.BedData, wanted: np.ndarray) -> None:
    """Add the pool's and the summary's wanted rows to a run's record."""
    if rec["method"] == "perfect":  # 3p rows drawn from the consumer's own mixture: no owner's row positions
        return
    owners = np.array([_owner_index(res.owner_names[o]) for o in res.owner], dtype=np.int64)
    rec["summary_wanted"] = wanted_rows(bd, wanted, owners, res.index)
    if pool is not None:
        rec["pool_rows"], rec["pool_wanted"], rec["pool_per_component"] = pool_counts(bd, wanted, pool)
        validation = bd.consumer_cells[: rec["validation_size"]]
        rec["validation_per_component"] = {str(int(c)): int((validation == c).sum()) for c in wanted}


def run(
    bed: str, gamma_kind: str, size: int, repeats: int, methods: list[str], factors: list[float], data: str | None
) -> list[dict[str, Any]]:
    """The bed's runs at one size (``benches/testbeds.py``'s runs, seeds and records), each record with its pool's
    and its summary's wanted rows; then ``ByDirection()`` at each kernel width factor."""
    recs: list[dict[str, Any]] = []
    loader = testbeds.load_bed_data
    try:
        for r in range(repeats):
            bd = loader(bed, r, data)
            wanted = wanted_components(bd)
            testbeds.load_bed_data = lambda b, rr, d, _bd=bd: _bd  # type: ignore[assignment]
            with captured_runs() as runs:  # one summarize call per record at one size, in order
                out = testbeds.run_bed(
                    bed, gamma_kind, [size], [r], methods, data, False, lambda s: None, testbeds.BUDGET
                )
            exact = next(x for x in out if x["method"] == "exact")
            for rec, (res, pool) in zip(out, runs, strict=True):
                _annotate(rec, res, pool, bd, wanted)
            for factor in factors:
                with captured_runs() as runs, direction_gamma_factor(factor):
                    swept = testbeds.run_bed(
                        bed, gamma_kind, [size], [r], ["direction-kernel"], data, False, lambda s: None, testbeds.BUDGET
                    )
                for rec, (res, pool) in zip(swept, runs, strict=True):
                    _annotate(rec, res, pool, bd, wanted)
                    rec["method"] = f"direction-kernel[gamma x {factor:g}]"
                    rec["population_vs_exact_pct"] = 100.0 * (rec["mmd2_population"] / exact["mmd2_population"] - 1)
                out += swept
            recs += out
    finally:
        testbeds.load_bed_data = loader
    return recs


def table(recs: list[dict[str, Any]], cmd: str) -> str:
    lines = [
        "# What a purchase's pool holds",
        "<!-- docs-test: inline commands help (a run takes about 30 minutes: tests/docs/test_docs.py checks that "
        "the script accepts the options quoted, with --help) -->",
        "",
        f"Written by `{cmd}` (DIR: the MNIST IDX files). Means ± sample standard deviations over repeats: the "
        "population view (MMD² to the consumer's held-out rows, their diagonal dropped) against the exact-kernel "
        "greedy over every row, the raw rows bought (the pool), how many of them come from the components the "
        "consumer wants (the bed's ground truth), and how many of the p summary rows do. Seeded runs: "
        "reproducible, NOT private.",
        "",
    ]
    for bed in dict.fromkeys(r["bed"] for r in recs):
        for gk in dict.fromkeys(r["gamma_kind"] for r in recs if r["bed"] == bed):
            sub = [r for r in recs if r["bed"] == bed and r["gamma_kind"] == gk]
            lines += [
                f"## {bed}, gamma {gk}, p = {sub[0]['size']}",
                "",
                "| method | held-out MMD² vs exact greedy (%) | rows bought | wanted rows bought | wanted rows in "
                "the summary |",
                "|---|---|---|---|---|",
            ]
            for m in dict.fromkeys(r["method"] for r in sub):
                rs = [r for r in sub if r["method"] == m]

                def pm(key: str, fmt: str, rs: list[dict[str, Any]] = rs) -> str:
                    vals = [float(r[key]) for r in rs if r.get(key) is not None]
                    if not vals:
                        return "–"
                    sd = f" ± {float(np.std(vals, ddof=1)):{fmt.lstrip('+')}}" if len(vals) > 1 else ""
                    return f"{float(np.mean(vals)):{fmt}}{sd}"

                lines.append(
                    f"| {m} | {pm('population_vs_exact_pct', '+.1f')} | {pm('pool_rows', '.0f')} | "
                    f"{pm('pool_wanted', '.0f')} | {pm('summary_wanted', '.0f')} |"
                )
            lines.append("")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", help="directory of the MNIST IDX files (the MNIST test beds need it)")
    ap.add_argument("--beds", nargs="+", default=["mnist-many", "mnist-spread", "mnist-apart", "mnist-minority"])
    ap.add_argument("--gammas", nargs="+", default=["median"], choices=["median", "fixed"])
    ap.add_argument("--size", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument(
        "--methods",
        nargs="+",
        default=["exact", "perfect", "default", "nominees-3p", "direction-kernel"],
        help=f"baselines (exact, perfect) and purchases of benches/testbeds.py: {', '.join(testbeds.VARIANTS)}",
    )
    ap.add_argument(
        "--direction-gamma-factors",
        type=float,
        nargs="*",
        default=[],
        help="also run ByDirection() with its direction space's gamma times each factor",
    )
    ap.add_argument("--out", default="docs/experiments/testbeds")
    ap.add_argument("--tag", default="", help="write pool-TAG.json / pool-TAG.md instead of pool.json / .md")
    args = ap.parse_args()
    for m in args.methods:
        if m not in ("exact", "perfect") and m not in testbeds.VARIANTS:
            raise SystemExit(f"unknown method {m!r}")
    if "exact" not in args.methods:
        args.methods = ["exact", *args.methods]
    if "central" in args.methods:
        raise SystemExit("central greedy has no pool: leave it to benches/testbeds.py")
    warnings.simplefilter("ignore", SummaryFitWarning)
    cmd = " ".join(["python", "benches/testbeds_pool.py", *(("DIR" if a == args.data else a) for a in sys.argv[1:])])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"pool-{args.tag}" if args.tag else "pool"
    recs: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for bed in args.beds:
        for gk in args.gammas:
            recs += run(bed, gk, args.size, args.repeats, args.methods, args.direction_gamma_factors, args.data)
            print(f"[{time.perf_counter() - t0:7.1f} s] {bed} gamma={gk} done", flush=True)
            meta = dict(command=cmd, seconds=time.perf_counter() - t0, cpus=os.cpu_count(), size=args.size)
            (out / f"{stem}.json").write_text(json.dumps(dict(meta=meta, records=recs), indent=1))
            (out / f"{stem}.md").write_text(table(recs, cmd))
    print(table(recs, cmd))


if __name__ == "__main__":
    main()
