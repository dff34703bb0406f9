"""Write the site's generated results pages from the results files (docs/results/testbeds.md, experiments.md).

    python docs/generate_results.py            # rewrite the pages
    python docs/generate_results.py --check    # exit 1 if a page differs from what the files give (tests/docs/test_docs.py)

Every number written carries its ``<!--= ... -->`` marker (tests/docnumbers.py), so the numbers check covers the
generated tables too. The sources are listed here, not discovered: a results file that no list below and no
hand-written page cites is stale, and tests/docs/test_docs.py fails on it.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
#: Where the test-bed plots go (one PNG per results file, bed and gamma with two sizes or more).
PLOTS = "docs/results/plots"
ROOT = DOCS.parent
TESTBEDS = "docs/experiments/testbeds"

#: The check that each file reproduces at today's code (benches/testbeds_reproduce.py), one report per file.
REPRODUCE = f"{TESTBEDS}/reproduce.json"

#: (results file under docs/experiments/testbeds, what it is). Each file's table-TAG.md is its own page.
TESTBED_FILES = [
    ("results-mnist-labels-median.json", "MNIST test beds, γ by the median heuristic: every purchase and baseline"),
    ("results-mnist-labels-fixed.json", "MNIST test beds, the paper's fixed γ = 0.1"),
    ("results-synthetic-digits-labels.json", "digits test beds and the synthetic K = 100 bed, both γ"),
    ("results-synthetic-labels-10.json", "the synthetic K = 100 bed, 10 repeats, with the tilted label sale"),
    ("results-mnist-many-labels-10.json", "MNIST with 100 owners of one distribution, 10 repeats"),
    ("results-subgroup-tilt.json", "a shift inside a label (MNIST subgroup), with the tilted label sale"),
    ("results-mnist-temperature.json", "the nominees purchase at sharper owners' temperatures, MNIST"),
    (
        "results-synthetic-digits-temperature.json",
        "the nominees purchase at sharper owners' temperatures, digits and synthetic",
    ),
    (
        "results-population-5.json",
        "every MNIST bed and the synthetic K = 100 bed, 5 repeats, p = 200 and 1,000: the population view beside D_v, "
        "with the perfect purchase",
    ),
    (
        "results-census-population.json",
        "the census-like bed (a shift inside the labels, carried by a public group), in the population view",
    ),
    ("results-census-population-10.json", "the census-like bed, 10 repeats, p = 200 and 1,000, population view"),
    ("results-mnist-population.json", "MNIST minority and subgroup in the population view, with group x label strata"),
    (
        "results-census-strata.json",
        "the census-like bed with strata (ByStrata) and the direction purchase, population view",
    ),
    ("results-subgroup-strata.json", "MNIST subgroup with digit strata, parity labels only, and nothing, p = 200"),
    (
        "results-subgroup-strata-1000.json",
        "MNIST subgroup with digit strata, parity labels only, and nothing, p = 1,000",
    ),
    ("results-minority-strata.json", "MNIST minority: the labels as the one stratum attribute, p = 200"),
    (
        "results-k100-strata.json",
        "the synthetic K = 100 bed: the labels as strata, the direction purchase, p = 200 and 1,000",
    ),
    (
        "results-population-fixed-5.json",
        "every MNIST bed, the synthetic K = 100 and the census-like beds at the fixed γ = 0.1, 5 repeats, population "
        "view",
    ),
    ("results-digits-population-5.json", "the digits beds, both γ, 5 repeats, population view"),
    (
        "results-census-strata-fixed.json",
        "the census-like bed with strata and the direction purchase at the fixed γ = 0.1, p = 200 and 1,000",
    ),
    (
        "results-subgroup-strata-fixed.json",
        "MNIST subgroup with digit strata, parity labels only, and nothing, at the fixed γ = 0.1, p = 200 and 1,000",
    ),
    (
        "results-direction-sweep.json",
        "the direction purchase's options swept (bins, the split of ε_v, the reserve, the tilted sale), p = 200",
    ),
    (
        "results-direction-kernel-median.json",
        "the direction purchase in the kernel space and in the features, with and without the labels, on every "
        "MNIST bed, census-like and K = 100, median γ, p = 200",
    ),
    ("results-direction-kernel-fixed.json", "the same at the fixed γ = 0.1"),
    (
        "results-direction-kernel-1000-median.json",
        "the direction purchase in both spaces, census-like and MNIST subgroup, median γ, p = 1,000",
    ),
    ("results-direction-kernel-1000-fixed.json", "the same at the fixed γ = 0.1"),
    (
        "results-direction-kernel-k100-1000-median.json",
        "the direction purchase in both spaces on the synthetic K = 100 bed, median γ, p = 1,000",
    ),
    ("results-direction-kernel-k100-1000-fixed.json", "the same at the fixed γ = 0.1"),
    (
        "results-direction-kernel-eps16.json",
        "the direction purchase in the kernel space at ε_v = 16 (a ceiling on the consumer's noise, not a target run)",
    ),
    (
        "results-default-strata.json",
        "the default, ByDirection(), crossed with the group × label strata: census-like at both γ and MNIST subgroup "
        "at the median γ, p = 200 and 1,000",
    ),
    (
        "results-default-mixes-1000-10.json",
        "the default, ByDirection(), on the four MNIST mixes, median γ, p = 1,000, 10 repeats",
    ),
    (
        "results-default-groups-1000.json",
        "the default, ByDirection(), on MNIST groups, median γ, p = 1,000, 2 repeats",
    ),
    (
        "results-default-mixes-1000-fixed-10.json",
        "the default, ByDirection(), on the four MNIST mixes, γ = 0.1, p = 1,000, 10 repeats",
    ),
    (
        "results-default52-after-median.json",
        "the default, ByDirection(), given nothing, with owner groups at a resolution, on the eight beds and digits, "
        "median γ, p = 200 (digits: 80), 5 repeats",
    ),
    (
        "results-default52-after-fixed.json",
        "the default, ByDirection(), given nothing, with owner groups at a resolution, on the eight beds and digits, "
        "γ = 0.1, p = 200 (digits: 80), 5 repeats",
    ),
    (
        "results-digits-others-before.json",
        "the default, ByDirection(), given nothing, on the five other digits beds, both γ, p = 80, 5 repeats, before "
        "owner groups at a resolution (commit 83aab07)",
    ),
    (
        "results-digits-others-after.json",
        "the same with owner groups at a resolution",
    ),
    (
        "results-default-mixes-1000-fixed-10-cells.json",
        "the default, ByDirection(), on the four MNIST mixes, γ = 0.1, p = 1,000, 10 repeats, with the cells' h1 at "
        "the kernel space's width (the same draws as results-default-mixes-1000-fixed-10)",
    ),
    (
        "results-default52-cells-fixed.json",
        "the default, ByDirection(), given nothing, on the eight beds and digits, γ = 0.1, p = 200 (digits: 80), "
        "5 repeats, with the cells' h1 at the kernel space's width where γ = 0.1 is degenerate (MNIST)",
    ),
    (
        "results-digits-others-cells-fixed.json",
        "the five other digits beds, γ = 0.1, p = 80, 5 repeats, at today's code (γ = 0.1 is within check_kernel's "
        "range there: the cells at the run's γ, as before)",
    ),
    (
        "results-direction-kernel-cells-fixed.json",
        "the direction purchase in both spaces, given nothing and the labels, on the eight beds, γ = 0.1, p = 200, "
        "with the cells' h1 at the kernel space's width where γ = 0.1 is degenerate (MNIST)",
    ),
    (
        "results-direction-kernel-1000-cells-fixed.json",
        "the same on census-like and MNIST subgroup at p = 1,000",
    ),
    (
        "results-direction-kernel-k100-1000-cells-fixed.json",
        "the same on the synthetic K = 100 bed at p = 1,000",
    ),
    (
        "results-default-strata-cells-fixed.json",
        "the default crossed with the group × label strata, census-like and MNIST subgroup, γ = 0.1, p = 200 and "
        "1,000, with the cells' h1 at the kernel space's width where γ = 0.1 is degenerate (MNIST)",
    ),
    (
        "results-default-digits.json",
        "the default, ByDirection(), given nothing, the labels, and with one bin (no direction released) on the "
        "digits groups bed (|D_v| about 40), both γ, p = 80, before owner groups at a resolution (commit 2a1e265: "
        "the rows of the default given nothing no longer reproduce; the others do)",
    ),
]

#: Column order and names of the methods benches/testbeds.py runs.
METHODS = {
    "exact": "exact greedy (every raw row, not private)",
    "central": "central greedy (every hash, not private)",
    "labels": "`ByLabel` (3p rows)",
    "labels-tilt0.3": "`ByLabel`, sale_tilt_share 0.3",
    "labels-tilt0.5": "`ByLabel`, sale_tilt_share 0.5",
    "default": "`Nominees()` (K·2p rows; the earlier default)",
    "nominees-10p": "nominees, 10p rows",
    "nominees-T0.1": "nominees, T = 0.1",
    "nominees-T0.05": "nominees, T = 0.05",
    "quotas": "quotas (removed)",
    "strata": "strata: group × label cells (3p rows)",
    "strata-labels": "`ByStrata`, the labels as the attribute (3p rows)",
    "direction": '`ByDirection(space="features")` (3p rows)',
    "direction-labels": '`ByDirection(space="features")`, crossed with the labels (3p rows)',
    "direction-kernel": "`ByDirection()`, the default (kernel space; 3p rows)",
    "direction-kernel-labels": "`ByDirection()`, the default, crossed with the labels (3p rows)",
    "direction-kernel-strata": "`ByDirection()`, the default, crossed with the group × label strata (3p rows)",
    "direction-kernel-b1": "`ByDirection(bins=1)`: no direction released, the cells are the owner groups (3p rows)",
}

#: (directory under docs/experiments, title, the command that wrote it).
EXPERIMENTS = [
    (
        "mnist-nominations",
        "Nominations against the baselines on MNIST",
        "python benches/nominations_experiments.py --data $MNIST_DIR --out docs/experiments --parts main",
    ),
    (
        "digits-nominations",
        "Nominations against the baselines on digits",
        "python benches/nominations_experiments.py --data $MNIST_DIR --out docs/experiments --parts digits",
    ),
    (
        "digits-nominations-variants",
        "Why nominations miss on digits: variants",
        "python benches/nominations_experiments.py --data $MNIST_DIR --out docs/experiments --parts digits-variants",
    ),
    (
        "mnist-epsilon",
        "The consumer's ε_v",
        "python benches/nominations_experiments.py --data $MNIST_DIR --out docs/experiments --parts epsilon",
    ),
    (
        "mnist-nominees",
        "The number of nominees M",
        "python benches/nominations_experiments.py --data $MNIST_DIR --out docs/experiments --parts nominees",
    ),
    (
        "mnist-release",
        "The validation release: Gaussian against MWEM",
        "python benches/nominations_experiments.py --data $MNIST_DIR --out docs/experiments --parts release",
    ),
    (
        "mnist-parsimony",
        "MMD² against the raw rows the aggregator saw",
        "python benches/nominations_experiments.py --data $MNIST_DIR --out docs/experiments --parts parsimony",
    ),
    (
        "mnist-temperature",
        "The owners' temperature",
        "python benches/nominations_experiments.py --data $MNIST_DIR --out docs/experiments --parts temperature",
    ),
    (
        "mnist-paper",
        "The paper's protocol on MNIST, fixed γ (reproduction)",
        "dpsumm experiment mnist ... --out docs/experiments/mnist-paper",
    ),
    (
        "mnist-median",
        "The paper's protocol on MNIST, median γ",
        "dpsumm experiment mnist ... --out docs/experiments/mnist-median",
    ),
    (
        "mnist-median-eps10",
        "The paper's protocol on MNIST at ε = 10",
        "dpsumm experiment mnist ... --out docs/experiments/mnist-median-eps10",
    ),
]

#: Notes and run records of an experiment directory that are pages or files of their own.
EXPERIMENT_NOTES = [
    ("nominations-temperature/README.md", "the owners' temperature: what it does and when it helps"),
    ("digits-nominations/README.md", "why nominations miss the +10 % target on digits"),
    ("nominations_experiments.json", "the options of the last `benches/nominations_experiments.py` run"),
    (
        "broadcast_error.json",
        "the paper's private broadcast against the exact one ([reproducing the paper](../reproducing.md))",
    ),
]


def _sci(v: float) -> str:
    """3 significant digits, ``4.81e-4`` (what tests/docnumbers.py reads as a mantissa and an exponent)."""
    if v == 0 or not math.isfinite(v):
        return "0"
    e = math.floor(math.log10(abs(v)))
    m = v / 10.0**e
    if round(m, 2) >= 10:
        m, e = m / 10, e + 1
    return f"{m:.2f}e{e}"


def _std(v: list[float]) -> float:
    if len(v) < 2:
        return 0.0
    m = sum(v) / len(v)
    return math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1))


def _same_exponent(std: float, mean: float) -> str:
    """``std`` written at the exponent of ``mean`` (one decimal of its mantissa)."""
    if mean == 0 or not math.isfinite(mean):
        return "0"
    e = math.floor(math.log10(abs(mean)))
    if round(mean / 10.0**e, 2) >= 10:
        e += 1
    return f"{std / 10.0**e:.2f}e{e}"


#: The plots the last testbeds_page() call linked: (file name, bed, gamma kind, records, methods).
PLOT_JOBS: list[tuple[str, str, str, list[dict], list[str]]] = []


def write_plots() -> list[str]:
    """Draw the plots testbeds_page() linked: MMD² against the summary size per method (the mean over the repeats;
    the tables give the spread), the population view and D_v side by side. Returns the files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    (ROOT / PLOTS).mkdir(parents=True, exist_ok=True)
    for png, bed, g, sel, methods in PLOT_JOBS:
        views = [("mmd2", "MMD² to D_v")]
        if any(r.get("mmd2_population") is not None for r in sel):
            views.insert(0, ("mmd2_population", "MMD² to the held-out rows"))
        fig, axes = plt.subplots(1, len(views), figsize=(4.2 * len(views) + 2.8, 3.4), squeeze=False)
        for ax, (field, title) in zip(axes[0], views):
            for m in methods:
                pts = []
                for p in sorted({r["size"] for r in sel}):
                    vals = [r[field] for r in sel if r["size"] == p and r["method"] == m and r.get(field) is not None]
                    if vals:
                        pts.append((p, sum(vals) / len(vals)))
                if pts:
                    xs, ys = zip(*pts)
                    ax.plot(xs, ys, marker="o", label=METHODS.get(m, m).replace("`", ""))
            ax.set_xscale("log")
            ax.set_yscale("log", nonpositive="mask")
            ax.set_xlabel("summary size p")
            ax.set_title(title, fontsize=10)
        axes[0][-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.02, 0.5))
        fig.suptitle(f"{bed}, γ {'median heuristic' if g == 'median' else '0.1'}", fontsize=10)
        fig.tight_layout()
        fig.savefig(ROOT / PLOTS / png, dpi=80, metadata={"Software": None})
        plt.close(fig)
        written.append(f"{PLOTS}/{png}")
    return written


