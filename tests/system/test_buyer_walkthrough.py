"""A data buyer's task from the command line on raw CSVs (docs/guide/buyer.md): four owners' tables with a text
'region' column, 300 validation rows whose regions differ from the owners', one command per step, no pandas."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dpsumm
from dpsumm.cli import main

SCALE = "age=18:90,income=0:200000"


def _tables(tmp_path: Path) -> Path:
    d = tmp_path / "tables"
    dpsumm.datasets.write_region_tables(d, owner_rows=300, validation_rows=300, test_rows=50, random_state=1)
    return d


def _summarize(d: Path, out: Path, *extra: str) -> list[str]:
    owners = [str(d / f"owner-{k}.csv") for k in range(1, 5)]
    return [
        "summarize", "--owners", *owners, "--validation", str(d / "validation.csv"), "--size", "60",
        "--label-column", "outcome", "--strata-columns", "region", "--scale", SCALE,
        "--out", str(out), "--no-progress", "--random-state", "3", *extra,
    ]  # fmt: skip


@pytest.mark.slow
def test_the_buyers_task_runs_on_raw_csvs_without_pandas(tmp_path: Path) -> None:
    d = _tables(tmp_path)
    levels = "north,south,east,west"
    script = (
        "import sys, json; from dpsumm.cli import main\n"
        f"assert main({_summarize(d, tmp_path / 'strata', '--purchase', 'strata', '--levels', levels)!r}) == 0\n"
        f"assert main({_summarize(d, tmp_path / 'default')!r}) == 0\n"
        f"assert main(['report', {str(tmp_path / 'strata')!r}, {str(tmp_path / 'default')!r}]) == 0\n"
        "assert 'pandas' not in sys.modules, 'the CLI imported pandas'\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "share of each stratum (region): summary vs D_v" in proc.stdout
    strata = json.loads((tmp_path / "strata" / "report.json").read_text())
    default = json.loads((tmp_path / "default" / "report.json").read_text())
    assert strata["purchase"] == "strata" and strata["levels"] == [["north", "south", "east", "west"]]
    assert default["purchase"] == "direction" and default["levels"] is None
    for rep in (strata, default):
        q = rep["quality"]
        assert q["size"] == 60 and 0 <= q["validation_fit"] < 1 and q["gamma"] == rep["gamma"]
        rows = {r["value"]: r for r in q["strata"]["shares"]}
        assert set(rows) == {"north", "south", "east", "west"}
        assert sum(r["summary"] for r in rows.values()) == pytest.approx(1.0)
        assert sum(r["validation"] for r in rows.values()) == pytest.approx(1.0)
        assert rows["east"]["validation"] > 0.5  # the buyer's shift, counted on D_v
        assert {r["value"] for r in q["labels"]["shares"]} == {"yes", "no"}
    east = {r["value"]: r for r in strata["quality"]["strata"]["shares"]}["east"]
    # the strata purchase buys by D_v's released histogram over regions: its summary holds about D_v's share
    assert abs(east["summary"] - east["validation"]) < 0.15
    png = (tmp_path / "strata" / "report.png").read_bytes()
    assert png.startswith(b"\x89PNG")


def test_a_text_column_is_refused_naming_the_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = _tables(tmp_path)
    args = _summarize(d, tmp_path / "out")
    cut = args.index("--label-column")
    assert main(args[:cut] + args[cut + 6 :]) == 2  # without --label-column, --strata-columns and --scale
    err = capsys.readouterr().err
    assert "column 'region'" in err and "--strata-columns region" in err and "--features age,income" in err
    assert "--label-column region" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("--strata-columns", "place"), "--strata-columns: "),
        (("--label-column", "y"), "--label-column: "),
        (
            ("--scale", "age=18:90"),
            "--scale: `scale` must give a range for every feature (age, income); missing: income",
        ),
        (("--scale", "seed"), "--scale seed reads the range of the public seed rows: give them with --seed-set PATH"),
        (("--scale", "9:1"), "LOW < HIGH"),
    ],
)
def test_bad_column_and_scale_flags_name_the_flag(tmp_path, capsys, change, message) -> None:
    d = _tables(tmp_path)
    args = _summarize(d, tmp_path / "out")
    args[args.index(change[0]) + 1] = change[1]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert not (tmp_path / "out").exists()  # refused before any release or output


def test_strata_purchase_without_levels_names_the_flag(tmp_path, capsys) -> None:
    d = _tables(tmp_path)
    assert main(_summarize(d, tmp_path / "out", "--purchase", "strata")) == 2
    assert "--levels" in capsys.readouterr().err


def test_scale_from_the_public_seed_rows(tmp_path) -> None:
    d = _tables(tmp_path)
    seed = tmp_path / "seed.csv"
    seed.write_text("age,income\n18,0\n90,200000\n40,50000\n")
    args = _summarize(d, tmp_path / "out")
    args[args.index("--scale") + 1] = "seed"
    assert main([*args, "--seed-set", str(seed), "--features", "age,income"]) == 0
    rows = __import__("numpy").load(tmp_path / "out" / "summary.npy")
    assert rows.min() >= 0.0 and rows.max() <= 1.0


def test_strata_values_outside_the_levels_name_the_strata_flag(tmp_path, capsys) -> None:
    """A strata error names --strata-columns (the flag to change), not --owners."""
    d = _tables(tmp_path)
    assert main(_summarize(d, tmp_path / "out", "--purchase", "strata", "--levels", "a,b")) == 2
    err = capsys.readouterr().err
    assert "--strata-columns" in err and "--owners" not in err and "--levels" in err, err


def test_a_labels_file_with_a_header_suggests_header_yes(tmp_path, capsys) -> None:
    """A labels file whose first line names its column ('outcome') is one label too many: the error says
    --header yes."""
    rng = np.random.default_rng(0)
    owners = []
    for k in range(2):
        np.save(tmp_path / f"o{k}.npy", rng.random((20, 2)))
        (tmp_path / f"y{k}.csv").write_text("outcome\n" + "\n".join(rng.choice(["yes", "no"], 20)) + "\n")
        owners.append(str(tmp_path / f"o{k}.npy"))
    np.save(tmp_path / "v.npy", rng.random((10, 2)))
    args = ["summarize", "--owners", *owners, "--labels", str(tmp_path / "y0.csv"), str(tmp_path / "y1.csv")]
    args += ["--validation", str(tmp_path / "v.npy"), "--size", "4", "--out", str(tmp_path / "out"), "--no-progress"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--labels" in err and "21 labels for the 20 rows" in err and "--header yes" in err, err
