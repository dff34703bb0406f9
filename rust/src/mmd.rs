//! Exact RBF kernel sums and MMD² for evaluation (paper Eq. 3).
//!
//! `k(x, y) = exp(−γ‖x − y‖²)`. For point sets A (n rows) and B (m rows),
//! `MMD²(A, B) = mean_{a,a'} k(a, a') + mean_{b,b'} k(b, b') − 2 mean_{a,b} k(a, b)` (the biased
//! V-statistic, which is the paper's objective J when A is the summary and B the validation set).
//!
//! Work is blockwise: a 512 × 512 block of inner products (f32 matrix product), turned into
//! `exp(−γ max(0, ‖a‖² + ‖b‖² − 2a·b))` and summed in f64. Extra memory is one block per thread.
//! Block sums are added in a fixed order, so results do not depend on the thread count.
//! The symmetric sum over A × A visits only blocks on or above the diagonal.

use ndarray::{Array1, Array2, ArrayView2, s};
use rayon::prelude::*;

use crate::error::{Error, Result, check_positive, checked_size, try_filled};
use crate::simd;

const BLOCK: usize = 512;

fn validate(name: &'static str, x: &ArrayView2<'_, f32>) -> Result<()> {
    if x.nrows() == 0 {
        return Err(Error::shape(name, "must have at least one row"));
    }
    // Without columns the array holds no values and its row count is unbounded (numpy allows
    // (2**40, 0)): the O(rows) norms and block lists below would not fit in memory.
    if x.ncols() == 0 {
        return Err(Error::shape(name, "must have at least one column (feature)"));
    }
    if !x.iter().all(|v| v.is_finite()) {
        return Err(Error::NonFinite { name });
    }
    Ok(())
}

/// The squared norm of every row, allocated fallibly (the row count comes from the caller).
fn sq_norms(name: &'static str, x: &ArrayView2<'_, f32>) -> Result<Vec<f64>> {
    let mut out = try_filled(name, x.nrows(), 0.0f64)?;
    for (o, r) in out.iter_mut().zip(x.outer_iter()) {
        *o = r.iter().map(|&v| v as f64 * v as f64).sum();
    }
    Ok(out)
}

/// The kernel sum of one block pair (at most `BLOCK` × `BLOCK` Gram values).
fn block_sum(a: ArrayView2<'_, f32>, sa: &[f64], b: ArrayView2<'_, f32>, sb: &[f64], gamma: f64) -> f64 {
    let mut gram = Array2::<f32>::zeros((a.nrows(), b.nrows()));
    crate::matmul::matmul_f32(&a, &b.t(), &mut gram.view_mut());
    // `gram` was just built by `zeros`: standard layout, so `as_slice` is always `Some`.
    simd::sum_rbf_block(sa, sb, gram.as_slice().expect("a fresh Array2 is contiguous"), gamma)
}

/// `Σ_{a∈A, b∈B} k(a, b)`. `a` and `b` may have any strides.
pub fn kernel_sum(a: ArrayView2<'_, f32>, b: ArrayView2<'_, f32>, gamma: f64) -> Result<f64> {
    check_positive("gamma", gamma)?;
    validate("A", &a)?;
    validate("B", &b)?;
    if a.ncols() != b.ncols() {
        return Err(Error::shape("B", format!("has {} features, A has {}", b.ncols(), a.ncols())));
    }
    cross_sum(a, b, gamma)
}

fn cross_sum(a: ArrayView2<'_, f32>, b: ArrayView2<'_, f32>, gamma: f64) -> Result<f64> {
    let (sa, sb) = (sq_norms("A", &a)?, sq_norms("B", &b)?);
    let (na, nb) = (a.nrows().div_ceil(BLOCK), b.nrows().div_ceil(BLOCK));
    let sums: Vec<f64> = (0..na * nb)
        .into_par_iter()
        .map(|t| {
            let (i, j) = (t / nb, t % nb);
            let (ra, rb) = (i * BLOCK..((i + 1) * BLOCK).min(a.nrows()), j * BLOCK..((j + 1) * BLOCK).min(b.nrows()));
            block_sum(a.slice(s![ra.clone(), ..]), &sa[ra], b.slice(s![rb.clone(), ..]), &sb[rb], gamma)
        })
        .collect();
    Ok(sums.iter().sum())
}

fn self_sum(name: &'static str, a: ArrayView2<'_, f32>, gamma: f64) -> Result<f64> {
    let sa = sq_norms(name, &a)?;
    let nblk = a.nrows().div_ceil(BLOCK);
    let pairs: Vec<(usize, usize)> = (0..nblk).flat_map(|i| (i..nblk).map(move |j| (i, j))).collect();
    let sums: Vec<f64> = pairs
        .par_iter()
        .map(|&(i, j)| {
            let (ri, rj) = (i * BLOCK..((i + 1) * BLOCK).min(a.nrows()), j * BLOCK..((j + 1) * BLOCK).min(a.nrows()));
            let s = block_sum(a.slice(s![ri.clone(), ..]), &sa[ri], a.slice(s![rj.clone(), ..]), &sa[rj], gamma);
            if i == j { s } else { 2.0 * s }
        })
        .collect();
    Ok(sums.iter().sum())
}

