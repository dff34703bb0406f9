"""The label purchase of the nominations protocol (dpsumm.protocols.nominations.by_label, ``ByLabel``;
docs/explanation/label-purchase.md): runs that certify every party and buy only wanted labels, the tilt,
faulty owners and consumers, bad options, and an adversarial privacy review (the ledger equals an independent
accounting; an owner's view depends on the others only through their releases; the owners' relation named).
"""

from __future__ import annotations

import dataclasses
import json
import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpsumm
from dpsumm import InvalidParameterError, accounting
from dpsumm.errors import ProtocolError
from dpsumm.messages import Message
from dpsumm.parties import (
    ConsumerParty,
    OwnerParty,
    owner_stream,
)
from dpsumm.protocols.nominations.cell_messages import CellRelease, CellSale, CellSaleRequest
from federation_data import label_shift
from recording import recorded_parties, run_recorded
from refusal import refused


def test_purchase_factor_is_capped():
    refused(lambda: dpsumm.ByLabel(label_set=(0, 1), purchase_factor=1e300), "purchase_factor")
    refused(lambda: dpsumm.ByLabel(label_set=(0, 1), purchase_factor=0.5), "purchase_factor")
    refused(lambda: dpsumm.ByLabel(label_set={0: 1}), "label_set")


LABELS = (0, 1, 2)


METHOD = dpsumm.Nominations(dim=64, purchase=dpsumm.ByLabel(label_set=LABELS))


def tilted(share):
    """The label method with ``sale_tilt_share=share``."""
    return METHOD.set_params(purchase=METHOD.purchase.set_params(sale_tilt_share=share))


TILTED = tilted(0.3)


KW = dict(method=METHOD, gamma=0.3, progress=False)


def labelled_owners(owners, labels):
    """Each owner's rows with its labels, as ``dpsumm.Owner``."""
    return [dpsumm.Owner(o, labels=y) for o, y in zip(owners, labels)]


def summarize_labels(data, size, **kw):
    """``dpsumm.summarize`` of ``data = (owners, labels, validation, validation labels)`` (the parties the API
    builds; ``KW`` and random_state 0, ``kw`` on top)."""
    owners, labels, validation, yv = data
    return dpsumm.summarize(
        labelled_owners(owners, labels), validation, size, validation_labels=yv, **{"random_state": 0, **KW, **kw}
    )


def label_parties(data, seed=0):
    """The recorded in-process parties of a run on ``data`` seeded with ``seed`` (owners and consumer labelled)."""
    owners, labels, validation, yv = data
    return recorded_parties(owners, validation, seed, labels=labels, validation_labels=yv)


def label_run(method, data, size, seed=0, **kw):
    """A seeded run of ``method`` on ``data`` through recorded parties (``kw``: ``replace``, ``values``, ``parties``
    and summarize's options): the result and the parties."""
    owners, labels, validation, yv = data
    return run_recorded(method, owners, validation, size, seed, labels=labels, validation_labels=yv, **kw)


def sale_requests(parties):
    """Every sale request the owners among ``parties`` received, in order, owner by owner."""
    return [
        m for name, p in parties.items() if name != "consumer" for m in p.messages if isinstance(m, CellSaleRequest)
    ]


def test_owners_of_one_distribution_draw_their_small_sales_uniformly_in_a_run():
    """30 owners of one distribution share each label's cell; asked for a few rows each of the wanted label, they
    are told to draw them uniformly (fewer rows asked than owners asked), and the run still buys at most 3 x size,
    fills the summary and certifies both parties."""
    rng = np.random.default_rng(5)
    K, n = 30, 90
    owners, labels = [], []
    for _ in range(K):
        y = rng.integers(0, 3, size=n)
        owners.append(rng.normal(loc=y[:, None] * 1.5, scale=0.5, size=(n, 4)))
        labels.append(y)
    yv = np.full(60, 2)
    validation = rng.normal(loc=3.0, scale=0.5, size=(60, 4))
    res, parties = label_run(METHOD, (owners, labels, validation, yv), 20)
    modes = [m.key_herded for m in sale_requests(parties)]
    assert all(m is not None and m.dtype == np.bool_ for m in modes)
    assert len(modes) >= 10 and sum(not m[2] for m in modes) >= 10  # label 2's sales: uniform draws
    assert len(res) == 20 and res.accessed.total <= 60
    assert res.privacy.certified("owners") and res.privacy.certified("validation")


