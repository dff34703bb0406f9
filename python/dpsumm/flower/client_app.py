"""The Flower ``ClientApp``: one protocol party per SuperNode (an owner or the consumer).

Each SuperNode's operator chooses, in its node config, the party's ``role``, ``name`` and ``data``
(a .npy/.csv/.parquet path on that machine) and optionally ``labels`` (an owner's row labels; the consumer's
validation labels, which only ``purchase="labels"`` reads). The rows never leave the
node except a row the aggregator asks for (``reveal="points"``) or its h1 hash (``reveal="hashes"``).

Flower runs the ClientApp in a fresh process for every message, so a party is rebuilt each time from
its data and from ``context.state`` (kept by the SuperNode between messages of a run):

* an owner keeps :meth:`OwnerParty.state` (the paper protocol's setup and the rows it has sent, the tokens it
  nominated and sold, each DP release it made) and is rebuilt from it by :meth:`OwnerParty.restore`, whatever the
  purchase: it still never offers a row twice and answers a repeated release request with the same release, as in
  process;
* the consumer keeps :meth:`ConsumerParty.state` (each release it made, one per kind of request) and is rebuilt
  from it by :meth:`ConsumerParty.restore`, whatever the purchase: it answers a repeated request with the same
  release (post-processing: a second release would cost privacy again). It releases its data without noise (a
  request whose :meth:`~dpsumm.messages.Message.releases_exact` says so: ``validation-release="exact"``, the
  paper's non-private baselines) only when its own node config says ``allow-exact-release=true``, as a seeded run
  needs ``allow-seeded=true``: the run config is not the consumer's.

Both roles take one path (:func:`answer_request`): the party rebuilt from its node config and its kept state, the
request's own handler, the new state kept.

Two message types: ``query.dpsumm_hello`` (transport-level: the party's role and name, so the
ServerApp can map party names to node ids, and whether its node config names ``labels``) and ``query.dpsumm`` (a protocol message; the reply is the
party's protocol reply). A party that raises produces a Flower error reply, which the aggregator sees
as :class:`~dpsumm.transport.PartyUnavailable`.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from flwr.app import ConfigRecord, Context, Message, RecordDict
from flwr.clientapp import ClientApp

from .. import __version__
from .._validation import float_matrix, label_vector
from ..datasets import load_array, load_labels
from ..errors import DataFileError, InvalidParameterError, ProtocolError
from ..messages import Message as ProtocolMessage
from ..parties import ConsumerParty, OwnerParty, owner_stream
from ..party_tables import PartyTable, open_party_table, read_party_table
from ..preprocessing import parse_range, scale_to_unit
from ..sources import RowSource, open_rows, scaled
from ..strata import load_strata, strata_columns
from .caps import check_request, node_caps
from .codec import decode, encode
from .streams import party_streams

__all__ = ["app", "HELLO_TYPE", "ROLES", "SIMULATION_NODES", "party_identity", "answer_request", "simulated_node"]

HELLO_TYPE = "query.dpsumm_hello"
ROLES = ("owner", "consumer")
_SPENT_STATE = "dpsumm.spent"

app = ClientApp()


#: Run config key of a run on Flower's Simulation Engine (:mod:`dpsumm.flower.simulation`): the path of a JSON file
#: holding one node config per virtual SuperNode, in partition order.
SIMULATION_NODES = "simulation-nodes"
#: The node config the Simulation Engine gives every virtual SuperNode, and nothing else.
_SIMULATION_KEYS = frozenset({"partition-id", "num-partitions"})


def simulated_node(context: Context) -> Context:
    """The context with its node config, as a deployment's operator would give it, on the Simulation Engine.

    A virtual SuperNode's node config is only ``partition-id`` and ``num-partitions``; its party's node config (the
    keys a deployed node takes: ``role``, ``name``, ``data``, ...) is entry ``partition-id`` of the JSON list at run
    config ``simulation-nodes``. Only such a node is redirected: a deployed node's config names its party and is
    never replaced by a file the run config names. On the Simulation Engine the one who starts the run runs every
    party, so it chooses every node config.

    Raises
    ------
    InvalidParameterError
        If the file cannot be read, is not a list of node configs as long as ``num-partitions``.
    """
    cfg = context.node_config
    if set(cfg) != _SIMULATION_KEYS:
        return context
    path = context.run_config.get(SIMULATION_NODES)
    if not isinstance(path, str) or not path:
        raise InvalidParameterError(
            f"a virtual SuperNode of the Simulation Engine needs run config `{SIMULATION_NODES}`: the path of a JSON "
            "list of node configs, one per node (dpsumm.flower.simulation)",
            SIMULATION_NODES,
        )
    try:
        with open(path, encoding="utf-8") as fh:
            nodes = json.load(fh)
    except (OSError, ValueError) as exc:
        raise InvalidParameterError(
            f"run config `{SIMULATION_NODES}`: cannot read {path!r}: {exc}", SIMULATION_NODES
        ) from exc
    index, count = cfg["partition-id"], cfg["num-partitions"]
    if not isinstance(nodes, list) or len(nodes) != count or not all(isinstance(n, dict) for n in nodes):
        raise InvalidParameterError(
            f"run config `{SIMULATION_NODES}`: {path!r} must hold a list of {count} node configs (one per virtual "
            "SuperNode)",
            SIMULATION_NODES,
        )
    return Context(
        run_id=context.run_id,
        node_id=context.node_id,
        node_config=nodes[int(index)],  # type: ignore[arg-type]
        state=context.state,
        run_config=context.run_config,
    )


def party_identity(context: Context) -> tuple[str, str]:
    """``(role, name)`` from the node config; ``name`` defaults to ``node-<id>``.

    Raises
    ------
    InvalidParameterError
        If ``role`` is not ``owner`` or ``consumer``.
    """
    cfg = context.node_config
    role = str(cfg.get("role", "owner"))
    if role not in ROLES:
        raise InvalidParameterError(f"node config `role` must be one of {ROLES}, got {role!r}", "role")
    name = str(cfg.get("name", f"node-{context.node_id}"))
    if not name.strip():
        raise InvalidParameterError("node config `name` must be a non-empty party name", "name")
    return role, name


#: Node config keys that read the node's ``data`` table by column name (:func:`dpsumm.party_tables.read_party_table`).
TABLE_KEYS = ("features", "label-column", "strata-columns")
#: Node config key: the declared public range the node scales its rows' features to [0, 1] by, as
#: ``dpsumm summarize --scale`` does (:func:`dpsumm.preprocessing.parse_range`, :func:`dpsumm.scale_to_unit`).
SCALE_KEY = "scale"


def _table(context: Context) -> PartyTable | None:
    """The node's ``data`` table read by column name, when its node config names columns (``features``,
    ``label-column``, ``strata-columns``: comma-separated header names); else None."""
    cfg = context.node_config
    given: dict[str, Any] = {k: cfg.get(k) for k in TABLE_KEYS if cfg.get(k) not in (None, "")}
    if not given:
        return None
    for k, v in given.items():
        if not isinstance(v, str):
            raise InvalidParameterError(f"node config `{k}` must be column names, got {type(v).__name__}", k)
    path = cfg.get("data")
    if not isinstance(path, str) or not path:
        raise InvalidParameterError("node config `data` must be the path of a .csv/.parquet table", "data")
    if "label-column" in given and cfg.get("labels") not in (None, ""):
        raise InvalidParameterError(
            "node config: give `labels` (a file) or `label-column` (a column), not both", "labels"
        )
    if "strata-columns" in given and cfg.get("strata") not in (None, ""):
        raise InvalidParameterError("node config: give `strata` (a file) or `strata-columns`, not both", "strata")
    try:
        return read_party_table(
            path,
            features=given.get("features"),
            label_column=given.get("label-column"),
            strata_columns=given.get("strata-columns"),
            argument="data",
            labels_required=str(cfg.get("role", "owner")) == "owner",
        )
    except DataFileError:
        raise
    except InvalidParameterError as exc:  # name the node config key, not the API argument
        key = {"label_column": "label-column", "strata_columns": "strata-columns"}.get(exc.argument or "", exc.argument)
        raise InvalidParameterError(f"node config `{key}`: {exc}", key or "data") from exc


def _data(context: Context, key: str) -> np.ndarray:
    table = _table(context) if key == "data" else None
    if table is not None:
        return _scaled(context, float_matrix(table.data, key), list(table.features))
    path = context.node_config.get(key)
    if not isinstance(path, str) or not path:
        raise InvalidParameterError(f"node config `{key}` must be the path of a .npy/.csv/.parquet file", key)
    try:
        rows = load_array(path)
    except DataFileError as exc:  # the node config key names the file, not the reader's `path`
        raise DataFileError(f"node config `{key}`: {exc}", path, key) from exc
    return _scaled(context, float_matrix(rows, key), None) if key == "data" else float_matrix(rows, key)


def _scaled(context: Context, rows: np.ndarray, features: list[str] | None) -> np.ndarray:
    """The node's rows scaled by its node config ``scale`` (a declared range, by feature name when the table has
    names), or as they are without it."""
    if context.node_config.get(SCALE_KEY) in (None, ""):
        return rows
    low, high = _scale_range(context, features)
    return scale_to_unit(rows, low, high)


def _scale_range(context: Context, features: list[str] | None) -> tuple[Any, Any]:
    """The node config ``scale``'s declared range (by feature name when the table has names)."""
    text = context.node_config.get(SCALE_KEY)
    if not isinstance(text, str):
        raise InvalidParameterError(
            f"node config `{SCALE_KEY}` must be a range 'LOW:HIGH' or 'NAME=LOW:HIGH,...', got {type(text).__name__}",
            SCALE_KEY,
        )
    try:
        return parse_range(text, features)
    except InvalidParameterError as exc:
        raise InvalidParameterError(f"node config {exc}", SCALE_KEY) from exc


