"""The direction purchase (dpsumm.ByDirection; docs/explanation/direction-purchase.md): the consumer's clipped, centred
mean released once at proven sensitivity, the cells along it (crossed with strata), the ledger equal to the
mechanisms' calibrations and composed by the accountant."""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import dpsumm
from corrupt_replies import refused as corrupt_refused
from corrupt_replies import replace
from dpsumm import accounting
from dpsumm.hashing import RFFHasher
from dpsumm.methods import ByDirection
from dpsumm.metrics import SummaryFitWarning
from dpsumm.parties import ConsumerParty
from dpsumm.preprocessing import DEGENERATE_HIGH, median_gamma
from dpsumm.privacy import Csprng, count_release_event
from dpsumm.protocols.nominations.by_direction import (
    KERNEL_DIM,
    DirectionRelease,
    DirectionRequest,
    bin_edges,
    clipped_mean,
    direction_hash_seed,
    direction_sensitivity,
    kept_edges,
    kernel_gamma,
    public_geometry,
)
from dpsumm.protocols.nominations.cell_messages import CellHistogramRequest, CellReleaseRequest
from dpsumm.protocols.nominations.cell_rule import CellRule
from recording import run_recorded


def _data(seed: int = 0) -> tuple[list[dpsumm.Owner], np.ndarray, np.ndarray]:
    """Four owners of two kinds of rows; the consumer wants rows shifted along the first feature."""
    rng = np.random.default_rng(seed)
    owners = [
        dpsumm.Owner(
            rng.normal(size=(200, 4)) + np.eye(4)[0] * 2.5 * (rng.random((200, 1)) < 0.1 * k),
            labels=rng.integers(0, 2, 200),
            name=f"o{k}",
        )
        for k in range(4)
    ]
    V = rng.normal(size=(60, 4)) + np.eye(4)[0] * 2.5
    seed_rows = rng.normal(size=(150, 4))
    return owners, V, seed_rows


finite = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(
    arrays(np.float64, st.tuples(st.integers(1, 12), st.integers(1, 5)), elements=finite),
    arrays(np.float64, 5, elements=finite),
    st.floats(0.01, 100),
    st.integers(0, 11),
    st.data(),
)
def test_replacing_one_row_moves_the_clipped_mean_by_at_most_2c_over_n(
    X: np.ndarray, row: np.ndarray, clip: float, k: int, data: st.DataObject
) -> None:
    """The proof's sensitivity, by property: neighbours (one row replaced by any row) differ by <= 2C/|D_v|."""
    n, d = X.shape
    centre = data.draw(arrays(np.float64, d, elements=finite))
    X2 = X.copy()
    X2[k % n] = row[:d]
    gap = float(np.linalg.norm(clipped_mean(X, centre, clip) - clipped_mean(X2, centre, clip)))
    assert gap <= direction_sensitivity(clip, n) * (1 + 1e-9) + 1e-12


def test_the_consumer_releases_its_clipped_mean_with_the_calibrated_noise() -> None:
    _, V, seed_rows = _data()
    centre, clip = public_geometry(seed_rows)
    req = DirectionRequest(centre=centre, clip=clip, epsilon=0.5, delta=1e-6)
    reply = ConsumerParty(V, Csprng(3)).handle(req)
    assert isinstance(reply, DirectionRelease) and reply.n_rows == len(V)
    cal = accounting.calibrate_gaussian(0.5, 1e-6, sensitivity=2 * clip / len(V), dim=V.shape[1])
    assert math.isclose(reply.sigma, cal.sigma)
    noise = reply.noisy_mean - clipped_mean(V, centre, clip)
    assert np.abs(noise).max() <= 12 * cal.sigma + cal.granularity and np.abs(noise).max() > 0
    again = ConsumerParty(V, Csprng(3)).handle(req)  # the consumer's own stream, derived in a fixed order
    np.testing.assert_array_equal(again.noisy_mean, reply.noisy_mean)
    with pytest.raises(dpsumm.ProtocolError):
        ConsumerParty(V, Csprng(3)).handle(DirectionRequest(centre=centre[:2], clip=clip, epsilon=0.5, delta=1e-6))
    with pytest.raises(dpsumm.ProtocolError):
        ConsumerParty(V, Csprng(3)).handle(DirectionRequest(centre=centre, clip=-1.0, epsilon=0.5, delta=1e-6))


