//! The stochastic quantizer of h2 (paper Alg. 2 line 3; DESIGN.md §3.1).
//!
//! Values in [−1, 1] are rounded to the grid `S = {−1, −1+η, …, 1}` (m = 2/η an integer), unbiasedly:
//! with `k = floor((x+1)/η)`, `x → −1+kη` with probability `((k+1)η − 1 − x)/η`, else `−1+(k+1)η`
//! (the paper's second probability has a typo; it is `(x+1−kη)/η`). So `E[x̃] = x`.
//!
//! Only the column sums `w(D_Q, i) = Σ_rows x̃_i` are needed. They are kept exactly as integers:
//! `w = −n + η·Σ k̃` with `k̃` the grid index of each rounded value. The quantizer's coins are internal
//! randomness of h2 (the MWEM release is private for any quantization); they come from the same CSPRNG,
//! one derived stream per block of rows so that the result does not depend on the thread count.

use ndarray::{Array2, ArrayView2, Axis};
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::rng::Csprng;

const BLOCK_ROWS: usize = 1024;
/// Values within this distance outside [−1, 1] (float32 rounding of scaled h1 values) are clamped.
const RANGE_TOLERANCE: f64 = 1e-6;

/// The grid of h2: `m = 2/η` steps, `η = 2/m` exactly.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grid {
    pub steps: u32,
}

impl Grid {
    /// The grid for step `eta`; `2/eta` must be an integer (within 1e-9 relative) between 1 and 2^20.
    pub fn new(eta: f64) -> Result<Self> {
        if !(eta.is_finite() && eta > 0.0 && eta <= 2.0) {
            return Err(Error::value("eta", format!("must be in (0, 2], got {eta}")));
        }
        let m = 2.0 / eta;
        let r = m.round();
        if (m - r).abs() > 1e-9 * m || r < 1.0 || r > (1u32 << 20) as f64 {
            return Err(Error::value("eta", format!("2/eta must be an integer between 1 and 2^20, got 2/eta = {m}")));
        }
        Ok(Grid { steps: r as u32 })
    }

    pub fn eta(&self) -> f64 {
        2.0 / self.steps as f64
    }

    /// The grid points `−1 + jη`, j = 0..=m.
    pub fn points(&self) -> Vec<f64> {
        (0..=self.steps).map(|j| -1.0 + j as f64 * self.eta()).collect()
    }

    /// The grid index of one stochastically rounded value.
    #[inline]
    fn round_index(&self, x: f64, rng: &mut Csprng) -> Result<u32> {
        if !x.is_finite() {
            return Err(Error::NonFinite { name: "values" });
        }
        if x.abs() > 1.0 + RANGE_TOLERANCE {
            return Err(Error::value("values", format!("must lie in [-1, 1], got {x}")));
        }
        let x = x.clamp(-1.0, 1.0);
        let t = (x + 1.0) * self.steps as f64 / 2.0; // position in grid steps, in [0, m]
        let k = (t.floor() as u32).min(self.steps - 1);
        let p_up = t - k as f64; // = (x + 1 − kη)/η
        Ok(if rng.uniform_f64() < p_up { k + 1 } else { k })
    }
}

/// One derived stream per block of `BLOCK_ROWS` rows, reserved fallibly (`n_rows` comes from the caller).
fn block_streams(rng: &mut Csprng, n_rows: usize) -> Result<Vec<Csprng>> {
    let n_blocks = n_rows.div_ceil(BLOCK_ROWS);
    let mut streams = Vec::new();
    streams.try_reserve_exact(n_blocks).map_err(|_| {
        Error::value("values", format!("{n_rows} rows need {n_blocks} block streams, which could not be allocated"))
    })?;
    streams.extend((0..n_blocks).map(|b| rng.derive(&(b as u64).to_le_bytes())));
    Ok(streams)
}