def testbeds_page() -> str:
    PLOT_JOBS.clear()
    out = [
        "# Test beds: MMD² against the summary size",
        "<!-- docs-test: inline commands help (the test-bed runs take hours: tests/docs/test_docs.py checks that the "
        "script accepts the options quoted, with --help) -->",
        "",
        "Generated by `python docs/generate_results.py` from the results files of `python benches/testbeds.py` "
        "(each file's command is below it). MMD² of the summary to the consumer's held-out rows, their own diagonal "
        "dropped (the population it wants: `dpsumm.metrics.population_mmd2`), where a file records it, and to its "
        "validation set `D_v` (its sample of that population), mean ± sample standard deviation over the repeats; "
        "lower is better. The "
        "exact greedy sees every raw row and is the ceiling; central greedy sees every owner's hashes. Seeded "
        "runs: reproducible and NOT private. What the figures say: [the label purchase](label-purchase.md) and "
        "[the explanation](../explanation/limits-3p.md).",
        "",
    ]
    reports = json.loads((ROOT / REPRODUCE).read_text())
    checks = {r["file"]: r for r in reports["files"]}
    at_commit = {r["file"]: r for r in reports.get("at_commit", [])}
    out += [
        "Does each file reproduce? `benches/testbeds_reproduce.py` reruns a file's command for its first repeats "
        "(each repeat is seeded by its number alone) and compares every record field by field, floats exactly; "
        f"its reports are in `{REPRODUCE}`, and each file's section below says what it found. A file of earlier code "
        "(a before file, one named for a commit, one whose methods were since removed) is checked as well at the "
        "commit whose code wrote it, in a worktree of that commit (`--at COMMIT`).",
        "",
        f"<!-- numbers: rp = {REPRODUCE} -->",
        "",
    ]
    for i, (name, what) in enumerate(TESTBED_FILES):
        path = f"{TESTBEDS}/{name}"
        data = json.loads((ROOT / path).read_text())
        recs, meta = data["records"], data.get("meta", {})
        alias = f"f{i}"
        tag = name[len("results-") : -len(".json")]
        out += [
            f"## {what}",
            "",
            f"<!-- numbers: {alias} = {path} -->",
            f"`{path}`, from `{meta.get('command', '?')}` ({meta.get('repeats', '?')} repeats; "
            f"its table with the targets: {{download}}`table-{tag}.md <../experiments/testbeds/table-{tag}.md>`).",
            "",
            _reproduced(path, checks.get(path), at_commit.get(path)),
            "",
        ]
        beds = sorted({r["bed"] for r in recs})
        gammas = [g for g in ("median", "fixed") if any(r["gamma_kind"] == g for r in recs)]
        for bed in beds:
            for g in gammas:
                sel = [r for r in recs if r["bed"] == bed and r["gamma_kind"] == g]
                if not sel:
                    continue
                methods = [m for m in METHODS if any(r["method"] == m for r in sel)]
                methods += sorted({r["method"] for r in sel} - set(methods))
                sizes = sorted({r["size"] for r in sel})
                out += [f"### {bed}, γ {'by the median heuristic' if g == 'median' else '= 0.1'}", ""]
                if len(sizes) > 1:
                    png = f"{tag}-{bed}-{g}.png"
                    PLOT_JOBS.append((png, bed, g, sel, methods))
                    out += [f"![MMD² against the summary size, {bed}, γ {g}](plots/{png})", ""]
                views = [("mmd2", "MMD² to `D_v`")]
                if any(r.get("mmd2_population") is not None for r in sel):  # the population view first
                    views.insert(0, ("mmd2_population", "MMD² to the consumer's held-out rows (the population view)"))
                for field, title in views:
                    if len(views) > 1:
                        out += [f"{title}:", ""]
                    out += [
                        "| p | " + " | ".join(METHODS.get(m, m) for m in methods) + " |",
                        "|---|" + "---|" * len(methods),
                    ]
                    for p in sizes:
                        cells = []
                        for m in methods:
                            vals = [
                                r[field]
                                for r in sel
                                if r["size"] == p and r["method"] == m and r.get(field) is not None
                            ]
                            if not vals:
                                cells.append("")
                                continue
                            q = f'{alias}:records[*bed={bed},gamma_kind={g},size={p},method="{m}"].{field}'
                            mean = sum(vals) / len(vals)
                            cell = f"{_sci(mean)}<!--= mean({q}) -->"
                            if len(vals) > 1:
                                cell += f" ± {_same_exponent(_std(vals), mean)}<!--= std({q}) -->"
                            cells.append(cell)
                        out.append(f"| {p} | " + " | ".join(cells) + " |")
                    out.append("")
    return "\n".join(out)


