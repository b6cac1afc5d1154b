//! A call's request as `run` and `run_async` take it, keyword arguments, turned into what
//! [`palisade_bindings::Start`] holds: the policy and the script given as objects (`Policy`,
//! `Script`) taken out, and the rest written as the JSON text `palisade_bindings::Request`
//! reads, by Python's own JSON encoder (its C encoder, made once in `_palisade.py`). Values
//! only Python has (a `timedelta`, a `datetime`, `bytes`) are turned into their JSON form first,
//! by `_palisade._plain`.
//!
//! It runs in Rust, without a Python frame: Python run between two calls slows the second
//! (docs/bench.md, "Python's `run` without a Python frame").

use crate::handles::{NativePolicy, NativeScript};
use palisade_bindings::{OnEvent, Start};
use pyo3::exceptions::{PyRecursionError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString, PyType};

/// The keys whose values `_palisade._plain` turns into JSON first.
const PYTHON_ONLY: [&str; 3] = ["timeout", "now", "files"];

/// What the request's reading needs of `palisade._palisade`.
struct Wrapper {
    policy: Py<PyType>,
    script: Py<PyType>,
    plain: Py<PyAny>,
    /// `json.encoder.c_make_encoder(…)`, or None where Python has no C encoder.
    encoder: Py<PyAny>,
    dumps: Py<PyAny>,
}

fn wrapper(py: Python<'_>) -> PyResult<&Wrapper> {
    static WRAPPER: PyOnceLock<Wrapper> = PyOnceLock::new();
    WRAPPER.get_or_try_init(py, || {
        let module = py.import("palisade._palisade")?;
        let class = |name: &str| -> PyResult<Py<PyType>> {
            Ok(module.getattr(name)?.cast_into::<PyType>()?.unbind())
        };
        Ok(Wrapper {
            policy: class("Policy")?,
            script: class("Script")?,
            plain: module.getattr("_plain")?.unbind(),
            encoder: module.getattr("_ENCODER")?.unbind(),
            dumps: py.import("json")?.getattr("dumps")?.unbind(),
        })
    })
}

/// `request` (keyword arguments) as a call's start, with `on_event` its events' callback.
pub fn start(
    py: Python<'_>,
    request: Option<&Bound<'_, PyDict>>,
    on_event: Option<OnEvent>,
) -> PyResult<Start> {
    let wrapper = wrapper(py)?;
    let fields = PyDict::new(py);
    let (mut policy, mut script) = (None, None);
    let mut python_only = false;
    // The items as they are now: reading them may run the caller's code (an `isinstance`
    // check, a `_native` property), which may change the dict.
    let items = match request {
        Some(request) => request.items(),
        None => PyList::empty(py),
    };
    for item in items.iter() {
        let (key, value) = item.extract::<(Bound<'_, PyAny>, Bound<'_, PyAny>)>()?;
        // A key that is not text (a lone surrogate) is no key the request knows: the request's
        // reading refuses it as it does any such string.
        let name = key.cast::<PyString>()?.to_cow().ok();
        match name.as_deref() {
            Some("policy") if value.is_instance(wrapper.policy.bind(py))? => {
                let native = value.getattr("_native")?;
                policy = Some(native.cast::<NativePolicy>()?.get().inner.clone());
            }
            Some("script") if !value.is_none() => {
                if !value.is_instance(wrapper.script.bind(py))? {
                    return Err(PyTypeError::new_err(
                        "run(): `script` is a Script (Script.from_source, from_file, from_component)",
                    ));
                }
                let native = value.getattr("_native")?;
                script = Some(native.cast::<NativeScript>()?.get().inner.clone());
            }
            // An absent value, as the key left out (but for `input`, where None is null).
            Some(name) if value.is_none() && name != "input" => {}
            name => {
                python_only |= name.is_some_and(|name| PYTHON_ONLY.contains(&name));
                fields.set_item(key, value)?;
            }
        }
    }
    if python_only {
        wrapper.plain.call1(py, (&fields,))?;
    }
    Ok(Start {
        request: json(py, wrapper, &fields)?,
        policy,
        script,
        on_event,
    })
}

/// `fields` as JSON text, as `json.dumps` writes it; what it cannot write (a value that is not
/// JSON, a circular one) is the caller's mistake.
fn json(py: Python<'_>, wrapper: &Wrapper, fields: &Bound<'_, PyDict>) -> PyResult<String> {
    let written = if wrapper.encoder.is_none(py) {
        wrapper.dumps.call1(py, (fields,))
    } else {
        wrapper.encoder.call1(py, (fields, 0)).and_then(|chunks| {
            PyString::new(py, "")
                .call_method1("join", (chunks,))
                .map(Bound::unbind)
        })
    };
    let text = written.map_err(|e| {
        let mistake = e.is_instance_of::<PyTypeError>(py)
            || e.is_instance_of::<PyValueError>(py)
            || e.is_instance_of::<PyRecursionError>(py);
        if mistake {
            PyTypeError::new_err(format!("run(): {}", e.value(py)))
        } else {
            e
        }
    })?;
    text.extract(py)
}
