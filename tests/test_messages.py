"""dpsumm.messages: every message kind round-trips through to_dict/from_dict, from_dict checks the schema, and
request_key tells requests apart exactly when a field differs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from consumer_requests import REQUESTS
from dpsumm import messages
from dpsumm.errors import ProtocolError
from dpsumm.messages import (
    Bid,
    BidRequest,
    Message,
    NominationReply,
    NominationRequest,
    OwnerRequest,
    PointReply,
    PointRequest,
    PurchaseReply,
    PurchaseRequest,
    Setup,
    SetupReply,
    TargetRelease,
    TargetRequest,
    ValidationRelease,
    ValidationRequest,
    from_dict,
    request_key,
)
from dpsumm.parties import release_request_key
from dpsumm.protocols.nominations.cell_messages import (
    CellHistogramRelease,
    CellHistogramRequest,
    CellRelease,
    CellReleaseRequest,
    CellSale,
    CellSaleRequest,
)

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

V = np.linspace(-0.5, 0.5, 8)
#: One message of every kind the package defines (the purchases' own requests included).
EXAMPLES = [
    Setup(n_features=3, dim=8, gamma=0.5, hash_seed=7, reveal="points"),
    SetupReply(n_rows=10, n_features=3),
    BidRequest(round=2, v=V.astype(np.float32)),
    Bid(round=2, value=0.25, token=4),
    Bid(round=3, value=None, token=None),
    PointRequest(round=2, token=4),
    PointReply(round=2, token=4, point=np.arange(3.0), hash=None, label=1),
    PointReply(round=2, token=4, point=None, hash=V.astype(np.float32), label=None),
    ValidationRequest(n_features=3, dim=8, gamma=0.5, hash_seed="s", method="private", steps=3, epsilon=0.5, eta=0.05),
    ValidationRelease(mean_hash=V, n_rows=20, private=True),
    TargetRequest(
        n_features=3,
        dim=8,
        gamma=0.5,
        hash_seed=0,
        release="gaussian",
        epsilon=1.0,
        delta=1e-6,
        steps=0,
        eta=0.0,
        send_rows=False,
    ),
    TargetRelease(noisy_mean=V, exact_mean=V / 2, n_rows=20, sigma=0.1, granularity=0.0),
    TargetRelease(noisy_mean=V, exact_mean=V, n_rows=2, sigma=0.0, granularity=0.0, rows=np.ones((2, 3))),
    NominationRequest(
        n_features=3,
        dim=8,
        gamma=0.5,
        hash_seed=0,
        target=V,
        nominees=4,
        temperature=0.1,
        candidates=16,
        reveal="points",
        sample_seed=3,
        greedy_sample_factor=2.0,
        commit="digests",
    ),
    NominationReply(n_rows=10, tokens=np.arange(4, dtype=np.int64), hashes=None, digests=np.zeros((4, 16), np.uint8)),
    PurchaseRequest(tokens=np.array([1, 3], np.int64)),
    PurchaseReply(tokens=np.array([1, 3], np.int64), points=np.ones((2, 3)), labels=np.array([0, 1])),
]

#: The cell family's consumer messages (dpsumm.protocols.nominations.cell_messages).
CELL_EXAMPLES = [
    CellHistogramRequest(
        key_set=np.arange(3),
        epsilon=1.0,
        send_rows=False,
        n_features=3,
        dim=8,
        gamma=0.5,
        hash_seed="cells:0",
        cell_keys=np.arange(3, dtype=np.int64),
        centres=np.zeros((3, 8)),
        bias=np.zeros(3),
    ),
    CellHistogramRelease(counts=np.array([3.0, 0.0, 5.0]), n_rows=8, scale=2.0),
]


def _kinds(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _kinds(sub)


def _equal(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("message", EXAMPLES + CELL_EXAMPLES, ids=lambda m: m.kind)
def test_every_message_round_trips_through_its_dict(message):
    d = message.to_dict()
    assert d["kind"] == message.kind
    assert set(d) == {"kind"} | {f.name for f in dataclasses.fields(message)}
    back = from_dict(dict(d))
    assert type(back) is type(message)
    for f in dataclasses.fields(message):
        assert _equal(getattr(back, f.name), getattr(message, f.name)), f.name


def test_the_examples_cover_every_kind_of_the_messages_module():
    bases = {OwnerRequest, messages.ConsumerRequest}  # the bases of the purchases' own requests, never sent
    own = {cls for cls in _kinds(Message) if cls.__module__ == messages.__name__ and cls not in bases}
    assert own == {type(m) for m in EXAMPLES}


def test_the_kinds_are_distinct_and_the_purchases_requests_are_owner_requests():
    kinds = [cls.kind for cls in _kinds(Message)]
    assert len(kinds) == len(set(kinds)), sorted(kinds)
    for cls in (CellReleaseRequest, CellSaleRequest):
        assert (
            issubclass(cls, OwnerRequest)
            and from_dict({"kind": cls.kind, **{f.name: None for f in dataclasses.fields(cls)}}).kind == cls.kind
        )
    assert {CellRelease.kind, CellSale.kind} <= set(kinds)


def test_from_dict_refuses_an_unknown_kind_or_a_missing_field_with_a_protocol_error():
    with pytest.raises(ProtocolError, match="unknown message kind"):
        from_dict({"kind": "no_such_kind"})
    with pytest.raises(ProtocolError, match="unknown message kind"):
        from_dict({"round": 1})
    with pytest.raises(ProtocolError, match="unknown message kind"):
        from_dict({"kind": ["bid"]})
    with pytest.raises(ProtocolError, match=r"missing \['token'\]"):
        from_dict({"kind": "bid", "round": 1, "value": 0.5})


@pytest.mark.parametrize("kind, role", [("owner_request", "owner"), ("consumer_request", "consumer")])
def test_a_request_of_no_purchase_is_a_protocol_error(kind, role):
    """The bare request kinds decode (they are registered); answering one used to raise NotImplementedError."""
    from dpsumm.parties import ConsumerParty, OwnerParty
    from dpsumm.privacy import Csprng

    rows = np.zeros((4, 2))
    party = OwnerParty(rows, None, "o") if role == "owner" else ConsumerParty(rows, Csprng(0))
    with pytest.raises(ProtocolError, match=f"cannot handle '{kind}'"):
        party.handle(from_dict({"kind": kind}))


def test_a_message_is_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        EXAMPLES[0].dim = 16


def test_request_key_by_hand():
    req = EXAMPLES[10]
    assert request_key(req) == request_key(dataclasses.replace(req))  # a copy asks for the same
    assert len(request_key(req)) == 64 and int(request_key(req), 16) >= 0  # a sha256 hex digest
    hist = CELL_EXAMPLES[0]
    # the same values in another dtype or shape are another request
    assert request_key(dataclasses.replace(hist, bias=hist.bias.astype(np.float32))) != request_key(hist)
    assert request_key(dataclasses.replace(hist, centres=hist.centres.reshape(8, 3))) != request_key(hist)
    # a non-contiguous array keys like its contiguous copy
    wide = np.zeros((3, 16))
    assert request_key(dataclasses.replace(hist, centres=wide[:, ::2])) == request_key(hist)
    assert release_request_key is request_key or release_request_key(hist) == request_key(hist)


field_changes = st.sampled_from(
    [
        ("epsilon", 0.25),
        ("delta", 1e-4),
        ("dim", 8),
        ("gamma", 0.25),
        ("hash_seed", 1),
        ("n_features", 3),
        ("send_rows", True),
        ("steps", 0),
        ("eta", 0.0),
    ]
)


@FAST
@given(change=field_changes)
def test_the_request_key_tells_requests_apart_exactly_when_a_field_differs(change):
    field, value = change
    base = REQUESTS["target gaussian"]
    other = dataclasses.replace(base, **{field: value})
    assert (release_request_key(other) == release_request_key(base)) == (getattr(base, field) == value)
    hist = REQUESTS["label histogram"]
    moved = dataclasses.replace(hist, centres=hist.centres + 1e-12)
    assert release_request_key(moved) != release_request_key(hist)
    assert release_request_key(dataclasses.replace(hist, centres=hist.centres.copy())) == release_request_key(hist)


def _message_classes(cls: type[Message] = Message) -> list[type[Message]]:
    out = []
    for sub in cls.__subclasses__():
        out += [sub, *_message_classes(sub)]
    return out


def test_every_request_with_an_epsilon_says_what_it_spends():
    """A Flower node caps what its party spends by what each request says (Message.spend, not its fields): a request
    class that carries an ``epsilon`` and kept the base's None would be answered uncapped."""
    import dpsumm.protocols.nominations  # noqa: F401 - every purchase's messages

    priced = [c for c in _message_classes() if "epsilon" in {f.name for f in dataclasses.fields(c)}]
    assert {c.kind for c in priced} >= {
        "validation_request",
        "target_request",
        "cell_release_request",
        "cell_histogram_request",
        "direction_request",
    }
    for cls in priced:
        assert cls.spend is not Message.spend, cls
    assert BidRequest(round=0, v=np.zeros(2)).spend() is None  # the figures: tests/flower/test_caps.py
