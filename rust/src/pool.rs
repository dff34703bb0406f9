//! The crate's rayon thread pools, which survive `fork`.
//!
//! Every parallel kernel runs inside [`install`], on a pool this module owns, never on rayon's global
//! pool: a forked child inherits the parent's pool objects but none of their threads (fork copies only the
//! calling thread), so a job sent to an inherited pool waits for ever. rayon's global pool cannot be
//! rebuilt once started, so this crate never uses it.
//!
//! The pools live in one [`Pools`] value tagged with the id of the process that built it. When
//! [`install`] runs in another process (a forked child, whatever the thread that forks), it builds a new,
//! empty `Pools` and leaks the inherited one: dropping it would wake threads that do not exist and could
//! block on a lock that one of them held at the fork. A new pool is built on the child's first parallel
//! call. The leak is one small map per forked generation that computes in parallel.
//!
//! `None` asks for the default pool, sized as rayon sizes its global pool (the environment variable
//! `RAYON_NUM_THREADS` when it is a positive integer, else one thread per core the process may use);
//! `Some(k)` for a pool of exactly `k` threads. Each is built once per process and kept for its life
//! (building a pool per call would cost more than a small call). Kernels never depend on the thread count
//! for their results, only for their speed.

use std::collections::HashMap;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};

/// The pools of one process, by size (`0`: the default size).
struct Pools {
    pid: u32,
    by_size: Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>,
}

static POOLS: AtomicPtr<Pools> = AtomicPtr::new(std::ptr::null_mut());

/// This process's pools (module docs: a forked child gets a new, empty set).
fn pools() -> &'static Pools {
    let pid = std::process::id();
    loop {
        let current = POOLS.load(Ordering::Acquire);
        // SAFETY: a non-null pointer in POOLS came from `Box::into_raw` below and is never freed.
        if let Some(p) = unsafe { current.as_ref() }
            && p.pid == pid
        {
            return p;
        }
        let fresh = Box::into_raw(Box::new(Pools { pid, by_size: Mutex::new(HashMap::new()) }));
        match POOLS.compare_exchange(current, fresh, Ordering::AcqRel, Ordering::Acquire) {
            // The inherited set (if any) is leaked on purpose (module docs).
            // SAFETY: `fresh` is now in POOLS, which never frees it.
            Ok(_) => return unsafe { &*fresh },
            // Another thread of this process installed its set first: use that one.
            // SAFETY: `fresh` was never shared.
            Err(_) => drop(unsafe { Box::from_raw(fresh) }),
        }
    }
}

/// The pool of `threads` threads (`None`: the default size), built on first use in this process.
fn pool(threads: Option<usize>) -> Result<Arc<rayon::ThreadPool>> {
    let k = threads.unwrap_or(0);
    let pools = pools();
    // A poisoned lock only means another thread panicked while inserting: the map is still valid.
    let mut map = pools.by_size.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = map.get(&k) {
        return Ok(Arc::clone(p));
    }
    let mut builder = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("dpsumm-{i}"));
    if k > 0 {
        builder = builder.num_threads(k);
    }
    let p = builder.build().map_err(|e| {
        let what = if k > 0 { format!("a pool of {k} threads") } else { "the default thread pool".to_string() };
        Error::value("threads", format!("{what} could not be started: {e}"))
    })?;
    let p = Arc::new(p);
    map.insert(k, Arc::clone(&p));
    Ok(p)
}

/// Run `f` on the pool `threads` asks for (module docs), from any thread of any process.
pub fn install<T: Send, F: Send + FnOnce() -> Result<T>>(threads: Option<usize>, f: F) -> Result<T> {
    pool(threads)?.install(f)
}

/// The number of threads of the default pool (built if needed).
pub fn default_threads() -> Result<usize> {
    Ok(pool(None)?.current_num_threads())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    fn parallel_sum(n: u64) -> Result<u64> {
        install(None, || Ok((0..n).into_par_iter().map(|i| i * i).sum::<u64>()))
    }

    #[test]
    fn pools_are_built_once_per_size_and_run_on_that_many_threads() {
        assert!(Arc::ptr_eq(&pool(Some(3)).unwrap(), &pool(Some(3)).unwrap()));
        assert_eq!(install(Some(3), || Ok(rayon::current_num_threads())).unwrap(), 3);
        assert_eq!(install(Some(1), || Ok(rayon::current_num_threads())).unwrap(), 1);
        assert_eq!(install(None, || Ok(rayon::current_num_threads())).unwrap(), default_threads().unwrap());
        assert_eq!(parallel_sum(1000).unwrap(), (0..1000u64).map(|i| i * i).sum::<u64>());
    }

    /// Run `child` in a forked copy of this process; its exit code, or None when it has not ended in 30 s
    /// (it is then killed: a hang fails the test instead of hanging it).
    #[cfg(target_os = "linux")]
    fn in_forked_child(child: impl FnOnce() -> i32) -> Option<i32> {
        // SAFETY: the child only runs `child` (this crate's code) and `_exit`s, never returning into the harness.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).unwrap_or(101);
            unsafe { libc::_exit(code) };
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let mut status = 0;
        loop {
            let done = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
            if done == pid {
                return libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
            }
            if std::time::Instant::now() > deadline {
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                    libc::waitpid(pid, &mut status, 0);
                }
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_forked_child_computes_in_parallel_after_the_parent_did() {
        // The parent's pools have threads (both the default one and a sized one, as before the fix's regression).
        let want = parallel_sum(100_000).unwrap();
        assert_eq!(install(Some(2), || Ok((0..100u64).into_par_iter().sum::<u64>())).unwrap(), 4950);
        let code = in_forked_child(|| {
            let same = parallel_sum(100_000) == Ok(want);
            let sized = install(Some(2), || Ok((0..100u64).into_par_iter().sum::<u64>())) == Ok(4950);
            // rayon::scope on a pool worker, as the greedy enters it.
            let scoped = install(None, || {
                let mut a = 0u64;
                rayon::scope(|s| s.spawn(|_| a = (0..10u64).into_par_iter().sum()));
                Ok(a)
            }) == Ok(45);
            // A grandchild too: the child's own pools must be replaced again.
            let grandchild = in_forked_child(|| i32::from(parallel_sum(1000) != Ok((0..1000u64).map(|i| i * i).sum())));
            if same && sized && scoped && grandchild == Some(0) { 0 } else { 1 }
        });
        assert_eq!(code, Some(0), "the forked child hung (None) or computed a wrong result (1)");
        // The parent's pools still work.
        assert_eq!(parallel_sum(100_000).unwrap(), want);
    }
}
