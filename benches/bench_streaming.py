"""One owner whose rows live in a file: the default run against the streaming floor of the same file.

For each format (``memory``: the rows as an array; ``npy``: a ``.npy`` file, memory-mapped; ``parquet``: a parquet
file read in record batches, the rows sold fetched by row group), in a child process of its own:

* the file is written chunk by chunk by a process of its own (the same rows for every format, drawn chunk by chunk
  from a seeded generator: ``bench_scale.make_data``'s clusters, 64 float32 features; parquet: plain float32 pages,
  ``--row-group`` rows per row group), and deleted when the child is done (``--keep`` keeps it);
* the *streaming floor*: read and hash every row once from that file, numpy + pyarrow, chunked (a parquet file's
  record batches, or a ``.npy`` file's memory map, ``--chunk-rows`` rows at a time, each ``cos(X @ omega + b)``
  with the run's h1, float32, into a reused buffer);
* the default run end to end, ``dpsumm.summarize([dpsumm.Owner(path)], V, --size, random_state=0)`` (seeded: the
  same choices in every format, so the summaries can be compared; NOT private), its wall time and the floor's
  measured in the same process, the floor before and after the run (``run_over_floor``: over the faster of the two;
  ``run_over_floor_mean``: over their mean);
* the peak anonymous memory (``RssAnon`` of /proc/self/status, sampled every 20 ms: a mapped file's pages are not
  anonymous) during the floor and during the run, and the bytes read from the device (/proc/self/io
  ``read_bytes``: pages already in the page cache are not read again); for parquet, the row groups the fetches of
  rows by index read;
* a digest of the summary (its rows, hashes, owners and row indices): every format's must be the same.

``python benches/bench_streaming.py --rows 10000000 --formats memory parquet --out
benches/results/streaming-1e7.json``: the 10^7-row equality of the in-memory and the parquet run.
``python benches/bench_streaming.py --rows 20000000 --formats npy parquet --out benches/results/streaming-2e7.json``:
an owner of 2*10^7 rows (5.1 GB) from each format, one file at a time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
GEN_ROWS = 1_000_000  # rows drawn per generator chunk: the rows do not depend on the format or the chunk size read


def _status(field: str) -> float:
    """A /proc/self/status field in GB (10^9 bytes)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024 / 1e9
    return float("nan")


def _read_bytes() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("read_bytes:"):
            return int(line.split()[1])
    return 0


class PeakAnon:
    """The peak of ``RssAnon`` while the block runs, sampled every 20 ms in a thread."""

    def __enter__(self) -> PeakAnon:
        self.peak, self._stop = _status("RssAnon"), threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _watch(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, _status("RssAnon"))

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _status("RssAnon"))