def test_in_the_kernel_space_the_consumer_releases_its_random_features_clipped_mean() -> None:
    """The kernel space: the consumer maps its rows by the public random features of the request (the median
    heuristic over the seed rows, a seed derived from the run's), then releases their clipped, centred mean."""
    _, V, seed_rows = _data()
    gamma = kernel_gamma(seed_rows)
    assert gamma == median_gamma(seed_rows)
    h = RFFHasher(4, dim=KERNEL_DIM, gamma=gamma, seed=direction_hash_seed(0))
    seed_features = np.asarray(h.transform(seed_rows), dtype=np.float64)
    centre, clip = public_geometry(seed_features, "kernel")
    req = DirectionRequest(
        centre=centre,
        clip=clip,
        epsilon=0.5,
        delta=1e-6,
        direction_dim=KERNEL_DIM,
        direction_gamma=gamma,
        direction_seed=direction_hash_seed(0),
    )
    reply = ConsumerParty(V, Csprng(3)).handle(req)
    assert isinstance(reply, DirectionRelease) and reply.noisy_mean.shape == (KERNEL_DIM,)
    cal = accounting.calibrate_gaussian(0.5, 1e-6, sensitivity=2 * clip / len(V), dim=KERNEL_DIM)
    assert math.isclose(reply.sigma, cal.sigma)
    exact = clipped_mean(np.asarray(h.transform(V), dtype=np.float64), centre, clip)
    noise = reply.noisy_mean - exact
    assert np.abs(noise).max() <= 12 * cal.sigma + cal.granularity and np.abs(noise).max() > 0
    # the consumer's rows lie along the released witness: its rows score above the seed rows on the mean
    w = reply.noisy_mean / np.linalg.norm(reply.noisy_mean)
    v_scores = (np.asarray(h.transform(V), dtype=np.float64) - centre) @ w
    assert v_scores.mean() > ((seed_features - centre) @ w).mean()
    for bad in ({"direction_dim": -1}, {"direction_gamma": 0.0}, {"direction_dim": "many"}):
        with pytest.raises(dpsumm.ProtocolError, match="random features"):
            ConsumerParty(V, Csprng(3)).handle(dataclasses.replace(req, **bad))  # type: ignore[arg-type]


def test_the_kernel_space_ledger_is_its_two_calibrated_releases_composed() -> None:
    owners, V, seed_rows = _data()
    res = dpsumm.summarize(
        owners, V, 15, dpsumm.Nominations(purchase=ByDirection()), seed_set=seed_rows, random_state=0, progress=False
    )
    h = RFFHasher(4, dim=KERNEL_DIM, gamma=kernel_gamma(seed_rows), seed=direction_hash_seed(res.hasher.seed))
    _, clip = public_geometry(np.asarray(h.transform(seed_rows), dtype=np.float64), "kernel")
    gauss = accounting.calibrate_gaussian(0.5, 1e-6, sensitivity=2 * clip / len(V), dim=KERNEL_DIM).event()
    validation = [e["event"] for e in res.privacy.to_dict()["entries"] if e["party"] == "validation"]
    assert [v["kind"] for v in validation] == ["GaussianEvent", "LaplaceEvent"]
    assert math.isclose(validation[0]["noise_multiplier"], gauss.noise_multiplier, rel_tol=1e-12)
    eps_v = res.privacy.epsilon("validation", 1e-6)
    assert math.isclose(eps_v, accounting.compose([gauss, count_release_event(0.5)], 1e-6), rel_tol=1e-9)
    assert eps_v <= 1.0 and res.privacy.epsilon("owners", 1e-6) <= 1.0 and res.accessed.total <= 45
    # the wanted rows (shifted along the first feature) are over-bought against their share among the owners
    shifted = np.array([owners[k].data[i, 0] > 1.25 for k, i in zip(res.owner, res.index)])
    held = np.concatenate([o.data[:, 0] > 1.25 for o in owners])
    assert shifted.mean() > 2 * held.mean()


