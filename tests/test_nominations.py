"""The nominations protocol end to end: exchanges, privacy properties, equality cases, faults, quality."""

from __future__ import annotations

import dataclasses

import pickle

import numpy as np
import pytest

import dpsumm
from dpsumm import metrics
from dpsumm.messages import (
    Message,
    NominationRequest,
    PurchaseReply,
    PurchaseRequest,
    TargetRelease,
)
from dpsumm.parties import ConsumerParty, OwnerParty
from dpsumm.protocols.nominations.aggregator import TEMPERATURE_FLOOR, TEMPERATURE_PER_SIGMA, temperature_for
from dpsumm.transport import InProcessTransport


def blobs(seed=0, K=4, n=60, f=5, m=40):
    rng = np.random.default_rng(seed)
    owners = [rng.normal(loc=k * 0.7, scale=0.5, size=(n, f)) for k in range(K)]
    validation = rng.normal(loc=1.0, scale=0.5, size=(m, f))
    return owners, validation


KW = dict(gamma=0.3, progress=False)


class Recorder:
    """Wrap a party: keep every message it receives, as bytes (pickled), in order."""

    def __init__(self, party):
        self.party = party
        self.received: list[bytes] = []

    def handle(self, message: Message) -> Message:
        d = message.to_dict()
        self.received.append(pickle.dumps({k: (v.tobytes() if isinstance(v, np.ndarray) else v) for k, v in d.items()}))
        return self.party.handle(message)


def run_recorded(owners, validation, size, seed, **kw):
    parties = {f"owner-{k}": Recorder(OwnerParty(np.asarray(o), None, f"owner-{k}")) for k, o in enumerate(owners)}
    parties["consumer"] = Recorder(ConsumerParty(np.asarray(validation), dpsumm.privacy.Csprng(seed).derive("consumer")))
    res = dpsumm.summarize(owners, validation, size, method=dpsumm.Nominations(dim=64), random_state=seed, transport=InProcessTransport(parties), **KW, **kw)
    return res, parties


# ------------------------------------------------------------------------------------ exchanges and privacy


def test_three_exchanges_and_what_each_party_receives():
    owners, validation = blobs()
    res, parties = run_recorded(owners, validation, 10, seed=3)
    assert res.extra["exchanges"] == 3
    assert len(parties["consumer"].received) == 1  # one release, once
    for k in range(len(owners)):
        kinds = [pickle.loads(b)["kind"] for b in parties[f"owner-{k}"].received]
        assert kinds == ["nomination_request", "purchase_request"]


def test_an_owners_messages_do_not_depend_on_another_owners_data():
    """Privacy of the owners (docs/design.md §4): owner 0 receives byte-identical messages whatever owner 1 holds."""
    owners, validation = blobs(seed=1)
    changed = [o.copy() for o in owners]
    changed[1] = np.random.default_rng(99).normal(loc=5.0, size=owners[1].shape)  # every row of owner 1 replaced
    _, a = run_recorded(owners, validation, 12, seed=5)
    _, b = run_recorded(changed, validation, 12, seed=5)
    for k in (0, 2, 3):
        assert a[f"owner-{k}"].received == b[f"owner-{k}"].received
    # ... and they do change with the validation set (the one DP release), so the comparison can fail
    _, c = run_recorded(owners, validation + 0.5, 12, seed=5)
    assert a["owner-0"].received != c["owner-0"].received


def test_ledger_certifies_every_party_by_default():
    owners, validation = blobs()
    budget = dpsumm.Budget(validation_epsilon=0.8, validation_delta=1e-6)
    res = dpsumm.summarize(owners, validation, 10, method=dpsumm.Nominations(dim=64), privacy=budget, **KW)
    led = res.privacy
    assert led.epsilon("owners", 1e-6) == 0.0
    eps_v = led.epsilon("validation", 1e-6)
    assert 0.7 < eps_v <= 0.8 + 1e-9
    assert led.certified("owners") and led.certified("validation")
    assert res.accessed.total == sum(min(20, len(o)) for o in owners)  # nominees = 2 * size by default
    # the owners commit by digest (docs/design.md §3): the aggregator receives no hash of any row
    assert res.accessed.hashes == 0 and res.accessed.validation_rows == len(validation)


