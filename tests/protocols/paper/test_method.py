"""The paper's method objects (dpsumm.protocols.paper.method): their options are checked where they are declared,
before any run, and the two methods run the one aggregator, private or not."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import dpsumm
from dpsumm import accounting
from dpsumm.protocols.paper import PAPER_DIM, PaperGreedy, PaperProtocol


def test_the_default_dimension_is_the_papers():
    assert PaperProtocol().dim == PaperGreedy().dim == PAPER_DIM == 140


@pytest.mark.parametrize(
    "kwargs,argument",
    [
        ({"schedule": "mine"}, "schedule"),
        ({"schedule": accounting.paper_schedule(size=4, owners=2, dim=64)}, "schedule"),  # made for dim 64, not 140
        ({"t_init": 0}, "t_init"),
        ({"t_subs": -1}, "t_subs"),
        ({"epsilon_auction": -0.5}, "epsilon_auction"),
        ({"epsilon_auction": float("inf")}, "epsilon_auction"),
        ({"epsilon_auction": "theorem5"}, "epsilon_auction"),
        ({"epsilon_auction": 1.0, "schedule": accounting.paper_schedule(size=4, owners=2)}, "epsilon_auction"),
    ],
)
def test_bad_options_are_refused_naming_the_option(kwargs, argument):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        PaperProtocol(**kwargs)
    assert e.value.argument == argument


def test_the_greedy_baseline_is_the_same_aggregator_without_noise():
    """PaperGreedy's summary is the exact greedy over the hashed kernel whatever the seed (no noise is drawn), and
    its ledger certifies no owner; PaperProtocol on the same data spends the owners' budget."""
    rng = np.random.default_rng(0)
    owners = [rng.normal(loc=k, size=(40, 4)) for k in range(3)]
    validation = rng.normal(loc=1.0, size=(30, 4))
    seed_set = rng.uniform(-1, 3, size=(10, 4))
    schedule = dataclasses.replace(accounting.paper_schedule(size=5, owners=3, dim=32), t_init=50, t_subs=5)
    runs = [
        dpsumm.summarize(
            owners,
            validation,
            5,
            PaperGreedy(dim=32, schedule=schedule),
            seed_set=seed_set,
            gamma=0.5,
            random_state=seed,
            progress=False,
        )
        for seed in (0, 1)
    ]
    np.testing.assert_array_equal(runs[0].owner, runs[1].owner)
    np.testing.assert_array_equal(runs[0].index, runs[1].index)
    assert runs[0].privacy is None or not runs[0].privacy.certified("owners")
    private = dpsumm.summarize(
        owners,
        validation,
        5,
        PaperProtocol(dim=32, schedule=schedule),
        seed_set=seed_set,
        gamma=0.5,
        random_state=0,
        progress=False,
    )
    assert private.privacy is not None and private.privacy.epsilon("owners", 1e-6) > 0
