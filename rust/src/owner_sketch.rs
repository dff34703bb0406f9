//! An owner's sketches and tilt for the quota purchase of the nominations protocol (issue 19).
//!
//! Three streaming passes over an owner's raw rows `X` (n × p, f32 or f64, any strides; never copied
//! whole, never an `n × d` matrix): each block of rows is hashed with [`RffProjection::hash_rows`] into a
//! `B × d` f32 scratch per worker, reduced, and the block results are merged sequentially in block order
//! (blocks run in parallel in groups of [`GROUP_BLOCKS`], a constant), so every output is bit-identical
//! for any thread count.
//!
//! * [`hash_sum`]: `Σ_x h1(x)` in f64 (the owner's first release, before noise).
//! * [`score_histogram`]: the counts of the scores `s(x) = h1(x)·g` in the bins of public `edges`
//!   (`NB + 1` increasing edges, `NB + 2` bins: bin 0 holds `s < edges[0]`, bin `i` holds
//!   `edges[i−1] ≤ s < edges[i]`, bin `NB + 1` holds `s ≥ edges[NB]`). One row changes one count: the
//!   owner's second release, before noise.
//! * [`tilted_mean`]: `m_λ = Σ_x w(x) h1(x) / Σ_x w(x)` with `w(x) = exp(h1(x)·λ)`, by an online
//!   log-sum-exp in f64 (every exponent ≤ 0: no overflow for any λ). [`self_consistent_tilt`] iterates
//!   it: the entropic kernel-mean-matching fixed point toward the released `g̃`, with a stopping rule
//!   that does not fit the release's noise.
//!
//! Scores use the eight fixed lanes of [`crate::greedy`] (f32 hashes widened to f64), as the owners'
//! nominations do.

use ndarray::{ArrayView2, s};
use rayon::prelude::*;

use crate::error::{Error, Result, check_finite_f64, check_positive, checked_size, try_filled};
use crate::greedy::block_dots;
use crate::rff::{RffProjection, RowElement, rows_as_f32};
use crate::simd::exp_neg_f64;

/// Rows per block of a pass.
pub const BLOCK_ROWS: usize = 256;
/// Blocks hashed in parallel between two sequential merges (a constant: results never depend on the
/// thread count).
pub const GROUP_BLOCKS: usize = 64;
/// Most histogram bins accepted.
pub const MAX_BINS: usize = 1 << 16;

struct Scratch {
    x: Vec<f32>,
    h: Vec<f32>,
    s: Vec<f64>,
}

fn resize_fallible<T: Clone + Default>(buf: &mut Vec<T>, len: usize, name: &'static str) -> Result<()> {
    if len > buf.len() {
        buf.try_reserve(len - buf.len())
            .map_err(|_| Error::value(name, format!("a block of {len} values could not be allocated")))?;
    }
    buf.resize(len, T::default());
    Ok(())
}

fn check_rows<T: RowElement>(x: &ArrayView2<'_, T>, proj: &RffProjection) -> Result<()> {
    if x.ncols() != proj.n_features() {
        return Err(Error::shape("X", format!("has {} features per row, the hasher was built for {}", x.ncols(), proj.n_features())));
    }
    if x.nrows() == 0 {
        return Err(Error::shape("X", "has no rows"));
    }
    Ok(())
}

fn check_vector(name: &'static str, v: &[f64], d: usize) -> Result<()> {
    if v.len() != d {
        return Err(Error::shape(name, format!("has length {}, the hasher's dim is {d}", v.len())));
    }
    check_finite_f64(name, v.iter().copied())
}

/// Hash block `blk` of `x` into `sc.h` (rows × d); returns the row count. Errors on non-finite rows or
/// rows outside h1's accurate domain.
fn hash_block<T: RowElement>(x: &ArrayView2<'_, T>, proj: &RffProjection, blk: usize, sc: &mut Scratch) -> Result<usize> {
    let n = x.nrows();
    let d = proj.dim();
    let start = blk * BLOCK_ROWS;
    let end = (start + BLOCK_ROWS).min(n);
    let rows = end - start;
    let xs = rows_as_f32(x.slice(s![start..end, ..]), &mut sc.x)?;
    resize_fallible(&mut sc.h, checked_size("X", rows, d)?, "X")?;
    proj.hash_rows(xs, rows, &mut sc.h);
    crate::rff::check_hashed(&sc.h)?;
    Ok(rows)
}

