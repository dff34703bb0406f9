//! Bindings for the kernels of the nominations protocol: greedy selection (`crate::greedy`) and an
//! owner's streaming nomination (`crate::nominate`).

use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray1};
use pyo3::prelude::*;

use super::hashing::PyRffProjection;
use super::{FloatArray2, IntArg, detach, extract_f32_2d, raise};
use crate::greedy;
use crate::nominate as kernel;
use crate::nominate::{Candidates, NominateParams, OwnerGreedy};
use crate::owner_sketch as sketch;

fn f64_vector<'py>(py: Python<'py>, obj: &Bound<'py, PyAny>, name: &str) -> PyResult<PyReadonlyArray1<'py, f64>> {
    obj.extract::<PyReadonlyArray1<'py, f64>>().map_err(|_| {
        raise(py, "InvalidParameterError", format!("`{name}` must be a 1-D float64 numpy array"), Some(name))
    })
}

fn count(py: Python<'_>, v: IntArg, name: &str, min: usize) -> PyResult<usize> {
    v.usize(py, name, min, usize::MAX)
}

fn indices_i64(py: Python<'_>, v: &[usize]) -> PyResult<Vec<i64>> {
    v.iter()
        .map(|&i| {
            i64::try_from(i).map_err(|_| raise(py, "InvalidParameterError", "a row index exceeds int64".into(), None))
        })
        .collect()
}

type SelectionTuple<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f64>>);

/// Greedy selection of up to `k` rows of `hashes` (C-contiguous float32) toward `target` (float64),
/// skipping rows marked in `taken`: `(indices int64, scores float64)` in selection order.
#[pyfunction]
#[pyo3(signature = (hashes, target, k, taken=None))]
fn greedy_select<'py>(
    py: Python<'py>,
    hashes: &Bound<'py, PyAny>,
    target: &Bound<'py, PyAny>,
    k: IntArg,
    taken: Option<&Bound<'py, PyAny>>,
) -> PyResult<SelectionTuple<'py>> {
    let h = extract_f32_2d(py, hashes, "hashes")?;
    let t = f64_vector(py, target, "target")?;
    let k = count(py, k, "k", 0)?;
    let m = match taken {
        Some(obj) if !obj.is_none() => Some(obj.extract::<PyReadonlyArray1<'py, bool>>().map_err(|_| {
            raise(py, "InvalidParameterError", "`taken` must be a 1-D bool numpy array or None".into(), Some("taken"))
        })?),
        _ => None,
    };
    let ts = t
        .as_slice()
        .map_err(|_| raise(py, "InvalidParameterError", "`target` must be contiguous".into(), Some("target")))?;
    let ms = match &m {
        Some(m) => Some(
            m.as_slice()
                .map_err(|_| raise(py, "InvalidParameterError", "`taken` must be contiguous".into(), Some("taken")))?,
        ),
        None => None,
    };
    let hv = h.as_array();
    let sel = detach(py, || greedy::greedy_select(hv, ts, k, ms))?;
    Ok((indices_i64(py, &sel.indices)?.into_pyarray(py), sel.scores.into_pyarray(py)))
}

/// Stochastic greedy selection (`crate::greedy::stochastic_greedy_select`): `sample_size` random open rows
/// per round, the stream keyed by `seed`: `(indices int64, scores float64)` in selection order.
#[pyfunction]
#[pyo3(signature = (hashes, target, k, sample_size, seed))]
fn stochastic_greedy_select<'py>(
    py: Python<'py>,
    hashes: &Bound<'py, PyAny>,
    target: &Bound<'py, PyAny>,
    k: IntArg,
    sample_size: IntArg,
    seed: IntArg,
) -> PyResult<SelectionTuple<'py>> {
    let h = extract_f32_2d(py, hashes, "hashes")?;
    let t = f64_vector(py, target, "target")?;
    let k = count(py, k, "k", 0)?;
    let s = count(py, sample_size, "sample_size", 1)?;
    let seed = seed.u64(py, "seed")?;
    let ts = t
        .as_slice()
        .map_err(|_| raise(py, "InvalidParameterError", "`target` must be contiguous".into(), Some("target")))?;
    let hv = h.as_array();
    let sel = detach(py, || greedy::stochastic_greedy_select(hv, ts, k, s, seed))?;
    Ok((indices_i64(py, &sel.indices)?.into_pyarray(py), sel.scores.into_pyarray(py)))
}

/// The exact-kernel greedy (`crate::kernel_greedy`) over C-contiguous float32 rows `x`, with the rows'
/// validation kernel means `kv` and seed kernel sums `ks` (q0 seed rows): `(indices int64, scores float64)`.
#[pyfunction]
#[pyo3(signature = (x, kv, ks, q0, k, gamma))]
fn kernel_greedy<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    kv: &Bound<'py, PyAny>,
    ks: &Bound<'py, PyAny>,
    q0: IntArg,
    k: IntArg,
    gamma: f64,
) -> PyResult<SelectionTuple<'py>> {
    let xa = extract_f32_2d(py, x, "X")?;
    let kva = f64_vector(py, kv, "kv")?;
    let ksa = f64_vector(py, ks, "ks")?;
    let q0 = count(py, q0, "q0", 0)?;
    let k = count(py, k, "k", 0)?;
    let kvs =
        kva.as_slice().map_err(|_| raise(py, "InvalidParameterError", "`kv` must be contiguous".into(), Some("kv")))?;
    let kss =
        ksa.as_slice().map_err(|_| raise(py, "InvalidParameterError", "`ks` must be contiguous".into(), Some("ks")))?;
    let xv = xa.as_array();
    let sel = detach(py, || crate::kernel_greedy::kernel_greedy(xv, kvs, kss, q0, k, gamma))?;
    Ok((indices_i64(py, &sel.indices)?.into_pyarray(py), sel.scores.into_pyarray(py)))
}

