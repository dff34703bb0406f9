"""dpsumm.experiments.run: run_experiment's records and files, reproducibility at a seed, median gamma, PFDS
rows, budget runs, the broadcast error, and bad arguments refused before any run.
"""

from __future__ import annotations

import csv
import json
import warnings

import numpy as np
import pytest

import dpsumm
from dpsumm import datasets, experiments
from refusal import HUGE, refused

SMALL = datasets.covariate_shift(2, 40, 3, 1.0, 20, 20, 10, random_state=0)


EXP = dict(repeats=1, methods=("uniform",), dim=16, classifier="svm", progress=False)


@pytest.mark.parametrize(
    "change,argument",
    [
        (dict(split=None), "split"),
        (dict(split=lambda r: 5), "split"),
        (dict(sizes=5), "sizes"),
        (dict(sizes=["3"]), "sizes"),
        (dict(sizes=[3.7]), "sizes"),  # int(3.7) = 3 silently
        (dict(sizes=[True]), "sizes"),
        (dict(sizes=[1000]), "sizes"),  # more than the owners' rows: refused before any run
        (dict(repeats=2**70), "repeats"),  # ran "forever"
        (dict(repeats=None), "repeats"),
        (dict(repeats=2.5), "repeats"),
        (dict(random_state=None), "random_state"),
        (dict(random_state="x"), "random_state"),
        (dict(gamma=HUGE), "gamma"),
        (dict(variant=float("nan")), "variant"),
        (dict(progress="no"), "progress"),
        (dict(methods=5), "methods"),
        (dict(methods=np.array(["uniform"])), "methods"),  # numpy's ambiguous truth value before
    ],
)
def test_run_experiment_refuses_before_any_run(change, argument, no_messages):
    refused(lambda: experiments.run_experiment(**{"split": lambda r: SMALL, "sizes": [3], **EXP, **change}), argument)


FIELDS = {
    "method",
    "size",
    "repeat",
    "mmd2",
    "mmd_increase_pct",
    "accuracy",
    "accessed",
    "epsilon_owners",
    "epsilon_validation",
    "seconds",
}


def test_run_experiment_records_and_files(tmp_path):
    recs = experiments.run_experiment(
        lambda r: datasets.digits_label_split(random_state=r),
        [10, 20],
        repeats=2,
        methods=("uniform", "paper-greedy", "paper"),
        progress=False,
    )
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
            assert r.epsilon_owners_h2 == pytest.approx(
                planned.epsilon("owners", 1e-4, include_auction=False), rel=1e-9
            )
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
    """Same seed, same records; and the runs being compared raise no fit warning (the paper's protocol is no closer to
    D_v than random rows of it here, which the experiment's own MMD² column shows)."""
    kw = dict(repeats=1, methods=("paper", "paper-greedy"), progress=False, random_state=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpsumm.metrics.SummaryFitWarning)
        a = experiments.run_experiment(lambda r: datasets.digits_label_split(random_state=r), [15], **kw)
    split = datasets.digits_label_split(random_state=0)
    alone = dpsumm.summarize(
        [dpsumm.Owner(X) for X in split.owners], split.validation, 15, "paper", random_state=5, progress=False
    )
    assert alone.extra["validation_fit"] >= 1.0  # so the filter above is what kept the experiment quiet
    b = experiments.run_experiment(lambda r: datasets.digits_label_split(random_state=r), [15], **kw)
    assert [(r.method, r.mmd2, r.accuracy) for r in a] == [(r.method, r.mmd2, r.accuracy) for r in b]


def test_median_gamma():
    rows = np.array([[0.0], [1.0], [3.0]])  # squared distances 1, 9, 4: median 4
    assert experiments.median_gamma(rows) == pytest.approx(0.25)
    with pytest.raises(dpsumm.InvalidParameterError):
        experiments.median_gamma(np.zeros((3, 2)))


@pytest.mark.parametrize(
    "kw,arg",
    [
        (dict(sizes=[]), "sizes"),
        (dict(methods=("nope",)), "methods"),
        (dict(classifier="knn"), "classifier"),
        (dict(gamma=-1.0), "gamma"),
        (dict(repeats=0), "repeats"),
    ],
)
def test_bad_arguments(kw, arg):
    args = dict(sizes=[10], progress=False) | kw
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        experiments.run_experiment(lambda r: datasets.digits_label_split(random_state=r), **args)
    assert e.value.argument == arg


