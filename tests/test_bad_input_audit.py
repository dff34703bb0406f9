"""Regression tests of the bad-input audit: every class of defect it found, as a DpsummError naming the argument,
raised before any party is asked anything (no message sent, so no noise drawn and no budget spent)."""

from __future__ import annotations

import contextlib
import io
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpsumm
from dpsumm import Budget, DpsummError, InvalidParameterError, Owner
from dpsumm.flower.config import FlowerRunConfig
from dpsumm.methods import MethodOptionError
from refusal import refused

RNG = np.random.default_rng(0)
OWNERS = [RNG.uniform(size=(30, 3)) for _ in range(3)]
VALIDATION = RNG.uniform(size=(20, 3))
LABELS = [RNG.integers(0, 3, size=30) for _ in range(3)]
VALIDATION_LABELS = RNG.integers(0, 3, size=20)
LABEL_METHOD = dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=(0, 1, 2)))
KW = dict(progress=False, random_state=0)


# ------------------------------------------------------------------- method objects: options that do not exist


@pytest.mark.parametrize("build,argument,hint", [
    (lambda: dpsumm.Nominations(nominee=5), "nominee", "nominees"),
    (lambda: dpsumm.PaperProtocol(nominees=5), "nominees", "Nominations"),
    (lambda: dpsumm.Uniform(foo=1), "foo", ""),
    (lambda: dpsumm.CentralGreedy(140, 0, 3), "hash_seed", "positionally"),
])
def test_a_method_object_refuses_an_option_it_does_not_have(build, argument, hint):
    err = refused(build, argument, MethodOptionError)
    assert isinstance(err, TypeError) and hint in str(err)


# -------------------------------------------------- budgets no sampler can meet: refused in plan, before any release


@pytest.mark.parametrize("method,privacy", [
    (dpsumm.Nominations(), Budget(validation_epsilon=1e-6, validation_delta=1e-6)),
    # the owners' label release at an owners' epsilon no sampler can meet
    (LABEL_METHOD, Budget(1e-6, 1e-6, 1.0, 1e-6)),
    # the tilt's hashed mean at sale_tilt_share * epsilon_v
    (dpsumm.Nominations(purchase=dpsumm.ByLabel(label_set=(0, 1, 2), sale_tilt_share=0.5)), Budget(1.0, 1e-6, 1e-6, 1e-6)),
])
def test_an_uncalibratable_budget_is_refused_before_any_release(method, privacy, no_messages):
    owners = [Owner(o, labels=y) for o, y in zip(OWNERS, LABELS)] if method.needs_labels else OWNERS
    labels = VALIDATION_LABELS if method.needs_labels else None
    refused(lambda: dpsumm.summarize(owners, VALIDATION, 5, method, privacy=privacy, validation_labels=labels, **KW),
            "privacy")


def test_mwem_steps_beyond_the_sampler_are_refused(no_messages):
    refused(lambda: dpsumm.Nominations(validation_release="mwem", dim=20000), "dim")
    refused(lambda: dpsumm.summarize(OWNERS, VALIDATION, 3, dpsumm.PaperProtocol(t_init=2**30), **KW), "t_init")


def test_purchase_factor_is_capped():
    refused(lambda: dpsumm.ByLabel(label_set=(0, 1), purchase_factor=1e300), "purchase_factor")
    refused(lambda: dpsumm.ByLabel(label_set=(0, 1), purchase_factor=0.5), "purchase_factor")
    refused(lambda: dpsumm.ByLabel(label_set={0: 1}), "label_set")


# ------------------------------------------------------------ the label purchase: labels the owners can count


@pytest.mark.parametrize("owner_labels", [
    [np.where(y == 0, np.nan, 1.0) for y in LABELS],
    [np.full(30, None)] * 3,
    [y.astype(complex) for y in LABELS],
    [y.astype(str) for y in LABELS],  # strings while the label set holds numbers: no row would ever match
    [LABELS[0], LABELS[1].astype(str), LABELS[2]],
    [np.zeros(30, "datetime64[s]")] * 3,
])
def test_owner_labels_a_label_purchase_cannot_count_are_refused(owner_labels, no_messages):
    owners = [Owner(o, labels=y) for o, y in zip(OWNERS, owner_labels)]
    refused(lambda: dpsumm.summarize(owners, VALIDATION, 5, LABEL_METHOD, validation_labels=VALIDATION_LABELS, **KW),
            "owners")


