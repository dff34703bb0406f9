//! Bindings for h1 (`crate::rff`).

use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyUntypedArrayMethods, ToPyArray};
use pyo3::prelude::*;

use super::outbuf::Recycler;
use super::threads::threads_arg;
use super::{FloatArray2, IntArg, detach_here, detach_on, extract_f32_2d, raise, to_py_err};
use crate::error::Error;
use crate::limits::try_zeroed_f32;
use crate::rff::RffProjection;
use crate::rng::{public_key_from_str, public_key_from_u64};

/// The public random projection of h1. Built from a public seed (int or str).
#[pyclass(name = "RffProjection", module = "dpsumm._core", frozen)]
pub struct PyRffProjection {
    pub(super) inner: RffProjection,
    /// The memory of this projection's last large freed result (`super::outbuf`).
    recycler: Recycler,
}

#[pymethods]
impl PyRffProjection {
    #[new]
    #[pyo3(signature = (n_features, dim, gamma, seed))]
    fn new(py: Python<'_>, n_features: IntArg, dim: IntArg, gamma: f64, seed: &Bound<'_, PyAny>) -> PyResult<Self> {
        let key = if let Ok(s) = seed.extract::<String>() {
            public_key_from_str("h1", &s)
        } else if let Ok(i) = seed.extract::<u64>() {
            public_key_from_u64("h1", i)
        } else {
            return Err(raise(
                py,
                "InvalidParameterError",
                "`seed` must be a non-negative int or a str".into(),
                Some("seed"),
            ));
        };
        // The caps (MAX_N_FEATURES, MAX_DIM, MAX_PROJECTION) are the kernel's: it names the argument.
        let n_features = n_features.usize(py, "n_features", 1, usize::MAX)?;
        let dim = dim.usize(py, "dim", 1, usize::MAX)?;
        let inner = RffProjection::from_key(key, n_features, dim, gamma).map_err(|e| to_py_err(py, e))?;
        Ok(PyRffProjection { inner, recycler: Recycler::default() })
    }

    #[getter]
    fn omega<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f32>> {
        self.inner.omega.to_pyarray(py)
    }

    #[getter]
    fn offset<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f32>> {
        self.inner.offset.to_pyarray(py)
    }

    /// h1 of every row of `X` (float32 or float64, any order) as a C-contiguous (N, dim) float32 array,
    /// on at most `threads` threads (None: the default pool, sized by `RAYON_NUM_THREADS` or the
    /// cores). The result is bit-identical for every thread count. A large result reuses the memory of
    /// this projection's last large result that Python has freed (`super::outbuf`), else fresh pages.
    /// With `out` (a writeable, C-contiguous (N, dim) float32 array sharing no memory with `X`), the hashes
    /// are written into it and it is returned: no new memory (a whole-array call on fresh pages waits for the
    /// kernel to supply them, seconds for gigabytes).
    #[pyo3(signature = (x, threads=None, out=None))]
    fn transform<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        threads: Option<IntArg>,
        out: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let threads = threads_arg(py, threads)?;
        let x = FloatArray2::extract(py, x, "X")?;
        let (rows, d) = match &x {
            FloatArray2::F32(a) => (a.as_array().nrows(), self.inner.dim()),
            FloatArray2::F64(a) => (a.as_array().nrows(), self.inner.dim()),
        };
        let total = rows.checked_mul(d).ok_or_else(|| to_py_err(py, Error::shape("X", "has too many rows")))?;
        if let Some(out) = out {
            let bad = |what: String| raise(py, "InvalidParameterError", format!("`out` {what}"), Some("out"));
            let arr = out
                .cast::<PyArray2<f32>>()
                .map_err(|_| bad("must be a 2-D numpy array of float32 in native byte order".into()))?;
            if arr.shape() != [rows, d] {
                let (a, b) = (arr.shape()[0], arr.shape()[1]);
                return Err(bad(format!("has shape ({a}, {b}), not ({rows}, {d}) (X's rows by the hash dimension)")));
            }
            // Checked here: `as_slice_mut` also takes a Fortran-ordered array, which row-major hashes would scramble.
            if !arr.is_c_contiguous() {
                return Err(bad("must be C-contiguous".into()));
            }
            // `X` is borrowed read-only above: numpy's borrow checker refuses a writeable borrow of memory it shares.
            let mut rw = arr.try_readwrite().map_err(|_| bad("must be writeable and share no memory with X".into()))?;
            let buf = rw.as_slice_mut().map_err(|_| bad("must be C-contiguous".into()))?;
            match &x {
                FloatArray2::F32(a) => self.hash_into(py, threads, a.as_array(), buf)?,
                FloatArray2::F64(a) => self.hash_into(py, threads, a.as_array(), buf)?,
            };
            drop(rw);
            return Ok(arr.clone());
        }
        let mut buf = match self.recycler.take(total) {
            Some(b) => b,
            None => try_zeroed_f32("X", total, usize::MAX / 8).map_err(|e| to_py_err(py, e))?,
        };
        match &x {
            FloatArray2::F32(a) => self.hash_into(py, threads, a.as_array(), &mut buf)?,
            FloatArray2::F64(a) => self.hash_into(py, threads, a.as_array(), &mut buf)?,
        };
        self.recycler.wrap(py, buf, rows, d)
    }
}

