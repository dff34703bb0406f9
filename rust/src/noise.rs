//! Privacy noise from the ChaCha20 CSPRNG, using integer arithmetic only where it matters.
//!
//! * [`bernoulli_exp`]: an exact Bernoulli(exp(−γ)) for a rational γ = num/den ≥ 0 (Canonne, Kamath &
//!   Steinke 2020, "The Discrete Gaussian for Differential Privacy", Algorithm 1). Only uniform integers
//!   and comparisons: no floating point, no rounding, no underflow.
//! * [`discrete_laplace`]: an exact sample of the discrete Laplace distribution
//!   `P(Z = z) ∝ exp(−|z|/λ)` for a rational scale λ = t/s (CKS 2020, Algorithm 2).
//! * [`discrete_laplace_counts`]: integer counts plus independent discrete Laplace noise per cell (the
//!   label purchase's histogram: pure ε-DP at scale Δ₁/ε).
//! * [`laplace_on_grid`]: the Laplace mechanism without the floating-point attack on textbook
//!   inverse-CDF Laplace (Mironov 2012): the value is rounded to a grid of step `g`, and noise is
//!   `g · DLap(λ/g)`. Output lies on the grid, every output has an exactly known probability.
//!   For a query of sensitivity Δ, rounding to the grid adds at most `g` to the sensitivity of the
//!   rounded value (Δ + g), and the scale is rounded UP to a rational with denominator 2^20 (more noise).
//!   So with `scale = (Δ + g)/ε` the mechanism is ε-DP under the query's neighbour relation.
//! * [`exponential_mechanism`]: samples i with probability ∝ exp(ε·u_i/(2Δ)) by exact rejection:
//!   propose i uniformly, accept with an exact Bernoulli(exp(−ε(u_max − u_i)/(2Δ))). Given the
//!   exponents, the output distribution is exactly the exponential mechanism's; the only inexactness is
//!   the conversion of the float exponent to a rational (rounded up to the 2^−32 grid after one float
//!   subtraction and multiplication), which perturbs each log-probability by at most 2^−32 + 4·2^−53·|γ_i|;
//!   the mechanism is therefore (ε + 2·(2^−32 + 4·2^−53·γ_max))-DP, a slack below 1e-9 for every
//!   exponent under 10^6, stated next to every use. No probability is ever rounded to zero.
//! * [`discrete_gaussian`]: an exact sample of the discrete Gaussian `P(Z = z) ∝ exp(−z²/(2σ²))`
//!   on the integers (CKS 2020, Algorithm 3: discrete Laplace proposals of scale t = ⌊σ⌋ + 1, accepted
//!   with an exact Bernoulli(exp(−(|Y| − σ²/t)²/(2σ²)))). σ² is taken as a rational rounded UP from the
//!   float (more noise, never less; relative change below 2^−20).
//! * [`gaussian_on_grid`]: the Gaussian mechanism on the lattice `gZ^d`: each value rounded to the
//!   nearest multiple of `g`, plus `g · N_Z(0, (σ/g)²)`, independently per coordinate. Rounding moves a
//!   vector by at most `g·sqrt(d)/2` in L2, so two inputs at L2 distance Δ give lattice points at
//!   distance at most `Δ + g·sqrt(d)`: calibrate σ to that effective sensitivity (the privacy statement
//!   lives with the Python wrapper `dpsumm.privacy.gaussian_mean_release`).

use crate::error::{Error, Result};
use crate::rng::Csprng;

/// Denominator of the rational grid float exponents are rounded up to.
const EXP_DEN: u64 = 1 << 32;
/// Denominator of the rational grid noise scales are rounded up to.
const SCALE_DEN: u64 = 1 << 20;

/// Bernoulli(num / den), exactly. `num <= den`, `den > 0`.
#[inline]
fn bernoulli_ratio(rng: &mut Csprng, num: u128, den: u128) -> bool {
    rng.below_u128(den) < num
}

