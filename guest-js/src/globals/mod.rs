//! The JS globals Palisade adds to QuickJS, one module per global.

mod base64;
pub mod bridge;
pub mod config;
mod console;
pub mod fs;
pub mod timers;

use javy::quickjs::{Ctx, Result};

/// Install every Palisade global into the context.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    console::register(cx)?;
    base64::register(cx)?;
    timers::register(cx)?;
    bridge::register(cx)
}
