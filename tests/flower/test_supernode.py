"""dpsumm.flower.supernode: the SuperNode wrapper's idle-poll cap (the argument checks and the patched sleep) and
its warm ClientApp process and ``flwr-clientapp`` command (run with ``--help`` and with a refused argument, so that
no SuperNode is needed)."""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import time

import pytest

pytest.importorskip("flwr")

from dpsumm.flower import supernode  # noqa: E402


def test_the_capped_time_caps_sleep_and_passes_everything_else_through(monkeypatch):
    slept = []
    monkeypatch.setattr(time, "sleep", slept.append)
    capped = supernode._CappedTime(0.2)
    capped.sleep(3.0)
    capped.sleep(0.05)
    assert slept == [0.2, 0.05]
    assert capped.monotonic is time.monotonic and capped.time is time.time


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--poll-interval"], "needs a number"),
        (["--poll-interval", "soon"], "needs a number"),
        (["--poll-interval", "0.001"], "between 0.01 and 3"),
        (["--poll-interval", "5"], "between 0.01 and 3"),
        (["--poll-interval", "nan"], "between 0.01 and 3"),
    ],
)
def test_a_bad_poll_interval_exits_2_before_flower_starts(argv, message, capsys, monkeypatch):
    monkeypatch.setattr(supernode, "patch_idle_sleep", lambda cap: pytest.fail("reached Flower"))
    assert supernode.main(argv) == 2
    assert message in capsys.readouterr().err


def test_patching_the_loop_replaces_its_time_module_once(monkeypatch):
    import flwr.supernode.start_client_internal as loop

    monkeypatch.setattr(loop, "time", time)
    assert supernode.patch_idle_sleep(0.3) is True
    assert isinstance(loop.time, supernode._CappedTime)
    assert supernode.patch_idle_sleep(0.3) is False  # already patched: the loop's time is not the module any more


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
def warm(tmp_path):
    """A warm ClientApp process serving on a socket in tmp_path, for this test process as its launcher."""
    address = tmp_path / "clientapps.sock"
    proc = subprocess.Popen([sys.executable, "-c", supernode._SERVE, str(address), str(os.getpid()), "0.1"])
    deadline = time.monotonic() + 120
    while not address.exists():
        assert proc.poll() is None and time.monotonic() < deadline, "the warm process did not start"
        time.sleep(0.05)
    yield address, proc
    proc.terminate()
    proc.wait(timeout=30)


def _ask(address, argv):
    """Be a flwr-clientapp script: send argv and two pipes as stdout/stderr; return (exit code, stdout, stderr)."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    request = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(address))
        socket.send_fds(conn, [struct.pack("!I", len(request)) + request], [0, out_w, err_w])
        os.close(out_w)
        os.close(err_w)
        code = struct.unpack("!i", conn.recv(4))[0]
    with os.fdopen(out_r) as out, os.fdopen(err_r) as err:
        return code, out.read(), err.read()


def test_the_warm_process_runs_flowers_clientapp_on_the_callers_streams_and_returns_its_exit_code(warm):
    address, _ = warm
    code, out, _ = _ask(address, ["flwr-clientapp", "--help"])
    assert code == 0 and "Run a Flower ClientApp" in out and "--runtime-api-address" in out
    code, out, err = _ask(address, ["flwr-clientapp", "--runtime-api-address", "127.0.0.1:1"])
    assert code == 2 and out == "" and "--token" in err  # argparse's refusal, on the caller's stderr


def test_the_written_command_hands_its_run_to_the_warm_process(warm, tmp_path):
    address, _ = warm
    path = supernode.write_clientapp_command(tmp_path, address, 0.1)
    assert path is not None and path.name == "flwr-clientapp" and os.access(path, os.X_OK)
    assert path.read_text().splitlines()[:3] == [
        f"#!{sys.executable} -S",
        f"ADDRESS = {str(address)!r}",
        "FIRST_RETRY = 0.1",
    ]
    done = _run([str(path), "--help"])
    assert done.returncode == 0 and "Run a Flower ClientApp" in done.stdout, done.stderr
    done = _run([str(path), "--runtime-api-address", "127.0.0.1:1"])
    assert done.returncode == 2 and "--token" in done.stderr


def test_the_warm_process_stops_on_sigterm_and_removes_its_socket(warm):
    address, proc = warm
    proc.terminate()
    assert proc.wait(timeout=30) == 0
    assert not address.exists()


def test_the_warm_process_stops_when_its_launcher_is_gone(tmp_path):
    address = tmp_path / "clientapps.sock"
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    proc = subprocess.Popen([sys.executable, "-c", supernode._SERVE, str(address), str(gone.pid)])
    assert proc.wait(timeout=120) == 0
    assert not address.exists()


def test_without_a_warm_process_the_command_runs_flowers_clientapp_itself(tmp_path):
    path = supernode.write_clientapp_command(tmp_path, tmp_path / "nobody-listens.sock")
    assert path is not None
    done = _run([str(path), "--help"])
    assert done.returncode == 0 and "Run a Flower ClientApp" in done.stdout, done.stderr


def test_the_clientapp_entry_skips_the_supernode_command_line_package():
    probe = (
        "import sys\n"
        "sys.argv = ['flwr-clientapp', '--help']\n"
        "from dpsumm.flower.supernode import clientapp_main\n"
        "try:\n"
        "    clientapp_main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('imported:', 'flwr.supernode.cli.flower_supernode' in sys.modules, file=sys.stderr)\n"
    )
    done = _run([sys.executable, "-c", probe])
    assert "Run a Flower ClientApp" in done.stdout
    assert "imported: False" in done.stderr


def test_no_command_is_written_for_a_python_whose_path_cannot_stand_in_a_shebang(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "executable", "/Users/A Person/venv/bin/python")
    assert supernode.write_clientapp_command(tmp_path, tmp_path / "c.sock") is None
    assert list(tmp_path.iterdir()) == []
