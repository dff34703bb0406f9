//! Per-owner bid maximisation (paper Alg. 3 line 6; DESIGN.md §4).
//!
//! An owner holds its hashed rows `H` (N × d, f32, row-major) and a mask of rows it has already offered.
//! Given the broadcast vector `v = g̃ − q/(q+1) · g_ℓ`, its bid is `max_{x not offered} h1(x)·v` and the
//! row attaining it. Dot products are exact f32×f32 products summed in f64 in a fixed order, so the
//! winner does not depend on the thread count; ties go to the lowest row index.

use ndarray::ArrayView2;
use rayon::prelude::*;

use crate::error::{Error, Result, check_finite_f32};
use crate::simd;

/// Rows per parallel block: 4096 rows × 140 dims of f32 is 2.3 MB.
const BLOCK_ROWS: usize = 4096;

/// The best remaining row of one owner: its bid value and row index.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Best {
    pub value: f64,
    pub index: usize,
}

/// The better of two candidates: the larger value, the lower index on a tie.
pub(crate) fn better(a: Option<Best>, b: Option<Best>) -> Option<Best> {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(x), Some(y)) => {
            if y.value > x.value || (y.value == x.value && y.index < x.index) {
                Some(y)
            } else {
                Some(x)
            }
        }
    }
}

/// Validate one owner's inputs: `h` is (N, d) in standard layout, `offered` has N entries, `v` has d.
/// Returns `h` as its row-major slice (`N·d` values).
fn check<'a>(h: &ArrayView2<'a, f32>, offered: Option<&[bool]>, v: &[f32]) -> Result<&'a [f32]> {
    if h.ncols() != v.len() {
        return Err(Error::shape("v", format!("has length {}, the hashed rows have {} columns", v.len(), h.ncols())));
    }
    if let Some(m) = offered
        && m.len() != h.nrows()
    {
        return Err(Error::shape("offered", format!("has length {}, expected {}", m.len(), h.nrows())));
    }
    let flat = h.to_slice().ok_or_else(|| Error::shape("hashes", "must be C-contiguous (row-major)"))?;
    // A NaN hash would win or lose every comparison silently: refuse it, as `BidIndex` does.
    if !flat.par_iter().all(|x| x.is_finite()) {
        return Err(Error::NonFinite { name: "hashes" });
    }
    Ok(flat)
}

/// The best row of `h` not marked in `offered` for the broadcast `v`; `None` when every row is offered
/// (or `h` is empty). Parallel over row blocks.
pub fn best_row(h: ArrayView2<'_, f32>, offered: Option<&[bool]>, v: &[f32]) -> Result<Option<Best>> {
    let flat = check(&h, offered, v)?;
    check_finite_f32("v", v.iter().copied())?;
    Ok(best_row_unchecked(flat, h.nrows(), offered, v))
}

/// [`best_row`] on the validated row-major slice `flat` of `n` rows of `v.len()` values (`offered`, if
/// any, has `n` entries).
fn best_row_unchecked(flat: &[f32], n: usize, offered: Option<&[bool]>, v: &[f32]) -> Option<Best> {
    let d = v.len();
    if n == 0 {
        return None;
    }
    if d == 0 {
        let first = (0..n).find(|&i| !offered.is_some_and(|m| m[i]))?;
        return Some(Best { value: 0.0, index: first });
    }
    flat.par_chunks(BLOCK_ROWS * d)
        .enumerate()
        .map(|(b, block)| {
            simd::best_in_block(block, v, offered, b * BLOCK_ROWS).map(|(value, index)| Best { value, index })
        })
        .reduce(|| None, better)
}

