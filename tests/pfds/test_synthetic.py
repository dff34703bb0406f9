"""dpsumm.pfds.synthetic: level-count noise scales, the consistency constraints, the least-squares solution and
synthetic rows inside their leaf boxes.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpsumm.pfds import (
    make_tree,
    opt_private_gen,
)
from pfds_data import dlap_var, mixed_data, numeric_data


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
