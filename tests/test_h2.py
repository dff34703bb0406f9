"""dpsumm.h2: H2, the warm-started DP hash of a growing set of h1 rows (paper Alg. 2)."""

from __future__ import annotations

import numpy as np
import pytest

from dpsumm.h2 import H2
from dpsumm.privacy import Csprng
from refusal import refused

DIM = 8


def _hashes(n, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.choice([-1.0, 1.0], size=(n, DIM)) * np.sqrt(2.0 / DIM) * rng.uniform(0.2, 1.0, size=(n, DIM))).astype(
        np.float32
    )


def test_adding_no_rows_changes_nothing_and_rows_are_counted():
    h = H2(DIM, 0.5, Csprng(1))
    h.add(np.zeros((0, DIM), np.float32))
    assert h.n_rows == 0 and not h.column_sums.any()
    h.add(_hashes(5))
    h.add(_hashes(7, seed=1))
    assert h.n_rows == 12 and h.column_sums.shape == (DIM,)


def test_column_sums_are_the_quantized_scaled_rows_on_the_grid():
    """Each row is scaled by sqrt(d/2) into [-1, 1] and rounded to the grid of step eta, unbiased: column sums are
    multiples of eta within one step per row of the exact scaled sums."""
    eta = 0.5
    H = _hashes(40)
    h = H2(DIM, eta, Csprng(2))
    h.add(H)
    exact = (H.astype(np.float64) * np.sqrt(DIM / 2.0)).sum(axis=0)
    np.testing.assert_allclose(h.column_sums / eta, np.round(h.column_sums / eta), atol=1e-9)
    assert (np.abs(h.column_sums - exact) <= eta * len(H) + 1e-9).all()


def test_rows_already_on_the_grid_are_summed_exactly():
    eta = 0.5
    grid = np.array([[1.0, -1.0, 0.5, 0.0, -0.5, 1.0, 0.0, 0.5]] * 3) / np.sqrt(DIM / 2.0)
    h = H2(DIM, eta, Csprng(3))
    h.add(grid.astype(np.float32))
    np.testing.assert_allclose(h.column_sums, 3 * np.array([1.0, -1.0, 0.5, 0.0, -0.5, 1.0, 0.0, 0.5]), atol=1e-6)


def test_release_is_seeded_reproducible_and_in_the_hash_range():
    H = _hashes(60)
    outs = []
    for _ in range(2):
        h = H2(DIM, 0.5, Csprng(4))
        h.add(H)
        outs.append(h.release(5, 1.0))
    np.testing.assert_array_equal(outs[0], outs[1])
    assert outs[0].shape == (DIM,) and outs[0].dtype == np.float64
    assert (np.abs(outs[0]) <= np.sqrt(2.0 / DIM) + 1e-12).all()


def test_many_steps_at_a_large_epsilon_estimate_the_mean():
    H = _hashes(400, seed=5)
    h = H2(DIM, 0.5, Csprng(6))
    h.add(H)
    est = h.release(200, 1e3)
    assert np.linalg.norm(est - H.mean(axis=0)) < 0.5 * np.linalg.norm(H.mean(axis=0)) + 0.05


def test_the_neighbour_relation_reaches_mwem():
    assert H2(DIM, 0.5, Csprng(7)).neighbour == "replace-one"
    h = H2(DIM, 0.5, Csprng(7), neighbour="add-remove")
    assert h.neighbour == h.mwem.neighbour == "add-remove"


def test_a_bad_release_is_refused_naming_the_argument():
    h = H2(DIM, 0.5, Csprng(8))
    h.add(_hashes(4))
    with pytest.raises(Exception) as info:
        h.release(0, 1.0)
    assert getattr(info.value, "argument", None) == "steps"


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda: H2(None, 0.5, Csprng(0)), "dim"),
        (lambda: H2(-1, 0.5, Csprng(0)), "dim"),
        (lambda: H2(DIM, 0.5, 0), "rng"),
        (lambda: H2(DIM, 0.5, Csprng(0)).add("rows"), "hashes"),
        (lambda: H2(DIM, 0.5, Csprng(0)).add(np.zeros((2, DIM + 1))), "hashes"),
        (lambda: H2(DIM, 0.5, Csprng(0)).add(np.full((2, DIM), 1e300)), "hashes"),
    ],
    ids=["dim-none", "dim-negative", "rng-int", "hashes-str", "hashes-width", "hashes-beyond-float32"],
)
def test_bad_input_is_refused_naming_the_argument(call, argument):
    """Each used to raise a TypeError or AttributeError, a numpy RuntimeWarning (sqrt of a negative dim, an overflow
    in the cast to float32), or to add hashes of the wrong width."""
    refused(call, argument)