/// The exact kernel's value `h_i · v` of every row (f32 products summed in f64 in the fixed order of
/// [`best_row`]), in parallel over row blocks. Used by the aggregator to score its pool without BLAS.
pub fn row_dots(h: ArrayView2<'_, f32>, v: &[f32]) -> Result<Vec<f64>> {
    let flat = check(&h, None, v)?;
    check_finite_f32("v", v.iter().copied())?;
    let d = v.len();
    // Fallible: with no columns, `h` holds no values and its row count is unbounded (numpy allows (2**40, 0)).
    let mut out = crate::error::try_filled("hashes", h.nrows(), 0.0f64)?;
    if d == 0 || h.nrows() == 0 {
        return Ok(out);
    }
    out.par_chunks_mut(BLOCK_ROWS).zip(flat.par_chunks(BLOCK_ROWS * d)).for_each(|(o, block)| {
        for (x, row) in o.iter_mut().zip(block.chunks_exact(d)) {
            *x = simd::dot_f32_f64(row, v);
        }
    });
    Ok(out)
}

/// One owner's inputs to [`best_rows`].
pub struct OwnerRows<'a> {
    pub hashes: ArrayView2<'a, f32>,
    pub offered: Option<&'a [bool]>,
}

/// [`best_row`] for several owners against the same broadcast `v`, in parallel over owners and blocks.
pub fn best_rows(owners: &[OwnerRows<'_>], v: &[f32]) -> Result<Vec<Option<Best>>> {
    check_finite_f32("v", v.iter().copied())?;
    let flats = owners.iter().map(|o| check(&o.hashes, o.offered, v)).collect::<Result<Vec<_>>>()?;
    Ok(owners
        .par_iter()
        .zip(&flats)
        .map(|(o, flat)| best_row_unchecked(flat, o.hashes.nrows(), o.offered, v))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    #[test]
    fn finds_the_maximum_and_skips_offered_rows() {
        let h = Array2::from_shape_fn((10_000, 5), |(i, j)| (((i * 31 + j * 17) % 97) as f32 - 48.0) / 50.0);
        let v = [0.3f32, -0.2, 0.5, 0.1, -0.4];
        let scores: Vec<f64> = (0..10_000).map(|i| (0..5).map(|j| h[[i, j]] as f64 * v[j] as f64).sum()).collect();
        let best = best_row(h.view(), None, &v).unwrap().unwrap();
        let want = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let first = scores.iter().position(|&s| s == want).unwrap();
        assert_eq!(best, Best { value: want, index: first });
        let mut offered = vec![false; 10_000];
        for (i, s) in scores.iter().enumerate() {
            if *s == want {
                offered[i] = true;
            }
        }
        let second = best_row(h.view(), Some(&offered), &v).unwrap().unwrap();
        assert!(second.value < want);
        assert!(!offered[second.index]);
    }

    #[test]
    fn ties_go_to_the_lowest_index_across_blocks() {
        let h = Array2::<f32>::ones((3 * BLOCK_ROWS + 5, 4));
        let v = [1.0f32; 4];
        let mut offered = vec![false; h.nrows()];
        assert_eq!(best_row(h.view(), Some(&offered), &v).unwrap().unwrap().index, 0);
        for o in offered.iter_mut().take(BLOCK_ROWS + 3) {
            *o = true;
        }
        assert_eq!(best_row(h.view(), Some(&offered), &v).unwrap().unwrap().index, BLOCK_ROWS + 3);
        offered.iter_mut().for_each(|o| *o = true);
        assert_eq!(best_row(h.view(), Some(&offered), &v).unwrap(), None);
    }

    #[test]
    fn zero_width_hashes_with_huge_row_counts_never_abort() {
        // A (2^45, 0) array holds no values; row_dots used to allocate its 2^45 outputs with `vec!` (an
        // allocation abort). best_row answers without allocating.
        let none: [f32; 0] = [];
        let h = ArrayView2::from_shape((1usize << 45, 0), &none[..]).unwrap();
        assert_eq!(row_dots(h, &[]).unwrap_err().argument(), Some("hashes"));
        assert_eq!(best_row(h, None, &[]).unwrap(), Some(Best { value: 0.0, index: 0 }));
        assert_eq!(row_dots(Array2::<f32>::zeros((3, 0)).view(), &[]).unwrap(), vec![0.0; 3]);
    }

    #[test]
    fn batch_equals_single() {
        let a = Array2::from_shape_fn((100, 3), |(i, j)| ((i + 2 * j) as f32).sin());
        let b = Array2::from_shape_fn((0, 3), |_| 0.0f32);
        let c = Array2::from_shape_fn((50, 3), |(i, j)| ((i * j) as f32).cos());
        let v = [0.5f32, 0.25, -1.0];
        let owners = [
            OwnerRows { hashes: a.view(), offered: None },
            OwnerRows { hashes: b.view(), offered: None },
            OwnerRows { hashes: c.view(), offered: None },
        ];
        let got = best_rows(&owners, &v).unwrap();
        assert_eq!(got[0], best_row(a.view(), None, &v).unwrap());
        assert_eq!(got[1], None);
        assert_eq!(got[2], best_row(c.view(), None, &v).unwrap());
    }

    #[test]
    fn exact_winner_on_near_ties() {
        // Rows that differ from the best by one f32 ulp in one coordinate: the exact winner must be found.
        let d = 140;
        let mut h = Array2::from_shape_fn((9000, d), |(i, j)| (((i * 13 + j * 7) % 101) as f32 - 50.0) * 1e-3);
        let v: Vec<f32> = (0..d).map(|j| ((j % 17) as f32 - 8.0) * 0.01).collect();
        for r in [10usize, 4500, 8999] {
            for j in 0..d {
                h[[r, j]] = 0.1 * v[j].signum();
            }
        }
        // One ulp more magnitude in a coordinate where sign(h) = sign(v): row 4500 wins by a hair.
        h[[4500, 3]] = f32::from_bits(h[[4500, 3]].to_bits() + 1);
        let exact: Vec<f64> = (0..9000).map(|i| (0..d).map(|j| h[[i, j]] as f64 * v[j] as f64).sum()).collect();
        let want = exact.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let idx = exact.iter().position(|&x| x == want).unwrap();
        let got = best_row(h.view(), None, &v).unwrap().unwrap();
        assert_eq!(got.index, idx);
        assert!((got.value - want).abs() < 1e-12);
    }

    #[test]
    fn row_dots_are_the_values_of_best_row() {
        let h = Array2::from_shape_fn((9000, 7), |(i, j)| ((i * 7 + j) as f32 * 0.37).sin());
        let v = [0.5f32, -0.25, 1.0, 0.1, -0.3, 0.7, 0.2];
        let s = row_dots(h.view(), &v).unwrap();
        let b = best_row(h.view(), None, &v).unwrap().unwrap();
        assert_eq!(s[b.index], b.value);
        assert!(s.iter().all(|&x| x <= b.value));
        assert_eq!(row_dots(h.view(), &[1.0; 3]).unwrap_err().argument(), Some("v"));
    }

    #[test]
    fn bad_input() {
        let h = Array2::<f32>::zeros((4, 3));
        assert_eq!(best_row(h.view(), None, &[1.0, 2.0]).unwrap_err().argument(), Some("v"));
        assert_eq!(best_row(h.view(), Some(&[false; 3]), &[1.0; 3]).unwrap_err().argument(), Some("offered"));
        assert_eq!(best_row(h.view(), None, &[f32::NAN; 3]).unwrap_err().argument(), Some("v"));
        assert_eq!(best_row(h.t(), None, &[1.0; 4]).unwrap_err().argument(), Some("hashes"));
        let mut bad = Array2::<f32>::zeros((4, 3));
        bad[[2, 1]] = f32::NAN;
        assert_eq!(best_row(bad.view(), None, &[1.0; 3]).unwrap_err(), Error::NonFinite { name: "hashes" });
        assert_eq!(row_dots(bad.view(), &[1.0; 3]).unwrap_err().argument(), Some("hashes"));
    }
}
