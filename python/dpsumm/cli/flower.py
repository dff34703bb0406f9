"""``dpsumm flower``: the commands of a Flower deployment, or (``--run``) the whole federation on this machine."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import DataFileError, DpsummError
from ..files import _is_number
from ._common import NOT_PRIVATE, PROG, UsageError, jsonable, writable_dir
from .output import build_report, ledger_text, write_outputs
from .run_options import (
    add_run_options,
    add_table_options,
    budget_arg,
    check_report_delta,
    check_validation_labels,
    gamma_arg,
    method_arg,
    report_deltas,
)

__all__ = ["add_flower"]


def add_flower(sub: Any) -> None:
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
    _add_party_files(p)
    add_table_options(p)
    p.add_argument(
        "--owner-rows",
        default=None,
        metavar="NAME=ROWS,...",
        help="each owner's public size (run config owner-rows): the aggregator refuses a row count an owner states "
        "that differs (with --run: read from the files here)",
    )
    p.add_argument("--size", type=int, required=True, help="summary size")
    p.add_argument(
        "--n-features",
        type=int,
        default=None,
        help="features per row (default: read from the --consumer file if it is readable here)",
    )
    _add_deployment_options(p)
    add_run_options(p)
    p.add_argument(
        "--reply-timeout",
        type=float,
        help="seconds before a silent party is excluded (run config reply-timeout; default 60 + 0.5 per owner)",
    )
    p.add_argument(
        "--node-wait",
        type=float,
        help="seconds to wait for every node's hello (run config node-wait; default 120 + 0.5 per owner)",
    )
    p.add_argument("--output", default=None, help="result file (.npz) on the SuperLink's machine")
    p.add_argument("--app-dir", default="dpsumm-app", help="where to write the Flower app (default ./dpsumm-app)")
    p.add_argument("--run", action="store_true", help="run everything on 127.0.0.1 now")
    p.add_argument(
        "--out",
        default=None,
        help="with --run: write summary.npy, provenance.csv and report.json (the whole ledger) here",
    )
    p.add_argument("--workdir", default=None, help="with --run: logs and state (default: a temporary directory)")
    p.add_argument(
        "--poll-interval",
        type=float,
        help="with --run: idle poll of the SuperNodes (dpsumm.flower.supernode, warm ClientApps), 0.01-3 s, default 0.2",
    )
    p.add_argument("--json", action="store_true", help="with --run: print the result summary as JSON")
    p.add_argument("--simulation", action="store_true", help="with --run: on Flower's Simulation Engine (Ray)")
    p.set_defaults(func=_run)


def _add_party_files(p: Any) -> None:
    """Each party's files on its own machine (its node config)."""
    p.add_argument(
        "--owner",
        action="append",
        required=True,
        metavar="NAME=PATH",
        help="an owner's party name and data file on its machine (repeat per owner)",
    )
    p.add_argument(
        "--labels",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="an owner's labels file on its machine (repeat per owner; every owner or none)",
    )
    p.add_argument(
        "--strata",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="an owner's strata file on its machine (its node config strata; repeat per owner; every owner or none)",
    )
    p.add_argument("--consumer", required=True, metavar="PATH", help="the consumer's validation rows on its machine")
    p.add_argument(
        "--validation-strata",
        default=None,
        metavar="PATH",
        help="the consumer's validation strata on its machine (its node config strata): --purchase strata "
        "releases their histogram",
    )
    p.add_argument(
        "--validation-labels",
        default=None,
        metavar="PATH",
        help="the consumer's validation labels on its machine (its node config labels): --purchase labels "
        "releases their histogram; other methods refuse them",
    )


def _add_deployment_options(p: Any) -> None:
    """How the SuperNodes and flwr reach the SuperLink (the printed commands)."""
    p.add_argument(
        "--superlink",
        default="SUPERLINK_HOST:9093",
        metavar="HOST:PORT",
        help="address the SuperNodes and flwr use to reach the SuperLink (printed commands)",
    )
    p.add_argument(
        "--tls-dir",
        default=None,
        metavar="DIR",
        help="directory with ca.crt, server.pem, server.key (printed commands; --run makes its own)",
    )
    p.add_argument("--insecure", action="store_true", help="no TLS (trials on a trusted network only)")
    p.add_argument("--node-auth", action="store_true", help="SuperNode authentication (needs TLS)")


