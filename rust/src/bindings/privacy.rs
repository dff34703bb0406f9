//! Bindings for the CSPRNG, noise samplers, quantizer and MWEM (to be written).

use pyo3::prelude::*;

pub(super) fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
