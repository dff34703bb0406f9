"""Command-line interface: ``dpsumm <subcommand> ...``.

Each subcommand is one ``_add_<name>(subparsers)`` function that registers its parser and sets
``func`` to a ``_run_<name>(args) -> int`` handler; add new subcommands (summarize, demo,
experiment) the same way and list them in :data:`_SUBCOMMANDS`. A user error (a
:class:`~dpsumm.errors.DpsummError` or a bad command line) prints one line to stderr and exits 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any, Literal, NoReturn

from .errors import DpsummError

__all__ = ["main", "build_parser"]

_PROG = "dpsumm"


class _UsageError(Exception):
    """A bad command line (raised instead of argparse printing usage and exiting)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2 (handled in main)
        raise _UsageError(message)


def _writable_dir(path: str, option: str) -> Any:
    """Prove ``path`` (a directory, created if missing) writable before any noise is drawn; directories made
    for the check are removed again."""
    import os
    import tempfile
    from pathlib import Path

    from .errors import InvalidParameterError

    out = Path(path)
    if out.exists() and not out.is_dir():
        raise InvalidParameterError(f"`{option}`: {out} exists and is not a directory", option.lstrip("-"))
    created = [p for p in (out, *out.parents) if not p.exists()]
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".dpsumm-write-check-", dir=out)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InvalidParameterError(f"`{option}`: cannot write to {out} ({exc.strerror or exc})", option.lstrip("-")) from None
    finally:  # leave no trace: the directory is made again when the results are written
        for p in created:
            try:
                p.rmdir()
            except OSError:
                pass
    return out


def _header_arg(value: str) -> object:
    return {"auto": "auto", "yes": True, "no": False}[value]


_NOT_PRIVATE = "NOT private: seeded run (--random-state); the noise can be removed by anyone with the seed"


def _jsonable(x: Any) -> Any:
    if isinstance(x, float) and math.isinf(x):
        return None
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x


# ---------------------------------------------------------------------------------------------
# account
# ---------------------------------------------------------------------------------------------


def _add_account(sub: Any) -> None:
    p = sub.add_parser(
        "account",
        help="privacy cost of a schedule (epsilon per party and accountant)",
        description=(
            "Print the epsilon of the owners' and the validation set's releases for a schedule, by "
            "accountant (basic, advanced, kov = Theorem 7, tight = dp-accounting). With --budget and "
            "--validation-budget, calibrate a schedule to that budget first and print it."
        ),
    )
    p.add_argument("--schedule", choices=("paper", "theorem2"), default="paper",
                   help="parameter schedule (default: paper, Section 4)")
    p.add_argument("--size", type=int, required=True, help="summary size p")
    p.add_argument("--owners", type=int, required=True, help="number of data owners K")
    p.add_argument("--dim", type=int, default=140, help="random-feature dimension d (default 140)")
    p.add_argument("--delta", type=float, default=1e-4, help="delta for the owners (default 1e-4)")
    p.add_argument("--validation-delta", type=float, default=0.01,
                   help="delta for the validation set (default 0.01)")
    p.add_argument("--epsilon", type=float, default=None,
                   help="target epsilon for --schedule theorem2")
    p.add_argument("--epsilon-auction", type=float, default=None,
                   help="PrivAuction's eps_auc (default 0 = ask every owner every round, the only certified "
                        "setting; > 0 runs the paper's uncertified auction)")
    p.add_argument("--budget", type=float, default=None, metavar="EPS",
                   help="owners' epsilon budget: calibrate a schedule (needs --validation-budget)")
    p.add_argument("--validation-budget", type=float, default=None, metavar="EPS",
                   help="validation set's epsilon budget for calibration")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=_run_account)


def _run_account(args: argparse.Namespace) -> int:
    from . import accounting as acc

    if (args.budget is None) != (args.validation_budget is None):
        raise _UsageError("--budget and --validation-budget must be given together")
    if args.budget is not None:
        budget = acc.Budget(args.budget, args.delta, args.validation_budget, args.validation_delta)
        kwargs = {} if args.epsilon_auction is None else {"epsilon_auction": args.epsilon_auction}
        schedule = acc.calibrate(budget, args.size, args.owners, args.dim, **kwargs)
    elif args.schedule == "theorem2":
        if args.epsilon is None:
            raise _UsageError("--schedule theorem2 needs --epsilon")
        schedule = acc.theorem2_schedule(args.epsilon, args.delta, args.size, args.owners, args.dim)
        if args.epsilon_auction is not None:
            import dataclasses

            schedule = dataclasses.replace(schedule, epsilon_auction=args.epsilon_auction)
    else:
        if args.epsilon is not None:
            raise _UsageError("--epsilon applies to --schedule theorem2 only")
        schedule = acc.paper_schedule(args.size, args.owners, args.dim,
                                      epsilon_auction=0.0 if args.epsilon_auction is None else args.epsilon_auction)

    ledger = acc.schedule_ledger(schedule)
    totals = ledger.totals(args.delta, args.validation_delta)
    if args.json:
        out: dict[str, Any] = dict(totals)
        out["owners_excluding_auction"] = ledger.totals(
            args.delta, args.validation_delta, include_auction=False
        )["owners"]
        out["delta"] = {"owners": args.delta, "validation": args.validation_delta}
        out["schedule"] = schedule.to_dict()
        out["notes"] = ledger.notes()
        print(json.dumps(_jsonable(out), indent=2, allow_nan=False))
    else:
        print(schedule.describe())
        print()
        print(ledger.table(args.delta, args.validation_delta))
    return 0


