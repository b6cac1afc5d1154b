//! A call's request as `run` and `run_async` take it, keyword arguments, turned into what
//! [`palisade_bindings::Start`] holds: the policy and the script given as objects (`Policy`,
//! `Script`) taken out, the input written apart (or the caller's `input_json` text, as it is),
//! and the rest written as the JSON text `palisade_bindings::Request` reads (not at all when
//! nothing is left: a request with no keys of its own is the default one). Each is written
//! by serde_json when it holds only Python's own JSON types ([`Plain`]), else by Python's
//! own JSON encoder (`_palisade._dumps`). Values only Python has (a
//! `timedelta`, a `datetime`, `bytes`) are turned into their JSON form first, by
//! `_palisade._plain`.
//!
//! It runs in Rust, without a Python frame: Python run between two calls slows the second
//! (docs/bench.md, "Python's `run` without a Python frame").

use crate::handles::{NativePolicy, NativeScript};
use palisade_bindings::{OnEvent, Start};
use pyo3::exceptions::{PyRecursionError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};

/// The keys whose values `_palisade._plain` turns into JSON first.
const PYTHON_ONLY: [&str; 3] = ["timeout", "now", "files"];

/// What the request's reading needs of `palisade._palisade`.
struct Wrapper {
    policy: Py<PyType>,
    script: Py<PyType>,
    plain: Py<PyAny>,
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
            dumps: module.getattr("_dumps")?.unbind(),
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
    let (mut input, mut input_json) = (None, None);
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
        let name = key.cast::<PyString>()?.to_str().ok();
        match name {
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
            // An absent value, as the key left out (an absent input is null).
            Some(_) if value.is_none() => {}
            Some("input") => input = Some(value),
            Some("input_json") => input_json = Some(text(&value)?),
            name => {
                python_only |= name.is_some_and(|name| PYTHON_ONLY.contains(&name));
                fields.set_item(key, value)?;
            }
        }
    }
    if python_only {
        wrapper.plain.call1(py, (&fields,))?;
    }
    let input = match (input, input_json) {
        (Some(_), Some(_)) => {
            return Err(PyTypeError::new_err(
                "run(): give `input` or `input_json`, not both",
            ));
        }
        // Written as the request's own value would be: one level below it.
        (Some(value), None) => Some(json(py, wrapper, &value, 1)?),
        (None, text) => text,
    };
    // A request with no keys of its own is not written at all.
    let request = if fields.is_empty() {
        None
    } else {
        Some(json(py, wrapper, &fields, 0)?)
    };
    Ok(Start {
        request,
        input,
        policy,
        script,
        on_event,
    })
}

/// `input_json`'s text, as it is; the caller's mistake when it is not a str, or not text.
fn text(value: &Bound<'_, PyAny>) -> PyResult<String> {
    let text = value
        .cast::<PyString>()
        .map_err(|_| PyTypeError::new_err("run(): `input_json` is JSON text (a str)"))?;
    let text = text.to_str().map_err(|_| {
        PyTypeError::new_err(
            "run(): `input_json` holds a lone UTF-16 surrogate (\\uD800 to \\uDFFF without its \
             pair), which is not text",
        )
    })?;
    Ok(text.to_owned())
}

