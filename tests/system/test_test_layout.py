"""tests/ mirrors python/dpsumm/: every library module has a test module of its own, at the mirrored path.

``dpsumm/a/b.py`` is tested by ``tests/a/test_b.py`` (a private module ``_b.py`` by ``test_b.py``), a package's
``__init__.py`` with code of its own by ``tests/a/test_a.py`` (the top-level package by ``tests/test_dpsumm.py``).
Cross-cutting tests live in ``tests/contract`` (contracts parametrised over every method, purchase, fault or
public name), ``tests/system`` (properties of the whole package: import layers, fork safety, the compiled core's
inputs, this layout) and ``tests/docs`` (the documentation runs and its numbers match their files).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import dpsumm

PACKAGE = Path(dpsumm.__file__).resolve().parent
TESTS = Path(__file__).resolve().parents[1]

#: Library modules without a test module of their own, each with the reason.
EXEMPT = {
    "__main__.py": "`python -m dpsumm` calls dpsumm.cli.main (tests/cli/test_cli.py runs it as a subprocess)",
    "accounting/__init__.py": "re-exports the accounting modules' names (tests/accounting/test_*.py test them there)",
    "experiments/__init__.py": "re-exports the names of experiments.plots, .records and .run; no code of its own",
    "flower/__init__.py": "re-exports the flower modules' names behind the flwr import check; no code of its own",
    "protocols/__init__.py": "a docstring only",
    "protocols/paper/__init__.py": "re-exports the names of protocols.paper.aggregator and .method; no code of its own",
}
#: Test directories of cross-cutting tests, which mirror no library module.
CROSS_CUTTING = {"contract", "system", "docs"}


def mirror(module: Path) -> Path:
    """The test module of a library module (a path relative to the package)."""
    if module.name == "__init__.py":
        if module.parent == Path("."):
            return Path("test_dpsumm.py")
        return module.parent / f"test_{module.parent.name}.py"
    return module.parent / f"test_{module.stem.lstrip('_')}.py"


def library_modules() -> list[Path]:
    return sorted(p.relative_to(PACKAGE) for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_the_mirror_rule_by_hand():
    assert mirror(Path("accounting/ledger.py")) == Path("accounting/test_ledger.py")
    assert mirror(Path("protocols/nominations/by_label.py")) == Path("protocols/nominations/test_by_label.py")
    assert mirror(Path("_validation.py")) == Path("test_validation.py")
    assert mirror(Path("cli/__init__.py")) == Path("cli/test_cli.py")
    assert mirror(Path("__init__.py")) == Path("test_dpsumm.py")


def test_the_package_is_found_and_the_exemptions_exist():
    modules = {str(m) for m in library_modules()}
    assert {"summarize.py", "accounting/ledger.py", "protocols/nominations/by_label.py"} <= modules
    assert set(EXEMPT) <= modules, set(EXEMPT) - modules  # an exemption for a module gone is stale


def test_every_library_module_has_a_test_module():
    missing = [
        f"{m} -> tests/{mirror(m)}"
        for m in library_modules()
        if str(m) not in EXEMPT and not (TESTS / mirror(m)).is_file()
    ]
    assert not missing, "library modules without a test module of their own:\n" + "\n".join(missing)


def test_no_exempt_module_has_grown_a_test_module():
    grown = [m for m in EXEMPT if (TESTS / mirror(Path(m))).is_file()]
    assert not grown, f"exempt but tested (drop the exemption): {grown}"


def test_every_test_module_mirrors_a_library_module_or_is_cross_cutting():
    expected = {mirror(m) for m in library_modules()}
    stray = [
        str(p.relative_to(TESTS))
        for p in TESTS.rglob("test_*.py")
        if p.relative_to(TESTS).parts[0] not in CROSS_CUTTING and p.relative_to(TESTS) not in expected
    ]
    assert not stray, (
        f"test modules that mirror no library module (move them, or into a cross-cutting package): {stray}"
    )


@pytest.mark.parametrize("directory", sorted(CROSS_CUTTING))
def test_the_cross_cutting_directories_hold_tests(directory):
    assert list((TESTS / directory).glob("test_*.py"))


def test_the_slow_marker_is_registered_and_ci_runs_every_test() -> None:
    """`-m "not slow"` skips the tests that spawn processes in the inner loop; the marker is registered (with
    --strict-markers a typo fails), and CI's pytest command selects no marker, so it runs them all."""
    import re

    root = Path(__file__).resolve().parents[2]
    project = (root / "pyproject.toml").read_text()
    assert re.search(r'^markers = \["slow: ', project, re.M) and "--strict-markers" in project
    ci = [line for line in (root / ".ci" / "run").read_text().splitlines() if "-m pytest" in line]
    assert ci and all(" -m " not in line.split("-m pytest", 1)[1] for line in ci)
