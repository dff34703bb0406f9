//! h1: random Fourier features (paper Alg. 1; Rahimi & Recht 2007).
//!
//! `ω_j ~ N(0, 2γ I_n)`, `b_j ~ U[0, 2π)`, `h1(x)_j = sqrt(2/d) · cos(ω_j·x + b_j)`, `j = 1..d`, so that
//! `E[h1(x)·h1(y)] = exp(−γ‖x−y‖²)`. Every coordinate lies in `[−sqrt(2/d), sqrt(2/d)]` and `‖h1(x)‖² ≤ 2`.
//!
//! ω and b are public: they are drawn from a ChaCha20 stream keyed by a public seed with portable
//! arithmetic (`libm`), so they are bit-identical on every machine.
//!
//! **The kernel.** With AVX-512, a blocked matrix product fused with the cosine: ω is packed once,
//! tile-major (`omega_padded`), and each block of rows is worked through in cache blocks (a panel of
//! at most 256 columns of ω, a pass over at most 256 features at a time), so that the rows, the
//! panel and the partial products stay in the L2 cache at every shape. Each register tile (8 rows ×
//! 48 columns, or 6 × 64 when that pads `dim` less) is accumulated in 24 zmm registers; a pass that
//! does not end the features stores its partial products in the output, and the next pass continues
//! from them; the last pass checks each projection against the cosine's domain, turns it into
//! `sqrt(2/d)·cos(z + b)` in registers (`simd::cos16`) and stores it. Elsewhere the product
//! (`project`: with AVX2 and FMA in the same cache blocks, `project_blocked`), the check and
//! [`crate::simd::cos_scale_inplace`] are three passes over a cache-resident block. The transform runs in parallel over row blocks on the current rayon pool
//! (the bindings' `threads=` picks the pool); small calls use smaller blocks so that every thread
//! gets work ([`block_rows_for`]). Every value of the (N, d) output is overwritten, whatever it held ([`RffProjection::transform_into`]): the
//! transform allocates it zeroed by the allocator ([`crate::limits::try_zeroed_f32`]: fresh pages, huge
//! pages where Linux allows), so the pages are first touched by the threads that fill them, and the
//! Python binding may pass the memory of an earlier, freed result instead (`bindings::outbuf`).
//!
//! **Row-canonical.** Every projection `z_j = ω_j·x` is one fused-multiply-add chain over the features
//! in index order, starting from +0 (`z ← fma(x_k, ω_kj, z)`, k = 0..n), whatever the block, the tile,
//! the passes over the features (a partial product is stored and reloaded exactly, as f32),
//! the thread count or the instruction set (AVX-512, AVX2+FMA or the portable `mul_add` loop), and the
//! cosine is the same sequence of f32 operations on every path. So `h1(x)` of a row is bit-identical
//! whether the row is hashed alone ([`RffProjection::hash_row`]) or inside a matrix, in any call size,
//! on any thread count: the aggregator verifies a bought row by recomputing its hash bit for bit, and
//! an owner can keep its hashes in 8 bits and recompute the exact f32 hash of the few rows that need it
//! (`crate::bid_index`).
//!
//! **Accuracy (float32).** One rounding per feature in the chain: `|z_j − exact| ≤ n·2⁻²⁴·Σ_k |x_k ω_kj|`
//! (worst case; typically about `sqrt(n)` unit roundoffs); the cosine adds at most 2e-7 for
//! `|z + b| < COS_DOMAIN`; so `|h1_j − exact| ≤ sqrt(2/d)·(|z_j − exact| + 3e-7)` (checked element by
//! element in tests/test_hashing_threads.py).
//!
//! **Input checks in the pass.** A block with a non-finite value (in f32) or a projection
//! `|z| ≥ COS_DOMAIN − 7` is refused ([`RffProjection::hash_rows_checked`], [`block_error`]): a NaN or
//! infinite input always makes some projection NaN or infinite, so the domain check in registers is
//! also the finiteness check, and the rows are read once.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, s};
use rayon::prelude::*;

use crate::error::{Error, Result, check_positive};
use crate::limits::{MAX_DIM, MAX_N_FEATURES, MAX_PROJECTION, try_filled, try_zeroed_f32};
use crate::rng::Csprng;
use crate::simd;

/// Rows per parallel block of the transform: 256 rows × 784 features of f32 is 800 kB of input.
const BLOCK_ROWS: usize = 256;

/// The public projection of h1: `omega` is (n_features, dim) and `offset` is (dim,).
#[derive(Clone, Debug)]
pub struct RffProjection {
    pub omega: Array2<f32>,
    pub offset: Array1<f32>,
    /// ω zero-padded to `padded` columns (a multiple of [`tile_cols`]) and packed tile-major: the
    /// `tile_cols(dim)` columns of tile `t` for feature `k` are the contiguous run starting at
    /// `(t · n_features + k) · tile_cols(dim)`, so a register tile reads its columns of ω as one stream.
    omega_padded: Vec<f32>,
    /// b zero-padded to `padded` entries.
    offset_padded: Vec<f32>,
    padded: usize,
}

/// Rows a parallel block's size is a multiple of.
const TILE_ROWS: usize = 8;

/// Columns of a register tile, 48 (three AVX-512 vectors, 8 rows) or 64 (four vectors, 6 rows): 24
/// accumulators either way. Each projection takes the width that pads `dim` least (d = 500: 512 of 64,
/// not 528 of 48; d = 140: 144 of 48, not 192 of 64); ω's rows are zero-padded to a multiple of it.
fn tile_cols(dim: usize) -> usize {
    if dim.div_ceil(64) * 64 < dim.div_ceil(48) * 48 { 64 } else { 48 }
}