/// Bernoulli(exp(−num/den)) for `0 <= num/den <= 1`, exactly (CKS 2020, Algorithm 1, first part).
fn bernoulli_exp_unit(rng: &mut Csprng, num: u64, den: u64) -> bool {
    // Let K = 1; while Bernoulli(γ/K) succeeds, K += 1; return K odd.
    let mut k: u128 = 1;
    loop {
        if bernoulli_ratio(rng, num as u128, den as u128 * k) {
            k += 1;
        } else {
            return k % 2 == 1;
        }
    }
}

/// Bernoulli(exp(−num/den)) for any rational `num/den >= 0`, exactly (CKS 2020, Algorithm 1).
pub fn bernoulli_exp_rational(rng: &mut Csprng, num: u64, den: u64) -> bool {
    debug_assert!(den > 0);
    let whole = num / den;
    for _ in 0..whole {
        if !bernoulli_exp_unit(rng, 1, 1) {
            return false;
        }
    }
    bernoulli_exp_unit(rng, num - whole * den, den)
}

/// `x` rounded up to the rational grid `k / EXP_DEN`, as `(k, EXP_DEN)`. `x` finite and >= 0.
pub(crate) fn exponent_to_rational(x: f64) -> Option<(u64, u64)> {
    let scaled = (x * EXP_DEN as f64).ceil();
    if scaled >= 9.0e18 { None } else { Some((scaled as u64, EXP_DEN)) }
}

/// Bernoulli(exp(−x)) for a float `x >= 0`, with `x` rounded up to the 2^−32 grid (so the success
/// probability is at most exp(−x) and at least exp(−x − 2^−32)). For `x >= 2^31` it returns false
/// (the probability is below exp(−2^31)).
pub fn bernoulli_exp(rng: &mut Csprng, x: f64) -> Result<bool> {
    if !(x.is_finite() && x >= 0.0) {
        return Err(Error::value("x", format!("must be a finite number >= 0, got {x}")));
    }
    Ok(match exponent_to_rational(x) {
        Some((num, den)) if num / den < (1u64 << 31) => bernoulli_exp_rational(rng, num, den),
        _ => false,
    })
}

/// Discrete Laplace with rational scale `t/s`: `P(Z = z) ∝ exp(−|z| s / t)` (CKS 2020, Algorithm 2).
pub fn discrete_laplace_rational(rng: &mut Csprng, t: u64, s: u64) -> i64 {
    debug_assert!(t > 0 && s > 0);
    loop {
        let u = rng.below(t);
        if !bernoulli_exp_rational(rng, u, t) {
            continue;
        }
        let mut v: u64 = 0;
        while bernoulli_exp_rational(rng, 1, 1) {
            v += 1;
        }
        let x = u as u128 + t as u128 * v as u128;
        let y = (x / s as u128) as i64;
        let negative = rng.next_u64() & 1 == 1;
        if negative && y == 0 {
            continue;
        }
        return if negative { -y } else { y };
    }
}

/// The rational `(t, s)` with `t/s >= scale`, `s = 2^20`: the scale rounded up.
fn scale_to_rational(scale: f64) -> Result<(u64, u64)> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(Error::value("scale", format!("must be a finite number > 0, got {scale}")));
    }
    let t = (scale * SCALE_DEN as f64).ceil();
    if t >= 9.0e18 {
        return Err(Error::value("scale", format!("is too large ({scale})")));
    }
    Ok(((t as u64).max(1), SCALE_DEN))
}

/// An integer from the discrete Laplace distribution with scale `scale` rounded up to the 2^−20 grid.
pub fn discrete_laplace(rng: &mut Csprng, scale: f64) -> Result<i64> {
    let (t, s) = scale_to_rational(scale)?;
    Ok(discrete_laplace_rational(rng, t, s))
}

/// The discrete Laplace mechanism on integer counts: `counts[i] + DLap(scale)`, independently per cell, with
/// the scale rounded up to the 2^−20 grid. For counts whose neighbours differ by at most Δ₁ in L1, a scale of
/// `Δ₁/ε` gives ε-DP (pure; the privacy loss of a unit shift is at most `1/scale` per cell).
///
/// Errors (typed, nothing drawn): `scale` not finite and > 0 or too large, a count that is not an integer
/// or beyond ±2^52, or an allocation failure.
pub fn discrete_laplace_counts(rng: &mut Csprng, counts: &[f64], scale: f64) -> Result<Vec<f64>> {
    let (t, s) = scale_to_rational(scale)?;
    let mut out: Vec<f64> = Vec::new();
    out.try_reserve_exact(counts.len()).map_err(|_| Error::shape("counts", "too large to allocate the output"))?;
    for &c in counts {
        if !(c.is_finite() && c.fract() == 0.0 && c.abs() <= 4.5e15) {
            return Err(Error::value("counts", format!("must be integers within ±2^52, got {c}")));
        }
        out.push(c);
    }
    for c in out.iter_mut() {
        *c += discrete_laplace_rational(rng, t, s) as f64;
    }
    Ok(out)
}

