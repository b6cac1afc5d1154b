//! A policy and a script read once and used by many calls (`Policy(spec)`,
//! `Script.from_source`, `Script.from_file`, `Script.from_component`).

use crate::errors::{library, refused};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::sync::mpsc::RecvTimeoutError;

/// A policy, checked as a policy file is.
#[pyclass(frozen)]
pub struct NativePolicy {
    /// Shared by every call that runs under it.
    pub(crate) inner: std::sync::Arc<palisade::Policy>,
}

#[pymethods]
impl NativePolicy {
    /// Read a policy from its spec's JSON text: a file's path, TOML text, or a table.
    #[staticmethod]
    fn read(spec: &str) -> PyResult<Self> {
        let inner = palisade_bindings::read_policy(spec).map_err(refused)?;
        Ok(Self {
            inner: inner.into(),
        })
    }

    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }

    #[getter]
    fn sha256(&self) -> &str {
        self.inner.sha256()
    }
}

/// A script: an ES module's source, a file, or a compiled component.
#[pyclass(frozen)]
pub struct NativeScript {
    pub(crate) inner: palisade::Script,
}

#[pymethods]
impl NativeScript {
    /// An ES module from its source; `name` appears in stack traces.
    #[staticmethod]
    fn from_source(name: &str, source: &str) -> Self {
        Self {
            inner: palisade::Script::new(name, source),
        }
    }

    /// A script file as `palisade run FILE` reads it (ES module, TypeScript, component), read
    /// on a thread of its own while this one waits with the GIL released: a FIFO waits for its
    /// writer, other threads run meanwhile, and Ctrl-C or the interpreter's exit ends the wait.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let _pass = enter("Script.from_file()")?;
        let (sender, mut read) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("palisade-read".to_owned())
            .spawn(move || {
                let _ = sender.send(palisade_bindings::read_script(&path));
            })?;
        loop {
            // The receiver goes with the wait and comes back: a shared one is not `Sync`.
            let got;
            (read, got) = py.detach(move || {
                let got = read.recv_timeout(READ_WAIT);
                (read, got)
            });
            match got {
                Ok(script) => {
                    return Ok(Self {
                        inner: script.map_err(|e| library(&e))?,
                    });
                }
                Err(RecvTimeoutError::Timeout) if crate::exit::is_exiting() => {
                    return Err(exiting("Script.from_file()"));
                }
                Err(RecvTimeoutError::Timeout) => py.check_signals()?,
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(PyRuntimeError::new_err(
                        "Script.from_file(): the read ended without a script",
                    ));
                }
            }
        }
    }

    /// A component compiled by `palisade compile`, read with the GIL released.
    #[staticmethod]
    fn from_component(py: Python<'_>, wasm: &[u8]) -> PyResult<Self> {
        let wasm = wasm.to_vec();
        let _pass = enter("Script.from_component()")?;
        let inner = py
            .detach(|| palisade::Script::from_component(wasm))
            .map_err(|e| library(&e))?;
        Ok(Self { inner })
    }

    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }
}

/// How often `Script.from_file` looks for a signal and for the interpreter's exit while its
/// file is read.
const READ_WAIT: std::time::Duration = std::time::Duration::from_millis(10);

/// A pass through the exit gate for a read with the GIL released (`crate::exit`), or the
/// RuntimeError `method` raises once the interpreter is exiting.
fn enter(method: &str) -> PyResult<crate::exit::Pass> {
    crate::exit::enter().ok_or_else(|| exiting(method))
}

/// The RuntimeError `method` raises once the interpreter is exiting.
fn exiting(method: &str) -> PyErr {
    PyRuntimeError::new_err(format!(
        "{method}: the interpreter is exiting, and reads no script"
    ))
}