def test_a_run_certifies_every_party_buys_at_most_three_times_size_and_only_wanted_labels():
    res = summarize_labels(label_shift(), 20)
    led = res.privacy
    assert led.certified("owners") and led.certified("validation")
    assert 0.97 < led.epsilon("owners", 1e-6) <= 1.0
    # the consumer's histogram: the discrete Laplace at scale 2 / epsilon_v, pure epsilon_v-DP (at any delta)
    # (the tight accountant's PLD gives 1 - 2e-6 at delta = 1e-6: the pure bound is reached with probability > 1e-6)
    assert [type(e).__name__ for e in led.events("validation")] == ["LaplaceEvent"]
    for delta in (1e-6, 1e-12):
        assert 0.9999 < led.epsilon("validation", delta) <= 1.0
    assert res.accessed.total <= 3 * 20 and res.accessed.hashes == 0
    assert len(res) == 20 and sum(res.extra["quotas"].values()) == res.accessed.total
    # Label 1 (no validation row) is bought only for the noise on its count: most of the purchase is labels 0 and 2.
    bought = np.sum([q for q in res.extra["label_quotas"].values()], axis=0)
    assert bought[0] > 0 and bought[2] > bought[0] and bought[1] <= bought.sum() / 3
    assert res.extra["owner_epsilon"] == pytest.approx(1.0)
    assert "NOT private" in repr(res)


def test_with_the_tilt_the_consumer_makes_two_releases_that_compose_within_its_budget():
    """``sale_tilt_share=0.3``: the consumer's histogram at 0.7 epsilon_v (the discrete Laplace at scale 2 / 0.7,
    pure) and its g~ (the discrete Gaussian at (0.3 epsilon_v, 1e-6)), composed by the ledger below epsilon_v = 1 at
    delta_v = 1e-6; every owner's sale request carries g~ (d values) and the temperature max(0.2, 5 sigma)."""
    res, parties = label_run(TILTED, label_shift(), 20)
    asked = sale_requests(parties)
    led = res.privacy
    assert led.certified("validation") and led.certified("owners")
    events = led.events("validation")
    assert sorted(type(e).__name__ for e in events) == ["GaussianEvent", "LaplaceEvent"]
    laplace = next(e for e in events if isinstance(e, accounting.LaplaceEvent))
    assert laplace.epsilon == pytest.approx(0.7) and laplace.scale == pytest.approx(2 / 0.7, rel=1e-5)
    assert 0.98 < led.epsilon("validation", 1e-6) <= 1.0
    temperature = max(0.2, 5 * res.extra["sigma"])
    assert res.extra["temperature"] == pytest.approx(temperature)
    assert asked and all(
        np.asarray(m.target).shape == (64,) and m.temperature == pytest.approx(temperature) for m in asked
    )
    assert len(res) == 20 and res.accessed.total <= 60 and res.extra["exchanges"] == 4


