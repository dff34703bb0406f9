"""The proofs and docstrings name code that exists: a code name quoted in docs/explanation/ resolves in the package, a
``dpsumm.…`` (or relative) cross-reference in a docstring resolves, and each explanation page names the modules it
proves and the commit it was checked against (as OpenDP's proofs do)."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pkgutil
import re
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import dpsumm

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path(dpsumm.__file__).resolve().parent
EXPLANATION = sorted((ROOT / "docs" / "explanation").glob("*.md"))
#: The line under each page's title: the commit the page was checked against and the modules it proves (or, for a
#: page that proves nothing, describes).
PINNED = re.compile(r"^\*Checked against commit `([0-9a-f]{7,40})`: (proves|describes) (.+)\.\*$", re.M)
#: Names a page quotes from code outside the package (the paper authors' code, a library), declared on the page:
#: ``<!-- external names: make_tree opt_private_gen (why) -->``.
EXTERNAL = re.compile(r"<!-- external names: ([^(>]*)")
SPAN = re.compile(r"`([^`\n]+)`")
CALL = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*)\((?!\))")
DOTTED = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+(\(\))?$")
IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\(\))?$")
#: A symbol of the text's mathematics (``D_v``, ``n_k``, ``q_kj``, ``N_k``, ``g_tilde``-like subscripts of one to
#: three characters), not a code name.
MATH = re.compile(r"^[A-Za-z]{1,2}_[A-Za-z0-9]{1,3}$")
ROLE = re.compile(r":(?:func|class|mod|meth|data|attr|exc):`~?(\.?[A-Za-z_][A-Za-z0-9_.]*)`")


@cache
def modules() -> dict[str, Any]:
    """Every module of the package by its full name."""
    out: dict[str, Any] = {"dpsumm": dpsumm}
    for info in pkgutil.walk_packages(dpsumm.__path__, "dpsumm."):
        if info.name.endswith("__main__"):  # runs the command line
            continue
        if info.name.startswith("dpsumm.flower"):
            pytest.importorskip("flwr")
        out[info.name] = importlib.import_module(info.name)
    return out


def _members(obj: Any) -> set[str]:
    """The names reachable on ``obj``: its attributes, and a dataclass's fields (those without a class default)."""
    names = set(dir(obj))
    if dataclasses.is_dataclass(obj):
        names |= {f.name for f in dataclasses.fields(obj)}
    return names


def _attribute(obj: Any, name: str) -> Any:
    if hasattr(obj, name):
        return getattr(obj, name)
    if dataclasses.is_dataclass(obj) and name in {f.name for f in dataclasses.fields(obj)}:
        return None  # a field: resolves, nothing further to follow
    if inspect.isclass(obj) and name in _parameters(obj):
        return None  # an attribute the constructor sets from its parameter
    raise AttributeError(name)


@cache
def known_names() -> frozenset[str]:
    """Every name the package defines: modules (each dotted suffix), module-level names, class members and fields,
    and functions' and methods' parameters (the options a text quotes)."""
    out: set[str] = set()
    for full, mod in modules().items():
        parts = full.split(".")
        out |= {".".join(parts[i:]) for i in range(len(parts))}
        for name, obj in vars(mod).items():
            out.add(name)
            if inspect.isclass(obj) and (obj.__module__ or "").startswith("dpsumm"):
                out |= _members(obj)
                for member in vars(obj).values():
                    out |= _parameters(member)
            out |= _parameters(obj)
    return frozenset(out)


