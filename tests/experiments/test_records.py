"""dpsumm.experiments.records: a results file round-trips, the comparison column names its baseline, and the
results helpers name the bad argument.
"""

from __future__ import annotations

import json

import pytest

from dpsumm import accounting as acc
from dpsumm import datasets, experiments
from experiment_records import _records
from refusal import HUGE, refused

SMALL = datasets.covariate_shift(2, 40, 3, 1.0, 20, 20, 10, random_state=0)


@pytest.fixture(scope="module")
def records():
    return experiments.run_experiment(
        lambda r: SMALL, [3], repeats=1, methods=("uniform", "central-greedy"), dim=16, classifier="svm", progress=False
    )


def test_experiment_helpers_name_the_bad_argument(records, tmp_path):
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "wrong.json").write_text('{"records": 1}')
    for call, argument in (
        (lambda: experiments.write_results("x", tmp_path), "records"),
        (lambda: experiments.write_results([5], tmp_path), "records"),
        (lambda: experiments.write_results(records, None), "out"),
        (lambda: experiments.write_results(records, tmp_path / "bad.json"), "out"),  # FileExistsError before
        (lambda: experiments.write_results(records, tmp_path, plots="no"), "plots"),
        (lambda: experiments.format_table(None), "records"),
        (lambda: experiments.format_table(records, markdown="no"), "markdown"),
        (lambda: experiments.load_results(None), "path"),
        (lambda: experiments.load_results(tmp_path / "bad.json"), "path"),
        (lambda: experiments.load_results(tmp_path / "wrong.json"), "path"),
        (lambda: experiments.plot_title(records, None), "title"),
        (lambda: experiments.plot_title(records, dim=-1), "dim"),
        (lambda: experiments.plot_records(records, "bogus", "y", "t"), "field"),
        (lambda: experiments.plot_records(records, "mmd2", "y", "t", skip="uniform"), "skip"),
        (lambda: experiments.broadcast_error(None, acc.paper_schedule(3, 2, 16)), "split"),
        (lambda: experiments.broadcast_error(SMALL, acc.paper_schedule(3, 2, 16), rounds="ab"), "rounds"),
        (lambda: experiments.broadcast_error(SMALL, acc.paper_schedule(3, 2, 16), rounds=(1.5,)), "rounds"),
        (lambda: experiments.broadcast_error(SMALL, acc.paper_schedule(3, 2, 16), gamma=HUGE), "gamma"),
    ):
        refused(call, argument)
    assert "uniform" in experiments.format_table(tuple(records))
    assert experiments.format_table([]).startswith("size")  # was TypeError (max of an int)


def test_a_results_file_round_trips(records, tmp_path):
    paths = experiments.write_results(records, tmp_path, plots=False)
    assert json.loads(paths["json"].read_text()) and experiments.load_results(tmp_path) == records


def test_comparison_column_names_its_baseline():
    recs = _records([0.9])  # paper and paper-greedy: the reference is the paper's greedy
    assert "MMD² (D_v) vs paper greedy (%)" in experiments.format_table(recs)
