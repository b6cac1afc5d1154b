//! `ReadableStream` and the queuing strategies, in plain JS (`streams.js`).

use javy::quickjs::{Ctx, Function, Result};

const PRELUDE: &str = include_str!("streams.js");

/// Install the stream globals. Runs once, before the snapshot, before `Blob` and `fetch`, which
/// make their bodies' streams with it.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    prelude.call(())
}
