"""dpsumm.summarize: arguments checked before any noise (budgets, labels, seed sets, gamma, feature ranges), seeded
runs marked, decisions logged, each owner's rows read once.
"""

from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpsumm
import dpsumm.transport
from dpsumm import Budget, Owner
from refusal import refused


def test_summarize_with_a_budget_stays_within_it():
    rng = np.random.default_rng(0)
    owners = [rng.normal(size=(80, 4)) + k for k in range(3)]
    budget = dpsumm.Budget(epsilon=1.0, delta=1e-6, validation_epsilon=2.0, validation_delta=1e-6)
    res = dpsumm.summarize(
        owners,
        rng.normal(size=(50, 4)),
        10,
        method=dpsumm.PaperProtocol(dim=32),
        privacy=budget,
        seed_set=rng.normal(size=(20, 4)),
        random_state=0,
        progress=False,
    )
    totals = res.privacy.totals(1e-6, 1e-6)
    assert totals["owners"]["tight"] <= 1.0 + 1e-9
    assert totals["validation"]["tight"] <= 2.0 + 1e-9
    # The ledger reports at the budget's deltas by default, and says the seeded run is not private.
    assert res.privacy.deltas == {"owners": 1e-6, "validation": 1e-6}
    assert res.privacy.totals() == totals
    assert res.privacy.seeded and res.privacy.table().startswith("*** seeded run: NOT private")


RNG = np.random.default_rng(7)


OWNERS = [RNG.uniform(size=(30, 3)) for _ in range(3)]


VALIDATION = RNG.uniform(size=(20, 3))


KW = dict(progress=False, random_state=0)


def test_owner_labels_that_cannot_be_sent_are_refused_before_the_run(no_messages):
    # Was: every owner excluded at its first sale (label.item()), and a summary of 0 rows returned.
    owners = [Owner(o, labels=[object()] * 30) for o in OWNERS]
    refused(lambda: dpsumm.summarize(owners, VALIDATION, 5, "paper-greedy", **KW), "owners")


def test_owner_labels_as_strings_in_an_object_array_are_sent():
    owners = [Owner(o, labels=np.array(["a", "b", "c"] * 10, dtype=object)) for o in OWNERS]
    res = dpsumm.summarize(owners, VALIDATION, 5, "paper-greedy", **KW)
    assert len(res) == 5 and set(res.labels.tolist()) <= {"a", "b", "c"}


RNG_audit = np.random.default_rng(0)


OWNERS_audit = [RNG_audit.uniform(size=(30, 3)) for _ in range(3)]


VALIDATION_audit = RNG_audit.uniform(size=(20, 3))


LABELS = [RNG_audit.integers(0, 3, size=30) for _ in range(3)]


VALIDATION_LABELS = RNG_audit.integers(0, 3, size=20)


LABEL_METHOD = dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=(0, 1, 2)))


@pytest.mark.parametrize(
    "method,privacy",
    [
        (dpsumm.Nominations(), Budget(validation_epsilon=1e-6, validation_delta=1e-6)),
        # the owners' label release at an owners' epsilon no sampler can meet
        (LABEL_METHOD, Budget(1e-6, 1e-6, 1.0, 1e-6)),
        # the tilt's hashed mean at sale_tilt_share * epsilon_v
        (
            dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=(0, 1, 2), sale_tilt_share=0.5)),
            Budget(1.0, 1e-6, 1e-6, 1e-6),
        ),
    ],
)
def test_an_uncalibratable_budget_is_refused_before_any_release(method, privacy, no_messages):
    owners = [Owner(o, labels=y) for o, y in zip(OWNERS_audit, LABELS)] if method.needs_labels else OWNERS_audit
    labels = VALIDATION_LABELS if method.needs_labels else None
    refused(
        lambda: dpsumm.summarize(owners, VALIDATION_audit, 5, method, privacy=privacy, validation_labels=labels, **KW),
        "privacy",
    )


def test_mwem_steps_beyond_the_sampler_are_refused(no_messages):
    refused(lambda: dpsumm.Nominations(validation_release="mwem", dim=20000), "dim")
    refused(
        lambda: dpsumm.summarize(OWNERS_audit, VALIDATION_audit, 3, dpsumm.PaperProtocol(t_init=2**30), **KW), "t_init"
    )


