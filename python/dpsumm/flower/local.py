"""``LocalFederation``: a SuperLink and one SuperNode per party as local processes (tests, demos, benchmarks).

Every process is started in its own session, so stopping a party stops its whole process group
(the SuperNode, its SuperExec and any ``flwr-clientapp`` it spawned) by the group's leader PID; nothing
is ever found or killed by name. Each party gets its own ``FLWR_HOME`` (as if on its own machine).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DpsummError, InvalidParameterError
from ..results import SummaryResult
from .config import _toml_value, write_app
from .server_app import load_result
from .tls import TlsFiles, make_node_key, make_tls

__all__ = [
    "LocalFederation",
    "FederationParties",
    "FederationError",
    "free_port",
    "flower_env",
    "stop_tree",
    "group_members",
    "descendants",
]

CONNECTION = "dpsumm-local"


class FederationError(DpsummError, RuntimeError):
    """A Flower process failed to start, or a run failed or timed out (the message quotes its log)."""


#: How many times :meth:`LocalFederation.start` starts a SuperNode that exits before it has its node id.
NODE_START_ATTEMPTS = 3
#: What a SuperNode (Flower 1.41) logs once its runtime API is up and the SuperLink has given it a node id.
NODE_READY = "SuperNode ID:"


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def group_members(pgid: int) -> list[int]:
    """PIDs of the live (not zombie) processes in process group ``pgid`` (Linux ``/proc``; [] elsewhere)."""
    members = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


def _stat(pid: int) -> list[str] | None:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _pgid(pid: int) -> int | None:
    fields = _stat(pid)
    return None if fields is None else int(fields[2])


def _alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def descendants(pid: int) -> list[int]:
    """PIDs of every live descendant of ``pid`` (Linux ``/proc``; [] elsewhere)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        fields = _stat(int(entry.name))
        if fields is not None and fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def flower_env(flwr_home: Path | None = None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for Flower processes: no telemetry, no update check, this Python's bin dir first on
    ``PATH`` (Flower starts ``flower-superexec`` and ``flwr-clientapp`` by name) and, when dpsumm is not
    installed in site-packages, its source directory on ``PYTHONPATH``."""
    env = dict(os.environ)
    env["FLWR_TELEMETRY_ENABLED"] = "0"
    env["FLWR_DISABLE_UPDATE_CHECK"] = "1"
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    src = str(Path(__file__).resolve().parents[2])
    if "site-packages" not in src and src not in env.get("PYTHONPATH", "").split(os.pathsep):
        env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if flwr_home is not None:
        env["FLWR_HOME"] = str(flwr_home)
    if extra:
        env.update(extra)
    return env


def _bin(name: str) -> str:
    local = Path(sys.executable).parent / name
    if local.exists():
        return str(local)
    found = shutil.which(name)
    if found is None:
        raise FederationError(f"{name} not found: install Flower (pip install 'dpsumm[flower]')")
    return found


def stop_tree(popen: subprocess.Popen[bytes], sig: int = signal.SIGTERM, grace: float = 5.0) -> None:
    """Stop a process started in a session of its own, its process group and every descendant (Flower's SuperExec
    starts task processes such as ``flwr-serverapp`` and ``flwr-clientapp`` in sessions of their own, Ray its
    workers), all by PID."""
    pid = popen.pid
    family = descendants(pid)
    groups = {pid} | {g for g in (_pgid(p) for p in family) if g is not None and g > 1}
    for g in groups:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(g, sig)
    try:
        popen.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    deadline = time.monotonic() + grace
    while True:
        family = [p for p in family if _alive(p)]
        left = family + [p for g in groups for p in group_members(g)]
        if popen.poll() is None:
            left.append(pid)
        if not left or time.monotonic() >= deadline:
            break
        for g in groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(g, signal.SIGKILL)
        for p in family:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(p, signal.SIGKILL)
        time.sleep(0.05)
    with contextlib.suppress(subprocess.TimeoutExpired):
        popen.wait(timeout=grace)


@dataclass
class _Proc:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path


@dataclass
class FederationParties:
    """The parties of a federation on this machine, each with the node config a deployment's operator gives its
    node (:mod:`dpsumm.flower.client_app`); :class:`LocalFederation` (one process per party) and
    :class:`dpsumm.flower.simulation.SimulatedFederation` (Flower's Simulation Engine) give their parameters."""

    workdir: Path
    owners: Mapping[str, str | Path]
    consumer: str | Path
    labels: Mapping[str, str | Path] = field(default_factory=dict)
    consumer_labels: str | Path | None = None
    strata: Mapping[str, str | Path] = field(default_factory=dict)
    allow_seeded: bool = False
    allow_exact_release: bool = False
    consumer_caps: tuple[float, float] | None = None
    tables: Mapping[str, str] = field(default_factory=dict)
    consumer_name: str = "consumer"

    def __post_init__(self) -> None:
        self.workdir = Path(self.workdir)
        if not self.owners:
            raise InvalidParameterError("`owners` must name at least one owner", "owners")
        if self.consumer_name in self.owners:
            raise InvalidParameterError(f"an owner may not be called {self.consumer_name!r}", "owners")

    def node_config(
        self, name: str, role: str, data: str | Path, labels: str | Path | None = None
    ) -> dict[str, str | bool | float]:
        """One party's node config (:mod:`dpsumm.flower.client_app`), its paths absolute."""
        cfg: dict[str, str | bool | float] = {"role": role, "name": name, "data": str(Path(data).resolve())}
        if labels is not None:
            cfg["labels"] = str(Path(labels).resolve())
        if name in self.strata:
            cfg["strata"] = str(Path(self.strata[name]).resolve())
        cfg.update(self.tables)
        if self.allow_seeded:  # consumer and owners (the owners' release noise, the ByLabel purchase)
            cfg["allow-seeded"] = True
        if self.allow_exact_release and role == "consumer":
            cfg["allow-exact-release"] = True
        if self.consumer_caps is not None and role == "consumer":
            cfg["max-epsilon"], cfg["max-delta"] = float(self.consumer_caps[0]), float(self.consumer_caps[1])
        return cfg

    def parties(self) -> list[tuple[str, str, str | Path, str | Path | None]]:
        """``(name, role, data, labels)`` of every party: the owners, then the consumer."""
        parties: list[tuple[str, str, str | Path, str | Path | None]] = [
            (n, "owner", p, self.labels.get(n)) for n, p in self.owners.items()
        ]
        parties.append((self.consumer_name, "consumer", self.consumer, self.consumer_labels))
        return parties

    def run_config(self, run_config: Mapping[str, Any]) -> dict[str, Any]:
        """A run's config with ``-`` spelling, ``owners`` (default: every owner) and ``output`` (default: a new file
        in ``workdir``) set."""
        cfg = {k.replace("_", "-"): v for k, v in run_config.items()}
        cfg.setdefault("owners", len(self.owners))
        cfg["output"] = str(cfg.get("output") or self.workdir / f"result-{time.time_ns()}.npz")
        return cfg


@dataclass
class LocalFederation(FederationParties):
    """A Flower federation on this machine: one SuperLink, one SuperNode per owner and one for the consumer.

    Parameters
    ----------
    workdir : Path
        Logs, ``FLWR_HOME`` directories, certificates and results go here.
    owners : mapping of str to path
        Owner name to its data file (.npy/.csv/.parquet), one SuperNode each.
    consumer : path
        The consumer's validation rows.
    labels : mapping of str to path, optional
        Owner name to its labels file.
    consumer_labels : path, optional
        The consumer's validation labels (node config ``labels``; ``Nominations(purchase="labels")`` needs them).
    strata : mapping of str to path, optional
        Party name (an owner's, or the consumer's) to its strata file (node config ``strata``; a purchase by
        strata needs them).
    tls : bool
        Serve the SuperLink over TLS with a CA generated in ``workdir/tls``.
    node_auth : bool
        Enable SuperNode authentication (needs ``tls``): a key pair per node is generated and its public key
        registered under the party's name before the node starts.
    node_poll_interval : float or None
        None: stock ``flower-supernode`` (3 s idle poll, a fresh ``flwr-clientapp`` process importing Flower and
        dpsumm per message). A number: ``python -m dpsumm.flower.supernode --poll-interval`` (see
        :mod:`dpsumm.flower.supernode`: that idle poll, and each message's ClientApp forked from a warm process).
    allow_seeded : bool
        Let a run's ``random-state`` seed the consumer's and the owners' noise (node config ``allow-seeded=true``): needed to
        reproduce an in-process run; NOT private.
    allow_exact_release : bool
        Let the consumer release its exact hashed validation mean, without noise (its node config
        ``allow-exact-release=true``): needed by ``validation_release="exact"`` and the paper's non-private baselines;
        NOT private for the consumer.
    consumer_caps : (float, float), optional
        The consumer's node config ``max-epsilon`` and ``max-delta`` (:mod:`dpsumm.flower.caps`); None: its
        node's default.
    tables : mapping of str to str, optional
        Node config keys every node gets that read its table by column name and scale it (``features``,
        ``label-column``, ``strata-columns``, ``scale``: :mod:`dpsumm.flower.client_app`).
    host : str
    """

    tls: bool = False
    node_auth: bool = False
    node_poll_interval: float | None = None
    host: str = "127.0.0.1"
    _procs: dict[str, _Proc] = field(default_factory=dict, init=False, repr=False)
    port: int = field(default=0, init=False)
    tls_files: TlsFiles | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.node_auth and not self.tls:
            raise InvalidParameterError(
                "`node_auth` needs `tls` (Flower refuses node keys over plain HTTP)", "node_auth"
            )

    # -- processes ---------------------------------------------------------------------------------

    @property
    def pids(self) -> dict[str, int]:
        """Process (group) id of every process this federation started, by role name."""
        return {k: p.popen.pid for k, p in self._procs.items()}

    def all_pids(self) -> list[int]:
        """Every live process this federation started, with all descendants (task processes included)."""
        out = []
        for p in self._procs.values():
            if p.popen.poll() is None:
                out.append(p.popen.pid)
            out += descendants(p.popen.pid)
        return out

    def _spawn(self, name: str, cmd: Sequence[str], env: Mapping[str, str]) -> _Proc:
        log = self.workdir / "logs" / f"{name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("wb") as fh:
            popen = subprocess.Popen(
                list(cmd), stdout=fh, stderr=subprocess.STDOUT, env=dict(env), start_new_session=True, cwd=self.workdir
            )
        proc = _Proc(name, popen, log)
        self._procs[name] = proc
        return proc

    def _home(self, name: str) -> Path:
        home = self.workdir / "home" / name
        home.mkdir(parents=True, exist_ok=True)
        return home

    def _wait(self, proc: _Proc, timeout: float, ready: Callable[[], bool], what: str) -> None:
        """Wait until ``ready()``; raise (quoting ``proc``'s log) if ``proc`` exits first or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return
            if proc.popen.poll() is not None:
                raise FederationError(f"{proc.name} exited with {proc.popen.returncode}: {self._tail(proc)}")
            time.sleep(0.1)
        raise FederationError(f"{proc.name} {what} within {timeout:g} s: {self._tail(proc)}")

    def _wait_port(self, proc: _Proc, timeout: float) -> None:
        """Wait until the SuperLink ``proc`` accepts connections on its port."""

        def open_() -> bool:
            with contextlib.suppress(OSError), socket.create_connection((self.host, self.port), timeout=0.5):
                return True
            return False

        self._wait(proc, timeout, open_, f"did not open port {self.port}")

    def _wait_node(self, proc: _Proc, timeout: float) -> None:
        """Wait until the SuperNode ``proc`` has its node id from the SuperLink (Flower logs it once its runtime API
        is up and it is connected)."""
        self._wait(proc, timeout, lambda: NODE_READY in self._tail(proc, 1 << 20), "had no node id")

    @staticmethod
    def _tail(proc: _Proc, n: int = 2000) -> str:
        try:
            return proc.log.read_text(errors="replace")[-n:]
        except OSError:
            return "(no log)"

    def superlink_command(self) -> list[str]:
        """The SuperLink's command line."""
        cmd = [
            _bin("flower-superlink"),
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--disable-runtime-dependency-installation",
        ]
        if self.tls_files is None:
            cmd.append("--insecure")
        else:
            t = self.tls_files
            cmd += [
                "--ssl-ca-certfile",
                str(t.ca_cert),
                "--ssl-certfile",
                str(t.server_cert),
                "--ssl-keyfile",
                str(t.server_key),
            ]
        if self.node_auth:
            cmd.append("--enable-supernode-auth")
        return cmd

    def supernode_command(
        self, name: str, role: str, data: str | Path, runtime_port: int, labels: str | Path | None = None
    ) -> list[str]:
        """One SuperNode's command line."""
        if self.node_poll_interval is None:
            cmd = [_bin("flower-supernode")]
        else:
            cmd = [sys.executable, "-m", "dpsumm.flower.supernode", "--poll-interval", str(self.node_poll_interval)]
        node = self.node_config(name, role, data, labels)
        cfg = " ".join(f"{key}={_toml_value(value)}" for key, value in node.items())
        cmd += ["--superlink", f"{self.host}:{self.port}", "--port", str(runtime_port), "--node-config", cfg]
        if self.tls_files is None:
            cmd.append("--insecure")
        else:
            cmd += ["--root-certificates", str(self.tls_files.ca_cert)]
        if self.node_auth:
            cmd += ["--auth-supernode-private-key", str(self.workdir / "keys" / f"{name}.key")]
        return cmd

    def _write_cli_config(self) -> Path:
        home = self._home("cli")
        lines = [
            "[superlink]",
            f'default = "{CONNECTION}"',
            "",
            f"[superlink.{CONNECTION}]",
            f'address = "{self.host}:{self.port}"',
        ]
        if self.tls_files is None:
            lines.append("insecure = true")
        else:
            lines.append(f"root-certificates = {_toml_value(str(self.tls_files.ca_cert))}")
        (home / "config.toml").write_text("\n".join(lines) + "\n")
        return home

    def flwr(self, *args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        """Run the ``flwr`` CLI against this federation's SuperLink."""
        env = flower_env(self._home("cli"))
        return subprocess.run(
            [_bin("flwr"), *args], env=env, capture_output=True, text=True, timeout=timeout, cwd=self.workdir
        )

    def start(self, timeout: float = 60.0) -> LocalFederation:
        """Start the SuperLink, register node keys (with ``node_auth``), then start every SuperNode and wait until
        each has its node id. A SuperNode's runtime port is one that was free a moment before the node binds it, so
        another process may take it first: a SuperNode that exits before it has its node id is started again on
        another port, up to :data:`NODE_START_ATTEMPTS` times in all, and then this raises with its log."""
        if self._procs:
            raise FederationError("this federation is already started")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port(self.host)
        if self.tls:
            self.tls_files = make_tls(self.workdir / "tls", (self.host, "localhost"))
        link = self._spawn("superlink", self.superlink_command(), flower_env(self._home("superlink")))
        self._wait_port(link, timeout)
        self._write_cli_config()
        parties = self.parties()
        if self.node_auth:
            for name, *_ in parties:
                _, public = make_node_key(self.workdir / "keys", name)
                done = self.flwr("supernode", "register", str(public), CONNECTION, "--name", name)
                if done.returncode != 0:
                    raise FederationError(
                        f"registering {name}'s key failed: {done.stdout[-1500:]} {done.stderr[-1500:]}"
                    )
        pending = {name: (role, data, labels) for name, role, data, labels in parties}
        for attempt in range(1, NODE_START_ATTEMPTS + 1):
            for name, (role, data, labels) in pending.items():
                cmd = self.supernode_command(name, role, data, free_port(self.host), labels)
                self._spawn(f"supernode-{name}", cmd, flower_env(self._home(name)))
            exited = []
            for name in pending:
                proc = self._procs[f"supernode-{name}"]
                try:
                    self._wait_node(proc, timeout)
                except FederationError:
                    if proc.popen.poll() is None or attempt == NODE_START_ATTEMPTS:
                        raise
                    self._stop(proc)  # and whatever it started
                    exited.append(name)  # most likely its port was taken: start it again on another
            if not exited:
                break
            pending = {name: pending[name] for name in exited}
        return self

    def stop_party(self, name: str, sig: int = signal.SIGKILL) -> None:
        """Stop one party's SuperNode (its whole process group; SIGKILL by default: the node just vanishes)."""
        proc = self._procs.get(f"supernode-{name}")
        if proc is None:
            raise InvalidParameterError(f"no SuperNode for party {name!r}", "name")
        self._stop(proc, sig)

    @staticmethod
    def _stop(proc: _Proc, sig: int = signal.SIGTERM, grace: float = 5.0) -> None:
        stop_tree(proc.popen, sig, grace)

    def close(self) -> None:
        """Stop every process this federation started (SuperNodes first, then the SuperLink), by PID."""
        for name in [n for n in self._procs if n != "superlink"] + (
            ["superlink"] if "superlink" in self._procs else []
        ):
            self._stop(self._procs[name])
        self._procs.clear()

    def __enter__(self) -> LocalFederation:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- runs --------------------------------------------------------------------------------------

    def submit(self, run_config: Mapping[str, Any], app_dir: Path | None = None) -> tuple[str, Path]:
        """Write the app, start a run with ``flwr run`` and return ``(run_id, output path)`` without waiting."""
        cfg = self.run_config(run_config)
        out = Path(cfg["output"])
        app = app_dir or self.workdir / "app"
        write_app(app)
        overrides = self.workdir / f"run-config-{time.time_ns()}.toml"
        overrides.write_text("".join(f"{k} = {_toml_value(v)}\n" for k, v in cfg.items()))
        done = self.flwr("run", str(app), CONNECTION, "--run-config", str(overrides), "--format", "json")
        if done.returncode != 0:
            raise FederationError(f"flwr run failed ({done.returncode}): {done.stdout[-2000:]} {done.stderr[-2000:]}")
        try:
            run_id = str(json.loads(done.stdout)["run-id"])
        except (ValueError, KeyError) as exc:
            raise FederationError(f"flwr run printed no run id: {done.stdout[-2000:]}") from exc
        return run_id, out

    def run_status(self, run_id: str) -> tuple[str, str]:
        """``(status, details)`` of a run as the SuperLink reports it (``flwr list --run-id``), e.g.
        ``("finished:failed", "ServerApp failed with exception: ...")``; ``("unknown", why)`` if it cannot say."""
        try:
            done = self.flwr("list", "--run-id", str(run_id), "--format", "json", timeout=60.0)
            runs = json.loads(done.stdout).get("runs") or []
        except (subprocess.TimeoutExpired, ValueError, AttributeError) as exc:
            return "unknown", f"flwr list failed: {exc}"
        if not runs:
            return "unknown", f"flwr list knows no run {run_id}: {done.stdout[-500:]} {done.stderr[-500:]}"
        return str(runs[0].get("status", "unknown")), str(runs[0].get("status-details", ""))

    def wait(
        self, out: Path, timeout: float = 600.0, run_id: str | None = None, status_every: float = 30.0
    ) -> SummaryResult:
        """Wait for a submitted run's output (or its ``.error`` file) and load it.

        ``flwr run`` returns as soon as the run is submitted, and a ServerApp that fails before it can write
        its ``.error`` file (a bad run config, an import error, a crash) leaves no file at all: with
        ``run_id``, the run's status is also asked of the SuperLink every ``status_every`` seconds (each ask starts
        a ``flwr`` process, about a second of CPU, so not too often), and a run
        that finished without a result raises :class:`FederationError` with the SuperLink's reason.
        """
        err = Path(str(out) + ".error")
        deadline = time.monotonic() + timeout
        next_status = time.monotonic() + status_every
        finished_at: float | None = None
        while time.monotonic() < deadline:
            if out.exists():
                return load_result(out)
            if err.exists():
                raise FederationError(f"the ServerApp failed: {err.read_text().strip()}")
            link = self._procs.get("superlink")
            if link is not None and link.popen.poll() is not None:
                raise FederationError(f"the SuperLink exited: {self._tail(link)}")
            if run_id is not None and time.monotonic() >= next_status:
                status, details = self.run_status(run_id)
                if status.startswith("finished"):
                    if status != "finished:completed":
                        raise FederationError(f"the ServerApp failed ({status}): {details or '(no reason given)'}")
                    # completed: the result file is written before the app returns; allow the file system a moment
                    finished_at = finished_at or time.monotonic()
                    if time.monotonic() - finished_at > 10.0:
                        raise FederationError(f"the run completed but wrote no result at {out}: {details}")
                next_status = time.monotonic() + status_every
            time.sleep(0.1)
        raise FederationError(f"no result within {timeout:g} s; SuperLink log: {self._tail(self._procs['superlink'])}")

    def run(self, run_config: Mapping[str, Any], timeout: float = 600.0) -> SummaryResult:
        """Start a run and wait for its result (a :class:`~dpsumm.SummaryResult`, see :func:`load_result`)."""
        run_id, out = self.submit(run_config)
        return self.wait(out, timeout, run_id=run_id)
