"""The private decision tree (Algorithm 3): split selection by the exponential mechanism, noisy leaf counts."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from .._validation import as_array, bounded_int, instance_of, positive_float
from ..accounting import ExponentialEvent, LaplaceEvent
from ..accounting._checks import MAX_EPSILON, MIN_EVENT_EPSILON
from ..errors import InvalidParameterError
from ..privacy import Csprng, check_random_state
from .domain import MAX_LEAVES, NEIGHBOUR, REGRESSION_BUCKETS, Domain

# ----------------------------------------------------------------------------------------------
# the private decision tree (Algorithm 3)
# ----------------------------------------------------------------------------------------------

_LEAF, _NUMERIC, _CATEGORICAL = 0, 1, 2


@dataclass
class PrivateTree:
    """A differentially private decision tree (paper Algorithm 3), as shared with the other agents.

    Holds only differentially private or public information: the structure and attributes (drawn
    without looking at data), the candidate split values (drawn from the public domain), the
    selected thresholds (exponential mechanism) and the noisy leaf class counts (Laplace). Nodes are
    numbered in breadth-first order; the root is node 0 at level 1.

    Attributes
    ----------
    domain : Domain
    epsilon_level : float
        Budget of each level; the tree is ``h_max * epsilon_level``-DP (Theorem 3.1).
    h_max, t : int
    kind : ndarray of int, shape (n_nodes,)
        0 leaf, 1 numeric split, 2 categorical split.
    feature : ndarray of int
        The split attribute (-1 at leaves).
    threshold : ndarray of float
        Numeric split value v: rows with ``x_a < v`` go to child 0, ``x_a >= v`` to child 1.
    candidates : ndarray of float, shape (n_nodes, t)
        The t public candidate values the threshold was selected from (NaN elsewhere).
    children : ndarray of int, shape (n_nodes, max_branch)
        Child ids, -1 padded. A categorical split has one child per category, in sorted order.
    parent, depth : ndarray of int
        Parent id (-1 at the root) and level (root = 1).
    lower, upper : ndarray of float, shape (n_nodes, d)
        Each node's box in index space (:meth:`Domain.index_box`).
    leaf_counts : ndarray of float, shape (n_nodes, n_classes)
        Noisy class counts ``c_l = |D^{y=l}| + Lap(1/epsilon_level)`` at leaves (Alg. 3 line 13); NaN
        at internal nodes.
    leaf_label : ndarray of int
        ``argmax_l c_l`` (Alg. 3 line 15) as a class index; -1 at internal nodes.
    split_levels : list of int
        Levels at which at least one numeric split ran the exponential mechanism (for the ledger).
    """

    domain: Domain
    epsilon_level: float
    h_max: int
    t: int
    kind: np.ndarray
    feature: np.ndarray
    threshold: np.ndarray
    candidates: np.ndarray
    children: np.ndarray
    parent: np.ndarray
    depth: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    leaf_counts: np.ndarray
    leaf_label: np.ndarray
    split_levels: list[int] = field(default_factory=list)

    @property
    def n_nodes(self) -> int:
        return int(self.kind.size)

    @property
    def leaves(self) -> np.ndarray:
        """Leaf ids in breadth-first order."""
        return np.flatnonzero(self.kind == _LEAF)

    @property
    def epsilon(self) -> float:
        """``h_max * epsilon_level`` (Theorem 3.1); an upper bound if some level had no numeric split."""
        return self.h_max * self.epsilon_level

    def events(self) -> list[tuple[str, ExponentialEvent | LaplaceEvent]]:
        """(label, event) of every mechanism this tree ran on its agent's data, add/remove relation."""
        out: list[tuple[str, ExponentialEvent | LaplaceEvent]] = []
        if self.split_levels:
            out.append(
                (
                    f"makeTree split selection, levels {self.split_levels} (Alg. 3 line 22)",
                    ExponentialEvent(self.epsilon_level, 1.0, NEIGHBOUR, count=len(self.split_levels)),
                )
            )
        out.append(
            (
                "makeTree leaf class counts (Alg. 3 line 13)",
                LaplaceEvent(self.epsilon_level, 1.0, NEIGHBOUR, granularity=1.0),
            )
        )
        return out

    def _paths(self, Z: np.ndarray) -> np.ndarray:
        """Node ids on each row's root-to-leaf path, shape (n, max_depth), -1 padded. Index space."""
        n = Z.shape[0]
        max_depth = int(self.depth.max())
        paths = np.full((n, max_depth), -1, dtype=np.int64)
        node = np.zeros(n, dtype=np.int64)
        active = np.arange(n)
        for level in range(max_depth):
            paths[active, level] = node[active]
            k = self.kind[node[active]]
            inner = k != _LEAF
            active = active[inner]
            if active.size == 0:
                break
            cur = node[active]
            f = self.feature[cur]
            x = Z[active, f]
            numeric = self.kind[cur] == _NUMERIC
            # numeric: 0 if x < v else 1; categorical: the category index (index space)
            branch = np.where(numeric, x >= self.threshold[cur], np.where(numeric, 0.0, x)).astype(np.int64)
            node[active] = self.children[cur, branch]
        return paths

    def _apply_index(self, Z: np.ndarray) -> np.ndarray:
        paths = self._paths(Z)
        last = (paths >= 0).sum(axis=1) - 1
        return cast(np.ndarray, paths[np.arange(paths.shape[0]), last])

    def apply(self, X: object) -> np.ndarray:
        """The leaf id of every row of ``X`` (raw values; validated against the domain)."""
        Z = self.domain.to_index(self.domain.check_rows(X, "X"))
        return self._apply_index(Z)

    def _predict_index(self, Z: np.ndarray) -> np.ndarray:
        return cast(np.ndarray, self.leaf_label[self._apply_index(Z)])

    def predict(self, X: object) -> np.ndarray:
        """The leaf label of every row: a class, or for regression the bucket's midpoint."""
        idx = self._predict_index(self.domain.to_index(self.domain.check_rows(X, "X")))
        if self.domain.classes is not None:
            return cast(np.ndarray, self.domain.classes[idx])
        lo, hi = self.domain.label_range  # type: ignore[misc]
        return lo + (idx + 0.5) * (hi - lo) / REGRESSION_BUCKETS