def _labels(context: Context, n_rows: int, from_table: bool = True) -> np.ndarray | None:
    """The node's labels: its table's label column (``from_table``: when its node config names columns), else its
    ``labels`` file."""
    table = _table(context) if from_table else None
    if table is not None and table.labels is not None:
        return label_vector(table.labels, "labels", n_rows)
    path = context.node_config.get("labels")
    if path is None or (isinstance(path, str) and path == ""):
        return None
    if not isinstance(path, str):  # never str() of another value: 5 would read a file named "5"
        raise InvalidParameterError(
            f"node config `labels` must be the path of a .npy/.csv/.parquet file, got {type(path).__name__}", "labels"
        )
    try:
        arr = load_labels(path)
    except DataFileError as exc:  # the node config key names the file
        raise DataFileError(f"node config `labels`: {exc}", path, "labels") from exc
    if arr.shape != (n_rows,):
        raise InvalidParameterError(f"node config `labels` must hold {n_rows} labels, got shape {arr.shape}", "labels")
    return label_vector(arr, "labels", n_rows)


def _strata(context: Context, n_rows: int, from_table: bool = True) -> list[np.ndarray] | None:
    """The node's strata: its table's strata columns (``from_table``: when its node config names columns), else its
    ``strata`` file (a .npy/.csv/.parquet file of one column per attribute)."""
    table = _table(context) if from_table else None
    if table is not None and table.strata is not None:
        return strata_columns(table.strata, "strata", n_rows)
    path = context.node_config.get("strata")
    if path in (None, ""):
        return None
    return load_strata(str(path), n_rows)


