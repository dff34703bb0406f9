"""``python -m dpsumm.flower.supernode``: ``flower-supernode`` with a shorter idle poll and lighter ClientApp processes.

Flower 1.41's SuperNode asks the SuperLink for a new message, and when there is none sleeps **3 s**
before asking again (``flwr/supernode/start_client_internal.py``; not configurable). In a protocol of
short request/reply exchanges that sleep dominates the latency: a request typically waits most of
3 s before its node picks it up. This launcher runs the stock ``flower-supernode`` with that module's
sleeps capped at ``--poll-interval`` seconds (default 0.2) and nothing else changed; it also sets
``FLWR_SUPEREXEC_TASK_POLL_INTERVAL`` (the SuperExec's 1 s task poll, configurable in Flower) to the
same value unless already set. Every other argument goes to ``flower-supernode`` unchanged.

In the SuperNode and in every ClientApp it runs, the launcher also makes the first retry of Flower's object pulls
``--poll-interval`` seconds instead of 1 s (:func:`dpsumm.flower.pulls.patch_object_pulls`).

The cost is more polling: each node sends about ``1 / poll_interval`` requests per second to the
SuperLink while idle. It patches a private module of the pinned Flower version and falls back to the
stock behaviour (with a warning) if that module changes.

Flower starts a fresh ``flwr-clientapp`` process for every message a node answers, found by name on
``PATH``, and each one spends seconds of CPU importing Flower and dpsumm before the handler runs for
milliseconds. The launcher keeps one process with those imports done (:func:`serve_clientapps`) and puts a
``flwr-clientapp`` of its own first on the ``PATH`` its SuperExec inherits (:func:`write_clientapp_command`):
a small script that hands its arguments, environment, working directory and standard streams to that
process, which forks a child to run Flower's own ``flwr.supernode.cli.flwr_clientapp.flwr_clientapp`` with
them, and exits with the child's exit code. Each message still runs in its own process, forked from the
same state, so nothing carries over from one message to the next (dpsumm's CSPRNG re-keys itself after a
fork). If the warm process is not there (still starting, or gone), the script runs the ClientApp itself
(:func:`clientapp_main`), importing only Flower's runtime and not its SuperNode command line package.
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .pulls import patch_object_pulls

__all__ = ["main", "patch_idle_sleep", "write_clientapp_command", "clientapp_main", "serve_clientapps"]

CLIENTAPP_COMMAND = "flwr-clientapp"
_HEADER = struct.Struct("!I")


class _CappedTime:
    """Stands in for the ``time`` module inside one Flower module: ``sleep`` is capped."""

    def __init__(self, cap: float) -> None:
        self._cap = cap

    def sleep(self, seconds: float) -> None:
        time.sleep(min(seconds, self._cap))

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


def patch_idle_sleep(cap: float) -> bool:
    """Cap the sleeps of Flower's SuperNode main loop at ``cap`` seconds; False if Flower changed."""
    try:
        import flwr.supernode.start_client_internal as loop
    except ImportError:
        return False
    if getattr(loop, "time", None) is not time:
        return False
    loop.time = _CappedTime(cap)  # type: ignore[attr-defined, assignment]
    return True


def write_clientapp_command(
    directory: Path, address: Path | None = None, first_retry: float | None = None
) -> Path | None:
    """Write an executable ``flwr-clientapp`` into ``directory``; returns its path, or None (nothing written) when
    this Python's path cannot stand in a ``#!`` line (whitespace), so that Flower's own command stays in use.

    With ``address`` (the Unix socket of :func:`serve_clientapps`) it hands each run to that warm process and
    falls back to running the ClientApp itself when nothing answers there; without, it always runs it itself.
    Both ways it runs :func:`clientapp_main` with this Python, the arguments Flower gave it and ``first_retry``.
    """
    if any(c.isspace() for c in sys.executable):
        return None
    path = directory / CLIENTAPP_COMMAND
    path.write_text(
        f"#!{sys.executable} -S\nADDRESS = {str(address) if address is not None else None!r}\n"
        f"FIRST_RETRY = {first_retry!r}\n" + _CLIENTAPP_SCRIPT,
        encoding="utf-8",
    )
    path.chmod(0o755)
    return path


_CLIENTAPP_SCRIPT = '''"""flwr-clientapp, written by dpsumm.flower.supernode: run in dpsumm's warm ClientApp process."""
import json
import os
import socket
import struct
import sys


def run_here():
    import site

    site.main()
    from dpsumm.flower.supernode import clientapp_main

    sys.exit(clientapp_main(FIRST_RETRY))


if ADDRESS is None:
    run_here()
connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    connection.connect(ADDRESS)
    request = json.dumps({"argv": sys.argv, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
    socket.send_fds(connection, [struct.pack("!I", len(request)) + request], [0, 1, 2])
except OSError:
    connection.close()
    run_here()
reply = b""
while len(reply) < 4:
    chunk = connection.recv(4 - len(reply))
    if not chunk:
        sys.exit(1)
    reply += chunk
sys.exit(struct.unpack("!i", reply)[0])
'''


