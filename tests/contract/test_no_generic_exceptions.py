"""Hostile values at the library's entry points are refused with a dpsumm error (a DpsummError naming what is
wrong), never a generic exception from deep inside: every option of every method and purchase, 0.1's purchase
options beside any purchase, a message rebuilt from anything, and every party request with every field hostile."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dpsumm
import dpsumm.messages as M
from dpsumm.messages import from_dict
from dpsumm.methods import METHOD_CLASSES, PURCHASES
from dpsumm.parties import ConsumerParty, OwnerParty
from dpsumm.privacy import Csprng
from dpsumm.protocols.nominations import by_direction as BD
from dpsumm.protocols.nominations import cell_messages as CM

HOSTILE: list[Any] = [None, float("nan"), float("inf"), -1, 0, 2**70, "x", "", np.array([0, 1]), [0, [1]], True]


def _generic(call: Callable[[], object]) -> str | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
    except dpsumm.DpsummError:
        return None
    except Exception as exc:  # noqa: BLE001 - what the test looks for
        return f"{type(exc).__name__}: {exc}"
    return None


def test_every_option_of_every_method_and_purchase() -> None:
    required = {"label_set": (0, 1, 2), "levels": (("a", "b"),)}
    found = []
    for cls in [*PURCHASES.values(), *METHOD_CLASSES.values()]:
        for opt in cls.option_names():
            for value in HOSTILE:
                kw = {
                    k: v
                    for k, v in required.items()
                    if k in cls.option_names() and (k != "levels" or cls.name == "strata")
                }
                kw[opt] = value
                problem = _generic(lambda: cls(**kw))
                if problem:
                    found.append(f"{cls.__name__}({opt}={value!r:.20}): {problem}")
    assert found == []


def test_legacy_purchase_options_beside_any_purchase() -> None:
    found = []
    for purchase in [*HOSTILE, "labels", "quotas", "auto", dpsumm.Nominees()]:
        for opt in ("label_set", "purchase_factor", "sale_tilt_share", "tilt_rounds"):
            problem = _generic(lambda: dpsumm.Nominations(purchase=purchase, **{opt: (0, 1)}))
            if problem:
                found.append(f"purchase={purchase!r:.20}, {opt}: {problem}")
    assert found == []


@pytest.mark.parametrize("value", [*HOSTILE, {"kind": 5}, {"kind": "bid_request"}])
def test_a_message_rebuilt_from_anything(value: Any) -> None:
    assert _generic(lambda: from_dict(value)) is None


def test_every_party_request_with_every_field_hostile() -> None:
    owner = OwnerParty(np.random.default_rng(0).random((10, 3)), np.arange(10) % 3, "o")
    consumer = ConsumerParty(np.random.default_rng(1).random((10, 3)), Csprng(1), labels=np.arange(10) % 3)
    to_consumer = (M.ValidationRequest, M.TargetRequest, CM.CellHistogramRequest, BD.DirectionRequest)
    found = []
    for cls in (M.Setup, M.BidRequest, M.PointRequest, M.NominationRequest, M.PurchaseRequest, *to_consumer):
        for value in HOSTILE:
            try:
                message = cls(**{f.name: value for f in dataclasses.fields(cls)})
            except Exception:  # noqa: BLE001 - a dataclass that cannot even be built is never sent
                continue
            party = consumer if cls in to_consumer else owner
            problem = _generic(lambda: party.handle(message))
            if problem:
                found.append(f"{cls.__name__} with every field {value!r:.20}: {problem}")
    for cls in (CM.CellReleaseRequest, CM.CellSaleRequest):
        for value in HOSTILE:
            try:
                message = cls(**{f.name: value for f in dataclasses.fields(cls)})
            except Exception:  # noqa: BLE001
                continue
            problem = _generic(lambda: owner.handle(message))
            if problem:
                found.append(f"{cls.__name__} with every field {value!r:.20}: {problem}")
    assert found == []