# ---------------------------------------------------------------------------------------------
# demo
# ---------------------------------------------------------------------------------------------


def _add_demo(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="the paper's label-split experiment on scikit-learn's digits, end to end in seconds",
        description=(
            "Split scikit-learn's bundled digits as the paper's Appendix G splits MNIST (five owners by label "
            "groups; the consumer wants 3s and 4s in ratio 0.7 : 0.3), build summaries with the private protocol "
            "(paper schedule), the non-private greedy baseline and uniform sampling, print MMD^2, its increase "
            "over greedy, the accuracy of a 32-unit network trained on each summary, rows accessed and epsilon, "
            "and write the plots. Seeded: reproducible, NOT private."
        ),
    )
    p.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 40, 80], help="summary sizes (default 10 20 40 80)")
    p.add_argument("--repeats", type=int, default=3, help="repeats per size (default 3)")
    p.add_argument("--out", default="dpsumm-demo", help="output directory for results and plots (default ./dpsumm-demo)")
    p.add_argument("--random-state", type=int, default=0, help="base seed (reproducible, NOT private; default 0)")
    p.add_argument("--json", action="store_true", help="print the records as JSON instead of the table")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=_run_demo)


def _run_demo(args: argparse.Namespace) -> int:
    from . import datasets, experiments

    base = args.random_state
    _writable_dir(args.out, "--out")
    records = experiments.run_experiment(
        lambda r: datasets.digits_label_split(random_state=base + r), args.sizes, repeats=args.repeats,
        methods=("nominations", "central-greedy", "paper", "uniform"), gamma="median", random_state=base,
        progress=not args.no_progress,
    )
    paths = experiments.write_results(records, args.out, title="digits label split")
    if args.json:
        print(json.dumps([_jsonable(r.to_dict()) for r in records], indent=1))
        return 0
    split = datasets.digits_label_split(random_state=base)
    print(f"digits label split: {split!r}")
    print(experiments.format_table(records))
    _print_epsilon(records)
    print(_NOT_PRIVATE)
    print(f"wrote {', '.join(str(p) for p in paths.values())}")
    return 0


def _print_epsilon(records: Sequence[Any]) -> None:
    nom = [r for r in records if r.method == "nominations"]
    if nom:
        r = max(nom, key=lambda r: r.size)
        print(f"nominations, size {r.size}: epsilon owners {r.epsilon_owners:.4g} (certified: what an owner receives "
              f"depends only on its own data and the one validation release); validation {r.epsilon_validation:.4g} "
              f"(delta {r.delta_validation:g}; replace-one in D_v); tight accountant.")
    priv = [r for r in records if r.method == "paper"]
    if not priv:
        return
    r = max(priv, key=lambda r: r.size)
    owners = "not certified (paper's PrivAuction, see README 'Privacy')" if r.epsilon_owners is None else f"{r.epsilon_owners:.4g}"
    print(f"private, size {r.size}: epsilon owners {owners}; h2 releases alone {r.epsilon_owners_h2:.4g} "
          f"(delta {r.delta_owners:g}); validation {r.epsilon_validation:.4g} (delta {r.delta_validation:g}); tight accountant.")


# ---------------------------------------------------------------------------------------------
# experiment
# ---------------------------------------------------------------------------------------------


def _add_experiment(sub: Any) -> None:
    p = sub.add_parser(
        "experiment",
        help="reproduce the paper's Figure 2 (MNIST) or run the same design on digits",
        description=(
            "Run methods at several summary sizes over repeats of a label split; write results.json, results.csv, "
            "table.md, mmd_increase.png and accuracy.png to --out."
        ),
    )
    p.add_argument("dataset", choices=("mnist", "digits"), help="mnist (needs --data) or digits (bundled with scikit-learn)")
    p.add_argument("--data", default=None, help="directory holding the four MNIST IDX files (never downloaded)")
    p.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200, 500, 1000],
                   help="summary sizes p (default 50 100 200 500 1000)")
    p.add_argument("--repeats", type=int, default=5, help="repeats (fresh splits) per size (default 5)")
    p.add_argument("--methods", nargs="+", default=["paper", "paper-greedy", "uniform"],
                   help="any of paper, paper-greedy, uniform, exact-greedy, pfds (default: paper paper-greedy uniform)")
    p.add_argument("--gamma", default="0.1", help="RBF width, or 'median' for the median heuristic on the public seed set (default 0.1, the paper's)")
    p.add_argument("--dim", type=int, default=140, help="random features d of h1 (default 140)")
    p.add_argument("--classifier", choices=("mlp", "svm"), default="mlp",
                   help="mlp: one hidden layer of 32 units (Figure 2); svm: linear SVM (Figure 1)")
    p.add_argument("--budget", type=float, default=None,
                   help="calibrate the private method to this owners' epsilon (and --validation-budget) instead of the paper's schedule")
    p.add_argument("--validation-budget", type=float, default=None, help="validation epsilon for --budget (default: same as --budget)")
    p.add_argument("--delta", type=float, default=1e-5, help="delta for --budget (owners and validation; default 1e-5)")
    p.add_argument("--pfds-epsilon", type=float, default=None,
                   help="per-agent epsilon of the pfds method (default: the private run's owners' epsilon)")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--random-state", type=int, default=0, help="base seed (reproducible, NOT private; default 0)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=_run_experiment)


