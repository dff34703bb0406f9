"""dpsumm.flower.client_app without processes: the consumer's node makes its label histogram release once, nodes
read string labels from files, hostile node config values are refused naming the key, an owner's node
releases its label counts once.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpsumm  # noqa: E402
from dpsumm.errors import ProtocolError
from dpsumm.protocols.nominations.cell_messages import (  # noqa: E402
    CellHistogramRelease,
    CellHistogramRequest,
    CellReleaseRequest,
)
from federation_data import LABEL_SET, _labelled_data
from refusal import config_junk as node_junk
from refusal import refused
from table_reads import whole_reads_refused


class _Context:
    def __init__(self, cfg):
        self.node_config, self.node_id = cfg, 1


def test_node_config_names_its_key(tmp_path):
    from dpsumm.flower import client_app

    refused(lambda: client_app.party_identity(_Context({"role": "owner", "name": " "})), "name")
    refused(lambda: client_app._data(_Context({"data": str(tmp_path / "nope.npy")}), "data"), "data")
    np.save(tmp_path / "labels.npy", np.full(5, np.nan))
    refused(lambda: client_app._labels(_Context({"labels": str(tmp_path / "labels.npy")}), 5), "labels")


flwr = pytest.importorskip("flwr", reason="Flower is not installed: pip install 'dpsumm[flower]' (flwr==1.41.0)")


N_FEATURES, DIM, T_INIT = 5, 64, 300


SEED_SET, RANDOM_STATE = 20, 7


def label_request(label_set: tuple, n_features: int, epsilon: float = 1.0) -> CellHistogramRequest:
    """A consumer's label histogram request with one cell per label (centres at the origin of an 8-d h1)."""
    L = len(label_set)
    return CellHistogramRequest(
        key_set=np.asarray(label_set),
        epsilon=epsilon,
        send_rows=True,
        n_features=n_features,
        dim=8,
        gamma=0.5,
        hash_seed="cells:0",
        cell_keys=np.arange(L, dtype=np.int64),
        centres=np.zeros((L, 8)),
        bias=np.zeros(L),
    )


def _context(node_config: dict[str, object], run_config: dict[str, object] | None = None) -> object:
    from flwr.app import Context, RecordDict

    return Context(run_id=1, node_id=1, node_config=node_config, state=RecordDict(), run_config=run_config or {})


