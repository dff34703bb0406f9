"""dpsumm.protocols.nominations.winners: the aggregator chooses on the nominees' hashes and buys exactly the ``size``
winners, each from the owner that nominated it; the ledger marks the owners uncertified, saying why; an owner that
fails to sell is excluded and the choice is made again without its nominees; the kernel choice is refused."""

from __future__ import annotations

import math

import numpy as np

import dpsumm
from corrupt_replies import replace
from corrupt_replies import run as corrupt_run
from dpsumm.accounting.ledger import NOT_CERTIFIED
from dpsumm.messages import NominationReply, PurchaseRequest
from dpsumm.parties import OwnerParty
from federation_data import blobs
from recording import Recorder, recorded_parties, run_recorded
from refusal import refused

KW = dict(gamma=0.3, progress=False)

WINNERS = dpsumm.Nominations(purchase=dpsumm.Winners(), dim=64)


def purchase_requests(party):
    """The purchase requests a recorded party received, in order."""
    return [m for m in party.messages if isinstance(m, PurchaseRequest)]


def test_purchase_winners_sees_size_rows_and_is_marked_uncertified():
    owners, validation = blobs()
    res = dpsumm.summarize(owners, validation, 10, method=WINNERS, random_state=2, **KW)
    assert len(res) == 10 and res.accessed.total == 10
    assert not res.privacy.certified("owners")
    assert any("OUTSIDE" in n for n in res.privacy.notes())
    same = dpsumm.summarize(
        owners,
        validation,
        10,
        method=dpsumm.Nominations(purchase=dpsumm.Nominees(), choice="hashes", dim=64),
        random_state=2,
        **KW,
    )
    assert np.array_equal(res.index, same.index) and np.array_equal(res.owner, same.owner)


def test_each_owner_is_asked_for_exactly_its_winners_and_nothing_else():
    """One purchase request per owner with a winner, holding exactly that owner's winners (among its nominees); no
    request to an owner without one. The aggregator sees the K * M nominees' hashes and exactly ``size`` raw rows,
    each the named owner's row bit for bit."""
    owners, validation = blobs(seed=3)
    res, parties = run_recorded(WINNERS, owners, validation, 10, seed=5)
    assert len(set(res.owner.tolist())) >= 2  # several owners sell: the per-owner checks below mean something
    for k in range(len(owners)):
        party = parties[f"owner-{k}"]
        (offer,) = [r for r in party.sent if isinstance(r, NominationReply)]
        assert offer.digests is None and offer.hashes.shape == (20, 64)  # committed by hash: the choice reads them
        won = np.sort(res.index[res.owner == k])
        requests = purchase_requests(party)
        if len(won):
            (request,) = requests
            np.testing.assert_array_equal(request.tokens, won)
            assert set(won.tolist()) <= set(offer.tokens.tolist())
        else:
            assert requests == []
        assert res.accessed.per_owner[f"owner-{k}"] == len(won)
    assert res.accessed.total == 10 and res.accessed.hashes == 4 * 20 and res.extra["exchanges"] == 3
    for k, i, x in zip(res.owner, res.index, res.points):
        np.testing.assert_array_equal(x, owners[k][i])


def test_the_ledger_says_the_owners_are_not_certified_and_why():
    """An unseeded run: the ledger records the purchase request as outside the guarantee (Winners.uncertified), the
    owners' epsilon is infinite, the validation set's release stays certified, and the run is private but NOT
    certified."""
    owners, validation = blobs(seed=1)
    res = dpsumm.summarize(owners, validation, 8, method=WINNERS, **KW)
    led = res.privacy
    assert led.uncertified == [
        {"party": "owners", "label": "the Winners purchase's request", "reason": dpsumm.Winners.uncertified}
    ]
    assert not led.certified("owners") and led.epsilon("owners", 1e-6) == math.inf
    assert led.certified("validation") and 0 < led.epsilon("validation", 1e-6) <= 1.0
    assert res.certification().status == NOT_CERTIFIED
    assert any(dpsumm.Winners.uncertified in reason for reason in res.certification().reasons)


