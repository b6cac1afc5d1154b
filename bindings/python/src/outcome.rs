//! `Outcome` (`palisade.Outcome`): a call's Outcome, kept in Rust and turned into Python
//! values only as far as the caller reads it: `ok` costs nothing, `output` turns the output's
//! JSON into Python values once (in Rust), and the whole Outcome as a dict (`to_dict`) is
//! written and read once, on first use; the typed fields (`error`, `logs`, `audit`, `receipt`,
//! `error_id`) are made by `_outcome._Fields.from_dict`, once, from that dict or from the
//! Outcome without its output, so that they read whatever the output holds (a script's output
//! may be nested deeper than Python's recursion limit lets `json.loads` go). A call whose
//! caller only unwraps its output never builds the rest, and runs no Python frame.

use palisade::Outcome;
use palisade_bindings::outcome_json_but_output;
use pyo3::exceptions::PyRecursionError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

/// The result of a call: its output or its error, console lines, audit records, receipt.
#[pyclass(frozen, name = "Outcome", module = "palisade")]
pub struct NativeOutcome {
    outcome: Outcome,
    output: PyOnceLock<Py<PyAny>>,
    dict: PyOnceLock<Py<PyAny>>,
    /// `_outcome._Fields`: the typed fields but the output.
    fields: PyOnceLock<Py<PyAny>>,
}

impl NativeOutcome {
    pub fn new(outcome: Outcome) -> Self {
        Self {
            outcome,
            output: PyOnceLock::new(),
            dict: PyOnceLock::new(),
            fields: PyOnceLock::new(),
        }
    }

    /// `_outcome._Fields` of this outcome, made on first use.
    fn fields<'py>(&self, py: Python<'py>) -> PyResult<&Bound<'py, PyAny>> {
        let fields = cached(py, &self.fields, || {
            let from_dict = wrapper(py)?.fields.bind(py);
            let dict = match self.dict.get(py) {
                Some(dict) => dict.clone_ref(py),
                None => loads(py, &outcome_json_but_output(&self.outcome))?,
            };
            Ok(from_dict.call1((dict,))?.unbind())
        })?;
        Ok(fields.bind(py))
    }

    fn field(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        Ok(self.fields(py)?.getattr(name)?.unbind())
    }
}

/// The value `cell` holds, made by `make` and kept on first use, without letting go of the
/// GIL: `PyOnceLock::get_or_try_init` detaches to wait for the cell and attaches again before
/// it runs the initializer, so each first read let the GIL go once, and when another thread
/// took it, the reading thread waited (a context switch). Should `make` run Python code that
/// lets another thread fill the cell first, that thread's value is kept, and `make`'s dropped.
fn cached<'a>(
    py: Python<'_>,
    cell: &'a PyOnceLock<Py<PyAny>>,
    make: impl FnOnce() -> PyResult<Py<PyAny>>,
) -> PyResult<&'a Py<PyAny>> {
    if let Some(value) = cell.get(py) {
        return Ok(value);
    }
    let _ = cell.set(py, make()?);
    Ok(cell.get(py).expect("the cell was filled just above"))
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
        let output = cached(py, &self.output, || match self.outcome.output() {
            Some(json) => python_value(py, json.get()),
            None => Ok(py.None()),
        })?;
        Ok(output.clone_ref(py))
    }

    /// Why the call failed (an `OutcomeError`), None when it succeeded.
    #[getter]
    fn error(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        match self.outcome.error() {
            None => Ok(py.None()),
            Some(_) => self.field(py, "error"),
        }
    }

    /// The console lines the script wrote (`LogLine`s).
    #[getter]
    fn logs(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.field(py, "logs")
    }

    /// The audit records of the call (`AuditRecord`s).
    #[getter]
    fn audit(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.field(py, "audit")
    }

    /// What the call used (a `Receipt`).
    #[getter]
    fn receipt(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.field(py, "receipt")
    }

    /// For `internal`: the id under which the host logged the cause.
    #[getter]
    fn error_id(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.field(py, "error_id")
    }

    /// The outcome as the JSON object `palisade run --json` prints, the same dict every time:
    /// the rest as Python's `json.loads` reads it, the output as `output` reads it (another
    /// object than `output`'s own).
    fn to_dict(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let dict = cached(py, &self.dict, || {
            let dict = loads(py, &outcome_json_but_output(&self.outcome))?;
            if let Some(json) = self.outcome.output() {
                dict.bind(py)
                    .set_item("output", python_value(py, json.get())?)?;
            }
            Ok(dict)
        })?;
        Ok(dict.clone_ref(py))
    }

    /// The output, or the call's error raised as a `PalisadeError`.
    fn unwrap(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        if self.outcome.error().is_none() {
            return self.output(py);
        }
        let error = self.field(py, "error")?;
        Err(PyErr::from_value(
            wrapper(py)?.error.bind(py).call1((error,))?,
        ))
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<bool> {
        match other.cast::<NativeOutcome>() {
            Ok(other) => self.to_dict(py)?.bind(py).eq(other.get().to_dict(py)?),
            Err(_) => Ok(false),
        }
    }

    /// The outcome itself: it cannot be changed.
    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let repr =
            |value: Py<PyAny>| -> PyResult<String> { Ok(value.bind(py).repr()?.to_string()) };
        // An output nested deeper than Python reads is named, not raised.
        let output = match self.output(py) {
            Err(e) if e.is_instance_of::<PyRecursionError>(py) => {
                "<nested deeper than Python's recursion limit>".to_owned()
            }
            output => repr(output?)?,
        };
        Ok(format!(
            "Outcome(ok={}, output={}, error={}, logs={}, audit={}, receipt={}, error_id={})",
            if self.ok() { "True" } else { "False" },
            output,
            repr(self.error(py)?)?,
            repr(self.logs(py)?)?,
            repr(self.audit(py)?)?,
            repr(self.receipt(py)?)?,
            repr(self.error_id(py)?)?,
        ))
    }
}

