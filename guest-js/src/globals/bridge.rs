//! The capability bridge: a global (named by the policy, `host` by default) whose every
//! property is an async function calling the host capability of that name, as in `maia.do(x)`.
//!
//! The global exists only in calls whose policy grants capabilities. Every decision is made by
//! the host; the guest only carries payloads and turns refusals into `PolicyDeniedError`.

use crate::palisade::sandbox::capability::{CallError, call};
use javy::quickjs::convert::List;
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
(function (call) {

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
  const [status, result] = call(name, text);
  if (status === 0) return JSON.parse(result);
  if (status === 1) throw new PolicyDeniedError(JSON.parse(result));
  throw new CapabilityError(name, result);
};

return function makeBridge() {
  const target = Object.freeze(Object.create(null));
  return new Proxy(target, {
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

/// Status codes of the native `call`, read by the prelude.
const OK: i32 = 0;
const DENIED: i32 = 1;
const FAILED: i32 = 2;

fn capability_call(name: String, payload: String) -> List<(i32, String)> {
    List(capability_result(name, payload))
}

fn capability_result(name: String, payload: String) -> (i32, String) {
    match call(&name, &payload) {
        Ok(result) => (OK, result),
        Err(CallError::Denied(d)) => {
            let fix = d.fix.map_or_else(|| "null".to_owned(), |f| json_string(&f));
            let denial = format!(
                r#"{{"capability":{},"rule":{},"reason":{},"fix":{fix}}}"#,
                json_string(&d.capability),
                json_string(&d.rule),
                json_string(&d.reason),
            );
            (DENIED, denial)
        }
        Err(CallError::Failed(message)) => (FAILED, message),
    }
}

/// A JSON string literal.
fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Evaluate the prelude and keep `makeBridge`. Runs once, before the snapshot.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    let make: Function = prelude.call((Func::from(capability_call),))?;
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
    cx.globals().set(global, bridge)
}
