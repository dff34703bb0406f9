"""Numbers in the documents, checked against the results files they come from.

Every number in README.md and docs/*.md must come from a results file in the repository. A number is tied
to its file by an HTML comment right after it (invisible when rendered):

    <!-- numbers: p = benches/results/mnist_profile.json -->        (declares alias p, anywhere before use)
    | **total** | **1.67**<!--= p:runs[method=nominations].total_s --> |
    ... 13.6 s<!--= e:nominations.total_s --> end to end, 0.14×<!--= e:paper.ratio_nominations_to_paper -->
    ... −42 %<!--= 100 * (m:nom.mmd2 / m:cg.mmd2 - 1) -->                       (arithmetic is allowed)

* ``<!-- numbers: ALIAS = PATH -->`` names a file (relative to the repository root, inside it; ``.json``).
  An alias holds from its declaration to the end of the document (a later declaration replaces it).
* ``<!--= EXPR -->`` checks the number written immediately before it (the last number between the
  previous marker or the start of the line and this one; ``**``, ``%``, ``×``, ``,`` and a leading ``+``
  or ``−`` are understood). ``EXPR`` is arithmetic (``+ - * /``, parentheses, numbers) over
  ``ALIAS:PATH`` terms and ``mean``/``median``/``std``/``min``/``max``/``sum`` of a list; ``PATH`` walks the JSON: ``key``,
  ``.key``, ``[3]``, ``[key=value]`` (the first
  list element whose ``key`` equals ``value``; several: ``[method=paper,size=50]``; quote a value with
  brackets: ``[name="f[x]"]``), ``[*key=value,...]`` (every such element, as a list, for ``mean()`` and co.), ``["a key with spaces"]``.
* A table keeps its cells readable: its numbers are tied by a block right below it (one line per number, the
  row and column counted from 1 below the header, ``.NTH`` the NTH number of the cell, default 1)::

      <!-- numbers in the table above:
      2.3 = max(tb0:records[*method=labels].epsilon_owners)
      5.2.2 = mean(pp:records[*bed=mnist-groups,size=1000,method=labels].population_vs_exact_pct)
      -->

* The written number matches when it equals the expression's value rounded to the written number of
  decimals (``1.67`` matches 1.672, ``13.6`` matches 13.63; ``2.10e-5`` compares mantissas).

``python tests/docnumbers.py [FILE.md ...]`` prints every marked number with its value (default: README.md
and docs/*.md); tests/test_numbers.py checks them all in CI. ``python tests/docnumbers.py --rewrite [FILE.md ...]``
writes each marked number that no longer matches its file back as the file's value, at the written number's
precision, sign style and digit grouping (after re-running an experiment: read the prose around each changed
number, which no tool checks).
"""

from __future__ import annotations

import ast
import json
import math
import operator
import re
import statistics
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

DECLARE = re.compile(r"<!--\s*numbers:\s*([A-Za-z_]\w*)\s*=\s*(\S+?)\s*-->")
MARK = re.compile(r"<!--=\s*(.+?)\s*-->")
_BRACKET = r"\[(?:\"[^\"]*\"|'[^']*'|[^\]\"'])*\]"
TERM = re.compile(r"([A-Za-z_]\w*):((?:\w+|" + _BRACKET + r")(?:\.\w+|" + _BRACKET + r")*)")
NUMBER = re.compile(r"(?<![\w.])([+\-−]?)(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:[eE]([+\-−]?\d+))?(?![\w])")
TABLE_BLOCK = re.compile(r"^<!--\s*numbers in the table above:\s*$")
CELL = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?\s*=\s*(.+?)\s*$")
SEGMENT = re.compile(r"\.?(\w+)|(" + _BRACKET + r")")


class NumbersError(Exception):
    """A marker that cannot be read or evaluated (bad alias, path, expression or file)."""


@dataclass
class Marked:
    """One marked number: where it is, what is written, what the file says."""

    doc: str
    line: int
    written: str
    expr: str
    value: float | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.value is not None and matches(self.written, self.value)

    def describe(self) -> str:
        where = f"{self.doc}:{self.line}"
        if self.error is not None:
            return f"{where}: {self.written!r} <!--= {self.expr} -->: {self.error}"
        return f"{where}: written {self.written!r}, file gives {self.value!r} (<!--= {self.expr} -->)"


