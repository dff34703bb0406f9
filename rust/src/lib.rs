//! dpsumm-core: the performance kernels of dpsumm, free of any Python dependency.
//!
//! Modules take slices and `ndarray` views and return owned arrays or a [`error::Result`]. The
//! `bindings` module (feature `python`) is the only place that knows about Python.

pub mod bid_index;
pub mod bids;
pub mod digest;
pub mod error;
pub mod greedy;
pub mod kernel_greedy;
pub mod limits;
pub mod matmul;
pub mod mmd;
pub mod mwem;
pub mod noise;
pub mod nominate;
pub mod owner_sketch;
pub mod pool;
pub mod quantize;
pub mod rff;
pub mod rng;
pub mod scan;
pub mod simd;

#[cfg(feature = "python")]
mod bindings;

pub use error::{Error, Result};
