"""dpsumm.flower.server_app: result files that lie about their privacy are refused by load_result."""

from __future__ import annotations

import json

import numpy as np
import pytest

import dpsumm
from dpsumm.accounting.ledger import CERTIFIED, NOT_CERTIFIED, NOT_PRIVATE, SEEDED


def _data():
    rng = np.random.default_rng(0)
    owners = [
        dpsumm.Owner(rng.normal(loc=k * 0.7, scale=0.5, size=(40, 4)), labels=np.full(40, k), name=f"o{k}")
        for k in range(3)
    ]
    validation = rng.normal(loc=1.0, scale=0.5, size=(30, 4))
    seed_set = rng.normal(size=(12, 4))
    return owners, validation, seed_set


RUN = dict(gamma=0.3, progress=False)


LABELS = dpsumm.Nominations(dim=32, purchase=dpsumm.ByLabel(label_set=(0, 1, 2)))


# Each path: (how to run it, the status every surface must print).
PATHS = {
    "certified nominations": (lambda o, v, s: dpsumm.summarize(o, v, 6, dpsumm.Nominations(dim=32), **RUN), CERTIFIED),
    "purchase='winners'": (
        lambda o, v, s: dpsumm.summarize(o, v, 6, dpsumm.Nominations(dim=32, purchase=dpsumm.Winners()), **RUN),
        NOT_CERTIFIED,
    ),
    "paper, Theorem-6 auction": (
        lambda o, v, s: dpsumm.summarize(
            o, v, 5, dpsumm.PaperProtocol(dim=16, epsilon_auction="theorem6"), seed_set=s, **RUN
        ),
        NOT_CERTIFIED,
    ),
    "seeded": (lambda o, v, s: dpsumm.summarize(o, v, 6, dpsumm.Nominations(dim=32), random_state=0, **RUN), SEEDED),
    # The owner-release purchase: certified by default, NOT private when seeded, on every surface.
    "purchase='labels'": (
        lambda o, v, s: dpsumm.summarize(o, v, 6, LABELS, validation_labels=np.arange(len(v)) % 3, **RUN),
        CERTIFIED,
    ),
    "seeded labels": (
        lambda o, v, s: dpsumm.summarize(
            o, v, 6, LABELS, validation_labels=np.arange(len(v)) % 3, random_state=0, **RUN
        ),
        SEEDED,
    ),
    "validation_release='exact'": (
        lambda o, v, s: dpsumm.summarize(o, v, 6, dpsumm.Nominations(dim=32, validation_release="exact"), **RUN),
        NOT_PRIVATE,
    ),
    "non-private method": (lambda o, v, s: dpsumm.summarize(o, v, 6, "uniform", **RUN), NOT_PRIVATE),
}


@pytest.fixture(scope="module")
def results():
    owners, validation, seed_set = _data()
    return {name: run(owners, validation, seed_set) for name, (run, _) in PATHS.items()}


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
