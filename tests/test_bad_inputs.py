"""The bad-input audit of the public Python API (py-audit): every defect a fuzz of ``dpsumm.__all__``,
``dpsumm.accounting``, the datasets, metrics, PFDS and experiment entry points, the estimator, the samplers and the
CLI found, as a :class:`dpsumm.DpsummError` naming the argument (``.argument``), raised before any party is asked
anything and before any noise is drawn; and the inputs that now work where they failed.

Classes of defect: numbers beyond the float range (an ``int`` of 400 digits, a huge ``Fraction``) reaching
``float()``; ragged lists and masked arrays reaching ``np.asarray``; strings, complex numbers, datetimes and numpy
bools cast to floats; NaN or a short result returned silently; loops and allocations sized by an argument (hangs,
``MemoryError``); bare ``TypeError``/``AttributeError``/``KeyError``/``IndexError`` from unvalidated helpers; an
error naming an internal argument (``X``, ``values``, ``count``, ``events``) instead of the caller's.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dpsumm
from dpsumm import DpsummError, InvalidParameterError, Owner
from dpsumm import accounting as acc
from dpsumm import datasets, experiments, kernels, metrics, pfds
from refusal import HUGE, refused

RNG = np.random.default_rng(7)
OWNERS = [RNG.uniform(size=(30, 3)) for _ in range(3)]
VALIDATION = RNG.uniform(size=(20, 3))
LABELS = [RNG.integers(0, 3, size=30) for _ in range(3)]
Y = RNG.integers(0, 2, size=20)
U = RNG.uniform(-1, 1, size=(10, 4))
HUGE_FRACTION = Fraction(10**400, 3)
KW = dict(progress=False, random_state=0)
RAGGED = [[0.1, 0.2], [0.3]]


def _ledger():
    led = acc.Ledger()
    led.record("validation", acc.calibrate_gaussian(1.0, 1e-6, sensitivity=0.1, dim=3).event(), label="g~")
    return led


DOMAIN = pfds.Domain.box(3, 0.0, 1.0, classes=range(2))
AGENTS = [RNG.uniform(size=(20, 3)) for _ in range(2)]
AGENT_LABELS = [RNG.integers(0, 2, 20) for _ in range(2)]


# -------------------------------------------------------------- numbers beyond the float range (bare OverflowError)


@pytest.mark.parametrize("call,argument", [
    (lambda: dpsumm.summarize(OWNERS, VALIDATION, 5, "uniform", gamma=HUGE, **KW), "gamma"),
    (lambda: dpsumm.summarize(OWNERS, VALIDATION, 5, "uniform", feature_range=(0, HUGE), **KW), "feature_range"),
    (lambda: dpsumm.RFFHasher(3, dim=4, gamma=HUGE), "gamma"),
    (lambda: dpsumm.RFFHasher(3, dim=4).set_params(gamma=-HUGE), "gamma"),
    (lambda: dpsumm.Budget(validation_epsilon=1.0, validation_delta=HUGE), "validation_delta"),
    (lambda: dpsumm.Budget(1.0, HUGE_FRACTION, 1.0, 1e-6), "delta"),
    (lambda: acc.BudgetAccountant(validation_epsilon=1.0, validation_delta=-HUGE), "validation_delta"),
    (lambda: dpsumm.Nominations(temperature=HUGE), "temperature"),
    (lambda: dpsumm.ByLabel(label_set=(0, 1), purchase_factor=HUGE_FRACTION), "purchase_factor"),
    (lambda: dpsumm.ByLabel(label_set=(0, 1), sale_tilt_share=HUGE_FRACTION), "sale_tilt_share"),
    (lambda: dpsumm.PaperProtocol(epsilon_auction=HUGE), "epsilon_auction"),
    (lambda: dpsumm.kernels.mmd2(OWNERS[0], VALIDATION, HUGE), "gamma"),
    (lambda: dpsumm.kernels.kernel_sum(OWNERS[0], VALIDATION, HUGE_FRACTION), "gamma"),
    (lambda: metrics.mmd_increase_pct(HUGE, 1.0), "alg"),
    (lambda: metrics.mmd_increase_pct(1.0, -HUGE), "greedy"),
    (lambda: metrics.svm_accuracy(VALIDATION, Y, VALIDATION, Y, C=HUGE), "C"),
    (lambda: dpsumm.scale_to_unit(VALIDATION, HUGE, 1.0), "low"),
    (lambda: dpsumm.scale_to_unit(VALIDATION, 0.0, HUGE_FRACTION), "high"),
    (lambda: dpsumm.privacy.ProductMWEM(4, HUGE), "eta"),
    (lambda: dpsumm.privacy.discrete_gaussian(HUGE, dpsumm.privacy.Csprng(0)), "sigma"),
    (lambda: acc.LaplaceEvent(0.1, HUGE, "replace-one"), "sensitivity"),
    (lambda: acc.LaplaceEvent(0.1, 1.0, "replace-one", granularity=HUGE_FRACTION), "granularity"),
    (lambda: acc.AuctionEvent(HUGE, 1, 3), "epsilon"),
    (lambda: acc.paper_schedule(5, 3, epsilon_auction=HUGE), "epsilon_auction"),
    (lambda: datasets.covariate_shift(2, 10, 3, shift=HUGE), "shift"),
    (lambda: pfds.Domain([(0, HUGE)], classes=[0, 1]), "bounds"),
    (lambda: pfds.pfds(AGENTS, AGENT_LABELS, DOMAIN, HUGE, random_state=0), "epsilon"),
    (lambda: pfds.make_tree(AGENTS[0], AGENT_LABELS[0], DOMAIN, -HUGE, random_state=0), "epsilon_level"),
])
def test_a_number_beyond_the_float_range_is_refused_naming_the_argument(call, argument):
    refused(call, argument)


def test_a_delta_beyond_the_float_range_is_refused_not_read_as_infinite_epsilon():
    # Was: each accountant returned inf (its OverflowError read as "no finite guarantee").
    for name in ("basic", "advanced", "kov", "tight"):
        refused(lambda name=name: getattr(acc, name)(acc.mwem_step_events(0.1, 3), HUGE), "delta")


@settings(max_examples=40, deadline=None)
@given(st.one_of(st.integers(min_value=2**1024, max_value=2**1100), st.integers(min_value=-(2**1100), max_value=-(2**1024)),
                 st.builds(Fraction, st.integers(min_value=2**1030, max_value=2**1100), st.integers(1, 9))))
def test_no_real_number_argument_raises_overflow_error(value):
    for call, argument in ((lambda: dpsumm.RFFHasher(3, dim=4, gamma=value), "gamma"),
                           (lambda: acc.ExponentialEvent(0.1, value, "replace-one"), "sensitivity"),
                           (lambda: acc.calibrate_gaussian(value, 1e-6, sensitivity=0.1, dim=3), "epsilon"),
                           (lambda: dpsumm.Nominations(temperature=value), "temperature")):
        refused(call, argument)


def test_eta_whose_grid_overflows_is_refused():
    # 2 / 5e-324 is infinite: round() raised OverflowError.
    refused(lambda: dpsumm.privacy.stochastic_round(U, 5e-324, dpsumm.privacy.Csprng(0)), "eta")
    refused(lambda: dpsumm.privacy.ProductMWEM(4, 5e-324), "eta")


# ------------------------------------------------------------------------ ragged lists, masked arrays, iterators


@pytest.mark.parametrize("call,argument", [
    (lambda: dpsumm.privacy.stochastic_round(RAGGED, 0.5, dpsumm.privacy.Csprng(0)), "values"),
    (lambda: dpsumm.privacy.quantize_column_sums(RAGGED, 0.5, dpsumm.privacy.Csprng(0)), "values"),
    (lambda: dpsumm.privacy.gaussian_on_grid(RAGGED, 1.0, 0.1, dpsumm.privacy.Csprng(0)), "values"),
    (lambda: dpsumm.privacy.gaussian_mean_release(RAGGED, acc.calibrate_gaussian(1.0, 1e-6, sensitivity=0.1, dim=2),
                                          dpsumm.privacy.Csprng(0)), "mean"),
    (lambda: dpsumm.kernels.BidIndex.from_rows(RAGGED, dpsumm.RFFHasher(2, dim=4)), "rows"),
    (lambda: dpsumm.summarize([Owner(o, labels=[[1], [2, 3]] + [[0]] * 28) for o in OWNERS], VALIDATION, 5,
                              "uniform", **KW), "owners"),
    (lambda: pfds.make_tree(AGENTS[0], [[0], [1, 0]] + [[0]] * 18, DOMAIN, 0.5, random_state=0), "y"),
    (lambda: pfds.pfds(AGENTS, [[[0], [1, 0]] + [[0]] * 18, AGENT_LABELS[1]], DOMAIN, 1.0, random_state=0), "labels[0]"),
])
def test_a_ragged_list_is_refused_naming_the_argument(call, argument):
    refused(call, argument)


def _masked(X):
    mask = np.zeros(np.shape(X), bool)
    mask.flat[0] = True
    return np.ma.masked_array(X, mask=mask)


@pytest.mark.parametrize("call,argument", [
    (lambda: dpsumm.summarize([_masked(OWNERS[0]), *OWNERS[1:]], VALIDATION, 5, "uniform", **KW), "owners"),
    (lambda: dpsumm.summarize(OWNERS, _masked(VALIDATION), 5, "uniform", **KW), "validation"),
    (lambda: dpsumm.kernels.mmd2(_masked(OWNERS[0]), VALIDATION, 0.1), "A"),
    (lambda: dpsumm.RFFHasher(3, dim=4).transform(_masked(VALIDATION)), "X"),
    (lambda: metrics.svm_accuracy(VALIDATION, np.ma.masked_array(Y, Y == 0), VALIDATION, Y), "y"),
    (lambda: dpsumm.privacy.gaussian_on_grid(_masked(np.zeros(3)), 1.0, 0.1, dpsumm.privacy.Csprng(0)), "values"),
])
def test_a_masked_array_with_masked_entries_is_refused(call, argument):
    # np.asarray drops the mask: the values under it were used as data.
    refused(call, argument)


def test_a_masked_array_without_masked_entries_and_a_generator():
    res = dpsumm.summarize([np.ma.masked_array(OWNERS[0]), *OWNERS[1:]], VALIDATION, 5, "uniform", **KW)
    assert len(res) == 5
    err = refused(lambda: dpsumm.kernels.mmd2((r for r in OWNERS[0]), VALIDATION, 0.1), "A")
    assert "iterator" in str(err)


# --------------------------------------------------------- strings, complex, datetimes, numpy bools: never cast


@pytest.mark.parametrize("call,argument", [
    (lambda: dpsumm.privacy.ProductMWEM(4, 0.5, random_state=0).release(np.array(["0"] * 4), 10, 2, 0.5), "column_sums"),
    (lambda: dpsumm.privacy.ProductMWEM(4, 0.5, random_state=0).release(np.zeros(4, complex), 10, 2, 0.5), "column_sums"),
    (lambda: dpsumm.privacy.ProductMWEM(4, 0.5, random_state=0).release(np.zeros(4, "datetime64[s]"), 10, 2, 0.5),
     "column_sums"),
    (lambda: dpsumm.scale_to_unit(VALIDATION, "0", 1.0), "low"),
    (lambda: dpsumm.scale_to_unit(VALIDATION, np.zeros(3, complex), 1.0), "low"),
    (lambda: dpsumm.scale_to_unit(VALIDATION, 0.0, np.array(["1"] * 3)), "high"),
    (lambda: dpsumm.privacy.Csprng(0).discrete_gaussian(np.bool_(True)), "sigma"),
    (lambda: dpsumm.privacy.Csprng(0).laplace(0.0, np.bool_(True)), "scale"),
    (lambda: dpsumm.privacy.Csprng(0).exponential_mechanism([True, False], 1.0, 1.0), "scores"),
    (lambda: dpsumm.privacy.Csprng(0).gaussian_on_grid(np.zeros((3, 1)), 1.0, 0.1), "values"),
    (lambda: dpsumm.privacy.Csprng(0).gaussian_on_grid("abc", 1.0, 0.1), "values"),
    (lambda: dpsumm.privacy.Csprng(0).gaussian_on_grid(None, 1.0, 0.1), "values"),
    (lambda: pfds.make_tree(AGENTS[0], AGENT_LABELS[0].astype(complex), DOMAIN, 0.5, random_state=0), "y"),
    (lambda: pfds.Domain(np.array([["a", "b"]]), classes=[0, 1]), "bounds"),
    (lambda: pfds.Domain([(0, 1)], classes="ab"), "classes"),
    (lambda: pfds.Domain.box(3, "a", 1.0, classes=[0, 1]), "lower"),
])
def test_a_non_real_value_is_refused_never_cast(call, argument):
    # Was: np.asarray(..., dtype=float) read "0" as 0.0, dropped imaginary parts (a ComplexWarning), read dates as
    # seconds and numpy's True as 1.0; Csprng.gaussian_on_grid raised pyo3's bare TypeError for anything but float64.
    refused(call, argument)


def test_complex_scores_are_refused_not_truncated_with_a_warning():
    # Was: a ComplexWarning, the imaginary parts dropped, an index returned.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(InvalidParameterError) as info:
            dpsumm.privacy.Csprng(0).exponential_mechanism(np.array([0.0, 1.0 + 5j, 2.0]), 1.0, 1.0)
    assert info.value.argument == "scores" and not caught


def test_csprng_gaussian_on_grid_takes_any_real_sequence():
    rng = dpsumm.privacy.Csprng(0)
    for values in ([0.0, 1.0, 2.0], np.zeros(3, np.float32), np.arange(3), (0, 1, 2)):
        out = rng.gaussian_on_grid(values, 1.0, 0.1)
        assert out.shape == (3,) and np.isfinite(out).all()


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(dtype=st.one_of(hnp.scalar_dtypes(), hnp.byte_string_dtypes(), hnp.unicode_string_dtypes()),
                  shape=st.just((4,))))
def test_a_vector_of_any_dtype_is_used_or_refused_naming_it(values):
    """ProductMWEM.release and gaussian_on_grid: real numbers of any width are used; anything else (bools, complex,
    strings, datetimes) is refused naming the argument. No warning either way."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # (call, argument, largest |value| it takes: column sums of 10 rows in [-1, 1]; the lattice's integer range)
        for call, argument, bound in ((lambda: dpsumm.privacy.ProductMWEM(4, 0.5, random_state=0).release(values, 10, 2, 0.5),
                                       "column_sums", 10.0),
                                      (lambda: dpsumm.privacy.gaussian_on_grid(values, 1.0, 0.5, dpsumm.privacy.Csprng(0)), "values",
                                       2.0**50)):  # |value / granularity| below 2**52
            real = values.dtype.kind in "fiu"
            try:
                with np.errstate(over="ignore"):
                    finite = bool(np.isfinite(values.astype(np.float64)).all()) if real else False
                out = call()
            except InvalidParameterError as exc:
                assert exc.argument == argument, (values.dtype, exc.argument, str(exc))
                assert not real or not finite or np.abs(values.astype(np.float64)).max() > bound
            else:
                assert real and finite and out.shape == (4,) and np.isfinite(out).all()


