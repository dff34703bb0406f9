"""Issue 14 (library side): gamma='median', the degenerate-kernel warning, scaling with public ranges,
budget-path refusals, logging, reprs, persistence, the scikit-learn contract of RFFHasher, Summarizer."""

from __future__ import annotations

import logging
import pickle
import warnings

import numpy as np
import pytest

import dpsumm
from dpsumm.preprocessing import DEGENERATE_HIGH, DEGENERATE_LOW, kernel_scale


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    owners = [dpsumm.Owner(rng.uniform(size=(30, 4)), labels=np.full(30, k), name=f"o{k}") for k in range(3)]
    validation = rng.uniform(size=(25, 4))
    seed_set = rng.uniform(size=(12, 4))
    return owners, validation, seed_set


def _budget():
    return dpsumm.Budget(epsilon=4.0, delta=1e-4, validation_epsilon=4.0, validation_delta=1e-2)


# ------------------------------------------------------------------ gamma="median" and the kernel check


def test_median_gamma_hand_computed():
    # pairwise squared distances of (0,0), (1,0), (0,2): 1, 4, 5 -> median 4 -> gamma 0.25
    assert dpsumm.median_gamma(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0]])) == pytest.approx(0.25)


def test_summarize_gamma_median_uses_the_seed_set_only(data):
    owners, validation, seed_set = data
    res = dpsumm.summarize(owners, validation, 6, method=dpsumm.PaperGreedy(dim=32), seed_set=seed_set, gamma='median', random_state=0, progress=False)
    assert res.hasher.gamma == pytest.approx(dpsumm.median_gamma(seed_set))
    # a different validation set (private) does not change gamma: only the public seed set does
    res2 = dpsumm.summarize(owners, validation[:10] * 0.5, 6, method=dpsumm.PaperGreedy(dim=32), seed_set=seed_set, gamma='median', random_state=0, progress=False)
    assert res2.hasher.gamma == res.hasher.gamma


def test_gamma_median_needs_two_seed_rows(data):
    owners, validation, _ = data
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.summarize(owners, validation, 4, method="paper-greedy", seed_set=np.zeros((1, 4)), gamma="median",
                         progress=False, random_state=0)
    assert e.value.argument == "gamma"


@pytest.mark.parametrize("gamma", ["mean", -1.0, 0.0, float("nan"), True])
def test_bad_gamma_is_refused(data, gamma):
    owners, validation, _ = data
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.summarize(owners, validation, 4, method="paper-greedy", gamma=gamma, progress=False, random_state=0)
    assert e.value.argument == "gamma"


def test_degenerate_kernel_warns_and_logs_on_raw_digits(caplog):
    """Raw 0-16 digits pixels at gamma=0.1 (the issue's failure): warned; scaled to [0, 1]: silent."""
    split = dpsumm.datasets.digits_label_split(random_state=0)
    raw = [o * 16.0 for o in split.owners]  # the split is scaled to [0, 1]; undo it
    with caplog.at_level(logging.WARNING, logger="dpsumm"), pytest.warns(dpsumm.preprocessing.DegenerateKernelWarning,
                                                                         match="degenerate"):
        dpsumm.summarize(raw, split.validation * 16.0, 10, method=dpsumm.PaperGreedy(dim=32), seed_set=split.seed_set * 16.0, gamma=0.1, random_state=0, progress=False)
    assert any("degenerate" in r.getMessage() for r in caplog.records)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpsumm.preprocessing.DegenerateKernelWarning)
        dpsumm.summarize(split.owners, split.validation, 10, method=dpsumm.PaperGreedy(dim=32), seed_set=split.seed_set, gamma=0.1, random_state=0, progress=False)


def test_kernel_scale_thresholds_bracket_the_measurements():
    """The thresholds separate raw and scaled digits at the paper's gamma=0.1 (docs/usability.md)."""
    X = dpsumm.datasets.digits()[0]  # scaled to [0, 1]
    scaled, raw = kernel_scale(X, 0.1), kernel_scale(X * 16.0, 0.1)
    assert DEGENERATE_LOW <= scaled <= DEGENERATE_HIGH < raw
    assert raw == pytest.approx(256 * scaled)
    assert kernel_scale(X, dpsumm.median_gamma(X)) == pytest.approx(1.0)


