r"""PFDS: privacy-preserving federated data sharing (Fioretto & Van Hentenryck, AAMAS 2019).

Every agent k holds a private labelled dataset :math:`D_k` (the :math:`D_k` partition the population).
PFDS (paper Algorithm 1) runs two phases locally at every *sharer*:

1. **Predictor sharing** (Algorithm 2/3, :func:`make_tree`): a differentially private decision tree
   :math:`\tilde\phi_k` grown on :math:`D_k` with budget :math:`\varepsilon/(2h_{\max})` per level,
   shared with the other agents.
2. **Data sharing** (Algorithm 4/5, :func:`opt_private_gen` and :func:`share_data`): noisy counts of
   the top tree levels, a consistency-constrained weighted least-squares fit of the partition sizes,
   synthetic rows sampled uniformly inside each leaf's box, labelled by the majority vote of all
   sharers' trees (PFDS) or by the agent's own tree only (PFDS(s)).

:func:`pfds` runs the protocol for all agents and returns each sharer's synthetic dataset and one
privacy :class:`~dpsumm.accounting.Ledger` per agent; :func:`pfds_training_set` returns the union of
the shared datasets (what a consumer trains on).

Privacy (exact statement)
-------------------------
Neighbour relation: **add/remove one row** (features and label) of one agent's dataset
:math:`D_k`; the other agents' data are fixed. Under it

* the Max-operator score of a split (Eq. in Section 3.1, :func:`max_operator_scores`) has
  sensitivity :math:`\Delta_u = 1` (the added row raises one class count on one side by one, so
  each of the two maxima moves by at most one and only one of them moves);
* a vector of per-class counts over a partition (the leaves, or the nodes of one level) has
  :math:`L_1` sensitivity 1.

All measurements are pure :math:`\varepsilon`-DP; the ledger composes them by basic composition to
exactly :math:`\varepsilon` (Theorem 3.3) when every split level holds a numeric split:
:math:`(h_{\max}-1)\cdot\frac{\varepsilon}{2h_{\max}}` (split selections, one per level by parallel
composition over the nodes of a level) :math:`+\ \frac{\varepsilon}{2h_{\max}}` (leaf class counts)
:math:`+\ (p-1)\cdot\frac{\varepsilon}{2(p-1)}` (level counts of Algorithm 5). Everything else
(labels, least squares, sampling, majority vote) is post-processing (Theorem 2.3). Because the
:math:`D_k` are disjoint, an individual is protected at the :math:`\varepsilon` of the one agent
that holds their row (parallel composition across agents). Under **replace-one** (a row of
:math:`D_k` changed, :math:`|D_k|` public) every sensitivity doubles, so the same run is
:math:`2\varepsilon`-DP.

Noise. Leaf and level counts use the discrete Laplace mechanism on the integers,
:math:`P(z)\propto e^{-\varepsilon|z|}` (:meth:`Csprng.discrete_laplace`), which is
:math:`\varepsilon`-DP for integer queries of sensitivity 1; split selection uses the exact
exponential mechanism :meth:`Csprng.exponential_mechanism`, probability
:math:`\propto \exp(\varepsilon u / (2\Delta_u))`. All randomness (including the public candidate
values and the synthetic rows) comes from :class:`dpsumm.Csprng`. ``random_state=None`` (OS entropy)
is the only private mode; a fixed seed is reproducible and **not private**.

Differences from the authors' research code (DESIGN §8): split candidates are selected by the
exponential mechanism (not scored on noise-free counts and taken as is); attribute bounds come from a
public :class:`Domain`, never from the private rows; the least squares are solved exactly with SciPy's
non-negative least squares (Lawson-Hanson; no commercial solver); there is no fixed default seed.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from ._validation import positive_float, positive_int
from .accounting import ACCOUNTANTS, ExponentialEvent, LaplaceEvent, Ledger, Neighbour, _format_table
from .errors import InvalidParameterError
from .privacy import Csprng, check_random_state

__all__ = [
    "Domain",
    "PFDSLedger",
    "PFDSResult",
    "PrivateTree",
    "SyntheticData",
    "make_tree",
    "max_operator_scores",
    "opt_private_gen",
    "pfds",
    "pfds_training_set",
    "share_data",
    "partition_agents",
    "REGRESSION_BUCKETS",
    "NEIGHBOUR",
]

#: Number of label buckets for regression (Section 3.1: "discretizes Y into b = 10 buckets").
REGRESSION_BUCKETS = 10
#: The neighbour relation under which every ε in this module holds.
NEIGHBOUR: Neighbour = "add-remove"
#: Refuse trees with more leaves than this (categorical attributes multiply the branching).
MAX_LEAVES = 1 << 18
#: The exact dense non-negative least squares (Lawson-Hanson) is used up to this many leaves; above
#: it, a sparse trust-region solve (tolerance 1e-12) is used instead.
_DENSE_MAX_LEAVES = 4096


# ----------------------------------------------------------------------------------------------
# the public domain
# ----------------------------------------------------------------------------------------------


class Domain:
    r"""The public data domain: bounds of every numeric attribute, the values of every categorical
    attribute, and the label set.

    The domain must be public knowledge (a data dictionary, physical limits, a published schema):
    PFDS draws split candidates and synthetic rows from it, and never reads bounds from private
    rows. Rows outside the domain are rejected (:class:`~dpsumm.errors.InvalidParameterError`).

    Parameters
    ----------
    bounds : sequence of (float, float) or None, or array of shape (d, 2)
        ``bounds[j] = (low, high)`` with ``low < high`` for a numeric attribute j (values in the
        closed interval ``[low, high]``); ``None`` (or a row of NaN) for a categorical attribute,
        which must then appear in ``categories``.
    categories : mapping int -> sequence of float, optional
        ``categories[j]`` lists the distinct values (numeric codes) attribute j can take.
    classes : sequence, optional
        The label set for classification. Exactly one of ``classes`` and ``label_range``.
    label_range : (float, float), optional
        ``(low, high)`` of a real label, for regression: labels are mapped to
        :data:`REGRESSION_BUCKETS` equal-width buckets over this range (Section 3.1).

    Examples
    --------
    MNIST (pixels scaled to [0, 1], ten digits):

    >>> mnist = Domain.box(784, 0.0, 1.0, classes=range(10))
    >>> mnist.n_features, mnist.n_classes
    (784, 10)
    """

    def __init__(
        self,
        bounds: Any,
        categories: Mapping[int, Sequence[float]] | None = None,
        *,
        classes: Sequence[Any] | None = None,
        label_range: tuple[float, float] | None = None,
    ) -> None:
        cats = {} if categories is None else categories
        if not isinstance(cats, Mapping):
            raise InvalidParameterError("`categories` must be a mapping {column: [values]}", "categories")
        if isinstance(bounds, np.ndarray):
            arr = np.asarray(bounds, dtype=np.float64)
            if arr.ndim != 2 or arr.shape[1] != 2:
                raise InvalidParameterError(f"`bounds` must have shape (d, 2), got {arr.shape}", "bounds")
            rows: list[Any] = [None if np.isnan(r).all() else (float(r[0]), float(r[1])) for r in arr]
        else:
            try:
                rows = list(bounds)
            except TypeError as exc:
                raise InvalidParameterError("`bounds` must be a sequence of (low, high) or None", "bounds") from exc
        d = len(rows)
        if d == 0:
            raise InvalidParameterError("`bounds` must describe at least one attribute", "bounds")
        lower = np.full(d, np.nan)
        upper = np.full(d, np.nan)
        self.categories: dict[int, np.ndarray] = {}
        for j, cj in cats.items():
            if isinstance(j, bool) or not isinstance(j, numbers.Integral) or not 0 <= int(j) < d:
                raise InvalidParameterError(f"`categories` key {j!r} is not a column index in [0, {d})", "categories")
            vals = np.asarray(list(cj), dtype=np.float64)
            if vals.ndim != 1 or vals.size == 0 or not np.isfinite(vals).all():
                raise InvalidParameterError(f"`categories[{j}]` must be a non-empty list of finite numbers", "categories")
            if np.unique(vals).size != vals.size:
                raise InvalidParameterError(f"`categories[{j}]` has repeated values", "categories")
            self.categories[int(j)] = np.sort(vals)
        for j, b in enumerate(rows):
            if j in self.categories:
                if b is not None:
                    raise InvalidParameterError(
                        f"attribute {j} has both bounds and categories; give `bounds[{j}] = None`", "bounds"
                    )
                continue
            if b is None:
                raise InvalidParameterError(f"missing bounds for numeric attribute {j} (and no categories)", "bounds")
            try:
                lo, hi = (float(v) for v in b)
            except (TypeError, ValueError) as exc:
                raise InvalidParameterError(f"`bounds[{j}]` must be a pair (low, high), got {b!r}", "bounds") from exc
            if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
                raise InvalidParameterError(
                    f"`bounds[{j}]` must be finite with low < high, got ({lo!r}, {hi!r})", "bounds"
                )
            lower[j], upper[j] = lo, hi
        self.lower = lower
        self.upper = upper
        self.n_features = d
        self.is_categorical = np.zeros(d, dtype=bool)
        self.is_categorical[list(self.categories)] = True
        if (classes is None) == (label_range is None):
            raise InvalidParameterError(
                "give exactly one of `classes` (classification) and `label_range` (regression)", "classes"
            )
        self.classes: np.ndarray | None = None
        self.label_range: tuple[float, float] | None = None
        if classes is not None:
            cl = np.asarray(list(classes))
            if cl.ndim != 1 or cl.size < 2:
                raise InvalidParameterError("`classes` must list at least two labels", "classes")
            if np.unique(cl).size != cl.size:
                raise InvalidParameterError("`classes` has repeated labels", "classes")
            self.classes = np.sort(cl)
        else:
            try:
                lo, hi = (float(v) for v in label_range)  # type: ignore[union-attr]
            except (TypeError, ValueError) as exc:
                raise InvalidParameterError("`label_range` must be a pair (low, high)", "label_range") from exc
            if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
                raise InvalidParameterError("`label_range` must be finite with low < high", "label_range")
            self.label_range = (lo, hi)

    @classmethod
    def box(
        cls,
        n_features: int,
        lower: float | Sequence[float],
        upper: float | Sequence[float],
        *,
        classes: Sequence[Any] | None = None,
        label_range: tuple[float, float] | None = None,
    ) -> Domain:
        """An all-numeric domain ``[lower, upper]^d`` (scalars broadcast)."""
        d = positive_int(n_features, "n_features")
        lo = np.broadcast_to(np.asarray(lower, dtype=np.float64), (d,))
        hi = np.broadcast_to(np.asarray(upper, dtype=np.float64), (d,))
        return cls(np.stack([lo, hi], axis=1), classes=classes, label_range=label_range)

    @property
    def task(self) -> str:
        """``"classification"`` or ``"regression"``."""
        return "classification" if self.classes is not None else "regression"

    @property
    def n_classes(self) -> int:
        """Number of label classes the trees count (``REGRESSION_BUCKETS`` for regression)."""
        return REGRESSION_BUCKETS if self.classes is None else int(self.classes.size)

    def index_box(self) -> tuple[np.ndarray, np.ndarray]:
        """The root box in *index space*: numeric columns ``[lower, upper]``; categorical column j
        ``[0, len(categories[j]))`` (a category is the integer index of its value)."""
        lo = self.lower.copy()
        hi = self.upper.copy()
        for j, vals in self.categories.items():
            lo[j], hi[j] = 0.0, float(vals.size)
        return lo, hi

    # --- validation of private inputs (no randomness is used here) ---

    def check_rows(self, X: object, name: str) -> np.ndarray:
        """``X`` as float64 (n, d) inside the domain; raises naming ``name`` otherwise."""
        try:
            arr = np.asarray(X)
        except Exception as exc:  # pragma: no cover
            raise InvalidParameterError(f"`{name}` cannot be converted to an array: {exc}", name) from exc
        if arr.dtype.kind not in "fiub":
            raise InvalidParameterError(f"`{name}` must hold real numbers, got dtype {arr.dtype}", name)
        if arr.ndim != 2:
            raise InvalidParameterError(f"`{name}` must be 2-D (rows x features), got {arr.ndim}-D", name)
        if arr.shape[1] != self.n_features:
            raise InvalidParameterError(
                f"`{name}` has {arr.shape[1]} features per row, the domain has {self.n_features}", name
            )
        arr = np.asarray(arr, dtype=np.float64)
        if arr.shape[0] == 0:
            return arr
        # column reductions first (no (n, d) temporaries on the common, valid path)
        col_min, col_max = arr.min(axis=0), arr.max(axis=0)
        if not (np.isfinite(col_min).all() and np.isfinite(col_max).all()):
            r, c = np.argwhere(~np.isfinite(arr))[0]
            raise InvalidParameterError(f"`{name}` contains NaN or infinite values (row {r}, attribute {c})", name)
        num = ~self.is_categorical
        if num.any() and ((col_min[num] < self.lower[num]).any() or (col_max[num] > self.upper[num]).any()):
            bad = ((arr < self.lower) | (arr > self.upper)) & num
            if bad.any():
                r, c = np.argwhere(bad)[0]
                j = int(c)
                raise InvalidParameterError(
                    f"`{name}` row {r} attribute {j} = {arr[r, j].item()!r} lies outside the domain bounds "
                    f"[{self.lower[j].item()!r}, {self.upper[j].item()!r}]",
                    name,
                )
        for j, vals in self.categories.items():
            col = arr[:, j]
            pos = np.clip(np.searchsorted(vals, col), 0, vals.size - 1)
            bad = vals[pos] != col
            if bad.any():
                r = int(np.flatnonzero(bad)[0])
                raise InvalidParameterError(
                    f"`{name}` row {r} attribute {j} has unknown category {col[r].item()!r} (known: {vals.tolist()})", name
                )
        return arr

    def to_index(self, X: np.ndarray) -> np.ndarray:
        """Rows in index space (categorical values replaced by their index). ``X`` already checked."""
        if not self.categories:
            return X
        out = X.copy()
        for j, vals in self.categories.items():
            out[:, j] = np.searchsorted(vals, X[:, j])
        return cast(np.ndarray, out)

    def from_index(self, Z: np.ndarray) -> np.ndarray:
        """Inverse of :meth:`to_index` (indices are floored)."""
        if not self.categories:
            return Z
        out = Z.copy()
        for j, vals in self.categories.items():
            out[:, j] = vals[np.clip(np.floor(Z[:, j]).astype(np.int64), 0, vals.size - 1)]
        return cast(np.ndarray, out)

    def check_labels(self, y: object, n: int, name: str) -> np.ndarray:
        """Labels as class indices in ``[0, n_classes)`` (regression: bucket indices)."""
        arr = np.asarray(y)
        if arr.ndim != 1 or arr.shape[0] != n:
            raise InvalidParameterError(f"`{name}` must be 1-D with {n} labels (one per row), got shape {arr.shape}", name)
        if n == 0:
            return np.zeros(0, dtype=np.int64)
        if self.classes is not None:
            if arr.dtype.kind == "f" and not np.isfinite(arr).all():
                raise InvalidParameterError(f"`{name}` contains NaN or infinite values", name)
            try:
                pos = np.clip(np.searchsorted(self.classes, arr), 0, self.classes.size - 1)
                bad = self.classes[pos] != arr
            except TypeError as exc:
                raise InvalidParameterError(f"`{name}` labels are not comparable with the domain's classes", name) from exc
            if np.any(bad):
                r = int(np.flatnonzero(bad)[0])
                raise InvalidParameterError(
                    f"`{name}` row {r} has unknown label {arr[r].item()!r} (classes: {self.classes.tolist()})", name
                )
            return pos.astype(np.int64)
        if arr.dtype.kind not in "fiu":
            raise InvalidParameterError(f"`{name}` must hold real numbers for regression, got dtype {arr.dtype}", name)
        v = arr.astype(np.float64)
        if not np.isfinite(v).all():
            raise InvalidParameterError(f"`{name}` contains NaN or infinite values", name)
        lo, hi = self.label_range  # type: ignore[misc]
        bad = (v < lo) | (v > hi)
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            raise InvalidParameterError(f"`{name}` row {r} label {v[r].item()!r} lies outside label_range [{lo}, {hi}]", name)
        return self.bucket(v)

    def bucket(self, y: np.ndarray) -> np.ndarray:
        """Regression labels -> bucket index in ``[0, REGRESSION_BUCKETS)``."""
        lo, hi = self.label_range  # type: ignore[misc]
        b = np.floor((y - lo) / (hi - lo) * REGRESSION_BUCKETS).astype(np.int64)
        return cast(np.ndarray, np.clip(b, 0, REGRESSION_BUCKETS - 1))

    def __repr__(self) -> str:
        label = f"classes={self.classes.tolist()}" if self.classes is not None else f"label_range={self.label_range}"
        return f"Domain(n_features={self.n_features}, categorical={sorted(self.categories)}, {label})"


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


def _grow(domain: Domain, Z: np.ndarray, yi: np.ndarray, epsilon_level: float, h_max: int, t: int,
          rng: Csprng) -> PrivateTree:
    """Algorithm 3 on validated inputs (index space). Breadth first; see :func:`make_tree`."""
    d = domain.n_features
    n_classes = domain.n_classes
    struct_rng = rng.derive("pfds/tree/structure")
    cand_rng = rng.derive("pfds/tree/candidates")
    split_rng = rng.derive("pfds/tree/split")
    leaf_rng = rng.derive("pfds/tree/leaf")

    # Phase 1 - structure (data independent): selectAttribute (Alg. 3 lines 3, 17-20). A categorical
    # attribute is removed below the node that splits on it; numeric attributes can be reused.
    cat_cols = set(domain.categories)
    kind: list[int] = []
    feature: list[int] = []
    parent: list[int] = []
    depth: list[int] = []
    removed: list[frozenset[int]] = []
    children: list[list[int]] = []
    kind.append(_LEAF); feature.append(-1); parent.append(-1); depth.append(1); removed.append(frozenset()); children.append([])
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
                kind.append(_LEAF); feature.append(-1); parent.append(i); depth.append(h + 1)
                removed.append(rem); children.append([])
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
    return PrivateTree(
        domain=domain,
        epsilon_level=epsilon_level,
        h_max=h_max,
        t=t,
        kind=kind_a,
        feature=feature_a,
        threshold=threshold,
        candidates=candidates,
        children=children_a,
        parent=parent_a,
        depth=depth_a,
        lower=lower,
        upper=upper,
        leaf_counts=leaf_counts,
        leaf_label=leaf_label,
        split_levels=sorted(split_levels),
    )


def _check_tree_params(h_max: object, t: object) -> tuple[int, int]:
    return positive_int(h_max, "h_max"), positive_int(t, "t")


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
    if not isinstance(domain, Domain):
        raise InvalidParameterError("`domain` must be a dpsumm.pfds.Domain", "domain")
    eps = positive_float(epsilon_level, "epsilon_level")
    h, tt = _check_tree_params(h_max, t)
    Xa = domain.check_rows(X, "X")
    yi = domain.check_labels(y, Xa.shape[0], "y")
    rng = check_random_state(random_state)
    return _grow(domain, domain.to_index(Xa), yi, eps, h, tt, rng)


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


def _solve_wls(incidence: np.ndarray, node_noisy: np.ndarray, node_w: np.ndarray, leaf_noisy: np.ndarray,
               leaf_w: float) -> np.ndarray:
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
    leaf_of_row = np.repeat(leaves, leaf_size)
    d = tree.domain.n_features
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
    if not isinstance(tree, PrivateTree):
        raise InvalidParameterError("`tree` must be a PrivateTree from make_tree", "tree")
    p = _check_levels(levels, tree.h_max)
    eps = positive_float(epsilon, "epsilon")
    Z = tree.domain.to_index(tree.domain.check_rows(X, "X"))
    return _opt_private_gen(tree, Z, p, eps, check_random_state(random_state))


# ----------------------------------------------------------------------------------------------
# labelling (Algorithm 4)
# ----------------------------------------------------------------------------------------------


def _vote(Z: np.ndarray, trees: Sequence[PrivateTree], rng: Csprng) -> np.ndarray:
    """Majority vote of the trees' leaf labels (class / bucket index); ties broken uniformly at random."""
    n = Z.shape[0]
    k = trees[0].domain.n_classes
    votes = np.zeros((n, k))
    rows = np.arange(n)
    for tr in trees:
        np.add.at(votes, (rows, tr._predict_index(Z)), 1.0)
    if len(trees) > 1 and n:
        votes += 0.5 * rng.uniform_array(n * k).reshape(n, k)  # < 1: only reorders ties, uniformly
    return np.argmax(votes, axis=1) if n else np.zeros(0, dtype=np.int64)