@pytest.mark.parametrize(
    "owner_labels",
    [
        [np.where(y == 0, np.nan, 1.0) for y in LABELS],
        [np.full(30, None)] * 3,
        [y.astype(complex) for y in LABELS],
        [y.astype(str) for y in LABELS],  # strings while the label set holds numbers: no row would ever match
        [LABELS[0], LABELS[1].astype(str), LABELS[2]],
        [np.zeros(30, "datetime64[s]")] * 3,
    ],
)
def test_owner_labels_a_label_purchase_cannot_count_are_refused(owner_labels, no_messages):
    owners = [Owner(o, labels=y) for o, y in zip(OWNERS_audit, owner_labels)]
    refused(
        lambda: dpsumm.summarize(owners, VALIDATION_audit, 5, LABEL_METHOD, validation_labels=VALIDATION_LABELS, **KW),
        "owners",
    )


def test_validation_labels_of_the_wrong_kind_are_refused(no_messages):
    owners = [Owner(o, labels=y) for o, y in zip(OWNERS_audit, LABELS)]
    for bad in (VALIDATION_LABELS.astype(str), np.full(20, None), VALIDATION_LABELS.astype(complex)):
        refused(
            lambda: dpsumm.summarize(owners, VALIDATION_audit, 5, LABEL_METHOD, validation_labels=bad, **KW),
            "validation_labels",
        )


def test_summarize_blames_the_seed_set_for_a_median_gamma_it_cannot_take(no_messages):
    close = np.arange(12.0).reshape(4, 3) * 1e-200
    refused(
        lambda: dpsumm.summarize(OWNERS_audit, VALIDATION_audit, 5, gamma="median", seed_set=close, **KW), "seed_set"
    )


def test_feature_range_may_be_an_array_pair():
    res = dpsumm.summarize(OWNERS_audit, VALIDATION_audit, 5, "paper-greedy", feature_range=np.array([0.0, 1.0]), **KW)
    assert len(res) == 5


FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


# Objects a confused caller might pass where a number is expected.
junk = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=3),
    st.lists(st.integers(), max_size=2),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(2**80), max_value=2**80),
)


def test_summarize_refuses_rows_that_overflow_h1_before_any_noise():
    owners = [np.zeros((5, 3)), np.full((5, 3), 1e300)]
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.summarize(owners, np.zeros((4, 3)), 2, random_state=0, progress=False)
    assert e.value.argument == "owners"
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.summarize([np.zeros((5, 3))], np.zeros((4, 3)), 2, method=dpsumm.Nominations(dim=2**40), progress=False)
    assert e.value.argument == "dim"


@FAST
@given(
    arg=st.sampled_from(["size", "dim", "gamma", "hash_seed", "feature_range", "seed_set", "progress", "random_state"]),
    value=junk,
)
def test_summarize_arguments(arg, value):
    rng = np.random.default_rng(0)
    owners = [rng.normal(size=(10, 3)) for _ in range(2)]
    kwargs = {"size": 3, "method": "paper-greedy", "progress": False, "random_state": 0, arg: value}
    size = kwargs.pop("size")
    try:
        res = dpsumm.summarize(owners, rng.normal(size=(5, 3)), size, **kwargs)
    except dpsumm.InvalidParameterError as exc:
        assert exc.argument == arg, (exc.argument, str(exc))
    else:
        assert len(res) == size


def test_seeded_runs_are_marked_not_private():
    rng = np.random.default_rng(0)
    owners = [rng.normal(size=(20, 3)) for _ in range(2)]
    res = dpsumm.summarize(owners, rng.normal(size=(8, 3)), 4, random_state=0, progress=False, seed_set=5)
    assert res.seeded and not res.private
    assert "NOT private" in repr(res)
    assert res.privacy.seeded and "NOT private" in res.privacy.table()
    assert res.privacy.to_dict()["private"] is False
    res = dpsumm.summarize(owners, rng.normal(size=(8, 3)), 4, progress=False, seed_set=5)
    assert not res.seeded and res.private and "NOT" not in repr(res)
    assert "NOT private" not in res.privacy.table()


