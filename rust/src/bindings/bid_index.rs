//! Bindings for the owner's bid index (`crate::bid_index`).

use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2, ToPyArray};
use pyo3::prelude::*;

use super::hashing::PyRffProjection;
use super::{FloatArray2, IntArg, detach, extract_f32_2d, raise, to_py_err};
use crate::bid_index::{BidIndex, ExactSource, HashSource, RowSource};
use crate::rff::RffProjection;

enum Source {
    /// The f32 hashes themselves.
    Hashes,
    /// Raw rows (f32 or f64) and the projection that hashes them.
    Rows(RffProjection),
}

/// One owner's 8-bit bid index with its offered mask. Holds a reference to the array it was built
/// from (the hashes, or the raw rows), never a copy; that array must not change afterwards.
#[pyclass(name = "BidIndex", module = "dpsumm._core")]
pub struct PyBidIndex {
    inner: BidIndex,
    source: Py<PyAny>,
    kind: Source,
    last_rescored: usize,
}

/// A source whose shape no longer matches the index: the array was reshaped after construction.
fn changed_shape(py: Python<'_>, e: crate::error::Error) -> PyErr {
    raise(
        py,
        "InvalidParameterError",
        format!("the array the bid index was built from was reshaped after construction ({e}); build a new index"),
        Some("X"),
    )
}

fn index_arg(py: Python<'_>, i: &IntArg, n: usize) -> PyResult<usize> {
    match i {
        IntArg::Value(v) if *v >= 0 && *v < n as i128 => Ok(*v as usize),
        IntArg::Value(v) => Err(raise(
            py,
            "InvalidParameterError",
            format!("`index` must be a row in [0, {n}), got {v}"),
            Some("index"),
        )),
        other => other.usize(py, "index", 0, n.saturating_sub(1)),
    }
}

#[pymethods]
impl PyBidIndex {
    /// The index of f32 hashes `hashes` (N, d), any strides (kept by reference).
    #[staticmethod]
    fn from_hashes(py: Python<'_>, hashes: &Bound<'_, PyAny>) -> PyResult<Self> {
        let h = extract_f32_2d(py, hashes, "hashes")?;
        let view = h.as_array();
        let inner = detach(py, || BidIndex::from_hashes(view))?;
        Ok(PyBidIndex { inner, source: hashes.clone().unbind(), kind: Source::Hashes, last_rescored: 0 })
    }

    /// The index of `h1(rows)` for raw rows (N, n_features), float32 or float64, any strides (kept by
    /// reference; the f32 hash of a row is recomputed bit-identically when it must be re-scored).
    #[staticmethod]
    fn from_rows(py: Python<'_>, rows: &Bound<'_, PyAny>, projection: PyRef<'_, PyRffProjection>) -> PyResult<Self> {
        let p = projection.inner.clone();
        let inner = match FloatArray2::extract(py, rows, "rows")? {
            FloatArray2::F32(a) => {
                let v = a.as_array();
                detach(py, || BidIndex::from_rows(v, &p))?
            }
            FloatArray2::F64(a) => {
                let v = a.as_array();
                detach(py, || BidIndex::from_rows(v, &p))?
            }
        };
        Ok(PyBidIndex { inner, source: rows.clone().unbind(), kind: Source::Rows(p), last_rescored: 0 })
    }

    /// `(value, index)` of the best row not offered for `v` (1-D float32, length dim), or None. Exactly
    /// the winner and value of `best_row(hashes, v, offered)`.
    fn best(&mut self, py: Python<'_>, v: PyReadonlyArray1<'_, f32>) -> PyResult<Option<(f64, usize)>> {
        let vs =
            v.as_slice().map_err(|_| raise(py, "InvalidParameterError", "`v` must be contiguous".into(), Some("v")))?;
        let src = self.source.bind(py).clone();
        let inner = &self.inner;
        let q = match &self.kind {
            Source::Hashes => {
                let h: PyReadonlyArray2<'_, f32> = extract_f32_2d(py, &src, "hashes")?;
                let view = h.as_array();
                detach(py, || inner.query(vs, &HashSource(view)))?
            }
            Source::Rows(p) => match FloatArray2::extract(py, &src, "rows")? {
                FloatArray2::F32(a) => {
                    let view = a.as_array();
                    detach(py, || inner.query(vs, &RowSource { rows: view, projection: p }))?
                }
                FloatArray2::F64(a) => {
                    let view = a.as_array();
                    detach(py, || inner.query(vs, &RowSource { rows: view, projection: p }))?
                }
            },
        };
        self.last_rescored = q.rescored;
        Ok(q.best.map(|b| (b.value, b.index)))
    }

