//! The exact-kernel greedy (the aggregator's `choice="kernel"` of the nominations protocol and
//! `method="exact-greedy"`), fused into one parallel pass per round (issue 15).
//!
//! Rows `X` (n × f, f32, row-major), `kv[i] = mean_{y ∈ D_v} k(x_i, y)` (computed once, e.g. by
//! [`crate::mmd::kernel_row_means`]), `ks[i] = Σ_{z ∈ S} k(x_i, z)` for the summary so far (`q0` seed rows
//! to start with, or none), `k(x, z) = exp(−γ ‖x − z‖²)`. Round `r` (`q` rows in `S`) picks, among rows not
//! yet picked,
//!
//! ```text
//!     argmax_i  kv[i] − (q/(q+1)) · ks[i]/q        (kv[i] when q = 0)
//! ```
//!
//! (DESIGN §4 with the exact kernel), ties to the lowest index, then adds `k(x_i, x_pick)` to every open
//! `ks[i]`, with `‖x_i − x_p‖² = max(0, ‖x_i‖² + ‖x_p‖² − 2 x_i·x_p)`, norms and dot products of the f32
//! rows summed in f64 (eight fixed lanes, [`crate::greedy`]'s `dot1`), the exponential by the vectorised
//! [`crate::simd::exp_neg_f64`] (relative error below 1e-15). Each row's values are a fixed
//! sequence of f64 operations, so the result does not depend on the thread count. Cost per round: one
//! pass over `X` (`n·f` multiply-adds and `n` exponentials), `O(n)` memory beyond `X`; the per-round
//! numpy version of this loop (three temporaries of `n` f64 and a BLAS gemv) measured 11 ms per round at
//! n = 200,000 × 64 on the 2-core bench machine.

use ndarray::ArrayView2;
use rayon::prelude::*;

use crate::bids::{Best, better};
use crate::error::{Error, Result, check_finite_f64, check_positive, try_filled};
use crate::greedy::{Selection, block_dots, dot1};
use crate::simd::{dispatch_avx512_avx2, exp_neg_f64};

const CHUNK_ROWS: usize = 2048;

/// Rows of at most this many features take their dot products four at a time (more independent sums: 1.7x
/// faster at 64 features, where `X` stays in cache); wider rows stream from memory, where one row at a time
/// measured 1.2x faster at 784 features. Both give the same bits (test `four_rows_at_a_time_gives_the_same_bits`).
const NARROW_ROWS: usize = 256;

/// Rows per sub-block of [`add_kernel_to_pick`]: their exponents are computed in one vectorised pass.
const EXP_ROWS: usize = 64;

dispatch_avx512_avx2! {
fn add_kernel_to_pick(ks: &mut [f64], block: &[f32], sq: &[f64], taken: &[bool], pick: &[f64], sq_pick: f64, gamma: f64, four_rows: bool) -> () {
    // ks[i] += exp(-gamma * max(0, |x_i|^2 + |x_p|^2 - 2 x_i.x_p)) for every open row of the chunk:
    // the exponents of 64 rows first, then one vectorised exp over them (simd::exp_neg_f64), then the sums.
    let f = pick.len();
    let mut e = [0.0f64; EXP_ROWS];
    for (c, rows) in block.chunks(EXP_ROWS * f).enumerate() {
        let j0 = c * EXP_ROWS;
        let m = rows.len() / f;
        if four_rows {
            // Four rows at a time (greedy::block_dots): each row's sum in dot1's lanes and order, so the same bits.
            block_dots(rows, pick, &mut e[..m]);
        } else {
            for (t, row) in e.iter_mut().zip(rows.chunks_exact(f)) {
                *t = dot1(row, pick);
            }
        }
        for (t, &s) in e[..m].iter_mut().zip(&sq[j0..j0 + m]) {
            *t = -gamma * (s + sq_pick - 2.0 * *t).max(0.0);
        }
        for t in e[..m].iter_mut() {
            *t = exp_neg_f64(*t);
        }
        for ((k, &t), &tk) in ks[j0..j0 + m].iter_mut().zip(&e[..m]).zip(&taken[j0..j0 + m]) {
            if !tk {
                *k += t;
            }
        }
    }
}
}

/// The greedy of the module docs: up to `k` rows of `x`, in selection order, with their scores.
pub fn kernel_greedy(
    x: ArrayView2<'_, f32>,
    kv: &[f64],
    ks0: &[f64],
    q0: usize,
    k: usize,
    gamma: f64,
) -> Result<Selection> {
    kernel_greedy_with(x, kv, ks0, q0, k, gamma, x.ncols() <= NARROW_ROWS)
}

