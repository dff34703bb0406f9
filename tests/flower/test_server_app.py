"""dpsumm.flower.server_app: result files that lie about their privacy are refused by load_result."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dpsumm
from certification_paths import run_paths
from dpsumm.accounting.ledger import CERTIFIED


@pytest.fixture(scope="module")
def results():
    return run_paths()


@pytest.mark.parametrize("tamper", ["certification", "seeded", "uncertified", "garbage"])
def test_flower_result_files_that_lie_are_refused(results, tmp_path, tamper):
    pytest.importorskip("flwr")
    from dpsumm.flower.server_app import load_result, save_result

    p = save_result(results["purchase='winners'"], tmp_path / "r.npz")
    if tamper == "garbage":
        p.write_bytes(b"PK\x03\x04" + bytes(200))
    else:
        with np.load(p, allow_pickle=False) as z:
            arrays = dict(z)
        report = json.loads(str(arrays["report"]))
        if tamper == "certification":
            report["certification"]["status"] = CERTIFIED
        elif tamper == "seeded":
            report["seeded"] = "false"
        else:
            report["privacy"]["uncertified"] = []
        arrays["report"] = np.array(json.dumps(report))
        np.savez(p, **arrays)
    with pytest.raises(dpsumm.DpsummError):
        load_result(p)
