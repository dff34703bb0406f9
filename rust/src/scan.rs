//! One parallel read of a matrix for the input checks of h1: are all values finite (in float32, the
//! type every row is hashed in), and what is the largest `|x|`? No temporary is allocated; the rows are
//! read in blocks, in parallel, and the blocks' answers are combined with `max`, which is exact and
//! order-free, so the answer does not depend on the thread count.

use ndarray::{ArrayView2, Axis};
use rayon::prelude::*;

use crate::rff::RowElement;

/// Rows per parallel block.
const SCAN_ROWS: usize = 4096;

/// `Some(max |x|)` over every value of `x` converted to f32 (0 for an empty matrix), or `None` when some
/// value is NaN, infinite, or (for f64 input) beyond the float32 range.
pub fn finite_max_abs<T: RowElement>(x: ArrayView2<'_, T>) -> Option<f32> {
    let block = |b: ArrayView2<'_, T>| -> Option<f32> {
        let mut peak = 0.0f32;
        let mut finite = true;
        match b.as_slice() {
            Some(s) => {
                for &v in s {
                    let a = v.to_f32().abs();
                    finite &= a.is_finite();
                    peak = if a > peak { a } else { peak };
                }
            }
            None => {
                for &v in b.iter() {
                    let a = v.to_f32().abs();
                    finite &= a.is_finite();
                    peak = if a > peak { a } else { peak };
                }
            }
        }
        finite.then_some(peak)
    };
    // No values: nothing to scan. Without this, a (2**50, 0) array (numpy allows it, without memory)
    // would walk 2^38 empty chunks, for hours.
    if x.is_empty() {
        return Some(0.0);
    }
    x.axis_chunks_iter(Axis(0), SCAN_ROWS).into_par_iter().map(block).try_reduce(|| 0.0f32, |a, b| Some(a.max(b)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    #[test]
    fn max_and_finiteness_in_any_layout_and_thread_count() {
        let x = Array2::from_shape_fn((10_001, 7), |(i, j)| ((i * 7 + j) as f32 * 0.37).sin() * (i as f32));
        let want = x.iter().fold(0.0f32, |m, v| m.max(v.abs()));
        assert_eq!(finite_max_abs(x.view()), Some(want));
        assert_eq!(finite_max_abs(x.t()), Some(want));
        assert_eq!(finite_max_abs(x.mapv(|v| v as f64).view()), Some(want));
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            assert_eq!(pool.install(|| finite_max_abs(x.view())), Some(want));
        }
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let mut y = x.clone();
            y[[9_999, 3]] = bad;
            assert_eq!(finite_max_abs(y.view()), None);
        }
        let mut z = x.mapv(|v| v as f64);
        z[[5, 5]] = 1e300;
        assert_eq!(finite_max_abs(z.view()), None);
        assert_eq!(finite_max_abs(Array2::<f32>::zeros((0, 3)).view()), Some(0.0));
        // Zero-size with a huge row count: answered at once (it used to walk 2^38 empty chunks).
        let none: [f64; 0] = [];
        let tall = ndarray::ArrayView2::from_shape((1usize << 50, 0), &none[..]).unwrap();
        assert_eq!(finite_max_abs(tall), Some(0.0));
    }
}