def _reproduced(path: str, check: dict | None, at: dict | None = None) -> str:
    """What the reproduction checks found for the results file ``path``: its report in REPRODUCE at today's code,
    and, for a file of earlier code, its report at the commit whose code wrote it (``at``), or none."""
    if check is None:
        raise SystemExit(f"{path}: no report in {REPRODUCE} (run benches/testbeds_reproduce.py on it)")
    today = _check_sentence(check, f'rp:files[file="{path}"]', "Reproduced", "Does not reproduce")
    if at is None:
        return today
    how = f"At the code that wrote it (`benches/testbeds_reproduce.py --at {at.get('checked_at', '?')}`),"
    then = _check_sentence(at, f'rp:at_commit[file="{path}"]', f"{how} reproduced", f"{how} does not reproduce")
    return f"{today} {then}"


def _check_sentence(check: dict, q: str, same: str, differs: str) -> str:
    """One report of ``benches/testbeds_reproduce.py`` in a sentence; ``q`` selects it for the numbers check."""
    if "error" in check:
        lines = check["error"].strip().splitlines() or ["?"]
        return (
            f"Its command does not run at commit `{check.get('checked_at', '?')}` ({lines[-1].strip()}): written at "
            f"commit `{check['written_at']}`."
        )
    if "reproduces" not in check:
        return f"Not rerun at today's code: written at commit `{check['written_at']}`."
    n = check["recorded"]
    reps = "repeat 0" if check["repeats"] == 1 else f"repeats 0 to {check['repeats'] - 1}"
    added = check.get("added_fields") or []
    later = (
        " (" + ", ".join(f"`{k}`" for k in added) + ", which today's code adds to each record, "
        f"{'is' if len(added) == 1 else 'are'} not in this file)"
        if added
        else ""
    )
    blas = check.get("openblas_coretype")
    kernel = f" with OpenBLAS's {blas} kernel (`OPENBLAS_CORETYPE={blas}`)" if blas else ""
    extra = len(check.get("missing") or [])
    more = (
        f"; the command also writes {extra} record{'s' if extra != 1 else ''} that the file does not hold"
        if extra
        else ""
    )
    if check["reproduces"]:
        return (
            f"{same} at commit `{check['checked_at']}`{kernel}: {reps} rerun, its {n}<!--= {q}.recorded --> records "
            f"the same bit for bit{later}{more}."
        )
    return (
        f"{differs} at commit `{check['checked_at']}`{kernel}: {reps} rerun, {check['equal']}<!--= {q}.equal --> "
        f"of its {n}<!--= {q}.recorded --> records the same (differing: "
        + ", ".join(f"`{k}`" for k in sorted(check["differing_fields"]))
        + f"); written at commit `{check['written_at']}`."
    )


