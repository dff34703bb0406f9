"""dpsumm.pfds (the package): its exports."""

from __future__ import annotations

import numpy as np

import dpsumm
from dpsumm.pfds import (
    Domain,
    PrivateTree,
    make_tree,
    pfds,
    pfds_training_set,
)


def numeric_data(n=600, d=4, seed=0):
    g = np.random.default_rng(seed)
    X = g.uniform(-1.0, 2.0, size=(n, d))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0.75, "b", "a")
    return X, y, Domain.box(d, -1.0, 2.0, classes=["a", "b"])


def test_top_level_exports():
    assert dpsumm.pfds.pfds is pfds and dpsumm.pfds.pfds_training_set is pfds_training_set
    assert isinstance(make_tree(*numeric_data(n=50)[:3], 1.0, h_max=2, random_state=0), PrivateTree)
