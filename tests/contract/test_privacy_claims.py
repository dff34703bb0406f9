"""Privacy claims cannot lie, across every surface that states one: one certification decides, and the result's
repr, the ledger's text and dict, the CLI report and the Flower result all say what the ledger certifies; the
winners purchase's owners are infinite everywhere.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import dpsumm
from dpsumm import accounting
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


def _surfaces(res, tmp_path):
    """Every place a user reads whether a result is private and certified: name -> what it says."""
    out = {
        "repr": repr(res),
        "privacy_status()": res.privacy_status(),
        "certification()": res.certification().status,
        "privacy_text()": res.privacy_text().splitlines()[
            0 if res.privacy is None else (1 if res.privacy.seeded else 0)
        ],
    }
    if res.privacy is not None:
        out["ledger.table()"] = res.privacy.table()
        d = json.loads(json.dumps(res.privacy.to_dict()))
        out["ledger.to_dict()"] = d["certification"]["status"]
        out["Ledger.from_dict(to_dict())"] = accounting.Ledger.from_dict(d).certification().status
    pytest.importorskip("flwr")
    from dpsumm.flower.server_app import load_result, save_result

    back = load_result(save_result(res, tmp_path / f"r{abs(hash(repr(res)))}.npz"))
    out["flower save/load: privacy_status()"] = back.privacy_status()
    out["flower save/load: repr"] = repr(back)
    return out


@pytest.mark.parametrize("path", list(PATHS))
def test_every_surface_says_what_the_ledger_certifies(path, results, tmp_path):
    res, status = results[path], PATHS[path][1]
    assert res.certification().status == status
    for surface, text in _surfaces(res, tmp_path).items():
        assert status in text, f"{path}: {surface} says {text!r}, not {status!r}"
        others = {CERTIFIED, NOT_CERTIFIED, SEEDED, NOT_PRIVATE} - {status}
        # "private, certified" is not a substring of the others, and vice versa
        assert not any(o in text for o in others if o not in status), f"{path}: {surface} also says {text!r}"
    verdict = res.privacy_text().splitlines()[-1]
    assert verdict.startswith("certified: yes" if status == CERTIFIED else "certified: NO")


def test_winners_owners_are_infinite_everywhere(results):
    led = results["purchase='winners'"].privacy
    assert led.epsilon("owners") == math.inf and led.totals()["owners"]["tight"] == math.inf
    d = led.to_dict()
    assert d["totals"]["owners"]["tight"] is None and d["certified"] == {"owners": False, "validation": True}
    assert d["certification"]["parties"] == {"owners": False, "validation": True}
    assert any("winners" in r.lower() for r in d["certification"]["reasons"])