# --------------------------------------------------------------------------- errors that named another argument


def test_gaussian_mean_release_names_mean_not_values():
    cal = acc.calibrate_gaussian(1.0, 1e-6, sensitivity=0.1, dim=3)
    refused(lambda: dpsumm.privacy.gaussian_mean_release(np.full(3, 1e300), cal, dpsumm.privacy.Csprng(0)), "mean")


def test_bid_index_from_rows_names_rows_and_the_unfitted_hasher():
    h = dpsumm.RFFHasher(3, dim=4)
    refused(lambda: dpsumm.kernels.BidIndex.from_rows(np.full((4, 3), np.nan), h), "rows")
    refused(lambda: dpsumm.kernels.BidIndex.from_rows(VALIDATION * 1e30, h), "rows")
    refused(lambda: dpsumm.kernels.BidIndex.from_rows(VALIDATION, dpsumm.RFFHasher(dim=4)), "hasher")
    fitted = dpsumm.RFFHasher(dim=4).fit(VALIDATION)
    assert dpsumm.kernels.BidIndex.from_rows(VALIDATION, fitted).n_rows == 20


def test_an_unfitted_hasher_attribute_is_a_not_fitted_error_and_an_attribute_error():
    h = dpsumm.RFFHasher(dim=4)
    with pytest.raises(dpsumm.NotFittedError):
        h.omega_
    assert not hasattr(h, "omega_") and not hasattr(h, "offset_")