impl RffProjection {
    /// Draw ω (column j is ω_j) and b from the public stream `key`.
    ///
    /// Order of draws: ω row-major (feature-major), then b. ω entries are `sqrt(2γ) · N(0, 1)` in f64,
    /// rounded to f32; `b = 2π · U[0, 1)`.
    pub fn from_key(key: [u8; 32], n_features: usize, dim: usize, gamma: f64) -> Result<Self> {
        if n_features == 0 {
            return Err(Error::value("n_features", "must be at least 1"));
        }
        if dim == 0 {
            return Err(Error::value("dim", "must be at least 1"));
        }
        check_positive("gamma", gamma)?;
        if n_features > MAX_N_FEATURES {
            return Err(Error::value("n_features", format!("must be at most {MAX_N_FEATURES}, got {n_features}")));
        }
        if dim > MAX_DIM {
            return Err(Error::value("dim", format!("must be at most {MAX_DIM}, got {dim}")));
        }
        // |N(0,1)| from Box-Muller is below 8.6, so ω is finite in f32 when sqrt(2γ)·8.6 < f32::MAX.
        if gamma > 1e74 {
            return Err(Error::value(
                "gamma",
                format!("is too large ({gamma:e}): ω would overflow float32; at most 1e74"),
            ));
        }
        let cells = n_features.checked_mul(dim).filter(|&c| c <= MAX_PROJECTION).ok_or_else(|| {
            Error::value("dim", format!("n_features * dim = {n_features} * {dim} exceeds the cap of {MAX_PROJECTION}"))
        })?;
        let padded = dim.div_ceil(tile_cols(dim)) * tile_cols(dim);
        // ω, its padded copy and b: reserve fallibly before drawing.
        let mut flat = try_filled("dim", cells, MAX_PROJECTION, 0.0f32)?;
        let padded_len = n_features.checked_mul(padded).ok_or_else(|| Error::value("dim", "is too large"))?;
        let omega_padded = try_filled("dim", padded_len, 2 * MAX_PROJECTION, 0.0f32)?;
        let mut rng = Csprng::from_seed_bytes(key);
        let sd = (2.0 * gamma).sqrt();
        flat.iter_mut().for_each(|w| *w = (sd * rng.standard_normal()) as f32);
        let omega = Array2::from_shape_vec((n_features, dim), flat).map_err(|e| Error::shape("dim", e.to_string()))?;
        let offset = Array1::from_shape_simple_fn(dim, || (2.0 * std::f64::consts::PI * rng.uniform_f64()) as f32);
        Ok(Self::from_parts_into(omega, offset, omega_padded))
    }

    /// A projection from explicit ω (n_features, dim) and b (dim,). Used by tests and by `from_key`.
    pub fn from_parts(omega: Array2<f32>, offset: Array1<f32>) -> Self {
        let (n, d) = omega.dim();
        let padded = d.div_ceil(tile_cols(d)) * tile_cols(d);
        Self::from_parts_into(omega, offset, vec![0.0f32; n * padded])
    }

    /// [`Self::from_parts`] with the zeroed buffer of the padded ω (n_features × padded) supplied.
    fn from_parts_into(omega: Array2<f32>, offset: Array1<f32>, mut omega_padded: Vec<f32>) -> Self {
        let (n, d) = omega.dim();
        let tw = tile_cols(d);
        let padded = d.div_ceil(tw) * tw;
        debug_assert_eq!(omega_padded.len(), n * padded);
        for k in 0..n {
            for j in 0..d {
                omega_padded[((j / tw) * n + k) * tw + j % tw] = omega[[k, j]];
            }
        }
        let mut offset_padded = vec![0.0f32; padded];
        offset_padded[..d].iter_mut().zip(offset.iter()).for_each(|(p, &b)| *p = b);
        RffProjection { omega, offset, omega_padded, offset_padded, padded }
    }

    pub fn n_features(&self) -> usize {
        self.omega.nrows()
    }

    pub fn dim(&self) -> usize {
        self.omega.ncols()
    }

    /// h1 of every row of `x` (any strides), as an (N, dim) f32 array.
    pub fn transform_f32(&self, x: ArrayView2<'_, f32>) -> Result<Array2<f32>> {
        self.transform_any(x)
    }

