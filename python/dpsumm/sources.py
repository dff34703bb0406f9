"""An owner's rows read from where they live: a ``.npy`` file (memory-mapped), a parquet file or a directory of
parquet files (read in record batches with pyarrow's dataset API), or an iterable of chunks.

:func:`open_rows` returns a :class:`RowSource` whose ``data`` is a read-only memory map of the rows, never a copy
of them in the process's anonymous memory: a ``.npy`` file is mapped as it is; parquet batches and chunks are read
``chunk_rows`` rows at a time and written once to a ``.npy`` spill file in ``spill_dir`` (a temporary directory
by default), which is then mapped. The owner's passes (hash sums, scores, bids, nominations) are Rust kernels that
read that mapping block by block, so the operating system pages the rows in and out as they are read; the rows
sold are read back by index from the mapping, without a second read of the source. The summary is the same, bit
for bit, as with the same rows in memory (the kernels see the same values in the same order).

Every check is made while the rows are read the first time, before any release: a column of the wrong type, a NaN
or an infinite value (naming the file, the row and the column), a truncated ``.npy`` file. A ``.npy`` file that
changes afterwards (size or modification time) is refused by :meth:`RowSource.check_unchanged`, which an owner
party calls before every message it answers.
"""

from __future__ import annotations

import logging
import math
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np

from . import _core
from .errors import DataFileError, InvalidParameterError

__all__ = ["DEFAULT_CHUNK_ROWS", "RowSource", "open_rows", "is_row_path"]

_log = logging.getLogger("dpsumm")

#: Rows read per chunk when a source is scanned or spilled (65,536 rows of 64 float32 columns: 16 MB).
DEFAULT_CHUNK_ROWS = 65_536


@dataclass
class RowSource:
    """Rows opened by :func:`open_rows`.

    Attributes
    ----------
    data : numpy.memmap of shape (n_rows, n_features)
        The rows, read-only and memory-mapped (float32 or float64, as stored).
    labels : ndarray of shape (n_rows,) or None
        The label column (parquet) or None.
    strata : list of ndarray of shape (n_rows,) or None
        The strata columns (parquet), one array per column, or None.
    path : Path or None
        The file or directory read (None for an iterable of chunks).
    columns : list of str
        The feature columns' names (parquet), or ``column 0``, ``column 1``, ... otherwise.
    """

    data: np.ndarray
    labels: np.ndarray | None = None
    strata: list[np.ndarray] | None = None
    path: Path | None = None
    columns: list[str] = field(default_factory=list)
    _watched: Path | None = None
    _stamp: tuple[int, int] | None = None

    def check_unchanged(self) -> None:
        """Raise :class:`~dpsumm.errors.DataFileError` when the mapped ``.npy`` file changed (size or modification
        time) since it was opened: its rows may no longer be the ones checked and hashed."""
        if self._watched is None or self._stamp is None:
            return
        try:
            st = self._watched.stat()
        except OSError as exc:
            raise DataFileError(f"{self._watched} can no longer be read ({exc})", self._watched, "data") from exc
        if (st.st_size, st.st_mtime_ns) != self._stamp:
            raise DataFileError(
                f"{self._watched} changed while it was in use (size or modification time): its rows are no longer "
                "the ones checked and hashed; reopen it and start the run again",
                self._watched,
                "data",
            )


def is_row_path(source: object) -> TypeGuard[str | os.PathLike[str]]:
    """Whether ``source`` names a file or directory of rows (a ``str`` or ``os.PathLike``)."""
    return isinstance(source, (str, os.PathLike))


def _chunk_rows(chunk_rows: object) -> int:
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) or int(chunk_rows) < 1:
        raise InvalidParameterError(f"`chunk_rows` must be a positive int, got {chunk_rows!r:.60}", "chunk_rows")
    return int(chunk_rows)


class _Progress:
    """Logs a long pass's progress (INFO on the ``dpsumm`` logger) about every 10 % or 10 s."""

    def __init__(self, what: str, total: int | None, report: bool) -> None:
        self.what, self.total, self.report = what, total, report
        self.done, self.started, self.last, self.next_fraction = 0, time.monotonic(), time.monotonic(), 0.1

    def add(self, rows: int) -> None:
        self.done += rows
        if not self.report:
            return
        now = time.monotonic()
        fraction = self.done / self.total if self.total else 0.0
        if fraction >= self.next_fraction or now - self.last >= 10.0:
            self.last = now
            self.next_fraction = math.floor(fraction * 10 + 1) / 10
            total = f"/{self.total}" if self.total else ""
            _log.info("%s: %d%s rows read (%.1f s)", self.what, self.done, total, now - self.started)


