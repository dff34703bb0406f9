"""Pictures of a run's quality report (:mod:`dpsumm.quality`, the ``"quality"`` of ``report.json``), with matplotlib.

``dpsumm report OUT [OUT ...]`` draws, for the consumer: the summary's share of each stratum (and label) beside
``D_v``'s, the summary's MMD² to ``D_v`` against its size when several runs of different sizes are given, and the
summary's rows over ``D_v``'s on the two leading principal axes of ``D_v``. Needs ``pip install "dpsumm[plot]"``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import DataFileError, InvalidParameterError

__all__ = ["read_report", "draw_quality"]


def read_report(directory: str | Path) -> dict[str, Any]:
    """The ``report.json`` of a run's output directory (``dpsumm summarize --out``), which must hold a quality report."""
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
    if not reports:
        raise InvalidParameterError("`reports` is empty: give at least one run", "reports")
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
