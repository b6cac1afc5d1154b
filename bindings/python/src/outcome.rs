//! `NativeOutcome`: a call's Outcome, kept in Rust and turned into Python values only as far as
//! the caller reads it: `ok` costs nothing, `output` turns the output's JSON into Python values
//! once (in Rust), and the whole
//! Outcome as a dict (`to_dict`, which the typed `Outcome`'s other fields come from) is written
//! and read once, on first use. A call whose caller only unwraps its output never builds the
//! rest.

use palisade::Outcome;
use palisade_bindings::outcome_json;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// An Outcome, read from Python on demand.
#[pyclass(frozen)]
pub struct NativeOutcome {
    outcome: Outcome,
    output: PyOnceLock<Py<PyAny>>,
    dict: PyOnceLock<Py<PyAny>>,
}

impl NativeOutcome {
    pub fn new(outcome: Outcome) -> Self {
        Self {
            outcome,
            output: PyOnceLock::new(),
            dict: PyOnceLock::new(),
        }
    }
}

#[pymethods]
impl NativeOutcome {
    /// Whether the call succeeded.
    #[getter]
    fn ok(&self) -> bool {
        self.outcome.error().is_none()
    }

    /// The output as Python values (None for a failed call), the same object every time.
    #[getter]
    fn output(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let output = self
            .output
            .get_or_try_init(py, || match self.outcome.output() {
                Some(json) => python_value(py, json.get()),
                None => Ok(py.None()),
            })?;
        Ok(output.clone_ref(py))
    }

    /// The Outcome as the JSON object `palisade run --json` prints, the same dict every time.
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let dict = self
            .dict
            .get_or_try_init(py, || loads(py, &outcome_json(&self.outcome)))?;
        Ok(dict.clone_ref(py))
    }
}

/// The library's JSON (well-formed: the library checked it) as Python values, built in Rust;
/// by Python's `json.loads` when serde_json cannot read it: deeper than its recursion limit
/// (128), or a string with a lone surrogate (`"\ud800"`, which a script's `JSON.stringify`
/// writes and a Python `str` holds).
fn python_value(py: Python<'_>, json: &str) -> PyResult<Py<PyAny>> {
    match serde_json::from_str::<serde_json::Value>(json) {
        Ok(value) => Ok(pythonize::pythonize(py, &value)?.unbind()),
        Err(_) => loads(py, json),
    }
}

/// JSON text as Python values, by Python's own `json.loads`.
fn loads(py: Python<'_>, json: &str) -> PyResult<Py<PyAny>> {
    static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let loads = LOADS.get_or_try_init(py, || {
        PyResult::Ok(py.import("json")?.getattr("loads")?.unbind())
    })?;
    loads.call1(py, (json,))
}