@pytest.mark.parametrize("call,argument", [
    (lambda: acc.mwem_step_events(0.1, 2**70), "steps"),
    (lambda: acc.mwem_step_events(0.1, 0), "steps"),
    (lambda: acc.calibrate(dpsumm.Budget(1.0, 1e-6, 1.0, 1e-6), 5, 3, 16, epsilon_auction=0.1), "epsilon_auction"),
    (lambda: acc.BudgetAccountant(validation_epsilon=2, validation_delta=1e-6).check([("validation", 5)]), "planned"),
    (lambda: acc.BudgetAccountant(validation_epsilon=2, validation_delta=1e-6).check({"validation": [None]}), "planned"),
    (lambda: acc.Ledger(deltas={"owners": 2.0}), "deltas"),
    (lambda: _ledger().record_uncertified("owners", label="x", reason=5), "reason"),
    (lambda: acc.certification({"version": 1}), "ledger"),
    (lambda: dpsumm.Summarizer(5, method="uniform").fit(OWNERS, VALIDATION[:, :2]), "X_validation"),
    (lambda: dpsumm.Summarizer(5, method="uniform").fit(OWNERS, VALIDATION, Y), "y_validation"),
])
def test_the_error_names_the_callers_argument(call, argument):
    refused(call, argument, DpsummError)


