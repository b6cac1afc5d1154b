//! `URLSearchParams`, in plain JS (`url_search_params.js`); `URL` keeps its query in sync
//! with it through the symbol-keyed hooks defined there.

use javy::quickjs::{Ctx, Result};

/// The script: an IIFE that defines its globals and needs no natives.
const SCRIPT: &str = include_str!("url_search_params.js");

/// Evaluate the script. Runs once, before the snapshot.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    cx.eval::<(), _>(SCRIPT)
}