def _run_experiment(args: argparse.Namespace) -> int:
    from . import accounting, datasets, experiments
    from .errors import InvalidParameterError

    _writable_dir(args.out, "--out")
    if args.dataset == "mnist":
        if args.data is None:
            raise InvalidParameterError("`--data` (the MNIST directory) is required for mnist", "data")
        train = datasets.mnist(args.data, kind="train")
        test = datasets.mnist(args.data, kind="test")

        def split(r: int) -> Any:
            return datasets.label_split(train, test, random_state=args.random_state + r)
    else:
        def split(r: int) -> Any:
            return datasets.digits_label_split(random_state=args.random_state + r)
    try:
        gamma: Any = "median" if args.gamma == "median" else float(args.gamma)
    except ValueError:
        raise InvalidParameterError(f"`--gamma` must be a number or 'median', got {args.gamma!r}", "gamma") from None
    budget = None
    if args.budget is not None:
        budget = accounting.Budget(epsilon=args.budget, delta=args.delta,
                                   validation_epsilon=args.validation_budget or args.budget, validation_delta=args.delta)
    records = experiments.run_experiment(
        split, args.sizes, repeats=args.repeats, methods=args.methods, gamma=gamma, dim=args.dim, privacy=budget,
        classifier=args.classifier, pfds_epsilon=args.pfds_epsilon, random_state=args.random_state,
        progress=not args.no_progress,
    )
    paths = experiments.write_results(records, args.out, title=f"{args.dataset} label split", dim=args.dim)
    print(experiments.format_table(records))
    _print_epsilon(records)
    print(_NOT_PRIVATE)
    print(f"wrote {', '.join(str(p) for p in paths.values())}")
    return 0


# ---------------------------------------------------------------------------------------------
# options shared by summarize and flower
# ---------------------------------------------------------------------------------------------


def _add_run_options(p: argparse.ArgumentParser) -> None:
    """--method, the budget, nominations' options, gamma, dim, seed set, reveal and the seed."""
    from .types import METHODS, PURCHASES

    p.add_argument("--method", default="nominations", choices=METHODS,
                   help="nominations (default, recommended: every party certified), paper (Sarpatwar et al. Alg. 3), "
                        "or a non-private baseline: central-greedy, paper-greedy, exact-greedy, uniform")
    p.add_argument("--budget", type=float, default=None, metavar="EPS",
                   help="owners' epsilon budget (calibrates the run; paper needs --validation-budget too)")
    p.add_argument("--delta", type=float, default=1e-6, metavar="D",
                   help="owners' delta: of --budget, and the delta the ledger is reported at (default 1e-6)")
    p.add_argument("--validation-budget", type=float, default=None, metavar="EPS",
                   help="the validation set's epsilon budget (alone: a validation-only budget, for nominations)")
    p.add_argument("--validation-delta", type=float, default=1e-6, metavar="D",
                   help="validation delta: of --validation-budget, and the delta the ledger is reported at "
                        "(default 1e-6)")
    p.add_argument("--purchase", choices=PURCHASES, default=None,
                   help="nominations only: buy every nominee's raw row (nominees, default: no leak) or only the "
                        "winners' (winners: fewer rows, but each owner learns which of its rows won, outside the DP "
                        "guarantee)")
    p.add_argument("--nominees", type=int, default=None, metavar="M",
                   help="nominations only: rows each owner nominates (default: the method's)")
    p.add_argument("--validation-release", choices=("gaussian", "mwem"), default=None,
                   help="nominations only: how the validation mean is released once (default gaussian)")
    p.add_argument("--gamma", default="median", metavar="FLOAT|median",
                   help="RBF width, or 'median' (default): the median heuristic on the public seed set")
    p.add_argument("--dim", type=int, default=140, help="random features d of h1 (default 140)")
    p.add_argument("--seed-set", default=None, metavar="COUNT|PATH",
                   help="public seed rows: a count of rows generated uniformly in --feature-range, or a file "
                        "(default: the schedule's count)")
    p.add_argument("--feature-range", type=float, nargs=2, default=(0.0, 1.0), metavar=("LOW", "HIGH"),
                   help="public box of generated seed rows (default 0 1: scale features to it, "
                        "dpsumm.scale_to_unit)")
    p.add_argument("--reveal", choices=("points", "hashes"), default="points",
                   help="points (default): the aggregator gets the raw rows it buys; hashes: only their h1 hashes")
    p.add_argument("--random-state", type=int, default=None,
                   help="seed: reproducible and NOT private (default: OS entropy, the only private mode)")