def test_calibrate_names_the_auction_and_is_a_privacy_budget_error():
    err = refused(lambda: acc.calibrate(dpsumm.Budget(1.0, 1e-6, 1.0, 1e-6), 5, 3, 16, epsilon_auction=0.5),
                  "epsilon_auction", dpsumm.PrivacyBudgetError)
    assert "PrivAuction" in str(err)


# -------------------------------------------------------------------------------- accounting: flags and figures


@pytest.mark.parametrize("call", [
    lambda: _ledger().totals(include_auction="no"),
    lambda: _ledger().epsilon("validation", include_auction="False"),
    lambda: _ledger().events("owners", include_auction=2),
    lambda: acc.account(acc.paper_schedule(5, 3, 16), include_auction="no"),
])
def test_include_auction_must_be_a_bool(call):
    # Was: any truthy value, so include_auction="False" counted the auction.
    refused(call, "include_auction")


def test_ledger_table_takes_any_real_delta_and_checks_the_report_arguments():
    led = _ledger()
    assert led.table(Fraction(1, 10**6)) == led.table(1e-6)  # was TypeError in the format string
    refused(lambda: led.table(delta_validation="0.1"), "delta_validation")
    refused(lambda: led.report("x"), "accessed")
    res = dpsumm.summarize(OWNERS, VALIDATION, 5, "uniform", **KW)
    refused(lambda: acc.privacy_text(res, delta_owners="x"), "delta_owners")
    refused(lambda: acc.privacy_text(res, delta_validation=2.0), "delta_validation")


def test_a_schedule_names_its_bad_field_and_account_names_the_schedule():
    s = acc.paper_schedule(5, 3, 16)
    refused(lambda: dataclasses.replace(s, epsilon_epoch_step=None), "epsilon_epoch_step")
    refused(lambda: dataclasses.replace(s, t_init=2**70), "t_init")
    refused(lambda: dataclasses.replace(s, size=2**70), "size")
    big = dataclasses.replace(s, epsilon_validation_step=1e3)  # a diagnostic (broadcast_error's noise-free limit)
    refused(lambda: acc.account(big), "schedule")