@app.query("dpsumm_hello")
def hello(message: Message, context: Context) -> Message:
    """Tell the ServerApp this node's role and party name, once its party is built from its node config: a node
    config this node refuses (a missing file, a column or range it cannot read, a seeded run it does not allow) is
    refused here, at discovery, before any party releases anything."""
    context = simulated_node(context)
    role, name = party_identity(context)
    _party(role, context, name)

    labelled = any(context.node_config.get(key) not in (None, "") for key in ("labels", "label-column"))
    max_epsilon, max_delta = node_caps(context.node_config, role)
    return Message(
        RecordDict(
            {
                "dpsumm.hello": ConfigRecord(
                    {
                        "role": role,
                        "name": name,
                        "version": __version__,
                        "labelled": labelled,
                        "max-epsilon": max_epsilon,
                        "max-delta": max_delta,
                    }
                )
            }
        ),
        reply_to=message,
    )


@app.query("dpsumm")
def handle(message: Message, context: Context) -> Message:
    """Answer one protocol message as this node's party."""
    started = time.time()
    context = simulated_node(context)
    role, name = party_identity(context)
    request = decode(message.content)
    kept = context.state.get(_SPENT_STATE)
    spent = check_request(
        request, context.node_config, role, name, str(kept["spent"]) if isinstance(kept, ConfigRecord) else None
    )
    reply = answer_request(request, context)
    if spent is not None:  # kept once the release is made: a refused request spends nothing
        context.state[_SPENT_STATE] = ConfigRecord({"spent": spent})
    if os.environ.get("DPSUMM_FLOWER_TIMING") == "1":
        _timing(name, request.kind, message.metadata.created_at, started)
    return Message(encode(reply), reply_to=message)