    /// h1 of every row of a float64 `x`: each row is rounded to f32 and then hashed as `transform_f32`.
    pub fn transform_f64(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f32>> {
        self.transform_any(x)
    }

    fn transform_any<T: RowElement>(&self, x: ArrayView2<'_, T>) -> Result<Array2<f32>> {
        self.check_input(x.ncols(), x.nrows())?;
        let total = x.nrows().checked_mul(self.dim()).ok_or_else(|| Error::shape("X", "has too many rows"))?;
        // Zeroed by the allocator (fresh pages for a large output): the pages are first touched by the
        // worker that hashes into them, in parallel, and never written twice.
        let mut buf = try_zeroed_f32("X", total, usize::MAX / 8)?;
        self.transform_into(x, &mut buf)?;
        Array2::from_shape_vec((x.nrows(), self.dim()), buf).map_err(|e| Error::shape("X", e.to_string()))
    }

    /// h1 of every row of `x` (f32 or f64, any strides) into `out`, the row-major (N, dim) output,
    /// in parallel over row blocks on the current rayon pool. Every element of `out` is written (its
    /// previous contents never matter), each block by the worker that hashes it. Bit-identical to
    /// [`Self::transform_f32`].
    pub fn transform_into<T: RowElement>(&self, x: ArrayView2<'_, T>, out: &mut [f32]) -> Result<()> {
        if !self.check_output(&x, out)? {
            return Ok(());
        }
        let (rows, d) = (x.nrows(), self.dim());
        let block = block_rows_for(rows, rayon::current_num_threads());
        out.par_chunks_mut(block * d)
            .enumerate()
            .try_for_each_init(Vec::new, |buf, (b, out_block)| self.hash_block(&x, b * block, out_block, buf))
    }

    /// [`Self::transform_into`] on the calling thread alone, in blocks of `BLOCK_ROWS` rows, with no rayon:
    /// for a caller allowed one thread, whom handing each call to a pool's one worker would cost a wake-up
    /// and the worker's spinning (CPU time of the same order as hashing 256 rows). Bit-identical.
    pub fn transform_into_here<T: RowElement>(&self, x: ArrayView2<'_, T>, out: &mut [f32]) -> Result<()> {
        if !self.check_output(&x, out)? {
            return Ok(());
        }
        let mut buf = Vec::new();
        out.chunks_mut(BLOCK_ROWS * self.dim())
            .enumerate()
            .try_for_each(|(b, out_block)| self.hash_block(&x, b * BLOCK_ROWS, out_block, &mut buf))
    }

    /// h1 of the rows of `x` from `start` on into `out_block` (whole rows of the output); `buf` holds a
    /// float32 copy of rows that are not contiguous float32.
    fn hash_block<T: RowElement>(
        &self,
        x: &ArrayView2<'_, T>,
        start: usize,
        out_block: &mut [f32],
        buf: &mut Vec<f32>,
    ) -> Result<()> {
        let n_rows = out_block.len() / self.dim();
        let xb = rows_f32(x.slice(s![start..start + n_rows, ..]), buf);
        if self.hash_rows_checked(xb, n_rows, out_block) { Ok(()) } else { Err(block_error(xb)) }
    }

    /// The checks of a transform into `out`: `Ok(false)` when there is nothing to hash.
    fn check_output<T: RowElement>(&self, x: &ArrayView2<'_, T>, out: &[f32]) -> Result<bool> {
        self.check_input(x.ncols(), x.nrows())?;
        let (rows, d) = (x.nrows(), self.dim());
        if Some(out.len()) != rows.checked_mul(d) {
            return Err(Error::shape("X", format!("the output holds {} values, not {rows} x {d}", out.len())));
        }
        Ok(d != 0 && rows != 0)
    }

    /// h1 of `rows` contiguous f32 rows `x` (rows × n_features) into `out` (rows × dim). The caller has
    /// checked shapes and finiteness. A block with a row h1 cannot hash (see
    /// [`Self::hash_rows_checked`]) is filled with NaN, which [`check_hashed`] refuses.
    pub fn hash_rows(&self, x: &[f32], rows: usize, out: &mut [f32]) {
        if !self.hash_rows_checked(x, rows, out) {
            out.fill(f32::NAN);
        }
    }

    /// h1 of `rows` contiguous f32 rows `x` into `out`: the product, the domain check and the cosine
    /// are fused per register tile, in cache blocks, where the CPU has AVX-512 (module docs). Returns false (and leaves
    /// `out` meaningless) when a value of `x` is not finite, when a projection `|ω·x|` is at least
    /// `COS_DOMAIN − 7` (where the float32 cosine would be silently wrong), or when the slice lengths
    /// do not match `rows`; [`block_error`] says which input error it was.
    pub fn hash_rows_checked(&self, x: &[f32], rows: usize, out: &mut [f32]) -> bool {
        let (n, d) = (self.n_features(), self.dim());
        if Some(x.len()) != rows.checked_mul(n) || Some(out.len()) != rows.checked_mul(d) {
            return false;
        }
        let scale = (2.0 / d as f64).sqrt() as f32;
        #[cfg(target_arch = "x86_64")]
        {
            if std::is_x86_feature_detected!("avx512f") {
                // SAFETY: the CPU supports AVX-512F (checked just above).
                return unsafe {
                    avx512::hash(x, rows, n, &self.omega_padded, &self.offset_padded, self.padded, d, scale, out)
                };
            }
        }
        project(x, rows, n, &self.omega_padded, tile_cols(d), d, out);
        // The vectorised cosine is accurate for |z + b| < COS_DOMAIN only (simd::cos_f32); beyond it the
        // result would be silently wrong, and a non-finite input gives a NaN or infinite projection.
        if !out.iter().all(|z| z.abs() < simd::COS_DOMAIN - 7.0) {
            return false;
        }
        simd::cos_scale_inplace(out, &self.offset_padded[..d], scale);
        true
    }

    /// h1 of one row (bit-identical to that row of [`Self::transform_f32`]). `out` has `dim` entries.
    pub fn hash_row(&self, x: &[f32], out: &mut [f32]) {
        self.hash_rows(x, 1, out);
    }

    fn check_input(&self, ncols: usize, _nrows: usize) -> Result<()> {
        if ncols != self.n_features() {
            return Err(Error::shape(
                "X",
                format!("has {ncols} features per row, the hasher was built for {}", self.n_features()),
            ));
        }
        Ok(())
    }

    /// h1 of a single row, in f64 arithmetic (used by tests as a reference).
    pub fn transform_row_f64(&self, x: ArrayView1<'_, f64>) -> Array1<f64> {
        let scale = (2.0 / self.dim() as f64).sqrt();
        Array1::from_shape_fn(self.dim(), |j| {
            let z: f64 = x.iter().zip(self.omega.column(j)).map(|(a, w)| a * *w as f64).sum();
            scale * (z + self.offset[j] as f64).cos()
        })
    }
}

/// An input element type of the transform: f32, or f64 rounded to f32 on the way in.
pub trait RowElement: Copy + Send + Sync + 'static {
    fn to_f32(self) -> f32;
    /// The row-major f32 slice of `x` when it needs no conversion.
    fn as_f32_slice<'a>(x: &ArrayView2<'a, Self>) -> Option<&'a [f32]>;
}

impl RowElement for f32 {
    fn to_f32(self) -> f32 {
        self
    }
    fn as_f32_slice<'a>(x: &ArrayView2<'a, f32>) -> Option<&'a [f32]> {
        x.to_slice()
    }
}

impl RowElement for f64 {
    fn to_f32(self) -> f32 {
        self as f32
    }
    fn as_f32_slice<'a>(_x: &ArrayView2<'a, f64>) -> Option<&'a [f32]> {
        None
    }
}

