"""dpsumm.reference.owner_sketch: the numpy twins of an owner's sketches (hash sum, score histogram, tilted mean)
by hand and on bad input."""

from __future__ import annotations

import numpy as np
import pytest

from dpsumm.errors import InvalidParameterError
from dpsumm.reference import owner_sketch

H = np.array([[0.5, 0.0], [0.0, 0.5], [-0.5, 0.5]], np.float32)


def test_hash_sum_by_hand():
    out = owner_sketch.hash_sum(H)
    assert out.dtype == np.float64 and out.tolist() == [0.0, 1.0]


def test_score_histogram_by_hand():
    # scores h . (1, 0): 0.5, 0.0, -0.5; edges -0.25, 0.0, 0.5: bin i counts the scores with i edges at or below
    counts = owner_sketch.score_histogram(H, np.array([1.0, 0.0]), np.array([-0.25, 0.0, 0.5]))
    assert counts.tolist() == [1, 0, 1, 1] and counts.sum() == len(H)


def test_tilted_mean_by_hand():
    mean, log_w = owner_sketch.tilted_mean(H, np.zeros(2))  # no tilt: the plain mean, log of the row count
    np.testing.assert_allclose(mean, H.astype(np.float64).mean(axis=0))
    assert log_w == pytest.approx(np.log(3))
    lam = np.array([2.0, 0.0])
    w = np.exp(H.astype(np.float64) @ lam)
    mean, log_w = owner_sketch.tilted_mean(H, lam)
    np.testing.assert_allclose(mean, (w[:, None] * H).sum(axis=0) / w.sum())
    assert log_w == pytest.approx(np.log(w.sum()))


@pytest.mark.parametrize(
    "call,argument",
    [
        (lambda: owner_sketch.hash_sum(np.zeros((0, 2))), "H"),
        (lambda: owner_sketch.hash_sum(np.array([[np.nan, 0.0]])), "H"),
        (lambda: owner_sketch.score_histogram(H, np.array([1.0]), np.array([0.0])), "direction"),
        (lambda: owner_sketch.score_histogram(H, np.array([1.0, 0.0]), np.array([0.0, 0.0])), "edges"),
        (lambda: owner_sketch.score_histogram(H, np.array([1.0, 0.0]), np.array([])), "edges"),
        (lambda: owner_sketch.tilted_mean(H, np.array([np.inf, 0.0])), "lam"),
    ],
)
def test_bad_input_is_refused_naming_the_argument(call, argument):
    with pytest.raises(InvalidParameterError) as info:
        call()
    assert info.value.argument == argument