def test_a_refused_plan_leaves_the_accountant_unchanged():
    a = acc.BudgetAccountant(validation_epsilon=1.6, validation_delta=1e-6)
    a.spend(_ledger())
    before = (len(a.spent), a.epsilon_spent("validation"), a.remaining())
    seeded = _ledger()
    seeded.mark_seeded()
    over = _ledger()
    for _ in range(3):
        over.record("validation", acc.calibrate_gaussian(1.0, 1e-6, sensitivity=0.1, dim=3).event(), label="x")
    for plan in (seeded, over, "x", 5, None):
        with pytest.raises(DpsummError):
            a.spend(plan)
    for plan in ([("validation", 5)], {"bogus": []}, [("owners", _ledger().events("validation")[0])]):
        with pytest.raises(DpsummError):
            a.check(plan)
    assert (len(a.spent), a.epsilon_spent("validation"), a.remaining()) == before


# ------------------------------------------------------------------------ silent NaN, warnings, short results


def test_kernel_scale_refuses_rows_without_a_finite_median_distance():
    # Was: NaN returned silently for fewer than two rows and for rows beyond the float range.
    from dpsumm.preprocessing import check_kernel, kernel_scale

    refused(lambda: kernel_scale(VALIDATION[:1], 0.1), "rows")
    refused(lambda: kernel_scale(VALIDATION * 1e300, 0.1), "rows")
    refused(lambda: kernel_scale(VALIDATION * 1e-310, 0.1), "rows")
    assert kernel_scale(VALIDATION, 0.1) > 0
    assert math.isnan(check_kernel(VALIDATION[:1], 0.1))  # documented: nothing is checked


def test_scale_to_unit_with_a_range_too_narrow_for_the_float_range():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        out = dpsumm.scale_to_unit(VALIDATION + 1.0, 0.0, 5e-324)  # was a RuntimeWarning (overflow)
    assert (out == 1.0).all()
    refused(lambda: dpsumm.scale_to_unit(VALIDATION + 1.0, 0.0, 5e-324, clip=False), "X")  # was inf in the output


def test_owner_labels_that_cannot_be_sent_are_refused_before_the_run(no_messages):
    # Was: every owner excluded at its first sale (label.item()), and a summary of 0 rows returned.
    owners = [Owner(o, labels=[object()] * 30) for o in OWNERS]
    refused(lambda: dpsumm.summarize(owners, VALIDATION, 5, "paper-greedy", **KW), "owners")


def test_owner_labels_as_strings_in_an_object_array_are_sent():
    owners = [Owner(o, labels=np.array(["a", "b", "c"] * 10, dtype=object)) for o in OWNERS]
    res = dpsumm.summarize(owners, VALIDATION, 5, "paper-greedy", **KW)
    assert len(res) == 5 and set(res.labels.tolist()) <= {"a", "b", "c"}


# --------------------------------------------------------------------------------------- metrics (scikit-learn)


@pytest.mark.parametrize("call,argument", [
    (lambda: metrics.svm_accuracy(VALIDATION, Y, VALIDATION, Y, C=1e300), "C"),  # liblinear looped without end
    (lambda: metrics.svm_accuracy(VALIDATION, Y, VALIDATION, Y, C=1e-300), "C"),
    (lambda: metrics.svm_accuracy(VALIDATION * 1e100, Y, VALIDATION, Y), "X"),
    (lambda: metrics.mlp_accuracy(VALIDATION, Y, VALIDATION, Y, hidden=2**70), "hidden"),
    (lambda: metrics.mlp_accuracy(VALIDATION, Y, VALIDATION, Y, alpha=1e200), "alpha"),
    (lambda: metrics.svm_accuracy(VALIDATION, Y + 0.5, VALIDATION, Y), "y"),  # sklearn: "Unknown label type"
    (lambda: metrics.mlp_accuracy(VALIDATION, Y * 1e300, VALIDATION, Y), "y"),
    (lambda: metrics.mlp_accuracy(VALIDATION * 1e300, Y, VALIDATION, Y, hidden=4, max_iter=5), "X"),  # overflow
    (lambda: metrics.svm_accuracy(VALIDATION, Y, VALIDATION * 1e200, Y), "X_test"),
    (lambda: metrics.accuracy(__import__("sklearn.linear_model").linear_model.LogisticRegression(),
                              VALIDATION, Y.astype(str), VALIDATION, Y), "y_test"),  # was accuracy 0.0
])
def test_classifier_helpers_refuse_what_scikit_learn_cannot_fit(call, argument):
    refused(call, argument)


def test_float_labels_with_integer_values_are_classes():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # float16 labels: no overflow comparing with 2**53
        for y in (Y.astype(float), Y.astype(np.float16)):
            assert 0.0 <= metrics.svm_accuracy(VALIDATION, y, VALIDATION, Y) <= 1.0


# ----------------------------------------------------------------------------------------------------- PFDS