/// Every value rounded to the grid (for tests and inspection).
///
/// An input with no values (a zero dimension; the other may be huge, numpy allows `(2**40, 0)`) gives an
/// empty array of the same shape and draws nothing. The output is allocated fallibly.
pub fn stochastic_round(values: ArrayView2<'_, f64>, eta: f64, rng: &mut Csprng) -> Result<Array2<f64>> {
    let grid = Grid::new(eta)?;
    let (rows, cols) = values.dim();
    let len = rows
        .checked_mul(cols)
        .ok_or_else(|| Error::shape("values", format!("{rows} x {cols} values overflow the address space")))?;
    let flat = crate::error::try_filled("values", len, 0.0f64)?;
    let mut out = Array2::from_shape_vec((rows, cols), flat).map_err(|e| Error::shape("values", e.to_string()))?;
    if len == 0 {
        return Ok(out);
    }
    let mut streams = block_streams(rng, rows)?;
    out.axis_chunks_iter_mut(Axis(0), BLOCK_ROWS)
        .into_par_iter()
        .zip(values.axis_chunks_iter(Axis(0), BLOCK_ROWS).into_par_iter())
        .zip(streams.par_iter_mut())
        .try_for_each(|((mut o, v), r)| -> Result<()> {
            for (oi, &x) in o.iter_mut().zip(v.iter()) {
                *oi = -1.0 + grid.round_index(x, r)? as f64 * grid.eta();
            }
            Ok(())
        })?;
    Ok(out)
}

