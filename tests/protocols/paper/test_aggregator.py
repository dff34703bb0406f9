"""The paper's aggregator end to end (dpsumm.protocols.paper.aggregator, Algorithm 3): greedy, bids, auction, pool, faults,
reproducibility.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

import dpsumm
from corrupt_replies import excluded as corrupt_excluded
from corrupt_replies import refused as corrupt_refused
from corrupt_replies import replace
from dpsumm.messages import Bid, BidRequest, Message
from dpsumm.parties import OwnerParty
from dpsumm.transport import InProcessTransport
from paper_data import blobs, small_schedule
from thread_counts import digests_per_thread_count


def brute_force_greedy(owners, validation, seed_set, size, hasher):
    H = [hasher.transform(o) for o in owners]
    g_valid = hasher.transform(validation).astype(np.float64).mean(0)
    s_sum = hasher.transform(seed_set).astype(np.float64).sum(0)
    q = len(seed_set)
    taken = [np.zeros(len(o), bool) for o in owners]
    picks = []
    for _ in range(size):
        v = (g_valid - q / (q + 1) * s_sum / q).astype(np.float32)
        best = None
        for k, Hk in enumerate(H):
            scores = Hk.astype(np.float64) @ v.astype(np.float64)
            scores[taken[k]] = -np.inf
            i = int(np.argmax(scores))
            if best is None or scores[i] > best[0]:
                best = (scores[i], k, i)
        _, k, i = best
        taken[k][i] = True
        picks.append((k, i))
        s_sum += H[k][i].astype(np.float64)
        q += 1
    return picks


def test_greedy_equals_brute_force_greedy_over_the_hashed_kernel():
    owners, validation, seed_set = blobs()
    res = dpsumm.summarize(
        owners,
        validation,
        25,
        method=dpsumm.PaperGreedy(dim=64),
        seed_set=seed_set,
        gamma=0.3,
        random_state=0,
        progress=False,
    )
    want = brute_force_greedy(owners, validation, seed_set, 25, res.hasher)
    assert list(zip(res.owner.tolist(), res.index.tolist())) == want
    # Non-private greedy asks only for the winner: parsimony is exactly the summary size.
    assert res.accessed.total == 25
    assert res.privacy is None
    np.testing.assert_array_equal(res.points, np.stack([owners[k][i] for k, i in want]))


def J(S, V, gamma):
    """The paper's objective (Eq. 3) up to a constant: -MMD^2(S, V) with the exact kernel."""
    return -dpsumm.reference.mmd2(S, V, gamma)


def test_bid_is_the_exact_marginal_gain():
    """DESIGN.md §4: J(S + x) - J(S) = 2/(q+1) [mean_V k(x,y) - q/(q+1) mean_S k(x,z)] + const(S, V)."""
    rng = np.random.default_rng(1)
    gamma = 0.4
    S, V, X = rng.normal(size=(7, 3)), rng.normal(size=(9, 3)) + 0.5, rng.normal(size=(6, 3))
    q = len(S)
    exact_bid = dpsumm.reference.kernel_row_means(X, V, gamma) - q / (q + 1) * dpsumm.reference.kernel_row_means(
        X, S, gamma
    )
    gains = np.array([J(np.vstack([S, x]), V, gamma) - J(S, V, gamma) for x in X])
    # The gain is an affine function of the bid with slope 2/(q+1).
    slope, intercept = np.polyfit(exact_bid, gains, 1)
    assert slope == pytest.approx(2 / (q + 1), rel=1e-9)
    np.testing.assert_allclose(gains, 2 / (q + 1) * exact_bid + intercept, atol=1e-12)
    # And the hashed bid of the protocol approximates it with large d.
    h = dpsumm.RFFHasher(3, dim=40000, gamma=gamma, seed=5)
    v = h.transform(V).astype(np.float64).mean(0) - q / (q + 1) * h.transform(S).astype(np.float64).mean(0)
    hashed_bid = h.transform(X).astype(np.float64) @ v
    assert np.abs(hashed_bid - exact_bid).max() < 0.02