/// The Laplace mechanism on the grid `granularity · Z`: `round(value / g) · g + g · DLap(scale / g)`.
/// See the module documentation for the sensitivity and scale rounding.
pub fn laplace_on_grid(rng: &mut Csprng, value: f64, scale: f64, granularity: f64) -> Result<f64> {
    if !value.is_finite() {
        return Err(Error::NonFinite { name: "value" });
    }
    if !(granularity.is_finite() && granularity > 0.0) {
        return Err(Error::value("granularity", format!("must be a finite number > 0, got {granularity}")));
    }
    // `scale` is checked in the caller's units, not in grid steps.
    if !(scale.is_finite() && scale > 0.0) {
        return Err(Error::value("scale", format!("must be a finite number > 0, got {scale}")));
    }
    let grid_scale = scale / granularity;
    // Not `>=`: a NaN product must be refused too.
    if (grid_scale * (SCALE_DEN as f64)).partial_cmp(&9.0e18) != Some(std::cmp::Ordering::Less) {
        return Err(Error::value(
            "scale",
            format!(
                "is too large for granularity {granularity:e} (scale / granularity = {grid_scale:e}, at most 8.5e12)"
            ),
        ));
    }
    let k = (value / granularity).round_ties_even();
    // k and k + z are computed exactly in i128; the final conversion to f64 is post-processing.
    if k.abs().partial_cmp(&1.0e36) != Some(std::cmp::Ordering::Less) {
        return Err(Error::value(
            "value",
            format!("is too large for granularity {granularity} (|value / granularity| must be below 1e36)"),
        ));
    }
    let z = discrete_laplace(rng, grid_scale)?;
    let noisy = k as i128 + z as i128;
    Ok(noisy as f64 * granularity)
}

/// Validate scores and parameters of the exponential mechanism; returns the maximum score.
fn check_em(scores: &[f64], epsilon: f64, sensitivity: f64) -> Result<f64> {
    if scores.is_empty() {
        return Err(Error::shape("scores", "must not be empty"));
    }
    if !scores.iter().all(|s| s.is_finite()) {
        return Err(Error::NonFinite { name: "scores" });
    }
    crate::error::check_positive("epsilon", epsilon)?;
    crate::error::check_positive("sensitivity", sensitivity)?;
    Ok(scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max))
}

/// The exponential mechanism (McSherry & Talwar 2007): index `i` with probability
/// `∝ exp(ε · scores[i] / (2Δ))`, by exact rejection sampling (module documentation). ε-DP (up to the
/// stated 1e-9 slack) for a score of sensitivity Δ under the score's neighbour relation.
pub fn exponential_mechanism(rng: &mut Csprng, scores: &[f64], epsilon: f64, sensitivity: f64) -> Result<usize> {
    let max = check_em(scores, epsilon, sensitivity)?;
    let factor = epsilon / (2.0 * sensitivity);
    let exps: Vec<Option<(u64, u64)>> = scores.iter().map(|s| exponent_to_rational(factor * (max - s))).collect();
    Ok(exponential_mechanism_rational(rng, &exps))
}

/// Rejection sampler behind [`exponential_mechanism`]: `exps[i] = Some((num, den))` is the exponent
/// γ_i = num/den of candidate i (at least one is 0); `None` is an exponent beyond 2^31 (probability below
/// exp(−2^31), treated as 0).
pub(crate) fn exponential_mechanism_rational(rng: &mut Csprng, exps: &[Option<(u64, u64)>]) -> usize {
    exponential_mechanism_lazy(rng, exps.len(), |i| exps[i])
}