def test_owners_short_of_a_label_sell_other_rows_so_that_the_summary_is_full():
    """Owner a holds 60 rows of label 0 (the only label the consumer has) and 40 of label 1; owner b 100 of label 2.
    With counts released at sigma ~ 14, the aggregator often asks a for more than its 60 rows of label 0 and, the
    ask being >= size, for nothing else: before owners made up a shortfall from their other rows, 4 of these 20
    seeds gave a summary shorter than size (60, 60, 60 and 56 rows of 70)."""
    rng = np.random.default_rng(0)
    A = rng.normal(0, 1, (100, 4))
    yA = np.array([0] * 60 + [1] * 40)
    A[yA == 1] += 3
    B = rng.normal(5, 1, (100, 4))
    owners = [dpsumm.Owner(A, labels=yA, name="a"), dpsumm.Owner(B, labels=np.full(100, 2), name="b")]
    V = rng.normal(0, 1, (40, 4))
    for seed in range(20):
        res = dpsumm.summarize(owners, V, 70, validation_labels=np.zeros(40, int), random_state=seed, **KW)
        asked = {o: sum(q) for o, q in res.extra["label_quotas"].items()}
        assert len(res) == 70 and not [e for e in res.events if e.get("event") in ("short", "excluded")], seed
        # each owner sold what it was asked for, or all its rows
        assert res.accessed.per_owner == {o: min(asked[o], 100) for o in asked}, seed


def test_the_label_purchase_beats_uniform_sampling_on_a_label_shift():
    """The point of the purchase: on a label shift its summary's MMD² is below uniform sampling's."""
    from dpsumm.metrics import mmd2

    data = label_shift(seed=2, n=300)
    owners, _, validation, _ = data
    ours, uni = [], []
    for seed in range(3):
        res = summarize_labels(data, 30, random_state=seed)
        ours.append(mmd2(res.points, validation, 0.3))
        u = dpsumm.summarize(owners, validation, 30, "uniform", gamma=0.3, random_state=seed, progress=False)
        uni.append(mmd2(u.points, validation, 0.3))
    assert np.mean(ours) < 0.5 * np.mean(uni)


def test_an_owners_view_changes_only_through_released_values():
    """Owner 0's messages are a function of its own data, public numbers and the other parties' DP releases:
    replace every other owner's rows and the consumer's, feed the aggregator the first run's releases, and owner 0
    receives byte-identical messages; without that substitution they differ (the test can fail)."""
    owners, labels, validation, yv = label_shift(seed=3)
    rng = np.random.default_rng(9)
    changed = [owners[0]] + [rng.normal(loc=3.0, size=o.shape) for o in owners[1:]]
    changed_labels = [labels[0]] + [rng.choice(3, size=len(y), p=[0.05, 0.05, 0.9]) for y in labels[1:]]
    yv2 = np.where(rng.random(len(yv)) < 0.5, 1, yv)
    _, a = label_run(METHOD, (owners, labels, validation, yv), 15, seed=5)
    kinds = [pickle.loads(b)["kind"] for b in a["owner-0"].received]
    assert kinds == ["cell_release_request", "cell_sale_request"]
    _, b = label_run(METHOD, (changed, changed_labels, validation, yv2), 15, seed=5)
    assert a["owner-0"].received[0] == b["owner-0"].received[0]  # the first request is public
    assert a["owner-0"].received != b["owner-0"].received
    released = {name: a[name].replies for name in a if name != "owner-0"}
    _, c = label_run(METHOD, (changed, changed_labels, validation, yv2), 15, seed=5, replace=released)
    assert a["owner-0"].received == c["owner-0"].received


