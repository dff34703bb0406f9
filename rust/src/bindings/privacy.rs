//! Bindings for the CSPRNG, the noise samplers, the quantizer and MWEM.

use std::sync::{Arc, Mutex, MutexGuard};

use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};

use crate::limits::{MAX_ARRAY, try_filled};

use super::{IntArg, detach, detach_here, raise, to_py_err};
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
    fn lock_raw(&self) -> MutexGuard<'_, Csprng> {
        // A panic while holding the lock cannot leave the stream in a state that matters for privacy
        // (it is a keystream position), so a poisoned lock is recovered.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The stream, re-keyed from the OS first if this process is a fork of the one that keyed it.
    pub(crate) fn guard(&self) -> crate::Result<MutexGuard<'_, Csprng>> {
        let mut g = self.lock_raw();
        g.rekey_if_forked()?;
        Ok(g)
    }

    fn guard_py(&self, py: Python<'_>) -> PyResult<MutexGuard<'_, Csprng>> {
        self.guard().map_err(|e| to_py_err(py, e))
    }
}

fn bad(py: Python<'_>, name: &str, msg: String) -> PyErr {
    raise(py, "InvalidParameterError", msg, Some(name))
}

/// Whether `obj` is a real number: an instance of `numbers.Real` other than a bool. numpy's bool and every complex
/// number are not `numbers.Real` (their `__float__` would turn True into 1.0, or drop an imaginary part with only a
/// warning).
fn is_real(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    if obj.is_instance_of::<PyBool>() {
        return Ok(false);
    }
    if obj.is_exact_instance_of::<PyFloat>() || obj.is_exact_instance_of::<PyInt>() {
        return Ok(true);
    }
    obj.is_instance(&py.import("numbers")?.getattr("Real")?)
}

/// A real-number argument (int or float, not bool, not str).
fn arg_f64(py: Python<'_>, obj: &Bound<'_, PyAny>, name: &str) -> PyResult<f64> {
    if obj.is_none() || !is_real(py, obj)? {
        return Err(bad(py, name, format!("`{name}` must be a real number, got {}", type_name(obj))));
    }
    obj.extract::<f64>().map_err(|_| bad(py, name, format!("`{name}` must be a real number, got {}", type_name(obj))))
}

/// A fallible owned copy of a 1-D float64 array argument of at most `max` values. A broadcast numpy view
/// (stride 0) can describe more values than memory holds: an infallible copy would abort the process.
fn vec_f64(py: Python<'_>, a: &PyReadonlyArray1<'_, f64>, name: &str, max: usize) -> PyResult<Vec<f64>> {
    let v = a.as_array();
    if v.len() > max {
        return Err(bad(py, name, format!("`{name}` has {} values, more than the cap of {max}", v.len())));
    }
    let mut out: Vec<f64> = Vec::new();
    out.try_reserve_exact(v.len())
        .map_err(|_| bad(py, name, format!("a copy of the {} values of `{name}` could not be allocated", v.len())))?;
    match v.as_slice() {
        Some(s) => out.extend_from_slice(s),
        None => out.extend(v.iter().copied()),
    }
    Ok(out)
}

/// A sequence of real numbers as a Vec, with at most `max` items. pyo3's `Vec` extraction reserves
/// `len(obj)` slots up front, so a sequence whose `len` is huge (a broadcast numpy view, or a lying
/// `__len__`) made it panic (capacity overflow) or abort (allocation failure); an iterator longer than
/// its `len` is cut off at `max + 1` items here.
fn real_sequence(py: Python<'_>, obj: &Bound<'_, PyAny>, name: &str, max: usize) -> PyResult<Vec<f64>> {
    let not_reals = || bad(py, name, format!("`{name}` must be a sequence of real numbers, got {}", type_name(obj)));
    // SAFETY: `obj` is a live object; PySequence_Check only reads its type (the check pyo3's own `Vec`
    // extraction makes, so the same objects are accepted as before).
    if obj.is_instance_of::<PyString>() || unsafe { pyo3::ffi::PySequence_Check(obj.as_ptr()) } == 0 {
        return Err(not_reals());
    }
    let too_many = || bad(py, name, format!("`{name}` has more than {max} entries"));
    // A numpy array of real numbers (kind f, i or u) has real items; any other dtype (bool, complex, object,
    // strings, datetimes) is refused whole. Other sequences are checked item by item.
    let typed = match obj.getattr("dtype").and_then(|d| d.getattr("kind")).and_then(|k| k.extract::<String>()) {
        Ok(kind) if obj.hasattr("ndim").unwrap_or(false) => {
            if !matches!(kind.as_str(), "f" | "i" | "u") {
                return Err(bad(
                    py,
                    name,
                    format!("`{name}` must hold real numbers, got a numpy array of kind {kind:?}"),
                ));
            }
            let ndim = obj.getattr("ndim").and_then(|n| n.extract::<usize>()).unwrap_or(0);
            if ndim != 1 {
                return Err(bad(py, name, format!("`{name}` must be 1-D, got {ndim}-D")));
            }
            true
        }
        _ => false,
    };
    let len = obj.len().map_err(|_| not_reals())?;
    if len > max {
        return Err(too_many());
    }
    let mut out: Vec<f64> = Vec::new();
    out.try_reserve_exact(len).map_err(|_| too_many())?;
    for item in obj.try_iter().map_err(|_| not_reals())? {
        if out.len() >= max {
            return Err(too_many());
        }
        let item = item.map_err(|_| not_reals())?;
        if !typed && !is_real(py, &item)? {
            return Err(not_reals());
        }
        out.push(item.extract::<f64>().map_err(|_| not_reals())?);
    }
    Ok(out)
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "an object".into())
}