def test_validation_labels_of_the_wrong_kind_are_refused(no_messages):
    owners = [Owner(o, labels=y) for o, y in zip(OWNERS, LABELS)]
    for bad in (VALIDATION_LABELS.astype(str), np.full(20, None), VALIDATION_LABELS.astype(complex)):
        refused(lambda: dpsumm.summarize(owners, VALIDATION, 5, LABEL_METHOD, validation_labels=bad, **KW),
                "validation_labels")


# ----------------------------------------------------------------- the median heuristic out of the float range


@pytest.mark.parametrize("rows", [np.array([[0.0], [1e300], [-1e300]]), np.arange(6.0).reshape(3, 2) * 1e-200,
                                  np.full((3, 2), 1e300) * np.arange(1, 4)[:, None]])
def test_median_gamma_never_returns_nan_or_zero(rows):
    refused(lambda: dpsumm.median_gamma(rows), "rows")


def test_median_gamma_is_unchanged_on_ordinary_rows():
    R = RNG.uniform(size=(50, 4))
    d2 = ((R[:, None] - R[None]) ** 2).sum(-1)[np.triu_indices(50, 1)]
    assert dpsumm.median_gamma(R) == pytest.approx(1.0 / np.median(d2), rel=1e-12)


def test_summarize_blames_the_seed_set_for_a_median_gamma_it_cannot_take(no_messages):
    close = np.arange(12.0).reshape(4, 3) * 1e-200
    refused(lambda: dpsumm.summarize(OWNERS, VALIDATION, 5, gamma="median", seed_set=close, **KW), "seed_set")


def test_feature_range_may_be_an_array_pair():
    res = dpsumm.summarize(OWNERS, VALIDATION, 5, "paper-greedy", feature_range=np.array([0.0, 1.0]), **KW)
    assert len(res) == 5


# -------------------------------------------------------------------------------- metrics and preprocessing


Y = RNG.integers(0, 2, size=20)


@pytest.mark.parametrize("call,argument", [
    (lambda: dpsumm.metrics.svm_accuracy(VALIDATION, np.where(Y == 0, np.nan, 1.0), VALIDATION, Y), "y"),
    (lambda: dpsumm.metrics.mlp_accuracy(VALIDATION, np.full(20, None), VALIDATION, Y), "y"),
    (lambda: dpsumm.metrics.svm_accuracy(VALIDATION, Y, VALIDATION, Y, random_state="x"), "random_state"),
    (lambda: dpsumm.metrics.accuracy(object(), VALIDATION, Y, VALIDATION, Y), "classifier"),
    (lambda: dpsumm.metrics.objective(np.full((3, 3), 1e300), VALIDATION, 0.1), "summary"),
    (lambda: dpsumm.scale_to_unit(VALIDATION, -1e308, 1e308), "high"),
    (lambda: dpsumm.scale_to_unit(VALIDATION, 0, True), "high"),
    (lambda: dpsumm.scale_to_unit(VALIDATION, 0, 1, clip="no"), "clip"),
    (lambda: dpsumm.preprocessing.kernel_scale(VALIDATION, "x"), "gamma"),
    (lambda: dpsumm.preprocessing.check_kernel(VALIDATION, float("nan")), "gamma"),
    (lambda: dpsumm.kernels.best_row([["a", "b"]], np.zeros(2)), "hashes"),
    (lambda: dpsumm.kernels.best_row([[1, 2], [3]], np.zeros(2)), "hashes"),
    (lambda: dpsumm.kernels.BidIndex.from_hashes(np.zeros((3, 4), complex)), "hashes"),
    (lambda: dpsumm.kernels.best_row(np.zeros((3, 0), np.float32), np.zeros(0)), "hashes"),
    (lambda: dpsumm.kernels.best_row(np.zeros((3, 2), np.float32), np.zeros(2), "x"), "offered"),
    (lambda: dpsumm.privacy.gaussian_mean_release(np.full(3, np.nan), dpsumm.accounting.calibrate_gaussian(
        1.0, 1e-6, sensitivity=0.1, dim=3), dpsumm.privacy.Csprng(0)), "mean"),
])
def test_evaluation_helpers_name_the_bad_argument(call, argument):
    refused(call, argument)