def test_summarize_reads_each_owners_rows_once_for_its_input_checks(monkeypatch):
    # Finiteness and the hashing bound come from one parallel read of each owner's rows (issue 22: no second
    # pass over the input for checks).
    from dpsumm import _validation

    rng = np.random.default_rng(0)
    owners = [rng.random((500, 6)).astype(np.float32) for _ in range(3)]
    reads: list[int] = []
    real = _validation._core.finite_max_abs

    def counting(arr, *args, **kwargs):
        reads.extend(k for k, o in enumerate(owners) if np.shares_memory(arr, o))
        return real(arr, *args, **kwargs)

    monkeypatch.setattr(_validation._core, "finite_max_abs", counting)
    dpsumm.summarize(owners, rng.random((40, 6)), 10, gamma=0.5, random_state=0, progress=False)
    assert sorted(reads) == [0, 1, 2]
    # A value beyond float32 is still refused, naming the owners, from that one read.
    big = [o.astype(np.float64) for o in owners]
    big[1][3, 2] = 1e39
    with pytest.raises(dpsumm.InvalidParameterError, match="float32") as info:
        dpsumm.summarize(big, rng.random((40, 6)), 10, gamma=0.5, random_state=0, progress=False)
    assert info.value.argument == "owners"


@FAST
@given(
    count=st.one_of(st.integers(max_value=-1), st.integers(min_value=2**40), st.booleans()),
    method=st.sampled_from(["nominations", "uniform", "central-greedy", "paper"]),
)
def test_a_seed_set_count_no_run_could_use_is_refused_even_when_no_seed_row_is_drawn(count, method):
    """Was: `seed_set=-5` accepted with nominations at a fixed gamma (no seed row drawn, the count never looked at)."""
    rng = np.random.default_rng(0)
    with pytest.raises(dpsumm.InvalidParameterError) as err:
        dpsumm.summarize(
            [rng.random((50, 3)), rng.random((50, 3))],
            rng.random((20, 3)),
            4,
            method,
            seed_set=count,
            gamma=0.5,
            progress=False,
        )
    assert err.value.argument == "seed_set"


def test_the_default_validation_delta_fits_a_large_validation_set():
    """Was: with no budget, the default delta_v = 1e-6 refused a validation set of 10^6 rows (1e-6 >= 1/|D_v|). The
    default is now 0.01/|D_v| there (1e-8), the release calibrated and recorded at it; small sets keep 1e-6."""
    from dpsumm.protocols.nominations.method import default_validation_budget

    rng = np.random.default_rng(0)
    owners = [rng.random((100, 2)), rng.random((100, 2))]
    res = dpsumm.summarize(
        owners,
        rng.random((1_000_000, 2), dtype=np.float32),
        5,
        dpsumm.Nominations(dim=16),
        random_state=0,
        progress=False,
    )
    assert len(res) == 5 and res.privacy.to_dict()["delta"]["validation"] == pytest.approx(1e-8)
    assert res.privacy.epsilon("validation", 1e-8) <= 1.0
    assert default_validation_budget(30).validation_delta == 1e-6
    assert default_validation_budget(10_000).validation_delta == 1e-6
    assert default_validation_budget(20_000).validation_delta == pytest.approx(0.01 / 20_000)
    assert default_validation_budget(None).validation_delta == 1e-6


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    owners = [dpsumm.Owner(rng.uniform(size=(30, 4)), labels=np.full(30, k), name=f"o{k}") for k in range(3)]
    validation = rng.uniform(size=(25, 4))
    seed_set = rng.uniform(size=(12, 4))
    return owners, validation, seed_set


def _budget():
    return dpsumm.Budget(epsilon=4.0, delta=1e-4, validation_epsilon=4.0, validation_delta=1e-2)


def test_summarize_gamma_median_uses_the_seed_set_only(data):
    owners, validation, seed_set = data
    res = dpsumm.summarize(
        owners,
        validation,
        6,
        method=dpsumm.PaperGreedy(dim=32),
        seed_set=seed_set,
        gamma="median",
        random_state=0,
        progress=False,
    )
    assert res.hasher.gamma == pytest.approx(dpsumm.median_gamma(seed_set))
    # a different validation set (private) does not change gamma: only the public seed set does
    res2 = dpsumm.summarize(
        owners,
        validation[:10] * 0.5,
        6,
        method=dpsumm.PaperGreedy(dim=32),
        seed_set=seed_set,
        gamma="median",
        random_state=0,
        progress=False,
    )
    assert res2.hasher.gamma == res.hasher.gamma