def test_private_run_is_complete_and_reproducible():
    owners, validation, seed_set = blobs()
    kw = dict(
        method=dpsumm.PaperProtocol(schedule=small_schedule(20, 4), dim=64),
        seed_set=seed_set,
        gamma=0.3,
        progress=False,
    )
    a = dpsumm.summarize(owners, validation, 20, random_state=11, **kw)
    b = dpsumm.summarize(owners, validation, 20, random_state=11, **kw)
    c = dpsumm.summarize(owners, validation, 20, random_state=12, **kw)
    assert len(a) == 20
    assert np.array_equal(a.points, b.points) and np.array_equal(a.owner, b.owner) and np.array_equal(a.index, b.index)
    assert [t.requested for t in a.trace] == [t.requested for t in b.trace]
    assert not (
        np.array_equal(a.owner, c.owner)
        and np.array_equal(a.index, c.index)
        and [t.requested for t in a.trace] == [t.requested for t in c.trace]
    )
    # No row twice; seed rows are not in the summary; every row is really the owner's row.
    assert len(set(zip(a.owner.tolist(), a.index.tolist()))) == 20
    for p, k, i in zip(a.points, a.owner, a.index):
        np.testing.assert_array_equal(p, owners[k][i])
    # The ledger is there and charges the owners and the validation set.
    assert a.privacy is not None
    totals = a.privacy.totals(1e-4, 1e-2)
    assert totals["owners"]["kov"] > 0 and totals["validation"]["kov"] > 0
    # Parsimony accounting is consistent: accessed = winners + what is left in the pool.
    assert a.accessed.total == 20 + a.extra["pool_left"]
    assert sum(a.accessed.per_owner.values()) == a.accessed.total


def test_private_summary_is_close_to_greedy():
    owners, validation, seed_set = blobs(K=4, n=150)
    kw = dict(seed_set=seed_set, gamma=0.3, progress=False, random_state=2)
    greedy = dpsumm.summarize(owners, validation, 30, method=dpsumm.PaperGreedy(dim=128), **kw)
    # Budget large enough that h2 is accurate at these tiny sizes (40 validation rows, 20 seed rows):
    # this checks the algorithm's mechanics, not the paper's schedule (see the MNIST experiment for that).
    sched = small_schedule(
        30,
        4,
        dim=128,
        t_init=2000,
        epsilon_validation_step=1.0,
        epsilon_first_epoch_step=1.0,
        epsilon_epoch_step=(1.0,) * 30,
        t_subs=20,
    )
    private = dpsumm.summarize(owners, validation, 30, method=dpsumm.PaperProtocol(schedule=sched, dim=128), **kw)
    uniform = dpsumm.summarize(owners, validation, 30, method=dpsumm.Uniform(dim=128), **kw)
    m_g = dpsumm.kernels.mmd2(greedy.points, validation, 0.3)
    m_p = dpsumm.kernels.mmd2(private.points, validation, 0.3)
    m_u = dpsumm.kernels.mmd2(uniform.points, validation, 0.3)
    assert m_p < m_u
    assert m_p < 2.0 * m_g


class Guarded:
    """Exposes only ``handle``: any other access to the owner object fails."""

    def __init__(self, party):
        object.__setattr__(self, "_party", party)

    def handle(self, message):
        return object.__getattribute__(self, "_party").handle(message)

    def __getattribute__(self, name):
        if name == "handle":
            return object.__getattribute__(self, name)
        raise AssertionError(f"the aggregator touched {name!r} outside the message interface")


def test_aggregator_reaches_owners_only_through_messages():
    owners, validation, seed_set = blobs(K=3)
    names = [f"owner-{k}" for k in range(3)]
    parties = {n: Guarded(OwnerParty(o, None, n)) for n, o in zip(names, owners)}
    parties["consumer"] = dpsumm.parties.ConsumerParty(validation, dpsumm.privacy.Csprng(1))
    res = dpsumm.summarize(
        owners,
        validation,
        10,
        method=dpsumm.PaperProtocol(dim=64, schedule=small_schedule(10, 3)),
        seed_set=seed_set,
        progress=False,
        random_state=1,
        transport=InProcessTransport(parties),
    )
    assert len(res) == 10 and not res.events


