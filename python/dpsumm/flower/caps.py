"""Node-side privacy caps: the most ``(epsilon, delta)`` a Flower node's party spends in one run.

The run config is chosen by whoever starts the run, not by the parties: were it enough, a run starter could ask the
consumer for its hashed mean at ``epsilon_v = 100`` (a release with almost no noise) or an owner for its counts at an
epsilon of its choosing. As for ``allow-seeded`` and ``allow-exact-release``, only the node's own operator decides:
node config ``max-epsilon`` and ``max-delta`` cap what the node's party releases over a run (its releases composed
by basic composition, the sum of their epsilons and of their deltas, which bounds any tighter accounting). The
consumer's node has a conservative default (:data:`CONSUMER_DEFAULT_CAPS`); an owner's node has none unless its
operator sets one. A request that would take the node above its cap is refused by the node, naming the key, before
it draws anything; the node tells its caps in its hello, so that the ServerApp refuses a run config above them
before anything is sent to anybody (:func:`check_run_caps`).

What a request costs (:func:`request_cost`) the request says itself (:meth:`dpsumm.messages.Message.spend`): its
``epsilon`` (times its ``steps`` for the paper's h2, whose steps each spend ``epsilon``) and its ``delta`` (0 for a
pure release). A request answered again with the kept release (the
same request twice, or the second part of a release in two parts, which composes to no more than the one release) is
free: the spend is kept per kind of release, the most asked of each kind. The exact, noiseless releases are governed
by ``allow-exact-release`` instead.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from ..errors import InvalidParameterError, ProtocolError

__all__ = [
    "MAX_EPSILON",
    "MAX_DELTA",
    "CONSUMER_DEFAULT_CAPS",
    "node_caps",
    "request_cost",
    "check_request",
    "check_run_caps",
    "planned_spend",
]

#: Node config key: the most epsilon this node's party spends in one run.
MAX_EPSILON = "max-epsilon"
#: Node config key: the most delta this node's party spends in one run.
MAX_DELTA = "max-delta"
#: The consumer node's caps when its config sets none: four times the nominations protocol's default ``epsilon_v``
#: (1) and ten times its ``delta_v`` (1e-6). A run asking more (the paper protocol's own schedules spend
#: ``t_init * 0.01`` on the validation set) needs the consumer's operator to raise them.
CONSUMER_DEFAULT_CAPS = (4.0, 1e-5)


def _cap(node_config: Mapping[str, Any], key: str, default: float) -> float:
    raw = node_config.get(key)
    if raw is None or (isinstance(raw, str) and raw == ""):
        return default
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(float(raw)) or raw < 0:
        raise InvalidParameterError(f"node config `{key}` must be a finite number >= 0, got {raw!r:.60}", key)
    if key == MAX_DELTA and raw >= 1:
        raise InvalidParameterError(f"node config `{key}` must be below 1, got {raw!r:.60}", key)
    return float(raw)


def node_caps(node_config: Mapping[str, Any], role: str) -> tuple[float, float]:
    """``(max-epsilon, max-delta)`` of a node: its config's, else the consumer's default, else no cap (inf, 1)."""
    eps_default, delta_default = CONSUMER_DEFAULT_CAPS if role == "consumer" else (math.inf, 1.0)
    return _cap(node_config, MAX_EPSILON, eps_default), _cap(node_config, MAX_DELTA, delta_default)


def request_cost(request: Any) -> tuple[str, float, float] | None:
    """``(release, epsilon, delta)`` that answering ``request`` may spend, as the request itself says
    (:meth:`dpsumm.messages.Message.spend`), or None for a request that releases nothing under a budget (a bid, a row,
    an exact release: the latter governed by ``allow-exact-release``); ProtocolError for a malformed one."""
    try:
        cost = request.spend()
        if cost is None:
            return None
        release, eps, delta = str(cost[0]), float(cost[1]), float(cost[2])
    except (TypeError, ValueError):
        raise ProtocolError(f"a {request.kind!r} request carries a malformed epsilon or delta") from None
    if not (math.isfinite(eps) and eps >= 0 and math.isfinite(delta) and 0 <= delta < 1):
        raise ProtocolError(f"a {request.kind!r} request asks epsilon {eps!r} and delta {delta!r}")
    return release, eps, delta


def check_request(
    request: Any, node_config: Mapping[str, Any], role: str, name: str, spent_json: str | None
) -> str | None:
    """Refuse ``request`` (ProtocolError naming the node config key) when answering it would take this node's party
    above its caps over the run; else the run's spend with it, as JSON to keep in node state (None: it costs
    nothing). ``spent_json`` is what the node kept (None before its first release)."""
    cost = request_cost(request)
    if cost is None:
        return None
    max_eps, max_delta = node_caps(node_config, role)
    try:
        spent = {str(k): (float(v[0]), float(v[1])) for k, v in json.loads(spent_json or "{}").items()}
    except (ValueError, TypeError, KeyError, IndexError):
        raise ProtocolError(f"{role} {name!r}: its kept privacy spend is malformed") from None
    release, eps, delta = cost
    had = spent.get(release, (0.0, 0.0))
    spent[release] = (max(had[0], eps), max(had[1], delta))
    total_eps = math.fsum(e for e, _ in spent.values())
    total_delta = math.fsum(d for _, d in spent.values())
    for key, total, cap in ((MAX_EPSILON, total_eps, max_eps), (MAX_DELTA, total_delta, max_delta)):
        if total > cap * (1 + 1e-12):
            raise ProtocolError(
                f"{role} {name!r}: the run asks it to spend {key[4:]} {total:.6g} in all ({request.kind} at "
                f"{key[4:]} {eps if key == MAX_EPSILON else delta:.6g}), above this node's cap of {cap:.6g} "
                f"(node config {key}); its operator may raise it"
            )
    return json.dumps({k: list(v) for k, v in sorted(spent.items())})


def check_run_caps(
    caps: Mapping[str, tuple[float, float]], planned: Mapping[str, tuple[float, float]], consumer: str
) -> None:
    """Refuse a run whose planned spend of a party is above the caps its node said in its hello (ProtocolError
    naming the party and the node config key), before anything is sent. ``planned`` maps party name (owners
    under ``"owners"``) to its ``(epsilon, delta)``."""
    for party, (max_eps, max_delta) in caps.items():
        plan = planned.get("consumer" if party == consumer else "owners")
        if plan is None:
            continue
        for key, value, cap in ((MAX_EPSILON, plan[0], max_eps), (MAX_DELTA, plan[1], max_delta)):
            if value > cap * (1 + 1e-12):
                raise ProtocolError(
                    f"the run config asks party {party!r} to spend {key[4:]} {value:.6g}, above its node's cap of "
                    f"{cap:.6g} (node config {key} on that SuperNode); lower the run's budget or ask its operator"
                )


def planned_spend(method: Any, cfg: Any, plan: Any) -> dict[str, tuple[float, float]]:
    """What the run will ask each party to spend, as far as the run config says before anything is sent
    (:meth:`dpsumm.protocols.base.SummaryMethod.planned_spend` at the run config's budget; none for a method that
    is not private). A party left out is still held to its node's caps by the node itself
    (:func:`dpsumm.flower.caps.check_request`)."""
    if not method.private:
        return {}
    spend: dict[str, tuple[float, float]] = method.planned_spend(cfg.budget, plan)
    return spend
