"""The dpsumm command line: demo and summarize."""

from __future__ import annotations

import json

import numpy as np

from dpsumm.cli import main


def test_summarize_writes_summary_provenance_and_report(tmp_path, capsys):
    rng = np.random.default_rng(0)
    paths = []
    for k in range(3):
        p = tmp_path / f"owner{k}.npy"
        np.save(p, rng.normal(size=(40, 4)) + k)
        paths.append(str(p))
    np.savetxt(tmp_path / "val.csv", rng.normal(size=(20, 4)), delimiter=",")
    out = tmp_path / "out"
    code = main(["summarize", "--owners", *paths, "--validation", str(tmp_path / "val.csv"), "--size", "6",
                 "--out", str(out), "--method", "paper-greedy", "--random-state", "1", "--no-progress"])
    assert code == 0
    summary = np.load(out / "summary.npy")
    prov = np.loadtxt(out / "provenance.csv", delimiter=",", skiprows=1, dtype=int)
    assert summary.shape == (6, 4) and prov.shape == (6, 2)
    for row, (k, i) in zip(summary, prov):
        np.testing.assert_array_equal(row, np.load(paths[k])[i])
    report = json.loads((out / "report.json").read_text())
    assert report["accessed"]["total"] == 6


def test_user_error_is_one_line_and_exit_2(tmp_path, capsys):
    code = main(["summarize", "--owners", str(tmp_path / "missing.npy"), "--validation", "x.npy", "--size", "3",
                 "--out", str(tmp_path)])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("dpsumm: error:")
