"""The command line's entry point (dpsumm.cli: main, build_parser): version and defaults, every option has help,
a user error is one line and exit status 2, a closed pipe is not a traceback, a warning is printed once.
"""

from __future__ import annotations

import argparse

import pytest

import dpsumm
from dpsumm.cli import build_parser, main
from federation_data import PAPER_ACCOUNT_ARGS


def test_user_error_is_one_line_and_exit_2(tmp_path, capsys):
    code = main(
        [
            "summarize",
            "--owners",
            str(tmp_path / "missing.npy"),
            "--validation",
            "x.npy",
            "--size",
            "3",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dpsumm: error:")


def test_version_and_defaults(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"dpsumm {dpsumm.__version__}"
    args = build_parser().parse_args(["summarize", "--owners", "a", "--validation", "v", "--size", "1", "--out", "o"])
    assert args.method == "nominations" and args.gamma == "median"


def test_every_option_has_help():
    parser = build_parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = [
        f"{name} {opt.option_strings}"
        for name, p in subs.choices.items()
        for opt in p._actions
        if opt.option_strings and not opt.help
    ]
    assert missing == []
    assert all(a.help for a in parser._actions if a.option_strings)


def _dpsumm_env():
    """The environment for a `python -m dpsumm` subprocess that imports the same dpsumm as this test."""
    import os
    from pathlib import Path

    import dpsumm

    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(dpsumm.__file__).resolve().parents[1]) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@pytest.mark.slow
def test_closed_pipe_is_not_a_traceback():
    """`dpsumm account --json | head -1`: the reader closes the pipe early; no traceback, SIGPIPE's status."""
    import subprocess
    import sys

    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dpsumm",
            *PAPER_ACCOUNT_ARGS,
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_dpsumm_env(),
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # what `head` does once it has its lines; here before any write, so every write fails
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


@pytest.mark.slow
def test_degenerate_kernel_warning_is_printed_once():
    """A DegenerateKernelWarning reaches stderr once (the warning), not twice (warning and log record)."""
    import subprocess
    import sys

    code = (
        "import numpy as np, dpsumm\n"
        "X = np.random.default_rng(0).uniform(0, 16, size=(50, 8))\n"
        "dpsumm.preprocessing.check_kernel(X, 0.1)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_dpsumm_env(), timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("is degenerate") == 1, done.stderr
