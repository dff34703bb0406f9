"""The streaming tests' check that a parquet table is never read whole."""

from __future__ import annotations

import pytest

from dpsumm.sources import ParquetRows


def whole_reads_refused(monkeypatch) -> list[int]:
    """Refuse every read of a parquet table whole (pyarrow's read_table, a ParquetFile's read) and record the rows of
    each record batch a pass reads (:meth:`ParquetRows._block`)."""
    pq = pytest.importorskip("pyarrow.parquet")

    def whole(*args: object, **kw: object) -> None:
        raise AssertionError("the table was read whole")

    monkeypatch.setattr(pq, "read_table", whole)
    monkeypatch.setattr(pq.ParquetFile, "read", whole)
    sizes: list[int] = []
    real = ParquetRows._block
    monkeypatch.setattr(
        ParquetRows,
        "_block",
        lambda self, batch, where, start: sizes.append(batch.num_rows) or real(self, batch, where, start),
    )
    return sizes