def _labels_from_index(domain: Domain, idx: np.ndarray, rng: Csprng) -> np.ndarray:
    if domain.classes is not None:
        return cast(np.ndarray, domain.classes[idx])
    lo, hi = domain.label_range  # type: ignore[misc]
    width = (hi - lo) / REGRESSION_BUCKETS
    u = rng.uniform_array(idx.size) if idx.size else np.zeros(0)
    return lo + (idx + u) * width


def share_data(X_synthetic: object, trees: Sequence[PrivateTree], random_state: object = None) -> np.ndarray:
    r"""Label synthetic rows by the majority vote of the shared trees (paper Algorithm 4, lines 4-7).

    For every row, each tree :math:`\tilde\phi_j` predicts its leaf label; the label voted most
    often wins (ties uniformly at random). For regression the vote is over the
    :data:`REGRESSION_BUCKETS` label buckets and the label is drawn uniformly inside the winning
    bucket (Section 3.2.2). Pass the agent's own tree only for the PFDS(s) variant.

    Post-processing of private trees and private rows: costs nothing.

    Parameters
    ----------
    X_synthetic : array (N, d)
    trees : sequence of PrivateTree
        Trees on the same domain.
    random_state : None, int or Csprng

    Returns
    -------
    ndarray (N,)
        Classes of ``domain.classes``, or reals for regression.
    """
    if isinstance(trees, PrivateTree):
        trees = [trees]
    if isinstance(trees, (str, bytes, np.ndarray)) or not isinstance(trees, Sequence):
        raise InvalidParameterError("`trees` must be a non-empty sequence of PrivateTree", "trees")
    trees = list(trees)
    if not trees or not all(isinstance(tr, PrivateTree) for tr in trees):
        raise InvalidParameterError("`trees` must be a non-empty sequence of PrivateTree", "trees")
    domain = trees[0].domain
    if any(tr.domain is not domain for tr in trees):
        raise InvalidParameterError("`trees` must all be grown on the same Domain object", "trees")
    Z = domain.to_index(domain.check_rows(X_synthetic, "X_synthetic"))
    rng = check_random_state(random_state)
    return _labels_from_index(domain, _vote(Z, trees, rng.derive("pfds/vote")), rng.derive("pfds/label"))