def _timing(name: str, kind: str, created: float, started: float) -> None:
    """One line on stderr: when the request was created, this process started, the handler ran (Linux)."""
    try:
        ticks = os.sysconf("SC_CLK_TCK")
        with open("/proc/self/stat") as fh:
            start_ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - start_ticks / ticks
        proc_start = time.time() - age
    except (OSError, ValueError, AttributeError):
        proc_start = float("nan")
    now = time.time()
    print(
        f"dpsumm-timing party={name} kind={kind} spawn_after={proc_start - created:.3f} "
        f"handler_after={started - created:.3f} handler_seconds={now - started:.3f}",
        file=sys.stderr,
        flush=True,
    )


def answer_request(request: ProtocolMessage, context: Context) -> ProtocolMessage:
    """This node's party's reply to one protocol message: the party rebuilt from its data and its kept state (node
    state ``dpsumm.<role>``), the request's own handler, the new state kept (every request and role alike)."""
    role, name = party_identity(context)
    if request.releases_exact():
        _check_exact_allowed(context, name, f"a {request.kind}")
    party = _party(role, context, name)
    key = f"dpsumm.{role}"
    kept = context.state.get(key)
    if isinstance(kept, ConfigRecord) and "state" in kept:
        try:
            state = json.loads(str(kept["state"]))
        except ValueError:
            raise ProtocolError(f"{role} {name!r}: its kept state is not JSON") from None
        party.restore(state)
    reply = party.handle(request)
    context.state[key] = ConfigRecord({"state": json.dumps(party.state())})
    return reply


def _streamed(context: Context) -> RowSource | None:
    """An owner's ``data`` read where it lives (:func:`dpsumm.sources.open_rows`: a ``.npy`` file memory-mapped, a
    parquet file or directory read in record batches at each pass), never loaded whole: a parquet table by column
    name when the node config names columns (``features``, ``label-column``, ``strata-columns``:
    :func:`dpsumm.party_tables.open_party_table`, the labels and strata read as :func:`_table` reads them), and
    scaled at every read by ``scale`` (:class:`dpsumm.sources.ScaledRows`: the values, bit for bit, of
    :func:`_scaled` on the whole table). None for a file read whole (a CSV table; a ``.npy`` file of ints or
    bools, or one whose columns are named)."""
    cfg = context.node_config
    path = cfg.get("data")
    if not isinstance(path, str) or not path:
        return None
    p = Path(path)
    named = {k: cfg.get(k) for k in TABLE_KEYS if cfg.get(k) not in (None, "")}
    try:
        is_table = p.suffix.lower() == ".parquet" or p.is_dir()
    except OSError:  # a name the system refuses (too long): the table reader refuses it naming the key
        return None
    if not is_table and (named or p.suffix.lower() != ".npy" or not _float_npy(p)):
        return None  # read whole as before: a .npy of ints or bools is converted, a bad one refused as before
    for k, v in named.items():
        if not isinstance(v, str):
            raise InvalidParameterError(f"node config `{k}` must be column names, got {type(v).__name__}", k)
    if "label-column" in named and cfg.get("labels") not in (None, ""):
        raise InvalidParameterError(
            "node config: give `labels` (a file) or `label-column` (a column), not both", "labels"
        )
    if "strata-columns" in named and cfg.get("strata") not in (None, ""):
        raise InvalidParameterError("node config: give `strata` (a file) or `strata-columns`, not both", "strata")
    try:
        if is_table:
            source = open_party_table(
                p,
                features=named.get("features"),
                label_column=str(named["label-column"]) if "label-column" in named else None,
                strata_columns=named.get("strata-columns"),
                argument="data",
            )
        else:
            source = open_rows(p, argument="data")
    except DataFileError as exc:  # the node config key names the file
        raise DataFileError(f"node config `data`: {exc}", path, "data") from exc
    except InvalidParameterError as exc:  # name the node config key, not the API argument
        key = {"label_column": "label-column", "strata_columns": "strata-columns"}.get(exc.argument or "", exc.argument)
        raise InvalidParameterError(f"node config `{key}`: {exc}", key or "data") from exc
    if cfg.get(SCALE_KEY) in (None, ""):
        return source
    low, high = _scale_range(context, source.columns if is_table else None)
    return scaled(source, lambda rows: scale_to_unit(rows, low, high), 1.0)