/// [`kernel_greedy`] with its dot products four rows at a time (`four_rows`) or one at a time: the same bits.
fn kernel_greedy_with(
    x: ArrayView2<'_, f32>,
    kv: &[f64],
    ks0: &[f64],
    q0: usize,
    k: usize,
    gamma: f64,
    four_rows: bool,
) -> Result<Selection> {
    let (n, f) = x.dim();
    check_positive("gamma", gamma)?;
    if kv.len() != n {
        return Err(Error::shape("kv", format!("has length {}, X has {n} rows", kv.len())));
    }
    if ks0.len() != n {
        return Err(Error::shape("ks", format!("has length {}, X has {n} rows", ks0.len())));
    }
    let flat = x.to_slice().ok_or_else(|| Error::shape("X", "must be C-contiguous (row-major)"))?;
    if !flat.par_chunks(4096).all(|c| c.iter().all(|v| v.is_finite())) {
        return Err(Error::NonFinite { name: "X" });
    }
    check_finite_f64("kv", kv.iter().copied())?;
    check_finite_f64("ks", ks0.iter().copied())?;
    let k = k.min(n);
    // The rounds are q = q0, ..., q0 + k − 1: refuse a q0 whose last round overflows (it used to wrap and
    // silently return fewer picks, or panic with overflow checks on).
    let last = q0.checked_add(k).ok_or_else(|| Error::value("q0", format!("q0 + k = {q0} + {k} overflows")))?;
    let mut sel = Selection::default();
    sel.indices.try_reserve_exact(k).map_err(|_| Error::value("k", format!("{k} picks could not be allocated")))?;
    sel.scores.try_reserve_exact(k).map_err(|_| Error::value("k", format!("{k} picks could not be allocated")))?;
    if k == 0 || f == 0 {
        return Ok(sel);
    }
    let mut ks = try_filled("ks", n, 0.0f64)?;
    ks.copy_from_slice(ks0);
    let mut sq = try_filled("X", n, 0.0f64)?;
    sq.par_chunks_mut(CHUNK_ROWS).zip(flat.par_chunks(CHUNK_ROWS * f)).for_each(|(s, block)| {
        for (o, row) in s.iter_mut().zip(block.chunks_exact(f)) {
            *o = dot1(row, row);
        }
    });
    let mut taken = try_filled("X", n, false)?;
    let mut prev: Option<usize> = None;
    let mut pick64 = try_filled("X", f, 0.0f64)?;
    // The rounds run on a worker of the current pool (`rayon::scope`): called from a thread outside it, each
    // round's parallel pass would otherwise be one injection and one sleep/wake of the caller (about 8 µs of the
    // caller's CPU per round, 8 ms over 1,000 rounds), and the caller's serial time is a run's serial share.
    rayon::scope(|_| {
        for q in q0..last {
            let qf = q as f64;
            let factor = qf / (qf + 1.0);
            if let Some(i) = prev {
                // The pick in f64 once per round (exact), shared by every chunk.
                for (o, &v) in pick64.iter_mut().zip(&flat[i * f..(i + 1) * f]) {
                    *o = f64::from(v);
                }
            }
            let p = prev.map(|i| (&pick64[..], sq[i]));
            let best = ks
                .par_chunks_mut(CHUNK_ROWS)
                .zip(flat.par_chunks(CHUNK_ROWS * f))
                .zip(sq.par_chunks(CHUNK_ROWS))
                .zip(kv.par_chunks(CHUNK_ROWS))
                .zip(taken.par_chunks(CHUNK_ROWS))
                .enumerate()
                .map(|(c, ((((ksc, block), sqc), kvc), tk))| {
                    if let Some((pr, sp)) = p {
                        add_kernel_to_pick(ksc, block, sqc, tk, pr, sp, gamma, four_rows);
                    }
                    let mut best: Option<(f64, usize)> = None;
                    for j in 0..tk.len() {
                        if tk[j] {
                            continue;
                        }
                        let v = if q > 0 { kvc[j] - factor * (ksc[j] / qf) } else { kvc[j] };
                        if best.is_none_or(|(b, _)| v > b) {
                            best = Some((v, c * CHUNK_ROWS + j));
                        }
                    }
                    best.map(|(value, index)| Best { value, index })
                })
                .reduce(|| None, better);
            let Some(best) = best else { break };
            taken[best.index] = true;
            sel.indices.push(best.index);
            sel.scores.push(best.value);
            prev = Some(best.index);
        }
    });
    Ok(sel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    fn data(n: usize, f: usize, seed: u64) -> Array2<f32> {
        let mut s = seed;
        Array2::from_shape_simple_fn((n, f), || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 40) as f32) / (1u64 << 24) as f32
        })
    }

    /// The definition, naively: every kernel value from scratch.
    fn naive(x: &Array2<f32>, kv: &[f64], ks0: &[f64], q0: usize, k: usize, gamma: f64) -> Vec<usize> {
        let n = x.nrows();
        let kern = |i: usize, j: usize| {
            (-gamma * x.row(i).iter().zip(x.row(j)).map(|(a, b)| (*a as f64 - *b as f64).powi(2)).sum::<f64>()).exp()
        };
        let mut picked: Vec<usize> = Vec::new();
        for _ in 0..k.min(n) {
            let q = (q0 + picked.len()) as f64;
            let mut best: Option<(f64, usize)> = None;
            for i in (0..n).filter(|i| !picked.contains(i)) {
                let ks = ks0[i] + picked.iter().map(|&p| kern(i, p)).sum::<f64>();
                let v = if q > 0.0 { kv[i] - q / (q + 1.0) * ks / q } else { kv[i] };
                if best.is_none_or(|(b, _)| v > b) {
                    best = Some((v, i));
                }
            }
            picked.push(best.unwrap().1);
        }
        picked
    }

    #[test]
    fn equals_the_definition_and_the_thread_count_does_not_matter() {
        let x = data(5000, 6, 1);
        let kv: Vec<f64> = (0..5000).map(|i| 0.5 + 0.3 * ((i as f64) * 0.37).sin()).collect();
        let ks0: Vec<f64> = (0..5000).map(|i| 0.2 * ((i as f64) * 0.11).cos().abs()).collect();
        for (q0, ks) in [(0usize, vec![0.0; 5000]), (3, ks0)] {
            let got = kernel_greedy(x.view(), &kv, &ks, q0, 30, 2.0).unwrap();
            assert_eq!(got.indices, naive(&x, &kv, &ks, q0, 30, 2.0));
            for threads in [1, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let other = pool.install(|| kernel_greedy(x.view(), &kv, &ks, q0, 30, 2.0).unwrap());
                assert_eq!(other, got);
            }
        }
        // Ties go to the lowest index; more picks than rows returns every row once.
        let same = Array2::<f32>::ones((5, 2));
        assert_eq!(kernel_greedy(same.view(), &[1.0; 5], &[0.0; 5], 0, 9, 1.0).unwrap().indices, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn four_rows_at_a_time_gives_the_same_bits() {
        for f in [6usize, 64, 300] {
            let x = data(3001, f, 7);
            let kv: Vec<f64> = (0..3001).map(|i| 0.5 + 0.3 * ((i as f64) * 0.37).sin()).collect();
            let a = kernel_greedy_with(x.view(), &kv, &vec![0.0; 3001], 0, 40, 0.5 / f as f64, true).unwrap();
            let b = kernel_greedy_with(x.view(), &kv, &vec![0.0; 3001], 0, 40, 0.5 / f as f64, false).unwrap();
            assert_eq!(a.indices, b.indices);
            assert_eq!(
                a.scores.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                b.scores.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
            assert_eq!(a.indices, naive(&x, &kv, &vec![0.0; 3001], 0, 40, 0.5 / f as f64));
        }
    }

    #[test]
    fn bad_input() {
        let x = data(4, 3, 2);
        let z = [0.0; 4];
        assert_eq!(kernel_greedy(x.view(), &z[..3], &z, 0, 1, 1.0).unwrap_err().argument(), Some("kv"));
        assert_eq!(kernel_greedy(x.view(), &z, &z[..2], 0, 1, 1.0).unwrap_err().argument(), Some("ks"));
        assert_eq!(kernel_greedy(x.view(), &z, &z, 0, 1, 0.0).unwrap_err().argument(), Some("gamma"));
        assert_eq!(kernel_greedy(x.t(), &[0.0; 3], &[0.0; 3], 0, 1, 1.0).unwrap_err().argument(), Some("X"));
        let mut bad = x.clone();
        bad[[1, 1]] = f32::NAN;
        assert_eq!(kernel_greedy(bad.view(), &z, &z, 0, 1, 1.0).unwrap_err(), Error::NonFinite { name: "X" });
        assert_eq!(kernel_greedy(x.view(), &[f64::NAN; 4], &z, 0, 1, 1.0).unwrap_err().argument(), Some("kv"));
        // q0 + k overflows: an error naming q0 (it used to wrap to an empty range of rounds: no picks).
        assert_eq!(kernel_greedy(x.view(), &z, &z, usize::MAX - 1, 3, 1.0).unwrap_err().argument(), Some("q0"));
        assert_eq!(kernel_greedy(x.view(), &z, &z, usize::MAX - 3, 3, 1.0).unwrap().indices.len(), 3);
    }
}