/// The rows of `x` as one contiguous f32 slice: borrowed when `x` is C-contiguous f32, else converted
/// into `buf`. Errors when a value is not finite (checked on the converted f32 values).
pub fn rows_as_f32<'a, T: RowElement>(x: ArrayView2<'a, T>, buf: &'a mut Vec<f32>) -> Result<&'a [f32]> {
    let slice: &'a [f32] = match T::as_f32_slice(&x) {
        Some(s) => s,
        None => {
            buf.clear();
            buf.extend(x.iter().map(|v| v.to_f32()));
            &buf[..]
        }
    };
    // f64 values that are NaN, infinite or beyond the f32 range become non-finite f32 values.
    if !slice.iter().all(|v| v.is_finite()) {
        return Err(Error::value(
            "X",
            "contains NaN, infinite values or values beyond the float32 range (|x| > 3.4e38)",
        ));
    }
    Ok(slice)
}

/// The rows of `x` as one contiguous f32 slice, unchecked: borrowed when `x` is C-contiguous f32, else
/// converted into `buf` (f64 values beyond the f32 range become infinite, NaN stays NaN).
pub fn rows_f32<'a, T: RowElement>(x: ArrayView2<'a, T>, buf: &'a mut Vec<f32>) -> &'a [f32] {
    match T::as_f32_slice(&x) {
        Some(s) => s,
        None => {
            buf.clear();
            buf.extend(x.iter().map(|v| v.to_f32()));
            &buf[..]
        }
    }
}

/// The input error of a block that [`RffProjection::hash_rows_checked`] refused: a value that is not
/// finite in float32, else a projection beyond the cosine's domain.
pub fn block_error(x: &[f32]) -> Error {
    if x.iter().all(|v| v.is_finite()) {
        Error::value(
            "X",
            "a row's projection |ω·x| exceeds 4089, where h1's float32 cosine is exact to 2e-7 (values too large for this gamma): rescale the data or lower gamma",
        )
    } else {
        Error::value("X", "contains NaN, infinite values or values beyond the float32 range (|x| > 3.4e38)")
    }
}

/// Rows per parallel block of a transform of `rows` rows on `threads` threads: `BLOCK_ROWS` (256) for large
/// calls, smaller (down to one register tile) so that a small call still gives every thread work.
/// Results never depend on it (h1 is row-canonical).
pub fn block_rows_for(rows: usize, threads: usize) -> usize {
    let per = rows.div_ceil(4 * threads.max(1)).div_ceil(TILE_ROWS) * TILE_ROWS;
    per.clamp(TILE_ROWS, BLOCK_ROWS)
}

/// `Err` when a hashed value is not finite: `ω·x` overflowed float32 (a huge row or a huge `gamma`).
pub fn check_hashed(out: &[f32]) -> Result<()> {
    if out.iter().all(|v| v.is_finite()) {
        Ok(())
    } else {
        Err(Error::value(
            "X",
            "a row's projection |ω·x| exceeds 4089, where h1's float32 cosine is exact to 2e-7 (values too large for this gamma): rescale the data or lower gamma",
        ))
    }
}

