//! Bindings for the CSPRNG, the noise samplers, the quantizer and MWEM.

use std::sync::{Arc, Mutex, MutexGuard};

use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

use super::{detach, raise, to_py_err};
use crate::mwem::{Neighbour, ProductMwem};
use crate::rng::Csprng;
use crate::{noise, quantize};

/// A ChaCha20 CSPRNG. `Csprng()` is keyed from OS entropy (private); `Csprng(seed)` is reproducible
/// and NOT private. Shared by reference: objects built from it draw from the same stream.
#[pyclass(name = "Csprng", module = "dpsumm._core", frozen)]
#[derive(Clone)]
pub struct PyCsprng {
    inner: Arc<Mutex<Csprng>>,
}

impl PyCsprng {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Csprng> {
        // A panic while holding the lock cannot leave the stream in a state that matters for privacy
        // (it is a keystream position), so a poisoned lock is recovered.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[pymethods]
impl PyCsprng {
    #[new]
    #[pyo3(signature = (seed=None))]
    fn new(py: Python<'_>, seed: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let rng = match seed {
            None => Csprng::from_os().map_err(|e| to_py_err(py, e))?,
            Some(s) if s.is_none() => Csprng::from_os().map_err(|e| to_py_err(py, e))?,
            Some(s) => {
                let v = s.extract::<u64>().map_err(|_| {
                    raise(py, "InvalidParameterError", "`seed` must be None or an integer in [0, 2**64)".into(), Some("seed"))
                })?;
                if s.is_instance_of::<pyo3::types::PyBool>() {
                    return Err(raise(py, "InvalidParameterError", "`seed` must be None or an integer".into(), Some("seed")));
                }
                Csprng::from_seed_u64(v)
            }
        };
        Ok(PyCsprng { inner: Arc::new(Mutex::new(rng)) })
    }

    /// True when built from a seed (reproducible, not private).
    #[getter]
    fn is_seeded(&self) -> bool {
        self.lock().is_seeded()
    }

    /// An independent child stream (deterministic for a seeded parent, at the parent's position).
    fn derive(&self, label: &str) -> Self {
        let child = self.lock().derive(label.as_bytes());
        PyCsprng { inner: Arc::new(Mutex::new(child)) }
    }

    /// A uniform float in [0, 1) on the 2^-53 grid (not for privacy noise).
    fn uniform(&self) -> f64 {
        self.lock().uniform_f64()
    }

    /// `n` uniform floats in [0, 1).
    fn uniform_array<'py>(&self, py: Python<'py>, n: usize) -> Bound<'py, PyArray1<f64>> {
        let mut r = self.lock();
        let v: Vec<f64> = (0..n).map(|_| r.uniform_f64()).collect();
        v.into_pyarray(py)
    }

    /// A uniform integer in [0, n).
    fn integers(&self, py: Python<'_>, n: u64) -> PyResult<u64> {
        if n == 0 {
            return Err(raise(py, "InvalidParameterError", "`n` must be >= 1".into(), Some("n")));
        }
        Ok(self.lock().below(n))
    }

    /// Exact Bernoulli(exp(-x)) for x >= 0 (x rounded up to the 2^-32 grid).
    fn bernoulli_exp(&self, py: Python<'_>, x: f64) -> PyResult<bool> {
        noise::bernoulli_exp(&mut self.lock(), x).map_err(|e| to_py_err(py, e))
    }

    /// An exact discrete Laplace integer, P(z) ∝ exp(-|z|/scale) (scale rounded up to the 2^-20 grid).
    fn discrete_laplace(&self, py: Python<'_>, scale: f64) -> PyResult<i64> {
        noise::discrete_laplace(&mut self.lock(), scale).map_err(|e| to_py_err(py, e))
    }

    /// The Laplace mechanism on the grid `granularity * Z` (see `dpsumm.privacy`).
    #[pyo3(signature = (value, scale, granularity=1.0 / 1048576.0))]
    fn laplace(&self, py: Python<'_>, value: f64, scale: f64, granularity: f64) -> PyResult<f64> {
        noise::laplace_on_grid(&mut self.lock(), value, scale, granularity).map_err(|e| to_py_err(py, e))
    }

    /// An exact discrete Gaussian integer, P(z) ∝ exp(-z²/(2 sigma²)) (sigma² rounded up to a rational).
    fn discrete_gaussian(&self, py: Python<'_>, sigma: f64) -> PyResult<i64> {
        let rng = self.clone();
        detach(py, || noise::discrete_gaussian(&mut rng.lock(), sigma))
    }

    /// The Gaussian mechanism on the grid `granularity * Z`, per coordinate (see `dpsumm.privacy`).
    fn gaussian_on_grid<'py>(&self, py: Python<'py>, values: PyReadonlyArray1<'py, f64>, sigma: f64, granularity: f64) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let v = values.as_array();
        let owned: Vec<f64> = match v.as_slice() {
            Some(s) => s.to_vec(),
            None => v.iter().copied().collect(),
        };
        let rng = self.clone();
        let out = detach(py, || noise::gaussian_on_grid(&mut rng.lock(), &owned, sigma, granularity))?;
        Ok(out.into_pyarray(py))
    }

    /// The exponential mechanism: index i with probability ∝ exp(epsilon * scores[i] / (2 sensitivity)).
    fn exponential_mechanism(&self, py: Python<'_>, scores: Vec<f64>, epsilon: f64, sensitivity: f64) -> PyResult<usize> {
        noise::exponential_mechanism(&mut self.lock(), &scores, epsilon, sensitivity).map_err(|e| to_py_err(py, e))
    }

    fn __repr__(&self) -> String {
        if self.lock().is_seeded() { "Csprng(seeded: NOT private)".into() } else { "Csprng(os entropy)".into() }
    }
}

