"""dpsumm report: a run's quality printed and drawn."""

from __future__ import annotations

import json

from dpsumm.cli import main


def _report(size, purchase, east):
    shares = [
        {"value": "east", "summary": east, "validation": 0.7},
        {"value": "west", "summary": 1 - east, "validation": 0.3},
    ]
    quality = {
        "gamma": 1.0,
        "size": size,
        "validation_fit": 0.1,
        "validation_mmd2": 0.01,
        "strata": {"attributes": ["region"], "shares": shares},
        "labels": None,
        "projection": {"summary": [[0.0, 0.1]], "validation": [[0.1, 0.0], [0.2, 0.3]]},
    }
    return {"method": "nominations", "purchase": purchase, "quality": quality}


def test_report_prints_each_run_and_draws(tmp_path, capsys):
    for name, east in (("a", 0.7), ("b", 0.4)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "report.json").write_text(json.dumps(_report(100, "strata", east)))
    assert main(["report", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "share of each stratum (region): summary vs D_v" in out
    assert "east" in out and "70.0 %" in out and "40.0 %" in out
    assert (tmp_path / "a" / "report.png").read_bytes().startswith(b"\x89PNG")
    assert main(["report", str(tmp_path / "a"), "--no-plot", "--plot", str(tmp_path / "x.png")]) == 0
    assert not (tmp_path / "x.png").exists()


def test_report_of_a_directory_without_a_run_is_one_line_exit_2(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "dpsumm summarize" in err[0]