/// The same rejection sampler with exponents computed only for proposed candidates: propose i
/// uniformly among `n`, accept with an exact Bernoulli(exp(−γ_i)). The accepted index has probability
/// exactly `exp(−γ_i) / Σ_j exp(−γ_j)`. `n >= 1` and some γ_i = 0 (so the loop ends).
pub(crate) fn exponential_mechanism_lazy<F>(rng: &mut Csprng, n: usize, exponent: F) -> usize
where
    F: Fn(usize) -> Option<(u64, u64)>,
{
    loop {
        let i = rng.below(n as u64) as usize;
        if let Some((num, den)) = exponent(i)
            && num / den < (1u64 << 31)
            && bernoulli_exp_rational(rng, num, den)
        {
            return i;
        }
    }
}

/// Bernoulli(exp(−num/den)) for `0 <= num/den <= 1` with 128-bit integers, exactly.
fn bernoulli_exp_unit_u128(rng: &mut Csprng, num: u128, den: u128) -> bool {
    let mut k: u128 = 1;
    loop {
        // den·k overflows only after k > 2^27 successes in a row, an event of probability below
        // 1/(2^27)!: stop there (this is the only deviation from exactness, and it is unobservable).
        let Some(bound) = den.checked_mul(k) else { return k % 2 == 1 };
        if bernoulli_ratio(rng, num, bound) {
            k += 1;
        } else {
            return k % 2 == 1;
        }
    }
}

/// Bernoulli(exp(−num/den)) for any rational `num/den >= 0` with 128-bit integers, exactly
/// (CKS 2020, Algorithm 1). Each whole unit of the exponent is one Bernoulli(e^−1); the loop stops at
/// the first failure (expected fewer than 1.6 iterations whatever `num/den`).
fn bernoulli_exp_rational_u128(rng: &mut Csprng, num: u128, den: u128) -> bool {
    debug_assert!(den > 0);
    let whole = num / den;
    let mut i: u128 = 0;
    while i < whole {
        if !bernoulli_exp_unit(rng, 1, 1) {
            return false;
        }
        i += 1;
    }
    bernoulli_exp_unit_u128(rng, num - whole * den, den)
}

/// Smallest σ accepted by the discrete Gaussian sampler.
pub const MIN_GAUSSIAN_SIGMA: f64 = 1.0 / 1024.0;
/// Largest σ accepted by the discrete Gaussian sampler (2^26: keeps every intermediate in 128 bits).
pub const MAX_GAUSSIAN_SIGMA: f64 = (1u64 << 26) as f64;

/// σ² as a rational `(num, den)` with `num/den >= sigma²` (rounded UP): `den = 2^D` chosen so that
/// `num >= 2^20` (relative rounding below 2^−20), `den = 1` once σ² >= 2^20.
pub fn sigma2_to_rational(sigma: f64) -> Result<(u128, u128)> {
    if !(sigma.is_finite() && sigma > 0.0) {
        return Err(Error::value("sigma", format!("must be a finite number > 0, got {sigma}")));
    }
    if !(MIN_GAUSSIAN_SIGMA..=MAX_GAUSSIAN_SIGMA).contains(&sigma) {
        return Err(Error::value(
            "sigma",
            format!("must lie in [2^-10, 2^26] (in units of the grid step), got {sigma}"),
        ));
    }
    let s2 = sigma * sigma;
    // floor(log2(σ²)) in [-20, 52]; D = max(0, 20 − e) in [0, 40].
    let e = s2.log2().floor() as i32;
    let d = (20 - e).max(0) as u32;
    let den: u128 = 1u128 << d;
    // σ²·2^D is exact in f64 (a power-of-two scaling); its ceiling rounds up. The product σ·σ itself
    // was rounded to nearest: add one unit so that num/den >= the exact real σ², whatever the rounding.
    let scaled = (s2 * den as f64).ceil();
    let num = scaled as u128 + 1;
    Ok((num, den))
}

