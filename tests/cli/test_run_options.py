"""dpsumm.cli.run_options: the run options shared by the commands name the bad flag (not the Python argument),
refuse a flag the method or purchase lacks, and check budgets, plans and reporting deltas before any file is read.
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpsumm.cli import main
from federation_data import label_shift_files, small_files


def _cli(argv):
    from dpsumm.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main([str(a) for a in argv])
    return status, err.getvalue()


@pytest.mark.parametrize(
    "argv,flag",
    [
        (["account", "--size", "5", "--owners", "3", "--epsilon-auction", "-1"], "--epsilon-auction"),
        (["account", "--size", "5", "--owners", "3", "--epsilon-auction", "nan"], "--epsilon-auction"),
        (
            [
                "account",
                "--size",
                "5",
                "--owners",
                "3",
                "--budget",
                "1",
                "--validation-budget",
                "1",
                "--epsilon-auction",
                "0.5",
            ],
            "--epsilon-auction",
        ),
    ],
)
def test_cli_names_the_flag(argv, flag):
    status, err = _cli(argv)
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and flag in lines[0] and "Traceback" not in err, err


RNG = np.random.default_rng(0)


VALIDATION = RNG.uniform(size=(20, 3))


def cli(argv):
    from dpsumm.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(argv)
    return status, err.getvalue()


def test_cli_names_the_flag_behind_a_bad_file_or_value(tmp_path):
    np.save(tmp_path / "v.npy", VALIDATION)
    np.save(tmp_path / "cube.npy", np.zeros((2, 2, 2)))
    base = ["summarize", "--validation", str(tmp_path / "v.npy"), "--out", str(tmp_path / "out"), "--size", "2"]
    for extra, flag in (
        (["--owners", str(tmp_path / "nope.npy")], "--owners"),
        (["--owners", str(tmp_path / "cube.npy")], "--owners"),
        (
            ["--owners", str(tmp_path / "v.npy"), "--method", "paper-greedy", "--feature-range", "1", "0"],
            "--feature-range",
        ),
        (
            ["--owners", str(tmp_path / "v.npy"), "--method", "paper-greedy", "--seed-set", str(tmp_path / "cube.npy")],
            "--seed-set",
        ),
    ):
        status, err = cli(base + extra)
        assert status == 2 and flag in err and "Traceback" not in err, err
    status, err = cli(["account", "--size", "5", "--owners", "3", "--validation-delta", "1"])
    assert status == 2 and "--validation-delta" in err, err


def _run(args, capsys):
    code = main(args)
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--delta", "2"], "--delta"),
        (["--validation-budget", "1", "--validation-delta", "0"], "--validation-delta"),
        (["--nominees", "1"], "--nominees"),  # 1 x 2 owners < size 5: the plan is checked before any file is read
    ],
)
def test_bad_budget_and_plan_flags_fail_before_any_file_is_read(tmp_path, capsys, extra, message):
    code, _, err = _run(
        [
            "summarize",
            "--owners",
            "missing0.npy",
            "missing1.npy",
            "--validation",
            "missing.npy",
            "--size",
            "5",
            "--out",
            str(tmp_path / "out"),
            "--no-progress",
            *extra,
        ],
        capsys,
    )
    assert code == 2 and message in err and "missing" not in err, err


def test_the_sale_tilt_share_flag_is_refused_for_a_purchase_without_labels(tmp_path, capsys):
    """`--sale-tilt-share` with `--purchase nominees`: refused before anything runs, naming the flag."""
    owners, labels, paths, label_paths, val, yv = label_shift_files(tmp_path)
    code, text, err = _run(
        [
            "summarize",
            "--owners",
            *paths,
            "--validation",
            str(tmp_path / "val.npy"),
            "--size",
            "6",
            "--out",
            str(tmp_path / "out"),
            "--purchase",
            "nominees",
            "--sale-tilt-share",
            "0.3",
            "--random-state",
            "2",
            "--no-progress",
        ],
        capsys,
    )
    assert code == 2 and "--sale-tilt-share does not apply to purchase 'nominees'" in err and "ByLabel" in err


def test_cli_refuses_a_flag_the_method_lacks_naming_the_flag(capsys):
    from dpsumm.cli import main

    code = main(
        [
            "summarize",
            "--owners",
            "a.npy",
            "--validation",
            "v.npy",
            "--out",
            "/tmp/x",
            "--size",
            "5",
            "--method",
            "paper",
            "--nominees",
            "3",
        ]
    )
    assert code == 2 and "--nominees does not apply to method 'paper'" in capsys.readouterr().err


FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FAST
@given(
    option=st.sampled_from(["--size", "--dim", "--gamma", "--random-state"]),
    value=st.sampled_from(["-1", "0", "nan", "inf", "1e400", "x", "2e30", str(2**70), "-0", "1.5"]),
)
def test_cli_bad_numbers_are_one_line_exit_2(tmp_path_factory, option, value):
    tmp = tmp_path_factory.mktemp("cli")
    owners, val = small_files(tmp)
    args = {"--size": "3", "--dim": "16", "--gamma": "0.1", "--random-state": "0", option: value}
    argv = [
        "summarize",
        "--owners",
        *owners,
        "--validation",
        val,
        "--out",
        str(tmp / "out"),
        "--no-progress",
        "--method",
        "paper-greedy",
    ]
    for k, v in args.items():
        argv += [k, v]
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    if code != 0:
        lines = [ln for ln in err.getvalue().strip().splitlines() if not ln.startswith("read ")]
        assert code == 2 and len(lines) == 1 and lines[0].startswith("dpsumm: error:"), (code, err.getvalue())


@pytest.mark.parametrize("delta", ["0.9", "0.05", "0.034"])
def test_a_reporting_validation_delta_at_or_above_one_over_the_rows_is_refused(tmp_path, capsys, delta):
    """Was: `--validation-delta 0.9` with no budget accepted for reporting, printing epsilon 0. With 30 validation
    rows, a delta >= 1/30 is refused naming the flag, before anything runs; 0.01 is taken."""
    rng = np.random.default_rng(0)
    for k in range(2):
        np.save(tmp_path / f"o{k}.npy", rng.random((40, 3)))
    np.save(tmp_path / "v.npy", rng.random((30, 3)))
    base = [
        "summarize",
        "--owners",
        str(tmp_path / "o0.npy"),
        str(tmp_path / "o1.npy"),
        "--validation",
        str(tmp_path / "v.npy"),
        "--size",
        "4",
        "--dim",
        "16",
        "--no-progress",
    ]
    assert main([*base, "--out", str(tmp_path / "bad"), "--validation-delta", delta]) == 2
    err = capsys.readouterr().err
    assert "--validation-delta" in err and "1/|D_v|" in err
    assert not (tmp_path / "bad" / "summary.npy").exists()
    assert main([*base, "--out", str(tmp_path / "ok"), "--validation-delta", "0.01"]) == 0