def test_the_ledger_is_the_two_calibrated_releases_composed() -> None:
    owners, V, seed_rows = _data()
    share = 0.4
    res = dpsumm.summarize(
        owners,
        V,
        15,
        dpsumm.Nominations(purchase=ByDirection(space="features", direction_share=share)),
        seed_set=seed_rows,
        gamma="median",
        random_state=0,
        progress=False,
    )
    _, clip = public_geometry(seed_rows)
    gauss = accounting.calibrate_gaussian(share, 1e-6, sensitivity=2 * clip / len(V), dim=V.shape[1]).event()
    laplace = count_release_event(1.0 - share)
    entries = res.privacy.to_dict()["entries"]
    validation = [e["event"] for e in entries if e["party"] == "validation"]
    assert [v["kind"] for v in validation] == ["GaussianEvent", "LaplaceEvent"]
    assert math.isclose(validation[0]["noise_multiplier"], gauss.noise_multiplier, rel_tol=1e-12)
    assert validation[0]["neighbour"] == "replace-one"
    assert math.isclose(validation[1]["epsilon"], laplace.epsilon, rel_tol=1e-12)
    eps_v = res.privacy.epsilon("validation", 1e-6)
    assert math.isclose(eps_v, accounting.compose([gauss, laplace], 1e-6), rel_tol=1e-9) and eps_v <= 1.0
    assert res.privacy.epsilon("owners", 1e-6) <= 1.0
    assert res.accessed.total <= 3 * 15 and len(res) == 15
    assert all(c["label"].startswith("bin ") for c in res.extra["label_cells"])
    method = dpsumm.Nominations(purchase=ByDirection())
    private = dpsumm.summarize(owners, V, 15, method, seed_set=seed_rows, progress=False)
    assert private.certification().status == "private, certified"


def test_the_bins_cross_the_strata_and_rows_outside_the_levels_are_never_sold() -> None:
    owners, V, seed_rows = _data()
    strata = [np.where(o.labels == 1, "in", "out") for o in owners]
    owners = [dpsumm.Owner(o.data, labels=o.labels, strata=s, name=o.name) for o, s in zip(owners, strata)]
    res = dpsumm.summarize(
        owners,
        V,
        15,
        dpsumm.Nominations(purchase=ByDirection(levels=[("in",)], bins=4)),
        seed_set=seed_rows,
        validation_strata=np.array(["in"] * 60),
        random_state=1,
        progress=False,
    )
    assert all(owners[k].labels[i] == 1 for k, i in zip(res.owner, res.index))
    assert {c["label"] for c in res.extra["label_cells"]} <= {("in", f"bin {b}") for b in range(4)}


def test_the_edges_are_public_and_ordered() -> None:
    _, _, seed_rows = _data()
    centre, clip = public_geometry(seed_rows)
    w = np.eye(4)[0]
    e = bin_edges(seed_rows, centre, w, 12)
    scores = (seed_rows - centre) @ w
    assert len(e) == 11 and np.all(np.diff(e) > 0)
    assert math.isclose(e[0], scores.mean() - 2 * scores.std()) and math.isclose(
        e[-1], scores.mean() + 8 * scores.std()
    )
    assert clip == pytest.approx(2 * np.quantile(np.linalg.norm(seed_rows - centre, axis=1), 0.9))
    with pytest.raises(dpsumm.InvalidParameterError) as info:
        public_geometry(np.ones((5, 4)))
    assert info.value.argument == "seed_set"


def test_in_the_kernel_space_the_clipping_norm_is_the_median_centred_norm_by_hand() -> None:
    """Four rows' features around the centre (0, 0), centred norms 1, 1, 2, 2: the kernel space clips at their median,
    1.5; the features at twice their 90th percentile, 4."""
    F = np.array([[-1.0, 0.0], [1.0, 0.0], [0.0, -2.0], [0.0, 2.0]])
    centre, clip = public_geometry(F, "kernel")
    np.testing.assert_allclose(centre, [0.0, 0.0])
    assert clip == pytest.approx(1.5)
    assert public_geometry(F, "features")[1] == pytest.approx(4.0)
    with pytest.raises(dpsumm.InvalidParameterError) as info:
        public_geometry(F, "pixels")
    assert info.value.argument == "space"