def _parameters(obj: Any) -> set[str]:
    if not callable(obj) or not (getattr(obj, "__module__", None) or "").startswith("dpsumm"):
        return set()
    try:
        return set(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        return set()


@cache
def _test_function_names() -> frozenset[str]:
    names = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names |= {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    return frozenset(names)


def resolve(name: str, context: str | None = None) -> bool:
    """Whether a dotted name resolves: from the package root, a module (by its full name or any dotted suffix of it, or
    relative to the module ``context``), or a module-level name of any module, then attribute by attribute."""
    parts = name.split(".")
    starts: list[tuple[Any, list[str]]] = []
    mods = modules()
    if name.startswith("."):  # relative to the docstring's module: its package, then each package above
        assert context is not None
        pkg = context.split(".")
        for up in range(len(pkg), 0, -1):
            full = ".".join(pkg[:up]) + name
            starts.extend(
                (mods[m], full[len(m) + 1 :].split(".") if len(full) > len(m) else [])
                for m in mods
                if full == m or full.startswith(m + ".")
            )
    else:
        for k in range(len(parts), 0, -1):
            head = ".".join(parts[:k])
            starts.extend((mod, parts[k:]) for full, mod in mods.items() if full == head or full.endswith("." + head))
        starts.extend((vars(mod)[parts[0]], parts[1:]) for mod in mods.values() if parts[0] in vars(mod))
    for obj, rest in starts:
        try:
            for part in rest:
                if part == "":
                    continue
                obj = _attribute(obj, part)
        except AttributeError:
            continue
        return True
    return False


def _is_dpsumm_head(head: str) -> bool:
    """Whether a dotted span names the package's code (its first part a module or a name of the package)."""
    if head == "dpsumm":
        return True
    return any(full.endswith("." + head) for full in modules()) or any(head in vars(m) for m in modules().values())


def unresolved_names(text: str) -> list[str]:
    external = {n for m in EXTERNAL.finditer(text) for n in m.group(1).split()}
    bad = []
    for quoted in dict.fromkeys(SPAN.findall(text)):
        call = CALL.match(quoted)  # a call with its arguments: the callable's name
        span = call.group(1) if call else quoted
        name = span[:-2] if span.endswith("()") else span
        if name in external:
            continue
        if name.endswith(".py") and DOTTED.match(name):  # a file of the package (or of the repository)
            stem = name[: -len(".py")]
            if not list(PACKAGE.rglob(Path(stem.replace(".", "/") + ".py").name)) and not (ROOT / name).is_file():
                bad.append(quoted)
            continue
        if DOTTED.match(span):
            if _is_dpsumm_head(name.split(".")[0]) and not resolve(name):
                bad.append(quoted)
        elif IDENT.match(span) and not MATH.match(name):
            code_like = "_" in name.strip("_") or (name[0].isupper() and any(c.islower() for c in name))
            if code_like and name not in known_names() and name not in _test_function_names():
                bad.append(quoted)
    return bad


@pytest.mark.parametrize("page", EXPLANATION, ids=lambda p: p.name)
def test_every_code_name_an_explanation_page_quotes_resolves(page: Path) -> None:
    bad = unresolved_names(page.read_text(encoding="utf-8"))
    assert not bad, f"{page.name} quotes names the package does not define: {bad}"


def test_the_name_check_can_fail() -> None:
    """Names that no longer exist are found; the text's mathematics, other libraries' names and declared external
    names are not code names of the package."""
    text = (
        '`OwnerParty._sketch`, `parties.cell_counts`, `sketch_calibration("labels", L)`, `dpsumm.strata.row_keys`, '
        "`nosuch.py`; `f(x)`, `count_release_event(epsilon)`, "
        "`OwnerParty.handle`, `cell_rule.CellRule.row_keys`, `D_v`, `np.linalg.norm`, `label_cells`, `key_set`, "
        "`make_tree` <!-- external names: make_tree (the paper's code) -->"
    )
    assert unresolved_names(text) == [
        "OwnerParty._sketch",
        "parties.cell_counts",
        'sketch_calibration("labels", L)',
        "dpsumm.strata.row_keys",
        "nosuch.py",
    ]


@pytest.mark.parametrize("page", [p for p in EXPLANATION if p.name != "index.md"], ids=lambda p: p.name)
def test_every_explanation_page_names_its_modules_and_the_commit_it_was_checked_against(page: Path) -> None:
    found = PINNED.search(page.read_text(encoding="utf-8"))
    assert found, f"{page.name}: no line '*Checked against commit `<hash>`: proves `dpsumm.<module>`, ...*'"
    commit, _, names = found.groups()
    quoted = SPAN.findall(names)
    assert quoted and all(n in modules() for n in quoted), f"{page.name}: not modules of the package: {quoted}"
    shallow = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--is-shallow-repository"], capture_output=True, text=True
    )
    if shallow.returncode == 0 and shallow.stdout.strip() == "false":  # a full clone holds every commit
        known = subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True)
        assert known.returncode == 0, f"{page.name}: commit {commit} is not in the repository's history"


def _docstring_references() -> list[tuple[str, str]]:
    out = []
    for full, mod in modules().items():
        path = Path(getattr(mod, "__file__", "") or "")
        if path.suffix != ".py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node) or ""
                out.extend((full, ref) for ref in ROLE.findall(doc) if ref.startswith(("dpsumm.", ".")))
    return out


def test_every_docstring_cross_reference_resolves() -> None:
    refs = _docstring_references()
    assert len(refs) > 100  # the check is not vacuous
    bad = sorted({f"{module}: {ref}" for module, ref in refs if not resolve(ref.rstrip("."), module)})
    assert not bad, "docstring cross-references that do not resolve:\n" + "\n".join(bad)


#: The pages with a table of every purchase (its first column the purchase's class, as code), and the heading the
#: table stands under.
PURCHASE_TABLES = {"README.md": "## Which purchase", "docs/explanation/purchases.md": "# Purchases"}


def purchase_table(text: str, heading: str) -> list[str]:
    """The class names in the first column of the first table under ``heading`` whose header starts ``| purchase``."""
    lines = text[text.index(heading) :].splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("| purchase"))
    names = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        found = re.match(r"\|\s*`([A-Za-z_]\w*)\(", line)
        assert found, f"a purchase table row that does not start with a purchase: {line[:80]}"
        names.append(found.group(1))
    return names


@pytest.mark.parametrize("page", sorted(PURCHASE_TABLES))
def test_every_purchase_table_lists_exactly_the_registered_purchases(page: str) -> None:
    from dpsumm.methods import PURCHASES

    listed = purchase_table((ROOT / page).read_text(encoding="utf-8"), PURCHASE_TABLES[page])
    assert listed == [cls.__name__ for cls in PURCHASES.values()], f"{page}: the table lists {listed}"


def test_the_purchase_table_check_can_fail() -> None:
    table = "# Purchases\n\n| purchase | x |\n|---|---|\n| `Nominees()` | a |\n| `Winners()` | b |\n\nafter\n"
    assert purchase_table(table, "# Purchases") == ["Nominees", "Winners"]