def test_the_kernel_check_is_the_scale_of_an_evenly_spaced_subsample_within_a_few_percent_of_every_row():
    """check_kernel's median is over 256 evenly spaced rows (exactly), and on digits (1,797 rows) that is within 5 %
    of the median over the heuristic's 1,000 rows: far inside the warning's range of a factor of 5,000."""
    from dpsumm.preprocessing import check_kernel

    X = dpsumm.datasets.digits()[0]
    sub = X[np.linspace(0, len(X) - 1, 256).astype(np.int64)]
    assert check_kernel(X, 0.1) == kernel_scale(sub, 0.1)
    assert check_kernel(X[:200], 0.1) == kernel_scale(X[:200], 0.1)  # 256 rows or fewer: every row
    assert check_kernel(X, 0.1) == pytest.approx(kernel_scale(X, 0.1), rel=0.05)


def test_scale_to_unit():
    X = np.array([[0.0, 10.0], [8.0, 20.0], [16.0, 40.0]])
    out = dpsumm.scale_to_unit(X, [0, 10], [16, 30])
    np.testing.assert_allclose(out, [[0, 0], [0.5, 0.5], [1.0, 1.0]])  # 40 is outside [10, 30]: clipped
    np.testing.assert_allclose(dpsumm.scale_to_unit(X, 0, 40, clip=False)[:, 1], [0.25, 0.5, 1.0])
    with pytest.raises(dpsumm.InvalidParameterError):
        dpsumm.scale_to_unit(X, 5, 5)
    with pytest.raises(dpsumm.InvalidParameterError):
        dpsumm.scale_to_unit(X, [0, 1, 2], 16)


# ------------------------------------------------------------------ budget-path refusals


@pytest.mark.parametrize("method", ["paper-greedy", "central-greedy", "exact-greedy", "uniform"])
def test_non_private_method_with_privacy_is_refused_before_any_work(data, method, monkeypatch):
    owners, validation, _ = data

    def no_calibration(*a, **k):
        raise AssertionError("calibration ran before the refusal")

    monkeypatch.setattr(dpsumm.accounting, "calibrate", no_calibration)
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.summarize(owners, validation, 4, method=method, privacy=_budget(), progress=False)
    assert e.value.argument == "privacy" and "not private" in str(e.value)


def test_schedule_with_privacy_is_refused(data, monkeypatch):
    owners, validation, _ = data
    monkeypatch.setattr(dpsumm.accounting, "calibrate", lambda *a, **k: pytest.fail("calibrated"))
    sched = dpsumm.accounting.paper_schedule(4, 3, 140)
    for schedule in (sched,):  # schedule="paper" is the default: with a budget, the run calibrates instead
        with pytest.raises(dpsumm.InvalidParameterError) as e:
            dpsumm.summarize(owners, validation, 4, method=dpsumm.PaperProtocol(schedule=schedule), privacy=_budget(), progress=False)
        assert e.value.argument == "schedule"


# ------------------------------------------------------------------ logging, reprs


def test_run_decisions_are_logged(data, caplog):
    owners, validation, seed_set = data
    with caplog.at_level(logging.INFO, logger="dpsumm"):
        dpsumm.summarize(owners, validation, 4, method=dpsumm.PaperProtocol(dim=16), seed_set=seed_set, gamma='median', privacy=_budget(), random_state=0, progress=False)
    text = "\n".join(r.getMessage() for r in caplog.records if r.name == "dpsumm")
    assert "calibrated the schedule" in text and "gamma='median'" in text and "seeded: NOT private" in text


