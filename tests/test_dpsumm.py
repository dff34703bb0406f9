"""dpsumm (the package): the public surface is what a user calls (at most 31 names, each importable: 30, and the
default purchase ByDirection since issue 52), the submodules resolve lazily, and the names that moved to submodules
say where they live now."""

from __future__ import annotations

import importlib
import types
import warnings

import pytest

import dpsumm


def test_the_public_surface_is_small_and_every_name_exists():
    assert len(dpsumm.__all__) <= 31 and len(set(dpsumm.__all__)) == len(dpsumm.__all__)
    for name in dpsumm.__all__:
        assert getattr(dpsumm, name) is not None, name
    assert {
        "summarize",
        "Summarizer",
        "Owner",
        "SummaryResult",
        "Budget",
        "Nominations",
        "ByDirection",
        "ByLabel",
        "RFFHasher",
        "DpsummError",
        "InvalidParameterError",
    } <= set(dpsumm.__all__)
    assert isinstance(dpsumm.__version__, str) and dpsumm.__version__.count(".") == 2


def test_the_version_is_declared_once_and_the_changelog_starts_with_it():
    """pyproject.toml's version is the package's, and docs/changelog.md's newest section is that version's."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    project = re.search(r'^version = "([^"]+)"', (root / "pyproject.toml").read_text(), re.M)
    assert project is not None and project.group(1) == dpsumm.__version__
    first = re.search(r"^## (\S+)", (root / "docs" / "changelog.md").read_text(), re.M)
    assert first is not None and first.group(1) == dpsumm.__version__


@pytest.mark.parametrize("name", dpsumm._SUBMODULES)
def test_a_submodule_resolves_without_a_warning(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mod = getattr(dpsumm, name)
    assert isinstance(mod, types.ModuleType) and mod.__name__ == f"dpsumm.{name}"


@pytest.mark.parametrize("name", sorted(dpsumm._REMOVED))
def test_a_removed_name_says_where_it_lives_now(name):
    where = dpsumm._REMOVED[name]
    assert name not in dpsumm.__all__
    with pytest.raises(AttributeError, match=rf"no attribute '{name}': it moved to {where}\.{name}"):
        getattr(dpsumm, name)
    assert hasattr(importlib.import_module(where), name)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        dpsumm.no_such_name  # noqa: B018
    assert not hasattr(dpsumm, "also_missing")