@pytest.mark.parametrize("call,argument", [
    (lambda: pfds.pfds(AGENTS, AGENT_LABELS, DOMAIN, 5e-324, random_state=0), "epsilon"),  # ZeroDivisionError
    (lambda: pfds.pfds(AGENTS, AGENT_LABELS, DOMAIN, 1e-11, h_max=3, t=3, levels=2, random_state=0), "epsilon"),
    (lambda: pfds.make_tree(AGENTS[0], AGENT_LABELS[0], DOMAIN, 500.0, random_state=0), "epsilon_level"),
    (lambda: pfds.make_tree(AGENTS[0], AGENT_LABELS[0], DOMAIN, 1e-300, random_state=0), "epsilon_level"),
    (lambda: pfds.Domain([(0, 1)], classes=range(10**8)), "classes"),  # was minutes of list and sort
    (lambda: pfds.pfds(AGENTS, AGENT_LABELS, DOMAIN, 1.0, h_max=2**70, random_state=0), "h_max"),  # named epsilon
    (lambda: pfds.Domain.box(3, float("nan"), 1.0, classes=[0, 1]), "lower"),  # named upper
    (lambda: pfds.partition_agents(None, 3, 0, 0.0, 1.0, np.random.default_rng(0)), "X"),
    (lambda: pfds.partition_agents(AGENTS[0], -1, 0, 0.0, 1.0, np.random.default_rng(0)), "n_agents"),
    (lambda: pfds.partition_agents(AGENTS[0], 3, 5, 0.0, 1.0, np.random.default_rng(0)), "attribute"),
    (lambda: pfds.partition_agents(AGENTS[0], 3, True, 0.0, 1.0, np.random.default_rng(0)), "attribute"),
    (lambda: pfds.partition_agents(AGENTS[0], 3, 0, 1.0, 0.0, np.random.default_rng(0)), "high"),
    (lambda: pfds.partition_agents(AGENTS[0], 3, 0, 0.0, 1.0, None), "rng"),
    (lambda: pfds.partition_agents(np.full((3, 2), np.inf), 3, 0, 0.0, 1.0, np.random.default_rng(0)), "X"),
])
def test_pfds_refuses_before_any_noise(call, argument):
    # epsilon 1e-11 asked for 1.7 TiB of synthetic rows; 5e-324 divided by zero.
    refused(call, argument)


@pytest.mark.parametrize("epsilon", [1e4, 5e-324, 1e-300])
def test_pfds_budget_refused_before_the_stream_is_touched(epsilon):
    rng = dpsumm.privacy.Csprng(77)
    refused(lambda: pfds.pfds(AGENTS, AGENT_LABELS, DOMAIN, epsilon, h_max=3, t=3, levels=2, random_state=rng),
            "epsilon")
    # No noise drawn: at 1e4 the trees were grown before the ledger refused their events.
    assert rng.uniform() == dpsumm.privacy.Csprng(77).uniform()


def test_partition_agents_takes_lists():
    idx = pfds.partition_agents(AGENTS[0].tolist(), 3, 0, 0.0, 1.0, np.random.default_rng(0))
    assert idx.shape == (20,) and idx.min() >= 0 and idx.max() < 3


# ------------------------------------------------------------------------------------------------- datasets


TRAIN = (RNG.uniform(size=(200, 4)), RNG.integers(0, 10, 200))
TEST = (RNG.uniform(size=(200, 4)), RNG.integers(0, 10, 200))
SPLIT = dict(groups=((0, 1), (3, 4)), seed_set_size=10, random_state=0)


@pytest.mark.parametrize("change,argument", [
    (dict(test=(TEST[0][:, :2], TEST[1])), "test"),  # named `train` before
    (dict(test=("abc", TEST[1])), "test"),
    (dict(groups=((0.5, 1.5),)), "groups"),  # int(0.5): label 0, silently
    (dict(groups=((True, False),)), "groups"),
    (dict(target_labels=None), "target_labels"),  # named `target_ratio` before
    (dict(target_labels=5), "target_labels"),
    (dict(train=(TRAIN[0], np.where(TRAIN[1] == 0, np.nan, TRAIN[1]))), "train"),  # NaN labels dropped silently
    (dict(train=(TRAIN[0], TRAIN[1].astype(complex))), "train"),
    (dict(seed_set=np.full((5, 4), 1e300)), "seed_set"),  # overflowed to inf in float32
])
def test_label_split_names_the_bad_argument(change, argument):
    refused(lambda: datasets.label_split(**{"train": TRAIN, "test": TEST, **SPLIT, **change}), argument)


def test_label_split_ratios_at_the_ends_of_the_float_range():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for ratio in ((1e308, 1e308), (1e-320, 1.0)):  # was ValueError (NaN counts) and an overflow warning
            s = datasets.label_split(TRAIN, TEST, target_ratio=ratio, **SPLIT)
            assert len(s.test) + len(s.validation) > 0


def test_covariate_shift_caps_the_shift():
    refused(lambda: datasets.covariate_shift(2, 10, 3, shift=1e308), "shift")  # numpy OverflowError before


def test_load_owners_names_paths(tmp_path):
    err = refused(lambda: datasets.load_owners([tmp_path / "missing.npy"]), "paths", dpsumm.DataFileError)
    assert "paths[0]" in str(err)
    refused(lambda: datasets.load_owners([None]), "paths")


# ---------------------------------------------------------------------------------------------- experiments