def _gamma(text: str) -> float | Literal["median"]:
    if text == "median":
        return "median"
    try:
        g = float(text)
    except ValueError:
        raise _UsageError(f"--gamma must be a number or 'median', got {text!r}") from None
    if not (math.isfinite(g) and g > 0):
        raise _UsageError(f"--gamma must be a finite number > 0 or 'median', got {text!r}")
    return g


def _seed_set_arg(text: str | None) -> Any:
    """--seed-set: None, a count, or the rows of a file."""
    if text is None:
        return None
    if text.isdigit():
        return int(text)
    from .datasets import load_array

    return load_array(text)


def _budget(args: argparse.Namespace) -> Any:
    """The run's Budget (None without --budget/--validation-budget). Refuses options that would be ignored."""
    from . import accounting
    from .types import NON_PRIVATE_METHODS

    nomination_only = [f"--{n.replace('_', '-')}" for n in ("purchase", "nominees", "validation_release")
                       if getattr(args, n) is not None]
    if nomination_only and args.method != "nominations":
        raise _UsageError(f"{', '.join(nomination_only)} apply to --method nominations only")
    if args.nominees is not None and args.nominees < 1:
        raise _UsageError(f"--nominees must be >= 1, got {args.nominees}")
    if args.budget is None and args.validation_budget is None:
        return None
    if args.method in NON_PRIVATE_METHODS:
        raise _UsageError(f"--method {args.method} is not private: --budget/--validation-budget do not apply")
    if args.validation_budget is None:
        raise _UsageError("--budget needs --validation-budget (the validation set's epsilon)")
    if args.budget is None and args.method != "nominations":
        raise _UsageError(f"--method {args.method} needs --budget (the owners' epsilon) with --validation-budget")
    return accounting.Budget(args.budget, args.delta, args.validation_budget, args.validation_delta)


def _method_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """Keywords of summarize() that only some methods take: passed only when given."""
    return {k: getattr(args, k) for k in ("purchase", "nominees", "validation_release") if getattr(args, k) is not None}


def _ledger(privacy: Any) -> Any:
    """The run's Ledger; a Flower result carries the ledger's dict form, turned back into a Ledger when
    ``Ledger.from_dict`` exists (else the dict is returned)."""
    from . import accounting

    if isinstance(privacy, dict):
        from_dict = getattr(accounting.Ledger, "from_dict", None)
        return from_dict(privacy) if from_dict is not None else privacy
    return privacy


def _ledger_text(res: Any, delta_owners: float, delta_validation: float, seeded: bool) -> list[str]:
    """What the run cost and certified, per party, in plain lines (the ledger's table and notes)."""
    lines = []
    if seeded:
        lines.append("seeded run (--random-state): reproducible and NOT private.")
    if res.privacy is None:
        lines.append(f"method {res.method!r} is not private: no party's privacy is protected or certified.")
        return lines
    led = _ledger(res.privacy)
    if isinstance(led, dict):  # no Ledger.from_dict: the totals at the δ's the ServerApp saved them at
        d = led.get("delta", {})
        lines.append(f"epsilon at delta owners {d.get('owners')}, validation {d.get('validation')}: "
                     f"{json.dumps(led.get('totals'))}")
        lines += led.get("notes", [])
        lines.append(f"aggregator saw {res.accessed.total} raw rows ({res.accessed.per_owner}).")
        lines.append(f"certified: {'NO (seeded run)' if seeded else res.privacy_status()}.")
        return lines
    eps_o = led.epsilon("owners", delta_owners)
    eps_v = led.epsilon("validation", delta_validation)
    certified = math.isfinite(eps_o) and math.isfinite(eps_v) and not seeded
    lines.append(led.table(delta_owners, delta_validation))
    lines.append(f"owners: epsilon {eps_o:.4g} at delta {delta_owners:g}; validation set: epsilon {eps_v:.4g} at "
                 f"delta {delta_validation:g} (tight accountant).")
    seen: dict[str, dict[str, int]] = {}
    for e in led.entries:
        seen.setdefault(e.party, {})
        seen[e.party][e.label] = seen[e.party].get(e.label, 0) + int(getattr(e.event, "count", 1))
    for party, labels in seen.items():
        lines.append(f"{party} saw: " + "; ".join(f"{lab} x{n}" for lab, n in labels.items()))
    lines.append(f"aggregator saw {res.accessed.total} raw rows ({res.accessed.per_owner}).")
    lines.append("certified: yes, for every party." if certified else
                 "certified: NO" + (" (seeded run)" if seeded else " (a party's epsilon is not finite: see the notes)") + ".")
    return lines


