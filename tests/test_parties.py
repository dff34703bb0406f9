"""dpsumm.parties: the owner's and the consumer's primitives (label counts and positions, cell counts, label
rows, the consumer's histogram), each release made once, state round trips, bids with the index.
"""

from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pytest

import dpsumm
from consumer_requests import REQUESTS
from dpsumm import InvalidParameterError
from dpsumm.errors import ProtocolError
from dpsumm.kernels import best_row
from dpsumm.parties import ConsumerParty, OwnerParty
from dpsumm.privacy import Csprng
from dpsumm.protocols.nominations.cell_messages import CellReleaseRequest
from dpsumm.transport import InProcessTransport

RNG = np.random.default_rng(0)
VALIDATION = RNG.random((30, 3))
LABELS = RNG.integers(0, 3, 30)


def exact(H, v, offered=None):
    return best_row(H, v, offered)


def test_a_bid_request_beyond_the_float32_range_is_refused_without_an_overflow_warning():
    """A broadcast v of 1e300s used to overflow in its cast to float32 (a numpy RuntimeWarning) and get a bid."""
    from dpsumm.messages import BidRequest, Setup

    owner = OwnerParty(np.zeros((5, 2)), None, "o")
    owner.handle(Setup(n_features=2, dim=8, gamma=0.5, hash_seed=3, reveal="points"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(ProtocolError, match="float32 range"):
            owner.handle(BidRequest(round=1, v=np.full(8, 1e300)))


def test_owner_party_bids_with_the_index():
    from dpsumm.messages import BidRequest, PointRequest, Setup

    rng = np.random.default_rng(9)
    X = rng.random((6000, 10), dtype=np.float32)
    owner = dpsumm.parties.OwnerParty(X, None, "o")
    owner.handle(Setup(n_features=10, dim=140, gamma=0.5, hash_seed=3, reveal="hashes"))
    H = dpsumm.RFFHasher(10, dim=140, gamma=0.5, seed=3).transform(X)
    offered = np.zeros(6000, dtype=bool)
    for rnd in range(1, 6):
        v = rng.normal(size=140).astype(np.float32)
        bid = owner.handle(BidRequest(round=rnd, v=v))
        want = exact(H, v, offered)
        assert (bid.value, bid.token) == want
        reply = owner.handle(PointRequest(round=rnd, token=bid.token))
        np.testing.assert_array_equal(reply.hash, H[bid.token])
        offered[bid.token] = True


def _values(release):
    for field in ("noisy_mean", "mean_hash", "counts"):
        if hasattr(release, field):
            return np.asarray(getattr(release, field))
    raise AssertionError(release)


@pytest.mark.parametrize("name", list(REQUESTS))
def test_a_repeated_request_gets_the_first_release_and_another_is_refused(name):
    """An OS-keyed consumer (fresh noise would differ with probability 1): the same request twice gives the same
    release; then a request of the same kind at another epsilon is refused, and the first release is still kept."""
    consumer = ConsumerParty(VALIDATION, Csprng(), labels=LABELS)
    request = REQUESTS[name]
    first = consumer.handle(request)
    again = consumer.handle(dataclasses.replace(request))  # an equal request, another object
    np.testing.assert_array_equal(_values(again), _values(first))
    assert not np.array_equal(
        _values(first), _values(ConsumerParty(VALIDATION, Csprng(), labels=LABELS).handle(request))
    )
    with pytest.raises(dpsumm.ProtocolError, match="already made for another request"):
        consumer.handle(dataclasses.replace(request, epsilon=request.epsilon * 2))
    np.testing.assert_array_equal(_values(consumer.handle(request)), _values(first))


def test_each_kind_of_release_is_kept_on_its_own():
    """The label purchase with the tilt asks for the label histogram, then g~: two kinds, two releases, each kept."""
    consumer = ConsumerParty(VALIDATION, Csprng(4), labels=LABELS)
    hist = consumer.handle(REQUESTS["label histogram"])
    target = consumer.handle(REQUESTS["target gaussian"])
    np.testing.assert_array_equal(_values(consumer.handle(REQUESTS["target gaussian"])), _values(target))
    np.testing.assert_array_equal(_values(consumer.handle(REQUESTS["label histogram"])), _values(hist))


@pytest.mark.parametrize("first, then", [("target gaussian", "validation h2"), ("validation h2", "target mwem")])
def test_the_hashed_mean_is_released_once_whichever_request_asks(first, then):
    """A target request and the paper protocol's validation request both release ``mean h1(D_v)``: once one was
    answered, the other is refused (a second release of D_v's hashed mean), and the first is still answered."""
    consumer = ConsumerParty(VALIDATION, Csprng(), labels=LABELS)
    released = consumer.handle(REQUESTS[first])
    with pytest.raises(dpsumm.ProtocolError, match="second time"):
        consumer.handle(REQUESTS[then])
    np.testing.assert_array_equal(_values(consumer.handle(REQUESTS[first])), _values(released))


@pytest.mark.parametrize(
    "method",
    [
        dpsumm.Nominations(dim=32),
        dpsumm.Nominations(dim=32, purchase=dpsumm.ByLabel(label_set=(0, 1, 2), sale_tilt_share=0.3)),
        dpsumm.PaperProtocol(dim=32),
    ],
    ids=["nominations", "labels-with-tilt", "paper"],
)
def test_a_transport_that_delivers_every_consumer_request_twice_changes_nothing(method, monkeypatch):
    """Fault injection: every request to the consumer is delivered twice and the second reply used. With a seeded run
    (the same noise streams), the summary, its labels and the whole ledger equal the run without the fault: the
    consumer drew no second noise, which no ledger would record."""
    rng = np.random.default_rng(1)
    owners = [dpsumm.Owner(rng.random((80, 3)), labels=rng.integers(0, 3, 80), name=f"o{k}") for k in range(3)]
    validation, yv = rng.random((30, 3)), rng.integers(0, 3, 30)

    def run():
        return dpsumm.summarize(
            owners,
            validation,
            12,
            method,
            random_state=3,
            progress=False,
            validation_labels=yv if method.needs_labels else None,
        )

    clean = run()
    original = InProcessTransport.request
    delivered = []

    def twice(self, party, message):
        if party == "consumer":
            delivered.append(message.kind)
            original(self, party, message)
        return original(self, party, message)

    monkeypatch.setattr(InProcessTransport, "request", twice)
    faulty = run()
    assert delivered  # the fault was injected
    np.testing.assert_array_equal(faulty.owner, clean.owner)
    np.testing.assert_array_equal(faulty.index, clean.index)
    assert faulty.privacy.to_dict() == clean.privacy.to_dict()


def test_labels_one_per_row_or_refused():
    """Labels of another shape would count one row in several cells (2-D labels: a replaced row moves 2 sqrt(2) in
    L2, not sqrt(2)): every party refuses them when it is built, naming the argument, before any release."""
    X = np.zeros((3, 2))
    for bad in (np.zeros((3, 2)), np.zeros(4), np.zeros(2)):
        with pytest.raises(InvalidParameterError) as info:
            OwnerParty(X, bad)
        assert info.value.argument == "labels"
        with pytest.raises(InvalidParameterError) as info:
            ConsumerParty(X, dpsumm.privacy.Csprng(0), labels=bad)
        assert info.value.argument == "labels"


def test_an_owner_rebuilt_from_its_json_state_keeps_its_one_release():
    """OwnerParty.state() is JSON-ready and OwnerParty.restore() rebuilds the run from it: a fresh party (a fresh,
    unseeded noise stream) given the state answers the same release request with the kept release, bit for bit, and
    refuses a release with other parameters; without the state it would draw anew (the test can fail)."""
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(30, 3)), rng.integers(0, 3, 30)
    req = CellReleaseRequest(n_features=3, dim=8, gamma=0.5, hash_seed=0, epsilon=1.0, delta=1e-6, key_set=np.arange(3))
    first = OwnerParty(X, y, "a")
    released = first.handle(req)
    state = json.loads(json.dumps(first.state()))
    rebuilt = OwnerParty(X, y, "a")
    rebuilt.restore(state)
    again = rebuilt.handle(req)
    np.testing.assert_array_equal(again.values, released.values)
    assert (again.n_rows, again.sigma, again.granularity) == (released.n_rows, released.sigma, released.granularity)
    with pytest.raises(ProtocolError, match="already made"):
        rebuilt.handle(dataclasses.replace(req, epsilon=2.0))
    fresh = OwnerParty(X, y, "a").handle(req)
    assert not np.array_equal(fresh.values, released.values)
    with pytest.raises(ProtocolError, match="malformed"):
        OwnerParty(X, y, "a").restore({"releases": {}})


def _kept_state() -> tuple[np.ndarray, np.ndarray, CellReleaseRequest, dict]:
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(30, 3)), rng.integers(0, 3, 30)
    req = CellReleaseRequest(n_features=3, dim=8, gamma=0.5, hash_seed=0, epsilon=1.0, delta=1e-6, key_set=np.arange(3))
    owner = OwnerParty(X, y, "a")
    owner.handle(req)
    return X, y, req, json.loads(json.dumps(owner.state()))


