//! An owner's bid index: 8-bit screening with exact re-scoring (issue 8; DESIGN.md §4).
//!
//! Every round an owner answers `argmax_{x not offered} h1(x)·v`, with the value and the winner defined
//! by the exact kernel of [`crate::bids`]: f32 × f32 products summed in f64 in a fixed order, the lowest
//! index on ties. Reading all N × d f32 hashes every round is memory-bound (numpy's float32 matvec runs
//! at the same speed), so this index stores each hash coordinate in 8 bits, a quarter of the traffic, and
//! proves which rows could still win:
//!
//! * **Codes.** `h_ij ≈ a·q_ij` with one public step `a` and `q_ij ∈ [-127, 127]`, stored as the byte
//!   `q_ij + 128`. At build time the index records `E = max |h_ij − a q_ij|` and `S = max |a q_ij|`,
//!   both measured on the data (so they are rigorous whatever the input).
//! * **Screen.** Per query, `v_j ≈ b·r_j + c·t_j` with two 8-bit digits `r_j, t_j ∈ [-127, 127]` and
//!   `c = b/254`; the integers `I_r = Σ_j q_ij r_j` and `I_t = Σ_j q_ij t_j` are exact (AVX-512 VNNI
//!   `vpdpbusd` on 16 rows at a time, two per 64-byte load, or a portable loop: same integers). Since
//!   `h·v − (ab I_r + ac I_t) = (h − aq)·v + aq·(v − br − ct)`, every row's exact value is at most
//!   `UB = ab I_r + ac I_t + E‖v‖₁ + S‖v − br − ct‖₁ + margin`, where the margin covers every f64
//!   rounding, including that of the exact kernel's own sum. The second digit makes the v-term
//!   negligible: the window is set by the codes' error E alone (5x fewer re-scorings than one digit).
//! * **Re-score.** A row is re-scored exactly only if its bound could still beat the best exact value
//!   found so far (strictly, or by a tie with a lower index). The exact value needs the row's exact f32
//!   hash: read from the f32 hashes ([`HashSource`]) or recomputed from the raw row
//!   ([`RowSource`]; h1 is row-canonical, see [`crate::rff`]), so the index itself holds only the codes.
//!
//! Rows are split into chunks of 4096 scanned in parallel. Each chunk computes all its bounds (and each
//! 16-row group's maximum) into a 32 kB buffer, re-scores the row with the largest bound first (a good
//! lower bound at once), then walks its groups in order, skipping whole groups whose maximum is below
//! the best value. Chunks share the best value found so far through an atomic and skip rows whose bound
//! is strictly below it. Any row skipped is provably not the winner, so the result is the exact
//! kernel's, independent of the thread count. A query allocates O(d), never O(N).

use std::sync::atomic::{AtomicU64, Ordering};

use ndarray::ArrayView2;
use rayon::prelude::*;

use crate::bids::{Best, better};
use crate::error::{Error, Result, check_finite_f32};
use crate::rff::{RffProjection, RowElement, rows_as_f32};
use crate::simd;

/// Rows scored together (one 512-bit vector of 16 i32 sums).
const GROUP: usize = 16;
/// Groups per parallel chunk: 4096 rows.
const CHUNK_GROUPS: usize = 256;
/// The largest dimension whose integer sums cannot overflow i32: 255 · 127 · d < 2^31.
pub const MAX_DIM: usize = 65_000;
const QMAX: f64 = 127.0;
const ROUND_MAGIC: f64 = 6_755_399_441_055_744.0;

/// How a query went: the best row and how many rows were re-scored exactly.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Query {
    pub best: Option<Best>,
    pub rescored: usize,
}

/// Where the exact f32 hash of a row comes from when it must be re-scored.
pub trait ExactSource: Sync {
    /// `Err` unless the source describes `n` rows of `d` hash coordinates.
    fn check(&self, n: usize, d: usize) -> Result<()>;
    /// The exact kernel's value `h_i · v` (f32 products summed in f64, fixed order).
    fn value(&self, i: usize, v: &[f32], scratch: &mut Scratch) -> f64;
}

/// Per-thread buffers of the exact re-scoring.
#[derive(Default)]
pub struct Scratch {
    row: Vec<f32>,
    hash: Vec<f32>,
}

/// The owner's f32 hashes, shape (N, d), any strides.
pub struct HashSource<'a>(pub ArrayView2<'a, f32>);

impl ExactSource for HashSource<'_> {
    fn check(&self, n: usize, d: usize) -> Result<()> {
        if self.0.dim() != (n, d) {
            return Err(Error::shape(
                "hashes",
                format!("has shape {:?}, the index was built for ({n}, {d})", self.0.dim()),
            ));
        }
        Ok(())
    }

    fn value(&self, i: usize, v: &[f32], scratch: &mut Scratch) -> f64 {
        let row = self.0.row(i);
        match row.as_slice() {
            Some(r) => simd::dot_f32_f64(r, v),
            None => {
                scratch.hash.clear();
                scratch.hash.extend(row.iter().copied());
                simd::dot_f32_f64(&scratch.hash, v)
            }
        }
    }
}

/// The owner's raw rows (N, n_features), f32 or f64, any strides, and the public h1: the exact hash of a
/// row is recomputed (bit-identical to the hash the index was built from).
pub struct RowSource<'a, T: RowElement> {
    pub rows: ArrayView2<'a, T>,
    pub projection: &'a RffProjection,
}