def test_consumer_node_releases_its_label_histogram_once(tmp_path: Path, task_identity: None) -> None:
    """The consumer's ClientApp (no processes): node config `labels` is its validation labels; the one release equals
    the in-process consumer's with the same stream; a repeated request gets the same release from node state, another
    request is refused; without labels it refuses with a message naming the node config; the hello says whether a
    node has labels, and the ServerApp refuses purchase='labels' on that before anything is sent."""
    from dpsumm.flower.client_app import answer_request, hello
    from dpsumm.flower.server_app import check_labelled
    from dpsumm.flower.streams import party_streams
    from dpsumm.parties import ConsumerParty

    _, _, validation, yv, _, _, vpath, ypath = _labelled_data(tmp_path)
    req = label_request(LABEL_SET, validation.shape[1])
    seeded = {"random-state": RANDOM_STATE}
    ctx = _context({"role": "consumer", "data": str(vpath), "labels": str(ypath), "allow-seeded": True}, seeded)
    first = answer_request(req, ctx)  # type: ignore[arg-type]
    ref = ConsumerParty(validation, party_streams(RANDOM_STATE)["consumer"], labels=yv).handle(req)
    assert isinstance(first, CellHistogramRelease) and isinstance(ref, CellHistogramRelease)
    np.testing.assert_array_equal(first.counts, ref.counts)
    np.testing.assert_array_equal(first.rows, validation)
    assert (first.n_rows, first.scale) == (ref.n_rows, ref.scale)
    again = answer_request(req, ctx)  # type: ignore[arg-type]
    np.testing.assert_array_equal(again.counts, first.counts)  # from node state, not a second draw
    assert (again.n_rows, again.scale) == (first.n_rows, first.scale)
    other = label_request(LABEL_SET, validation.shape[1], epsilon=2.0)
    with pytest.raises(dpsumm.ProtocolError, match="already made for another request"):
        answer_request(other, ctx)  # type: ignore[arg-type]
    # A seeded run needs the node's consent, as for the other releases.
    with pytest.raises(dpsumm.ProtocolError, match="allow-seeded"):
        answer_request(req, _context({"role": "consumer", "data": str(vpath), "labels": str(ypath)}, seeded))  # type: ignore[arg-type]
    bare = _context({"role": "consumer", "data": str(vpath)})
    with pytest.raises(dpsumm.ProtocolError, match=r"no validation labels.*node config labels="):
        answer_request(req, bare)  # type: ignore[arg-type]
    with pytest.raises(dpsumm.InvalidParameterError, match="node config `labels` must hold 40 labels"):
        np.save(tmp_path / "short.npy", yv[:5])
        answer_request(
            req,
            _context({"role": "consumer", "data": str(vpath), "labels": str(tmp_path / "short.npy")}),  # type: ignore[arg-type]
        )

    from flwr.app import Message, RecordDict

    def said(ctx: object) -> bool:
        msg = Message(RecordDict(), dst_node_id=1, message_type="query.dpsumm_hello")
        return bool(hello(msg, ctx).content["dpsumm.hello"]["labelled"])  # type: ignore[arg-type]

    assert said(ctx) is True and said(bare) is False
    method = dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=LABEL_SET))
    with pytest.raises(dpsumm.ProtocolError, match=r"consumer's SuperNode \('consumer'\) has no labels"):
        check_labelled(method, {"consumer": False, "a": True}, "consumer")
    with pytest.raises(dpsumm.ProtocolError, match=r"owners \['b'\] have no labels"):
        check_labelled(method, {"consumer": True, "a": True, "b": False}, "consumer")
    check_labelled(method, {"consumer": True, "a": True}, "consumer")
    check_labelled(dpsumm.Nominations(), {"consumer": False, "a": False}, "consumer")  # other methods: no labels needed


def test_nodes_read_string_labels_from_files(tmp_path: Path, task_identity: None) -> None:
    """String labels on a Flower node (issue 43), no processes: the consumer's node config `labels` a CSV column of
    words (header `label`), an owner's a .npy of strings; the consumer's label histogram over a string label set
    equals the in-process consumer's with the same labels and stream; an object (pickled) .npy is refused naming the
    node config."""
    from dpsumm.flower.client_app import _labels, answer_request
    from dpsumm.flower.streams import party_streams
    from dpsumm.parties import ConsumerParty

    words = np.array(["cat", "dog", "bird"])
    _, labels, validation, yv, _, _, vpath, _ = _labelled_data(tmp_path)
    (tmp_path / "yv.csv").write_text("label\n" + "\n".join(words[yv]) + "\n")
    req = label_request(tuple(words), validation.shape[1])
    ctx = _context(
        {"role": "consumer", "data": str(vpath), "labels": str(tmp_path / "yv.csv"), "allow-seeded": True},
        {"random-state": RANDOM_STATE},
    )
    got = answer_request(req, ctx)  # type: ignore[arg-type]
    ref = ConsumerParty(validation, party_streams(RANDOM_STATE)["consumer"], labels=words[yv]).handle(req)
    assert isinstance(got, CellHistogramRelease) and isinstance(ref, CellHistogramRelease)
    np.testing.assert_array_equal(got.counts, ref.counts)
    y0 = words[labels["owner-0"]]
    np.save(tmp_path / "y0.npy", y0)
    np.testing.assert_array_equal(_labels(_context({"labels": str(tmp_path / "y0.npy")}), len(y0)), y0)  # type: ignore[arg-type]
    np.save(tmp_path / "obj.npy", y0.astype(object), allow_pickle=True)
    with pytest.raises(dpsumm.DataFileError, match="pickled"):
        _labels(_context({"labels": str(tmp_path / "obj.npy")}), len(y0))  # type: ignore[arg-type]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(labels=node_junk, allow=node_junk)
