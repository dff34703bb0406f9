//! The Python binding layer: the only code that knows about Python. It converts numpy arrays to
//! `ndarray` views, validates dtypes, releases the GIL around heavy work ([`detach`]) and maps
//! [`crate::Error`] to the exception classes of `dpsumm.errors` (all subclasses of `DpsummError`).

use numpy::{PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::error::Error;

mod bid_index;
mod hashing;
mod linalg;
mod nominations;
mod outbuf;
mod privacy;
mod threads;

/// Raise the `dpsumm.errors` class `class` with `message`, setting its `argument` attribute.
pub(crate) fn raise(py: Python<'_>, class: &str, message: String, argument: Option<&str>) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let cls = py.import("dpsumm.errors")?.getattr(class)?;
        let exc = cls.call1((message.clone(),))?;
        if let Some(a) = argument {
            exc.setattr("argument", PyString::new(py, a))?;
        }
        Ok(PyErr::from_value(exc))
    };
    build().unwrap_or_else(|e| e)
}

/// Map a kernel error to its Python exception.
pub(crate) fn to_py_err(py: Python<'_>, e: Error) -> PyErr {
    let class = match e {
        Error::InvalidValue { .. } | Error::Shape { .. } | Error::NonFinite { .. } => "InvalidParameterError",
        Error::Entropy(_) => "EntropyError",
    };
    raise(py, class, e.to_string(), e.argument())
}

/// Run `f` without the GIL, on the crate's default thread pool, and convert its error. Every heavy kernel
/// call goes through here or [`detach_on`]: a kernel that uses rayon must never run on rayon's global pool,
/// which a forked child inherits without its threads (`crate::pool`).
pub(crate) fn detach<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    T: Send,
    F: Send + FnOnce() -> crate::Result<T>,
{
    detach_on(py, None, f)
}

/// [`detach`] on the pool of `threads` threads (`None`: the default pool).
pub(crate) fn detach_on<T, F>(py: Python<'_>, threads: Option<usize>, f: F) -> PyResult<T>
where
    T: Send,
    F: Send + FnOnce() -> crate::Result<T>,
{
    py.detach(|| crate::pool::install(threads, f)).map_err(|e| to_py_err(py, e))
}

/// Run `f` without the GIL on the calling thread (for work that uses no rayon), and convert its error.
pub(crate) fn detach_here<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    T: Send,
    F: Send + FnOnce() -> crate::Result<T>,
{
    py.detach(f).map_err(|e| to_py_err(py, e))
}

/// An integer argument as Python passed it. Its extraction never fails, so that every bad value (a
/// negative count, `2**70`, a float, a bool, a str) becomes an `InvalidParameterError` naming the
/// argument ([`IntArg::get`]); pyo3's own `i64`/`u64` extraction raises a bare `OverflowError`.
pub(crate) enum IntArg {
    /// The value (every Python int fits i128 here, or is `Huge`).
    Value(i128),
    /// An int beyond the i128 range, with its sign.
    Huge { negative: bool },
    /// Not an integer: the type name.
    NotInt(String),
}

impl<'a, 'py> FromPyObject<'a, 'py> for IntArg {
    type Error = PyErr;

    fn extract(obj: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let type_name = || obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "an object".into());
        // bool is an int subclass and float/str are not ints: refuse all three as counts.
        if obj.is_instance_of::<pyo3::types::PyBool>() || obj.is_instance_of::<pyo3::types::PyFloat>() {
            return Ok(IntArg::NotInt(type_name()));
        }
        if !(obj.is_instance_of::<pyo3::types::PyInt>() || obj.hasattr("__index__").unwrap_or(false)) {
            return Ok(IntArg::NotInt(type_name()));
        }
        if let Ok(v) = obj.extract::<i128>() {
            return Ok(IntArg::Value(v));
        }
        match obj.call_method0("__index__").and_then(|i| i.lt(0)) {
            Ok(negative) => Ok(IntArg::Huge { negative }),
            Err(_) => Ok(IntArg::NotInt(type_name())),
        }
    }
}

impl IntArg {
    /// The value when it is an integer in `[min, max]`, else an `InvalidParameterError` naming `name`.
    pub(crate) fn get(&self, py: Python<'_>, name: &str, min: i128, max: i128) -> PyResult<i128> {
        let range = |got: String| {
            raise(
                py,
                "InvalidParameterError",
                format!("`{name}` must be an integer between {min} and {max}, got {got}"),
                Some(name),
            )
        };
        match self {
            IntArg::Value(v) if (min..=max).contains(v) => Ok(*v),
            IntArg::Value(v) => Err(range(v.to_string())),
            IntArg::Huge { negative: true } => Err(range("a negative int below -2**127".into())),
            IntArg::Huge { negative: false } => Err(range("an int above 2**127".into())),
            IntArg::NotInt(t) => {
                Err(raise(py, "InvalidParameterError", format!("`{name}` must be an integer, got {t}"), Some(name)))
            }
        }
    }

    /// [`Self::get`] as a `usize` in `[min, max]` (`max` at most `usize::MAX`).
    pub(crate) fn usize(&self, py: Python<'_>, name: &str, min: usize, max: usize) -> PyResult<usize> {
        // The range check makes the conversion exact.
        self.get(py, name, min as i128, max as i128).map(|v| v as usize)
    }

    /// [`Self::get`] as a `u64` in `[0, 2**64)` (a seed).
    pub(crate) fn u64(&self, py: Python<'_>, name: &str) -> PyResult<u64> {
        self.get(py, name, 0, u64::MAX as i128).map(|v| v as u64)
    }
}

/// A 2-D float array argument accepted as float32 or float64, any memory order.
pub(crate) enum FloatArray2<'py> {
    F32(PyReadonlyArray2<'py, f32>),
    F64(PyReadonlyArray2<'py, f64>),
}

impl<'py> FloatArray2<'py> {
    pub(crate) fn extract(py: Python<'py>, obj: &Bound<'py, PyAny>, name: &str) -> PyResult<Self> {
        if let Ok(a) = obj.extract::<PyReadonlyArray2<'py, f32>>() {
            return Ok(FloatArray2::F32(a));
        }
        if let Ok(a) = obj.extract::<PyReadonlyArray2<'py, f64>>() {
            return Ok(FloatArray2::F64(a));
        }
        let what = match obj.extract::<numpy::PyReadonlyArrayDyn<'py, f32>>() {
            Ok(a) => format!("a {}-D array", a.ndim()),
            Err(_) => match obj.getattr("dtype") {
                Ok(dt) => format!("an array of dtype {dt}"),
                Err(_) => format!("{}", obj.get_type().name()?),
            },
        };
        Err(raise(
            py,
            "InvalidParameterError",
            format!("`{name}` must be a 2-D float32 or float64 numpy array, got {what}"),
            Some(name),
        ))
    }
}

/// Require a 2-D float32 array (the dtype every hashed array has).
pub(crate) fn extract_f32_2d<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
    name: &str,
) -> PyResult<PyReadonlyArray2<'py, f32>> {
    obj.extract::<PyReadonlyArray2<'py, f32>>().map_err(|_| {
        raise(py, "InvalidParameterError", format!("`{name}` must be a 2-D float32 numpy array"), Some(name))
    })
}

#[pymodule]
#[pyo3(name = "_core")]
fn dpsumm_core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    hashing::register(m)?;
    bid_index::register(m)?;
    linalg::register(m)?;
    nominations::register(m)?;
    privacy::register(m)?;
    Ok(())
}
