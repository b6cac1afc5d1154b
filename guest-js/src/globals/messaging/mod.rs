//! `CustomEvent`, `MessageEvent`, `MessageChannel` and `MessagePort`, in plain JS
//! (`messaging.js`): ports live inside the sandbox, so a message never leaves the call; it is
//! cloned with `structuredClone` and delivered as a task of the event loop (a timer due now).

use javy::quickjs::{Ctx, Result};

/// The script: an IIFE that defines its globals and needs no natives.
const SCRIPT: &str = include_str!("messaging.js");

/// Evaluate the script. Runs once, before the snapshot, after `EventTarget`, `structuredClone`
/// and the timers exist.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    cx.eval::<(), _>(SCRIPT)
}
