"""An adversarial review of the owner-release purchase (``Nominations(purchase=ByLabel(...))``, docs/design.md
§2.5 and §2.7) against the code: sensitivity on every input the parties accept, the accounting
re-derived independently with dp-accounting, the noise drawn at the accounted sigma, every party's view a function of
its own data, the DP releases and public numbers, and what the ledger says."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

import dpsumm
from dpsumm.hashing import RFFHasher
from dpsumm.errors import InvalidParameterError, ProtocolError
from dpsumm.parties import ConsumerParty, OwnerParty, label_counts, owner_release_calibration, owner_stream
from dpsumm.protocols.nominations.by_label import LabelReleaseRequest
from dpsumm.transport import InProcessTransport
from recording import Recorder

LABELS = (0, 1, 2)
LABEL_METHOD = dpsumm.Nominations(dim=64, purchase=dpsumm.ByLabel(label_set=LABELS))


def tilted(share):
    """The label method with ``sale_tilt_share=share``."""
    return LABEL_METHOD.set_params(purchase=LABEL_METHOD.purchase.set_params(sale_tilt_share=share))


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


def run(method, owners, labels, validation, yv, size, seed, swap=None):
    swap = swap or {}
    names = [f"owner-{k}" for k in range(len(owners))]
    parties = {n: Recorder(OwnerParty(np.asarray(o), y, n, rng=owner_stream(seed, n)), values=swap.get(n))
               for n, o, y in zip(names, owners, labels)}
    parties["consumer"] = Recorder(ConsumerParty(np.asarray(validation), dpsumm.privacy.Csprng(seed).derive("consumer"), labels=yv),
                                   values=swap.get("consumer"))
    res = dpsumm.summarize([dpsumm.Owner(o, labels=y) for o, y in zip(owners, labels)], validation, size,
                           validation_labels=yv, method=method, gamma=0.3, random_state=seed, progress=False,
                           transport=InProcessTransport(parties))
    return res, parties


# ---------------------------------------------------------------------------------- 1. sensitivity


def test_labels_one_per_row_or_refused():
    """Labels of another shape would count one row in several cells (2-D labels: a replaced row moves 2 sqrt(2) in
    L2, not sqrt(2)): every party refuses them when it is built, naming the argument, before any release."""
    X = np.zeros((3, 2))
    for bad in (np.zeros((3, 2)), np.zeros(4), np.zeros(2)):
        with pytest.raises(InvalidParameterError) as info:
            OwnerParty(X, bad)
        assert info.value.argument == "labels"
        with pytest.raises(InvalidParameterError) as info:
            ConsumerParty(X, dpsumm.privacy.Csprng(0), labels=bad)
        assert info.value.argument == "labels"
    with pytest.raises(ProtocolError):
        label_counts(np.zeros((3, 2)), np.array([0, 1]))


@pytest.mark.parametrize("label_set", [(2**53 + 1, 2.0**53), (2**70, 1)])
def test_a_label_set_that_numpy_would_merge_or_make_objects_of_is_refused(label_set):
    with pytest.raises(InvalidParameterError) as info:
        dpsumm.ByLabel(label_set=label_set)
    assert info.value.argument == "label_set"


def test_label_counts_move_by_at_most_sqrt2_for_any_replaced_row():
    """Every replacement of one row's label (in the set, out of it, float for int, a string, NaN) moves the count
    vector by at most sqrt(2) in L2, 1 when one side is outside the set; exhaustively over a small alphabet."""
    label_set = np.array([0, 1, 2])
    alphabet = [0, 1, 2, 1.0, 2.5, -1, np.nan, 7]
    base = np.array([0, 1, 1, 2, 2, 2, 5], dtype=np.float64)
    for i in range(len(base)):
        for new in alphabet:
            y = base.copy()
            y[i] = new
            move = np.linalg.norm(label_counts(y, label_set) - label_counts(base, label_set))
            assert move <= math.sqrt(2) + 1e-12
            inside = [v in (0.0, 1.0, 2.0) for v in (base[i], new)]
            if not all(inside):
                assert move <= 1.0
    strings = np.array(["a", "b", "c"])
    assert np.linalg.norm(label_counts(np.array(["a", "b"]), strings) - label_counts(np.array(["a", "z"]), strings)) == 1


# ---------------------------------------------------------------------------------- 2. calibration = accounting


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

    owners, labels, validation, yv = world(0)
    # The default (no tilt): the histogram alone, at the whole epsilon_v.
    res, parties = run(LABEL_METHOD, owners, labels, validation, yv, 15, seed=3)
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
    res, parties = run(tilted(0.3), owners, labels, validation, yv, 15, seed=3)
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
    # The default purchase (Nominees): the consumer's one release, g~ (a real vector: the lattice's g sqrt(d)).
    res, parties = run(dpsumm.Nominations(dim=64), owners, [None] * 4, validation, None, 12, seed=3)
    (target,) = parties["consumer"].replies
    z_v = target.sigma / (2 * math.sqrt(2) / len(validation) + target.granularity * math.sqrt(64))
    independent = _rdp_epsilon([z_v], 1e-6)
    assert independent <= res.privacy.epsilon("validation", 1e-6) <= 1.0
    assert res.privacy.epsilon("validation", 1e-6) <= 1.01 * independent


def test_an_owner_draws_its_label_counts_with_the_sigma_it_reports():
    """The noise an owner adds to its label counts and hash sum has the variance of the sigma it reports (and the
    ledger accounts): 600 owners x (4 labels + 8 coordinates), the sample variance / sigma^2 within 5 standard
    errors of 1 (the chi-square's sd is sqrt(2/7200) = 0.017; a sigma off by 10% moves it by 0.2), and the mean
    within 5 standard errors of 0."""
    y = np.repeat(np.arange(4), [3, 0, 5, 9])
    X = np.zeros((len(y), 2))
    req = LabelReleaseRequest(n_features=2, dim=8, gamma=0.5, hash_seed=0, epsilon=1.0, delta=1e-6,
                              label_set=np.arange(4))
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


# ---------------------------------------------------------------------------------- 3. views


def first_second_swapped(method, first, second, size):
    """Runs of ``method`` on two worlds ``(owners, labels, validation, yv)`` and on the second world with every
    party but owner 0 returning the first run's released values: the three runs' recorders."""
    _, a = run(method, *first, size, seed=5)
    _, b = run(method, *second, size, seed=5)
    swap = {n: a[n].released for n in a if n != "owner-0"}
    _, c = run(method, *second, size, seed=5, swap=swap)
    return a, b, c


@pytest.mark.parametrize("share,requests", [(0.0, 1), (0.3, 2)], ids=["untilted", "tilted"])
def test_labels_an_owners_view_depends_on_the_others_only_through_their_released_values(share, requests):
    """Owner 0's messages in a label purchase: change every other owner's rows and labels (their row counts n_k are
    public and kept) and the consumer's rows and labels (|D_v| public, kept), feed the aggregator the first run's
    released values only (each reply's other fields are the new parties' own): owner 0 receives byte-identical
    messages, and so does the consumer (its request of the cells, a function of the owners' releases and public
    numbers; with the tilt also the request of g~, public numbers only, and owner 0's sale request carries g~). Without the substitution they differ (the test can fail). A changed n_k does reach owner 0 (an
    owner's mean hash is its released sum over n_k): the neighbour relation keeps n_k public (docs/design.md §2.7)."""
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
    _, d = run(method, o3, l3, validation, yv, 15, seed=5, swap=swap)
    assert a["consumer"].received != d["consumer"].received


# ---------------------------------------------------------------------------------- 4. certified by default, said


def test_the_ledger_names_the_owners_relation_of_the_run():
    """The owners' epsilon of an owner-release purchase is under replace-one in one owner's rows (n_k public): every
    text and the dict form say so, not the paper protocol's 'row of the summary D_s' / h2 epochs."""
    owners, labels, validation, yv = world(0)
    res = dpsumm.summarize([dpsumm.Owner(o, labels=y) for o, y in zip(owners, labels)], validation, 10,
                           validation_labels=yv, method=LABEL_METHOD, gamma=0.3, progress=False)
    assert res.certification().status == "private, certified"
    for text in (res.privacy.table(), res.privacy_text(), json.dumps(res.privacy.to_dict())):
        assert "one owner's data D_k (n_k public)" in text and "D_s" not in text and "h2" not in text
    back = dpsumm.accounting.Ledger.from_dict(json.loads(json.dumps(res.privacy.to_dict())))
    assert back.notes() == res.privacy.notes()


def test_a_seeded_cli_run_says_not_private(tmp_path, capsys):
    from dpsumm.cli import main

    owners, labels, validation, yv = world(0, sizes=(60, 60, 60))
    args = []
    for k, (o, y) in enumerate(zip(owners, labels)):
        np.save(tmp_path / f"o{k}.npy", o)
        args.append(str(tmp_path / f"o{k}.npy"))
    np.save(tmp_path / "v.npy", validation)
    extra = ["--purchase", "labels"]
    for k, y in enumerate(labels):
        np.save(tmp_path / f"y{k}.npy", y)
    np.save(tmp_path / "yv.npy", yv)
    extra += ["--label-set", "0,1,2", "--labels", *(str(tmp_path / f"y{k}.npy") for k in range(len(labels))),
                  "--validation-labels", str(tmp_path / "yv.npy")]
    out = tmp_path / "out"
    code = main(["summarize", "--owners", *args, "--validation", str(tmp_path / "v.npy"), "--size", "6", *extra,
                 "--dim", "32", "--gamma", "0.3", "--random-state", "0", "--out", str(out), "--no-progress"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "NOT private" in captured.out + captured.err
    report = json.loads((out / "report.json").read_text())
    assert report["privacy"]["certification"]["status"] == "seeded: NOT private"


def test_a_flower_owner_node_releases_its_label_counts_once(tmp_path):
    """On Flower the owner is rebuilt per message with a fresh private noise stream: a repeated release request must
    get the kept release back (not a second draw, which the ledger would not account), and a request for another
    release with other parameters is refused, as in process."""
    pytest.importorskip("flwr")
    from flwr.app import Context, RecordDict

    from dpsumm.flower.client_app import _owner

    rng = np.random.default_rng(0)
    np.save(tmp_path / "x.npy", rng.normal(size=(30, 3)))
    np.save(tmp_path / "y.npy", rng.integers(0, 3, 30))
    ctx = Context(run_id=1, node_id=1, node_config={"role": "owner", "name": "a", "data": str(tmp_path / "x.npy"),
                                                    "labels": str(tmp_path / "y.npy")}, state=RecordDict(), run_config={})
    req = LabelReleaseRequest(n_features=3, dim=8, gamma=0.5, hash_seed=0, epsilon=1.0, delta=1e-6,
                              label_set=np.arange(3))
    first = _owner(req, ctx, "a")
    again = _owner(req, ctx, "a")
    np.testing.assert_array_equal(again.values, first.values)  # unseeded: a second draw would differ
    assert (again.n_rows, again.sigma, again.granularity) == (first.n_rows, first.sigma, first.granularity)
    with pytest.raises(ProtocolError, match="already made"):
        _owner(dataclasses.replace(req, epsilon=2.0), ctx, "a")


def test_an_owner_rebuilt_from_its_json_state_keeps_its_one_release():
    """OwnerParty.state() is JSON-ready and OwnerParty.restore() rebuilds the run from it: a fresh party (a fresh,
    unseeded noise stream) given the state answers the same release request with the kept release, bit for bit, and
    refuses a release with other parameters; without the state it would draw anew (the test can fail)."""
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(30, 3)), rng.integers(0, 3, 30)
    req = LabelReleaseRequest(n_features=3, dim=8, gamma=0.5, hash_seed=0, epsilon=1.0, delta=1e-6,
                              label_set=np.arange(3))
    first = OwnerParty(X, y, "a")
    released = first.handle(req)
    state = json.loads(json.dumps(first.state()))
    rebuilt = OwnerParty(X, y, "a")
    rebuilt.restore(state)
    again = rebuilt.handle(req)
    np.testing.assert_array_equal(again.values, released.values)
    assert (again.n_rows, again.sigma, again.granularity) == (released.n_rows, released.sigma, released.granularity)
    with pytest.raises(ProtocolError, match="already made"):
        rebuilt.handle(dataclasses.replace(req, epsilon=2.0))
    fresh = OwnerParty(X, y, "a").handle(req)
    assert not np.array_equal(fresh.values, released.values)
    with pytest.raises(ProtocolError, match="malformed"):
        OwnerParty(X, y, "a").restore({"releases": {}})
