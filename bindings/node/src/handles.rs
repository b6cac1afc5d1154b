//! A policy and a script read once and used by many calls (`new Policy(spec)`,
//! `Script.fromSource`, `Script.fromFile`, `Script.fromComponent`).

use crate::errors::{library, refused};
use napi::bindgen_prelude::Buffer;
use napi_derive::napi;

/// A policy, checked as a policy file is.
#[napi]
pub struct NativePolicy {
    /// Shared by every call that runs under it.
    pub(crate) inner: std::sync::Arc<palisade::Policy>,
}

#[napi]
impl NativePolicy {
    /// Read a policy from its spec's JSON text: a file's path, TOML text, or a table.
    #[napi(factory)]
    pub fn read(spec: String) -> napi::Result<Self> {
        let inner = palisade_bindings::read_policy(&spec).map_err(refused)?;
        Ok(Self {
            inner: inner.into(),
        })
    }

    /// The policy's name.
    #[napi(getter)]
    pub fn name(&self) -> String {
        self.inner.name().to_owned()
    }

    /// The SHA-256 of the policy's text.
    #[napi(getter)]
    pub fn sha256(&self) -> String {
        self.inner.sha256().to_owned()
    }
}

/// A script: an ES module's source, a file, or a compiled component.
#[napi]
pub struct NativeScript {
    pub(crate) inner: palisade::Script,
}

#[napi]
impl NativeScript {
    /// An ES module from its source; `name` appears in stack traces.
    #[napi(factory)]
    pub fn from_source(name: String, source: String) -> Self {
        Self {
            inner: palisade::Script::new(name, source),
        }
    }

    /// A script file as `palisade run FILE` reads it (ES module, TypeScript, component).
    #[napi(factory)]
    pub fn from_file(path: String) -> napi::Result<Self> {
        let inner = palisade_bindings::read_script(path.as_ref()).map_err(|e| library(&e))?;
        Ok(Self { inner })
    }

    /// A component compiled by `palisade compile`.
    #[napi(factory)]
    pub fn from_component(wasm: Buffer) -> napi::Result<Self> {
        let inner = palisade::Script::from_component(wasm.to_vec()).map_err(|e| library(&e))?;
        Ok(Self { inner })
    }

    /// The module name.
    #[napi(getter)]
    pub fn name(&self) -> String {
        self.inner.name().to_owned()
    }
}
