"""dpsumm.flower.caps: each node's operator caps what its party spends in a run (node config max-epsilon, max-delta;
the consumer's node with a conservative default); a request above the cap is refused by the node, naming the key,
before it releases anything, and the ServerApp refuses a run config above a node's caps before sending anything."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pytest

import dpsumm
from consumer_requests import REQUESTS
from dpsumm.flower.caps import (
    CONSUMER_DEFAULT_CAPS,
    check_request,
    check_run_caps,
    node_caps,
    planned_spend,
    request_cost,
)
from dpsumm.flower.config import FlowerRunConfig
from refusal import refused

flwr = pytest.importorskip("flwr", reason="Flower is not installed: pip install 'dpsumm[flower]' (flwr==1.41.0)")

#: The consumer's target release at (1, 1e-6), the nominations protocol's default budget.
TARGET = dataclasses.replace(REQUESTS["target gaussian"], delta=1e-6)


def test_what_a_request_costs():
    assert request_cost(REQUESTS["target gaussian"]) == ("hashed_mean", 1.0, 1e-3)
    assert request_cost(REQUESTS["target mwem"]) == ("hashed_mean", 0.5 * 3, 0.0)  # h2: steps x epsilon
    assert request_cost(REQUESTS["validation h2"]) == ("hashed_mean", 0.5 * 3, 0.0)
    assert request_cost(REQUESTS["label histogram"]) == ("cell_histogram_request", 1.0, 0.0)
    assert request_cost(dataclasses.replace(REQUESTS["target gaussian"], release="exact")) is None
    assert request_cost(dpsumm.messages.BidRequest(round=0, v=np.zeros(2))) is None
    with pytest.raises(dpsumm.ProtocolError):
        request_cost(dataclasses.replace(REQUESTS["target gaussian"], epsilon=float("nan")))


def test_node_caps_from_the_node_config():
    assert node_caps({}, "consumer") == CONSUMER_DEFAULT_CAPS
    assert node_caps({}, "owner") == (math.inf, 1.0)
    assert node_caps({"max-epsilon": 0.5, "max-delta": 1e-7}, "owner") == (0.5, 1e-7)
    for bad in (-1.0, float("inf"), "2", True):
        refused(lambda bad=bad: node_caps({"max-epsilon": bad}, "consumer"), "max-epsilon")
    refused(lambda: node_caps({"max-delta": 1.0}, "consumer"), "max-delta")


def test_a_request_above_the_cap_is_refused_naming_it_and_the_run_is_summed():
    big = dataclasses.replace(TARGET, epsilon=100.0)
    with pytest.raises(dpsumm.ProtocolError, match=r"consumer 'c'.*100.*cap of 4.*node config max-epsilon"):
        check_request(big, {}, "consumer", "c", None)
    with pytest.raises(dpsumm.ProtocolError, match="node config max-delta"):
        check_request(dataclasses.replace(big, epsilon=1.0, delta=1e-4), {}, "consumer", "c", None)
    # The run's releases add up: a histogram at 3 after a target at 1 is 4 (at the cap), at 3.5 it is above.
    spent = check_request(TARGET, {}, "consumer", "c", None)
    hist = REQUESTS["label histogram"]
    assert json.loads(check_request(dataclasses.replace(hist, epsilon=3.0), {}, "consumer", "c", spent))
    with pytest.raises(dpsumm.ProtocolError, match="max-epsilon"):
        check_request(dataclasses.replace(hist, epsilon=3.5), {}, "consumer", "c", spent)
    # The same release asked again is free; an owner's node without a cap allows any epsilon, one with refuses.
    assert check_request(TARGET, {}, "consumer", "c", spent) == spent
    assert check_request(big, {}, "owner", "o", None) is not None
    with pytest.raises(dpsumm.ProtocolError, match="owner 'o'.*max-epsilon"):
        check_request(REQUESTS["label histogram"], {"max-epsilon": 0.5}, "owner", "o", None)
    with pytest.raises(dpsumm.ProtocolError, match="malformed"):
        check_request(big, {}, "consumer", "c", "not json")


def test_the_consumer_node_refuses_epsilon_100_before_releasing(tmp_path: Path) -> None:
    """Through the ClientApp's handler: the node refuses, keeps nothing (no release, no spend), then answers a run
    within its cap."""
    from flwr.app import Context, Message, RecordDict
    from flwr.supercore.task_identity import TaskIdentity

    from dpsumm.flower.client_app import handle
    from dpsumm.flower.codec import decode, encode

    saved = (TaskIdentity._task_id, TaskIdentity._run_id, TaskIdentity._node_id)
    TaskIdentity.task_id, TaskIdentity.run_id, TaskIdentity.node_id = 1, 1, 0
    try:
        np.save(tmp_path / "v.npy", np.random.default_rng(0).random((30, 3)))
        ctx = Context(
            run_id=1,
            node_id=1,
            node_config={"role": "consumer", "name": "c", "data": str(tmp_path / "v.npy")},
            state=RecordDict(),
            run_config={},
        )
        big = dataclasses.replace(TARGET, epsilon=100.0)
        msg = Message(encode(big), dst_node_id=1, message_type="query.dpsumm")
        with pytest.raises(dpsumm.ProtocolError, match="max-epsilon"):
            handle(msg, ctx)
        assert list(ctx.state.keys()) == []  # nothing released, nothing kept
        ok = Message(encode(TARGET), dst_node_id=1, message_type="query.dpsumm")
        reply = decode(handle(ok, ctx).content)
        assert isinstance(reply, dpsumm.messages.TargetRelease)
        assert "dpsumm.spent" in ctx.state.keys()
    finally:
        TaskIdentity._task_id, TaskIdentity._run_id, TaskIdentity._node_id = saved


def test_the_server_app_refuses_a_run_config_above_a_nodes_caps_before_sending() -> None:
    base = {"n-features": 3, "owners": 2, "size": 5}
    caps = {"o1": (math.inf, 1.0), "o2": (0.5, 1e-6), "c": CONSUMER_DEFAULT_CAPS}
    cfg = FlowerRunConfig.from_run_config({**base, "budget-validation-epsilon": 100.0})
    plan = cfg.method.plan(
        size=5, owners=2, owner_rows=None, validation_rows=None, privacy=cfg.budget, gamma_median=False
    )
    # the default purchase (by cells along the consumer's direction): the consumer's 100 and the owners' default 1
    assert planned_spend(cfg.method, cfg, plan) == {"consumer": (100.0, 1e-6), "owners": (1.0, 1e-6)}
    with pytest.raises(dpsumm.ProtocolError, match=r"party 'c'.*100.*max-epsilon"):
        check_run_caps({"c": CONSUMER_DEFAULT_CAPS}, planned_spend(cfg.method, cfg, plan), "c")
    # The default nominations run is within the consumer's default cap; a label purchase's owners' epsilon 1 is
    # above o2's cap of 0.5.
    cfg = FlowerRunConfig.from_run_config({**base, "purchase": "labels", "label-set": "0,1"})
    planned = planned_spend(cfg.method, cfg, plan)
    assert planned == {"consumer": (1.0, 1e-6), "owners": (1.0, 1e-6)}
    with pytest.raises(dpsumm.ProtocolError, match=r"party 'o2'.*max-epsilon"):
        check_run_caps(caps, planned, "c")
    check_run_caps({"c": CONSUMER_DEFAULT_CAPS}, planned, "c")


def test_a_local_federation_sets_the_consumers_caps_in_its_node_config(tmp_path: Path) -> None:
    from dpsumm.flower import LocalFederation

    fed = LocalFederation(tmp_path, {"o": tmp_path / "o.npy"}, tmp_path / "v.npy", consumer_caps=(6.0, 2e-5))
    cmd = fed.supernode_command("consumer", "consumer", tmp_path / "v.npy", 0)
    assert "max-epsilon=6.0 max-delta=2e-05" in cmd[cmd.index("--node-config") + 1]
    owner = fed.supernode_command("o", "owner", tmp_path / "o.npy", 0)
    assert "max-epsilon" not in owner[owner.index("--node-config") + 1]