/// Column sums of the quantized rows, `w(D_Q, i) = −n + η·Σ_rows k̃_i`, exact in integer arithmetic.
///
/// The `d` sums are allocated fallibly (`d` may be huge for an input with no rows); an input with no
/// values draws nothing.
pub fn quantize_column_sums(values: ArrayView2<'_, f32>, eta: f64, rng: &mut Csprng) -> Result<Vec<f64>> {
    let grid = Grid::new(eta)?;
    let d = values.ncols();
    let n = values.nrows() as f64;
    let mut sums = crate::error::try_filled("values", d, 0.0f64)?;
    if values.is_empty() {
        // No rows: every sum is −0·1 + η·0 = 0. No columns: nothing to return.
        return Ok(sums);
    }
    let mut streams = block_streams(rng, values.nrows())?;
    let partial: Vec<Vec<u64>> = values
        .axis_chunks_iter(Axis(0), BLOCK_ROWS)
        .into_par_iter()
        .zip(streams.par_iter_mut())
        .map(|(v, r)| -> Result<Vec<u64>> {
            let mut k = crate::error::try_filled("values", d, 0u64)?;
            for row in v.outer_iter() {
                for (ki, &x) in k.iter_mut().zip(row.iter()) {
                    *ki += grid.round_index(x as f64, r)? as u64;
                }
            }
            Ok(k)
        })
        .collect::<Result<_>>()?;
    for (i, s) in sums.iter_mut().enumerate() {
        let total: u64 = partial.iter().map(|p| p[i]).sum();
        *s = -n + grid.eta() * total as f64;
    }
    Ok(sums)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_validation() {
        assert_eq!(Grid::new(1.0 / 140.0).unwrap().steps, 280);
        assert_eq!(Grid::new(0.5).unwrap().points(), vec![-1.0, -0.5, 0.0, 0.5, 1.0]);
        assert_eq!(Grid::new(0.3).unwrap_err().argument(), Some("eta"));
        assert!(Grid::new(0.0).is_err());
        assert!(Grid::new(f64::NAN).is_err());
        assert!(Grid::new(3.0).is_err());
    }

    #[test]
    fn rounding_is_unbiased_and_on_neighbouring_grid_points() {
        let mut rng = Csprng::from_seed_u64(20);
        let xs = [-1.0, -0.99, -0.3, 0.0, 0.123, 0.75, 1.0];
        let n = 40_000;
        let values = Array2::from_shape_fn((n, xs.len()), |(_, j)| xs[j]);
        let q = stochastic_round(values.view(), 0.25, &mut rng).unwrap();
        for (j, &x) in xs.iter().enumerate() {
            let col = q.column(j);
            let lo = -1.0 + ((x + 1.0) / 0.25f64).floor().min(7.0) * 0.25;
            assert!(col.iter().all(|&v| v == lo || v == lo + 0.25), "x = {x}");
            // Var <= eta^2/4 = 1/64: sd(mean) <= 6.3e-4, 5 sd = 3.2e-3.
            let mean = col.sum() / n as f64;
            assert!((mean - x).abs() < 3.2e-3, "x = {x}, mean = {mean}");
        }
    }

    #[test]
    fn column_sums_are_exact_lattice_values_and_unbiased() {
        let mut rng = Csprng::from_seed_u64(21);
        let values = Array2::from_shape_fn((5000, 3), |(i, j)| ((i * 7 + j * 3) % 19) as f32 / 9.5 - 1.0);
        let sums = quantize_column_sums(values.view(), 1.0 / 8.0, &mut rng).unwrap();
        for (j, s) in sums.iter().enumerate() {
            let k = (s + 5000.0) * 8.0;
            assert_eq!(k.fract(), 0.0);
            let exact: f64 = values.column(j).iter().map(|&v| v as f64).sum();
            // Per-value variance <= eta^2/4; sd of the sum <= sqrt(5000)/16 = 4.4; 5 sd = 22.
            assert!((s - exact).abs() < 22.0, "column {j}: {s} vs {exact}");
        }
    }

    #[test]
    fn thread_count_independent_and_rejects_out_of_range() {
        let values = Array2::from_shape_fn((3000, 4), |(i, j)| ((i + j) as f32 * 0.37).sin());
        let a = quantize_column_sums(values.view(), 0.1, &mut Csprng::from_seed_u64(5)).unwrap();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let b = pool.install(|| quantize_column_sums(values.view(), 0.1, &mut Csprng::from_seed_u64(5)).unwrap());
        assert_eq!(a, b);
        let mut bad = values.clone();
        bad[[2500, 1]] = 1.5;
        assert_eq!(
            quantize_column_sums(bad.view(), 0.1, &mut Csprng::from_seed_u64(5)).unwrap_err().argument(),
            Some("values")
        );
        bad[[2500, 1]] = f32::NAN;
        assert!(quantize_column_sums(bad.view(), 0.1, &mut Csprng::from_seed_u64(5)).is_err());
    }

    #[test]
    fn zero_size_inputs_with_a_huge_dimension_never_abort() {
        // numpy allows (2**40, 0) and (0, 2**40) arrays without memory. Before: 2^30 block streams were
        // derived and collected (an allocation abort) or 2^40 sums were collected (capacity overflow).
        let none: [f32; 0] = [];
        let tall = ArrayView2::from_shape((1usize << 40, 0), &none[..]).unwrap();
        let wide = ArrayView2::from_shape((0, 1usize << 45), &none[..]).unwrap();
        let mut rng = Csprng::from_seed_u64(3);
        assert_eq!(quantize_column_sums(tall, 0.5, &mut rng).unwrap(), Vec::<f64>::new());
        assert_eq!(quantize_column_sums(wide, 0.5, &mut rng).unwrap_err().argument(), Some("values"));
        let none64: [f64; 0] = [];
        let tall64 = ArrayView2::from_shape((1usize << 40, 0), &none64[..]).unwrap();
        assert_eq!(stochastic_round(tall64, 0.5, &mut rng).unwrap().dim(), (1 << 40, 0));
        let wide64 = ArrayView2::from_shape((0, 1usize << 40), &none64[..]).unwrap();
        assert_eq!(stochastic_round(wide64, 0.5, &mut rng).unwrap().dim(), (0, 1 << 40));
        // Ordinary empty inputs are unchanged.
        assert_eq!(quantize_column_sums(Array2::<f32>::zeros((0, 3)).view(), 0.5, &mut rng).unwrap(), vec![0.0; 3]);
    }
}