impl<T: RowElement> ExactSource for RowSource<'_, T> {
    fn check(&self, n: usize, d: usize) -> Result<()> {
        if self.rows.nrows() != n || self.rows.ncols() != self.projection.n_features() || self.projection.dim() != d {
            return Err(Error::shape(
                "rows",
                format!(
                    "have shape {:?} with a projection of {} features to {}, the index was built for {n} rows of dim {d}",
                    self.rows.dim(),
                    self.projection.n_features(),
                    self.projection.dim()
                ),
            ));
        }
        Ok(())
    }

    fn value(&self, i: usize, v: &[f32], scratch: &mut Scratch) -> f64 {
        scratch.row.clear();
        scratch.row.extend(self.rows.row(i).iter().map(|x| x.to_f32()));
        scratch.hash.resize(self.projection.dim(), 0.0);
        self.projection.hash_row(&scratch.row, &mut scratch.hash);
        simd::dot_f32_f64(&scratch.hash, v)
    }
}

/// One owner's 8-bit codes of its hashed rows and the mask of rows it has offered.
#[derive(Clone, Debug)]
pub struct BidIndex {
    n: usize,
    d: usize,
    /// ceil(d / 4): 4-byte words per row.
    words: usize,
    /// Group-interleaved codes: group g, word k, lane l, byte b at `((g·words + k)·16 + l)·4 + b`.
    codes: Vec<u8>,
    /// The step `a` (an f32 value, so `a·q` is exact in f64).
    step: f64,
    /// `S = max |a q|` over all codes.
    code_max: f64,
    /// `E = max |h − a q|` over all entries.
    code_err: f64,
    offered: Vec<u64>,
    n_offered: usize,
}

/// Codes and error statistics of one chunk of rows (row-major, `d` per row).
fn quantize_rows(rows: &[f32], d: usize, words: usize, step: f64, first_group_codes: &mut [u8]) -> (f64, f64) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 is available (checked just above).
            return unsafe { quantize_rows_avx2(rows, d, words, step, first_group_codes) };
        }
    }
    quantize_rows_imp(rows, d, words, step, first_group_codes)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn quantize_rows_avx2(rows: &[f32], d: usize, words: usize, step: f64, codes: &mut [u8]) -> (f64, f64) {
    quantize_rows_imp(rows, d, words, step, codes)
}

#[inline(always)]
fn quantize_rows_imp(rows: &[f32], d: usize, words: usize, step: f64, first_group_codes: &mut [u8]) -> (f64, f64) {
    let (mut err, mut max) = ([0.0f64; 8], [0.0f64; 8]);
    let inv = 1.0 / step;
    let mut q = vec![128u8; words * 4];
    // Element-wise in eight fixed lanes so that it vectorises. The code may be any integer near x/a:
    // E and S are measured from the code actually stored. Round to nearest by the 1.5 * 2^52 trick
    // (|x/a| <= 127 after the clamp), which unlike f64::round needs no SSE4.1.
    let one = |x: f32, c: &mut u8, e: &mut f64, m: &mut f64| {
        let x = x as f64;
        let k = ((x * inv).clamp(-QMAX, QMAX) + ROUND_MAGIC) - ROUND_MAGIC;
        let aq = step * k;
        let de = (x - aq).abs();
        let dm = aq.abs();
        *e = if de > *e { de } else { *e };
        *m = if dm > *m { dm } else { *m };
        *c = (k as i32 + 128) as u8;
    };
    for (r, h) in rows.chunks_exact(d).enumerate() {
        let (g, lane) = (r / GROUP, r % GROUP);
        let hc = h.chunks_exact(8);
        let tail = hc.remainder();
        for (cq, cx) in q.chunks_exact_mut(8).zip(hc) {
            for l in 0..8 {
                one(cx[l], &mut cq[l], &mut err[l], &mut max[l]);
            }
        }
        let t0 = d - tail.len();
        for (l, &x) in tail.iter().enumerate() {
            one(x, &mut q[t0 + l], &mut err[l], &mut max[l]);
        }
        for (k, w) in q.chunks_exact(4).enumerate() {
            let at = ((g * words + k) * GROUP + lane) * 4;
            first_group_codes[at..at + 4].copy_from_slice(w);
        }
    }
    (err.iter().fold(0.0f64, |a, &b| a.max(b)), max.iter().fold(0.0f64, |a, &b| a.max(b)))
}

/// The error of a query or hash that found row `i` of the source different from what the index was built from.
fn changed_error(i: usize) -> Error {
    Error::value(
        "X",
        format!(
            "row {i} of the array the bid index was built from has changed since (overwritten after construction); \
             build a new index from the current array, or do not modify it while the index is in use"
        ),
    )
}

fn check_dim(d: usize) -> Result<()> {
    if d == 0 || d > MAX_DIM {
        return Err(Error::shape("hashes", format!("dim must be between 1 and {MAX_DIM}, got {d}")));
    }
    Ok(())
}

impl BidIndex {
    /// An index of `n` rows of dimension `d` with every code at zero, allocated fallibly: the code
    /// array (`n * d` bytes) can be far larger than the rows it is built from when `d >> n_features`.
    fn empty(n: usize, d: usize, step: f64) -> Result<Self> {
        let words = d.div_ceil(4);
        let groups = n.div_ceil(GROUP);
        let bytes = groups
            .checked_mul(words)
            .and_then(|x| x.checked_mul(GROUP * 4))
            .ok_or_else(|| Error::shape("X", format!("{n} rows of dimension {d} overflow the index size")))?;
        let codes = crate::limits::try_filled("X", bytes, usize::MAX / 2, 128u8)?;
        let offered = crate::limits::try_filled("X", n.div_ceil(64), usize::MAX / 16, 0u64)?;
        Ok(BidIndex { n, d, words, codes, step, code_max: 0.0, code_err: 0.0, offered, n_offered: 0 })
    }

