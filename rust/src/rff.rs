//! h1: random Fourier features (paper Alg. 1; Rahimi & Recht 2007).
//!
//! `ω_j ~ N(0, 2γ I_n)`, `b_j ~ U[0, 2π)`, `h1(x)_j = sqrt(2/d) · cos(ω_j·x + b_j)`, `j = 1..d`, so that
//! `E[h1(x)·h1(y)] = exp(−γ‖x−y‖²)`. Every coordinate lies in `[−sqrt(2/d), sqrt(2/d)]` and `‖h1(x)‖² ≤ 2`.
//!
//! ω and b are public: they are drawn from a ChaCha20 stream keyed by a public seed with portable
//! arithmetic (`libm`), so they are bit-identical on every machine. The transform runs a register-tiled
//! f32 product fused with a vectorised cosine, in parallel over row blocks; it never holds an (N, d)
//! temporary beyond the output.
//!
//! **Row-canonical.** Every projection `z_j = ω_j·x` is one fused-multiply-add chain over the features
//! in index order, starting from +0 (`z ← fma(x_k, ω_kj, z)`, k = 0..n), whatever the block, the tile,
//! the thread count or the instruction set (AVX-512, AVX2+FMA or the portable `mul_add` loop). So
//! `h1(x)` of a row is bit-identical whether the row is hashed alone ([`RffProjection::hash_row`]) or
//! inside a matrix: an owner can keep its hashes in 8 bits and recompute the exact f32 hash of the few
//! rows that need it (`crate::bid_index`).

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, s};
use rayon::prelude::*;

use crate::error::{Error, Result, check_positive};
use crate::limits::{MAX_DIM, MAX_N_FEATURES, MAX_PROJECTION, try_filled};
use crate::rng::Csprng;
use crate::simd;

/// Rows per parallel block of the transform: 256 rows × 784 features of f32 is 800 kB of input.
const BLOCK_ROWS: usize = 256;

/// The public projection of h1: `omega` is (n_features, dim) and `offset` is (dim,).
#[derive(Clone, Debug)]
pub struct RffProjection {
    pub omega: Array2<f32>,
    pub offset: Array1<f32>,
    /// ω with each row zero-padded to `padded` columns (a multiple of [`TILE_COLS`]), row-major.
    omega_padded: Vec<f32>,
    padded: usize,
}

