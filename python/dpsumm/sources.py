"""An owner's rows read from where they live: a ``.npy`` file (memory-mapped), a parquet file or a directory of
parquet files (read in record batches with pyarrow), or an iterable of chunks.

:func:`open_rows` returns a :class:`RowSource` whose ``data`` is never a copy of the rows in the process's
anonymous memory: a ``.npy`` file is memory-mapped as it is; a parquet table is a :class:`ParquetRows`, whose
every pass reads the files' record batches again (:func:`row_blocks`) and whose rows sold are fetched by index by
reading only the row groups that hold them (:func:`take_rows`); chunks, which can be read only once, are written
once to a ``.npy`` file in ``spill_dir`` (a temporary directory by default), which is then mapped. The owner's
passes (hash sums, scores) are Rust kernels that read the rows block by block, in pieces of whole blocks
(:func:`pass_rows`), so the summary is the same, bit for bit, as with the same rows in memory (the kernels see the
same values in the same order and sum them in the same order). The kernels that need every row at once (the paper
protocol's bid index, nominations over all rows, a tilted sale) get the parquet rows written once to a mapped
``.npy`` file (:func:`whole_rows`). Rows scaled to a declared range are a :class:`ScaledRows` over any of these
(:func:`scaled`): each block of a pass and each fetch scaled as it is read, so that the scaled rows are never held
at once either; a parquet table taken by column name (features, labels, strata) is
:func:`dpsumm.party_tables.open_party_table`.

Every check is made while the rows are read the first time, before any release: a column of the wrong type, a NaN
or an infinite value (naming the file, the row and the column), a null, a truncated file. A file that changes
afterwards (size or modification time) is refused by :meth:`RowSource.check_unchanged`, which an owner party calls
before every message it answers, and by every later pass over a parquet table; so is a parquet file that holds
another number of rows than when it was checked.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np

from . import _core
from ._validation import exc_text
from .errors import DataFileError, InvalidParameterError

__all__ = [
    "DEFAULT_CHUNK_ROWS",
    "ParquetRows",
    "RowSource",
    "ScaledRows",
    "open_rows",
    "scaled",
    "is_row_path",
    "row_blocks",
    "take_rows",
    "whole_rows",
]

_log = logging.getLogger("dpsumm")

#: Rows read per chunk when a source is scanned or spilled (65,536 rows of 64 float32 columns: 16 MB).
DEFAULT_CHUNK_ROWS = 65_536


@dataclass
class RowSource:
    """Rows opened by :func:`open_rows`.

    Attributes
    ----------
    data : numpy.memmap or ParquetRows of shape (n_rows, n_features)
        The rows: a read-only memory map (a ``.npy`` file, or chunks written once to one), or a
        :class:`ParquetRows` read in record batches at each pass (float32 or float64, as stored).
    labels : ndarray of shape (n_rows,) or None
        The label column (parquet) or None.
    strata : list of ndarray of shape (n_rows,) or None
        The strata columns (parquet), one array per column, or None.
    path : Path or None
        The file or directory read (None for an iterable of chunks).
    columns : list of str
        The feature columns' names (parquet), or ``column 0``, ``column 1``, ... otherwise.
    peak : float
        ``max |x|`` over the rows, from the read that checked them.
    """

    data: Any
    labels: np.ndarray | None = None
    strata: list[np.ndarray] | None = None
    path: Path | None = None
    columns: list[str] = field(default_factory=list)
    peak: float = 0.0
    _check: Callable[[], None] | None = None

    def check_unchanged(self) -> None:
        """Raise :class:`~dpsumm.errors.DataFileError` when the file (each parquet file) changed (size or
        modification time) since it was opened: its rows may no longer be the ones checked and hashed."""
        if self._check is not None:
            self._check()


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


def _refuse_bad_chunk(chunk: np.ndarray, start: int, where: str, columns: Sequence[str], argument: str) -> float:
    """``max |x|`` over a chunk; a value that is not finite in float32 refused, naming ``where`` (the file), the row
    and the column."""
    if chunk.size == 0:
        return 0.0
    peak: float | None = _core.finite_max_abs(chunk)
    if peak is not None:
        return peak
    with np.errstate(over="ignore"):  # a float64 value beyond the float32 range: refused below, without a warning
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
    except (ValueError, EOFError) as exc:  # a header or size numpy cannot map: corrupt, truncated or empty
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
    peak = 0.0
    for start in range(0, data.shape[0], chunk_rows):
        chunk = np.asarray(data[start : start + chunk_rows])
        peak = max(peak, _refuse_bad_chunk(chunk, start, str(p), columns, argument))
        meter.add(chunk.shape[0])
    stamp = (st.st_size, st.st_mtime_ns)
    return RowSource(data=data, path=p, columns=columns, peak=peak, _check=lambda: _check_stamp(p, stamp, argument))


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

    def discard(self) -> None:
        """Close and remove the spill (rows refused while they were written)."""
        self.fh.close()
        self._remove()

    def _remove(self) -> None:
        try:
            self.path.unlink()
            os.rmdir(self.dir)
        except OSError:  # a system that does not remove an open mapping's file: left for the temporary directory
            pass

    def finish(self) -> np.ndarray:
        """The rows written, memory-mapped; the file and its directory removed at once (the mapping keeps the pages
        until it is dropped), so that no spill outlives its rows."""
        self._header(self.rows)
        self.fh.close()
        data: np.ndarray = np.load(self.path, mmap_mode="r", allow_pickle=False)
        self._remove()
        return data


def _arrow_kind(column_type: Any) -> str | None:
    """'f' (float), 'i' (integer or boolean) or None for an arrow type."""
    import pyarrow as pa

    if pa.types.is_floating(column_type):
        return "f"
    if pa.types.is_integer(column_type) or pa.types.is_boolean(column_type):
        return "i"
    return None


#: Rows of one block of the owners' Rust passes (``BLOCK_ROWS`` of rust/src/owner_sketch.rs): a pass over a
#: :class:`ParquetRows` reads whole blocks at a time, so that its sums have the bits of one pass over an array.
PASS_BLOCK_ROWS = 256


def pass_rows(chunk_rows: int) -> int:
    """Rows a pass reads at a time: ``chunk_rows`` rounded up to whole blocks of :data:`PASS_BLOCK_ROWS`."""
    return -(-int(chunk_rows) // PASS_BLOCK_ROWS) * PASS_BLOCK_ROWS


@dataclass(frozen=True)
class _RowGroup:
    """One parquet row group of a :class:`ParquetRows`: its file, its number there and its first row overall."""

    file: str
    group: int
    start: int
    rows: int


class _StoredRows:
    """What the stored row sources share: their length, rows by index (:meth:`take`) and the whole array
    (:meth:`mapped`)."""

    ndim = 2
    shape: tuple[int, int]
    dtype: np.dtype[Any]
    spill_dir: str | os.PathLike[str] | None
    _mapped: np.ndarray | None

    def take(self, index: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def blocks(self, chunk_rows: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
        raise NotImplementedError

    def mapped(self) -> np.ndarray:
        """Every row as a pass reads it, written once (at the first call) to a ``.npy`` file in ``spill_dir`` and
        memory-mapped: for the kernels that need them all at once."""
        if self._mapped is None:
            _log.info("%r: writing its rows once to a mapped .npy file for a pass over all of them", self)
            spill = _Spill(self.spill_dir, self.shape[1], self.dtype)
            try:
                for _, block in self.blocks():
                    spill.write(block)
            except BaseException:
                spill.discard()
                raise
            self._mapped = spill.finish()
        return self._mapped

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key: object) -> np.ndarray:
        """Rows by index: an int (one row), a slice or an array of ints (:meth:`take`)."""
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            row: np.ndarray = self.take(np.array([int(key)]))[0]
            return row
        if isinstance(key, slice):
            return self.take(np.arange(self.shape[0])[key])
        return self.take(np.asarray(key))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """Every row as an array: :meth:`mapped` (a memory map, never an anonymous copy of the rows)."""
        data = self.mapped()
        return data if dtype is None else data.astype(dtype, copy=False)


class ParquetRows(_StoredRows):
    """An owner's rows in parquet files, read where they live and never held in memory at once.

    A pass (:meth:`blocks`) reads the files' record batches in order, :func:`pass_rows` rows at a time; the rows
    sold are fetched by index (:meth:`take`, or ``rows[index]``) by reading only the row groups that hold them. Both
    first check that no file changed (size or modification time) since :func:`open_rows` checked every value, and
    refuse a file that holds another number of rows than its metadata said. The kernels that need every row at
    once (the paper protocol's bid index, nominations over all rows, a tilted sale, the non-distributed methods)
    get :meth:`mapped`: the rows written once to a ``.npy`` file in ``spill_dir`` and memory-mapped.

    Attributes
    ----------
    shape : tuple of int
        ``(n_rows, n_features)``.
    dtype : numpy.dtype
        float32 when every feature column is float32 (or float16), else float64.
    columns : list of str
        The feature columns, in the table's order.
    """

    def __init__(
        self,
        path: Path,
        columns: list[str],
        dtype: np.dtype[Any],
        groups: list[_RowGroup],
        stamps: dict[str, tuple[int, int]],
        *,
        chunk_rows: int,
        spill_dir: str | os.PathLike[str] | None,
        argument: str,
    ) -> None:
        self.path, self.columns, self.dtype = path, columns, dtype
        self.shape = (sum(g.rows for g in groups), len(columns))
        self.chunk_rows, self.spill_dir, self.argument = chunk_rows, spill_dir, argument
        self._groups, self._stamps = groups, stamps
        self._starts = np.array([g.start for g in groups], dtype=np.int64)
        self._mapped: np.ndarray | None = None
        self._kept = (np.zeros(0, dtype=np.int64), np.zeros((0, len(columns)), dtype=dtype))  # the latest fetch

    def __repr__(self) -> str:
        return f"ParquetRows({str(self.path)!r}, shape={self.shape}, dtype={self.dtype})"

    def check_unchanged(self) -> None:
        """Raise :class:`~dpsumm.errors.DataFileError` when a file changed (size or modification time) since it was
        checked: its rows may no longer be the ones checked and hashed."""
        for file, stamp in self._stamps.items():
            _check_stamp(Path(file), stamp, self.argument)

    def _block(self, batch: Any, where: str, start: int) -> np.ndarray:
        """A record batch's feature columns as a (rows, features) array in column order (each column one copy; the
        Rust passes take any strides), a null refused (naming file and column)."""
        block: np.ndarray = np.empty((len(self.columns), batch.num_rows), dtype=self.dtype).T
        for j, name in enumerate(self.columns):
            column = batch.column(name)
            if column.null_count:
                raise DataFileError(
                    f"`{self.argument}`: column {name!r} of {where} holds a null (missing value) near row {start}: "
                    "fill or drop it first",
                    where,
                    self.argument,
                )
            block[:, j] = column.to_numpy(zero_copy_only=False)
        return block

    def blocks(self, chunk_rows: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
        """Every row in order as ``(first row, rows)``, :func:`pass_rows` ``(chunk_rows)`` rows at a time (the last
        piece shorter), read from the files' record batches."""

        self.check_unchanged()
        step = pass_rows(self.chunk_rows if chunk_rows is None else chunk_rows)
        pending: list[np.ndarray] = []
        have = start = 0
        files = list(dict.fromkeys(g.file for g in self._groups))
        for file in files:
            try:
                batches = _reader(file).iter_batches(batch_size=step, columns=self.columns)
                for batch in batches:
                    pending.append(self._block(batch, file, start + have))
                    have += batch.num_rows
                    while have >= step:
                        buf = pending[0] if len(pending) == 1 else _stack(pending)
                        yield start, buf[:step]
                        rest = buf[step:]
                        pending, have, start = ([rest] if len(rest) else []), len(rest), start + step
            except DataFileError:
                raise
            except Exception as exc:  # pyarrow's own error types: a file cut or rewritten
                raise DataFileError(
                    f"`{self.argument}`: {file} cannot be read ({exc_text(exc)})", file, self.argument
                ) from exc
        if have:
            yield start, pending[0] if len(pending) == 1 else _stack(pending)
        if start + have != self.shape[0]:
            raise DataFileError(
                f"`{self.argument}`: {self.path} held {start + have} rows in this pass, {self.shape[0]} when it was "
                "checked: it changed; reopen it and start the run again",
                self.path,
                self.argument,
            )

    def take(self, index: np.ndarray) -> np.ndarray:
        """The rows at ``index`` (ints, any shape, in [0, n_rows)), shape ``index.shape + (n_features,)``: only the
        row groups that hold them are read, each once. The rows of the latest fetch are kept: rows among them (the
        rows sold, among the candidates just read) are not read again."""

        idx = np.asarray(index)
        if idx.size and (idx.dtype.kind not in "iu" or idx.min() < 0 or idx.max() >= self.shape[0]):
            raise IndexError(f"row indices must be ints in [0, {self.shape[0]}), got {idx.dtype} {idx.ravel()[:5]}")
        flat = idx.ravel().astype(np.int64)
        out = np.empty((len(flat), self.shape[1]), dtype=self.dtype)
        kept_index, kept_rows = self._kept
        at = np.minimum(np.searchsorted(kept_index, flat), max(len(kept_index) - 1, 0))
        if len(flat) and len(kept_index) and np.array_equal(kept_index[at], flat):
            self.check_unchanged()
            out[:] = kept_rows[at]
        elif len(flat):
            self.check_unchanged()
            order = np.argsort(flat, kind="stable")
            rows = flat[order]
            group = np.searchsorted(self._starts, rows, side="right") - 1
            cuts = np.flatnonzero(np.diff(group)) + 1
            files: dict[str, Any] = {}
            for part in np.split(np.arange(len(rows)), cuts):
                g = self._groups[int(group[part[0]])]
                try:
                    reader = files.get(g.file) or files.setdefault(g.file, _reader(g.file))
                    batch = reader.read_row_group(g.group, columns=self.columns)
                except Exception as exc:
                    raise DataFileError(
                        f"`{self.argument}`: {g.file} cannot be read ({exc_text(exc)})",
                        g.file,
                        self.argument,
                    ) from exc
                if batch.num_rows != g.rows:
                    raise DataFileError(
                        f"`{self.argument}`: row group {g.group} of {g.file} holds {batch.num_rows} rows, {g.rows} "
                        "when it was checked: it changed; reopen it and start the run again",
                        g.file,
                        self.argument,
                    )
                out[order[part]] = self._block(batch, g.file, g.start)[rows[part] - g.start]
            unique = np.unique(rows, return_index=True)[1]
            self._kept = (rows[unique], out[order[unique]])
        return out.reshape(idx.shape + (self.shape[1],))