# ----------------------------------------------------------------------------------------------
# the protocol (Algorithm 1)
# ----------------------------------------------------------------------------------------------


class PFDSLedger(Ledger):
    """A :class:`~dpsumm.accounting.Ledger` of one PFDS agent: its notes and table describe PFDS.

    Every entry is party ``"owners"``: a release computed from this agent's rows, ε under add/remove
    of one of its rows.
    """

    def notes(self) -> list[str]:
        return [
            "PFDS agent: every epsilon is w.r.t. adding or removing one row (features and label) of this "
            "agent's data; under replace-one it doubles.",
            "Agents' data are disjoint: an individual is protected at the epsilon of the agent holding their row.",
        ]

    def table(self, delta_owners: float | None = None, delta_validation: float | None = None) -> str:
        """A plain-text table of this agent's ε by accountant at ``delta_owners`` (default 1e-4)."""
        d = self._default_delta("owners") if delta_owners is None else delta_owners
        evs = self.events("owners")
        vals = {name: fn(evs, d) for name, fn in ACCOUNTANTS.items()}
        return _format_table([("agent", d, vals)], self.notes())


@dataclass
class PFDSResult:
    """Output of :func:`pfds`.

    Attributes
    ----------
    sharers : list of int
        Indices of the agents that shared (the set S).
    datasets : list of (X, y)
        Each sharer's shared dataset :math:`\\tilde D_k`, labelled by the majority vote of all the
        sharers' trees (PFDS), in the order of ``sharers``.
    own_label_datasets : list of (X, y)
        The same rows labelled by the sharer's own tree only (PFDS(s)).
    trees : list of PrivateTree
        The shared trees, in the order of ``sharers``.
    synthetic : list of SyntheticData
        Algorithm 5 details per sharer (noisy counts, fitted sizes).
    ledgers : list of Ledger
        One per agent (index = agent): every mechanism run on that agent's rows, party ``"owners"``,
        neighbour relation add/remove one row of that agent's data. Empty for non-sharers.
    epsilon : float
        The requested budget per agent.
    """

    sharers: list[int]
    datasets: list[tuple[np.ndarray, np.ndarray]]
    own_label_datasets: list[tuple[np.ndarray, np.ndarray]]
    trees: list[PrivateTree]
    synthetic: list[SyntheticData]
    ledgers: list[PFDSLedger]
    epsilon: float
    neighbour: str = NEIGHBOUR

    @property
    def ledger(self) -> PFDSLedger:
        """The ledger of the agent with the largest basic-composition ε: the guarantee for every
        individual (each row belongs to exactly one agent; parallel composition across agents)."""
        return max(self.ledgers, key=lambda led: led.epsilon("owners", 0.5, "basic"))

    def epsilon_spent(self) -> float:
        """Largest per-agent ε by basic composition (<= ``epsilon``; equal when every split level
        held a numeric split)."""
        return max(led.epsilon("owners", 0.5, "basic") for led in self.ledgers)

    def training_set(self, own_labels: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """The union of the shared datasets (PFDS labels, or PFDS(s) with ``own_labels=True``)."""
        data = self.own_label_datasets if own_labels else self.datasets
        X = np.concatenate([x for x, _ in data], axis=0)
        y = np.concatenate([yy for _, yy in data], axis=0)
        return X, y


def _check_agents(agents: object, labels: object, domain: Domain) -> tuple[list[np.ndarray], list[np.ndarray]]:
    if isinstance(agents, np.ndarray) or not isinstance(agents, Sequence) or len(agents) == 0:
        raise InvalidParameterError("`agents` must be a non-empty list of 2-D arrays (one per agent)", "agents")
    if isinstance(labels, np.ndarray) or not isinstance(labels, Sequence) or len(labels) != len(agents):
        raise InvalidParameterError(
            f"`labels` must be a list of 1-D arrays, one per agent ({len(agents)})", "labels"
        )
    Xs = [domain.check_rows(X, f"agents[{k}]") for k, X in enumerate(agents)]
    ys = [domain.check_labels(y, X.shape[0], f"labels[{k}]") for k, (X, y) in enumerate(zip(Xs, labels))]
    return Xs, ys


def pfds(
    agents: Sequence[object],
    labels: Sequence[object],
    domain: Domain,
    epsilon: float,
    h_max: int = 8,
    t: int = 10,
    levels: int = 4,
    random_state: object = None,
    *,
    sharers: Sequence[int] | None = None,
) -> PFDSResult:
    r"""Run PFDS (paper Algorithm 1, phases 1-2) for every agent.

    For every sharer k (Algorithms 2 and 4):

    1. :math:`\tilde\phi_k` = :func:`make_tree` on :math:`D_k` with ``epsilon_level = ε/(2 h_max)``
       (Algorithm 2 line 2): ε/2 in total (Theorem 3.1).
    2. :math:`\tilde X_k` = :func:`opt_private_gen` on :math:`(\tilde\phi_k, D_k)` with budget ε/2 and
       ``p = levels`` (Algorithm 4 line 2, Theorem 3.2).
    3. Labels by the majority vote of all sharers' trees (Algorithm 4 lines 4-7); the PFDS(s) labels
       (own tree only) are computed as well, on the same rows, for free.

    Each agent's data is touched only by its own mechanisms, so agent k's data is ε-DP under
    add/remove of one of its rows (Theorem 3.3); ``result.ledgers[k]`` records the releases.

    Parameters
    ----------
    agents : list of array (n_k, d)
        The agents' private rows, inside ``domain`` (checked: NaN, out-of-bounds values, unknown
        categories and labels are rejected before any randomness is used).
    labels : list of array (n_k,)
    domain : Domain
        Public domain. For MNIST: ``Domain.box(784, 0.0, 1.0, classes=range(10))``.
    epsilon : float
        Budget of every agent.
    h_max : int, default 8
        Maximum tree depth (levels; the root is level 1).
    t : int, default 10
        Candidate split values per numeric split.
    levels : int, default 4
        p of Algorithm 5, ``2 <= levels <= h_max``.
    random_state : None, int or Csprng
        None: OS entropy, the only private mode. An int: reproducible and NOT private.
    sharers : list of int, optional
        The set S (default: every agent).

    Returns
    -------
    PFDSResult
    """
    if not isinstance(domain, Domain):
        raise InvalidParameterError("`domain` must be a dpsumm.pfds.Domain", "domain")
    eps = positive_float(epsilon, "epsilon")
    h, tt = _check_tree_params(h_max, t)
    p = _check_levels(levels, h)
    Xs, ys = _check_agents(agents, labels, domain)
    m = len(Xs)
    if sharers is None:
        S = list(range(m))
    else:
        try:
            S = [int(k) for k in sharers]
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError("`sharers` must be a list of agent indices", "sharers") from exc
        if not S or len(set(S)) != len(S) or any(not 0 <= k < m for k in S):
            raise InvalidParameterError(f"`sharers` must be distinct agent indices in [0, {m})", "sharers")
    rng = check_random_state(random_state)

    Zs = [domain.to_index(X) for X in Xs]
    trees = [_grow(domain, Zs[k], ys[k], eps / (2 * h), h, tt, rng.derive(f"pfds/agent{k}/tree")) for k in S]
    synth = [_opt_private_gen(tr, Zs[k], p, eps / 2, rng.derive(f"pfds/agent{k}/optgen")) for k, tr in zip(S, trees)]
    datasets = []
    own = []
    for k, tr, sd in zip(S, trees, synth):
        Z = domain.to_index(sd.X)
        lab_rng = rng.derive(f"pfds/agent{k}/label")
        y_all = _labels_from_index(domain, _vote(Z, trees, lab_rng.derive("vote")), lab_rng.derive("all"))
        y_own = _labels_from_index(domain, _vote(Z, [tr], lab_rng.derive("vote-own")), lab_rng.derive("own"))
        datasets.append((sd.X, y_all))
        own.append((sd.X, y_own))
    ledgers = [PFDSLedger() for _ in range(m)]
    for k, tr, sd in zip(S, trees, synth):
        for label, ev in tr.events() + sd.events():
            ledgers[k].record("owners", ev, label=f"agent {k}: {label}")
    result = PFDSResult(
        sharers=S, datasets=datasets, own_label_datasets=own, trees=trees, synthetic=synth, ledgers=ledgers,
        epsilon=eps,
    )
    spent = result.epsilon_spent()
    assert spent <= eps * (1 + 1e-12), (spent, eps)
    return result


def pfds_training_set(
    agents: Sequence[object],
    labels: Sequence[object],
    domain: Domain,
    epsilon: float,
    random_state: object = None,
    **kwargs: Any,
) -> tuple[np.ndarray, np.ndarray]:
    """The union of all agents' PFDS datasets: what a consumer trains on.

    Runs :func:`pfds` (keyword arguments ``h_max``, ``t``, ``levels``, ``sharers`` are passed on) and
    returns ``(X, y)``. Each agent's data is ``epsilon``-DP under add/remove of one of its rows. For
    MNIST use ``Domain.box(784, 0.0, 1.0, classes=range(10))`` with pixels scaled to [0, 1]
    (:func:`dpsumm.datasets.mnist` with ``normalize=True``).
    """
    return pfds(agents, labels, domain, epsilon, random_state=random_state, **kwargs).training_set()


def partition_agents(
    X: np.ndarray, n_agents: int, attribute: int, low: float, high: float, rng: np.random.Generator
) -> np.ndarray:
    r"""Section 4's agent partition (experiments only; not private, uses numpy's generator).

    Agent i gets an anchor :math:`a_i \sim U[\text{low}, \text{high}]`; a row goes to agent i with
    probability :math:`\propto 1/|x_a - a_i|`. Returns the agent index of every row.
    """
    anchors: np.ndarray = rng.uniform(low, high, size=n_agents)
    dist = np.abs(X[:, attribute][:, None] - anchors[None, :])
    w = 1.0 / np.maximum(dist, 1e-12 * (high - low))
    w /= w.sum(axis=1, keepdims=True)
    u = np.asarray(rng.uniform(size=X.shape[0]))
    return cast(np.ndarray, np.minimum((np.cumsum(w, axis=1) < u[:, None]).sum(axis=1), n_agents - 1))
