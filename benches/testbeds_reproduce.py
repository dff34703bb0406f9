"""Does a test-bed results file reproduce bit for bit at today's code? Rerun the command it records
(benches/testbeds.py, or benches/reserve_rules.py over it), for its first repeats, and compare every record field
by field.

    python benches/testbeds_reproduce.py --data DIR docs/experiments/testbeds/results-k1000.json
    python benches/testbeds_reproduce.py --data DIR --repeats 2 --out reproduce.json FILE.json ...

Each repeat r of benches/testbeds.py draws its split and seeds from r alone (and the greedies run once per repeat
at the largest size), so the file's command run with ``--repeats R`` gives the file's repeats 0 … R−1 again. The
command runs into a temporary directory (the file is not touched); a record matches when every field but
``seconds`` (wall time) is equal, floats compared exactly (a field the file's records lack, which today's code
adds, is listed as added, not compared). Prints one line per file and, with ``--out``, writes
the comparison as JSON (per file: the command rerun, the records compared, those equal, the keys of those that
differ, each differing field with its largest relative difference, and the keys of records the rerun writes that
the file does not hold, ``missing``). ``--keep DIR`` keeps the rerun's files.
Exit status 1 when a file does not reproduce.

A file that records earlier code on purpose (a "before" file, one named for a commit, one whose methods were
removed) is checked at that code: ``--at COMMIT`` reruns it in a git worktree of COMMIT, with that commit's
extension built in release (``cargo build``, its dependencies shared between commits in ``--target-dir``); the
report then goes under ``at_commit``, beside the check at today's code.

    python benches/testbeds_reproduce.py --at 117ddb7 --out reproduce.json results-digits-labels-40-117ddb7.json

numpy's matrix products go through OpenBLAS, whose kernel the CPU picks at run time; the median heuristic's γ
(``dpsumm.median_gamma``, a Gram matrix) can then differ in its last bit between machines. A file written on a
machine whose kernel differs reproduces with that kernel named, ``OPENBLAS_CORETYPE=Prescott python
benches/testbeds_reproduce.py ...``; the report records it (``openblas_coretype``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: The fields that say which run a record is.
KEY = ("bed", "gamma_kind", "repeat", "size", "method")
#: Fields that are not results of the run.
IGNORED = frozenset({"seconds"})


def rerun_command(command: str, data: str | None, repeats: int, out: Path, root: Path = ROOT) -> list[str]:
    """The recorded ``command`` (its script under ``root``) with its data directory, its repeats cut to ``repeats``
    and its output in ``out``."""
    argv = shlex.split(command)
    if argv[:1] != ["python"] or argv[1:2] not in (["benches/testbeds.py"], ["benches/reserve_rules.py"]):
        raise ValueError(f"not a benches/testbeds.py or benches/reserve_rules.py command: {command!r}")
    script, args = argv[1], argv[2:]
    kept: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--repeats", "--out"):
            i += 2
            continue
        if a == "--data":
            if data is None:
                raise ValueError("the command reads MNIST: pass --data")
            kept += ["--data", data]
            i += 2
            continue
        kept.append(a)
        i += 1
    return [sys.executable, str(root / script), *kept, "--repeats", str(repeats), "--out", str(out)]


def _differs(a: Any, b: Any) -> float | None:
    """None when ``a`` and ``b`` are equal (NaN equals NaN), else their relative difference (inf if not numbers)."""
    if a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)):
        return None
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        scale = max(abs(a), abs(b))
        return abs(a - b) / scale if scale else math.inf
    return math.inf


def compare(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> dict[str, Any]:
    """Every record of ``new`` against the record of ``old`` with the same key."""
    index = {tuple(r.get(k) for k in KEY): r for r in old}
    equal, missing, differing = 0, [], []
    added: set[str] = set()
    fields: dict[str, float] = {}
    for rec in new:
        key = tuple(rec.get(k) for k in KEY)
        ref = index.get(key)
        if ref is None:
            missing.append(list(key))
            continue
        same = True
        added.update(set(rec) - set(ref))
        for name in sorted(set(ref) - IGNORED):
            d = _differs(ref.get(name), rec.get(name))
            if d is not None:
                same = False
                fields[name] = max(fields.get(name, 0.0), d)
        equal += same
        if not same:
            differing.append(list(key))
    return dict(
        compared=len(new) - len(missing),
        equal=equal,
        missing=missing,
        differing_records=differing,
        differing_fields=fields,
        added_fields=sorted(added),
    )


#: The paths whose changes can change a run's records (the code; not the results files and pages).
CODE = ("python", "rust", "benches", "Cargo.toml", "Cargo.lock", "pyproject.toml")


def head_commit() -> str:
    """The checked-out commit (short hash), with ``+changes`` when the work tree's code differs from it."""
    git = ["git", "-C", str(ROOT)]
    commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(
        [*git, "status", "--porcelain", "--untracked-files=no", "--", *CODE], capture_output=True, text=True
    )
    return commit + ("+changes" if dirty.stdout.strip() else "")


