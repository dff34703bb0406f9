"""The package's modules form layers: no import cycle, through any import statement (top level, inside a
function, under TYPE_CHECKING), and no module imports one that stands above it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import dpsumm

ROOT = Path(dpsumm.__file__).resolve().parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    """Every module of the package: its Python files and its compiled extension (``_core``)."""
    out = {_module_name(p): p for p in ROOT.rglob("*.py")}
    for ext in (*ROOT.glob("*.so"), *ROOT.glob("*.pyd")):
        out[f"dpsumm.{ext.name.split('.')[0]}"] = ext
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the dpsumm modules its import statements name (a name imported from a package that is one of its
    submodules counts as that submodule)."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        if path.suffix != ".py":
            continue
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                stem = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    sub = f"{stem}.{alias.name}"
                    targets.append(sub if sub in modules else stem)
            for target in targets:
                if target in modules and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle() -> None:
    found = cycles(import_graph())
    assert not found, f"import cycles: {found}"


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_imports_inside_functions() -> None:
    graph = import_graph()
    assert "dpsumm.privacy" in graph["dpsumm.summarize"]
    assert graph["dpsumm.protocols.nominations.cell_purchase"] >= {
        "dpsumm.protocols.nominations.aggregator",
        "dpsumm.protocols.nominations.purchase",
    }


#: Every top-level module of the package by rank: a module may import only modules of a lower or equal rank. The
#: parties stand below the protocols (a party answers any purchase's requests without knowing it), the methods above
#: the protocols they name, the entry points (summarize, the estimator, Flower, the CLI) on top.
LAYERS = {
    "_core": 0,
    "errors": 0,
    "access": 0,
    "_validation": 1,
    "messages": 1,
    "accounting": 2,
    "files": 2,
    "party_tables": 2,
    "sources": 2,
    "hashing": 2,
    "preprocessing": 2,
    "strata": 2,
    "transport": 2,
    "datasets": 3,
    "kernels": 3,
    "privacy": 3,
    "results": 3,
    "dp_erm": 4,
    "h2": 4,
    "metrics": 4,
    "plot": 4,
    "quality": 5,
    "pfds": 4,
    "types": 4,
    "parties": 5,
    "protocols": 6,
    "methods": 7,
    "reference": 7,
    "summarize": 8,
    "estimator": 9,
    "experiments": 9,
    "flower": 10,
    "cli": 11,
    "__main__": 12,
}


def test_every_top_level_module_has_a_rank_and_the_parties_stand_below_the_protocols() -> None:
    root = Path(dpsumm.__file__).resolve().parent
    top = {p.stem for p in root.glob("*.py") if p.stem != "__init__"} | {
        p.name for p in root.iterdir() if p.is_dir() and (p / "__init__.py").is_file()
    }
    top |= {ext.name.split(".")[0] for ext in (*root.glob("*.so"), *root.glob("*.pyd"))}
    assert top == set(LAYERS), f"unranked: {sorted(top - set(LAYERS))}; gone: {sorted(set(LAYERS) - top)}"
    assert LAYERS["messages"] < LAYERS["parties"] < LAYERS["protocols"] < LAYERS["methods"] < LAYERS["summarize"]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level >= 1 and node.module:
            out.add(node.module.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level >= 1:
            out.update(a.name for a in node.names)
    return out


def test_no_module_imports_a_module_that_stands_above_it():
    root = Path(dpsumm.__file__).parent
    for top, rank in LAYERS.items():
        files = list((root / top).rglob("*.py")) if (root / top).is_dir() else [root / f"{top}.py"]
        files = [f for f in files if f.is_file()]  # the compiled core imports nothing of the package
        for f in files:
            for name in _imports(f):
                if name in LAYERS and name != top:
                    assert LAYERS[name] <= rank, f"{f.relative_to(root)} imports {name}, which stands above it"
