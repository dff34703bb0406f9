"""The cell purchases' checks of the parties' inputs (dpsumm.protocols.nominations.cell_inputs), made before any
budget is spent: labels against the public label set, strata against the declared levels, enough sellable rows."""

from __future__ import annotations

import numpy as np
import pytest

import dpsumm
from dpsumm.protocols.base import PartyData
from dpsumm.protocols.nominations.cell_inputs import check_cell_party_data

LABELS = dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=(0, 1, 2)))
STRATA = dpsumm.Nominations(purchase=dpsumm.ByStrata(levels=(("a", "b"),)))


def _data(labels=None, strata=None, validation_labels=None, validation_strata=None) -> PartyData:
    datas = [np.zeros((10, 2)), np.zeros((10, 2))]
    return PartyData(
        names=["o0", "o1"],
        datas=datas,
        labels=labels if labels is not None else [None, None],
        strata=strata if strata is not None else [None, None],
        validation_rows=5,
        validation_labels=validation_labels,
        validation_strata=validation_strata,
    )


def test_the_label_purchase_reads_labels_in_its_set_and_refuses_what_it_cannot_sell() -> None:
    y = [np.array([0, 1, 2, 5, 5, 5, 5, 5, 5, 5]), np.array([1] * 10)]
    ok = check_cell_party_data(LABELS, _data(y, validation_labels=np.array([0, 1, 1, 2, 0])), 13)
    assert ok.validation_labels is not None and ok.validation_labels.tolist() == [0, 1, 1, 2, 0]
    assert ok.strata == [None, None] and ok.validation_strata is None
    cases = [
        (lambda: check_cell_party_data(LABELS, _data(y, validation_labels=np.arange(5) + 10), 5), "validation_labels"),
        (lambda: check_cell_party_data(LABELS, _data(y, validation_labels=np.zeros(5, int)), 14), "size"),
        (lambda: check_cell_party_data(LABELS, _data(validation_labels=np.zeros(5, int)), 5), "owners"),
        (lambda: check_cell_party_data(LABELS, _data(y), 5), "validation_labels"),
    ]
    for call, argument in cases:
        with pytest.raises(dpsumm.InvalidParameterError) as info:
            call()
        assert info.value.argument == argument
    # owners built with strata serve the label purchase, which reads none: their strata are left aside
    aside = check_cell_party_data(LABELS, _data(y, [["a"] * 10] * 2, np.zeros(5, int)), 5)
    assert aside.strata == [None, None]


def test_the_strata_purchase_reads_strata_as_columns_in_its_levels() -> None:
    st = [np.array(["a"] * 5 + ["z"] * 5), np.array(["b"] * 10)]
    ok = check_cell_party_data(STRATA, _data(strata=st, validation_strata=np.array(["a", "b", "a", "z", "a"])), 15)
    assert ok.strata is not None and [c[0].tolist() for c in ok.strata] == [st[0].tolist(), st[1].tolist()]
    cases = [
        (
            lambda: check_cell_party_data(STRATA, _data(strata=st, validation_strata=np.array(["z"] * 5)), 5),
            "validation_strata",
        ),
        (lambda: check_cell_party_data(STRATA, _data(strata=st, validation_strata=np.array(["a"] * 5)), 16), "size"),
        (
            lambda: check_cell_party_data(
                STRATA, _data(strata=[st[0], None], validation_strata=np.array(["a"] * 5)), 5
            ),
            "owners",
        ),
        (
            lambda: check_cell_party_data(
                STRATA, _data(strata=[np.arange(10), st[1]], validation_strata=np.array(["a"] * 5)), 5
            ),
            "owners",
        ),
        (
            lambda: check_cell_party_data(
                STRATA, _data(strata=st, validation_strata=np.array(["a"] * 5), validation_labels=np.zeros(5)), 5
            ),
            "validation_labels",
        ),
    ]
    for call, argument in cases:
        with pytest.raises(dpsumm.InvalidParameterError) as info:
            call()
        assert info.value.argument == argument
