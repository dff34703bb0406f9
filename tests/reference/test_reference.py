"""Bad inputs to the numpy twins (``dpsumm.reference.__all__``): each refuses them as an InvalidParameterError
naming the argument, as its Rust-backed twin does, before drawing anything; every exported name is covered.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dpsumm
from dpsumm import DpsummError, InvalidParameterError, _core, kernels, reference
from dpsumm import accounting as acc
from dpsumm.reference import owner_sketch
from refusal import HUGE, refused  # the audit's check: the error names the argument, no numpy warning first

#: dpsumm.summarize (the twin of summarize_reference) at gamma 1e-80 warns of the degenerate kernel
pytestmark = pytest.mark.filterwarnings("ignore::dpsumm.preprocessing.DegenerateKernelWarning")


RNG = np.random.default_rng(11)


X = RNG.uniform(size=(6, 3))  # rows of 3 features


H = RNG.uniform(-0.3, 0.3, size=(6, 4)).astype(np.float32)  # their hashes, d = 4


V = np.ones(4, np.float32)


T = H.astype(np.float64).mean(0)


U = RNG.uniform(-1, 1, size=(5, 4))  # values in [-1, 1]


HASHER = dpsumm.RFFHasher(3, dim=4, gamma=0.5)


OMEGA, OFFSET = HASHER.omega_, HASHER.offset_


FLAT = dpsumm.RFFHasher(3, dim=4, gamma=1e-80)


OWNERS = [X[:3], X[3:]]


HX = HASHER.transform(X)  # h1 of X: the owner sketches' twins take the hashes, the Rust kernels the rows


PROJ = HASHER._projection
W_HX = np.linspace(-1.0, 1.0, HX.shape[1])  # a direction in the hashes' space (the owners' scores' twins)


EDGES = np.array([-0.1, 0.0, 0.1])


SCHEDULE = dataclasses.replace(acc.paper_schedule(3, 2, dim=4), t_init=5, t_subs=2)


def _mwem_release(**kw: Any) -> object:
    return reference.ProductMWEM(4, 0.5, random_state=np.random.default_rng(0)).release(**kw)


def _summarize_reference(**kw: Any) -> object:
    return reference.summarize_reference(
        **{
            "owners": OWNERS,
            "validation": X,
            "size": 3,
            "seed_set": X[:2],
            "omega": OMEGA,
            "offset": OFFSET,
            "schedule": SCHEDULE,
            "rng": np.random.default_rng(0),
            **kw,
        }
    )


def _summarize(**kw: Any) -> object:
    return dpsumm.summarize(
        kw.get("owners", OWNERS),
        kw.get("validation", X),
        kw.get("size", 3),
        kw.get("method", "paper-greedy"),
        seed_set=kw.get("seed_set", X[:2]),
        gamma=1e-80,
        progress=False,
        random_state=0,
    )  # gamma: as FLAT's


@dataclasses.dataclass(frozen=True)
class Twin:
    """An exported reference callable with good arguments, and its Rust-backed twin (if any) on the same ones."""

    reference: Callable[..., object]
    arguments: dict[str, Any]
    twin: Callable[..., object] | None = None
    twin_arguments: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: reference argument -> the twin's name for it (only the arguments both take and check alike)
    shared: dict[str, str] = dataclasses.field(default_factory=dict)

    def call(self, argument: str, value: object) -> object:
        return self.reference(**{**self.arguments, argument: value})

    def call_twin(self, argument: str, value: object) -> object:
        assert self.twin is not None
        return self.twin(**{**self.twin_arguments, self.shared[argument]: value})


def _same(*names: str) -> dict[str, str]:
    return {n: n for n in names}


TWINS: dict[str, Twin] = {
    # gamma so small that no float32 row reaches the bound RFFHasher.transform puts on |omega . x| (the domain of
    # its float32 cosine), which the float64 twin does not have.
    "rff_transform": Twin(
        reference.rff_transform,
        dict(X=X, omega=FLAT.omega_, offset=FLAT.offset_),
        FLAT.transform,
        dict(X=X),
        _same("X"),
    ),
    "best_row": Twin(
        reference.best_row,
        dict(hashes=H, v=V, offered=None),
        kernels.best_row,
        dict(hashes=H, v=V),
        _same("hashes", "v", "offered"),
    ),
    "best_rows": Twin(
        reference.best_rows,
        dict(hashes=[H, H], v=V, offered=None),
        kernels.best_rows,
        dict(hashes=[H, H], v=V),
        _same("hashes", "v", "offered"),
    ),
    "kernel_sum": Twin(
        reference.kernel_sum,
        dict(A=X, B=X, gamma=0.5, block=2048),
        kernels.kernel_sum,
        dict(A=X, B=X, gamma=0.5),
        _same("A", "B", "gamma"),
    ),
    "mmd2": Twin(
        reference.mmd2,
        dict(A=X, B=X + 0.1, gamma=0.5),
        kernels.mmd2,
        dict(A=X, B=X + 0.1, gamma=0.5),
        _same("A", "B", "gamma"),
    ),
    "kernel_row_means": Twin(
        reference.kernel_row_means,
        dict(A=X, B=X, gamma=0.5),
        kernels.kernel_row_means,
        dict(A=X, B=X, gamma=0.5),
        _same("A", "B", "gamma"),
    ),
    "greedy_select": Twin(
        reference.greedy_select,
        dict(hashes=H, target=T, k=3, taken=None),
        kernels.greedy_select,
        dict(hashes=H, target=T, k=3),
        _same("hashes", "target", "k", "taken"),
    ),
    # The Rust kernel itself (no Python wrapper): it takes float32 rows only and names ks0 "ks".
    "kernel_greedy": Twin(
        reference.kernel_greedy,
        dict(X=X, kv=np.ones(6), ks0=np.zeros(6), q0=0, k=3, gamma=0.5),
        lambda **kw: _core.kernel_greedy(kw["X"], kw["kv"], kw["ks"], kw["q0"], kw["k"], kw["gamma"]),
        dict(X=X.astype(np.float32), kv=np.ones(6), ks=np.zeros(6), q0=0, k=3, gamma=0.5),
        _same("q0", "k"),
    ),
    "nominate": Twin(
        reference.nominate,
        dict(
            hashes=HASHER.transform(X),
            g_tilde=T,
            temperature=0.1,
            nominees=2,
            candidates=4,
            sample_seed=None,
            greedy_sample_factor=None,
        ),
        lambda **kw: kernels.nominate(X, HASHER, **kw),
        dict(g_tilde=T, temperature=0.1, nominees=2, candidates=4, sampling="weighted", random_state=0),
        {
            **_same("g_tilde", "temperature", "nominees", "candidates", "greedy_sample_factor"),
            "sample_seed": "random_state",
        },
    ),
    "stochastic_greedy_select": Twin(
        reference.stochastic_greedy_select,
        dict(hashes=H, target=T, k=3, sample_size=2, seed=0),
        kernels.stochastic_greedy_select,
        dict(hashes=H, target=T, k=3, sample_size=2, random_state=0),
        {**_same("hashes", "target", "k", "sample_size"), "seed": "random_state"},
    ),
    "stochastic_sample_size": Twin(
        reference.stochastic_sample_size,
        dict(n=10, k=3, factor=2.0),
        kernels.stochastic_sample_size,
        dict(n=10, k=3, factor=2.0),
        _same("n", "k", "factor"),
    ),
    "stochastic_round": Twin(
        reference.stochastic_round,
        dict(values=U, eta=0.5, rng=np.random.default_rng(0)),
        dpsumm.privacy.stochastic_round,
        dict(values=U, eta=0.5, rng=dpsumm.privacy.Csprng(0)),
        _same("values", "eta"),
    ),
    # (not `values`: the Rust twin reads them in float32, so 1 + 1e-16 is 1 there and refused here)
    "quantize_column_sums": Twin(
        reference.quantize_column_sums,
        dict(values=U, eta=0.5, rng=np.random.default_rng(0)),
        dpsumm.privacy.quantize_column_sums,
        dict(values=U, eta=0.5, rng=dpsumm.privacy.Csprng(0)),
        _same("eta"),
    ),
    "exponential_mechanism_probabilities": Twin(
        reference.exponential_mechanism_probabilities,
        dict(scores=np.array([0.0, 1.0, 3.0]), epsilon=1.0, sensitivity=1.0),
        lambda **kw: dpsumm.privacy.Csprng(0).exponential_mechanism(**kw),
        dict(scores=np.array([0.0, 1.0, 3.0]), epsilon=1.0, sensitivity=1.0),
        _same("scores", "epsilon", "sensitivity"),
    ),
    "ProductMWEM": Twin(
        reference.ProductMWEM,
        dict(dim=4, eta=0.5, neighbour="replace-one", random_state=None),
        dpsumm.privacy.ProductMWEM,
        dict(dim=4, eta=0.5, neighbour="replace-one", random_state=0),
        _same("dim", "eta", "neighbour"),
    ),
    "ProductMWEM.release": Twin(
        _mwem_release,
        dict(column_sums=U.sum(0), n_rows=5, steps=3, epsilon=1.0, noise=True),
        lambda **kw: dpsumm.privacy.ProductMWEM(4, 0.5, random_state=0).release(**kw),
        dict(column_sums=U.sum(0), n_rows=5, steps=3, epsilon=1.0),
        _same("column_sums", "n_rows", "steps", "epsilon"),
    ),
    "summarize_reference": Twin(
        _summarize_reference, {}, _summarize, {}, _same("owners", "validation", "size", "seed_set", "method")
    ),
    # dpsumm.reference.owner_sketch (a public submodule, not re-exported): twins of the Rust kernels themselves,
    # which take the rows X and the projection where the twins take the hashes H = h1(X).
    "owner_sketch.hash_sum": Twin(owner_sketch.hash_sum, dict(H=HX), lambda **kw: _core.owner_hash_sum(X, PROJ)),
    "owner_sketch.hash_scores": Twin(
        owner_sketch.hash_scores,
        dict(H=HX, direction=W_HX, shift=0.1),
        lambda **kw: _core.owner_hash_scores(X, PROJ, **kw),
        dict(direction=W_HX, shift=0.1),
        _same("direction"),
    ),
}


def _refused_alike(name: str, argument: str, value: object) -> None:
    """The reference refuses ``value`` for ``argument`` naming it; so does the twin, with the same class."""
    twin = TWINS[name]
    err = refused(lambda: twin.call(argument, value), argument)
    if argument in twin.shared:
        twin_err = refused(lambda: twin.call_twin(argument, value), twin.shared[argument], DpsummError)
        assert type(err) is type(twin_err), (type(err), type(twin_err), str(twin_err))


def _finite(out: object) -> bool:
    """Every float in ``out`` (arrays, tuples, dicts, numbers) is finite."""
    if isinstance(out, dict):
        return all(_finite(v) for v in out.values())
    if isinstance(out, (tuple, list)):
        return all(_finite(v) for v in out)
    if isinstance(out, (np.ndarray, float, np.floating)):
        arr = np.asarray(out)
        return arr.dtype.kind != "f" or bool(np.isfinite(arr).all())
    return True


def test_every_exported_name_is_covered_and_takes_good_arguments():
    covered = {name if name.startswith("owner_sketch.") else name.split(".")[0] for name in TWINS}
    assert covered == set(reference.__all__) | {f"owner_sketch.{n}" for n in owner_sketch.__all__}
    for name, twin in TWINS.items():
        out = twin.reference(**twin.arguments)
        assert _finite(out), name
        if twin.twin is not None:
            twin.twin(**twin.twin_arguments)


BAD = [
    # (function, argument, value): "was" what the twin did before it checked its arguments
    ("rff_transform", "X", np.full((2, 3), np.nan)),  # was: NaN hashes
    ("rff_transform", "X", X.astype(str)),  # was: strings read as numbers
    ("rff_transform", "X", X[:, :2]),  # was: numpy's matmul ValueError
    ("rff_transform", "X", X[0]),  # was: a 1-D "hash" returned
    ("rff_transform", "omega", OMEGA[0]),  # was: IndexError
    ("rff_transform", "omega", np.zeros((3, 0))),  # was: ZeroDivisionError
    ("rff_transform", "offset", np.float32(0.5)),  # was: broadcast to every feature
    ("best_row", "hashes", H[0]),  # was: IndexError
    ("best_row", "hashes", np.full((3, 4), np.nan)),  # was: (nan, 0)
    ("best_row", "v", np.full(4, np.nan)),  # was: (nan, 0)
    ("best_row", "v", V[:3]),
    ("best_row", "offered", np.zeros(3, bool)),  # was: numpy's broadcast ValueError
    ("best_row", "offered", np.zeros(6)),  # was: floats read as a mask
    ("best_rows", "hashes", H),  # was: IndexError (the rows taken for owners)
    ("best_rows", "hashes", [H, H[:, :3]]),
    ("best_rows", "offered", [np.zeros(6, bool)]),  # was: zip() dropped the second owner silently
    ("kernel_sum", "gamma", float("nan")),  # was: nan
    ("kernel_sum", "gamma", -1.0),  # was: a sum of exp(+...)
    ("kernel_sum", "A", np.zeros((0, 3))),  # was: 0.0
    ("kernel_sum", "B", X[:, :2]),
    ("kernel_sum", "block", 0),  # was: range() ValueError; -1 returned 0.0
    ("kernel_sum", "block", -1),
    ("mmd2", "A", np.zeros((0, 3))),  # was: ZeroDivisionError
    ("mmd2", "B", np.full((2, 3), np.inf)),
    ("mmd2", "gamma", True),  # was: gamma 1.0
    ("mmd2", "A", X * 1e300),  # was: nan (inf - inf in the squared distances)
    ("kernel_row_means", "B", np.zeros((0, 3))),  # was: nan with a RuntimeWarning
    ("kernel_row_means", "gamma", 0.0),
    ("greedy_select", "k", -1),  # was: no rows, silently
    ("greedy_select", "k", True),
    ("greedy_select", "k", 2.5),  # was: TypeError
    ("greedy_select", "target", np.full(4, np.nan)),  # was: scores nan
    ("greedy_select", "hashes", np.full((3, 4), np.nan)),
    ("greedy_select", "taken", np.zeros(6, int)),
    ("greedy_select", "taken", [[True], [True, False]]),  # was: numpy's ValueError in the Rust-backed twin too
    ("kernel_greedy", "q0", -1),  # was: picks returned
    ("kernel_greedy", "k", 2.5),
    ("kernel_greedy", "kv", np.ones(5)),  # was: IndexError
    ("kernel_greedy", "ks0", np.full(6, np.nan)),
    ("kernel_greedy", "gamma", float("nan")),  # was: nan scores
    ("kernel_greedy", "X", np.full((6, 3), np.nan)),
    ("nominate", "candidates", 0),  # was: no nominees, silently
    ("nominate", "nominees", 0),
    ("nominate", "candidates", 1),  # fewer than nominees: was one nominee
    ("nominate", "temperature", 0.0),  # was: a RuntimeWarning and nan weights
    ("nominate", "temperature", -1.0),
    ("nominate", "hashes", np.zeros((0, 4))),  # was: numpy's ValueError (max of nothing)
    ("nominate", "g_tilde", np.full(4, np.nan)),
    ("nominate", "sample_seed", -1),  # was: OverflowError
    ("nominate", "sample_seed", True),
    ("nominate", "greedy_sample_factor", float("nan")),  # was: ValueError from math.ceil
    ("nominate", "greedy_sample_factor", 0.0),
    ("stochastic_greedy_select", "sample_size", 0),  # was: IndexError
    ("stochastic_greedy_select", "seed", -1),  # was: a stream seeded from -1
    ("stochastic_greedy_select", "seed", 1.5),  # was: TypeError
    ("stochastic_greedy_select", "k", -1),
    ("stochastic_sample_size", "factor", float("nan")),  # was: ValueError (here and in dpsumm.kernels)
    ("stochastic_sample_size", "factor", float("inf")),  # was: OverflowError
    ("stochastic_sample_size", "n", -1),  # was: 0
    ("stochastic_sample_size", "n", 2.5),  # was: 2
    ("stochastic_round", "eta", 0.0),  # was: ZeroDivisionError
    ("stochastic_round", "eta", 0.3),  # was: rounded to the grid of 2/7
    ("stochastic_round", "eta", 5e-324),  # was: OverflowError
    ("stochastic_round", "values", np.full((2, 2), np.nan)),  # was: nan
    ("stochastic_round", "values", np.full((2, 2), 5.0)),  # was: clipped to 1
    ("stochastic_round", "values", U[0]),
    ("stochastic_round", "rng", dpsumm.privacy.Csprng(0)),  # was: AttributeError
    ("stochastic_round", "rng", None),
    ("quantize_column_sums", "values", U[0]),  # was: a scalar
    ("quantize_column_sums", "rng", 0),
    ("quantize_column_sums", "eta", -0.5),  # was: every value rounded to 1
    ("exponential_mechanism_probabilities", "scores", np.zeros(0)),  # was: numpy's ValueError
    ("exponential_mechanism_probabilities", "scores", np.array([0.0, np.nan])),  # was: [nan, nan]
    ("exponential_mechanism_probabilities", "scores", np.zeros((2, 2))),  # was: a 2-D "distribution"
    ("exponential_mechanism_probabilities", "scores", np.array([True, False])),
    ("exponential_mechanism_probabilities", "epsilon", 0.0),  # was: uniform
    ("exponential_mechanism_probabilities", "sensitivity", 0.0),  # was: a RuntimeWarning
    ("ProductMWEM", "dim", 0),  # was: an MWEM over no coordinates
    ("ProductMWEM", "dim", True),
    ("ProductMWEM", "eta", 0.0),  # was: ZeroDivisionError
    ("ProductMWEM", "eta", 0.3),
    ("ProductMWEM", "neighbour", "bogus"),  # was: taken as add-remove
    ("ProductMWEM", "random_state", 3),  # was: AttributeError at the first release
    ("ProductMWEM.release", "steps", 0),  # was: nan with a RuntimeWarning
    ("ProductMWEM.release", "steps", -1),  # was: zeros
    ("ProductMWEM.release", "n_rows", 0),  # was: numpy's ValueError (NaN probabilities)
    ("ProductMWEM.release", "column_sums", np.zeros(3)),
    ("ProductMWEM.release", "column_sums", np.full(4, 50.0)),  # more than n_rows
    ("ProductMWEM.release", "column_sums", np.full(4, np.nan)),  # was: numpy's ValueError
    ("ProductMWEM.release", "epsilon", 0.0),  # was: ZeroDivisionError
    ("ProductMWEM.release", "epsilon", 1e-300),  # the Rust twin's bound on the noise scale
    ("ProductMWEM.release", "noise", "no"),  # was: noise
    ("summarize_reference", "owners", []),  # was: an empty summary
    ("summarize_reference", "owners", [X[:3], X[3:, :2]]),
    ("summarize_reference", "owners", [np.full((3, 3), np.nan)]),  # was: numpy's ValueError (NaN probabilities)
    ("summarize_reference", "validation", X[:, :2]),
    ("summarize_reference", "size", 0),  # was: an empty summary
    ("summarize_reference", "size", 7),  # more than the 6 rows: was IndexError (the schedule's epochs)
    ("summarize_reference", "seed_set", np.zeros((0, 3))),  # was: numpy's ValueError (NaN probabilities)
    ("summarize_reference", "method", "magic"),  # was: run as paper-greedy
    ("summarize_reference", "schedule", None),  # was: AttributeError
    ("summarize_reference", "schedule", dataclasses.replace(SCHEDULE, eta=0.3)),
    ("summarize_reference", "rng", 0),
    ("summarize_reference", "omega", OMEGA[:2]),  # 2 features, the rows 3: was numpy's matmul ValueError
    # dpsumm.reference.owner_sketch checked nothing either
    ("owner_sketch.hash_sum", "H", np.zeros((0, 4))),  # was: zeros (the Rust kernel: "X has no rows")
    ("owner_sketch.hash_sum", "H", HX[0]),  # was: a scalar
    ("owner_sketch.hash_sum", "H", np.full((2, 4), np.nan)),  # was: nan
    ("owner_sketch.hash_sum", "H", np.full((2, 4), 1e39)),  # was: 2e39, beyond what the Rust kernel reads
    ("owner_sketch.hash_scores", "H", np.zeros((0, 4))),
    ("owner_sketch.hash_scores", "direction", W_HX[:-1]),
    ("owner_sketch.hash_scores", "direction", np.full_like(W_HX, np.nan)),
]


@pytest.mark.parametrize("name,argument,value", BAD, ids=[f"{n}-{a}-{i}" for i, (n, a, _) in enumerate(BAD)])
def test_a_bad_argument_is_refused_naming_it_as_the_twin_refuses_it(name, argument, value):
    _refused_alike(name, argument, value)


def test_a_refusal_draws_nothing_from_the_generator():
    gen = np.random.default_rng(5)
    state = gen.bit_generator.state
    refused(lambda: reference.stochastic_round(np.full((3, 4), 2.0), 0.5, gen), "values")
    refused(lambda: reference.ProductMWEM(4, 0.5, random_state=gen).release(np.zeros(4), 10, 0), "steps")
    refused(
        lambda: reference.summarize_reference(
            OWNERS, X, 3, seed_set=X[:2], omega=OMEGA, offset=OFFSET, schedule=SCHEDULE, rng=gen, method="bogus"
        ),
        "method",
    )
    assert gen.bit_generator.state == state


#: (function, argument) of every finite number > 0 a twin takes
POSITIVE = [
    ("kernel_sum", "gamma"),
    ("mmd2", "gamma"),
    ("kernel_row_means", "gamma"),
    ("kernel_greedy", "gamma"),
    ("nominate", "temperature"),
    ("nominate", "greedy_sample_factor"),
    ("stochastic_sample_size", "factor"),
    ("stochastic_round", "eta"),
    ("quantize_column_sums", "eta"),
    ("exponential_mechanism_probabilities", "epsilon"),
    ("exponential_mechanism_probabilities", "sensitivity"),
    ("ProductMWEM", "eta"),
    ("ProductMWEM.release", "epsilon"),
]


NOT_POSITIVE = st.one_of(
    st.floats(max_value=0.0),
    st.sampled_from([math.nan, math.inf, -math.inf, HUGE, -HUGE]),
    st.booleans(),
    st.text(max_size=3),
    st.complex_numbers(max_magnitude=2, min_magnitude=1),
    st.just(np.bool_(True)),
    st.lists(st.floats(0.1, 1.0), min_size=1, max_size=2),
)


@settings(max_examples=150, deadline=None)
@given(case=st.sampled_from(POSITIVE), value=NOT_POSITIVE)
def test_a_number_that_is_not_finite_and_positive_is_refused_as_the_twin_refuses_it(case, value):
    _refused_alike(*case, value)


#: (function, argument, smallest value) of every count a twin takes
COUNTS = [
    ("kernel_sum", "block", 1),
    ("greedy_select", "k", 0),
    ("kernel_greedy", "q0", 0),
    ("kernel_greedy", "k", 0),
    ("nominate", "nominees", 1),
    ("nominate", "candidates", 1),
    ("stochastic_greedy_select", "k", 0),
    ("stochastic_greedy_select", "sample_size", 1),
    ("stochastic_sample_size", "n", 0),
    ("stochastic_sample_size", "k", 0),
    ("ProductMWEM", "dim", 1),
    ("ProductMWEM.release", "n_rows", 1),
    ("ProductMWEM.release", "steps", 1),
    ("summarize_reference", "size", 1),
]


@settings(max_examples=150, deadline=None)
@given(case=st.sampled_from(COUNTS), data=st.data())
def test_a_count_that_is_not_a_large_enough_int_is_refused_as_the_twin_refuses_it(case, data):
    """Negative (or 0 where 1 is the least), beyond 2**64, floats (also a numpy float), bools, strings. Was, among
    others: ``ProductMWEM.release(steps=2**64)`` looping without end, ``range()``'s TypeError for a float."""
    name, argument, minimum = case
    value = data.draw(
        st.one_of(
            st.integers(max_value=minimum - 1),
            st.integers(min_value=2**64, max_value=2**80),
            st.floats(allow_nan=True),
            st.booleans(),
            st.text(max_size=3),
            st.just(np.float64(3.0)),
        )
    )
    _refused_alike(name, argument, value)


