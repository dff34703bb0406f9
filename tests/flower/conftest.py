"""Fixtures of the Flower tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture
def task_identity() -> Iterator[None]:
    """Flower builds message metadata from the running task's identity; fake one outside a ServerApp."""
    pytest.importorskip("flwr")
    from flwr.supercore.task_identity import TaskIdentity

    saved = (TaskIdentity._task_id, TaskIdentity._run_id, TaskIdentity._node_id)
    TaskIdentity.task_id, TaskIdentity.run_id, TaskIdentity.node_id = 1, 1, 0
    yield
    TaskIdentity._task_id, TaskIdentity._run_id, TaskIdentity._node_id = saved