def test_gamma_median_needs_two_seed_rows(data):
    owners, validation, _ = data
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.summarize(
            owners,
            validation,
            4,
            method="paper-greedy",
            seed_set=np.zeros((1, 4)),
            gamma="median",
            progress=False,
            random_state=0,
        )
    # gamma="median" is the default: the one-row seed set is what the user must change.
    assert e.value.argument == "seed_set"
    assert "at least two public rows" in str(e.value)


@pytest.mark.parametrize("gamma", ["mean", -1.0, 0.0, float("nan"), True])
def test_bad_gamma_is_refused(data, gamma):
    owners, validation, _ = data
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.summarize(owners, validation, 4, method="paper-greedy", gamma=gamma, progress=False, random_state=0)
    assert e.value.argument == "gamma"


def test_degenerate_kernel_warns_and_logs_on_raw_digits(caplog):
    """Raw 0-16 digits pixels at gamma=0.1 (the issue's failure): warned; scaled to [0, 1]: silent."""
    split = dpsumm.datasets.digits_label_split(random_state=0)
    raw = [o * 16.0 for o in split.owners]  # the split is scaled to [0, 1]; undo it
    with (
        caplog.at_level(logging.WARNING, logger="dpsumm"),
        pytest.warns(dpsumm.preprocessing.DegenerateKernelWarning, match="degenerate"),
    ):
        dpsumm.summarize(
            raw,
            split.validation * 16.0,
            10,
            method=dpsumm.PaperGreedy(dim=32),
            seed_set=split.seed_set * 16.0,
            gamma=0.1,
            random_state=0,
            progress=False,
        )
    assert any("degenerate" in r.getMessage() for r in caplog.records)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpsumm.preprocessing.DegenerateKernelWarning)
        dpsumm.summarize(
            split.owners,
            split.validation,
            10,
            method=dpsumm.PaperGreedy(dim=32),
            seed_set=split.seed_set,
            gamma=0.1,
            random_state=0,
            progress=False,
        )


@pytest.mark.parametrize("method", ["paper-greedy", "central-greedy", "exact-greedy", "uniform"])
def test_non_private_method_with_privacy_is_refused_before_any_work(data, method, monkeypatch):
    owners, validation, _ = data

    def no_calibration(*a, **k):
        raise AssertionError("calibration ran before the refusal")

    monkeypatch.setattr(dpsumm.accounting, "calibrate", no_calibration)
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        dpsumm.summarize(owners, validation, 4, method=method, privacy=_budget(), progress=False)
    assert e.value.argument == "privacy" and "not private" in str(e.value)


def test_schedule_with_privacy_is_refused(data, monkeypatch):
    owners, validation, _ = data
    monkeypatch.setattr(dpsumm.accounting, "calibrate", lambda *a, **k: pytest.fail("calibrated"))
    sched = dpsumm.accounting.paper_schedule(4, 3, 140)
    for schedule in (sched,):  # schedule="paper" is the default: with a budget, the run calibrates instead
        with pytest.raises(dpsumm.InvalidParameterError) as e:
            dpsumm.summarize(
                owners, validation, 4, method=dpsumm.PaperProtocol(schedule=schedule), privacy=_budget(), progress=False
            )
        assert e.value.argument == "schedule"


def test_run_decisions_are_logged(data, caplog):
    owners, validation, seed_set = data
    with caplog.at_level(logging.INFO, logger="dpsumm"):
        dpsumm.summarize(
            owners,
            validation,
            4,
            method=dpsumm.PaperProtocol(dim=16),
            seed_set=seed_set,
            gamma="median",
            privacy=_budget(),
            random_state=0,
            progress=False,
        )
    text = "\n".join(r.getMessage() for r in caplog.records if r.name == "dpsumm")
    assert "calibrated the schedule" in text and "gamma='median'" in text and "seeded: NOT private" in text


def _group_shift(seed: int = 5) -> tuple[list[Owner], np.ndarray, np.ndarray]:
    """Owners of two groups of rows (group A far from B) with labels that say nothing about the group; the consumer
    wants group A only."""
    rng = np.random.default_rng(seed)

    def rows(n: int, share_a: float) -> tuple[np.ndarray, np.ndarray]:
        a = rng.random(n) < share_a
        return rng.normal(size=(n, 3)) * 0.5 + np.where(a[:, None], 3.0, 0.0), rng.integers(0, 2, n)

    owners = [Owner(*rows(400, s), name=f"o{k}") for k, s in enumerate((0.1, 0.0, 0.2))]
    V, y_v = rows(80, 1.0)
    return owners, V, y_v