#: (function, argument, the shape it takes) of every array a twin takes
ARRAYS = [
    ("rff_transform", "X", (6, 3)),
    ("rff_transform", "omega", (3, 4)),
    ("rff_transform", "offset", (4,)),
    ("best_row", "hashes", (6, 4)),
    ("best_row", "v", (4,)),
    ("best_row", "offered", (6,)),
    ("kernel_sum", "A", (6, 3)),
    ("kernel_sum", "B", (6, 3)),
    ("mmd2", "A", (6, 3)),
    ("mmd2", "B", (6, 3)),
    ("kernel_row_means", "A", (6, 3)),
    ("kernel_row_means", "B", (6, 3)),
    ("greedy_select", "hashes", (6, 4)),
    ("greedy_select", "target", (4,)),
    ("greedy_select", "taken", (6,)),
    ("kernel_greedy", "X", (6, 3)),
    ("kernel_greedy", "kv", (6,)),
    ("kernel_greedy", "ks0", (6,)),
    ("nominate", "hashes", (6, 4)),
    ("nominate", "g_tilde", (4,)),
    ("stochastic_greedy_select", "hashes", (6, 4)),
    ("stochastic_greedy_select", "target", (4,)),
    ("stochastic_round", "values", (5, 4)),
    ("quantize_column_sums", "values", (5, 4)),
    ("exponential_mechanism_probabilities", "scores", (3,)),
    ("ProductMWEM.release", "column_sums", (4,)),
    ("summarize_reference", "validation", (6, 3)),
    ("summarize_reference", "seed_set", (2, 3)),
]