def test_hostile_node_config_values_are_refused_naming_the_key(tmp_path: Path, labels: object, allow: object) -> None:
    """Issue 43, every node config key this issue touched, with values of every type: `labels` is a path (a str) or
    refused as a DpsummError naming `labels` (never str() of another value, which would read a file named "5");
    `allow-exact-release` allows a release without noise only when it is exactly the boolean true (the string
    "true", 1 or "yes" do not)."""
    from dpsumm.flower.client_app import _labels, answer_request
    from dpsumm.messages import TargetRequest

    np.save(tmp_path / "v.npy", np.zeros((4, 3)))
    try:
        out = _labels(_context({"labels": labels}), 4)  # type: ignore[arg-type]
    except dpsumm.DpsummError as exc:
        assert exc.argument == "labels" and "`labels`" in str(exc), str(exc)
    else:
        assert out is None and (labels is None or labels == "")
    exact = TargetRequest(
        n_features=3,
        dim=8,
        gamma=0.5,
        hash_seed=0,
        release="exact",
        epsilon=0.0,
        delta=0.0,
        steps=0,
        eta=0.0,
        send_rows=False,
    )
    ctx = _context({"role": "consumer", "data": str(tmp_path / "v.npy"), "allow-exact-release": allow})
    if allow is True:
        assert answer_request(exact, ctx) is not None  # type: ignore[arg-type]
    else:
        with pytest.raises(dpsumm.ProtocolError, match="allow-exact-release=true"):
            answer_request(exact, ctx)  # type: ignore[arg-type]


def test_a_flower_owner_node_releases_its_label_counts_once(tmp_path):
    """On Flower the owner is rebuilt per message with a fresh private noise stream: a repeated release request must
    get the kept release back (not a second draw, which the ledger would not account), and a request for another
    release with other parameters is refused, as in process."""
    pytest.importorskip("flwr")
    from flwr.app import Context, RecordDict

    from dpsumm.flower.client_app import answer_request

    rng = np.random.default_rng(0)
    np.save(tmp_path / "x.npy", rng.normal(size=(30, 3)))
    np.save(tmp_path / "y.npy", rng.integers(0, 3, 30))
    ctx = Context(
        run_id=1,
        node_id=1,
        node_config={"role": "owner", "name": "a", "data": str(tmp_path / "x.npy"), "labels": str(tmp_path / "y.npy")},
        state=RecordDict(),
        run_config={},
    )
    req = CellReleaseRequest(n_features=3, dim=8, gamma=0.5, hash_seed=0, epsilon=1.0, delta=1e-6, key_set=np.arange(3))
    first = answer_request(req, ctx)
    again = answer_request(req, ctx)
    np.testing.assert_array_equal(again.values, first.values)  # unseeded: a second draw would differ
    assert (again.n_rows, again.sigma, again.granularity) == (first.n_rows, first.sigma, first.granularity)
    with pytest.raises(ProtocolError, match="already made"):
        answer_request(dataclasses.replace(req, epsilon=2.0), ctx)