def test_reprs_are_short_and_say_the_privacy_status(data):
    owners, validation, seed_set = data
    big = dpsumm.Owner(np.zeros((5000, 50)), labels=np.zeros(5000), name="big")
    assert repr(big) == "Owner(name='big', rows=5000x50, labelled)"
    greedy = dpsumm.summarize(owners, validation, 5, method=dpsumm.PaperGreedy(dim=16), seed_set=seed_set, random_state=0, progress=False)
    assert "not private" in repr(greedy) and len(repr(greedy)) < 200
    seeded = dpsumm.summarize(owners, validation, 5, method=dpsumm.PaperProtocol(dim=16), seed_set=seed_set, random_state=0, progress=False)
    assert "seeded: NOT private" in repr(seeded) and "[" not in repr(seeded)
    entropy = dpsumm.summarize(owners, validation, 5, method=dpsumm.PaperProtocol(dim=16), seed_set=seed_set, progress=False)
    assert not entropy.seeded
    # the paper's protocol asks every owner every round by default (eps_auc = 0): certified
    assert entropy.privacy_status() == "private, certified"
    auction = dpsumm.summarize(owners, validation, 5, method=dpsumm.PaperProtocol(dim=16, epsilon_auction=0.01), seed_set=seed_set, progress=False)
    # the paper's randomized auction (eps_auc > 0) only on an explicit argument: uncertified
    assert auction.privacy_status() == "private, NOT certified"
    certified = dpsumm.summarize(owners, validation, 5, method=dpsumm.PaperProtocol(dim=16, schedule=dpsumm.accounting.paper_schedule(5, 3, 16, epsilon_auction=0.0)), seed_set=seed_set, progress=False)
    assert repr(certified).endswith("private, certified)")


# ------------------------------------------------------------------ persistence


def _same_result(a, b):
    np.testing.assert_array_equal(a.points, b.points)
    np.testing.assert_array_equal(a.hashes, b.hashes)
    np.testing.assert_array_equal(a.owner, b.owner)
    np.testing.assert_array_equal(a.labels, b.labels)
    assert a.owner_names == b.owner_names and a.accessed == b.accessed and a.seeded == b.seeded
    np.testing.assert_array_equal(a.hasher.transform(a.points), b.hasher.transform(b.points))
    if a.privacy is not None:
        assert b.privacy.table(1e-4, 1e-2) == a.privacy.table(1e-4, 1e-2)


def test_summary_result_pickles_and_joblib_dumps(data, tmp_path):
    import joblib

    owners, validation, seed_set = data
    res = dpsumm.summarize(owners, validation, 5, method=dpsumm.PaperProtocol(dim=16), seed_set=seed_set, random_state=3, progress=False)
    _same_result(res, pickle.loads(pickle.dumps(res)))
    joblib.dump(res, tmp_path / "r.joblib")
    _same_result(res, joblib.load(tmp_path / "r.joblib"))


def test_rff_hasher_pickles_and_joblib_dumps(tmp_path):
    import joblib

    X = np.random.default_rng(1).normal(size=(7, 5))
    for h in (dpsumm.RFFHasher(5, dim=12, gamma=0.3, seed="s"), dpsumm.RFFHasher(dim=12, seed=4).fit(X)):
        want = h.transform(X)
        np.testing.assert_array_equal(pickle.loads(pickle.dumps(h)).transform(X), want)
        joblib.dump(h, tmp_path / "h.joblib")
        loaded = joblib.load(tmp_path / "h.joblib")
        np.testing.assert_array_equal(loaded.transform(X), want)
        np.testing.assert_array_equal(loaded.omega_, h.omega_)


# ------------------------------------------------------------------ RFFHasher: scikit-learn's estimator contract


def test_rff_hasher_params_clone_and_n_features_in():
    from sklearn.base import clone

    h = dpsumm.RFFHasher(dim=8, gamma=0.5, seed="x")
    assert h.get_params() == {"n_features": None, "dim": 8, "gamma": 0.5, "seed": "x", "threads": None}
    assert not hasattr(h, "n_features_in_")
    with pytest.raises(dpsumm.NotFittedError):
        h.transform(np.zeros((2, 3)))
    X = np.random.default_rng(0).normal(size=(6, 3))
    h.fit(X)
    assert h.n_features_in_ == 3
    c = clone(h)
    assert c.get_params() == h.get_params() and not hasattr(c, "n_features_in_")
    np.testing.assert_array_equal(c.fit(X).transform(X), h.transform(X))
    h.set_params(gamma=2.0)
    np.testing.assert_array_equal(h.transform(X), dpsumm.RFFHasher(3, dim=8, gamma=2.0, seed="x").transform(X))
    with pytest.raises(dpsumm.InvalidParameterError):
        h.set_params(dim=0)
    assert h.dim == 8  # a refused set_params changes nothing
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        h.set_params(bogus=1)
    assert e.value.argument == "bogus"
    with pytest.raises(dpsumm.InvalidParameterError, match="expecting 3 features"):
        h.transform(np.zeros((2, 4)))
    with pytest.raises(dpsumm.InvalidParameterError):
        dpsumm.RFFHasher(3).fit(np.zeros((2, 4)))


