"""One experiment run as a record, its tables and its results files (read back)."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._validation import bool_flag, bounded_int
from ..errors import InvalidParameterError
from ..files import _is_dir, _is_file, _os_error, _path_like
from ..methods import METHODS
from ..metrics import mmd_increase_pct

#: The methods an experiment runs by name: every method of :data:`dpsumm.methods.METHODS`, and PFDS.
EXPERIMENT_METHODS: tuple[str, ...] = (*METHODS, "pfds")
#: The baseline of ``mmd_increase_pct``: the first of these among the methods run.
BASELINES = ("central-greedy", "paper-greedy")
CLASSIFIERS = ("mlp", "svm")
#: The Record fields :func:`plot_records` can draw.
PLOT_FIELDS = (
    "mmd2",
    "mmd_increase_pct",
    "accuracy",
    "accessed",
    "seconds",
    "epsilon_owners",
    "epsilon_validation",
    "epsilon_owners_h2",
)
#: Largest h1 dimension (``dim``) a plot title names (rust/src/limits.rs MAX_DIM).
MAX_DIM = 1 << 20
#: Most repeats of :func:`run_experiment` (each repeat runs every method at every size).
MAX_REPEATS = 100_000
#: Largest summary size an experiment asks for (the method objects' cap on counts).
MAX_COUNT = 1 << 40
DELTA_OWNERS = 1e-4  # the paper's δ for the summary (Section 4)
DELTA_VALIDATION = 1e-2  # the paper's δ for the validation set


@dataclass
class Record:
    """One run: a method at a size in a repeat.

    ``epsilon_owners`` is the owners' total by the tight accountant at ``delta_owners`` (the budget's δ,
    or the paper's 1e-4), including the auction
    (``None`` = not certified, which is the case for the paper's PrivAuction with ε_auc > 0);
    ``epsilon_owners_h2`` leaves the auction out (the h2 releases alone). ``epsilon_validation`` is
    the validation set's at ``delta_validation`` (the budget's, or the paper's 0.01). The three are
    ``None`` for the non-private methods; for ``"pfds"`` both owners' figures are the per-agent ε of
    PFDS (pure ε-DP, ``delta_owners`` None) and the consumer releases nothing.
    """

    method: str
    size: int
    repeat: int
    mmd2: float
    mmd_increase_pct: float | None
    accuracy: float | None
    accessed: int
    epsilon_owners: float | None
    epsilon_validation: float | None
    seconds: float
    epsilon_owners_h2: float | None = None
    gamma: float = 0.1
    delta_owners: float | None = None
    delta_validation: float | None = None
    variant: str = ""
    nominees: int | None = None
    dim: int | None = None
    #: Always False for :func:`run_experiment`: every run is seeded (reproducible, NOT private).
    private: bool = False
    #: The run's :func:`dpsumm.accounting.certification` status ("seeded: NOT private" for every seeded run,
    #: "not private" for the baselines); PFDS runs are seeded too.
    certification: str = ""
    #: MMD² to the consumer's held-out rows (the split's test rows), their own diagonal dropped
    #: (:func:`dpsumm.metrics.population_mmd2`): how close the summary is to the population the consumer wants.
    mmd2_population: float | None = None
    #: The nominations protocol's purchase (its name: "nominees", "labels", "winners"); None for the other methods.
    purchase: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _records(records: object, name: str = "records") -> list[Record]:
    """``records`` as a list of :class:`Record` (what :func:`run_experiment` and :func:`load_results` return)."""
    if isinstance(records, (str, bytes, Mapping)) or not isinstance(records, Sequence):
        raise InvalidParameterError(
            f"`{name}` must be a list of experiment Records (from run_experiment or "
            f"load_results), got {type(records).__name__}",
            name,
        )
    for rec in records:
        if not isinstance(rec, Record):
            raise InvalidParameterError(f"`{name}` must hold experiment Records, got {type(rec).__name__}", name)
    return list(records)


def relative_to_baseline(records: Sequence[Record], baselines: Sequence[Sequence[Record]] = ()) -> list[Record]:
    """Fill ``mmd_increase_pct`` against the strongest non-private baseline of the same size and repeat:
    central greedy when it was run (in ``records`` or in ``baselines``), else the paper's greedy."""
    pool = [*records, *(r for group in baselines for r in group)]
    out = []
    for rec in records:
        base = None
        for name in BASELINES:
            base = next(
                (b.mmd2 for b in pool if b.method == name and b.size == rec.size and b.repeat == rec.repeat), None
            )
            if base is not None:
                break
        inc = None if base is None or rec.method in BASELINES[:1] else mmd_increase_pct(rec.mmd2, base)
        out.append(dataclasses.replace(rec, mmd_increase_pct=inc))
    return out


#: The order of rows and legends: today's method first, then the paper's, then the non-private baselines.
DISPLAY_ORDER = ("nominations", "paper", "pfds", "central-greedy", "exact-greedy", "paper-greedy", "uniform")


def _display_rank(label: str) -> int:
    """Sort key of a row label: its method's place in :data:`DISPLAY_ORDER` (a stable sort keeps the variants
    of one method in the order they were run)."""
    method = label.split(" ", 1)[0]
    return DISPLAY_ORDER.index(method) if method in DISPLAY_ORDER else len(DISPLAY_ORDER)


def baseline_name(records: Sequence[Record]) -> str:
    """The method ``mmd_increase_pct`` is relative to in ``records`` (see :func:`relative_to_baseline`)."""
    present = {r.method for r in records}
    return next((b for b in BASELINES if b in present), BASELINES[0]).replace("-", " ")


def _label(rec: Record) -> str:
    """A record's row label: its method, and its variant when it has one."""
    return f"{rec.method} {rec.variant}".strip()


def _stats(records: Sequence[Record], field: str) -> dict[tuple[str, int], tuple[float, float, int]]:
    """(label, size) -> (mean, sample std, n) of a field over repeats, ignoring None."""
    groups: dict[tuple[str, int], list[float]] = {}
    for rec in records:
        v = getattr(rec, field)
        if v is not None:
            groups.setdefault((_label(rec), rec.size), []).append(float(v))
    return {k: (float(np.mean(v)), float(np.std(v, ddof=1)) if len(v) > 1 else 0.0, len(v)) for k, v in groups.items()}


def format_table(records: Sequence[Record], *, markdown: bool = False) -> str:
    """Mean ± standard deviation over repeats of MMD², its increase over greedy and accuracy, per method and size."""
    records = _records(records)
    markdown = bool_flag(markdown, "markdown")
    mmd, inc, acc, sec, seen, pop = (
        _stats(records, f) for f in ("mmd2", "mmd_increase_pct", "accuracy", "seconds", "accessed", "mmd2_population")
    )
    methods = sorted(dict.fromkeys(_label(r) for r in records), key=_display_rank)
    sizes = sorted({r.size for r in records})
    head = [
        "size",
        "method",
        "MMD² (held-out rows)",
        "MMD² (D_v)",
        f"MMD² (D_v) vs {baseline_name(records)} (%)",
        "accuracy",
        "raw rows seen",
        "seconds",
    ]

    def pm(d: dict[tuple[str, int], tuple[float, float, int]], key: tuple[str, int], fmt: str) -> str:
        if key not in d:
            return "–"
        m, s, n = d[key]
        return f"{m:{fmt}} ± {s:{fmt.lstrip('+')}}" if n > 1 else f"{m:{fmt}}"

    rows = []
    for size in sizes:
        for method in methods:
            key = (method, size)
            if key not in mmd:
                continue
            rows.append(
                [
                    str(size),
                    method,
                    pm(pop, key, ".5f"),
                    pm(mmd, key, ".5f"),
                    pm(inc, key, "+.1f"),
                    pm(acc, key, ".3f"),
                    pm(seen, key, ".0f"),
                    pm(sec, key, ".2f"),
                ]
            )
    if markdown:
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(head)]
    out = ["  ".join(h.ljust(w) for h, w in zip(head, widths)), "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(out)


RESULT_FIELDS = (
    "method",
    "size",
    "repeat",
    "mmd2",
    "mmd_increase_pct",
    "accuracy",
    "accessed",
    "epsilon_owners",
    "epsilon_validation",
    "seconds",
    "epsilon_owners_h2",
    "gamma",
    "delta_owners",
    "delta_validation",
    "variant",
    "nominees",
    "dim",
    "private",
    "mmd2_population",
    "purchase",
)


def load_results(path: str | Path) -> list[Record]:
    """Records from a ``results.json`` written by :func:`write_results` (a file or its directory)."""
    p = _path_like(path, "path")
    if _is_dir(p, "path"):
        p = p / "results.json"
    if not _is_file(p, "path"):
        raise InvalidParameterError(f"no results file at {p}", "path")
    try:
        rows = json.loads(p.read_text())
        if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
            raise ValueError("expected a JSON list of records")
        return [Record(**row) for row in rows]
    except OSError as exc:
        raise _os_error(exc, p, "path") from exc
    except (ValueError, TypeError) as exc:
        raise InvalidParameterError(f"{p} is not a dpsumm results file: {exc}", "path") from exc


def _text(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise InvalidParameterError(f"`{name}` must be a str, got {type(value).__name__}", name)
    return value


def _optional_dim(dim: object) -> int | None:
    return None if dim is None else bounded_int(dim, "dim", 1, MAX_DIM)


def _finite_or_none(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None
