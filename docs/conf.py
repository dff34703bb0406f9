"""Sphinx configuration of dpsumm's documentation site.

Build: ``python -m sphinx -W --keep-going -b html docs docs/_build/html`` (``pip install ".[docs]"``). Pages are
MyST markdown; the API reference is autosummary over ``dpsumm.__all__`` (docs/api.md,
docs/_templates/autosummary/package.rst), so it follows the public names when they change.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import dpsumm  # noqa: E402  (the installed package, or the tree on PYTHONPATH)

project = "dpsumm"
author = "the dpsumm authors"
copyright = "the dpsumm authors"
release = version = dpsumm.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
# docs/experiments holds results files: each experiment's table.md is included by docs/results/experiments.md and the
# test beds' per-run reports are downloads; only the experiments' README notes are pages of their own.
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "experiments/testbeds", "experiments/*/table.md"]
templates_path = ["_templates"]

# MyST: heading anchors for the pages' [text](page.md#heading) links; $...$ maths.
myst_enable_extensions = ["dollarmath", "deflist"]
myst_heading_anchors = 4

# The API reference: one page per public name of dpsumm.__all__ (autosummary reads __all__).
autosummary_generate = True
autosummary_ignore_module_all = False
autosummary_imported_members = True
autodoc_default_options = {"members": True, "inherited-members": False, "show-inheritance": True}
autodoc_typehints = "none"  # the numpy docstrings give the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

# Docstrings write set sizes as |D_v| (a reST substitution reference): shown as written.
rst_epilog = "\n".join(f".. |{name}| replace:: \\|{name}\\|" for name in ("D_v", "D_s", "D_init", "S", "z"))

html_theme = "pydata_sphinx_theme"
html_title = "dpsumm"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": []}


def _summary_keeping_literals(extract):  # type: ignore[no-untyped-def]
    """autosummary's one-line summary, never cut inside an inline literal (``h . v`` has a ". " in it)."""

    def summary(doc, document):  # type: ignore[no-untyped-def]
        text = extract(doc, document)
        if text.count("``") % 2 == 0:
            return text
        first = []
        for line in doc:
            if not line.strip():
                if first:
                    break
                continue
            first.append(line.strip())
        return " ".join(first)

    return summary


import sphinx.ext.autosummary as _autosummary  # noqa: E402

_autosummary.extract_summary = _summary_keeping_literals(_autosummary.extract_summary)


def _check_every_public_name_has_a_page(app, exception):  # type: ignore[no-untyped-def]
    """The API reference documents every name of ``dpsumm.__all__``: a name without its page is a warning (-W: an error)."""
    if exception is not None:
        return
    generated = HERE / "generated"
    missing = [name for name in dpsumm.__all__ if not (generated / f"dpsumm.{name}.rst").is_file()]
    if missing:
        from sphinx.util import logging

        logging.getLogger(__name__).warning("the API reference has no page for dpsumm.%s", ", dpsumm.".join(missing))


def setup(app):  # type: ignore[no-untyped-def]
    app.connect("build-finished", _check_every_public_name_has_a_page)
