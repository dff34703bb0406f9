"""The Flower ``ServerApp``: the aggregator of Alg. 3, reaching owners and the consumer over Flower.

Where the consumer lives: on **its own SuperNode** (node config ``role="consumer"``), like the owners.
The validation set then never leaves the consumer's machine; the aggregator receives only the h2
release ``g~`` (docs/explanation/design.md), exactly as in the in-process protocol.

The run, step by step:

1. :func:`discover`: wait (``node-wait`` s) until ``owners`` owner nodes and one consumer node are
   online and have said who they are (``query.dpsumm_hello``); with SuperNode authentication, a node
   whose self-reported name differs from the name it was registered under is ignored.
2. Build the run exactly as :func:`dpsumm.summarize` does (the method object's plan, the public seed rows, h1,
   the random streams) and run the method with a :class:`~dpsumm.flower.FlowerTransport` in place of the
   in-process transport. With the same ``random-state`` the result equals the in-process run.
3. Write the result to ``output`` (:func:`save_result`; read it with :func:`load_result`).

An owner that stops answering is excluded after ``reply-timeout`` seconds and the run continues
without it; the exclusion is in ``result.events`` and the round's ``trace`` entry.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import time
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
from flwr.app import ConfigRecord, Context, Message, RecordDict
from flwr.serverapp import Grid, ServerApp

from .. import accounting
from ..datasets import load_array
from ..errors import DataFileError, DpsummError, ProtocolError
from ..hashing import RFFHasher
from ..metrics import SummaryFitWarning, validation_fit_warning
from ..protocols.base import RunSetup, public_setup
from ..protocols.paper import RoundRecord
from ..results import Access, SummaryResult
from .caps import check_run_caps, planned_spend
from .client_app import HELLO_TYPE
from .config import FlowerRunConfig, natural_key
from .pulls import patch_object_pulls
from .streams import party_streams
from .transport import FlowerTransport

__all__ = ["app", "discover", "run_summary", "save_result", "load_result"]

app = ServerApp()


@app.main()
def main(grid: Grid, context: Context) -> None:
    """Entry point Flower calls: run the summary and write it to the run config's ``output``. This process is
    Flower's for this run alone: its object pulls first retry after the run config's poll interval
    (:func:`~dpsumm.flower.pulls.patch_object_pulls`)."""
    cfg = FlowerRunConfig.from_run_config(context.run_config)
    patch_object_pulls(cfg.poll_interval)
    if cfg.random_state is not None:
        print(
            f"dpsumm: WARNING random-state={cfg.random_state}: seeded noise, reproducible and NOT private", flush=True
        )
    try:
        result = run_summary(grid, cfg)
    except Exception as exc:
        if cfg.output:
            _atomic_write(Path(cfg.output + ".error"), f"{type(exc).__name__}: {exc}\n".encode())
        raise
    if cfg.output:
        save_result(result, cfg.output)
    print(f"dpsumm: {result!r}; wrote {cfg.output or '(no output configured)'}", flush=True)


# ---------------------------------------------------------------------------------------- discovery


def discover(
    grid: Grid,
    owners: int,
    *,
    wait: float,
    poll_interval: float = 0.05,
    labelled: dict[str, bool] | None = None,
    caps: dict[str, tuple[float, float]] | None = None,
) -> tuple[dict[str, int], tuple[str, int], list[dict[str, Any]]]:
    """Find ``owners`` owner nodes and one consumer node among the SuperLink's online nodes.

    Parameters
    ----------
    grid : flwr.serverapp.Grid
    owners : int
        Owner nodes to wait for.
    wait : float
        Seconds to wait for them.
    poll_interval : float
    labelled : dict, optional
        Filled with party name -> whether its node config names ``labels`` (as the node says; a node of an older
        dpsumm that does not say is left out).
    caps : dict, optional
        Filled with party name -> its node's ``(max-epsilon, max-delta)`` (:mod:`dpsumm.flower.caps`), as it says.

    Returns
    -------
    owners : dict of str to int
        Owner name to node id.
    consumer : (str, int)
        The consumer's name and node id.
    events : list of dict
        Nodes that were ignored, and why.

    Raises
    ------
    ProtocolError
        If they are not all there within ``wait`` seconds, if two nodes claim one name, if more than
        ``owners`` owners or more than one consumer answer, or if a node's ClientApp refuses its own node config
        (its hello builds its party).
    """
    deadline = time.monotonic() + wait
    asked: dict[str, int] = {}  # hello message id -> node id
    seen: set[int] = set()
    found: dict[int, tuple[str, str]] = {}
    registered: dict[int, str] = {}
    events: list[dict[str, Any]] = []
    while True:
        new = []
        for info in grid.get_nodes():
            if info.node_id not in seen:
                seen.add(info.node_id)
                registered[info.node_id] = info.name
                new.append(info.node_id)
        if new:
            msgs = [
                Message(
                    RecordDict({"dpsumm.hello": ConfigRecord({})}),
                    dst_node_id=n,
                    message_type=HELLO_TYPE,
                    ttl=max(wait, 1.0),
                )
                for n in new
            ]
            for n, mid in zip(new, grid.push_messages(msgs)):
                if mid:
                    asked[mid] = n
        if asked:
            for reply in grid.pull_messages(list(asked)):
                node = asked.pop(reply.metadata.reply_to_message_id, None)
                if node is None:
                    continue
                if reply.has_error():  # its ClientApp refused its own node config: before any release
                    raise ProtocolError(f"node {node} refused the run at discovery: {reply.error.reason}")
                if "dpsumm.hello" not in reply.content:
                    events.append({"node_id": node, "event": "ignored", "reason": "not a dpsumm hello"})
                    continue
                rec = reply.content["dpsumm.hello"]
                role, name = str(rec["role"]), str(rec["name"])
                if registered.get(node) and registered[node] != name:
                    events.append(
                        {
                            "node_id": node,
                            "event": "ignored",
                            "reason": f"calls itself {name!r} but is registered as {registered[node]!r}",
                        }
                    )
                    continue
                clash = [n for n, (_, other) in found.items() if other == name]
                if clash:
                    raise ProtocolError(f"two nodes ({clash[0]} and {node}) both claim the party name {name!r}")
                found[node] = (role, name)
                if labelled is not None and "labelled" in rec:
                    labelled[name] = bool(rec["labelled"])
                if caps is not None and "max-epsilon" in rec and "max-delta" in rec:
                    caps[name] = (float(rec["max-epsilon"]), float(rec["max-delta"]))  # type: ignore[arg-type]
        owner_nodes = {name: n for n, (role, name) in found.items() if role == "owner"}
        consumers = [(name, n) for n, (role, name) in found.items() if role == "consumer"]
        if len(owner_nodes) > owners:
            raise ProtocolError(
                f"{len(owner_nodes)} owner nodes answered but the run config says owners={owners}: "
                f"{sorted(owner_nodes, key=natural_key)}"
            )
        if len(consumers) > 1:
            raise ProtocolError(f"more than one consumer node answered: {sorted(c for c, _ in consumers)}")
        if len(owner_nodes) == owners and len(consumers) == 1:
            if "consumer" in owner_nodes:
                raise ProtocolError("an owner may not be named 'consumer'")
            return owner_nodes, consumers[0], events
        if time.monotonic() >= deadline:
            raise ProtocolError(
                f"within {wait:g} s only {len(owner_nodes)} of {owners} owner nodes "
                f"({sorted(owner_nodes, key=natural_key)}) and {len(consumers)} of 1 consumer node answered"
            )
        time.sleep(poll_interval)


# ---------------------------------------------------------------------------------------- the run


def check_labelled(method: Any, labelled: dict[str, bool], consumer: str) -> None:
    """Refuse a method that needs labels (``Nominations(purchase="labels")``) when a node said it has none, before
    anything is sent (as :func:`dpsumm.summarize` refuses before any budget is spent). A node that did not say is
    not refused here; the consumer then refuses the request itself (its error reaches the run's error)."""
    if not getattr(method, "needs_labels", False):
        return
    if labelled.get(consumer) is False:
        raise ProtocolError(
            f"{method!r} releases the validation set's label histogram, but the consumer's SuperNode "
            f"({consumer!r}) has no labels: give it node config labels=PATH (its validation labels)"
        )
    missing = sorted((n for n, ok in labelled.items() if n != consumer and not ok), key=natural_key)
    if missing:
        raise ProtocolError(
            f"{method!r} buys rows by label, but the owners {missing} have no labels: give every "
            "owner's SuperNode node config labels=PATH"
        )


def check_owner_rows(owner_rows: dict[str, int] | None, owner_nodes: dict[str, int]) -> None:
    """Refuse public sizes (run config ``owner-rows``) that do not name exactly the owner nodes that answered, before
    anything is sent: a size for another name would leave an owner's statements unchecked."""
    if owner_rows is None or set(owner_rows) == set(owner_nodes):
        return
    raise ProtocolError(
        f"run config `owner-rows` names the owners {sorted(owner_rows, key=natural_key)}, but the owner nodes are "
        f"{sorted(owner_nodes, key=natural_key)}: give each owner node's public size under its node config name"
    )


def run_summary(grid: Grid, cfg: FlowerRunConfig) -> SummaryResult:
    """Discover the parties and run the method over Flower; the same result type as :func:`dpsumm.summarize`.

    The method object plans and runs exactly as in :func:`dpsumm.summarize` (:mod:`dpsumm.protocols.base`), with a
    :class:`~dpsumm.flower.FlowerTransport` in place of the in-process one. ``result.extra`` adds ``node_ids``
    (party name to Flower node id), ``ignored_nodes``, ``exchanges_log`` (per exchange: kind, round, seconds) and
    ``discovery_seconds``.
    """
    t0 = time.perf_counter()
    method = cfg.method
    # Every public decision before anything is sent: the plan (schedule, calibration), the public rows, h1.
    plan = cfg.plan()
    streams = party_streams(cfg.random_state)
    seed_arg: Any = cfg.seed_set
    if cfg.seed_set_path is not None:
        seed_arg = load_array(cfg.seed_set_path)
    seed, hasher = public_setup(
        method,
        plan,
        seed_set=seed_arg,
        gamma=cfg.gamma,
        feature_range=cfg.feature_range,
        n_features=cfg.n_features,
        rng_seed=streams["seed-set"],
    )
    labelled: dict[str, bool] = {}
    caps: dict[str, tuple[float, float]] = {}
    owner_nodes, (consumer_name, consumer_node), ignored = discover(
        grid, cfg.owners, wait=cfg.node_wait, poll_interval=cfg.poll_interval, labelled=labelled, caps=caps
    )
    check_labelled(method, labelled, consumer_name)
    check_owner_rows(cfg.owner_rows, owner_nodes)
    check_run_caps(caps, planned_spend(method, cfg, plan), consumer_name)
    t_discovered = time.perf_counter()
    names = sorted(owner_nodes, key=natural_key)
    nodes = {n: owner_nodes[n] for n in names}
    nodes[consumer_name] = consumer_node
    transport = FlowerTransport(grid, nodes, timeout=cfg.reply_timeout, poll_interval=cfg.poll_interval)
    seeded = cfg.random_state is not None
    extra = {
        "node_ids": nodes,
        "ignored_nodes": ignored,
        "exchanges_log": transport.exchanges,
        "discovery_seconds": t_discovered - t0,
    }
    setup = RunSetup(
        transport=transport,
        owners=names,
        consumer=consumer_name,
        n_features=cfg.n_features,
        size=cfg.size,
        hasher=hasher,
        seed=seed,
        plan=plan,
        privacy=cfg.budget,
        rng=streams["aggregator"],
        seeded=seeded,
        progress=False,
        started=t0,
        extra=extra,
        public_rows=cfg.owner_rows,
    )
    result = method.run(setup)
    result.seeded = seeded
    if seeded and result.privacy is not None:  # reproducible and NOT private
        result.privacy.mark_seeded()
    fit = result.extra.get("validation_fit")  # the aggregator's, when it held D_v's rows (the exact-kernel choice)
    message = (
        None
        if fit is None or result.points is None
        else validation_fit_warning(fit, len(result.points), method.fit_advice())
    )
    if message is not None:
        warnings.warn(message, SummaryFitWarning, stacklevel=2)
    return result


# ---------------------------------------------------------------------------------------- results


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _json_default(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


def save_result(result: SummaryResult, path: str | Path) -> Path:
    """Write a Flower run's result to one ``.npz`` file (arrays plus a JSON report), atomically.

    The ledger is stored as ``Ledger.to_dict()`` (entries, notes, totals at the run's δ's).
    """
    report = {
        "owner_names": result.owner_names,
        "accessed": dataclasses.asdict(result.accessed),
        "trace": [dataclasses.asdict(r) for r in result.trace],
        "events": result.events,
        "method": result.method,
        "seconds": result.seconds,
        "seeded": result.seeded,
        "hasher": {
            "n_features": result.hasher.n_features,
            "dim": result.hasher.dim,
            "gamma": result.hasher.gamma,
            "seed": result.hasher.seed,
        },
        "privacy": None if result.privacy is None else result.privacy.to_dict(),
        "certification": result.certification().to_dict(),
        "schedule": None if result.schedule is None else result.schedule.to_dict(),
        "extra": result.extra,
    }
    arrays: dict[str, np.ndarray] = {
        "hashes": result.hashes,
        "owner": result.owner,
        "index": result.index,
        "contribution": result.contribution,
        "report": np.array(json.dumps(report, default=_json_default)),
    }
    if result.points is not None:
        arrays["points"] = result.points
    if result.labels is not None:
        arrays["labels"] = result.labels
    buf = io.BytesIO()
    np.savez(buf, **arrays)  # type: ignore[arg-type]
    p = Path(path)
    _atomic_write(p, buf.getvalue())
    return p


def load_result(path: str | Path) -> SummaryResult:
    """Read :func:`save_result` output back into a :class:`~dpsumm.SummaryResult`.

    ``privacy`` is the ledger's dict form (``Ledger.to_dict(1e-4, 0.01)``) and ``schedule`` the schedule's
    dict form; everything else has the types :func:`dpsumm.summarize` returns.
    """
    try:
        return _load_result(Path(path))
    except DpsummError:
        raise
    except (OSError, ValueError, KeyError, TypeError, AttributeError, zipfile.BadZipFile) as exc:
        raise DataFileError(
            f"{path}: not a result written by dpsumm.flower.save_result ({type(exc).__name__}: "
            f"{exc}); write it again with save_result",
            path,
            "path",
        ) from exc


def _load_result(path: Path) -> SummaryResult:
    with np.load(path, allow_pickle=False) as z:
        report = json.loads(str(z["report"]))
        if not isinstance(report.get("seeded"), bool):
            raise DataFileError(f"{path}: 'seeded' must be true or false, got {report.get('seeded')!r}", path, "path")
        h = report["hasher"]
        trace = []
        for r in report["trace"]:
            if r.get("winner") is not None:
                r["winner"] = tuple(r["winner"])
            trace.append(RoundRecord(**r))
        result = SummaryResult(
            points=z["points"] if "points" in z else None,
            hashes=z["hashes"],
            labels=z["labels"] if "labels" in z else None,
            owner=z["owner"],
            index=z["index"],
            owner_names=list(report["owner_names"]),
            accessed=Access(**report["accessed"]),
            contribution=z["contribution"],
            privacy=None if report["privacy"] is None else accounting.Ledger.from_dict(report["privacy"]),
            trace=trace,
            events=report["events"],
            hasher=RFFHasher(int(h["n_features"]), dim=int(h["dim"]), gamma=float(h["gamma"]), seed=h["seed"]),
            method=report["method"],
            schedule=report["schedule"],
            seconds=float(report["seconds"]),
            extra=report["extra"],
            seeded=report["seeded"],
        )
    stored = report.get("certification")
    if stored is not None and stored != result.certification().to_dict():
        raise DataFileError(
            f"{path}: the stored certification {stored.get('status')!r} contradicts the ledger's "
            f"{result.privacy_status()!r}; the file was altered",
            path,
            "path",
        )
    return result
