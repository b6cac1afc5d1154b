//! `DOMException`: the error class that `AbortSignal`, `structuredClone` and `crypto`
//! throw, in plain JS (`dom_exception.js`).

use javy::quickjs::{Ctx, Result};

/// The script: an IIFE that defines its globals and needs no natives.
const SCRIPT: &str = include_str!("dom_exception.js");

/// Evaluate the script. Runs once, before the snapshot.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    cx.eval::<(), _>(SCRIPT)
}
