"""dpsumm.flower.server_app: result files that lie about their privacy are refused by load_result; the owners' public
sizes bound a lying owner node; the entry point makes its object pulls first retry after the poll interval."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import dpsumm
from certification_paths import run_paths
from dpsumm.accounting.ledger import CERTIFIED
from node_grid import NodeGrid


@pytest.fixture(scope="module")
def results():
    return run_paths()


@pytest.mark.parametrize("tamper", ["certification", "seeded", "uncertified", "garbage"])
def test_flower_result_files_that_lie_are_refused(results, tmp_path, tamper):
    pytest.importorskip("flwr")
    from dpsumm.flower.server_app import load_result, save_result

    p = save_result(results["purchase='winners'"], tmp_path / "r.npz")
    if tamper == "garbage":
        p.write_bytes(b"PK\x03\x04" + bytes(200))
    else:
        with np.load(p, allow_pickle=False) as z:
            arrays = dict(z)
        report = json.loads(str(arrays["report"]))
        if tamper == "certification":
            report["certification"]["status"] = CERTIFIED
        elif tamper == "seeded":
            report["seeded"] = "false"
        else:
            report["privacy"]["uncertified"] = []
        arrays["report"] = np.array(json.dumps(report))
        np.savez(p, **arrays)
    with pytest.raises(dpsumm.DpsummError):
        load_result(p)


def _inflated(reply: Any) -> Any:
    """An owner's reply with its row count inflated tenfold, in every message alike (its statements agree)."""
    return dataclasses.replace(reply, n_rows=reply.n_rows * 10) if hasattr(reply, "n_rows") else reply


@pytest.mark.parametrize("public_sizes", [True, False], ids=["owner-rows", "no-owner-rows"])
def test_an_owner_node_that_inflates_its_row_count_is_excluded_by_the_public_sizes(
    tmp_path: Path, task_identity: None, public_sizes: bool
) -> None:
    """Fault injection on Flower (the ServerApp's run over the ClientApp's handlers, no process spawned): owner-0's
    node states ten times its rows in every reply. With the run config's `owner-rows` (the owners' public sizes, as
    the in-process API takes them from the rows it is given) the aggregator's check excludes it at its first reply
    and the summary keeps its size from the others; without them its consistent statements pass that check."""
    from dpsumm.flower.config import FlowerRunConfig
    from dpsumm.flower.server_app import run_summary

    rng = np.random.default_rng(4)
    configs: dict[int, dict[str, Any]] = {}
    for k in range(3):
        np.save(tmp_path / f"o{k}.npy", rng.normal(size=(80, 3)) * 0.3 + 0.5)
        configs[k + 1] = {"role": "owner", "name": f"owner-{k}", "data": str(tmp_path / f"o{k}.npy")}
    np.save(tmp_path / "v.npy", rng.normal(size=(50, 3)) * 0.3 + 0.6)
    configs[9] = {"role": "consumer", "name": "consumer", "data": str(tmp_path / "v.npy")}
    run_config: dict[str, Any] = {"owners": 3, "n-features": 3, "size": 8, "reply-timeout": 5.0, "node-wait": 5.0}
    if public_sizes:
        run_config["owner-rows"] = "owner-0=80,owner-1=80,owner-2=80"
    grid = NodeGrid(configs, run_config, tamper={1: _inflated})
    result = run_summary(grid, FlowerRunConfig.from_run_config(run_config))  # type: ignore[arg-type]
    excluded = {e["owner"]: e["reason"] for e in result.events if e.get("event") == "excluded"}
    if public_sizes:
        assert list(excluded) == ["owner-0"] and "public size is 80" in excluded["owner-0"]
        assert len(result) == 8 and 0 not in set(result.owner.tolist())
    else:
        assert "owner-0" not in excluded


def test_public_sizes_must_name_the_owner_nodes(task_identity: None) -> None:
    from dpsumm.flower.server_app import check_owner_rows

    check_owner_rows({"a": 3, "b": 4}, {"a": 1, "b": 2})
    check_owner_rows(None, {"a": 1})
    with pytest.raises(dpsumm.ProtocolError, match=r"`owner-rows` names the owners \['a', 'c'\]"):
        check_owner_rows({"a": 3, "c": 4}, {"a": 1, "b": 2})


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        ("scale", "age=0:1", "node config `scale`"),
        ("features", "age", "no header line"),
        ("data", "/nonexistent.npy", "node config `data`"),
    ],
)
def test_a_node_config_its_node_refuses_stops_the_run_before_any_release(
    tmp_path: Path, task_identity: None, key: str, value: str, match: str
) -> None:
    """Plan, then spend, on Flower: a node whose ClientApp cannot read its own node config (a range by name on a
    headerless file, a column a .npy has not, a missing file) refuses at its hello; the ServerApp stops at discovery,
    naming the node and the key, and no protocol message (no release) is ever sent."""
    from dpsumm.flower.config import FlowerRunConfig
    from dpsumm.flower.server_app import run_summary

    rng = np.random.default_rng(1)
    for name in ("o0", "o1", "v"):
        np.save(tmp_path / f"{name}.npy", rng.uniform(size=(30, 2)))
    configs: dict[int, dict[str, Any]] = {
        1: {"role": "owner", "name": "owner-0", "data": str(tmp_path / "o0.npy")},
        2: {"role": "owner", "name": "owner-1", "data": str(tmp_path / "o1.npy")},
        3: {"role": "consumer", "name": "consumer", "data": str(tmp_path / "v.npy"), key: value},
    }
    run_config: dict[str, Any] = {"owners": 2, "n-features": 2, "size": 4, "node-wait": 5.0}
    grid = NodeGrid(configs, run_config)
    with pytest.raises(dpsumm.ProtocolError, match=match):
        run_summary(grid, FlowerRunConfig.from_run_config(run_config))  # type: ignore[arg-type]
    assert set(grid.sent) == {"query.dpsumm_hello"}


@pytest.mark.parametrize("run_config,first_retry", [({}, 0.05), ({"poll-interval": 0.3}, 0.3)])
def test_the_serverapp_entry_point_makes_its_object_pulls_first_retry_after_the_poll_interval(
    monkeypatch, run_config, first_retry
):
    """Flower's ServerApp process is the run's alone: its entry point (not run_summary, which a user's own ServerApp
    may call) patches its object pulls with the run config's poll interval before it runs anything."""
    pytest.importorskip("flwr")
    from flwr.app import Context, RecordDict

    from dpsumm.flower import server_app

    calls: list[float] = []

    class Stop(Exception):
        pass

    def run_summary(grid: Any, cfg: Any) -> None:
        assert calls == [first_retry]  # patched before the run starts
        raise Stop

    monkeypatch.setattr(server_app, "patch_object_pulls", calls.append)
    monkeypatch.setattr(server_app, "run_summary", run_summary)
    context = Context(
        run_id=1,
        node_id=1,
        node_config={},
        state=RecordDict(),
        run_config={"size": 3, "n-features": 2, "owners": 2, **run_config},
    )
    with pytest.raises(Stop):
        server_app.main(None, context)  # type: ignore[arg-type]
    assert calls == [first_retry]
