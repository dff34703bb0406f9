"""Every party on Flower's Simulation Engine: the same ServerApp and ClientApp, the owners and the consumer as virtual
SuperNodes in one machine's Ray workers (``pip install "dpsumm[simulation]"``).

A deployment runs one SuperNode process per party (:class:`~dpsumm.flower.LocalFederation` on one machine, about
100 MB each); the Simulation Engine runs every party's ClientApp in a few Ray actors instead, so a thousand owners fit
on one machine. The exchanges are the deployment's: the ServerApp asks each virtual node through the same ``Grid``,
each node answers as its party, rebuilt from its node config and its kept state.

A virtual SuperNode's node config is only ``partition-id`` and ``num-partitions``. Each party's node config, with the
keys a deployed node takes (``role``, ``name``, ``data``, ``labels``, ``allow-seeded``, ...), goes in a JSON list in
the run's directory, entry ``partition-id`` for virtual node ``partition-id``, and the run config names that file
(``simulation-nodes``, read by :func:`dpsumm.flower.client_app.simulated_node`). With ``random-state`` the run equals
the in-process :func:`dpsumm.summarize` bit for bit, as a deployment does.

The run is a child process in its own session (``python -m dpsumm.flower.simulation``), so every process Ray starts
under it is stopped with it, by process group and PID, whatever happens to the run.

The runner calls the function Flower's own ``flwr-simulation`` process calls (``flwr.simulation.run_simulation.
_run_simulation``, with the app directory and the run's config), as Flower's public ``run_simulation`` gives a run no
run config: dpsumm pins Flower to one version (:data:`dpsumm.flower.config.FLWR_VERSION`).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..results import SummaryResult
from .client_app import SIMULATION_NODES
from .config import write_app
from .local import FederationError, FederationParties, flower_env, stop_tree
from .server_app import load_result

__all__ = ["SimulatedFederation", "simulate"]


@dataclass
class SimulatedFederation(FederationParties):
    """Every party of a federation as a virtual SuperNode on Flower's Simulation Engine (Ray), on this machine.

    Parameters
    ----------
    workdir, owners, consumer, labels, consumer_labels, strata, allow_seeded, allow_exact_release, consumer_caps, \
