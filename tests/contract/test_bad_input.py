"""Bad input across the public API (the py-audit): every entry point of ``dpsumm``, ``dpsumm.accounting``, the
datasets, metrics, PFDS, experiments, estimator, samplers and CLI refuses numbers beyond the float range,
ragged lists, masked arrays, non-real values and absurd sizes with a DpsummError naming the caller's argument
(``.argument``), before any party is asked anything and before any noise is drawn. Checks parametrised over
many modules at once live here; each module's own bad-input cases live in its test module.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpsumm
from dpsumm import DpsummError, Owner, datasets, metrics, pfds
from dpsumm import accounting as acc
from refusal import HUGE, refused

RNG = np.random.default_rng(7)


OWNERS = [RNG.uniform(size=(30, 3)) for _ in range(3)]


VALIDATION = RNG.uniform(size=(20, 3))


Y = RNG.integers(0, 2, size=20)


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


@pytest.mark.parametrize(
    "call,argument",
    [
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
    ],
)
def test_a_number_beyond_the_float_range_is_refused_naming_the_argument(call, argument):
    refused(call, argument)


@settings(max_examples=40, deadline=None)
@given(
    st.one_of(
        st.integers(min_value=2**1024, max_value=2**1100),
        st.integers(min_value=-(2**1100), max_value=-(2**1024)),
        st.builds(Fraction, st.integers(min_value=2**1030, max_value=2**1100), st.integers(1, 9)),
    )
)
def test_no_real_number_argument_raises_overflow_error(value):
    for call, argument in (
        (lambda: dpsumm.RFFHasher(3, dim=4, gamma=value), "gamma"),
        (lambda: acc.ExponentialEvent(0.1, value, "replace-one"), "sensitivity"),
        (lambda: acc.calibrate_gaussian(value, 1e-6, sensitivity=0.1, dim=3), "epsilon"),
        (lambda: dpsumm.Nominations(temperature=value), "temperature"),
    ):
        refused(call, argument)


@pytest.mark.parametrize(
    "call,argument",
    [
        (lambda: dpsumm.privacy.stochastic_round(RAGGED, 0.5, dpsumm.privacy.Csprng(0)), "values"),
        (lambda: dpsumm.privacy.quantize_column_sums(RAGGED, 0.5, dpsumm.privacy.Csprng(0)), "values"),
        (lambda: dpsumm.privacy.gaussian_on_grid(RAGGED, 1.0, 0.1, dpsumm.privacy.Csprng(0)), "values"),
        (
            lambda: dpsumm.privacy.gaussian_mean_release(
                RAGGED, acc.calibrate_gaussian(1.0, 1e-6, sensitivity=0.1, dim=2), dpsumm.privacy.Csprng(0)
            ),
            "mean",
        ),
        (lambda: dpsumm.kernels.BidIndex.from_rows(RAGGED, dpsumm.RFFHasher(2, dim=4)), "rows"),
        (
            lambda: dpsumm.summarize(
                [Owner(o, labels=[[1], [2, 3]] + [[0]] * 28) for o in OWNERS], VALIDATION, 5, "uniform", **KW
            ),
            "owners",
        ),
        (lambda: pfds.make_tree(AGENTS[0], [[0], [1, 0]] + [[0]] * 18, DOMAIN, 0.5, random_state=0), "y"),
        (
            lambda: pfds.pfds(AGENTS, [[[0], [1, 0]] + [[0]] * 18, AGENT_LABELS[1]], DOMAIN, 1.0, random_state=0),
            "labels[0]",
        ),
    ],
)
def test_a_ragged_list_is_refused_naming_the_argument(call, argument):
    refused(call, argument)


def _masked(X):
    mask = np.zeros(np.shape(X), bool)
    mask.flat[0] = True
    return np.ma.masked_array(X, mask=mask)


@pytest.mark.parametrize(
    "call,argument",
    [
        (lambda: dpsumm.summarize([_masked(OWNERS[0]), *OWNERS[1:]], VALIDATION, 5, "uniform", **KW), "owners"),
        (lambda: dpsumm.summarize(OWNERS, _masked(VALIDATION), 5, "uniform", **KW), "validation"),
        (lambda: dpsumm.kernels.mmd2(_masked(OWNERS[0]), VALIDATION, 0.1), "A"),
        (lambda: dpsumm.RFFHasher(3, dim=4).transform(_masked(VALIDATION)), "X"),
        (lambda: metrics.svm_accuracy(VALIDATION, np.ma.masked_array(Y, Y == 0), VALIDATION, Y), "y"),
        (lambda: dpsumm.privacy.gaussian_on_grid(_masked(np.zeros(3)), 1.0, 0.1, dpsumm.privacy.Csprng(0)), "values"),
    ],
)
def test_a_masked_array_with_masked_entries_is_refused(call, argument):
    # np.asarray drops the mask: the values under it were used as data.
    refused(call, argument)


def test_a_masked_array_without_masked_entries_and_a_generator():
    res = dpsumm.summarize([np.ma.masked_array(OWNERS[0]), *OWNERS[1:]], VALIDATION, 5, "uniform", **KW)
    assert len(res) == 5
    err = refused(lambda: dpsumm.kernels.mmd2((r for r in OWNERS[0]), VALIDATION, 0.1), "A")
    assert "iterator" in str(err)


@pytest.mark.parametrize(
    "call,argument",
    [
        (
            lambda: dpsumm.privacy.ProductMWEM(4, 0.5, random_state=0).release(np.array(["0"] * 4), 10, 2, 0.5),
            "column_sums",
        ),
        (
            lambda: dpsumm.privacy.ProductMWEM(4, 0.5, random_state=0).release(np.zeros(4, complex), 10, 2, 0.5),
            "column_sums",
        ),
        (
            lambda: dpsumm.privacy.ProductMWEM(4, 0.5, random_state=0).release(
                np.zeros(4, "datetime64[s]"), 10, 2, 0.5
            ),
            "column_sums",
        ),
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
    ],
)
def test_a_non_real_value_is_refused_never_cast(call, argument):
    # Was: np.asarray(..., dtype=float) read "0" as 0.0, dropped imaginary parts (a ComplexWarning), read dates as
    # seconds and numpy's True as 1.0; Csprng.gaussian_on_grid raised pyo3's bare TypeError for anything but float64.
    refused(call, argument)


@pytest.mark.parametrize(
    "call,argument",
    [
        (lambda: acc.mwem_step_events(0.1, 2**70), "steps"),
        (lambda: acc.mwem_step_events(0.1, 0), "steps"),
        (lambda: acc.calibrate(dpsumm.Budget(1.0, 1e-6, 1.0, 1e-6), 5, 3, 16, epsilon_auction=0.1), "epsilon_auction"),
        (
            lambda: acc.BudgetAccountant(validation_epsilon=2, validation_delta=1e-6).check([("validation", 5)]),
            "planned",
        ),
        (
            lambda: acc.BudgetAccountant(validation_epsilon=2, validation_delta=1e-6).check({"validation": [None]}),
            "planned",
        ),
        (lambda: acc.Ledger(deltas={"owners": 2.0}), "deltas"),
        (lambda: _ledger().record_uncertified("owners", label="x", reason=5), "reason"),
        (lambda: acc.certification({"version": 1}), "ledger"),
        (lambda: dpsumm.Summarizer(5, method="uniform").fit(OWNERS, VALIDATION[:, :2]), "X_validation"),
        (lambda: dpsumm.Summarizer(5, method="uniform").fit(OWNERS, VALIDATION, Y), "y_validation"),
    ],
)
def test_the_error_names_the_callers_argument(call, argument):
    refused(call, argument, DpsummError)


RNG_audit = np.random.default_rng(0)


VALIDATION_audit = RNG_audit.uniform(size=(20, 3))


Y_audit = RNG_audit.integers(0, 2, size=20)


@pytest.mark.parametrize(
    "call,argument",
    [
        (
            lambda: dpsumm.metrics.svm_accuracy(
                VALIDATION_audit, np.where(Y_audit == 0, np.nan, 1.0), VALIDATION_audit, Y_audit
            ),
            "y",
        ),
        (lambda: dpsumm.metrics.mlp_accuracy(VALIDATION_audit, np.full(20, None), VALIDATION_audit, Y_audit), "y"),
        (
            lambda: dpsumm.metrics.svm_accuracy(VALIDATION_audit, Y_audit, VALIDATION_audit, Y_audit, random_state="x"),
            "random_state",
        ),
        (lambda: dpsumm.metrics.accuracy(object(), VALIDATION_audit, Y_audit, VALIDATION_audit, Y_audit), "classifier"),
        (lambda: dpsumm.metrics.objective(np.full((3, 3), 1e300), VALIDATION_audit, 0.1), "summary"),
        (lambda: dpsumm.scale_to_unit(VALIDATION_audit, -1e308, 1e308), "high"),
        (lambda: dpsumm.scale_to_unit(VALIDATION_audit, 0, True), "high"),
        (lambda: dpsumm.scale_to_unit(VALIDATION_audit, 0, 1, clip="no"), "clip"),
        (lambda: dpsumm.preprocessing.kernel_scale(VALIDATION_audit, "x"), "gamma"),
        (lambda: dpsumm.preprocessing.check_kernel(VALIDATION_audit, float("nan")), "gamma"),
        (lambda: dpsumm.kernels.best_row([["a", "b"]], np.zeros(2)), "hashes"),
        (lambda: dpsumm.kernels.best_row([[1, 2], [3]], np.zeros(2)), "hashes"),
        (lambda: dpsumm.kernels.BidIndex.from_hashes(np.zeros((3, 4), complex)), "hashes"),
        (lambda: dpsumm.kernels.best_row(np.zeros((3, 0), np.float32), np.zeros(0)), "hashes"),
        (lambda: dpsumm.kernels.best_row(np.zeros((3, 2), np.float32), np.zeros(2), "x"), "offered"),
        (
            lambda: dpsumm.privacy.gaussian_mean_release(
                np.full(3, np.nan),
                dpsumm.accounting.calibrate_gaussian(1.0, 1e-6, sensitivity=0.1, dim=3),
                dpsumm.privacy.Csprng(0),
            ),
            "mean",
        ),
    ],
)
def test_evaluation_helpers_name_the_bad_argument(call, argument):
    refused(call, argument)


AGENTS_audit = [RNG_audit.uniform(size=(20, 3)) for _ in range(2)]


AGENT_LABELS_audit = [RNG_audit.integers(0, 2, 20) for _ in range(2)]


DOMAIN_audit = dpsumm.pfds.Domain.box(3, 0.0, 1.0, classes=range(2))


@pytest.mark.parametrize(
    "call,argument",
    [
        (lambda: dpsumm.accounting.paper_schedule(5, 2**70), "owners"),
        (lambda: dpsumm.accounting.paper_schedule(5, 3, seed_set_size=2**70), "seed_set_size"),
        (lambda: dpsumm.accounting.account(dpsumm.accounting.paper_schedule(5, 3), delta=2.0), "delta"),
        (lambda: dpsumm.accounting.privacy_text("x"), "result"),
        (lambda: dpsumm.pfds.pfds(AGENTS_audit, AGENT_LABELS_audit, DOMAIN_audit, 1.0, t=2**70, random_state=0), "t"),
        (
            lambda: dpsumm.pfds.pfds(
                AGENTS_audit, AGENT_LABELS_audit, DOMAIN_audit, 1.0, sharers=[0.5], random_state=0
            ),
            "sharers",
        ),
        (
            lambda: dpsumm.pfds.pfds(
                AGENTS_audit, AGENT_LABELS_audit, DOMAIN_audit, 1.0, sharers=[True], random_state=0
            ),
            "sharers",
        ),
        (lambda: dpsumm.pfds.pfds_training_set(AGENTS_audit, AGENT_LABELS_audit, DOMAIN_audit, 1.0, foo=1), "foo"),
        (lambda: dpsumm.pfds.Domain([None], {0: "x"}, classes=[0, 1]), "categories"),
        (lambda: dpsumm.pfds.Domain([(0, 1)], classes=[float("nan"), 1.0]), "classes"),
        (
            lambda: dpsumm.datasets.label_split(
                (AGENTS_audit[0], AGENT_LABELS_audit[0]),
                (AGENTS_audit[1], AGENT_LABELS_audit[1]),
                groups=((0,), (1,)),
                target_labels=(0, 1),
                target_ratio=(float("nan"), 1.0),
            ),
            "target_ratio",
        ),
        (
            lambda: dpsumm.datasets.label_split(
                (AGENTS_audit[0], AGENT_LABELS_audit[0] + 3),
                (AGENTS_audit[1], AGENT_LABELS_audit[1] + 3),
                seed_set=np.zeros((3, 2)),
                target_labels=(3,),
                target_ratio=(1.0,),
                groups=((3, 4),),
            ),
            "seed_set",
        ),
    ],
)
def test_library_helpers_name_the_bad_argument(call, argument):
    refused(call, argument)


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: dpsumm.RFFHasher(3, dim=2**40), "dim"),
        (lambda: dpsumm.RFFHasher(2**62, dim=4), "n_features"),
        (lambda: dpsumm.RFFHasher(2**70, dim=4), "n_features"),
        (lambda: dpsumm.RFFHasher(2**20, dim=2**19), "dim"),
        (lambda: dpsumm.RFFHasher(3, dim=4, gamma=1e308), "gamma"),
        (lambda: dpsumm.privacy.ProductMWEM(2**40, 0.5), "dim"),
        (lambda: dpsumm.privacy.Csprng(1).uniform_array(10**11), "n"),
        (lambda: dpsumm.privacy.Csprng(1).uniform_array(-1), "n"),
        (lambda: dpsumm.privacy.ProductMWEM(3, 0.5, random_state=1).release([0, 0, 0], 5, 10**11, 1.0), "steps"),
        (lambda: dpsumm.privacy.ProductMWEM(3, 0.5, random_state=1).release([0, 0, 0], 5, 2**70, 1.0), "steps"),
        (lambda: dpsumm.privacy.ProductMWEM(3, 0.5, random_state=1).release([0, 0, 0], 2**70, 5, 1.0), "n_rows"),
        (lambda: dpsumm.privacy.ProductMWEM(3, 0.5, random_state=1).release("abc", 5, 5, 1.0), "column_sums"),
        (lambda: dpsumm.kernels.best_row(np.full((2, 4), np.nan, np.float32), np.ones(4, np.float32)), "hashes"),
        (lambda: dpsumm.accounting.theorem2_schedule(1.0, 1e-4, 200, 3, 140), "dim"),
    ],
    ids=[
        "hasher-dim",
        "hasher-n_features",
        "hasher-n_features-2^70",
        "hasher-product",
        "hasher-gamma",
        "mwem-dim",
        "uniform_array-huge",
        "uniform_array-negative",
        "mwem-steps",
        "mwem-steps-2^70",
        "mwem-n_rows-2^70",
        "mwem-column_sums-str",
        "best_row-nan",
        "theorem2-seed-set",
    ],
)
def test_absurd_sizes_are_typed_errors(call, argument):
    with pytest.raises(dpsumm.InvalidParameterError) as e:
        call()
    assert e.value.argument == argument