class Liar(OwnerParty):
    """An owner that misreports its noise, sells labels it was not asked for, or sells rows without labels."""

    def __init__(self, data, labels, mode, name="owner-1"):
        super().__init__(data, labels, name, rng=owner_stream(0, name))
        self.mode = mode

    def handle(self, message: Message) -> Message:
        reply = super().handle(message)
        if self.mode == "sigma" and isinstance(reply, CellRelease):
            return CellRelease(
                n_rows=reply.n_rows, values=reply.values, sigma=reply.sigma * 0.9, granularity=reply.granularity
            )
        if isinstance(reply, CellSale) and len(reply.tokens):
            if self.mode in ("label", "hidden"):
                # "label": a label outside the set; "hidden": everything as label 1, which it holds, claiming to
                # hold none of the labels asked for (its released counts say otherwise)
                labs = np.full(len(reply.tokens), 7 if self.mode == "label" else 1)
                return CellSale(
                    n_rows=reply.n_rows, tokens=reply.tokens, hashes=reply.hashes, points=reply.points, labels=labs
                )
            if self.mode == "surplus":  # one row more than asked, hashed and labelled correctly
                from dpsumm.hashing import RFFHasher

                extra = int(np.setdiff1d(np.arange(reply.n_rows), reply.tokens)[0])
                tokens = np.sort(np.append(reply.tokens, extra))
                h = RFFHasher(message.n_features, dim=message.dim, gamma=message.gamma, seed=message.hash_seed)
                return CellSale(
                    n_rows=reply.n_rows,
                    tokens=tokens,
                    hashes=h.transform(self._data[tokens]),
                    points=np.array(self._data[tokens]),
                    labels=np.asarray(self._labels)[tokens],
                )
            if self.mode == "unlabelled":
                return CellSale(
                    n_rows=reply.n_rows, tokens=reply.tokens, hashes=reply.hashes, points=reply.points, labels=None
                )
            if self.mode == "rows":
                pts = reply.points.copy()
                pts[0, 0] += 1e-3
                return CellSale(
                    n_rows=reply.n_rows, tokens=reply.tokens, hashes=reply.hashes, points=pts, labels=reply.labels
                )
        return reply


@pytest.mark.parametrize(
    "mode,phase,why,n,liar",
    [
        ("sigma", "cell-release", "sigma", 200, 1),
        ("label", "cell-sale", "outside the label set", 200, 1),
        ("surplus", "cell-sale", "beyond the labels' asks", 200, 1),
        # owner 0 holds 1,184 rows of label 0 (released ~1,184 +- 14)
        ("hidden", "cell-sale", "noise sigmas above", 2000, 0),
        ("unlabelled", "cell-sale", "without their labels", 200, 1),
        ("rows", "cell-sale", "do not hash", 200, 1),
    ],
)
def test_a_faulty_owner_is_excluded_and_the_run_completes(mode, phase, why, n, liar):
    data = label_shift(seed=4, n=n)
    owners, labels, _, _ = data
    parties = label_parties(data)
    parties[f"owner-{liar}"] = Liar(np.asarray(owners[liar]), labels[liar], mode, f"owner-{liar}")
    res, _ = label_run(METHOD, data, 10, parties=parties)
    excluded = [e for e in res.events if e.get("event") == "excluded"]
    assert [e["owner"] for e in excluded] == [f"owner-{liar}"]
    assert excluded[0]["phase"] == phase and why in excluded[0]["reason"]
    assert len(res) == 10 and liar not in set(res.owner.tolist())