def _flower_owners(specs: Sequence[str], what: str = "--owner") -> dict[str, str]:
    owners: dict[str, str] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise UsageError(f"{what} must be NAME=PATH, got {spec!r}")
        if name in owners or name == "consumer":
            raise UsageError(f"{what} name {name!r} is repeated or reserved")
        if "," in name or name != name.strip():
            raise UsageError(f"{what} name {name!r}: a party name may not hold a comma or surrounding spaces")
        owners[name] = path
    return owners


def _flower_run_config(args: argparse.Namespace, n_owners: int, n_features: int) -> dict[str, Any]:
    """The Flower run config of the command line (keys of dpsumm.flower.config): the shared keys, the budget, and
    only the method options that were given (the rest keep the method object's defaults on the ServerApp too)."""
    method = method_arg(args)
    if not method.distributed:
        raise UsageError(
            f"--method {method.name} is a central baseline: it needs every row in one process and does "
            "not run on Flower"
        )
    budget = budget_arg(args, method, size=args.size, owners=n_owners)
    gamma = gamma_arg(args.gamma)
    run_config: dict[str, Any] = {
        "size": args.size,
        "owners": n_owners,
        "n-features": n_features,
        "method": method.name,
        "gamma": gamma,
        "feature-low": float(args.feature_range[0]),
        "feature-high": float(args.feature_range[1]),
    }
    from ..methods import flat_options

    for option, value in flat_options(method).items():  # a run config value is a scalar
        run_config[option.replace("_", "-")] = value
    if budget is not None:
        if budget.epsilon is not None:
            run_config.update({"budget-epsilon": budget.epsilon, "budget-delta": budget.delta})
        run_config.update(
            {"budget-validation-epsilon": budget.validation_epsilon, "budget-validation-delta": budget.validation_delta}
        )
    if args.seed_set is not None:
        if args.seed_set.isdigit():
            run_config["seed-set"] = int(args.seed_set)
        else:  # the ServerApp runs in another directory: hand it an absolute path
            if _is_number(args.seed_set):  # "-1", "2.5": not a count, and no file is meant
                raise UsageError(
                    f"--seed-set must be a count of rows (a whole number >= 0) or a file, got {args.seed_set!r}"
                )
            run_config["seed-set-path"] = str(Path(args.seed_set).resolve())
    if args.random_state is not None:
        run_config["random-state"] = args.random_state
    if args.node_wait is not None:
        run_config["node-wait"] = args.node_wait
    if args.reply_timeout is not None:
        run_config["reply-timeout"] = args.reply_timeout
    return run_config


def _run(args: argparse.Namespace) -> int:
    tables = _table_config(args)
    owners, labels, strata, n_features = _party_flags(args, tables)
    if args.out and not args.run:
        raise UsageError("--out applies to --run only (without --run the result is --output on the SuperLink)")
    if args.simulation and not args.run:
        raise UsageError("--simulation applies to --run only (the Simulation Engine runs every party on this machine)")
    if args.simulation and (args.node_auth or args.poll_interval is not None):
        raise UsageError("--simulation has no SuperNode processes: --node-auth and --poll-interval do not apply")
    if args.run:
        _resolve_run_paths(args)
    run_config = _flower_run_config(args, len(owners), n_features)
    if args.owner_rows is not None:
        run_config["owner-rows"] = _owner_rows(args.owner_rows, owners)
    try:
        from .. import flower
        from ..flower.config import FlowerRunConfig
    except ImportError as exc:
        raise UsageError(str(exc)) from None
    FlowerRunConfig.from_run_config(run_config)  # a bad combination fails here, before anything starts
    if args.run:
        run_config["owner-rows"] = _check_local_files(args, owners, strata, n_features, tables)
        FlowerRunConfig.from_run_config(run_config)
        return _run_flower_locally(args, owners, labels, run_config, strata, tables)
    print("\n".join(_deployment_commands(args, owners, labels, strata, tables, run_config, flower.FLWR_VERSION)))
    return 0


