//! What a call runs on: an engine with a guest (or a compiled script) linked on it, ready to
//! instantiate. `palisade/engines.rs` makes and keeps them.

use super::CallState;
use wasmtime::Engine;
use wasmtime::component::Linker;

/// One engine with its linked, ready-to-instantiate guest.
pub(crate) struct Runtime {
    pub engine: Engine,
    pub pre: crate::bindings::SandboxPre<CallState>,
    /// Whether the engine meters fuel ([`crate::Builder::fuel_metering`]).
    pub fuel: bool,
}

/// Link a guest component (the embedded guest or a compiled script) against the host's
/// imports, ready to instantiate.
pub(crate) fn instance_pre(
    engine: &Engine,
    component: &wasmtime::component::Component,
) -> wasmtime::Result<crate::bindings::SandboxPre<CallState>> {
    let mut linker: Linker<CallState> = Linker::new(engine);
    super::link(&mut linker)?;
    crate::bindings::SandboxPre::new(linker.instantiate_pre(component)?)
}