/// Columns of one register tile (three AVX-512 vectors).
const TILE_COLS: usize = 48;
/// Rows of one AVX-512 register tile: 8 rows × 3 vectors = 24 accumulators.
const TILE_ROWS: usize = 8;

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
            return Err(Error::value("gamma", format!("is too large ({gamma:e}): ω would overflow float32; at most 1e74")));
        }
        let cells = n_features.checked_mul(dim).filter(|&c| c <= MAX_PROJECTION).ok_or_else(|| {
            Error::value("dim", format!("n_features * dim = {n_features} * {dim} exceeds the cap of {MAX_PROJECTION}"))
        })?;
        let padded = dim.div_ceil(TILE_COLS) * TILE_COLS;
        // ω, its padded copy and b: reserve fallibly before drawing.
        let mut flat = try_filled("dim", cells, MAX_PROJECTION, 0.0f32)?;
        let padded_len = n_features.checked_mul(padded).ok_or_else(|| Error::value("dim", "is too large"))?;
        let omega_padded = try_filled("dim", padded_len, 2 * MAX_PROJECTION, 0.0f32)?;
        let mut rng = Csprng::from_seed_bytes(key);
        let sd = (2.0 * gamma).sqrt();
        flat.iter_mut().for_each(|w| *w = (sd * rng.standard_normal()) as f32);
        let omega = Array2::from_shape_vec((n_features, dim), flat).map_err(|e| Error::shape("dim", e.to_string()))?;
        let offset =
            Array1::from_shape_simple_fn(dim, || (2.0 * std::f64::consts::PI * rng.uniform_f64()) as f32);
        Ok(Self::from_parts_into(omega, offset, omega_padded))
    }

    /// A projection from explicit ω (n_features, dim) and b (dim,). Used by tests and by `from_key`.
    pub fn from_parts(omega: Array2<f32>, offset: Array1<f32>) -> Self {
        let (n, d) = omega.dim();
        let padded = d.div_ceil(TILE_COLS) * TILE_COLS;
        Self::from_parts_into(omega, offset, vec![0.0f32; n * padded])
    }

    /// [`Self::from_parts`] with the zeroed buffer of the padded ω (n_features × padded) supplied.
    fn from_parts_into(omega: Array2<f32>, offset: Array1<f32>, mut omega_padded: Vec<f32>) -> Self {
        let (n, d) = omega.dim();
        let padded = d.div_ceil(TILE_COLS) * TILE_COLS;
        debug_assert_eq!(omega_padded.len(), n * padded);
        for k in 0..n {
            for j in 0..d {
                omega_padded[k * padded + j] = omega[[k, j]];
            }
        }
        RffProjection { omega, offset, omega_padded, padded }
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
        let d = self.dim();
        let total = x.nrows().checked_mul(d).ok_or_else(|| Error::shape("X", "has too many rows"))?;
        let buf = try_filled("X", total, usize::MAX / 8, 0.0f32)?;
        let mut out = Array2::from_shape_vec((x.nrows(), d), buf).map_err(|e| Error::shape("X", e.to_string()))?;
        if d == 0 || x.nrows() == 0 {
            return Ok(out);
        }
        let flat = out.as_slice_mut().expect("a fresh array is contiguous");
        flat.par_chunks_mut(BLOCK_ROWS * d).enumerate().try_for_each_init(Vec::new, |buf, (b, out_block)| {
            let start = b * BLOCK_ROWS;
            let rows = out_block.len() / d;
            let xb = rows_as_f32(x.slice(s![start..start + rows, ..]), buf)?;
            self.hash_rows(xb, rows, out_block);
            check_hashed(out_block)
        })?;
        Ok(out)
    }

    /// h1 of `rows` contiguous f32 rows `x` (rows × n_features) into `out` (rows × dim). The caller has
    /// checked shapes and finiteness.
    pub fn hash_rows(&self, x: &[f32], rows: usize, out: &mut [f32]) {
        let (n, d) = (self.n_features(), self.dim());
        debug_assert_eq!(x.len(), rows * n);
        debug_assert_eq!(out.len(), rows * d);
        project(x, rows, n, &self.omega_padded, self.padded, d, out);
        // The vectorised cosine is accurate for |z + b| < COS_DOMAIN only (simd::cos_f32); beyond it the
        // result would be silently wrong. Mark such a block NaN so that `check_hashed` refuses it.
        if !out.iter().all(|z| z.abs() < simd::COS_DOMAIN - 7.0) {
            out.fill(f32::NAN);
            return;
        }
        let scale = (2.0 / d as f64).sqrt() as f32;
        let offset = self.offset.as_slice().expect("offset is contiguous");
        simd::cos_scale_inplace(out, offset, scale);
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
        return Err(Error::value("X", "contains NaN, infinite values or values beyond the float32 range (|x| > 3.4e38)"));
    }
    Ok(slice)
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