def _party_flags(
    args: argparse.Namespace, tables: dict[str, str]
) -> tuple[dict[str, str], dict[str, str], dict[str, str], int]:
    """The parties' files of the command line, checked against each other and the method: ``(owners, labels,
    strata, n_features)``, the consumer's validation strata under ``"consumer"`` in ``strata``; ``tables`` are the
    node config keys of the column flags (:func:`_table_config`)."""
    if args.poll_interval is not None and not 0.01 <= args.poll_interval <= 3.0:  # the launcher's range (not nan)
        raise UsageError(f"--poll-interval must be between 0.01 and 3 seconds, got {args.poll_interval}")
    owners = _flower_owners(args.owner)
    n_features = args.n_features
    if n_features is None:
        try:
            n_features = int(_party_table(args, tables, args.consumer, owner=False)[1])
        except DataFileError:
            raise UsageError("--n-features is needed (the --consumer file is not readable here)") from None
        except DpsummError as exc:
            raise UsageError(f"--consumer: {exc}") from None
    if args.node_auth and args.insecure:
        raise UsageError("--node-auth needs TLS (drop --insecure)")
    labels = _flower_owners(args.labels, what="--labels")
    if labels and set(labels) != set(owners):
        raise UsageError(f"--labels must name every owner ({sorted(owners)}) or none, got {sorted(labels)}")
    by_column = "label-column" in tables
    check_validation_labels(
        args, method_arg(args), owners_labelled=bool(labels) or by_column, validation_labelled=by_column
    )
    strata = _flower_owners(args.strata, what="--strata")
    if strata and set(strata) != set(owners):
        raise UsageError(f"--strata must name every owner ({sorted(owners)}) or none, got {sorted(strata)}")
    _check_strata_flags(args, method_arg(args), bool(strata))
    if args.validation_strata is not None:
        strata["consumer"] = args.validation_strata
    return owners, labels, strata, n_features


def _resolve_run_paths(args: argparse.Namespace) -> None:
    """With --run the ServerApp runs in another process and directory: hand it absolute paths."""
    if args.seed_set is not None and not args.seed_set.isdigit():
        if not Path(args.seed_set).is_file():
            raise UsageError(f"--seed-set: no such file: {args.seed_set}")
        args.seed_set = str(Path(args.seed_set).resolve())
    if args.output:
        args.output = str(Path(args.output).resolve())


def _check_local_files(
    args: argparse.Namespace, owners: dict[str, str], strata: dict[str, str], n_features: int, tables: dict[str, str]
) -> str:
    """With --run everything runs here: every data file must be readable here (read as its node reads it), checked
    before anything starts. Returns the owners' public sizes, the run config's ``owner-rows``."""
    sizes: dict[str, int] = {}
    for name, path in [*owners.items(), ("consumer", args.consumer)]:
        try:
            shape = _party_table(args, tables, path, owner=name != "consumer")
        except DpsummError as exc:
            raise UsageError(f"--owner {name}: {exc}" if name != "consumer" else f"--consumer: {exc}") from None
        if shape[1] != n_features:
            raise UsageError(f"{path} has {shape[1]} features, expected {n_features}")
        sizes[name] = int(shape[0])
    check_report_delta(args, sizes.pop("consumer"))
    rows = int(shape[0])  # the consumer's, read last
    public = ",".join(f"{n}={rows}" for n, rows in sizes.items())
    if args.owner_rows is not None and args.owner_rows.replace(" ", "") != public:
        raise UsageError(f"--owner-rows {args.owner_rows!r} differs from the files' sizes here ({public})")
    if args.validation_labels is not None:
        from ..datasets import load_labels

        try:
            y = load_labels(args.validation_labels)
        except DpsummError as exc:
            raise UsageError(f"--validation-labels: {exc}") from None
        if y.shape != (rows,):
            raise UsageError(
                f"--validation-labels must hold one label per validation row ({rows}), got shape {y.shape}"
            )
    _check_strata_files(args, method_arg(args), owners, strata)
    if args.output:
        writable_dir(str(Path(args.output).resolve().parent), "--output")
    if args.out:
        writable_dir(args.out, "--out")
    return public


def _superlink_address(text: str) -> tuple[str, str]:
    """--superlink as ``(host, port)``: a host and a port between 1 and 65535 (``HOST:PORT``)."""
    host, _, port = text.rpartition(":")
    if not host.strip() or not (port.isdigit() and 1 <= int(port) <= 65535):
        raise UsageError(f"--superlink must be HOST:PORT with a port between 1 and 65535, got {text!r}")
    return host, port