def _vector(value: object, name: str) -> np.ndarray:
    """A 1-D array of real numbers (no copy of one), NaN refused; InvalidParameterError naming ``name``."""
    arr = as_array(value, name)
    if arr.ndim != 1 or arr.dtype.kind not in "fiu" or (arr.dtype.kind == "f" and np.isnan(arr).any()):
        raise InvalidParameterError(f"`{name}` must be a 1-D array of real numbers, got {arr.dtype} {arr.shape}", name)
    return arr


def max_operator_scores(x: np.ndarray, y: np.ndarray, candidates: np.ndarray, n_classes: int) -> np.ndarray:
    r"""The Max operator of every candidate split (Section 3.1; Friedman & Schuster 2010):

    .. math:: u(D, a, v) = \max_{l} |D^{y=l}_{a<v}| + \max_{l} |D^{y=l}_{a\ge v}|.

    Sensitivity 1 under add/remove of one row. **Computed on the private rows: never release it;**
    it only feeds the exponential mechanism.

    Parameters
    ----------
    x : ndarray (n,)
        The attribute's values at the node.
    y : ndarray of int (n,)
        Class indices.
    candidates : ndarray (t,)
    n_classes : int

    Returns
    -------
    ndarray (t,) of float
    """
    x, y, candidates = (_vector(v, name) for v, name in ((x, "x"), (y, "y"), (candidates, "candidates")))
    n_classes = bounded_int(n_classes, "n_classes", 1, 2**31 - 1)
    if y.shape != x.shape or y.dtype.kind not in "iu" or (y.size and not 0 <= y.min() <= y.max() < n_classes):
        raise InvalidParameterError(
            f"`y` must hold one class index in [0, {n_classes}) per value of `x` ({x.size}), got {y.dtype} {y.shape}",
            "y",
        )
    total = np.bincount(y, minlength=n_classes).astype(np.float64)
    if x.size == 0:
        return np.zeros(candidates.size)
    onehot = np.zeros((x.size, n_classes), dtype=np.float64)
    onehot[np.arange(x.size), y] = 1.0
    left = (x[None, :] < candidates[:, None]).astype(np.float64) @ onehot
    right = total[None, :] - left
    return cast(np.ndarray, left.max(axis=1) + right.max(axis=1))