def _refuse_bad_chunk(chunk: np.ndarray, start: int, where: str, columns: Sequence[str], argument: str) -> None:
    """Refuse a chunk with a value that is not finite in float32, naming ``where`` (the file), the row and column."""
    if chunk.size == 0 or _core.finite_max_abs(chunk) is not None:
        return
    bad = ~np.isfinite(chunk.astype(np.float32, copy=False))
    row, col = (int(i) for i in np.unravel_index(int(np.argmax(bad)), chunk.shape))
    name = columns[col] if col < len(columns) else f"column {col}"
    raise DataFileError(
        f"`{argument}`: {where} holds {chunk[row, col]} at row {start + row}, column {name!r} (counting from 0): "
        "NaN, infinities and values beyond the float32 range are refused before anything is released",
        where,
        argument,
    )


def _open_npy(p: Path, chunk_rows: int, progress: bool, argument: str) -> RowSource:
    try:
        data = np.load(p, mmap_mode="r", allow_pickle=False)
        st = p.stat()
    except OSError as exc:
        raise DataFileError(f"`{argument}`: {p} cannot be read ({exc})", p, argument) from exc
    except ValueError as exc:  # a header or size numpy cannot map: corrupt or truncated
        raise DataFileError(f"`{argument}`: {p} is not a readable .npy file ({exc})", p, argument) from exc
    if data.ndim != 2 or data.dtype not in (np.float32, np.float64) or data.shape[0] == 0 or data.shape[1] == 0:
        raise DataFileError(
            f"`{argument}`: {p} must hold a non-empty 2-D float32 or float64 array (rows x features), got "
            f"shape {data.shape} of {data.dtype}",
            p,
            argument,
        )
    if not data.flags.c_contiguous:
        raise DataFileError(f"`{argument}`: {p} is stored in Fortran order; save it in C (row) order", p, argument)
    offset = int(data.offset) if isinstance(data, np.memmap) else 0
    if st.st_size != offset + data.nbytes:
        raise DataFileError(
            f"`{argument}`: {p} is truncated or corrupt: its header claims {data.nbytes} bytes of rows, the "
            f"file holds {st.st_size - offset}",
            p,
            argument,
        )
    columns = [f"column {j}" for j in range(data.shape[1])]
    meter = _Progress(f"checking {p}", data.shape[0], progress)
    for start in range(0, data.shape[0], chunk_rows):
        chunk = np.asarray(data[start : start + chunk_rows])
        _refuse_bad_chunk(chunk, start, str(p), columns, argument)
        meter.add(chunk.shape[0])
    return RowSource(data=data, path=p, columns=columns, _watched=p, _stamp=(st.st_size, st.st_mtime_ns))


class _Spill:
    """A ``.npy`` file written chunk by chunk (the header rewritten with the final row count), then mapped."""

    def __init__(self, spill_dir: str | os.PathLike[str] | None, n_features: int, dtype: np.dtype[Any]) -> None:
        self.dir = tempfile.mkdtemp(prefix="dpsumm-rows-", dir=spill_dir)
        self.path = Path(self.dir) / "rows.npy"
        self.n_features, self.dtype, self.rows = n_features, dtype, 0
        self.fh = open(self.path, "wb")  # noqa: SIM115 - closed in finish()
        self._header(0)

    def _header(self, rows: int) -> None:
        """A version 2.0 header padded to a fixed 256 bytes, so that the final one overwrites the first."""
        from numpy.lib import format as npf

        header = {"descr": npf.dtype_to_descr(self.dtype), "fortran_order": False, "shape": (rows, self.n_features)}
        text = repr(header).encode("latin1")
        body = text + b" " * (256 - 12 - len(text) - 1) + b"\n"
        self.fh.seek(0)
        self.fh.write(b"\x93NUMPY\x02\x00" + len(body).to_bytes(4, "little") + body)
        self.fh.seek(0, os.SEEK_END)

    def write(self, chunk: np.ndarray) -> None:
        self.fh.write(np.ascontiguousarray(chunk, dtype=self.dtype).tobytes())
        self.rows += chunk.shape[0]

    def finish(self) -> np.ndarray:
        self._header(self.rows)
        self.fh.close()
        data: np.ndarray = np.load(self.path, mmap_mode="r", allow_pickle=False)
        return data