/// An exact sample of the discrete Gaussian with variance parameter `num/den` (CKS 2020, Algorithm 3).
/// `num/den` must come from [`sigma2_to_rational`] (bounds every intermediate to 128 bits).
pub fn discrete_gaussian_rational(rng: &mut Csprng, num: u128, den: u128) -> i64 {
    // t = floor(σ) + 1, the scale of the discrete Laplace proposal.
    // floor(sqrt(x)) = isqrt(floor(x)) for x >= 0.
    let t: u128 = (num / den).isqrt() + 1;
    let t64 = t as u64;
    loop {
        let y = discrete_laplace_rational(rng, t64, 1);
        let a = y.unsigned_abs() as u128;
        // exponent (|Y| − σ²/t)² / (2σ²) = (|Y| t den − num)² / (2 num t² den)
        let Some(atd) = a.checked_mul(t).and_then(|x| x.checked_mul(den)) else { continue };
        let diff = atd.abs_diff(num);
        let Some(n2) = diff.checked_mul(diff) else {
            // Only for |Y| > 2^38 > 4096 σ (σ <= 2^26): acceptance probability below exp(−8·10^6).
            continue;
        };
        let d2 = 2 * num * t * t * den;
        if bernoulli_exp_rational_u128(rng, n2, d2) {
            return y;
        }
    }
}

/// An integer from the discrete Gaussian `N_Z(0, σ²)`, σ² rounded up to a rational (module docs).
pub fn discrete_gaussian(rng: &mut Csprng, sigma: f64) -> Result<i64> {
    let (num, den) = sigma2_to_rational(sigma)?;
    Ok(discrete_gaussian_rational(rng, num, den))
}

