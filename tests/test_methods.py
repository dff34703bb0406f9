"""dpsumm.methods: one class per method name, owning its options, defaults and validation; every entry point
builds the same method object.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpsumm
from dpsumm.cli import build_parser
from dpsumm.cli.run_options import method_arg
from dpsumm.flower.config import FlowerRunConfig
from dpsumm.methods import METHOD_CLASSES, MethodOptionError, method_from_options, resolve_method

CLASSES = list(METHOD_CLASSES.values())


def blobs(seed=0, K=3, n=40, f=4, m=30):
    rng = np.random.default_rng(seed)
    owners = [rng.uniform(size=(n, f)).astype(np.float32) for _ in range(K)]
    return owners, rng.uniform(size=(m, f))


def test_one_class_per_method_name_exported_at_top_level():
    assert set(METHOD_CLASSES) == set(dpsumm.methods.METHODS)
    for name, cls in METHOD_CLASSES.items():
        assert cls.name == name and getattr(dpsumm, cls.__name__) is cls
        assert resolve_method(name) == cls() and resolve_method(cls) == cls()


def test_the_exported_names_are_the_registries():
    """Every list of methods and purchases kept by hand (the ``__all__``s, the Nominations docstring) holds exactly
    the registered classes: a purchase added to PURCHASES and not exported, or exported and not registered, fails."""
    from dpsumm.methods import PURCHASES
    from dpsumm.protocols import nominations
    from dpsumm.protocols.base import SummaryMethod
    from dpsumm.protocols.nominations.purchase import Purchase

    methods = {cls.__name__ for cls in METHOD_CLASSES.values()}
    purchases = {cls.__name__ for cls in PURCHASES.values()}
    for module in (dpsumm, dpsumm.methods, nominations):
        exported = {name: getattr(module, name) for name in module.__all__}
        exported_methods = {
            n for n, v in exported.items() if isinstance(v, type) and issubclass(v, SummaryMethod) and v.name
        }
        exported_purchases = {
            n for n, v in exported.items() if isinstance(v, type) and issubclass(v, Purchase) and v.name
        }
        assert exported_purchases == purchases, module.__name__
        if module is not nominations:
            assert exported_methods == methods, module.__name__
    for cls in PURCHASES.values():
        assert f":class:`dpsumm.{cls.__name__}`" in (dpsumm.Nominations.__doc__ or ""), cls.__name__


def test_the_purchase_help_lists_the_registry(monkeypatch):
    """The ``--purchase`` help (and the docs' option tables) is made from PURCHASES: each name with its brief, the
    default marked; a purchase registered later is listed too."""
    from dpsumm.methods import PURCHASES, option_declarations, purchases_text

    text = option_declarations()["purchase"].help
    assert text.startswith("how the aggregator gets rows: ")
    for name, cls in PURCHASES.items():
        assert cls.brief and f"{name} (" in text and cls.brief in text
    default = type(dpsumm.Nominations().purchase)
    assert f"{default.name} (default: {default.brief})" in text
    assert text.count("default:") == 1

    class Toy(dpsumm.Winners):
        name = "toy"
        brief = "a toy"

    monkeypatch.setitem(PURCHASES, "toy", Toy)
    assert purchases_text().endswith(" or toy (a toy)") and "default" not in purchases_text()


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_params_repr_pickle_and_immutability(cls):
    m = cls()
    assert repr(m) == f"{cls.__name__}()"
    params = m.get_params()
    assert list(params) == list(cls.option_names()) and cls(**params) == m
    changed = m.set_params(dim=64)
    assert changed.dim == 64 and m.dim != 64  # a new object; the original is unchanged
    assert repr(changed) == f"{cls.__name__}(dim=64)"
    assert pickle.loads(pickle.dumps(changed)) == changed and hash(changed) == hash(cls(dim=64))
    with pytest.raises(AttributeError):
        m.dim = 3  # type: ignore[misc]
    with pytest.raises(MethodOptionError, match="no option 'nominess'"):
        m.set_params(nominess=3)


def test_defaults_live_on_the_class_and_differ_only_where_the_method_differs():
    assert dpsumm.Nominations().dim == 500 and dpsumm.CentralGreedy().dim == 500
    assert dpsumm.PaperProtocol().dim == 140 and dpsumm.PaperGreedy().dim == 140
    assert dpsumm.Nominations().resolved_nominees(100) == 200
    assert dpsumm.Nominations().resolved_choice == "kernel"
    assert dpsumm.Nominations(purchase=dpsumm.Winners()).resolved_choice == "hashes"
    assert dpsumm.Nominations().purchase == dpsumm.ByDirection()  # the default: by cells along the direction


@pytest.mark.parametrize(
    "cls, options, bad",
    [
        (dpsumm.Nominations, dict(nominees=0), "nominees"),
        (dpsumm.Nominations, dict(nominees=2.5), "nominees"),
        (dpsumm.Nominations, dict(candidates=5, nominees=20), "candidates"),
        (dpsumm.Nominations, dict(temperature=-5), "temperature"),
        (dpsumm.Nominations, dict(temperature=float("nan")), "temperature"),
        (dpsumm.Nominations, dict(purchase="all"), "purchase"),
        (dpsumm.Nominations, dict(choice="kernel", purchase=dpsumm.Winners()), "choice"),
        (dpsumm.Nominations, dict(owner_greedy="lazy"), "owner_greedy"),
        (dpsumm.Nominations, dict(validation_release="laplace"), "validation_release"),
        (dpsumm.Nominations, dict(reveal=True), "reveal"),
        (dpsumm.Nominations, dict(dim=0), "dim"),
        (dpsumm.PaperProtocol, dict(epsilon_auction=-1.0), "epsilon_auction"),
        (dpsumm.PaperProtocol, dict(epsilon_auction="theorem7"), "epsilon_auction"),
        (dpsumm.PaperProtocol, dict(schedule="fast"), "schedule"),
        (dpsumm.PaperProtocol, dict(t_init=0), "t_init"),
        (dpsumm.PaperGreedy, dict(reveal="rows"), "reveal"),
        (dpsumm.CentralGreedy, dict(hash_seed=-1), "hash_seed"),
    ],
)
def test_bad_option_values_are_refused_at_construction(cls, options, bad):
    with pytest.raises(dpsumm.InvalidParameterError) as err:
        cls(**options)
    assert err.value.argument == bad


@settings(max_examples=60, deadline=None)
@given(
    nominees=st.one_of(st.integers(-5, 0), st.floats(), st.text(max_size=3), st.booleans()),
    temperature=st.one_of(st.floats(max_value=0), st.just(float("inf")), st.text(max_size=2)),
)
def test_hypothesis_bad_nominations_options_raise_typed_errors(nominees, temperature):
    for kw in (dict(nominees=nominees), dict(temperature=temperature)):
        with pytest.raises(dpsumm.DpsummError):
            dpsumm.Nominations(**kw)


@pytest.mark.parametrize(
    "method, options",
    [
        ("paper", dict(nominees=3)),
        ("central-greedy", dict(purchase="winners")),
        ("paper", dict(temperature=-5)),
        ("nominations", dict(dim=64)),
        ("nominations", dict(reveal="hashes")),
        ("exact-greedy", dict(epsilon_auction=1.0)),
    ],
)
def test_method_options_given_to_summarize_are_refused_before_any_noise(method, options):
    owners, validation = blobs()
    rng = dpsumm.privacy.Csprng(5)
    with pytest.raises(MethodOptionError) as err:
        dpsumm.summarize(owners, validation, 10, method=method, random_state=rng, progress=False, **options)
    key = next(iter(options))
    assert err.value.argument == key and isinstance(err.value, TypeError)
    assert "method object" in str(err.value)
    assert rng.uniform() == dpsumm.privacy.Csprng(5).uniform()  # the stream was not touched


def test_a_misspelled_keyword_suggests_the_option():
    owners, validation = blobs()
    with pytest.raises(MethodOptionError, match="did you mean 'nominees'"):
        dpsumm.summarize(owners, validation, 10, nominess=3, progress=False)
    with pytest.raises(MethodOptionError, match="did you mean 'nominations'"):
        dpsumm.summarize(owners, validation, 10, method="nomination", progress=False)


@pytest.mark.parametrize(
    "method, options, bad",
    [
        ("paper", dict(nominees=3), "nominees"),
        ("central-greedy", dict(purchase="winners"), "purchase"),
        ("exact-greedy", dict(reveal="hashes"), "reveal"),
    ],
)
def test_an_option_the_method_lacks_names_where_it_belongs(method, options, bad):
    with pytest.raises(MethodOptionError) as err:
        method_from_options(method, options)
    assert err.value.argument == bad and "does not apply" in str(err.value)


def test_configuration_that_cannot_produce_size_rows_is_an_error_before_the_run():
    owners, validation = blobs(K=3, n=5)
    rng = dpsumm.privacy.Csprng(1)
    with pytest.raises(dpsumm.InvalidParameterError) as err:  # 3 owners x min(nominees=4, 5 rows) = 12 < 14
        dpsumm.summarize(owners, validation, 14, dpsumm.Nominations(nominees=4), random_state=rng, progress=False)
    assert err.value.argument == "nominees"
    assert rng.uniform() == dpsumm.privacy.Csprng(1).uniform()
    with pytest.raises(dpsumm.InvalidParameterError) as err:
        dpsumm.summarize(owners, validation, 16, "uniform", progress=False)
    assert err.value.argument == "size"


def test_a_central_baseline_refuses_a_transport():
    from dpsumm.transport import InProcessTransport

    owners, validation = blobs()
    with pytest.raises(dpsumm.InvalidParameterError) as err:
        dpsumm.summarize(owners, validation, 5, "exact-greedy", transport=InProcessTransport({}), progress=False)
    assert err.value.argument == "transport"


def test_name_means_the_defaults_and_the_object_runs_the_same():
    owners, validation = blobs()
    for name, cls in METHOD_CLASSES.items():
        a = dpsumm.summarize(owners, validation, 6, name, gamma="median", random_state=3, progress=False)
        b = dpsumm.summarize(owners, validation, 6, cls(), gamma="median", random_state=3, progress=False)
        assert np.array_equal(a.owner, b.owner) and np.array_equal(a.index, b.index), name
        assert a.method == name


CASES = [
    ("nominations", {}, []),
    (
        "nominations",
        dict(nominees=30, purchase=dpsumm.Winners(), dim=64),
        ["--nominees", "30", "--purchase", "winners", "--dim", "64"],
    ),
    (
        "nominations",
        dict(purchase=dpsumm.ByLabel(label_set=(0, 1, 2), purchase_factor=2.0, sale_tilt_share=0.25)),
        ["--purchase", "labels", "--label-set", "0,1,2", "--purchase-factor", "2", "--sale-tilt-share", "0.25"],
    ),
    # a label set alone is crossed with the default purchase's cells
    ("nominations", dict(purchase=dpsumm.ByDirection(label_set=("cat", "dog"))), ["--label-set", '["cat", "dog"]']),
    (
        "nominations",
        dict(
            purchase=dpsumm.Nominees(), candidates=90, temperature=0.5, owner_greedy="exact", validation_release="mwem"
        ),
        [
            "--purchase",
            "nominees",
            "--candidates",
            "90",
            "--temperature",
            "0.5",
            "--owner-greedy",
            "exact",
            "--validation-release",
            "mwem",
        ],
    ),
    (
        "paper",
        dict(epsilon_auction=0.5, reveal="hashes", t_init=40),
        ["--epsilon-auction", "0.5", "--reveal", "hashes", "--t-init", "40"],
    ),
    ("paper-greedy", dict(dim=32, hash_seed=7), ["--dim", "32", "--hash-seed", "7"]),
]


@pytest.mark.parametrize("name, options, flags", CASES)
def test_cli_flower_and_estimator_build_the_python_method_object(name, options, flags, tmp_path):
    from dpsumm.cli.flower import _flower_run_config

    expected = METHOD_CLASSES[name](**options)
    common = ["--size", "10", "--method", name, *flags]
    args = build_parser().parse_args(
        ["summarize", "--owners", "a.npy", "--validation", "v.npy", "--out", str(tmp_path), *common]
    )
    assert method_arg(args) == expected
    fargs = build_parser().parse_args(
        ["flower", "--owner", "a=a.npy", "--owner", "b=b.npy", "--consumer", "v.npy", *common]
    )
    run_config = _flower_run_config(fargs, n_owners=2, n_features=4)
    assert FlowerRunConfig.from_run_config(run_config).method == expected
    est = dpsumm.Summarizer(10, method=name).set_params(**{f"method__{k}": v for k, v in options.items()})
    assert resolve_method(est.method) == expected
