//! Greedy selection toward a target in hash space (the nominations protocol, issues 12 and 15).
//!
//! Given hashed rows `H` (n × d, f32), a target `t` (d, f64) and `k`, pick rows one at a time: in
//! round `r`, with `S` the `q = r` rows chosen so far, choose
//!
//! ```text
//!     argmax_x  score(x) = h(x)·t − (1/(q+1)) Σ_{s∈S} h(x)·h(s)
//! ```
//!
//! over the rows neither chosen nor `taken`, ties to the lowest index. This is the greedy step that
//! minimises `‖t − mean_{S∪{x}} h‖²` (the `‖h(x)‖²` term is dropped, as in the paper's greedy, DESIGN
//! §4; the hashes of h1 all have nearly the same norm). The aggregator runs it over the pooled nominee
//! hashes toward the validation mean, "central greedy" over all hashes, and every owner over its
//! candidates toward its tilted target ([`crate::nominate`]).
//!
//! **Exact and thread-count independent.** `h(x)·t` is the f32 row widened to f64 times the f64 target,
//! summed in eight fixed lanes; `h(x)·h(s)` is a product of two f32 values (exact in f64) summed in the
//! same eight lanes (bit-identical to [`crate::bids`]'s exact kernel). `C(x) = Σ_{s∈S} h(x)·h(s)` is
//! kept per row and updated once per round in selection order, so every score is a fixed sequence of
//! f64 operations per row, whatever the thread count or chunking; the winner is the maximum under the
//! total order (score, then lowest index). Cost: one pass over `H` per round, `O(k·n·d)` in all, and
//! `O(n)` memory beyond `H` (no n × n matrix).

use ndarray::ArrayView2;
use rayon::prelude::*;

use crate::bids::{Best, better};
use crate::error::{Error, Result, check_finite_f64, try_filled};
use crate::simd::dispatch_avx512_avx2;

/// Rows per parallel task of a round: 512 rows × 500 dims of f32 is 1 MB.
const CHUNK_ROWS: usize = 512;

/// The rows picked, in selection order, and the score each had when it was picked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selection {
    pub indices: Vec<usize>,
    pub scores: Vec<f64>,
}

/// Sum of eight lanes in the fixed order of [`crate::simd`]'s exact dot product.
#[inline(always)]
pub(crate) fn reduce8(a: &[f64; 8]) -> f64 {
    ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
}

/// `Σ_j row_j · v_j` with `row` widened to f64, for four rows at once (four independent accumulator
/// chains). Each result is bit-identical to [`dot1`] of that row: eight lanes over the first
/// `8⌊d/8⌋` entries, reduced by [`reduce8`], plus the tail summed in order.
#[inline(always)]
pub(crate) fn dot4<V: Copy + Into<f64>>(rows: [&[f32]; 4], v: &[V]) -> [f64; 4] {
    let d = v.len();
    let main = d - d % 8;
    let mut acc = [[0.0f64; 8]; 4];
    let (v8, vt) = v.split_at(main);
    let [r0, r1, r2, r3] = rows;
    let it = v8.chunks_exact(8).zip(r0[..main].chunks_exact(8)).zip(r1[..main].chunks_exact(8));
    let it = it.zip(r2[..main].chunks_exact(8)).zip(r3[..main].chunks_exact(8));
    for ((((c, a0), a1), a2), a3) in it {
        for l in 0..8 {
            let w: f64 = c[l].into();
            acc[0][l] += a0[l] as f64 * w;
            acc[1][l] += a1[l] as f64 * w;
            acc[2][l] += a2[l] as f64 * w;
            acc[3][l] += a3[l] as f64 * w;
        }
    }
    let mut out = [0.0f64; 4];
    for (r, row) in rows.iter().enumerate() {
        let mut tail = 0.0f64;
        for (x, &w) in row[main..d].iter().zip(vt) {
            tail += *x as f64 * w.into();
        }
        out[r] = reduce8(&acc[r]) + tail;
    }
    out
}