def _float_npy(p: Path) -> bool:
    """Whether ``p`` is a ``.npy`` file of a 2-D float32 or float64 array, by its header."""
    try:
        arr = np.load(p, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError, EOFError):  # (an empty file: EOFError) read whole, and refused, as before
        return False
    return arr.ndim == 2 and arr.dtype in (np.float32, np.float64)


def _party(role: str, context: Context, name: str) -> OwnerParty | ConsumerParty:
    """The node's party from its node config: its rows (an owner's read where they live when it can be:
    :func:`_streamed`), labels and strata, its noise stream."""
    source = _streamed(context) if role == "owner" else None
    data = _data(context, "data") if source is None else source.data
    n_rows = int(data.shape[0])
    if source is not None and source.labels is not None:
        labels: np.ndarray | None = label_vector(source.labels, "labels", n_rows)
    else:  # a streamed table's labels and strata not in its columns: files of their own, if any
        labels = _labels(context, n_rows, from_table=source is None)
    strata: list[np.ndarray] | None
    if source is not None and source.strata is not None:
        strata = strata_columns(source.strata, "strata", n_rows)
    else:
        strata = _strata(context, n_rows, from_table=source is None)
    if role == "owner":
        check = None if source is None else source.check_unchanged
        return OwnerParty(data, labels, name, rng=_owner_rng(context, name), strata=strata, check=check)
    return ConsumerParty(data, _consumer_rng(context, name), name, labels=labels, strata=strata)


def _run_seed(context: Context) -> int | None:
    """The run config's ``random-state``: None when not set (``""``, today's run config; -1 in older apps)."""
    raw = context.run_config.get("random-state", "")
    if raw in ("", None):
        return None
    seed = int(raw)  # type: ignore[arg-type]
    return seed if seed >= 0 else None


def _owner_rng(context: Context, name: str) -> Any:
    """The owner's noise stream for its DP releases: OS entropy, or the run's seed only if this node's
    operator allows it (as for the consumer); derived as in process (:func:`dpsumm.parties.owner_stream`)."""
    seed = _run_seed(context)
    if seed is None:
        return None
    if context.node_config.get("allow-seeded") is not True:
        raise ProtocolError(
            f"owner {name!r}: the run config sets random-state (seeded, NOT private noise) "
            "but this node's config does not allow it (node config allow-seeded=true)"
        )
    return owner_stream(seed, name)


#: The consumer's node config key that allows a release without noise (its exact hashed validation mean).
ALLOW_EXACT_RELEASE = "allow-exact-release"


def _check_exact_allowed(context: Context, name: str, what: str) -> None:
    """Refuse a release without noise unless this node's operator allows it (node config ``allow-exact-release``).

    The run config is chosen by whoever starts the run, not by the consumer: were a run config enough, a run starter
    could have the consumer's exact hashed validation mean (its data, with no noise) sent to the aggregator, which
    passes it on to every owner. As for a seeded run, only the consumer's own operator may allow it.
    """
    if context.node_config.get(ALLOW_EXACT_RELEASE) is not True:
        raise ProtocolError(
            f"consumer {name!r}: the run asks for its exact hashed validation mean ({what}: no noise, NOT private), "
            "but this node's config does not allow a release without noise (node config "
            f"{ALLOW_EXACT_RELEASE}=true)"
        )


def _consumer_rng(context: Context, name: str) -> Any:
    """The consumer's noise stream: OS entropy, or the run's seed only if this node's operator allows it."""
    seed = _run_seed(context)
    if seed is not None and context.node_config.get("allow-seeded") is not True:
        # Whoever starts the run chooses the run config; a seed it picks would make this party's noise
        # predictable. Only the consumer's own operator may allow it (tests, reproducible experiments).
        raise ProtocolError(
            f"consumer {name!r}: the run config sets random-state (seeded, NOT private noise) "
            "but this node's config does not allow it (node config allow-seeded=true)"
        )
    return party_streams(seed)["consumer"]
