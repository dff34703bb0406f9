"""PFDS (dpsumm.pfds): budget accounting, noise scales, the exponential mechanism's split distribution,
the exact constrained least squares, synthetic rows inside their leaves, labelling, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import dpsumm
from dpsumm import InvalidParameterError
from dpsumm.privacy import Csprng
from dpsumm import accounting as acc
from dpsumm.pfds import (
    REGRESSION_BUCKETS,
    Domain,
    PrivateTree,
    make_tree,
    max_operator_scores,
    opt_private_gen,
    pfds,
    pfds_training_set,
    share_data,
)
from dpsumm.pfds.tree import _select_split  # the selection step itself, for the distribution test


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


def dlap_var(scale):
    """Variance of the discrete Laplace distribution P(z) ∝ exp(-|z|/scale)."""
    q = math.exp(-1.0 / scale)
    return 2 * q / (1 - q) ** 2


# ------------------------------------------------------------------ budget accounting


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


# ------------------------------------------------------------------ noise scales


def test_leaf_count_noise_has_the_laplace_scale():
    X, y, dom = numeric_data(n=4000, d=3, seed=2)
    eps_level = 0.25
    tr = make_tree(X, y, dom, eps_level, h_max=9, t=5, random_state=11)
    leaf = tr.apply(X)
    yi = (y == "b").astype(int)
    true = np.zeros((tr.n_nodes, 2))
    np.add.at(true, (leaf, yi), 1.0)
    noise = (tr.leaf_counts[tr.leaves] - true[tr.leaves]).ravel()
    assert np.all(noise == np.round(noise))  # discrete Laplace on the integers
    ratio = noise.var() / dlap_var(1.0 / eps_level)
    assert 0.7 < ratio < 1.4, ratio  # 512 draws: sd of the ratio ~ 0.1
    assert np.array_equal(tr.leaf_label[tr.leaves], np.argmax(tr.leaf_counts[tr.leaves], axis=1))


def test_level_count_noise_has_the_laplace_scale():
    X, y, dom = numeric_data(n=3000, d=3, seed=4)
    tr = make_tree(X, y, dom, 1.0, h_max=8, t=5, random_state=5)
    eps = 0.5
    sd = opt_private_gen(tr, X, levels=8, epsilon=eps, random_state=6)
    paths = tr._paths(dom.to_index(X))
    true = np.array([np.sum(paths == k) for k in sd.nodes])
    noise = sd.node_noisy - true
    assert sd.nodes.size == 127 and sd.measured_levels == list(range(1, 8))
    ratio = noise.var() / dlap_var(7 / eps)  # scale (p-1)/eps
    assert 0.6 < ratio < 1.6, ratio


# ------------------------------------------------------------------ split selection


@given(
    st.lists(st.tuples(st.floats(0, 1), st.integers(0, 2)), min_size=0, max_size=40),
    st.lists(st.floats(0, 1), min_size=1, max_size=6),
)
def test_max_operator_matches_brute_force(rows, cands):
    x = np.array([r[0] for r in rows], dtype=float)
    y = np.array([r[1] for r in rows], dtype=np.int64)
    got = max_operator_scores(x, y, np.array(cands), 3)
    for v, g in zip(cands, got):
        left = max([sum(1 for a, b in rows if a < v and b == l) for l in range(3)])
        right = max([sum(1 for a, b in rows if a >= v and b == l) for l in range(3)])
        assert g == left + right


def test_split_selection_follows_the_exponential_mechanism():
    """Chi-square goodness of fit, fixed seed, alpha = 0.001: the frequencies of the selected candidate
    match exp(eps u / 2) / sum (Delta_u = 1); the same frequencies reject the uniform distribution."""
    g = np.random.default_rng(7)
    x = g.uniform(0, 1, 60)
    y = (x + g.normal(0, 0.2, 60) > 0.5).astype(np.int64)
    cands = np.array([0.05, 0.2, 0.35, 0.45, 0.5, 0.6, 0.8, 0.95])
    u = max_operator_scores(x, y, cands, 2)
    assert np.ptp(u) >= 10  # the scores differ: the test has power
    eps = 0.3
    w = np.exp(eps * (u - u.max()) / 2.0)
    probs = w / w.sum()
    rng = Csprng(2024)
    n = 20000
    picks = np.array([_select_split(x, y, cands, 2, eps, rng) for _ in range(n)])
    counts = np.bincount(picks, minlength=cands.size)
    alpha = 1e-3
    assert stats.chisquare(counts, n * probs).pvalue > alpha
    assert stats.chisquare(counts, np.full(cands.size, n / cands.size)).pvalue < alpha
    # a factor-2 error in the exponent (exp(eps u) instead of exp(eps u / 2)) is rejected too
    w2 = np.exp(eps * (u - u.max()))
    assert stats.chisquare(counts, n * w2 / w2.sum()).pvalue < alpha


def test_thresholds_are_candidates_drawn_from_the_node_box():
    X, y, dom = mixed_data()
    tr = make_tree(X, y, dom, 0.5, h_max=6, t=7, random_state=9)
    num = np.flatnonzero(tr.kind == 1)
    assert num.size > 0
    for k in num:
        a = tr.feature[k]
        c = tr.candidates[k]
        assert tr.threshold[k] in c
        assert np.all((c >= tr.lower[k, a]) & (c <= tr.upper[k, a]))
        l, r = tr.children[k, :2]
        assert tr.upper[l, a] == tr.threshold[k] == tr.lower[r, a]
    # a categorical attribute is used at most once on any path, and branches per category
    for k in np.flatnonzero(tr.kind == 2):
        assert np.sum(tr.children[k] >= 0) == 3
        anc = tr.parent[k]
        while anc >= 0:
            assert not (tr.kind[anc] == 2 and tr.feature[anc] == tr.feature[k])
            anc = tr.parent[anc]


# ------------------------------------------------------------------ Algorithm 5


def _children(tr, k):
    return [int(c) for c in tr.children[k] if c >= 0]


def _leaves_below(tr, k):
    if tr.kind[k] == 0:
        return [k]
    return [leaf for c in _children(tr, k) for leaf in _leaves_below(tr, c)]


@pytest.mark.parametrize("data,levels", [(numeric_data, 4), (mixed_data, 3), (mixed_data, 6)])
def test_consistency_constraints_hold_exactly(data, levels):
    X, y, dom = data()
    tr = make_tree(X, y, dom, 0.05, h_max=7, t=5, random_state=12)
    sd = opt_private_gen(tr, X, levels=levels, epsilon=0.2, random_state=13)
    fit = dict(zip(sd.nodes.tolist(), sd.node_fit))
    fit_leaf = dict(zip(sd.leaves.tolist(), sd.leaf_fit))
    assert np.all(sd.leaf_fit >= 0) and np.all(sd.node_fit >= 0)  # (O3)
    checked = 0
    for k, v in fit.items():  # (O2): parent = sum of children, level by level
        if tr.kind[k] == 0:
            assert v == pytest.approx(fit_leaf[k], abs=1e-9)
        elif tr.depth[k] < levels - 1:
            assert v == pytest.approx(sum(fit[c] for c in _children(tr, k)), abs=1e-9)
            checked += 1
        else:  # level p-1: its children in Alg. 5 are the leaves below it
            assert v == pytest.approx(sum(fit_leaf[c] for c in _leaves_below(tr, k)), abs=1e-9)
            checked += 1
    assert checked >= 1
    # leaves get noise-dominated sizes: the solve had to move them (the constraints are not trivial)
    assert np.abs(sd.leaf_fit - sd.leaf_noisy).max() > 1.0


def test_least_squares_solution_is_optimal():
    """KKT conditions of min sum_i (1/m_i) sum_j (x_ij - c_ij)^2 over leaf sizes x >= 0."""
    X, y, dom = numeric_data(seed=5)
    tr = make_tree(X, y, dom, 0.05, h_max=6, t=5, random_state=21)
    sd = opt_private_gen(tr, X, levels=4, epsilon=0.1, random_state=22)
    pos = {k: i for i, k in enumerate(sd.leaves.tolist())}
    M = np.zeros((sd.nodes.size, sd.leaves.size))
    for r, k in enumerate(sd.nodes.tolist()):
        for leaf in _leaves_below(tr, k):
            M[r, pos[leaf]] = 1.0
    m_of_level = {lv: np.sum(tr.depth[sd.nodes] == lv) for lv in set(tr.depth[sd.nodes].tolist())}
    w = np.array([1.0 / m_of_level[tr.depth[k]] for k in sd.nodes])
    wl = 1.0 / sd.leaves.size
    x = sd.leaf_fit
    grad = M.T @ (w * (M @ x - sd.node_noisy)) + wl * (x - sd.leaf_noisy)
    scale = np.abs(grad).max() + 1.0
    active = x > 1e-9
    assert np.all(np.abs(grad[active]) < 1e-7 * scale)
    assert np.all(grad[~active] > -1e-7 * scale)
    assert (~active).any() and active.any()  # both kinds of condition were tested


def test_synthetic_rows_lie_in_their_leaf_boxes():
    X, y, dom = mixed_data(n=900)
    tr = make_tree(X, y, dom, 0.5, h_max=6, t=5, random_state=30)
    sd = opt_private_gen(tr, X, levels=4, epsilon=0.5, random_state=31)
    assert sd.X.shape[0] == sd.leaf_size.sum() > 0
    assert np.array_equal(tr.apply(sd.X), sd.leaf)  # the tree routes every row to its own leaf
    Z = dom.to_index(sd.X)
    assert np.all(Z >= tr.lower[sd.leaf]) and np.all(Z < tr.upper[sd.leaf])
    assert set(np.unique(sd.X[:, 1])) <= {1.0, 5.0, 7.0}
    assert np.array_equal(np.bincount(sd.leaf, minlength=tr.n_nodes)[sd.leaves], sd.leaf_size)
    assert np.all(np.abs(sd.leaf_size - sd.leaf_fit) < 1.0)  # stochastic rounding moves < 1


# ------------------------------------------------------------------ labelling and the protocol


def test_majority_vote_labels():
    X, y, dom = numeric_data(n=900)
    idx = split(900, 5)
    r = pfds([X[i] for i in idx], [y[i] for i in idx], dom, 2.0, h_max=4, levels=3, random_state=40)
    for (Xs, ys), (Xo, yo), tr in zip(r.datasets, r.own_label_datasets, r.trees):
        assert Xs is Xo
        preds = np.array([t.predict(Xs) for t in r.trees])  # (trees, rows)
        votes_for_label = (preds == ys[None, :]).sum(axis=0)
        most = np.max([(preds == c).sum(axis=0) for c in dom.classes], axis=0)
        assert np.array_equal(votes_for_label, most)
        assert np.array_equal(yo, tr.predict(Xs))  # PFDS(s): own tree only
    Xt, yt = r.training_set()
    assert Xt.shape[0] == yt.shape[0] == sum(len(d[1]) for d in r.datasets)


def test_regression_labels_in_voted_bucket():
    g = np.random.default_rng(8)
    X = g.uniform(0, 1, (800, 2))
    yv = 10 * X[:, 0] + g.uniform(-1, 1, 800)
    dom = Domain.box(2, 0.0, 1.0, label_range=(-1.0, 11.0))
    tr = make_tree(X, yv, dom, 1.0, h_max=4, random_state=1)
    sd = opt_private_gen(tr, X, levels=3, epsilon=1.0, random_state=2)
    ys = share_data(sd.X, [tr], random_state=3)
    assert np.all((ys >= -1.0) & (ys <= 11.0))
    assert np.array_equal(dom.bucket(ys), tr.leaf_label[tr.apply(sd.X)])
    assert dom.n_classes == REGRESSION_BUCKETS
    assert np.unique(ys).size == ys.size  # drawn uniformly in the bucket, not the midpoint


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


def test_top_level_exports():
    assert dpsumm.pfds.pfds is pfds and dpsumm.pfds.pfds_training_set is pfds_training_set
    assert isinstance(make_tree(*numeric_data(n=50)[:3], 1.0, h_max=2, random_state=0), PrivateTree)


# ------------------------------------------------------------------ bad input


def _untouched(rng: Csprng, seed: int) -> bool:
    return rng.uniform() == Csprng(seed).uniform()


def test_domain_errors():
    with pytest.raises(InvalidParameterError, match="missing bounds for numeric attribute 1") as e:
        Domain([(0, 1), None], classes=[0, 1])
    assert e.value.argument == "bounds"
    with pytest.raises(InvalidParameterError, match="low < high"):
        Domain([(1, 1)], classes=[0, 1])
    with pytest.raises(InvalidParameterError, match="exactly one"):
        Domain([(0, 1)])
    with pytest.raises(InvalidParameterError, match="both bounds and categories"):
        Domain([(0, 1)], {0: [1, 2]}, classes=[0, 1])
    with pytest.raises(InvalidParameterError, match="repeated"):
        Domain([None], {0: [1, 1]}, classes=[0, 1])
    with pytest.raises(InvalidParameterError) as e:
        Domain([(0, float("nan"))], classes=[0, 1])
    assert e.value.argument == "bounds"


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
