//! One safe entry point to a fast single-threaded matrix product (the `gemm` crate, which picks AVX2 or
//! AVX-512 kernels at run time). Callers parallelise over blocks themselves, so that blocking, and
//! therefore every result, is independent of the thread count.

use ndarray::{ArrayView2, ArrayViewMut2};

/// `out = a · b` for views with any strides. Shapes must agree (checked: a mismatch is a bug in the
/// caller, never user input, so it panics in debug builds and is a no-op guard in release).
pub fn matmul_f32(a: &ArrayView2<'_, f32>, b: &ArrayView2<'_, f32>, out: &mut ArrayViewMut2<'_, f32>) {
    let (m, k) = a.dim();
    let (k2, n) = b.dim();
    debug_assert_eq!(k, k2);
    debug_assert_eq!(out.dim(), (m, n));
    if k != k2 || out.dim() != (m, n) || m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        out.fill(0.0);
        return;
    }
    let (ars, acs) = (a.strides()[0], a.strides()[1]);
    let (brs, bcs) = (b.strides()[0], b.strides()[1]);
    let (ors, ocs) = (out.strides()[0], out.strides()[1]);
    // SAFETY: the pointers and strides describe valid, live ndarray views of the stated shapes; `out`
    // is a unique mutable view that does not alias `a` or `b` (guaranteed by the borrow checker).
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            out.as_mut_ptr(),
            ocs,
            ors,
            false,
            a.as_ptr(),
            acs,
            ars,
            b.as_ptr(),
            bcs,
            brs,
            0.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    #[test]
    fn matches_naive_product_with_any_strides() {
        let a = Array2::from_shape_fn((37, 19), |(i, j)| ((i * 19 + j) % 11) as f32 - 5.0);
        let b = Array2::from_shape_fn((19, 23), |(i, j)| ((i * 23 + j) % 7) as f32 - 3.0);
        let want = Array2::from_shape_fn((37, 23), |(i, j)| (0..19).map(|l| a[[i, l]] * b[[l, j]]).sum::<f32>());
        let mut out = Array2::<f32>::zeros((37, 23));
        matmul_f32(&a.view(), &b.view(), &mut out.view_mut());
        assert_eq!(out, want);
        let bt = b.t().as_standard_layout().into_owned();
        let mut out2 = Array2::<f32>::zeros((37, 23));
        matmul_f32(&a.view(), &bt.t(), &mut out2.view_mut());
        assert_eq!(out2, want);
        let mut out3 = Array2::<f32>::zeros((23, 37));
        matmul_f32(&a.view(), &b.view(), &mut out3.view_mut().reversed_axes());
        assert_eq!(out3.t(), want);
    }
}