class LyingConsumer(ConsumerParty):
    """A consumer whose histogram release is not the mechanism the ledger records."""

    def __init__(self, *args, mode: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.mode = mode

    def handle(self, message):
        reply = super().handle(message)
        if self.mode == "scale":  # claims less noise than the mechanism's 2 / epsilon_v
            return dataclasses.replace(reply, scale=1.0)
        if self.mode == "fraction":  # counts that integer counts + integer noise cannot give
            return dataclasses.replace(reply, counts=reply.counts + 0.5)
        if self.mode == "shape":
            return dataclasses.replace(reply, counts=reply.counts[:-1])
        return dataclasses.replace(reply, scale="2.0")


@pytest.mark.parametrize(
    "mode,why", [("scale", "scale"), ("fraction", "not integer"), ("shape", "malformed"), ("type", "scale")]
)
def test_a_consumer_whose_release_is_not_the_recorded_mechanism_is_refused(mode, why):
    """The aggregator recomputes the consumer's scale (2 / epsilon_v) and checks the histogram's shape and that it
    is integer: a release the ledger would misstate stops the run before any purchase."""
    data = label_shift()
    _, _, validation, yv = data
    parties = label_parties(data)
    parties["consumer"] = LyingConsumer(np.asarray(validation), dpsumm.privacy.Csprng(0), labels=yv, mode=mode)
    with pytest.raises(ProtocolError, match=why):
        label_run(METHOD, data, 10, parties=parties)
    # the owners released their counts; nobody was asked to sell
    assert all(parties[f"owner-{k}"].replies for k in range(4)) and sale_requests(parties) == []


def test_a_consumer_without_labels_is_refused_before_any_release():
    """A consumer party holding no labels (the run gives no validation_labels, so only the party can tell) refuses
    the request for its histogram: the consumer releases nothing and no owner is asked to sell."""
    owners, labels, validation, _ = data = label_shift()
    parties = label_parties(data)
    parties["consumer"] = ConsumerParty(np.asarray(validation), dpsumm.privacy.Csprng(0))
    with pytest.raises(ProtocolError, match="validation_labels"):
        run_recorded(METHOD, owners, validation, 10, 0, labels=labels, parties=parties)
    assert sale_requests(parties) == []


def test_bad_options_and_inputs_are_refused_naming_the_argument():
    owners, labels, validation, yv = label_shift()
    labelled = labelled_owners(owners, labels)
    cases = [
        (lambda: dpsumm.ByLabel(), "label_set"),
        (lambda: dpsumm.Nominations(purchase="quotas"), "purchase"),  # removed in 0.2
        (lambda: dpsumm.Nominations(purchase="labels"), "label_set"),  # the deprecated spelling, still validated
        (lambda: dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=(0, 1)), reveal="hashes"), "purchase"),
        (lambda: dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=(0, 1)), choice="hashes"), "purchase"),
        (lambda: dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=(0, 1)), validation_release="mwem"), "purchase"),
        (lambda: dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=(0, 1)), nominees=5), "nominees"),
        (lambda: dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=(0, 1)), candidates=5), "candidates"),
        (lambda: dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=(0, 1)), temperature=0.5), "temperature"),
        (lambda: dpsumm.Nominations(purchase="labels_please"), "purchase"),
        (lambda: dpsumm.ByLabel(label_set=()), "label_set"),
        (lambda: dpsumm.ByLabel(label_set=(0, 0)), "label_set"),
        (lambda: dpsumm.ByLabel(label_set=(0, "a")), "label_set"),
        (lambda: dpsumm.ByLabel(label_set=(0, float("nan"))), "label_set"),
        (lambda: dpsumm.ByLabel(label_set=5), "label_set"),
        (lambda: dpsumm.summarize(labelled, validation, 10, **KW), "validation_labels"),
        (lambda: dpsumm.summarize(owners, validation, 10, validation_labels=yv, **KW), "owners"),
        (lambda: dpsumm.summarize(labelled, validation, 10, validation_labels=yv[:-1], **KW), "validation_labels"),
        (
            lambda: dpsumm.summarize(labelled, validation, 10, validation_labels=np.where(yv == 0, np.nan, 1.0), **KW),
            "validation_labels",
        ),
        (
            lambda: dpsumm.summarize(labelled, validation, 10, validation_labels=yv, gamma=0.3, progress=False),
            "validation_labels",
        ),
        (
            lambda: dpsumm.summarize(labelled, validation, 10, validation_labels=yv.astype(str), **KW),
            "validation_labels",
        ),
        # owners whose labels lie outside the label set: nothing they hold is ever sold
        (
            lambda: dpsumm.summarize(
                [dpsumm.Owner(o, labels=y + 7) for o, y in zip(owners, labels)],
                validation,
                10,
                validation_labels=yv,
                **KW,
            ),
            "owners",
        ),
        # 3 rows per owner in the set, 12 in all: a summary of 20 cannot be filled
        (
            lambda: dpsumm.summarize(
                [dpsumm.Owner(o, labels=np.where(np.arange(len(y)) < 3, y, 9)) for o, y in zip(owners, labels)],
                validation,
                20,
                validation_labels=yv,
                **KW,
            ),
            "size",
        ),
    ]
    for build, arg in cases:
        with pytest.raises(InvalidParameterError) as info:
            build()
        assert info.value.argument == arg, (arg, info.value)


