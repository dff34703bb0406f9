"""Calibration: per-step ε of MWEM steps to a budget (:func:`calibrate`, :func:`calibrate_mwem_steps`)
and σ of the lattice Gaussian release (:func:`calibrate_gaussian`)."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

from .._validation import bounded_float, bounded_int, instance_of, positive_float, positive_int
from ..errors import InvalidParameterError, PrivacyBudgetError
from ._bounds import _kov_from_groups, _rdp_gaussian_epsilon
from ._checks import (
    MAX_COUNT,
    MAX_EPSILON,
    MAX_NOISE_MULTIPLIER,
    MAX_SIZE,
    MIN_NOISE_MULTIPLIER,
    MIN_TARGET_EPSILON,
    Neighbour,
    _delta,
    _dim,
    _epsilon,
    _neighbour,
    _nonneg_float,
    _size,
)
from .budgets import Budget
from .composition import _groups, _rdp_epsilon, tight
from .events import Event, GaussianEvent, mwem_step_events
from .schedules import Schedule, paper_schedule

#: Smallest per-step ε :func:`calibrate` will hand out (below this the releases are noise).
_MIN_STEP_EPSILON = 1e-9


_MAX_STEP_EPSILON = 50.0


#: The budget argument a calibration target comes from, by party (names the argument in errors).
_TARGET_ARGUMENT = {"owners": "epsilon", "validation": "validation_epsilon"}


def _budget_error(message: str, what: str) -> PrivacyBudgetError:
    err = PrivacyBudgetError(message)
    err.argument = _TARGET_ARGUMENT.get(what, "epsilon")
    return err


def _bisect_scale(f: Callable[[float], float], target: float, what: str, lo: float, hi: float) -> float:
    """Largest x in [lo, hi] (to 1%) with f(x) <= target, f increasing."""
    if f(lo) > target:
        raise _budget_error(
            f"{what}: target epsilon {target:g} is unreachable - even a per-step epsilon of {lo:g} costs "
            f"{f(lo):.4g}; raise `{_TARGET_ARGUMENT.get(what, 'epsilon')}` or use fewer steps",
            what,
        )
    if f(hi) <= target:
        return hi
    flo = f(lo)
    for _ in range(200):
        if flo >= 0.995 * target:
            break
        mid = math.sqrt(lo * hi)
        fm = f(mid)
        if fm <= target:
            lo, flo = mid, fm
        else:
            hi = mid
        if hi / lo - 1.0 < 1e-12:
            break
    if flo < 0.99 * target:  # pragma: no cover - numerical plateau
        raise _budget_error(
            f"{what}: could not get within 1% of target epsilon {target:g} (reached {flo:.4g}); "
            f"raise `{_TARGET_ARGUMENT.get(what, 'epsilon')}`",
            what,
        )
    return lo


def _cheap_epsilon(events: list[Event], delta: float) -> float:
    """min(RDP, Theorem 7) of pure events: an upper bound on :func:`tight` in milliseconds."""
    return min(_rdp_epsilon(events, delta), _kov_from_groups(_groups(events), delta))


@functools.lru_cache(maxsize=512)
def _calibrate_mwem_steps(steps: int, target: float, delta: float, what: str) -> float:
    """Largest per-step ε (to 1%) such that ``steps`` MWEM steps cost at most ``target`` by :func:`tight`.

    Fast path: bisect on the cheap bound min(RDP, Theorem 7) (closed forms, each monotone in ε) -
    every point it accepts also satisfies :func:`tight` (tight is the minimum of PLD, RDP and Theorem 7).
    Then one :func:`tight` evaluation: if it is within 1% below ``target`` the answer stands;
    otherwise the PLD wins there and the bisection continues on :func:`tight` from that point.
    """

    def cheap(eps: float) -> float:
        return _cheap_epsilon(mwem_step_events(eps, steps), delta)

    def full(eps: float) -> float:
        return tight(mwem_step_events(eps, steps), delta)

    x = _bisect_scale(cheap, target, what, _MIN_STEP_EPSILON, _MAX_STEP_EPSILON)
    # The PLD candidate rounds every mechanism's losses up by up to one interval (``_pld_epsilon``:
    # min(1e-4, ε/100)), about steps·interval/2 in total: once that alone exceeds 1% of the target the
    # PLD cannot improve on the cheap bound by enough to matter, and its evaluation (the slow part:
    # 0.65 s at 11,180 steps) is skipped. Skipping can only leave the schedule more conservative.
    interval = min(1e-4, x / 100.0)
    if steps * interval / 2.0 >= 0.01 * target or x >= _MAX_STEP_EPSILON:
        return x
    fx = full(x)
    if fx >= 0.99 * target:
        return x
    hi = x
    while hi < _MAX_STEP_EPSILON and full(hi) <= target:
        hi = min(_MAX_STEP_EPSILON, hi * 1.5)
    return _bisect_scale(full, target, what, x, hi)


def calibrate_mwem_steps(epsilon: float, delta: float, steps: int) -> float:
    """The per-step ε of ``steps`` MWEM steps of h2 whose composition is ``(epsilon, delta)``-DP (tight accountant).

    Each step is one exponential-mechanism choice and one Laplace measurement at the step's ε
    (:func:`mwem_step_events`, replace-one). Used by the nominations protocol's ``validation_release="mwem"``
    to compare the paper's h2 with the Gaussian release at the same ``(epsilon, delta)``.
    """
    n = positive_int(steps, "steps")
    if n > MAX_COUNT:
        raise InvalidParameterError(f"`steps` must be at most {MAX_COUNT:.0e}, got {n}", "steps")
    try:
        return _calibrate_mwem_steps(n, _epsilon(epsilon, "epsilon", target=True), _delta(delta, "delta"), "validation")
    except PrivacyBudgetError as exc:
        exc.argument = "epsilon"
        raise


def calibrate(
    budget: Budget,
    size: int,
    owners: int,
    dim: int = 140,
    *,
    seed_set_size: int = 150,
    epsilon_auction: float = 0.0,
) -> Schedule:
    """Budget-first schedule: the paper's shape, per-step ε's scaled to spend ``budget``.

    Keeps Section 4's shape (T_init = floor(d^1.5), T_subs = 5, ε_l ∝ 1/sqrt(p T_subs) constant over
    epochs l > 1, the public epoch 1 at 0.05) and bisects the two scale factors so that the
    :func:`tight` ε of the validation release is within 1% below ``budget.validation_epsilon`` at
    ``budget.validation_delta`` and that of the owners' releases within 1% below
    ``budget.epsilon`` at ``budget.delta``.

    The auction must be ``epsilon_auction = 0`` (every owner asked every round): PrivAuction with
    ε_auc > 0 has no finite certified ε (:class:`AuctionEvent`), so no budget can be met with it.

    Raises
    ------
    PrivacyBudgetError
        The budget cannot be met (ε_auc > 0, or a target so small that the per-step ε would fall
        below 1e-9).
    """
    budget = instance_of(budget, Budget, "budget", "a Budget")
    if not budget.has_owners_budget:
        raise InvalidParameterError(
            "the paper's schedule needs an owners' budget: give Budget(epsilon=..., delta=...) too", "budget"
        )
    p = _size(size)
    k = bounded_int(owners, "owners", 1, MAX_SIZE)
    eps_auc = _nonneg_float(epsilon_auction, "epsilon_auction")
    if eps_auc > 0 and k > 1:
        err = PrivacyBudgetError(
            f"no budget can be met with PrivAuction at epsilon_auction = {eps_auc:g}: its requests are "
            "not differentially private as specified (proof of Theorem 6 is wrong; see "
            "dpsumm.accounting.AuctionEvent); use epsilon_auction = 0 (ask every owner every round)"
        )
        err.argument = "epsilon_auction"
        raise err
    own_eps, own_delta = budget.epsilon, budget.delta
    val_eps, val_delta = budget.validation_epsilon, budget.validation_delta
    assert own_eps is not None and own_delta is not None and val_eps is not None and val_delta is not None
    base = paper_schedule(p, k, dim, seed_set_size=seed_set_size, epsilon_auction=0.0)
    t_init, t_subs = base.t_init, base.t_subs
    eps_v = _calibrate_mwem_steps(t_init, val_eps, val_delta, "validation")

    steps = (p - 1) * t_subs
    if steps == 0:
        later = base.epsilon_epoch_step[1:] if p > 1 else ()
        eps_l = 0.01 / math.sqrt(p * t_subs)
    else:
        eps_l = _calibrate_mwem_steps(steps, own_eps, own_delta, "owners")
        later = (eps_l,) * (p - 1)
    return dataclasses.replace(
        base,
        name="calibrated",
        epsilon_validation_step=eps_v,
        epsilon_epoch_step=(base.epsilon_first_epoch_step,) + tuple(later),
        epsilon_auction=0.0,
    )


#: Range of a Gaussian release's L2 sensitivity (2 sqrt 2 / |D_v| for the validation mean).
_MIN_SENSITIVITY = 1e-30
_MAX_SENSITIVITY = 1e30
#: Grid steps per unit of sensitivity: the lattice adds at most 2^-10 of Δ to the sensitivity.
_GRID_BITS = 10


#: Largest σ in grid units the exact sampler takes (rust/src/noise.rs, MAX_GAUSSIAN_SIGMA).
_MAX_SIGMA_STEPS = float(2**26)


#: :func:`_gaussian_noise_multiplier` at the defaults' targets, as dp-accounting computes it (tests/accounting checks
#: each entry against the library): the first run in a process skips importing dp-accounting and scipy, which takes
#: seconds, for a figure known in advance.
_KNOWN_MULTIPLIERS: dict[tuple[float, float], float] = {
    (1.0, 1e-06): 4.530878344209113,
    (0.5, 1e-06): 8.676637709681001,
    (2.0, 1e-06): 2.3825785933478105,
}


@functools.lru_cache(maxsize=256)
def _gaussian_noise_multiplier(epsilon: float, delta: float) -> float:
    """Smallest noise multiplier z whose RDP curve α/(2z²) gives (ε, δ)-DP through dp-accounting's
    RDP-to-DP conversion (``dp_accounting.calibrate_dp_mechanism`` with an ``RdpAccountant`` and
    ``GaussianDpEvent(z)``; the library's bracket search returns a z meeting the target)."""
    known = _KNOWN_MULTIPLIERS.get((float(epsilon), float(delta)))
    if known is not None:
        return known
    return _library_noise_multiplier(epsilon, delta)


def _library_noise_multiplier(epsilon: float, delta: float) -> float:
    """:func:`_gaussian_noise_multiplier` computed by dp-accounting (no table)."""
    import dp_accounting
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    z = dp_accounting.calibrate_dp_mechanism(
        lambda: rdp.RdpAccountant(neighboring_relation=rdp.NeighborRel.REPLACE_ONE),
        lambda x: dp_accounting.GaussianDpEvent(noise_multiplier=x),
        epsilon,
        delta,
        dp_accounting.LowerEndpointAndGuess(1e-4, 1.0),
    )
    return float(z)


@dataclass(frozen=True)
class GaussianCalibration:
    """The parameters of one lattice Gaussian release, calibrated by :func:`calibrate_gaussian`.

    Attributes
    ----------
    sigma : float
        Noise standard deviation (in the units of the released vector).
    granularity : float
        Lattice step g (a power of two): the release lies on ``g·Z^d``.
    sensitivity : float
        Effective L2 sensitivity ``Δ + g·sqrt(d)`` of the rounded vector (grid included).
    base_sensitivity : float
        Δ, the query's own L2 sensitivity under ``neighbour``.
    epsilon, delta : float
        The target the release meets.
    dim : int
        d, the vector length.
    noise_multiplier : float
        ``sigma / sensitivity``.
    neighbour : str
        The relation under which Δ holds (``"replace-one"`` for the validation mean, |D_v| public).
    """

    sigma: float
    granularity: float
    sensitivity: float
    base_sensitivity: float
    epsilon: float
    delta: float
    dim: int
    noise_multiplier: float
    neighbour: str = "replace-one"

    def event(self, releases: str = "noisy validation hash mean", count: int = 1) -> GaussianEvent:
        """The :class:`GaussianEvent` to record for ``count`` releases with these parameters."""
        return GaussianEvent(
            self.noise_multiplier,
            self.neighbour,  # type: ignore[arg-type]
            count=count,
            discrete=True,
            releases=releases,  # type: ignore[arg-type]
        )

    def achieved_epsilon(self, delta: float | None = None) -> float:
        """ε at ``delta`` (default: the target δ) of one release, by the same RDP accounting."""
        return _rdp_gaussian_epsilon(self.noise_multiplier, self.delta if delta is None else _delta(delta))


def calibrate_gaussian(
    epsilon: float,
    delta: float,
    *,
    sensitivity: float,
    dim: int,
    granularity: float | None = None,
    neighbour: Neighbour = "replace-one",
) -> GaussianCalibration:
    r"""σ and the lattice step of a d-dimensional discrete Gaussian release meeting (ε, δ).

    Mechanism (:func:`dpsumm.privacy.gaussian_mean_release`): round each coordinate to the nearest
    multiple of g, add ``g · N_Z(0, (σ/g)²)`` independently per coordinate.

    Sensitivity. Rounding moves a vector by at most ``g·sqrt(d)/2`` in L2, so two inputs at L2
    distance Δ become lattice points at distance at most ``Δ_eff = Δ + g·sqrt(d)``; σ is
    ``z · Δ_eff``.

    Grid. By default ``g`` is the largest power of two with ``g <= Δ / (2^10 · max(sqrt(d), 1/z))``:
    the grid adds at most ``2^-10`` of Δ (0.1% more noise) and ``σ/g >= 2^10`` grid steps, where the
    discrete Gaussian's variance equals σ² up to a factor ``1 - O(e^{-2π²·2^20})``. A power of two
    keeps ``v/g`` and the grid points exact in floating point.

    Privacy (replace-one on the rows behind the query, or ``neighbour``). The lattice mechanism with
    integer shifts of L2 norm at most ``Δ_eff/g`` and per-coordinate ``N_Z(0, (σ/g)²)`` has Rényi
    divergence of order α at most ``α Δ_eff² / (2σ²) = α / (2z²)`` (Canonne, Kamath & Steinke 2020,
    Prop. 5 per coordinate - an equality for integer shifts - summed over independent coordinates;
    their multivariate zCDP theorem). It therefore satisfies every (ε, δ) that the *RDP curve* of the
    continuous Gaussian with multiplier z gives; z is the smallest such (dp-accounting's
    ``calibrate_dp_mechanism`` with ``RdpAccountant`` and ``GaussianDpEvent(z)``). The continuous
    Gaussian's exact (analytic) calibration would allow a 5-12% smaller σ, but is not certified for
    the discrete Gaussian without CKS's multivariate (ε, δ) bound and its extra τ term, which dpsumm
    does not rely on.

    Parameters
    ----------
    epsilon : float
        Target ε > 0.
    delta : float
        Target δ in (0, 1).
    sensitivity : float
        Δ, L2 sensitivity of the vector under ``neighbour`` (the validation hash mean: ``2·sqrt(2)/m``).
    dim : int
        d.
    granularity : float, optional
        The lattice step g; default as above. Must leave ``σ/g`` in [2^-10, 2^26].
    neighbour : {"replace-one", "add-remove"}

    Returns
    -------
    GaussianCalibration

    Examples
    --------
    >>> cal = calibrate_gaussian(1.0, 1e-6, sensitivity=2 * 2**0.5 / 1000, dim=256)
    >>> cal.achieved_epsilon() <= 1.0
    True
    """
    eps = _epsilon(epsilon, "epsilon", target=True)
    dlt = _delta(delta)
    sens = bounded_float(sensitivity, "sensitivity", _MIN_SENSITIVITY, _MAX_SENSITIVITY)
    d = _dim(dim)
    rel = _neighbour(neighbour)
    try:
        z = _gaussian_noise_multiplier(eps, dlt)
    except Exception as exc:  # dp-accounting's search raises its own types (e.g. NoBracketIntervalFoundError)
        raise InvalidParameterError(
            f"`epsilon`: no Gaussian noise multiplier meets (epsilon={eps:g}, delta={dlt:g}) "
            f"({type(exc).__name__}); use an epsilon between {MIN_TARGET_EPSILON:g} and {MAX_EPSILON:g}",
            "epsilon",
        ) from exc
    if not MIN_NOISE_MULTIPLIER <= z <= MAX_NOISE_MULTIPLIER:
        raise InvalidParameterError(
            f"`epsilon` {eps:g} at delta {dlt:g} needs a noise multiplier {z:.3g}, outside the "
            f"[{MIN_NOISE_MULTIPLIER:g}, {MAX_NOISE_MULTIPLIER:g}] the accountants take; change `epsilon`",
            "epsilon",
        )
    root = math.sqrt(d)
    if granularity is None:
        target = sens / (2.0**_GRID_BITS * max(root, 1.0 / z))
        g = 2.0 ** math.floor(math.log2(target))
    else:
        g = positive_float(granularity, "granularity")
    eff = sens + g * root
    sigma = z * eff
    steps = sigma / g
    if granularity is None and not (2.0**-10 <= steps <= _MAX_SIGMA_STEPS):
        raise InvalidParameterError(
            f"`epsilon` {eps:g} at delta {dlt:g} needs a noise multiplier {z:.3g}: at dim={d} the exact sampler's "
            f"range (sigma / granularity <= 2^26) is exceeded; raise `epsilon` or lower `dim`",
            "epsilon",
        )
    if not (2.0**-10 <= steps <= _MAX_SIGMA_STEPS):
        raise InvalidParameterError(
            f"`granularity` {g:g} gives sigma / granularity = {steps:g}, outside [2^-10, 2^26]", "granularity"
        )
    return GaussianCalibration(
        sigma=sigma,
        granularity=g,
        sensitivity=eff,
        base_sensitivity=sens,
        epsilon=eps,
        delta=dlt,
        dim=d,
        noise_multiplier=z,
        neighbour=rel,
    )
