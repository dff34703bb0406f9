"""Labelling (Algorithm 4): the majority vote of the sharers' trees."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from ..errors import InvalidParameterError
from ..privacy import Csprng, check_random_state
from .domain import REGRESSION_BUCKETS, Domain
from .tree import PrivateTree

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
