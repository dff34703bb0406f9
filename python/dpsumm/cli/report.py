"""``dpsumm report``: a run's quality (the consumer's view), printed and drawn."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_report"]


def add_report(sub: Any) -> None:
    p = sub.add_parser(
        "report",
        help="print and draw the quality of one or several `dpsumm summarize` runs (their --out directories)",
        description="Reads report.json of each run: prints the validation fit and each stratum's (and label's) "
        "share of the summary beside D_v's, and draws them (shares per stratum, MMD² to D_v against the summary "
        "size when the runs have several sizes, the summary over D_v on D_v's two principal axes) with matplotlib "
        '(pip install "dpsumm[plot]").',
    )
    p.add_argument("runs", nargs="+", metavar="OUT", help="the --out directory of a dpsumm summarize run")
    p.add_argument(
        "--plot",
        default=None,
        metavar="PATH",
        help="the picture to write (.png, .svg or .pdf; default: report.png in the first run's directory)",
    )
    p.add_argument("--no-plot", action="store_true", help="print only, draw nothing")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..plot import draw_quality, read_report
    from ..quality import quality_lines

    reports = [read_report(r) for r in args.runs]
    for run, rep in zip(args.runs, reports):
        purchase = f" --purchase {rep['purchase']}" if rep.get("purchase") else ""
        print(f"{run}: --method {rep.get('method')}{purchase}, size {rep['quality']['size']}")
        for line in quality_lines(rep["quality"]):
            print(f"  {line}")
    if not args.no_plot:
        first = Path(args.runs[0])
        target = args.plot or str((first if first.is_dir() else first.parent) / "report.png")
        out = draw_quality(reports, target)
        print(f"drew {out}")
    return 0