def _arrow_kind(column_type: Any) -> str | None:
    """'f' (float), 'i' (integer or boolean) or None for an arrow type."""
    import pyarrow as pa

    if pa.types.is_floating(column_type):
        return "f"
    if pa.types.is_integer(column_type) or pa.types.is_boolean(column_type):
        return "i"
    return None


def _open_parquet(
    p: Path,
    labels: str | None,
    strata: Sequence[str],
    chunk_rows: int,
    progress: bool,
    spill_dir: str | os.PathLike[str] | None,
    argument: str,
) -> RowSource:
    try:
        import pyarrow as pa
        import pyarrow.dataset as ds
    except ImportError as exc:
        raise DataFileError("reading .parquet needs pyarrow: pip install 'dpsumm[parquet]'", p, argument) from exc
    try:
        dataset = ds.dataset(str(p), format="parquet")
        schema = dataset.schema
    except Exception as exc:  # pyarrow raises its own error types for missing or corrupt files
        raise DataFileError(
            f"`{argument}`: {p} is not a parquet table ({type(exc).__name__}: {exc})", p, argument
        ) from exc
    names = [str(n) for n in schema.names]
    for col in ([labels] if labels is not None else []) + list(strata):
        if col not in names:
            raise DataFileError(f"`{argument}`: {p} has no column {col!r} (its columns: {names[:20]})", p, argument)
    kept = {c for c in [labels, *strata] if c is not None}
    features = [n for n in names if n not in kept and not n.startswith("__index_level_")]
    if not features:
        raise DataFileError(f"`{argument}`: {p} has no feature columns", p, argument)
    kinds = {}
    for n in features:
        kind = _arrow_kind(schema.field(n).type)
        if kind is None:
            raise DataFileError(
                f"`{argument}`: column {n!r} of {p} is {schema.field(n).type}, not numbers (name it as the labels "
                "or a stratum, or drop it)",
                p,
                argument,
            )
        kinds[n] = schema.field(n).type
    all_f32 = all(pa.types.is_float32(t) or pa.types.is_float16(t) for t in kinds.values())
    dtype = np.dtype(np.float32 if all_f32 else np.float64)
    try:
        total = int(dataset.count_rows())
    except Exception as exc:
        raise DataFileError(f"`{argument}`: {p} cannot be read ({type(exc).__name__}: {exc})", p, argument) from exc
    spill = _Spill(spill_dir, len(features), dtype)
    label_parts: list[np.ndarray] = []
    strata_parts: list[list[np.ndarray]] = [[] for _ in strata]
    meter = _Progress(f"reading {p}", total, progress)
    try:
        for fragment in dataset.get_fragments():
            where = getattr(fragment, "path", str(p))
            batches = fragment.to_batches(columns=features + list(kept), batch_size=chunk_rows)
            for batch in batches:
                block = np.empty((batch.num_rows, len(features)), dtype=dtype)
                for j, n in enumerate(features):
                    column = batch.column(n)
                    if column.null_count:
                        raise DataFileError(
                            f"`{argument}`: column {n!r} of {where} holds a null (missing value) near row "
                            f"{spill.rows}: fill or drop it first",
                            where,
                            argument,
                        )
                    block[:, j] = column.to_numpy(zero_copy_only=False)
                _refuse_bad_chunk(block, spill.rows, where, features, argument)
                if labels is not None:
                    label_parts.append(np.asarray(batch.column(labels).to_numpy(zero_copy_only=False)))
                for s, col in enumerate(strata):
                    strata_parts[s].append(np.asarray(batch.column(col).to_numpy(zero_copy_only=False)))
                spill.write(block)
                meter.add(batch.num_rows)
    except DataFileError:
        spill.fh.close()
        raise
    except Exception as exc:
        spill.fh.close()
        raise DataFileError(f"`{argument}`: {p} cannot be read ({type(exc).__name__}: {exc})", p, argument) from exc
    if spill.rows != total or total == 0:
        spill.fh.close()
        raise DataFileError(f"`{argument}`: {p} held {spill.rows} rows where its metadata says {total}", p, argument)
    data = spill.finish()
    lab = np.concatenate(label_parts) if labels is not None else None
    st = [np.concatenate(parts) for parts in strata_parts] if strata else None
    return RowSource(data=data, labels=lab, strata=st, path=p, columns=features)