@pytest.mark.parametrize(
    "kw, argument",
    [
        ({"bins": 0}, "bins"),
        ({"direction_share": 1.0}, "direction_share"),
        ({"direction_share": 0.0}, "direction_share"),
        ({"direction_share": 0.6, "sale_tilt_share": 0.5}, "direction_share"),
        ({"levels": [("a", "a")]}, "levels"),
        ({"reserve": 1.0}, "reserve"),
        ({"space": "linear"}, "space"),
    ],
)
def test_bad_options_are_refused_naming_them(kw: dict[str, object], argument: str) -> None:
    with pytest.raises(dpsumm.InvalidParameterError) as info:
        ByDirection(**kw)  # type: ignore[arg-type]
    assert info.value.argument == argument


def test_without_public_seed_rows_the_run_warns_naming_seed_set() -> None:
    """Rows drawn uniformly in the box stand in for missing public rows, and the direction then points from the box's
    centre to the consumer's rows: the run says so, naming `seed_set`; with public rows it is silent."""
    owners, V, seed_rows = _data(3)
    method = dpsumm.Nominations(purchase=ByDirection())
    with pytest.warns(UserWarning, match="seed_set"):
        dpsumm.summarize(owners, V, 10, method, feature_range=(-6.0, 6.0), random_state=0, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.simplefilter("ignore", SummaryFitWarning)  # the fit of a toy run is not what this test checks
        res = dpsumm.summarize(owners, V, 10, method, seed_set=seed_rows, random_state=0, progress=False)
    assert res.points is not None and len(res.points) == 10


def test_kept_edges_merge_adjacent_bins_evenly() -> None:
    np.testing.assert_array_equal(kept_edges(11, 12), np.arange(11))
    np.testing.assert_array_equal(kept_edges(11, 20), np.arange(11))
    np.testing.assert_array_equal(kept_edges(11, 1), np.zeros(0, dtype=np.int64))
    np.testing.assert_array_equal(kept_edges(11, 4), [2, 5, 8])  # linspace(0, 10, 5)[1:-1] = 2.5, 5, 7.5, rounded
    np.testing.assert_array_equal(kept_edges(11, 2), [5])


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 20),
    st.integers(1, 20),
    arrays(np.float64, 50, elements=st.floats(-5, 12, allow_nan=False)),
)
def test_a_row_in_a_merged_bin_is_in_one_of_its_bins(bins: int, want: int, scores: np.ndarray) -> None:
    """Keying a row by the kept edges puts it in the merged bin its fine bin joins: the owners' released counts per
    bin sum to their counts per merged bin (the merge is post-processing)."""
    edges = np.linspace(-2.0, 8.0, bins - 1)
    keep = kept_edges(len(edges), want)
    fine = np.searchsorted(edges, scores, side="right")
    merged = np.searchsorted(edges[keep], scores, side="right")
    np.testing.assert_array_equal(merged, np.searchsorted(keep, fine, side="left"))
    assert len(keep) + 1 <= max(want, 1)


class _Config:
    epsilon = 1.0


class _Agg:
    """What merge_keys reads of the aggregator: epsilon_v and |D_v| (public numbers)."""

    config = _Config()

    def __init__(self, validation_rows: int) -> None:
        self.validation_rows = validation_rows


