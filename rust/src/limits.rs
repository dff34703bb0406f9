//! Documented caps on sizes and loop counts that come from user input, and fallible allocation.
//!
//! Every allocation whose size a caller chooses is checked against a cap here and then made with
//! `try_reserve_exact`, so that an absurd size is a typed [`Error`] and never an abort; every loop
//! count a caller chooses is bounded, so that no call runs for ever.
//!
//! | cap | value | what it bounds |
//! |---|---|---|
//! | [`MAX_DIM`] | 2^20 | `dim` of h1 and of product MWEM |
//! | [`MAX_N_FEATURES`] | 2^24 | `n_features` of h1 |
//! | [`MAX_PROJECTION`] | 2^28 | `n_features · dim` (the projection ω, 1 GiB of f32) |
//! | [`MAX_ARRAY`] | 2^28 | elements of one array a sampler returns (`uniform_array`) |
//! | [`MAX_MWEM_STEPS`] | 10^6 | steps of one MWEM release |
//! | [`MAX_MWEM_WORK`] | 2^33 | `steps · dim` of one MWEM release (each step is O(dim)) |

use crate::error::{Error, Result};

/// Largest `dim` (random features; MWEM coordinates).
pub const MAX_DIM: usize = 1 << 20;
/// Largest `n_features` of h1.
pub const MAX_N_FEATURES: usize = 1 << 24;
/// Largest `n_features * dim` of one projection.
pub const MAX_PROJECTION: usize = 1 << 28;
/// Largest number of elements of one array drawn by a sampler.
pub const MAX_ARRAY: usize = 1 << 28;
/// Largest number of steps of one MWEM release.
pub const MAX_MWEM_STEPS: u64 = 1_000_000;
/// Largest `steps * dim` of one MWEM release.
pub const MAX_MWEM_WORK: u64 = 1 << 33;

/// `Err(InvalidValue)` unless `1 <= value <= max`.
pub fn check_count(name: &'static str, value: u64, max: u64) -> Result<()> {
    if value == 0 || value > max {
        return Err(Error::value(name, format!("must be between 1 and {max}, got {value}")));
    }
    Ok(())
}

/// A vector of `n` copies of `fill`, allocated fallibly: `Err` naming `name` when `n` exceeds `max`
/// elements or the allocator refuses.
pub fn try_filled<T: Clone>(name: &'static str, n: usize, max: usize, fill: T) -> Result<Vec<T>> {
    if n > max {
        return Err(Error::value(name, format!("asks for {n} elements, more than the cap of {max}")));
    }
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| Error::value(name, format!("cannot allocate {n} elements of {} bytes", std::mem::size_of::<T>())))?;
    v.resize(n, fill);
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_are_errors_not_aborts() {
        assert!(try_filled("n", 1 << 40, MAX_ARRAY, 0u8).is_err());
        assert!(try_filled("n", usize::MAX, usize::MAX, 0u64).is_err());
        assert_eq!(try_filled("n", 3, MAX_ARRAY, 7u8).unwrap(), vec![7, 7, 7]);
        assert!(check_count("steps", 0, 10).is_err());
        assert!(check_count("steps", 11, 10).is_err());
        assert!(check_count("steps", 10, 10).is_ok());
    }
}