/// The Gaussian mechanism on the grid `granularity · Z`, per coordinate:
/// `round(v/g)·g + g·N_Z(0, (σ/g)²)` (module documentation for its sensitivity).
///
/// Errors (typed, nothing drawn): `sigma` or `granularity` not finite and > 0, `sigma/granularity`
/// outside [2^−10, 2^26], a non-finite value, a value beyond 2^52 grid steps, or an allocation failure.
pub fn gaussian_on_grid(rng: &mut Csprng, values: &[f64], sigma: f64, granularity: f64) -> Result<Vec<f64>> {
    crate::error::check_positive("sigma", sigma)?;
    crate::error::check_positive("granularity", granularity)?;
    crate::error::check_finite_f64("values", values.iter().copied())?;
    let (num, den) = sigma2_to_rational(sigma / granularity).map_err(|_| {
        Error::value("sigma", format!("sigma / granularity must lie in [2^-10, 2^26], got {sigma} / {granularity}"))
    })?;
    let mut grid: Vec<f64> = Vec::new();
    grid.try_reserve_exact(values.len()).map_err(|_| Error::shape("values", "too large to allocate the output"))?;
    for &v in values {
        let k = (v / granularity).round_ties_even();
        if !k.is_finite() || k.abs() >= 4.5e15 {
            return Err(Error::value("values", format!("{v} is too large for the grid step {granularity}")));
        }
        grid.push(k);
    }
    for k in grid.iter_mut() {
        let z = discrete_gaussian_rational(rng, num, den);
        *k = (*k + z as f64) * granularity;
    }
    Ok(grid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chi2(counts: &[f64], probs: &[f64]) -> f64 {
        let n: f64 = counts.iter().sum();
        counts.iter().zip(probs).map(|(c, p)| (c - n * p).powi(2) / (n * p)).sum()
    }

    #[test]
    fn bernoulli_exp_frequencies() {
        // Each case: 100_000 draws; |freq - p| < 5 sd (sd <= 0.0016): false-failure rate < 1e-6.
        let mut rng = Csprng::from_seed_u64(10);
        for &x in &[0.0, 0.1, 0.5, 1.0, 2.3, 7.0] {
            let n = 100_000;
            let hits = (0..n).filter(|_| bernoulli_exp(&mut rng, x).unwrap()).count() as f64;
            let p = (-x).exp();
            let sd = (p * (1.0 - p) / n as f64).sqrt().max(1e-4);
            assert!((hits / n as f64 - p).abs() < 5.0 * sd, "x={x} freq={} p={p}", hits / n as f64);
        }
        assert!(bernoulli_exp(&mut rng, 0.0).unwrap());
        assert!(!bernoulli_exp(&mut rng, 1e12).unwrap());
        assert!(bernoulli_exp(&mut rng, -1.0).is_err());
        assert!(bernoulli_exp(&mut rng, f64::NAN).is_err());
    }

    #[test]
    fn discrete_laplace_pmf() {
        // Chi-square over z in [-6, 6] plus two tails (15 cells, 14 dof): critical value 36.12 at alpha = 0.001.
        let mut rng = Csprng::from_seed_u64(11);
        let scale = 1.7f64;
        let n = 200_000;
        let mut counts = vec![0.0; 15];
        for _ in 0..n {
            let z = discrete_laplace(&mut rng, scale).unwrap();
            let cell = if z < -6 {
                0
            } else if z > 6 {
                14
            } else {
                (z + 7) as usize
            };
            counts[cell] += 1.0;
        }
        let r = (-1.0 / scale).exp();
        let norm = (1.0 - r) / (1.0 + r);
        let pmf = |z: i64| norm * r.powi(z.unsigned_abs() as i32);
        let tail: f64 = norm * r.powi(7) / (1.0 - r);
        let mut probs = vec![tail];
        probs.extend((-6..=6).map(pmf));
        probs.push(tail);
        let c = chi2(&counts, &probs);
        assert!(c < 36.12, "chi2 = {c}");
    }

    #[test]
    fn discrete_laplace_counts_adds_the_discrete_laplace() {
        // Same chi-square as `discrete_laplace_pmf`, on the noise of 2,000 calls over 100 cells of counts 0..99:
        // 15 cells, 14 dof, critical value 36.12 at alpha = 0.001.
        let mut rng = Csprng::from_seed_u64(21);
        let scale = 2.0f64;
        let base: Vec<f64> = (0..100).map(|i| i as f64).collect();
        let mut counts = vec![0.0; 15];
        for _ in 0..2_000 {
            let out = discrete_laplace_counts(&mut rng, &base, scale).unwrap();
            for (o, b) in out.iter().zip(&base) {
                let z = o - b;
                assert_eq!(z.fract(), 0.0);
                let cell = if z < -6.0 {
                    0
                } else if z > 6.0 {
                    14
                } else {
                    (z + 7.0) as usize
                };
                counts[cell] += 1.0;
            }
        }
        let r = (-1.0 / scale).exp();
        let norm = (1.0 - r) / (1.0 + r);
        let tail: f64 = norm * r.powi(7) / (1.0 - r);
        let mut probs = vec![tail];
        probs.extend((-6..=6).map(|z: i64| norm * r.powi(z.unsigned_abs() as i32)));
        probs.push(tail);
        let c = chi2(&counts, &probs);
        assert!(c < 36.12, "chi2 = {c}");
        // typed errors, nothing drawn
        assert!(discrete_laplace_counts(&mut rng, &[1.5], scale).is_err());
        assert!(discrete_laplace_counts(&mut rng, &[f64::NAN], scale).is_err());
        assert!(discrete_laplace_counts(&mut rng, &[1e300], scale).is_err());
        assert!(discrete_laplace_counts(&mut rng, &[1.0], 0.0).is_err());
        assert!(discrete_laplace_counts(&mut rng, &[1.0], f64::INFINITY).is_err());
        assert_eq!(discrete_laplace_counts(&mut rng, &[], scale).unwrap(), Vec::<f64>::new());
    }

    #[test]
    fn laplace_on_grid_is_on_the_grid_and_centred() {
        let mut rng = Csprng::from_seed_u64(12);
        let g = 1.0 / 1024.0;
        let n = 50_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let y = laplace_on_grid(&mut rng, 3.3, 2.0, g).unwrap();
            assert_eq!((y / g).fract(), 0.0);
            sum += y;
        }
        // Var = 2 * 2^2 = 8: sd(mean) = 0.0126; 5 sd = 0.063. The grid rounding moves 3.3 by < g.
        assert!((sum / n as f64 - 3.3).abs() < 0.065);
        assert!(laplace_on_grid(&mut rng, 1.0, 0.0, g).is_err());
        assert!(laplace_on_grid(&mut rng, 1.0, 1.0, 0.0).is_err());
        assert!(laplace_on_grid(&mut rng, f64::INFINITY, 1.0, g).is_err());
    }

    #[test]
    fn exponential_mechanism_probabilities() {
        // 5 candidates, 100_000 draws, chi-square 4 dof: critical value 18.47 at alpha = 0.001.
        let mut rng = Csprng::from_seed_u64(13);
        let scores = [0.0, 1.0, 2.5, -3.0, 2.0];
        let (eps, sens) = (1.2f64, 1.0f64);
        let w: Vec<f64> = scores.iter().map(|s| (eps * s / (2.0 * sens)).exp()).collect();
        let total: f64 = w.iter().sum();
        let probs: Vec<f64> = w.iter().map(|x| x / total).collect();
        let mut counts = vec![0.0; 5];
        for _ in 0..100_000 {
            counts[exponential_mechanism(&mut rng, &scores, eps, sens).unwrap()] += 1.0;
        }
        let c = chi2(&counts, &probs);
        assert!(c < 18.47, "chi2 = {c}, counts {counts:?}");
    }

    #[test]
    fn exponential_mechanism_never_drops_a_candidate_and_rejects_bad_input() {
        let mut rng = Csprng::from_seed_u64(14);
        // A candidate 40 below the max at eps/(2Δ) = 0.5 has probability exp(-20) ≈ 2e-9: not zero in the
        // rational representation.
        let exps = [Some((0, 1)), exponent_to_rational(20.0)];
        assert_eq!(exps[1], Some((20 * EXP_DEN, EXP_DEN)));
        assert_eq!(exponential_mechanism_rational(&mut rng, &exps), 0);
        assert!(exponential_mechanism(&mut rng, &[], 1.0, 1.0).is_err());
        assert!(exponential_mechanism(&mut rng, &[1.0, f64::NAN], 1.0, 1.0).is_err());
        assert!(exponential_mechanism(&mut rng, &[1.0], 0.0, 1.0).is_err());
        assert!(exponential_mechanism(&mut rng, &[1.0], 1.0, -1.0).is_err());
    }

    /// The pmf of N_Z(0, σ²) on [-m, m], normalised over |z| <= 60σ (the rest is below 1e-700).
    fn dg_pmf(sigma: f64, m: i64) -> (Vec<f64>, f64) {
        let w = |z: i64| (-(z as f64).powi(2) / (2.0 * sigma * sigma)).exp();
        let r = (60.0 * sigma).ceil() as i64;
        let norm: f64 = (-r..=r).map(w).sum();
        let inside: Vec<f64> = (-m..=m).map(|z| w(z) / norm).collect();
        let tail = (1.0 - inside.iter().sum::<f64>()) / 2.0;
        (inside, tail)
    }

    #[test]
    fn discrete_gaussian_pmf_chi_square() {
        // σ = 1.5, 200_000 draws, cells z in [-5, 5] plus two tails: 13 cells, 12 dof, critical value
        // 32.91 at alpha = 0.001 (fixed seed: deterministic outcome).
        let mut rng = Csprng::from_seed_u64(21);
        let sigma = 1.5;
        let n = 200_000;
        let mut counts = vec![0.0; 13];
        for _ in 0..n {
            let z = discrete_gaussian(&mut rng, sigma).unwrap();
            let cell = if z < -5 {
                0
            } else if z > 5 {
                12
            } else {
                (z + 6) as usize
            };
            counts[cell] += 1.0;
        }
        let (inside, tail) = dg_pmf(sigma, 5);
        let mut probs = vec![tail];
        probs.extend(inside);
        probs.push(tail);
        let c = chi2(&counts, &probs);
        assert!(c < 32.91, "chi2 = {c}, counts {counts:?}");
    }

    #[test]
    fn discrete_gaussian_small_sigma_pmf() {
        // σ = 0.4: P(0) ≈ 0.9561, P(±1) ≈ 0.0219 each; 3 cells + tail folded in: 2 dof, critical 13.82
        // at alpha = 0.001.
        let mut rng = Csprng::from_seed_u64(22);
        let sigma = 0.4;
        let n = 100_000;
        let mut counts = vec![0.0; 3];
        for _ in 0..n {
            let z = discrete_gaussian(&mut rng, sigma).unwrap();
            counts[(z.clamp(-1, 1) + 1) as usize] += 1.0;
        }
        let (inside, tail) = dg_pmf(sigma, 1);
        let probs = [inside[0] + tail, inside[1], inside[2] + tail];
        let c = chi2(&counts, &probs);
        assert!(c < 13.82, "chi2 = {c}, counts {counts:?}");
    }

    #[test]
    fn discrete_gaussian_variance_large_sigma() {
        // σ = 1000: Var = σ² up to e^{−2π²σ²}; 40_000 draws, sd of the sample variance = σ² sqrt(2/n)
        // = 0.00707 σ²: 5 sd (false-failure rate < 1e-6) is 0.0354 σ². The mean: sd σ/200 = 5, 5 sd = 25.
        let mut rng = Csprng::from_seed_u64(23);
        let sigma = 1000.0f64;
        let n = 40_000;
        let xs: Vec<f64> = (0..n).map(|_| discrete_gaussian(&mut rng, sigma).unwrap() as f64).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| x * x).sum::<f64>() / n as f64;
        assert!(mean.abs() < 25.0, "mean {mean}");
        assert!((var / (sigma * sigma) - 1.0).abs() < 0.0354, "var ratio {}", var / (sigma * sigma));
    }

    #[test]
    fn sigma2_rounds_up() {
        for &s in &[MIN_GAUSSIAN_SIGMA, 0.3, 1.0, 1.5, 1023.7, 1024.0 * 1024.0 + 0.5, MAX_GAUSSIAN_SIGMA] {
            let (num, den) = sigma2_to_rational(s).unwrap();
            let r = num as f64 / den as f64;
            assert!(r >= s * s, "{s}: {r} < {}", s * s);
            assert!(r <= s * s * (1.0 + 3.0 / (1u64 << 20) as f64), "{s}: {r} too far above {}", s * s);
        }
        for &bad in &[0.0, -1.0, f64::NAN, f64::INFINITY, 1e-4, 1e9] {
            assert!(sigma2_to_rational(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn gaussian_on_grid_is_on_the_grid_centred_and_rejects_bad_input() {
        let mut rng = Csprng::from_seed_u64(24);
        let g = 1.0 / 1024.0;
        let values: Vec<f64> = (0..20_000).map(|i| 0.25 + (i % 7) as f64 * 1e-5).collect();
        let out = gaussian_on_grid(&mut rng, &values, 0.5, g).unwrap();
        assert_eq!(out.len(), values.len());
        assert!(out.iter().all(|y| (y / g).fract() == 0.0));
        // Noise sd 0.5 (the grid rounding moves each value by < g/2 < 5e-4): sd(mean) = 0.0035, 5 sd = 0.018.
        let mean = out.iter().zip(&values).map(|(y, v)| y - v).sum::<f64>() / out.len() as f64;
        assert!(mean.abs() < 0.018 + 5e-4, "mean {mean}");
        let var = out.iter().zip(&values).map(|(y, v)| (y - v).powi(2)).sum::<f64>() / out.len() as f64;
        // sd of the variance ratio: sqrt(2/n) = 0.01; 5 sd.
        assert!((var / 0.25 - 1.0).abs() < 0.05, "var {var}");
        assert!(gaussian_on_grid(&mut rng, &[], 1.0, g).unwrap().is_empty());
        assert!(gaussian_on_grid(&mut rng, &[1.0], 0.0, g).is_err());
        assert!(gaussian_on_grid(&mut rng, &[1.0], -1.0, g).is_err());
        assert!(gaussian_on_grid(&mut rng, &[1.0], f64::NAN, g).is_err());
        assert!(gaussian_on_grid(&mut rng, &[1.0], 1.0, 0.0).is_err());
        assert!(gaussian_on_grid(&mut rng, &[1.0], 1.0, f64::INFINITY).is_err());
        assert!(gaussian_on_grid(&mut rng, &[f64::NAN], 1.0, g).is_err());
        assert!(gaussian_on_grid(&mut rng, &[1e300], 1.0, g).is_err());
        assert!(gaussian_on_grid(&mut rng, &[1.0], 1e12, g).is_err()); // σ/g beyond 2^26
    }
}
