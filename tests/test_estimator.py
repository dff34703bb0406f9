"""dpsumm.estimator (Summarizer): equal to summarize, a ledger for a private run, scikit-learn's nested params,
validation labels as y, set_params atomic.
"""

from __future__ import annotations

import numpy as np
import pytest

import dpsumm
from dpsumm import DpsummError, InvalidParameterError
from dpsumm.methods import MethodOptionError
from federation_data import label_shift


def test_summarizer_set_params_is_atomic():
    s = dpsumm.Summarizer(5, method="uniform")
    before = s.get_params(deep=False)
    with pytest.raises(DpsummError):
        s.set_params(method="bogus", method__dim=8)
    with pytest.raises(DpsummError):
        s.set_params(progress=True, method__dim=-1)
    assert s.get_params(deep=False) == before
    assert s.set_params(method__dim=8).method == dpsumm.Uniform(dim=8)


LABELS = (0, 1, 2)


METHOD = dpsumm.Nominations(dim=64, purchase=dpsumm.ByLabel(label_set=LABELS))


KW = dict(method=METHOD, gamma=0.3, progress=False)


def test_the_estimator_takes_the_validation_labels_as_y():
    owners, labels, validation, yv = label_shift()
    labelled = [dpsumm.Owner(o, labels=y) for o, y in zip(owners, labels)]
    est = dpsumm.Summarizer(12, method=METHOD, gamma=0.3, random_state=0, progress=False).fit(labelled, validation, yv)
    res = dpsumm.summarize(labelled, validation, 12, validation_labels=yv, random_state=0, **KW)
    np.testing.assert_array_equal(est.points_, res.points)
    assert est.privacy_.certified("owners")
    with pytest.raises(InvalidParameterError, match="validation_labels"):
        dpsumm.Summarizer(12, gamma=0.3, random_state=0, progress=False).fit(labelled, validation, yv)


def test_summarizer_nested_params_follow_scikit_learn():
    est = dpsumm.Summarizer(10, method=dpsumm.Nominations(purchase=dpsumm.Nominees(), nominees=30))
    params = est.get_params(deep=True)
    assert params["method__nominees"] == 30 and params["method__dim"] == 500
    assert "method__nominees" not in est.get_params(deep=False)
    with pytest.raises(MethodOptionError):
        dpsumm.Summarizer(10, nominees=30)
    with pytest.raises(MethodOptionError):
        est.set_params(nominees=5)


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    owners = [dpsumm.Owner(rng.uniform(size=(30, 4)), labels=np.full(30, k), name=f"o{k}") for k in range(3)]
    validation = rng.uniform(size=(25, 4))
    seed_set = rng.uniform(size=(12, 4))
    return owners, validation, seed_set


def _budget():
    return dpsumm.Budget(epsilon=4.0, delta=1e-4, validation_epsilon=4.0, validation_delta=1e-2)


def test_summarizer_equals_summarize(data):
    from sklearn.base import clone

    owners, validation, seed_set = data
    s = dpsumm.Summarizer(6, method=dpsumm.PaperGreedy(dim=16), seed_set=seed_set, random_state=2)
    assert "method=PaperGreedy(dim=16)" in repr(s) and "array" not in repr(s)
    with pytest.raises(dpsumm.NotFittedError):
        s.transform(validation)
    s.fit(owners, validation)
    ref = dpsumm.summarize(
        owners, validation, 6, method=dpsumm.PaperGreedy(dim=16), seed_set=seed_set, random_state=2, progress=False
    )
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
