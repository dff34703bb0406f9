"""Every refusal of the contract suite is checked to come before any budget is spent: while a contract test runs,
each :func:`dpsumm.summarize` call that ends in a refusal of its input (:class:`dpsumm.InvalidParameterError`,
:class:`dpsumm.PrivacyBudgetError`) must have delivered no DP release to any party (the in-process transport counts
them, :mod:`release_counting`); a refusal after a release fails the test that made it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

import dpsumm
from release_counting import counting_releases


@pytest.fixture(autouse=True)
def refusals_spend_nothing(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Wrap :func:`dpsumm.summarize` so that a refused call that released anything fails the test."""
    module = sys.modules["dpsumm.summarize"]
    run = module.summarize
    refusals: list[str] = []

    def checked(*args: Any, **kwargs: Any) -> Any:
        with counting_releases(monkeypatch) as released:
            try:
                return run(*args, **kwargs)
            except (dpsumm.InvalidParameterError, dpsumm.PrivacyBudgetError) as exc:
                refusals.append(str(exc))
                if released:
                    pytest.fail(f"refused after {len(released)} release(s) {released[:4]}: {exc}")
                raise

    monkeypatch.setattr(dpsumm, "summarize", checked)
    monkeypatch.setattr(module, "summarize", checked)
    yield refusals
