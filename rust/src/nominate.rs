//! An owner's nominations, in one streaming pass over its raw rows (issues 12 and 15).
//!
//! Inputs: the owner's rows `X` (n × p, f32 or f64, any strides: never copied whole), the public h1
//! projection, the released noisy validation mean `g̃` (d, f64), a temperature `T > 0`, the number of
//! nominees `M` and of candidates `C ≥ M`. One pass over `X` in blocks of rows (parallel over blocks):
//!
//! 1. hash the block (`B × d` f32 scratch per worker; never an `n × d` matrix);
//! 2. score every row, `s(x) = h1(x)·g̃` (f32 widened to f64, eight fixed lanes: [`crate::greedy`]);
//! 3. accumulate the *tilted target* `t = Σ_x w(x) h1(x) / Σ_x w(x)`, `w(x) = exp(s(x)/T)`, by an
//!    online log-sum-exp in f64: each block keeps its own maximum score `m_b`, `z_b = Σ e^{(s−m_b)/T}` and
//!    `t_b = Σ e^{(s−m_b)/T} h`; block summaries are merged in block order, rescaling by
//!    `e^{(m−m')/T} ≤ 1`. Every exponent is ≤ 0, so nothing overflows for any `T`, and `z ≥ 1` (the
//!    best row has weight 1), so the final division is safe: `T = 1e-6` gives the best row's hash,
//!    `T = 1e6` the plain mean;
//! 4. keep `C` candidate rows as (key, row) pairs in a bounded pool (at most `3C` pairs, compacted by
//!    selection): the `C` largest keys, ties to the lowest index. With [`Candidates::Weighted`] the key
//!    is `s(x)/T + G(x)`, `G(x)` a standard Gumbel variate derived from a seed and the row index, so the
//!    candidates are a sample without replacement with probabilities ∝ `w(x)` (the Gumbel-top-k trick;
//!    Efraimidis & Spirakis 2006): a sample of the tilted distribution whose mean is `t`. With
//!    [`Candidates::TopScore`] the key is `s(x)` (the most relevant rows; measured on MNIST, far less
//!    diverse: C = 8M rows by top score are worse than C = M weighted samples).
//!
//! Then the candidates' hashes are recomputed from their raw rows (h1 is row-canonical, so they are
//! bit-identical to the hashes of the pass) in row order, and [`crate::greedy`] picks `M` of them
//! toward `t`. When `C ≥ n` every row is a candidate and the result is the greedy over all rows.
//!
//! **Determinism.** Scores, keys (the Gumbel variate of row `i` is a function of the seed and `i`
//! only, from SplitMix64 and `libm`'s portable `log`) and so candidate sets are exact functions of
//! each row: they do not depend on blocking or threads. The block summaries are merged sequentially in block order (blocks run in
//! parallel in groups of [`GROUP_BLOCKS`], a constant), so `t` is bit-identical for any thread count;
//! a different block size changes `t` only by f64 rounding (about 1e-16 relative).
//!
//! Memory: `O(C·d)` for the candidates' hashes, `O(min(3C, n))` pairs, and per worker one block of
//! rows and hashes; nothing proportional to `n · d`.

use std::cmp::Ordering;

use ndarray::{Array2, ArrayView2, s};
use rayon::prelude::*;

use crate::error::{Error, Result, check_finite_f64, check_positive, checked_size, try_filled};
use crate::greedy::{Selection, block_dots, greedy_unchecked, stochastic_sample_size, stochastic_unchecked};
use crate::limits::try_zeroed_f32;
use crate::rff::{RffProjection, RowElement, block_error, rows_f32};
use crate::rng::splitmix64;
use crate::simd::{dispatch_avx512_avx2, exp_neg_f64};

/// Rows per block of the pass, unless the caller asks otherwise (hashing is as fast as `transform`).
pub const DEFAULT_BLOCK_ROWS: usize = 256;
/// Largest accepted block size.
pub const MAX_BLOCK_ROWS: usize = 1 << 16;
/// Blocks hashed in parallel between two sequential merges (a constant: results never depend on the
/// thread count). 64 blocks of 256 rows: 16,384 rows per group.
pub const GROUP_BLOCKS: usize = 64;

