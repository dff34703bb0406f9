//! dpsumm-core: the performance kernels of dpsumm, free of any Python dependency.
//!
//! Modules take slices and `ndarray` views and return owned arrays or a [`error::Result`]. The
//! `bindings` module (feature `python`) is the only place that knows about Python.

pub mod error;
pub mod limits;
pub mod pool;
pub mod rng;
pub mod simd;
pub mod matmul;
pub mod rff;
pub mod scan;
pub mod bids;
pub mod bid_index;
pub mod mmd;
pub mod noise;
pub mod quantize;
pub mod mwem;
pub mod greedy;
pub mod nominate;
pub mod owner_sketch;
pub mod kernel_greedy;
pub mod digest;

#[cfg(feature = "python")]
mod bindings;

pub use error::{Error, Result};
