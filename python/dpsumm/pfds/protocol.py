"""The protocol (Algorithm 1): every agent shares a tree and synthetic data; one ledger per agent."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from .._validation import bounded_int, finite_float, float_matrix, instance_of, positive_float
from ..accounting import ACCOUNTANTS, Ledger, _format_table
from ..errors import InvalidParameterError
from ..privacy import check_random_state
from .domain import NEIGHBOUR, Domain
from .labelling import _labels_from_index, _vote
from .synthetic import SyntheticData, _check_levels, _opt_private_gen
from .tree import PrivateTree, _check_tree_params, _grow, check_mechanism_epsilon

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
        raise InvalidParameterError(f"`labels` must be a list of 1-D arrays, one per agent ({len(agents)})", "labels")
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
    domain = instance_of(domain, Domain, "domain", "a dpsumm.pfds.Domain")
    eps = positive_float(epsilon, "epsilon")
    h, tt = _check_tree_params(h_max, t)
    p = _check_levels(levels, h)
    # the tree's levels and the level counts (eps/2 each), checked before any noise is drawn
    check_mechanism_epsilon(eps / (2 * h), "epsilon", "epsilon / (2 h_max)")
    check_mechanism_epsilon(eps / 2 / (p - 1), "epsilon", "epsilon / 2 / (levels - 1)")
    Xs, ys = _check_agents(agents, labels, domain)
    m = len(Xs)
    if sharers is None:
        S = list(range(m))
    else:
        if (
            isinstance(sharers, (str, bytes))
            or not hasattr(sharers, "__iter__")
            or any(isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral) for k in sharers)
        ):
            raise InvalidParameterError("`sharers` must be a list of agent indices (integers)", "sharers")
        S = [int(k) for k in sharers]
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
        sharers=S,
        datasets=datasets,
        own_label_datasets=own,
        trees=trees,
        synthetic=synth,
        ledgers=ledgers,
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
    unknown = sorted(set(kwargs) - {"h_max", "t", "levels", "sharers"})
    if unknown:
        raise InvalidParameterError(
            f"pfds_training_set() got an unexpected keyword `{unknown[0]}` (it passes h_max, t, "
            "levels and sharers on to pfds)",
            unknown[0],
        )
    return pfds(agents, labels, domain, epsilon, random_state=random_state, **kwargs).training_set()


#: Most agents, and most row x agent weights (float64), of :func:`partition_agents`.
MAX_AGENTS = 1 << 16
MAX_PARTITION_WEIGHTS = 1 << 26


def partition_agents(
    X: np.ndarray, n_agents: int, attribute: int, low: float, high: float, rng: np.random.Generator
) -> np.ndarray:
    r"""Section 4's agent partition (experiments only; not private, uses numpy's generator).

    Agent i gets an anchor :math:`a_i \sim U[\text{low}, \text{high}]`; a row goes to agent i with
    probability :math:`\propto 1/|x_a - a_i|`. Returns the agent index of every row.
    """
    arr = float_matrix(X, "X", allow_empty=True)
    k = bounded_int(n_agents, "n_agents", 1, MAX_AGENTS)
    j = bounded_int(attribute, "attribute", 0, arr.shape[1] - 1)
    low = finite_float(low, "low")
    high = finite_float(high, "high")
    if not low < high:
        raise InvalidParameterError(f"`high` must be above `low`, got ({low:g}, {high:g})", "high")
    if not math.isfinite(high - low):
        raise InvalidParameterError(f"`high` - `low` overflows: ({low:g}, {high:g})", "high")
    if not isinstance(rng, np.random.Generator):
        raise InvalidParameterError(f"`rng` must be a numpy.random.Generator, got {type(rng).__name__}", "rng")
    if arr.shape[0] * k > MAX_PARTITION_WEIGHTS:
        raise InvalidParameterError(
            f"`n_agents`: {arr.shape[0]} rows x {k} agents exceed the cap of {MAX_PARTITION_WEIGHTS} weights",
            "n_agents",
        )
    X, n_agents, attribute = arr, k, j
    anchors: np.ndarray = rng.uniform(low, high, size=n_agents)
    dist = np.abs(X[:, attribute][:, None] - anchors[None, :])
    w = 1.0 / np.maximum(dist, 1e-12 * (high - low))
    w /= w.sum(axis=1, keepdims=True)
    u = np.asarray(rng.uniform(size=X.shape[0]))
    return cast(np.ndarray, np.minimum((np.cumsum(w, axis=1) < u[:, None]).sum(axis=1), n_agents - 1))
