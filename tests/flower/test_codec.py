"""dpsumm.flower.codec: every message kind round-trips through encode/decode; garbage is a ProtocolError."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import dpsumm  # noqa: E402
from dpsumm.flower import decode, encode  # noqa: E402
from dpsumm.messages import (  # noqa: E402
    Bid,
    BidRequest,
    PointReply,
    PurchaseReply,
    Setup,
    ValidationRelease,
)
from dpsumm.protocols.nominations.cell_messages import (  # noqa: E402
    CellHistogramRelease,
    CellHistogramRequest,
    CellRelease,
    CellReleaseRequest,
    CellSale,
    CellSaleRequest,
)

flwr = pytest.importorskip("flwr", reason="Flower is not installed: pip install 'dpsumm[flower]' (flwr==1.41.0)")


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


def test_codec_round_trip() -> None:
    msgs = [
        Setup(n_features=3, dim=8, gamma=0.1, hash_seed=2**64 - 1, reveal="points"),
        Setup(n_features=3, dim=8, gamma=0.1, hash_seed="public seed", reveal="hashes"),
        Bid(round=2, value=None, token=None),
        Bid(round=2, value=-0.25, token=7),
        BidRequest(round=1, v=np.arange(8, dtype=np.float32)),
        PointReply(round=3, token=4, point=np.ones(3), hash=None, label=np.int64(2)),
        ValidationRelease(mean_hash=np.linspace(0, 1, 8), n_rows=10, private=True),
        # purchase="labels": the label set may hold ints, floats or strings; a None label set or rows field
        *(label_request(ls, 3) for ls in ((0, 1, 2), (0.5, 1.5), ("cat", "dog", "0"))),
        CellHistogramRelease(counts=np.array([3.0, -1.0]), n_rows=5, scale=2.0, rows=None),
        CellHistogramRelease(counts=np.array([3.0]), n_rows=2, scale=2.0, rows=np.ones((2, 3))),
        CellReleaseRequest(
            n_features=3, dim=8, gamma=0.1, hash_seed=0, epsilon=1.0, delta=1e-6, key_set=np.array(["a", "bb"])
        ),
        CellRelease(n_rows=9, values=np.linspace(-1, 1, 10), sigma=0.5, granularity=1e-9),
        CellSaleRequest(
            n_features=3,
            dim=8,
            gamma=0.1,
            hash_seed=0,
            count=5,
            candidates=5,
            reveal="points",
            sample_seed=2**63 - 1,
            key_set=np.array([1.5, 2.5]),
            key_counts=np.array([2, 3]),
            key_preference=np.array([0.0, 1.0]),
            key_herded=np.array([True, False]),
            target=np.zeros(0),
            temperature=1.0,
            greedy_sample_factor=None,
        ),
        CellSale(
            n_rows=9,
            tokens=np.array([1, 4]),
            hashes=np.ones((2, 8), np.float32),
            points=np.ones((2, 3)),
            labels=np.array(["cat", "dog"]),
        ),
    ]
    for m in msgs:
        back = decode(encode(m))
        assert type(back) is type(m)
        for f in dataclasses.fields(m):
            a, b = getattr(m, f.name), getattr(back, f.name)
            if isinstance(a, np.ndarray):
                assert b.dtype == a.dtype and b.shape == a.shape and np.array_equal(a, b)
            else:
                assert a == b and type(b) is type(a.item() if isinstance(a, np.generic) else a)


def test_codec_rejects_garbage() -> None:
    from flwr.app import ConfigRecord, RecordDict

    with pytest.raises(dpsumm.ProtocolError, match="not a dpsumm message"):
        decode(RecordDict({"x": ConfigRecord({"a": 1})}))
    with pytest.raises(dpsumm.ProtocolError, match="cannot be sent"):
        encode(PointReply(round=1, token=0, point=np.ones(2), hash=None, label=object()))
    with pytest.raises(dpsumm.ProtocolError, match="array of Python objects cannot be sent"):  # numpy's ValueError
        encode(PurchaseReply(tokens=np.arange(2), points=None, labels=np.array([1, "a"], dtype=object)))


@pytest.mark.parametrize("content", [None, {}, "dpsumm.fields", 3], ids=["none", "dict", "str", "int"])
def test_codec_refuses_a_payload_that_is_not_a_record_dict(content: object) -> None:
    """A payload that is not a RecordDict used to raise a TypeError (``content[FIELDS]``)."""
    with pytest.raises(dpsumm.ProtocolError, match="not a Flower RecordDict"):
        decode(content)  # type: ignore[arg-type]


def test_codec_refuses_an_array_it_cannot_read() -> None:
    """Bytes that are not a numpy array, or a serialisation other than numpy's, used to raise numpy's ValueError or
    Flower's TypeError."""
    from flwr.app import Array

    from dpsumm.flower.codec import ARRAYS

    for bad in (
        Array(dtype="float64", shape=(3,), stype="numpy.ndarray", data=b"\x00" * 5),
        Array(dtype="float64", shape=(3,), stype="torch", data=b"\x00" * 24),
    ):
        content = encode(BidRequest(round=1, v=np.zeros(3)))
        content[ARRAYS]["v"] = bad
        with pytest.raises(dpsumm.ProtocolError, match="array field 'v' cannot be read"):
            decode(content)


def test_codec_refuses_a_message_of_another_codec_version() -> None:
    """Messages of the version before the cell family's wire names (no version record) or of a later one are refused
    by name, never decoded as something else."""
    from flwr.app import ConfigRecord

    from dpsumm.flower.codec import CODEC, CODEC_VERSION

    content = encode(Bid(round=1, value=0.5, token=3))
    assert decode(content).kind == "bid"
    for version in (None, CODEC_VERSION - 1, CODEC_VERSION + 1):
        if version is None:
            del content[CODEC]
        else:
            content[CODEC] = ConfigRecord({"version": version})
        with pytest.raises(dpsumm.ProtocolError, match="codec version"):
            decode(content)