def test_purchase_winners_sees_size_rows_and_is_marked_uncertified():
    owners, validation = blobs()
    res = dpsumm.summarize(owners, validation, 10, method=dpsumm.Nominations(purchase=dpsumm.Winners(), dim=64), random_state=2, **KW)
    assert len(res) == 10 and res.accessed.total == 10
    assert not res.privacy.certified("owners")
    assert any("OUTSIDE" in n for n in res.privacy.notes())
    same = dpsumm.summarize(owners, validation, 10, method=dpsumm.Nominations(purchase=dpsumm.Nominees(), choice='hashes', dim=64), random_state=2, **KW)
    assert np.array_equal(res.index, same.index) and np.array_equal(res.owner, same.owner)


def test_reveal_hashes_gives_the_aggregator_no_raw_row():
    owners, validation = blobs()
    labels = [np.full(len(o), k) for k, o in enumerate(owners)]
    res = dpsumm.summarize([dpsumm.Owner(o, labels=lab) for o, lab in zip(owners, labels)], validation, 10, method=dpsumm.Nominations(reveal='hashes', dim=64), random_state=4, **KW)
    assert res.points is None and res.accessed.total == 0
    assert np.array_equal(res.labels, res.owner)
    ref = dpsumm.summarize(owners, validation, 10, method=dpsumm.Nominations(choice='hashes', dim=64), random_state=4, **KW)
    assert np.array_equal(res.hashes, ref.hashes)


def test_temperature_rule():
    assert temperature_for(0.0) == TEMPERATURE_FLOOR
    assert temperature_for(1.0) == TEMPERATURE_PER_SIGMA
    with pytest.raises(dpsumm.DpsummError):
        temperature_for(float("nan"))


# ------------------------------------------------------------------------------------ equality cases


def brute_force_central_greedy(owners, validation, size, hasher):
    """Greedy on J's hashed increment, written out: every candidate's score recomputed from scratch."""
    H = [hasher.transform(o).astype(np.float64) for o in owners]
    g = hasher.transform(validation).astype(np.float64).mean(0)
    chosen: list[tuple[int, int]] = []
    for _ in range(size):
        q = len(chosen)
        mean_s = np.mean([H[k][i] for k, i in chosen], axis=0) if chosen else np.zeros_like(g)
        best = None
        for k, Hk in enumerate(H):
            for i in range(len(Hk)):
                if (k, i) in chosen:
                    continue
                score = Hk[i] @ g - q / (q + 1) * (Hk[i] @ mean_s)
                if best is None or score > best[0] + 1e-12:
                    best = (score, k, i)
        chosen.append((best[1], best[2]))
    return chosen


def test_central_greedy_equals_brute_force():
    owners, validation = blobs(seed=7, K=3, n=25)
    res = dpsumm.summarize(owners, validation, 12, method=dpsumm.CentralGreedy(dim=64), **KW)
    hasher = res.hasher
    assert list(zip(res.owner.tolist(), res.index.tolist())) == brute_force_central_greedy(owners, validation, 12, hasher)
    assert res.privacy is None and res.accessed.total == sum(len(o) for o in owners)


def test_nominations_with_every_row_nominated_equals_central_greedy():
    owners, validation = blobs(seed=8, K=3, n=30)
    central = dpsumm.summarize(owners, validation, 15, method=dpsumm.CentralGreedy(dim=64), **KW)
    nom = dpsumm.summarize(owners, validation, 15, method=dpsumm.Nominations(nominees=30, choice='hashes', dim=64), random_state=1, **KW)
    assert np.array_equal(nom.owner, central.owner) and np.array_equal(nom.index, central.index)
    assert np.array_equal(nom.points, central.points)


