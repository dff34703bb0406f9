"""dpsumm.protocols.base: a method object refuses an option it does not have (MethodOptionError naming it), for
any value.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpsumm
from dpsumm.methods import MethodOptionError
from refusal import refused


@pytest.mark.parametrize(
    "build,argument,hint",
    [
        (lambda: dpsumm.Nominations(nominee=5), "nominee", "nominees"),
        (lambda: dpsumm.PaperProtocol(nominees=5), "nominees", "Nominations"),
        (lambda: dpsumm.Uniform(foo=1), "foo", ""),
        (lambda: dpsumm.CentralGreedy(140, 0, 3), "hash_seed", "positionally"),
    ],
)
def test_a_method_object_refuses_an_option_it_does_not_have(build, argument, hint):
    err = refused(build, argument, MethodOptionError)
    assert isinstance(err, TypeError) and hint in str(err)


@settings(max_examples=60, deadline=None)
@given(
    st.one_of(
        st.text(max_size=8),
        st.integers(),
        st.floats(allow_nan=True),
        st.none(),
        st.booleans(),
        st.lists(st.integers(), max_size=3),
    )
)
def test_an_unknown_option_of_any_value_is_a_method_option_error(value):
    for cls in (dpsumm.Nominations, dpsumm.PaperProtocol, dpsumm.PaperGreedy, dpsumm.Uniform):
        refused(lambda: cls(not_an_option=value), "not_an_option", MethodOptionError)


def declared_constraints() -> list[tuple[type, str, object]]:
    """``(class, option, constraint)`` of every option with a declared constraint, on every registered method and
    purchase class."""
    import dataclasses

    from dpsumm.methods import METHOD_CLASSES, PURCHASES

    out = []
    for cls in (*METHOD_CLASSES.values(), *PURCHASES.values()):
        for f in dataclasses.fields(cls):
            if f.metadata.get("constraint") is not None:
                out.append((cls, f.name, f.metadata["constraint"]))
    return out


def outside(constraint: object) -> st.SearchStrategy[object]:
    """Values a declared constraint refuses: out of range, of another type, not finite, not among the choices."""
    from dpsumm._validation import Interval, OneOf

    other_types = st.one_of(st.booleans(), st.text(max_size=4), st.just([1]), st.just(object()))
    if isinstance(constraint, OneOf):
        return st.one_of(st.text(max_size=12).filter(lambda s: s not in constraint.choices), st.integers(), other_types)
    assert isinstance(constraint, Interval)
    if constraint.kind is int:
        low, high = int(constraint.low), int(constraint.high)  # type: ignore[arg-type]
        return st.one_of(
            st.integers(max_value=low - 1), st.integers(min_value=high + 1), st.floats(allow_nan=True), other_types
        )

    def refused_number(x: float | int) -> bool:
        try:
            return not (math.isfinite(float(x)) and float(x) in constraint)
        except OverflowError:  # an int beyond the float range
            return True

    numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-(10**400), 10**400))
    return st.one_of(numbers.filter(refused_number), other_types)


CONSTRAINED = declared_constraints()


def test_the_options_declare_their_constraints():
    """The options that had hand-written range checks declare them (a refactor that drops one fails here)."""
    names = {(cls.__name__, name) for cls, name, _ in CONSTRAINED}
    for expected in [
        ("Nominations", "nominees"),
        ("Nominations", "candidates"),
        ("Nominations", "temperature"),
        ("Nominations", "dim"),
        ("Nominations", "reveal"),
        ("PaperProtocol", "t_init"),
        ("ByDirection", "bins"),
        ("ByDirection", "direction_share"),
        ("ByLabel", "purchase_factor"),
        ("ByStrata", "reserve"),
        ("ExactGreedy", "dim"),
    ]:
        assert expected in names, expected


@pytest.mark.parametrize("cls,name,constraint", CONSTRAINED, ids=[f"{c.__name__}.{n}" for c, n, _ in CONSTRAINED])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_a_value_outside_an_options_declared_constraint_is_refused_naming_it(cls, name, constraint, data):
    import dataclasses

    from dpsumm.protocols.nominations.purchase import Purchase

    bad = data.draw(outside(constraint))
    if issubclass(cls, Purchase):
        build = lambda: dataclasses.replace(cls.example(), **{name: bad})  # noqa: E731
    else:
        build = lambda: cls(**{name: bad})  # noqa: E731
    err = refused(build, name)
    assert f"`{name}`" in str(err)


@pytest.mark.parametrize("cls,name,constraint", CONSTRAINED, ids=[f"{c.__name__}.{n}" for c, n, _ in CONSTRAINED])
def test_an_options_default_meets_its_constraint(cls, name, constraint):
    import dataclasses

    default = {f.name: f.default for f in dataclasses.fields(cls)}[name]
    assert default is None or constraint.check(default, name) == default


def test_what_each_method_says_of_its_seed_rows_and_planned_spend():
    """The hooks the entry points ask instead of probing a method's attributes: whether it reads the public seed
    rows, why generated ones would mislead it, and what a run asks each party to spend."""
    plan = dpsumm.methods.METHOD_CLASSES["uniform"]().plan(
        size=5, owners=2, owner_rows=None, validation_rows=None, privacy=None, gamma_median=False
    )
    assert dpsumm.Uniform().reads_seed_rows is False and dpsumm.Uniform().generated_seed_warning() is None
    assert dpsumm.Uniform().planned_spend(None, plan) == {}
    assert dpsumm.PaperGreedy().reads_seed_rows is True
    default, nominees = dpsumm.Nominations(), dpsumm.Nominations(purchase=dpsumm.Nominees())
    assert default.reads_seed_rows and "'direction' purchase keys its cells" in default.generated_seed_warning()
    assert not nominees.reads_seed_rows and nominees.generated_seed_warning() is None
    assert nominees.planned_spend(None, plan) == {"consumer": (1.0, 1e-6)}  # the default validation budget
    assert default.planned_spend(None, plan) == {"consumer": (1.0, 1e-6), "owners": (1.0, 1e-6)}
    paper = dpsumm.PaperProtocol()
    schedule = paper.plan(size=5, owners=2, owner_rows=None, validation_rows=None, privacy=None, gamma_median=False)
    spent = paper.planned_spend(None, schedule)
    assert spent == {"consumer": (schedule.schedule.t_init * schedule.schedule.epsilon_validation_step, 0.0)}


def test_generated_seed_rows_refuse_a_feature_range_beyond_float32():
    # Was: numpy's "overflow encountered in cast" RuntimeWarning as the rows drawn in (0, 1e308) became float32.
    rng = np.random.default_rng(0)
    owners = [rng.uniform(size=(20, 3)) for _ in range(2)]
    run = dict(progress=False, random_state=0, feature_range=(0.0, 1e308))
    refused(lambda: dpsumm.summarize(owners, rng.uniform(size=(10, 3)), 3, "uniform", **run), "feature_range")
    # No seed row drawn (a number gamma, a method without D_init): the range is not read, as before.
    assert len(dpsumm.summarize(owners, rng.uniform(size=(10, 3)), 3, "uniform", gamma=0.5, **run)) == 3