def equal_owners(K, n, f=4, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(n, f)) for _ in range(K)]


def test_auction_request_frequencies_follow_exp_minus_eps_rank():
    """Rank r is asked with probability exp(-eps_auc r) (Alg. 3 line 12). Chi-square per rank, alpha = 0.001."""
    K, rounds, eps_auc = 6, 250, 0.6
    owners = equal_owners(K, 400)
    rng = np.random.default_rng(9)
    res = dpsumm.summarize(
        owners,
        rng.normal(size=(30, 4)),
        rounds,
        method=dpsumm.PaperProtocol(
            dim=32, schedule=small_schedule(rounds, K, dim=32, epsilon_auction=eps_auc, tau=10**9, t_init=50)
        ),
        seed_set=rng.normal(size=(20, 4)),
        progress=False,
        random_state=4,
    )
    asked = np.zeros(K)
    offered = np.zeros(K)
    for t in res.trace:
        ranked = sorted((o for o, b in t.bids.items() if b is not None), key=lambda o: (-t.bids[o], o))
        for r, o in enumerate(ranked):
            offered[r] += 1
            asked[r] += o in t.requested
    assert asked[0] == offered[0] == rounds
    for r in range(1, K):
        p = math.exp(-eps_auc * r)
        test = stats.binomtest(int(asked[r]), int(offered[r]), p)
        assert test.pvalue > 0.001, (r, asked[r], offered[r], p)


def test_tau_rule_asks_for_a_point_chosen_tau_times():
    # With a huge eps_auc only rank 0 is asked by chance, so the runner-up's best row is asked for
    # exactly when it has been its owner's best tau times.
    rng = np.random.default_rng(0)
    target = np.zeros((1, 3))
    near = np.zeros((30, 3)) + rng.normal(scale=0.01, size=(30, 3))
    far = np.full((5, 3), 3.0)  # identical rows: the owner's best row (lowest index on ties) never changes
    res = dpsumm.summarize(
        [near, far],
        target.repeat(10, 0),
        8,
        method=dpsumm.PaperProtocol(
            dim=64, schedule=small_schedule(8, 2, epsilon_auction=1000000.0, tau=3, t_init=200)
        ),
        seed_set=np.full((10, 3), 6.0),
        gamma=0.2,
        progress=False,
        random_state=0,
    )
    # The far owner's rows are identical, so its best row stays the same until it is asked for: the row
    # has been its owner's best `streak` rounds, and the tau rule must fire exactly when streak == tau.
    streak, fired = 0, 0
    for t in res.trace:
        streak += 1
        ranked_first = max(t.bids, key=lambda o: t.bids[o]) == "owner-1"
        if "owner-1" in t.tau_requests:
            assert streak == 3 and not ranked_first
            fired += 1
        else:
            assert ranked_first or streak < 3
        if "owner-1" in t.requested:
            streak = 0
    assert fired >= 1
    assert res.accessed.per_owner["owner-1"] >= 1


def test_parsimony_within_lemma_5():
    """E[accessed] <= p (K / tau + 1 / eps_auc) (Lemma 5)."""
    K, p, eps_auc, tau = 8, 60, 0.5, 4
    owners = equal_owners(K, 100, seed=3)
    rng = np.random.default_rng(3)
    totals = []
    for rs in range(3):
        res = dpsumm.summarize(
            owners,
            rng.normal(size=(30, 4)),
            p,
            method=dpsumm.PaperProtocol(
                dim=32, schedule=small_schedule(p, K, dim=32, epsilon_auction=eps_auc, tau=tau, t_init=50)
            ),
            seed_set=rng.normal(size=(20, 4)),
            progress=False,
            random_state=rs,
        )
        totals.append(res.accessed.total)
    assert np.mean(totals) <= p * (K / tau + 1 / eps_auc)
    assert min(totals) >= p


class Inflating(OwnerParty):
    """Claims a bid 0.5 above the truth from round 3 on."""

    inflated: set = set()

    def handle(self, message: Message) -> Message:
        reply = super().handle(message)
        if (
            isinstance(message, BidRequest)
            and isinstance(reply, Bid)
            and reply.value is not None
            and message.round >= 3
        ):
            self.inflated.add(reply.token)
            return dataclasses.replace(reply, value=reply.value + 0.5)
        return reply