/// How an owner picks the candidates the greedy chooses from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Candidates {
    /// The `C` rows with the largest score `s(x)`.
    TopScore,
    /// A sample of `C` rows without replacement, with probabilities ∝ `exp(s(x)/T)`, keyed by `seed`.
    Weighted { seed: u64 },
}

/// The standard Gumbel variate `−ln(−ln u)` of row `i`, `u = (⌊z/2^11⌋ + 1/2) / 2^53 ∈ (0, 1)`.
pub fn gumbel(seed: u64, i: u64) -> f64 {
    let u = ((splitmix64(seed, i) >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
    -libm::log(-libm::log(u))
}

/// How an owner's greedy picks its `M` nominees among its candidates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OwnerGreedy {
    /// The exact greedy ([`crate::greedy::greedy_select`]): `O(M·C·d)`.
    Exact,
    /// Stochastic greedy ([`crate::greedy::stochastic_greedy_select`]): each round evaluates
    /// `⌈(C/M)·factor⌉` random open candidates, the stream keyed by `seed`: `O(M·(C/M)·factor·d)`.
    Stochastic { factor: f64, seed: u64 },
}

/// Parameters of [`nominate`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NominateParams {
    /// `T > 0` of the weights `exp(s/T)`.
    pub temperature: f64,
    /// `M ≥ 1`: rows to nominate.
    pub nominees: usize,
    /// `C ≥ M`: rows with the best score kept for the greedy (capped at n).
    pub candidates: usize,
    /// Rows per block of the streaming pass (1..=[`MAX_BLOCK_ROWS`]).
    pub block_rows: usize,
    /// The candidate rule.
    pub rule: Candidates,
    /// The greedy among the candidates.
    pub greedy: OwnerGreedy,
}

/// An owner's nominees.
#[derive(Clone, Debug, PartialEq)]
pub struct Nomination {
    /// Rows of `X` in selection order (`min(M, n)` of them).
    pub indices: Vec<usize>,
    /// Their h1 hashes, one row each (bit-identical to `transform` of those rows).
    pub hashes: Array2<f32>,
    /// The tilted target `t` the greedy ran toward.
    pub target: Vec<f64>,
    /// `min(C, n)`: how many rows the greedy chose from.
    pub n_candidates: usize,
}

/// Best first: larger score, then lower row.
fn rank(a: &(f64, usize), b: &(f64, usize)) -> Ordering {
    b.0.total_cmp(&a.0).then(a.1.cmp(&b.1))
}

/// Keep the `c` best pairs of `pool` (any order).
fn keep_best(pool: &mut Vec<(f64, usize)>, c: usize) {
    if pool.len() > c {
        pool.select_nth_unstable_by(c - 1, rank);
        pool.truncate(c);
    }
}

/// One block's contribution: its max score, `z_b`, `t_b` and its candidate pairs.
struct Part {
    max: f64,
    z: f64,
    t: Vec<f64>,
    top: Vec<(f64, usize)>,
}

dispatch_avx512_avx2! {
fn weighted_sum(block: &[f32], w: &[f64], t: &mut [f64]) -> () {
    // t[j] += Σ_i w[i] h_i[j], rows in order.
    let d = t.len();
    for (row, &wi) in block.chunks_exact(d).zip(w) {
        for (a, &h) in t.iter_mut().zip(row) {
            *a += wi * h as f64;
        }
    }
}
}

dispatch_avx512_avx2! {
fn block_weights(s: &[f64], max: f64, temp: f64, w: &mut [f64]) -> () {
    // w[i] = exp((s[i] - max) / temp), every exponent <= 0.
    for (w, &s) in w.iter_mut().zip(s) {
        *w = exp_neg_f64((s - max) / temp);
    }
}
}

dispatch_avx512_avx2! {
fn scores_f64(block: &[f32], g: &[f64], out: &mut [f64]) -> () {
    block_dots(block, g, out);
    // -0.0 + 0.0 = +0.0: equal scores compare equal under the total order.
    for s in out.iter_mut() {
        *s += 0.0;
    }
}
}