def test_consumer_node_releases_its_hashed_mean_once_whichever_request_asks(
    tmp_path: Path, task_identity: None
) -> None:
    """On a node as in process: a validation request (the paper's h2 release) after a target request, or the other
    way round, is refused from node state, never answered with a second release of D_v's hashed mean."""
    from consumer_requests import REQUESTS
    from dpsumm.flower.client_app import answer_request

    rng = np.random.default_rng(2)
    np.save(tmp_path / "v.npy", rng.random((30, 3)))
    for first, then in (("target gaussian", "validation h2"), ("validation h2", "target mwem")):
        ctx = _context({"role": "consumer", "data": str(tmp_path / "v.npy")})
        released = answer_request(REQUESTS[first], ctx)  # type: ignore[arg-type]
        with pytest.raises(dpsumm.ProtocolError, match="second time"):
            answer_request(REQUESTS[then], ctx)  # type: ignore[arg-type]
        again = answer_request(REQUESTS[first], ctx)  # type: ignore[arg-type]
        field = "noisy_mean" if hasattr(released, "noisy_mean") else "mean_hash"
        np.testing.assert_array_equal(getattr(again, field), getattr(released, field))


def test_a_node_reads_its_table_by_column_name(tmp_path):
    """Node config `features`, `label-column` and `strata-columns` read one table per party (as the CLI does); a
    text column left among the features is refused naming the keys that would claim it."""
    from dpsumm.flower import client_app

    p = tmp_path / "owner.csv"
    p.write_text("age,region,income,outcome\n30,east,100,yes\n40,west,200,no\n50,east,300,yes\n")
    cfg = {"role": "owner", "data": str(p), "label-column": "outcome", "strata-columns": "region"}
    np.testing.assert_array_equal(client_app._data(_Context(cfg), "data"), [[30, 100], [40, 200], [50, 300]])
    assert client_app._labels(_Context(cfg), 3).tolist() == ["yes", "no", "yes"]
    assert client_app._strata(_Context(cfg), 3)[0].tolist() == ["east", "west", "east"]
    consumer = {"role": "consumer", "data": str(p), "features": "age,income", "label-column": "y"}
    assert client_app._data(_Context(consumer), "data").shape == (3, 2)  # the consumer's table may lack labels
    bad = {"role": "owner", "data": str(p), "label-column": "outcome"}
    with pytest.raises(dpsumm.DataFileError, match="strata_columns; CLI: --strata-columns region"):
        client_app._data(_Context(bad), "data")
    refused(lambda: client_app._data(_Context({**cfg, "strata-columns": "place"}), "data"), "strata-columns")
    refused(lambda: client_app._labels(_Context({**cfg, "labels": str(p)}), 3), "labels")


NODE_KEYS = (
    "role",
    "name",
    "data",
    "labels",
    "strata",
    "features",
    "label-column",
    "strata-columns",
    "scale",
    "allow-seeded",
    "allow-exact-release",
    "max-epsilon",
    "max-delta",
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(NODE_KEYS), value=node_junk)
def test_any_node_config_value_is_accepted_or_refused_with_a_dpsumm_error(
    tmp_path: Path, task_identity: None, key: str, value: object
) -> None:
    """Every node config key with values of every type, on a node that reads a buyer's table by column name: the
    node says hello and builds its party, or refuses with a DpsummError; never a generic exception."""
    from flwr.app import Message, RecordDict

    from dpsumm.flower.client_app import _party, hello, party_identity

    table = tmp_path / "t.csv"
    table.write_text("age,income,region,y\n30,100,east,a\n40,200,west,b\n50,300,east,a\n")
    base: dict[str, object] = {
        "role": "owner",
        "name": "o",
        "data": str(table),
        "features": "age,income",
        "label-column": "y",
        "strata-columns": "region",
        "scale": "age=18:90,income=0:1000",
    }
    ctx = _context({**base, key: value})
    try:
        hello(Message(RecordDict(), dst_node_id=1, message_type="query.dpsumm_hello"), ctx)  # type: ignore[arg-type]
        role, name = party_identity(ctx)  # type: ignore[arg-type]
        party = _party(role, ctx, name)  # type: ignore[arg-type]
    except dpsumm.DpsummError as exc:
        assert exc.argument, str(exc)
    else:
        assert np.isfinite(party.data if role == "owner" else party.validation).all()  # type: ignore[union-attr]