/// The one-row version of [`dot4`] (same operations, same order).
#[inline(always)]
pub(crate) fn dot1<V: Copy + Into<f64>>(row: &[f32], v: &[V]) -> f64 {
    let d = v.len();
    let main = d - d % 8;
    let mut acc = [0.0f64; 8];
    for (c, a) in v[..main].chunks_exact(8).zip(row[..main].chunks_exact(8)) {
        for l in 0..8 {
            let w: f64 = c[l].into();
            acc[l] += a[l] as f64 * w;
        }
    }
    let mut tail = 0.0f64;
    for (x, &w) in row[main..d].iter().zip(&v[main..]) {
        tail += *x as f64 * w.into();
    }
    reduce8(&acc) + tail
}

/// `out[i] = h_i · v` for the rows of a row-major block, four rows at a time (each row's value bit-identical
/// to [`dot1`]'s). Where the CPU has AVX-512F, [`block_dots_avx512`] computes the same bits.
#[inline(always)]
pub(crate) fn block_dots(block: &[f32], v: &[f64], out: &mut [f64]) {
    let d = v.len();
    let n = out.len();
    #[cfg(target_arch = "x86_64")]
    {
        if n.checked_mul(d).is_some_and(|len| block.len() >= len) && std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (checked just above) and `block` holds `n` rows of `d` values.
            unsafe { block_dots_avx512(block, v, out) };
            return;
        }
    }
    let mut i = 0;
    while i + 4 <= n {
        let r = |k: usize| &block[(i + k) * d..(i + k + 1) * d];
        let s = dot4([r(0), r(1), r(2), r(3)], v);
        out[i..i + 4].copy_from_slice(&s);
        i += 4;
    }
    while i < n {
        out[i] = dot1(&block[i * d..(i + 1) * d], v);
        i += 1;
    }
}

/// [`block_dots`] with explicit AVX-512 registers: one row's eight lanes of [`dot1`] in one zmm register (lane
/// `l` sums the products of entries `l, l + 8, l + 16, …` in order, each product `f64(x) · v`, then `+`: no FMA),
/// four rows in flight, then [`reduce8`] and the tail in [`dot1`]'s order, so each value has [`dot1`]'s bits.
/// (The compiler's own vectorisation of [`dot4`] shuffles four rows' scalars into registers instead: the
/// exact-kernel greedy's rounds were measurably slower with it.)
///
/// # Safety
/// The CPU supports AVX-512F and `block.len() >= out.len() * v.len()`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn block_dots_avx512(block: &[f32], v: &[f64], out: &mut [f64]) {
    use std::arch::x86_64::*;
    let d = v.len();
    let n = out.len();
    let main = d - d % 8;
    let (bp, vp) = (block.as_ptr(), v.as_ptr());
    let mut i = 0;
    while i + 4 <= n {
        // SAFETY (every load): row i + r < n starts at (i + r) d and k + 8 <= main <= d, inside `block`
        // (block.len() >= n d) and inside `v` (k + 8 <= d).
        let rows = unsafe { [bp.add(i * d), bp.add((i + 1) * d), bp.add((i + 2) * d), bp.add((i + 3) * d)] };
        let mut acc = [_mm512_setzero_pd(); 4];
        let mut k = 0;
        while k < main {
            let w = unsafe { _mm512_loadu_pd(vp.add(k)) };
            for (a, &r) in acc.iter_mut().zip(&rows) {
                let x = _mm512_cvtps_pd(unsafe { _mm256_loadu_ps(r.add(k)) });
                *a = _mm512_add_pd(*a, _mm512_mul_pd(x, w));
            }
            k += 8;
        }
        for (r, a) in acc.iter().enumerate() {
            out[i + r] = finish_row(*a, &block[(i + r) * d..(i + r + 1) * d], v, main);
        }
        i += 4;
    }
    while i < n {
        let r = unsafe { bp.add(i * d) };
        let mut a = _mm512_setzero_pd();
        let mut k = 0;
        while k < main {
            let x = _mm512_cvtps_pd(unsafe { _mm256_loadu_ps(r.add(k)) });
            a = _mm512_add_pd(a, _mm512_mul_pd(x, unsafe { _mm512_loadu_pd(vp.add(k)) }));
            k += 8;
        }
        out[i] = finish_row(a, &block[i * d..(i + 1) * d], v, main);
        i += 1;
    }
}