def parse_written(text: str) -> tuple[float, int, int]:
    """``(value, decimals, exponent)`` of a written number such as ``+4,045``, ``−42``, ``2.10e-5``."""
    m = NUMBER.fullmatch(text.strip())
    if m is None:
        raise NumbersError(f"not a number: {text!r}")
    sign, whole, frac, exp = m.groups()
    mantissa = float(whole.replace(",", "") + (frac or ""))
    e = int(exp.replace("−", "-")) if exp else 0
    value = mantissa * 10.0**e
    return (-value if sign in ("-", "−") else value), (len(frac) - 1 if frac else 0), e


def matches(written: str, value: float) -> bool:
    """Does ``written`` equal ``value`` rounded to the written precision?"""
    shown, decimals, e = parse_written(written)
    if not math.isfinite(value):
        return False
    tol = 0.5 * 10.0 ** (e - decimals)
    return abs(shown - value) <= tol * (1 + 1e-9) + 1e-12 * abs(value)


@lru_cache(maxsize=4096)
def _conditions(text: str) -> tuple[tuple[str, str], ...]:
    """The ``(key, value)`` pairs of a selection ``k=v,k2="v 2"`` (parsed once per distinct text)."""
    out = []
    for part in re.findall(r"""(?:[^,"']|"[^"]*"|'[^']*')+""", text):
        k, _, v = part.partition("=")
        v = v.strip()
        if len(v) >= 2 and v[0] in "\"'" and v[-1] == v[0]:
            v = v[1:-1]
        out.append((k.strip(), v))
    return tuple(out)


def _matches(x: Any, conds: tuple[tuple[str, str], ...]) -> bool:
    return isinstance(x, dict) and all(k in x and str(x[k]) == v for k, v in conds)


def walk(data: Any, path: str) -> Any:
    """Follow ``path`` (``a.b[2][method=paper]["x y"]``) into parsed JSON.

    ``[k=v,k2=v2]`` picks the first list element with those values; ``[*k=v,...]`` keeps every such element
    (a list), and a later ``.key`` then applies to each of them (``mean(r:[*method=uniform,size=50].mmd2)``).
    """
    pos, node, many = 0, data, False
    while pos < len(path):
        m = SEGMENT.match(path, pos)
        if m is None or m.end() == pos:
            raise NumbersError(f"bad path {path!r} at {path[pos:]!r}")
        pos = m.end()
        key, bracket = m.group(1), (m.group(2) or "")[1:-1]
        try:
            if key is not None:
                node = [x[key] for x in node] if many else node[key]
            elif bracket.startswith("*"):
                if many:
                    raise NumbersError(f"path {path!r}: one [*...] selection per path")
                conds = _conditions(bracket[1:])
                node, many = [x for x in node if _matches(x, conds)], True
                if not node:
                    raise StopIteration
            elif many:
                raise NumbersError(f"path {path!r}: only .key may follow a [*...] selection")
            elif bracket.isdigit() or (bracket.startswith("-") and bracket[1:].isdigit()):
                node = node[int(bracket)]
            elif bracket[:1] in "\"'" and bracket[-1:] == bracket[:1]:
                node = node[bracket[1:-1]]
            elif "=" in bracket:
                conds = _conditions(bracket)
                node = next(x for x in node if _matches(x, conds))
            else:
                node = node[bracket]
        except (KeyError, IndexError, TypeError, StopIteration):
            raise NumbersError(f"path {path!r}: nothing at {m.group(0)!r}") from None
    return node


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def _std(v: list[float]) -> float:
    """Sample standard deviation (ddof = 1), as the experiment tables report it."""
    if len(v) < 2:
        return 0.0
    m = sum(v) / len(v)
    return math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1))


_FUNCS = {
    "mean": lambda v: sum(v) / len(v),
    "median": statistics.median,
    "min": min,
    "max": max,
    "sum": sum,
    "std": _std,
}