def experiments_page() -> str:
    out = [
        "# Experiment directories",
        "<!-- docs-test: inline commands help (the experiments take minutes to hours: tests/docs/test_docs.py checks "
        "that each script accepts the options quoted, with --help) -->",
        "",
        "Generated by `python docs/generate_results.py`. Each directory under `docs/experiments/` is one "
        "experiment's output, written by the command given: `results.json` (one record per run), "
        "`results.csv`, `table.md` (means ± standard deviations) and plots. Seeded runs: reproducible and NOT "
        "private. What they say: [nominations on MNIST and digits](nominations-mnist.md) and "
        "[reproducing the paper](../reproducing.md).",
        "",
    ]
    hidden = []
    for name, title, command in EXPERIMENTS:
        d = ROOT / "docs" / "experiments" / name
        out += [
            f"## {title}",
            "",
            f"`{command}` → `docs/experiments/{name}/`: "
            f"{{download}}`table.md <../experiments/{name}/table.md>`, "
            f"{{download}}`results.json <../experiments/{name}/results.json>`, "
            f"{{download}}`results.csv <../experiments/{name}/results.csv>`.",
            "",
            f"```{{include}} ../experiments/{name}/table.md",
            "```",
            "",
        ]
        for png in sorted(d.glob("*.png")):
            out += [f"![{title}: {png.stem.replace('_', ' ')}](../experiments/{name}/{png.name})", ""]
    out += ["## Notes and run records", ""]
    for rel, what in EXPERIMENT_NOTES:
        if rel.endswith(".md"):
            out.append(f"* [{what}](../experiments/{rel})")
            hidden.append(f"../experiments/{rel[:-3]}")
        else:
            out.append(f"* {{download}}`{rel} <../experiments/{rel}>`: {what}")
    out += ["", "```{toctree}", ":hidden:", "", *hidden, "```", ""]
    return "\n".join(out)