/// `out[r][j] = Σ_k x[r][k] ω[k][j]` as one FMA chain per element in k order (see the module docs), from ω
/// packed tile-major with tiles `tw` columns wide ([`RffProjection`]'s `omega_padded`).
fn project(x: &[f32], rows: usize, n: usize, w: &[f32], tw: usize, d: usize, out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            // SAFETY: AVX2 and FMA are available (checked above).
            unsafe { project_avx2_fma(x, rows, n, w, tw, d, out) };
            return;
        }
    }
    project_portable(x, rows, n, w, tw, d, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn project_avx2_fma(x: &[f32], rows: usize, n: usize, w: &[f32], tw: usize, d: usize, out: &mut [f32]) {
    if tw == 64 { project_blocked::<64>(x, rows, n, w, d, out) } else { project_blocked::<48>(x, rows, n, w, d, out) }
}

/// Rows of a cache block of [`project_blocked`] (its rows' features and products stay in the L2 cache beside one
/// panel of ω), as the AVX-512 kernel's.
const CACHE_ROWS: usize = 96;
/// Features per pass of [`project_blocked`] at most (a pass over more continues each element's chain from `out`).
const CACHE_FEATURES: usize = 256;
/// Columns of ω per panel of [`project_blocked`] at most.
const CACHE_COLUMNS: usize = 256;

/// [`project_portable`]'s FMA chains in cache blocks, for the AVX2 path: rows in blocks of [`CACHE_ROWS`], ω's tiles
/// (`TW` columns, its packing) in panels of at most [`CACHE_COLUMNS`] columns, the features in passes of at most
/// [`CACHE_FEATURES`], so that a block's rows and one panel of ω stay in the L2 cache at every shape. A pass that does
/// not start the features continues every element's chain from the partial product the previous pass stored in
/// `out` (stores and loads of f32 are exact): each element is still one FMA chain over k in order from +0, the bits
/// of [`project_portable`].
#[inline(always)]
fn project_blocked<const TW: usize>(x: &[f32], rows: usize, n: usize, w: &[f32], d: usize, out: &mut [f32]) {
    // Passes and panels of equal size, as the AVX-512 kernel's.
    let kc = n.div_ceil(n.div_ceil(CACHE_FEATURES)).max(1);
    let tiles = d.div_ceil(TW);
    let panel = tiles.div_ceil(tiles.div_ceil((CACHE_COLUMNS / TW).max(1))).max(1);
    let mut acc = [0.0f32; TW];
    for rb in (0..rows).step_by(CACHE_ROWS) {
        let r_end = rows.min(rb + CACHE_ROWS);
        for t_lo in (0..tiles).step_by(panel) {
            let t_hi = tiles.min(t_lo + panel);
            for k_lo in (0..n).step_by(kc) {
                let k_hi = n.min(k_lo + kc);
                for r in rb..r_end {
                    let xr = &x[r * n + k_lo..r * n + k_hi];
                    for t in t_lo..t_hi {
                        let c0 = t * TW;
                        let width = TW.min(d - c0);
                        let o = &mut out[r * d + c0..r * d + c0 + width];
                        acc.fill(0.0);
                        if k_lo > 0 {
                            acc[..width].copy_from_slice(o);
                        }
                        for (&xk, wk) in xr.iter().zip(w[(t * n + k_lo) * TW..(t * n + k_hi) * TW].chunks_exact(TW)) {
                            for (a, &wv) in acc.iter_mut().zip(wk) {
                                *a = xk.mul_add(wv, *a);
                            }
                        }
                        o.copy_from_slice(&acc[..width]);
                    }
                }
            }
        }
    }
}

/// The reference order, vectorisable across a tile's columns: for each row and tile of columns,
/// `acc[j] = fma(x_k, ω_kj, acc[j])` for k = 0..n.
#[inline(always)]
fn project_portable(x: &[f32], rows: usize, n: usize, w: &[f32], tw: usize, d: usize, out: &mut [f32]) {
    let mut acc = [0.0f32; 64];
    let acc = &mut acc[..tw];
    for r in 0..rows {
        let xr = &x[r * n..(r + 1) * n];
        for (t, c0) in (0..d).step_by(tw).enumerate() {
            acc.fill(0.0);
            for (&xk, wk) in xr.iter().zip(w[t * n * tw..(t + 1) * n * tw].chunks_exact(tw)) {
                for (a, &wv) in acc.iter_mut().zip(wk) {
                    *a = xk.mul_add(wv, *a);
                }
            }
            let width = tw.min(d - c0);
            out[r * d + c0..r * d + c0 + width].copy_from_slice(&acc[..width]);
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::tile_cols;
    use crate::simd::{COS_DOMAIN, cos16};
    use std::arch::x86_64::*;

    /// Rows of a cache block: its slice of the input (`BLOCK_ROWS_CACHE × KC` floats) and of the output
    /// (`BLOCK_ROWS_CACHE × NC`) stay in the core's L2 cache beside one panel of ω (`KC × NC`).
    const BLOCK_ROWS_CACHE: usize = 96;
    /// Features per pass at most (a pass over more continues each element's chain from the output).
    const KC: usize = 256;
    /// Columns of ω per panel at most.
    const NC: usize = 256;

    /// The projection and the fused `scale · cos(z + b)` of `rows` rows, in cache blocks. Blocks of rows,
    /// panels of at most `NC` columns of ω and passes over at most `KC` features at a time keep the
    /// working set in the L2 cache whatever the shape; within them each register tile of up to 8 rows ×
    /// 48 columns or 6 rows × 64 columns ([`tile_cols`]) is accumulated in 24 zmm registers. A pass over
    /// features `k0..k1` continues every element's FMA chain from the value the previous pass stored in
    /// `out` (stores and loads of f32 are exact), so each element is still one FMA chain over k in
    /// order from +0, whatever the blocking. The last pass checks each projection against the cosine's
    /// domain, turns it into h1 in registers and stores it. Returns false when some projection
    /// `|z| ≥ COS_DOMAIN − 7` or is NaN (the values are then meaningless: the caller refuses the block).
    #[target_feature(enable = "avx512f")]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn hash(
        x: &[f32],
        rows: usize,
        n: usize,
        w: &[f32],
        b: &[f32],
        padded: usize,
        d: usize,
        scale: f32,
        out: &mut [f32],
    ) -> bool {
        let tw = tile_cols(d);
        let wide = tw == 64;
        // Passes and panels of equal size (a 784-feature row: 4 passes of 196, not 3 of 256 and one of 16).
        let kc = n.div_ceil(n.div_ceil(KC));
        let tiles = padded / tw;
        let panel = tiles.div_ceil(tiles.div_ceil(NC / tw)) * tw;
        let mut ok = true;
        for rb in (0..rows).step_by(BLOCK_ROWS_CACHE) {
            let r_end = rows.min(rb + BLOCK_ROWS_CACHE);
            for c_lo in (0..padded).step_by(panel) {
                let c_hi = padded.min(c_lo + panel);
                for k_lo in (0..n).step_by(kc) {
                    let k = (k_lo, n.min(k_lo + kc));
                    let mut r0 = rb;
                    while r0 < r_end {
                        let rr = (r_end - r0).min(if wide { 6 } else { 8 });
                        let at = Tile { r0, c_lo, c_hi, k };
                        ok &= match (wide, rr) {
                            (false, 8) => tile::<8, 3>(x, n, w, b, d, scale, out, at),
                            (false, 7) => tile::<7, 3>(x, n, w, b, d, scale, out, at),
                            (false, 6) => tile::<6, 3>(x, n, w, b, d, scale, out, at),
                            (false, 5) => tile::<5, 3>(x, n, w, b, d, scale, out, at),
                            (false, 4) => tile::<4, 3>(x, n, w, b, d, scale, out, at),
                            (false, 3) => tile::<3, 3>(x, n, w, b, d, scale, out, at),
                            (false, 2) => tile::<2, 3>(x, n, w, b, d, scale, out, at),
                            (false, _) => tile::<1, 3>(x, n, w, b, d, scale, out, at),
                            (true, 6) => tile::<6, 4>(x, n, w, b, d, scale, out, at),
                            (true, 5) => tile::<5, 4>(x, n, w, b, d, scale, out, at),
                            (true, 4) => tile::<4, 4>(x, n, w, b, d, scale, out, at),
                            (true, 3) => tile::<3, 4>(x, n, w, b, d, scale, out, at),
                            (true, 2) => tile::<2, 4>(x, n, w, b, d, scale, out, at),
                            (true, _) => tile::<1, 4>(x, n, w, b, d, scale, out, at),
                        };
                        r0 += rr;
                    }
                }
            }
        }
        ok
    }

    /// Where a register-tile call works: rows `r0..r0 + R`, the tiles of columns `c_lo..c_hi` (multiples
    /// of the tile width), features `k.0..k.1` of the chain.
    #[derive(Clone, Copy)]
    struct Tile {
        r0: usize,
        c_lo: usize,
        c_hi: usize,
        k: (usize, usize),
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn tile<const R: usize, const C: usize>(
        x: &[f32],
        n: usize,
        w: &[f32],
        b: &[f32],
        d: usize,
        scale: f32,
        out: &mut [f32],
        at: Tile,
    ) -> bool {
        let Tile { r0, c_lo, c_hi, k: (k0, k1) } = at;
        let tw = 16 * C;
        // Bounds for every unchecked access below (a failure is a bug in the caller: no work is done).
        if x.len() < (r0 + R) * n
            || k0 >= k1
            || k1 > n
            || !c_lo.is_multiple_of(tw)
            || !c_hi.is_multiple_of(tw)
            || c_hi > d.div_ceil(tw) * tw
            || w.len() < n * c_hi
            || b.len() < c_hi
            || out.len() < (r0 + R) * d
        {
            return false;
        }
        let (first, last) = (k0 == 0, k1 == n);
        let xp = x.as_ptr();
        let lim = _mm512_set1_ps(COS_DOMAIN - 7.0);
        let abs_mask = _mm512_set1_epi32(i32::MAX);
        let vscale = _mm512_set1_ps(scale);
        let mut bad: u16 = 0;
        let mut c0 = c_lo;
        while c0 < c_hi {
            // This tile's columns of ω: feature k's run starts at wt + k * tw (the packing of `omega_padded`).
            let wt = (c0 / tw) * n * tw;
            let mut acc = [[_mm512_setzero_ps(); C]; R];
            if !first {
                for (r, a) in acc.iter_mut().enumerate() {
                    let row = (r0 + r) * d;
                    for (c, z) in a.iter_mut().enumerate() {
                        let col = c0 + 16 * c;
                        if col >= d {
                            break;
                        }
                        let left = d - col;
                        // SAFETY: row + col + min(16, left) <= (r0 + R) * d <= out.len().
                        *z = unsafe {
                            let p = out.as_ptr().add(row + col);
                            if left >= 16 {
                                _mm512_loadu_ps(p)
                            } else {
                                _mm512_maskz_loadu_ps(((1u32 << left) - 1) as u16, p)
                            }
                        };
                    }
                }
            }
            for k in k0..k1 {
                let mut wv = [_mm512_setzero_ps(); C];
                for (c, v) in wv.iter_mut().enumerate() {
                    // SAFETY: wt + k * tw + tw <= (c0 / tw + 1) * n * tw <= c_hi * n <= w.len() (checked above).
                    *v = unsafe { _mm512_loadu_ps(w.as_ptr().add(wt + k * tw + 16 * c)) };
                }
                for (r, a) in acc.iter_mut().enumerate() {
                    // SAFETY: (r0 + r) * n + k < (r0 + R) * n <= x.len().
                    let xb = _mm512_set1_ps(unsafe { *xp.add((r0 + r) * n + k) });
                    for (acc_c, &w_c) in a.iter_mut().zip(&wv) {
                        *acc_c = _mm512_fmadd_ps(xb, w_c, *acc_c);
                    }
                }
            }
            for (r, a) in acc.iter().enumerate() {
                let row = (r0 + r) * d;
                for (c, z) in a.iter().enumerate() {
                    let col = c0 + 16 * c;
                    if col >= d {
                        break;
                    }
                    let h = if last {
                        // Padded columns have ω = 0, so z = 0 there: only real columns can fail.
                        let az = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(*z), abs_mask));
                        bad |= !_mm512_cmp_ps_mask::<_CMP_LT_OQ>(az, lim);
                        // SAFETY: col + 16 <= c_hi <= b.len().
                        let bv = unsafe { _mm512_loadu_ps(b.as_ptr().add(col)) };
                        _mm512_mul_ps(vscale, cos16(_mm512_add_ps(*z, bv)))
                    } else {
                        *z
                    };
                    let left = d - col;
                    // SAFETY: row + col + min(16, left) <= (r0 + R) * d <= out.len().
                    unsafe {
                        let p = out.as_mut_ptr().add(row + col);
                        if left >= 16 {
                            _mm512_storeu_ps(p, h);
                        } else {
                            _mm512_mask_storeu_ps(p, ((1u32 << left) - 1) as u16, h);
                        }
                    }
                }
            }
            c0 += tw;
        }
        bad == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::public_key_from_u64;

    fn proj(n: usize, d: usize, gamma: f64) -> RffProjection {
        RffProjection::from_key(public_key_from_u64("h1", 3), n, d, gamma).unwrap()
    }

    #[test]
    fn projection_is_deterministic_and_has_the_right_law() {
        let a = proj(50, 400, 0.1);
        let b = proj(50, 400, 0.1);
        assert_eq!(a.omega, b.omega);
        assert_eq!(a.offset, b.offset);
        let n = a.omega.len() as f64;
        let mean = a.omega.iter().map(|&w| w as f64).sum::<f64>() / n;
        let var = a.omega.iter().map(|&w| (w as f64 - mean).powi(2)).sum::<f64>() / n;
        // Var = 2γ = 0.2; 20_000 draws: sd(var) = 0.2 sqrt(2/20000) = 0.002, 5 sigma = 0.01.
        assert!((var - 0.2).abs() < 0.01, "var {var}");
        assert!(a.offset.iter().all(|&b| (0.0..=std::f32::consts::TAU).contains(&b)));
    }

    /// 600 rows of 7 features as float64, float32 and Fortran-ordered float32.
    fn layouts() -> (Array2<f64>, Array2<f32>, Array2<f32>) {
        let x64 = Array2::from_shape_fn((600, 7), |(i, j)| ((i * 7 + j) as f64 * 0.37).sin());
        let x32 = x64.mapv(|v| v as f32);
        let fortran = x32.t().as_standard_layout().into_owned().reversed_axes();
        (x64, x32, fortran)
    }

    #[test]
    fn transform_matches_f64_reference_in_any_layout() {
        let p = proj(7, 33, 0.5);
        let (x64, x32, fortran) = layouts();
        let h = p.transform_f32(x32.view()).unwrap();
        let hf = p.transform_f32(fortran.view()).unwrap();
        let h64 = p.transform_f64(x64.view()).unwrap();
        for i in 0..600 {
            let want = p.transform_row_f64(x32.row(i).mapv(|v| v as f64).view());
            for j in 0..33 {
                assert!((h[[i, j]] as f64 - want[j]).abs() < 2e-6);
            }
        }
        assert_eq!(h, hf);
        assert_eq!(h, h64);
    }

    #[test]
    fn hashing_on_the_calling_thread_gives_the_same_bits_and_errors() {
        let p = proj(7, 33, 0.5);
        // 600 rows: three blocks of BLOCK_ROWS, the last partial; any layout and dtype.
        let (x64, x32, fortran) = layouts();
        let want = p.transform_f32(x32.view()).unwrap();
        for out in [
            {
                let mut o = vec![f32::NAN; 600 * 33];
                p.transform_into_here(x32.view(), &mut o).unwrap();
                o
            },
            {
                let mut o = vec![f32::NAN; 600 * 33];
                p.transform_into_here(fortran.view(), &mut o).unwrap();
                o
            },
            {
                let mut o = vec![f32::NAN; 600 * 33];
                p.transform_into_here(x64.view(), &mut o).unwrap();
                o
            },
        ] {
            assert_eq!(
                out.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                want.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
        }
        let mut bad = x32.clone();
        bad[[517, 2]] = f32::NAN;
        let mut o = vec![0.0f32; 600 * 33];
        assert_eq!(
            p.transform_into_here(bad.view(), &mut o).unwrap_err(),
            p.transform_into(bad.view(), &mut o).unwrap_err()
        );
        assert_eq!(p.transform_into_here(x32.view(), &mut o[1..]).unwrap_err().argument(), Some("X"));
        assert!(p.transform_into_here(x32.slice(s![..0, ..]), &mut []).is_ok());
    }

    /// The reference h1 of a block: the portable FMA chain, then the scalar cosine, element by element.
    fn portable_h1(p: &RffProjection, xs: &[f32], rows: usize) -> Vec<f32> {
        let (n, d) = (p.n_features(), p.dim());
        let mut z = vec![0.0f32; rows * d];
        project_portable(xs, rows, n, &p.omega_padded, tile_cols(d), d, &mut z);
        let scale = (2.0 / d as f64).sqrt() as f32;
        z.iter().enumerate().map(|(i, &v)| scale * simd::cos_f32(v + p.offset[i % d])).collect()
    }

    #[test]
    fn every_instruction_set_and_every_row_alone_give_the_same_bits() {
        for (n, d) in
            [(7usize, 33usize), (64, 140), (1, 1), (3, 48), (5, 97), (64, 500), (2, 17), (300, 140), (257, 2048)]
        {
            let p = proj(n, d, 0.3);
            let x = Array2::from_shape_fn((29, n), |(i, j)| ((i * n + j) as f32 * 0.731).sin() * 3.0);
            let xs = x.as_slice().unwrap();
            let want = portable_h1(&p, xs, 29);
            let mut auto = vec![0.0f32; 29 * d];
            assert!(p.hash_rows_checked(xs, 29, &mut auto));
            assert_eq!(want, auto, "fused kernel (n={n}, d={d})");
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                let mut a2 = vec![0.0f32; 29 * d];
                unsafe { project_avx2_fma(xs, 29, n, &p.omega_padded, tile_cols(d), d, &mut a2) };
                simd::cos_scale_inplace(&mut a2, &p.offset_padded[..d], (2.0 / d as f64).sqrt() as f32);
                assert_eq!(want, a2, "AVX2 path (n={n}, d={d})");
            }
            let h = p.transform_f32(x.view()).unwrap();
            assert_eq!(h.as_slice().unwrap(), &want[..]);
            let mut one = vec![0.0f32; d];
            for i in 0..29 {
                p.hash_row(x.row(i).as_slice().unwrap(), &mut one);
                assert_eq!(h.row(i).as_slice().unwrap(), &one[..], "row {i} (n={n}, d={d})");
            }
        }
    }

    #[test]
    fn the_cache_blocked_avx2_product_is_the_portable_chain_bit_for_bit() {
        // Wide rows (passes over the features), wide outputs (panels of columns), several blocks of rows, both tile
        // widths (d = 500: 64 columns; d = 140 and 2048: 48), and narrow shapes that need no blocking.
        for (rows, n, d) in
            [(301usize, 784usize, 500usize), (200, 600, 700), (97, 1024, 140), (50, 257, 2048), (9, 3, 5)]
        {
            let p = proj(n, d, 0.01);
            let x = Array2::from_shape_fn((rows, n), |(i, j)| ((i * n + j) as f32 * 0.377).sin());
            let xs = x.as_slice().unwrap();
            let tw = tile_cols(d);
            let mut want = vec![0.0f32; rows * d];
            project_portable(xs, rows, n, &p.omega_padded, tw, d, &mut want);
            let mut blocked = vec![f32::NAN; rows * d];
            if tw == 64 {
                project_blocked::<64>(xs, rows, n, &p.omega_padded, d, &mut blocked);
            } else {
                project_blocked::<48>(xs, rows, n, &p.omega_padded, d, &mut blocked);
            }
            let bits = |v: &[f32]| v.iter().map(|a| a.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&want), bits(&blocked), "blocked (rows={rows}, n={n}, d={d})");
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                let mut a2 = vec![f32::NAN; rows * d];
                unsafe { project_avx2_fma(xs, rows, n, &p.omega_padded, tw, d, &mut a2) };
                assert_eq!(bits(&want), bits(&a2), "AVX2 path (rows={rows}, n={n}, d={d})");
            }
        }
    }

    #[test]
    fn wide_rows_hashed_in_cache_blocks_give_the_bits_of_one_chain_alone_or_in_any_chunk() {
        // 600 features: passes over the features; 700 columns: panels; 301 rows: several cache blocks of rows.
        for (n, d) in [(600usize, 700usize), (1024, 140), (513, 64), (257, 48)] {
            let p = proj(n, d, 0.5 / n as f64);
            let x = Array2::from_shape_fn((301, n), |(i, j)| ((i * n + j) as f32 * 0.377).sin());
            let want = portable_h1(&p, x.as_slice().unwrap(), 301);
            let h = p.transform_f32(x.view()).unwrap();
            assert_eq!(h.as_slice().unwrap(), &want[..], "n={n}, d={d}");
            for (s0, len) in [(0usize, 1usize), (5, 13), (100, 97), (7, 294), (300, 1)] {
                let part = p.transform_f32(x.slice(s![s0..s0 + len, ..])).unwrap();
                assert_eq!(part, h.slice(s![s0..s0 + len, ..]), "rows {s0}..{} (n={n}, d={d})", s0 + len);
            }
        }
    }

    #[test]
    fn the_same_bits_for_any_thread_count_and_any_chunking() {
        let p = proj(64, 500, 0.05);
        let x = Array2::from_shape_fn((3001, 64), |(i, j)| ((i * 64 + j) as f32 * 0.0917).sin() * 2.0);
        let whole = p.transform_f32(x.view()).unwrap();
        for threads in [1usize, 2, 3, 8] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            for chunk in [1usize, 7, 256, 1000, 3001] {
                let parts: Vec<Array2<f32>> = pool.install(|| {
                    (0..3001)
                        .step_by(chunk)
                        .map(|s0| p.transform_f32(x.slice(s![s0..(s0 + chunk).min(3001), ..])).unwrap())
                        .collect()
                });
                let views: Vec<_> = parts.iter().map(|a| a.view()).collect();
                let joined = ndarray::concatenate(ndarray::Axis(0), &views).unwrap();
                assert_eq!(joined, whole, "threads {threads}, chunk {chunk}");
            }
        }
        for (rows, threads) in [(1usize, 1usize), (256, 2), (4096, 2), (100_000, 16), (5, 64)] {
            let b = block_rows_for(rows, threads);
            assert!(b.is_multiple_of(TILE_ROWS) && (TILE_ROWS..=BLOCK_ROWS).contains(&b));
        }
    }

    #[test]
    fn cos_on_sixteen_lanes_is_the_scalar_cosine() {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512f") {
            let mut x = -4090.0f32;
            while x < 4090.0 {
                let xs: Vec<f32> = (0..16).map(|l| x + l as f32 * 0.013).collect();
                let mut got = [0.0f32; 16];
                unsafe {
                    use std::arch::x86_64::*;
                    _mm512_storeu_ps(got.as_mut_ptr(), simd::cos16(_mm512_loadu_ps(xs.as_ptr())));
                }
                for l in 0..16 {
                    assert_eq!(got[l].to_bits(), simd::cos_f32(xs[l]).to_bits(), "x = {}", xs[l]);
                }
                x += 0.37;
            }
        }
    }

    #[test]
    fn kernel_approximation() {
        let p = proj(3, 20_000, 0.25);
        let x = Array2::from_shape_vec((2, 3), vec![0.1f32, 0.5, -0.3, 0.9, -0.2, 0.4]).unwrap();
        let h = p.transform_f32(x.view()).unwrap();
        let approx: f64 = h.row(0).iter().zip(h.row(1)).map(|(a, b)| (*a as f64) * (*b as f64)).sum();
        let d2: f64 = (0..3).map(|j| (x[[0, j]] - x[[1, j]]) as f64).map(|v| v * v).sum();
        let exact = (-0.25 * d2).exp();
        // The estimate has variance <= 2/d: sd <= 0.01, so 0.05 is 5 sigma.
        assert!((approx - exact).abs() < 0.05, "approx {approx} exact {exact}");
    }

    #[test]
    fn bad_input() {
        assert!(RffProjection::from_key([0; 32], 0, 5, 1.0).is_err());
        assert!(RffProjection::from_key([0; 32], 5, 0, 1.0).is_err());
        assert_eq!(RffProjection::from_key([0; 32], 5, 5, 0.0).unwrap_err().argument(), Some("gamma"));
        assert!(RffProjection::from_key([0; 32], 5, 5, f64::NAN).is_err());
        let p = proj(3, 4, 1.0);
        let x = Array2::<f32>::zeros((2, 4));
        assert_eq!(p.transform_f32(x.view()).unwrap_err().argument(), Some("X"));
        let mut x = Array2::<f32>::zeros((300, 3));
        x[[299, 1]] = f32::NAN;
        assert_eq!(p.transform_f32(x.view()).unwrap_err().argument(), Some("X"));
        // A finite but huge row overflows ω·x in f32: an error, never NaN hashes.
        let big = Array2::<f32>::from_elem((1, 3), 1e38);
        assert_eq!(proj(3, 4, 1e6).transform_f32(big.view()).unwrap_err().argument(), Some("X"));
        assert_eq!(RffProjection::from_key([0; 32], 3, 4, 1e308).unwrap_err().argument(), Some("gamma"));
        assert_eq!(RffProjection::from_key([0; 32], 1 << 62, 4, 1.0).unwrap_err().argument(), Some("n_features"));
        assert_eq!(RffProjection::from_key([0; 32], 3, 1 << 40, 1.0).unwrap_err().argument(), Some("dim"));
        assert_eq!(RffProjection::from_key([0; 32], 1 << 20, 1 << 19, 1.0).unwrap_err().argument(), Some("dim"));
        let empty = Array2::<f32>::zeros((0, 3));
        assert_eq!(p.transform_f32(empty.view()).unwrap().shape(), &[0, 4]);
        // transform_into: the output must hold exactly rows x dim values; every one is overwritten.
        let x = Array2::from_shape_fn((5, 3), |(i, j)| (i + j) as f32 * 0.1);
        assert_eq!(p.transform_into(x.view(), &mut [0.0f32; 19]).unwrap_err().argument(), Some("X"));
        let mut dirty = vec![f32::NAN; 20];
        p.transform_into(x.view(), &mut dirty).unwrap();
        assert_eq!(&dirty[..], p.transform_f32(x.view()).unwrap().as_slice().unwrap());
    }
}
