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
//! | [`MAX_TILT_ROUNDS`] | 10^4 | rounds of an owner's self-consistent tilt (each is a pass over its rows) |

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
/// Largest `max_rounds` of an owner's self-consistent tilt (the protocols use at most 1000).
pub const MAX_TILT_ROUNDS: usize = 10_000;

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
    v.try_reserve_exact(n).map_err(|_| {
        Error::value(name, format!("cannot allocate {n} elements of {} bytes", std::mem::size_of::<T>()))
    })?;
    v.resize(n, fill);
    Ok(v)
}

/// `n` zeroed f32 values from the allocator's zeroed path, fallibly (`Err` naming `name` when `n`
/// exceeds `max` or the allocator refuses).
///
/// A large request is served by fresh, already-zero pages (`calloc` of an `mmap`ed chunk): nothing is
/// written here, so each page is first touched, and faulted in, by the thread that fills it. On Linux
/// the range is also advised for transparent huge pages (a 2 MB page per fault instead of 4 kB), which
/// is a hint only: without it the values are the same.
pub fn try_zeroed_f32(name: &'static str, n: usize, max: usize) -> Result<Vec<f32>> {
    if n > max {
        return Err(Error::value(name, format!("asks for {n} elements, more than the cap of {max}")));
    }
    if n == 0 {
        return Ok(Vec::new());
    }
    let refuse = || Error::value(name, format!("cannot allocate {n} elements of 4 bytes"));
    let layout = std::alloc::Layout::array::<f32>(n).map_err(|_| refuse())?;
    // SAFETY: `layout` has a non-zero size (n >= 1).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<f32>();
    if ptr.is_null() {
        return Err(refuse());
    }
    advise_huge_pages(ptr.cast::<u8>(), layout.size());
    // SAFETY: `ptr` comes from the global allocator with the layout of `[f32; n]` (what `Vec<f32>` with
    // capacity `n` uses), and all `n` values are initialised: all-zero bits are 0.0f32.
    Ok(unsafe { Vec::from_raw_parts(ptr, n, n) })
}

/// Ask Linux for transparent huge pages over the whole 2 MB pages inside `[ptr, ptr + len)` when the
/// range is large; a no-op elsewhere. Failure is harmless (it is advice).
fn advise_huge_pages(ptr: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        if len < 4 * HUGE {
            return;
        }
        let start = (ptr as usize).div_ceil(HUGE) * HUGE;
        let end = (ptr as usize + len) / HUGE * HUGE;
        if end > start {
            // SAFETY: [start, end) lies inside one live allocation of ours; madvise with MADV_HUGEPAGE
            // changes no contents, only how future faults are served.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_are_errors_not_aborts() {
        assert!(try_filled("n", 1 << 40, MAX_ARRAY, 0u8).is_err());
        assert!(try_filled("n", usize::MAX, usize::MAX, 0u64).is_err());
        assert_eq!(try_filled("n", 3, MAX_ARRAY, 7u8).unwrap(), vec![7, 7, 7]);
        assert!(try_zeroed_f32("n", 1 << 40, MAX_ARRAY).is_err());
        assert!(try_zeroed_f32("n", usize::MAX / 2, usize::MAX).is_err());
        assert_eq!(try_zeroed_f32("n", 0, 4).unwrap(), Vec::<f32>::new());
        let big = try_zeroed_f32("n", 3 << 21, usize::MAX).unwrap();
        assert!(big.len() == 3 << 21 && big.iter().all(|&v| v == 0.0));
        assert!(check_count("steps", 0, 10).is_err());
        assert!(check_count("steps", 11, 10).is_err());
        assert!(check_count("steps", 10, 10).is_ok());
    }
}