def tree_commit(tree: Path) -> str:
    """The commit (short hash) a worktree from :func:`checkout` holds."""
    done = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip()


def written_at(path: Path) -> str:
    """The commit (short hash) that last changed ``path``: the code that wrote the file."""
    done = subprocess.run(
        ["git", "-C", str(ROOT), "log", "-1", "--format=%h", "--", str(path.resolve())], capture_output=True, text=True
    )
    return done.stdout.strip()


def _name(path: Path) -> str:
    """``path`` relative to the repository root (as the reports and the pages name a file), else as given."""
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


def checkout(commit: str, worktrees: Path, target_dir: Path) -> Path:
    """A git worktree of ``commit`` under ``worktrees``, its extension built in release and in place."""
    full = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", f"{commit}^{{commit}}"], capture_output=True, text=True
    )
    if full.returncode != 0:
        raise SystemExit(f"--at: {commit!r} is not a commit of this repository")
    tree = worktrees / f"at-{full.stdout.strip()[:12]}"
    if not tree.is_dir():
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), full.stdout.strip()],
            check=True,
            capture_output=True,
        )
    manifest = tree / "rust" / "Cargo.toml"
    subprocess.run(
        ["cargo", "build", "--release", "--features", "python", "--lib", "--manifest-path", str(manifest)],
        check=True,
        env=dict(os.environ, CARGO_TARGET_DIR=str(target_dir)),
    )
    built = target_dir / "release" / "libdpsumm_core.so"
    staged = tree / "python" / "dpsumm" / "_core.abi3.so.tmp"
    shutil.copyfile(built, staged)
    staged.replace(staged.with_suffix(""))
    return tree


