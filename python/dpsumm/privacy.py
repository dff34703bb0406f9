"""The CSPRNG, noise samplers, the h2 quantizer and product-distribution MWEM (Rust core).

Privacy noise in dpsumm comes only from :class:`Csprng` (ChaCha20). ``Csprng()`` is keyed from
operating-system entropy: the only private mode. ``Csprng(seed)`` is reproducible for tests and
experiments and **not private**: whoever knows the seed can remove the noise.

Samplers (exact, integer arithmetic; Canonne, Kamath & Steinke 2020):

* ``Csprng.bernoulli_exp(x)``: Bernoulli(exp(-x)), ``x`` rounded up to the 2^-32 grid.
* ``Csprng.discrete_laplace(scale)``: ``P(z) ∝ exp(-|z| / scale)``, scale rounded up to the 2^-20 grid.
* ``Csprng.discrete_laplace_counts(counts, scale)``: integer counts plus independent discrete Laplace noise per
  cell; see :func:`laplace_count_release` for its privacy statement.
* ``Csprng.laplace(value, scale, granularity)``: the Laplace mechanism on the grid ``granularity · Z``:
  ``round(value/g)·g + g·DLap(scale/g)``. For a query of sensitivity Δ, ``scale = (Δ + g)/ε`` gives
  ε-DP under the query's neighbour relation (rounding to the grid adds at most ``g`` to Δ). Unlike the
  textbook inverse-CDF Laplace on floats, every output has an exactly known probability (Mironov 2012).
* ``Csprng.discrete_gaussian(sigma)``: ``P(z) ∝ exp(-z²/(2σ²))`` on the integers (CKS 2020, Algorithm 3),
  σ² rounded UP to a rational (relative change below 2^-20); σ in [2^-10, 2^26].
* ``Csprng.gaussian_on_grid(values, sigma, granularity)``: ``round(v/g)·g + g·N_Z(0, (σ/g)²)`` per
  coordinate; see :func:`gaussian_mean_release` for its privacy statement.
* ``Csprng.exponential_mechanism(scores, epsilon, sensitivity)``: index i with probability
  ``∝ exp(ε·scores[i]/(2Δ))`` by exact rejection sampling: ε-DP up to a slack below 1e-9 from rounding the
  float exponents to the 2^-32 grid; no probability underflows to zero.
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING

import numpy as np

from . import _core
from ._validation import as_array, bounded_int, float32_array, float64_array, instance_of, positive_float, real_vector
from .errors import InvalidParameterError

if TYPE_CHECKING:
    from .accounting import GaussianCalibration, LaplaceEvent

__all__ = [
    "Csprng",
    "ProductMWEM",
    "stochastic_round",
    "quantize_column_sums",
    "check_random_state",
    "NEIGHBOURS",
    "discrete_gaussian",
    "gaussian_on_grid",
    "gaussian_mean_release",
    "laplace_count_release",
    "COUNT_SENSITIVITY",
    "count_release_event",
    "mean_release_sensitivity",
]

Csprng = _core.Csprng
NEIGHBOURS = ("replace-one", "add-remove")
#: Caps (rust/src/limits.rs): MWEM coordinates, steps of one release, and steps * dim of one release.
MAX_DIM = 1 << 20
MAX_MWEM_STEPS = 1_000_000
MAX_MWEM_WORK = 1 << 33


def check_random_state(random_state: object) -> Csprng:
    """A :class:`Csprng` from scikit-learn style ``random_state``: None = OS entropy (the only private
    mode), a non-negative int = a seeded stream (reproducible, NOT private), a Csprng = used as is."""
    if random_state is None:
        return Csprng()
    if isinstance(random_state, Csprng):
        return random_state
    if (
        isinstance(random_state, numbers.Integral)
        and not isinstance(random_state, bool)
        and 0 <= int(random_state) < 2**64
    ):
        return Csprng(int(random_state))
    raise InvalidParameterError(
        "`random_state` must be None (OS entropy, private), a non-negative int or a dpsumm.privacy.Csprng (seeded: not private)",
        "random_state",
    )


def _eta(eta: object) -> float:
    e = positive_float(eta, "eta")
    m = 2.0 / e
    if not math.isfinite(m) or abs(m - round(m)) > 1e-9 * m or not 1 <= round(m) <= 2**20:
        raise InvalidParameterError(f"`eta` must make 2/eta an integer between 1 and 2**20, got 2/eta = {m}", "eta")
    return e


def _unit_matrix(values: object, dtype: type) -> np.ndarray:
    arr = as_array(values, "values")
    if arr.ndim != 2:
        raise InvalidParameterError(f"`values` must be 2-D, got {arr.ndim}-D", "values")
    if arr.dtype.kind not in "fiu":
        raise InvalidParameterError(f"`values` must hold real numbers, got dtype {arr.dtype}", "values")
    # Cast without numpy's overflow warning: a value beyond float32 is refused naming `values`.
    return float32_array(arr, "values") if dtype is np.float32 else np.ascontiguousarray(float64_array(arr, "values"))


def stochastic_round(values: object, eta: float, rng: Csprng) -> np.ndarray:
    """Round every value in [-1, 1] to the grid ``{-1, -1+eta, ..., 1}`` without bias (Alg. 2 line 3).

    ``x -> -1 + k eta`` with probability ``((k+1) eta - 1 - x)/eta``, else ``-1 + (k+1) eta``, where
    ``k = floor((x+1)/eta)``. Returns float64 of the same shape.
    """
    return _core.stochastic_round(_unit_matrix(values, np.float64), _eta(eta), rng)


def quantize_column_sums(values: object, eta: float, rng: Csprng) -> np.ndarray:
    """Column sums ``w(D_Q, i)`` of the stochastically rounded rows (exact on the lattice ``-n + eta Z``).

    Parameters
    ----------
    values : ndarray of shape (n, d)
        Values in [-1, 1] (h1 values scaled by ``sqrt(d/2)``); converted to float32.
    eta : float
        Grid step; ``2/eta`` must be an integer.
    rng : Csprng

    Returns
    -------
    ndarray of shape (d,), float64
    """
    return _core.quantize_column_sums(_unit_matrix(values, np.float32), _eta(eta), rng)


class ProductMWEM:
    r"""Product-distribution MWEM (paper Alg. 2, Lemma 1), warm-started across releases.

    Keeps one marginal per coordinate over the grid ``S = {-1, -1+eta, ..., 1}``. Each step selects a
    coordinate with the exponential mechanism on ``psi_i = |w(P, i) - w(D_Q, i)|`` (probability
    ``∝ exp(eps psi_i / (2 Delta_psi))``), measures ``mu = w(D_Q, i) + eta * DLap(Delta_mu / (eta eps))``
    and updates ``P_i(s) ∝ P_i(s) exp(s (mu - w(P, i)) / (2q))``. The paper's Alg. 2 writes
    ``exp(eps psi)`` and ``Lap(1/eps)``, which is 2·eps·Delta-DP; here each of the two is eps-DP.

    **Privacy of a release of T steps**: 2T mechanisms, each ``epsilon``-DP with respect to the quantized
    rows under ``neighbour``: ``"replace-one"`` (row count public; Delta_psi = Delta_mu = 2) or
    ``"add-remove"`` (Delta_mu = 1, Delta_psi = 2 because q enters w(P, i)). Compose them with
    :func:`dpsumm.accounting.mwem_step_events`.

    Parameters
    ----------
    dim : int
    eta : float
        Grid step, ``2/eta`` an integer.
    neighbour : {"replace-one", "add-remove"}
    random_state : None, int or Csprng
        None: OS entropy (private). An int: reproducible, NOT private. A Csprng is used as is.
    """

    def __init__(self, dim: int, eta: float, neighbour: str = "replace-one", random_state: object = None) -> None:
        self.dim = bounded_int(dim, "dim", 1, MAX_DIM)
        self.eta = _eta(eta)
        if not isinstance(neighbour, str) or neighbour not in NEIGHBOURS:
            raise InvalidParameterError(f"`neighbour` must be one of {NEIGHBOURS}, got {neighbour!r}", "neighbour")
        self.neighbour = neighbour
        self._state = _core.ProductMwem(self.dim, self.eta, neighbour, check_random_state(random_state))

    def _check(self, column_sums: object, n_rows: object, steps: object) -> tuple[np.ndarray, int, int]:
        sums = real_vector(column_sums, "column_sums", self.dim)
        steps_ = bounded_int(steps, "steps", 1, MAX_MWEM_STEPS)
        if steps_ * self.dim > MAX_MWEM_WORK:
            raise InvalidParameterError(
                f"`steps`: steps * dim = {steps_} * {self.dim} exceeds the cap of {MAX_MWEM_WORK} (each step is O(dim))",
                "steps",
            )
        return sums, bounded_int(n_rows, "n_rows", 1, 2**63 - 1), steps_

    def release(self, column_sums: object, n_rows: int, steps: int, epsilon: float) -> np.ndarray:
        """Run ``steps`` private steps at per-step ``epsilon``; return ``w(P_avg, ·)/q`` in [-1, 1] units.

        Parameters
        ----------
        column_sums : ndarray of shape (dim,)
            ``w(D_Q, ·)`` from :func:`quantize_column_sums`.
        n_rows : int
            ``q``, the number of quantized rows.
        steps : int
            ``T``.
        epsilon : float
            Per-mechanism epsilon of each step.
        """
        sums, q, t = self._check(column_sums, n_rows, steps)
        eps = positive_float(epsilon, "epsilon")
        return self._state.release(sums, q, t, eps)

    def _release_noiseless(self, column_sums: object, n_rows: int, steps: int) -> np.ndarray:
        """The update path with argmax selection and exact measurements. NOT private: tests only."""
        sums, q, t = self._check(column_sums, n_rows, steps)
        return self._state._release_noiseless(sums, q, t)

    def reset(self) -> None:
        """Back to uniform marginals."""
        self._state.reset()

    @property
    def marginals_(self) -> np.ndarray:
        """The current marginals, shape (dim, |S|)."""
        return self._state.marginals

    @property
    def grid_(self) -> np.ndarray:
        return self._state.grid

    @property
    def steps_taken_(self) -> int:
        return self._state.steps_taken

    def __repr__(self) -> str:
        return f"ProductMWEM(dim={self.dim}, eta={self.eta}, neighbour={self.neighbour!r}, steps_taken={self.steps_taken_})"


def _rng(rng: object) -> Csprng:
    return instance_of(rng, Csprng, "rng", "a dpsumm.privacy.Csprng")


def discrete_gaussian(sigma: float, rng: Csprng) -> int:
    """One exact sample of the discrete Gaussian ``N_Z(0, σ²)``: ``P(z) ∝ exp(-z²/(2σ²))``, z integer.

    Canonne, Kamath & Steinke 2020, Algorithm 3 (discrete Laplace proposals, exact Bernoulli
    acceptance; integer arithmetic only). σ² is rounded UP to a rational (relative change < 2^-20).

    Privacy: adding ``N_Z(0, σ²)`` to an integer query of sensitivity Δ (an integer) is
    ``Δ²/(2σ²)``-zCDP, i.e. has Rényi divergence ``αΔ²/(2σ²)`` at every order α (CKS 2020, Prop. 5).

    Parameters
    ----------
    sigma : float
        In [2^-10, 2^26].
    rng : Csprng
    """
    return _rng(rng).discrete_gaussian(positive_float(sigma, "sigma"))


def gaussian_on_grid(values: object, sigma: float, granularity: float, rng: Csprng) -> np.ndarray:
    """The Gaussian mechanism on the lattice ``g·Z^d``: ``round(v/g)·g + g·N_Z(0, (σ/g)²)`` per coordinate.

    Parameters
    ----------
    values : array_like of shape (d,)
        Finite floats.
    sigma : float
        Noise standard deviation, > 0.
    granularity : float
        Lattice step g > 0, with σ/g in [2^-10, 2^26].
    rng : Csprng

    Returns
    -------
    ndarray of shape (d,), float64, on the lattice.

    Notes
    -----
    Privacy: see :func:`gaussian_mean_release` (sensitivity ``Δ + g·sqrt(d)`` after rounding).
    """
    v = real_vector(values, "values")
    return _rng(rng).gaussian_on_grid(v, positive_float(sigma, "sigma"), positive_float(granularity, "granularity"))


def gaussian_mean_release(mean: object, calibration: GaussianCalibration, rng: Csprng) -> np.ndarray:
    r"""Release ``mean + noise`` once, on the lattice of ``calibration`` (the nominations protocol's g~).

    ``g~ = round(mean/g)·g + g·N_Z(0, (σ/g)² I)``, with σ and g from
    :func:`dpsumm.accounting.calibrate_gaussian`.

    Privacy statement (OpenDP style). Neighbour relation: replace one row of the validation set
    D_v, |D_v| = m public. Query: ``mean_{x in D_v} h1(x)`` with ``||h1(x)||_2^2 <= 2``, L2
    sensitivity ``Δ = 2·sqrt(2)/m``. Rounding to ``gZ^d`` moves each vector by at most
    ``g·sqrt(d)/2``, so the rounded means of neighbours differ by at most ``Δ_eff = Δ + g·sqrt(d)``
    (``calibration.sensitivity``) - an integer vector of norm ``<= Δ_eff/g`` in grid units. Adding
    independent ``N_Z(0, (σ/g)²)`` per coordinate has Rényi divergence at most ``α Δ_eff²/(2σ²)`` at
    every order α (Canonne, Kamath & Steinke 2020, Prop. 5, summed over coordinates), which is the
    continuous Gaussian's RDP curve at noise multiplier ``σ/Δ_eff``; ``calibrate_gaussian`` picks the
    smallest multiplier whose RDP curve gives (ε, δ) by dp-accounting's conversion. Hence the release
    is ``(calibration.epsilon, calibration.delta)``-DP for D_v. Record it with
    ``ledger.record("validation", calibration.event(), label=...)``. Sensitivity is the caller's
    claim: ``mean`` must be the mean of m vectors of squared norm at most 2.

    Parameters
    ----------
    mean : array_like of shape (calibration.dim,)
    calibration : GaussianCalibration
    rng : Csprng
        OS-keyed for a private release; a seeded stream is NOT private.

    Returns
    -------
    ndarray of shape (d,), float64
    """
    from .accounting import GaussianCalibration

    if not isinstance(calibration, GaussianCalibration):
        raise InvalidParameterError("`calibration` must come from dpsumm.accounting.calibrate_gaussian", "calibration")
    arr = real_vector(mean, "mean", calibration.dim)
    generator = _rng(rng)
    try:
        return gaussian_on_grid(arr, calibration.sigma, calibration.granularity, generator)
    except InvalidParameterError as exc:
        if exc.argument != "values":
            raise
        raise InvalidParameterError(str(exc).replace("`values`", "`mean`"), "mean") from exc


def laplace_count_release(counts: object, event: LaplaceEvent, rng: Csprng) -> np.ndarray:
    r"""Release integer counts once through the discrete Laplace mechanism of ``event``: ``counts + DLap(Δ₁/ε)``.

    Privacy statement (OpenDP style). Neighbour relation: ``event.neighbour`` (for the label purchase's histogram,
    replace one row of the validation set D_v, |D_v| public). Query: a histogram over cells fixed before the data
    enter, each row counted in at most one cell, so that neighbours' count vectors differ by at most
    ``Δ₁ = event.sensitivity`` in L1 (2 under replace-one: one cell loses the row, another gains it). The noise is
    the discrete Laplace ``P(z) ∝ exp(-|z|/b)`` on the integers, independently per cell, with ``b = Δ₁/ε`` rounded
    UP to the 2^-20 grid (more noise, never less); the counts are integers, so the output is an integer vector and
    every output has an exactly known probability (no floating point in the noise; Canonne, Kamath & Steinke 2020,
    Algorithm 2). Moving one cell's count by 1 changes the log-probability of any output by at most ``1/b``, so
    neighbours change it by at most ``Δ₁/b <= ε``: the release is ε-DP, pure (δ = 0; Dwork et al. 2006, the
    geometric mechanism of Ghosh, Roughgarden & Sundararajan 2009). ``event`` is what the ledger records.
    Sensitivity is the caller's claim.

    Parameters
    ----------
    counts : array_like of shape (J,)
        Integer counts (float or integer dtype), each within ±2^52.
    event : LaplaceEvent
        ε, Δ₁ and the neighbour relation; its ``granularity`` must be 1 (noise on the integers).
    rng : Csprng
        OS-keyed for a private release; a seeded stream is NOT private.

    Returns
    -------
    ndarray of shape (J,), float64 (integer values)
    """
    from .accounting import LaplaceEvent

    if not isinstance(event, LaplaceEvent) or event.granularity != 1.0 or event.public:
        raise InvalidParameterError(
            "`event` must be a private dpsumm.accounting.LaplaceEvent with granularity 1.0 (noise on the integers)",
            "event",
        )
    # the kernel refuses counts that are not integers within ±2^52, naming `counts`
    return np.asarray(_rng(rng).discrete_laplace_counts(real_vector(counts, "counts"), event.scale), dtype=np.float64)


#: L1 sensitivity of the consumer's histogram over the cell purchases' cells under replace-one in D_v: one row leaves
#: one cell and enters another (or none).
COUNT_SENSITIVITY = 2.0


def count_release_event(epsilon: float) -> LaplaceEvent:
    """The ledger event of the consumer's cell histogram at ``epsilon``: the discrete Laplace on the integers,
    scale ``COUNT_SENSITIVITY / epsilon``, replace-one in ``D_v`` (pure epsilon-DP; :func:`laplace_count_release`).
    Raises :class:`InvalidParameterError` naming ``epsilon`` outside ``[1e-12, 100]``."""
    from .accounting import LaplaceEvent

    return LaplaceEvent(epsilon, COUNT_SENSITIVITY, "replace-one", granularity=1.0)


def mean_release_sensitivity(n_rows: int) -> float:
    """The L2 sensitivity of ``mean h1(D_v)`` under replace-one in ``D_v`` (``|D_v| = n_rows`` public):
    ``||h1(v) - h1(v')|| / n_rows <= 2 sqrt(2) / n_rows`` (``||h1||^2 <= 2``; docs/explanation/protocol.md)."""
    return 2.0 * math.sqrt(2.0) / bounded_int(n_rows, "n_rows", 1, 2**63 - 1)
