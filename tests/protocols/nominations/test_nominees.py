"""dpsumm.protocols.nominations.nominees (the default purchase): the aggregator buys exactly every owner's nominees
(``K * M`` rows, none twice, from the owner that nominated them), each owner's requests are ``g~`` and public numbers,
owners commit by digest only when the aggregator chooses on the exact kernel of raw rows, and the result's hashes are
the rows' h1.
"""

from __future__ import annotations

import numpy as np
import pytest

import dpsumm
from dpsumm.hashing import RFFHasher, hash_digests
from dpsumm.kernels import DEFAULT_CANDIDATE_FACTOR
from dpsumm.messages import NominationReply, NominationRequest, PurchaseReply, PurchaseRequest
from dpsumm.protocols.nominations.aggregator import STOCHASTIC_GREEDY_FACTOR, temperature_for
from dpsumm.protocols.nominations.method import NOMINEES_PER_SIZE
from federation_data import blobs
from recording import run_recorded

KW = dict(gamma=0.3, progress=False)


def of_type(messages, kind):
    """The messages of class ``kind`` among ``messages``, in order."""
    return [m for m in messages if isinstance(m, kind)]


def test_default_owners_commit_by_digest_and_the_result_hashes_are_the_rows_h1():
    owners, validation = blobs(seed=5, K=3, n=50)
    res = dpsumm.summarize(
        owners, validation, 10, method=dpsumm.Nominations(purchase=dpsumm.Nominees(), dim=64), random_state=1, **KW
    )
    assert res.accessed.hashes == 0 and res.accessed.total == sum(min(20, len(o)) for o in owners)
    np.testing.assert_array_equal(res.hashes, res.hasher.transform(res.points))
    # With purchase="winners" the aggregator chooses on hashes, so the owners send them.
    win = dpsumm.summarize(
        owners, validation, 10, method=dpsumm.Nominations(dim=64, purchase=dpsumm.Winners()), random_state=1, **KW
    )
    assert win.accessed.hashes == sum(min(20, len(o)) for o in owners)


def test_the_aggregator_buys_every_nominee_once_from_the_owner_that_nominated_it():
    """M = 12 nominees per owner, one owner holding only 7 rows: each owner is asked, in one purchase request, for
    exactly the tokens it nominated (min(M, n_k) distinct rows) and sells those rows; the aggregator sees
    3 * 12 + 7 raw rows, and the summary is rows of the named owners, from their nominees, none twice, bit for
    bit. The owners release nothing: their epsilon is 0 and both parties are certified."""
    owners, validation = blobs(seed=2, K=4, n=60)
    owners[3] = owners[3][:7]
    res, parties = run_recorded(
        dpsumm.Nominations(purchase=dpsumm.Nominees(), dim=64, nominees=12), owners, validation, 6, seed=4
    )
    nominated = {}
    for k, rows in enumerate(owners):
        party = parties[f"owner-{k}"]
        (offer,) = of_type(party.sent, NominationReply)
        (request,) = of_type(party.messages, PurchaseRequest)
        (sale,) = of_type(party.sent, PurchaseReply)
        assert len(offer.tokens) == len(set(offer.tokens.tolist())) == min(12, len(rows))
        np.testing.assert_array_equal(request.tokens, np.sort(offer.tokens))
        np.testing.assert_array_equal(sale.points, rows[request.tokens])
        nominated[k] = set(offer.tokens.tolist())
    assert res.accessed.per_owner == {"owner-0": 12, "owner-1": 12, "owner-2": 12, "owner-3": 7}
    assert res.accessed.total == 43 and res.extra["exchanges"] == 3
    pairs = list(zip(res.owner.tolist(), res.index.tolist()))
    assert len(res) == len(set(pairs)) == 6
    for (k, i), x in zip(pairs, res.points):
        assert i in nominated[k]
        np.testing.assert_array_equal(x, owners[k][i])
    assert res.privacy.events("owners") == [] and res.privacy.epsilon("owners", 1e-6) == 0.0
    assert res.privacy.certified("owners") and res.privacy.certified("validation")