SMALL = datasets.covariate_shift(2, 40, 3, 1.0, 20, 20, 10, random_state=0)
EXP = dict(repeats=1, methods=("uniform",), dim=16, classifier="svm", progress=False)


@pytest.mark.parametrize("change,argument", [
    (dict(split=None), "split"),
    (dict(split=lambda r: 5), "split"),
    (dict(sizes=5), "sizes"),
    (dict(sizes=["3"]), "sizes"),
    (dict(sizes=[3.7]), "sizes"),  # int(3.7) = 3 silently
    (dict(sizes=[True]), "sizes"),
    (dict(sizes=[1000]), "sizes"),  # more than the owners' rows: refused before any run
    (dict(repeats=2**70), "repeats"),  # ran "forever"
    (dict(repeats=None), "repeats"),
    (dict(repeats=2.5), "repeats"),
    (dict(random_state=None), "random_state"),
    (dict(random_state="x"), "random_state"),
    (dict(gamma=HUGE), "gamma"),
    (dict(variant=float("nan")), "variant"),
    (dict(progress="no"), "progress"),
    (dict(methods=5), "methods"),
    (dict(methods=np.array(["uniform"])), "methods"),  # numpy's ambiguous truth value before
])
def test_run_experiment_refuses_before_any_run(change, argument, no_messages):
    refused(lambda: experiments.run_experiment(**{"split": lambda r: SMALL, "sizes": [3], **EXP, **change}), argument)


@pytest.fixture(scope="module")
def records():
    return experiments.run_experiment(lambda r: SMALL, [3], repeats=1, methods=("uniform", "central-greedy"), dim=16,
                                      classifier="svm", progress=False)


def test_experiment_helpers_name_the_bad_argument(records, tmp_path):
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "wrong.json").write_text('{"records": 1}')
    for call, argument in (
        (lambda: experiments.write_results("x", tmp_path), "records"),
        (lambda: experiments.write_results([5], tmp_path), "records"),
        (lambda: experiments.write_results(records, None), "out"),
        (lambda: experiments.write_results(records, tmp_path / "bad.json"), "out"),  # FileExistsError before
        (lambda: experiments.write_results(records, tmp_path, plots="no"), "plots"),
        (lambda: experiments.format_table(None), "records"),
        (lambda: experiments.format_table(records, markdown="no"), "markdown"),
        (lambda: experiments.load_results(None), "path"),
        (lambda: experiments.load_results(tmp_path / "bad.json"), "path"),
        (lambda: experiments.load_results(tmp_path / "wrong.json"), "path"),
        (lambda: experiments.plot_title(records, None), "title"),
        (lambda: experiments.plot_title(records, dim=-1), "dim"),
        (lambda: experiments.plot_records(records, "bogus", "y", "t"), "field"),
        (lambda: experiments.plot_records(records, "mmd2", "y", "t", skip="uniform"), "skip"),
        (lambda: experiments.broadcast_error(None, acc.paper_schedule(3, 2, 16)), "split"),
        (lambda: experiments.broadcast_error(SMALL, acc.paper_schedule(3, 2, 16), rounds="ab"), "rounds"),
        (lambda: experiments.broadcast_error(SMALL, acc.paper_schedule(3, 2, 16), rounds=(1.5,)), "rounds"),
        (lambda: experiments.broadcast_error(SMALL, acc.paper_schedule(3, 2, 16), gamma=HUGE), "gamma"),
    ):
        refused(call, argument)
    assert "uniform" in experiments.format_table(tuple(records))
    assert experiments.format_table([]).startswith("size")  # was TypeError (max of an int)


# --------------------------------------------------------------------------------------- the estimator and CLI


def test_summarizer_set_params_is_atomic():
    s = dpsumm.Summarizer(5, method="uniform")
    before = s.get_params(deep=False)
    with pytest.raises(DpsummError):
        s.set_params(method="bogus", method__dim=8)
    with pytest.raises(DpsummError):
        s.set_params(progress=True, method__dim=-1)
    assert s.get_params(deep=False) == before
    assert s.set_params(method__dim=8).method == dpsumm.Uniform(dim=8)


def _cli(argv):
    from dpsumm.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main([str(a) for a in argv])
    return status, err.getvalue()


@pytest.mark.parametrize("argv,flag", [
    (["account", "--size", "5", "--owners", "3", "--epsilon-auction", "-1"], "--epsilon-auction"),
    (["account", "--size", "5", "--owners", "3", "--epsilon-auction", "nan"], "--epsilon-auction"),
    (["account", "--size", "5", "--owners", "3", "--budget", "1", "--validation-budget", "1", "--epsilon-auction",
      "0.5"], "--epsilon-auction"),
])
def test_cli_names_the_flag(argv, flag):
    status, err = _cli(argv)
    lines = err.strip().splitlines()
    assert status == 2 and len(lines) == 1 and flag in lines[0] and "Traceback" not in err, err


def test_cli_experiment_names_sizes(tmp_path, no_messages):
    status, err = _cli(["experiment", "digits", "--out", tmp_path, "--no-progress", "--repeats", "1", "--methods",
                        "uniform", "--sizes", "0"])
    assert status == 2 and "--sizes" in err and len(err.strip().splitlines()) == 1, err


