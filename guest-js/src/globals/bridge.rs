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
    /// `makeBridge` from the prelude, kept out of the script's reach.
    static MAKE_BRIDGE: RefCell<Option<Persistent<Function<'static>>>> = const { RefCell::new(None) };
}

/// The JS side: error classes (public, for `instanceof`) and the bridge factory (private). It is
/// evaluated as a script returning a function of the native `call`, never as a module (a module
/// could be imported again by its name) and never through a global.
const PRELUDE: &str = r#"
(function (start, wait) {
// Taken at start-up: a compiled script's top level runs before `makeBridge` and may replace them.
const { freeze, create } = Object;
const ProxyOf = Proxy;

class PolicyDeniedError extends Error {
  constructor(denial) {
    super(`policy denied capability \`${denial.capability}\`: ${denial.reason}`);
    this.name = "PolicyDeniedError";
    this.capability = denial.capability;
    this.rule = denial.rule;
    this.fix = denial.fix ?? null;
  }
}
class CapabilityError extends Error {
  constructor(capability, message) {
    super(message);
    this.name = "CapabilityError";
    this.capability = capability;
  }
}
globalThis.PolicyDeniedError = PolicyDeniedError;
globalThis.CapabilityError = CapabilityError;

const invoke = async (name, payload) => {
  const text = JSON.stringify(payload === undefined ? null : payload);
  const [status, result] = await wait(start(name, text));
  if (status === 0) return JSON.parse(result);
  if (status === 1) throw new PolicyDeniedError(result);
  throw new CapabilityError(name, result);
};

return function makeBridge() {
  const target = freeze(create(null));
  return new ProxyOf(target, {
    get(_, name) {
      // Not thenable, not a symbol-keyed protocol object: only named capabilities.
      if (typeof name !== "string" || name === "then") return undefined;
      return (payload) => invoke(name, payload);
    },
    set() { return false; },
    defineProperty() { return false; },
  });
};
})
"#;

/// Evaluate the prelude and keep `makeBridge`. Runs once, before the snapshot.
pub fn register<'js>(cx: &Ctx<'js>, wait: &Function<'js>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    #[cfg(feature = "capabilities")]
    let start = Func::from(io::start_capability);
    #[cfg(not(feature = "capabilities"))]
    let start = Func::from(crate::globals::absent);
    let make: Function = prelude.call((start, wait.clone()))?;
    MAKE_BRIDGE.with(|slot| *slot.borrow_mut() = Some(Persistent::save(cx, make)));
    Ok(())
}

/// Install a fresh bridge under `global` for this call.
pub fn install(cx: &Ctx<'_>, global: &str) -> Result<()> {
    let make = MAKE_BRIDGE
        .with(|slot| slot.borrow().clone())
        .expect("the bridge prelude ran at init");
    let make = make.restore(cx)?;
    let bridge: Value = make.call(())?;
    crate::globals::define_global(cx, global, bridge)
}