/// Grow `buf` to `len` entries, failing cleanly.
fn resize_fallible<T: Clone + Default>(buf: &mut Vec<T>, len: usize, name: &'static str) -> Result<()> {
    if len > buf.len() {
        buf.try_reserve(len - buf.len())
            .map_err(|_| Error::value(name, format!("a block of {len} values could not be allocated")))?;
    }
    buf.resize(len, T::default());
    Ok(())
}

struct Scratch {
    x: Vec<f32>,
    h: Vec<f32>,
    s: Vec<f64>,
    w: Vec<f64>,
}

/// Nominate `M` of the owner's rows (module docs). Errors on bad shapes or parameters, non-finite
/// values, or memory that cannot be allocated; never panics on user input.
pub fn nominate<T: RowElement>(
    x: ArrayView2<'_, T>,
    proj: &RffProjection,
    g: &[f64],
    p: &NominateParams,
) -> Result<Nomination> {
    let (n, nf) = x.dim();
    let d = proj.dim();
    if nf != proj.n_features() {
        return Err(Error::shape(
            "X",
            format!("has {nf} features per row, the hasher was built for {}", proj.n_features()),
        ));
    }
    if n == 0 {
        return Err(Error::shape("X", "has no rows"));
    }
    if g.len() != d {
        return Err(Error::shape("g_tilde", format!("has length {}, the hasher's dim is {d}", g.len())));
    }
    check_finite_f64("g_tilde", g.iter().copied())?;
    check_positive("temperature", p.temperature)?;
    if p.nominees == 0 {
        return Err(Error::value("nominees", "must be at least 1"));
    }
    if p.candidates < p.nominees {
        return Err(Error::value(
            "candidates",
            format!("must be at least nominees = {}, got {}", p.nominees, p.candidates),
        ));
    }
    if let OwnerGreedy::Stochastic { factor, .. } = p.greedy
        && !(factor.is_finite() && factor > 0.0)
    {
        return Err(Error::value("greedy_sample_factor", format!("must be finite and > 0, got {factor}")));
    }
    if p.block_rows == 0 || p.block_rows > MAX_BLOCK_ROWS {
        return Err(Error::value(
            "block_rows",
            format!("must be between 1 and {MAX_BLOCK_ROWS}, got {}", p.block_rows),
        ));
    }
    let c = p.candidates.min(n);
    let b = p.block_rows;
    let temp = p.temperature;
    let n_blocks = n.div_ceil(b);

    let mut max = f64::NEG_INFINITY;
    let mut z = 0.0f64;
    let mut t = try_filled("g_tilde", d, 0.0f64)?;
    let mut pool: Vec<(f64, usize)> = Vec::new();
    pool.try_reserve_exact(c.saturating_mul(3).min(n))
        .map_err(|_| Error::value("candidates", format!("{c} candidates could not be allocated")))?;
    // A new row (larger index than every pooled row) can only enter if its score beats this one.
    let mut threshold: Option<f64> = None;

    for g0 in (0..n_blocks).step_by(GROUP_BLOCKS) {
        let g1 = (g0 + GROUP_BLOCKS).min(n_blocks);
        let thr = threshold;
        let parts: Vec<Result<Part>> = (g0..g1)
            .into_par_iter()
            .map_init(
                || Scratch { x: Vec::new(), h: Vec::new(), s: Vec::new(), w: Vec::new() },
                |sc, blk| {
                    let start = blk * b;
                    let end = (start + b).min(n);
                    let rows = end - start;
                    // The input checks (finite in float32, projection inside the cosine's domain) are
                    // part of the hashing kernel: no separate pass over the rows.
                    let xs = rows_f32(x.slice(s![start..end, ..]), &mut sc.x);
                    resize_fallible(&mut sc.h, checked_size("block_rows", rows, d)?, "block_rows")?;
                    if !proj.hash_rows_checked(xs, rows, &mut sc.h) {
                        return Err(block_error(xs));
                    }
                    resize_fallible(&mut sc.s, rows, "block_rows")?;
                    scores_f64(&sc.h, g, &mut sc.s);
                    let m_b = sc.s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    resize_fallible(&mut sc.w, rows, "block_rows")?;
                    // Two loops: the exponentials vectorise (no dependency between rows), the sum keeps
                    // its order.
                    block_weights(&sc.s, m_b, temp, &mut sc.w);
                    let z_b: f64 = sc.w.iter().sum();
                    let mut t_b = try_filled("g_tilde", d, 0.0f64)?;
                    weighted_sum(&sc.h, &sc.w, &mut t_b);
                    let mut top: Vec<(f64, usize)> = Vec::new();
                    for (i, &s) in sc.s.iter().enumerate() {
                        let key = match p.rule {
                            Candidates::TopScore => s,
                            // + 0.0: -0.0 becomes +0.0, so equal keys compare equal.
                            Candidates::Weighted { seed } => s / temp + gumbel(seed, (start + i) as u64) + 0.0,
                        };
                        if thr.is_none_or(|th| key > th) {
                            top.push((key, start + i));
                        }
                    }
                    keep_best(&mut top, c);
                    Ok(Part { max: m_b, z: z_b, t: t_b, top })
                },
            )
            .collect();
        for part in parts {
            let part = part?;
            if max == f64::NEG_INFINITY {
                (max, z) = (part.max, part.z);
                t.copy_from_slice(&part.t);
            } else {
                let m = max.max(part.max);
                let (a, bb) = (exp_neg_f64((max - m) / temp), exp_neg_f64((part.max - m) / temp));
                z = z * a + part.z * bb;
                for (tj, &pj) in t.iter_mut().zip(&part.t) {
                    *tj = *tj * a + pj * bb;
                }
                max = m;
            }
            pool.extend_from_slice(&part.top);
            if pool.len() >= 2 * c {
                keep_best(&mut pool, c);
                threshold = Some(pool.iter().map(|e| e.0).fold(f64::INFINITY, f64::min));
            }
        }
    }
    for tj in t.iter_mut() {
        *tj /= z;
    }
    keep_best(&mut pool, c);
    pool.sort_unstable_by_key(|e| e.1);
    let cand: Vec<usize> = pool.iter().map(|e| e.1).collect();
    let nc = cand.len();

    // The candidates' hashes, recomputed from their rows in row order (bit-identical to the pass).
    let mut ch = try_zeroed_f32("candidates", checked_size("candidates", nc, d)?, usize::MAX)?;
    let chunk = DEFAULT_BLOCK_ROWS;
    ch.par_chunks_mut(chunk * d).zip(cand.par_chunks(chunk)).try_for_each_init(
        Vec::new,
        |xb: &mut Vec<f32>, (out, idx)| {
            xb.clear();
            xb.try_reserve(idx.len() * nf)
                .map_err(|_| Error::value("candidates", "a block of rows could not be allocated"))?;
            for &i in idx {
                xb.extend(x.row(i).iter().map(|v| v.to_f32()));
            }
            proj.hash_rows(xb, idx.len(), out);
            Ok::<(), Error>(())
        },
    )?;

    let Selection { indices: picks, .. } = match p.greedy {
        OwnerGreedy::Exact => greedy_unchecked(&ch, d, &t, p.nominees, None)?,
        OwnerGreedy::Stochastic { factor, seed } => {
            stochastic_unchecked(&ch, d, &t, p.nominees, stochastic_sample_size(nc, p.nominees, factor), seed)?
        }
    };
    let m = picks.len();
    let mut hashes = try_filled("nominees", checked_size("nominees", m, d)?, 0.0f32)?;
    for (k, &pos) in picks.iter().enumerate() {
        hashes[k * d..(k + 1) * d].copy_from_slice(&ch[pos * d..(pos + 1) * d]);
    }
    let hashes = Array2::from_shape_vec((m, d), hashes).map_err(|e| Error::shape("nominees", e.to_string()))?;
    Ok(Nomination { indices: picks.iter().map(|&pos| cand[pos]).collect(), hashes, target: t, n_candidates: nc })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::greedy::greedy_select;
    use crate::rng::public_key_from_u64;

    fn data(n: usize, nf: usize, seed: u64) -> Array2<f32> {
        let mut s = seed;
        Array2::from_shape_simple_fn((n, nf), || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 40) as f32) / (1u64 << 24) as f32
        })
    }

    fn proj(nf: usize, d: usize) -> RffProjection {
        RffProjection::from_key(public_key_from_u64("h1", 9), nf, d, 0.5).unwrap()
    }

    fn params(t: f64, m: usize, c: usize, b: usize) -> NominateParams {
        NominateParams {
            temperature: t,
            nominees: m,
            candidates: c,
            block_rows: b,
            rule: Candidates::TopScore,
            greedy: OwnerGreedy::Exact,
        }
    }

    fn weighted(t: f64, m: usize, c: usize, b: usize, seed: u64) -> NominateParams {
        NominateParams { rule: Candidates::Weighted { seed }, ..params(t, m, c, b) }
    }

    /// The definition, from the full hash matrix: scores, weights (with the global max), the top C by
    /// (score, index), the greedy among them in row order.
    fn reference(h: &Array2<f32>, g: &[f64], p: &NominateParams) -> (Vec<usize>, Vec<f64>, usize) {
        let (n, d) = h.dim();
        let s: Vec<f64> = (0..n).map(|i| (0..d).map(|j| h[[i, j]] as f64 * g[j]).sum()).collect();
        let m = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let w: Vec<f64> = s.iter().map(|&v| ((v - m) / p.temperature).exp()).collect();
        let z: f64 = w.iter().sum();
        let t: Vec<f64> = (0..d).map(|j| (0..n).map(|i| w[i] * h[[i, j]] as f64).sum::<f64>() / z).collect();
        let key: Vec<f64> = match p.rule {
            Candidates::TopScore => s.clone(),
            Candidates::Weighted { seed } => (0..n).map(|i| s[i] / p.temperature + gumbel(seed, i as u64)).collect(),
        };
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| key[b].partial_cmp(&key[a]).unwrap().then(a.cmp(&b)));
        let mut cand: Vec<usize> = order[..p.candidates.min(n)].to_vec();
        cand.sort();
        let ch = Array2::from_shape_fn((cand.len(), d), |(i, j)| h[[cand[i], j]]);
        let sel = match p.greedy {
            OwnerGreedy::Exact => greedy_select(ch.view(), &t, p.nominees, None).unwrap(),
            OwnerGreedy::Stochastic { factor, seed } => crate::greedy::stochastic_greedy_select(
                ch.view(),
                &t,
                p.nominees,
                stochastic_sample_size(cand.len(), p.nominees, factor),
                seed,
            )
            .unwrap(),
        };
        (sel.indices.iter().map(|&k| cand[k]).collect(), t, cand.len())
    }

    #[test]
    fn equals_the_definition_and_the_hashes_are_transform() {
        let x = data(3000, 6, 1);
        let pr = proj(6, 40);
        let h = pr.transform_f32(x.view()).unwrap();
        let g: Vec<f64> = h.rows().into_iter().take(50).fold(vec![0.0; 40], |mut a, r| {
            a.iter_mut().zip(r).for_each(|(a, &v)| *a += v as f64 / 50.0);
            a
        });
        for p in [
            params(0.1, 20, 80, 256),
            params(0.01, 5, 5, 100),
            params(1.0, 30, 3000, 999),
            params(0.05, 10, 10_000, 7),
            weighted(0.1, 20, 80, 256, 3),
            weighted(0.02, 10, 40, 33, 4),
            NominateParams {
                greedy: OwnerGreedy::Stochastic { factor: 2.0, seed: 3 },
                ..weighted(0.1, 20, 200, 256, 3)
            },
        ] {
            let got = nominate(x.view(), &pr, &g, &p).unwrap();
            let (idx, t, nc) = reference(&h, &g, &p);
            assert_eq!(got.indices, idx, "{p:?}");
            assert_eq!(got.n_candidates, nc);
            for (a, b) in got.target.iter().zip(&t) {
                assert!((a - b).abs() < 1e-12 * (1.0 + b.abs()), "{a} {b}");
            }
            for (k, &i) in got.indices.iter().enumerate() {
                assert_eq!(got.hashes.row(k), h.row(i));
            }
        }
    }

    #[test]
    fn all_candidates_is_the_full_greedy_and_the_block_size_does_not_matter() {
        let x = data(1500, 5, 2);
        let pr = proj(5, 30);
        let h = pr.transform_f32(x.view()).unwrap();
        let g: Vec<f64> = (0..30).map(|j| h[[j, j]] as f64 * 0.5).collect();
        let base = nominate(x.view(), &pr, &g, &params(0.2, 40, 1500, 256)).unwrap();
        let full = greedy_select(h.view(), &base.target, 40, None).unwrap();
        assert_eq!(base.indices, full.indices);
        for b in [1usize, 3, 64, 1000, 4096] {
            let other = nominate(x.view(), &pr, &g, &params(0.2, 40, 1500, b)).unwrap();
            assert_eq!(other.indices, base.indices);
            for (a, c) in other.target.iter().zip(&base.target) {
                assert!((a - c).abs() <= 1e-14, "{a} {c}");
            }
        }
    }

    #[test]
    fn independent_of_the_thread_count_in_every_bit() {
        let x = data(40_000, 8, 3);
        let pr = proj(8, 24);
        let g: Vec<f64> = (0..24).map(|j| ((j as f64) * 0.7).sin() * 0.1).collect();
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                let a = nominate(x.view(), &pr, &g, &params(0.05, 15, 60, 100)).unwrap();
                let b = nominate(x.view(), &pr, &g, &weighted(0.05, 15, 60, 100, 11)).unwrap();
                assert_eq!(a.target, b.target);
                b
            })
        };
        let one = run(1);
        for threads in [2, 4, 7] {
            let other = run(threads);
            assert_eq!(one.indices, other.indices);
            assert_eq!(one.hashes, other.hashes);
            assert_eq!(
                one.target.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                other.target.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn extreme_temperatures_and_f64_and_strided_rows() {
        let x = data(5000, 4, 4);
        let pr = proj(4, 16);
        let h = pr.transform_f32(x.view()).unwrap();
        let g: Vec<f64> = (0..16).map(|j| h[[123, j]] as f64).collect();
        // T -> 0: the target is the hash of the best-scoring row (a unique maximum here).
        let cold = nominate(x.view(), &pr, &g, &params(1e-6, 3, 10, 256)).unwrap();
        let s: Vec<f64> = (0..5000).map(|i| (0..16).map(|j| h[[i, j]] as f64 * g[j]).sum()).collect();
        let best = (0..5000).max_by(|&a, &b| s[a].partial_cmp(&s[b]).unwrap().then(b.cmp(&a))).unwrap();
        for j in 0..16 {
            assert!((cold.target[j] - h[[best, j]] as f64).abs() < 1e-12);
        }
        // T -> infinity: the plain mean.
        let hot = nominate(x.view(), &pr, &g, &params(1e6, 3, 10, 256)).unwrap();
        for j in 0..16 {
            let mean = (0..5000).map(|i| h[[i, j]] as f64).sum::<f64>() / 5000.0;
            assert!((hot.target[j] - mean).abs() < 1e-6, "{} {mean}", hot.target[j]);
        }
        // f64 rows and column-major rows give the same nominees.
        let x64 = x.mapv(|v| v as f64);
        let xf = x.t().as_standard_layout().into_owned().reversed_axes();
        let p = params(0.1, 7, 50, 256);
        let a = nominate(x.view(), &pr, &g, &p).unwrap();
        assert_eq!(nominate(x64.view(), &pr, &g, &p).unwrap(), a);
        assert_eq!(nominate(xf.view(), &pr, &g, &p).unwrap(), a);
    }

    #[test]
    fn few_rows_return_fewer_nominees() {
        let x = data(3, 4, 5);
        let pr = proj(4, 8);
        let got = nominate(x.view(), &pr, &[0.1; 8], &params(0.1, 10, 10, 256)).unwrap();
        assert_eq!(got.indices.len(), 3);
        assert_eq!(got.n_candidates, 3);
        assert_eq!(got.hashes.dim(), (3, 8));
    }

    #[test]
    fn bad_input() {
        let x = data(10, 4, 6);
        let pr = proj(4, 8);
        let g = [0.1; 8];
        let arg =
            |x: ArrayView2<'_, f32>, g: &[f64], p: NominateParams| nominate(x, &pr, g, &p).unwrap_err().argument();
        let ok = params(0.1, 2, 4, 256);
        assert_eq!(arg(x.slice(s![.., ..3]), &g, ok), Some("X"));
        assert_eq!(arg(x.slice(s![..0, ..]), &g, ok), Some("X"));
        assert_eq!(arg(x.view(), &g[..7], ok), Some("g_tilde"));
        assert_eq!(arg(x.view(), &[f64::NAN; 8], ok), Some("g_tilde"));
        assert_eq!(arg(x.view(), &g, params(0.0, 2, 4, 256)), Some("temperature"));
        assert_eq!(arg(x.view(), &g, params(f64::INFINITY, 2, 4, 256)), Some("temperature"));
        assert_eq!(arg(x.view(), &g, params(0.1, 0, 4, 256)), Some("nominees"));
        assert_eq!(arg(x.view(), &g, params(0.1, 5, 4, 256)), Some("candidates"));
        assert_eq!(arg(x.view(), &g, params(0.1, 2, 4, 0)), Some("block_rows"));
        for f in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let p = NominateParams { greedy: OwnerGreedy::Stochastic { factor: f, seed: 0 }, ..ok };
            assert_eq!(arg(x.view(), &g, p), Some("greedy_sample_factor"));
        }
        let mut bad = x.clone();
        bad[[7, 1]] = f32::NAN;
        assert_eq!(nominate(bad.view(), &pr, &g, &ok).unwrap_err().argument(), Some("X"));
        // A finite row whose projection leaves the cosine's domain is refused in the pass (never NaN scores).
        let mut huge = x.clone();
        huge[[3, 0]] = 1e30;
        let err = nominate(huge.view(), &pr, &g, &ok).unwrap_err();
        assert_eq!(err.argument(), Some("X"));
        assert!(err.to_string().contains("4089"), "{err}");
        // Huge C is capped at n: no allocation of C entries.
        assert_eq!(nominate(x.view(), &pr, &g, &params(0.1, 2, usize::MAX, 256)).unwrap().n_candidates, 10);
    }
}