def _import_clientapp() -> Any:
    """Flower's ``flwr_clientapp`` function, imported without the SuperNode command line package around it (the
    stock import path if Flower's layout changed)."""
    import flwr.supernode

    cli = Path(flwr.supernode.__file__).parent / "cli"
    if "flwr.supernode.cli" not in sys.modules and (cli / "flwr_clientapp.py").is_file():
        package = types.ModuleType("flwr.supernode.cli")
        package.__path__ = [str(cli)]
        sys.modules["flwr.supernode.cli"] = package
    from flwr.supernode.cli.flwr_clientapp import flwr_clientapp

    return flwr_clientapp


def clientapp_main(first_retry: float | None = None) -> int:
    """Flower's ``flwr-clientapp`` (the same function, with the arguments in ``sys.argv``); with ``first_retry``,
    its object pulls first retry after that many seconds (:func:`~dpsumm.flower.pulls.patch_object_pulls`)."""
    clientapp = _import_clientapp()
    if first_retry is not None:
        patch_object_pulls(first_retry)
    clientapp()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``flower-supernode`` with ``argv`` (minus ``--poll-interval S``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    cap = 0.2
    if "--poll-interval" in args:
        i = args.index("--poll-interval")
        try:
            cap = float(args[i + 1])
        except (IndexError, ValueError):
            print("dpsumm.flower.supernode: --poll-interval needs a number of seconds", file=sys.stderr)
            return 2
        del args[i : i + 2]
    if not (math.isfinite(cap) and 0.01 <= cap <= 3.0):
        print("dpsumm.flower.supernode: --poll-interval must be between 0.01 and 3 seconds", file=sys.stderr)
        return 2
    os.environ.setdefault("FLWR_SUPEREXEC_TASK_POLL_INTERVAL", str(cap))
    if not patch_idle_sleep(cap):
        print(
            "dpsumm.flower.supernode: this Flower version's SuperNode loop is not the expected one; "
            "running it unpatched (3 s idle poll)",
            file=sys.stderr,
        )
    if not patch_object_pulls(cap):
        print(
            "dpsumm.flower.supernode: this Flower version's object pulls are not the expected ones; "
            "running them unpatched (1 s first retry)",
            file=sys.stderr,
        )
    from flwr.supernode.cli import flower_supernode

    commands = Path(tempfile.mkdtemp(prefix="dpsumm-supernode-"))
    address = commands / "clientapps.sock"
    warm = None
    if write_clientapp_command(commands, address, cap) is not None:
        os.environ["PATH"] = str(commands) + os.pathsep + os.environ.get("PATH", "")
        warm = subprocess.Popen(
            [sys.executable, "-c", _SERVE, str(address), str(os.getpid()), str(cap)], stdin=subprocess.DEVNULL
        )
    try:
        sys.argv = ["flower-supernode", *args]
        flower_supernode()
    finally:
        if warm is not None:
            warm.terminate()
            try:
                warm.wait(timeout=10)
            except subprocess.TimeoutExpired:
                warm.kill()
        shutil.rmtree(commands, ignore_errors=True)
    return 0


_SERVE = (
    "import sys; from dpsumm.flower.supernode import serve_clientapps; "
    "serve_clientapps(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]) if len(sys.argv) > 3 else None)"
)


def serve_clientapps(address: str | Path, parent: int, first_retry: float | None = None) -> None:
    """The warm ClientApp process: import Flower's ClientApp runtime and dpsumm's ClientApp once, then for each
    ``flwr-clientapp`` script that connects on the Unix socket ``address``, fork a child that runs
    :func:`clientapp_main` with the script's arguments, environment, working directory and standard streams, and
    send the child's exit code back; with ``first_retry``, the children's object pulls first retry after that many
    seconds (:func:`~dpsumm.flower.pulls.patch_object_pulls`). Runs until the process ``parent`` (the launcher) is gone or SIGTERM."""
    _import_clientapp()
    if first_retry is not None:
        patch_object_pulls(first_retry)
    import dpsumm.flower.client_app  # noqa: F401  (imported before the fork, so each child starts warm)

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the children are reaped by the kernel
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    path = Path(address)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(path))
        server.listen(64)
        server.settimeout(1.0)
        while os.getppid() == parent:
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            with connection:
                connection.settimeout(10.0)
                _fork_clientapp(connection, server)
    finally:
        server.close()
        path.unlink(missing_ok=True)


def _fork_clientapp(connection: socket.socket, server: socket.socket) -> None:
    """Read one script's request (its three standard streams travel as file descriptors) and fork its run."""
    fds: list[int] = []
    try:
        data, fds, _, _ = socket.recv_fds(connection, 1 << 16, 3)
        while len(data) < _HEADER.size or len(data) < _HEADER.size + _HEADER.unpack_from(data)[0]:
            chunk = connection.recv(1 << 16)
            if not chunk:
                break
            data += chunk
        request = json.loads(data[_HEADER.size :])
    except (OSError, ValueError):
        request = None
    if len(fds) != 3 or not isinstance(request, dict):
        for fd in fds:
            os.close(fd)
        return
    if os.fork() == 0:
        server.close()
        os._exit(_run_forked(connection, fds, request))
    for fd in fds:
        os.close(fd)


def _run_forked(connection: socket.socket, fds: list[int], request: dict[str, Any]) -> int:
    """In the forked child: become the script (streams, directory, environment, arguments), run the ClientApp,
    report its exit code to the script and return it."""
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = list(request["argv"])
        clientapp_main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001  (reported on the script's stderr, as the stock command would)
        traceback.print_exc()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    try:
        connection.sendall(struct.pack("!i", code))
    except OSError:
        pass
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
