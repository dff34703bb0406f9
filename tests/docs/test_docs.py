"""Every command and snippet in README.md and docs/**/*.md runs as written, from a fresh clone's point of view.

What runs:

* every fenced ``bash``/``sh``/``console``-less shell block, as one ``bash -euo pipefail`` script, in a scratch
  copy of the repository (one copy per document: a document's blocks run in order in the same directory,
  as a reader following it would), against the installed ``dpsumm`` (a ``dpsumm`` and ``python`` of this
  interpreter come first on ``PATH``). ``$MNIST_DIR`` is the MNIST directory of tests/conftest.py (a block
  that uses it fails in CI, and is skipped elsewhere, when the files are missing);
* every fenced ``python`` block; a document's Python blocks share one interpreter, in order, like a notebook.

A block may be preceded by directives (HTML comments, invisible when rendered), one per line:

* ``<!-- docs-test: replace 'OLD' => 'NEW' (why) -->``: run the block with ``OLD`` replaced (smaller
  sizes, or ``true`` for an install step that CI performs itself); the reason is required.
* ``<!-- docs-test: setup COMMAND -->``: a shell command run first (e.g. writing the input files a
  command-line example names).
* ``<!-- docs-test: requires NAME (why) -->``: the block uses ``dpsumm.NAME`` (a dotted path below ``dpsumm``), an
  API that lands in another change: where the installed dpsumm lacks it the block is skipped, and in CI
  (``CI=true``) that fails instead, so the text cannot outlive or precede its API unnoticed.
* ``<!-- docs-test: help (why) -->``: the block is not run, every command in it is checked instead: a
  ``dpsumm`` command is parsed by dpsumm's own parser (every option and value), ``python -c`` runs, and any
  other program must exist and list each ``--option`` used in its ``--help``. For servers that run until
  stopped, commands that need another machine, and benchmarks of minutes; the reason is required.

Inline commands in running text (`` `python benches/x.py --opt` ``, `` `python -m pytest benches/...` ``) are
benchmarks and experiments that take minutes to hours: they are checked at the ``help`` level (the script
exists, runs ``--help``, accepts every option used), and a document that has them must say so with
``<!-- docs-test: inline commands help (why) -->``.

A ``dpsumm flower ... --run`` line already run successfully in this session is not run again (the same
quick start is in README.md and docs/flower.md; each run starts six processes).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import find_mnist, in_ci, mnist_location

#: Spawns processes (the inner loop skips them: pytest -m "not slow"; CI runs them).
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


DOCS = [
    ROOT / "README.md",
    *sorted(d for d in (ROOT / "docs").rglob("*.md") if "_build" not in d.relative_to(ROOT).parts),
]


SHELL = ("bash", "sh", "shell")


TIMEOUT = 420


DIRECTIVE = re.compile(r"^<!--\s*docs-test:\s*(.*?)\s*-->\s*$")


REPLACE = re.compile(r"""^replace\s+(['"])(.*?)\1\s*=>\s*(['"])(.*?)\3\s*\((.+)\)$""")


INLINE = re.compile(r"`((?:python benches/|python -m pytest benches/)[^`]*)`")


INLINE_MARK = re.compile(r"<!--\s*docs-test:\s*inline commands help\s*\((.+?)\)\s*-->")


@dataclass
class Block:
    doc: Path
    line: int
    lang: str
    code: str
    replace: list[tuple[str, str]] = field(default_factory=list)
    setup: list[str] = field(default_factory=list)
    help_reason: str | None = None
    requires: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"

    def text(self, env: dict[str, str]) -> str:
        code = self.code
        for old, new in self.replace:
            if old not in code:
                raise AssertionError(f"{self.id}: replace target {old!r} is not in the block")
            if self.lang == "python":
                new = new.replace("$MNIST_DIR", env.get("MNIST_DIR", "$MNIST_DIR"))
            code = code.replace(old, new)
        return code

    @property
    def needs_mnist(self) -> bool:
        return "MNIST_DIR" in self.code or any("MNIST_DIR" in n for _, n in self.replace)


def parse(doc: Path) -> list[Block]:
    """The fenced code blocks of ``doc`` with the directives right above each."""
    lines = doc.read_text().splitlines()
    blocks: list[Block] = []
    pending: list[str] = []
    i = 0
    while i < len(lines):
        m = DIRECTIVE.match(lines[i].strip())
        if m and not m.group(1).startswith("inline commands"):
            pending.append(m.group(1))
            i += 1
            continue
        fence = re.match(r"^(\s*)```(\w*)\s*$", lines[i])
        if fence:
            lang, start = fence.group(2).lower(), i + 1
            j = start
            while j < len(lines) and not lines[j].strip().startswith("```"):
                j += 1
            block = Block(doc, start, lang, "\n".join(lines[start:j]) + "\n")
            for d in pending:
                r = REPLACE.match(d)
                if r:
                    block.replace.append((r.group(2), r.group(4)))
                elif d.startswith("setup "):
                    block.setup.append(d[len("setup ") :])
                elif d.startswith("requires "):
                    req = re.match(r"^requires\s+([A-Za-z_][\w.]*)\s*\((.+)\)$", d)
                    if req is None:
                        raise AssertionError(
                            f"{doc}:{i}: `requires` needs a name and a reason: <!-- docs-test: requires NAME (why) -->"
                        )
                    block.requires.append(req.group(1))
                elif d.startswith("help"):
                    reason = re.match(r"^help\s*\((.+)\)$", d)
                    if reason is None:
                        raise AssertionError(f"{doc}:{i}: `help` needs a reason: <!-- docs-test: help (why) -->")
                    block.help_reason = reason.group(1)
                else:
                    raise AssertionError(f"{doc}:{i}: unknown docs-test directive {d!r}")
            pending = []
            blocks.append(block)
            i = j + 1
            continue
        if lines[i].strip():
            if pending:
                raise AssertionError(f"{doc}:{i + 1}: docs-test directives {pending} are not right above a code block")
        i += 1
    return blocks


ALL = [b for doc in DOCS for b in parse(doc)]


SHELL_BLOCKS = [b for b in ALL if b.lang in SHELL]


PY_DOCS = sorted({b.doc for b in ALL if b.lang == "python"})


def _bin_dir(tmp: Path) -> Path:
    """``dpsumm`` and ``python`` of this interpreter, first on PATH."""
    d = tmp / "bin"
    d.mkdir(exist_ok=True)
    for name, cmd in (
        ("dpsumm", f'exec "{sys.executable}" -m dpsumm "$@"'),
        ("python", f'exec "{sys.executable}" "$@"'),
        ("python3", f'exec "{sys.executable}" "$@"'),
    ):
        p = d / name
        p.write_text(f"#!/bin/sh\n{cmd}\n")
        p.chmod(0o755)
    return d


@pytest.fixture(scope="session")
def doc_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    import dpsumm

    env = dict(os.environ)
    env["PATH"] = (
        f"{_bin_dir(tmp_path_factory.mktemp('docs-bin'))}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    )
    pkg_parent = str(Path(dpsumm.__file__).resolve().parents[1])
    if "site-packages" not in pkg_parent:  # a development tree (PYTHONPATH=python): the same dpsumm in every process
        env["PYTHONPATH"] = pkg_parent + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["MPLBACKEND"] = "Agg"
    env["COLUMNS"] = "200"
    env["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("docs-cache"))
    env["FLWR_TELEMETRY_ENABLED"] = "0"
    env["FLWR_DISABLE_UPDATE_CHECK"] = "1"
    mnist = find_mnist()
    if mnist is not None:
        env["MNIST_DIR"] = str(mnist)
    return env


_CLONES: dict[Path, Path] = {}


_DONE_RUNS: set[str] = set()


_HELP: dict[tuple[str, tuple[str, ...]], str] = {}


def _clone(doc: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch copy of the repository's files (no build products), one per document."""
    if doc not in _CLONES:
        dest = tmp_path_factory.mktemp("clone") / "repo"
        ignore = shutil.ignore_patterns(
            ".git",
            "target",
            ".venv*",
            "dist",
            "__pycache__",
            "*.so",
            ".pytest_cache",
            ".hypothesis",
            ".benchmarks",
            "*.egg-info",
        )
        shutil.copytree(ROOT, dest, ignore=ignore)
        _CLONES[doc] = dest
    return _CLONES[doc]


def _need_mnist(block: Block, env: dict[str, str]) -> None:
    if block.needs_mnist and "MNIST_DIR" not in env:
        msg = f"{block.id} needs MNIST: files not found in {mnist_location()} (set DPSUMM_MNIST_DIR)"
        if in_ci():
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)


def _has(dotted: str) -> bool:
    """Does the installed dpsumm have ``dpsumm.<dotted>``?"""
    import importlib

    node: object = importlib.import_module("dpsumm")
    for part in dotted.removeprefix("dpsumm.").split("."):
        if not hasattr(node, part):
            return False
        node = getattr(node, part)
    return True


def _need_api(block: Block) -> None:
    missing = [name.removeprefix("dpsumm.") for name in block.requires if not _has(name)]
    if missing:
        msg = f"{block.id} uses dpsumm.{', dpsumm.'.join(missing)}, which the installed dpsumm does not have"
        if in_ci():
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)


def _run(script: str, cwd: Path, env: dict[str, str], what: str, timeout: float = TIMEOUT) -> str:
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        raise AssertionError(
            f"{what} exited {done.returncode}\n--- script\n{script}\n--- stdout (tail)\n"
            f"{done.stdout[-3000:]}\n--- stderr (tail)\n{done.stderr[-3000:]}"
        )
    return done.stdout


def commands(code: str) -> list[list[str]]:
    """The commands of a shell block: continuation lines joined, comments dropped, split at ``&&``, ``||``,
    ``;`` and ``|``."""
    out: list[list[str]] = []
    for line in code.replace("\\\n", " ").splitlines():
        tokens = shlex.split(line, comments=True)
        cur: list[str] = []
        for t in tokens:
            if t in ("&&", "||", ";", "|"):
                if cur:
                    out.append(cur)
                cur = []
            else:
                cur.append(t)
        if cur:
            out.append(cur)
    return out


def check_at_help_level(argv: list[str], cwd: Path, env: dict[str, str], where: str) -> None:
    """A command that is not run: dpsumm parses it; python -c runs; anything else lists its options in --help."""
    argv = [os.path.expandvars(a) if "$" in a else a for a in argv]
    flags = [a.split("=", 1)[0] for a in argv if a.startswith("--")]
    if argv[0] == "dpsumm":
        from dpsumm.cli import build_parser

        build_parser().parse_args(argv[1:])  # a UsageError fails the test with the parser's message
        return
    if argv[0] in ("python", "python3") and argv[1:2] == ["-c"]:
        _run(shlex.join(argv), cwd, env, where)
        return
    if argv[0] in ("python", "python3"):
        if argv[1] == "-m":
            head = argv[:3]
            files = [a for a in argv[3:] if not a.startswith("-") and ("/" in a or a.endswith(".py"))]
        else:
            head, files = argv[:2], [argv[1]]
        for f in files:
            assert (cwd / f).exists(), f"{where}: {f} does not exist"
    else:
        exe = shutil.which(argv[0], path=env["PATH"])
        assert exe is not None, f"{where}: {argv[0]} not found on PATH"
        head = [argv[0]]
        for a in argv[1:]:  # sub-commands (flwr supernode register ...): words before the first option/path
            if a.startswith("-") or "/" in a or "." in a or "=" in a:
                break
            head.append(a)
    key = (str(cwd), tuple(head))
    if key not in _HELP:
        _HELP[key] = _run(shlex.join([*head, "--help"]), cwd, env, f"{where}: {shlex.join(head)} --help", timeout=120)
    help_text = _HELP[key]
    missing = [f for f in flags if f != "--help" and f not in help_text]
    assert not missing, f"{where}: {shlex.join(head)} --help does not list {missing}"


def test_directives_are_well_formed() -> None:
    """Parsing every document raised nothing (unknown directives, a `help` without reason, a directive not
    above a block), and every `replace` target is in its block."""
    for b in ALL:
        for old, _ in b.replace:
            assert old in b.code, f"{b.id}: replace target {old!r} is not in the block"


@pytest.mark.parametrize("block", SHELL_BLOCKS, ids=lambda b: b.id)
def test_shell_block(block: Block, doc_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> None:
    env = dict(doc_env)
    _need_mnist(block, env)
    _need_api(block)
    cwd = _clone(block.doc, tmp_path_factory)
    code = block.text(env)
    for cmd in block.setup:
        _run(cmd, cwd, env, f"{block.id}: setup")
    if block.help_reason is not None:
        for argv in commands(code):
            check_at_help_level(argv, cwd, env, block.id)
        return
    lines = []
    for line in code.replace("\\\n", " ").splitlines():
        norm = " ".join(line.split("#", 1)[0].split())
        if norm.startswith("dpsumm flower ") and " --run" in f" {norm} ":
            if norm in _DONE_RUNS:
                lines.append(f": already run in this session: {shlex.quote(norm)}")
                continue
            _DONE_RUNS.add(norm)
        lines.append(line)
    _run("\n".join(lines), cwd, env, block.id)


@pytest.mark.parametrize("doc", PY_DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_python_blocks(doc: Path, doc_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> None:
    """A document's Python blocks, in order, in one interpreter (names carry over, as in a notebook)."""
    env = dict(doc_env)
    blocks = [b for b in ALL if b.doc == doc and b.lang == "python"]
    for b in blocks:
        _need_mnist(b, env)
        _need_api(b)
    cwd = _clone(doc, tmp_path_factory)
    parts = ["import sys", "ns = {'__name__': '__main__'}"]
    for b in blocks:
        for cmd in b.setup:
            _run(cmd, cwd, env, f"{b.id}: setup")
        parts.append(f"print('== docs-test block {b.id}', file=sys.stderr, flush=True)")
        parts.append(f"exec(compile({b.text(env)!r}, {b.id!r}, 'exec'), ns)")
    script = "\n".join(parts)
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, f"{doc.name}: a Python block failed\n{done.stderr[-4000:]}"


@pytest.mark.parametrize(
    "doc", [d for d in DOCS if INLINE.search(d.read_text())], ids=lambda p: str(p.relative_to(ROOT))
)
def test_inline_commands(doc: Path, doc_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> None:
    """Benchmark and experiment commands quoted in running text: marked as checked at the help level, and
    each script exists and accepts the options used."""
    text = doc.read_text()
    assert INLINE_MARK.search(text), (
        f"{doc.name} quotes benchmark commands in its text: say that they are checked "
        "at the help level, and why, with <!-- docs-test: inline commands help (why) -->"
    )
    cwd = _clone(doc, tmp_path_factory)
    seen: set[str] = set()
    for m in INLINE.finditer(text):
        cmd = " ".join(m.group(1).split())
        if cmd in seen:
            continue
        seen.add(cmd)
        line = text[: m.start()].count("\n") + 1
        argv = [a for a in shlex.split(cmd.replace("...", "")) if a not in ("[", "]")]
        check_at_help_level(argv, cwd, doc_env, f"{doc.relative_to(ROOT)}:{line}")


RESULTS_DIRS = ("benches/results", "docs/experiments")


#: Where a results file may be cited: every page, the generator of the results pages, and the tests and benchmark
#: scripts (a file a test or a script reads is in use).
CITING = ("README.md", "docs/**/*.md", "docs/*.py", "tests/**/*.py", "benches/*.py")


def _citing_text() -> str:
    files = {p for pattern in CITING for p in ROOT.glob(pattern) if "_build" not in p.relative_to(ROOT).parts}
    return "\n".join(p.read_text() for p in sorted(files))


def _cited(rel: str, text: str) -> bool:
    """``rel`` (a path from the repository root) is named in ``text``: from the root, or from docs/ as the pages
    link it (``../experiments/...``), or an experiment directory's file by the directory the generator lists."""
    forms = {rel}
    if rel.startswith("docs/"):
        forms.add(rel[len("docs/") :])
    return any(f in text for f in forms)


def test_every_results_file_is_cited() -> None:
    """A results file that no page, test or benchmark script names is stale: remove it (or cite it where its
    numbers are used)."""
    text = _citing_text()
    stale = [
        str(p.relative_to(ROOT))
        for d in RESULTS_DIRS
        for p in sorted((ROOT / d).rglob("*"))
        if p.is_file()
        and not _cited(str(p.relative_to(ROOT)), text)
        and not _cited_by_generator(p)
        and not _report_of_cited(p, text)
    ]
    assert not stale, "results files that nothing cites (remove them, or cite them):\n" + "\n".join(stale)


def _report_of_cited(path: Path, text: str) -> bool:
    """benches/testbeds.py and testbeds_ceiling.py write a markdown report beside each results file
    (``table-TAG.md`` beside ``results-TAG.json``, ``ceiling-X.md`` beside ``ceiling-X.json``): it is cited with it."""
    if path.suffix != ".md" or path.parent != ROOT / "docs" / "experiments" / "testbeds":
        return False
    stem = path.stem.replace("table-", "results-", 1) if path.stem.startswith("table-") else path.stem
    return _cited(str((path.parent / f"{stem}.json").relative_to(ROOT)), text)


def _cited_by_generator(path: Path) -> bool:
    """The generated experiments page cites each listed experiment directory's files (results.json, results.csv,
    table.md and every plot): the directory's name is in docs/generate_results.py's EXPERIMENTS."""
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import generate_results
    finally:
        sys.path.pop(0)
    rel = path.relative_to(ROOT / "docs" / "experiments") if (ROOT / "docs" / "experiments") in path.parents else None
    return rel is not None and len(rel.parts) == 2 and rel.parts[0] in {e[0] for e in generate_results.EXPERIMENTS}


def test_the_stale_results_check_can_fail(tmp_path: Path) -> None:
    """The check is not vacuous: an uncited file in a results directory is reported."""
    text = _citing_text()
    assert not _cited("benches/results/" + "-".join(["never", "cited"]) + ".json", text)
    assert _cited("benches/results/floor.json", text) and _cited("docs/experiments/testbeds/ceiling.json", text)


def test_generated_results_pages_are_up_to_date() -> None:
    """docs/results/testbeds.md and experiments.md are what docs/generate_results.py writes from today's files."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "generate_results.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
