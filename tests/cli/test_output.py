"""dpsumm.cli.output: the report a CLI run writes says what the ledger certifies."""

from __future__ import annotations

import json

import numpy as np

import dpsumm
from dpsumm import accounting
from dpsumm.accounting.ledger import NOT_CERTIFIED


def _data():
    rng = np.random.default_rng(0)
    owners = [
        dpsumm.Owner(rng.normal(loc=k * 0.7, scale=0.5, size=(40, 4)), labels=np.full(40, k), name=f"o{k}")
        for k in range(3)
    ]
    validation = rng.normal(loc=1.0, scale=0.5, size=(30, 4))
    seed_set = rng.normal(size=(12, 4))
    return owners, validation, seed_set


def test_cli_report_json_says_so(tmp_path, capsys):
    owners, validation, _ = _data()
    paths = []
    for k, o in enumerate(owners):
        np.save(tmp_path / f"o{k}.npy", o.data)
        paths.append(str(tmp_path / f"o{k}.npy"))
    np.save(tmp_path / "v.npy", validation)
    from dpsumm.cli import main

    out = tmp_path / "out"
    code = main(
        [
            "summarize",
            "--owners",
            *paths,
            "--validation",
            str(tmp_path / "v.npy"),
            "--size",
            "6",
            "--purchase",
            "winners",
            "--dim",
            "32",
            "--gamma",
            "0.3",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0, capsys.readouterr().err
    report = json.loads((out / "report.json").read_text())
    assert report["certified"] is False
    assert report["privacy"]["certification"]["status"] == NOT_CERTIFIED
    assert accounting.Ledger.from_dict(report["privacy"]).certification().status == NOT_CERTIFIED
