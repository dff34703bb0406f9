//! Product-distribution MWEM (to be written).