def _reader(file: str) -> Any:
    """A parquet file's reader that reads one row group's column chunks at a time (``pre_buffer=False``: pyarrow's
    default buffers the chunks of the whole file as it goes, in anonymous memory)."""
    import pyarrow.parquet as pq

    return pq.ParquetFile(file, pre_buffer=False)


def _stack(blocks: list[np.ndarray]) -> np.ndarray:
    """Blocks of rows in column order stacked, in column order."""
    stacked: np.ndarray = np.concatenate([b.T for b in blocks], axis=1).T
    return stacked


def _check_stamp(p: Path, stamp: tuple[int, int], argument: str) -> None:
    """Refuse a file whose size or modification time is no longer ``stamp``."""
    try:
        st = p.stat()
    except OSError as exc:
        raise DataFileError(f"`{argument}`: {p} can no longer be read ({exc})", p, argument) from exc
    if (st.st_size, st.st_mtime_ns) != stamp:
        raise DataFileError(
            f"`{argument}`: {p} changed while it was in use (size or modification time): its rows are no longer "
            "the ones checked and hashed; reopen it and start the run again",
            p,
            argument,
        )


def row_blocks(data: Any, chunk_rows: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
    """An owner's rows in order as ``(first row, rows)``, :func:`pass_rows` ``(chunk_rows)`` at a time: views of an
    array (or memory map; ``chunk_rows`` None: :data:`DEFAULT_CHUNK_ROWS`), record batches of a :class:`ParquetRows`
    (None: its own ``chunk_rows``), the blocks of a :class:`ScaledRows` scaled."""
    if isinstance(data, (ParquetRows, ScaledRows)):
        yield from data.blocks(chunk_rows)
        return
    step = pass_rows(DEFAULT_CHUNK_ROWS if chunk_rows is None else chunk_rows)
    for start in range(0, int(data.shape[0]), step):
        yield start, data[start : start + step]


def take_rows(data: Any, index: np.ndarray) -> np.ndarray:
    """``data[index]`` as a new array: only the row groups holding them read from a :class:`ParquetRows`."""
    if isinstance(data, (ParquetRows, ScaledRows)):
        return data.take(np.asarray(index))
    return np.array(data[np.asarray(index)])


def whole_rows(data: Any) -> np.ndarray:
    """Every row of an owner as one array: the array itself, or a :class:`ParquetRows`' (a :class:`ScaledRows`')
    :meth:`~ParquetRows.mapped`."""
    return data.mapped() if isinstance(data, (ParquetRows, ScaledRows)) else data


class ScaledRows(_StoredRows):
    """An owner's rows (an array, a memory map or a :class:`ParquetRows`) scaled at every read: each block of a pass
    (:meth:`blocks`) and each fetch by index (:meth:`take`) is ``scale(rows)``, a function of each row alone (such
    as :func:`dpsumm.scale_to_unit` at a declared range), so that a pass sees the values, bit for bit, of the whole
    array scaled at once, and the scaled rows are never held in memory at once (:meth:`mapped`: written once to a
    ``.npy`` file in ``spill_dir`` and memory-mapped, for the kernels that need them all).

    Attributes
    ----------
    rows : ndarray or ParquetRows
        The rows as stored.
    shape : tuple of int
    dtype : numpy.dtype
        The scaled rows' type (``scale`` of a row of zeros).
    """

    def __init__(
        self, rows: Any, scale: Callable[[np.ndarray], np.ndarray], *, spill_dir: str | os.PathLike[str] | None = None
    ) -> None:
        self.rows, self.scale, self.spill_dir = rows, scale, spill_dir
        self.shape = (int(rows.shape[0]), int(rows.shape[1]))
        self.dtype = np.asarray(scale(np.zeros((1, self.shape[1]), dtype=rows.dtype))).dtype
        self._mapped: np.ndarray | None = None

    def __repr__(self) -> str:
        return f"ScaledRows({self.rows!r}, shape={self.shape}, dtype={self.dtype})"

    def check_unchanged(self) -> None:
        """The stored rows' check (:meth:`ParquetRows.check_unchanged`); nothing for an array."""
        if isinstance(self.rows, ParquetRows):
            self.rows.check_unchanged()

    def _scaled(self, block: np.ndarray) -> np.ndarray:
        out = np.asarray(self.scale(block))
        if out.shape != block.shape:
            raise ValueError(f"a row scaling must keep the rows' shape: {block.shape} became {out.shape}")
        return out

    def blocks(self, chunk_rows: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
        """Every row in order as ``(first row, scaled rows)``: the stored rows' blocks (:func:`row_blocks`), each
        scaled."""
        for start, block in row_blocks(self.rows, chunk_rows):
            yield start, self._scaled(block)

    def take(self, index: np.ndarray) -> np.ndarray:
        """The scaled rows at ``index`` (ints, any shape): the stored rows fetched (:func:`take_rows`), scaled."""
        idx = np.asarray(index)
        rows = take_rows(self.rows, idx.ravel())
        return self._scaled(rows).reshape(idx.shape + (self.shape[1],))


def scaled(source: RowSource, scale: Callable[[np.ndarray], np.ndarray], peak: float) -> RowSource:
    """``source`` with its rows scaled at every read (:class:`ScaledRows`); ``peak`` bounds ``max |x|`` over the
    scaled rows (1 for a scaling clipped to [0, 1], :func:`dpsumm.scale_to_unit`)."""
    return dataclasses.replace(source, data=ScaledRows(source.data, scale), peak=float(peak))


def _open_parquet(
    p: Path,
    labels: str | None,
    strata: Sequence[str],
    features: Sequence[str] | None,
    chunk_rows: int,
    progress: bool,
    spill_dir: str | os.PathLike[str] | None,
    argument: str,
) -> RowSource:
    try:
        import pyarrow as pa
        import pyarrow.dataset as ds
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise DataFileError("reading .parquet needs pyarrow: pip install 'dpsumm[parquet]'", p, argument) from exc
    try:
        dataset = ds.dataset(str(p), format="parquet")
        schema = dataset.schema
        files = [str(f) for f in dataset.files]
        stamps = {f: (os.stat(f).st_size, os.stat(f).st_mtime_ns) for f in files}
        metas = [pq.read_metadata(f) for f in files]
    except Exception as exc:  # pyarrow raises its own error types for missing or corrupt files
        raise DataFileError(f"`{argument}`: {p} is not a parquet table ({exc_text(exc)})", p, argument) from exc
    names = [str(n) for n in schema.names]
    for col in ([labels] if labels is not None else []) + list(strata):
        if col not in names:
            raise DataFileError(f"`{argument}`: {p} has no column {col!r} (its columns: {names[:20]})", p, argument)
    kept = {c for c in [labels, *strata] if c is not None}
    if features is None:
        features = [n for n in names if n not in kept and not n.startswith("__index_level_")]
    else:
        features = list(features)
        for n in features:
            if n not in names:
                raise DataFileError(
                    f"`{argument}`: {p} has no feature column {n!r} (its columns: {names[:20]})", p, argument
                )
            if n in kept:
                raise DataFileError(
                    f"`{argument}`: column {n!r} of {p} is named as a feature and as the labels or a stratum",
                    p,
                    argument,
                )
    if not features:
        raise DataFileError(f"`{argument}`: {p} has no feature columns", p, argument)
    for n in features:
        if _arrow_kind(schema.field(n).type) is None:
            raise DataFileError(
                f"`{argument}`: column {n!r} of {p} is {schema.field(n).type}, not numbers (name it as the labels "
                "or a stratum, or drop it)",
                p,
                argument,
            )
    all_f32 = all(
        pa.types.is_float32(schema.field(n).type) or pa.types.is_float16(schema.field(n).type) for n in features
    )
    dtype = np.dtype(np.float32 if all_f32 else np.float64)
    groups, start = [], 0
    for f, meta in zip(files, metas):
        for g in range(meta.num_row_groups):
            rows = meta.row_group(g).num_rows
            if rows:
                groups.append(_RowGroup(f, g, start, rows))
            start += rows
    if start == 0:
        raise DataFileError(f"`{argument}`: {p} holds no rows", p, argument)
    rows = ParquetRows(
        p, features, dtype, groups, stamps, chunk_rows=chunk_rows, spill_dir=spill_dir, argument=argument
    )
    label_parts: list[np.ndarray] = []
    strata_parts: list[list[np.ndarray]] = [[] for _ in strata]
    meter = _Progress(f"checking {p}", start, progress)
    peak, done = 0.0, 0
    try:
        for file in files:  # the check: every value, and the labels and strata columns kept
            for batch in _reader(file).iter_batches(batch_size=chunk_rows, columns=features + sorted(kept)):
                block = rows._block(batch, file, done)
                peak = max(peak, _refuse_bad_chunk(block, done, file, features, argument))
                if labels is not None:
                    label_parts.append(np.asarray(batch.column(labels).to_numpy(zero_copy_only=False)))
                for s, col in enumerate(strata):
                    strata_parts[s].append(np.asarray(batch.column(col).to_numpy(zero_copy_only=False)))
                done += batch.num_rows
                meter.add(batch.num_rows)
    except DataFileError:
        raise
    except Exception as exc:
        raise DataFileError(f"`{argument}`: {p} cannot be read ({exc_text(exc)})", p, argument) from exc
    if done != start:
        raise DataFileError(f"`{argument}`: {p} held {done} rows where its metadata says {start}", p, argument)
    lab = np.concatenate(label_parts) if labels is not None else None
    st = [np.concatenate(parts) for parts in strata_parts] if strata else None
    return RowSource(data=rows, labels=lab, strata=st, path=p, columns=features, peak=peak, _check=rows.check_unchanged)


def _open_chunks(
    chunks: Iterable[Any], chunk_rows: int, progress: bool, spill_dir: str | os.PathLike[str] | None, argument: str
) -> RowSource:
    spill: _Spill | None = None
    meter = _Progress("reading chunks", None, progress)
    peak = 0.0
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
            spill.discard()
            raise InvalidParameterError(
                f"`{argument}`: chunk {k} has {chunk.shape[1]} columns, the first had {spill.n_features}", argument
            )
        columns = [f"column {j}" for j in range(chunk.shape[1])]
        for start in range(0, chunk.shape[0], chunk_rows):
            part = np.asarray(chunk[start : start + chunk_rows], dtype=spill.dtype)
            try:
                peak = max(peak, _refuse_bad_chunk(part, spill.rows, f"chunk {k}", columns, argument))
            except DataFileError:
                spill.discard()
                raise
            spill.write(part)
            meter.add(part.shape[0])
    if spill is None or spill.rows == 0:
        if spill is not None:
            spill.discard()
        raise InvalidParameterError(f"`{argument}`: the chunks hold no rows", argument)
    return RowSource(data=spill.finish(), columns=[f"column {j}" for j in range(spill.n_features)], peak=peak)


def open_rows(
    source: object,
    *,
    labels: str | None = None,
    strata: str | Sequence[str] | None = None,
    features: Sequence[str] | None = None,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    progress: bool = False,
    spill_dir: str | os.PathLike[str] | None = None,
    argument: str = "data",
) -> RowSource:
    """Open an owner's rows where they live, checked chunk by chunk (every value read once), without holding them in
    memory.

    Parameters
    ----------
    source : str, os.PathLike or iterable of array-like
        A ``.npy`` file (2-D float32/float64, C order: memory-mapped), a ``.parquet`` file or a directory of
        parquet files (every column but ``labels`` and ``strata`` is a feature), or an iterable of 2-D chunks.
    labels : str, optional
        The parquet column holding the labels.
    strata : str or sequence of str, optional
        The parquet columns holding the strata.
    features : sequence of str, optional
        The parquet columns holding the features, in this order (default: every column but ``labels``, ``strata``
        and pandas' stored index columns).
    chunk_rows : int, default=DEFAULT_CHUNK_ROWS
        Rows read and checked at a time (a later pass over a parquet table: rounded up to whole blocks of
        :data:`PASS_BLOCK_ROWS`).
    progress : bool, default=False
        Log the pass's progress (INFO on the ``dpsumm`` logger).
    spill_dir : path, optional
        Where chunks (and parquet rows, for a kernel that needs them all at once: :func:`whole_rows`) are written
        once as a ``.npy`` file to be mapped (default: a new temporary directory).
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
            return _open_parquet(p, labels, strata_cols, features, rows, progress, spill_dir, argument)
        if p.suffix.lower() != ".npy":
            raise DataFileError(
                f"`{argument}`: {p} is neither a .npy file, a .parquet file nor a directory of parquet files",
                p,
                argument,
            )
        if labels is not None or strata_cols or features is not None:
            raise InvalidParameterError(
                f"`{argument}`: labels, strata and features name columns of a parquet table; {p} is a .npy file",
                argument,
            )
        return _open_npy(p, rows, progress, argument)
    if isinstance(source, np.ndarray) or not isinstance(source, Iterable):
        raise InvalidParameterError(
            f"`{argument}`: expected a path or an iterable of chunks, got {type(source).__name__}", argument
        )
    return _open_chunks(source, rows, progress, spill_dir, argument)
