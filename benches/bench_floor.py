"""The hashing floor: how close a default run of ``dpsumm.summarize`` comes to hashing every row once.

An owner's unavoidable cost is hashing its rows once (h1: an n x f by f x d product and a cosine). The
*floor* here is the best numpy can do for that on this machine: float32 ``X @ omega`` into a reused
4,096-row buffer, ``+ b`` and ``np.cos`` in place, over every owner's rows, with OpenBLAS on every allowed
thread. In the same process, on the same synthetic rows (``bench_scale.make_data``: covariate shift,
64 float32 features), this script measures

* the default run end to end: ``dpsumm.summarize(owners, validation, 1000)`` with every default (a
  private run: no seed; whatever ``dpsumm.Nominations()`` is), after a small warm-up run (imports,
  dp-accounting start-up), its phases from ``result.extra["timings"]`` (whatever phases the protocol
  reports; setup = total minus the phases), and the ratio run / floor. A run is repeated until
  ``--min-run-s`` seconds (default 3) have gone, at least once, and its fastest repeat is reported (a 0.6 s
  run varies by a fifth from one repeat to the next on this machine; the floor is best of ``--reps`` too);
* (``--runs ... labels``) the same for ``purchase=dpsumm.ByLabel(label_set=range(20))``, each row's cluster (one
  of 20) as its label and the consumer's rows' clusters as the validation labels; (``direction``) for
  ``purchase=ByDirection()`` (the kernel space), 150 of the rows standing in for the public seed rows;
* the same for the run ``before`` the parsimonious purchase: ``method=dpsumm.Nominations(purchase=dpsumm.Nominees())``
  (the previous default), on the same rows in the same process, reported as its own row. When the default
  *is* that configuration, the run is made once and reported as ``default`` with ``same_as_before``;
* the peak resident memory of each run (VmHWM, reset just before it) against the bytes of the rows (both in
  GB of 10^9 bytes), and (``memory``) that of the owners' passes alone: summarize's input checks, and hashing
  every row once in 100,000-row ``transform`` calls;
* ``RFFHasher.transform`` over the same rows in 4,096-row calls against the floor;
* the thread-scaling curve: each point is a child process pinned to the first t CPUs
  (``sched_setaffinity``; ``RAYON_NUM_THREADS`` = ``OPENBLAS_NUM_THREADS`` = t), t = 1 .. the CPUs this
  process may use, with speed-up and parallel efficiency of the run and of the floor;
* the serial share from the one-thread profile: in the t = 1 child every parallel kernel runs on
  rayon's one worker thread while the calling (main) thread waits, so the CPU time of the main thread
  is the work that no extra thread of the kernels can share (Python, the aggregator's bookkeeping,
  serial Rust between parallel regions, each owner's greedy). The part of it spent inside owners'
  handlers (measured by wrapping ``OwnerParty.handle`` with ``time.thread_time``; the run is
  unchanged) parallelises across owners (in-process owners answer concurrently), so the serial share
  ``s`` is the rest, over the process's CPU time; Amdahl's law projects the speed-up on 16 cores as
  ``1 / (s + (1 - s) / 16)``. Both shares are in the results file;
* (``--sweep``) the transform against the floor at 256, 4,096, 100,000 rows per call and the whole
  array (2M rows) in one call, interleaved, best of 3, and numpy at the same rows per call (a result of that
  many rows per call, as the transform returns; for the whole array a fresh 4 GB result per call, whose
  pages the kernel must first touch, as it must the transform's); and the whole array into one result the
  caller keeps (``transform(X, out=...)``, its pages touched once beforehand) against the floor and against numpy's
  chunked floor writing into that same array.

CPU times are ``time.process_time`` (the process) and ``time.thread_time`` (the main thread): clock_gettime,
not /proc's 10 ms ticks, which are too coarse for a main thread's share of tens of milliseconds.

Run: ``python benches/bench_floor.py`` (both sizes, the curve and the sweep: a few minutes on an idle
2-core machine) -> the README's tables (every number marked with its path in the results file, for
tests/docnumbers.py), ``benches/results/floor.json``. ``--sizes 2000000:20`` for one size.

Many owners (K = 100, 300, 1,000 owners of 10,000 rows, the default run against the floor on 2 threads):
``python benches/bench_floor.py --sizes 1000000:100 3000000:300 10000000:1000 --threads 2 --no-sweep --runs default
--min-run-s 0 --out benches/results/floor-owners.json``.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _vm(field: str) -> float:
    """A /proc/self/status memory field in GB (10^9 bytes, the unit of ``raw_rows_gb``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024 / 1e9
    return float("nan")


def _floor(datas, omega, offset, chunk: int = 4096) -> None:
    import numpy as np

    buf = np.empty((chunk, omega.shape[1]), np.float32)
    for X in datas:
        for s in range(0, len(X), chunk):
            xc = X[s : s + chunk]
            o = buf[: len(xc)]
            np.matmul(xc, omega, out=o)
            o += offset
            np.cos(o, out=o)


def _ours(datas, hasher, chunk: int) -> None:
    for X in datas:
        for s in range(0, len(X), chunk):
            hasher.transform(X[s : s + chunk])


def _ours_into(X, hasher, out) -> None:
    """The whole array in one call, into the caller's array (``transform(X, out=...)``)."""
    hasher.transform(X, out=out)


def _floor_into(X, omega, offset, out, chunk: int = 4096) -> None:
    """The floor writing every chunk's hashes into the caller's whole-array result (numpy's best for a result
    of every row: chunked, threaded sgemm + cos, no temporary)."""
    import numpy as np

    for s in range(0, len(X), chunk):
        o = out[s : s + chunk]
        np.matmul(X[s : s + chunk], omega, out=o)
        o += offset
        np.cos(o, out=o)


def _best(fn, reps: int) -> tuple[float, float]:
    """Best wall seconds of `reps` calls, and the process CPU seconds of that call."""
    best = (float("inf"), float("inf"))
    for _ in range(reps):
        t, c = time.perf_counter(), time.process_time()
        fn()
        best = min(best, (time.perf_counter() - t, time.process_time() - c))
    return best


def child(a: argparse.Namespace) -> dict:
    """One point of the curve: everything measured in this process, pinned to `a.cpus` CPUs."""
    cpus = sorted(os.sched_getaffinity(0))[: a.cpus]
    os.sched_setaffinity(0, cpus)
    for var in ("RAYON_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        os.environ[var] = str(len(cpus))
    import threading

    import numpy as np

    sys.path.insert(0, str(HERE))
    import dpsumm
    from bench_scale import make_data

    load_before = os.getloadavg()
    datas, V, owner_labels, v_labels = make_data(a.rows, a.owners, a.features, labels=True)  # labels: "labels" run
    seed_rows = np.concatenate([d[: -(-150 // len(datas))] for d in datas])[:150]  # the "direction" run's public rows
    from dpsumm.methods import ByDirection

    raw_gb = sum(d.nbytes for d in datas) / 1e9
    # Warm-up: imports, dp-accounting's start-up, the rayon pool, on a small slice of the same data.
    dpsumm.summarize([d[:3000] for d in datas[:4]], V, 100, progress=False)
    main = threading.get_native_id()
    # Instrumentation only (the runs are unchanged): the main thread's CPU inside owners' handlers. An
    # owner's work is independent of every other owner's (in-process owners answer from a thread pool
    # when CPUs allow), so it parallelises across owners even where it is serial inside one owner.
    from dpsumm.parties import OwnerParty

    in_owners = [0.0]
    handle = OwnerParty.handle

    def timed_handle(self, message):  # type: ignore[no-untyped-def]
        if threading.get_native_id() != main:
            return handle(self, message)
        t = time.thread_time()
        try:
            return handle(self, message)
        finally:
            in_owners[0] += time.thread_time() - t

    OwnerParty.handle = timed_handle  # type: ignore[method-assign]
    before = dpsumm.Nominations(purchase=dpsumm.Nominees())
    # The default as it runs on these rows: whatever purchase object dpsumm.Nominations() holds.
    default = dpsumm.Nominations()
    same = default.get_params() == before.get_params()
    runs: list[dict] = []
    hasher_params = None
    for name in a.runs:
        if name == "before" and same and "default" in a.runs:
            continue  # the default is the previous default: one run, reported as "default"
        # None: summarize's default, whatever it is; "labels": the label purchase over the rows' 20 clusters.
        method = {
            "before": before,
            "labels": dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=range(20))),
            "direction": dpsumm.Nominations(purchase=ByDirection()),
        }.get(name)

        def measure() -> tuple[dict, tuple]:
            gc.collect()
            Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM: the peak below is this run's
            in_owners[0] = 0.0
            # CPU time in ns resolution (clock_gettime), not /proc's 10 ms ticks: the main thread's share is tens of ms
            cpu0, main0 = time.process_time(), time.thread_time()
            t = time.perf_counter()
            if name == "labels":  # the rows' clusters as labels (public label set: the 20 clusters)
                res = dpsumm.summarize(
                    [dpsumm.Owner(d, labels=y) for d, y in zip(datas, owner_labels)],
                    V,
                    a.size,
                    method=method,
                    validation_labels=v_labels,
                    progress=False,
                )
            elif name == "direction":  # public seed rows: a stand-in sample of the same clusters (for timing only)
                res = dpsumm.summarize(datas, V, a.size, method=method, seed_set=seed_rows, progress=False)
            else:
                res = (
                    dpsumm.summarize(datas, V, a.size, progress=False)
                    if method is None
                    else dpsumm.summarize(datas, V, a.size, method=method, progress=False)
                )
            total = time.perf_counter() - t
            cpu1, main1 = time.process_time(), time.thread_time()
            peak = _vm("VmHWM")
            assert res.points is not None and len(res.points) == a.size
            cpu_all = cpu1 - cpu0
            cpu_main = main1 - main0
            phases = {k: round(float(v), 3) for k, v in res.extra["timings"].items()}
            phases["setup"] = round(total - sum(res.extra["timings"].values()), 3)
            record = {
                "run": name,
                "same_as_before": same if name == "default" else None,
                "method": repr(method if method is not None else dpsumm.Nominations()),
                "run_s": round(total, 3),
                "phases_s": phases,
                "cpu_s": round(cpu_all, 3),
                "peak_rss_gb": round(peak, 3),
                "peak_rss_minus_rows_gb": round(peak - raw_gb, 3),
                "cpu_main_thread_s": round(cpu_main, 3),
                "cpu_main_thread_in_owners_s": round(in_owners[0], 3),
                "main_thread_share": round(cpu_main / cpu_all, 4) if cpu_all > 0 else None,
                "serial_share": round((cpu_main - in_owners[0]) / cpu_all, 4) if cpu_all > 0 else None,
            }
            return record, (res.hasher.dim, res.hasher.gamma, res.hasher.seed)

        # Repeated until --min-run-s seconds have gone (at least once; timeit's autorange): a short run is timed
        # several times and its fastest repeat is reported (as the floor's best of --reps), with that repeat's CPU
        # times and phases, and the highest peak memory of all repeats.
        repeats: list[dict] = []
        while not repeats or sum(r["run_s"] for r in repeats) < a.min_run_s:
            record, hasher_params = measure()
            repeats.append(record)
        best = dict(min(repeats, key=lambda r: r["run_s"]))
        best["peak_rss_gb"] = max(r["peak_rss_gb"] for r in repeats)
        best["peak_rss_minus_rows_gb"] = max(r["peak_rss_minus_rows_gb"] for r in repeats)
        best["repeats"] = len(repeats)
        runs.append(best)
    assert hasher_params is not None, "--runs names no run"
    dim, gamma, seed = hasher_params
    hasher = dpsumm.RFFHasher(a.features, dim=dim, gamma=gamma, seed=seed)
    # Memory of the owners' passes alone, each from a reset VmHWM: summarize's input checks over every
    # owner's rows, and hashing every row once in 100,000-row transform calls (results dropped).
    from dpsumm._validation import check_hashable, float_matrix

    memory = {"rss_before_passes_gb": round(_vm("VmRSS"), 3)}
    for name, fn in (
        (
            "input_checks",
            lambda: [check_hashable(float_matrix(d, "owners", n_features=a.features), "owners", hasher) for d in datas],
        ),
        ("hash_pass_100000_row_calls", lambda: _ours(datas, hasher, 100_000)),
    ):
        gc.collect()
        Path("/proc/self/clear_refs").write_text("5")
        fn()
        memory[f"{name}_peak_rss_minus_rows_gb"] = round(_vm("VmHWM") - raw_gb, 3)
    omega, offset = np.ascontiguousarray(hasher.omega_), hasher.offset_
    floor = ours = (float("nan"), float("nan"))
    for rep in range(a.reps):  # interleaved, best of reps: load from other jobs hits both alike
        f, o = _best(lambda: _floor(datas, omega, offset), 1), _best(lambda: _ours(datas, hasher, 4096), 1)
        floor, ours = (f, o) if rep == 0 else (min(floor, f), min(ours, o))
    (floor, floor_cpu), (ours, ours_cpu) = floor, ours
    for r in runs:
        r["ratio_run_to_floor"] = round(r["run_s"] / floor, 3)
        r["cpu_ratio_run_to_floor"] = round(r["cpu_s"] / floor_cpu, 3)
    out = {
        "rows": a.rows,
        "owners": a.owners,
        "features": a.features,
        "size": a.size,
        "dim": dim,
        "threads": len(cpus),
        "raw_rows_gb": round(raw_gb, 3),
        "runs": runs,
        "memory": memory,
        "floor_s": round(floor, 3),
        "transform_4096_s": round(ours, 3),
        "ratio_transform_4096_to_floor": round(floor / ours, 3),
        "floor_mrows_per_s": round(a.rows / floor / 1e6, 3),
        "transform_mrows_per_s": round(a.rows / ours / 1e6, 3),
        "floor_cpu_s": round(floor_cpu, 3),
        "transform_4096_cpu_s": round(ours_cpu, 3),
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
    }
    # --reps 0 measures the runs only: the floor's fields are null, not NaN (strict JSON).
    clean = lambda v: None if isinstance(v, float) and math.isnan(v) else v  # noqa: E731
    out["runs"] = [{k: clean(v) for k, v in r.items()} for r in runs]
    return {k: clean(v) for k, v in out.items()}


def sweep(a: argparse.Namespace) -> dict:
    """RFFHasher.transform against the floor at several rows per call (all CPUs), interleaved, best of 3."""
    import numpy as np

    sys.path.insert(0, str(HERE))
    import dpsumm
    from bench_scale import make_data

    load_before = os.getloadavg()
    datas, _ = make_data(a.rows, 1, a.features)
    X = datas[0]
    h = dpsumm.RFFHasher(a.features, dim=500, gamma=0.1, seed=0)
    omega, offset = np.ascontiguousarray(h.omega_), h.offset_
    calls = [256, 4096, 100_000, len(X)]
    floor = float("inf")
    best = {c: float("inf") for c in calls}
    # numpy at the same rows per call, the whole array included: one (rows, 500) float32 result per call, as the
    # transform returns (at 2M rows, 4 GB of fresh pages each call: both pay the kernel's first touch of them)
    numpy_same = {c: float("inf") for c in calls}
    # The whole array into one result array the caller keeps (``out=``), its pages touched once beforehand, and
    # numpy's chunked floor writing into the same array: neither waits for the kernel to supply fresh memory.
    out = np.empty((len(X), 500), np.float32)
    h.transform(X, out=out)
    into = numpy_into = float("inf")
    for _ in range(3):
        floor = min(floor, _best(lambda: _floor([X], omega, offset, 4096), 1)[0])
        for c in calls:
            best[c] = min(best[c], _best(lambda: _ours([X], h, c), 1)[0])
        for c in calls:
            numpy_same[c] = min(numpy_same[c], _best(lambda: _floor([X], omega, offset, c), 1)[0])
        into = min(into, _best(lambda: _ours_into(X, h, out), 1)[0])
        numpy_into = min(numpy_into, _best(lambda: _floor_into(X, omega, offset, out), 1)[0])
    out = None  # the result array's pages are freed before the next comparison
    # The same comparison on one thread in CPU time (time.process_time), which other jobs' load disturbs
    # far less than wall time: one BLAS thread for numpy, threads=1 for the transform.
    from threadpoolctl import threadpool_limits

    h1 = dpsumm.RFFHasher(a.features, dim=500, gamma=0.1, seed=0, threads=1)
    cpu_floor = float("inf")
    cpu_best = {c: float("inf") for c in calls[:3]}
    with threadpool_limits(1):
        for _ in range(3):
            cpu_floor = min(cpu_floor, _best(lambda: _floor([X], omega, offset, 4096), 1)[1])
            for c in calls[:3]:
                cpu_best[c] = min(cpu_best[c], _best(lambda: _ours([X], h1, c), 1)[1])
    rows = [
        {
            "rows_per_call": c,
            "transform_s": round(best[c], 3),
            "transform_mrows_per_s": round(len(X) / best[c] / 1e6, 3),
            "ratio_to_floor": round(floor / best[c], 3),
            "numpy_same_chunk_s": round(numpy_same[c], 3) if c in numpy_same else None,
            "one_thread_cpu_s": round(cpu_best[c], 3) if c in cpu_best else None,
            "one_thread_cpu_ratio_to_floor": round(cpu_floor / cpu_best[c], 3) if c in cpu_best else None,
        }
        for c in calls
    ]
    return {
        "rows": len(X),
        "features": a.features,
        "dim": 500,
        "threads": len(os.sched_getaffinity(0)),
        "floor_4096_s": round(floor, 3),
        "floor_mrows_per_s": round(len(X) / floor / 1e6, 3),
        "whole_into_out": {
            "transform_s": round(into, 3),
            "numpy_chunked_into_out_s": round(numpy_into, 3),
            "ratio_to_floor": round(floor / into, 3),
            "ratio_to_numpy_into_out": round(numpy_into / into, 3),
        },
        "one_thread_floor_cpu_s": round(cpu_floor, 3),
        "calls": rows,
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
    }


def _run_child(args: list[str]) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), *args]
    print("$", " ".join(cmd[1:]), flush=True)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    result: dict = json.loads(out.stdout.strip().splitlines()[-1])
    print(json.dumps(result), flush=True)
    return result


def cpu_model() -> dict:
    """The CPU's model name and its vector extensions that the kernels and OpenBLAS choose between (/proc/cpuinfo):
    the ratios to the floor depend on them (the same code measured 1.8x the floor's hashing speed on one 2-core
    AVX-512 Xeon and 1.2x on another)."""
    model, flags = "unknown", set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and model == "unknown":
                model = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = set(value.split())
    except OSError:
        pass
    return {
        "model": model,
        "vector": sorted(f for f in flags if f in ("avx2", "fma", "avx512f", "avx512vnni", "avx512_bf16", "amx_tile")),
    }


def amdahl(s: float, p: int) -> float:
    return 1.0 / (s + (1.0 - s) / p)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", nargs="+", default=["2000000:20", "10000000:100"], help="ROWS:OWNERS ...")
    ap.add_argument("--features", type=int, default=64)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=2, help="floor and transform repetitions (best of; 0: run only)")
    ap.add_argument(
        "--min-run-s",
        type=float,
        default=3.0,
        help="repeat each run until this many seconds have gone (at least once); report the fastest",
    )
    ap.add_argument("--no-sweep", action="store_true", help="skip the rows-per-call sweep")
    ap.add_argument("--threads", type=int, nargs="+", help="thread counts of the curve (default 1 .. the CPUs)")
    ap.add_argument(
        "--runs",
        nargs="+",
        choices=["before", "default", "labels", "direction"],
        default=["before", "default"],
        help='runs per point: "default" (dpsumm.summarize defaults), "before" (purchase=Nominees(), '
        'the previous default; one run when the default is the same) and, on request, "labels" '
        "(purchase=ByLabel(label_set=range(20)), the rows' 20 clusters as labels)",
    )
    ap.add_argument("--sweep-only", action="store_true", help="rerun only the sweep, into the existing --out file")
    ap.add_argument("--out", default=str(HERE / "results" / "floor.json"))
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--sweep-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--rows", type=int, default=2_000_000, help=argparse.SUPPRESS)
    ap.add_argument("--owners", type=int, default=20, help=argparse.SUPPRESS)
    ap.add_argument("--cpus", type=int, default=1, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a)))
        return
    if a.sweep_child:
        print(json.dumps(sweep(a)))
        return

    if a.sweep_only:  # rerun the sweep alone, into the existing results file
        results = json.loads(Path(a.out).read_text())
        results["sweep"] = _run_child(["--sweep-child", "--rows", "2000000", "--features", str(a.features)])
        results["sweep"]["command"] = "python benches/bench_floor.py " + " ".join(sys.argv[1:])
        Path(a.out).write_text(json.dumps(results, indent=1))
        print(table(results))
        return
    ncpu = len(os.sched_getaffinity(0))
    results: dict = {
        "command": "python benches/bench_floor.py " + " ".join(sys.argv[1:]),
        "cpus": ncpu,
        "cpu": cpu_model(),
        "load_start": [round(x, 2) for x in os.getloadavg()],
        "sizes": [],
    }
    common = [
        "--features",
        str(a.features),
        "--size",
        str(a.size),
        "--reps",
        str(a.reps),
        "--min-run-s",
        str(a.min_run_s),
        "--runs",
        *a.runs,
    ]
    for spec in a.sizes:
        rows, owners = (int(v) for v in spec.split(":"))
        counts = a.threads or list(range(1, ncpu + 1))
        curve = [
            _run_child(["--child", "--rows", str(rows), "--owners", str(owners), "--cpus", str(t), *common])
            for t in counts
        ]
        one, full = curve[0], curve[-1]
        for pt in curve:
            pt["floor_speedup"] = round(one["floor_s"] / pt["floor_s"], 3) if pt["floor_s"] else None
            pt["floor_efficiency"] = round(pt["floor_speedup"] / pt["threads"], 3) if pt["floor_speedup"] else None
            for r in pt["runs"]:
                r1 = next(q for q in one["runs"] if q["run"] == r["run"])
                r["run_speedup"] = round(r1["run_s"] / r["run_s"], 3)
                r["run_efficiency"] = round(r["run_speedup"] / pt["threads"], 3)
        # Per run: the serial share of the one-thread profile, Amdahl's projection to 16 cores and the
        # Karp-Flatt serial fraction the measured speed-up (1 -> all CPUs) implies.
        scaling = []
        for r1 in one["runs"]:
            s = r1["serial_share"] if one["threads"] == 1 else None
            rf = next(q for q in full["runs"] if q["run"] == r1["run"])
            sc = {
                "run": r1["run"],
                "serial_share_one_thread_profile": s,
                "main_thread_share_one_thread_profile": r1["main_thread_share"] if one["threads"] == 1 else None,
                "amdahl_speedup_16_cores": round(amdahl(s, 16), 2) if s is not None else None,
                "run_speedup_all_cpus": rf["run_speedup"],
                "run_efficiency_all_cpus": rf["run_efficiency"],
            }
            if full["threads"] > 1:
                sp, p = rf["run_speedup"], full["threads"]
                sc["karp_flatt_serial_fraction"] = round((1 / sp - 1 / p) / (1 - 1 / p), 4)
            scaling.append(sc)
        entry = {
            "rows": rows,
            "owners": owners,
            "curve": curve,
            "all_cpus_threads": full["threads"],
            "scaling": scaling,
        }
        results["sizes"].append(entry)
    if not a.no_sweep:
        results["sweep"] = _run_child(["--sweep-child", "--rows", "2000000", "--features", str(a.features)])
    results["load_end"] = [round(x, 2) for x in os.getloadavg()]
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(results, indent=1))
    print(table(results))


