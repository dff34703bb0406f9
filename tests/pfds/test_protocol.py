"""dpsumm.pfds.protocol: the PFDS run's budget accounting by hand, reproducibility, sizes, and bad input refused
before any noise.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpsumm
from dpsumm import InvalidParameterError
from dpsumm import accounting as acc
from dpsumm.pfds import (
    Domain,
    pfds,
    pfds_training_set,
)
from dpsumm.privacy import Csprng
from refusal import refused

RNG = np.random.default_rng(7)


DOMAIN = dpsumm.pfds.Domain.box(3, 0.0, 1.0, classes=range(2))


AGENTS = [RNG.uniform(size=(20, 3)) for _ in range(2)]


AGENT_LABELS = [RNG.integers(0, 2, 20) for _ in range(2)]


@pytest.mark.parametrize(
    "call,argument",
    [
        (
            lambda: dpsumm.pfds.pfds(AGENTS, AGENT_LABELS, DOMAIN, 5e-324, random_state=0),
            "epsilon",
        ),  # ZeroDivisionError
        (
            lambda: dpsumm.pfds.pfds(AGENTS, AGENT_LABELS, DOMAIN, 1e-11, h_max=3, t=3, levels=2, random_state=0),
            "epsilon",
        ),
        (lambda: dpsumm.pfds.make_tree(AGENTS[0], AGENT_LABELS[0], DOMAIN, 500.0, random_state=0), "epsilon_level"),
        (lambda: dpsumm.pfds.make_tree(AGENTS[0], AGENT_LABELS[0], DOMAIN, 1e-300, random_state=0), "epsilon_level"),
        (lambda: dpsumm.pfds.Domain([(0, 1)], classes=range(10**8)), "classes"),  # was minutes of list and sort
        (
            lambda: dpsumm.pfds.pfds(AGENTS, AGENT_LABELS, DOMAIN, 1.0, h_max=2**70, random_state=0),
            "h_max",
        ),  # named epsilon
        (lambda: dpsumm.pfds.Domain.box(3, float("nan"), 1.0, classes=[0, 1]), "lower"),  # named upper
        (lambda: dpsumm.pfds.partition_agents(None, 3, 0, 0.0, 1.0, np.random.default_rng(0)), "X"),
        (lambda: dpsumm.pfds.partition_agents(AGENTS[0], -1, 0, 0.0, 1.0, np.random.default_rng(0)), "n_agents"),
        (lambda: dpsumm.pfds.partition_agents(AGENTS[0], 3, 5, 0.0, 1.0, np.random.default_rng(0)), "attribute"),
        (lambda: dpsumm.pfds.partition_agents(AGENTS[0], 3, True, 0.0, 1.0, np.random.default_rng(0)), "attribute"),
        (lambda: dpsumm.pfds.partition_agents(AGENTS[0], 3, 0, 1.0, 0.0, np.random.default_rng(0)), "high"),
        (lambda: dpsumm.pfds.partition_agents(AGENTS[0], 3, 0, 0.0, 1.0, None), "rng"),
        (lambda: dpsumm.pfds.partition_agents(np.full((3, 2), np.inf), 3, 0, 0.0, 1.0, np.random.default_rng(0)), "X"),
    ],
)
def test_pfds_refuses_before_any_noise(call, argument):
    # epsilon 1e-11 asked for 1.7 TiB of synthetic rows; 5e-324 divided by zero.
    refused(call, argument)


@pytest.mark.parametrize("epsilon", [1e4, 5e-324, 1e-300])
def test_pfds_budget_refused_before_the_stream_is_touched(epsilon):
    rng = dpsumm.privacy.Csprng(77)
    refused(
        lambda: dpsumm.pfds.pfds(AGENTS, AGENT_LABELS, DOMAIN, epsilon, h_max=3, t=3, levels=2, random_state=rng),
        "epsilon",
    )
    # No noise drawn: at 1e4 the trees were grown before the ledger refused their events.
    assert rng.uniform() == dpsumm.privacy.Csprng(77).uniform()


def test_partition_agents_takes_lists():
    idx = dpsumm.pfds.partition_agents(AGENTS[0].tolist(), 3, 0, 0.0, 1.0, np.random.default_rng(0))
    assert idx.shape == (20,) and idx.min() >= 0 and idx.max() < 3


def numeric_data(n=600, d=4, seed=0):
    g = np.random.default_rng(seed)
    X = g.uniform(-1.0, 2.0, size=(n, d))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] > 0.75, "b", "a")
    return X, y, Domain.box(d, -1.0, 2.0, classes=["a", "b"])


def mixed_data(n=600, seed=0):
    """Two numeric attributes in [0, 10], a categorical one with codes {1, 5, 7}, three classes."""
    g = np.random.default_rng(seed)
    X = np.column_stack([g.uniform(0, 10, n), g.choice([1.0, 5.0, 7.0], n), g.uniform(0, 10, n)])
    y = (X[:, 0] > 5).astype(int) + (X[:, 1] == 7).astype(int)
    dom = Domain([(0.0, 10.0), None, (0.0, 10.0)], {1: [7, 1, 5]}, classes=[0, 1, 2])
    return X, y, dom


def split(n, parts):
    return np.array_split(np.arange(n), parts)


def test_ledger_matches_hand_computation():
    X, y, dom = numeric_data()
    idx = split(len(X), 3)
    eps, h, p = 0.8, 5, 3
    r = pfds([X[i] for i in idx], [y[i] for i in idx], dom, eps, h_max=h, t=6, levels=p, random_state=3)
    # every split level of an all-numeric tree runs the exponential mechanism
    for led in r.ledgers:
        evs = led.events("owners")
        assert evs == [
            acc.ExponentialEvent(eps / (2 * h), 1.0, "add-remove", count=h - 1),
            acc.LaplaceEvent(eps / (2 * h), 1.0, "add-remove", granularity=1.0),
            acc.LaplaceEvent(eps / 2 / (p - 1), 1.0, "add-remove", count=p - 1, granularity=1.0),
        ]
        # (h-1) eps/(2h) + eps/(2h) + (p-1) eps/(2(p-1)) = eps
        assert led.epsilon("owners", 1e-5, "basic") == pytest.approx(eps, rel=1e-12)
        assert led.epsilon("owners", 1e-5, "tight") <= eps + 1e-12
    assert r.epsilon_spent() == pytest.approx(eps, rel=1e-12)
    assert r.neighbour == "add-remove"


def test_ledger_of_non_sharers_is_empty_and_categorical_levels_are_free():
    # Two categorical attributes only: after two categorical splits no attribute is left, so the tree
    # has depth 3 < h_max and never runs the exponential mechanism.
    g = np.random.default_rng(1)
    X = np.column_stack([g.integers(0, 2, 300), g.integers(0, 3, 300)]).astype(float)
    y = (X[:, 0] == 1).astype(int)
    dom = Domain([None, None], {0: [0, 1], 1: [0, 1, 2]}, classes=[0, 1])
    idx = split(300, 3)
    eps, h = 1.0, 5
    r = pfds([X[i] for i in idx], [y[i] for i in idx], dom, eps, h_max=h, levels=3, random_state=0, sharers=[0, 2])
    assert len(r.ledgers[1]) == 0
    tr = r.trees[0]
    assert tr.split_levels == [] and int(tr.depth.max()) == 3 and len(tr.leaves) == 6
    assert r.ledgers[0].epsilon("owners", 1e-5, "basic") == pytest.approx(eps / (2 * h) + eps / 2, rel=1e-12)
    assert [k for k in r.sharers] == [0, 2] and len(r.datasets) == 2


def test_seeded_runs_are_reproducible_and_seeds_matter():
    X, y, dom = mixed_data(n=300)
    idx = split(300, 2)
    args = ([X[i] for i in idx], [y[i] for i in idx], dom, 1.0)
    a = pfds_training_set(*args, random_state=5, h_max=4, levels=3)
    b = pfds_training_set(*args, random_state=5, h_max=4, levels=3)
    c = pfds_training_set(*args, random_state=6, h_max=4, levels=3)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert a[0].shape != c[0].shape or not np.array_equal(a[0], c[0])
    Xn, yn = pfds_training_set(*args, h_max=4, levels=3)  # OS entropy
    assert Xn.shape[1] == 3 and set(np.unique(yn)) <= {0, 1, 2}


def test_synthetic_size_tracks_the_data_size():
    X, y, dom = numeric_data(n=3000, d=3)
    idx = split(3000, 3)
    r = pfds([X[i] for i in idx], [y[i] for i in idx], dom, 1.0, random_state=50)
    for (Xs, _), i in zip(r.datasets, idx):
        assert abs(Xs.shape[0] - i.size) < 0.1 * i.size


def _untouched(rng: Csprng, seed: int) -> bool:
    return rng.uniform() == Csprng(seed).uniform()


def test_unknown_category_and_label_are_rejected_before_any_randomness():
    X, y, dom = mixed_data(n=100)
    bad = X.copy()
    bad[17, 1] = 3.0
    rng = Csprng(77)
    with pytest.raises(InvalidParameterError, match=r"agents\[1\]` row 17 attribute 1 has unknown category 3.0") as e:
        pfds([X, bad], [y, y], dom, 1.0, random_state=rng)
    assert e.value.argument == "agents[1]" and _untouched(rng, 77)
    ybad = y.copy()
    ybad[3] = 9
    rng = Csprng(78)
    with pytest.raises(InvalidParameterError, match=r"row 3 has unknown label 9") as e:
        pfds([X, X], [y, ybad], dom, 1.0, random_state=rng)
    assert e.value.argument == "labels[1]" and _untouched(rng, 78)


@settings(max_examples=25)
@given(
    row=st.integers(0, 49),
    col=st.integers(0, 2),
    value=st.one_of(st.just(float("nan")), st.just(float("inf")), st.floats(10.001, 1e6), st.floats(-1e6, -0.001)),
    agent=st.integers(0, 2),
)
def test_nan_and_out_of_domain_rows_are_rejected(row, col, value, agent):
    X, y, dom = mixed_data(n=150)
    parts = [X[i].copy() for i in split(150, 3)]
    labels = [y[i] for i in split(150, 3)]
    if col == 1 and math.isfinite(value):
        expect = "unknown category"
    elif not math.isfinite(value):
        expect = "NaN or infinite"
    else:
        expect = "outside the domain"
    parts[agent][row, col] = value
    rng = Csprng(99)
    with pytest.raises(InvalidParameterError, match=expect) as e:
        pfds(parts, labels, dom, 1.0, h_max=3, levels=2, random_state=rng)
    assert e.value.argument == f"agents[{agent}]"
    assert _untouched(rng, 99)


@pytest.mark.parametrize(
    "kwargs,argument",
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": float("nan")}, "epsilon"),
        ({"h_max": 0}, "h_max"),
        ({"t": 0}, "t"),
        ({"levels": 1}, "levels"),
        ({"levels": 9}, "levels"),
        ({"sharers": [0, 0]}, "sharers"),
        ({"sharers": [5]}, "sharers"),
        ({"random_state": -1}, "random_state"),
        ({"domain": "not a domain"}, "domain"),
    ],
)
def test_bad_parameters_name_the_argument(kwargs, argument):
    X, y, dom = numeric_data(n=60)
    call = {"agents": [X[:30], X[30:]], "labels": [y[:30], y[30:]], "domain": dom, "epsilon": 1.0, **kwargs}
    with pytest.raises(InvalidParameterError) as e:
        pfds(**call)
    assert e.value.argument == argument


def test_shape_and_regression_label_errors():
    X, y, dom = numeric_data(n=60)
    with pytest.raises(InvalidParameterError, match="features per row") as e:
        pfds([X[:, :3]], [y], dom, 1.0)
    assert e.value.argument == "agents[0]"
    with pytest.raises(InvalidParameterError, match="one per row") as e:
        pfds([X], [y[:10]], dom, 1.0)
    assert e.value.argument == "labels[0]"
    with pytest.raises(InvalidParameterError) as e:
        pfds(X, [y], dom, 1.0)
    assert e.value.argument == "agents"
    rdom = Domain.box(4, -1.0, 2.0, label_range=(0.0, 1.0))
    with pytest.raises(InvalidParameterError, match="outside label_range") as e:
        pfds([X], [np.full(60, 1.5)], rdom, 1.0)
    assert e.value.argument == "labels[0]"
    with pytest.raises(InvalidParameterError, match="NaN"):
        pfds([X], [np.full(60, np.nan)], rdom, 1.0)
