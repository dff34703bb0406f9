//! The `threads=` option of the bindings: run a kernel on at most that many rayon threads.
//!
//! `None` runs on rayon's global pool (its size honours `RAYON_NUM_THREADS`, else one thread per
//! core). `Some(k)` runs on a pool of exactly `k` threads, built once per `k` and kept for the life of
//! the process (building a pool per call would cost more than hashing a small call). Kernels never
//! depend on the thread count for their results, only for their speed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::prelude::*;

use super::{IntArg, raise};

/// Largest accepted `threads`.
pub(crate) const MAX_THREADS: i64 = 4096;

/// Validate a `threads` argument: None or an int in `1..=MAX_THREADS`.
pub(crate) fn threads_arg(py: Python<'_>, threads: Option<IntArg>) -> PyResult<Option<usize>> {
    match threads {
        None => Ok(None),
        Some(IntArg::Value(k)) if (1..=MAX_THREADS as i128).contains(&k) => Ok(Some(k as usize)),
        Some(IntArg::Value(k)) => Err(raise(py, "InvalidParameterError", format!("`threads` must be None or between 1 and {MAX_THREADS}, got {k}"), Some("threads"))),
        Some(other) => other.get(py, "threads", 1, MAX_THREADS as i128).map(|k| Some(k as usize)),
    }
}

fn pool(k: usize) -> crate::Result<Arc<rayon::ThreadPool>> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let pools = POOLS.get_or_init(|| Mutex::new(HashMap::new()));
    // A poisoned lock only means another thread panicked while inserting: the map is still valid.
    let mut map = pools.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = map.get(&k) {
        return Ok(Arc::clone(p));
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(k)
        .thread_name(|i| format!("dpsumm-{i}"))
        .build()
        .map_err(|e| crate::Error::value("threads", format!("a pool of {k} threads could not be started: {e}")))?;
    let p = Arc::new(p);
    map.insert(k, Arc::clone(&p));
    Ok(p)
}

/// Run `f` on the pool `threads` asks for (module docs).
pub(crate) fn on_threads<T: Send, F: Send + FnOnce() -> crate::Result<T>>(threads: Option<usize>, f: F) -> crate::Result<T> {
    match threads {
        None => f(),
        Some(k) => pool(k)?.install(f),
    }
}