def test_a_results_file_round_trips(records, tmp_path):
    paths = experiments.write_results(records, tmp_path, plots=False)
    assert json.loads(paths["json"].read_text()) and experiments.load_results(tmp_path) == records


# ------------------------------------------- the Rust-backed kernels: huge but finite vectors, values beyond float32

KH = dpsumm.RFFHasher(3, dim=64, gamma=0.5, seed=0)
KX = RNG.uniform(size=(50, 3))
KHASH = KH.transform(KX)  # entries up to sqrt(2/64) = 0.18
KSTEP = np.where(np.arange(64) % 2, 1e308, -1e308)  # finite; scores h . v far beyond float64


@pytest.mark.parametrize("call,argument", [
    # was: scores [inf, inf, inf]
    (lambda: kernels.greedy_select(KHASH, KSTEP, 3), "target"),
    # was: scores [1.7e308, inf, inf]
    (lambda: kernels.stochastic_greedy_select(KHASH, KSTEP, 3, 5), "target"),
    # was: a nan target (weights exp(inf - inf)), nominees chosen toward it
    (lambda: kernels.nominate(KX, KH, KSTEP, temperature=1.0, nominees=3, random_state=0), "g_tilde"),
    (lambda: kernels.nominate(KX, KH, KSTEP, temperature=1.0, nominees=3, sampling="top"), "g_tilde"),
    # was: accepted; s / T = inf for every row with a positive score, the Gumbel keys tied at +inf
    (lambda: kernels.nominate(KX, KH, KHASH.mean(0) * 1e10, temperature=1e-300, nominees=3, random_state=0),
     "g_tilde"),
    # hashes that are not h1's: max|h| 3e38 times ||target||_1 4e270 (was: scores inf)
    (lambda: kernels.greedy_select(np.full((3, 4), 3e38), np.full(4, 1e270), 2), "target"),
])
def test_a_finite_vector_whose_scores_overflow_float64_is_refused(call, argument):
    err = refused(call, argument)
    assert "overflow float64" in str(err)


@pytest.mark.parametrize("call,argument", [
    (lambda: kernels.best_row(KHASH, np.full(64, 1e308)), "v"),
    (lambda: kernels.best_row(np.full((3, 4), 1e39), np.ones(4)), "hashes"),
    (lambda: kernels.best_rows([KHASH], np.full(64, -4e38)), "v"),
    (lambda: kernels.best_rows([np.full((3, 4), 1e39)], np.ones(4)), "hashes"),
    (lambda: dpsumm.kernels.BidIndex.from_hashes(KHASH).best(np.full(64, 1e308)), "v"),
    (lambda: dpsumm.kernels.BidIndex.from_hashes(np.full((3, 4), 1e39)), "hashes"),
    (lambda: kernels.greedy_select(np.full((3, 4), 1e39), np.zeros(4), 2), "hashes"),
    (lambda: kernels.stochastic_greedy_select(np.full((3, 4), -1e39), np.zeros(4), 2, 2), "hashes"),
    # was: no refusal at all, the digests of float32 infinities
    (lambda: dpsumm.hashing.hash_digests(np.full((3, 4), 1e39)), "hashes"),
])
def test_values_beyond_float32_are_refused_before_the_cast_warns(call, argument):
    # Was: numpy's "overflow encountered in cast" RuntimeWarning, then "contains NaN or infinite values"
    # (values the caller never passed); refused() turns any RuntimeWarning into an error.
    err = refused(call, argument)
    assert "float32 range" in str(err)


def test_the_noisiest_release_is_still_scored():
    # epsilon 1e-6, the least a target may be; one row's replace-one sensitivity 2 sqrt(2); at dim 64 the noisiest
    # the exact sampler allows (delta 1e-3; 1e-4 is refused): sigma ~ 1.8e3 per coordinate, ||g||_1 * sqrt(2/64)
    # ~ 2e4, against a bound of 4.5e307 (times the temperature for nominate).
    cal = acc.calibrate_gaussian(1e-6, 1e-3, sensitivity=2 * math.sqrt(2), dim=64)
    g = dpsumm.privacy.gaussian_mean_release(KHASH.astype(np.float64).mean(0), cal, dpsumm.privacy.Csprng(1))
    assert cal.sigma > 1e3 and np.abs(g).max() > 1e3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isfinite(kernels.greedy_select(KHASH, g, 5)[1]).all()
        assert np.isfinite(kernels.stochastic_greedy_select(KHASH, g, 5, 10)[1]).all()
        for temperature in (1e-6, 0.02, 0.2, 5 * cal.sigma):
            nom = kernels.nominate(KX, KH, g, temperature=temperature, nominees=5, random_state=0)
            assert np.isfinite(nom.target).all() and len(nom.indices) == 5
        assert kernels.best_row(KHASH, g) is not None
        # float32's largest values themselves are not beyond its range
        assert kernels.best_row(np.full((2, 4), np.finfo(np.float32).max, dtype=np.float64), np.ones(4))[1] == 0