def _eval(node: ast.AST, names: dict[str, Any]) -> Any:
    if isinstance(node, ast.Expression):
        return _eval(node.body, names)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCS
        and len(node.args) == 1
        and not node.keywords
    ):
        v = _eval(node.args[0], names)
        if not isinstance(v, list) or not v:
            raise NumbersError(f"{node.func.id}() needs a non-empty list of numbers")
        return float(_FUNCS[node.func.id](v))
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        a, b = _eval(node.left, names), _eval(node.right, names)
        if isinstance(a, list) or isinstance(b, list):
            raise NumbersError("arithmetic on a list: use mean(), median(), min(), max() or sum()")
        return float(_OPS[type(node.op)](a, b))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _eval(node.operand, names)
        if isinstance(v, list):
            raise NumbersError("arithmetic on a list: use mean(), median(), min(), max() or sum()")
        return -v if isinstance(node.op, ast.USub) else v
    raise NumbersError(f"unsupported expression: {ast.dump(node)}")


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def evaluate(expr: str, files: dict[str, Any]) -> float:
    """The value of a marker's expression, ``files`` mapping alias to parsed JSON."""
    names: dict[str, Any] = {}

    def term(m: re.Match[str]) -> str:
        alias, path = m.group(1), m.group(2)
        if alias not in files:
            raise NumbersError(f"alias {alias!r} is not declared (<!-- numbers: {alias} = FILE -->)")
        v = walk(files[alias], path)
        if isinstance(v, list) and v and all(_number(x) for x in v):
            v = [float(x) for x in v]
        elif not _number(v):
            raise NumbersError(f"{alias}:{path} is {v!r}, not a number")
        name = f"_t{len(names)}"
        names[name] = v if isinstance(v, list) else float(v)
        return name

    try:
        tree = ast.parse(TERM.sub(term, expr), mode="eval")
    except SyntaxError as exc:
        raise NumbersError(f"bad expression {expr!r}: {exc.msg}") from None
    value = _eval(tree, names)
    if isinstance(value, list):
        raise NumbersError(f"{expr!r} is a list: use mean(), median(), min(), max() or sum()")
    return float(value)


def load_file(rel: str, root: Path = ROOT) -> Any:
    """The parsed JSON of results file ``rel`` (inside ``root``), read once per version of the file."""
    p = (root / rel).resolve()
    if root.resolve() not in p.parents:
        raise NumbersError(f"{rel}: results files must be inside the repository")
    if not p.is_file():
        raise NumbersError(f"{rel}: no such results file")
    stat = p.stat()
    return _parsed(p, stat.st_mtime_ns, stat.st_size, rel)


@lru_cache(maxsize=256)
def _parsed(p: Path, mtime_ns: int, size: int, rel: str) -> Any:
    try:
        return json.loads(p.read_text())
    except ValueError as exc:
        raise NumbersError(f"{rel}: not JSON ({exc})") from None


def scan(doc: Path, root: Path = ROOT) -> list[Marked]:
    """Every marked number of ``doc`` with its value (or the reason it has none)."""
    rel = str(doc.resolve().relative_to(root.resolve())) if root.resolve() in doc.resolve().parents else str(doc)
    files: dict[str, Any] = {}
    bad: dict[str, str] = {}
    out: list[Marked] = []
    fenced = False
    lines = doc.read_text().splitlines()
    block: int | None = None  # the line of an open "numbers in the table above" block
    for lineno, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:  # code blocks show markers, they do not carry them
            continue
        if block is not None:
            if line.strip() == "-->":
                block = None
            else:
                out.append(_cell_number(rel, lineno, line, _table_above(lines, block), files))
            continue
        if TABLE_BLOCK.match(line.strip()):
            block = lineno
            continue
        code = [m.span() for m in re.finditer(r"`[^`]*`", line)]  # nor do inline code spans

        def live(m: re.Match[str]) -> bool:
            return not any(a <= m.start() < b for a, b in code)

        events = sorted(
            [(m.start(), m) for m in DECLARE.finditer(line) if live(m)]
            + [(m.start(), m) for m in MARK.finditer(line) if live(m)],
            key=lambda t: t[0],
        )
        prev_end = 0
        for _, m in events:
            if m.re is DECLARE:
                alias, path = m.group(1), m.group(2)
                try:
                    files[alias] = load_file(path, root)
                    bad.pop(alias, None)
                except NumbersError as exc:
                    files.pop(alias, None)
                    bad[alias] = str(exc)
                    out.append(Marked(rel, lineno, "", f"numbers: {alias} = {path}", error=str(exc)))
                prev_end = m.end()
                continue
            before = line[prev_end : m.start()]
            prev_end = m.end()
            nums = list(NUMBER.finditer(before))
            expr = m.group(1)
            if not nums:
                out.append(Marked(rel, lineno, "", expr, error="no number right before the marker"))
                continue
            written = nums[-1].group(0)
            rec = Marked(rel, lineno, written, expr)
            try:
                rec.value = evaluate(expr, files)
            except (NumbersError, ZeroDivisionError) as exc:
                rec.error = str(exc)
            out.append(rec)
    return out


def _table_above(lines: list[str], block: int) -> list[list[str]]:
    """The body rows (cells, split on ``|``) of the table that ends right above line ``block`` (1-based)."""
    end = block - 1  # index of the block's line
    start = end
    while start > 0 and lines[start - 1].lstrip().startswith("|"):
        start -= 1
    rows = [r.strip().strip("|").split("|") for r in lines[start:end]]
    return rows[2:]  # below the header and its |---| line