def _report(res: Any, args: argparse.Namespace, budget: Any, **extra: Any) -> dict[str, Any]:
    seeded = args.random_state is not None
    led = None if res.privacy is None else _ledger(res.privacy)
    d_o, d_v = args.delta, args.validation_delta
    privacy: Any = None
    certified = False
    if isinstance(led, dict):
        privacy = led
        certified = not seeded and res.privacy_status() == "private, certified"
    elif led is not None:
        privacy = led.to_dict(d_o, d_v)
        certified = (not seeded and led.certified("owners") and led.certified("validation")
                     and math.isfinite(led.epsilon("owners", d_o)) and math.isfinite(led.epsilon("validation", d_v)))
    return {
        **({"warning": _NOT_PRIVATE} if seeded else {}),
        "method": res.method, "size": len(res), **extra,
        "gamma": res.hasher.gamma, "dim": res.hasher.dim, "hash_seed": res.hasher.seed,
        "seeded": seeded, "private": led is not None and not seeded, "certified": certified,
        "budget": None if budget is None else dataclasses.asdict(budget),
        "accessed": dataclasses.asdict(res.accessed),
        "contribution": res.contribution.tolist(), "events": res.events, "seconds": res.seconds,
        "privacy": privacy,
    }


def _write_outputs(res: Any, out_dir: str, report: dict[str, Any]) -> Any:
    from pathlib import Path

    import numpy as np

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "summary.npy", res.points if res.points is not None else res.hashes)
    if res.labels is not None:
        np.save(out / "labels.npy", res.labels)
    np.savetxt(out / "provenance.csv", np.column_stack([res.owner, res.index]), fmt="%d", delimiter=",",
               header="owner,index", comments="")
    (out / "report.json").write_text(json.dumps(_jsonable(report), indent=2, default=str, allow_nan=False))
    return out


# ---------------------------------------------------------------------------------------------
# summarize
# ---------------------------------------------------------------------------------------------


def _add_summarize(sub: Any) -> None:
    p = sub.add_parser(
        "summarize",
        help="build a summary from owners' files (all parties in this process)",
        description="Owners' rows and the validation rows from .npy, .csv or .parquet files (.parquet needs "
                    "pip install 'dpsumm[parquet]'); prints the privacy ledger and writes summary.npy, labels.npy "
                    "(with labels), provenance.csv (owner, index) and report.json (accessed rows, the whole privacy "
                    "ledger, events) to --out.",
    )
    p.add_argument("--owners", nargs="+", required=True, metavar="PATH", help="one file per owner")
    p.add_argument("--labels", nargs="+", default=None, metavar="PATH",
                   help="one labels file per owner, in --owners order (.npy, .csv or .parquet, one column)")
    p.add_argument("--label-column", type=int, default=None, metavar="INDEX",
                   help="the owners' files hold the labels in this column (0-based; -1 = last): it is removed "
                        "from the features")
    p.add_argument("--validation", required=True, metavar="PATH", help="the consumer's validation rows")
    p.add_argument("--size", type=int, required=True, help="summary size p")
    p.add_argument("--out", required=True, help="output directory")
    _add_run_options(p)
    p.add_argument("--header", choices=("auto", "yes", "no"), default="auto",
                   help="CSV inputs: is the first line a header? auto: yes when a field is not a number or the "
                        "line is exactly 0,1,...,n-1 (pandas to_csv(index=False)); default auto")
    p.add_argument("--json", action="store_true", help="print report.json instead of the ledger table")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(func=_run_summarize)


def _owners_with_labels(args: argparse.Namespace, header: Any = "auto") -> list[Any]:
    import numpy as np

    from . import datasets
    from .results import Owner

    if args.labels is not None and args.label_column is not None:
        raise _UsageError("give --labels or --label-column, not both")
    if args.labels is not None and len(args.labels) != len(args.owners):
        raise _UsageError(f"--labels needs one file per owner ({len(args.owners)}), got {len(args.labels)}")
    owners = []
    for k, path in enumerate(args.owners):
        table = datasets.read_table(path, header=header)
        if not args.json:
            print(f"read {table.describe()}")
        rows = table.data
        labels = None
        if args.label_column is not None:
            c = args.label_column
            if not -rows.shape[1] <= c < rows.shape[1] or rows.shape[1] < 2:
                raise _UsageError(f"--label-column {c} is out of range for {path} ({rows.shape[1]} columns)")
            labels = rows[:, c]
            rows = np.delete(rows, c % rows.shape[1], axis=1)
        elif args.labels is not None:
            labels = datasets.load_labels(args.labels[k])
        if labels is not None and np.all(np.mod(labels, 1) == 0):
            labels = labels.astype(np.int64)
        owners.append(Owner(rows, labels=labels, name=f"owner-{k}"))
    return owners