/// An integer argument in `[min, max]` (not bool, not float).
fn arg_u64(py: Python<'_>, obj: &Bound<'_, PyAny>, name: &str, min: u64, max: u64) -> PyResult<u64> {
    if obj.is_instance_of::<PyBool>()
        || !(obj.is_instance_of::<PyInt>() || obj.hasattr("__index__").unwrap_or(false))
        || obj.is_instance_of::<PyFloat>()
    {
        return Err(bad(py, name, format!("`{name}` must be an integer, got {}", type_name(obj))));
    }
    let range = || bad(py, name, format!("`{name}` must be an integer between {min} and {max}, got {obj}"));
    let v = match obj.extract::<u64>() {
        Ok(v) => v,
        Err(_) => return Err(range()),
    };
    if v < min || v > max {
        return Err(range());
    }
    Ok(v)
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
                if s.is_instance_of::<PyBool>()
                    || !s.is_instance_of::<PyInt>() && !s.hasattr("__index__").unwrap_or(false)
                {
                    return Err(bad(
                        py,
                        "seed",
                        format!("`seed` must be None or an integer in [0, 2**64), got {}", type_name(s)),
                    ));
                }
                let v = s.extract::<u64>().map_err(|_| {
                    bad(py, "seed", format!("`seed` must be None or an integer in [0, 2**64), got {s}"))
                })?;
                Csprng::from_seed_u64(v)
            }
        };
        Ok(PyCsprng { inner: Arc::new(Mutex::new(rng)) })
    }

    /// True when built from a seed (reproducible, not private).
    #[getter]
    fn is_seeded(&self) -> bool {
        self.lock_raw().is_seeded()
    }

    /// An independent child stream (deterministic for a seeded parent, at the parent's position).
    fn derive(&self, py: Python<'_>, label: &Bound<'_, PyAny>) -> PyResult<Self> {
        let label: String = label
            .cast::<PyString>()
            .map_err(|_| bad(py, "label", format!("`label` must be a str, got {}", type_name(label))))?
            .to_string();
        let child = self.guard_py(py)?.derive(label.as_bytes());
        Ok(PyCsprng { inner: Arc::new(Mutex::new(child)) })
    }

    /// A uniform float in [0, 1) on the 2^-53 grid (not for privacy noise).
    fn uniform(&self, py: Python<'_>) -> PyResult<f64> {
        Ok(self.guard_py(py)?.uniform_f64())
    }

    /// `n` uniform floats in [0, 1) (`0 <= n <= 2**28`).
    fn uniform_array<'py>(&self, py: Python<'py>, n: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let n = arg_u64(py, n, "n", 0, MAX_ARRAY as u64)? as usize;
        let mut v = try_filled("n", n, MAX_ARRAY, 0.0f64).map_err(|e| to_py_err(py, e))?;
        let mut r = self.guard_py(py)?;
        v.iter_mut().for_each(|x| *x = r.uniform_f64());
        drop(r);
        Ok(v.into_pyarray(py))
    }

    /// A uniform integer in [0, n), `1 <= n < 2**64`.
    fn integers(&self, py: Python<'_>, n: &Bound<'_, PyAny>) -> PyResult<u64> {
        let n = arg_u64(py, n, "n", 1, u64::MAX)?;
        Ok(self.guard_py(py)?.below(n))
    }

    /// Exact Bernoulli(exp(-x)) for x >= 0 (x rounded up to the 2^-32 grid).
    fn bernoulli_exp(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<bool> {
        let x = arg_f64(py, x, "x")?;
        noise::bernoulli_exp(&mut *self.guard_py(py)?, x).map_err(|e| to_py_err(py, e))
    }

    /// An exact discrete Laplace integer, P(z) ∝ exp(-|z|/scale) (scale rounded up to the 2^-20 grid).
    fn discrete_laplace(&self, py: Python<'_>, scale: &Bound<'_, PyAny>) -> PyResult<i64> {
        let scale = arg_f64(py, scale, "scale")?;
        noise::discrete_laplace(&mut *self.guard_py(py)?, scale).map_err(|e| to_py_err(py, e))
    }

    /// Integer counts plus independent exact discrete Laplace noise of scale `scale` per cell (rounded up to
    /// the 2^-20 grid): the label purchase's histogram (see `dpsumm.privacy.laplace_count_release`).
    fn discrete_laplace_counts<'py>(
        &self,
        py: Python<'py>,
        counts: &Bound<'py, PyAny>,
        scale: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let scale = arg_f64(py, scale, "scale")?;
        let owned = owned_values(py, counts, "counts")?;
        self.draw_vector(py, move |g| noise::discrete_laplace_counts(g, &owned, scale))
    }

    /// The Laplace mechanism on the grid `granularity * Z` (see `dpsumm.privacy`).
    #[pyo3(signature = (value, scale, granularity=None))]
    fn laplace(
        &self,
        py: Python<'_>,
        value: &Bound<'_, PyAny>,
        scale: &Bound<'_, PyAny>,
        granularity: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<f64> {
        let value = arg_f64(py, value, "value")?;
        let scale = arg_f64(py, scale, "scale")?;
        let granularity = match granularity {
            None => 1.0 / 1048576.0,
            Some(g) if g.is_none() => 1.0 / 1048576.0,
            Some(g) => arg_f64(py, g, "granularity")?,
        };
        noise::laplace_on_grid(&mut *self.guard_py(py)?, value, scale, granularity).map_err(|e| to_py_err(py, e))
    }

    /// An exact discrete Gaussian integer, P(z) ∝ exp(-z²/(2 sigma²)) (sigma² rounded up to a rational).
    fn discrete_gaussian(&self, py: Python<'_>, sigma: &Bound<'_, PyAny>) -> PyResult<i64> {
        let sigma = arg_f64(py, sigma, "sigma")?;
        let rng = self.clone();
        // The samplers use no rayon: they run on the calling thread.
        detach_here(py, || {
            let mut g = rng.guard()?;
            noise::discrete_gaussian(&mut g, sigma)
        })
    }

    /// The Gaussian mechanism on the grid `granularity * Z`, per coordinate (see `dpsumm.privacy`).
    fn gaussian_on_grid<'py>(
        &self,
        py: Python<'py>,
        values: &Bound<'py, PyAny>,
        sigma: &Bound<'py, PyAny>,
        granularity: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let sigma = arg_f64(py, sigma, "sigma")?;
        let granularity = arg_f64(py, granularity, "granularity")?;
        let owned = owned_values(py, values, "values")?;
        self.draw_vector(py, move |g| noise::gaussian_on_grid(g, &owned, sigma, granularity))
    }

    /// The exponential mechanism: index i with probability ∝ exp(epsilon * scores[i] / (2 sensitivity)).
    fn exponential_mechanism(
        &self,
        py: Python<'_>,
        scores: &Bound<'_, PyAny>,
        epsilon: &Bound<'_, PyAny>,
        sensitivity: &Bound<'_, PyAny>,
    ) -> PyResult<usize> {
        let scores = real_sequence(py, scores, "scores", MAX_ARRAY)?;
        let epsilon = arg_f64(py, epsilon, "epsilon")?;
        let sensitivity = arg_f64(py, sensitivity, "sensitivity")?;
        noise::exponential_mechanism(&mut *self.guard_py(py)?, &scores, epsilon, sensitivity)
            .map_err(|e| to_py_err(py, e))
    }

    fn __repr__(&self) -> String {
        if self.lock_raw().is_seeded() { "Csprng(seeded: NOT private)".into() } else { "Csprng(os entropy)".into() }
    }
}

