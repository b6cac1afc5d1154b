//! A policy and a script read once and used by many calls (`Policy(spec)`,
//! `Script.from_source`, `Script.from_file`, `Script.from_component`).

use crate::errors::{library, refused};
use pyo3::prelude::*;

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
    /// with the GIL released: a FIFO waits for its writer, and other threads run meanwhile.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let inner = py
            .detach(|| palisade_bindings::read_script(&path))
            .map_err(|e| library(&e))?;
        Ok(Self { inner })
    }

    /// A component compiled by `palisade compile`, read with the GIL released.
    #[staticmethod]
    fn from_component(py: Python<'_>, wasm: &[u8]) -> PyResult<Self> {
        let wasm = wasm.to_vec();
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