ANY_DTYPE = st.one_of(hnp.scalar_dtypes(), hnp.byte_string_dtypes(), hnp.unicode_string_dtypes())


@settings(max_examples=300, deadline=None)
@given(case=st.sampled_from(ARRAYS), data=st.data())
def test_an_array_of_any_dtype_and_shape_is_used_or_refused_as_the_twin_does(case, data):
    """An array of any dtype, any shape and any values (NaN, infinities, the float range's ends, strings, dates) is
    refused naming the argument or used, never a numpy error, warning or a non-finite result; and the Rust-backed
    twin refuses exactly the same arrays, with the same class, naming the same argument.

    An array of another shape than the one the call takes may be blamed on the argument whose shape it must match
    (``hashes`` of 5 columns: ``target`` must have shape (5,)), in both twins alike."""
    name, argument, shape = case
    drawn = data.draw(st.one_of(st.just(shape), hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6)))
    value = data.draw(hnp.arrays(dtype=ANY_DTYPE, shape=drawn))
    twin = TWINS[name]
    blamed: str | None = None
    refusal: type[Exception] | None = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            out = twin.call(argument, value)
        except InvalidParameterError as exc:
            blamed, refusal = exc.argument, type(exc)
            assert blamed == argument or (drawn != shape and blamed in twin.arguments), (blamed, str(exc))
        else:
            assert _finite(out), out
    if argument in twin.shared:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the Rust-backed twins' own numpy warnings are not checked here
            try:
                twin.call_twin(argument, value)
            except InvalidParameterError as exc:
                assert blamed is not None, (value.dtype, value, str(exc))
                assert exc.argument == twin.shared.get(blamed, blamed), (blamed, str(exc))
                assert type(exc) is refusal, (refusal, str(exc))
            else:
                assert blamed is None, (value.dtype, value)