def _run_summarize(args: argparse.Namespace) -> int:
    from . import datasets
    from .summarize import summarize

    out_dir = _writable_dir(args.out, "--out")  # before any noise is drawn
    header = _header_arg(args.header)
    budget = _budget(args)
    gamma = _gamma(args.gamma)
    owners = _owners_with_labels(args, header=header)
    val_table = datasets.read_table(args.validation, header=header)
    if not args.json:
        print(f"read {val_table.describe()}")
    validation = val_table.data
    seed = _seed_set_arg(args.seed_set)
    res = summarize(owners, validation, args.size, method=args.method, seed_set=seed, gamma=gamma, dim=args.dim,
                    privacy=budget, reveal=args.reveal, feature_range=tuple(args.feature_range),
                    random_state=args.random_state, progress=not args.no_progress, **_method_kwargs(args))
    report = _report(res, args, budget, owners=[str(p) for p in args.owners])
    out = _write_outputs(res, out_dir, report)
    if args.json:
        print(json.dumps(_jsonable(report), indent=2, default=str, allow_nan=False))
    else:
        print("\n".join(_ledger_text(res, args.delta, args.validation_delta, args.random_state is not None)))
        print(f"wrote {len(res)} rows to {out / 'summary.npy'} (accessed {res.accessed.total} raw rows); "
              f"report in {out / 'report.json'}")
    return 0


# ---------------------------------------------------------------------------------------------
# flower
# ---------------------------------------------------------------------------------------------


def _add_flower(sub: Any) -> None:
    p = sub.add_parser(
        "flower",
        help="print (or, with --run, run on this machine) the commands for a Flower deployment",
        description=(
            "Owners and the consumer as Flower SuperNodes, the aggregator as a ServerApp (docs/flower.md). "
            "Without --run: print the exact commands to start a SuperLink, one SuperNode per owner and one for the "
            "consumer (each on its own machine), and the run. With --run: start them all on 127.0.0.1 as separate "
            "processes, run the summary, print it and stop every process. Needs pip install 'dpsumm[flower]'."
        ),
    )
    p.add_argument("--owner", action="append", required=True, metavar="NAME=PATH",
                   help="an owner's party name and data file on its machine (repeat per owner)")
    p.add_argument("--labels", action="append", default=[], metavar="NAME=PATH",
                   help="an owner's labels file on its machine (repeat per owner; every owner or none)")
    p.add_argument("--consumer", required=True, metavar="PATH", help="the consumer's validation rows on its machine")
    p.add_argument("--size", type=int, required=True, help="summary size")
    p.add_argument("--n-features", type=int, default=None,
                   help="features per row (default: read from the --consumer file if it is readable here)")
    p.add_argument("--superlink", default="SUPERLINK_HOST:9093", metavar="HOST:PORT",
                   help="address the SuperNodes and flwr use to reach the SuperLink (printed commands)")
    p.add_argument("--tls-dir", default=None, metavar="DIR",
                   help="directory with ca.crt, server.pem, server.key (printed commands; --run makes its own)")
    p.add_argument("--insecure", action="store_true", help="no TLS (trials on a trusted network only)")
    p.add_argument("--node-auth", action="store_true", help="SuperNode authentication (needs TLS)")
    _add_run_options(p)
    p.add_argument("--reply-timeout", type=float, default=60.0, help="seconds before a silent party is excluded")
    p.add_argument("--output", default=None, help="result file (.npz) on the SuperLink's machine")
    p.add_argument("--app-dir", default="dpsumm-app", help="where to write the Flower app (default ./dpsumm-app)")
    p.add_argument("--run", action="store_true", help="run everything on 127.0.0.1 now")
    p.add_argument("--out", default=None,
                   help="with --run: write summary.npy, provenance.csv and report.json (the whole ledger) here")
    p.add_argument("--workdir", default=None, help="with --run: logs and state (default: a temporary directory)")
    p.add_argument("--poll-interval", type=float, default=None,
                   help="with --run: SuperNodes poll every S seconds (python -m dpsumm.flower.supernode) "
                        "instead of Flower's 3 s")
    p.add_argument("--json", action="store_true", help="with --run: print the result summary as JSON")
    p.set_defaults(func=_run_flower)


def _flower_owners(specs: Sequence[str], what: str = "--owner") -> dict[str, str]:
    owners: dict[str, str] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise _UsageError(f"{what} must be NAME=PATH, got {spec!r}")
        if name in owners or name == "consumer":
            raise _UsageError(f"{what} name {name!r} is repeated or reserved")
        owners[name] = path
    return owners