/// [`reduce8`] of the eight lanes of `acc`, plus the tail `row[main..] · v[main..]` summed in order ([`dot1`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn finish_row(acc: std::arch::x86_64::__m512d, row: &[f32], v: &[f64], main: usize) -> f64 {
    let mut lanes = [0.0f64; 8];
    // SAFETY: `lanes` holds eight f64.
    unsafe { std::arch::x86_64::_mm512_storeu_pd(lanes.as_mut_ptr(), acc) };
    let mut tail = 0.0f64;
    for (x, &w) in row[main..].iter().zip(&v[main..]) {
        tail += *x as f64 * w;
    }
    reduce8(&lanes) + tail
}

dispatch_avx512_avx2! {
fn row_dots_f64(block: &[f32], v: &[f64], out: &mut [f64]) -> () {
    block_dots(block, v, out)
}
}

/// The better of the current best and a candidate, the candidate having a larger index than the best.
#[inline(always)]
fn consider(best: &mut Option<(f64, usize)>, value: f64, index: usize) {
    match *best {
        Some((b, _)) if value <= b => {}
        _ => *best = Some((value, index)),
    }
}

dispatch_avx512_avx2! {
fn round_chunk(cross: &mut [f64], block: &[f32], base: &[f64], blocked: &[bool], prev: Option<&[f32]>, denom: f64, start: usize) -> Option<(f64, usize)> {
    // One round over a chunk of rows: add `h_i · h_prev` to `cross[i]` for every open row, then the
    // best open row by `base[i] − cross[i] / denom` (lowest index on ties).
    let n = base.len();
    let mut best: Option<(f64, usize)> = None;
    match prev {
        Some(p) => {
            let d = p.len();
            let mut i = 0;
            while i < n {
                let m = (n - i).min(4);
                if m == 4 && !(blocked[i] && blocked[i + 1] && blocked[i + 2] && blocked[i + 3]) {
                    let r = |k: usize| &block[(i + k) * d..(i + k + 1) * d];
                    let s = dot4([r(0), r(1), r(2), r(3)], p);
                    for k in 0..4 {
                        if !blocked[i + k] {
                            cross[i + k] += s[k];
                            consider(&mut best, base[i + k] - cross[i + k] / denom, start + i + k);
                        }
                    }
                } else if m < 4 {
                    for k in 0..m {
                        if !blocked[i + k] {
                            cross[i + k] += dot1(&block[(i + k) * d..(i + k + 1) * d], p);
                            consider(&mut best, base[i + k] - cross[i + k] / denom, start + i + k);
                        }
                    }
                }
                i += m;
            }
        }
        None => {
            for i in 0..n {
                if !blocked[i] {
                    consider(&mut best, base[i] - cross[i] / denom, start + i);
                }
            }
        }
    }
    best
}
}

/// Greedy selection of up to `k` rows of `h` (n × d, row-major f32) toward `target` (module docs).
///
/// Rows marked in `taken` are never picked. Returns fewer than `k` rows when the open rows run out
/// (so `min(k, n − #taken)` rows). Errors on shape mismatches, a non-row-major `h`, non-finite values
/// or when the O(n) work arrays cannot be allocated.
pub fn greedy_select(h: ArrayView2<'_, f32>, target: &[f64], k: usize, taken: Option<&[bool]>) -> Result<Selection> {
    let (n, d) = h.dim();
    if d == 0 {
        return Err(Error::shape("hashes", "has no columns"));
    }
    if target.len() != d {
        return Err(Error::shape("target", format!("has length {}, the hashes have {d} columns", target.len())));
    }
    if let Some(m) = taken
        && m.len() != n
    {
        return Err(Error::shape("taken", format!("has length {}, expected {n} (one per row)", m.len())));
    }
    let flat = h.to_slice().ok_or_else(|| Error::shape("hashes", "must be C-contiguous (row-major)"))?;
    check_finite_f64("target", target.iter().copied())?;
    let finite = flat.par_chunks(CHUNK_ROWS * d).all(|c| c.iter().all(|x| x.is_finite()));
    if !finite {
        return Err(Error::NonFinite { name: "hashes" });
    }
    greedy_unchecked(flat, d, target, k, taken)
}