#: (function, argument) of every float64 vector a twin scores rows with (``h . v``, then ``exp``)
SCORED = [
    ("greedy_select", "target"),
    ("stochastic_greedy_select", "target"),
    ("nominate", "g_tilde"),
]


#: finite (below 1.8e308), but ||v||_1 * max|h| beyond float64: scores inf, or inf - inf
OVERFLOWING = [np.full(4, 1e308), np.array([1e308, -1e308, 1e308, -1e308]), np.full(4, -1.7e308)]


@pytest.mark.parametrize("value", OVERFLOWING, ids=["same-sign", "alternating", "negative"])
@pytest.mark.parametrize("name,argument", SCORED)
def test_a_finite_vector_whose_scores_overflow_is_refused_as_the_twin_refuses_it(name, argument, value):
    # Was: accepted, the scores computed near or beyond float64's max. With h1 hashes of dim 64 (entries up to
    # sqrt(2/64) = 0.18) and alternating 1e308: greedy scores inf, nominate's target nan, the tilted mean nan, the
    # histogram's nan scores counted in its last bin; numpy's overflow warnings in the twins.
    if name.startswith("owner_sketch."):  # the Rust kernels themselves (no Python wrapper) do not refuse these
        refused(lambda: TWINS[name].call(argument, value), argument)
    else:
        _refused_alike(name, argument, value)


