"""The in-process consumer (dpsumm.parties.ConsumerParty) makes each release once (issue 43): a repeated identical
request gets the first release back, a request of the same kind with other parameters is refused; a transport that
delivers every request to the consumer twice changes nothing in a run."""

from __future__ import annotations

import dataclasses

import dpsumm
import numpy as np
import pytest
from dpsumm.messages import LabelHistogramRequest, TargetRequest, ValidationRequest
from dpsumm.parties import ConsumerParty, release_request_key
from dpsumm.privacy import Csprng
from dpsumm.transport import InProcessTransport
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

RNG = np.random.default_rng(0)
VALIDATION = RNG.random((30, 3))
LABELS = RNG.integers(0, 3, 30)

REQUESTS = {
    "target gaussian": TargetRequest(n_features=3, dim=16, gamma=0.5, hash_seed=0, release="gaussian", epsilon=1.0,
                                     delta=1e-3, steps=0, eta=0.0, send_rows=False),
    "target mwem": TargetRequest(n_features=3, dim=16, gamma=0.5, hash_seed=0, release="mwem", epsilon=0.5, delta=0.0,
                                 steps=3, eta=0.05, send_rows=True),
    "validation h2": ValidationRequest(n_features=3, dim=16, gamma=0.5, hash_seed=0, method="private", steps=3,
                                       epsilon=0.5, eta=0.05),
    "label histogram": LabelHistogramRequest(label_set=np.arange(3), epsilon=1.0, send_rows=False, n_features=3, dim=8,
                                             gamma=0.5, hash_seed="cells:0", cell_labels=np.arange(3, dtype=np.int64),
                                             centres=np.zeros((3, 8)), bias=np.zeros(3)),
}


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
    assert not np.array_equal(_values(first), _values(ConsumerParty(VALIDATION, Csprng(), labels=LABELS).handle(request)))
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


field_changes = st.sampled_from([("epsilon", 0.25), ("delta", 1e-4), ("dim", 8), ("gamma", 0.25), ("hash_seed", 1),
                                 ("n_features", 3), ("send_rows", True), ("steps", 0), ("eta", 0.0)])


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


@pytest.mark.parametrize("method", [
    dpsumm.Nominations(dim=32),
    dpsumm.Nominations(dim=32, purchase=dpsumm.ByLabel(label_set=(0, 1, 2), sale_tilt_share=0.3)),
    dpsumm.PaperProtocol(dim=32),
], ids=["nominations", "labels-with-tilt", "paper"])
def test_a_transport_that_delivers_every_consumer_request_twice_changes_nothing(method, monkeypatch):
    """Fault injection: every request to the consumer is delivered twice and the second reply used. With a seeded run
    (the same noise streams), the summary, its labels and the whole ledger equal the run without the fault: the
    consumer drew no second noise, which no ledger would record."""
    rng = np.random.default_rng(1)
    owners = [dpsumm.Owner(rng.random((80, 3)), labels=rng.integers(0, 3, 80), name=f"o{k}") for k in range(3)]
    validation, yv = rng.random((30, 3)), rng.integers(0, 3, 30)

    def run():
        return dpsumm.summarize(owners, validation, 12, method, random_state=3, progress=False,
                                validation_labels=yv if method.needs_labels else None)

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