def _open_chunks(
    chunks: Iterable[Any], chunk_rows: int, progress: bool, spill_dir: str | os.PathLike[str] | None, argument: str
) -> RowSource:
    spill: _Spill | None = None
    meter = _Progress("reading chunks", None, progress)
    for k, raw in enumerate(chunks):
        chunk = np.asarray(raw)
        if chunk.ndim != 2 or chunk.dtype.kind not in "fiub" or chunk.shape[1] == 0:
            raise InvalidParameterError(
                f"`{argument}`: chunk {k} must be a 2-D array of real numbers, got shape {chunk.shape} of {chunk.dtype}",
                argument,
            )
        if spill is None:
            spill = _Spill(spill_dir, chunk.shape[1], np.dtype(np.float32 if chunk.dtype == np.float32 else np.float64))
        elif chunk.shape[1] != spill.n_features:
            spill.fh.close()
            raise InvalidParameterError(
                f"`{argument}`: chunk {k} has {chunk.shape[1]} columns, the first had {spill.n_features}", argument
            )
        columns = [f"column {j}" for j in range(chunk.shape[1])]
        for start in range(0, chunk.shape[0], chunk_rows):
            part = np.asarray(chunk[start : start + chunk_rows], dtype=spill.dtype)
            try:
                _refuse_bad_chunk(part, spill.rows, f"chunk {k}", columns, argument)
            except DataFileError:
                spill.fh.close()
                raise
            spill.write(part)
            meter.add(part.shape[0])
    if spill is None or spill.rows == 0:
        if spill is not None:
            spill.fh.close()
        raise InvalidParameterError(f"`{argument}`: the chunks hold no rows", argument)
    return RowSource(data=spill.finish(), columns=[f"column {j}" for j in range(spill.n_features)])


def open_rows(
    source: object,
    *,
    labels: str | None = None,
    strata: str | Sequence[str] | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    progress: bool = False,
    spill_dir: str | os.PathLike[str] | None = None,
    argument: str = "data",
) -> RowSource:
    """Open an owner's rows where they live, checked chunk by chunk, without holding them in memory.

    Parameters
    ----------
    source : str, os.PathLike or iterable of array-like
        A ``.npy`` file (2-D float32/float64, C order: memory-mapped), a ``.parquet`` file or a directory of
        parquet files (every column but ``labels`` and ``strata`` is a feature), or an iterable of 2-D chunks.
    labels : str, optional
        The parquet column holding the labels.
    strata : str or sequence of str, optional
        The parquet columns holding the strata.
    chunk_rows : int, default=DEFAULT_CHUNK_ROWS
        Rows read and checked at a time.
    progress : bool, default=False
        Log the pass's progress (INFO on the ``dpsumm`` logger).
    spill_dir : path, optional
        Where parquet rows and chunks are written once as a ``.npy`` file to be mapped (default: a new temporary
        directory).
    argument : str, default="data"
        The argument name the errors give.

    Returns
    -------
    RowSource

    Raises
    ------
    DataFileError
        The file is missing, truncated, of the wrong type, or holds a NaN, an infinity or a null (naming the
        file, the row and the column).
    """
    rows = _chunk_rows(chunk_rows)
    strata_cols = [strata] if isinstance(strata, str) else list(strata or [])
    if is_row_path(source):
        p = Path(os.fspath(source))
        if not p.exists():
            raise DataFileError(f"`{argument}`: {p} does not exist", p, argument)
        if p.is_dir() or p.suffix.lower() == ".parquet":
            return _open_parquet(p, labels, strata_cols, rows, progress, spill_dir, argument)
        if p.suffix.lower() != ".npy":
            raise DataFileError(
                f"`{argument}`: {p} is neither a .npy file, a .parquet file nor a directory of parquet files",
                p,
                argument,
            )
        if labels is not None or strata_cols:
            raise InvalidParameterError(
                f"`{argument}`: labels and strata name columns of a parquet table; {p} is a .npy file", argument
            )
        return _open_npy(p, rows, progress, argument)
    if isinstance(source, np.ndarray) or not isinstance(source, Iterable):
        raise InvalidParameterError(
            f"`{argument}`: expected a path or an iterable of chunks, got {type(source).__name__}", argument
        )
    return _open_chunks(source, rows, progress, spill_dir, argument)


#: The callable an owner party calls before each message (``RowSource.check_unchanged``).
SourceCheck = Callable[[], None]