#: The population-view results files of the population page, in order (a run in two files: the first file's; the
#: direction purchase's newest runs first, at the bins merging that older files predate).
POPULATION_FILES = [
    # the direction purchase at gamma = 0.1 with the cells' h1 at the kernel space's width: first, so that its runs
    # stand for the code of today where an earlier file holds the same bed, gamma, size and purchase
    "results-default52-cells-fixed.json",
    "results-default-mixes-1000-fixed-10-cells.json",
    "results-direction-kernel-cells-fixed.json",
    "results-direction-kernel-1000-cells-fixed.json",
    "results-direction-kernel-k100-1000-cells-fixed.json",
    "results-default-strata-cells-fixed.json",
    "results-default52-after-median.json",
    "results-default52-after-fixed.json",
    "results-direction-kernel-median.json",
    "results-direction-kernel-fixed.json",
    "results-direction-kernel-1000-median.json",
    "results-direction-kernel-1000-fixed.json",
    "results-direction-kernel-k100-1000-median.json",
    "results-direction-kernel-k100-1000-fixed.json",
    "results-default-strata.json",
    "results-default-mixes-1000-10.json",
    "results-default-mixes-1000-fixed-10.json",
    "results-default-groups-1000.json",
    "results-default-digits.json",
    "results-population-5.json",
    "results-population-fixed-5.json",
    "results-digits-population-5.json",
    "results-census-strata.json",
    "results-subgroup-strata.json",
    "results-subgroup-strata-1000.json",
    "results-minority-strata.json",
    "results-k100-strata.json",
    "results-census-strata-fixed.json",
    "results-subgroup-strata-fixed.json",
]
#: The beds whose training labels do not carry the consumer's shift (a group inside the labels carries it).
LABELS_MISS_SHIFT = ("synthetic-census", "mnist-subgroup", "digits-subgroup")
#: The purchases of the targets page: what each is given, and its column name.
POPULATION_METHODS = {
    "labels": ("labels", "`ByLabel`"),
    "strata-labels": ("labels", "`ByStrata`, the labels"),
    "strata": ("strata", "`ByStrata`, group × label"),
    "direction-labels": ("labels", '`ByDirection(space="features")`, crossed with the labels'),
    "direction-kernel-labels": ("labels", "`ByDirection(label_set=...)`: the default given the labels"),
    "direction-kernel-strata": ("strata", "`ByDirection(levels=...)`: the default given group × label strata"),
    "default": ("nothing", "`Nominees()` (the earlier default)"),
    "direction": ("nothing", '`ByDirection(space="features")`'),
    "direction-kernel": ("nothing", "`ByDirection()`: the default given nothing"),
    "perfect": ("ceiling", "perfect purchase (3p rows of the wanted population; a ceiling)"),
}


