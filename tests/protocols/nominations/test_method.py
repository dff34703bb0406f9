"""dpsumm.protocols.nominations.method (the Nominations method) end to end: the three exchanges and what each
party receives, owners' privacy byte for byte, the default certification and purchase, equality cases with
the central greedy, bad arguments, quality on digits.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import dpsumm
from dpsumm import metrics
from dpsumm.parties import ConsumerParty, OwnerParty
from dpsumm.transport import InProcessTransport
from federation_data import blobs, label_shift
from recording import run_recorded

LABELS = (0, 1, 2)


METHOD = dpsumm.Nominations(dim=64, purchase=dpsumm.ByLabel(label_set=LABELS))


def test_the_default_purchase_is_by_direction_and_the_deprecated_label_set_is_the_label_purchase():
    assert dpsumm.Nominations().purchase == dpsumm.ByDirection() and dpsumm.Nominations().purchase.name == "direction"
    with pytest.warns(DeprecationWarning, match="ByLabel"):
        legacy = dpsumm.Nominations(dim=64, label_set=LABELS)
    assert type(legacy.purchase) is dpsumm.ByLabel and legacy.purchase == METHOD.purchase
    assert legacy.needs_labels and METHOD.needs_labels and not dpsumm.Nominations().needs_labels
    owners, labels, validation, yv = label_shift()
    labelled = [dpsumm.Owner(o, labels=y) for o, y in zip(owners, labels)]
    runs = [
        dpsumm.summarize(
            labelled, validation, 20, method=m, gamma=0.3, progress=False, validation_labels=yv, random_state=3
        )
        for m in (legacy, METHOD)
    ]
    # The deprecated spelling is the label purchase, run for run: same rows, same releases, same ledger.
    assert runs[0].extra["purchase"] == runs[1].extra["purchase"] == "labels"
    assert np.array_equal(runs[0].owner, runs[1].owner) and np.array_equal(runs[0].index, runs[1].index)
    assert runs[0].extra["label_quotas"] == runs[1].extra["label_quotas"]
    assert runs[0].privacy.epsilon("owners", 1e-6) == runs[1].privacy.epsilon("owners", 1e-6) > 0.97
    assert runs[0].accessed.total <= 3 * 20
    # Without one it is the direction purchase: every party releases (owners certified at epsilon <= 1) and at most
    # 3 * size rows are bought.
    plain = dpsumm.summarize(
        owners, validation, 20, method=dpsumm.Nominations(dim=64), gamma=0.3, progress=False, random_state=3
    )
    assert plain.extra["purchase"] == "direction" and 0.9 < plain.extra["owner_epsilon"] <= 1.0
    assert plain.accessed.total <= 3 * 20


KW = dict(gamma=0.3, progress=False)


#: The nominees purchase at d = 64.
NOMINEES = dpsumm.Nominations(dim=64, purchase=dpsumm.Nominees())


def test_three_exchanges_and_what_each_party_receives():
    owners, validation = blobs()
    res, parties = run_recorded(NOMINEES, owners, validation, 10, seed=3)
    assert res.extra["exchanges"] == 3
    assert len(parties["consumer"].received) == 1  # one release, once
    for k in range(len(owners)):
        kinds = [pickle.loads(b)["kind"] for b in parties[f"owner-{k}"].received]
        assert kinds == ["nomination_request", "purchase_request"]


def test_an_owners_messages_do_not_depend_on_another_owners_data():
    """Privacy of the owners (docs/explanation/design.md): owner 0 receives byte-identical messages whatever owner 1 holds."""
    owners, validation = blobs(seed=1)
    changed = [o.copy() for o in owners]
    changed[1] = np.random.default_rng(99).normal(loc=5.0, size=owners[1].shape)  # every row of owner 1 replaced
    _, a = run_recorded(NOMINEES, owners, validation, 12, seed=5)
    _, b = run_recorded(NOMINEES, changed, validation, 12, seed=5)
    for k in (0, 2, 3):
        assert a[f"owner-{k}"].received == b[f"owner-{k}"].received
    # ... and they do change with the validation set (the one DP release), so the comparison can fail
    _, c = run_recorded(NOMINEES, owners, validation + 0.5, 12, seed=5)
    assert a["owner-0"].received != c["owner-0"].received


def test_ledger_certifies_every_party_by_default():
    owners, validation = blobs()
    budget = dpsumm.Budget(validation_epsilon=0.8, validation_delta=1e-6)
    # The default purchase (ByDirection): every party releases, each certified within its budget; 3 * size rows at most,
    # and the aggregator holds the hashes of the rows it bought only.
    res = dpsumm.summarize(owners, validation, 10, method=dpsumm.Nominations(dim=64), privacy=budget, **KW)
    led = res.privacy
    assert 0.9 < led.epsilon("owners", 1e-6) <= 1.0
    assert 0.7 < led.epsilon("validation", 1e-6) <= 0.8 + 1e-9
    assert led.certified("owners") and led.certified("validation")
    assert res.accessed.total <= 3 * 10 and res.accessed.hashed_rows == res.accessed.total
    # The nominees purchase: the owners release nothing (epsilon 0)
    res = dpsumm.summarize(owners, validation, 10, method=NOMINEES, privacy=budget, **KW)
    led = res.privacy
    assert led.epsilon("owners", 1e-6) == 0.0
    eps_v = led.epsilon("validation", 1e-6)
    assert 0.7 < eps_v <= 0.8 + 1e-9
    assert led.certified("owners") and led.certified("validation")
    assert res.accessed.total == sum(min(20, len(o)) for o in owners)  # nominees = 2 * size by default
    # the owners commit by digest (docs/explanation/design.md): the aggregator receives no hash of any row but those bought
    assert res.accessed.hashes == 0 and res.accessed.validation_rows == len(validation)
    assert res.accessed.hashed_rows == res.accessed.total


def test_reveal_hashes_gives_the_aggregator_no_raw_row():
    owners, validation = blobs()
    labels = [np.full(len(o), k) for k, o in enumerate(owners)]
    res = dpsumm.summarize(
        [dpsumm.Owner(o, labels=lab) for o, lab in zip(owners, labels)],
        validation,
        10,
        method=dpsumm.Nominations(purchase=dpsumm.Nominees(), reveal="hashes", dim=64),
        random_state=4,
        **KW,
    )
    assert res.points is None and res.accessed.total == 0
    assert np.array_equal(res.labels, res.owner)
    ref = dpsumm.summarize(
        owners,
        validation,
        10,
        method=dpsumm.Nominations(purchase=dpsumm.Nominees(), choice="hashes", dim=64),
        random_state=4,
        **KW,
    )
    assert np.array_equal(res.hashes, ref.hashes)


def test_nominations_with_every_row_nominated_equals_central_greedy():
    owners, validation = blobs(seed=8, K=3, n=30)
    central = dpsumm.summarize(owners, validation, 15, method=dpsumm.CentralGreedy(dim=64), **KW)
    nom = dpsumm.summarize(
        owners,
        validation,
        15,
        method=dpsumm.Nominations(purchase=dpsumm.Nominees(), nominees=30, choice="hashes", dim=64),
        random_state=1,
        **KW,
    )
    assert np.array_equal(nom.owner, central.owner) and np.array_equal(nom.index, central.index)
    assert np.array_equal(nom.points, central.points)


def test_kernel_choice_with_every_row_nominated_equals_exact_greedy():
    owners, validation = blobs(seed=9, K=3, n=30)
    exact = dpsumm.summarize(owners, validation, 15, method=dpsumm.ExactGreedy(dim=64), **KW)
    nom = dpsumm.summarize(
        owners,
        validation,
        15,
        method=dpsumm.Nominations(purchase=dpsumm.Nominees(), nominees=30, dim=64),
        random_state=1,
        **KW,
    )
    assert nom.extra["choice"] == "kernel" and nom.accessed.validation_raw_rows == len(validation)
    assert np.array_equal(nom.owner, exact.owner) and np.array_equal(nom.index, exact.index)


@pytest.mark.parametrize(
    "method, kw, arg",
    [
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
        (
            {},
            dict(privacy=dpsumm.Budget(validation_epsilon=1, validation_delta=0.05)),
            "validation_delta",
        ),  # >= 1/|D_v|
    ],
)
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
    parties = {
        "owner-0": OwnerParty(np.asarray(owners[0]), None, "owner-0"),
        "consumer": ConsumerParty(np.asarray(validation), dpsumm.privacy.Csprng(0)),
    }
    with pytest.raises(dpsumm.InvalidParameterError, match="owner-1") as info:
        dpsumm.summarize(owners, validation, 10, transport=InProcessTransport(parties), **KW)
    assert info.value.argument == "transport"


def test_on_digits_nominations_beats_uniform_in_every_repeat():
    pytest.importorskip("sklearn")
    for rep in range(3):
        split = dpsumm.datasets.digits_label_split(random_state=rep)
        gamma = dpsumm.experiments.median_gamma(split.seed_set)
        for size in (20, 40):
            nom = dpsumm.summarize(split.owners, split.validation, size, gamma=gamma, random_state=rep, progress=False)
            uni = dpsumm.summarize(
                split.owners, split.validation, size, method="uniform", gamma=gamma, random_state=rep
            )
            assert metrics.mmd2(nom.points, split.validation, gamma) < metrics.mmd2(uni.points, split.validation, gamma)


def test_owner_greedy_default_is_stochastic_and_exact_is_available():
    """The default owners' greedy is the stochastic one with the library's factor; "exact" switches it off."""
    from dpsumm.protocols.nominations.aggregator import STOCHASTIC_GREEDY_FACTOR

    owners, validation = blobs(seed=12, K=3, n=60)
    a = dpsumm.summarize(
        owners,
        validation,
        10,
        method=dpsumm.Nominations(purchase=dpsumm.Nominees(), choice="hashes", dim=64),
        random_state=3,
        **KW,
    )
    assert a.extra["greedy_sample_factor"] == STOCHASTIC_GREEDY_FACTOR
    b = dpsumm.summarize(
        owners,
        validation,
        10,
        method=dpsumm.Nominations(purchase=dpsumm.Nominees(), choice="hashes", owner_greedy="exact", dim=64),
        random_state=3,
        **KW,
    )
    assert b.extra["greedy_sample_factor"] is None
    assert a.privacy is not None and b.privacy is not None
    assert len(a.index) == len(b.index) == 10