/// Run `per_block` over every block in parallel groups and fold the results in block order.
fn blocks_in_order<T, R, F, G>(x: &ArrayView2<'_, T>, per_block: F, mut fold: G) -> Result<()>
where
    T: RowElement,
    R: Send,
    F: Fn(&mut Scratch, usize) -> Result<R> + Sync + Send,
    G: FnMut(R) -> Result<()>,
{
    let n_blocks = x.nrows().div_ceil(BLOCK_ROWS);
    for g0 in (0..n_blocks).step_by(GROUP_BLOCKS) {
        let g1 = (g0 + GROUP_BLOCKS).min(n_blocks);
        let parts: Vec<Result<R>> = (g0..g1)
            .into_par_iter()
            .map_init(|| Scratch { x: Vec::new(), h: Vec::new(), s: Vec::new() }, |sc, blk| per_block(sc, blk))
            .collect();
        for part in parts {
            fold(part?)?;
        }
    }
    Ok(())
}

/// `Σ_x h1(x)` over the rows of `x`, in f64 (rows summed in order within a block, blocks in order).
pub fn hash_sum<T: RowElement>(x: ArrayView2<'_, T>, proj: &RffProjection) -> Result<Vec<f64>> {
    check_rows(&x, proj)?;
    let d = proj.dim();
    let mut total = try_filled("X", d, 0.0f64)?;
    blocks_in_order(
        &x,
        |sc, blk| {
            let rows = hash_block(&x, proj, blk, sc)?;
            let mut part = try_filled("X", d, 0.0f64)?;
            for row in sc.h[..rows * d].chunks_exact(d) {
                for (a, &h) in part.iter_mut().zip(row) {
                    *a += h as f64;
                }
            }
            Ok(part)
        },
        |part: Vec<f64>| {
            for (a, b) in total.iter_mut().zip(&part) {
                *a += b;
            }
            Ok(())
        },
    )?;
    Ok(total)
}

/// Counts of `s(x) = h1(x)·g` in the `edges.len() + 1` bins of the module docs.
pub fn score_histogram<T: RowElement>(x: ArrayView2<'_, T>, proj: &RffProjection, g: &[f64], edges: &[f64]) -> Result<Vec<u64>> {
    check_rows(&x, proj)?;
    let d = proj.dim();
    check_vector("direction", g, d)?;
    if edges.is_empty() || edges.len() >= MAX_BINS {
        return Err(Error::value("edges", format!("needs between 1 and {} edges, got {}", MAX_BINS - 1, edges.len())));
    }
    check_finite_f64("edges", edges.iter().copied())?;
    if edges.windows(2).any(|w| w[1] <= w[0]) {
        return Err(Error::value("edges", "must be strictly increasing"));
    }
    let nb = edges.len() + 1;
    let mut counts = try_filled("edges", nb, 0u64)?;
    blocks_in_order(
        &x,
        |sc, blk| {
            let rows = hash_block(&x, proj, blk, sc)?;
            resize_fallible(&mut sc.s, rows, "X")?;
            block_dots(&sc.h[..rows * d], g, &mut sc.s[..rows]);
            let mut part = try_filled("edges", nb, 0u64)?;
            for &s in &sc.s[..rows] {
                // The number of edges <= s: bin 0 below the first edge, bin NB + 1 at or above the last.
                let b = edges.partition_point(|&e| e <= s);
                part[b] += 1;
            }
            Ok(part)
        },
        |part: Vec<u64>| {
            for (a, b) in counts.iter_mut().zip(&part) {
                *a += b;
            }
            Ok(())
        },
    )?;
    Ok(counts)
}

/// The tilted mean `m_λ` and `log Σ_x exp(h1(x)·λ)` of the rows of `x`.
pub fn tilted_mean<T: RowElement>(x: ArrayView2<'_, T>, proj: &RffProjection, lambda: &[f64]) -> Result<(Vec<f64>, f64)> {
    check_rows(&x, proj)?;
    let d = proj.dim();
    check_vector("lambda", lambda, d)?;
    let mut max = f64::NEG_INFINITY;
    let mut z = 0.0f64;
    let mut t = try_filled("lambda", d, 0.0f64)?;
    blocks_in_order(
        &x,
        |sc, blk| {
            let rows = hash_block(&x, proj, blk, sc)?;
            resize_fallible(&mut sc.s, rows, "X")?;
            block_dots(&sc.h[..rows * d], lambda, &mut sc.s[..rows]);
            let m_b = sc.s[..rows].iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let mut z_b = 0.0f64;
            let mut t_b = try_filled("lambda", d, 0.0f64)?;
            for (row, &s) in sc.h[..rows * d].chunks_exact(d).zip(&sc.s[..rows]) {
                let w = exp_neg_f64(s - m_b);
                z_b += w;
                for (a, &h) in t_b.iter_mut().zip(row) {
                    *a += w * h as f64;
                }
            }
            Ok((m_b, z_b, t_b))
        },
        |(m_b, z_b, t_b): (f64, f64, Vec<f64>)| {
            if max == f64::NEG_INFINITY {
                (max, z) = (m_b, z_b);
                t.copy_from_slice(&t_b);
            } else {
                let m = max.max(m_b);
                let (a, b) = (exp_neg_f64(max - m), exp_neg_f64(m_b - m));
                z = z * a + z_b * b;
                for (tj, &pj) in t.iter_mut().zip(&t_b) {
                    *tj = *tj * a + pj * b;
                }
                max = m;
            }
            Ok(())
        },
    )?;
    for tj in t.iter_mut() {
        *tj /= z;
    }
    Ok((t, max + z.ln()))
}

/// The result of [`self_consistent_tilt`].
#[derive(Debug, Clone)]
pub struct Tilt {
    /// The final λ.
    pub lambda: Vec<f64>,
    /// Fixed-point steps taken.
    pub rounds: usize,
    /// `‖g̃ − m_λ‖²` at the final λ.
    pub residual_sq: f64,
}

/// Entropic kernel-mean matching of the owner's rows toward `g̃`: from `λ = lambda0`, repeat
/// `λ ← λ + (g̃ − m_λ)/T` (the fixed-point step of `min_w ‖Σ w h1 − g̃‖²/2 + T·KL(w‖w₀)`, whose
/// stationary point is `w ∝ w₀ exp(h1·(g̃ − m_w)/T)`), at most `max_rounds` times, and stop as soon as
/// `‖g̃ − m_λ‖² ≤ stop_sq` (the discrepancy principle: with `stop_sq = d·σ²`, the squared norm the
/// release's noise alone has in expectation, any further step would fit the noise).
pub fn self_consistent_tilt<T: RowElement>(
    x: ArrayView2<'_, T>,
    proj: &RffProjection,
    g_tilde: &[f64],
    lambda0: &[f64],
    temperature: f64,
    max_rounds: usize,
    stop_sq: f64,
) -> Result<Tilt> {
    let d = proj.dim();
    check_vector("g_tilde", g_tilde, d)?;
    check_vector("lambda0", lambda0, d)?;
    check_positive("temperature", temperature)?;
    if !(stop_sq.is_finite() && stop_sq >= 0.0) {
        return Err(Error::value("stop_sq", format!("must be finite and >= 0, got {stop_sq}")));
    }
    // Each round is a full pass over the rows: a caller-chosen loop count is bounded (crate::limits).
    if max_rounds > crate::limits::MAX_TILT_ROUNDS {
        return Err(Error::value("max_rounds", format!("must be at most {}, got {max_rounds}", crate::limits::MAX_TILT_ROUNDS)));
    }
    let mut lambda = lambda0.to_vec();
    let mut rounds = 0;
    loop {
        let (m, _) = tilted_mean(x, proj, &lambda)?;
        let residual_sq: f64 = g_tilde.iter().zip(&m).map(|(g, m)| (g - m) * (g - m)).sum();
        if residual_sq <= stop_sq || rounds >= max_rounds {
            return Ok(Tilt { lambda, rounds, residual_sq });
        }
        for ((l, g), m) in lambda.iter_mut().zip(g_tilde).zip(&m) {
            *l += (g - m) / temperature;
        }
        rounds += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::public_key_from_u64;
    use ndarray::Array2;

    fn data(n: usize, nf: usize, seed: u64) -> Array2<f32> {
        let mut s = seed;
        Array2::from_shape_simple_fn((n, nf), || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 40) as f32) / (1u64 << 24) as f32
        })
    }

    fn proj(nf: usize, d: usize) -> RffProjection {
        RffProjection::from_key(public_key_from_u64("h1", 7), nf, d, 0.5).unwrap()
    }

    #[test]
    fn hash_sum_is_the_sum_of_the_hashes() {
        let x = data(700, 5, 1);
        let p = proj(5, 32);
        let h = p.transform_f32(x.view()).unwrap();
        let s = hash_sum(x.view(), &p).unwrap();
        for j in 0..32 {
            let want: f64 = h.column(j).iter().map(|&v| v as f64).sum();
            assert!((s[j] - want).abs() < 1e-9, "{} {}", s[j], want);
        }
    }

    #[test]
    fn histogram_counts_every_row_once() {
        let x = data(1000, 4, 2);
        let p = proj(4, 16);
        let g = vec![0.3; 16];
        let h = p.transform_f32(x.view()).unwrap();
        let scores: Vec<f64> = h.rows().into_iter().map(|r| r.iter().zip(&g).map(|(&a, b)| a as f64 * b).sum()).collect();
        let edges = vec![-0.5, 0.0, 0.2, 0.5];
        let c = score_histogram(x.view(), &p, &g, &edges).unwrap();
        assert_eq!(c.iter().sum::<u64>(), 1000);
        let below = scores.iter().filter(|&&s| s < -0.5).count() as u64;
        let top = scores.iter().filter(|&&s| s >= 0.5).count() as u64;
        assert_eq!(c[0], below);
        assert_eq!(c[4], top);
        assert!(score_histogram(x.view(), &p, &g, &[0.1, 0.1]).is_err());
        assert!(score_histogram(x.view(), &p, &g[..3], &edges).is_err());
    }

    #[test]
    fn tilted_mean_limits() {
        let x = data(600, 3, 3);
        let p = proj(3, 8);
        let h = p.transform_f32(x.view()).unwrap();
        // lambda = 0: the plain mean.
        let (m, logz) = tilted_mean(x.view(), &p, &[0.0; 8]).unwrap();
        for j in 0..8 {
            let want: f64 = h.column(j).iter().map(|&v| v as f64).sum::<f64>() / 600.0;
            assert!((m[j] - want).abs() < 1e-12);
        }
        assert!((logz - (600f64).ln()).abs() < 1e-12);
        // A huge lambda: the best row's hash, no overflow.
        let lam: Vec<f64> = (0..8).map(|j| 1e6 * (j as f64 - 3.5)).collect();
        let (m, logz) = tilted_mean(x.view(), &p, &lam).unwrap();
        assert!(logz.is_finite() && m.iter().all(|v| v.is_finite()));
    }

    #[test]
    fn tilt_stops_at_the_discrepancy() {
        let x = data(500, 3, 4);
        let p = proj(3, 8);
        let g = vec![0.1; 8];
        let huge = self_consistent_tilt(x.view(), &p, &g, &[0.0; 8], 0.5, 10, 1e9).unwrap();
        assert_eq!(huge.rounds, 0);
        let t = self_consistent_tilt(x.view(), &p, &g, &[0.0; 8], 0.5, 3, 0.0).unwrap();
        assert_eq!(t.rounds, 3);
        assert!(self_consistent_tilt(x.view(), &p, &g, &[0.0; 8], 0.0, 3, 0.0).is_err());
        // The round count is bounded (each round is a pass over the rows): 2^63 rounds used to be accepted.
        let over = self_consistent_tilt(x.view(), &p, &g, &[0.0; 8], 0.5, usize::MAX, 1e9);
        assert_eq!(over.unwrap_err().argument(), Some("max_rounds"));
        let at_cap = self_consistent_tilt(x.view(), &p, &g, &[0.0; 8], 0.5, crate::limits::MAX_TILT_ROUNDS, 1e9);
        assert_eq!(at_cap.unwrap().rounds, 0);
    }
}
