"""Peak memory of the owners' passes, each alone in a fresh process (issue 22: peak RSS <= rows + 0.5 GB).

For ``--rows`` synthetic rows (``bench_scale.make_data``: 64 float32 features, ``--owners`` owners), each
pass below runs in its own child process after the rows are made and a small warm-up run (imports,
dp-accounting, the rayon pool); VmHWM is reset just before the pass. Reported, in GB of 10^9 bytes: the
bytes of the rows, the process before the pass minus the rows (interpreter, libraries, the validation set),
the peak during the pass minus the rows, and the peak minus the process before the pass (what the pass
itself adds).

* ``input_checks``: ``summarize``'s checks of every owner's rows (``float_matrix`` + ``check_hashable``);
* ``hash_sum``: each owner's streaming hash pass (``_core.owner_hash_sum``: every row hashed, nothing kept);
* ``transform_4096`` / ``transform_100000``: ``RFFHasher.transform`` over every row in calls of that many
  rows, each result dropped (the hashing-only pass as a user would write it);
* ``run_default``: ``dpsumm.summarize(owners, validation, 1000)`` with every default (private).

Run: ``python benches/bench_memory.py`` (10M rows, K = 100: a few minutes) -> ``benches/results/memory.json``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PASSES = ("input_checks", "hash_sum", "transform_4096", "transform_100000", "run_default")


def _vm(field: str) -> float:
    """A /proc/self/status memory field in GB (10^9 bytes)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024 / 1e9
    return float("nan")


def child(a: argparse.Namespace) -> dict:
    sys.path.insert(0, str(HERE))
    import dpsumm
    from bench_scale import make_data
    from dpsumm import _core
    from dpsumm._validation import check_hashable, float_matrix

    datas, V = make_data(a.rows, a.owners, 64)
    rows_gb = sum(d.nbytes for d in datas) / 1e9
    dpsumm.summarize([d[:3000] for d in datas[:4]], V, 100, progress=False)
    h = dpsumm.RFFHasher(64, dim=500, gamma=0.1, seed=0)
    h.transform(datas[0][:8])  # build the projection before the measurement
    passes = {
        "input_checks": lambda: [check_hashable(float_matrix(d, "owners", n_features=64), "owners", h) for d in datas],
        "hash_sum": lambda: [_core.owner_hash_sum(d, h._projection) for d in datas],
        "run_default": lambda: dpsumm.summarize(datas, V, 1000, progress=False),
    }
    gc.collect()
    before = _vm("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")
    if a.pass_.startswith("transform"):  # drop each result at once, as a streaming caller does
        step = int(a.pass_.split("_")[1])
        for d in datas:
            for s in range(0, len(d), step):
                h.transform(d[s : s + step])
    else:
        passes[a.pass_]()
    peak = _vm("VmHWM")
    return {
        "pass": a.pass_,
        "rows": a.rows,
        "owners": a.owners,
        "rows_gb": round(rows_gb, 3),
        "before_minus_rows_gb": round(before - rows_gb, 3),
        "peak_minus_rows_gb": round(peak - rows_gb, 3),
        "peak_minus_before_gb": round(peak - before, 3),
        "load": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--owners", type=int, default=100)
    ap.add_argument("--passes", nargs="+", choices=PASSES, default=list(PASSES))
    ap.add_argument("--out", default=str(HERE / "results" / "memory.json"))
    ap.add_argument("--child", dest="pass_", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.pass_:
        print(json.dumps(child(a)))
        return
    results = {"command": "python benches/bench_memory.py " + " ".join(sys.argv[1:]), "passes": []}
    for p in a.passes:
        cmd = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--child",
            p,
            "--rows",
            str(a.rows),
            "--owners",
            str(a.owners),
        ]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True)
        row = json.loads(out.stdout.strip().splitlines()[-1])
        print(json.dumps(row), flush=True)
        results["passes"].append(row)
    Path(a.out).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
