"""Plan, then spend: every input check that does not need a release runs before the first one. Each case is refused
naming the user's own argument with no DP release delivered to any party (the suite's ``refusals_spend_nothing``
fixture checks every refusal of the contract suite the same way)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dpsumm
from dpsumm.protocols.nominations.by_direction import ByDirection
from release_counting import counting_releases, is_release

RNG = np.random.default_rng(0)
OWNERS = [dpsumm.Owner(RNG.random((80, 3)), labels=RNG.integers(0, 3, 80), name=f"o{k}") for k in range(3)]
VALIDATION, VALIDATION_LABELS = RNG.random((40, 3)), RNG.integers(0, 3, 40)


def _direction(**kw: Any) -> dpsumm.Nominations:
    return dpsumm.Nominations(dim=32, purchase=ByDirection(**kw))


CASES: dict[str, tuple[dict[str, Any], str]] = {
    "one validation row": ({"validation": VALIDATION[:1]}, "validation"),
    "one validation row, paper": ({"validation": VALIDATION[:1], "method": dpsumm.PaperProtocol(dim=32)}, "validation"),
    "direction, seed_set=0": ({"method": _direction(), "seed_set": 0}, "seed_set"),
    "direction, seed_set=1": ({"method": _direction(), "seed_set": 1}, "seed_set"),
    "direction, identical seed rows": ({"method": _direction(), "seed_set": np.ones((6, 3))}, "seed_set"),
    "features direction, identical seed rows": (
        {"method": _direction(space="features"), "seed_set": np.ones((6, 3))},
        "seed_set",
    ),
    "labels, sale_tilt_share a hair below 1": (
        {
            "method": dpsumm.Nominations(
                dim=32, purchase=dpsumm.ByLabel(label_set=(0, 1, 2), sale_tilt_share=1 - 1.5e-12)
            ),
            "validation_labels": VALIDATION_LABELS,
        },
        "sale_tilt_share",
    ),
    "direction, shares leaving the histogram nothing": (
        {"method": _direction(direction_share=0.5, sale_tilt_share=0.5 - 1e-13)},
        "direction_share",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_refusal_comes_before_any_release(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    change, argument = CASES[case]
    kwargs: dict[str, Any] = {"validation": VALIDATION, "size": 6, "progress": False, **change}
    with counting_releases(monkeypatch) as released, pytest.raises(dpsumm.InvalidParameterError) as info:
        dpsumm.summarize(OWNERS, **kwargs)
    assert info.value.argument == argument, info.value
    assert released == []


def test_one_bin_releases_no_direction(monkeypatch: pytest.MonkeyPatch) -> None:
    """``bins=1`` reads no direction: the consumer releases none, and its histogram gets the direction's share of
    epsilon_v (the ledger records one consumer release at the whole epsilon_v)."""
    with counting_releases(monkeypatch) as released:
        result = dpsumm.summarize(OWNERS, VALIDATION, 6, _direction(bins=1), progress=False, random_state=1)
    assert ("consumer", "direction_request") not in released
    assert [k for p, k in released if p == "consumer"] == ["cell_histogram_request"]
    assert len(result.points) == 6
    with counting_releases(monkeypatch) as released:
        dpsumm.summarize(OWNERS, VALIDATION, 6, _direction(bins=4), progress=False, random_state=1)
    assert ("consumer", "direction_request") in released  # the counter sees the direction when there is one


def test_the_release_counter_sees_every_release_request() -> None:
    """The counting transport's rule, on the requests that release and those that do not: it cannot pass a
    release unseen."""
    from consumer_requests import REQUESTS

    assert all(is_release(r) for r in REQUESTS.values())
    exact = REQUESTS["target gaussian"].__class__(**{**REQUESTS["target gaussian"].__dict__, "release": "exact"})
    assert not is_release(exact)
    assert not is_release(dpsumm.messages.BidRequest(round=0, v=np.zeros(2)))
