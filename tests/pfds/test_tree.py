"""dpsumm.pfds.tree: leaf-count noise scales, the max operator against brute force, split selection by the
exponential mechanism, thresholds drawn from the node box.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from dpsumm.pfds import (
    make_tree,
    max_operator_scores,
)
from dpsumm.pfds.tree import _select_split  # the selection step itself, for the distribution test
from dpsumm.privacy import Csprng
from pfds_data import dlap_var, mixed_data, numeric_data
from refusal import refused


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


@pytest.mark.parametrize(
    "kw, argument",
    [
        (dict(x=None), "x"),
        (dict(x=np.zeros((2, 2))), "x"),
        (dict(y=np.array([0.5, 1.5, 0.5])), "y"),
        (dict(y=np.array([0, 5, 1])), "y"),
        (dict(candidates="a"), "candidates"),
        (dict(n_classes=1.5), "n_classes"),
        (dict(n_classes=10**400), "n_classes"),
    ],
    ids=["x-none", "x-2d", "y-float", "y-beyond-classes", "candidates-str", "classes-float", "classes-huge"],
)
def test_max_operator_scores_refuses_bad_input_naming_it(kw, argument):
    """Each used to raise an AttributeError, IndexError, TypeError, ValueError or OverflowError from numpy."""
    args = dict(x=np.array([0.1, 0.5, 0.9]), y=np.array([0, 1, 1]), candidates=np.array([0.3, 0.7]), n_classes=2)
    assert max_operator_scores(**args).shape == (2,)
    refused(lambda: max_operator_scores(**{**args, **kw}), argument)