tables, consumer_name
        As for :class:`~dpsumm.flower.LocalFederation`: the parties and their node configs.
    client_cpus : float
        CPUs Ray reserves for one virtual node's ClientApp: Ray runs ``cpus // client_cpus`` ClientApps at once.
    cpus : int or None
        CPUs Ray may use (None: every CPU of the machine).

    Attributes
    ----------
    log : Path
        The last run's log (the ServerApp's and Ray's output).
    pid : int or None
        The last run's process, the leader of the session and process group of every process the run started.
    """

    client_cpus: float = 1.0
    cpus: int | None = None
    log: Path = field(default=Path(), init=False)
    pid: int | None = field(default=None, init=False)

    def write_nodes(self) -> Path:
        """The JSON list of node configs, one per virtual SuperNode (the owners, then the consumer)."""
        path = self.workdir / "simulation-nodes.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps([self.node_config(*party) for party in self.parties()]))
        return path

    def run(self, run_config: Mapping[str, Any], timeout: float = 3600.0) -> SummaryResult:
        """Run the app over the parties as virtual SuperNodes and return its result (:func:`load_result`).

        ``run_config`` takes the keys of a deployment's run config (:mod:`dpsumm.flower.config`); ``owners``
        defaults to every owner and ``output`` to a file in ``workdir``.

        Raises
        ------
        FederationError
            If the run fails (with the ServerApp's reason, or the end of the run's log) or takes more than
            ``timeout`` seconds (every process it started is then stopped).
        """
        self.workdir.mkdir(parents=True, exist_ok=True)
        app = self.workdir / "app"
        write_app(app)
        cfg = self.run_config(run_config)
        cfg[SIMULATION_NODES] = str(self.write_nodes())
        out = Path(cfg["output"])
        config_file = self.workdir / f"run-config-{time.time_ns()}.json"
        config_file.write_text(json.dumps(cfg))
        command = [
            sys.executable,
            "-m",
            "dpsumm.flower.simulation",
            str(app),
            str(config_file),
            "--supernodes",
            str(len(self.owners) + 1),
            "--client-cpus",
            repr(float(self.client_cpus)),
        ]
        if self.cpus is not None:
            command += ["--cpus", str(int(self.cpus))]
        self.log = self.workdir / "logs" / f"simulation-{time.time_ns()}.log"
        self.log.parent.mkdir(parents=True, exist_ok=True)
        home = self.workdir / "home"
        home.mkdir(exist_ok=True)
        with self.log.open("wb") as fh:
            popen = subprocess.Popen(
                command, stdout=fh, stderr=subprocess.STDOUT, env=flower_env(home), start_new_session=True
            )
        self.pid = popen.pid
        try:
            code = popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise FederationError(f"no result within {timeout:g} s: {self._tail()}") from None
        finally:
            stop_tree(popen)
        err = Path(str(out) + ".error")
        if err.exists():
            raise FederationError(f"the ServerApp failed: {err.read_text().strip()}")
        if code != 0 or not out.exists():
            raise FederationError(f"the simulation exited with {code} and wrote no result at {out}: {self._tail()}")
        return load_result(out)

    def _tail(self, n: int = 3000) -> str:
        try:
            return self.log.read_text(errors="replace")[-n:]
        except OSError:
            return "(no log)"


def simulate(
    app_dir: str | Path, run_config: Mapping[str, Any], supernodes: int, *, client_cpus: float, cpus: int | None
) -> None:
    """Run the app in ``app_dir`` on the Simulation Engine in this process, with ``run_config`` over its defaults
    and ``supernodes`` virtual SuperNodes (what ``flwr-simulation`` does with a run a SuperLink hands it)."""
    from flwr.app import Context, RecordDict
    from flwr.common.config import get_fused_config_from_dir
    from flwr.common.constant import SUPERLINK_NODE_ID
    from flwr.server.superlink.linkstate.utils import generate_rand_int_from_bytes
    from flwr.simulation.run_simulation import _run_simulation
    from flwr.supercore.constant import NOOP_FEDERATION_ID
    from flwr.supercore.run import Run
    from flwr.supercore.task_identity import TaskIdentity
    from flwr.supercore.telemetry import EventType

    app = Path(app_dir).resolve()
    run = Run.create_empty(run_id=generate_rand_int_from_bytes(8))
    run.primary_task_id = generate_rand_int_from_bytes(8)
    run.federation_id = NOOP_FEDERATION_ID
    run.override_config = dict(run_config)
    TaskIdentity.task_id, TaskIdentity.run_id, TaskIdentity.node_id = 1, run.run_id, SUPERLINK_NODE_ID
    context = Context(
        run_id=run.run_id,
        node_id=0,
        node_config={},
        state=RecordDict(),
        run_config=get_fused_config_from_dir(app, run.override_config),
    )
    init_args: dict[str, Any] = {} if cpus is None else {"num_cpus": cpus}
    _run_simulation(
        server_app_attr="dpsumm.flower.server_app:app",
        client_app_attr="dpsumm.flower.client_app:app",
        num_supernodes=supernodes,
        backend_name="ray",
        backend_config={"client_resources": {"num_cpus": client_cpus, "num_gpus": 0.0}, "init_args": init_args},
        app_dir=str(app),
        run=run,
        server_app_context=context,
        is_app=True,
        exit_event=EventType.FLWR_SIMULATION_RUN_LEAVE,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m dpsumm.flower.simulation APP RUN_CONFIG.json --supernodes N``: one run on the Simulation Engine."""
    p = argparse.ArgumentParser(prog="python -m dpsumm.flower.simulation", description=main.__doc__)
    p.add_argument("app", help="the app directory (dpsumm.flower.write_app)")
    p.add_argument("run_config", help="a JSON file of run config keys and values")
    p.add_argument("--supernodes", type=int, required=True, help="virtual SuperNodes (the owners and the consumer)")
    p.add_argument("--client-cpus", type=float, default=1.0, help="CPUs Ray reserves for one ClientApp")
    p.add_argument("--cpus", type=int, default=None, help="CPUs Ray may use (default: all)")
    args = p.parse_args(argv)
    run_config = json.loads(Path(args.run_config).read_text())
    simulate(args.app, run_config, args.supernodes, client_cpus=args.client_cpus, cpus=args.cpus)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
