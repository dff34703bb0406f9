"""Privacy claims cannot lie, across every surface that states one: one certification decides, and the result's
repr, the ledger's text and dict, the CLI report and the Flower result all say what the ledger certifies; the
winners purchase's owners are infinite everywhere.
"""

from __future__ import annotations

import json
import math

import pytest

from certification_paths import PATHS, run_paths
from dpsumm import accounting
from dpsumm.accounting.ledger import CERTIFIED, NOT_CERTIFIED, NOT_PRIVATE, SEEDED


@pytest.fixture(scope="module")
def results():
    return run_paths()


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
