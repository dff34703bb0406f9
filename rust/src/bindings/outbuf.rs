//! Large output arrays that hand their memory back to the object that made them.
//!
//! A large numpy result (more than [`RECYCLE_MIN_BYTES`]) is served by glibc from a fresh `mmap`
//! and returned to the kernel with `munmap` when it is freed, so a caller that hashes 100,000-row
//! chunks and drops each result pays the kernel for zeroing every page of every result again (system
//! time, a large share of the transform's CPU time at 100,000 rows per call: benches/bench_floor.py's
//! sweep compares the transform with numpy's reused buffer).
//! A [`Recycler`] (one per `RffProjection`) keeps the memory of the last large result it produced
//! once Python frees it, and gives it to the next call whose output is no smaller and not less than
//! half its size; the kernel then writes every element of it again (`transform_into`), so no value
//! of an earlier result can leak into a later one.
//!
//! Cost: while the projection lives, at most one freed buffer of at most [`RECYCLE_MAX_BYTES`] stays
//! resident. A result still referenced by Python is never touched (it is only recycled from its
//! owner's `Drop`).

use std::sync::{Arc, Mutex, Weak};

use numpy::PyArray2;
use numpy::ndarray::ArrayView2;
use pyo3::prelude::*;

/// Smaller results are left to the allocator (glibc reuses its own heap memory up to 32 MB).
pub(crate) const RECYCLE_MIN_BYTES: usize = 32 << 20;
/// Larger freed results are given back to the system (the memory kept is bounded by this).
pub(crate) const RECYCLE_MAX_BYTES: usize = 256 << 20;

/// The one freed buffer a projection keeps for its next large result.
#[derive(Default)]
pub(crate) struct Recycler {
    slot: Arc<Mutex<Option<Vec<f32>>>>,
}

impl Recycler {
    /// A buffer of exactly `len` initialised values (old contents) from the slot when one fits, or
    /// None (the caller allocates).
    pub(crate) fn take(&self, len: usize) -> Option<Vec<f32>> {
        let bytes = len.checked_mul(4)?;
        if !(RECYCLE_MIN_BYTES..=RECYCLE_MAX_BYTES).contains(&bytes) {
            return None;
        }
        // A poisoned lock only means a thread panicked while swapping a Vec: the slot is still valid.
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        let fits = slot.as_ref().is_some_and(|v| v.capacity() >= len && v.capacity() / 2 <= len);
        if !fits {
            return None;
        }
        let mut v = slot.take()?;
        // Within the capacity: no allocation. The extension (if any) is zero-filled, the rest keeps
        // old values, all of which the kernel overwrites.
        v.resize(len, 0.0);
        Some(v)
    }

    /// `buf` as a C-contiguous (rows, cols) numpy array whose memory comes back to this recycler when
    /// Python frees it (large buffers only; others are freed as usual).
    pub(crate) fn wrap<'py>(
        &self,
        py: Python<'py>,
        buf: Vec<f32>,
        rows: usize,
        cols: usize,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        if rows.checked_mul(cols) != Some(buf.len()) {
            return Err(pyo3::exceptions::PyValueError::new_err("internal error: output buffer of the wrong size"));
        }
        let mut owner = OutputBuffer { buf, slot: Arc::downgrade(&self.slot) };
        let ptr = owner.buf.as_mut_ptr();
        let container = Bound::new(py, owner)?;
        // SAFETY: `ptr` points to rows * cols initialised f32 values owned by `container`'s Vec, which
        // is never resized or moved out before `container` is dropped (only its `Drop` takes it), and
        // `container` becomes the array's base object, so it outlives the array.
        let view = unsafe { ArrayView2::from_shape_ptr((rows, cols), ptr.cast_const()) };
        // SAFETY: as above; the array is the only user of the memory while the container lives.
        Ok(unsafe { PyArray2::borrow_from_array(&view, container.into_any()) })
    }
}

/// The owner (numpy base object) of a result array's memory.
#[pyclass(module = "dpsumm._core", frozen)]
pub(crate) struct OutputBuffer {
    buf: Vec<f32>,
    slot: Weak<Mutex<Option<Vec<f32>>>>,
}

impl Drop for OutputBuffer {
    fn drop(&mut self) {
        let bytes = self.buf.capacity().saturating_mul(4);
        if !(RECYCLE_MIN_BYTES..=RECYCLE_MAX_BYTES).contains(&bytes) {
            return;
        }
        if let Some(slot) = self.slot.upgrade() {
            let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
            // Keep the larger buffer (it fits more calls); the other is freed when this returns.
            if slot.as_ref().is_none_or(|v| v.capacity() < self.buf.capacity()) {
                *slot = Some(std::mem::take(&mut self.buf));
            }
        }
    }
}
