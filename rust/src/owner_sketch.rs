//! An owner's hash sum for the cell purchases of the nominations protocol (the label, strata and direction
//! purchases: each owner's one DP release holds it).
//!
//! One streaming pass over an owner's raw rows `X` (n × p, f32 or f64, any strides; never copied whole, never an
//! `n × d` matrix): each block of rows is hashed with [`RffProjection::hash_rows`] into a `B × d` f32 scratch per
//! worker, reduced, and the block results are merged sequentially in block order (blocks run in parallel in groups
//! of [`GROUP_BLOCKS`], a constant), so the output is bit-identical for any thread count.
//!
//! * [`hash_sum`]: `Σ_x h1(x)` in f64 (before noise);
//! * [`hash_scores`]: every row's score `h1(x) · w - shift` along a released direction `w` (the direction
//!   purchase's cells, in the kernel's random features), in f64, without an `n × d` matrix.

use ndarray::{ArrayView2, s};
use rayon::prelude::*;

use crate::error::{Error, Result, checked_size, try_filled};
use crate::rff::{RffProjection, RowElement, rows_as_f32};

/// Rows per block of a pass.
pub const BLOCK_ROWS: usize = 256;
/// Blocks hashed in parallel between two sequential merges (a constant: results never depend on the
/// thread count).
pub const GROUP_BLOCKS: usize = 64;

struct Scratch {
    x: Vec<f32>,
    h: Vec<f32>,
}

fn resize_fallible<T: Clone + Default>(buf: &mut Vec<T>, len: usize, name: &'static str) -> Result<()> {
    if len > buf.len() {
        buf.try_reserve(len - buf.len())
            .map_err(|_| Error::value(name, format!("a block of {len} values could not be allocated")))?;
    }
    buf.resize(len, T::default());
    Ok(())
}

fn check_rows<T: RowElement>(x: &ArrayView2<'_, T>, proj: &RffProjection) -> Result<()> {
    if x.ncols() != proj.n_features() {
        return Err(Error::shape(
            "X",
            format!("has {} features per row, the hasher was built for {}", x.ncols(), proj.n_features()),
        ));
    }
    if x.nrows() == 0 {
        return Err(Error::shape("X", "has no rows"));
    }
    Ok(())
}

/// Hash block `blk` of `x` into `sc.h` (rows × d); returns the row count. Errors on non-finite rows or
/// rows outside h1's accurate domain.
fn hash_block<T: RowElement>(
    x: &ArrayView2<'_, T>,
    proj: &RffProjection,
    blk: usize,
    sc: &mut Scratch,
) -> Result<usize> {
    let n = x.nrows();
    let d = proj.dim();
    let start = blk * BLOCK_ROWS;
    let end = (start + BLOCK_ROWS).min(n);
    let rows = end - start;
    let xs = rows_as_f32(x.slice(s![start..end, ..]), &mut sc.x)?;
    resize_fallible(&mut sc.h, checked_size("X", rows, d)?, "X")?;
    proj.hash_rows(xs, rows, &mut sc.h);
    crate::rff::check_hashed(&sc.h)?;
    Ok(rows)
}

