"""dpsumm.experiments.plots: figures that leave the backend alone and titles that name dataset, epsilon, gamma
and d.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from dpsumm import experiments
from experiment_records import _records


def test_plots_are_figures_that_leave_the_backend_alone(tmp_path):
    import matplotlib
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    backend, figures = matplotlib.get_backend(), plt.get_fignums()
    recs = _records([0.99, 0.5, 1.0])  # mean 0.83, std 0.28: mean + std > 1
    fig = experiments.plot_records(recs, "accuracy", "test accuracy", "digits: ε owners 0.5")
    assert isinstance(fig, Figure)
    assert matplotlib.get_backend() == backend and plt.get_fignums() == figures  # no pyplot state, no switch
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and [t.get_text() for t in ax.get_xticklabels(minor=True)] == []
    assert ax.get_ylim() == (0.0, 1.0)
    for line in ax.lines:  # error-bar caps stay within [0, 1]
        y = np.asarray(line.get_ydata(), dtype=float)
        assert y.min() >= 0.0 and y.max() <= 1.0
    assert "std over 3 repeats" in ax.get_ylabel()
    experiments.write_results(recs, tmp_path, title="digits label split", dim=140)
    assert matplotlib.get_backend() == backend


def test_plot_title_names_dataset_epsilon_gamma_and_d():
    title = experiments.plot_title(_records([0.9, 0.8]), "digits label split", dim=140)
    assert title == "digits label split: paper ε owners 0.5 (δ 0.0001), ε_v 1 (δ_v 0.01), γ 0.25, d 140"
    nom = [
        dataclasses.replace(
            r, method="nominations", epsilon_owners=0.0, epsilon_owners_h2=0.0, delta_owners=1e-6, delta_validation=1e-6
        )
        for r in _records([0.9])
    ]
    both = experiments.plot_title(nom + _records([0.9]), "digits", dim=None)
    # each method with the δ_v it ran at, today's method first
    assert (
        both
        == "digits: nominations ε owners 0, ε_v 1 (δ_v 1e-06); paper ε owners 0.5 (δ 0.0001), ε_v 1 (δ_v 0.01), γ 0.25"
    )
    nonprivate = [r for r in _records([0.9]) if r.method == "paper-greedy"]
    assert experiments.plot_title(nonprivate, "mnist", dim=500) == "mnist: non-private, γ 0.25, d 500"


def test_every_experiment_method_has_its_own_colour():
    from dpsumm.experiments.plots import _COLOURS

    assert set(_COLOURS) == set(experiments.EXPERIMENT_METHODS)
    assert len(set(_COLOURS.values())) == len(_COLOURS)