class Vanishing(OwnerParty):
    def handle(self, message: Message) -> Message:
        if isinstance(message, BidRequest) and message.round >= 4:
            raise ConnectionError("node went away")
        return super().handle(message)


class Garbage(OwnerParty):
    def handle(self, message: Message) -> Message:
        if isinstance(message, BidRequest) and message.round == 2:
            return Bid(round=2, value=float("nan"), token=0)
        return super().handle(message)


@pytest.mark.parametrize(
    "bad_cls,reason", [(Inflating, "does not match"), (Vanishing, "went away"), (Garbage, "impossible")]
)
def test_misbehaving_owner_is_excluded_and_the_run_completes(bad_cls, reason):
    owners, validation, seed_set = blobs(K=3, n=80)
    names = ["a", "b", "c"]
    parties = {n: OwnerParty(o, None, n) for n, o in zip(names, owners)}
    parties["b"] = bad_cls(owners[1], None, "b")
    parties["consumer"] = dpsumm.parties.ConsumerParty(validation, dpsumm.privacy.Csprng(2))
    res = dpsumm.summarize(
        [dpsumm.Owner(o, name=n) for n, o in zip(names, owners)],
        validation,
        15,
        method=dpsumm.PaperProtocol(dim=64, schedule=small_schedule(15, 3, epsilon_auction=0.01)),
        seed_set=seed_set,
        progress=False,
        random_state=5,
        transport=InProcessTransport(parties),
    )
    assert len(res) == 15
    excluded = [e for e in res.events if e["event"] == "excluded"]
    assert [e["owner"] for e in excluded] == ["b"] and reason in excluded[0]["reason"]
    later = [t for t in res.trace if t.round > excluded[0]["round"]]
    assert all("b" not in t.bids and "b" not in t.requested for t in later)
    keys = list(zip(res.owner.tolist(), res.index.tolist()))
    assert len(set(keys)) == len(keys)
    if bad_cls is Inflating:
        # A row sent behind an inflated bid is discarded: never in the summary. (Rows of "b" verified
        # before the exclusion stay in the pool and may still win.)
        b_rows = set(res.index[res.owner == 1].tolist())
        assert parties["b"].inflated and not (parties["b"].inflated & b_rows)


def test_reveal_hashes_gives_only_hashes_and_labels():
    owners, validation, seed_set = blobs(K=3)
    labelled = [dpsumm.Owner(o, labels=np.full(len(o), k)) for k, o in enumerate(owners)]
    res = dpsumm.summarize(
        labelled,
        validation,
        12,
        method=dpsumm.PaperProtocol(reveal="hashes", dim=64, schedule=small_schedule(12, 3)),
        seed_set=seed_set,
        progress=False,
        random_state=0,
    )
    assert res.points is None
    assert res.hashes.shape == (12, 64)
    np.testing.assert_array_equal(res.labels, res.owner)
    for h, k, i in zip(res.hashes, res.owner, res.index):
        np.testing.assert_array_equal(h, res.hasher.transform(owners[k][i : i + 1])[0])


class Exploding(InProcessTransport):
    def request(self, party, message):
        raise AssertionError("a message was sent before the input was validated")