    fn chunk_bytes(&self) -> usize {
        CHUNK_GROUPS * self.words * GROUP * 4
    }

    /// The index of f32 hashes `h` (N, d), any strides. Errors on non-finite values.
    pub fn from_hashes(h: ArrayView2<'_, f32>) -> Result<Self> {
        let (n, d) = h.dim();
        check_dim(d)?;
        // Allocate the codes before reading `h`: a broadcast view can describe far more rows than memory
        // holds, and the scan of its values would run for hours before the allocation failed. The step
        // is set once the scan has measured `max |h|`.
        let mut index = Self::empty(n, d, 0.0)?;
        let hmax = h
            .axis_chunks_iter(ndarray::Axis(0), CHUNK_GROUPS * GROUP)
            .into_par_iter()
            .map(|c| c.iter().fold((true, 0.0f32), |(ok, m), &x| (ok & x.is_finite(), m.max(x.abs()))))
            .reduce(|| (true, 0.0), |a, b| (a.0 & b.0, a.1.max(b.1)));
        let (finite, hmax) = hmax;
        if !finite {
            return Err(Error::NonFinite { name: "hashes" });
        }
        // a = max|h| / 127 rounded to f32; any a > 0 is valid because E and S are measured.
        let step = ((hmax / 127.0).max(f32::MIN_POSITIVE)) as f64;
        index.step = step;
        let chunk_rows = CHUNK_GROUPS * GROUP;
        let (words, cb) = (index.words, index.chunk_bytes());
        let (err, max) = index
            .codes
            .par_chunks_mut(cb)
            .enumerate()
            .map_init(Vec::new, |buf: &mut Vec<f32>, (c, codes)| {
                let start = c * chunk_rows;
                let end = (start + chunk_rows).min(n);
                let block = h.slice(ndarray::s![start..end, ..]);
                let rows: &[f32] = match block.to_slice() {
                    Some(s) => s,
                    None => {
                        buf.clear();
                        buf.extend(block.iter().copied());
                        buf
                    }
                };
                quantize_rows(rows, d, words, step, codes)
            })
            .reduce(|| (0.0, 0.0), |a, b| (a.0.max(b.0), a.1.max(b.1)));
        index.code_err = err;
        index.code_max = max;
        Ok(index)
    }

    /// The index of `h1(x)` for the raw rows `x` (N, n_features), f32 or f64, any strides, hashed block
    /// by block: the (N, d) f32 hashes are never held. Errors on non-finite values.
    pub fn from_rows<T: RowElement>(x: ArrayView2<'_, T>, projection: &RffProjection) -> Result<Self> {
        let (n, nf) = x.dim();
        let d = projection.dim();
        check_dim(d)?;
        if nf != projection.n_features() {
            return Err(Error::shape(
                "X",
                format!("has {nf} features per row, the hasher was built for {}", projection.n_features()),
            ));
        }
        // |h1(x)_j| <= sqrt(2/d) (1 + 2e-7): the step is fixed in advance, E and S are still measured.
        let bound = (2.0 / d as f64).sqrt() * (1.0 + 1e-6);
        let step = ((bound / QMAX) as f32) as f64;
        let mut index = Self::empty(n, d, step)?;
        let chunk_rows = CHUNK_GROUPS * GROUP;
        let (words, cb) = (index.words, index.chunk_bytes());
        let stats = index
            .codes
            .par_chunks_mut(cb)
            .enumerate()
            .map_init(
                || (Vec::new(), Vec::new()),
                |(xbuf, hbuf): &mut (Vec<f32>, Vec<f32>), (c, codes)| -> Result<(f64, f64)> {
                    let start = c * chunk_rows;
                    let end = (start + chunk_rows).min(n);
                    let rows = end - start;
                    let xs = rows_as_f32(x.slice(ndarray::s![start..end, ..]), xbuf)?;
                    hbuf.resize(rows * d, 0.0);
                    projection.hash_rows(xs, rows, hbuf);
                    crate::rff::check_hashed(hbuf)?;
                    Ok(quantize_rows(hbuf, d, words, step, codes))
                },
            )
            .try_reduce(|| (0.0, 0.0), |a, b| Ok((a.0.max(b.0), a.1.max(b.1))))?;
        index.code_err = stats.0;
        index.code_max = stats.1;
        Ok(index)
    }

    pub fn n_rows(&self) -> usize {
        self.n
    }

    pub fn dim(&self) -> usize {
        self.d
    }

    pub fn n_offered(&self) -> usize {
        self.n_offered
    }

    /// Bytes held by the codes (about N · d).
    pub fn code_bytes(&self) -> usize {
        self.codes.len()
    }

    /// `(a, S, E)`: the step, the largest |a q| and the largest quantization error.
    pub fn code_stats(&self) -> (f64, f64, f64) {
        (self.step, self.code_max, self.code_err)
    }

    pub fn is_offered(&self, i: usize) -> bool {
        i < self.n && self.offered[i / 64] >> (i % 64) & 1 == 1
    }