/// A 1-D float64 array copied as is (fallibly), or any other sequence of real numbers item by item.
fn owned_values<'py>(py: Python<'py>, values: &Bound<'py, PyAny>, name: &'static str) -> PyResult<Vec<f64>> {
    match values.extract::<PyReadonlyArray1<'py, f64>>() {
        Ok(array) => vec_f64(py, &array, name, MAX_ARRAY),
        Err(_) => real_sequence(py, values, name, MAX_ARRAY),
    }
}

impl PyCsprng {
    /// Run a vector sampler on this stream with the GIL released; its output as a numpy array.
    fn draw_vector<'py, F>(&self, py: Python<'py>, draw: F) -> PyResult<Bound<'py, PyArray1<f64>>>
    where
        F: FnOnce(&mut Csprng) -> crate::Result<Vec<f64>> + Send,
    {
        let rng = self.clone();
        let out = detach_here(py, || {
            let mut g = rng.guard()?;
            draw(&mut g)
        })?;
        Ok(out.into_pyarray(py))
    }
}

fn rng_arg(py: Python<'_>, rng: &Bound<'_, PyAny>) -> PyResult<PyCsprng> {
    rng.cast::<PyCsprng>()
        .map(|b| b.get().clone())
        .map_err(|_| raise(py, "InvalidParameterError", "`rng` must be a dpsumm.Csprng".into(), Some("rng")))
}

