//! Privacy noise samplers (to be written).
