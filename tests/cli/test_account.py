"""`dpsumm account` (dpsumm.cli.account): its JSON equals the API, user errors exit 2 in one line, huge or
absurd schedules answer fast.
"""

from __future__ import annotations

import json
import math

import pytest

from dpsumm import accounting as acc
from dpsumm.cli import main
from dpsumm.cli import main as cli_main
from federation_data import PAPER_ACCOUNT_ARGS
from refusal import one_line_exit_2


def test_cli_account_json_matches_the_api(capsys):
    code = cli_main(
        [
            *PAPER_ACCOUNT_ARGS,
            "--json",
        ]
    )
    assert code in (0, None)
    out = json.loads(capsys.readouterr().out)
    want = acc.account(acc.paper_schedule(500, 5), 500, 5, 1e-4, 0.01)
    assert set(out) >= {"owners", "validation"}
    for key in ("basic", "advanced", "kov", "tight"):
        assert out["validation"][key] == pytest.approx(want["validation"][key])
        # the default auction asks every owner every round (certified): the owners' total is the h2 releases'
        assert out["owners"][key] == pytest.approx(want["owners"][key]) and math.isfinite(want["owners"][key])
    code = cli_main(
        [
            *PAPER_ACCOUNT_ARGS,
            "--epsilon-auction",
            "0.01",
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert all(out["owners"][key] is None for key in ("basic", "advanced", "kov", "tight"))  # the paper's auction
    assert acc.paper_schedule(500, 5, epsilon_auction="theorem6").epsilon_auction > 0


def test_cli_user_error_exits_2(capsys):
    try:
        code = cli_main(["account", "--schedule", "paper", "--size", "-3", "--owners", "5"])
    except SystemExit as e:
        code = e.code
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "size" in err[0]


def test_cli_account_huge_schedule_answers_without_the_pld(capsys):
    # 3.2e7 MWEM steps (dim 100,000): the PLD would not fit in memory; the tight accountant leaves that
    # candidate out and answers with RDP / Theorem 7 (sound), in seconds.
    assert main(["account", "--size", "5", "--owners", "2", "--dim", "100000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    tight = out["validation"]["tight"]
    assert tight is not None and 0 < tight <= out["validation"]["kov"]


@pytest.mark.parametrize(
    "argv, argument",
    [
        (["account", "--schedule", "theorem2", "--size", "200", "--owners", "3", "--epsilon", "1"], "seed set"),
        (["account", "--size", "5", "--owners", "2", "--dim", str(2**40)], "dim"),
        (["account", "--size", str(2**70), "--owners", "2"], "size"),
    ],
    ids=["theorem2-seed-set", "dim-cap", "size-cap"],
)
def test_cli_account_absurd_schedules_fail_fast(argv, argument, capsys):
    # Each of these ran for minutes or was killed for memory before the caps; now one line, exit 2.
    line = one_line_exit_2(main(argv), capsys)
    assert argument in line