#[cfg(test)]
mod sampling_tests {
    use super::*;

    #[test]
    fn gumbel_variates_have_the_gumbel_law() {
        // Mean of the standard Gumbel law: the Euler–Mascheroni constant 0.5772; variance pi^2/6.
        // 200,000 draws: sd of the mean = 1.28/sqrt(2e5) = 0.0029; 5 sigma = 0.015.
        let n = 200_000u64;
        let xs: Vec<f64> = (0..n).map(|i| gumbel(42, i)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!((mean - 0.577_215_664_9).abs() < 0.015, "mean {mean}");
        assert!((var - std::f64::consts::PI.powi(2) / 6.0).abs() < 0.05, "var {var}");
        assert_ne!(gumbel(1, 5), gumbel(2, 5));
        assert_eq!(gumbel(1, 5), gumbel(1, 5));
    }

    #[test]
    fn weighted_candidates_follow_the_weights() {
        // Gumbel-top-1 over two rows with scores 0 and ln 3 (T = 1) picks the second with probability 3/4.
        // Empirically over 20,000 seeds: sd = sqrt(3/16/20000) = 0.0031; 5 sigma = 0.016.
        let mut second = 0;
        for seed in 0..20_000u64 {
            let k0 = 0.0 + gumbel(seed, 0);
            let k1 = 3f64.ln() + gumbel(seed, 1);
            if k1 > k0 {
                second += 1;
            }
        }
        let frac = second as f64 / 20_000.0;
        assert!((frac - 0.75).abs() < 0.016, "{frac}");
    }
}
