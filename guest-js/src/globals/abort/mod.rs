//! `EventTarget`, `Event`, `AbortController` and `AbortSignal`, in plain JS (`abort.js`).

use javy::quickjs::{Ctx, Result};

/// The script: an IIFE that defines its globals and needs no natives.
const SCRIPT: &str = include_str!("abort.js");

/// Evaluate the script. Runs once, before the snapshot.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    cx.eval::<(), _>(SCRIPT)
}