def _deployment_commands(
    args: argparse.Namespace,
    owners: dict[str, str],
    labels: dict[str, str],
    strata: dict[str, str],
    tables: dict[str, str],
    run_config: dict[str, Any],
    flwr_version: str,
) -> list[str]:
    """The commands of a deployment on several machines (without --run), each with the comment saying where it
    runs: the SuperLink, the node keys, one SuperNode per party, the flwr CLI connection and the run."""

    q = shlex.quote
    tls = None if args.insecure else Path(args.tls_dir or "tls")
    host, port = _superlink_address(args.superlink)
    out = args.output or "/var/lib/dpsumm/result.npz"
    run_config["output"] = out
    lines = [
        "# Every machine: pip install 'dpsumm[flower]'   (flwr==" + flwr_version + ")",
        "# Every Flower process: export FLWR_TELEMETRY_ENABLED=0 FLWR_DISABLE_UPDATE_CHECK=1",
        "",
    ]
    if tls is not None:
        lines += [
            "# TLS: ca.crt goes to every machine; server.pem/server.key stay on the SuperLink's machine.",
            f"#   python -c \"from dpsumm.flower import make_tls; make_tls({str(tls)!r}, [{host!r}, '127.0.0.1', 'localhost'])\"",
            "#   (127.0.0.1 too: the SuperLink's own ServerApp process reaches it there over TLS)",
            "",
        ]
    link = [
        "flower-superlink",
        "--host",
        "0.0.0.0",
        "--port",
        port or "9093",
        "--disable-runtime-dependency-installation",
    ]
    if tls is None:
        link.append("--insecure")
    else:
        link += [
            "--ssl-ca-certfile",
            str(tls / "ca.crt"),
            "--ssl-certfile",
            str(tls / "server.pem"),
            "--ssl-keyfile",
            str(tls / "server.key"),
        ]
    if args.node_auth:
        link.append("--enable-supernode-auth")
    lines += ["# 1. SuperLink machine (runs the aggregator's ServerApp):", " ".join(q(a) for a in link), ""]
    cli_conf = ["[superlink]", 'default = "dpsumm"', "", "[superlink.dpsumm]", f'address = "{args.superlink}"']
    cli_conf.append("insecure = true" if tls is None else f'root-certificates = "{(tls / "ca.crt").resolve()}"')
    parties = [(n, "owner", p) for n, p in owners.items()] + [("consumer", "consumer", args.consumer)]
    if args.validation_labels is not None:
        labels = {**labels, "consumer": args.validation_labels}
    if args.node_auth:
        lines += [
            "# 2. Each party makes a key pair on its machine and sends NAME.key.pub to the SuperLink's operator:",
            "#   python -c \"from dpsumm.flower import make_node_key; make_node_key('keys', 'NAME')\"",
            "#  who registers each one (flwr CLI configured as in step 4):",
        ]
        lines += [f"flwr supernode register keys/{n}.key.pub dpsumm --name {q(n)}" for n, _, _ in parties]
        lines.append("")
    lines.append("# 3. One SuperNode per party, each on its own machine (data paths are on that machine):")
    lines += _supernode_commands(args, parties, labels, strata, tables, run_config, tls)
    lines += [
        "",
        "# 4. Where the run is started (any machine that reaches the SuperLink): the flwr CLI connection,",
        "#    in $FLWR_HOME/config.toml (default ~/.flwr/config.toml):",
    ]
    lines += ["#   " + c for c in cli_conf]
    lines += [
        "# then write the app and start the run:",
        f'python -c "from dpsumm.flower import write_app; write_app({args.app_dir!r})"',
        " ".join(
            [
                "flwr",
                "run",
                q(args.app_dir),
                "dpsumm",
                "--run-config",
                q(" ".join(f"{k}={_override_value(v)}" for k, v in run_config.items())),
                "--stream",
            ]
        ),
        f"# The ServerApp writes the summary to {out} on the SuperLink's machine",
        "# (python -c \"import dpsumm.flower as f; print(f.load_result('" + out + "'))\").",
    ]
    return lines