def test_kernel_choice_with_every_row_nominated_equals_exact_greedy():
    owners, validation = blobs(seed=9, K=3, n=30)
    exact = dpsumm.summarize(owners, validation, 15, method=dpsumm.ExactGreedy(dim=64), **KW)
    nom = dpsumm.summarize(owners, validation, 15, method=dpsumm.Nominations(nominees=30, dim=64), random_state=1, **KW)
    assert nom.extra["choice"] == "kernel" and nom.accessed.validation_raw_rows == len(validation)
    assert np.array_equal(nom.owner, exact.owner) and np.array_equal(nom.index, exact.index)


def test_exact_and_central_greedy_keep_no_seed_rows_paper_greedy_does():
    owners, validation = blobs(seed=2)
    seed_rows = np.random.default_rng(0).uniform(-1, 3, size=(20, 5))
    a = dpsumm.summarize(owners, validation, 10, method=dpsumm.ExactGreedy(dim=64), seed_set=seed_rows, **KW)
    b = dpsumm.summarize(owners, validation, 10, method=dpsumm.ExactGreedy(dim=64), seed_set=seed_rows[:3], **KW)
    assert np.array_equal(a.index, b.index) and np.array_equal(a.owner, b.owner)  # the seed set plays no part
    c = dpsumm.summarize(owners, validation, 10, method=dpsumm.PaperGreedy(dim=64), seed_set=seed_rows, **KW)
    d = dpsumm.summarize(owners, validation, 10, method=dpsumm.PaperGreedy(dim=64), seed_set=seed_rows[:3], **KW)
    assert not (np.array_equal(c.index, d.index) and np.array_equal(c.owner, d.owner))


# ------------------------------------------------------------------------------------ argument checks


@pytest.mark.parametrize("method, kw, arg", [
    ("central-greedy", dict(privacy=dpsumm.Budget(validation_epsilon=1, validation_delta=1e-6)), "privacy"),
    (dict(nominees=1), {}, "nominees"),  # 4 owners x 1 < size 10
    (dict(nominees=0), {}, "nominees"),
    (dict(candidates=5, nominees=20), {}, "candidates"),
    (dict(candidates=2**63 + 5), {}, "candidates"),
    (dict(temperature=-1.0), {}, "temperature"),
    (dict(purchase="all"), {}, "purchase"),
    (dict(validation_release="laplace"), {}, "validation_release"),
    (dict(choice="kernel", purchase=dpsumm.Winners()), {}, "choice"),
    (dict(choice="exact"), {}, "choice"),
    (dict(owner_greedy="lazy"), {}, "owner_greedy"),
    ({}, dict(privacy=dpsumm.Budget(validation_epsilon=1, validation_delta=0.05)), "validation_delta"),  # >= 1/|D_v|
])
def test_bad_arguments_name_the_argument(method, kw, arg):
    owners, validation = blobs()
    with pytest.raises(dpsumm.DpsummError) as info:
        m = method if isinstance(method, str) else dpsumm.Nominations(dim=64, **method)
        dpsumm.summarize(owners, validation, 10, m, **{**KW, **kw})
    assert info.value.argument == arg


def test_an_owner_named_like_the_consumer_and_a_transport_lacking_owners_are_refused():
    owners, validation = blobs()
    named = [dpsumm.Owner(o, name=n) for o, n in zip(owners, ["a", "consumer", "c", "d"])]
    with pytest.raises(dpsumm.InvalidParameterError, match="consumer") as info:
        dpsumm.summarize(named, validation, 10, **KW)
    assert info.value.argument == "owners"
    parties = {"owner-0": OwnerParty(np.asarray(owners[0]), None, "owner-0"),
               "consumer": ConsumerParty(np.asarray(validation), dpsumm.privacy.Csprng(0))}
    with pytest.raises(dpsumm.InvalidParameterError, match="owner-1") as info:
        dpsumm.summarize(owners, validation, 10, transport=InProcessTransport(parties), **KW)
    assert info.value.argument == "transport"


# ------------------------------------------------------------------------------------ faults


