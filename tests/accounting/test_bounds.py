"""dpsumm.accounting._bounds: Theorem 7's three expressions by hand, the Gaussian part's closed form, and the
discrete Gaussian's RDP epsilon against dp-accounting."""

from __future__ import annotations

import math
from dataclasses import dataclass

import dp_accounting
import pytest

from dpsumm.accounting import _bounds


def test_kov_terms_by_hand():
    # one group: k = 4 mechanisms at eps = 0.5, delta = 1e-3
    eps, k, delta = 0.5, 4, 1e-3
    lin = k * eps * math.tanh(eps / 2)
    s2 = 2 * k * eps**2
    basic, second, third = _bounds._kov_terms([(eps, k)], delta)
    assert basic == pytest.approx(2.0)
    assert second == pytest.approx(lin + math.sqrt(s2 * math.log(1 / delta)))
    assert third == pytest.approx(lin + math.sqrt(s2 * math.log(math.e + math.sqrt(s2) / delta)))
    assert _bounds._kov_from_groups([(eps, k)], delta) == min(basic, second, third)


def test_kov_of_no_mechanism_is_zero_and_groups_compose_like_one_list():
    assert _bounds._kov_from_groups([], 1e-5) == 0.0
    assert _bounds._kov_terms([(0.1, 3), (0.1, 2)], 1e-5) == pytest.approx(_bounds._kov_terms([(0.1, 5)], 1e-5))
    # many small steps: the square-root bound beats the sum
    basic, second, _ = _bounds._kov_terms([(0.01, 10_000)], 1e-5)
    assert second < basic


@dataclass(frozen=True)
class _Gauss:
    noise_multiplier: float
    count: int = 1
    discrete: bool = False
    public: bool = False


def test_the_gaussian_part_composes_multipliers_exactly():
    # two continuous Gaussians at z = 2 are one at z = 2 / sqrt(2)
    got = _bounds._gaussian_part_epsilon([_Gauss(2.0), _Gauss(2.0)], 1e-5)
    assert got == pytest.approx(dp_accounting.get_epsilon_gaussian(2.0 / math.sqrt(2.0), 1e-5))
    assert got == pytest.approx(_bounds._gaussian_part_epsilon([_Gauss(2.0, count=2)], 1e-5))
    assert _bounds._gaussian_part_epsilon([_Gauss(2.0, public=True)], 1e-5) == 0.0
    assert _bounds._gaussian_part_epsilon([], 1e-5) == 0.0


def test_discrete_noise_is_accounted_by_rdp_and_never_below_the_analytic_epsilon():
    rdp = _bounds._gaussian_part_epsilon([_Gauss(3.0, discrete=True)], 1e-6)
    assert rdp == pytest.approx(_bounds._rdp_gaussian_epsilon(3.0, 1e-6))
    assert rdp >= dp_accounting.get_epsilon_gaussian(3.0, 1e-6)
    # more noise, less epsilon
    assert _bounds._rdp_gaussian_epsilon(6.0, 1e-6) < _bounds._rdp_gaussian_epsilon(3.0, 1e-6)
