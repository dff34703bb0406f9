//! Bindings for bids (`crate::bids`) and MMD (`crate::mmd`).

use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyList;

use super::{FloatArray2, detach, extract_f32_2d, raise, to_py_err};
use crate::bids::{self, OwnerRows};

fn extract_mask<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
    name: &str,
) -> PyResult<Option<PyReadonlyArray1<'py, bool>>> {
    if obj.is_none() {
        return Ok(None);
    }
    obj.extract::<PyReadonlyArray1<'py, bool>>().map(Some).map_err(|_| {
        raise(py, "InvalidParameterError", format!("`{name}` must be a 1-D bool numpy array or None"), Some(name))
    })
}

fn extract_vec<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>, name: &str) -> PyResult<PyReadonlyArray1<'py, f32>> {
    obj.extract::<PyReadonlyArray1<'py, f32>>().map_err(|_| {
        raise(py, "InvalidParameterError", format!("`{name}` must be a 1-D float32 numpy array"), Some(name))
    })
}

fn contiguous_slice<'a, T: numpy::Element>(
    py: Python<'_>,
    a: &'a PyReadonlyArray1<'_, T>,
    name: &str,
) -> PyResult<&'a [T]> {
    a.as_slice().map_err(|_| raise(py, "InvalidParameterError", format!("`{name}` must be contiguous"), Some(name)))
}

/// `(value, index)` of the best row of `H` not marked in `offered` for the broadcast `v`, or None.
#[pyfunction]
#[pyo3(signature = (hashes, v, offered=None))]
fn best_row(
    py: Python<'_>,
    hashes: &Bound<'_, PyAny>,
    v: &Bound<'_, PyAny>,
    offered: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<(f64, usize)>> {
    let h = extract_f32_2d(py, hashes, "hashes")?;
    let v = extract_vec(py, v, "v")?;
    let none = py.None().into_bound(py);
    let m = extract_mask(py, offered.unwrap_or(&none), "offered")?;
    let (hv, vs) = (h.as_array(), contiguous_slice(py, &v, "v")?);
    let ms = match &m {
        Some(m) => Some(contiguous_slice(py, m, "offered")?),
        None => None,
    };
    let best = detach(py, || bids::best_row(hv, ms, vs))?;
    Ok(best.map(|b| (b.value, b.index)))
}

/// [`best_row`] for a list of owners (`hashes[k]`, `offered[k]`) against one broadcast `v`.
#[pyfunction]
#[pyo3(signature = (hashes, v, offered=None))]
fn best_rows(
    py: Python<'_>,
    hashes: &Bound<'_, PyList>,
    v: &Bound<'_, PyAny>,
    offered: Option<&Bound<'_, PyList>>,
) -> PyResult<Vec<Option<(f64, usize)>>> {
    let v = extract_vec(py, v, "v")?;
    let hs = hashes.iter().map(|h| extract_f32_2d(py, &h, "hashes")).collect::<PyResult<Vec<_>>>()?;
    let ms = match offered {
        Some(list) => {
            if list.len() != hs.len() {
                return Err(raise(
                    py,
                    "InvalidParameterError",
                    format!("`offered` has {} entries, `hashes` has {}", list.len(), hs.len()),
                    Some("offered"),
                ));
            }
            list.iter().map(|m| extract_mask(py, &m, "offered")).collect::<PyResult<Vec<_>>>()?
        }
        None => hs.iter().map(|_| None).collect(),
    };
    let mut owners = Vec::with_capacity(hs.len());
    for (h, m) in hs.iter().zip(&ms) {
        let offered = match m {
            Some(m) => Some(contiguous_slice(py, m, "offered")?),
            None => None,
        };
        owners.push(OwnerRows { hashes: h.as_array(), offered });
    }
    let vs = contiguous_slice(py, &v, "v")?;
    let best = detach(py, || bids::best_rows(&owners, vs))?;
    Ok(best.into_iter().map(|b| b.map(|b| (b.value, b.index))).collect())
}

/// The exact value `h_i · v` of every row of `hashes` (float64 array), as `best_row` computes it.
#[pyfunction]
fn row_dots<'py>(
    py: Python<'py>,
    hashes: &Bound<'py, PyAny>,
    v: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let h = extract_f32_2d(py, hashes, "hashes")?;
    let v = extract_vec(py, v, "v")?;
    let (hv, vs) = (h.as_array(), contiguous_slice(py, &v, "v")?);
    Ok(detach(py, || bids::row_dots(hv, vs))?.into_pyarray(py))
}

/// An owned row-major f32 copy of `v`, allocated fallibly: a broadcast numpy view (stride 0) can
/// describe far more values than memory holds, and an infallible copy of it would abort the process.
fn owned_f32<T: Copy>(
    v: ndarray::ArrayView2<'_, T>,
    name: &'static str,
    convert: impl Fn(T) -> f32,
) -> crate::Result<ndarray::Array2<f32>> {
    let (rows, cols) = v.dim();
    let len = crate::error::checked_size(name, rows, cols)?;
    let mut flat: Vec<f32> = Vec::new();
    flat.try_reserve_exact(len).map_err(|_| {
        crate::Error::value(name, format!("a float32 copy of its {rows} x {cols} values could not be allocated"))
    })?;
    flat.extend(v.iter().map(|&x| convert(x)));
    ndarray::Array2::from_shape_vec((rows, cols), flat).map_err(|e| crate::Error::shape(name, e.to_string()))
}

fn as_f32<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>, name: &'static str) -> PyResult<ndarray::Array2<f32>> {
    // Evaluation kernels compute inner products in f32; a float64 input is rounded once here.
    match FloatArray2::extract(py, obj, name)? {
        FloatArray2::F32(a) => owned_f32(a.as_array(), name, |x| x),
        FloatArray2::F64(a) => owned_f32(a.as_array(), name, |x| x as f32),
    }
    .map_err(|e| to_py_err(py, e))
}

/// Biased MMD² between the rows of `A` and `B` under `exp(-gamma |x - y|^2)`.
#[pyfunction]
fn mmd2(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>, gamma: f64) -> PyResult<f64> {
    let (a, b) = (as_f32(py, a, "A")?, as_f32(py, b, "B")?);
    detach(py, || crate::mmd::mmd2(a.view(), b.view(), gamma))
}

/// `sum_{a in A, b in B} exp(-gamma |a - b|^2)`.
#[pyfunction]
fn kernel_sum(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>, gamma: f64) -> PyResult<f64> {
    let (a, b) = (as_f32(py, a, "A")?, as_f32(py, b, "B")?);
    detach(py, || crate::mmd::kernel_sum(a.view(), b.view(), gamma))
}

/// For each row a of `A`, `mean_{b in B} exp(-gamma |a - b|^2)`.
#[pyfunction]
fn kernel_row_means<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: &Bound<'py, PyAny>,
    gamma: f64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let (a, b) = (as_f32(py, a, "A")?, as_f32(py, b, "B")?);
    Ok(detach(py, || crate::mmd::kernel_row_means(a.view(), b.view(), gamma))?.into_pyarray(py))
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(best_row, m)?)?;
    m.add_function(wrap_pyfunction!(best_rows, m)?)?;
    m.add_function(wrap_pyfunction!(row_dots, m)?)?;
    m.add_function(wrap_pyfunction!(mmd2, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_sum, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_row_means, m)?)?;
    Ok(())
}
