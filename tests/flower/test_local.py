"""dpsumm on Flower through dpsumm.flower.local.LocalFederation: a real SuperLink and one SuperNode per party on
127.0.0.1, each a separate process. One federation over TLS with node authentication serves the paper's protocol and
the nominations (default and Winners purchases), each equal to the in-process run, and refuses an unregistered node;
a killed owner is excluded (its own federation); the consumer's exact release needs its own opt-in; every process a
federation started is gone afterwards. (The cell purchases on Flower: tests/contract/test_flower_purchases.py. Whether
a ServerApp refuses a purchase that needs labels on nodes without them is checked without a federation, in
test_client_app.py.)
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import dpsumm  # noqa: E402
from dpsumm import accounting  # noqa: E402
from dpsumm.flower import FederationError, LocalFederation, make_node_key  # noqa: E402
from dpsumm.flower.local import flower_env, free_port  # noqa: E402
from dpsumm.transport import InProcessTransport  # noqa: E402
from federation_data import _data
from federations import SharedFederation, assert_gone, run_bound, shared_federation, work_bound

#: Spawns processes (the inner loop skips them: pytest -m "not slow"; CI runs them).
pytestmark = pytest.mark.slow

flwr = pytest.importorskip("flwr", reason="Flower is not installed: pip install 'dpsumm[flower]' (flwr==1.41.0)")


N_FEATURES, DIM, T_INIT = 5, 64, 300


SEED_SET, RANDOM_STATE = 20, 7


BOX = (-1.0, 3.0)


def _in_process(owners: dict[str, np.ndarray], validation: np.ndarray, size: int) -> dpsumm.SummaryResult:
    sched = dataclasses.replace(
        accounting.paper_schedule(size=size, owners=len(owners), dim=DIM), t_init=T_INIT, t_subs=5
    )
    return dpsumm.summarize(
        [dpsumm.Owner(a, name=n) for n, a in owners.items()],
        validation,
        size,
        method=dpsumm.PaperProtocol(dim=DIM, schedule=sched),
        seed_set=SEED_SET,
        gamma="median",  # the run config's default, as the API's
        random_state=RANDOM_STATE,
        progress=False,
        feature_range=BOX,
    )


def _run_config(size: int, **extra: object) -> dict[str, object]:
    return {
        "size": size,
        "method": "paper",
        "n-features": N_FEATURES,
        "dim": DIM,
        "t-init": T_INIT,
        "t-subs": 5,
        "seed-set": SEED_SET,
        "random-state": RANDOM_STATE,
        "feature-low": BOX[0],
        "feature-high": BOX[1],
        **extra,
    }


@pytest.fixture
def task_identity():  # noqa: ANN201
    """Flower builds message metadata from the running task's identity; fake one outside a ServerApp."""
    from flwr.supercore.task_identity import TaskIdentity

    saved = (TaskIdentity._task_id, TaskIdentity._run_id, TaskIdentity._node_id)
    TaskIdentity.task_id, TaskIdentity.run_id, TaskIdentity.node_id = 1, 1, 0
    yield
    TaskIdentity._task_id, TaskIdentity._run_id, TaskIdentity._node_id = saved