def _simulated_context(node_config: dict, run_config: dict) -> object:
    from flwr.app import Context, RecordDict

    return Context(run_id=1, node_id=9, node_config=node_config, state=RecordDict(), run_config=run_config)


def test_a_virtual_supernode_takes_its_node_config_from_the_runs_list(tmp_path: Path) -> None:
    """On the Simulation Engine, virtual node `partition-id` answers as the party of entry `partition-id` of the run
    config's `simulation-nodes` list, keeping its own state; a deployed node's config is never replaced, whatever the
    run config names; a missing or malformed list is refused naming the run config key."""
    from dpsumm.flower.client_app import SIMULATION_NODES, party_identity, simulated_node

    nodes = [{"role": "owner", "name": f"owner-{i}", "data": f"/d/{i}.npy"} for i in range(3)]
    nodes.append({"role": "consumer", "name": "consumer", "data": "/d/v.npy", "allow-seeded": True})
    path = tmp_path / "nodes.json"
    path.write_text(json.dumps(nodes))
    run_config = {SIMULATION_NODES: str(path), "random-state": 3}
    for i, expected in enumerate(nodes):
        ctx = _simulated_context({"partition-id": i, "num-partitions": 4}, run_config)
        got = simulated_node(ctx)
        assert dict(got.node_config) == expected
        assert got.state is ctx.state and got.run_config == run_config and got.node_id == 9
    assert party_identity(simulated_node(_simulated_context({"partition-id": 3, "num-partitions": 4}, run_config))) == (
        "consumer",
        "consumer",
    )
    deployed = {"role": "owner", "name": "a", "data": "/a.npy", "partition-id": 0, "num-partitions": 4}
    ctx = _simulated_context(deployed, run_config)
    assert simulated_node(ctx) is ctx
    virtual = {"partition-id": 0, "num-partitions": 4}
    refused(lambda: simulated_node(_simulated_context(virtual, {})), SIMULATION_NODES)
    refused(
        lambda: simulated_node(_simulated_context(virtual, {SIMULATION_NODES: str(tmp_path / "no.json")})),
        SIMULATION_NODES,
    )
    refused(lambda: simulated_node(_simulated_context({**virtual, "num-partitions": 5}, run_config)), SIMULATION_NODES)
    path.write_text(json.dumps({"role": "owner"}))
    refused(lambda: simulated_node(_simulated_context(virtual, run_config)), SIMULATION_NODES)


