"""The contract every method and purchase keeps (scikit-learn's ``check_estimator`` is the model): each check runs
for every method x purchase, so a new purchase added to :data:`dpsumm.protocols.nominations.PURCHASES` is held to it
by its registration line alone."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import dpsumm
from dpsumm.flower.config import FlowerRunConfig
from dpsumm.methods import METHOD_CLASSES, PURCHASES, flat_options, method_from_options, option_declarations
from dpsumm.protocols.nominations import Purchase

LABELS = (0, 1, 2)


def _methods() -> list[dpsumm.methods.SummaryMethod]:
    out: list[dpsumm.methods.SummaryMethod] = [dpsumm.Nominations(purchase=cls.example()) for cls in PURCHASES.values()]
    out += [cls() for name, cls in METHOD_CLASSES.items() if name != "nominations"]
    return out


METHODS = _methods()


IDS = [f"{m.name}-{getattr(m, 'purchase', None).name if hasattr(m, 'purchase') else ''}".rstrip("-") for m in METHODS]


def _data(seed: int = 0) -> tuple[list[dpsumm.Owner], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    owners = [
        dpsumm.Owner(rng.random((120, 4)).astype(np.float32), labels=rng.integers(0, 3, 120), name=f"o{k}")
        for k in range(3)
    ]
    return owners, rng.random((40, 4)).astype(np.float32), rng.integers(0, 3, 40)


def _stratified(method: dpsumm.methods.SummaryMethod, owners: list[dpsumm.Owner]) -> list[dpsumm.Owner]:
    """The owners with strata (their labels as letters) when the method reads strata."""
    if not method.needs_strata:
        return owners
    return [
        dpsumm.Owner(o.data, labels=o.labels, strata=np.array(["a", "b", "c"])[o.labels], name=o.name) for o in owners
    ]


def _strata_kw(method: dpsumm.methods.SummaryMethod, vlabels: np.ndarray) -> dict[str, object]:
    return {"validation_strata": np.array(["a", "b", "c"])[vlabels]} if method.needs_strata else {}


def _run(method: dpsumm.methods.SummaryMethod, random_state: int | None = 7, **kw: object) -> dpsumm.SummaryResult:
    owners, validation, vlabels = _data()
    return dpsumm.summarize(
        _stratified(method, owners),
        validation,
        10,
        method,
        random_state=random_state,
        progress=False,
        validation_labels=vlabels if method.needs_labels else None,
        **_strata_kw(method, vlabels),
        **kw,
    )  # type: ignore[arg-type]


@pytest.mark.parametrize("method", METHODS, ids=IDS)
def test_rows_come_from_the_named_owners_without_repeats(method: dpsumm.methods.SummaryMethod) -> None:
    owners, _, _ = _data()
    result = _run(method)
    assert len(result.owner) == 10
    pairs = list(zip(result.owner.tolist(), result.index.tolist()))
    assert len(set(pairs)) == len(pairs)
    assert result.owner_names == [o.name for o in owners]
    if result.points is not None:
        for row, (k, i) in zip(result.points, pairs):
            np.testing.assert_array_equal(row, owners[k].data[i])


@pytest.mark.parametrize("method", METHODS, ids=IDS)
def test_the_default_run_is_certified_and_a_seeded_run_says_it_is_not_private(
    method: dpsumm.methods.SummaryMethod,
) -> None:
    seeded = _run(method)
    if not method.private:
        assert seeded.privacy is None and not seeded.certification().private
        return
    assert seeded.seeded and seeded.certification().status == "seeded: NOT private"
    private = _run(method, random_state=None)
    status = private.certification().status
    uncertified = getattr(getattr(method, "purchase", None), "uncertified", None)
    assert status == ("private, NOT certified" if uncertified else "private, certified")


@pytest.mark.parametrize("method", METHODS, ids=IDS)
def test_pickling_and_the_flat_options_round_trip(method: dpsumm.methods.SummaryMethod) -> None:
    assert pickle.loads(pickle.dumps(method)) == method
    assert method_from_options(method.name, flat_options(method)) == method
    if method.distributed:
        run_config = {
            "method": method.name,
            "size": 10,
            "owners": 3,
            "n-features": 4,
            **{k.replace("_", "-"): v for k, v in flat_options(method).items()},
        }
        assert FlowerRunConfig.from_run_config(run_config).method == method


@pytest.mark.parametrize("method", METHODS, ids=IDS)
def test_bad_input_names_the_argument_before_any_budget_is_spent(method: dpsumm.methods.SummaryMethod) -> None:
    owners, validation, vlabels = _data()
    for kwargs, argument in (({"size": 0}, "size"), ({"size": 10, "gamma": -1.0}, "gamma"), ({"size": 10**7}, "size")):
        with pytest.raises(dpsumm.InvalidParameterError) as info:
            dpsumm.summarize(
                _stratified(method, owners),
                validation,
                method=method,
                progress=False,
                validation_labels=vlabels if method.needs_labels else None,
                **_strata_kw(method, vlabels),
                **kwargs,
            )  # type: ignore
        assert info.value.argument == argument


@pytest.mark.parametrize("purchase", list(PURCHASES.values()), ids=list(PURCHASES))
def test_an_option_of_another_purchase_is_refused_naming_it(purchase: type[Purchase]) -> None:
    declared = option_declarations()
    foreign = [
        name
        for name, d in declared.items()
        if name not in purchase.option_names() and all(o in {c.__name__ for c in PURCHASES.values()} for o in d.owners)
    ]
    for name in foreign:
        with pytest.raises(dpsumm.InvalidParameterError) as info:
            purchase(**purchase.example().changed_params(), **{name: 1})
        assert info.value.argument == name


@pytest.mark.parametrize("purchase", list(PURCHASES.values()), ids=list(PURCHASES))
def test_method_options_a_purchase_never_reads_are_refused(purchase: type[Purchase]) -> None:
    p = purchase.example()
    if purchase.nominates:
        dpsumm.Nominations(purchase=p, nominees=5, candidates=10)  # read: accepted
        return
    for name, value in (("nominees", 5), ("candidates", 10), ("temperature", 0.5)):
        with pytest.raises(dpsumm.InvalidParameterError) as info:
            dpsumm.Nominations(purchase=p, **{name: value})
        assert info.value.argument == name


def test_every_option_has_one_declaration_with_help() -> None:
    declared = option_declarations()
    for name, d in declared.items():
        assert d.help, f"option {name} of {d.owners} has no help text"
    from dpsumm.cli.run_options import METHOD_FLAGS
    from dpsumm.flower.config import METHOD_KEYS

    assert set(METHOD_FLAGS) == set(declared)
    assert {v for v in METHOD_KEYS.values()} == {
        n for n, d in declared.items() if set(d.owners) - {"PaperGreedy"} - {"CentralGreedy", "ExactGreedy", "Uniform"}
    }