@pytest.mark.parametrize(
    "owners,validation,size,kw,arg",
    [
        ([np.zeros((5, 3)), np.zeros((5, 4))], np.zeros((2, 3)), 2, {}, "owners"),
        ([np.zeros((5, 3))], np.zeros((2, 4)), 2, {}, "validation"),
        ([np.full((5, 3), np.nan)], np.zeros((2, 3)), 2, {}, "owners"),
        ([np.zeros((5, 3))], np.full((2, 3), np.inf), 2, {}, "validation"),
        ([np.zeros((5, 3))], np.zeros((2, 3)), 0, {}, "size"),
        ([np.zeros((5, 3))], np.zeros((2, 3)), 6, {}, "size"),
        ([np.zeros((5, 3)), np.zeros((0, 3))], np.zeros((2, 3)), 2, {}, "owners"),
        ([np.zeros((5, 3))], np.zeros((0, 3)), 2, {}, "validation"),
        ([], np.zeros((2, 3)), 2, {}, "owners"),
        ([np.zeros((5, 3))], np.zeros((2, 3)), 2, {"method": "magic"}, "method"),
        ([np.zeros((5, 3))], np.zeros((2, 3)), 2, {"reveal": "all"}, "reveal"),
        ([np.zeros((5, 3))], np.zeros((2, 3)), 2, {"random_state": -1}, "random_state"),
        ([np.zeros((5, 3))], np.zeros((2, 3)), 2, {"gamma": 0}, "gamma"),
        ([np.zeros((5, 3))], np.zeros((2, 3)), 2, {"seed_set": np.zeros((3, 2))}, "seed_set"),
    ],
)
def test_bad_input_is_rejected_before_any_release(owners, validation, size, kw, arg):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.summarize(owners, validation, size, progress=False, transport=Exploding({}), **kw)
    assert e.value.argument == arg


@pytest.mark.slow
def test_a_seeded_run_does_not_depend_on_the_thread_count():
    script = (
        "import numpy as np, dpsumm, hashlib, dataclasses\n"
        "rng = np.random.default_rng(0)\n"
        "owners = [rng.normal(size=(3000, 6)) + k for k in range(3)]\n"
        "s = dataclasses.replace(dpsumm.accounting.paper_schedule(12, 3, dim=64), t_init=300)\n"
        "r = dpsumm.summarize(owners, rng.normal(size=(50, 6)), 12, seed_set=rng.normal(size=(20, 6)),\n"
        "                     method=dpsumm.PaperProtocol(schedule=s, dim=64), random_state=3, progress=False)\n"
        "n = dpsumm.summarize(owners, rng.normal(size=(50, 6)), 12, dpsumm.Nominations(dim=64, choice='hashes', purchase=dpsumm.Nominees()),\n"
        "                     random_state=3)\n"
        "print(hashlib.sha256(r.points.tobytes() + r.owner.tobytes() + r.index.tobytes() + n.points.tobytes()).hexdigest())\n"
    )
    assert len(digests_per_thread_count(script)) == 1


# -- replies of the wrong type, dtype or range (tests/corrupt_replies.py) ----------------------------------------

PAPER = dpsumm.PaperProtocol(dim=32)
PAPER_HASHES = dpsumm.PaperProtocol(dim=32, reveal="hashes")


@pytest.mark.parametrize(
    "method, kind, change, match",
    [
        (PAPER, "setup_reply", replace(n_rows=None), "malformed setup reply"),
        (PAPER, "setup_reply", replace(n_rows=float("nan")), "malformed setup reply"),
        (PAPER, "setup_reply", replace(n_features=np.zeros(3)), "malformed setup reply"),
        (PAPER, "bid", replace(round=np.zeros(2)), "malformed bid"),
        (PAPER, "point_reply", replace(token=np.zeros(2)), "malformed point reply"),
        (PAPER, "point_reply", replace(label=[1, 2]), "not one value"),
        (PAPER_HASHES, "point_reply", lambda r, m: dataclasses.replace(r, hash=np.full(32, 1e300)), "malformed hash"),
    ],
    ids=["rows-none", "rows-nan", "features-array", "round-array", "token-array", "label-list", "hash-1e300"],
)
def test_a_malformed_owner_reply_excludes_the_owner(method, kind, change, match):
    """Each used to raise a TypeError, ValueError or OverflowError from the aggregator's check, a numpy overflow
    warning, or (a label that is a list) a ValueError when the summary's labels were stacked."""
    corrupt_excluded(method, kind, change, match)


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda r, m: dataclasses.replace(r, mean_hash=r.mean_hash.astype(complex)), "malformed validation release"),
        (lambda r, m: dataclasses.replace(r, mean_hash=np.full_like(r.mean_hash, 1e300)), "float32 range"),
    ],
    ids=["complex", "beyond-float32"],
)
def test_a_malformed_validation_release_is_a_protocol_error(change, match):
    """A complex mean used to raise a ComplexWarning, one beyond float32 a numpy overflow warning."""
    corrupt_refused(PAPER, "validation_release", change, match)
