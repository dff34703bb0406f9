"""dpsumm.experiments and the `dpsumm experiment` / `dpsumm demo` commands."""

from __future__ import annotations

import dataclasses
import csv
import json

import numpy as np
import pytest

import dpsumm
from dpsumm import datasets, experiments
from dpsumm.cli import main

FIELDS = {"method", "size", "repeat", "mmd2", "mmd_increase_pct", "accuracy", "accessed", "epsilon_owners",
          "epsilon_validation", "seconds"}


def test_run_experiment_records_and_files(tmp_path):
    recs = experiments.run_experiment(lambda r: datasets.digits_label_split(random_state=r), [10, 20], repeats=2,
                                      methods=("uniform", "paper-greedy", "paper"), progress=False)
    assert len(recs) == 2 * 2 * 3
    for r in recs:
        # MMD² recomputed from scratch for the greedy runs: the record is the exact MMD² of its summary.
        assert r.mmd2 > 0 and r.accuracy is not None and 0 <= r.accuracy <= 1
    by = {(r.method, r.size, r.repeat): r for r in recs}
    for (m, size, rep), r in by.items():
        g = by[("paper-greedy", size, rep)].mmd2
        assert r.mmd_increase_pct == pytest.approx(100 * (r.mmd2 - g) / g)
        if m == "uniform":
            assert r.accessed == size and r.epsilon_validation is None
        if m == "paper":
            # Paper schedule with the certified auction (eps_auc = 0, the default): the owners' epsilon is the
            # h2 releases', what the accountant computes from the schedule (0.0246 at p = 10).
            planned = dpsumm.accounting.schedule_ledger(dpsumm.accounting.paper_schedule(size, 5))
            assert r.epsilon_owners == pytest.approx(r.epsilon_owners_h2, rel=1e-9)
            assert r.epsilon_owners_h2 == pytest.approx(planned.epsilon("owners", 1e-4, include_auction=False), rel=1e-9)
            assert 0.02 < r.epsilon_owners_h2 < 0.03
            assert r.epsilon_validation == pytest.approx(0.9986, abs=1e-3)
    paths = experiments.write_results(recs, tmp_path, title="t")
    rows = json.loads(paths["json"].read_text())
    assert len(rows) == 12 and FIELDS <= set(rows[0])
    with paths["csv"].open() as f:
        assert len(list(csv.DictReader(f))) == 12
    for key in ("mmd_plot", "accuracy_plot"):
        assert paths[key].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert experiments.load_results(tmp_path) == recs
    table = experiments.format_table(recs)
    assert "paper-greedy" in table and "±" in table


def test_same_seed_same_records():
    kw = dict(repeats=1, methods=("paper", "paper-greedy"), progress=False, random_state=5)
    a = experiments.run_experiment(lambda r: datasets.digits_label_split(random_state=r), [15], **kw)
    b = experiments.run_experiment(lambda r: datasets.digits_label_split(random_state=r), [15], **kw)
    assert [(r.method, r.mmd2, r.accuracy) for r in a] == [(r.method, r.mmd2, r.accuracy) for r in b]


def test_median_gamma():
    rows = np.array([[0.0], [1.0], [3.0]])  # squared distances 1, 9, 4: median 4
    assert experiments.median_gamma(rows) == pytest.approx(0.25)
    with pytest.raises(dpsumm.InvalidParameterError):
        experiments.median_gamma(np.zeros((3, 2)))


@pytest.mark.parametrize("kw,arg", [(dict(sizes=[]), "sizes"), (dict(methods=("nope",)), "methods"),
                                    (dict(classifier="knn"), "classifier"), (dict(gamma=-1.0), "gamma"),
                                    (dict(repeats=0), "repeats")])
def test_bad_arguments(kw, arg):
    args = dict(sizes=[10], progress=False) | kw
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        experiments.run_experiment(lambda r: datasets.digits_label_split(random_state=r), **args)
    assert e.value.argument == arg


