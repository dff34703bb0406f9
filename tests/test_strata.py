"""Strata as a first-class input (dpsumm.strata, dpsumm.ByStrata): one or several public attributes of each row,
strings and numbers, from arrays, DataFrames and files, declared levels on the purchase, bad input refused naming
the argument before any party is asked anything."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpsumm
from dpsumm import strata as strata_module
from dpsumm.methods import flat_options, levels_text, method_from_options, parse_levels
from dpsumm.parties import ConsumerParty, OwnerParty
from dpsumm.strata import load_strata
from refusal import refused
from strata_data import LEVELS, strata_data, strata_method


def test_levels_read_from_text_and_back_and_round_trip_through_the_entry_points() -> None:
    assert parse_levels("north,south,east;0,1") == LEVELS
    assert parse_levels('[["north","south","east"],[0,1]]') == LEVELS
    assert parse_levels(levels_text(LEVELS)) == LEVELS
    assert parse_levels(levels_text((("a,b", "c"),))) == (("a,b", "c"),)
    m = strata_method()
    assert method_from_options("nominations", flat_options(m)) == m
    assert method_from_options("nominations", {"purchase": "strata", "levels": "north,south,east;0,1"}) == m
    assert dpsumm.ByStrata(levels=("a", "b")).levels == (("a", "b"),)  # one attribute's values alone
    for bad in ("", "a,,b", "[[1]", 3):
        with pytest.raises(dpsumm.InvalidParameterError) as info:
            parse_levels(bad)
        assert info.value.argument == "levels"


class _Untouchable(ConsumerParty):
    def handle(self, message: Any) -> Any:  # pragma: no cover - reaching it is the failure
        raise AssertionError("a party was asked something before the input was checked")


def _refused(owner_strata: list[Any] | None, vstrata: Any, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """The argument a bad input is refused by (None: accepted); no party is ever asked anything first."""
    monkeypatch.setattr(dpsumm.summarize.__globals__["ConsumerParty"], "handle", _Untouchable.handle)
    monkeypatch.setattr(OwnerParty, "handle", _Untouchable.handle)
    owners, V, _ = strata_data()
    if owner_strata is not None:
        owners = [dpsumm.Owner(o.data, labels=o.labels, strata=s, name=o.name) for o, s in zip(owners, owner_strata)]
    try:
        dpsumm.summarize(owners, V, 12, strata_method(), validation_strata=vstrata, random_state=0, progress=False)
    except dpsumm.InvalidParameterError as exc:
        return exc.argument
    except AssertionError:
        return "asked"
    return None


_bad_column = st.one_of(
    # a wrong length: neither the validation set's 40 rows nor an owner's 150
    st.integers(1, 200).filter(lambda n: n not in (40, 150)).map(lambda n: [np.array(["south"] * n), np.ones(n, int)]),
    st.just([np.array(["south"] * 39 + [None], dtype=object), np.ones(40, int)]),  # an object (None) value
    st.just([np.array(["south"] * 20 + [1] * 20, dtype=object), np.ones(40, int)]),  # mixed kinds
    st.just([np.array(["south"] * 40), np.r_[np.ones(39), np.nan]]),  # NaN
    st.just([np.array(["west"] * 40), np.ones(40, int)]),  # undeclared levels only
    st.just([np.zeros(40), np.ones(40, int)]),  # numbers where the levels are strings
    st.just([np.array(["south"] * 40)]),  # one attribute of two
    st.just([]),  # empty
    st.just(np.zeros((40, 2, 2))),  # 3-D
)


@settings(max_examples=25, deadline=None)
@given(_bad_column)
def test_bad_validation_strata_are_refused_naming_them_before_any_party_is_asked(bad: Any) -> None:
    with pytest.MonkeyPatch.context() as mp:
        assert _refused(None, bad, mp) == "validation_strata"


@settings(max_examples=15, deadline=None)
@given(_bad_column, st.integers(0, 2))
def test_bad_owner_strata_are_refused_naming_owners(bad: Any, k: int) -> None:
    owners, _, vs = strata_data()
    strata = [o.strata for o in owners]
    if isinstance(bad, list) and len(bad) and len(bad[0]) == 40:  # a bad column of the owner's length (150)
        bad = [np.resize(c, 150) for c in bad]
    strata[k] = bad
    if (
        isinstance(bad, list)
        and bad
        and all(np.asarray(c).dtype.kind == "U" and (np.asarray(c) == "west").all() for c in bad[:1])
    ):
        strata = [bad if isinstance(bad, list) else s for s in strata]  # every owner outside the levels
    with pytest.MonkeyPatch.context() as mp:
        assert _refused(strata, vs, mp) in ("owners", "size")


def test_strata_without_a_strata_purchase_or_missing_ones_are_refused() -> None:
    owners, V, vs = strata_data()
    # owners built with strata serve a purchase that reads none: their strata are left aside (issue 55)
    assert len(dpsumm.summarize(owners, V, 12, progress=False)) == 12
    with pytest.raises(dpsumm.InvalidParameterError) as info:
        dpsumm.summarize([o.data for o in owners], V, 12, progress=False, validation_strata=vs)
    assert info.value.argument == "validation_strata"
    with pytest.raises(dpsumm.InvalidParameterError) as info:
        dpsumm.summarize(owners, V, 12, strata_method(), progress=False)
    assert info.value.argument == "validation_strata"
    some = [owners[0], dpsumm.Owner(owners[1].data), owners[2]]
    with pytest.raises(dpsumm.InvalidParameterError) as info:
        dpsumm.summarize(some, V, 12, strata_method(), validation_strata=vs, progress=False)
    assert info.value.argument == "owners"


def test_strata_files_read_as_the_arrays(tmp_path: Path) -> None:
    owners, V, vs = strata_data()
    o = owners[0]
    pd.DataFrame({"region": o.strata[0], "flag": o.strata[1]}).to_csv(tmp_path / "s.csv", index=False)
    pd.DataFrame({"region": o.strata[0], "flag": o.strata[1]}).to_parquet(tmp_path / "s.parquet")
    np.save(tmp_path / "s.npy", np.asarray(o.strata[0]))
    for name in ("s.csv", "s.parquet"):
        cols = load_strata(tmp_path / name, 150)
        np.testing.assert_array_equal(cols[0], o.strata[0])
        np.testing.assert_array_equal(cols[1], o.strata[1])
        assert cols[1].dtype.kind == "i"
    np.testing.assert_array_equal(load_strata(tmp_path / "s.npy")[0], o.strata[0])
    (tmp_path / "bad.csv").write_text("region,flag\nsouth,1\nnorth\n")
    for path, n in ((tmp_path / "bad.csv", None), (tmp_path / "missing.csv", None), (tmp_path / "s.npy", 7)):
        with pytest.raises(dpsumm.InvalidParameterError) as info:
            load_strata(path, n)
        assert info.value.argument == "strata"
    (tmp_path / "nan.csv").write_text("flag\n1\nnan\n")
    with pytest.raises(dpsumm.InvalidParameterError, match="NaN"):
        load_strata(tmp_path / "nan.csv")


def test_the_cli_takes_strata_files_and_levels(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dpsumm.cli import main

    owners, V, vs = strata_data()
    flags = [
        "summarize",
        "--validation",
        str(tmp_path / "v.npy"),
        "--size",
        "12",
        "--out",
        str(tmp_path / "out"),
        "--purchase",
        "strata",
        "--levels",
        "north,south,east;0,1",
        "--random-state",
        "0",
        "--no-progress",
        "--gamma",
        "0.5",
        "--validation-strata",
        str(tmp_path / "vs.csv"),
    ]
    np.save(tmp_path / "v.npy", V)
    pd.DataFrame({"region": vs[0], "flag": vs[1]}).to_csv(tmp_path / "vs.csv", index=False)
    for k, o in enumerate(owners):
        np.save(tmp_path / f"o{k}.npy", o.data)
        pd.DataFrame({"region": o.strata[0], "flag": o.strata[1]}).to_csv(tmp_path / f"s{k}.csv", index=False)
    flags += [
        "--owners",
        *(str(tmp_path / f"o{k}.npy") for k in range(3)),
        "--strata",
        *(str(tmp_path / f"s{k}.csv") for k in range(3)),
    ]
    assert main(flags) == 0, capsys.readouterr().err
    renamed = [dpsumm.Owner(o.data, strata=o.strata, name=f"owner-{k}") for k, o in enumerate(owners)]
    ref = dpsumm.summarize(
        renamed, V, 12, strata_method(), validation_strata=vs, random_state=0, progress=False, gamma=0.5
    )
    np.testing.assert_array_equal(np.load(tmp_path / "out" / "summary.npy"), ref.points)
    assert main([*flags[:-4], "--owners", *(str(tmp_path / f"o{k}.npy") for k in range(3))]) != 0  # no strata


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: strata_module.levels_json(3), "levels"),
        (lambda: strata_module.levels_json([[object()]]), "levels"),
        (lambda: strata_module.strata_columns(np.array(["a", "b"]), "strata", np.zeros(2)), "n_rows"),
        (lambda: strata_module.label_index(np.zeros((2, 2)), np.array([0.0])), "labels"),
        (lambda: strata_module.label_index(np.array([0]), [[0, 1]]), "label_set"),
        (lambda: strata_module.label_index(np.array([object()]), np.array([object(), object()])), "labels"),
        (lambda: strata_module.stratum_index(None, (("a",),)), "columns"),
        (lambda: strata_module.stratum_index([object()], (("a",),)), "columns"),
        (lambda: strata_module.check_strata_against([np.array(["a"])], 3, "strata"), "levels"),
        (lambda: strata_module.check_strata_against([object()], (("a",),), "strata"), "strata"),
    ],
    ids=[
        "levels-int",
        "levels-object",
        "n_rows-array",
        "labels-2d",
        "label_set-2d",
        "objects",
        "columns-none",
        "columns-object",
        "levels-not-levels",
        "column-object",
    ],
)
def test_the_strata_helpers_refuse_bad_input_naming_it(call: Any, argument: str) -> None:
    """Each used to raise a TypeError, AttributeError or ValueError (an array's truth value)."""
    refused(call, argument)


def test_levels_from_json_refuses_what_is_not_text() -> None:
    for bad in (None, 3, ["a"], np.zeros(2)):
        with pytest.raises(dpsumm.ProtocolError, match="not JSON text"):  # was a TypeError from json.loads
            strata_module.levels_from_json(bad)  # type: ignore[arg-type]
