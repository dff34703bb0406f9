"""dpsumm.results: Owner checks its name, SummaryResult's repr says the privacy status, results pickle."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import dpsumm
from refusal import refused


@pytest.mark.parametrize("name", [np.ones(3), 5, b"x", "", "  ", object()])
def test_owner_names_are_checked(name):
    with pytest.raises(dpsumm.InvalidParameterError) as err:
        dpsumm.Owner(np.zeros((3, 2)), name=name)
    assert err.value.argument == "name"


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    owners = [dpsumm.Owner(rng.uniform(size=(30, 4)), labels=np.full(30, k), name=f"o{k}") for k in range(3)]
    validation = rng.uniform(size=(25, 4))
    seed_set = rng.uniform(size=(12, 4))
    return owners, validation, seed_set


def test_reprs_are_short_and_say_the_privacy_status(data):
    owners, validation, seed_set = data
    big = dpsumm.Owner(np.zeros((5000, 50)), labels=np.zeros(5000), name="big")
    assert repr(big) == "Owner(name='big', rows=5000x50, labelled)"
    greedy = dpsumm.summarize(
        owners, validation, 5, method=dpsumm.PaperGreedy(dim=16), seed_set=seed_set, random_state=0, progress=False
    )
    assert "not private" in repr(greedy) and len(repr(greedy)) < 200
    seeded = dpsumm.summarize(
        owners, validation, 5, method=dpsumm.PaperProtocol(dim=16), seed_set=seed_set, random_state=0, progress=False
    )
    assert "seeded: NOT private" in repr(seeded) and "[" not in repr(seeded)
    entropy = dpsumm.summarize(
        owners, validation, 5, method=dpsumm.PaperProtocol(dim=16), seed_set=seed_set, progress=False
    )
    assert not entropy.seeded
    # the paper's protocol asks every owner every round by default (eps_auc = 0): certified
    assert entropy.privacy_status() == "private, certified"
    auction = dpsumm.summarize(
        owners,
        validation,
        5,
        method=dpsumm.PaperProtocol(dim=16, epsilon_auction=0.01),
        seed_set=seed_set,
        progress=False,
    )
    # the paper's randomized auction (eps_auc > 0) only on an explicit argument: uncertified
    assert auction.privacy_status() == "private, NOT certified"
    certified = dpsumm.summarize(
        owners,
        validation,
        5,
        method=dpsumm.PaperProtocol(dim=16, schedule=dpsumm.accounting.paper_schedule(5, 3, 16, epsilon_auction=0.0)),
        seed_set=seed_set,
        progress=False,
    )
    assert repr(certified).endswith("private, certified)")


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
    res = dpsumm.summarize(
        owners, validation, 5, method=dpsumm.PaperProtocol(dim=16), seed_set=seed_set, random_state=3, progress=False
    )
    _same_result(res, pickle.loads(pickle.dumps(res)))
    joblib.dump(res, tmp_path / "r.joblib")
    _same_result(res, joblib.load(tmp_path / "r.joblib"))


@pytest.mark.parametrize(
    "kwargs, argument",
    [
        (dict(chunk_rows=0), "chunk_rows"),
        (dict(chunk_rows=2.5), "chunk_rows"),
        (dict(chunk_rows=True), "chunk_rows"),
        (dict(progress="yes"), "progress"),
        (dict(progress=1), "progress"),
    ],
)
def test_owner_chunk_rows_and_progress_are_checked_whatever_the_data(kwargs, argument):
    # Was: accepted, and ignored, for rows in memory (they are read only for a path or chunks).
    refused(lambda: dpsumm.Owner(np.zeros((3, 2)), **kwargs), argument)
