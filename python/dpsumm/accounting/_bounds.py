"""ε of single mechanisms and closed-form composition bounds that the events and accountants share."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Protocol


class GaussianEvent(Protocol):
    """What these bounds read of a :class:`dpsumm.accounting.GaussianEvent` (events import this module)."""

    @property
    def count(self) -> int: ...
    @property
    def noise_multiplier(self) -> float: ...
    @property
    def discrete(self) -> bool: ...
    @property
    def public(self) -> bool: ...


def _gaussian_part_epsilon(gauss: Sequence[GaussianEvent], delta: float) -> float:
    """ε at ``delta`` of the composition of Gaussian records alone.

    Discrete (lattice) noise: RDP only (see :class:`GaussianEvent`). All continuous: the composition
    of Gaussians with multipliers z_i is one Gaussian with ``z = (Σ count_i / z_i²)^(-1/2)`` (exact),
    whose ε is the analytic one (Balle & Wang 2018, ``dp_accounting.get_epsilon_gaussian``).
    """
    gauss = [g for g in gauss if not g.public]
    if not gauss:
        return 0.0
    inv = math.fsum(g.count / g.noise_multiplier**2 for g in gauss)
    z = 1.0 / math.sqrt(inv)
    if any(g.discrete for g in gauss):
        return _rdp_gaussian_epsilon(z, delta)
    import dp_accounting

    return float(dp_accounting.get_epsilon_gaussian(z, delta))


@functools.lru_cache(maxsize=256)
def _rdp_gaussian_epsilon(noise_multiplier: float, delta: float) -> float:
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    acc = rdp.RdpAccountant(neighboring_relation=rdp.NeighborRel.REPLACE_ONE)
    acc.compose(dp_event.GaussianDpEvent(noise_multiplier=noise_multiplier))
    return float(acc.get_epsilon(delta))


def _kov_terms(groups: Sequence[tuple[float, int]], delta: float) -> tuple[float, float, float]:
    """The three expressions of Theorem 7 (appendix; Kairouz, Oh & Viswanath 2017, Thm 3.5)."""
    basic_ = math.fsum(k * eps for eps, k in groups)
    # (e^ε - 1) ε / (e^ε + 1) = ε tanh(ε / 2)
    lin = math.fsum(k * eps * math.tanh(eps / 2.0) for eps, k in groups)
    s2 = math.fsum(2.0 * k * eps * eps for eps, k in groups)  # Σ 2 ε_ℓ²
    second = lin + math.sqrt(s2 * math.log(1.0 / delta))
    third = lin + math.sqrt(s2 * math.log(math.e + math.sqrt(s2) / delta))
    return basic_, second, third


def _kov_from_groups(groups: Sequence[tuple[float, int]], delta: float) -> float:
    if not groups:
        return 0.0
    return float(min(_kov_terms(groups, delta)))