/// What the outcome needs of `palisade._outcome`.
struct Wrapper {
    fields: Py<PyAny>,
    error: Py<PyAny>,
}

fn wrapper(py: Python<'_>) -> PyResult<&Wrapper> {
    static WRAPPER: PyOnceLock<Wrapper> = PyOnceLock::new();
    WRAPPER.get_or_try_init(py, || {
        let module = py.import("palisade._outcome")?;
        Ok(Wrapper {
            fields: module.getattr("_Fields")?.getattr("from_dict")?.unbind(),
            error: module.getattr("PalisadeError")?.unbind(),
        })
    })
}

/// The library's JSON (well-formed: the library checked it) as Python values, built in Rust as
/// it is read: serde_json's reader hands each value straight to pythonize's writer, with no tree
/// between them (0.35 µs for w1's output against 0.43 through a tree, 310 µs against 410 for a
/// 12 KB one). By Python's `json.loads` for what serde_json would read
/// otherwise or not at all: a whole number too large for 64 bits (`1e20`, which JavaScript
/// writes as 21 digits: serde_json reads a float, `json.loads` an int), a value nested deeper
/// than serde_json's limit (128), or a string with a lone surrogate (`"\ud800"`, which a
/// script's `JSON.stringify` writes and a Python `str` holds).
fn python_value(py: Python<'_>, json: &str) -> PyResult<Py<PyAny>> {
    if !long_digits(json) {
        let mut reader = serde_json::Deserializer::from_str(json);
        if let Ok(value) = serde_transcode::transcode(&mut reader, pythonize::Pythonizer::new(py))
            && reader.end().is_ok()
        {
            return Ok(value.unbind());
        }
    }
    loads(py, json)
}

/// Whether `json` holds a run of 19 digits or more: every whole number beyond 64 bits has one
/// (`-9223372036854775809` has 19). A run inside a string or a fraction also counts: it only
/// sends the text to `json.loads`, which reads it the same.
fn long_digits(json: &str) -> bool {
    let mut run = 0;
    json.bytes().any(|byte| {
        run = if byte.is_ascii_digit() { run + 1 } else { 0 };
        run >= 19
    })
}

/// JSON text as Python values, by Python's own `json.loads`.
pub fn loads(py: Python<'_>, json: &str) -> PyResult<Py<PyAny>> {
    static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let loads = LOADS.get_or_try_init(py, || {
        PyResult::Ok(py.import("json")?.getattr("loads")?.unbind())
    })?;
    loads.call1(py, (json,))
}