def _cell_number(rel: str, lineno: int, spec: str, table: list[list[str]], files: dict[str, Any]) -> Marked:
    """One line of a table's numbers block: the number at ``ROW.COLUMN[.NTH]`` checked against ``EXPR``."""
    m = CELL.match(spec.strip())
    if m is None:
        return Marked(rel, lineno, "", spec, error="not ROW.COLUMN[.NTH] = EXPR")
    row, col, nth, expr = int(m.group(1)), int(m.group(2)), int(m.group(3) or 1), m.group(4)
    if not table:
        return Marked(rel, lineno, "", expr, error="no table right above the block")
    if not (1 <= row <= len(table) and 1 <= col <= len(table[row - 1])):
        return Marked(rel, lineno, "", expr, error=f"no cell {row}.{col} in the table above")
    cell = re.sub(r"`[^`]*`", "", table[row - 1][col - 1])
    nums = list(NUMBER.finditer(cell))
    if not 1 <= nth <= len(nums):
        return Marked(rel, lineno, "", expr, error=f"cell {row}.{col} has no number {nth} ({cell.strip()!r})")
    rec = Marked(rel, lineno, nums[nth - 1].group(0), expr)
    try:
        rec.value = evaluate(expr, files)
    except (NumbersError, ZeroDivisionError) as exc:
        rec.error = str(exc)
    return rec


def format_like(written: str, value: float) -> str:
    """``value`` written as ``written`` is: its decimals (or mantissa digits), sign style and thousands commas."""
    m = NUMBER.fullmatch(written.strip())
    if m is None:
        raise NumbersError(f"not a number: {written!r}")
    sign, whole, frac, exp = m.groups()
    decimals = len(frac) - 1 if frac else 0
    e = int(exp.replace("−", "-")) if exp else 0
    mantissa = abs(value) / 10.0**e
    body = f"{mantissa:,.{decimals}f}" if "," in whole else f"{mantissa:.{decimals}f}"
    if exp:
        body += written[written.lower().rindex("e") :]
    negative = value < 0 and float(body.replace(",", "").split("e")[0].split("E")[0]) != 0.0
    if negative:
        return ("−" if sign == "−" or (not sign and "−" in written) else "-") + body
    return ("+" if sign else "") + body


def rewrite(doc: Path, root: Path = ROOT) -> int:
    """Rewrite every marked number of ``doc`` that does not match its file; returns how many were rewritten."""
    changed = {
        (r.line, r.written, r.expr): r.value
        for r in scan(doc, root)
        if r.error is None and r.value is not None and not r.ok
    }
    if not changed:
        return 0
    lines = doc.read_text().split("\n")
    count = 0
    for i, line in enumerate(lines):
        lineno = i + 1
        if not any(k[0] == lineno for k in changed):
            continue
        edits: list[tuple[int, int, str]] = []
        prev_end = 0
        for m in sorted(list(DECLARE.finditer(line)) + list(MARK.finditer(line)), key=lambda x: x.start()):
            if m.re is DECLARE:
                prev_end = m.end()
                continue
            nums = list(NUMBER.finditer(line, prev_end, m.start()))
            key = (lineno, nums[-1].group(0) if nums else "", m.group(1))
            if nums and key in changed:
                value = changed[key]
                assert value is not None
                edits.append((nums[-1].start(), nums[-1].end(), format_like(nums[-1].group(0), value)))
            prev_end = m.end()
        for a, b, text in reversed(edits):
            line = line[:a] + text + line[b:]
            count += 1
        lines[i] = line
    doc.write_text("\n".join(lines))
    return count


def documents(root: Path = ROOT) -> list[Path]:
    """README.md and every docs/**/*.md (not the built site's copies under docs/_build)."""
    return [
        root / "README.md",
        *sorted(p for p in (root / "docs").rglob("*.md") if "_build" not in p.relative_to(root).parts),
    ]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--rewrite"]:
        for doc in [Path(a) for a in argv[1:]] or documents():
            n = rewrite(doc)
            if n:
                print(f"{doc}: {n} numbers rewritten")
        argv = argv[1:]
    docs = [Path(a) for a in argv] or documents()
    failed = 0
    for doc in docs:
        for rec in scan(doc):
            status = "ok  " if rec.ok else "FAIL"
            failed += not rec.ok
            print(f"{status} {rec.describe()}")
    print(f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