def _changed(state: dict, how: str) -> object:
    s = json.loads(json.dumps(state))
    if how == "release removed":
        s["releases"] = {}
    elif how == "release renamed":
        s["releases"] = {"cells-sums": s["releases"]["cells"]}
    elif how == "sold added":
        s["sold"] = [0, 1]
    elif how == "field removed":
        del s["sent"]
    elif how == "field added":
        s["extra"] = 1
    elif how == "seal removed":
        s["mac"] = ""
    elif how == "seal of another kind":
        s["mac"] = 5
    elif how == "renamed owner":
        s["owner"] = "b"
    elif how == "rows changed":
        s["n_rows"] = 31
    elif how == "not json values":
        s["setup"] = {"kind": float("nan")}
    return s


@pytest.mark.parametrize(
    "how",
    [
        "release removed",
        "release renamed",
        "sold added",
        "field removed",
        "field added",
        "seal removed",
        "seal of another kind",
        "renamed owner",
        "rows changed",
        "not json values",
    ],
)
def test_a_changed_kept_state_is_refused_before_any_use(how):
    """OwnerParty.restore treats its state as untrusted input: any change to a sealed state (a release dropped or
    renamed, which would make the owner release again with fresh noise) is refused with a ProtocolError, and the
    party is left as fresh as before (its next release request is answered only once)."""
    X, y, req, state = _kept_state()
    owner = OwnerParty(X, y, "a")
    with pytest.raises(ProtocolError):
        owner.restore(_changed(state, how))
    assert owner.state()["releases"] == {}


@pytest.mark.parametrize("state", [None, [], "state", 5, {"kind": "bid", "round": 0, "value": 1.0, "token": 3}])
def test_a_kept_state_of_another_form_is_refused_naming_the_owner(state):
    with pytest.raises(ProtocolError, match="owner 'a'"):
        OwnerParty(np.zeros((4, 2)), None, "a").restore(state)


def test_another_owners_state_is_refused_even_under_the_same_name():
    """A state sealed over other rows (another owner's, even named alike and of the same size) is refused; the
    owner's own state, through JSON, is accepted."""
    X, y, req, state = _kept_state()
    other = OwnerParty(X + 1.0, y, "a")
    with pytest.raises(ProtocolError, match="seal"):
        other.restore(state)
    with pytest.raises(ProtocolError, match="another owner's"):
        OwnerParty(X, y, "b").restore(state)
    same = OwnerParty(X, y, "a")
    same.restore(state)
    assert set(same.state()["releases"]) == {"cells"}