/// The biased (V-statistic) MMD² between the rows of `a` and of `b` under the RBF kernel with `gamma`.
pub fn mmd2(a: ArrayView2<'_, f32>, b: ArrayView2<'_, f32>, gamma: f64) -> Result<f64> {
    check_positive("gamma", gamma)?;
    validate("A", &a)?;
    validate("B", &b)?;
    if a.ncols() != b.ncols() {
        return Err(Error::shape("B", format!("has {} features, A has {}", b.ncols(), a.ncols())));
    }
    let (n, m) = (a.nrows() as f64, b.nrows() as f64);
    let (kaa, kbb) = rayon::join(|| self_sum("A", a, gamma), || self_sum("B", b, gamma));
    let (kaa, kbb, kab) = (kaa?, kbb?, cross_sum(a, b, gamma)?);
    Ok((kaa / (n * n) + kbb / (m * m) - 2.0 * kab / (n * m)).max(0.0))
}

/// For every row `a` of `a`, `mean_{b ∈ B} k(a, b)` (the exact-kernel analogue of `h1(a)·mean h1(B)`).
pub fn kernel_row_means(a: ArrayView2<'_, f32>, b: ArrayView2<'_, f32>, gamma: f64) -> Result<Array1<f64>> {
    check_positive("gamma", gamma)?;
    validate("B", &b)?;
    if a.ncols() != b.ncols() {
        return Err(Error::shape("B", format!("has {} features, A has {}", b.ncols(), a.ncols())));
    }
    if !a.iter().all(|v| v.is_finite()) {
        return Err(Error::NonFinite { name: "A" });
    }
    let sb = sq_norms("B", &b)?;
    let m = b.nrows() as f64;
    let mut out = try_filled("A", a.nrows(), 0.0f64)?;
    out.par_chunks_mut(BLOCK).enumerate().try_for_each(|(i, o)| -> Result<()> {
        let ab = a.slice(s![i * BLOCK..i * BLOCK + o.len(), ..]);
        let sa = sq_norms("A", &ab)?;
        // One block of A against all of B: BLOCK × |B| Gram values, fallibly.
        let gram = try_filled("B", checked_size("B", ab.nrows(), b.nrows())?, 0.0f32)?;
        let mut gram =
            Array2::from_shape_vec((ab.nrows(), b.nrows()), gram).map_err(|e| Error::shape("B", e.to_string()))?;
        crate::matmul::matmul_f32(&ab, &b.t(), &mut gram.view_mut());
        let g = gram.as_slice().expect("built by from_shape_vec in standard layout: contiguous");
        for (k, row) in g.chunks_exact(b.nrows()).enumerate() {
            o[k] = simd::sum_rbf_block(&sa[k..k + 1], &sb, row, gamma) / m;
        }
        Ok(())
    })?;
    Ok(Array1::from_vec(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(a: &Array2<f32>, b: &Array2<f32>, gamma: f64) -> f64 {
        let k = |x: ndarray::ArrayView1<f32>, y: ndarray::ArrayView1<f32>| {
            (-gamma * x.iter().zip(y).map(|(p, q)| (*p as f64 - *q as f64).powi(2)).sum::<f64>()).exp()
        };
        let mean = |x: &Array2<f32>, y: &Array2<f32>| {
            let mut s = 0.0;
            for r in x.outer_iter() {
                for c in y.outer_iter() {
                    s += k(r, c);
                }
            }
            s / (x.nrows() * y.nrows()) as f64
        };
        mean(a, a) + mean(b, b) - 2.0 * mean(a, b)
    }

    #[test]
    fn matches_naive_across_block_edges() {
        let a = Array2::from_shape_fn((300, 6), |(i, j)| ((i * 6 + j) as f32 * 0.13).sin());
        let b = Array2::from_shape_fn((517, 6), |(i, j)| ((i * 6 + j) as f32 * 0.29).cos() + 0.2);
        let got = mmd2(a.view(), b.view(), 0.7).unwrap();
        let want = naive(&a, &b, 0.7);
        assert!((got - want).abs() < 1e-6 * want.max(1e-3), "got {got} want {want}");
        let means = kernel_row_means(a.view(), b.view(), 0.7).unwrap();
        let total = kernel_sum(a.view(), b.view(), 0.7).unwrap();
        assert!((means.sum() * 517.0 - total).abs() < 1e-6 * total);
    }

    #[test]
    fn identical_sets_have_zero_mmd() {
        let a = Array2::from_shape_fn((40, 3), |(i, j)| (i + j) as f32);
        assert!(mmd2(a.view(), a.view(), 0.1).unwrap() < 1e-12);
    }

    #[test]
    fn bad_input() {
        let a = Array2::<f32>::zeros((3, 2));
        let e = Array2::<f32>::zeros((0, 2));
        assert_eq!(mmd2(a.view(), e.view(), 1.0).unwrap_err().argument(), Some("B"));
        assert_eq!(mmd2(a.view(), a.view(), -1.0).unwrap_err().argument(), Some("gamma"));
        let w = Array2::<f32>::zeros((3, 3));
        assert_eq!(mmd2(a.view(), w.view(), 1.0).unwrap_err().argument(), Some("B"));
    }

    #[test]
    fn zero_feature_inputs_with_huge_row_counts_never_abort() {
        // (2^45, 0) holds no values; the row norms (2^45 f64, beyond the address space) and the block-pair lists used to be
        // allocated infallibly (an allocation abort).
        let none: [f32; 0] = [];
        let tall = ArrayView2::from_shape((1usize << 45, 0), &none[..]).unwrap();
        let small = Array2::<f32>::zeros((3, 0));
        assert_eq!(mmd2(tall, small.view(), 1.0).unwrap_err().argument(), Some("A"));
        assert_eq!(kernel_sum(small.view(), tall, 1.0).unwrap_err().argument(), Some("A"));
        assert_eq!(kernel_sum(tall, tall, 1.0).unwrap_err().argument(), Some("A"));
        assert_eq!(kernel_row_means(tall, small.view(), 1.0).unwrap_err().argument(), Some("B"));
    }
}