def chunks(rows: int, features: int, seed: int = 0):  # type: ignore[no-untyped-def]
    """The owner's rows, ``GEN_ROWS`` at a time, and the consumer's 2,000 rows (clusters as ``bench_scale``)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    centres = rng.random((20, features), dtype=np.float32)
    own = rng.choice(20, size=3, replace=False)
    target = rng.choice(20, size=4, replace=False)
    V = centres[target[rng.integers(0, 4, 2000)]] + np.float32(0.08) * rng.standard_normal((2000, features), np.float32)

    def gen():  # type: ignore[no-untyped-def]
        for c, start in enumerate(range(0, rows, GEN_ROWS)):
            r = np.random.default_rng([seed, c])
            n = min(GEN_ROWS, rows - start)
            which = np.where(r.random(n) < 0.8, own[r.integers(0, 3, n)], r.integers(0, 20, n))
            X = r.standard_normal((n, features), dtype=np.float32)
            X *= np.float32(0.08)
            X += centres[which]
            yield X

    return gen(), V.astype(np.float32)


def write(fmt: str, path: Path, rows: int, features: int, row_group: int) -> None:
    import numpy as np

    gen, _ = chunks(rows, features)
    if fmt == "npy":
        out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(rows, features))
        start = 0
        for X in gen:
            out[start : start + len(X)] = X
            start += len(X)
        out.flush()
        del out
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([(f"f{j}", pa.float32()) for j in range(features)])
    # Plain float32 pages, no compression and no dictionary (random floats do not compress): the file is the rows' size.
    with pq.ParquetWriter(path, schema, compression="none", use_dictionary=False) as w:
        for X in gen:
            w.write_table(
                pa.table({f"f{j}": X[:, j] for j in range(features)}, schema=schema), row_group_size=row_group
            )


def floor(fmt: str, source, omega, offset, chunk: int) -> int:  # type: ignore[no-untyped-def]
    """Read and hash every row once: ``cos(X @ omega + b)`` in float32, chunk by chunk; returns the rows read."""
    import numpy as np

    buf = np.empty((chunk, omega.shape[1]), np.float32)

    def hash_rows(X):  # type: ignore[no-untyped-def]
        o = buf[: len(X)]
        np.matmul(X, omega, out=o)
        o += offset
        np.cos(o, out=o)

    n = 0
    if fmt == "parquet":
        import pyarrow.parquet as pq

        for batch in pq.ParquetFile(source, pre_buffer=False).iter_batches(batch_size=chunk):  # as dpsumm reads it
            X = np.empty((batch.num_columns, batch.num_rows), np.float32).T  # column order: one copy per column
            for j in range(batch.num_columns):
                X[:, j] = batch.column(j).to_numpy()
            hash_rows(X)
            n += len(X)
        return n
    X = source if fmt == "memory" else np.load(source, mmap_mode="r")
    for s in range(0, len(X), chunk):
        hash_rows(X[s : s + chunk])
        n += len(X[s : s + chunk])
    return n


def digest(result) -> str:  # type: ignore[no-untyped-def]
    import numpy as np

    h = hashlib.sha256()
    for a in (result.points, result.hashes, result.owner, result.index):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def child(a: argparse.Namespace) -> dict:
    import numpy as np

    import dpsumm

    fmt, path = a.child, Path(a.dir) / f"owner.{a.child}"
    _, V = chunks(a.rows, a.features)
    t = time.perf_counter()
    if fmt == "memory":
        gen, _ = chunks(a.rows, a.features)
        X = np.empty((a.rows, a.features), np.float32)
        start = 0
        for part in gen:
            X[start : start + len(part)] = part
            start += len(part)
        source: object = X
        file_gb = 0.0
    else:  # written by the parent's writer process: its memory is not this process's
        source = str(path)
        file_gb = path.stat().st_size / 1e9
    written_s = time.perf_counter() - t
    # The run's h1 (its dim, gamma and seed) from a small warm-up run (imports, dp-accounting's start-up).
    warm = dpsumm.summarize([np.asarray(V[:1500])], V, a.size, progress=False, random_state=0)
    omega, offset = np.ascontiguousarray(warm.hasher.omega_), warm.hasher.offset_
    out: dict = {"format": fmt, "rows": a.rows, "features": a.features, "file_gb": round(file_gb, 3)}
    out["write_s"] = round(written_s if fmt == "memory" else a.write_s, 1)
    out["rss_anon_before_gb"] = round(_status("RssAnon"), 3)
    out["hasher"] = {"dim": int(warm.hasher.dim)}
    with PeakAnon() as m:
        read0, t = _read_bytes(), time.perf_counter()
        assert floor(fmt, source, omega, offset, a.chunk_rows) == a.rows
        out["floor_before_s"] = round(time.perf_counter() - t, 2)
        out["floor_read_gb"] = round((_read_bytes() - read0) / 1e9, 2)
    out["floor_peak_rss_anon_gb"] = round(m.peak, 3)
    owner = source if fmt == "memory" else dpsumm.Owner(source, chunk_rows=a.chunk_rows)
    fetched = {"calls": 0, "rows": 0, "row_groups_read": 0}
    if fmt == "parquet":  # count what the fetches by index read (the run is unchanged)
        from dpsumm.sources import ParquetRows

        take = ParquetRows.take

        def counted(self, index):  # type: ignore[no-untyped-def]
            flat = np.asarray(index).ravel()
            kept = self._kept[0]
            if not (len(kept) and np.isin(flat, kept).all()):
                fetched["row_groups_read"] += len(np.unique(np.searchsorted(self._starts, flat, side="right")))
            fetched["calls"] += 1
            fetched["rows"] += len(flat)
            return take(self, index)

        ParquetRows.take = counted  # type: ignore[method-assign]
    with PeakAnon() as m:
        read0, t = _read_bytes(), time.perf_counter()
        result = dpsumm.summarize([owner], V, a.size, progress=False, random_state=0)
        out["run_s"] = round(time.perf_counter() - t, 2)
        out["run_read_gb"] = round((_read_bytes() - read0) / 1e9, 2)
    out["run_peak_rss_anon_gb"] = round(m.peak, 3)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        groups = pq.ParquetFile(source).metadata.num_row_groups
        out["fetches"] = {
            **fetched,
            "row_groups": groups,
            "share_of_row_groups_read": round(fetched["row_groups_read"] / groups, 3),
        }
    t = time.perf_counter()  # the floor again: other jobs' load changes over minutes
    floor(fmt, source, omega, offset, a.chunk_rows)
    out["floor_after_s"] = round(time.perf_counter() - t, 2)
    out["floor_s"] = min(out["floor_before_s"], out["floor_after_s"])
    out["run_over_floor"] = round(out["run_s"] / out["floor_s"], 3)
    out["run_over_floor_mean"] = round(2 * out["run_s"] / (out["floor_before_s"] + out["floor_after_s"]), 3)
    out["summary_rows"] = int(len(result.index))
    out["summary_digest"] = digest(result)
    out["timings"] = {k: round(float(v), 2) for k, v in result.extra.get("timings", {}).items()}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--features", type=int, default=64)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--formats", nargs="+", default=["memory", "parquet"], choices=["memory", "npy", "parquet"])
    ap.add_argument("--chunk-rows", type=int, default=65_536)
    ap.add_argument("--row-group", type=int, default=65_536, help="rows per parquet row group")
    ap.add_argument(
        "--dir", default=str(Path(tempfile.gettempdir()) / "dpsumm-bench-streaming"), help="where the files are written"
    )
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--keep", action="store_true", help="keep each file")
    ap.add_argument("--out", default=None)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--write", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--write-s", type=float, default=0.0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.write:
        write(a.write, Path(a.dir) / f"owner.{a.write}", a.rows, a.features, a.row_group)
        return
    if a.child:
        try:
            print(json.dumps(child(a)))
        finally:
            f = Path(a.dir) / f"owner.{a.child}"
            if f.exists() and not a.keep:
                f.unlink()
        return
    Path(a.dir).mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    for var in ("RAYON_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        env[var] = str(a.threads)
    runs = []
    for fmt in a.formats:  # one file at a time, written by a process of its own, deleted by its child
        write_s = 0.0
        if fmt != "memory":
            t = time.perf_counter()
            subprocess.run([sys.executable, __file__, "--write", fmt, *sys.argv[1:]], env=env, check=True)
            write_s = time.perf_counter() - t
        args = [sys.executable, __file__, "--child", fmt, "--write-s", str(write_s), *sys.argv[1:]]
        done = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            sys.exit(f"{fmt}: {done.stderr[-3000:]}")
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(json.dumps(runs[-1]), flush=True)
    digests = {r["summary_digest"] for r in runs}
    report = {
        "command": "python benches/bench_streaming.py " + " ".join(sys.argv[1:]),
        "machine": {"cpus": len(os.sched_getaffinity(0)), "load_before": os.getloadavg()[0]},
        "threads": a.threads,
        "runs": runs,
        "same_summary_bit_for_bit": len(digests) == 1,
    }
    print(json.dumps({"same_summary_bit_for_bit": report["same_summary_bit_for_bit"]}))
    if a.out:
        Path(a.out).write_text(json.dumps(report, indent=1) + "\n")
    if not a.keep and Path(a.dir).exists() and not any(Path(a.dir).iterdir()):
        shutil.rmtree(a.dir)


if __name__ == "__main__":
    main()
