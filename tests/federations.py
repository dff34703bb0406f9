"""The tests' local Flower federations: one labelled federation a test module shares (:class:`SharedFederation`),
time limits derived from a run's work rather than fixed (:func:`work_bound`, :func:`run_bound`), and the check that
every process a federation started is gone (:func:`assert_gone`)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import dpsumm
from dpsumm.flower import LocalFederation
from dpsumm.flower.local import flower_env, group_members
from federation_data import _labelled_data


def assert_gone(pids: dict[str, int], family: list[int]) -> None:
    """Every process group the test started is empty and every descendant seen before stopping is gone
    (zombies awaiting their reaper do not count)."""
    for name, pid in pids.items():
        left = group_members(pid)
        assert not left, f"processes {left} of {name}'s group (pid {pid}) are still alive"
    alive = [p for p in family if group_members(p) or _alive(p)]
    assert not alive, f"processes {alive} started under the federation are still alive"


def _alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def spawn_seconds() -> float:
    """What one message costs a node on this machine now: the slower of two starts of a Python process that imports
    the ClientApp, as Flower starts one (``flwr-clientapp``) for every message a SuperNode answers."""
    times = []
    for _ in range(2):
        t0 = time.monotonic()
        subprocess.run(
            [sys.executable, "-c", "import dpsumm.flower.client_app"], check=True, env=flower_env(), timeout=600
        )
        times.append(time.monotonic() - t0)
    return max(times)


def work_bound(requests: int, parties: int) -> float:
    """Seconds a federated run may take, derived from its work and measured in the same run rather than fixed: every
    request (and each party's hello) starts a ClientApp process, and the SuperLink, the SuperNodes, their
    SuperExecs and the ServerApp start once each; each start is allowed 4 times what one costs now, plus the nodes'
    polls. A loaded machine makes the unit, and so the bound, longer; an idle one shorter."""
    starts = requests + parties + 2 * parties + 2
    return max(170.0, 4.0 * starts * spawn_seconds() + 0.5 * requests)


def run_bound(ref: dpsumm.SummaryResult, parties: int) -> float:
    """:func:`work_bound` for a federated run that mirrors the in-process run ``ref``: each of its exchanges asks
    every party at most once."""
    exchanges = int(ref.extra.get("exchanges", 3))
    return work_bound(exchanges * parties, parties)


@dataclasses.dataclass
class SharedFederation:
    """One federation for a module's equality tests (starting one costs a SuperLink, four SuperNodes and their
    SuperExecs): three labelled owners and a consumer with labels, strata from CSV node configs. A SuperLink keeps
    no state of a run that another run could read, so the tests' runs are independent of their order."""

    fed: LocalFederation
    owners: dict[str, np.ndarray]
    labels: dict[str, np.ndarray]
    validation: np.ndarray
    validation_labels: np.ndarray
    strata: dict[str, list[np.ndarray]]
    paths: dict[str, Path]
    label_paths: dict[str, Path]
    vpath: Path
    ypath: Path
    workdir: Path

    def plain_owners(self) -> list[dpsumm.Owner]:
        return [dpsumm.Owner(a, name=n) for n, a in self.owners.items()]


STRATA_NAMES = np.array(["low", "mid", "high"])


def shared_federation(tmp_path_factory: pytest.TempPathFactory, *, tls: bool) -> Iterator[SharedFederation]:
    """A :class:`SharedFederation` (over TLS with node authentication when ``tls``) for a module-scoped fixture to
    yield from: closed after the module's last test, and every process it started must then be gone."""
    tmp = tmp_path_factory.mktemp("shared-federation")
    owners, labels, validation, yv, paths, label_paths, vpath, ypath = _labelled_data(tmp)
    strata, strata_paths = {}, {}
    for n, y in [*labels.items(), ("consumer", yv)]:
        strata[n] = [STRATA_NAMES[y], (np.arange(len(y)) % 2).astype(np.int64)]
        strata_paths[n] = tmp / f"{n}-strata.csv"
        strata_paths[n].write_text("band,parity\n" + "".join(f"{a},{b}\n" for a, b in zip(*strata[n])))
    fed = LocalFederation(
        tmp / "fed",
        paths,
        vpath,
        labels=label_paths,
        consumer_labels=ypath,
        strata=strata_paths,
        tls=tls,
        node_auth=tls,
        allow_seeded=True,
        node_poll_interval=0.1,
    )
    pids: dict[str, int] = {}
    try:
        fed.start()
        pids = fed.pids
        assert len(pids) == 5  # the SuperLink, three owners, the consumer
        yield SharedFederation(fed, owners, labels, validation, yv, strata, paths, label_paths, vpath, ypath, tmp)
    finally:
        family = fed.all_pids()
        fed.close()
    assert_gone(pids, family)
