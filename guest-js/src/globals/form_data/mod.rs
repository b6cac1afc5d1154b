//! `FormData`, in plain JS (`form_data.js`), over `Blob`'s internals.

use javy::quickjs::{Ctx, Function, Result};

const PRELUDE: &str = include_str!("form_data.js");

/// Install `FormData`. Runs once, before the snapshot, after `Blob` and before `fetch`.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    prelude.call(())
}