def test_a_private_summary_no_closer_to_d_v_than_random_rows_of_it_warns_and_records_its_fit():
    """Labels that do not carry the shift: the label purchase buys group B rows, and the run says so (with the cells
    named as the likely cause); the fit is the metric's, recorded in result.extra; a baseline records none."""
    owners, V, y_v = _group_shift()
    method = dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=(0, 1)))
    with pytest.warns(dpsumm.metrics.SummaryFitWarning, match=r"validation_fit.*labels or strata") as record:
        res = dpsumm.summarize(owners, V, 20, method, gamma=0.5, validation_labels=y_v, random_state=0, progress=False)
    assert [w.filename for w in record if "validation_fit" in str(w.message)] == [__file__]  # the caller's line
    fit = res.extra["validation_fit"]
    assert fit == dpsumm.metrics.validation_fit(res.points, V, 0.5) and fit >= 1.0
    exact = dpsumm.summarize(owners, V, 20, "exact-greedy", gamma=0.5, random_state=0, progress=False)
    assert "validation_fit" not in exact.extra and dpsumm.metrics.validation_fit(exact.points, V, 0.5) < 0.2


def test_a_private_summary_of_rows_like_d_v_records_its_fit_without_a_warning():
    owners, V, _ = _group_shift()
    A = [Owner(o.data[o.data[:, 0] > 1.5], name=o.name) for o in owners if (o.data[:, 0] > 1.5).sum() > 40]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        res = dpsumm.summarize(
            A, V, 20, dpsumm.Nominations(), gamma=0.5, seed_set=V[:10] - 3.0, random_state=0, progress=False
        )
    assert 0.0 <= res.extra["validation_fit"] < 1.0


def test_a_purchase_is_a_method_and_owners_with_strata_serve_every_purchase():
    """summarize(..., method=ByStrata(...)) runs nominations with that purchase; the same owners, built with strata,
    run the default purchase too (their strata left aside), and the result carries the kernel width it used."""
    rng = np.random.default_rng(0)
    owners = [dpsumm.Owner(rng.random((120, 2)), strata=rng.integers(0, 2, 120)) for _ in range(3)]
    validation, strata_v = rng.random((60, 2)), rng.integers(0, 2, 60)
    by_strata = dpsumm.summarize(
        owners, validation, 10, dpsumm.ByStrata(levels=[(0, 1)]), validation_strata=strata_v, progress=False
    )
    assert by_strata.method == "nominations" and len(by_strata) == 10
    default = dpsumm.summarize(owners, validation, 10, progress=False)
    assert len(default) == 10 and default.gamma == default.hasher.gamma > 0
    assert dpsumm.metrics.validation_fit(default.points, validation, default.gamma) >= 0


class _PartiesTransport(dpsumm.transport.Transport):
    """A user's transport whose ``parties`` is ``value`` (raised when an exception)."""

    def __init__(self, value: object) -> None:
        self.value = value

    @property
    def parties(self):  # type: ignore[no-untyped-def]
        if isinstance(self.value, Exception):
            raise self.value
        return self.value

    def request(self, party, message):  # type: ignore[no-untyped-def]
        raise AssertionError("no party is asked before the transport is checked")


@pytest.mark.parametrize(
    "parties",
    [None, 3, "owner-0owner-1consumer", ValueError("no grid")],
    ids=["none", "int", "str", "raises"],
)
def test_a_transport_whose_parties_are_not_names_is_refused(parties):
    """``transport.parties`` that is None or an int used to raise a TypeError, one that raised its own error, and a
    string was searched for the names as substrings."""
    rng = np.random.default_rng(0)
    refused(
        lambda: dpsumm.summarize(
            [Owner(rng.random((20, 2)), name="owner-0"), Owner(rng.random((20, 2)), name="owner-1")],
            rng.random((10, 2)),
            4,
            method=dpsumm.Nominations(dim=16, purchase=dpsumm.Nominees()),
            progress=False,
            transport=_PartiesTransport(parties),
        ),
        "transport",
    )
