"""Optimisation-based private data generation (Algorithm 5): noisy level counts, consistent least squares."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from .._validation import instance_of, positive_float, positive_int
from ..accounting import LaplaceEvent
from ..errors import InvalidParameterError
from ..privacy import Csprng, check_random_state
from .domain import _DENSE_MAX_LEAVES, NEIGHBOUR
from .tree import PrivateTree, check_mechanism_epsilon

# ----------------------------------------------------------------------------------------------
# optimisation-based private data generation (Algorithm 5)
# ----------------------------------------------------------------------------------------------


@dataclass
class SyntheticData:
    r"""Output of :func:`opt_private_gen` (Algorithm 5).

    Attributes
    ----------
    X : ndarray (N, d)
        Unlabelled synthetic rows (raw values: categorical attributes hold domain values).
    leaf : ndarray of int (N,)
        The leaf each row was sampled in.
    nodes : ndarray of int
        The measured nodes of levels 1..p-1 (breadth-first order).
    node_noisy : ndarray
        :math:`\tilde c` of those nodes (true count + Lap((p-1)/ε), line 2).
    node_fit : ndarray
        :math:`x^*` of those nodes (each is the sum of its leaves' :math:`x^*`: O2).
    leaves : ndarray of int
        All leaves of the tree.
    leaf_noisy : ndarray
        The leaves' noisy sizes, :math:`\sum_l c_l` from the tree (already private).
    leaf_fit : ndarray
        :math:`x^*` of the leaves, all >= 0 (O3).
    leaf_size : ndarray of int
        The number of rows sampled in every leaf (:math:`x^*` stochastically rounded).
    level_weights : ndarray
        :math:`\lambda_i = 1/m_i` for levels 1..p-1 and the leaf level.
    epsilon : float
        Budget of the level counts (lines 1-2).
    levels : int
        p.
    """

    X: np.ndarray
    leaf: np.ndarray
    nodes: np.ndarray
    node_noisy: np.ndarray
    node_fit: np.ndarray
    leaves: np.ndarray
    leaf_noisy: np.ndarray
    leaf_fit: np.ndarray
    leaf_size: np.ndarray
    level_weights: np.ndarray
    epsilon: float
    levels: int
    measured_levels: list[int] = field(default_factory=list)

    def events(self) -> list[tuple[str, LaplaceEvent]]:
        """(label, event) of the level counts (one Laplace release per measured level)."""
        if not self.measured_levels:
            return []
        per_level = self.epsilon / (self.levels - 1)
        return [
            (
                f"optPrivateGen level counts, levels {self.measured_levels} (Alg. 5 line 2)",
                LaplaceEvent(per_level, 1.0, NEIGHBOUR, count=len(self.measured_levels), granularity=1.0),
            )
        ]


#: Most values (rows x attributes) of one agent's synthetic data.
MAX_SYNTHETIC_VALUES = 1 << 28


def _solve_wls(
    incidence: np.ndarray, node_noisy: np.ndarray, node_w: np.ndarray, leaf_noisy: np.ndarray, leaf_w: float
) -> np.ndarray:
    r"""Minimise :math:`\sum_r w_r (M x - \tilde c)_r^2 + w_p \|x - \tilde c_p\|^2` over leaf sizes
    :math:`x \ge 0` (Alg. 5 line 3 with O2 substituted: every node is the sum of its leaves)."""
    m = leaf_noisy.size
    sw = np.sqrt(node_w)
    A_nodes = incidence * sw[:, None]
    b = np.concatenate([node_noisy * sw, leaf_noisy * math.sqrt(leaf_w)])
    from scipy.optimize import lsq_linear, nnls

    if m <= _DENSE_MAX_LEAVES:
        A = np.vstack([A_nodes, math.sqrt(leaf_w) * np.eye(m)])
        try:
            # Lawson-Hanson active set: exact (finite termination at the optimum), and much faster than
            # lsq_linear(method="bvls") whose repeated lstsq calls suffer under BLAS thread contention
            x, _ = nnls(A, b, maxiter=50 * m)
            return cast(np.ndarray, np.maximum(x, 0.0))
        except RuntimeError:  # pragma: no cover - iteration limit: fall back to bounded-variable LS
            res = lsq_linear(A, b, bounds=(0.0, np.inf), method="bvls", tol=1e-12)
    else:  # pragma: no cover - large categorical trees only
        from scipy import sparse

        A = sparse.vstack([sparse.csr_matrix(A_nodes), math.sqrt(leaf_w) * sparse.identity(m, format="csr")])
        res = lsq_linear(A, b, bounds=(0.0, np.inf), method="trf", tol=1e-12, lsmr_tol="auto")
    return cast(np.ndarray, np.maximum(res.x, 0.0))


def _opt_private_gen(tree: PrivateTree, Z: np.ndarray, levels: int, epsilon: float, rng: Csprng) -> SyntheticData:
    noise_rng = rng.derive("pfds/optgen/noise")
    round_rng = rng.derive("pfds/optgen/round")
    sample_rng = rng.derive("pfds/optgen/sample")
    p = levels
    depth = tree.depth
    leaves = tree.leaves
    nodes = np.flatnonzero(depth <= p - 1)
    measured_levels = sorted({int(v) for v in depth[nodes]})
    # lines 1-2: true sizes of the nodes of levels 1..p-1, Laplace with (p-1)/ε per level
    if nodes.size:
        paths = tree._paths(Z)
        counts = np.zeros(tree.n_nodes, dtype=np.int64)
        for level in range(min(p - 1, paths.shape[1])):
            col = paths[:, level]
            col = col[col >= 0]
            counts += np.bincount(col, minlength=tree.n_nodes)
        scale = (p - 1) / epsilon
        node_noisy = np.array([float(counts[k] + noise_rng.discrete_laplace(scale)) for k in nodes])
    else:  # pragma: no cover - p >= 2 always measures the root
        node_noisy = np.zeros(0)
    leaf_noisy = tree.leaf_counts[leaves].sum(axis=1)

    # incidence: node r (levels 1..p-1) contains leaf j (ancestor-or-self)
    pos_of_node = np.full(tree.n_nodes, -1, dtype=np.int64)
    pos_of_node[nodes] = np.arange(nodes.size)
    incidence = np.zeros((nodes.size, leaves.size))
    for j, leaf in enumerate(leaves):
        k = int(leaf)
        while k >= 0:
            if pos_of_node[k] >= 0:
                incidence[pos_of_node[k], j] = 1.0
            k = int(tree.parent[k])
    # weights λ_i = 1/m_i (Eq. O1): m_i nodes at level i; the leaf level counts all leaves
    m_level = {lv: int(np.sum(depth[nodes] == lv)) for lv in measured_levels}
    node_w = np.array([1.0 / m_level[int(depth[k])] for k in nodes])
    leaf_w = 1.0 / leaves.size
    leaf_fit = _solve_wls(incidence, node_noisy, node_w, leaf_noisy, leaf_w)
    node_fit = incidence @ leaf_fit

    # line 8: x*_j individuals per leaf; x* is real, so round stochastically (unbiased)
    frac = leaf_fit - np.floor(leaf_fit)
    leaf_size = (np.floor(leaf_fit) + (round_rng.uniform_array(leaves.size) < frac)).astype(np.int64)
    N = int(leaf_size.sum())
    d = tree.domain.n_features
    if N * d > MAX_SYNTHETIC_VALUES:  # a tiny epsilon: noisy counts far beyond the data
        raise InvalidParameterError(
            f"`epsilon` is too small for this tree: the level counts' noise at {epsilon:g} asks for {N} "
            f"synthetic rows of {d} values, beyond the cap of {MAX_SYNTHETIC_VALUES} values; "
            "use a larger epsilon",
            "epsilon",
        )
    leaf_of_row = np.repeat(leaves, leaf_size)
    Zs = sample_rng.uniform_array(N * d).reshape(N, d) if N else np.zeros((0, d))
    start = 0
    for leaf, size in zip(leaves, leaf_size):  # rows of a leaf are contiguous (np.repeat)
        if size == 0:
            continue
        lo, hi = tree.lower[leaf], tree.upper[leaf]
        block = Zs[start : start + size]
        block *= hi - lo
        block += lo
        # keep the half-open box [lo, hi) exact under floating-point rounding
        over = (block >= hi) & (hi > lo)
        if over.any():
            block[over] = np.broadcast_to(np.nextafter(hi, lo), block.shape)[over]
        start += size
    Xs = tree.domain.from_index(Zs)
    return SyntheticData(
        X=Xs,
        leaf=leaf_of_row,
        nodes=nodes,
        node_noisy=node_noisy,
        node_fit=node_fit,
        leaves=leaves,
        leaf_noisy=leaf_noisy,
        leaf_fit=leaf_fit,
        leaf_size=leaf_size,
        level_weights=np.array([1.0 / m_level[lv] for lv in measured_levels] + [leaf_w]),
        epsilon=epsilon,
        levels=p,
        measured_levels=measured_levels,
    )


def _check_levels(levels: object, h_max: int) -> int:
    p = positive_int(levels, "levels")
    if not 2 <= p <= h_max:
        raise InvalidParameterError(f"`levels` must satisfy 2 <= levels <= h_max = {h_max}, got {p}", "levels")
    return p


def opt_private_gen(
    tree: PrivateTree, X: object, levels: int, epsilon: float, random_state: object = None
) -> SyntheticData:
    r"""Optimisation-based private data generation (paper Algorithm 5, *optPrivateGen*).

    1. (lines 1-2) The sizes :math:`c_{ij} = |T_{ij}.data|` of every node of levels
       :math:`i = 1..p-1` get discrete Laplace noise of scale :math:`(p-1)/\varepsilon`: each level
       is a partition (L1 sensitivity 1 under add/remove), so each level is
       :math:`\varepsilon/(p-1)`-DP and the ``p - 1`` levels are :math:`\varepsilon`-DP (Theorem 3.2).
       The leaves' sizes :math:`\tilde c_{pj} = \sum_l c_l` come from the tree's noisy counts (free).
    2. (line 3) The weighted least squares

       .. math:: \min_{\hat x} \sum_{i=1}^{p} \frac{1}{m_i} \sum_{j=1}^{m_i} (\hat x_{ij} - \tilde c_{ij})^2
          \quad\text{s.t.}\quad \hat x_{ij} = \sum_{l \in T_{ij}.ch} \hat x_{i+1,l}\ \ (O2),
          \qquad \hat x \ge 0\ \ (O3)

       is solved exactly by substituting O2: every node is the sum of the leaves below it, so the
       problem is a non-negative least squares in the leaf sizes, solved exactly by SciPy's
       Lawson-Hanson active-set method (``scipy.optimize.nnls``; bounded-variable least squares as a
       fallback). O2 then holds by construction and O3 by the bounds.
    3. (lines 5-8) :math:`x^*_{pj}` (stochastically rounded) rows are sampled uniformly inside leaf
       j's box; a categorical attribute not fixed on the path takes a uniform category.

    Post-processing only from step 2 on (Theorem 2.3).

    Parameters
    ----------
    tree : PrivateTree
        The agent's own tree (from :func:`make_tree` on the same rows).
    X : array (n, d)
        The agent's rows.
    levels : int
        p, with ``2 <= p <= tree.h_max``.
    epsilon : float
        Budget of the level counts (PFDS: ε/2, Algorithm 4 line 2).
    random_state : None, int or Csprng

    Returns
    -------
    SyntheticData
    """
    tree = instance_of(tree, PrivateTree, "tree", "a PrivateTree from make_tree")
    p = _check_levels(levels, tree.h_max)
    eps = positive_float(epsilon, "epsilon")
    check_mechanism_epsilon(eps / (p - 1), "epsilon", "epsilon / (levels - 1)")
    Z = tree.domain.to_index(tree.domain.check_rows(X, "X"))
    return _opt_private_gen(tree, Z, p, eps, check_random_state(random_state))