/// `out[r][j] = Σ_k x[r][k] ω[k][j]` as one FMA chain per element in k order (see the module docs).
fn project(x: &[f32], rows: usize, n: usize, w: &[f32], padded: usize, d: usize, out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (checked above); slices have the documented lengths.
            unsafe { avx512::project(x, rows, n, w, padded, d, out) };
            return;
        }
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            // SAFETY: AVX2 and FMA are available (checked above).
            unsafe { project_avx2_fma(x, rows, n, w, padded, d, out) };
            return;
        }
    }
    project_portable(x, rows, n, w, padded, d, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn project_avx2_fma(x: &[f32], rows: usize, n: usize, w: &[f32], padded: usize, d: usize, out: &mut [f32]) {
    project_portable(x, rows, n, w, padded, d, out)
}

/// The reference order, vectorisable across columns: for each row, `acc[j] = fma(x_k, ω_kj, acc[j])`.
#[inline(always)]
fn project_portable(x: &[f32], rows: usize, n: usize, w: &[f32], padded: usize, d: usize, out: &mut [f32]) {
    for r in 0..rows {
        let acc = &mut out[r * d..(r + 1) * d];
        acc.fill(0.0);
        for k in 0..n {
            let xk = x[r * n + k];
            let wk = &w[k * padded..k * padded + d];
            for (a, &wv) in acc.iter_mut().zip(wk) {
                *a = xk.mul_add(wv, *a);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{TILE_COLS, TILE_ROWS};
    use std::arch::x86_64::*;

    /// Register-tiled product: tiles of up to 8 rows × 48 columns kept in 24 zmm accumulators.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn project(x: &[f32], rows: usize, n: usize, w: &[f32], padded: usize, d: usize, out: &mut [f32]) {
        let mut r0 = 0;
        while r0 < rows {
            let rr = (rows - r0).min(TILE_ROWS);
            // SAFETY (all arms): rows r0..r0+R exist in x and out; w has n × padded entries.
            unsafe {
                match rr {
                    8 => tile::<8>(x, r0, n, w, padded, d, out),
                    7 => tile::<7>(x, r0, n, w, padded, d, out),
                    6 => tile::<6>(x, r0, n, w, padded, d, out),
                    5 => tile::<5>(x, r0, n, w, padded, d, out),
                    4 => tile::<4>(x, r0, n, w, padded, d, out),
                    3 => tile::<3>(x, r0, n, w, padded, d, out),
                    2 => tile::<2>(x, r0, n, w, padded, d, out),
                    _ => tile::<1>(x, r0, n, w, padded, d, out),
                }
            }
            r0 += rr;
        }
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn tile<const R: usize>(x: &[f32], r0: usize, n: usize, w: &[f32], padded: usize, d: usize, out: &mut [f32]) {
        assert!(x.len() >= (r0 + R) * n && w.len() >= n * padded && out.len() >= (r0 + R) * d);
        let xp = x.as_ptr();
        let mut c0 = 0;
        while c0 < d {
            let mut acc = [[_mm512_setzero_ps(); 3]; R];
            for k in 0..n {
                // SAFETY: k < n and c0 + 48 <= padded, so the three loads are inside w.
                let wp = unsafe { w.as_ptr().add(k * padded + c0) };
                let (w0, w1, w2) = unsafe { (_mm512_loadu_ps(wp), _mm512_loadu_ps(wp.add(16)), _mm512_loadu_ps(wp.add(32))) };
                for (r, a) in acc.iter_mut().enumerate() {
                    // SAFETY: (r0 + r) * n + k < (r0 + R) * n <= x.len().
                    let xb = _mm512_set1_ps(unsafe { *xp.add((r0 + r) * n + k) });
                    a[0] = _mm512_fmadd_ps(xb, w0, a[0]);
                    a[1] = _mm512_fmadd_ps(xb, w1, a[1]);
                    a[2] = _mm512_fmadd_ps(xb, w2, a[2]);
                }
            }
            for (r, a) in acc.iter().enumerate() {
                let row = (r0 + r) * d;
                for (c, v) in a.iter().enumerate() {
                    let col = c0 + 16 * c;
                    if col >= d {
                        break;
                    }
                    let left = d - col;
                    // SAFETY: row + col + min(16, left) <= (r0 + R) * d <= out.len().
                    unsafe {
                        let p = out.as_mut_ptr().add(row + col);
                        if left >= 16 {
                            _mm512_storeu_ps(p, *v);
                        } else {
                            _mm512_mask_storeu_ps(p, ((1u32 << left) - 1) as u16, *v);
                        }
                    }
                }
            }
            c0 += TILE_COLS;
        }
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

    #[test]
    fn transform_matches_f64_reference_in_any_layout() {
        let p = proj(7, 33, 0.5);
        let x64 = Array2::from_shape_fn((600, 7), |(i, j)| ((i * 7 + j) as f64 * 0.37).sin());
        let x32 = x64.mapv(|v| v as f32);
        let fortran = x32.t().as_standard_layout().into_owned().reversed_axes();
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
    fn every_instruction_set_and_every_row_alone_give_the_same_bits() {
        for (n, d) in [(7usize, 33usize), (64, 140), (1, 1), (3, 48), (5, 97)] {
            let p = proj(n, d, 0.3);
            let x = Array2::from_shape_fn((29, n), |(i, j)| ((i * n + j) as f32 * 0.731).sin() * 3.0);
            let xs = x.as_slice().unwrap();
            let mut portable = vec![0.0f32; 29 * d];
            project_portable(xs, 29, n, &p.omega_padded, p.padded, d, &mut portable);
            let mut auto = vec![0.0f32; 29 * d];
            project(xs, 29, n, &p.omega_padded, p.padded, d, &mut auto);
            assert_eq!(portable, auto);
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                let mut a2 = vec![0.0f32; 29 * d];
                unsafe { project_avx2_fma(xs, 29, n, &p.omega_padded, p.padded, d, &mut a2) };
                assert_eq!(portable, a2);
            }
            let h = p.transform_f32(x.view()).unwrap();
            let mut one = vec![0.0f32; d];
            for i in 0..29 {
                p.hash_row(x.row(i).as_slice().unwrap(), &mut one);
                assert_eq!(h.row(i).as_slice().unwrap(), &one[..], "row {i} (n={n}, d={d})");
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
    }
}