def test_the_score_bound_follows_the_hashes_and_the_temperature():
    # ||t||_1 * max|h| <= float max / 4: 4 * 1e307 * 0.3 passes for hashes of entries <= 0.3, not for 10x larger ones
    t = np.full(4, 1e307)
    assert np.isfinite(reference.greedy_select(H, t, 3)[1]).all()
    refused(lambda: reference.greedy_select(H * 10, t, 3), "target")
    refused(lambda: kernels.greedy_select(H * 10, t, 3), "target")
    # nominate divides the scores by the temperature (exp(s / T), the Gumbel key s / T + G): was nan, or ties of +inf
    g = HASHER.transform(X).astype(np.float64).mean(0)
    for T_ in (1e-310, 1e-300):
        refused(lambda: reference.nominate(HASHER.transform(X), g * 1e10, T_, 2, 4), "g_tilde")
        refused(lambda: kernels.nominate(X, HASHER, g * 1e10, temperature=T_, nominees=2, candidates=4), "g_tilde")


@settings(max_examples=200, deadline=None)
@given(case=st.sampled_from(SCORED), data=st.data())
def test_a_finite_vector_of_any_magnitude_is_refused_or_scored_finitely(case, data):
    """Finite float64 vectors of any magnitude (up to 1.8e308): refused naming the argument, or a finite result
    without a numpy warning; the Rust-backed twin refuses exactly the same ones, or returns a finite result too."""
    name, argument = case
    value = data.draw(hnp.arrays(np.float64, 4, elements=st.floats(allow_nan=False, allow_infinity=False)))
    twin = TWINS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            out = twin.call(argument, value)
        except InvalidParameterError as exc:
            assert exc.argument == argument, str(exc)
            refusal: InvalidParameterError | None = exc
        else:
            assert _finite(out), out
            refusal = None
        if name.startswith("owner_sketch."):
            return
        try:
            twin_out = twin.call_twin(argument, value)
        except InvalidParameterError as exc:
            assert refusal is not None and exc.argument == twin.shared[argument], (value, str(exc))
        else:
            assert refusal is None, (value, str(refusal))
            assert _finite(twin_out), twin_out