def test_a_supernode_whose_port_was_taken_is_started_again_on_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A SuperNode's runtime port was free a moment before the node binds it; another process (another federation
    on the machine) may take it first. start() sees that node exit before it has a node id and starts it again on
    another port: every party then has its node, and every process is gone after close()."""
    import socket

    from dpsumm.flower import local

    _, _, paths, vpath = _data(tmp_path)
    taken = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    handed: list[int] = []

    def first_node_gets_a_taken_port(host: str = "127.0.0.1") -> int:
        # call 0 is the SuperLink's port, call 1 the first SuperNode's
        handed.append(taken.getsockname()[1] if len(handed) == 1 else free_port(host))
        return handed[-1]

    monkeypatch.setattr(local, "free_port", first_node_gets_a_taken_port)
    fed = LocalFederation(tmp_path / "fed", paths, vpath, node_poll_interval=0.1, allow_seeded=True)
    pids: dict[str, int] = {}
    try:
        fed.start()
        pids = fed.pids
        first = fed.parties()[0][0]
        assert len(handed) == 1 + len(fed.parties()) + 1  # the SuperLink, every party once, the first one again
        assert all(p.popen.poll() is None for p in fed._procs.values())
        for name, *_ in fed.parties():
            assert local.NODE_READY in (tmp_path / "fed" / "logs" / f"supernode-{name}.log").read_text()
        assert str(handed[-1]) in " ".join(fed._procs[f"supernode-{first}"].popen.args)  # type: ignore[arg-type]
    finally:
        family = fed.all_pids()
        fed.close()
        taken.close()
    assert_gone(pids, family)


def test_owner_node_killed_mid_run(tmp_path: Path) -> None:
    """An owner's SuperNode vanishes (SIGKILL) once it has said hello: the nominations protocol excludes it at its
    next exchange, after `reply-timeout` seconds without a reply, and completes with the other owners' rows."""
    owners, validation, paths, vpath = _data(tmp_path)
    fed = LocalFederation(tmp_path / "fed", paths, vpath, node_poll_interval=0.1, allow_seeded=True)
    victim = "owner-1"
    try:
        fed.start()
        pids = fed.pids
        # 15 s: each message's ClientApp is forked from the node's warm process (dpsumm.flower.supernode), so a live
        # party answers within seconds even on a loaded machine, and the first messages (before the warm process is
        # up) within about 10 s (the victim is excluded after its first silent exchange and never asked again, so
        # this costs one timeout).
        _, out = fed.submit(
            {
                "size": 6,
                "n-features": N_FEATURES,
                "dim": DIM,
                "random-state": RANDOM_STATE,
                "method": "nominations",
                "purchase": "nominees",
                "reply-timeout": 15.0,
            }
        )
        # Kill the victim once it has answered the ServerApp's hello (its SuperNode logs each reply it sends): the
        # consumer's release comes next, then the owners' nominations.
        log = tmp_path / "fed" / "logs" / f"supernode-{victim}.log"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and log.read_text(errors="replace").count("Sent successfully") < 1:
            time.sleep(0.1)
        fed.stop_party(victim)
        res = fed.wait(out, timeout=240)
    finally:
        family = fed.all_pids()
        fed.close()
    assert_gone(pids, family)
    excluded = [e for e in res.events if e.get("event") == "excluded"]
    assert [e["owner"] for e in excluded] == [victim]
    # Normally at the nominations; at the purchase if the kill came after its nominations had gone out.
    assert excluded[0]["phase"] in ("nominations", "purchase")
    assert "no reply" in excluded[0]["reason"] or "Flower error" in excluded[0]["reason"]
    assert len(res) == 6
    assert res.owner_names.index(victim) not in set(res.owner.tolist())
    assert set(res.owner.tolist()) <= {res.owner_names.index(o) for o in owners if o != victim}


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedFederation]:
    """The module's federation, over TLS with a CA made here and node keys made here and registered."""
    yield from shared_federation(tmp_path_factory, tls=True)