class Faulty:
    def __init__(self, party, fault):
        self.party, self.fault = party, fault

    def handle(self, m: Message) -> Message:
        r = self.party.handle(m)
        f = self.fault
        if isinstance(m, NominationRequest):
            # The owner commits with h1 hashes or (purchase="nominees", the default) BLAKE2b digests of them:
            # each fault corrupts whichever it sent.
            field = "digests" if r.digests is not None else "hashes"
            c = getattr(r, field)
            if f == "crash":
                raise RuntimeError("owner crashed")
            if f == "nan":  # a non-finite hash; a digest that is not bytes
                h = c.astype(np.float64).copy(); h[0, 0] = np.nan
                return dataclasses.replace(r, **{field: h})
            if f == "too-many":
                return dataclasses.replace(r, tokens=np.arange(len(r.tokens) + 1), **{field: np.vstack([c, c[:1]])})
            if f == "too-few":
                return dataclasses.replace(r, tokens=r.tokens[:-1], **{field: c[:-1]})
            if f == "inflated-hash":  # a hash outside h1's range; a digest of no row it holds (caught at purchase)
                h = c.copy()
                if field == "hashes":
                    h[:, :] = np.sqrt(2.0 / h.shape[1]) * 1.5
                else:
                    h[:, 0] ^= 0xFF
                return dataclasses.replace(r, **{field: h})
            if f == "repeated":
                t = r.tokens.copy(); t[1] = t[0]
                return dataclasses.replace(r, tokens=t)
            if f == "wrong-type":
                return TargetRelease(noisy_mean=np.zeros(3), exact_mean=np.zeros(3), n_rows=1, sigma=0.0, granularity=0.0)
        if isinstance(m, PurchaseRequest):
            if f == "purchase-crash":
                raise RuntimeError("gone")
            if f == "altered-row":
                pts = r.points.copy(); pts[0, 0] += 1e-6
                return PurchaseReply(tokens=r.tokens, points=pts, labels=r.labels)
            if f == "other-row":
                pts = r.points.copy(); pts[0] = pts[-1]
                return PurchaseReply(tokens=r.tokens, points=pts, labels=r.labels)
            if f == "nan-row":
                pts = r.points.copy(); pts[0, 0] = np.nan
                return PurchaseReply(tokens=r.tokens, points=pts, labels=r.labels)
        return r


FAULTS = ["crash", "nan", "too-many", "too-few", "inflated-hash", "repeated", "wrong-type", "purchase-crash",
          "altered-row", "other-row", "nan-row"]


@pytest.mark.parametrize("purchase", [dpsumm.Nominees(), dpsumm.Winners()], ids=["nominees", "winners"])
@pytest.mark.parametrize("fault", FAULTS)
def test_a_faulty_owner_is_excluded_and_the_run_completes(fault, purchase):
    owners, validation = blobs(seed=3, K=4, n=60)
    parties = {f"owner-{k}": OwnerParty(o, None, f"owner-{k}") for k, o in enumerate(owners)}
    parties["owner-1"] = Faulty(parties["owner-1"], fault)
    parties["consumer"] = ConsumerParty(validation, dpsumm.privacy.Csprng(0).derive("consumer"))
    res = dpsumm.summarize(owners, validation, 20, method=dpsumm.Nominations(purchase=purchase, dim=64), random_state=0, transport=InProcessTransport(parties), **KW)
    excluded = [e for e in res.events if e["event"] == "excluded"]
    if purchase.name == "winners" and fault in ("purchase-crash", "altered-row", "other-row", "nan-row") and 1 not in set(
            dpsumm.summarize(owners, validation, 20, method=dpsumm.Nominations(purchase=dpsumm.Winners(), dim=64), random_state=0, **KW).owner.tolist()):
        pytest.skip("owner-1 has no winner here, so it is never asked to sell")
    assert [e["owner"] for e in excluded] == ["owner-1"], res.events
    if purchase.name == "nominees" and fault in ("inflated-hash", "altered-row", "other-row"):
        # committed by digest: a forged digest or a row that is not the nominated one is caught at the purchase
        assert excluded[0]["phase"] == "purchase" and "nominated digest" in excluded[0]["reason"], excluded
    assert len(res) == 20
    assert 1 not in set(res.owner.tolist())
    pairs = list(zip(res.owner.tolist(), res.index.tolist()))
    assert len(set(pairs)) == 20
    for (k, i), x in zip(pairs, res.points):
        assert np.array_equal(x, owners[k][i])