def _select_split(
    x: np.ndarray, y: np.ndarray, candidates: np.ndarray, n_classes: int, epsilon: float, rng: Csprng
) -> int:
    """Alg. 3 line 22: index i of ``candidates`` with probability ∝ exp(ε u_i / (2 Δ_u)), Δ_u = 1."""
    scores = max_operator_scores(x, y, candidates, n_classes)
    return int(rng.exponential_mechanism(scores.tolist(), epsilon, 1.0))


def _grow(
    domain: Domain, Z: np.ndarray, yi: np.ndarray, epsilon_level: float, h_max: int, t: int, rng: Csprng
) -> PrivateTree:
    """Algorithm 3 on validated inputs (index space). Breadth first; see :func:`make_tree`."""
    struct_rng = rng.derive("pfds/tree/structure")
    cand_rng = rng.derive("pfds/tree/candidates")
    split_rng = rng.derive("pfds/tree/split")
    leaf_rng = rng.derive("pfds/tree/leaf")
    structure = _structure(domain, h_max, struct_rng)
    fitted = _fit_nodes(domain, Z, yi, epsilon_level, t, structure, cand_rng, split_rng, leaf_rng)
    return PrivateTree(domain=domain, epsilon_level=epsilon_level, h_max=h_max, t=t, **structure, **fitted)


def _structure(domain: Domain, h_max: int, struct_rng: Csprng) -> dict[str, Any]:
    """Phase 1 of :func:`_grow`, data independent: every node's kind, split attribute, parent, depth and children
    (the arrays of :class:`PrivateTree` of those names)."""
    d = domain.n_features
    # Phase 1 - structure (data independent): selectAttribute (Alg. 3 lines 3, 17-20). A categorical
    # attribute is removed below the node that splits on it; numeric attributes can be reused.
    cat_cols = set(domain.categories)
    kind: list[int] = []
    feature: list[int] = []
    parent: list[int] = []
    depth: list[int] = []
    removed: list[frozenset[int]] = []
    children: list[list[int]] = []
    kind.append(_LEAF)
    feature.append(-1)
    parent.append(-1)
    depth.append(1)
    removed.append(frozenset())
    children.append([])
    n_leaves_open = 1
    i = 0
    while i < len(kind):
        h = depth[i]
        avail_n = d - len(removed[i])
        if h < h_max and avail_n > 0:
            if not removed[i]:
                a = int(struct_rng.integers(d))
            else:
                pool = [j for j in range(d) if j not in removed[i]]
                a = pool[int(struct_rng.integers(len(pool)))]
            if a in cat_cols:
                nb = int(domain.categories[a].size)
                rem = removed[i] | {a}
                kind[i] = _CATEGORICAL
            else:
                nb = 2
                rem = removed[i]
                kind[i] = _NUMERIC
            feature[i] = a
            n_leaves_open += nb - 1
            if n_leaves_open > MAX_LEAVES:
                raise InvalidParameterError(
                    f"the tree would have more than {MAX_LEAVES} leaves (categorical attributes multiply the "
                    "branching); lower `h_max`",
                    "h_max",
                )
            for _ in range(nb):
                children[i].append(len(kind))
                kind.append(_LEAF)
                feature.append(-1)
                parent.append(i)
                depth.append(h + 1)
                removed.append(rem)
                children.append([])
        i += 1

    n_nodes = len(kind)
    kind_a = np.asarray(kind, dtype=np.int64)
    feature_a = np.asarray(feature, dtype=np.int64)
    parent_a = np.asarray(parent, dtype=np.int64)
    depth_a = np.asarray(depth, dtype=np.int64)
    max_branch = max(1, max(len(c) for c in children))
    children_a = np.full((n_nodes, max_branch), -1, dtype=np.int64)
    for k, c in enumerate(children):
        children_a[k, : len(c)] = c

    return {"kind": kind_a, "feature": feature_a, "parent": parent_a, "depth": depth_a, "children": children_a}