fn rng_arg(py: Python<'_>, rng: &Bound<'_, PyAny>) -> PyResult<PyCsprng> {
    rng.cast::<PyCsprng>()
        .map(|b| b.get().clone())
        .map_err(|_| raise(py, "InvalidParameterError", "`rng` must be a dpsumm.Csprng".into(), Some("rng")))
}

/// Every value of `values` (float64, in [-1, 1]) stochastically rounded to the grid of step `eta`.
#[pyfunction]
fn stochastic_round<'py>(py: Python<'py>, values: PyReadonlyArray2<'py, f64>, eta: f64, rng: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let rng = rng_arg(py, rng)?;
    let v = values.as_array();
    let out = detach(py, || quantize::stochastic_round(v, eta, &mut rng.lock()))?;
    Ok(out.into_pyarray(py))
}

/// Column sums of the quantized rows of `values` (float32, in [-1, 1]).
#[pyfunction]
fn quantize_column_sums<'py>(py: Python<'py>, values: PyReadonlyArray2<'py, f32>, eta: f64, rng: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let rng = rng_arg(py, rng)?;
    let v = values.as_array();
    let out = detach(py, || quantize::quantize_column_sums(v, eta, &mut rng.lock()))?;
    Ok(out.into_pyarray(py))
}

/// Product-distribution MWEM state (h2), persisting across releases.
#[pyclass(name = "ProductMwem", module = "dpsumm._core")]
pub struct PyProductMwem {
    inner: ProductMwem,
    rng: PyCsprng,
}

#[pymethods]
impl PyProductMwem {
    #[new]
    fn new(py: Python<'_>, dim: usize, eta: f64, neighbour: &str, rng: &Bound<'_, PyAny>) -> PyResult<Self> {
        let rng = rng_arg(py, rng)?;
        let n = Neighbour::parse(neighbour).map_err(|e| to_py_err(py, e))?;
        let inner = ProductMwem::new(dim, eta, n).map_err(|e| to_py_err(py, e))?;
        Ok(PyProductMwem { inner, rng })
    }

    /// Run `steps` private MWEM steps at per-step `epsilon`; returns w(P_avg)/q.
    fn release<'py>(&mut self, py: Python<'py>, column_sums: PyReadonlyArray1<'py, f64>, n_rows: u64, steps: u64, epsilon: f64) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let sums = column_sums.as_array().to_vec();
        let rng = self.rng.clone();
        let inner = &mut self.inner;
        let out = detach(py, || inner.release(&mut rng.lock(), &sums, n_rows, steps, epsilon))?;
        Ok(out.into_pyarray(py))
    }

    /// The same update path without noise (argmax selection, exact measurement). Not private: tests only.
    fn _release_noiseless<'py>(&mut self, py: Python<'py>, column_sums: PyReadonlyArray1<'py, f64>, n_rows: u64, steps: u64) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let sums = column_sums.as_array().to_vec();
        let out = self.inner.release_noiseless(&sums, n_rows, steps).map_err(|e| to_py_err(py, e))?;
        Ok(out.into_pyarray(py))
    }

    fn reset(&mut self) {
        self.inner.reset()
    }

    #[getter]
    fn marginals<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let m = self.inner.grid().len();
        let flat = self.inner.marginals();
        let arr = ndarray::Array2::from_shape_vec((self.inner.dim(), m), flat)
            .map_err(|e| raise(py, "DpsummError", e.to_string(), None))?;
        Ok(arr.into_pyarray(py))
    }

    #[getter]
    fn grid<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.inner.grid().to_vec().into_pyarray(py)
    }

    #[getter]
    fn steps_taken(&self) -> u64 {
        self.inner.steps_taken()
    }

    #[getter]
    fn neighbour(&self) -> &'static str {
        self.inner.neighbour().as_str()
    }
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCsprng>()?;
    m.add_class::<PyProductMwem>()?;
    m.add_function(wrap_pyfunction!(stochastic_round, m)?)?;
    m.add_function(wrap_pyfunction!(quantize_column_sums, m)?)?;
    Ok(())
}