# ------------------------------------------------------------------------------------ quality


def test_on_digits_nominations_beats_uniform_in_every_repeat():
    pytest.importorskip("sklearn")
    for rep in range(3):
        split = dpsumm.datasets.digits_label_split(random_state=rep)
        gamma = dpsumm.experiments.median_gamma(split.seed_set)
        for size in (20, 40):
            nom = dpsumm.summarize(split.owners, split.validation, size, gamma=gamma, random_state=rep, progress=False)
            uni = dpsumm.summarize(split.owners, split.validation, size, method="uniform", gamma=gamma, random_state=rep)
            assert metrics.mmd2(nom.points, split.validation, gamma) < metrics.mmd2(uni.points, split.validation, gamma)


def test_owner_greedy_default_is_stochastic_and_exact_is_available():
    """The default owners' greedy is the stochastic one with the library's factor; "exact" switches it off."""
    from dpsumm.protocols.nominations.aggregator import STOCHASTIC_GREEDY_FACTOR

    owners, validation = blobs(seed=12, K=3, n=60)
    a = dpsumm.summarize(owners, validation, 10, method=dpsumm.Nominations(choice='hashes', dim=64), random_state=3, **KW)
    assert a.extra["greedy_sample_factor"] == STOCHASTIC_GREEDY_FACTOR
    b = dpsumm.summarize(owners, validation, 10, method=dpsumm.Nominations(choice='hashes', owner_greedy='exact', dim=64), random_state=3, **KW)
    assert b.extra["greedy_sample_factor"] is None
    assert a.privacy is not None and b.privacy is not None
    assert len(a.index) == len(b.index) == 10


def test_hash_digests_are_blake2b_of_the_little_endian_float32_bytes():
    import hashlib

    from dpsumm.hashing import DIGEST_BYTES, hash_digests
    H = dpsumm.RFFHasher(3, dim=8, gamma=0.5, seed=1).transform(np.arange(12.0).reshape(4, 3))
    want = np.array([list(hashlib.blake2b(np.asarray(row, "<f4").tobytes(), digest_size=16).digest()) for row in H], np.uint8)
    np.testing.assert_array_equal(hash_digests(H), want)
    np.testing.assert_array_equal(hash_digests(H.astype(">f4")), want)  # byte order of the input does not matter
    assert hash_digests(H).shape == (4, DIGEST_BYTES) and hash_digests(H[:0]).shape == (0, DIGEST_BYTES)
    one_ulp = H.copy(); one_ulp[2, 5] = np.nextafter(one_ulp[2, 5], np.float32(1))
    assert (hash_digests(one_ulp) != want).any(1).tolist() == [False, False, True, False]
    with pytest.raises(dpsumm.InvalidParameterError, match="hashes"):
        hash_digests(np.zeros(3))


def test_default_owners_commit_by_digest_and_the_result_hashes_are_the_rows_h1():
    owners, validation = blobs(seed=5, K=3, n=50)
    res = dpsumm.summarize(owners, validation, 10, method=dpsumm.Nominations(dim=64), random_state=1, **KW)
    assert res.accessed.hashes == 0 and res.accessed.total == sum(min(20, len(o)) for o in owners)
    np.testing.assert_array_equal(res.hashes, res.hasher.transform(res.points))
    # With purchase="winners" the aggregator chooses on hashes, so the owners send them.
    win = dpsumm.summarize(owners, validation, 10, method=dpsumm.Nominations(dim=64, purchase=dpsumm.Winners()), random_state=1, **KW)
    assert win.accessed.hashes == sum(min(20, len(o)) for o in owners)
