"""Pictures of a run's quality report (:mod:`dpsumm.quality`, the ``"quality"`` of ``report.json``), with matplotlib.

``dpsumm report OUT [OUT ...]`` draws, for the consumer: the summary's share of each stratum (and label) beside
``D_v``'s, the summary's MMD² to ``D_v`` against its size when several runs of different sizes are given, and the
summary's rows over ``D_v``'s on the two leading principal axes of ``D_v``. Needs ``pip install "dpsumm[plot]"``.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import DataFileError, InvalidParameterError

__all__ = ["read_report", "draw_quality"]


def read_report(directory: str | Path) -> dict[str, Any]:
    """The ``report.json`` of a run's output directory (``dpsumm summarize --out``), which must hold a quality report."""
    if not isinstance(directory, (str, os.PathLike)):
        raise InvalidParameterError(
            f"`runs` must be a path (the --out directory of a dpsumm summarize run), got {type(directory).__name__}",
            "runs",
        )
    p = Path(directory)
    path = p / "report.json" if p.is_dir() else p
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataFileError(
            f"`runs`: cannot read {path} ({exc.strerror or exc}): give the --out directory of a dpsumm summarize run",
            str(path),
            "runs",
        ) from None
    except ValueError as exc:
        raise DataFileError(f"`runs`: {path} is not JSON ({exc})", str(path), "runs") from None
    if not isinstance(report, dict) or not isinstance(report.get("quality"), dict):
        raise DataFileError(
            f"`runs`: {path} has no quality report (written by dpsumm summarize since this version): run it again",
            str(path),
            "runs",
        )
    return report


def _real(value: object) -> bool:
    """Whether a report's figure is a finite real number (not a bool)."""
    return (
        not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    )  # an int beyond float: not drawn


def _shares_problem(part: object, key: str) -> str | None:
    """Why a report's ``strata`` or ``labels`` part cannot be drawn, or None."""
    if part is None:
        return None
    if not isinstance(part, dict) or not isinstance(part.get("shares"), list) or not part["shares"]:
        return f"`{key}` must be null or hold a non-empty list of `shares`"
    for row in part["shares"]:
        if not (
            isinstance(row, dict)
            and isinstance(row.get("value"), str)
            and _real(row.get("summary"))
            and _real(row.get("validation"))
        ):
            return (
                f"each of `{key}.shares` must be {{value: str, summary: number, validation: number}}, got {row!r:.80}"
            )
    names = part.get("attributes", []) if key == "strata" else [part.get("attribute") or ""]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return f"`{key}` must name its attributes with strings"
    return None


def _report_problem(report: object) -> str | None:
    """Why one run's report (``read_report``'s, or a hand-edited one) cannot be drawn, or None."""
    quality = report.get("quality") if isinstance(report, dict) else None
    if not isinstance(quality, dict):
        return "it is not a dict with a `quality` dict"
    size = quality.get("size")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        return f"`quality.size` must be an integer >= 0, got {size!r:.40}"
    mmd = quality.get("validation_mmd2")
    if mmd is not None and not (_real(mmd) and mmd >= 0):
        return f"`quality.validation_mmd2` must be null or a number >= 0, got {mmd!r:.40}"
    for key in ("strata", "labels"):
        problem = _shares_problem(quality.get(key), key)
        if problem is not None:
            return problem
    proj = quality.get("projection")
    if proj is not None:
        ok = isinstance(proj, dict) and all(
            isinstance(proj.get(k), list)
            and all(isinstance(xy, list) and len(xy) == 2 and all(_real(c) for c in xy) for xy in proj[k])
            for k in ("summary", "validation")
        )
        if not ok:
            return "`quality.projection` must be null or hold `summary` and `validation` lists of [x, y] numbers"
    return None


def _check_reports(reports: object, names: object, path: object) -> None:
    """Refuse reports, names or a path :func:`draw_quality` cannot draw, naming the argument."""
    if isinstance(reports, (str, bytes, dict)) or not isinstance(reports, Sequence):
        raise InvalidParameterError(f"`reports` must be a list of run reports, got {type(reports).__name__}", "reports")
    if not reports:
        raise InvalidParameterError("`reports` is empty: give at least one run", "reports")
    for k, report in enumerate(reports):
        problem = _report_problem(report)
        if problem is not None:
            raise InvalidParameterError(f"`reports[{k}]` cannot be drawn: {problem}", "reports")
    if names is not None and (
        isinstance(names, (str, bytes))
        or not isinstance(names, Sequence)
        or len(names) not in (0, len(reports))  # empty: the default names
        or not all(isinstance(n, str) for n in names)
    ):
        raise InvalidParameterError(f"`names` must be None or {len(reports)} strings, one per report", "names")
    if not isinstance(path, (str, os.PathLike)):
        raise InvalidParameterError(f"`path` must be a file path, got {type(path).__name__}", "path")