def test_every_owner_is_asked_about_the_consumers_release_and_public_numbers_only():
    """Each owner's nomination request is g~ (the consumer's released vector, bit for bit) and public numbers: the
    requests of any two owners are equal in every field but the sample seed, a draw of the aggregator's own stream
    that a different validation set leaves as it is; the temperature is temperature_for the released noise."""
    owners, validation = blobs(seed=6)
    size = 8
    res, parties = run_recorded(
        dpsumm.Nominations(purchase=dpsumm.Nominees(), dim=64), owners, validation, size, seed=2
    )
    (g_tilde,) = parties["consumer"].released
    requests = [of_type(parties[f"owner-{k}"].messages, NominationRequest)[0] for k in range(4)]
    M = NOMINEES_PER_SIZE * size
    for r in requests:
        np.testing.assert_array_equal(r.target, g_tilde)
        assert (r.n_features, r.dim, r.gamma, r.hash_seed) == (5, 64, 0.3, 0)
        assert (r.nominees, r.candidates, r.reveal, r.commit) == (M, DEFAULT_CANDIDATE_FACTOR * M, "points", "digests")
        assert r.greedy_sample_factor == STOCHASTIC_GREEDY_FACTOR
        assert r.temperature == res.extra["temperature"] == temperature_for(res.extra["sigma"])
        public = {k: v for k, v in r.to_dict().items() if k not in ("target", "sample_seed")}
        assert public == {k: v for k, v in requests[0].to_dict().items() if k not in ("target", "sample_seed")}
    seeds = [r.sample_seed for r in requests]
    assert len(set(seeds)) == 4  # each owner draws its own sample
    _, other = run_recorded(
        dpsumm.Nominations(purchase=dpsumm.Nominees(), dim=64), owners, validation + 0.5, size, seed=2
    )
    moved = [of_type(other[f"owner-{k}"].messages, NominationRequest)[0] for k in range(4)]
    assert [r.sample_seed for r in moved] == seeds
    assert not np.array_equal(moved[0].target, requests[0].target)  # the comparison above can fail


@pytest.mark.parametrize(
    "reveal, choice, commit",
    [("points", "kernel", "digests"), ("points", "hashes", "hashes"), ("hashes", "hashes", "hashes")],
)
def test_owners_commit_by_digest_only_when_the_aggregator_chooses_on_the_raw_rows(reveal, choice, commit):
    """commitment(): a digest of each nominee's hash when the aggregator buys every nominee and chooses on the exact
    kernel of the rows (it never needs the hashes), the hashes otherwise."""
    assert dpsumm.Nominees().commitment(reveal, choice) == commit
    assert dpsumm.Nominations(purchase=dpsumm.Nominees(), reveal=reveal, choice=choice).resolved_choice == choice


@pytest.mark.parametrize("choice", ["kernel", "hashes"])
def test_a_run_commits_as_its_choice_says_and_every_commitment_is_of_the_nominated_row(choice):
    """End to end: with choice="kernel" every owner sends BLAKE2b digests of its nominees' h1 and no hash (the
    aggregator counts none); with choice="hashes" it sends the h1 hashes themselves. Either way each commitment is
    that of the row the token names."""
    owners, validation = blobs(seed=7, K=3, n=40)
    res, parties = run_recorded(
        dpsumm.Nominations(purchase=dpsumm.Nominees(), dim=64, choice=choice), owners, validation, 5, seed=1
    )
    hasher = RFFHasher(5, dim=64, gamma=0.3, seed=0)
    for k, rows in enumerate(owners):
        (offer,) = of_type(parties[f"owner-{k}"].sent, NominationReply)
        h1 = hasher.transform(rows[offer.tokens])
        if choice == "kernel":
            assert offer.hashes is None
            np.testing.assert_array_equal(offer.digests, hash_digests(h1))
        else:
            assert offer.digests is None
            np.testing.assert_array_equal(offer.hashes, h1)
    assert res.accessed.hashes == (0 if choice == "kernel" else 3 * 10)
    assert res.extra["choice"] == choice
    np.testing.assert_array_equal(res.hashes, hasher.transform(res.points))