def _supernode_commands(
    args: argparse.Namespace,
    parties: list[tuple[str, str, str]],
    labels: dict[str, str],
    strata: dict[str, str],
    tables: dict[str, str],
    run_config: dict[str, Any],
    tls: Path | None,
) -> list[str]:
    """Step 3 of the printed deployment: each party's ``flower-supernode`` command with its node config, and what
    the consumer's operator must allow for this run."""
    from ..flower.config import _toml_value

    q = shlex.quote
    out: list[str] = []
    for name, role, path in parties:
        cfg = f"role={_toml_value(role)} name={_toml_value(name)} data={_toml_value(path)}"
        if name in labels:
            cfg += f" labels={_toml_value(labels[name])}"
        if name in strata:
            cfg += f" strata={_toml_value(strata[name])}"
        cfg += "".join(f" {k}={_toml_value(v)}" for k, v in tables.items())
        node = ["flower-supernode", "--superlink", args.superlink, "--node-config", cfg]
        node += ["--insecure"] if tls is None else ["--root-certificates", str(tls / "ca.crt")]
        if args.node_auth:
            node += ["--auth-supernode-private-key", f"keys/{name}.key"]
        out += [f"#   {role} {name}:", " ".join(q(a) for a in node)]
        above = _consumer_caps(run_config)
        if role == "consumer" and above is not None:
            out.append(
                f"#   (this run asks the consumer for epsilon {above[0]:g}, delta {above[1]:g}, above its node's default "
                f"caps: its node refuses unless its operator adds max-epsilon={above[0]!r} max-delta={above[1]!r} to "
                "its --node-config.)"
            )
        if role == "consumer" and _releases_exact(method_arg(args)):
            out.append(
                "#   (this run asks the consumer for its exact hashed validation mean, with no noise: NOT private. "
                "Its node refuses unless its operator adds allow-exact-release=true to its --node-config.)"
            )
    return out


def _releases_exact(method: Any) -> bool:
    """Whether ``method`` asks the consumer for its exact hashed validation mean (no noise): the nominations protocol
    with ``validation_release="exact"``, or the paper's non-private baseline. The consumer's node refuses it unless
    its own node config says ``allow-exact-release=true`` (dpsumm.flower.client_app)."""
    return getattr(method, "validation_release", None) == "exact" or getattr(method, "private", True) is False


def _consumer_caps(run_config: dict[str, Any]) -> tuple[float, float] | None:
    """The consumer's planned ``(epsilon_v, delta_v)`` when above its node's default caps
    (:data:`dpsumm.flower.caps.CONSUMER_DEFAULT_CAPS`), else None. ``dpsumm flower --run`` starts every node as
    their one operator and sets the consumer's caps to it; the printed deployment says what its operator would add."""
    from ..flower.caps import CONSUMER_DEFAULT_CAPS, planned_spend
    from ..flower.config import FlowerRunConfig

    cfg = FlowerRunConfig.from_run_config(run_config)
    eps, delta = planned_spend(cfg.method, cfg, cfg.plan()).get("consumer", (0.0, 0.0))
    if eps <= CONSUMER_DEFAULT_CAPS[0] and delta <= CONSUMER_DEFAULT_CAPS[1]:
        return None
    return max(eps, CONSUMER_DEFAULT_CAPS[0]), max(delta, CONSUMER_DEFAULT_CAPS[1])


def _override_value(v: Any) -> str:
    """A value as ``flwr run --run-config 'k=v ...'`` reads it: TOML, but a double-quoted string may not hold a double
    quote there (flwr splits the pairs with a regex), so such a string is a TOML literal string ``'...'``."""
    from ..flower.config import _toml_value

    if isinstance(v, str) and '"' in v and "'" not in v and "\n" not in v:
        return f"'{v}'"
    return _toml_value(v)


