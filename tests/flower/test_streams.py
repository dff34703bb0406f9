"""dpsumm.flower.streams: a run's random streams, derived in the order dpsumm.summarize derives them."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("flwr")

from dpsumm.flower.streams import STREAMS, party_streams  # noqa: E402
from dpsumm.privacy import Csprng  # noqa: E402


def _draws(rng):
    return np.asarray(rng.uniform_array(16))


def test_a_seeded_run_derives_each_stream_as_the_in_process_run_does():
    streams = party_streams(11)
    assert tuple(streams) == STREAMS == ("seed-set", "consumer", "aggregator", "uniform")
    parent = Csprng(11)
    for label in STREAMS:  # derive consumes the parent: the order is part of the contract
        np.testing.assert_array_equal(_draws(streams[label]), _draws(parent.derive(label)))


def test_the_order_matters_and_the_streams_differ():
    streams = party_streams(11)
    out_of_order = Csprng(11)
    out_of_order.derive("consumer")
    assert not np.array_equal(_draws(out_of_order.derive("seed-set")), _draws(party_streams(11)["seed-set"]))
    draws = [_draws(s).tobytes() for s in streams.values()]
    assert len(set(draws)) == len(STREAMS)


def test_without_a_seed_every_call_draws_fresh_os_entropy():
    a, b = party_streams(None), party_streams(None)
    assert not np.array_equal(_draws(a["consumer"]), _draws(b["consumer"]))  # equal with probability 2^-big


def test_a_bad_random_state_is_refused_naming_it():
    with pytest.raises(Exception) as info:
        party_streams("seven")
    assert getattr(info.value, "argument", None) == "random_state"
