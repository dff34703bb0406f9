"""The cell purchases' owner messages (dpsumm.protocols.nominations.cell_messages): an owner's release, whole or in
two parts, drawn with the sigma it reports from its own noise streams, and its refusal of a malformed sale."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsumm import accounting
from dpsumm.errors import ProtocolError
from dpsumm.hashing import RFFHasher
from dpsumm.parties import GAUSSIAN_STREAM, ConsumerParty, OwnerParty, owner_stream
from dpsumm.privacy import Csprng
from dpsumm.protocols.nominations.cell_messages import (
    CONSUMER_STREAMS,
    CellReleaseRequest,
    CellSale,
    CellSaleRequest,
    consumer_release_stream,
    owner_release_calibration,
    owner_release_part,
)
from refusal import refused


def test_an_owner_refuses_a_malformed_sale_mode():
    X = np.random.default_rng(0).normal(size=(20, 3))
    owner = OwnerParty(X, np.array([0, 1] * 10), "o")
    base = dict(
        n_features=3,
        dim=8,
        gamma=0.3,
        hash_seed=0,
        target=np.zeros(0),
        temperature=1.0,
        count=3,
        candidates=12,
        reveal="points",
        sample_seed=1,
        key_set=np.array([0, 1]),
        key_counts=np.array([1, 2]),
        key_preference=np.zeros(2),
    )
    for bad in (np.array([True]), np.array([1, 0]), np.array([[True, False]])):
        with pytest.raises(ProtocolError, match="key_herded"):
            owner.handle(CellSaleRequest(**base, key_herded=bad))
    reply = owner.handle(CellSaleRequest(**base, key_herded=np.array([False, True])))
    assert isinstance(reply, CellSale) and len(reply.tokens) == 3


def test_an_owner_refuses_a_malformed_tilt():
    """A tilted label sale with a g~ of the wrong length, a non-finite g~ or a temperature that is not > 0 is a
    protocol error, before the owner reads its rows."""
    X = np.random.default_rng(0).normal(size=(20, 3))
    owner = OwnerParty(X, np.array([0, 1] * 10), "o")
    base = dict(
        n_features=3,
        dim=16,
        gamma=0.5,
        hash_seed=0,
        count=4,
        candidates=16,
        reveal="points",
        sample_seed=1,
        greedy_sample_factor=None,
        key_set=np.array([0, 1]),
        key_counts=np.array([2, 2]),
        key_preference=np.zeros(2),
        key_herded=np.array([True, True]),
    )
    ok = owner.handle(CellSaleRequest(target=np.full(16, 0.1), temperature=0.5, **base))
    assert len(ok.tokens) == 4
    for target, temperature in [
        (np.full(15, 0.1), 0.5),
        (np.full(16, np.nan), 0.5),
        (np.full(16, 0.1), 0.0),
        (np.full(16, 0.1), float("inf")),
        (np.full(16, 0.1), True),
    ]:
        with pytest.raises(ProtocolError, match="tilted cell sale"):
            owner.handle(CellSaleRequest(target=target, temperature=temperature, **base))


def test_an_owner_draws_its_label_counts_with_the_sigma_it_reports():
    """The noise an owner adds to its label counts and hash sum has the variance of the sigma it reports (and the
    ledger accounts): 600 owners x (4 labels + 8 coordinates), the sample variance / sigma^2 within 5 standard
    errors of 1 (the chi-square's sd is sqrt(2/7200) = 0.017; a sigma off by 10% moves it by 0.2), and the mean
    within 5 standard errors of 0."""
    y = np.repeat(np.arange(4), [3, 0, 5, 9])
    X = np.zeros((len(y), 2))
    req = CellReleaseRequest(n_features=2, dim=8, gamma=0.5, hash_seed=0, epsilon=1.0, delta=1e-6, key_set=np.arange(4))
    noise, sigma = [], None
    exact_sum = RFFHasher(2, dim=8, gamma=0.5, seed=0).transform(X).astype(np.float64).sum(0)
    for k in range(600):
        reply = OwnerParty(X, y, f"o{k}", rng=owner_stream(11, f"o{k}")).handle(req)
        noise.append(reply.values - np.concatenate([[3, 0, 5, 9], exact_sum]))
        sigma = reply.sigma
    cal, _ = owner_release_calibration(4 + 8, 1.0, 1e-6)
    assert sigma == cal.sigma
    z = np.concatenate(noise) / sigma
    assert abs(z.var() - 1.0) < 5 * math.sqrt(2 / z.size)
    assert abs(z.mean()) < 5 / math.sqrt(z.size)


def test_an_owner_releases_in_two_parts_or_at_once_never_both():
    """The sums part, then the counts part: each drawn at the one calibration over both parts' values (the
    owner's sigma is the one release's), each of its own length; an owner that made one kind of release refuses
    the other (it would spend its budget twice), and a joint dimension too small for both parts is refused."""
    y = np.repeat(np.arange(3), [4, 5, 6])
    X = np.random.default_rng(1).normal(size=(len(y), 2))
    base = dict(n_features=2, dim=8, gamma=0.5, hash_seed=0, epsilon=1.0, delta=1e-6)
    joint = 8 + 3
    sums_req = CellReleaseRequest(**base, key_set=np.zeros(0), part="sums", joint_dim=joint)
    counts_req = CellReleaseRequest(**base, key_set=np.arange(3), part="counts", joint_dim=joint)
    owner = OwnerParty(X, y, "o", rng=owner_stream(3, "o"))
    sums, counts = owner.handle(sums_req), owner.handle(counts_req)
    cal, _ = owner_release_calibration(joint, 1.0, 1e-6)
    assert sums.values.shape == (8,) and counts.values.shape == (3,) and sums.sigma == counts.sigma == cal.sigma
    exact_sum = RFFHasher(2, dim=8, gamma=0.5, seed=0).transform(X).astype(np.float64).sum(0)
    assert np.abs(sums.values - exact_sum).max() <= 12 * cal.sigma + cal.granularity
    assert np.abs(counts.values - [4, 5, 6]).max() <= 12 * cal.sigma + cal.granularity
    assert owner.handle(counts_req) is counts  # the same request: the same release back
    # each part from its own noise stream: not the same draws (a party rebuilt for every message, as on a Flower
    # node, would otherwise draw both parts from one stream's start)
    assert not np.allclose(counts.values - [4, 5, 6], (sums.values - exact_sum)[:3])
    rebuilt = OwnerParty(X, y, "o", rng=owner_stream(3, "o"))
    rebuilt.handle(sums_req)
    again = OwnerParty(X, y, "o", rng=owner_stream(3, "o"))
    again.restore(rebuilt.state())  # rebuilt from its kept state between the parts: the same counts
    np.testing.assert_array_equal(again.handle(counts_req).values, counts.values)
    with pytest.raises(ProtocolError, match="spent its budget"):
        owner.handle(CellReleaseRequest(**base, key_set=np.arange(3)))
    other = OwnerParty(X, y, "p")
    other.handle(CellReleaseRequest(**base, key_set=np.arange(3)))
    with pytest.raises(ProtocolError, match="spent its budget"):
        other.handle(sums_req)
    for bad in (dataclasses.replace(counts_req, joint_dim=3), dataclasses.replace(counts_req, part="half")):
        with pytest.raises(ProtocolError):
            OwnerParty(X, y, "q").handle(bad)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4096), st.integers(1, 512), st.floats(0.05, 4.0))
def test_an_owner_release_in_two_parts_composes_to_at_most_the_release_at_once(keys: int, dim: int, eps: float) -> None:
    """The sums part and the counts part, drawn at the one calibration over both parts' values, compose (RDP, the
    accountant) to no more than the one release of both, which meets the owner's epsilon (Minkowski on the
    effective sensitivities)."""
    joint = keys + dim
    cal, whole = owner_release_calibration(joint, eps, 1e-6)
    cal_s, sums = owner_release_part(joint, "sums", dim, eps, 1e-6)
    cal_c, counts = owner_release_part(joint, "counts", keys, eps, 1e-6)
    assert cal_s.sigma == cal_c.sigma == cal.sigma and cal_s.granularity == cal_c.granularity == cal.granularity
    assert (cal_s.dim, cal_c.dim) == (dim, keys)
    parts = accounting.compose([sums, counts], 1e-6)
    assert parts <= accounting.compose([whole], 1e-6) * (1 + 1e-9) and parts <= eps * (1 + 1e-9)


def test_an_owner_release_part_refuses_an_unknown_part_or_too_many_values() -> None:
    refused(lambda: owner_release_part(10, "half", 3, 1.0, 1e-6), "part")
    refused(lambda: owner_release_part(10, "sums", 11, 1.0, 1e-6), "dim")
    refused(lambda: owner_release_part(10, "counts", 0, 1.0, 1e-6), "dim")


@pytest.mark.parametrize("order", [("validation-direction", "validation-labels"), ("validation-labels",), ()])
def test_a_consumer_draws_its_cell_streams_in_one_order_whichever_is_asked_first(order: tuple[str, ...]) -> None:
    # Deriving a stream draws from the consumer's own: the cell releases' streams come after g~'s and in the order
    # of CONSUMER_STREAMS whichever release a run asks for first, so a consumer rebuilt for every message (a Flower
    # node) draws the noise of one that answered every request.
    consumer = ConsumerParty(np.zeros((3, 2)), Csprng(11))
    for name in order:
        consumer_release_stream(consumer, name)
    gaussian = consumer.release_stream(GAUSSIAN_STREAM).uniform()
    direction = consumer_release_stream(consumer, "validation-direction").uniform()
    root = Csprng(11)
    expected = [root.derive(name) for name in CONSUMER_STREAMS]
    assert gaussian == expected[0].uniform()
    assert direction == expected[2].uniform()
    with pytest.raises(ProtocolError, match="no cell-release stream 'validation-other'"):
        consumer_release_stream(consumer, "validation-other")