def test_an_owner_node_reads_its_file_where_it_lives(tmp_path: Path) -> None:
    """A node's ``data=`` .npy file is memory-mapped and a parquet file read in record batches at each pass (never
    loaded whole): the same hash sum, bit for bit, as the rows in memory; a file that changes under the node is
    refused naming it; a .npy of integers is read whole and converted, as before."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from dpsumm.flower import client_app
    from dpsumm.parties import OwnerParty
    from dpsumm.sources import ParquetRows

    rows = np.random.default_rng(4).normal(size=(700, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", rows)
    pq.write_table(pa.table({f"f{j}": rows[:, j] for j in range(4)}), tmp_path / "x.parquet", row_group_size=64)
    hasher = dpsumm.RFFHasher(4, dim=16, gamma=0.3, seed=1)
    want = OwnerParty(rows, name="a").hash_sum(hasher).tobytes()
    for name, kind in (("x.npy", np.memmap), ("x.parquet", ParquetRows)):
        ctx = _context({"role": "owner", "name": "a", "data": str(tmp_path / name)})
        party = client_app._party("owner", ctx, "a")  # type: ignore[arg-type]
        assert isinstance(party, OwnerParty) and isinstance(party.data, kind)
        assert party.hash_sum(hasher).tobytes() == want
        os.utime(tmp_path / name, ns=(1, 1))
        with pytest.raises(dpsumm.DataFileError, match=rf"{name} changed"):
            party.handle(dpsumm.messages.BidRequest(round=0, v=np.zeros(8, dtype=np.float32)))
    np.save(tmp_path / "ints.npy", np.arange(12).reshape(6, 2))
    party = client_app._party(
        "owner", _context({"role": "owner", "name": "a", "data": str(tmp_path / "ints.npy")}), "a"
    )  # type: ignore[arg-type]
    assert not isinstance(party.data, np.memmap) and party.data.dtype == np.float64


def test_a_node_that_names_columns_or_scales_streams_its_parquet_table(tmp_path: Path, monkeypatch) -> None:
    """A node config naming its parquet table's columns (features, label-column, strata-columns) and a declared
    range (scale) reads it in record batches, never whole: the same scaled rows (the hash sum bit for bit), labels
    and strata as the table read whole and scaled (the path of a CSV table); a .npy file with scale is mapped and
    scaled at every read the same way."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from dpsumm.flower import client_app
    from dpsumm.parties import OwnerParty
    from dpsumm.sources import ParquetRows, ScaledRows

    n = 70_000  # more than one record batch of the default chunk
    rng = np.random.default_rng(8)
    rows = (rng.normal(size=(n, 3)) * 40 + 50).astype(np.float32)
    table = pa.table(
        {
            "age": rows[:, 0],
            "y": np.array(["a", "b"])[rng.integers(0, 2, n)],
            "income": rows[:, 1],
            "region": rng.integers(0, 3, n),
            "tenure": rows[:, 2],
        }
    )
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=20_000)
    cfg = {
        "role": "owner",
        "data": str(path),
        "features": "tenure,age",
        "label-column": "y",
        "strata-columns": "region",
        "scale": "age=0:100,tenure=10:90",
    }
    whole = client_app._data(_Context(cfg), "data")  # the table read whole and scaled
    labels, strata = client_app._labels(_Context(cfg), n), client_app._strata(_Context(cfg), n)
    hasher = dpsumm.RFFHasher(2, dim=16, gamma=0.3, seed=1)
    want = OwnerParty(whole, name="a").hash_sum(hasher).tobytes()
    sizes = whole_reads_refused(monkeypatch)
    party = client_app._party("owner", _context(cfg), "a")  # type: ignore[arg-type]
    assert isinstance(party, OwnerParty)
    assert isinstance(party.data, ScaledRows) and isinstance(party.data.rows, ParquetRows)
    assert party.hash_sum(hasher).tobytes() == want
    assert party.labels is not None and labels is not None and np.array_equal(party.labels, labels)
    assert party.strata is not None and strata is not None and np.array_equal(party.strata[0], strata[0])
    assert max(sizes) <= 65_536 < n
    monkeypatch.undo()
    np.save(tmp_path / "x.npy", rows)
    npy = {"role": "owner", "data": str(tmp_path / "x.npy"), "scale": "0:100"}
    party = client_app._party("owner", _context(npy), "a")  # type: ignore[arg-type]
    assert isinstance(party, OwnerParty) and isinstance(party.data, ScaledRows)
    assert isinstance(party.data.rows, np.memmap)
    hasher = dpsumm.RFFHasher(3, dim=16, gamma=0.3, seed=1)
    assert (
        party.hash_sum(hasher).tobytes()
        == OwnerParty(dpsumm.scale_to_unit(rows, 0, 100), name="a").hash_sum(hasher).tobytes()
    )


def test_an_empty_npy_data_file_is_refused_naming_the_key(tmp_path):
    # Was: numpy's EOFError from the check whether the file can be memory-mapped (client_app._float_npy).
    from dpsumm.flower import client_app

    (tmp_path / "rows.npy").write_bytes(b"")
    context = _Context({"role": "owner", "name": "owner-0", "data": str(tmp_path / "rows.npy")})
    context.run_config = {}
    refused(lambda: client_app._party("owner", context, "owner-0"), "data", dpsumm.DataFileError)