def test_a_release_at_the_smallest_epsilon_is_accepted_by_every_scoring_twin():
    # The noisiest release the library makes: epsilon 1e-6 (the least a target may be), replace-one sensitivity of
    # one row's hash (2 sqrt(2)); sigma ~ 2e4 per coordinate. Its ||g||_1 * sqrt(2/d) / T is below 1e6 / T: far
    # from 4.5e307 for any temperature the protocol uses (>= 0.02) and for the 1e-6 nominate's docstring names.
    cal = acc.calibrate_gaussian(1e-6, 1e-4, sensitivity=2 * math.sqrt(2), dim=4)
    assert cal.sigma > 1e4
    g = dpsumm.privacy.gaussian_mean_release(HX.astype(np.float64).mean(0), cal, dpsumm.privacy.Csprng(0))
    assert np.abs(g).max() > 100
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for T_ in (1e-6, 0.02, 1.0):
            assert _finite(reference.nominate(HX, g, T_, 2, 4, sample_seed=0))
            assert _finite(kernels.nominate(X, HASHER, g, temperature=T_, nominees=2, candidates=4, random_state=0))
        assert _finite(reference.greedy_select(HX, g, 3)) and _finite(kernels.greedy_select(HX, g, 3))
        assert _finite(reference.stochastic_greedy_select(HX, g, 3, 2, 0))
        assert _finite(kernels.stochastic_greedy_select(HX, g, 3, 2))
        # and a vector a million billion times larger still passes the bound (||g||_1 * 0.71 ~ 1e20)
        assert _finite(reference.greedy_select(HX, g * 1e15, 3)) and _finite(kernels.greedy_select(HX, g * 1e15, 3))