def _fit_nodes(
    domain: Domain,
    Z: np.ndarray,
    yi: np.ndarray,
    epsilon_level: float,
    t: int,
    structure: dict[str, np.ndarray],
    cand_rng: Csprng,
    split_rng: Csprng,
    leaf_rng: Csprng,
) -> dict[str, Any]:
    """Phase 2 of :func:`_grow`, on the data: every node's box, split threshold and candidates, the leaves' noisy
    counts and labels, and the levels that split (the arrays of :class:`PrivateTree` of those names)."""
    d = domain.n_features
    n_classes = domain.n_classes
    kind_a, feature_a, depth_a, children_a = (structure[k] for k in ("kind", "feature", "depth", "children"))
    n_nodes = len(kind_a)
    # Phase 2 - data: split selection (Alg. 3 lines 5, 21-23) and leaf counts (lines 13-15).
    root_lo, root_hi = domain.index_box()
    lower = np.empty((n_nodes, d))
    upper = np.empty((n_nodes, d))
    lower[0], upper[0] = root_lo, root_hi
    threshold = np.full(n_nodes, np.nan)
    candidates = np.full((n_nodes, t), np.nan)
    leaf_counts = np.full((n_nodes, n_classes), np.nan)
    leaf_label = np.full(n_nodes, -1, dtype=np.int64)
    rows: list[np.ndarray | None] = [None] * n_nodes
    rows[0] = np.arange(Z.shape[0])
    split_levels: set[int] = set()
    scale = 1.0 / epsilon_level
    for k in range(n_nodes):  # breadth-first: parents before children
        idx = rows[k]
        assert idx is not None
        rows[k] = None
        if kind_a[k] == _LEAF:
            true = np.bincount(yi[idx], minlength=n_classes)
            noisy = np.array([float(c + leaf_rng.discrete_laplace(scale)) for c in true])
            leaf_counts[k] = noisy
            leaf_label[k] = int(np.argmax(noisy))
            continue
        a = int(feature_a[k])
        ch = children_a[k][children_a[k] >= 0]
        for c in ch:
            lower[c], upper[c] = lower[k], upper[k]
        if kind_a[k] == _NUMERIC:
            lo, hi = lower[k, a], upper[k, a]
            # line 21: t values from the attribute's *active* (public) interval at this node
            cand = lo + cand_rng.uniform_array(t) * (hi - lo)
            candidates[k] = cand
            x = Z[idx, a]
            v = float(cand[_select_split(x, yi[idx], cand, n_classes, epsilon_level, split_rng)])
            threshold[k] = v
            split_levels.add(int(depth_a[k]))
            upper[ch[0], a] = v
            lower[ch[1], a] = v
            go = x >= v
            rows[ch[0]] = idx[~go]
            rows[ch[1]] = idx[go]
        else:
            x = Z[idx, a].astype(np.int64)
            order = np.argsort(x, kind="stable")
            bounds = np.searchsorted(x[order], np.arange(len(ch) + 1))
            for b, c in enumerate(ch):
                lower[c, a], upper[c, a] = float(b), float(b + 1)
                rows[c] = idx[order[bounds[b] : bounds[b + 1]]]
    return {
        "threshold": threshold,
        "candidates": candidates,
        "lower": lower,
        "upper": upper,
        "leaf_counts": leaf_counts,
        "leaf_label": leaf_label,
        "split_levels": sorted(split_levels),
    }


#: Most candidate split values per numeric split (``t``): each candidate is scored over the node's rows.
MAX_SPLIT_CANDIDATES = 1 << 20


