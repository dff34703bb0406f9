"""Command-line interface: ``dpsumm <subcommand> ...``.

Each subcommand is one ``_add_<name>(subparsers)`` function that registers its parser and sets
``func`` to a ``_run_<name>(args) -> int`` handler; add new subcommands (summarize, demo,
experiment) the same way and list them in :data:`_SUBCOMMANDS`. A user error (a
:class:`~dpsumm.errors.DpsummError` or a bad command line) prints one line to stderr and exits 2.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from .errors import DpsummError

__all__ = ["main", "build_parser"]

_PROG = "dpsumm"


class _UsageError(Exception):
    """A bad command line (raised instead of argparse printing usage and exiting)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2 (handled in main)
        raise _UsageError(message)


def _writable_dir(path: str, option: str) -> Any:
    """Create ``path`` (a directory) and prove it writable, before any noise is drawn."""
    import os
    import tempfile
    from pathlib import Path

    from .errors import InvalidParameterError

    out = Path(path)
    if out.exists() and not out.is_dir():
        raise InvalidParameterError(f"`{option}`: {out} exists and is not a directory", option.lstrip("-"))
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".dpsumm-write-check-", dir=out)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InvalidParameterError(f"`{option}`: cannot write to {out} ({exc.strerror or exc})", option.lstrip("-")) from None
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
                   help="override eps_auc (0 = ask every owner every round, the only certified setting)")
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
        schedule = acc.paper_schedule(args.size, args.owners, args.dim, epsilon_auction=args.epsilon_auction)

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
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=_run_demo)


def _run_demo(args: argparse.Namespace) -> int:
    from . import datasets, experiments

    base = args.random_state
    _writable_dir(args.out, "--out")
    records = experiments.run_experiment(
        lambda r: datasets.digits_label_split(random_state=base + r), args.sizes, repeats=args.repeats,
        methods=("paper", "paper-greedy", "uniform"), gamma=0.1, random_state=base, progress=not args.no_progress,
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
    p.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200, 500, 1000])
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--methods", nargs="+", default=["paper", "paper-greedy", "uniform"],
                   help="any of private, greedy, uniform, exact-greedy, pfds (default: private greedy uniform)")
    p.add_argument("--gamma", default="0.1", help="RBF width, or 'median' for the median heuristic on the public seed set (default 0.1, the paper's)")
    p.add_argument("--dim", type=int, default=140)
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
    p.add_argument("--no-progress", action="store_true")
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
    paths = experiments.write_results(records, args.out, title=f"{args.dataset} label split")
    print(experiments.format_table(records))
    _print_epsilon(records)
    print(_NOT_PRIVATE)
    print(f"wrote {', '.join(str(p) for p in paths.values())}")
    return 0


# ---------------------------------------------------------------------------------------------
# summarize
# ---------------------------------------------------------------------------------------------


def _add_summarize(sub: Any) -> None:
    p = sub.add_parser(
        "summarize",
        help="build a summary from owners' files (all parties in this process)",
        description="Owners' rows and the validation rows from .npy, .csv or .parquet files; writes summary.npy, "
                    "provenance.csv (owner, index) and report.json (accessed rows, privacy ledger, events) to --out.",
    )
    p.add_argument("--owners", nargs="+", required=True, help="one file per owner")
    p.add_argument("--validation", required=True, help="the consumer's validation rows")
    p.add_argument("--size", type=int, required=True)
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--method", default="paper", choices=("paper", "paper-greedy", "uniform", "exact-greedy"))
    p.add_argument("--seed-set", default=None, help="public seed rows (file); default: generated")
    p.add_argument("--header", choices=("auto", "yes", "no"), default="auto",
                   help="CSV inputs: is the first line a header? auto: yes when a field is not a number or the "
                        "line is exactly 0,1,...,n-1 (pandas to_csv(index=False)); default auto")
    p.add_argument("--gamma", type=float, default=0.1)
    p.add_argument("--dim", type=int, default=140)
    p.add_argument("--random-state", type=int, default=None, help="seed (reproducible, NOT private); default: OS entropy")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=_run_summarize)