def _table_config(args: argparse.Namespace) -> dict[str, str]:
    """The node config keys every node gets from --features, --label-column, --strata-columns and --scale: each node
    reads its table by column name and scales it as ``dpsumm summarize`` does (:mod:`dpsumm.flower.client_app`)."""
    from ..preprocessing import parse_range

    out: dict[str, str] = {}
    if args.label_column is not None:
        if args.label_column.strip().lstrip("-").isdigit():
            raise UsageError(
                "--label-column: on Flower each node reads its table by header name: give --label-column NAME"
            )
        if args.labels or args.validation_labels is not None:
            raise UsageError("give --labels/--validation-labels (files) or --label-column (a column), not both")
        out["label-column"] = args.label_column
    if args.features is not None:
        out["features"] = args.features
    if args.strata_columns is not None:
        if args.strata or args.validation_strata is not None:
            raise UsageError("give --strata/--validation-strata (files) or --strata-columns (columns), not both")
        out["strata-columns"] = args.strata_columns
    if args.scale is not None:
        if args.scale.strip() == "seed":
            raise UsageError(
                "--scale seed: on Flower every node scales its own rows by the range it is given: declare it "
                "(--scale 'LOW:HIGH' or 'NAME=LOW:HIGH,...')"
            )
        if args.seed_set is not None and not args.seed_set.isdigit():
            raise UsageError(
                "--scale with --seed-set PATH: the ServerApp reads the seed rows as they are: give them scaled, or "
                "give a count (rows drawn in --feature-range)"
            )
        names = None if args.features is None else [f.strip() for f in args.features.split(",")]
        if names is None and "=" in args.scale:  # the names are the tables' headers, read on the nodes
            names = [part.partition("=")[0].strip() for part in args.scale.split(",")]
        try:
            parse_range(args.scale, names)
        except DpsummError as exc:
            raise UsageError(f"--scale: {exc}") from None
        out["scale"] = args.scale
    return out


def _party_table(args: argparse.Namespace, tables: dict[str, str], path: str, *, owner: bool) -> tuple[int, int]:
    """The shape of a party's feature rows as its node reads them (by the column flags, when given), its declared
    range (--scale) checked against its feature columns as its node checks it."""
    from ..datasets import read_party_table, read_table
    from ..preprocessing import parse_range

    if not any(k in tables for k in ("features", "label-column", "strata-columns")):
        shape = read_table(path).data.shape
        if "scale" in tables:
            parse_range(tables["scale"], None)
        return (int(shape[0]), int(shape[1]))
    t = read_party_table(
        path,
        features=args.features,
        label_column=args.label_column,
        strata_columns=args.strata_columns,
        argument="owner" if owner else "consumer",
        labels_required=owner,
    )
    if t.strata is not None:
        from ..strata import check_strata_against, strata_columns

        levels = method_arg(args).public_levels()
        if levels:
            check_strata_against(strata_columns(t.strata, "strata", t.data.shape[0]), levels, "--strata-columns")
    if "scale" in tables:
        parse_range(tables["scale"], list(t.features))
    return (int(t.data.shape[0]), int(t.data.shape[1]))


def _owner_rows(text: str, owners: dict[str, str]) -> str:
    """--owner-rows, checked (every owner, once) before anything starts; the run config's ``owner-rows``."""
    from ..flower.config import parse_owner_rows

    try:
        sizes = parse_owner_rows(text, len(owners))
    except DpsummError as exc:
        raise UsageError(str(exc).replace("run config `owner-rows`", "--owner-rows")) from None
    if set(sizes) != set(owners):
        raise UsageError(f"--owner-rows must name the owners {sorted(owners)}, got {sorted(sizes)}")
    return text


def _check_strata_flags(args: argparse.Namespace, method: Any, owners_have_strata: bool) -> None:
    """--strata and --validation-strata (or --strata-columns) against the purchase, before anything starts: a purchase
    by strata needs both (every owner's and the consumer's); every other purchase refuses them (the nodes would refuse
    them mid-run)."""
    needs = bool(getattr(method, "needs_strata", False))
    columns = args.strata_columns is not None
    if columns and needs:
        return
    given = owners_have_strata or args.validation_strata is not None or columns
    if given and not needs:
        flag = "--strata-columns" if columns else "--strata" if owners_have_strata else "--validation-strata"
        raise UsageError(
            f"{flag} applies only to a purchase by strata (--purchase strata --levels ...), not to --method "
            f"{method.name}" + (f" --purchase {method.purchase.name}" if hasattr(method, "purchase") else "")
        )
    if needs and not owners_have_strata:
        raise UsageError("--purchase strata buys by each owner's strata: give --strata NAME=PATH for every owner")
    if needs and args.validation_strata is None:
        raise UsageError(
            "--purchase strata releases the consumer's histogram over the strata: give --validation-strata PATH"
        )


