"""The nominations protocol's experiments (issue 12): quality tables and the sweeps behind docs/experiments/.

Parts (each writes results.json, results.csv, table.md and plots into its own directory under --out):

* ``main``: MNIST label split (App. G), gamma by the median heuristic on the public seed set, epsilon_v = 1,
  delta_v = 1e-6, owners' epsilon = 0, M = 2p: nominations against central greedy, exact-kernel greedy and
  uniform, p in {50, 100, 200, 500, 1000}, 5 repeats (``mnist-nominations``).
* ``digits``: the same on scikit-learn's digits, p in {10, 20, 40, 80} (``digits-nominations``).
* ``digits-variants``: on the same digits split, why nominations miss the +10 % target there: the default
  against the exact owner greedy, no release noise (NOT private), temperatures T in {0.2, 0.5, 5} and
  ``choice="hashes"`` (``digits-nominations-variants``; its README is digits-nominations/README.md).
* ``temperature``: the owners' temperature T in {0.005, 0.02, 0.05, 0.1, 0.2, 0.4, 0.8, 3} at epsilon_v = 1 and
  epsilon_v = inf (exact release, NOT private), p in {50, 200, 1000}, M = 2p, every row a candidate,
  ``choice="hashes"``, 2 repeats (``mnist-temperature``; its README is nominations-temperature/README.md).
* ``epsilon``: nominations at epsilon_v in {0.25, 0.5, 1, 2, 4, inf} (``mnist-epsilon``).
* ``nominees``: nominations at M in {p/K, p/2, p, 2p, 4p} (``mnist-nominees``).
* ``release``: the Gaussian release against the paper's h2 (MWEM) at the same (epsilon_v, delta_v)
  (``mnist-release``).
* ``parsimony``: MMD² against raw rows the aggregator saw, for nominations (both purchase modes), the paper's
  certified protocol, central greedy and uniform (``mnist-parsimony``).

Run: ``python benches/nominations_experiments.py --data $MNIST_DIR --out docs/experiments --parts main``
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import dpsumm
from dpsumm import datasets, experiments

BUDGET = dpsumm.Budget(validation_epsilon=1.0, validation_delta=1e-6)


def _mnist(data: str):
    return lambda r: datasets.mnist_label_split(data, random_state=r)


def _run(split, sizes, repeats, methods, **kw):
    return experiments.run_experiment(
        split, sizes, repeats=repeats, methods=methods, gamma="median", progress=True, **kw
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, help="directory of the MNIST IDX files")
    ap.add_argument("--out", default="docs/experiments")
    ap.add_argument(
        "--parts",
        nargs="+",
        default=["main", "digits", "epsilon", "nominees", "release", "parsimony"],
        choices=["main", "digits", "digits-variants", "temperature", "epsilon", "nominees", "release", "parsimony"],
    )
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200, 500, 1000])
    args = ap.parse_args()
    out = Path(args.out)
    mnist = _mnist(args.data)
    K = 5
    if "main" in args.parts:
        recs = _run(
            mnist,
            args.sizes,
            args.repeats,
            ("nominations", "central-greedy", "exact-greedy", "uniform"),
            privacy=BUDGET,
        )
        experiments.write_results(recs, out / "mnist-nominations", title="MNIST, nominations at eps_v=1")
        print(experiments.format_table(recs))
    if "digits" in args.parts:
        recs = experiments.run_experiment(
            lambda r: datasets.digits_label_split(random_state=r),
            [10, 20, 40, 80],
            repeats=args.repeats,
            gamma="median",
            privacy=BUDGET,
            methods=("nominations", "central-greedy", "exact-greedy", "uniform"),
        )
        experiments.write_results(recs, out / "digits-nominations", title="digits, nominations at eps_v=1")
        print(experiments.format_table(recs))
    if "digits-variants" in args.parts:
        digits = lambda r: datasets.digits_label_split(random_state=r)  # noqa: E731
        base = experiments.run_experiment(
            digits,
            [10, 20, 40, 80],
            repeats=args.repeats,
            gamma="median",
            methods=("central-greedy", "uniform"),
            progress=False,
        )
        recs = list(base)
        for label, method in (
            ("default", dpsumm.Nominations()),
            ("owner_greedy=exact", dpsumm.Nominations(owner_greedy="exact")),
            ("release=exact (NOT private)", dpsumm.Nominations(validation_release="exact")),
            ("T=0.2", dpsumm.Nominations(temperature=0.2)),
            ("T=0.5", dpsumm.Nominations(temperature=0.5)),
            ("T=5", dpsumm.Nominations(temperature=5.0)),
            ("choice=hashes", dpsumm.Nominations(choice="hashes")),
        ):
            part = experiments.run_experiment(
                digits,
                [10, 20, 40, 80],
                repeats=args.repeats,
                gamma="median",
                methods=(method,),
                variant=label,
                progress=False,
                privacy=None if label.startswith("release=exact") else BUDGET,
            )
            recs += experiments.relative_to_baseline(part, [base])
        experiments.write_results(
            recs, out / "digits-nominations-variants", title="digits, nominations variants at eps_v=1"
        )
        print(experiments.format_table(recs))
    sweep_sizes = [s for s in args.sizes if s in (50, 200, 1000)] or args.sizes
    if "temperature" in args.parts:
        reps = min(args.repeats, 2)
        base = _run(mnist, sweep_sizes, reps, ("central-greedy",))
        recs = list(base)
        for eps in (1.0, math.inf):
            for T in (0.005, 0.02, 0.05, 0.1, 0.2, 0.4, 0.8, 3.0):

                def method(p: int, T: float = T, eps: float = eps) -> dpsumm.Nominations:
                    return dpsumm.Nominations(
                        temperature=T,
                        nominees=2 * p,
                        candidates=1 << 30,
                        choice="hashes",
                        validation_release="exact" if math.isinf(eps) else "gaussian",
                    )

                part = _run(
                    mnist,
                    sweep_sizes,
                    reps,
                    (method,),
                    variant=f"eps_v={eps:g},T={T:g}",
                    privacy=None if math.isinf(eps) else dpsumm.Budget(validation_epsilon=eps, validation_delta=1e-6),
                )
                recs += experiments.relative_to_baseline(part, [base])
        experiments.write_results(
            recs, out / "mnist-temperature", title="MNIST, nominations against the owners' temperature T"
        )
        print(experiments.format_table(recs))
    if "epsilon" in args.parts:
        base = _run(mnist, sweep_sizes, args.repeats, ("central-greedy", "uniform"))
        recs = list(base)
        for eps in (0.25, 0.5, 1.0, 2.0, 4.0, math.inf):
            if math.isinf(eps):
                part = _run(
                    mnist,
                    sweep_sizes,
                    args.repeats,
                    (dpsumm.Nominations(validation_release="exact"),),
                    variant="eps_v=inf",
                )
            else:
                part = _run(
                    mnist,
                    sweep_sizes,
                    args.repeats,
                    ("nominations",),
                    variant=f"eps_v={eps:g}",
                    privacy=dpsumm.Budget(validation_epsilon=eps, validation_delta=1e-6),
                )
            recs += experiments.relative_to_baseline(part, [base])
        experiments.write_results(recs, out / "mnist-epsilon", title="MNIST, nominations against eps_v")
        print(experiments.format_table(recs))
    if "nominees" in args.parts:
        base = _run(mnist, sweep_sizes, args.repeats, ("central-greedy", "uniform"))
        recs = list(base)
        for label, f in (
            ("M=p/K", lambda p: max(1, p // K)),
            ("M=p/2", lambda p: p // 2),
            ("M=p", lambda p: p),
            ("M=2p", lambda p: 2 * p),
            ("M=4p", lambda p: 4 * p),
        ):
            part = _run(
                mnist,
                sweep_sizes,
                args.repeats,
                (lambda p, f=f: dpsumm.Nominations(nominees=f(p)),),
                variant=label,
                privacy=BUDGET,
            )
            recs += experiments.relative_to_baseline(part, [base])
        experiments.write_results(recs, out / "mnist-nominees", title="MNIST, nominations against M")
        print(experiments.format_table(recs))
    if "release" in args.parts:
        base = _run(mnist, sweep_sizes, args.repeats, ("central-greedy",))
        recs = list(base)
        for rel in ("gaussian", "mwem"):
            part = _run(
                mnist,
                sweep_sizes,
                args.repeats,
                (dpsumm.Nominations(validation_release=rel),),
                variant=f"release={rel}",
                privacy=BUDGET,
            )
            recs += experiments.relative_to_baseline(part, [base])
        experiments.write_results(recs, out / "mnist-release", title="MNIST, Gaussian vs MWEM release at eps_v=1")
        print(experiments.format_table(recs))
    if "parsimony" in args.parts:
        sizes = [s for s in args.sizes if s <= 200] or args.sizes[:1]
        recs = _run(mnist, sizes, min(args.repeats, 2), ("central-greedy", "uniform", "paper"))
        for purchase in (dpsumm.Nominees(), dpsumm.Winners()):
            recs += experiments.relative_to_baseline(
                _run(
                    mnist,
                    sizes,
                    min(args.repeats, 2),
                    (dpsumm.Nominations(purchase=purchase),),
                    variant=f"purchase={purchase.name}",
                    privacy=BUDGET,
                ),
                [recs],
            )
        paths = experiments.write_results(recs, out / "mnist-parsimony", title="MNIST, MMD² against rows seen")
        experiments.plot_parsimony(
            recs,
            paths["json"].parent / "parsimony.png",
            title="MNIST label split: MMD² against raw rows the aggregator saw",
        )
        print(experiments.format_table(recs))
    (out / "nominations_experiments.json").write_text(
        json.dumps({"parts": args.parts, "sizes": args.sizes, "repeats": args.repeats}, indent=1)
    )


if __name__ == "__main__":
    main()