def _run_summarize(args: argparse.Namespace) -> int:
    import numpy as np

    from . import datasets
    from .summarize import summarize

    out = _writable_dir(args.out, "--out")  # before any noise is drawn
    header = _header_arg(args.header)
    tables = [datasets.read_table(p, header=header) for p in args.owners]
    val_table = datasets.read_table(args.validation, header=header)
    seed_table = datasets.read_table(args.seed_set, header=header) if args.seed_set else None
    for t in tables + [val_table] + ([seed_table] if seed_table else []):
        print(f"read {t.describe()}", file=sys.stderr)
    res = summarize([t.data for t in tables], val_table.data, args.size, method=args.method,
                    seed_set=None if seed_table is None else seed_table.data, gamma=args.gamma, dim=args.dim,
                    random_state=args.random_state, progress=not args.no_progress)
    np.save(out / "summary.npy", res.points if res.points is not None else res.hashes)
    np.savetxt(out / "provenance.csv", np.column_stack([res.owner, res.index]), fmt="%d", delimiter=",",
               header="owner,index", comments="")
    report = {
        "method": res.method, "size": len(res), "owners": [str(p) for p in args.owners],
        "accessed": {"total": res.accessed.total, "per_owner": res.accessed.per_owner},
        "contribution": res.contribution.tolist(), "events": res.events, "seconds": res.seconds,
        "privacy": None if res.privacy is None else res.privacy.totals(1e-4, 1e-2),
        "private": res.private, "seeded": res.seeded,
    }
    if res.seeded:
        report["warning"] = _NOT_PRIVATE
    (out / "report.json").write_text(json.dumps(_jsonable(report), indent=2, default=str))
    print(f"wrote {len(res)} rows to {out / 'summary.npy'} (accessed {res.accessed.total} raw rows)")
    if res.seeded:
        print(_NOT_PRIVATE)
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
    p.add_argument("--method", default="paper", choices=("paper", "paper-greedy"))
    p.add_argument("--random-state", type=int, default=None, help="seed (reproducible, NOT private)")
    p.add_argument("--reply-timeout", type=float, default=60.0, help="seconds before a silent party is excluded")
    p.add_argument("--output", default=None, help="result file (.npz) on the SuperLink's machine")
    p.add_argument("--app-dir", default="dpsumm-app", help="where to write the Flower app (default ./dpsumm-app)")
    p.add_argument("--run", action="store_true", help="run everything on 127.0.0.1 now")
    p.add_argument("--workdir", default=None, help="with --run: logs and state (default: a temporary directory)")
    p.add_argument("--poll-interval", type=float, default=None,
                   help="with --run: SuperNodes poll every S seconds (python -m dpsumm.flower.supernode) "
                        "instead of Flower's 3 s")
    p.add_argument("--json", action="store_true", help="with --run: print the result summary as JSON")
    p.set_defaults(func=_run_flower)


def _flower_owners(specs: Sequence[str]) -> dict[str, str]:
    owners: dict[str, str] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise _UsageError(f"--owner must be NAME=PATH, got {spec!r}")
        if name in owners or name == "consumer":
            raise _UsageError(f"--owner name {name!r} is repeated or reserved")
        owners[name] = path
    return owners


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
    run_config: dict[str, Any] = {"size": args.size, "owners": len(owners), "n-features": n_features,
                                  "method": args.method, "reply-timeout": args.reply_timeout}
    if args.random_state is not None:
        run_config["random-state"] = args.random_state
    try:
        from . import flower
    except ImportError as exc:
        raise _UsageError(str(exc)) from None
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
        return _run_flower_locally(args, owners, run_config)

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


def _run_flower_locally(args: argparse.Namespace, owners: dict[str, str], run_config: dict[str, Any]) -> int:
    import tempfile
    import time
    from pathlib import Path

    from .flower import LocalFederation, save_result

    with tempfile.TemporaryDirectory(prefix="dpsumm-flower-") as tmp:
        work = Path(args.workdir) if args.workdir else Path(tmp)
        t0 = time.perf_counter()
        fed = LocalFederation(work, owners, args.consumer, tls=not args.insecure, node_auth=args.node_auth,
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
    if args.json:
        print(json.dumps(_jsonable(summary), indent=2))
    else:
        for k, v in summary.items():
            print(f"{k}: {v}")
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
    parser = _Parser(prog=_PROG, description="Differentially private distributed data summarization.")
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
