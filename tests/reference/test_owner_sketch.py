"""dpsumm.reference.owner_sketch: the numpy twin of an owner's hash sum, by hand, against the Rust kernel, and on bad
input."""

from __future__ import annotations

import numpy as np
import pytest

from dpsumm.errors import InvalidParameterError
from dpsumm.reference import owner_sketch

H = np.array([[0.5, 0.0], [0.0, 0.5], [-0.5, 0.5]], np.float32)


def test_hash_sum_by_hand():
    out = owner_sketch.hash_sum(H)
    assert out.dtype == np.float64 and out.tolist() == [0.0, 1.0]


@pytest.mark.parametrize(
    "call,argument",
    [
        (lambda: owner_sketch.hash_sum(np.zeros((0, 2))), "H"),
        (lambda: owner_sketch.hash_sum(np.array([[np.nan, 0.0]])), "H"),
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