/// [`greedy_select`] on a validated row-major slice (`flat.len() == n·d`, finite values).
pub(crate) fn greedy_unchecked(
    flat: &[f32],
    d: usize,
    target: &[f64],
    k: usize,
    taken: Option<&[bool]>,
) -> Result<Selection> {
    let n = flat.len() / d;
    let open = n - taken.map_or(0, |m| m.iter().filter(|&&t| t).count());
    let k = k.min(open);
    let mut sel = Selection::default();
    sel.indices.try_reserve_exact(k).map_err(|_| Error::value("k", format!("{k} picks could not be allocated")))?;
    sel.scores.try_reserve_exact(k).map_err(|_| Error::value("k", format!("{k} picks could not be allocated")))?;
    if k == 0 {
        return Ok(sel);
    }
    let mut base = try_filled("hashes", n, 0.0f64)?;
    let mut cross = try_filled("hashes", n, 0.0f64)?;
    let mut blocked = match taken {
        Some(m) => {
            let mut b = try_filled("taken", n, false)?;
            b.copy_from_slice(m);
            b
        }
        None => try_filled("hashes", n, false)?,
    };
    base.par_chunks_mut(CHUNK_ROWS)
        .zip(flat.par_chunks(CHUNK_ROWS * d))
        .for_each(|(b, block)| row_dots_f64(block, target, b));
    let mut prev: Option<usize> = None;
    // The rounds run on a worker of the current pool (`rayon::scope`), not one injection per round from the
    // caller's thread (see `kernel_greedy`).
    rayon::scope(|_| {
        for r in 0..k {
            let denom = (r + 1) as f64;
            let p = prev.map(|i| &flat[i * d..(i + 1) * d]);
            let best = cross
                .par_chunks_mut(CHUNK_ROWS)
                .zip(flat.par_chunks(CHUNK_ROWS * d))
                .zip(base.par_chunks(CHUNK_ROWS))
                .zip(blocked.par_chunks(CHUNK_ROWS))
                .enumerate()
                .map(|(c, (((cr, block), b), bl))| {
                    round_chunk(cr, block, b, bl, p, denom, c * CHUNK_ROWS).map(|(value, index)| Best { value, index })
                })
                .reduce(|| None, better);
            let Some(best) = best else { break };
            sel.indices.push(best.index);
            sel.scores.push(best.value);
            blocked[best.index] = true;
            prev = Some(best.index);
        }
    });
    Ok(sel)
}

/// Domain separation of the stochastic greedy's stream from the candidate sample's Gumbel variates.
pub const STOCHASTIC_DOMAIN: u64 = 0x5354_4f43_4841_5354; // "STOCHAST"

/// Rows a round of [`stochastic_greedy_select`] evaluates: `⌈(n/k)·r⌉`, at least 1 and at most `n`
/// (Mirzasoleiman et al. 2015 use `r = ln(1/ε)`, for a `1 − 1/e − ε` guarantee on monotone submodular
/// objectives).
pub fn stochastic_sample_size(n: usize, k: usize, factor: f64) -> usize {
    if n == 0 || k == 0 {
        return 0;
    }
    let s = (n as f64 / k.min(n) as f64 * factor).ceil();
    if s.is_nan() || s < 1.0 {
        1
    } else if s >= n as f64 {
        n
    } else {
        s as usize
    }
}