def test_cli_experiment_digits_and_mnist_without_data(tmp_path, capsys):
    assert main(["experiment", "digits", "--sizes", "10", "--repeats", "1", "--methods", "paper-greedy", "uniform",
                 "--out", str(tmp_path), "--no-progress", "--classifier", "svm"]) == 0
    out = capsys.readouterr().out
    assert "uniform" in out and (tmp_path / "results.json").exists()
    assert main(["experiment", "mnist", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--data" in err[0]


def test_cli_experiment_mnist(mnist_dir, tmp_path, capsys):
    code = main(["experiment", "mnist", "--data", str(mnist_dir), "--sizes", "20", "--repeats", "1", "--out",
                 str(tmp_path), "--no-progress"])
    assert code == 0
    rows = json.loads((tmp_path / "results.json").read_text())
    assert {r["method"] for r in rows} == {"nominations", "central-greedy", "uniform"}  # today's methods by default


def test_cli_demo(tmp_path, capsys):
    assert main(["demo", "--sizes", "10", "20", "--repeats", "1", "--out", str(tmp_path), "--json", "--no-progress"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["method"] for r in rows} == {"nominations", "central-greedy", "paper", "uniform"}
    nom = [r for r in rows if r["method"] == "nominations"]
    assert all(r["epsilon_owners"] == 0.0 and r["delta_validation"] == 1e-6 for r in nom)
    assert all(0.9 < r["epsilon_validation"] <= 1.0 for r in nom)
    assert (tmp_path / "mmd_increase.png").exists()


def test_broadcast_error_exact_side_and_noise_free_limit():
    import dataclasses

    s = datasets.digits_label_split(random_state=0)
    sched = dpsumm.accounting.paper_schedule(20, 5, seed_set_size=60)
    rows = experiments.broadcast_error(s, sched, rounds=(1, 20), random_state=0)
    assert [r["round"] for r in rows] == [1, 20]
    # The exact side is the greedy summary's: recompute it from the public pieces.
    g = dpsumm.summarize(s.owners, s.validation, 20, method="paper-greedy", seed_set=s.seed_set, progress=False, random_state=0)
    Hv = g.hasher.transform(s.validation).astype(float)
    Hs = np.vstack([g.hasher.transform(s.seed_set), g.hashes[:19]]).astype(float)
    q = len(Hs)
    v = Hv.mean(0) - q / (q + 1) * Hs.mean(0)
    assert rows[1]["validation_norm"] == pytest.approx(np.linalg.norm(Hv.mean(0)), rel=1e-6)
    assert rows[1]["summary_norm"] == pytest.approx(np.linalg.norm(Hs.mean(0)), rel=1e-6)
    assert rows[1]["v_norm"] == pytest.approx(np.linalg.norm(v), rel=1e-6)
    # With a budget so large that the noise vanishes, the first broadcast points the right way.
    big = dataclasses.replace(sched, epsilon_validation_step=1e3, epsilon_first_epoch_step=1e3,
                              epsilon_epoch_step=(1e3,) * 20)
    first = experiments.broadcast_error(s, big, rounds=(1,), random_state=0)[0]
    assert first["v_cosine"] > 0.8 and first["v_error"] < first["v_norm"]


def test_pfds_method_records_its_own_epsilon():
    recs = experiments.run_experiment(lambda r: datasets.digits_label_split(random_state=r), [30], repeats=1,
                                      methods=("paper-greedy", "pfds"), pfds_epsilon=0.5, progress=False)
    p = next(r for r in recs if r.method == "pfds")
    # PFDS: per-agent pure epsilon; the aggregator reads no raw rows; the consumer releases nothing.
    assert p.epsilon_owners == 0.5 and p.epsilon_owners_h2 == 0.5 and p.epsilon_validation is None
    assert p.accessed == 0 and p.mmd2 > 0 and p.mmd_increase_pct is not None


def test_budget_run_reports_epsilon_at_the_budget_deltas():
    budget = dpsumm.Budget(epsilon=2.0, delta=1e-5, validation_epsilon=1.5, validation_delta=1e-6)
    recs = experiments.run_experiment(lambda r: datasets.digits_label_split(random_state=r), [12], repeats=1,
                                      methods=("paper",), privacy=budget, progress=False)
    (r,) = recs
    assert (r.delta_owners, r.delta_validation) == (1e-5, 1e-6)
    # Calibration spends the budget to within 1% below it (dpsumm.accounting.calibrate).
    assert 0.98 * 2.0 <= r.epsilon_owners <= 2.0 and 0.98 * 1.5 <= r.epsilon_validation <= 1.5


def test_pfds_defaults_to_the_private_runs_owner_epsilon():
    recs = experiments.run_experiment(lambda r: datasets.digits_label_split(random_state=r), [12], repeats=1,
                                      methods=("pfds", "paper-greedy", "paper"), progress=False)
    assert [r.method for r in recs] == ["paper-greedy", "paper", "pfds"]
    assert recs[2].epsilon_owners == recs[1].epsilon_owners_h2
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        experiments.run_experiment(lambda r: datasets.digits_label_split(random_state=r), [12], methods=("pfds",),
                                   progress=False)
    assert e.value.argument == "pfds_epsilon"


def _records(accuracies, sizes=(10, 100), gamma=0.25):
    recs = []
    for size in sizes:
        for rep, acc in enumerate(accuracies):
            for method, eps in (("paper-greedy", None), ("paper", 0.5)):
                recs.append(experiments.Record(
                    method=method, size=size, repeat=rep, mmd2=0.1, mmd_increase_pct=0.0 if eps is None else 50.0,
                    accuracy=acc, accessed=size, epsilon_owners=eps, epsilon_validation=eps and 1.0, seconds=0.1,
                    epsilon_owners_h2=eps, gamma=gamma, delta_owners=eps and 1e-4, delta_validation=eps and 1e-2))
    return recs


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
    nom = [dataclasses.replace(r, method="nominations", epsilon_owners=0.0, epsilon_owners_h2=0.0, delta_owners=1e-6,
                               delta_validation=1e-6) for r in _records([0.9])]
    both = experiments.plot_title(nom + _records([0.9]), "digits", dim=None)
    # each method with the δ_v it ran at, today's method first
    assert both == "digits: nominations ε owners 0, ε_v 1 (δ_v 1e-06); paper ε owners 0.5 (δ 0.0001), ε_v 1 (δ_v 0.01), γ 0.25"
    nonprivate = [r for r in _records([0.9]) if r.method == "paper-greedy"]
    assert experiments.plot_title(nonprivate, "mnist", dim=500) == "mnist: non-private, γ 0.25, d 500"


def test_cli_demo_text_output_dir_and_rows(tmp_path, monkeypatch, capsys):
    """The demo writes outside the working tree by default (the cache directory, printed), lists today's method
    first, says what each row is and that it is seeded by default; `paper`, not the old name `private`."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--sizes", "10", "--repeats", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "cache" / "dpsumm" / "demo" / "results.json").exists()
    assert not (tmp_path / "dpsumm-demo").exists()
    assert str(tmp_path / "cache" / "dpsumm" / "demo") in out
    table = out[out.index("size "):out.index("rows:")]
    methods = [line.split()[1] for line in table.splitlines()[2:] if line.strip()]
    assert methods[0] == "nominations" and "MMD² vs central greedy (%)" in table
    assert "seeded, by default (--random-state 0)" in out and "private," not in out
    assert "  uniform: NOT private baseline" in out


def test_comparison_column_names_its_baseline():
    recs = _records([0.9])  # paper and paper-greedy: the reference is the paper's greedy
    assert "MMD² vs paper greedy (%)" in experiments.format_table(recs)