/// Run `per_block` over every block in parallel groups and fold the results in block order.
fn blocks_in_order<T, R, F, G>(x: &ArrayView2<'_, T>, per_block: F, mut fold: G) -> Result<()>
where
    T: RowElement,
    R: Send,
    F: Fn(&mut Scratch, usize) -> Result<R> + Sync + Send,
    G: FnMut(R) -> Result<()>,
{
    let n_blocks = x.nrows().div_ceil(BLOCK_ROWS);
    for g0 in (0..n_blocks).step_by(GROUP_BLOCKS) {
        let g1 = (g0 + GROUP_BLOCKS).min(n_blocks);
        let parts: Vec<Result<R>> = (g0..g1)
            .into_par_iter()
            .map_init(|| Scratch { x: Vec::new(), h: Vec::new() }, |sc, blk| per_block(sc, blk))
            .collect();
        for part in parts {
            fold(part?)?;
        }
    }
    Ok(())
}

/// `Σ_x h1(x)` over the rows of `x`, in f64 (rows summed in order within a block, blocks in order).
pub fn hash_sum<T: RowElement>(x: ArrayView2<'_, T>, proj: &RffProjection) -> Result<Vec<f64>> {
    hash_sum_from(x, proj, try_filled("X", proj.dim(), 0.0f64)?)
}

/// [`hash_sum`] continued from `total` (a running sum over earlier rows): each block's sum is added to it in block
/// order, so rows passed in pieces of whole blocks ([`BLOCK_ROWS`]) give the bits of one call over all of them.
pub fn hash_sum_from<T: RowElement>(x: ArrayView2<'_, T>, proj: &RffProjection, total: Vec<f64>) -> Result<Vec<f64>> {
    check_rows(&x, proj)?;
    let d = proj.dim();
    if total.len() != d {
        return Err(Error::shape("total", format!("has {} values, the hasher's dim is {d}", total.len())));
    }
    let mut total = total;
    blocks_in_order(
        &x,
        |sc, blk| {
            let rows = hash_block(&x, proj, blk, sc)?;
            let mut part = try_filled("X", d, 0.0f64)?;
            for row in sc.h[..rows * d].chunks_exact(d) {
                for (a, &h) in part.iter_mut().zip(row) {
                    *a += h as f64;
                }
            }
            Ok(part)
        },
        |part: Vec<f64>| {
            for (a, b) in total.iter_mut().zip(&part) {
                *a += b;
            }
            Ok(())
        },
    )?;
    Ok(total)
}

/// `Σ_j h_j w_j` in f64 over eight interleaved partial sums (lane `j mod 8`, then the lanes in order): a fixed
/// order, independent of threads, that the compiler can vectorize.
fn dot(h: &[f32], w: &[f64]) -> f64 {
    let mut lanes = [0.0f64; 8];
    let mut hc = h.chunks_exact(8);
    let mut wc = w.chunks_exact(8);
    for (a, b) in (&mut hc).zip(&mut wc) {
        for k in 0..8 {
            lanes[k] += a[k] as f64 * b[k];
        }
    }
    for (k, (&a, &b)) in hc.remainder().iter().zip(wc.remainder()).enumerate() {
        lanes[k] += a as f64 * b;
    }
    lanes.iter().sum()
}

/// Every row's score `Σ_j h1(x)_j w_j - shift` (the direction purchase's score of a row in the kernel space), in f64:
/// each row's terms summed in the fixed order of [`dot`] (rows are independent: the output is bit-identical for any thread count).
pub fn hash_scores<T: RowElement>(
    x: ArrayView2<'_, T>,
    proj: &RffProjection,
    direction: &[f64],
    shift: f64,
) -> Result<Vec<f64>> {
    check_rows(&x, proj)?;
    let d = proj.dim();
    if direction.len() != d {
        return Err(Error::shape(
            "direction",
            format!("has {} values, the hasher's dimension is {d}", direction.len()),
        ));
    }
    if !direction.iter().all(|v| v.is_finite()) || !shift.is_finite() {
        return Err(Error::value("direction", "the direction and its shift must be finite".to_string()));
    }
    let mut out: Vec<f64> = Vec::new();
    out.try_reserve_exact(x.nrows())
        .map_err(|_| Error::value("X", format!("{} scores could not be allocated", x.nrows())))?;
    blocks_in_order(
        &x,
        |sc, blk| {
            let rows = hash_block(&x, proj, blk, sc)?;
            let part: Vec<f64> = sc.h[..rows * d].chunks_exact(d).map(|row| dot(row, direction) - shift).collect();
            Ok(part)
        },
        |part: Vec<f64>| {
            out.extend_from_slice(&part);
            Ok(())
        },
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::public_key_from_u64;
    use ndarray::Array2;

    fn data(n: usize, nf: usize, seed: u64) -> Array2<f32> {
        let mut s = seed;
        Array2::from_shape_simple_fn((n, nf), || {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 40) as f32) / (1u64 << 24) as f32
        })
    }

    fn proj(nf: usize, d: usize) -> RffProjection {
        RffProjection::from_key(public_key_from_u64("h1", 7), nf, d, 0.5).unwrap()
    }

    #[test]
    fn hash_sum_is_the_sum_of_the_hashes() {
        let x = data(700, 5, 1);
        let p = proj(5, 32);
        let h = p.transform_f32(x.view()).unwrap();
        let s = hash_sum(x.view(), &p).unwrap();
        for (j, &sj) in s.iter().enumerate().take(32) {
            let want: f64 = h.column(j).iter().map(|&v| v as f64).sum();
            assert!((sj - want).abs() < 1e-9, "{sj} {want}");
        }
    }

    #[test]
    fn a_sum_continued_over_whole_blocks_is_the_sum_in_one_call() {
        let n = 5 * BLOCK_ROWS + 17;
        let x = data(n, 7, 3);
        let p = proj(7, 33);
        let whole = hash_sum(x.view(), &p).unwrap();
        let mut total = vec![0.0f64; 33];
        for start in (0..n).step_by(2 * BLOCK_ROWS) {
            let end = (start + 2 * BLOCK_ROWS).min(n);
            total = hash_sum_from(x.slice(s![start..end, ..]), &p, total).unwrap();
        }
        let bits = |v: &[f64]| v.iter().map(|a| a.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&whole), bits(&total));
        assert!(hash_sum_from(x.view(), &p, vec![0.0; 32]).is_err());
    }

    #[test]
    fn hash_scores_are_the_hashes_dotted_with_the_direction() {
        let x = data(700, 5, 2);
        let p = proj(5, 32);
        let h = p.transform_f32(x.view()).unwrap();
        let w: Vec<f64> = (0..32).map(|j| ((j as f64) * 0.37).sin()).collect();
        let s = hash_scores(x.view(), &p, &w, 0.25).unwrap();
        assert_eq!(s.len(), 700);
        for (i, row) in h.outer_iter().enumerate() {
            let want: f64 = row.iter().zip(&w).map(|(&a, &b)| a as f64 * b).sum::<f64>() - 0.25;
            assert!((s[i] - want).abs() < 1e-12, "{} {}", s[i], want);
        }
        let x64 = x.mapv(|v| v as f64);
        assert_eq!(hash_scores(x64.view(), &p, &w, 0.25).unwrap(), s);
    }

    #[test]
    fn hash_scores_refuse_a_direction_of_the_wrong_length_or_not_finite() {
        let x = data(10, 5, 3);
        let p = proj(5, 8);
        assert!(hash_scores(x.view(), &p, &[0.0; 7], 0.0).is_err());
        assert!(hash_scores(x.view(), &p, &[f64::NAN; 8], 0.0).is_err());
        assert!(hash_scores(x.view(), &p, &[0.0; 8], f64::INFINITY).is_err());
    }
}