/// Every value of `values` (float64, in [-1, 1]) stochastically rounded to the grid of step `eta`.
#[pyfunction]
fn stochastic_round<'py>(
    py: Python<'py>,
    values: PyReadonlyArray2<'py, f64>,
    eta: f64,
    rng: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let rng = rng_arg(py, rng)?;
    let v = values.as_array();
    let out = detach(py, || quantize::stochastic_round(v, eta, &mut *rng.guard()?))?;
    Ok(out.into_pyarray(py))
}

/// Column sums of the quantized rows of `values` (float32, in [-1, 1]).
#[pyfunction]
fn quantize_column_sums<'py>(
    py: Python<'py>,
    values: PyReadonlyArray2<'py, f32>,
    eta: f64,
    rng: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let rng = rng_arg(py, rng)?;
    let v = values.as_array();
    let out = detach(py, || quantize::quantize_column_sums(v, eta, &mut *rng.guard()?))?;
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
    fn new(py: Python<'_>, dim: IntArg, eta: f64, neighbour: &str, rng: &Bound<'_, PyAny>) -> PyResult<Self> {
        let dim = dim.usize(py, "dim", 1, crate::limits::MAX_DIM)?;
        let rng = rng_arg(py, rng)?;
        let n = Neighbour::parse(neighbour).map_err(|e| to_py_err(py, e))?;
        let inner = ProductMwem::new(dim, eta, n).map_err(|e| to_py_err(py, e))?;
        Ok(PyProductMwem { inner, rng })
    }

    /// Run `steps` private MWEM steps at per-step `epsilon`; returns w(P_avg)/q.
    fn release<'py>(
        &mut self,
        py: Python<'py>,
        column_sums: PyReadonlyArray1<'py, f64>,
        n_rows: IntArg,
        steps: IntArg,
        epsilon: f64,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let sums = vec_f64(py, &column_sums, "column_sums", MAX_ARRAY)?;
        let (n_rows, steps) = (n_rows.u64(py, "n_rows")?, steps.u64(py, "steps")?);
        let rng = self.rng.clone();
        let inner = &mut self.inner;
        let out = detach_here(py, || inner.release(&mut *rng.guard()?, &sums, n_rows, steps, epsilon))?;
        Ok(out.into_pyarray(py))
    }

    /// The same update path without noise (argmax selection, exact measurement). Not private: tests only.
    fn _release_noiseless<'py>(
        &mut self,
        py: Python<'py>,
        column_sums: PyReadonlyArray1<'py, f64>,
        n_rows: IntArg,
        steps: IntArg,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let sums = vec_f64(py, &column_sums, "column_sums", MAX_ARRAY)?;
        let (n_rows, steps) = (n_rows.u64(py, "n_rows")?, steps.u64(py, "steps")?);
        let out = self.inner.release_noiseless(&sums, n_rows, steps).map_err(|e| to_py_err(py, e))?;
        Ok(out.into_pyarray(py))
    }

    fn reset(&mut self) {
        self.inner.reset()
    }

    #[getter]
    fn marginals<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let m = self.inner.grid().len();
        let flat = self.inner.marginals().map_err(|e| to_py_err(py, e))?;
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
