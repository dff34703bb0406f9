"""The experiments' plots and results directories (Figure 2: MMD² increase and accuracy against size)."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .._validation import bool_flag
from ..errors import InvalidParameterError
from ..files import _os_error, _path_like
from .records import (
    PLOT_FIELDS,
    RESULT_FIELDS,
    Record,
    _display_rank,
    _label,
    _optional_dim,
    _records,
    _stats,
    _text,
    baseline_name,
    format_table,
)

#: One colour per method of :data:`EXPERIMENT_METHODS` (tests/experiments/test_plots.py checks every one has one).
_COLOURS = {
    "nominations": "tab:blue",
    "central-greedy": "black",
    "paper": "tab:red",
    "paper-greedy": "tab:orange",
    "uniform": "tab:purple",
    "exact-greedy": "tab:green",
    "pfds": "tab:brown",
}
_VARIANT_COLOURS = ("tab:blue", "tab:cyan", "tab:olive", "tab:pink", "tab:gray", "tab:brown", "tab:green")


def _colour(label: str, labels: Sequence[str]) -> str | None:
    """One colour per method; variants of a method ("nominations eps_v=1") get a colour of their own."""
    if label in _COLOURS:
        return _COLOURS[label]
    variants = [lab for lab in labels if lab not in _COLOURS]
    return _VARIANT_COLOURS[variants.index(label) % len(_VARIANT_COLOURS)] if label in variants else None


def _range(values: Sequence[float], fmt: str = ".3g") -> str:
    lo, hi = min(values), max(values)
    return f"{lo:{fmt}}" if math.isclose(lo, hi, rel_tol=1e-9) else f"{lo:{fmt}}-{hi:{fmt}}"


def plot_title(records: Sequence[Record], title: str = "", *, dim: int | None = None) -> str:
    """``"<title>: <method> ε owners …, ε_v … (δ_v …); …, γ …, d …"`` from the records: the privacy each private
    method actually ran at (ranges over sizes and repeats), then the non-private ones."""
    records = _records(records)
    title = _text(title, "title")
    dim = _optional_dim(dim)
    parts = []
    private = sorted(
        {r.method for r in records if r.epsilon_owners_h2 is not None or r.epsilon_validation is not None},
        key=_display_rank,
    )
    for method in private:
        rs = [r for r in records if r.method == method]
        bits = []
        owners = [r.epsilon_owners for r in rs if r.epsilon_owners is not None]
        if method == "pfds":
            bits.append(f"ε {_range([r.epsilon_owners_h2 for r in rs if r.epsilon_owners_h2 is not None])} per agent")
        elif owners:
            d_o = sorted({r.delta_owners for r in rs if r.delta_owners is not None})
            bits.append(f"ε owners {_range(owners)}" + (f" (δ {_range(d_o, 'g')})" if d_o and max(owners) > 0 else ""))
        elif any(r.epsilon_owners_h2 is not None for r in rs):
            bits.append("ε owners not certified")
        val = [r.epsilon_validation for r in rs if r.epsilon_validation is not None]
        if val:
            d_v = sorted({r.delta_validation for r in rs if r.delta_validation is not None})
            bits.append(f"ε_v {_range(val)}" + (f" (δ_v {_range(d_v, 'g')})" if d_v else ""))
        parts.append(f"{method} {', '.join(bits)}")
    if not private:
        parts.append("non-private")
    gammas = sorted({r.gamma for r in records})
    tail = []
    if gammas:
        tail.append(f"γ {_range(gammas)}")
    dims = sorted({r.dim for r in records if r.dim is not None})
    if dim is not None:
        tail.append(f"d {dim}")
    elif dims:
        tail.append("d " + "/".join(str(d) for d in dims))
    body = "; ".join(parts) + (", " + ", ".join(tail) if tail else "")
    head = title.strip()
    return f"{head}: {body}" if head else body


def plot_records(
    records: Sequence[Record], field: str, ylabel: str, title: str, skip: Sequence[str] = (), logy: bool = False
) -> Any:
    """A :class:`matplotlib.figure.Figure` of ``field`` (mean ± sample std over repeats) against size.

    Built without pyplot: the caller's backend and pyplot state are left alone. Accuracy error bars
    are clipped to [0, 1]. Save it with ``fig.savefig(path)``.
    """
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter, NullLocator

    records = _records(records)
    if not isinstance(field, str) or field not in PLOT_FIELDS:
        raise InvalidParameterError(f"`field` must be one of {PLOT_FIELDS}, got {field!r:.60}", "field")
    ylabel, title = _text(ylabel, "ylabel"), _text(title, "title")
    if (
        isinstance(skip, (str, bytes))
        or not isinstance(skip, (Sequence, set, frozenset))
        or not all(isinstance(s, str) for s in skip)
    ):
        raise InvalidParameterError(f"`skip` must be a list of method labels, got {skip!r:.60}", "skip")
    logy = bool_flag(logy, "logy")
    stats = _stats(records, field)
    methods = sorted((m for m in dict.fromkeys(_label(r) for r in records) if m not in skip), key=_display_rank)
    fig = Figure(figsize=(6.4, 4.0), dpi=120)
    ax = fig.add_subplot(1, 1, 1)
    repeats = sorted({n for (m, _), (_, _, n) in stats.items() if m in methods})
    for method in methods:
        pts = sorted((s, v) for (m, s), v in stats.items() if m == method)
        if not pts:
            continue
        xs = [s for s, _ in pts]
        means = np.array([v[0] for _, v in pts])
        std = np.array([v[1] for _, v in pts])
        if field == "accuracy":
            means = np.clip(means, 0.0, 1.0)
            yerr = np.vstack([np.minimum(std, means), np.minimum(std, 1.0 - means)])
        else:
            yerr = np.vstack([std, std])
        ax.errorbar(xs, means, yerr=yerr, marker="o", capsize=3, label=method, color=_colour(method, methods))
    ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter(NullFormatter())
    elif field == "mmd_increase_pct":
        # Nominations' tens of percent and uniform's thousands on one legible axis: linear within ±10 %,
        # logarithmic beyond.
        from matplotlib.ticker import FuncFormatter

        ax.set_yscale("symlog", linthresh=10.0)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:+,.0f} %" if v else "0"))
        ax.yaxis.set_minor_formatter(NullFormatter())
    sizes = sorted({r.size for r in records})
    ax.set_xticks(sizes)
    ax.set_xticklabels([str(s) for s in sizes])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("summary size p")
    n_text = "/".join(str(n) for n in repeats) if repeats else "0"
    ax.set_ylabel(f"{ylabel}\n(mean ± std over {n_text} repeats)", fontsize=9)
    if field == "accuracy":
        ax.set_ylim(0.0, 1.0)
    ax.set_title(title, fontsize=8, wrap=True)
    if field == "mmd_increase_pct":
        ax.axhline(0.0, color="grey", lw=0.8, ls="--")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, title=f"error bars: ± std, n = {n_text}", title_fontsize=7)
    fig.tight_layout()
    return fig


def write_results(
    records: Sequence[Record], out: str | Path, *, title: str = "", plots: bool = True, dim: int | None = None
) -> dict[str, Path]:
    """Write ``results.json``, ``results.csv``, ``table.md`` and (with ``plots``) ``mmd_increase.png`` and
    ``accuracy.png`` into ``out`` (created). Returns the paths by name.

    The plots' titles carry ``title`` (the dataset), ε, γ and ``dim`` (d); the caller's matplotlib
    backend is never changed."""
    records = _records(records)
    title = _text(title, "title")
    plots = bool_flag(plots, "plots")
    dim = _optional_dim(dim)
    d = _path_like(out, "out")
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _os_error(exc, d, "out") from exc
    paths = {"json": d / "results.json", "csv": d / "results.csv", "table": d / "table.md"}
    rows = [r.to_dict() for r in records]
    paths["json"].write_text(json.dumps(rows, indent=1))
    with paths["csv"].open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(RESULT_FIELDS))
        w.writeheader()
        for row in rows:
            w.writerow({k: ("" if row[k] is None else row[k]) for k in RESULT_FIELDS})
    note = ""
    if any(not r.private for r in records):
        note = "\n**NOT private**: seeded runs (reproducible experiments); the noise can be removed by anyone with the seed.\n"
    paths["table"].write_text(format_table(records, markdown=True) + "\n" + note)
    if plots:
        head = plot_title(records, title, dim=dim)
        paths["mmd2_plot"] = d / "mmd2.png"
        plot_records(
            records, "mmd2", "MMD² to the validation set (log scale), lower is better", head, logy=True
        ).savefig(paths["mmd2_plot"])
        paths["mmd_plot"] = d / "mmd_increase.png"
        plot_records(
            records,
            "mmd_increase_pct",
            f"MMD² vs {baseline_name(records)} (%, symlog scale), lower is better",
            head,
            skip=[baseline_name(records).replace(" ", "-")],
        ).savefig(paths["mmd_plot"])
        if any(r.accuracy is not None for r in records):
            paths["accuracy_plot"] = d / "accuracy.png"
            plot_records(records, "accuracy", "test accuracy, higher is better", head).savefig(paths["accuracy_plot"])
    return paths


def plot_parsimony(records: Sequence[Record], path: str | Path, *, title: str = "") -> Path:
    """MMD² against raw rows the aggregator saw (log-log), one point per (method, size), mean ± std over repeats.

    Builds a :class:`matplotlib.figure.Figure` directly: the caller's matplotlib backend is never touched.
    """
    from matplotlib.figure import Figure

    mmd, seen = _stats(records, "mmd2"), _stats(records, "accessed")
    fig = Figure(figsize=(6.0, 4.0), dpi=120)
    ax = fig.add_subplot()
    for label in dict.fromkeys(_label(r) for r in records):
        keys = sorted(k for k in mmd if k[0] == label and k in seen)
        if not keys:
            continue
        xs = [max(seen[k][0], 1.0) for k in keys]
        ax.errorbar(
            xs,
            [mmd[k][0] for k in keys],
            yerr=[mmd[k][1] for k in keys],
            marker="o",
            capsize=3,
            label=label,
            color=_colour(label, list(dict.fromkeys(_label(r) for r in records))),
        )
        for x, k in zip(xs, keys):
            ax.annotate(f"p={k[1]}", (x, mmd[k][0]), fontsize=6, xytext=(3, 3), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("raw rows the aggregator saw")
    ax.set_ylabel("MMD² to the validation set (± std over repeats)")
    ax.set_title(title, fontsize=8, wrap=True)
    ax.grid(alpha=0.3, which="major")
    ax.legend(fontsize=7)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out)
    return out


def plot_sweep(
    records: Sequence[Record],
    field: str,
    parameter: str,
    values: Mapping[str, float],
    path: str | Path,
    *,
    ylabel: str,
    title: str = "",
    baselines: Sequence[str] = ("central-greedy", "uniform"),
    logy: bool = False,
) -> Path:
    """``field`` (mean ± std over repeats) against a swept parameter, one line per summary size.

    ``values`` maps each variant label (e.g. ``"eps_v=0.5"``) to its x position (``math.inf`` is drawn at the right
    end and labelled ∞); ``baselines`` are drawn as dashed horizontal lines per size. Builds a ``Figure`` directly.
    """
    from matplotlib.figure import Figure

    stats = _stats(records, field)
    finite = [v for v in values.values() if math.isfinite(v)]
    inf_x = max(finite) * 2.0 if finite else 1.0
    fig = Figure(figsize=(6.4, 4.0), dpi=120)
    ax = fig.add_subplot()
    sizes = sorted({r.size for r in records})
    for i, size in enumerate(sizes):
        colour = _VARIANT_COLOURS[i % len(_VARIANT_COLOURS)]
        pts = sorted(
            (inf_x if math.isinf(x) else x, stats[(f"nominations {v}", size)])
            for v, x in values.items()
            if (f"nominations {v}", size) in stats
        )
        if pts:
            ax.errorbar(
                [x for x, _ in pts],
                [m for _, (m, _, _) in pts],
                yerr=[s for _, (_, s, _) in pts],
                marker="o",
                capsize=3,
                color=colour,
                label=f"nominations, p = {size}",
            )
        for b, style in zip(baselines, ("--", ":")):
            if (b, size) in stats:
                ax.axhline(
                    stats[(b, size)][0],
                    color=colour,
                    ls=style,
                    lw=0.9,
                    label=f"{b}, p = {size}" if i == 0 or len(sizes) <= 3 else None,
                )
    ax.set_xscale("log")
    ticks = sorted({inf_x if math.isinf(x) else x for x in values.values()})
    ax.set_xticks(ticks)
    ax.set_xticklabels(["∞" if t == inf_x and any(math.isinf(x) for x in values.values()) else f"{t:g}" for t in ticks])
    from matplotlib.ticker import NullFormatter, NullLocator

    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    if logy:
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter(NullFormatter())
    n = sorted({k for (_, _, k) in stats.values()})
    ax.set_xlabel(parameter)
    ax.set_ylabel(f"{ylabel}\n(mean ± std over {'/'.join(map(str, n))} repeats)", fontsize=9)
    ax.set_title(title, fontsize=8, wrap=True)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    out = Path(path)
    fig.savefig(out)
    return out
