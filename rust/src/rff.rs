//! h1: random Fourier features (paper Alg. 1; Rahimi & Recht 2007).
//!
//! `ω_j ~ N(0, 2γ I_n)`, `b_j ~ U[0, 2π)`, `h1(x)_j = sqrt(2/d) · cos(ω_j·x + b_j)`, `j = 1..d`, so that
//! `E[h1(x)·h1(y)] = exp(−γ‖x−y‖²)`. Every coordinate lies in `[−sqrt(2/d), sqrt(2/d)]` and `‖h1(x)‖² ≤ 2`.
//!
//! ω and b are public: they are drawn from a ChaCha20 stream keyed by a public seed with portable
//! arithmetic (`libm`), so they are bit-identical on every machine. The transform runs a blocked f32
//! matrix product (`matrixmultiply` through `ndarray`) fused with a vectorised cosine, in parallel over
//! row blocks; it never holds an (N, d) temporary beyond the output.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, ArrayViewMut2, Axis, s};
use rayon::prelude::*;

use crate::error::{Error, Result, check_positive};
use crate::rng::Csprng;
use crate::simd;

/// Rows per parallel block of the transform: 256 rows × 784 features of f32 is 800 kB of input.
const BLOCK_ROWS: usize = 256;

/// The public projection of h1: `omega` is (n_features, dim) and `offset` is (dim,).
#[derive(Clone, Debug)]
pub struct RffProjection {
    pub omega: Array2<f32>,
    pub offset: Array1<f32>,
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
        let mut rng = Csprng::from_seed_bytes(key);
        let sd = (2.0 * gamma).sqrt();
        let omega = Array2::from_shape_simple_fn((n_features, dim), || (sd * rng.standard_normal()) as f32);
        let offset =
            Array1::from_shape_simple_fn(dim, || (2.0 * std::f64::consts::PI * rng.uniform_f64()) as f32);
        Ok(RffProjection { omega, offset })
    }

    pub fn n_features(&self) -> usize {
        self.omega.nrows()
    }

    pub fn dim(&self) -> usize {
        self.omega.ncols()
    }

    /// h1 of every row of `x` (any strides), as an (N, dim) f32 array.
    pub fn transform_f32(&self, x: ArrayView2<'_, f32>) -> Result<Array2<f32>> {
        self.check_input(x.ncols(), x.nrows())?;
        let mut out = Array2::<f32>::zeros((x.nrows(), self.dim()));
        let res: Result<()> = out
            .axis_chunks_iter_mut(Axis(0), BLOCK_ROWS)
            .into_par_iter()
            .enumerate()
            .try_for_each(|(b, out_block)| {
                let start = b * BLOCK_ROWS;
                let xb = x.slice(s![start..start + out_block.nrows(), ..]);
                if !xb.iter().all(|v| v.is_finite()) {
                    return Err(Error::NonFinite { name: "X" });
                }
                self.transform_block(xb, out_block);
                Ok(())
            });
        res.map(|_| out)
    }

    /// h1 of every row of a float64 `x`: each block is rounded to f32 and then hashed as `transform_f32`.
    pub fn transform_f64(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f32>> {
        self.check_input(x.ncols(), x.nrows())?;
        let mut out = Array2::<f32>::zeros((x.nrows(), self.dim()));
        let res: Result<()> = out
            .axis_chunks_iter_mut(Axis(0), BLOCK_ROWS)
            .into_par_iter()
            .enumerate()
            .try_for_each(|(b, out_block)| {
                let start = b * BLOCK_ROWS;
                let xb = x.slice(s![start..start + out_block.nrows(), ..]);
                if !xb.iter().all(|v| v.is_finite()) {
                    return Err(Error::NonFinite { name: "X" });
                }
                let xb32 = xb.mapv(|v| v as f32);
                self.transform_block(xb32.view(), out_block);
                Ok(())
            });
        res.map(|_| out)
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

    fn transform_block(&self, xb: ArrayView2<'_, f32>, mut out: ArrayViewMut2<'_, f32>) {
        crate::matmul::matmul_f32(&xb, &self.omega.view(), &mut out);
        let scale = (2.0 / self.dim() as f64).sqrt() as f32;
        let offset = self.offset.as_slice().expect("offset is contiguous");
        let flat = out.as_slice_mut().expect("an output row block is contiguous");
        simd::cos_scale_inplace(flat, offset, scale);
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
        assert_eq!(p.transform_f32(x.view()).unwrap_err(), Error::NonFinite { name: "X" });
        let empty = Array2::<f32>::zeros((0, 3));
        assert_eq!(p.transform_f32(empty.view()).unwrap().shape(), &[0, 4]);
    }
}
