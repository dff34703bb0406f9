"""dpsumm.reference.owner_sketch: the numpy twins of an owner's hash sum and of its rows' scores along a direction, by
hand, against the Rust kernels, and on bad input."""

from __future__ import annotations

import numpy as np
import pytest

from dpsumm.errors import InvalidParameterError
from dpsumm.reference import owner_sketch

H = np.array([[0.5, 0.0], [0.0, 0.5], [-0.5, 0.5]], np.float32)


def test_hash_sum_by_hand():
    out = owner_sketch.hash_sum(H)
    assert out.dtype == np.float64 and out.tolist() == [0.0, 1.0]


def test_hash_scores_by_hand():
    out = owner_sketch.hash_scores(H, np.array([2.0, -1.0]), 0.5)
    assert out.dtype == np.float64 and out.tolist() == [0.5, -1.0, -2.0]


@pytest.mark.parametrize(
    "call,argument",
    [
        (lambda: owner_sketch.hash_sum(np.zeros((0, 2))), "H"),
        (lambda: owner_sketch.hash_sum(np.array([[np.nan, 0.0]])), "H"),
        (lambda: owner_sketch.hash_scores(H, np.ones(3), 0.0), "direction"),
        (lambda: owner_sketch.hash_scores(H, np.array([np.inf, 0.0]), 0.0), "direction"),
        (lambda: owner_sketch.hash_scores(H, np.ones(2), np.nan), "direction"),
    ],
)
def test_bad_input_is_refused_naming_the_argument(call, argument):
    with pytest.raises(InvalidParameterError) as info:
        call()
    assert info.value.argument == argument


def test_the_twin_equals_the_rust_kernel():
    from dpsumm import RFFHasher, _core

    X = np.random.default_rng(3).random((300, 4)).astype(np.float32)
    hasher = RFFHasher(4, dim=16, gamma=0.5, seed=1)
    np.testing.assert_allclose(
        owner_sketch.hash_sum(hasher.transform(X)), _core.owner_hash_sum(X, hasher._projection), rtol=1e-9, atol=1e-9
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_scores_twin_equals_the_rust_kernel_in_any_layout(dtype):
    from dpsumm import RFFHasher, _core

    rng = np.random.default_rng(4)
    X = rng.random((1_000, 4)).astype(dtype)
    hasher = RFFHasher(4, dim=20, gamma=0.5, seed="direction:1")
    w = rng.normal(size=20)
    want = owner_sketch.hash_scores(hasher.transform(X), w, 0.3)
    for rows in (X, np.asfortranarray(X), X[::-1][::-1]):
        np.testing.assert_allclose(_core.owner_hash_scores(rows, hasher._projection, w, 0.3), want, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    "direction,argument",
    [(np.ones(19), "direction"), (np.full(20, np.nan), "direction"), (np.ones((2, 10)), "direction")],
)
def test_the_rust_scores_refuse_a_bad_direction_naming_it(direction, argument):
    from dpsumm import DpsummError, RFFHasher, _core

    hasher = RFFHasher(4, dim=20, gamma=0.5, seed="direction:1")
    with pytest.raises(DpsummError) as info:
        _core.owner_hash_scores(np.zeros((3, 4)), hasher._projection, direction, 0.0)
    assert getattr(info.value, "argument", None) == argument
