//! The JS globals Palisade adds to QuickJS, one module per global.

pub mod bridge;
pub mod config;
mod console;
pub mod fs;

use javy::quickjs::{Ctx, Result};

/// Install every Palisade global into the context.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    console::register(cx)?;
    bridge::register(cx)
}
