"""No function of the package runs over 100 code lines: a longer one is split into named steps.

Code lines are the lines of a function's body that hold code: blank lines, comment lines and the docstring do not
count.
"""

from __future__ import annotations

import ast
from pathlib import Path

import dpsumm

PACKAGE = Path(dpsumm.__file__).resolve().parent
MAX_CODE_LINES = 100


def code_lines(source: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The code lines of ``node`` (its signature included, its docstring, blank and comment lines not)."""
    body = node.body
    docstring: tuple[int, int] | None = None
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        if isinstance(body[0].value.value, str):
            docstring = (body[0].lineno, body[0].end_lineno or body[0].lineno)
    lines = source.splitlines()[node.lineno - 1 : node.end_lineno]
    count = 0
    for number, line in enumerate(lines, start=node.lineno):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if docstring is not None and docstring[0] <= number <= docstring[1]:
            continue
        count += 1
    return count


def long_functions(source: str, limit: int = MAX_CODE_LINES) -> list[tuple[str, int]]:
    """``(name, code lines)`` of every function (nested ones and methods too) over ``limit`` code lines."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            n = code_lines(source, node)
            if n > limit:
                out.append((node.name, n))
    return out


def test_code_lines_count_code_only():
    source = 'def f(x):\n    """Doc\n    string."""\n\n    # a comment\n    y = x\n    return y\n'
    assert code_lines(source, ast.parse(source).body[0]) == 3  # type: ignore[arg-type]
    long = "def g():\n" + "    x = 1\n" * 101
    assert long_functions(long) == [("g", 102)]
    assert long_functions("def h():\n" + "    x = 1\n" * 99) == []


def test_no_function_over_100_code_lines():
    over = {
        f"{path.relative_to(PACKAGE)}: {name} ({n})": n
        for path in sorted(PACKAGE.rglob("*.py"))
        for name, n in long_functions(path.read_text(encoding="utf-8"))
    }
    assert not over, f"functions over {MAX_CODE_LINES} code lines (split them into named steps): {sorted(over)}"