    /// Mark row `i` offered (never bid again). Returns false if it already was.
    pub fn mark_offered(&mut self, i: usize) -> Result<bool> {
        if i >= self.n {
            return Err(Error::value("index", format!("{i} is not a row (the index has {} rows)", self.n)));
        }
        if self.is_offered(i) {
            return Ok(false);
        }
        self.offered[i / 64] |= 1 << (i % 64);
        self.n_offered += 1;
        Ok(true)
    }

    /// The offered mask as one bool per row.
    pub fn offered_mask(&self) -> Vec<bool> {
        (0..self.n).map(|i| self.is_offered(i)).collect()
    }

    /// The exact kernel's best row not offered for the broadcast `v` (None when every row is offered).
    pub fn best<S: ExactSource>(&self, v: &[f32], source: &S) -> Result<Option<Best>> {
        Ok(self.query(v, source)?.best)
    }

    /// [`Self::best`] with the number of rows re-scored exactly.
    pub fn query<S: ExactSource>(&self, v: &[f32], source: &S) -> Result<Query> {
        if v.len() != self.d {
            return Err(Error::shape("v", format!("has length {}, the index has dim {}", v.len(), self.d)));
        }
        check_finite_f32("v", v.iter().copied())?;
        source.check(self.n, self.d)?;
        if self.n_offered == self.n {
            return Ok(Query { best: None, rescored: 0 });
        }
        let plan = Plan::new(self, v);
        let global = AtomicU64::new(order_key(f64::NEG_INFINITY));
        let chunk_rows = CHUNK_GROUPS * GROUP;
        let cb = self.chunk_bytes();
        let (best, rescored, changed) = self
            .codes
            .par_chunks(cb)
            .enumerate()
            .map_init(Scratch::default, |scratch, (c, codes)| {
                self.scan_chunk(&plan, codes, c * chunk_rows, v, source, &global, scratch)
            })
            .reduce(|| (None, 0, None), |a, b| (better(a.0, b.0), a.1 + b.1, a.2.or(b.2)));
        if let Some(i) = changed {
            return Err(changed_error(i));
        }
        Ok(Query { best, rescored })
    }

    /// The code of row `i`, coordinate `j` (in [-127, 127]).
    fn code(&self, i: usize, j: usize) -> i32 {
        let (g, lane, k, b) = (i / GROUP, i % GROUP, j / 4, j % 4);
        i32::from(self.codes[((g * self.words + k) * GROUP + lane) * 4 + b]) - 128
    }