def table(r: dict, alias: str = "fb") -> str:
    """The README's tables (markdown), every number marked with its path in the results file
    (``<!--= ALIAS:PATH -->``, checked by tests/docnumbers.py; declare ``<!-- numbers: ALIAS = FILE -->``)."""

    def m(path: str) -> str:
        return f"<!--= {path} -->"

    lines = [
        "| rows × 64, owners | threads | load | run | run (wall) | floor (wall) | run / floor, wall | "
        "run / floor, CPU time | floor / transform (4,096-row calls), wall; CPU | phases (s) | peak RSS − rows |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for e in r["sizes"]:
        for pt in e["curve"]:
            q = f"{alias}:sizes[rows={e['rows']}].curve[threads={pt['threads']}]"
            for run in pt["runs"]:
                qr = f"{q}.runs[run={run['run']}]"
                label = run["run"] + (" (= before)" if run.get("same_as_before") else "")
                phases = " / ".join(
                    f"{k} {v:.2f}{m(f'{qr}.phases_s[{chr(34)}{k}{chr(34)}]')}" for k, v in run["phases_s"].items()
                )
                head = (
                    f"| {e['rows']:,}, K = {e['owners']} | {pt['threads']} | {pt['load_before'][0]:.0f}{m(q + '.load_before[0]')} | "
                    f"{label} | {run['run_s']:.2f}{m(qr + '.run_s')} s | "
                )
                rss = f"{run['peak_rss_minus_rows_gb']:.2f}{m(qr + '.peak_rss_minus_rows_gb')} GB |"
                if pt["floor_s"] is None:  # --reps 0: the runs only
                    lines.append(head + f"— | — | — | — | {phases} | {rss}")
                    continue
                cpu_t = pt["floor_cpu_s"] / pt["transform_4096_cpu_s"]
                lines.append(
                    head
                    + f"{pt['floor_s']:.2f}{m(q + '.floor_s')} s | {run['ratio_run_to_floor']:.2f}{m(qr + '.ratio_run_to_floor')} | "
                    f"**{run['cpu_ratio_run_to_floor']:.2f}**{m(qr + '.cpu_ratio_run_to_floor')} | "
                    f"{pt['ratio_transform_4096_to_floor']:.2f}{m(q + '.ratio_transform_4096_to_floor')}; "
                    f"{cpu_t:.2f}{m(f'{q}.floor_cpu_s / {q}.transform_4096_cpu_s')} | {phases} | {rss}"
                )
    lines.append("")
    lines.append(
        "| rows × 64, owners | threads | process before the passes − rows | input checks: peak RSS − rows "
        "| hashing every row (100,000-row calls): peak RSS − rows |"
    )
    lines.append("|---|---|---|---|---|")
    for e in r["sizes"]:
        for pt in e["curve"]:
            if "memory" not in pt:
                continue
            q = f"{alias}:sizes[rows={e['rows']}].curve[threads={pt['threads']}]"
            mem = pt["memory"]
            lines.append(
                f"| {e['rows']:,}, K = {e['owners']} | {pt['threads']} | "
                f"{mem['rss_before_passes_gb'] - pt['raw_rows_gb']:.2f}{m(f'{q}.memory.rss_before_passes_gb - {q}.raw_rows_gb')} GB | "
                f"{mem['input_checks_peak_rss_minus_rows_gb']:.2f}{m(q + '.memory.input_checks_peak_rss_minus_rows_gb')} GB | "
                f"{mem['hash_pass_100000_row_calls_peak_rss_minus_rows_gb']:.2f}"
                f"{m(q + '.memory.hash_pass_100000_row_calls_peak_rss_minus_rows_gb')} GB |"
            )
    lines.append("")
    lines.append(
        "| rows, owners | run | run speed-up (efficiency) 1 → all | floor speed-up (efficiency) | serial share (1-thread profile) "
        "| Amdahl on 16 cores |"
    )
    lines.append("|---|---|---|---|---|---|")
    for e in r["sizes"]:
        q = f"{alias}:sizes[rows={e['rows']}]"
        qf = f"{q}.curve[threads={e['all_cpus_threads']}]"
        full = next(pt for pt in e["curve"] if pt["threads"] == e["all_cpus_threads"])
        for sc in e["scaling"]:
            if sc["serial_share_one_thread_profile"] is None:
                continue
            qs = f"{q}.scaling[run={sc['run']}]"
            floor = (
                "—"
                if full["floor_speedup"] is None
                else f"{full['floor_speedup']:.2f}{m(qf + '.floor_speedup')} ({full['floor_efficiency']:.2f}{m(qf + '.floor_efficiency')})"
            )
            lines.append(
                f"| {e['rows']:,}, K = {e['owners']} | {sc['run']} | {sc['run_speedup_all_cpus']:.2f}{m(qs + '.run_speedup_all_cpus')} "
                f"({sc['run_efficiency_all_cpus']:.2f}{m(qs + '.run_efficiency_all_cpus')}) | {floor} | "
                f"{100 * sc['serial_share_one_thread_profile']:.1f}{m('100 * ' + qs + '.serial_share_one_thread_profile')} % "
                f"({100 * sc['main_thread_share_one_thread_profile']:.1f}"
                f"{m('100 * ' + qs + '.main_thread_share_one_thread_profile')} % with owners' serial work) | "
                f"{sc['amdahl_speedup_16_cores']:.1f}{m(qs + '.amdahl_speedup_16_cores')}× |"
            )
    if "sweep" in r:
        sw = r["sweep"]
        lines.append("")
        lines.append(
            f"| rows per call ({sw['rows']:,} rows × {sw['features']}, d = {sw['dim']}, {sw['threads']} threads) | "
            "transform | numpy, same chunk | transform / floor (numpy, 4,096-row chunks) | one thread, CPU time: floor / transform |"
        )
        lines.append("|---|---|---|---|---|")
        for c in sw["calls"]:
            q = f"{alias}:sweep.calls[rows_per_call={c['rows_per_call']}]"
            same = (
                "—"
                if c["numpy_same_chunk_s"] is None
                else f"{c['numpy_same_chunk_s']:.3f}{m(q + '.numpy_same_chunk_s')} s"
            )
            one = (
                "—"
                if c.get("one_thread_cpu_ratio_to_floor") is None
                else f"{c['one_thread_cpu_ratio_to_floor']:.2f}{m(q + '.one_thread_cpu_ratio_to_floor')}"
            )
            lines.append(
                f"| {c['rows_per_call']:,} | {c['transform_s']:.3f}{m(q + '.transform_s')} s "
                f"({c['transform_mrows_per_s']:.2f}{m(q + '.transform_mrows_per_s')} M rows/s) | "
                f"{same} | **{c['ratio_to_floor']:.2f}**{m(q + '.ratio_to_floor')} | {one} |"
            )
        if "whole_into_out" in sw:
            w, q = sw["whole_into_out"], f"{alias}:sweep.whole_into_out"
            lines.append(
                f"| {sw['rows']:,}, into `out=` | {w['transform_s']:.3f}{m(q + '.transform_s')} s | "
                f"{w['numpy_chunked_into_out_s']:.3f}{m(q + '.numpy_chunked_into_out_s')} s (4,096-row chunks into it) | "
                f"**{w['ratio_to_floor']:.2f}**{m(q + '.ratio_to_floor')} | — |"
            )
        lines.append(
            f"\nfloor: {sw['floor_4096_s']:.3f}{m(alias + ':sweep.floor_4096_s')} s "
            f"({sw['floor_mrows_per_s']:.2f}{m(alias + ':sweep.floor_mrows_per_s')} M rows/s)"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