/// `value` (the request's fields, or the input alone) as compact JSON text, `depth` levels
/// below the request. When all of it is Python's own JSON types ([`Plain`]), serde_json
/// writes it straight from them; else Python's encoder does (`_palisade._dumps`, the one
/// `json.dumps` uses), with its rules and errors: the two agree on every value the first takes
/// (the script gets the same value). Their texts differ only in how they write non-ASCII text
/// (UTF-8, or `\uXXXX` escapes) and some floats' digits (`0.00001` or `1e-05`), which the input's size against `limits.input`
/// counts. What `json.dumps` cannot write (a value that is not JSON, a circular one, a float
/// that is not finite) is the caller's mistake.
fn json(
    py: Python<'_>,
    wrapper: &Wrapper,
    value: &Bound<'_, PyAny>,
    depth: u32,
) -> PyResult<String> {
    if let Ok(text) = serde_json::to_string(&Plain { value, depth }) {
        return Ok(text);
    }
    let written = wrapper.dumps.call1(py, (value,));
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

/// How deep [`Plain`] follows lists and dicts; a deeper value is written by `json.dumps`.
/// Each level costs `Plain::serialize` a frame of its own: about 350 bytes in the release build
/// and 1.7 KB in the dev build, within any thread's stack at this depth.
const PLAIN_DEPTH: u32 = 32;

/// A value made only of Python's own JSON types, exactly (no subclass): a dict with str keys,
/// a list or tuple, a str that is UTF-8 (no lone surrogate), an int within `i64`, a finite
/// float, a bool, None; the request itself and at most [`PLAIN_DEPTH`] levels below it. Any
/// other value fails to serialize, and the caller falls back to `json.dumps`.
///
/// Writing it runs no Python code, so nothing changes a dict or list while it is read: the
/// only objects it makes are the exceptions of a failed read (an int beyond `i64`, a lone
/// surrogate), whose making may run the garbage collector and so a `__del__`; after each such
/// failure it stops at once.
///
/// It is the request's fast path: `json.dumps` spends most of its time on each float's
/// `repr` (a 41 KB input of 1,000 rows takes it about 0.65 ms; docs/bench.md, "A Python request
/// written by serde_json").
struct Plain<'a, 'py> {
    value: &'a Bound<'py, PyAny>,
    depth: u32,
}

impl<'py> Plain<'_, 'py> {
    fn inner<'b>(&self, value: &'b Bound<'py, PyAny>) -> Plain<'b, 'py> {
        Plain {
            value,
            depth: self.depth + 1,
        }
    }

    /// A list's or a tuple's `len` items, as a JSON array.
    fn array<S: serde::Serializer>(
        &self,
        serializer: S,
        len: usize,
        items: impl Iterator<Item = Bound<'py, PyAny>>,
    ) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = serializer.serialize_seq(Some(len))?;
        for item in items {
            seq.serialize_element(&self.inner(&item))?;
        }
        seq.end()
    }
}

impl serde::Serialize for Plain<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeMap};
        let not_plain = || S::Error::custom("not one of Python's own JSON types");
        let value = self.value;
        if self.depth > PLAIN_DEPTH {
            return Err(not_plain());
        }
        if value.is_none() {
            serializer.serialize_unit()
        } else if let Ok(text) = value.cast_exact::<PyString>() {
            serializer.serialize_str(text.to_str().map_err(|_| not_plain())?)
        } else if let Ok(flag) = value.cast_exact::<PyBool>() {
            serializer.serialize_bool(flag.is_true())
        } else if value.is_exact_instance_of::<PyInt>() {
            serializer.serialize_i64(value.extract::<i64>().map_err(|_| not_plain())?)
        } else if let Ok(number) = value.cast_exact::<PyFloat>() {
            let number = number.value();
            if !number.is_finite() {
                return Err(not_plain());
            }
            serializer.serialize_f64(number)
        } else if let Ok(dict) = value.cast_exact::<PyDict>() {
            let mut map = serializer.serialize_map(Some(dict.len()))?;
            for (key, item) in dict.iter() {
                let key = key.cast_exact::<PyString>().map_err(|_| not_plain())?;
                map.serialize_entry(key.to_str().map_err(|_| not_plain())?, &self.inner(&item))?;
            }
            map.end()
        } else if let Ok(list) = value.cast_exact::<PyList>() {
            self.array(serializer, list.len(), list.iter())
        } else if let Ok(tuple) = value.cast_exact::<PyTuple>() {
            self.array(serializer, tuple.len(), tuple.iter())
        } else {
            Err(not_plain())
        }
    }
}
