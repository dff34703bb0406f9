"""Tests of dpsumm.party_tables: a party's table read by column name, and a strata file's columns."""

from __future__ import annotations

import numpy as np
import pytest

from dpsumm.errors import DataFileError


def test_read_strata_file_refuses_shapes_it_cannot_read_naming_the_argument(tmp_path):
    """A 0-d .npy, a blank CSV, a header without rows and a column-less parquet are DataFileErrors naming the
    argument (they were TypeError/IndexError); a trailing blank line is read, as load_array reads it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from dpsumm.party_tables import read_strata_file
    from dpsumm.strata import load_strata

    np.save(tmp_path / "zero.npy", np.array(3))
    (tmp_path / "blank.csv").write_text("\n\n")
    (tmp_path / "head.csv").write_text("region\n")
    pq.write_table(pa.table({}), tmp_path / "none.parquet")
    for name in ("zero.npy", "blank.csv", "head.csv", "none.parquet"):
        with pytest.raises(DataFileError) as info:
            load_strata(tmp_path / name, None, "--strata")
        assert info.value.argument == "--strata" and "`--strata`" in str(info.value)
    (tmp_path / "tail.csv").write_text("region,site\neast,1\nwest,2\n\n")
    cols = load_strata(tmp_path / "tail.csv", 2)
    assert cols[0].tolist() == ["east", "west"] and cols[1].tolist() == [1, 2] and cols[1].dtype.kind == "i"
    (tmp_path / "mixed.csv").write_text("region\neast\n3\n")
    with pytest.raises(DataFileError, match="mixes words .'east'. and numbers .'3'."):
        read_strata_file(tmp_path / "mixed.csv")


def test_read_party_table_takes_columns_by_name(tmp_path):
    from dpsumm.errors import InvalidParameterError
    from dpsumm.party_tables import read_party_table

    p = tmp_path / "t.csv"
    p.write_text("age,region,income,outcome\n30,east,100,yes\n40,west,200,no\n50,east,300,yes\n")
    t = read_party_table(p, label_column="outcome", strata_columns="region")
    assert t.features == ("age", "income")
    np.testing.assert_array_equal(t.data, [[30, 100], [40, 200], [50, 300]])
    assert t.labels.tolist() == ["yes", "no", "yes"] and t.strata[0].tolist() == ["east", "west", "east"]
    t = read_party_table(p, features="income,age", strata_columns=["region"])
    np.testing.assert_array_equal(t.data[:, 0], [100, 200, 300])
    assert t.labels is None
    with pytest.raises(DataFileError, match=r"column 'region' .* --strata-columns region.*--features age,income"):
        read_party_table(p, label_column="outcome")
    with pytest.raises(InvalidParameterError, match="has no column 'place'") as info:
        read_party_table(p, label_column="outcome", strata_columns="place")
    assert info.value.argument == "strata_columns"
    with pytest.raises(InvalidParameterError, match="also the label"):
        read_party_table(p, features="age,outcome", label_column="outcome")
    v = read_party_table(p, features="age,income", label_column="y", labels_required=False)
    assert v.labels is None