def test_flower_run_equals_in_process_over_tls_with_node_authentication(
    shared: SharedFederation, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The paper's protocol on Flower equals the in-process run (SuperLink + 3 owner SuperNodes + a consumer
    SuperNode, 2 rounds: the same rows, hashes, trace, rows accessed and ledger), over TLS with a CA made here and
    node keys made here and registered; an unregistered node is refused. (The nodes poll every 0.1 s; the stock
    flower-supernode, 3 s idle poll, runs in the docs test of README.md's quick start.) The run's time limit is
    derived from its work (the requests of the in-process run) and what a process start costs now (:func:`work_bound`),
    not a fixed number of seconds that a loaded machine exceeds."""
    fed = shared.fed
    requests: list[str] = []
    deliver = InProcessTransport.request

    def counted(self: InProcessTransport, party: str, message: object) -> object:
        requests.append(party)
        return deliver(self, party, message)  # type: ignore[arg-type]

    with monkeypatch.context() as patch:
        patch.setattr(InProcessTransport, "request", counted)
        ref = _in_process(shared.owners, shared.validation, 2)
    assert len(requests) > 0
    assert fed.tls_files is not None and fed.tls_files.ca_cert.exists()
    key, _ = make_node_key(shared.workdir / "intruder", "intruder")  # never registered
    cmd = fed.supernode_command("intruder", "owner", shared.paths["owner-0"], 0)
    cmd[cmd.index("--auth-supernode-private-key") + 1] = str(key)
    cmd[cmd.index("--port") + 1] = str(free_port())
    cmd += ["--max-retries", "1"]
    intruder_log = shared.workdir / "intruder.log"
    with intruder_log.open("wb") as fh:
        intruder = subprocess.Popen(
            cmd,
            stdout=fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=flower_env(shared.workdir / "intruder"),
        )
    try:
        res = fed.run(_run_config(2), timeout=work_bound(len(requests), len(shared.owners) + 1))
    finally:
        try:
            os.killpg(intruder.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        intruder.wait(timeout=10)
    assert res.owner_names == ref.owner_names == ["owner-0", "owner-1", "owner-2"]
    np.testing.assert_array_equal(res.owner, ref.owner)
    np.testing.assert_array_equal(res.index, ref.index)
    np.testing.assert_array_equal(res.points, ref.points)
    np.testing.assert_array_equal(res.hashes, ref.hashes)
    assert res.accessed == ref.accessed
    assert [r.winner for r in res.trace] == [r.winner for r in ref.trace]
    assert res.events == [] and ref.events == []
    assert res.privacy is not None and res.privacy == ref.privacy
    assert sorted(res.extra["node_ids"]) == ["consumer", "owner-0", "owner-1", "owner-2"]
    # The intruder never got a node id: the SuperLink refused its unregistered key.
    assert "SuperNode ID" not in intruder_log.read_text(errors="replace")


def test_flower_nominations_and_winners_equal_in_process(shared: SharedFederation) -> None:
    """The nominations protocol on Flower: the same summary as in process, with the default purchase and the run
    config's default gamma ('median', as the API's), and with the Winners purchase (the owners keep their
    nominations between the messages of a run through the one state hand-over). The nodes hold labels and strata,
    which neither purchase reads. A run config the ServerApp refuses fails the run with its reason."""
    fed = shared.fed
    kw = dict(random_state=RANDOM_STATE, progress=False)
    as_owners = shared.plain_owners()
    ref = dpsumm.summarize(as_owners, shared.validation, 6, dpsumm.Nominations(dim=DIM), **kw)
    ref_q = dpsumm.summarize(
        as_owners, shared.validation, 6, dpsumm.Nominations(dim=DIM, purchase=dpsumm.Winners()), **kw
    )
    res = fed.run(
        {"size": 6, "n-features": N_FEATURES, "dim": DIM, "random-state": RANDOM_STATE, "method": "nominations"},
        timeout=run_bound(ref, len(shared.owners) + 1),
    )
    # `flwr run` exits 0 when the ServerApp fails; LocalFederation.run asks the SuperLink for the run's
    # status and raises with the ServerApp's reason (here a run config it refuses before it could write
    # an .error file), without waiting for the timeout.
    t0 = time.monotonic()
    with pytest.raises(FederationError, match=r"finished:failed.*nominees"):
        fed.run({"size": 3, "n-features": N_FEATURES, "nominees": -7}, timeout=170)
    assert time.monotonic() - t0 < 120
    res_q = fed.run(
        {
            "size": 6,
            "n-features": N_FEATURES,
            "dim": DIM,
            "random-state": RANDOM_STATE,
            "method": "nominations",
            "purchase": "winners",
        },
        timeout=run_bound(ref_q, len(shared.owners) + 1),
    )
    assert res.method == ref.method == "nominations"
    assert res.extra["purchase"] == ref.extra["purchase"] == "direction"
    assert res.gamma == ref.gamma
    np.testing.assert_array_equal(res.owner, ref.owner)
    np.testing.assert_array_equal(res.index, ref.index)
    np.testing.assert_array_equal(res.points, ref.points)
    assert res.accessed == ref.accessed
    assert res.extra["exchanges"] == ref.extra["exchanges"] and res.events == []
    # the Winners purchase: only the winners bought, the owners NOT certified, on both sides alike
    np.testing.assert_array_equal(res_q.owner, ref_q.owner)
    np.testing.assert_array_equal(res_q.index, ref_q.index)
    np.testing.assert_array_equal(res_q.points, ref_q.points)
    assert res_q.accessed == ref_q.accessed and res_q.accessed.total == 6
    assert res_q.extra["exchanges"] == ref_q.extra["exchanges"] and res_q.events == []
    assert res_q.extra["purchase"] == "winners"
    assert not res_q.privacy.certified("owners") and not ref_q.privacy.certified("owners")
    assert res_q.privacy.certified("validation")


def _context(node_config: dict[str, object], run_config: dict[str, object] | None = None) -> object:
    from flwr.app import Context, RecordDict

    return Context(run_id=1, node_id=1, node_config=node_config, state=RecordDict(), run_config=run_config or {})


def test_the_consumer_releases_without_noise_only_with_its_own_opt_in(tmp_path: Path, task_identity: None) -> None:
    """Issue 43: a run config asking for the consumer's exact hashed mean (`validation-release exact`, or the paper's
    non-private baseline) is refused by the consumer's node, naming node config `allow-exact-release`, before it reads
    its data; with that key (its operator's opt-in) it answers with the exact mean. A noisy release needs no opt-in.
    `LocalFederation` writes the key into the consumer's node config only, and `dpsumm flower --run` asks for it only
    when its flags ask for such a release; the printed deployment commands tell the consumer's operator."""
    from dpsumm.cli.flower import _releases_exact
    from dpsumm.flower.client_app import answer_request
    from dpsumm.messages import TargetRelease, TargetRequest, ValidationRequest

    validation = np.random.default_rng(0).random((20, 3))
    np.save(tmp_path / "v.npy", validation)
    target = TargetRequest(
        n_features=3,
        dim=8,
        gamma=0.5,
        hash_seed=0,
        release="exact",
        epsilon=0.0,
        delta=0.0,
        steps=0,
        eta=0.0,
        send_rows=False,
    )
    paper = ValidationRequest(
        n_features=3, dim=8, gamma=0.5, hash_seed=0, method="exact", steps=1, epsilon=0.0, eta=0.1
    )
    exact_mean = dpsumm.RFFHasher(3, dim=8, gamma=0.5, seed=0).transform(validation).astype(np.float64).mean(0)
    for request in (target, paper):
        for config in ({}, {"allow-exact-release": False}, {"allow-exact-release": "true"}, {"allow-seeded": True}):
            with pytest.raises(dpsumm.ProtocolError, match="allow-exact-release=true"):
                answer_request(
                    request,
                    _context({"role": "consumer", "data": str(tmp_path / "v.npy"), **config}),  # type: ignore[arg-type]
                )
        ctx = _context({"role": "consumer", "data": str(tmp_path / "v.npy"), "allow-exact-release": True})
        got = answer_request(request, ctx)  # type: ignore[arg-type]
        released = got.noisy_mean if isinstance(got, TargetRelease) else got.mean_hash  # type: ignore[attr-defined]
        np.testing.assert_allclose(released, exact_mean)
    noisy = dataclasses.replace(target, release="gaussian", epsilon=1.0, delta=1e-3)
    got = answer_request(noisy, _context({"role": "consumer", "data": str(tmp_path / "v.npy")}))  # type: ignore[arg-type]
    assert isinstance(got, TargetRelease) and got.sigma > 0
    fed = LocalFederation(tmp_path / "fed", {"a": tmp_path / "v.npy"}, tmp_path / "v.npy", allow_exact_release=True)
    configs = {role: fed.supernode_command(role, role, tmp_path / "v.npy", 1)[-2] for role in ("owner", "consumer")}
    assert "allow-exact-release=true" in configs["consumer"] and "allow-exact-release" not in configs["owner"]
    plain = LocalFederation(tmp_path / "f2", {"a": tmp_path / "v.npy"}, tmp_path / "v.npy")
    assert "allow-exact-release" not in plain.supernode_command("consumer", "consumer", tmp_path / "v.npy", 1)[-2]
    exact = dpsumm.Nominations(purchase=dpsumm.Nominees(), validation_release="exact")
    assert _releases_exact(exact) and _releases_exact(dpsumm.PaperGreedy())
    assert not _releases_exact(dpsumm.Nominations()) and not _releases_exact(dpsumm.PaperProtocol())