def test_broadcast_error_exact_side_and_noise_free_limit():
    import dataclasses

    s = datasets.digits_label_split(random_state=0)
    sched = dpsumm.accounting.paper_schedule(20, 5, seed_set_size=60)
    rows = experiments.broadcast_error(s, sched, rounds=(1, 20), random_state=0)
    assert [r["round"] for r in rows] == [1, 20]
    # The exact side is the greedy summary's: recompute it from the public pieces.
    g = dpsumm.summarize(
        s.owners,
        s.validation,
        20,
        method="paper-greedy",
        seed_set=s.seed_set,
        gamma=0.1,  # broadcast_error's default width
        progress=False,
        random_state=0,
    )
    Hv = g.hasher.transform(s.validation).astype(float)
    Hs = np.vstack([g.hasher.transform(s.seed_set), g.hashes[:19]]).astype(float)
    q = len(Hs)
    v = Hv.mean(0) - q / (q + 1) * Hs.mean(0)
    assert rows[1]["validation_norm"] == pytest.approx(np.linalg.norm(Hv.mean(0)), rel=1e-6)
    assert rows[1]["summary_norm"] == pytest.approx(np.linalg.norm(Hs.mean(0)), rel=1e-6)
    assert rows[1]["v_norm"] == pytest.approx(np.linalg.norm(v), rel=1e-6)
    # With a budget so large that the noise vanishes, the first broadcast points the right way.
    big = dataclasses.replace(
        sched, epsilon_validation_step=1e3, epsilon_first_epoch_step=1e3, epsilon_epoch_step=(1e3,) * 20
    )
    first = experiments.broadcast_error(s, big, rounds=(1,), random_state=0)[0]
    assert first["v_cosine"] > 0.8 and first["v_error"] < first["v_norm"]


def test_pfds_method_records_its_own_epsilon():
    recs = experiments.run_experiment(
        lambda r: datasets.digits_label_split(random_state=r),
        [30],
        repeats=1,
        methods=("paper-greedy", "pfds"),
        pfds_epsilon=0.5,
        progress=False,
    )
    p = next(r for r in recs if r.method == "pfds")
    # PFDS: per-agent pure epsilon; the aggregator reads no raw rows; the consumer releases nothing.
    assert p.epsilon_owners == 0.5 and p.epsilon_owners_h2 == 0.5 and p.epsilon_validation is None
    assert p.accessed == 0 and p.mmd2 > 0 and p.mmd_increase_pct is not None


def test_budget_run_reports_epsilon_at_the_budget_deltas():
    budget = dpsumm.Budget(epsilon=2.0, delta=1e-5, validation_epsilon=1.5, validation_delta=1e-6)
    recs = experiments.run_experiment(
        lambda r: datasets.digits_label_split(random_state=r),
        [12],
        repeats=1,
        methods=("paper",),
        privacy=budget,
        progress=False,
    )
    (r,) = recs
    assert (r.delta_owners, r.delta_validation) == (1e-5, 1e-6)
    # Calibration spends the budget to within 1% below it (dpsumm.accounting.calibrate).
    assert 0.98 * 2.0 <= r.epsilon_owners <= 2.0 and 0.98 * 1.5 <= r.epsilon_validation <= 1.5


def test_pfds_defaults_to_the_private_runs_owner_epsilon():
    recs = experiments.run_experiment(
        lambda r: datasets.digits_label_split(random_state=r),
        [12],
        repeats=1,
        methods=("pfds", "paper-greedy", "paper"),
        progress=False,
    )
    assert [r.method for r in recs] == ["paper-greedy", "paper", "pfds"]
    assert recs[2].epsilon_owners == recs[1].epsilon_owners_h2
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        experiments.run_experiment(
            lambda r: datasets.digits_label_split(random_state=r), [12], methods=("pfds",), progress=False
        )
    assert e.value.argument == "pfds_epsilon"
