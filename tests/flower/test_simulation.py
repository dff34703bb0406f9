"""dpsumm.flower.simulation: every party a virtual SuperNode on Flower's Simulation Engine gives the in-process
summary at the same seed, and every process the run started is gone after it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import dpsumm
from dpsumm.flower.local import group_members

pytest.importorskip("flwr", reason="Flower is not installed: pip install 'dpsumm[flower]' (flwr==1.41.0)")

K, ROWS, N_FEATURES, SIZE, DIM, RANDOM_STATE = 5, 200, 6, 12, 64, 11


def _federation(tmp_path: Path) -> tuple[object, list[dpsumm.Owner], np.ndarray]:
    from dpsumm.flower.simulation import SimulatedFederation

    rng = np.random.default_rng(5)
    owners, paths = [], {}
    for k in range(K):
        rows = rng.uniform(size=(ROWS, N_FEATURES)) ** (1 + k % 3)
        paths[f"owner-{k}"] = tmp_path / f"owner-{k}.npy"
        np.save(paths[f"owner-{k}"], rows)
        owners.append(dpsumm.Owner(rows, name=f"owner-{k}"))
    validation = rng.uniform(size=(150, N_FEATURES)) ** 2
    np.save(tmp_path / "validation.npy", validation)
    fed = SimulatedFederation(tmp_path / "sim", paths, tmp_path / "validation.npy", allow_seeded=True, cpus=2)
    return fed, owners, validation


def test_the_node_list_holds_each_partys_deployment_node_config(tmp_path: Path) -> None:
    """Virtual node i answers as entry i: the owners in order, then the consumer, with the keys a deployment's
    operator gives (absolute paths, the seeded-run opt-in)."""
    fed, _, _ = _federation(tmp_path)
    nodes = json.loads(fed.write_nodes().read_text())
    assert [n["name"] for n in nodes] == [f"owner-{k}" for k in range(K)] + ["consumer"]
    assert [n["role"] for n in nodes] == ["owner"] * K + ["consumer"]
    assert nodes[0] == {
        "role": "owner",
        "name": "owner-0",
        "data": str((tmp_path / "owner-0.npy").resolve()),
        "allow-seeded": True,
    }
    assert nodes[-1]["data"] == str((tmp_path / "validation.npy").resolve())


@pytest.mark.slow
def test_a_simulated_federation_equals_the_in_process_run(tmp_path: Path) -> None:
    """Five owners and the consumer on the Simulation Engine (one Ray start): the same rows, accesses, exchanges and
    privacy ledger as dpsumm.summarize at the same seed; the run's process group is empty afterwards."""
    fed, owners, validation = _federation(tmp_path)
    method = dpsumm.Nominations(dim=DIM)
    ref = dpsumm.summarize(owners, validation, SIZE, method, random_state=RANDOM_STATE, progress=False)
    res = fed.run({"size": SIZE, "n-features": N_FEATURES, "dim": DIM, "random-state": RANDOM_STATE}, timeout=900)
    np.testing.assert_array_equal(res.owner, ref.owner)
    np.testing.assert_array_equal(res.index, ref.index)
    np.testing.assert_array_equal(res.points, ref.points)
    np.testing.assert_array_equal(res.hashes, ref.hashes)
    assert res.accessed == ref.accessed
    assert res.extra["exchanges"] == ref.extra["exchanges"] and res.events == []
    assert res.privacy is not None and res.privacy == ref.privacy
    assert sorted(res.extra["node_ids"]) == ["consumer", *[f"owner-{k}" for k in range(K)]]
    assert fed.pid is not None and group_members(fed.pid) == []