class Refuses:
    """An owner that nominates honestly, then fails whenever it is asked to sell (``when``: the purchase), or is
    gone from the start (``when``: every request)."""

    def __init__(self, party, when):
        self.party, self.when = party, when

    def handle(self, message):
        if isinstance(message, self.when):
            raise RuntimeError("the owner is gone")
        return self.party.handle(message)


def test_an_owner_that_fails_to_sell_is_excluded_and_the_choice_is_made_again_without_it():
    """The owner with the most winners of an honest run fails at the purchase: it was asked for exactly its honest
    winners, it is excluded with one event, and the aggregator chooses again without its nominees, buying the new
    winners in a second purchase (4 exchanges), never a row twice. The summary is the one of a run in which that
    owner was gone from the start (the others' nominations and the release are the same): size rows of the others,
    bit for bit."""
    owners, validation = blobs(seed=4)
    honest, _ = run_recorded(WINNERS, owners, validation, 10, seed=3)
    k = int(np.bincount(honest.owner).argmax())
    name = f"owner-{k}"

    def run_with(when):
        parties = recorded_parties(owners, validation, 3)
        parties[name] = Recorder(Refuses(OwnerParty(np.asarray(owners[k]), None, name), when))
        return run_recorded(WINNERS, owners, validation, 10, 3, parties=parties)

    res, parties = run_with(PurchaseRequest)
    (asked,) = purchase_requests(parties[name])
    np.testing.assert_array_equal(asked.tokens, np.sort(honest.index[honest.owner == k]))
    excluded = [e for e in res.events if e["event"] == "excluded"]
    assert [(e["owner"], e["phase"]) for e in excluded] == [(name, "purchase")]
    assert res.extra["exchanges"] == 4 and res.accessed.per_owner[name] == 0
    assert len(res) == 10 and k not in res.owner.tolist()
    for j in range(len(owners)):
        if j != k:
            tokens = np.concatenate([r.tokens for r in purchase_requests(parties[f"owner-{j}"])] or [np.zeros(0)])
            assert len(tokens) == len(set(tokens.tolist())) == res.accessed.per_owner[f"owner-{j}"]
    for j, i, x in zip(res.owner, res.index, res.points):
        np.testing.assert_array_equal(x, owners[j][i])
    gone, _ = run_with(object)
    assert [e["phase"] for e in gone.events if e["event"] == "excluded"] == ["nominations"]
    np.testing.assert_array_equal(res.owner, gone.owner)
    np.testing.assert_array_equal(res.index, gone.index)


def test_only_the_hash_choice_applies_and_with_reveal_hashes_only_the_winners_labels_are_bought():
    """choice="kernel" scores raw rows, which the purchase buys only after choosing: refused naming `choice`. The
    default choice is on the hashes, whatever the reveal, and the owners commit by hash. With reveal="hashes" the
    aggregator gets no raw row, only the ``size`` winners' labels."""
    error = refused(lambda: dpsumm.Nominations(purchase=dpsumm.Winners(), choice="kernel"), "choice")
    assert "hashes" in str(error)
    for reveal in ("points", "hashes"):
        method = dpsumm.Nominations(purchase=dpsumm.Winners(), reveal=reveal)
        assert method.resolved_choice == "hashes"
        assert method.purchase.commitment(reveal, method.resolved_choice) == "hashes"
    owners, validation = blobs(seed=2)
    labels = [np.arange(len(o)) * 10 + k for k, o in enumerate(owners)]  # each row's label names its owner and index
    res = dpsumm.summarize(
        [dpsumm.Owner(o, labels=y) for o, y in zip(owners, labels)],
        validation,
        6,
        method=WINNERS.set_params(reveal="hashes"),
        random_state=0,
        **KW,
    )
    assert res.points is None and res.accessed.total == 0 and len(res) == 6
    np.testing.assert_array_equal(res.labels, res.index * 10 + res.owner)


def test_rows_an_owner_sends_with_reveal_hashes_are_dropped():
    """With reveal="hashes" the aggregator buys labels only: rows an owner sends anyway (here, three numbers) used to
    be stored as the winners' rows, a numpy broadcast ValueError. They are dropped; the run completes."""
    method = dpsumm.Nominations(dim=32, purchase=dpsumm.Winners(), reveal="hashes")
    result = corrupt_run(method, "owner-0", "purchase_reply", replace(points=np.zeros(3)))
    assert len(result) == 8 and result.points is None
