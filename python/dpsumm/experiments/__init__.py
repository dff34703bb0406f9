"""The paper's experiments (Figure 2, Appendix G): summaries of growing size, compared by MMD² and accuracy.

:func:`run_experiment` runs every method at every size for several repeats of a label split and returns
one :class:`Record` per run; :func:`write_results` writes ``results.json``, ``results.csv`` and the two
plots of Figure 2 (MMD² increase over greedy against size; accuracy against size; error bars over
repeats); :func:`format_table` prints means and standard deviations.

Repeat ``r`` draws a fresh split (``split(r)``) and runs every method on it with the protocol seeded by
``random_state + r``: seeded runs are reproducible and NOT private (they are experiments).
``mmd_increase_pct`` compares each run with the greedy run of the same size and repeat.
"""

from __future__ import annotations

from ..preprocessing import median_gamma
from .plots import plot_parsimony, plot_records, plot_sweep, plot_title, write_results
from .records import EXPERIMENT_METHODS, Record, format_table, load_results, relative_to_baseline
from .run import broadcast_error, run_experiment

__all__ = [
    "EXPERIMENT_METHODS",
    "Record",
    "run_experiment",
    "write_results",
    "format_table",
    "median_gamma",
    "broadcast_error",
    "load_results",
    "plot_records",
    "plot_title",
    "plot_parsimony",
    "plot_sweep",
    "relative_to_baseline",
]