    /// `Ok` when `h` (the exact f32 hash of row `i`, read from the source now) is the hash the index was
    /// built from, to the codes' measured error: `|h_j − a q_ij| <= E` for every j. An `Err` means the
    /// array the index reads was overwritten after the index was built.
    pub fn check_row_hash(&self, i: usize, h: &[f32]) -> Result<()> {
        if i >= self.n {
            return Err(Error::value("index", format!("{i} is not a row (the index has {} rows)", self.n)));
        }
        if h.len() != self.d {
            return Err(Error::shape(
                "X",
                format!("row {i} hashes to {} values, the index has dim {}", h.len(), self.d),
            ));
        }
        let tol = self.code_err * (1.0 + 1e-9) + 1e-300;
        for (j, &x) in h.iter().enumerate() {
            let x = x as f64;
            if !x.is_finite() || (x - self.step * f64::from(self.code(i, j))).abs() > tol {
                return Err(changed_error(i));
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn scan_chunk<S: ExactSource>(
        &self,
        plan: &Plan,
        codes: &[u8],
        start: usize,
        v: &[f32],
        source: &S,
        global: &AtomicU64,
        scratch: &mut Scratch,
    ) -> (Option<Best>, usize, Option<usize>) {
        let group_bytes = self.words * GROUP * 4;
        let groups = codes.len() / group_bytes;
        // Pass 1: the upper bound of every row of the chunk (32 kB, stays in cache) and of every group.
        let mut ub = [0.0f64; CHUNK_GROUPS * GROUP];
        let mut gmax = [f64::NEG_INFINITY; CHUNK_GROUPS];
        let ub = &mut ub[..groups * GROUP];
        for (g, u) in ub.chunks_exact_mut(GROUP).enumerate() {
            let Ok(u): std::result::Result<&mut [f64; GROUP], _> = u.try_into() else { continue };
            gmax[g] = group_bounds(&codes[g * group_bytes..(g + 1) * group_bytes], plan, u);
        }
        let rows = (self.n - start).min(groups * GROUP);
        let mut rescored = 0usize;
        let mut best: Option<Best> = None;
        let mut changed: Option<usize> = None;
        // The exact value of a row the index was built from lies within `slack` of the screen's estimate,
        // i.e. in [bound − 2 slack, bound]. A value outside (or not finite) means the source array was
        // overwritten after the index was built: the query fails rather than answer from changed data.
        let window = 2.0 * plan.slack;
        let mut rescore = |i: usize, bound: f64, best: &mut Option<Best>, scratch: &mut Scratch| {
            rescored += 1;
            let value = source.value(start + i, v, scratch);
            let tol = 1e-12 * bound.abs().max(value.abs()) + 1e-300;
            if !value.is_finite() || value > bound + tol || value < bound - window - tol {
                changed = changed.or(Some(start + i));
                return;
            }
            *best = better(*best, Some(Best { value, index: start + i }));
            global.fetch_max(order_key(value), Ordering::Relaxed);
        };
        let global_best = || key_value(global.load(Ordering::Relaxed));
        // The row with the largest bound of the group with the largest bound first: a good lower bound
        // at once (skipped if every row of that group is offered or padding).
        let top_group = (0..groups).fold(0, |t, g| if gmax[g] > gmax[t] { g } else { t });
        let top = (top_group * GROUP..(top_group + 1) * GROUP)
            .filter(|&i| i < rows && !self.is_offered(start + i))
            .fold(None, |t: Option<usize>, i| if t.is_none_or(|t| ub[i] > ub[t]) { Some(i) } else { t });
        if let Some(t) = top
            && ub[t] >= global_best()
        {
            rescore(t, ub[t], &mut best, scratch);
        }
        // Pass 2, in row order. A row is skipped when its bound is below the best value of any chunk
        // (strictly: that row beats it), or below this chunk's best value, or equal to it with a higher
        // index (the tie goes to the lower index).
        for (g, u) in ub.chunks_exact(GROUP).enumerate() {
            let floor = best.map_or(f64::NEG_INFINITY, |b| b.value).max(global_best());
            if gmax[g] < floor {
                continue;
            }
            for (lane, &bound) in u.iter().enumerate() {
                let i = g * GROUP + lane;
                if i >= rows || bound < floor || self.is_offered(start + i) || bound < global_best() {
                    continue;
                }
                if let Some(b) = best
                    && (start + i == b.index || bound < b.value || (bound == b.value && start + i > b.index))
                {
                    continue;
                }
                rescore(i, bound, &mut best, scratch);
            }
        }
        (best, rescored, changed)
    }
}

/// The per-query quantities of the screen: integer weights and the bound's constants.
///
/// `v_j ≈ b r_j + c t_j` with `r_j, t_j ∈ [-127, 127]` and `c = b/254` (two 8-bit digits), so the
/// screen's own error on v is about 2^-16 of max|v| and the bound is dominated by the codes' error E.
struct Plan {
    /// `r` and `t` packed four bytes per word, the second (signed) operand of `vpdpbusd`.
    r: Vec<i32>,
    t: Vec<i32>,
    /// `128 Σ r_j` and `128 Σ t_j`: the integer sums see codes `q + 128`.
    offset_r: f64,
    offset_t: f64,
    /// `a·b` and `a·c`.
    ab: f64,
    ac: f64,
    /// Everything added to `ab·I_r + ac·I_t` to bound the exact kernel's value.
    slack: f64,
}

fn pack(x: &[i8]) -> Vec<i32> {
    x.chunks_exact(4).map(|w| i32::from_le_bytes([w[0] as u8, w[1] as u8, w[2] as u8, w[3] as u8])).collect()
}

impl Plan {
    fn new(index: &BidIndex, v: &[f32]) -> Self {
        let d = index.d;
        let vmax = v.iter().fold(0.0f64, |m, &x| m.max((x as f64).abs()));
        let b = vmax / QMAX;
        let c = b / (2.0 * QMAX);
        let mut r = vec![0i8; index.words * 4];
        let mut t = vec![0i8; index.words * 4];
        let (mut v1, mut ev1) = (0.0f64, 0.0f64);
        for (j, &x) in v.iter().enumerate() {
            let x = x as f64;
            let (qr, qt) = if b > 0.0 {
                let qr = (x / b).round().clamp(-QMAX, QMAX);
                let qt = ((x - b * qr) / c).round().clamp(-QMAX, QMAX);
                (qr, qt)
            } else {
                (0.0, 0.0)
            };
            r[j] = qr as i8;
            t[j] = qt as i8;
            v1 += x.abs();
            ev1 += (x - b * qr - c * qt).abs();
        }
        let offset_r = 128.0 * r.iter().map(|&x| f64::from(x)).sum::<f64>();
        let offset_t = 128.0 * t.iter().map(|&x| f64::from(x)).sum::<f64>();
        let (ab, ac) = (index.step * b, index.step * c);
        let (s, e) = (index.code_max, index.code_err);
        // |h·v − (ab I_r + ac I_t)| <= E‖v‖₁ + S‖v − br − ct‖₁ (real arithmetic). Every f64 rounding (the
        // terms here, the bound's own products and sums, and the exact kernel's d-term sum, at most
        // d·u·Σ|h_j v_j|) is covered by the relative 1e-9 and the margin below.
        let terms = e * v1 + s * ev1;
        let margin =
            (d as f64 + 8.0) * 2.3e-16 * ((ab + ac) * 255.0 * QMAX * d as f64 * 2.0 + 2.0 * (s + e) * v1 + terms);
        Plan { r: pack(&r), t: pack(&t), offset_r, offset_t, ab, ac, slack: terms * (1.0 + 1e-9) + margin }
    }

    /// An upper bound on the exact kernel's value of a row with integer sums `ir`, `it` (codes q + 128).
    #[inline(always)]
    fn upper(&self, ir: i32, it: i32) -> f64 {
        self.ab * (f64::from(ir) - self.offset_r) + (self.ac * (f64::from(it) - self.offset_t) + self.slack)
    }
}

/// A u64 whose unsigned order is the order of finite f64 values (and -inf lowest).
fn order_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 { !b } else { b | (1 << 63) }
}

fn key_value(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// The upper bound of each of the 16 rows of one group (exact integer sums, then [`Plan::upper`]),
/// and their maximum (padding lanes included: it only decides what to look at first).
fn group_bounds(codes: &[u8], plan: &Plan, out: &mut [f64; GROUP]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        if vnni_available() {
            // SAFETY: AVX-512F/VNNI are available; codes has plan.r.len() · 64 bytes.
            return unsafe { vnni::group_bounds(codes, plan, out) };
        }
    }
    let (mut ir, mut it) = ([0i32; GROUP], [0i32; GROUP]);
    group_sums_portable(codes, &plan.r, &mut ir);
    group_sums_portable(codes, &plan.t, &mut it);
    let mut m = f64::NEG_INFINITY;
    for l in 0..GROUP {
        out[l] = plan.upper(ir[l], it[l]);
        m = m.max(out[l]);
    }
    m
}

#[cfg(target_arch = "x86_64")]
fn vnni_available() -> bool {
    use std::sync::OnceLock;
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vnni"))
}

/// `out[l] = Σ_k Σ_b code[k][l][b] · r[k][b]` for the 16 rows of one group (exact integers).
fn group_sums_portable(codes: &[u8], rq: &[i32], out: &mut [i32; GROUP]) {
    *out = [0; GROUP];
    for (k, &w) in rq.iter().enumerate() {
        let r = w.to_le_bytes();
        let word = &codes[k * GROUP * 4..(k + 1) * GROUP * 4];
        for (lane, c) in word.chunks_exact(4).enumerate() {
            let mut s = 0i32;
            for b in 0..4 {
                s += i32::from(c[b]) * i32::from(r[b] as i8);
            }
            out[lane] += s;
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod vnni {
    use super::GROUP;
    use std::arch::x86_64::*;

    /// Both digit sums of one group: each 64-byte load of codes feeds two `vpdpbusd`.
    #[target_feature(enable = "avx512f,avx512vnni")]
    pub(super) unsafe fn group_sums(
        codes: &[u8],
        r: &[i32],
        t: &[i32],
        out_r: &mut [i32; GROUP],
        out_t: &mut [i32; GROUP],
    ) {
        let words = r.len();
        assert!(codes.len() >= words * 64 && t.len() == words);
        let p = codes.as_ptr();
        let (mut r0, mut r1, mut t0, mut t1) =
            (_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512());
        let mut k = 0;
        while k + 2 <= words {
            // SAFETY: k + 1 < words, so both 64-byte loads are inside codes.
            let (h0, h1) = unsafe {
                (_mm512_loadu_si512(p.add(k * 64) as *const _), _mm512_loadu_si512(p.add((k + 1) * 64) as *const _))
            };
            r0 = _mm512_dpbusd_epi32(r0, h0, _mm512_set1_epi32(r[k]));
            t0 = _mm512_dpbusd_epi32(t0, h0, _mm512_set1_epi32(t[k]));
            r1 = _mm512_dpbusd_epi32(r1, h1, _mm512_set1_epi32(r[k + 1]));
            t1 = _mm512_dpbusd_epi32(t1, h1, _mm512_set1_epi32(t[k + 1]));
            k += 2;
        }
        if k < words {
            // SAFETY: k < words.
            let h = unsafe { _mm512_loadu_si512(p.add(k * 64) as *const _) };
            r0 = _mm512_dpbusd_epi32(r0, h, _mm512_set1_epi32(r[k]));
            t0 = _mm512_dpbusd_epi32(t0, h, _mm512_set1_epi32(t[k]));
        }
        // SAFETY: each output holds 16 i32.
        unsafe {
            _mm512_storeu_si512(out_r.as_mut_ptr() as *mut _, _mm512_add_epi32(r0, r1));
            _mm512_storeu_si512(out_t.as_mut_ptr() as *mut _, _mm512_add_epi32(t0, t1));
        }
    }

    /// [`super::group_bounds`]: the sums, then `ab (I_r − o_r) + (ac (I_t − o_t) + slack)` with the same
    /// operations in the same order as [`super::Plan::upper`] (no FMA), so the bounds are bit-identical.
    #[target_feature(enable = "avx512f,avx512vnni")]
    pub(super) unsafe fn group_bounds(codes: &[u8], plan: &super::Plan, out: &mut [f64; GROUP]) -> f64 {
        let (mut ir, mut it) = ([0i32; GROUP], [0i32; GROUP]);
        // SAFETY: forwarded from the caller.
        unsafe { group_sums(codes, &plan.r, &plan.t, &mut ir, &mut it) };
        let (ab, ac, slack) = (_mm512_set1_pd(plan.ab), _mm512_set1_pd(plan.ac), _mm512_set1_pd(plan.slack));
        let (or, ot) = (_mm512_set1_pd(plan.offset_r), _mm512_set1_pd(plan.offset_t));
        let mut m = _mm512_set1_pd(f64::NEG_INFINITY);
        for half in 0..2 {
            // SAFETY: 8 i32 at ir/it[8 half..], 8 f64 at out[8 half..].
            unsafe {
                let xr = _mm512_cvtepi32_pd(_mm256_loadu_si256(ir.as_ptr().add(8 * half) as *const _));
                let xt = _mm512_cvtepi32_pd(_mm256_loadu_si256(it.as_ptr().add(8 * half) as *const _));
                let a = _mm512_mul_pd(ab, _mm512_sub_pd(xr, or));
                let b = _mm512_add_pd(_mm512_mul_pd(ac, _mm512_sub_pd(xt, ot)), slack);
                let u = _mm512_add_pd(a, b);
                _mm512_storeu_pd(out.as_mut_ptr().add(8 * half), u);
                m = _mm512_max_pd(m, u);
            }
        }
        _mm512_reduce_max_pd(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bids;
    use crate::rng::public_key_from_u64;
    use ndarray::Array2;

    fn lcg(seed: &mut u64) -> f32 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((*seed >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }

    fn exact(h: &Array2<f32>, offered: &[bool], v: &[f32]) -> Option<Best> {
        bids::best_row(h.view(), Some(offered), v).unwrap()
    }

    #[test]
    fn integer_sums_agree_on_every_path() {
        let mut s = 7u64;
        for d in [1usize, 3, 4, 5, 8, 17, 140] {
            let h = Array2::from_shape_fn((37, d), |_| lcg(&mut s));
            let idx = BidIndex::from_hashes(h.view()).unwrap();
            let v: Vec<f32> = (0..d).map(|_| lcg(&mut s)).collect();
            let plan = Plan::new(&idx, &v);
            let gb = idx.words * GROUP * 4;
            for g in 0..idx.codes.len() / gb {
                let c = &idx.codes[g * gb..(g + 1) * gb];
                let (mut r, mut t) = ([0i32; GROUP], [0i32; GROUP]);
                group_sums_portable(c, &plan.r, &mut r);
                group_sums_portable(c, &plan.t, &mut t);
                #[cfg(target_arch = "x86_64")]
                if vnni_available() {
                    let (mut r2, mut t2) = ([0i32; GROUP], [0i32; GROUP]);
                    unsafe { vnni::group_sums(c, &plan.r, &plan.t, &mut r2, &mut t2) };
                    assert_eq!((r, t), (r2, t2));
                }
                let mut u = [0.0f64; GROUP];
                let m = group_bounds(c, &plan, &mut u);
                for l in 0..GROUP {
                    assert_eq!(u[l], plan.upper(r[l], t[l]));
                }
                assert_eq!(m, u.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b)));
            }
        }
    }

    #[test]
    fn bound_holds_for_every_row() {
        let mut s = 11u64;
        for scale in [1e-30f32, 1e-3, 1.0, 1e20] {
            let h = Array2::from_shape_fn((500, 23), |_| lcg(&mut s) * scale);
            let idx = BidIndex::from_hashes(h.view()).unwrap();
            let v: Vec<f32> = (0..23).map(|_| lcg(&mut s) * 3.0).collect();
            let plan = Plan::new(&idx, &v);
            let gb = idx.words * GROUP * 4;
            for i in 0..500 {
                let (g, l) = (i / GROUP, i % GROUP);
                let mut u = [0.0f64; GROUP];
                group_bounds(&idx.codes[g * gb..(g + 1) * gb], &plan, &mut u);
                let value = simd::dot_f32_f64(h.row(i).as_slice().unwrap(), &v);
                assert!(value <= u[l], "row {i}: {value} > {}", u[l]);
                // and the bound is tight: the value is within 2 slack of it
                assert!(value >= u[l] - 2.0 * plan.slack * (1.0 + 1e-9));
            }
        }
    }

    #[test]
    fn same_winner_as_the_exact_kernel_random_and_offered() {
        let mut s = 3u64;
        for (n, d) in [(1usize, 1usize), (15, 4), (5000, 140), (10_000, 33)] {
            let h = Array2::from_shape_fn((n, d), |_| lcg(&mut s) * 0.12);
            let mut idx = BidIndex::from_hashes(h.view()).unwrap();
            let mut offered = vec![false; n];
            for round in 0..20 {
                let v: Vec<f32> = (0..d).map(|_| lcg(&mut s)).collect();
                let want = exact(&h, &offered, &v);
                let got = idx.best(&v, &HashSource(h.view())).unwrap();
                assert_eq!(got, want, "n={n} d={d} round {round}");
                if let Some(b) = got {
                    idx.mark_offered(b.index).unwrap();
                    offered[b.index] = true;
                }
            }
        }
    }

    #[test]
    fn ties_near_ties_equal_rows_and_zero_v() {
        let d = 140;
        let v: Vec<f32> = (0..d).map(|j| ((j % 17) as f32 - 8.0) * 0.01).collect();
        // all rows equal: the lowest index (not offered) wins
        let h = Array2::<f32>::from_elem((9000, d), 0.05);
        let mut idx = BidIndex::from_hashes(h.view()).unwrap();
        assert_eq!(idx.best(&v, &HashSource(h.view())).unwrap().unwrap().index, 0);
        idx.mark_offered(0).unwrap();
        idx.mark_offered(1).unwrap();
        assert_eq!(idx.best(&v, &HashSource(h.view())).unwrap().unwrap().index, 2);
        // zero v: everything ties at 0
        let zero = vec![0.0f32; d];
        let q = idx.query(&zero, &HashSource(h.view())).unwrap();
        assert_eq!(q.best.unwrap().index, 2);
        assert!(q.rescored <= 1 + 9000 / 4096 + 1, "rescored {}", q.rescored);
        // near ties: one ulp apart, in different chunks
        let mut h = Array2::from_shape_fn((9000, d), |(i, j)| (((i * 13 + j * 7) % 101) as f32 - 50.0) * 1e-3);
        for r in [10usize, 4500, 8999] {
            for j in 0..d {
                h[[r, j]] = 0.1 * v[j].signum();
            }
        }
        h[[4500, 3]] = f32::from_bits(h[[4500, 3]].to_bits() + 1);
        let idx = BidIndex::from_hashes(h.view()).unwrap();
        let off = vec![false; 9000];
        assert_eq!(idx.best(&v, &HashSource(h.view())).unwrap(), exact(&h, &off, &v));
        // exact ties across chunks
        h[[4500, 3]] = h[[10, 3]];
        let idx = BidIndex::from_hashes(h.view()).unwrap();
        assert_eq!(idx.best(&v, &HashSource(h.view())).unwrap().unwrap().index, 10);
    }

    #[test]
    fn a_source_changed_after_construction_is_refused() {
        let mut s = 11u64;
        let (n, d) = (5000usize, 24usize);
        let h = Array2::from_shape_fn((n, d), |_| lcg(&mut s) * 0.2);
        let v: Vec<f32> = (0..d).map(|_| lcg(&mut s)).collect();
        let idx = BidIndex::from_hashes(h.view()).unwrap();
        let win = idx.best(&v, &HashSource(h.view())).unwrap().unwrap().index;
        for change in 0..3 {
            let mut g = h.clone();
            match change {
                0 => g.fill(f32::NAN),
                1 => g.row_mut(win).mapv_inplace(|x| x + 0.05),
                _ => g.mapv_inplace(|x| -x),
            }
            let err = idx.best(&v, &HashSource(g.view())).unwrap_err();
            assert!(err.to_string().contains("changed since"), "{err}");
            assert!(idx.check_row_hash(win, g.row(win).as_slice().unwrap()).is_err());
        }
        assert!(idx.check_row_hash(win, h.row(win).as_slice().unwrap()).is_ok());
        let small = h.slice(ndarray::s![..10, ..]);
        assert!(idx.best(&v, &HashSource(small)).is_err());
    }

    #[test]
    fn raw_rows_give_the_winner_of_the_exact_kernel_on_their_hashes() {
        let p = RffProjection::from_key(public_key_from_u64("h1", 9), 12, 140, 0.1).unwrap();
        let mut s = 5u64;
        let x = Array2::from_shape_fn((20_000, 12), |_| lcg(&mut s) * 4.0);
        let h = p.transform_f32(x.view()).unwrap();
        let mut idx = BidIndex::from_rows(x.view(), &p).unwrap();
        let hidx = BidIndex::from_hashes(h.view()).unwrap();
        let src = RowSource { rows: x.view(), projection: &p };
        let x64 = x.mapv(|a| a as f64);
        let src64 = RowSource { rows: x64.view(), projection: &p };
        let mut offered = vec![false; 20_000];
        for _ in 0..10 {
            let v: Vec<f32> = (0..140).map(|_| lcg(&mut s)).collect();
            let want = exact(&h, &offered, &v);
            let q = idx.query(&v, &src).unwrap();
            assert_eq!(q.best, want);
            assert_eq!(idx.best(&v, &src64).unwrap(), want);
            assert!(q.rescored < 200, "rescored {}", q.rescored);
            let b = want.unwrap().index;
            idx.mark_offered(b).unwrap();
            offered[b] = true;
        }
        let v: Vec<f32> = (0..140).map(|_| lcg(&mut s)).collect();
        assert_eq!(hidx.best(&v, &HashSource(h.view())).unwrap(), exact(&h, &vec![false; 20_000], &v));
    }

    #[test]
    fn bad_input() {
        let h = Array2::<f32>::zeros((4, 3));
        let mut idx = BidIndex::from_hashes(h.view()).unwrap();
        let src = HashSource(h.view());
        assert_eq!(idx.best(&[1.0, 2.0], &src).unwrap_err().argument(), Some("v"));
        assert_eq!(idx.best(&[f32::NAN; 3], &src).unwrap_err().argument(), Some("v"));
        let other = Array2::<f32>::zeros((5, 3));
        assert_eq!(idx.best(&[1.0; 3], &HashSource(other.view())).unwrap_err().argument(), Some("hashes"));
        assert_eq!(idx.mark_offered(4).unwrap_err().argument(), Some("index"));
        assert!(idx.mark_offered(3).unwrap());
        assert!(!idx.mark_offered(3).unwrap());
        let mut bad = Array2::<f32>::zeros((4, 3));
        bad[[2, 1]] = f32::INFINITY;
        assert!(BidIndex::from_hashes(bad.view()).is_err());
        assert!(BidIndex::from_hashes(Array2::<f32>::zeros((4, 0)).view()).is_err());
        for i in 0..4 {
            idx.mark_offered(i).unwrap();
        }
        assert_eq!(idx.best(&[1.0; 3], &src).unwrap(), None);
        let empty = Array2::<f32>::zeros((0, 3));
        let e = BidIndex::from_hashes(empty.view()).unwrap();
        assert_eq!(e.best(&[1.0; 3], &HashSource(empty.view())).unwrap(), None);
    }

    #[test]
    fn a_broadcast_source_too_large_to_index_fails_at_once() {
        // One row broadcast to 2^50 rows (a numpy stride-0 view): its codes (2^52 bytes) cannot be
        // allocated. The index used to scan all 2^52 values for max |h| first (hours) before failing.
        let row = [0.25f32; 4];
        let one = ndarray::ArrayView2::from_shape((1, 4), &row[..]).unwrap();
        let tall = one.broadcast((1usize << 50, 4)).unwrap();
        let t0 = std::time::Instant::now();
        assert_eq!(BidIndex::from_hashes(tall).unwrap_err().argument(), Some("X"));
        assert!(t0.elapsed().as_secs() < 10, "took {:?}", t0.elapsed());
    }
}
