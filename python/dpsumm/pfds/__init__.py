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

from .domain import NEIGHBOUR, REGRESSION_BUCKETS, Domain
from .labelling import share_data
from .protocol import PFDSLedger, PFDSResult, partition_agents, pfds, pfds_training_set
from .synthetic import SyntheticData, opt_private_gen
from .tree import PrivateTree, make_tree, max_operator_scores

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