# ------------------------------------------------------------------------------- accounting, pfds, datasets


AGENTS = [RNG.uniform(size=(20, 3)) for _ in range(2)]
AGENT_LABELS = [RNG.integers(0, 2, 20) for _ in range(2)]
DOMAIN = dpsumm.pfds.Domain.box(3, 0.0, 1.0, classes=range(2))


@pytest.mark.parametrize("call,argument", [
    (lambda: dpsumm.accounting.paper_schedule(5, 2**70), "owners"),
    (lambda: dpsumm.accounting.paper_schedule(5, 3, seed_set_size=2**70), "seed_set_size"),
    (lambda: dpsumm.accounting.account(dpsumm.accounting.paper_schedule(5, 3), delta=2.0), "delta"),
    (lambda: dpsumm.accounting.privacy_text("x"), "result"),
    (lambda: dpsumm.pfds.pfds(AGENTS, AGENT_LABELS, DOMAIN, 1.0, t=2**70, random_state=0), "t"),
    (lambda: dpsumm.pfds.pfds(AGENTS, AGENT_LABELS, DOMAIN, 1.0, sharers=[0.5], random_state=0), "sharers"),
    (lambda: dpsumm.pfds.pfds(AGENTS, AGENT_LABELS, DOMAIN, 1.0, sharers=[True], random_state=0), "sharers"),
    (lambda: dpsumm.pfds.pfds_training_set(AGENTS, AGENT_LABELS, DOMAIN, 1.0, foo=1), "foo"),
    (lambda: dpsumm.pfds.Domain([None], {0: "x"}, classes=[0, 1]), "categories"),
    (lambda: dpsumm.pfds.Domain([(0, 1)], classes=[float("nan"), 1.0]), "classes"),
    (lambda: dpsumm.datasets.label_split((AGENTS[0], AGENT_LABELS[0]), (AGENTS[1], AGENT_LABELS[1]),
                                         groups=((0,), (1,)), target_labels=(0, 1),
                                         target_ratio=(float("nan"), 1.0)), "target_ratio"),
    (lambda: dpsumm.datasets.label_split((AGENTS[0], AGENT_LABELS[0] + 3), (AGENTS[1], AGENT_LABELS[1] + 3),
                                         seed_set=np.zeros((3, 2)), target_labels=(3,), target_ratio=(1.0,),
                                         groups=((3, 4),)), "seed_set"),
])
def test_library_helpers_name_the_bad_argument(call, argument):
    refused(call, argument)


def test_mnist_files_without_rows_give_empty_arrays(tmp_path):
    (tmp_path / "train-images-idx3-ubyte").write_bytes(b"\x00\x00\x08\x03" + (0).to_bytes(4, "big") +
                                                       (28).to_bytes(4, "big") * 2)
    (tmp_path / "train-labels-idx1-ubyte").write_bytes(b"\x00\x00\x08\x01" + (0).to_bytes(4, "big"))
    X, y = dpsumm.datasets.mnist(tmp_path)
    assert X.shape == (0, 784) and y.shape == (0,)


# ------------------------------------------------------------------------------- Flower run and node config


RC = {"owners": 3, "n-features": 4, "size": 5}


@pytest.mark.parametrize("change,argument", [
    ({"size": 2**70}, "size"), ({"n-features": 2**40}, "n-features"), ({"random-state": 2**70}, "random-state"),
    ({"node-wait": 1e300}, "node-wait"), ({"reply-timeout": 1e300}, "reply-timeout"),
    ({"poll-interval": 1e300}, "poll-interval"), ({"seed-set": 2**70, "gamma": "median"}, "seed-set"),
])
def test_run_config_caps(change, argument):
    refused(lambda: FlowerRunConfig.from_run_config({**RC, **change}), argument)