impl PyRffProjection {
    /// h1 of `x` into `out` without the GIL: on the calling thread when the caller allows one thread (`threads=1`,
    /// or the default pool has one), else on the pool `threads` asks for.
    fn hash_into<T: crate::rff::RowElement>(
        &self,
        py: Python<'_>,
        threads: Option<usize>,
        x: numpy::ndarray::ArrayView2<'_, T>,
        out: &mut [f32],
    ) -> PyResult<()> {
        let one = threads == Some(1)
            || (threads.is_none() && crate::pool::default_threads().map_err(|e| to_py_err(py, e))? == 1);
        if one {
            detach_here(py, || self.inner.transform_into_here(x, out))
        } else {
            detach_on(py, threads, || self.inner.transform_into(x, out))
        }
    }
}

/// The input checks of h1 in one parallel read of `X` (float32 or float64, any order): the largest
/// `|x|`, or None when a value is NaN, infinite or beyond the float32 range.
#[pyfunction]
#[pyo3(signature = (x, threads=None))]
fn finite_max_abs(py: Python<'_>, x: &Bound<'_, PyAny>, threads: Option<IntArg>) -> PyResult<Option<f32>> {
    let threads = threads_arg(py, threads)?;
    match FloatArray2::extract(py, x, "X")? {
        FloatArray2::F32(a) => {
            let v = a.as_array();
            detach_on(py, threads, || Ok(crate::scan::finite_max_abs(v)))
        }
        FloatArray2::F64(a) => {
            let v = a.as_array();
            detach_on(py, threads, || Ok(crate::scan::finite_max_abs(v)))
        }
    }
}

/// The BLAKE2b-128 digest of every row of a float32 matrix of h1 hashes (`crate::digest`), as an (n, 16)
/// uint8 array, in parallel without the GIL.
#[pyfunction]
#[pyo3(signature = (hashes, threads=None))]
fn row_digests<'py>(
    py: Python<'py>,
    hashes: &Bound<'py, PyAny>,
    threads: Option<IntArg>,
) -> PyResult<Bound<'py, PyArray2<u8>>> {
    let threads = threads_arg(py, threads)?;
    let a = extract_f32_2d(py, hashes, "hashes")?;
    let v = a.as_array();
    Ok(detach_on(py, threads, || crate::digest::row_digests(v))?.into_pyarray(py))
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRffProjection>()?;
    m.add_class::<super::outbuf::OutputBuffer>()?;
    m.add_function(wrap_pyfunction!(finite_max_abs, m)?)?;
    m.add_function(wrap_pyfunction!(row_digests, m)?)
}