def check_mechanism_epsilon(epsilon: float, name: str, what: str) -> None:
    """Refuse a budget whose per-mechanism epsilon (``what``, e.g. ``"epsilon / (2 h_max)"``) the ledger cannot
    record (outside [MIN_EVENT_EPSILON, MAX_EPSILON] of :mod:`dpsumm.accounting`; below it the Laplace scale also
    leaves the sampler's range), naming ``name``, before any noise is drawn."""
    if not MIN_EVENT_EPSILON <= epsilon <= MAX_EPSILON:
        raise InvalidParameterError(
            f"`{name}` gives each mechanism {what} = {epsilon:g}, outside "
            f"[{MIN_EVENT_EPSILON:g}, {MAX_EPSILON:g}] (the range a privacy ledger records)",
            name,
        )


#: Largest ``h_max`` (every level below it splits each node in two or more: beyond 19 levels a tree over any numeric
#: attribute has more than MAX_LEAVES leaves; only an all-categorical domain stops earlier).
MAX_TREE_DEPTH = 1024


def _check_tree_params(h_max: object, t: object) -> tuple[int, int]:
    return bounded_int(h_max, "h_max", 1, MAX_TREE_DEPTH), bounded_int(t, "t", 1, MAX_SPLIT_CANDIDATES)


def make_tree(
    X: object,
    y: object,
    domain: Domain,
    epsilon_level: float,
    h_max: int = 8,
    t: int = 10,
    random_state: object = None,
) -> PrivateTree:
    r"""Grow a differentially private decision tree (paper Algorithm 3, *makeTree*).

    Level 1 is the root; nodes at levels ``h < h_max`` split, nodes at level ``h_max`` are leaves
    (a node also becomes a leaf when no attribute is left, which can only happen when every
    attribute is categorical). At an inner node:

    * *selectAttribute* (lines 17-20): an attribute ``a`` uniformly at random from those still
      available; a categorical attribute is removed below the node. Data independent.
    * numeric ``a`` - *selectSplit* (lines 21-23): ``t`` candidate values ``V`` uniform on the node's
      active interval of ``a`` (from the public domain and the ancestors' thresholds), then
      ``v ∈ V`` by the exponential mechanism (Theorem 2.5) with probability
      :math:`\propto \exp(\varepsilon_\ell\, u(D, a, v) / (2\Delta_u))`, :math:`\Delta_u = 1`, with the
      Max operator :math:`u` (:func:`max_operator_scores`). Children: ``a < v`` and ``a >= v``.
    * categorical ``a`` (lines 9-10): one child per category of the domain.

    At a leaf (lines 13-15): :math:`c_l = |D^{y=l}| + \mathrm{Lap}(1/\varepsilon_\ell)` for every
    class ``l`` (discrete Laplace on the integers), label :math:`\arg\max_l c_l`.

    Privacy (Theorem 3.1): under add/remove of one row, each level's split selections compose in
    parallel (the nodes of a level partition the data) to :math:`\varepsilon_\ell`, over the
    ``h_max - 1`` split levels; the leaf counts have L1 sensitivity 1: ``h_max * epsilon_level`` in
    total. PFDS uses ``epsilon_level = epsilon / (2 h_max)`` (Algorithm 2 line 2).

    Parameters
    ----------
    X : array (n, d)
        The agent's rows, inside ``domain``.
    y : array (n,)
        Labels: classes of ``domain.classes`` or reals in ``domain.label_range`` (bucketed).
    domain : Domain
        The public domain.
    epsilon_level : float
        Budget of each level.
    h_max : int, default 8
    t : int, default 10
    random_state : None, int or Csprng
        None: OS entropy (private). An int: reproducible and NOT private.

    Returns
    -------
    PrivateTree
    """
    domain = instance_of(domain, Domain, "domain", "a dpsumm.pfds.Domain")
    eps = positive_float(epsilon_level, "epsilon_level")
    check_mechanism_epsilon(eps, "epsilon_level", "epsilon_level")
    h, tt = _check_tree_params(h_max, t)
    Xa = domain.check_rows(X, "X")
    yi = domain.check_labels(y, Xa.shape[0], "y")
    rng = check_random_state(random_state)
    return _grow(domain, domain.to_index(Xa), yi, eps, h, tt, rng)
