//! The capability bridge: a global (named by the policy, `host` by default) whose every
//! property is an async function calling the host capability of that name, as in `maia.do(x)`.
//!
//! The global is this bridge in calls whose policy grants capabilities; in the others `host` is
//! the refusing one of `globals::ungranted`. Every decision is made by
//! the host; the guest only carries payloads and turns refusals into `PolicyDeniedError`.

#[cfg(feature = "capabilities")]
use crate::globals::io;
use javy::quickjs::prelude::Func;
use javy::quickjs::{Ctx, Function, Persistent, Result, Value};
use std::cell::RefCell;

thread_local! {
    /// The bridge object, made once before the snapshot and kept out of the script's reach
    /// until a call's policy names its global. It holds no state of its own: every property
    /// read makes a new function that calls the host, so one object serves every call (each
    /// call has its own copy of the snapshot). Making it per call took 19,000 wasm instructions,
    /// more than the rest of a compiled trivial call.
    static BRIDGE: RefCell<Option<Persistent<Value<'static>>>> = const { RefCell::new(None) };
}

/// The JS side: error classes (public, for `instanceof`) and the bridge (private). It is
/// evaluated as a script returning a function of the natives, never as a module (a module
/// could be imported again by its name) and never through a global.
const PRELUDE: &str = include_str!("bridge.js");

/// Evaluate the prelude and keep the bridge. Runs once, before the snapshot.
pub fn register<'js>(cx: &Ctx<'js>, wait: &Function<'js>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    #[cfg(feature = "capabilities")]
    let (start, start_args) = (
        Func::from(io::start_capability),
        Func::from(io::start_capability_args),
    );
    #[cfg(not(feature = "capabilities"))]
    let (start, start_args) = (
        Func::from(crate::globals::absent),
        Func::from(crate::globals::absent),
    );
    let bridge: Value = prelude.call((start, start_args, wait.clone()))?;
    BRIDGE.with(|slot| *slot.borrow_mut() = Some(Persistent::save(cx, bridge)));
    Ok(())
}

/// Install the bridge under `global` for this call.
pub fn install(cx: &Ctx<'_>, global: &str) -> Result<()> {
    let bridge = BRIDGE
        .with(|slot| slot.borrow().clone())
        .expect("the bridge prelude ran at init")
        .restore(cx)?;
    crate::globals::define_global(cx, global, bridge)
}