@settings(max_examples=40, deadline=None)
@given(
    st.one_of(
        st.none(),
        st.integers(),
        st.text(max_size=3),
        st.lists(st.integers(0, 3), max_size=4),
        st.lists(st.floats(allow_nan=True), min_size=1, max_size=3),
    )
)
def test_any_label_set_is_accepted_or_refused_with_invalid_parameter(value):
    try:
        m = dpsumm.ByLabel(label_set=value)
    except InvalidParameterError as exc:
        assert exc.argument == "label_set"
    else:
        assert isinstance(m.label_set, tuple) and len(set(m.label_set)) == len(m.label_set) > 0


def test_a_summary_short_of_size_says_so_in_its_events_and_repr():
    # 176 rows in the label set: the aggregator's quotas follow the owners' noisy counts, so a size this close to
    # what the owners hold can come out short; the result must then say so.
    rng = np.random.default_rng(0)
    owners = [dpsumm.Owner(rng.normal(size=(300, 5)), labels=np.where(rng.random(300) < 0.2, 1, 5)) for _ in range(3)]
    validation, yv = rng.normal(size=(40, 5)), rng.integers(0, 3, 40)
    outcomes = set()
    for size in (150, 176):
        res = dpsumm.summarize(
            owners,
            validation,
            size,
            method=dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=range(3))),
            validation_labels=yv,
            random_state=0,
            progress=False,
        )
        short = [e for e in res.events if e.get("event") == "short"]
        assert len(res) <= size
        assert bool(short) == (len(res) < size), (size, len(res), res.events)
        assert ("fewer rows than asked" in repr(res)) == (len(res) < size)
        outcomes.add(len(res) < size)
    assert outcomes == {False, True}  # both branches are exercised (seeded: deterministic)


@pytest.mark.parametrize("value", [-0.1, 1.0, 1.5, float("nan"), float("inf"), "0.3", True, None, [0.3]])
def test_a_bad_sale_tilt_share_is_refused_naming_it(value):
    with pytest.raises(InvalidParameterError) as info:
        dpsumm.ByLabel(label_set=LABELS, sale_tilt_share=value)
    assert info.value.argument == "sale_tilt_share"


def test_the_sale_tilt_share_applies_only_to_the_label_purchase():
    for other in (dpsumm.Nominees, dpsumm.Winners):
        with pytest.raises(dpsumm.DpsummError) as info:
            other(sale_tilt_share=0.5)
        assert info.value.argument == "sale_tilt_share"
    with pytest.raises(dpsumm.DpsummError) as info:
        dpsumm.Nominations(sale_tilt_share=0.5)
    assert info.value.argument == "sale_tilt_share"
    assert dpsumm.ByLabel(label_set=LABELS, sale_tilt_share=0.3).sale_tilt_share == 0.3
    assert dpsumm.ByLabel(label_set=LABELS).sale_tilt_share == 0.0


def test_a_validation_budget_the_tilts_gaussian_cannot_meet_is_refused_before_any_release():
    """The g~ of the tilted sale is calibrated at (share * epsilon_v, delta_v) before anybody is asked anything: a
    budget so small that no discrete Gaussian meets it (epsilon_v = 1e-3: a noise multiplier of 7e5 at 0.3e-3,
    beyond the exact sampler's range) is refused naming `privacy`; without the tilt the histogram alone runs."""
    tiny = dpsumm.Budget(validation_epsilon=1e-3, validation_delta=1e-6)
    with pytest.raises(InvalidParameterError) as info:
        summarize_labels(label_shift(), 10, privacy=tiny, method=TILTED)
    assert info.value.argument == "privacy"
    assert len(summarize_labels(label_shift(), 10, privacy=tiny)) == 10


def world(seed, sizes=(120, 120, 120, 120), m=60, f=5):
    """Owners with labels 0..2 in different mixes and a consumer who wants labels 0 and 2."""
    rng = np.random.default_rng(seed)
    owners, labels = [], []
    for k, n in enumerate(sizes):
        mix = np.roll([0.6, 0.3, 0.1], k)
        y = rng.choice(3, size=n, p=mix)
        owners.append(rng.normal(loc=y[:, None] * 1.5, scale=0.5, size=(n, f)))
        labels.append(y)
    yv = rng.choice([0, 2], size=m, p=[0.3, 0.7])
    return owners, labels, rng.normal(loc=yv[:, None] * 1.5, scale=0.5, size=(m, f)), yv