    /// Mark row `index` offered: it never wins again. Returns False if it already was offered.
    fn mark_offered(&mut self, py: Python<'_>, index: IntArg) -> PyResult<bool> {
        let i = index_arg(py, &index, self.inner.n_rows())?;
        self.inner.mark_offered(i).map_err(|e| to_py_err(py, e))
    }

    fn is_offered(&self, py: Python<'_>, index: IntArg) -> PyResult<bool> {
        let i = index_arg(py, &index, self.inner.n_rows())?;
        Ok(self.inner.is_offered(i))
    }

    /// The exact f32 hash of row `index` (recomputed from the raw row, or copied from the hashes).
    fn hash_row<'py>(&self, py: Python<'py>, index: IntArg) -> PyResult<Bound<'py, PyArray1<f32>>> {
        let (n, d) = (self.inner.n_rows(), self.inner.dim());
        let i = index_arg(py, &index, n)?;
        let src = self.source.bind(py);
        let out: Vec<f32> = match &self.kind {
            Source::Hashes => {
                let h = extract_f32_2d(py, src, "hashes")?;
                let a = h.as_array();
                HashSource(a.view()).check(n, d).map_err(|e| changed_shape(py, e))?;
                a.row(i).to_vec()
            }
            Source::Rows(p) => {
                let row: Vec<f32> = match FloatArray2::extract(py, src, "rows")? {
                    FloatArray2::F32(a) => {
                        let v = a.as_array();
                        RowSource { rows: v.view(), projection: p }.check(n, d).map_err(|e| changed_shape(py, e))?;
                        v.row(i).to_vec()
                    }
                    FloatArray2::F64(a) => {
                        let v = a.as_array();
                        RowSource { rows: v.view(), projection: p }.check(n, d).map_err(|e| changed_shape(py, e))?;
                        v.row(i).iter().map(|&x| x as f32).collect()
                    }
                };
                let mut h = vec![0.0f32; p.dim()];
                p.hash_row(&row, &mut h);
                h
            }
        };
        self.inner.check_row_hash(i, &out).map_err(|e| to_py_err(py, e))?;
        Ok(out.to_pyarray(py))
    }

    /// One bool per row: True for rows already offered.
    #[getter]
    fn offered<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
        self.inner.offered_mask().to_pyarray(py)
    }

    #[getter]
    fn n_rows(&self) -> usize {
        self.inner.n_rows()
    }

    #[getter]
    fn dim(&self) -> usize {
        self.inner.dim()
    }

    #[getter]
    fn n_offered(&self) -> usize {
        self.inner.n_offered()
    }

    /// Bytes held by the 8-bit codes.
    #[getter]
    fn nbytes(&self) -> usize {
        self.inner.code_bytes()
    }

    /// `(step, max |step q|, max quantization error)` of the codes.
    #[getter]
    fn code_stats(&self) -> (f64, f64, f64) {
        self.inner.code_stats()
    }

    /// Rows re-scored exactly by the last `best` call.
    #[getter]
    fn last_rescored(&self) -> usize {
        self.last_rescored
    }

    /// True when the index recomputes hashes from raw rows.
    #[getter]
    // The Python attribute's name (`BidIndex.from_raw_rows`), a property rather than a constructor.
    #[allow(clippy::wrong_self_convention)]
    fn from_raw_rows(&self) -> bool {
        matches!(self.kind, Source::Rows(_))
    }
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyBidIndex>()
}
