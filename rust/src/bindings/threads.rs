//! The `threads=` option of the bindings: run a kernel on at most that many rayon threads.
//!
//! `None` runs on the crate's default pool (sized as rayon's global pool: `RAYON_NUM_THREADS`, else one
//! thread per core), `Some(k)` on a pool of exactly `k` threads; both survive `fork` (`crate::pool`).
//! Kernels never depend on the thread count for their results, only for their speed.

use pyo3::prelude::*;

use super::{IntArg, raise};

/// Largest accepted `threads`.
pub(crate) const MAX_THREADS: i64 = 4096;

/// Validate a `threads` argument: None or an int in `1..=MAX_THREADS`.
pub(crate) fn threads_arg(py: Python<'_>, threads: Option<IntArg>) -> PyResult<Option<usize>> {
    match threads {
        None => Ok(None),
        Some(IntArg::Value(k)) if (1..=MAX_THREADS as i128).contains(&k) => Ok(Some(k as usize)),
        Some(IntArg::Value(k)) => Err(raise(
            py,
            "InvalidParameterError",
            format!("`threads` must be None or between 1 and {MAX_THREADS}, got {k}"),
            Some("threads"),
        )),
        Some(other) => other.get(py, "threads", 1, MAX_THREADS as i128).map(|k| Some(k as usize)),
    }
}