/// Stochastic greedy (Mirzasoleiman, Badanidiyuru, Karbasi, Vondrák & Krause 2015, "Lazier than lazy
/// greedy"): the greedy of the module docs, except that round `r` evaluates only `sample` rows drawn
/// uniformly without replacement from the rows still open, and picks the best of them.
///
/// The score of a sampled row `x` after `q` picks is `h(x)·t − h(x)·Σ_S h / (q+1)`, with `h(x)·t`
/// computed once per row as in [`greedy_select`] and `Σ_S h` the f64 sum of the picked hashes in selection
/// order ([`dot1`] for the second product): `O(d)` per evaluation, `O(k·sample·d + n·d)` in all instead of
/// `O(k·n·d)`. The draw is a partial Fisher–Yates shuffle of the open list (initially `0..n` in order; a
/// pick leaves it by `swap_remove` at its position), position `j` of round `r` swapped with
/// `j + u mod (open − j)`, `u` the next SplitMix64 output of the stream `seed ^` [`STOCHASTIC_DOMAIN`]
/// (counter from 0, one per draw). Ties go to the lowest row index. The result is a deterministic function
/// of the hashes, the target, `k`, `sample` and `seed` (sequential: no thread-count dependence). With
/// `sample ≥ n` every open row is evaluated each round: the exact greedy, up to the f64 rounding of the
/// cross term. The randomness is public (not a privacy mechanism).
pub fn stochastic_greedy_select(
    h: ArrayView2<'_, f32>,
    target: &[f64],
    k: usize,
    sample: usize,
    seed: u64,
) -> Result<Selection> {
    let d = h.ncols();
    if d == 0 {
        return Err(Error::shape("hashes", "has no columns"));
    }
    if target.len() != d {
        return Err(Error::shape("target", format!("has length {}, the hashes have {d} columns", target.len())));
    }
    if sample == 0 {
        return Err(Error::value("sample_size", "must be at least 1"));
    }
    let flat = h.to_slice().ok_or_else(|| Error::shape("hashes", "must be C-contiguous (row-major)"))?;
    check_finite_f64("target", target.iter().copied())?;
    if !flat.par_chunks(CHUNK_ROWS * d.max(1)).all(|c| c.iter().all(|x| x.is_finite())) {
        return Err(Error::NonFinite { name: "hashes" });
    }
    stochastic_unchecked(flat, d, target, k, sample, seed)
}

dispatch_avx512_avx2! {
fn best_of_sample(flat: &[f32], d: usize, base: &[f64], sum: &[f64], sample: &[usize], denom: f64) -> Option<(f64, usize, usize)> {
    // (score, row, position in `sample`) of the best sampled row: base[i] - h_i . sum / denom, the
    // lowest row index among equal scores. The same operations on every instruction set.
    let mut best: Option<(f64, usize, usize)> = None;
    for (pos, &i) in sample.iter().enumerate() {
        let v = base[i] - dot1(&flat[i * d..(i + 1) * d], sum) / denom;
        let better_one = match best {
            None => true,
            Some((b, bi, _)) => v > b || (v == b && i < bi),
        };
        if better_one {
            best = Some((v, i, pos));
        }
    }
    best
}
}

dispatch_avx512_avx2! {
fn add_row(sum: &mut [f64], row: &[f32]) -> () {
    for (a, &x) in sum.iter_mut().zip(row) {
        *a += x as f64;
    }
}
}

