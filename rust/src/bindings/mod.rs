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

/// Run `f` without the GIL and convert its error. Every heavy kernel call goes through here.
pub(crate) fn detach<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    T: Send,
    F: Send + FnOnce() -> crate::Result<T>,
{
    py.detach(f).map_err(|e| to_py_err(py, e))
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
        Err(raise(py, "InvalidParameterError", format!("`{name}` must be a 2-D float32 or float64 numpy array, got {what}"), Some(name)))
    }
}

/// Require a 2-D float32 array (the dtype every hashed array has).
pub(crate) fn extract_f32_2d<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>, name: &str) -> PyResult<PyReadonlyArray2<'py, f32>> {
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