def _check_strata_files(args: argparse.Namespace, method: Any, owners: dict[str, str], strata: dict[str, str]) -> None:
    """With --run, every strata file is read here and checked against the declared levels before anything starts."""
    if not strata:
        return
    from ..datasets import read_table
    from ..strata import check_strata_against, load_strata

    levels = method.public_levels()
    for name, path in strata.items():
        flag = "--validation-strata" if name == "consumer" else f"--strata {name}"
        rows = read_table(args.consumer if name == "consumer" else owners[name]).n_rows
        try:
            check_strata_against(load_strata(path, rows, flag), levels, flag)
        except DpsummError as exc:
            raise UsageError(f"{flag}: {exc}" if flag not in str(exc) else str(exc)) from None


def _run_flower_locally(
    args: argparse.Namespace,
    owners: dict[str, str],
    labels: dict[str, str],
    run_config: dict[str, Any],
    strata: dict[str, str] | None = None,
    tables: dict[str, str] | None = None,
) -> int:
    from ..flower import LocalFederation, save_result

    with tempfile.TemporaryDirectory(prefix="dpsumm-flower-") as tmp:
        work = Path(args.workdir) if args.workdir else Path(tmp)
        t0 = time.perf_counter()
        parties: dict[str, Any] = dict(
            labels=labels,
            consumer_labels=args.validation_labels,
            strata={n: str(Path(p).resolve()) for n, p in (strata or {}).items()},
            allow_seeded=args.random_state is not None,
            allow_exact_release=_releases_exact(method_arg(args)),
            consumer_caps=_consumer_caps(run_config),
            tables=tables or {},
        )
        if args.simulation:
            try:
                from ..flower.simulation import SimulatedFederation
            except ImportError as exc:
                raise UsageError(str(exc)) from None
            print(f"running {len(owners) + 1} virtual SuperNodes on Flower's Simulation Engine", file=sys.stderr)
            res = SimulatedFederation(work, owners, args.consumer, **parties).run(run_config)
        else:
            fed = LocalFederation(
                work,
                owners,
                args.consumer,
                tls=not args.insecure,
                node_auth=args.node_auth,
                node_poll_interval=0.2 if args.poll_interval is None else args.poll_interval,
                **parties,
            )
            try:
                fed.start()
                print(
                    f"started SuperLink on 127.0.0.1:{fed.port} and {len(owners) + 1} SuperNodes: pids {fed.pids}",
                    file=sys.stderr,
                )
                res = fed.run(run_config)
            finally:
                fed.close()
        wall = time.perf_counter() - t0
        if args.output:
            save_result(res, args.output)
    # The per-exchange log: "exchanges" (the paper's protocol), "exchanges_log" (nominations, whose "exchanges"
    # is the count).
    log = res.extra.get("exchanges_log", res.extra.get("exchanges"))
    entries = [e for e in log if isinstance(e, dict)] if isinstance(log, list) else []
    rounds = [e for e in entries if e.get("round") is not None]
    per_round: dict[int, float] = {}
    for e in rounds:
        per_round[e["round"]] = per_round.get(e["round"], 0.0) + e["seconds"]
    summary = {
        "size": len(res),
        "owners": res.owner_names,
        "owner": res.owner.tolist(),
        "index": res.index.tolist(),
        "accessed": res.accessed.total,
        "events": res.events,
        "server_seconds": res.seconds,
        "wall_seconds": wall,
        "discovery_seconds": res.extra.get("discovery_seconds"),
        "exchanges": len(entries),
        "exchange_seconds": (
            {str(e.get("kind")): round(float(e.get("seconds", 0.0)), 2) for e in entries}
            if len(entries) <= 10
            else None
        ),
        "mean_round_seconds": sum(per_round.values()) / len(per_round) if per_round else None,
    }
    if args.random_state is not None:
        summary["private"] = False
        summary["warning"] = NOT_PRIVATE
    if args.out:
        report = build_report(res, args, budget_arg(args), method_arg(args), owners=owners, flower=jsonable(summary))
        write_outputs(res, args.out, report)
    if args.json:
        print(json.dumps(jsonable(summary), indent=2))
    else:
        for k, v in summary.items():
            print(f"{k}: {v}")
        print("\n".join(ledger_text(res, *report_deltas(args), args.random_state is not None)))
    if len(res) < args.size:
        print(f"{PROG}: error: the run returned {len(res)} of {args.size} rows (see events)", file=sys.stderr)
        return 1
    return 0