def _bars(ax: Any, parts: Sequence[tuple[str, dict[str, Any]]], title: str) -> None:
    """Grouped bars: each run's summary share of every value, then D_v's (the first run's)."""
    values = [r["value"] for r in parts[0][1]["shares"]]
    groups = [(name, {r["value"]: r["summary"] for r in part["shares"]}) for name, part in parts]
    groups.append(("D_v", {r["value"]: r["validation"] for r in parts[0][1]["shares"]}))
    width = 0.8 / len(groups)
    for g, (name, share) in enumerate(groups):
        xs = [x - 0.4 + width * (g + 0.5) for x in range(len(values))]
        ax.bar(xs, [100 * share.get(v, 0.0) for v in values], width, label=name)
    ax.set_xticks(list(range(len(values))), values, rotation=30 if len(values) > 6 else 0)
    ax.set_ylabel("share of rows (%)")
    ax.set_title(title)
    ax.legend()


def draw_quality(reports: Sequence[dict[str, Any]], path: str | Path, *, names: Sequence[str] | None = None) -> Path:
    """Draw the quality of one or several runs into an image file (PNG, SVG or PDF by its suffix).

    Panels: shares per stratum (and per label) of the runs of the first run's size, each summary's and ``D_v``'s; MMD² to ``D_v``
    against the summary size when the runs have several sizes (one line per purchase); the first run's summary over
    ``D_v`` on ``D_v``'s two leading principal axes. Returns the path written.
    """
    _check_reports(reports, names, path)
    try:
        from matplotlib.figure import Figure  # no pyplot: the caller's backend and figure list are left alone
    except ImportError as exc:
        raise InvalidParameterError('drawing the report needs matplotlib: pip install "dpsumm[plot]"', "plot") from exc
    first = reports[0]["quality"]
    panels: list[str] = [k for k in ("strata", "labels") if first.get(k)]
    sizes = {r["quality"]["size"] for r in reports if r["quality"].get("validation_mmd2") is not None}
    if len(sizes) > 1:
        panels.append("sizes")
    if first.get("projection"):
        panels.append("projection")
    if not panels:
        raise InvalidParameterError(
            "the run's report has nothing to draw (no strata, labels or summary rows)", "reports"
        )
    fig = Figure(figsize=(4.8 * len(panels), 4.0))
    axes = fig.subplots(1, len(panels), squeeze=False)
    labels = [
        names[r] if names else f"{rep.get('purchase') or rep.get('method')}, p={rep['quality']['size']}"
        for r, rep in enumerate(reports)
    ]
    label = labels[0]

    def parts(key: str) -> list[tuple[str, dict[str, Any]]]:  # the runs of the first run's size
        return [
            (labels[r], rep["quality"][key])
            for r, rep in enumerate(reports)
            if rep["quality"].get(key) and rep["quality"]["size"] == first["size"]
        ]

    for ax, panel in zip(axes[0], panels):
        if panel == "strata":
            _bars(ax, parts("strata"), f"share per stratum ({','.join(first['strata']['attributes'])})")
        elif panel == "labels":
            what = first["labels"].get("attribute") or "label"
            _bars(ax, parts("labels"), f"share per label ({what})")
        elif panel == "sizes":
            series: dict[str, list[tuple[int, float]]] = {}
            for rep in reports:
                q = rep["quality"]
                if q.get("validation_mmd2") is None:
                    continue
                key = str(rep.get("purchase") or rep.get("method"))
                series.setdefault(key, []).append((int(q["size"]), float(q["validation_mmd2"])))
            for key, pts in series.items():
                pts.sort()
                ax.plot([p for p, _ in pts], [m for _, m in pts], marker="o", label=key)
            ax.set_xlabel("summary size p")
            ax.set_ylabel("MMD² to D_v")
            ax.set_yscale("log")
            ax.set_title("MMD² to D_v against summary size")
            ax.legend()
        else:
            proj = first["projection"]
            v, s = proj["validation"], proj["summary"]
            ax.scatter([x for x, _ in v], [y for _, y in v], s=8, alpha=0.4, label="D_v")
            ax.scatter([x for x, _ in s], [y for _, y in s], s=14, marker="x", label="summary")
            ax.set_xlabel("D_v's first principal axis")
            ax.set_ylabel("second principal axis")
            ax.set_title(f"{label}: summary over D_v")
            ax.legend()
    fig.tight_layout()
    out = Path(path)
    try:
        fig.savefig(out, dpi=110)
    except (OSError, ValueError) as exc:
        raise InvalidParameterError(f"`plot`: cannot write {out} ({exc})", "plot") from None
    return out