BEYOND_FLOAT32 = [
    ("best_row", "hashes", np.full((6, 4), 1e39)),
    ("best_row", "v", np.full(4, 1e308)),
    ("best_rows", "hashes", [H, np.full((6, 4), -1e39)]),
    ("best_rows", "v", np.full(4, 4e38)),
    ("greedy_select", "hashes", np.full((6, 4), 1e39)),
    ("stochastic_greedy_select", "hashes", np.full((6, 4), 1e39)),
]


@pytest.mark.parametrize("name,argument,value", BEYOND_FLOAT32, ids=[f"{n}-{a}" for n, a, _ in BEYOND_FLOAT32])
def test_values_beyond_float32_are_refused_without_an_overflow_warning(name, argument, value):
    # Was: numpy's "overflow encountered in cast" RuntimeWarning from the Rust-backed twin (and from the reference
    # best_row's v), then "contains NaN or infinite values", which the caller never passed.
    _refused_alike(name, argument, value)
    err = refused(lambda: TWINS[name].call_twin(argument, value), argument)
    assert "float32 range" in str(err)


def test_exponential_mechanism_probabilities_of_scores_far_apart_without_a_warning():
    # Was: [1, 0] with numpy's "overflow encountered in subtract" (or "in divide" for a tiny sensitivity): s - max s
    # overflows only to -inf, whose weight 0 is the exact limit, as the Rust sampler's choice of index 0 is.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for scores, sensitivity in (([1e308, -1e308], 1.0), ([1e300, 0.0], 1e-10)):
            p = reference.exponential_mechanism_probabilities(np.array(scores), 1.0, sensitivity)
            assert p.tolist() == [1.0, 0.0]
            assert dpsumm.privacy.Csprng(0).exponential_mechanism(np.array(scores), 1.0, sensitivity) == 0
