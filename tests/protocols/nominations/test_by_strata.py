"""The purchase by strata (ByStrata): cells from public attributes the user names, their levels declared on the
purchase; the label purchase is the case "the strata are the labels"."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

import dpsumm
from dpsumm.strata import levels_tuple
from strata_data import LEVELS, strata_data, strata_method


def test_a_strata_run_buys_by_stratum_returns_the_training_labels_and_is_certified() -> None:
    owners, V, vs = strata_data()
    res = dpsumm.summarize(owners, V, 12, strata_method(), validation_strata=vs, random_state=0, progress=False)
    assert len(res) == 12 and res.accessed.total <= 3 * 12
    for k, i, y in zip(res.owner, res.index, res.labels):  # the training labels, not the strata
        assert y == owners[k].labels[i]
    region = np.array([owners[k].strata[0][i] for k, i in zip(res.owner, res.index)])
    assert "west" not in region  # outside the declared levels: never sold
    assert (region == "south").sum() >= 9  # the consumer's stratum
    cells = {c["label"] for c in res.extra["label_cells"]}
    assert cells <= {(r, f) for r in LEVELS[0] for f in LEVELS[1]}
    assert res.privacy.epsilon("owners", 1e-6) <= 1.0 and res.privacy.epsilon("validation", 1e-6) <= 1.0
    private = dpsumm.summarize(owners, V, 12, strata_method(), validation_strata=vs, progress=False)
    assert private.certification().status == "private, certified"


def test_every_form_of_strata_gives_the_same_run() -> None:
    """A list of columns, a 2-D object array, a DataFrame: the same strata, the same summary (seeded)."""
    owners, V, vs = strata_data()
    ref = dpsumm.summarize(owners, V, 12, strata_method(), validation_strata=vs, random_state=1, progress=False)
    forms: list[tuple[list[Any], Any]] = [
        (
            [pd.DataFrame({"region": o.strata[0], "flag": o.strata[1]}) for o in owners],
            pd.DataFrame({"region": vs[0], "flag": vs[1]}),
        ),
        ([np.array(o.strata, dtype=object).T for o in owners], np.array(vs, dtype=object).T),
    ]
    for owner_strata, vstrata in forms:
        again = [dpsumm.Owner(o.data, labels=o.labels, strata=s, name=o.name) for o, s in zip(owners, owner_strata)]
        res = dpsumm.summarize(again, V, 12, strata_method(), validation_strata=vstrata, random_state=1, progress=False)
        np.testing.assert_array_equal(res.owner, ref.owner)
        np.testing.assert_array_equal(res.index, ref.index)


def test_strata_of_the_labels_make_the_same_cells_as_the_label_purchase() -> None:
    """ByLabel is the special case whose one attribute is the label: the same cells, quotas per cell and ledger (at
    ByLabel's reserve, 0)."""
    owners, V, _ = strata_data()
    labelled = [dpsumm.Owner(o.data, labels=o.labels, name=o.name) for o in owners]
    as_strata = [dpsumm.Owner(o.data, labels=o.labels, strata=o.labels, name=o.name) for o in owners]
    yv = np.arange(40) % 5
    by_label = dpsumm.summarize(
        labelled,
        V,
        12,
        dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=range(5))),
        validation_labels=yv,
        random_state=2,
        progress=False,
    )
    by_strata = dpsumm.summarize(
        as_strata,
        V,
        12,
        dpsumm.Nominations(purchase=dpsumm.ByStrata(levels=[range(5)], reserve=0.0)),
        validation_strata=yv,
        random_state=2,
        progress=False,
    )
    assert [c["owners"] for c in by_label.extra["label_cells"]] == [c["owners"] for c in by_strata.extra["label_cells"]]
    assert [(c["label"],) for c in by_label.extra["label_cells"]] == [
        c["label"] for c in by_strata.extra["label_cells"]
    ]
    assert by_label.extra["label_quotas"] == by_strata.extra["label_quotas"]
    events = [
        [e["party"], e["event"]["noise_multiplier" if "noise_multiplier" in e["event"] else "epsilon"]]
        for e in by_label.privacy.to_dict()["entries"]
    ]
    assert events == [
        [e["party"], e["event"]["noise_multiplier" if "noise_multiplier" in e["event"] else "epsilon"]]
        for e in by_strata.privacy.to_dict()["entries"]
    ]


@pytest.mark.parametrize(
    "levels",
    [
        (),
        [("a", "a")],
        [("a", 1)],
        [(1.0, float("nan"))],
        [[]],
        ["a", ("b",)],
        [tuple(range(300)), tuple(range(300))],
        "abc",
        None,
    ],
)
def test_bad_levels_are_refused_naming_levels(levels: Any) -> None:
    with pytest.raises(dpsumm.InvalidParameterError) as info:
        dpsumm.ByStrata(levels=levels)
    assert info.value.argument == "levels"


def test_levels_tuple_refuses_too_many_cells() -> None:
    with pytest.raises(dpsumm.InvalidParameterError, match="more than"):
        levels_tuple([range(300), range(300)])