def test_bins_merge_until_the_histograms_noise_is_at_most_the_consumers_rows() -> None:
    """Three owners of distinct data (three groups, told apart by their mean hashes), each holding every one of 12
    bins: 36 cells, whose Laplace noise at scale b = 2 / 0.5 = 4 sums to 144. With 1,000 validation rows the bins
    stand; with 100 the merge keeps the most bins B' whose 3 B' cells fit (3 B' 4 <= 100: 8); with 5, one bin."""
    purchase = ByDirection()
    sums = np.zeros((3, 64))
    sums[np.arange(3), np.arange(3)] = 1000.0  # mean hashes 1.0 apart: three groups
    counts = np.full((3, 12), 100.0)
    n_rows = np.full(3, 1000.0)
    rule = CellRule(edges=np.linspace(-2.0, 8.0, 11), direction=np.ones(4), centre=np.zeros(4))
    assert purchase.merge_keys(_Agg(1000), counts, sums, n_rows, 1.0, rule) is None  # 36 * 4 <= 1000
    merge = purchase.merge_keys(_Agg(100), counts, sums, n_rows, 1.0, rule)
    assert merge is not None
    bins = len(merge.rule.edges) + 1
    assert 3 * bins * 4 <= 100 < 3 * (bins + 1) * 4  # the most bins that fit (here 8)
    assert merge.matrix.shape == (12, bins) and (merge.matrix.sum(1) == 1).all()
    np.testing.assert_array_equal((counts @ merge.matrix).sum(1), counts.sum(1))  # every row counted once
    assert merge.names[0].startswith("bins 0-") and merge.keys == tuple(range(bins))
    np.testing.assert_array_equal(merge.rule.direction, rule.direction)
    one = purchase.merge_keys(_Agg(5), counts, sums, n_rows, 1.0, rule)
    assert one is not None and len(one.rule.edges) == 0 and one.names == ("bins 0-11",)