@pytest.mark.parametrize("value", [None, "size=5", 5])
def test_run_config_must_be_a_mapping(value):
    refused(lambda: FlowerRunConfig.from_run_config(value), "run_config")


class _Context:
    def __init__(self, cfg):
        self.node_config, self.node_id = cfg, 1


def test_node_config_names_its_key(tmp_path):
    from dpsumm.flower import client_app

    refused(lambda: client_app.party_identity(_Context({"role": "owner", "name": " "})), "name")
    refused(lambda: client_app._data(_Context({"data": str(tmp_path / "nope.npy")}), "data"), "data")
    np.save(tmp_path / "labels.npy", np.full(5, np.nan))
    refused(lambda: client_app._labels(_Context({"labels": str(tmp_path / "labels.npy")}), 5), "labels")


# ------------------------------------------------------------------------------------------------------- CLI


def cli(argv):
    from dpsumm.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(argv)
    return status, err.getvalue()


def test_cli_names_the_flag_behind_a_bad_file_or_value(tmp_path):
    np.save(tmp_path / "v.npy", VALIDATION)
    np.save(tmp_path / "cube.npy", np.zeros((2, 2, 2)))
    base = ["summarize", "--validation", str(tmp_path / "v.npy"), "--out", str(tmp_path / "out"), "--size", "2"]
    for extra, flag in (
        (["--owners", str(tmp_path / "nope.npy")], "--owners"),
        (["--owners", str(tmp_path / "cube.npy")], "--owners"),
        (["--owners", str(tmp_path / "v.npy"), "--method", "paper-greedy", "--feature-range", "1", "0"],
         "--feature-range"),
        (["--owners", str(tmp_path / "v.npy"), "--method", "paper-greedy", "--seed-set", str(tmp_path / "cube.npy")],
         "--seed-set"),
    ):
        status, err = cli(base + extra)
        assert status == 2 and flag in err and "Traceback" not in err, err
    status, err = cli(["account", "--size", "5", "--owners", "3", "--validation-delta", "1"])
    assert status == 2 and "--validation-delta" in err, err


def test_cli_experiment_refuses_what_it_would_ignore_before_any_run(tmp_path, no_messages):
    base = ["experiment", "digits", "--out", str(tmp_path), "--no-progress", "--repeats", "1", "--methods", "uniform"]
    for extra, flag in ((["--sizes", "5", "--validation-budget", "0"], "--validation-budget"),
                        (["--sizes", "5", "--delta", "1"], "--delta"),
                        (["--sizes", "5", "--data", str(tmp_path)], "--data"),
                        (["--sizes", "5", "--pfds-epsilon", "1"], "--pfds-epsilon"),
                        (["--sizes", "5", "100000"], "--sizes")):
        status, err = cli(base + extra)
        assert status == 2 and flag in err, err


def test_cli_flower_refuses_a_bad_poll_interval(tmp_path):
    np.save(tmp_path / "v.npy", VALIDATION)
    for value in ("0", "nan", "-1"):
        status, err = cli(["flower", "--owner", f"a={tmp_path / 'v.npy'}", "--consumer", str(tmp_path / "v.npy"),
                           "--size", "5", "--insecure", "--poll-interval", value])
        assert status == 2 and "--poll-interval" in err, err


# ------------------------------------------------------------------------------------------------ hypothesis


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.text(max_size=8), st.integers(), st.floats(allow_nan=True), st.none(), st.booleans(),
                 st.lists(st.integers(), max_size=3)))
def test_an_unknown_option_of_any_value_is_a_method_option_error(value):
    for cls in (dpsumm.Nominations, dpsumm.PaperProtocol, dpsumm.PaperGreedy, dpsumm.Uniform):
        refused(lambda: cls(not_an_option=value), "not_an_option", MethodOptionError)


@settings(max_examples=60, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True), st.floats(min_value=1e-300, max_value=1e300))
def test_median_gamma_is_finite_and_positive_or_refused(a, scale):
    rows = np.array([[0.0, 0.0], [a, 1.0], [scale, -scale]])
    try:
        g = dpsumm.median_gamma(rows)
    except InvalidParameterError as exc:
        assert exc.argument == "rows"
    else:
        assert math.isfinite(g) and g > 0
