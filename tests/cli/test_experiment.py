"""`dpsumm experiment` (dpsumm.cli.experiment): digits and MNIST runs, and what it would ignore or cannot size is
refused before any run, naming the flag.
"""

from __future__ import annotations

import contextlib
import io
import json

from dpsumm.cli import main


def _cli(argv):
    from dpsumm.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main([str(a) for a in argv])
    return status, err.getvalue()


def test_cli_experiment_names_sizes(tmp_path, no_messages):
    status, err = _cli(
        [
            "experiment",
            "digits",
            "--out",
            tmp_path,
            "--no-progress",
            "--repeats",
            "1",
            "--methods",
            "uniform",
            "--sizes",
            "0",
        ]
    )
    assert status == 2 and "--sizes" in err and len(err.strip().splitlines()) == 1, err


def cli(argv):
    from dpsumm.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(argv)
    return status, err.getvalue()


def test_cli_experiment_refuses_what_it_would_ignore_before_any_run(tmp_path, no_messages):
    base = ["experiment", "digits", "--out", str(tmp_path), "--no-progress", "--repeats", "1", "--methods", "uniform"]
    for extra, flag in (
        (["--sizes", "5", "--validation-budget", "0"], "--validation-budget"),
        (["--sizes", "5", "--delta", "1"], "--delta"),
        (["--sizes", "5", "--data", str(tmp_path)], "--data"),
        (["--sizes", "5", "--pfds-epsilon", "1"], "--pfds-epsilon"),
        (["--sizes", "5", "100000"], "--sizes"),
    ):
        status, err = cli(base + extra)
        assert status == 2 and flag in err, err


def test_cli_experiment_digits_and_mnist_without_data(tmp_path, capsys):
    assert (
        main(
            [
                "experiment",
                "digits",
                "--sizes",
                "10",
                "--repeats",
                "1",
                "--methods",
                "paper-greedy",
                "uniform",
                "--out",
                str(tmp_path),
                "--no-progress",
                "--classifier",
                "svm",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "uniform" in out and (tmp_path / "results.json").exists()
    assert main(["experiment", "mnist", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--data" in err[0]


def test_cli_experiment_mnist(mnist_dir, tmp_path, capsys):
    code = main(
        [
            "experiment",
            "mnist",
            "--data",
            str(mnist_dir),
            "--sizes",
            "20",
            "--repeats",
            "1",
            "--out",
            str(tmp_path),
            "--no-progress",
        ]
    )
    assert code == 0
    rows = json.loads((tmp_path / "results.json").read_text())
    assert {r["method"] for r in rows} == {"nominations", "central-greedy", "uniform"}  # today's methods by default