def _pct(v: float) -> str:
    """A percentage with one decimal and its sign (``+3.4``, ``−3.4``)."""
    return f"{v:+.1f}".replace("-", "−")


def population_page() -> str:
    """Issue 41's targets, met or missed, per test bed, γ, size and purchase: MMD² to the consumer's held-out rows
    against the exact greedy over every row (the population view), from the results files only."""
    runs: dict[tuple[str, str, int, str], tuple[str, list[dict]]] = {}
    aliases = []
    for i, name in enumerate(POPULATION_FILES):
        path = f"{TESTBEDS}/{name}"
        recs = json.loads((ROOT / path).read_text())["records"]
        aliases.append(f"<!-- numbers: q{i} = {path} -->")
        for r in recs:
            if r.get("population_vs_exact_pct") is None or r["method"] not in POPULATION_METHODS:
                continue
            key = (r["bed"], r["gamma_kind"], int(r["size"]), r["method"])
            if key not in runs or runs[key][0] == f"q{i}":
                runs.setdefault(key, (f"q{i}", []))[1].append(r)
    out = [
        "# Each purchase on the consumer's population, against the exact greedy",
        "",
        "Generated by `python docs/generate_results.py` from the population-view results files of",
        "`benches/testbeds.py` (their commands are on [the test-bed page](testbeds.md)). Each figure is MMD² of the",
        "summary to the consumer's held-out rows, their own diagonal dropped (`dpsumm.metrics.population_mmd2`),",
        "against the exact-kernel greedy over every row of the same repeat: mean ± sample standard deviation over the",
        "repeats, and the worst repeat. ε_v = 1; the owners' (ε, δ) = (1, 10⁻⁶). Seeded runs: reproducible and NOT",
        "private.",
        "",
        "The targets: given strata that carry the shift (the labels, except on the beds where a group inside the",
        "labels carries it: " + ", ".join(LABELS_MISS_SHIFT) + "; there the group × label strata), at or below",
        "the exact greedy on the mean; given labels that do not carry it, and given nothing, at most +10 % above",
        "the exact greedy and at most 10 % above `Nominees()` on the mean; at most 3p raw rows; both parties'",
        "ε ≤ 1, certified.",
        "",
        "The default is `ByDirection()`: given nothing (`direction-kernel`), given the labels (the",
        "runs passed them as the one stratum attribute, `levels=[label_set]`: the same cells, releases and quotas",
        "as `label_set=`; `direction-kernel-labels`), given group × label strata (`direction-kernel-strata`).",
        "`Nominees()` is the default before it (`default` in the results files).",
        "",
        *aliases,
        "",
    ]
    tallies: dict[str, list[int]] = {}
    body: list[str] = []
    for gk, title in (("median", "γ by the median heuristic"), ("fixed", "γ = 0.1")):
        keys = sorted(k for k in runs if k[1] == gk)
        if not keys:
            continue
        body += [
            f"## {title}",
            "",
            "| bed | p | purchase | given | vs exact: mean ± sd | worst | vs `Nominees()` | rows / p | ε owners, ε_v |"
            " repeats | target |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        beds = sorted({k[0] for k in keys})
        for bed in beds:
            for p in sorted({k[2] for k in keys if k[0] == bed}):
                for m, (given, label) in POPULATION_METHODS.items():
                    if (bed, gk, p, m) not in runs:
                        continue
                    alias, recs = runs[(bed, gk, p, m)]
                    q = f'{alias}:records[*bed={bed},gamma_kind={gk},size={p},method="{m}"]'
                    vals = [float(r["population_vs_exact_pct"]) for r in recs]
                    mean, worst = sum(vals) / len(vals), max(vals)
                    kind = given
                    if given == "labels":
                        kind = "misses the shift" if bed in LABELS_MISS_SHIFT else "carries the shift"
                    elif given == "strata":
                        kind = "carries the shift"
                    cells = [
                        f"{_pct(mean)}<!--= mean({q}.population_vs_exact_pct) --> ± "
                        f"{_std(vals):.1f}<!--= std({q}.population_vs_exact_pct) --> %",
                        f"{_pct(worst)}<!--= max({q}.population_vs_exact_pct) --> %",
                    ]
                    nom = runs.get((bed, gk, p, "default"))
                    vs_nom = None
                    if nom is not None and m != "default":
                        mv = [float(r["mmd2_population"]) for r in recs]
                        nv = [float(r["mmd2_population"]) for r in nom[1]]
                        vs_nom = 100.0 * ((sum(mv) / len(mv)) / (sum(nv) / len(nv)) - 1.0)
                        nq = f'{nom[0]}:records[*bed={bed},gamma_kind={gk},size={p},method="default"]'
                        cells.append(
                            f"{_pct(vs_nom)}<!--= 100 * (mean({q}.mmd2_population) / mean({nq}.mmd2_population)"
                            " - 1) --> %"
                        )
                    else:
                        cells.append("")
                    rows = max(int(r["rows_bought"]) for r in recs) / p
                    eo = [r["epsilon_owners"] for r in recs if r.get("epsilon_owners") is not None]
                    ev = [r["epsilon_validation"] for r in recs if r.get("epsilon_validation") is not None]
                    cells.append(f"{rows:.1f}<!--= max({q}.rows_bought) / {p} -->")
                    if eo and ev:
                        cells.append(
                            f"{max(eo):.3f}<!--= max({q}.epsilon_owners) -->, "
                            f"{max(ev):.3f}<!--= max({q}.epsilon_validation) -->"
                        )
                    else:
                        cells.append("–")
                    cells.append(str(len(vals)))
                    if kind == "ceiling":
                        status = "ceiling"
                    else:
                        misses = []
                        if kind == "carries the shift" and round(mean, 1) > 0:
                            misses.append("above the exact greedy")
                        if kind in ("misses the shift", "nothing"):
                            if round(mean, 1) > 10:
                                misses.append("> +10 %")
                            if vs_nom is not None and round(vs_nom, 1) > 10:
                                misses.append("> `Nominees()` + 10 %")
                        if round(rows, 1) > 3:
                            misses.append("> 3p rows")
                        if (eo and max(eo) > 1) or (ev and max(ev) > 1) or not all(r["certified"] for r in recs):
                            misses.append("ε")
                        status = "met" if not misses else "MISSED: " + ", ".join(misses)
                        t = tallies.setdefault(f"{kind}", [0, 0])
                        t[0 if not misses else 1] += 1
                    body.append(f"| {bed} | {p} | {label} | {kind} | " + " | ".join(cells) + f" | {status} |")
        body.append("")
    out += ["Rows (bed, γ, p, purchase) met and missed, by what the purchase is given:", ""]
    out += [f"* {kind}: {t[0]} met, {t[1]} missed" for kind, t in sorted(tallies.items())]
    out += [""] + body
    return "\n".join(out)


PAGES = {
    "docs/results/testbeds.md": testbeds_page,
    "docs/results/experiments.md": experiments_page,
    "docs/results/population.md": population_page,
}


def main(argv: list[str]) -> int:
    stale = []
    for rel, make in PAGES.items():
        text = make()
        path = ROOT / rel
        if "--check" in argv:
            if not path.is_file() or path.read_text() != text:
                stale.append(rel)
        else:
            path.write_text(text)
            print(f"wrote {rel}")
    if "--check" in argv:  # the plots' pixels depend on matplotlib's version: only that each linked plot exists
        stale += [f"{PLOTS}/{job[0]}" for job in PLOT_JOBS if not (ROOT / PLOTS / job[0]).is_file()]
    else:
        print(f"wrote {len(write_plots())} plots in {PLOTS}")
    if stale:
        print("out of date (run python docs/generate_results.py): " + ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
