"""The quota purchase of the nominations protocol (issue 19): owners' sketch kernels against their numpy twins,
hand-checked cases, the owners' DP releases and their ledger, what an owner sees, parsimony, and faults."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

import dpsumm
from dpsumm import _core, accounting
from dpsumm.hashing import RFFHasher
from dpsumm.messages import Message, QuotaReply, SketchReply
from dpsumm.parties import ConsumerParty, OwnerParty, owner_stream
from dpsumm.protocols.nominations import (HISTOGRAM_BINS, PURCHASE_FACTOR, histogram_edges, quotas_from_histograms,
                                          sketch_calibration)
from dpsumm.reference import owner_sketch as ref
from dpsumm.transport import InProcessTransport
from recording import Recorder

KW = dict(method=dpsumm.Nominations(dim=64, purchase="quotas"), gamma=0.3, progress=False)


def blobs(seed=0, K=4, n=80, f=5, m=40):
    rng = np.random.default_rng(seed)
    owners = [rng.normal(loc=k * 0.7, scale=0.5, size=(n, f)) for k in range(K)]
    validation = rng.normal(loc=1.0, scale=0.5, size=(m, f))
    return owners, validation


# ---------------------------------------------------------------------------------- kernels = numpy twins


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sketch_kernels_equal_their_numpy_twins(dtype):
    rng = np.random.default_rng(1)
    X = rng.random((700, 6)).astype(dtype)  # three blocks of 256 rows
    hasher = RFFHasher(6, dim=48, gamma=0.7, seed=3)
    H = hasher.transform(X)
    proj = hasher._projection
    np.testing.assert_allclose(_core.owner_hash_sum(X, proj), ref.hash_sum(H), rtol=0, atol=1e-10)
    g = rng.normal(size=48)
    s = H.astype(np.float64) @ g
    edges = np.quantile(s, np.linspace(0.05, 0.95, 11)) + 1e-7  # away from any score
    np.testing.assert_array_equal(_core.owner_score_histogram(X, proj, g, edges), ref.score_histogram(H, g, edges))
    lam = 3.0 * g
    m, logz = _core.owner_tilted_mean(X, proj, lam)
    m_ref, logz_ref = ref.tilted_mean(H, lam)
    np.testing.assert_allclose(m, m_ref, rtol=1e-12, atol=1e-13)
    assert logz == pytest.approx(logz_ref, rel=1e-12)
    target = H[:50].astype(np.float64).mean(0)
    lam0 = np.zeros(48)
    for stop in (0.0, 0.05):
        got = _core.owner_self_consistent_tilt(X, proj, target, lam0, 0.5, 6, stop)
        want = ref.self_consistent_tilt(H, target, lam0, 0.5, 6, stop)
        assert got[1] == want[1]
        np.testing.assert_allclose(got[0], want[0], rtol=1e-9, atol=1e-10)
        assert got[2] == pytest.approx(want[2], rel=1e-9)


def test_sketch_kernels_hand_checked_cases():
    X = np.random.default_rng(2).random((300, 3))
    hasher = RFFHasher(3, dim=16, gamma=0.5, seed=0)
    proj = hasher._projection
    # direction 0: every score is 0, which has the edges -1 and 0 at or below it: bin 2 holds every row.
    assert _core.owner_score_histogram(X, proj, np.zeros(16), np.array([-1.0, 0.0, 1.0])).tolist() == [0, 0, 300, 0]
    # lambda 0: the plain mean and log n.
    m, logz = _core.owner_tilted_mean(X, proj, np.zeros(16))
    np.testing.assert_allclose(m, hasher.transform(X).astype(np.float64).mean(0), atol=1e-12)
    assert logz == pytest.approx(math.log(300), rel=1e-14)
    # A target the owner cannot miss: no step (the discrepancy principle at a huge threshold).
    lam, steps, _ = _core.owner_self_consistent_tilt(X, proj, np.zeros(16), np.ones(16), 0.1, 5, 1e9)
    assert steps == 0 and np.array_equal(lam, np.ones(16))
    for bad in (np.array([1.0, 1.0]), np.array([np.nan])):
        with pytest.raises(dpsumm.DpsummError):
            _core.owner_score_histogram(X, proj, np.zeros(16), bad)
    with pytest.raises(dpsumm.DpsummError):
        _core.owner_tilted_mean(X, proj, np.zeros(15))


def test_quotas_hand_checked():
    hists = np.array([[0.0, 0.0, 10.0], [0.0, 10.0, 0.0]])
    # size 2, budget 6; the pooled top bin already holds pool * size = 2 rows: shares (1, 0), mixed 50/50 with
    # uniform: (0.75, 0.25) * 6 = (4.5, 1.5) -> (4, 1) + one remainder to the lowest index.
    assert quotas_from_histograms(hists, np.array([100, 100]), 2, factor=3, pool=1, uniform=0.5).tolist() == [5, 1]
    # capped at an owner's rows: the rest goes to the other owner.
    assert quotas_from_histograms(hists, np.array([3, 100]), 2, factor=3, pool=1, uniform=0.5).tolist() == [3, 3]
    # noisy negative counts are clipped; nothing above: uniform shares.
    assert quotas_from_histograms(-np.ones((4, 3)), np.full(4, 50), 4, factor=1, pool=1, uniform=0.0).tolist() == [1, 1, 1, 1]
    # never more than the budget, whatever K
    q = quotas_from_histograms(np.random.default_rng(0).random((100, 9)), np.full(100, 30), 10)
    assert q.sum() == math.ceil(PURCHASE_FACTOR * 10) and (q >= 0).all()


def test_histogram_edges_are_public_and_increasing():
    g = np.full(10, 0.1)
    e = histogram_edges(g, g, 0.05)
    assert len(e) == HISTOGRAM_BINS + 1 and np.all(np.diff(e) > 0)
    assert e[-9] == pytest.approx(float(g @ g) - 10 * 0.05 ** 2)  # 8 bins above the reference score


# ---------------------------------------------------------------------------------- privacy and the ledger


def test_two_sketch_releases_compose_to_the_owners_budget():
    for eps in (0.5, 1.0, 2.0):
        led = accounting.Ledger()
        for stage, dim in (("sum", 500), ("histogram", HISTOGRAM_BINS + 1)):
            cal, event = sketch_calibration(stage, dim, eps, 1e-6, 2)
            assert event.noise_multiplier >= math.sqrt(2) * accounting.calibrate_gaussian(
                eps, 1e-6, sensitivity=1.0, dim=dim).noise_multiplier * (1 - 1e-6)
            led.record("owners", event, label=stage)
        assert eps * 0.97 < led.epsilon("owners", 1e-6) <= eps


def test_default_run_certifies_every_party_and_buys_at_most_three_times_size():
    owners, validation = blobs(K=20, n=40)
    res = dpsumm.summarize(owners, validation, 10, random_state=1, **KW)
    led = res.privacy
    assert res.extra["purchase"] == "quotas"
    assert led.certified("owners") and led.certified("validation")
    assert 0.9 < led.epsilon("owners", 1e-6) <= 1.0
    assert 0.9 < led.epsilon("validation", 1e-6) <= 1.0
    assert led.neighbours("owners") == ["replace-one"]
    assert res.accessed.total <= 3 * 10 and len(res) == 10
    assert res.accessed.hashes == 0 and res.extra["exchanges"] == 4
    assert sum(res.extra["quotas"].values()) == res.accessed.total
    # the owners' budget follows the Budget's (epsilon, delta)
    budget = dpsumm.Budget(epsilon=0.5, delta=1e-7, validation_epsilon=1.0, validation_delta=1e-6)
    res = dpsumm.summarize(owners, validation, 10, privacy=budget, random_state=1, **KW)
    assert 0.45 < res.privacy.epsilon("owners", 1e-7) <= 0.5


def run_recorded(owners, validation, size, seed, replace=None):
    replace = replace or {}
    parties = {f"owner-{k}": Recorder(OwnerParty(np.asarray(o), None, f"owner-{k}", rng=owner_stream(seed, f"owner-{k}")),
                                      replace.get(f"owner-{k}"))
               for k, o in enumerate(owners)}
    parties["consumer"] = Recorder(ConsumerParty(np.asarray(validation), dpsumm.Csprng(seed).derive("consumer")))
    res = dpsumm.summarize(owners, validation, size, random_state=seed, transport=InProcessTransport(parties), **KW)
    return res, parties


def test_an_owners_view_changes_only_through_released_values():
    """Owner 0's messages are a function of its own data, g~, public numbers and the other owners' DP releases:
    replace every other owner's rows, feed the aggregator the first run's releases (their noise fixed by the
    seed), and owner 0 receives byte-identical messages; without that substitution they differ."""
    owners, validation = blobs(seed=3)
    changed = [owners[0]] + [np.random.default_rng(40 + k).normal(loc=3.0, size=o.shape) for k, o in enumerate(owners[1:])]
    _, a = run_recorded(owners, validation, 12, seed=5)
    kinds = [pickle.loads(b)["kind"] for b in a["owner-0"].received]
    assert kinds == ["sketch_request", "sketch_request", "quota_request"]
    _, b = run_recorded(changed, validation, 12, seed=5)
    assert a["owner-0"].received[0] == b["owner-0"].received[0]  # the first request is public
    assert a["owner-0"].received != b["owner-0"].received  # the releases carry information (the test can fail)
    released = {f"owner-{k}": a[f"owner-{k}"].replies for k in range(1, len(owners))}
    _, c = run_recorded(changed, validation, 12, seed=5, replace=released)
    assert a["owner-0"].received == c["owner-0"].received


# ---------------------------------------------------------------------------------- verification and faults


class Liar(OwnerParty):
    """An owner that misreports its noise scale, or sells rows other than the ones it hashed."""

    def __init__(self, data, mode):
        super().__init__(data, None, "owner-1", rng=owner_stream(0, "owner-1"))
        self.mode = mode

    def handle(self, message: Message) -> Message:
        reply = super().handle(message)
        if self.mode == "sigma" and isinstance(reply, SketchReply):
            return SketchReply(n_rows=reply.n_rows, values=reply.values, sigma=reply.sigma / 2,
                               granularity=reply.granularity)
        if self.mode == "rows" and isinstance(reply, QuotaReply) and reply.points is not None and len(reply.tokens):
            pts = reply.points.copy()
            pts[0, 0] += 1e-3  # (float64 rows are hashed after rounding to float32)
            return QuotaReply(n_rows=reply.n_rows, tokens=reply.tokens, hashes=reply.hashes, points=pts, labels=reply.labels)
        return reply


@pytest.mark.parametrize("mode,phase", [("sigma", "sketch-sum"), ("rows", "quota")])
def test_a_lying_owner_is_excluded_and_the_run_completes(mode, phase):
    owners, validation = blobs(seed=4)
    parties = {f"owner-{k}": OwnerParty(np.asarray(o), None, f"owner-{k}", rng=owner_stream(0, f"owner-{k}"))
               for k, o in enumerate(owners)}
    parties["owner-1"] = Liar(np.asarray(owners[1]), mode)
    parties["consumer"] = ConsumerParty(np.asarray(validation), dpsumm.Csprng(0).derive("consumer"))
    res = dpsumm.summarize(owners, validation, 8, random_state=0, transport=InProcessTransport(parties), **KW)
    assert [e["owner"] for e in res.events if e.get("event") == "excluded"] == ["owner-1"]
    assert res.events[0]["phase"] == phase
    assert len(res) == 8 and 1 not in set(res.owner.tolist())


def test_an_owner_releases_each_sketch_once():
    """A repeated request gets the same values (no new noise); another request for a released stage is refused."""
    from dpsumm.messages import SketchRequest
    from dpsumm.errors import ProtocolError

    X = np.random.default_rng(0).random((50, 3))
    owner = OwnerParty(X, None, "o", rng=owner_stream(1, "o"))
    req = SketchRequest(n_features=3, dim=16, gamma=0.5, hash_seed=0, stage="histogram", epsilon=1.0, delta=1e-6,
                        releases=2, direction=np.ones(16), edges=np.array([0.0, 1.0]))
    first = owner.handle(req)
    assert np.array_equal(owner.handle(req).values, first.values)
    with pytest.raises(ProtocolError):
        owner.handle(SketchRequest(n_features=3, dim=16, gamma=0.5, hash_seed=0, stage="histogram", epsilon=1.0,
                                   delta=1e-6, releases=2, direction=np.ones(16), edges=np.array([0.0, 2.0])))