/// [`stochastic_greedy_select`] on a validated row-major slice.
pub(crate) fn stochastic_unchecked(
    flat: &[f32],
    d: usize,
    target: &[f64],
    k: usize,
    sample: usize,
    seed: u64,
) -> Result<Selection> {
    let n = flat.len() / d;
    let k = k.min(n);
    let mut sel = Selection::default();
    sel.indices.try_reserve_exact(k).map_err(|_| Error::value("k", format!("{k} picks could not be allocated")))?;
    sel.scores.try_reserve_exact(k).map_err(|_| Error::value("k", format!("{k} picks could not be allocated")))?;
    if k == 0 {
        return Ok(sel);
    }
    let mut base = try_filled("hashes", n, 0.0f64)?;
    base.par_chunks_mut(CHUNK_ROWS)
        .zip(flat.par_chunks(CHUNK_ROWS * d))
        .for_each(|(b, block)| row_dots_f64(block, target, b));
    let mut open: Vec<usize> = Vec::new();
    open.try_reserve_exact(n).map_err(|_| Error::value("hashes", format!("{n} row indices could not be allocated")))?;
    open.extend(0..n);
    let mut sum = try_filled("hashes", d, 0.0f64)?;
    let stream = seed ^ STOCHASTIC_DOMAIN;
    let mut counter = 0u64;
    for r in 0..k {
        let m = open.len();
        let s = sample.min(m);
        for j in 0..s {
            let u = crate::rng::splitmix64(stream, counter);
            counter += 1;
            let jj = j + (u % (m - j) as u64) as usize;
            open.swap(j, jj);
        }
        let denom = (r + 1) as f64;
        let Some((v, i, pos)) = best_of_sample(flat, d, &base, &sum, &open[..s], denom) else { break };
        open.swap_remove(pos);
        add_row(&mut sum, &flat[i * d..(i + 1) * d]);
        sel.indices.push(i);
        sel.scores.push(v);
    }
    Ok(sel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    fn lcg(seed: &mut u64) -> f64 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((*seed >> 11) as f64) / (1u64 << 53) as f64
    }

    fn random(n: usize, d: usize, seed: u64) -> (Array2<f32>, Vec<f64>) {
        let mut s = seed;
        let scale = (2.0 / d as f64).sqrt();
        let h = Array2::from_shape_simple_fn((n, d), || (scale * (2.0 * lcg(&mut s) - 1.0)) as f32);
        let t = (0..d).map(|_| 0.3 * scale * (2.0 * lcg(&mut s) - 1.0)).collect();
        (h, t)
    }

    /// The definition, evaluated naively: every score from scratch in f64 (products summed in order).
    fn naive(h: &Array2<f32>, t: &[f64], k: usize, taken: Option<&[bool]>) -> Selection {
        let (n, d) = h.dim();
        let dot = |i: usize, j: usize| (0..d).map(|c| h[[i, c]] as f64 * h[[j, c]] as f64).sum::<f64>();
        let mut chosen: Vec<usize> = Vec::new();
        let mut out = Selection::default();
        for _ in 0..k {
            let q = chosen.len() as f64;
            let mut best: Option<(f64, usize)> = None;
            for i in 0..n {
                if chosen.contains(&i) || taken.is_some_and(|m| m[i]) {
                    continue;
                }
                let base: f64 = (0..d).map(|c| h[[i, c]] as f64 * t[c]).sum();
                let cross: f64 = chosen.iter().map(|&s| dot(i, s)).sum();
                consider(&mut best, base - cross / (q + 1.0), i);
            }
            let Some((v, i)) = best else { break };
            chosen.push(i);
            out.indices.push(i);
            out.scores.push(v);
        }
        out
    }

    #[test]
    fn dot4_is_four_dot1_and_dot1_is_the_exact_kernel() {
        for d in [1usize, 7, 8, 9, 33, 140, 500] {
            let (h, t) = random(4, d, d as u64);
            let r = |i: usize| h.row(i).to_slice().unwrap();
            let four = dot4([r(0), r(1), r(2), r(3)], &t);
            for (i, &f) in four.iter().enumerate() {
                assert_eq!(f, dot1(r(i), &t));
                // With an f32 vector every product is exact: the same bits as the bid kernel.
                let v: Vec<f32> = h.row((i + 1) % 4).to_vec();
                assert_eq!(dot1(r(i), &v), crate::simd::dot_f32_f64(r(i), &v));
            }
        }
    }

    #[test]
    fn block_dots_has_the_bits_of_dot1_for_every_width_and_row_count() {
        // The AVX-512 path where the CPU has it, the portable one elsewhere: the same bits as dot1 row by row,
        // with and without a tail (d not a multiple of 8), with and without rows left after the groups of four.
        for d in [1usize, 5, 8, 13, 64, 300, 500] {
            for n in [0usize, 1, 3, 4, 7, 9] {
                let (h, _) = random(n.max(1), d, (d * 31 + n) as u64);
                let flat = h.as_slice().unwrap();
                let v: Vec<f64> = (0..d).map(|j| ((j as f64) * 0.731).sin() * 1.3 + 1e-9 * j as f64).collect();
                let mut out = vec![f64::NAN; n];
                block_dots(&flat[..n * d], &v, &mut out);
                for (i, o) in out.iter().enumerate() {
                    assert_eq!(o.to_bits(), dot1(&flat[i * d..(i + 1) * d], &v).to_bits(), "d {d} n {n} row {i}");
                }
            }
        }
    }

    #[test]
    fn hand_computed_three_rows() {
        // h0 = (1, 0), h1 = (0, 1), h2 = (0.5, 0.5); t = (0.6, 0.5).
        // Round 0: scores 0.6, 0.5, 0.55 -> row 0 (0.6).
        // Round 1 (q=1): h·t − h·h0/2: row 1: 0.5 − 0 = 0.5; row 2: 0.55 − 0.25 = 0.30 -> row 1 (0.5).
        // Round 2 (q=2): row 2: 0.55 − (0.5 + 0.5)/3 = 0.21666...
        let h = Array2::from_shape_vec((3, 2), vec![1.0f32, 0.0, 0.0, 1.0, 0.5, 0.5]).unwrap();
        let s = greedy_select(h.view(), &[0.6, 0.5], 5, None).unwrap();
        assert_eq!(s.indices, vec![0, 1, 2]);
        assert_eq!(s.scores[0], 0.6);
        assert_eq!(s.scores[1], 0.5);
        assert!((s.scores[2] - (0.55 - 1.0 / 3.0)).abs() < 1e-15);
        let s = greedy_select(h.view(), &[0.6, 0.5], 5, Some(&[true, false, false])).unwrap();
        // Without row 0: row 2 (0.55), then row 1: 0.5 − 0.5/2 = 0.25.
        assert_eq!(s.indices, vec![2, 1]);
        assert_eq!(s.scores, vec![0.55, 0.25]);
    }

    #[test]
    fn equals_the_naive_definition() {
        for (n, d, k) in [(50usize, 7usize, 50usize), (1300, 33, 40), (700, 140, 25)] {
            let (h, t) = random(n, d, 7 + n as u64);
            let mut taken = vec![false; n];
            for i in (0..n).step_by(5) {
                taken[i] = true;
            }
            for m in [None, Some(&taken[..])] {
                let got = greedy_select(h.view(), &t, k, m).unwrap();
                let want = naive(&h, &t, k, m);
                assert_eq!(got.indices, want.indices, "n={n} d={d}");
                for (a, b) in got.scores.iter().zip(&want.scores) {
                    assert!((a - b).abs() < 1e-12, "{a} {b}");
                }
            }
        }
    }

    #[test]
    fn independent_of_the_thread_count_and_ties_go_low() {
        let (mut h, t) = random(3000, 50, 3);
        // Duplicate rows: equal scores always, so the lower copy must win first.
        for j in 0..50 {
            h[[2999, j]] = h[[17, j]];
            h[[1500, j]] = h[[17, j]];
        }
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| greedy_select(h.view(), &t, 200, None).unwrap())
        };
        let one = run(1);
        for threads in [2, 3, 5] {
            let other = run(threads);
            assert_eq!(one.indices, other.indices);
            assert_eq!(
                one.scores.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                other.scores.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            );
        }
        let pos = |i: usize| one.indices.iter().position(|&x| x == i);
        if let Some(p17) = pos(17) {
            assert!(pos(1500).is_none_or(|p| p > p17) && pos(2999).is_none_or(|p| p > p17));
        } else {
            assert!(pos(1500).is_none() && pos(2999).is_none());
        }
        let equal = Array2::<f32>::ones((9, 4));
        assert_eq!(greedy_select(equal.view(), &[1.0; 4], 9, None).unwrap().indices, (0..9).collect::<Vec<_>>());
    }

    #[test]
    fn runs_out_of_rows_and_edge_cases() {
        let (h, t) = random(10, 3, 1);
        assert_eq!(greedy_select(h.view(), &t, 25, None).unwrap().indices.len(), 10);
        let mut taken = vec![true; 10];
        taken[4] = false;
        assert_eq!(greedy_select(h.view(), &t, 3, Some(&taken)).unwrap().indices, vec![4]);
        assert_eq!(greedy_select(h.view(), &t, 0, None).unwrap(), Selection::default());
        let empty = Array2::<f32>::zeros((0, 3));
        assert_eq!(greedy_select(empty.view(), &t, 4, None).unwrap(), Selection::default());
    }

    #[test]
    fn bad_input() {
        let (h, t) = random(10, 3, 1);
        assert_eq!(greedy_select(h.view(), &t[..2], 1, None).unwrap_err().argument(), Some("target"));
        assert_eq!(greedy_select(h.view(), &t, 1, Some(&[false; 3])).unwrap_err().argument(), Some("taken"));
        assert_eq!(greedy_select(h.t(), &[0.0; 10], 1, None).unwrap_err().argument(), Some("hashes"));
        assert_eq!(greedy_select(h.view(), &[f64::NAN, 0.0, 0.0], 1, None).unwrap_err().argument(), Some("target"));
        let mut bad = h.clone();
        bad[[9, 2]] = f32::INFINITY;
        assert_eq!(greedy_select(bad.view(), &t, 1, None).unwrap_err(), Error::NonFinite { name: "hashes" });
        let nocols = Array2::<f32>::zeros((3, 0));
        assert_eq!(greedy_select(nocols.view(), &[], 1, None).unwrap_err().argument(), Some("hashes"));
    }
    #[test]
    fn stochastic_with_every_row_sampled_is_the_exact_greedy() {
        for (n, d, k) in [(60usize, 7usize, 60usize), (900, 33, 40)] {
            let (h, t) = random(n, d, 11 + n as u64);
            let exact = greedy_select(h.view(), &t, k, None).unwrap();
            let st = stochastic_greedy_select(h.view(), &t, k, n, 5).unwrap();
            assert_eq!(st.indices, exact.indices);
            for (a, b) in st.scores.iter().zip(&exact.scores) {
                assert!((a - b).abs() < 1e-12, "{a} {b}");
            }
        }
    }

    #[test]
    fn stochastic_is_deterministic_and_seed_dependent() {
        let (h, t) = random(2000, 40, 21);
        let a = stochastic_greedy_select(h.view(), &t, 100, 30, 7).unwrap();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
        let b = pool.install(|| stochastic_greedy_select(h.view(), &t, 100, 30, 7).unwrap());
        assert_eq!(a, b);
        let c = stochastic_greedy_select(h.view(), &t, 100, 30, 8).unwrap();
        assert_ne!(a.indices, c.indices);
        let mut seen = a.indices.clone();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 100);
        // More picks than rows: every row once.
        let (h2, t2) = random(12, 5, 3);
        let all = stochastic_greedy_select(h2.view(), &t2, 40, 2, 1).unwrap();
        let mut idx = all.indices.clone();
        idx.sort();
        assert_eq!(idx, (0..12).collect::<Vec<_>>());
    }

    #[test]
    fn stochastic_sample_sizes_and_bad_input() {
        assert_eq!(stochastic_sample_size(8000, 2000, 100f64.ln()), 19);
        assert_eq!(stochastic_sample_size(10, 20, 3.0), 3);
        assert_eq!(stochastic_sample_size(10, 5, 9.0), 10);
        assert_eq!(stochastic_sample_size(10, 5, 0.0), 1);
        assert_eq!(stochastic_sample_size(0, 5, 1.0), 0);
        let (h, t) = random(10, 3, 1);
        assert_eq!(stochastic_greedy_select(h.view(), &t, 1, 0, 0).unwrap_err().argument(), Some("sample_size"));
        assert_eq!(stochastic_greedy_select(h.view(), &t[..2], 1, 2, 0).unwrap_err().argument(), Some("target"));
        let mut bad = h.clone();
        bad[[3, 1]] = f32::NAN;
        assert_eq!(stochastic_greedy_select(bad.view(), &t, 1, 2, 0).unwrap_err(), Error::NonFinite { name: "hashes" });
    }
}