def test_many_owners_of_distinct_data_buy_by_merged_bins_within_3p_rows() -> None:
    """End to end: twelve owners, each of its own distribution, and a consumer of 30 rows: the 12 bins x owner
    groups are too many cells for its histogram, the run merges bins, and still buys at most 3p rows."""
    rng = np.random.default_rng(5)
    owners = [
        dpsumm.Owner(rng.normal(size=(150, 4)) + 3.0 * np.eye(4)[k % 4] * (k // 4 + 1), name=f"o{k}") for k in range(12)
    ]
    V = rng.normal(size=(30, 4)) + 3.0 * np.eye(4)[0]
    seed_rows = np.concatenate([o.data[:12] for o in owners])
    res = dpsumm.summarize(
        owners,
        V,
        10,
        dpsumm.Nominations(purchase=ByDirection()),
        seed_set=seed_rows,
        gamma="median",
        random_state=0,
        progress=False,
    )
    names = {c["label"] for c in res.extra["label_cells"]}
    assert any(str(n).startswith("bins ") for n in names)  # a merged bin (a bin of its own keeps its name)
    assert res.accessed.total <= 30 and len(res) == 10
    assert res.privacy.epsilon("validation", 1e-6) <= 1.0 and res.privacy.epsilon("owners", 1e-6) <= 1.0


def test_without_room_for_bins_the_consumer_releases_no_direction_and_its_histogram_spends_all() -> None:
    """End to end: twelve owners of 2,000 rows, each of its own distribution (twelve groups, told apart by their
    released mean hashes), and a consumer of 30 rows: even one bin's cells, the twelve groups, are more than its
    histogram can pay for (12 x b = 12 x 4 > 30). The consumer releases no direction; every row is in one bin; the
    histogram spends the whole epsilon_v (b = 2); the owners release in two parts, two events composed within
    their epsilon; at most 3p rows are bought."""
    rng = np.random.default_rng(5)
    owners = [
        dpsumm.Owner(rng.normal(size=(2000, 4)) + 4.0 * np.eye(4)[k % 4] * (k // 4 + 1), name=f"o{k}")
        for k in range(12)
    ]
    V = rng.normal(size=(30, 4)) + 4.0 * np.eye(4)[0]
    seed_rows = np.concatenate([o.data[:12] for o in owners])
    method = dpsumm.Nominations(purchase=ByDirection())
    res = dpsumm.summarize(owners, V, 10, method, seed_set=seed_rows, gamma="median", random_state=0, progress=False)
    assert {c["label"] for c in res.extra["label_cells"]} == {"bins 0-11"}
    assert len({tuple(c["owners"]) for c in res.extra["label_cells"]}) == 12  # the twelve groups
    entries = res.privacy.to_dict()["entries"]
    validation = [e["event"] for e in entries if e["party"] == "validation"]
    assert [v["kind"] for v in validation] == ["LaplaceEvent"] and math.isclose(validation[0]["epsilon"], 1.0)
    assert [e["event"]["kind"] for e in entries if e["party"] == "owners"] == ["GaussianEvent", "GaussianEvent"]
    assert res.privacy.epsilon("validation", 1e-6) <= 1.0 and res.privacy.epsilon("owners", 1e-6) <= 1.0
    assert res.accessed.total <= 30 and len(res) == 10


def test_below_min_rows_the_consumer_releases_no_direction() -> None:
    """A consumer of fewer rows than the request's ``min_rows`` releases nothing (an empty direction, its row
    count); from ``min_rows`` rows on, the release is the one without the threshold."""
    _, V, seed_rows = _data()
    centre, clip = public_geometry(seed_rows)
    req = DirectionRequest(centre=centre, clip=clip, epsilon=0.5, delta=1e-6)
    declined = ConsumerParty(V, Csprng(3)).handle(dataclasses.replace(req, min_rows=len(V) + 1))
    assert declined.noisy_mean.shape == (0,) and declined.n_rows == len(V) and declined.sigma == 0.0
    at = ConsumerParty(V, Csprng(3)).handle(dataclasses.replace(req, min_rows=len(V)))
    np.testing.assert_array_equal(at.noisy_mean, ConsumerParty(V, Csprng(3)).handle(req).noisy_mean)
    for bad in (-1, 2.5, True):
        with pytest.raises(dpsumm.ProtocolError):
            ConsumerParty(V, Csprng(3)).handle(dataclasses.replace(req, min_rows=bad))


def test_a_consumer_that_declines_the_direction_with_rows_enough_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fault injection: four owners leave room for bins in a histogram over 60 rows; a consumer that answers the
    direction request with an empty release over its 60 rows is refused, the run stops with a ProtocolError."""
    owners, V, seed_rows = _data()
    declined = DirectionRelease(noisy_mean=np.zeros(0), n_rows=len(V), sigma=0.0, granularity=0.0)
    monkeypatch.setattr(DirectionRequest, "answer", lambda self, consumer: declined)
    method = dpsumm.Nominations(purchase=ByDirection())
    with pytest.raises(dpsumm.ProtocolError, match="declined"):
        dpsumm.summarize(owners, V, 15, method, seed_set=seed_rows, random_state=0, progress=False)


def test_each_party_scores_its_rows_along_the_direction_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """An owner's release and its sale key its rows by the same released direction: the scores are computed once
    per party (the four owners and the consumer), not once per request, and the run is the same as without; the
    aggregator scores only the rows it bought."""
    from dpsumm.protocols.nominations import cell_rule

    owners, V, seed_rows = _data()
    method = dpsumm.Nominations(purchase=ByDirection())
    before = dpsumm.summarize(owners, V, 15, method, seed_set=seed_rows, random_state=0, progress=False)
    calls: list[int] = []
    scores = cell_rule._score_blocks

    def counted(data: np.ndarray, *args: object) -> Iterator[tuple[int, np.ndarray]]:
        calls.append(len(data))
        return scores(data, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(cell_rule, "_score_blocks", counted)
    after = dpsumm.summarize(owners, V, 15, method, seed_set=seed_rows, random_state=0, progress=False)
    parties = sorted([len(V)] + [o.data.shape[0] for o in owners])
    rest = list(calls)
    for n in parties:  # each party scores all of its rows once
        rest.remove(n)
    # the aggregator scores the rows it bought, once per sale, to check the cells they were sold as
    assert sum(rest) == after.accessed.total and len(rest) == len(owners)
    np.testing.assert_array_equal(after.index, before.index)
    np.testing.assert_array_equal(after.owner, before.owner)


def test_the_default_purchase_is_the_direction_purchase() -> None:
    """Issue 52: Nominations() and method="nominations" buy by cells along the consumer's released direction, and
    the purchases' table names it first (the default)."""
    from dpsumm.methods import PURCHASES, resolve_method

    assert dpsumm.Nominations().purchase == ByDirection() and dpsumm.ByDirection is ByDirection
    assert resolve_method("nominations").purchase == ByDirection()
    assert next(iter(PURCHASES)) == "direction"
    owners, V, seed_rows = _data()
    owners = [dpsumm.Owner(o.data, name=o.name) for o in owners]
    res = dpsumm.summarize(owners, V, 15, seed_set=seed_rows, random_state=1, progress=False)
    assert res.extra["purchase"] == "direction" and res.accessed.total <= 3 * 15
    assert res.privacy.epsilon("validation", 1e-6) <= 1.0 and res.privacy.epsilon("owners", 1e-6) <= 1.0


def test_a_label_set_crosses_the_bins_with_the_labels_and_rows_outside_it_are_never_sold() -> None:
    owners, V, seed_rows = _data()
    purchase = ByDirection(label_set=(1,), bins=4)
    assert dpsumm.Nominations(purchase=purchase).needs_labels and purchase.public_labels() == (1,)
    res = dpsumm.summarize(
        owners,
        V,
        15,
        dpsumm.Nominations(purchase=purchase),
        seed_set=seed_rows,
        validation_labels=np.ones(60, dtype=np.int64),
        random_state=1,
        progress=False,
    )
    assert all(owners[k].labels[i] == 1 for k, i in zip(res.owner, res.index))
    assert {c["label"] for c in res.extra["label_cells"]} <= {(1, f"bin {b}") for b in range(4)}
    assert res.accessed.total <= 3 * 15
    with pytest.raises(dpsumm.InvalidParameterError, match="validation_labels"):  # the set declared: labels needed
        dpsumm.summarize(
            owners, V, 15, dpsumm.Nominations(purchase=purchase), seed_set=seed_rows, random_state=1, progress=False
        )


def test_the_aggregator_counts_the_hashed_rows_beside_the_rows_bought() -> None:
    """result.accessed: a purchase by cells sends the hashes of the rows it buys only (hashed = bought); Winners the
    hashes of every nominee and the rows of the winners only."""
    owners, V, seed_rows = _data()
    owners = [dpsumm.Owner(o.data, name=o.name) for o in owners]
    res = dpsumm.summarize(owners, V, 10, seed_set=seed_rows, random_state=1, progress=False)
    assert res.accessed.hashed_rows == res.accessed.total > 0
    assert res.accessed.hashed_rows_per_owner == res.accessed.per_owner
    win = dpsumm.summarize(
        owners, V, 10, dpsumm.Nominations(purchase=dpsumm.Winners(), nominees=20), random_state=1, progress=False
    )
    assert win.accessed.hashed_rows == 4 * 20 and win.accessed.total == 10


def test_owners_too_small_to_be_told_apart_are_kept_apart_when_the_histogram_can_pay():
    """scikit-learn's digits split (five owners of about 180 rows, each holding two digits; 44 consumer rows): no
    pair of owners' released mean hashes can show a difference the size of the public seed rows' two halves, so
    the default keeps every owner in its own group (each owner places a cell of its own; five groups x 2 <= 44)
    instead of pooling them; with one bin, |D_v| is not known before the cells and the five are one group."""
    s = dpsumm.datasets.digits_label_split(random_state=0)
    owners = [dpsumm.Owner(o, name=f"o{k}") for k, o in enumerate(s.owners)]

    def cells(purchase: ByDirection) -> set[tuple[str, ...]]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SummaryFitWarning)
            res = dpsumm.summarize(
                owners,
                s.validation,
                20,
                dpsumm.Nominations(purchase=purchase),
                seed_set=s.seed_set,
                gamma="median",
                random_state=0,
                progress=False,
            )
        assert res.accessed.total <= 60
        assert res.privacy.epsilon("validation", 1e-6) <= 1.0 and res.privacy.epsilon("owners", 1e-6) <= 1.0
        return {tuple(c["owners"]) for c in res.extra["label_cells"]}

    assert {(f"o{k}",) for k in range(5)} <= cells(ByDirection())
    assert cells(ByDirection(bins=1)) == {tuple(f"o{k}" for k in range(5))}


def test_the_direction_purchase_asks_a_capped_cells_rows_within_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """ByDirection's quotas send what a cell's cap leaves to the same key's other sellers first
    (``quotas_from_cells(within_keys=True)``); the strata and label purchases keep their measured rule."""
    from dpsumm.protocols.nominations import cell_purchase
    from dpsumm.protocols.nominations.by_label import ByLabel
    from dpsumm.protocols.nominations.by_strata import ByStrata

    seen: list[bool] = []
    quotas = cell_purchase.quotas_with_reserve

    def spy(*args: object, **kwargs: object) -> np.ndarray:
        seen.append(bool(kwargs["within_keys"]))
        return quotas(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cell_purchase, "quotas_with_reserve", spy)
    rng = np.random.default_rng(2)
    owners = [dpsumm.Owner(rng.normal(size=(300, 3)) + k, name=f"o{k}") for k in range(3)]
    V = rng.normal(size=(120, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SummaryFitWarning)
        dpsumm.summarize(
            owners,
            V,
            10,
            dpsumm.Nominations(purchase=ByDirection()),
            seed_set=np.concatenate([o.data[:20] for o in owners]),
            gamma="median",
            random_state=0,
            progress=False,
        )
    assert seen == [True]
    assert not ByStrata.overflow_within_keys and not ByLabel.overflow_within_keys


@pytest.mark.parametrize(
    "change, match",
    [
        (replace(sigma="junk"), "sigma"),
        (lambda r, m: dataclasses.replace(r, noisy_mean=np.full_like(r.noisy_mean, 1e300)), "clipping norm"),
    ],
    ids=["sigma-str", "beyond-clip"],
)
def test_a_malformed_direction_release_is_a_protocol_error(change, match) -> None:
    """A sigma that is not a number used to raise a ValueError; a direction of 1e300s a numpy overflow warning (its
    norm) on the way to cells of no use: a coordinate beyond the clipping norm and 12 noise sigmas is refused."""
    corrupt_refused(dpsumm.Nominations(dim=32), "direction_release", change, match)


def test_a_direction_request_with_a_complex_centre_is_refused_by_the_consumer() -> None:
    _, V, seed_rows = _data()
    centre, clip = public_geometry(seed_rows)
    request = DirectionRequest(centre=centre.astype(complex), clip=clip, epsilon=0.5, delta=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy's ComplexWarning is one
        with pytest.raises(dpsumm.ProtocolError, match="finite centre"):
            ConsumerParty(V, Csprng(3)).handle(request)


def test_the_cells_h1_has_the_kernel_spaces_width_where_the_runs_gamma_is_degenerate() -> None:
    """At a fixed gamma far above the median heuristic (every row unrelated to every other at the run's width: the
    scale check_kernel warns about) the owners' releases and the consumer's histogram are asked in the cells' h1 at
    the seed rows' median heuristic, the kernel space's width; at a gamma within the range, the run's; the label
    purchase keeps the run's gamma."""
    owners, V, seed_rows = _data()
    rows = [o.data for o in owners]
    by_label = {"labels": [o.labels for o in owners], "validation_labels": np.zeros(len(V), np.int64)}
    wide = kernel_gamma(seed_rows)
    inside = 3.0 * wide  # check_kernel's scale 3: not degenerate
    far = 40.0
    assert far / wide > DEGENERATE_HIGH
    for method, gamma, kw, want in (
        (dpsumm.Nominations(), far, {}, wide),
        (dpsumm.Nominations(), "median", {}, wide),
        (dpsumm.Nominations(), inside, {}, inside),
        (dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=(0, 1))), far, by_label, far),
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _, parties = run_recorded(method, rows, V, 10, 5, gamma=gamma, seed_set=seed_rows, **kw)
        asked = [
            m
            for party in parties.values()
            for m in party.messages
            if isinstance(m, (CellReleaseRequest, CellHistogramRequest))
        ]
        assert {type(m) for m in asked} == {CellReleaseRequest, CellHistogramRequest}
        assert {float(m.gamma) for m in asked} == {want}, (method.purchase.name, gamma)
