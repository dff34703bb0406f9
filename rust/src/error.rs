//! The crate's one error type. Kernels return `Result<T>`; the binding layer maps every variant to a
//! subclass of `dpsumm.DpsummError` (see `bindings/mod.rs`).

/// Errors raised by the pure kernels. Every variant names the offending argument.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// An argument has an invalid value (non-positive scale, wrong grid step, ...).
    #[error("invalid value for `{name}`: {msg}")]
    InvalidValue { name: &'static str, msg: String },
    /// An array argument has the wrong shape or is empty.
    #[error("invalid shape for `{name}`: {msg}")]
    Shape { name: &'static str, msg: String },
    /// An array argument holds NaN or infinity.
    #[error("`{name}` contains NaN or infinite values")]
    NonFinite { name: &'static str },
    /// The operating system could not provide entropy to seed the CSPRNG.
    #[error("could not read entropy from the operating system: {0}")]
    Entropy(String),
}

impl Error {
    pub fn value(name: &'static str, msg: impl Into<String>) -> Self {
        Error::InvalidValue { name, msg: msg.into() }
    }
    pub fn shape(name: &'static str, msg: impl Into<String>) -> Self {
        Error::Shape { name, msg: msg.into() }
    }
    /// The name of the argument the error is about, if any.
    pub fn argument(&self) -> Option<&'static str> {
        match self {
            Error::InvalidValue { name, .. } | Error::Shape { name, .. } | Error::NonFinite { name } => Some(name),
            Error::Entropy(_) => None,
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// `Err(NonFinite)` unless every value is finite.
pub fn check_finite_f32(name: &'static str, xs: impl IntoIterator<Item = f32>) -> Result<()> {
    if xs.into_iter().all(f32::is_finite) { Ok(()) } else { Err(Error::NonFinite { name }) }
}

/// `Err(NonFinite)` unless every value is finite.
pub fn check_finite_f64(name: &'static str, xs: impl IntoIterator<Item = f64>) -> Result<()> {
    if xs.into_iter().all(f64::is_finite) { Ok(()) } else { Err(Error::NonFinite { name }) }
}

/// `Err(InvalidValue)` unless `x` is finite and strictly positive.
pub fn check_positive(name: &'static str, x: f64) -> Result<()> {
    if x.is_finite() && x > 0.0 {
        Ok(())
    } else {
        Err(Error::value(name, format!("must be a finite number > 0, got {x}")))
    }
}

/// A vector of `len` copies of `value`, or `Err(InvalidValue)` naming `name` when the memory cannot be
/// reserved (`len` comes from user input: never abort on allocation failure).
pub fn try_filled<T: Clone>(name: &'static str, len: usize, value: T) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| {
        let bytes = (len as u128) * (std::mem::size_of::<T>() as u128);
        Error::value(name, format!("needs {bytes} bytes of memory, which could not be allocated"))
    })?;
    v.resize(len, value);
    Ok(v)
}

/// `a · b`, or `Err(InvalidValue)` naming `name` when it overflows `usize`.
pub fn checked_size(name: &'static str, a: usize, b: usize) -> Result<usize> {
    a.checked_mul(b).ok_or_else(|| Error::value(name, format!("{a} x {b} elements overflow the address space")))
}