def test_rff_hasher_in_pipeline_and_cross_val_score():
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_score
    from sklearn.pipeline import make_pipeline

    X, y = dpsumm.datasets.digits()
    X, y = X[:400], y[:400]
    pipe = make_pipeline(dpsumm.RFFHasher(dim=300, gamma=0.05, seed=0), LogisticRegression(max_iter=500))
    scores = cross_val_score(pipe, X, y, cv=3)
    # ten classes: chance is about 0.1; an RBF feature map plus a linear model does far better
    assert scores.shape == (3,) and scores.min() > 0.6


@pytest.mark.filterwarnings("ignore:Estimator RFFHasher does not inherit")
@pytest.mark.filterwarnings("ignore:.*It is recommended to delay parameter validation")
def test_rff_hasher_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    results = check_estimator(dpsumm.RFFHasher(dim=8), on_fail=None, expected_failed_checks={
        # dpsumm validates parameters when they are set, so that errors come first (house rule)
        "check_do_not_raise_errors_in_init_or_set_params": "parameters are validated in __init__/set_params",
        # an object array holding a dict raises InvalidParameterError (a ValueError), not TypeError
        "check_dtype_object": "non-numbers raise dpsumm.InvalidParameterError",
    })
    failed = [r["check_name"] for r in results if r["status"] == "failed"]
    assert failed == [] and len(results) > 40


# ------------------------------------------------------------------ Summarizer


def test_summarizer_equals_summarize(data):
    from sklearn.base import clone

    owners, validation, seed_set = data
    s = dpsumm.Summarizer(6, method=dpsumm.PaperGreedy(dim=16), seed_set=seed_set, random_state=2)
    assert "method=PaperGreedy(dim=16)" in repr(s) and "array" not in repr(s)
    with pytest.raises(dpsumm.NotFittedError):
        s.transform(validation)
    s.fit(owners, validation)
    ref = dpsumm.summarize(owners, validation, 6, method=dpsumm.PaperGreedy(dim=16), seed_set=seed_set, random_state=2, progress=False)
    np.testing.assert_array_equal(s.points_, ref.points)
    np.testing.assert_array_equal(s.labels_, ref.labels)
    np.testing.assert_array_equal(s.owner_, ref.owner)
    assert s.privacy_ is None and s.n_features_in_ == 4 and isinstance(s.result_, dpsumm.SummaryResult)
    np.testing.assert_array_equal(s.transform(validation), ref.hasher.transform(validation))
    c = clone(s)
    assert c.get_params()["method"] == dpsumm.PaperGreedy(dim=16) and not hasattr(c, "result_")
    assert c.set_params(size=3).fit(owners, validation).points_.shape == (3, 4)
    with pytest.raises(dpsumm.InvalidParameterError):
        s.set_params(sise=3)


def test_summarizer_private_run_has_a_ledger(data):
    owners, validation, seed_set = data
    s = dpsumm.Summarizer(4, method=dpsumm.PaperProtocol(dim=16), privacy=_budget(), seed_set=seed_set, random_state=0)
    s.fit(owners, validation)
    assert s.privacy_ is not None and s.privacy_.epsilon("validation", 1e-2) <= 4.0 * 1.01


from hypothesis import given
from hypothesis import strategies as st


@given(low=st.floats(allow_nan=True, allow_infinity=True),
       width=st.one_of(st.floats(max_value=0.0), st.just(float("nan"))))
def test_scale_to_unit_refuses_an_empty_or_non_finite_range(low, width):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.scale_to_unit(np.zeros((2, 3)), low, low + width)
    assert e.value.argument in ("low", "high")


@given(values=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=20), low=st.floats(-1e3, 1e3),
       width=st.floats(1e-3, 1e3))
def test_scale_to_unit_is_the_affine_map_clipped(values, low, width):
    X = np.array(values)[:, None]
    np.testing.assert_allclose(dpsumm.scale_to_unit(X, low, low + width), np.clip((X - low) / width, 0, 1))
