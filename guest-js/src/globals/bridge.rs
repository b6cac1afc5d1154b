//! The capability bridge: a global (named by the policy, `host` by default) whose every
//! property is an async function calling the host capability of that name, as in `maia.do(x)`.
//!
//! The global exists only in calls whose policy grants capabilities. Every decision is made by
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
const PRELUDE: &str = r#"
(function (start, startArgs, wait) {
"use strict";
// Host-facing: uses only intrinsics captured while the guest is built, never a global, prototype method or iterator a script can replace, freeze or poison.
const { defineProperty, freeze, create } = Object;
const { parse, stringify } = JSON;
const ProxyCtor = Proxy;
// QuickJS compiles a template literal to a call of `String.prototype.concat`: none here.
const concat = Function.prototype.call.bind(String.prototype.concat);
// Own data properties, as assignments made them, defined so that a frozen or poisoned
// `Error.prototype` or `Object.prototype` cannot refuse or intercept them.
const own = (object, key, value) =>
  defineProperty(object, key, { __proto__: null, value, writable: true, enumerable: true, configurable: true });

class PolicyDeniedError extends Error {
  constructor(denial) {
    super(concat("policy denied capability `", denial.capability, "`: ", denial.reason));
    own(this, "name", "PolicyDeniedError");
    own(this, "capability", denial.capability);
    own(this, "rule", denial.rule);
    own(this, "fix", denial.fix ?? null);
  }
}
class CapabilityError extends Error {
  constructor(capability, message) {
    super(message);
    own(this, "name", "CapabilityError");
    own(this, "capability", capability);
  }
}
globalThis.PolicyDeniedError = PolicyDeniedError;
globalThis.CapabilityError = CapabilityError;

// One argument travels as itself, several as their list: every argument reaches the host.
const invoke = async (name, args) => {
  const started = args.length > 1
    ? startArgs(name, stringify(args))
    : start(name, stringify(args.length === 0 || args[0] === undefined ? null : args[0]));
  const reply = (await wait(started)).value;
  const status = reply[0], result = reply[1];
  if (status === 0) return parse(result);
  if (status === 1) throw new PolicyDeniedError(result);
  throw new CapabilityError(name, result);
};

return new ProxyCtor(freeze(create(null)), {
  __proto__: null,
  get(_, name) {
    // Not thenable, not a symbol-keyed protocol object: only named capabilities.
    if (typeof name !== "string" || name === "then") return undefined;
    return (...args) => invoke(name, args);
  },
  set() { return false; },
  defineProperty() { return false; },
});
})
"#;

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