def _flower_run_config(args: argparse.Namespace, n_owners: int, n_features: int) -> dict[str, Any]:
    """The Flower run config of the command line (keys of dpsumm.flower.config)."""
    budget = _budget(args)
    gamma = _gamma(args.gamma)
    run_config: dict[str, Any] = {"size": args.size, "owners": n_owners, "n-features": n_features,
                                  "method": args.method, "reply-timeout": args.reply_timeout, "dim": args.dim,
                                  "gamma": gamma, "reveal": args.reveal, "feature-low": float(args.feature_range[0]),
                                  "feature-high": float(args.feature_range[1])}
    if budget is not None:
        if budget.epsilon is None:
            raise _UsageError("a validation-only budget is not supported on Flower yet: give --budget too")
        run_config.update({"budget-epsilon": budget.epsilon, "budget-delta": budget.delta,
                           "budget-validation-epsilon": budget.validation_epsilon,
                           "budget-validation-delta": budget.validation_delta})
    for key, value in _method_kwargs(args).items():
        run_config[key.replace("_", "-")] = value
    if args.seed_set is not None:
        if args.seed_set.isdigit():
            run_config["seed-set"] = int(args.seed_set)
        else:
            run_config["seed-set-path"] = args.seed_set
    if args.random_state is not None:
        run_config["random-state"] = args.random_state
    return run_config


def _run_flower(args: argparse.Namespace) -> int:
    import shlex
    from pathlib import Path

    owners = _flower_owners(args.owner)
    n_features = args.n_features
    if n_features is None:
        try:
            from .datasets import load_array

            n_features = int(load_array(args.consumer).shape[1])
        except DpsummError:
            raise _UsageError("--n-features is needed (the --consumer file is not readable here)") from None
    if args.node_auth and args.insecure:
        raise _UsageError("--node-auth needs TLS (drop --insecure)")
    labels = _flower_owners(args.labels, what="--labels")
    if labels and set(labels) != set(owners):
        raise _UsageError(f"--labels must name every owner ({sorted(owners)}) or none, got {sorted(labels)}")
    if args.out and not args.run:
        raise _UsageError("--out applies to --run only (without --run the result is --output on the SuperLink)")
    run_config = _flower_run_config(args, len(owners), n_features)
    try:
        from . import flower
        from .flower.config import FlowerRunConfig
    except ImportError as exc:
        raise _UsageError(str(exc)) from None
    FlowerRunConfig.from_run_config(run_config)  # a bad combination fails here, before anything starts
    if args.run:
        # Everything runs here: every data file must be readable here, checked before anything starts.
        from .datasets import read_table

        for name, path in [*owners.items(), ("consumer", args.consumer)]:
            try:
                t = read_table(path)
            except DpsummError as exc:
                raise _UsageError(f"--owner {name}: {exc}" if name != "consumer" else f"--consumer: {exc}") from None
            if t.data.shape[1] != n_features:
                raise _UsageError(f"{path} has {t.data.shape[1]} features, expected {n_features}")
        if args.output:
            _writable_dir(str(Path(args.output).resolve().parent), "--output")
        if args.out:
            _writable_dir(args.out, "--out")
        return _run_flower_locally(args, owners, labels, run_config)

    from .flower.config import _toml_value

    q = shlex.quote
    tls = None if args.insecure else Path(args.tls_dir or "tls")
    host, _, port = args.superlink.rpartition(":")
    out = args.output or "/var/lib/dpsumm/result.npz"
    run_config["output"] = out
    lines = ["# Every machine: pip install 'dpsumm[flower]'   (flwr==" + flower.FLWR_VERSION + ")",
             "# Every Flower process: export FLWR_TELEMETRY_ENABLED=0 FLWR_DISABLE_UPDATE_CHECK=1", ""]
    if tls is not None:
        lines += ["# TLS: ca.crt goes to every machine; server.pem/server.key stay on the SuperLink's machine.",
                  f"#   python -c \"from dpsumm.flower import make_tls; make_tls({str(tls)!r}, [{host!r}, '127.0.0.1', 'localhost'])\"",
                  "#   (127.0.0.1 too: the SuperLink's own ServerApp process reaches it there over TLS)", ""]
    link = ["flower-superlink", "--host", "0.0.0.0", "--port", port or "9093", "--disable-runtime-dependency-installation"]
    if tls is None:
        link.append("--insecure")
    else:
        link += ["--ssl-ca-certfile", str(tls / "ca.crt"), "--ssl-certfile", str(tls / "server.pem"),
                 "--ssl-keyfile", str(tls / "server.key")]
    if args.node_auth:
        link.append("--enable-supernode-auth")
    lines += ["# 1. SuperLink machine (runs the aggregator's ServerApp):", " ".join(q(a) for a in link), ""]
    cli_conf = ["[superlink]", 'default = "dpsumm"', "", "[superlink.dpsumm]", f'address = "{args.superlink}"']
    cli_conf.append("insecure = true" if tls is None else f'root-certificates = "{(tls / "ca.crt").resolve()}"')
    parties = [(n, "owner", p) for n, p in owners.items()] + [("consumer", "consumer", args.consumer)]
    if args.node_auth:
        lines += ["# 2. Each party makes a key pair on its machine and sends NAME.key.pub to the SuperLink's operator:",
                  "#   python -c \"from dpsumm.flower import make_node_key; make_node_key('keys', 'NAME')\"",
                  "#  who registers each one (flwr CLI configured as in step 4):"]
        lines += [f"flwr supernode register keys/{n}.key.pub dpsumm --name {q(n)}" for n, _, _ in parties]
        lines.append("")
    lines.append("# 3. One SuperNode per party, each on its own machine (data paths are on that machine):")
    for name, role, path in parties:
        cfg = f"role={_toml_value(role)} name={_toml_value(name)} data={_toml_value(path)}"
        if name in labels:
            cfg += f" labels={_toml_value(labels[name])}"
        node = ["flower-supernode", "--superlink", args.superlink, "--node-config", cfg]
        node += ["--insecure"] if tls is None else ["--root-certificates", str(tls / "ca.crt")]
        if args.node_auth:
            node += ["--auth-supernode-private-key", f"keys/{name}.key"]
        lines += [f"#   {role} {name}:", " ".join(q(a) for a in node)]
    lines += ["", "# 4. Where the run is started (any machine that reaches the SuperLink): the flwr CLI connection,",
              "#    in $FLWR_HOME/config.toml (default ~/.flwr/config.toml):"]
    lines += ["#   " + c for c in cli_conf]
    lines += ["# then write the app and start the run:",
              f"python -c \"from dpsumm.flower import write_app; write_app({args.app_dir!r})\"",
              " ".join(["flwr", "run", q(args.app_dir), "dpsumm", "--run-config",
                        q(" ".join(f"{k}={_toml_value(v)}" for k, v in run_config.items())), "--stream"]),
              f"# The ServerApp writes the summary to {out} on the SuperLink's machine",
              "# (python -c \"import dpsumm.flower as f; print(f.load_result('" + out + "'))\")."]
    print("\n".join(lines))
    return 0