type NominationTuple<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray2<f32>>, Bound<'py, PyArray1<f64>>, usize);

/// An owner's nomination over its raw rows `x` (float32 or float64, any strides; never copied whole).
/// `sample_seed`: weighted candidate sampling with this seed; None: the top-score candidates.
/// `greedy_sample_factor`: None: the exact greedy among the candidates; a float `r > 0`: the stochastic
/// greedy evaluating `⌈(C/M)·r⌉` random candidates per round, keyed by `sample_seed` (0 if None).
/// `(indices int64, hashes float32 (M, d), target float64 (d,), n_candidates)`.
#[pyfunction]
#[pyo3(signature = (x, projection, g_tilde, temperature, nominees, candidates, sample_seed=None, block_rows=IntArg::Value(kernel::DEFAULT_BLOCK_ROWS as i128), greedy_sample_factor=None))]
#[allow(clippy::too_many_arguments)]
fn nominate<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    projection: PyRef<'py, PyRffProjection>,
    g_tilde: &Bound<'py, PyAny>,
    temperature: f64,
    nominees: IntArg,
    candidates: IntArg,
    sample_seed: Option<IntArg>,
    block_rows: IntArg,
    greedy_sample_factor: Option<f64>,
) -> PyResult<NominationTuple<'py>> {
    let g = f64_vector(py, g_tilde, "g_tilde")?;
    let gs = g
        .as_slice()
        .map_err(|_| raise(py, "InvalidParameterError", "`g_tilde` must be contiguous".into(), Some("g_tilde")))?;
    let sample_seed = match sample_seed {
        Some(s) => Some(s.u64(py, "sample_seed")?),
        None => None,
    };
    let params = NominateParams {
        temperature,
        nominees: count(py, nominees, "nominees", 1)?,
        candidates: count(py, candidates, "candidates", 1)?,
        block_rows: count(py, block_rows, "block_rows", 1)?,
        rule: match sample_seed {
            Some(seed) => Candidates::Weighted { seed },
            None => Candidates::TopScore,
        },
        greedy: match greedy_sample_factor {
            Some(factor) => OwnerGreedy::Stochastic { factor, seed: sample_seed.unwrap_or(0) },
            None => OwnerGreedy::Exact,
        },
    };
    let p = &projection.inner;
    let out = match FloatArray2::extract(py, x, "X")? {
        FloatArray2::F32(a) => {
            let v = a.as_array();
            detach(py, || kernel::nominate(v, p, gs, &params))?
        }
        FloatArray2::F64(a) => {
            let v = a.as_array();
            detach(py, || kernel::nominate(v, p, gs, &params))?
        }
    };
    Ok((
        indices_i64(py, &out.indices)?.into_pyarray(py),
        out.hashes.into_pyarray(py),
        out.target.into_pyarray(py),
        out.n_candidates,
    ))
}

/// `Σ h1(x)` over an owner's rows, float64 (streaming; `crate::owner_sketch::hash_sum`), continued from `total` (the
/// running sum over earlier rows) when given: `crate::owner_sketch::hash_sum_from`.
#[pyfunction]
#[pyo3(signature = (x, projection, total=None))]
fn owner_hash_sum<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    projection: PyRef<'py, PyRffProjection>,
    total: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let p = &projection.inner;
    let start = match total {
        Some(t) => f64_vector(py, t, "total")?.as_array().to_vec(),
        None => vec![0.0f64; p.dim()],
    };
    let out = match FloatArray2::extract(py, x, "X")? {
        FloatArray2::F32(a) => {
            let v = a.as_array();
            detach(py, || sketch::hash_sum_from(v, p, start))?
        }
        FloatArray2::F64(a) => {
            let v = a.as_array();
            detach(py, || sketch::hash_sum_from(v, p, start))?
        }
    };
    Ok(out.into_pyarray(py))
}

/// Every row's score `h1(x) · direction - shift`, float64 (streaming; `crate::owner_sketch::hash_scores`).
#[pyfunction]
fn owner_hash_scores<'py>(
    py: Python<'py>,
    x: &Bound<'py, PyAny>,
    projection: PyRef<'py, PyRffProjection>,
    direction: &Bound<'py, PyAny>,
    shift: f64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let p = &projection.inner;
    let w = f64_vector(py, direction, "direction")?;
    let w = w
        .as_slice()
        .map_err(|_| raise(py, "InvalidParameterError", "`direction` must be contiguous".into(), Some("direction")))?
        .to_vec();
    let out = match FloatArray2::extract(py, x, "X")? {
        FloatArray2::F32(a) => {
            let v = a.as_array();
            detach(py, || sketch::hash_scores(v, p, &w, shift))?
        }
        FloatArray2::F64(a) => {
            let v = a.as_array();
            detach(py, || sketch::hash_scores(v, p, &w, shift))?
        }
    };
    Ok(out.into_pyarray(py))
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(owner_hash_sum, m)?)?;
    m.add_function(wrap_pyfunction!(owner_hash_scores, m)?)?;
    m.add_function(wrap_pyfunction!(greedy_select, m)?)?;
    m.add_function(wrap_pyfunction!(nominate, m)?)?;
    m.add_function(wrap_pyfunction!(stochastic_greedy_select, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_greedy, m)?)?;
    Ok(())
}