def reproduce(
    path: Path, data: str | None, repeats: int, keep: Path | None = None, tree: Path | None = None
) -> dict[str, Any]:
    """Rerun ``path``'s command for ``repeats`` repeats (into ``keep`` if given) and compare; one file's report.

    With ``tree`` (a worktree from :func:`checkout`), the command runs with that tree's scripts and package."""
    recorded = json.loads(path.read_text())
    root = ROOT if tree is None else tree
    env = None if tree is None else dict(os.environ, PYTHONPATH=str(tree / "python"))
    checked_at = head_commit() if tree is None else tree_commit(tree)
    with tempfile.TemporaryDirectory() as scratch:
        tmp = scratch if keep is None else str(keep / path.stem)
        try:
            cmd = rerun_command(recorded["meta"]["command"], data, repeats, Path(tmp), root)
        except ValueError as exc:
            cmd = [sys.executable, "-c", f"raise SystemExit({str(exc)!r})"]
        t0 = time.perf_counter()
        done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - t0
        if done.returncode != 0:
            return dict(
                file=_name(path),
                command=recorded["meta"]["command"],
                error=done.stderr[-2000:],
                checked_at=checked_at,
                written_at=written_at(path),
            )
        written = sorted(Path(tmp).glob("results*.json"))
        new = json.loads(written[0].read_text())["records"]
    wanted = [r for r in recorded["records"] if r["repeat"] < repeats]
    report = compare(wanted, new)
    report.update(
        file=_name(path),
        command=recorded["meta"]["command"],
        repeats=repeats,
        recorded=len(wanted),
        seconds=seconds,
        checked_at=checked_at,
        written_at=written_at(path),
    )
    # every record of the file rerun and equal; a record the rerun adds, which the file does not hold (a run cut from
    # the file by hand), is listed in ``missing`` and does not count against it
    report["reproduces"] = report["compared"] == report["equal"] == len(wanted)
    if os.environ.get("OPENBLAS_CORETYPE"):  # numpy's BLAS kernel, chosen by hand (the CPU's choice otherwise)
        report["openblas_coretype"] = os.environ["OPENBLAS_CORETYPE"]
    return report


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path, help="results files written by benches/testbeds.py")
    ap.add_argument("--data", help="directory of the MNIST IDX files (for the commands that read them)")
    ap.add_argument("--repeats", type=int, default=1, help="rerun repeats 0 .. N-1 (default 1)")
    ap.add_argument("--out", type=Path, help="write the reports here as JSON (appends to an existing report)")
    ap.add_argument("--keep", type=Path, help="keep each rerun's results in a directory of this one")
    ap.add_argument(
        "--written-only",
        action="store_true",
        help="rerun nothing: record for each file only the commit that wrote it (a file not checked at today's code)",
    )
    ap.add_argument(
        "--at",
        metavar="COMMIT",
        help="rerun at COMMIT's code (a worktree of it, its extension built) instead of today's; reported under "
        "at_commit",
    )
    ap.add_argument(
        "--worktrees",
        type=Path,
        default=Path(tempfile.gettempdir()) / "dpsumm-reproduce",
        help="where --at puts its worktrees (kept for the next check; default: under the system's temp directory)",
    )
    ap.add_argument(
        "--target-dir",
        type=Path,
        default=Path(tempfile.gettempdir()) / "dpsumm-reproduce" / "target",
        help="cargo's target directory for --at builds, shared between commits",
    )
    args = ap.parse_args()
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    if args.written_only and args.out is None:
        ap.error("--written-only needs --out")
    if args.written_only and args.at is not None:
        ap.error("--written-only reruns nothing: it takes no --at")
    stored: dict[str, list[dict[str, Any]]] = {"files": [], "at_commit": []}
    if args.out is not None and args.out.is_file():
        stored.update(json.loads(args.out.read_text()))
    section = "files" if args.at is None else "at_commit"
    reports = stored[section]
    tree = None
    if args.at is not None:
        args.worktrees.mkdir(parents=True, exist_ok=True)
        tree = checkout(args.at, args.worktrees.resolve(), args.target_dir.resolve())

    def save() -> None:
        if args.out is not None:
            stored[section] = reports
            args.out.write_text(json.dumps({k: v for k, v in stored.items() if v or k == "files"}, indent=1) + "\n")

    failed = 0
    for path in args.files:
        if args.written_only:
            rel = _name(path.resolve())
            old = next((r for r in reports if r["file"] == rel), None)
            if old is None or "reproduces" not in old:  # keep a failed rerun's error beside it
                entry = dict(old or {}, file=rel, written_at=written_at(path))
                reports = [r for r in reports if r["file"] != rel] + [entry]
            continue
        rep = reproduce(path.resolve(), args.data, args.repeats, args.keep, tree)
        reports = [r for r in reports if r["file"] != rep["file"]] + [rep]
        where = "" if tree is None else f" at {rep['checked_at']}"
        if "error" in rep:
            failed += 1
            print(
                f"ERROR {rep['file']}{where}: {rep['error'].strip().splitlines()[-1] if rep['error'].strip() else ''}"
            )
        else:
            failed += not rep["reproduces"]
            status = "same" if rep["reproduces"] else "DIFFERS"
            detail = ", ".join(f"{k} {v:.1e}" for k, v in sorted(rep["differing_fields"].items()))
            print(
                f"{status} {rep['file']}{where}: {rep['equal']}/{rep['recorded']} records equal "
                f"({rep['seconds']:.0f} s){': ' + detail if detail else ''}",
                flush=True,
            )
        save()  # after every file: a long check keeps what it has done
    save()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
