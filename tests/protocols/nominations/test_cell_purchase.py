"""The cell family's purchase (dpsumm.protocols.nominations.cell_purchase): the machinery of the three cell purchases,
its options' ranges, and its check of an owner's sale against the request and the owner's own released counts."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpsumm
from corrupt_replies import excluded as corrupt_excluded
from corrupt_replies import replace
from dpsumm.protocols.nominations import PURCHASES
from dpsumm.protocols.nominations.cell_messages import CellSale, CellSaleRequest
from dpsumm.protocols.nominations.cell_purchase import CellPurchase, _check_cell_sale
from refusal import refused

CELL_PURCHASES = [cls for cls in PURCHASES.values() if issubclass(cls, CellPurchase)]


def _instance(cls: type[CellPurchase], **kw: object) -> CellPurchase:
    needs = {"labels": {"label_set": (0, 1)}, "strata": {"levels": (("a", "b"),)}}
    return cls(**needs.get(cls.name, {}), **kw)  # type: ignore[arg-type]


def test_the_cell_family_is_three_registered_purchases_over_one_base() -> None:
    assert {cls.name for cls in CELL_PURCHASES} == {"labels", "strata", "direction"}
    assert CellPurchase not in PURCHASES.values()  # not a purchase by itself
    assert all(cls.owner_release and not cls.nominates for cls in CELL_PURCHASES)


@pytest.mark.parametrize("cls", CELL_PURCHASES, ids=lambda c: c.name)
@pytest.mark.parametrize(
    ("option", "bad"),
    [("reserve", 1.0), ("reserve", -0.1), ("sale_tilt_share", 1.0), ("purchase_factor", 0.5), ("purchase_factor", "x")],
)
def test_every_cell_purchase_refuses_an_option_out_of_range_naming_it(cls, option, bad) -> None:
    refused(lambda: _instance(cls, **{option: bad}), option)


def _request(asked: list[int]) -> CellSaleRequest:
    return CellSaleRequest(
        n_features=2,
        dim=8,
        gamma=0.5,
        hash_seed=0,
        count=int(sum(asked)),
        candidates=10,
        reveal="points",
        sample_seed=0,
        key_set=np.arange(len(asked)),
        key_counts=np.asarray(asked, dtype=np.int64),
        key_preference=np.zeros(len(asked)),
        key_herded=np.ones(len(asked), dtype=bool),
        target=np.zeros(0),
    )


def _sale(labels: list[int]) -> CellSale:
    n = len(labels)
    return CellSale(
        n_rows=100,
        tokens=np.arange(n, dtype=np.int64),
        hashes=np.zeros((n, 8), np.float32),
        points=np.zeros((n, 2)),
        labels=np.asarray(labels),
    )


def test_a_sale_is_checked_against_its_asks_and_the_owners_released_counts() -> None:
    """Asked 2 of label 0 and 1 of label 1: selling them is fine; one of label 0 made up by label 1 is a plausible
    shortfall when the owner released about 1 row of label 0, not when it released 40 (5 sigmas above, sigma 1);
    a row beyond the asks with no shortfall, or of a label outside the set, is refused."""
    req = _request([2, 1])
    assert _check_cell_sale(_sale([0, 0, 1]), req, np.array([2.0, 1.0]), 1.0) is None
    assert _check_cell_sale(_sale([0, 1, 1]), req, np.array([1.2, 5.0]), 1.0) is None
    assert "noise sigmas above" in str(_check_cell_sale(_sale([0, 1, 1]), req, np.array([40.0, 5.0]), 1.0))
    assert "beyond the labels' asks" in str(_check_cell_sale(_sale([0, 0, 1, 1]), req, np.array([2.0, 2.0]), 1.0))
    assert "outside the label set" in str(_check_cell_sale(_sale([0, 0, 7]), req, np.array([2.0, 1.0]), 1.0))


def test_a_sale_under_a_cell_rule_must_name_each_rows_cell() -> None:
    req = _request([1, 1])
    by_cells = CellSaleRequest(**{**req.__dict__, "levels": '[["a","b"]]'})
    sale = _sale([0, 1])
    assert "without their cells" in str(_check_cell_sale(sale, by_cells, np.array([1.0, 1.0]), 1.0))
    with_cells = CellSale(**{**sale.__dict__, "cells": np.array([0, 1])})
    assert _check_cell_sale(with_cells, by_cells, np.array([1.0, 1.0]), 1.0) is None
    assert dpsumm.ByStrata in CELL_PURCHASES


@settings(max_examples=150, deadline=None)
@given(
    labels=st.one_of(
        st.none(),
        st.lists(st.integers(-3, 5), min_size=0, max_size=6).map(np.array),
        st.lists(st.text(max_size=3), min_size=3, max_size=3).map(np.array),
        st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=3, max_size=3).map(np.array),
        st.sampled_from([np.array([1 + 2j, 0j, 1j]), np.array([b"a", b"b", b"c"]), np.zeros((3, 2))]),
    ),
    cells=st.lists(st.integers(0, 5), min_size=3, max_size=3).map(lambda c: np.array(c, dtype=np.int64)),
)
def test_the_recomputed_cells_check_answers_any_sale_with_a_reason_or_none(labels: Any, cells: np.ndarray) -> None:
    """The aggregator's recomputation of the cells of a sale (crossed labels x two bins) on any labels an owner may
    send: a reason to exclude it, or None; never an exception (a generic one would stop the run after every release)."""
    from types import SimpleNamespace

    from dpsumm.protocols.nominations.cell_purchase import _check_cells

    rule = {
        "levels": "",
        "cross_labels": np.array([0, 1, 2]),
        "direction": np.array([1.0, 0.0]),
        "centre": np.zeros(2),
        "edges": np.array([0.5]),
        "direction_dim": 0,
        "direction_gamma": 0.0,
        "direction_seed": "",
    }
    points = np.array([[0.0, 0.0], [1.0, 0.0], [0.2, 0.0]])
    sale = SimpleNamespace(labels=labels, cells=cells, tokens=np.arange(3))
    out = _check_cells(sale, SimpleNamespace(**rule), points)  # type: ignore[arg-type]
    assert out is None or isinstance(out, str)
    if labels is not None and labels.dtype.kind in "iu" and labels.shape == (3,):
        honest = np.where(labels >= 0, labels, 0) * 2 + np.array([0, 1, 0])
        sold = SimpleNamespace(labels=labels, cells=honest, tokens=np.arange(3))
        in_set = bool(((labels >= 0) & (labels <= 2)).all())
        assert (_check_cells(sold, SimpleNamespace(**rule), points) is None) == in_set  # type: ignore[arg-type]


# -- owners' replies of the wrong type, dtype or range (tests/corrupt_replies.py) --------------------------------

LABELS = dpsumm.Nominations(dim=32, purchase=dpsumm.ByLabel(label_set=(0, 1, 2)))
STRATA = dpsumm.Nominations(dim=32, purchase=dpsumm.ByStrata(levels=(("a", "b", "c"),)))


@pytest.mark.parametrize(
    "method, kind, change, match",
    [
        (LABELS, "cell_release", replace(sigma="junk"), "sigma"),
        (LABELS, "cell_release", lambda r, m: dataclasses.replace(r, values=r.values.astype(complex)), "dtype"),
        (STRATA, "cell_sale", replace(labels=None), "sold no labels"),
        (STRATA, "cell_sale", lambda r, m: dataclasses.replace(r, points=np.full_like(r.points, 1e300)), "cannot hash"),
    ],
    ids=["sigma-str", "complex-release", "sale-without-labels", "rows-beyond-float32"],
)
def test_a_malformed_cell_reply_excludes_its_owner(method, kind, change, match):
    """A sigma that is not a number used to raise a ValueError, complex values a ComplexWarning, a labelled owner's
    sale without labels an IndexError when its row won, rows h1 cannot hash an InvalidParameterError about `X`."""
    corrupt_excluded(method, kind, change, match)