def _run_flower_locally(args: argparse.Namespace, owners: dict[str, str], labels: dict[str, str],
                        run_config: dict[str, Any]) -> int:
    import tempfile
    import time
    from pathlib import Path

    from .flower import LocalFederation, save_result

    with tempfile.TemporaryDirectory(prefix="dpsumm-flower-") as tmp:
        work = Path(args.workdir) if args.workdir else Path(tmp)
        t0 = time.perf_counter()
        fed = LocalFederation(work, owners, args.consumer, labels=labels, tls=not args.insecure, node_auth=args.node_auth,
                              node_poll_interval=args.poll_interval,
                              allow_seeded=args.random_state is not None)
        try:
            fed.start()
            print(f"started SuperLink on 127.0.0.1:{fed.port} and {len(owners) + 1} SuperNodes: pids {fed.pids}",
                  file=sys.stderr)
            res = fed.run(run_config)
        finally:
            fed.close()
        wall = time.perf_counter() - t0
        if args.output:
            save_result(res, args.output)
    rounds = [e for e in res.extra.get("exchanges", []) if e.get("round") is not None]
    per_round: dict[int, float] = {}
    for e in rounds:
        per_round[e["round"]] = per_round.get(e["round"], 0.0) + e["seconds"]
    summary = {
        "size": len(res), "owners": res.owner_names, "owner": res.owner.tolist(), "index": res.index.tolist(),
        "accessed": res.accessed.total, "events": res.events, "server_seconds": res.seconds, "wall_seconds": wall,
        "discovery_seconds": res.extra.get("discovery_seconds"),
        "mean_round_seconds": sum(per_round.values()) / len(per_round) if per_round else None,
    }
    if args.random_state is not None:
        summary["private"] = False
        summary["warning"] = _NOT_PRIVATE
    if args.out:
        report = _report(res, args, _budget(args), owners=owners, flower=_jsonable(summary))
        _write_outputs(res, args.out, report)
    if args.json:
        print(json.dumps(_jsonable(summary), indent=2))
    else:
        for k, v in summary.items():
            print(f"{k}: {v}")
        print("\n".join(_ledger_text(res, args.delta, args.validation_delta, args.random_state is not None)))
    if len(res) < args.size:
        print(f"{_PROG}: error: the run returned {len(res)} of {args.size} rows (see events)", file=sys.stderr)
        return 1
    return 0

# ---------------------------------------------------------------------------------------------
# entry point
# ---------------------------------------------------------------------------------------------

_SUBCOMMANDS: tuple[Callable[[Any], None], ...] = (_add_account, _add_demo, _add_experiment, _add_flower, _add_summarize)


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand registered."""
    from . import __version__

    parser = _Parser(prog=_PROG, description="Differentially private distributed data summarization.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for add in _SUBCOMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0 ok, 2 user error)."""
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
        return int(args.func(args))
    except (_UsageError, DpsummError) as exc:
        msg = str(exc).replace("\n", " ")
        print(f"{_PROG}: error: {msg}", file=sys.stderr)
        return 2
    except OSError as exc:  # an unreadable input or an unwritable output named on the command line
        msg = str(exc).replace("\n", " ")
        print(f"{_PROG}: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