@pytest.mark.parametrize("label_set", [(2**53 + 1, 2.0**53), (2**70, 1)])
def test_a_label_set_that_numpy_would_merge_or_make_objects_of_is_refused(label_set):
    with pytest.raises(InvalidParameterError) as info:
        dpsumm.ByLabel(label_set=label_set)
    assert info.value.argument == "label_set"


def _rdp_epsilon(multipliers, delta):
    from dp_accounting import GaussianDpEvent
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    acc = rdp.RdpAccountant(neighboring_relation=rdp.NeighborRel.REPLACE_ONE)
    for z in multipliers:
        acc.compose(GaussianDpEvent(noise_multiplier=z))
    return acc.get_epsilon(delta)


def test_the_ledger_equals_an_independent_accounting_of_the_mechanisms_run():
    """Re-derive each party's epsilon from the noise it reported (the one it drew with: next tests and
    rust/src/noise.rs) and the true sensitivity, with dp-accounting directly. The consumer's cell counts: the exact
    PLD of the discrete Laplace at its reported scale for the worst replacement (one count -1, another +1: two
    mechanisms of sensitivity 1), at most the ledger's figure (which accounts one mechanism of sensitivity 2, whose
    loss reaches 2 / scale more often), and both at most the budget. An owner's release: the RDP curve of the
    Gaussian at sigma / sensitivity; the ledger's figure is at least that (it charges the lattice's g sqrt(d) too),
    within 1% of it, and at most the budget."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    owners, labels, validation, yv = data = world(0)
    # The default (no tilt): the histogram alone, at the whole epsilon_v.
    res, parties = label_run(METHOD, data, 15, seed=3)
    (reply,) = parties["consumer"].replies  # counts per cell
    assert reply.scale == 2.0  # 2 / epsilon_v, epsilon_v = 1
    assert (reply.counts == np.round(reply.counts)).all()  # integer counts + integer noise
    ledger = res.privacy.epsilon("validation", 1e-6)
    one = pld.from_discrete_laplace_mechanism(1 / reply.scale, sensitivity=1, value_discretization_interval=1e-4)
    exact = one.compose(one).get_epsilon_for_delta(1e-6)
    assert 0.999 < exact <= ledger + 1e-9 and ledger <= 1.0
    # With the tilt (sale_tilt_share=0.3): the histogram at 0.7 epsilon_v and the tilt's g~ (the discrete Gaussian at
    # (0.3 epsilon_v, 1e-6)), composed by dp-accounting's PLD from what the consumer reported: at most the ledger's
    # figure (up to the PLD's discretisation), and at most 1.
    res, parties = label_run(TILTED, data, 15, seed=3)
    hist, target = parties["consumer"].replies
    assert hist.scale == pytest.approx(2 / 0.7, rel=1e-5)
    z_v = target.sigma / (2 * math.sqrt(2) / len(validation) + target.granularity * math.sqrt(64))
    one = pld.from_discrete_laplace_mechanism(1 / hist.scale, sensitivity=1, value_discretization_interval=1e-4)
    gauss = pld.from_gaussian_mechanism(z_v, sensitivity=1, value_discretization_interval=1e-4)
    exact = one.compose(one).compose(gauss).get_epsilon_for_delta(1e-6)
    ledger = res.privacy.epsilon("validation", 1e-6)
    assert 0.9 < exact <= ledger + 1e-3 and ledger <= 1.0
    # An owner's counts per label with its sum of the cells' h1 (a real vector: the lattice's g sqrt(d) counts):
    # sqrt(2 + 8).
    (reply,) = parties["owner-0"].replies
    z_owner = reply.sigma / (math.sqrt(10) + reply.granularity * math.sqrt(len(reply.values)))
    independent = _rdp_epsilon([z_owner], 1e-6)
    ledger = res.privacy.epsilon("owners", 1e-6)
    assert independent <= ledger <= 1.0 and ledger <= 1.01 * independent
    # The nominees purchase: the consumer's one release, g~ (a real vector: the lattice's g sqrt(d)).
    res, parties = run_recorded(dpsumm.Nominations(dim=64, purchase=dpsumm.Nominees()), owners, validation, 12, seed=3)
    (target,) = parties["consumer"].replies
    z_v = target.sigma / (2 * math.sqrt(2) / len(validation) + target.granularity * math.sqrt(64))
    independent = _rdp_epsilon([z_v], 1e-6)
    assert independent <= res.privacy.epsilon("validation", 1e-6) <= 1.0
    assert res.privacy.epsilon("validation", 1e-6) <= 1.01 * independent


def first_second_swapped(method, first, second, size):
    """Runs of ``method`` on two worlds ``(owners, labels, validation, yv)`` and on the second world with every
    party but owner 0 returning the first run's released values: the three runs' recorders."""
    _, a = label_run(method, first, size, seed=5)
    _, b = label_run(method, second, size, seed=5)
    swap = {n: a[n].released for n in a if n != "owner-0"}
    _, c = label_run(method, second, size, seed=5, values=swap)
    return a, b, c


@pytest.mark.parametrize("share,requests", [(0.0, 1), (0.3, 2)], ids=["untilted", "tilted"])
def test_labels_an_owners_view_depends_on_the_others_only_through_their_released_values(share, requests):
    """Owner 0's messages in a label purchase: change every other owner's rows and labels (their row counts n_k are
    public and kept) and the consumer's rows and labels (|D_v| public, kept), feed the aggregator the first run's
    released values only (each reply's other fields are the new parties' own): owner 0 receives byte-identical
    messages, and so does the consumer (its request of the cells, a function of the owners' releases and public
    numbers; with the tilt also the request of g~, public numbers only, and owner 0's sale request carries g~).
    Without the substitution they differ (the test can fail).
    A changed n_k does reach owner 0 (an
    owner's mean hash is its released sum over n_k): the neighbour relation keeps n_k public (docs/explanation/label-purchase.md)."""
    owners, labels, validation, yv = world(1)
    o2, l2, v2, yv2 = world(2)
    o2[0], l2[0] = owners[0], labels[0]
    yv2 = np.where(np.arange(len(yv2)) % 3 == 0, 1, yv2)
    method = tilted(share)
    a, b, c = first_second_swapped(method, (owners, labels, validation, yv), (o2, l2, v2, yv2), 15)
    assert a["owner-0"].received != b["owner-0"].received
    assert a["owner-0"].received == c["owner-0"].received
    assert a["consumer"].received != b["consumer"].received
    assert a["consumer"].received == c["consumer"].received and len(a["consumer"].received) == requests
    swap = {n: a[n].released for n in a if n != "owner-0"}
    o3, l3 = [owners[0], owners[1][:30], *owners[2:]], [labels[0], labels[1][:30], *labels[2:]]
    _, d = label_run(method, (o3, l3, validation, yv), 15, seed=5, values=swap)
    assert a["consumer"].received != d["consumer"].received


def test_the_ledger_names_the_owners_relation_of_the_run():
    """The owners' epsilon of an owner-release purchase is under replace-one in one owner's rows (n_k public): every
    text and the dict form say so, not the paper protocol's 'row of the summary D_s' / h2 epochs."""
    res = summarize_labels(world(0), 10, random_state=None)
    assert res.certification().status == "private, certified"
    for text in (res.privacy.table(), res.privacy_text(), json.dumps(res.privacy.to_dict())):
        assert "one owner's data D_k (n_k public)" in text and "D_s" not in text and "h2" not in text
    back = dpsumm.accounting.Ledger.from_dict(json.loads(json.dumps(res.privacy.to_dict())))
    assert back.notes() == res.privacy.notes()
