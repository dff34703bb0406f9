//! The stochastic quantizer of h2 (to be written).
