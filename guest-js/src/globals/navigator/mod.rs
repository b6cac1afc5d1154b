//! `navigator.userAgent`: `Palisade/VERSION`, so that a script can tell where it runs, as it
//! would in Node (`Node.js/20`), Deno or workerd.

use javy::quickjs::{Ctx, Function, Result};

const PRELUDE: &str = include_str!("navigator.js");

/// Install `navigator` and `Navigator`. Runs once, before the snapshot.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    prelude.call((concat!("Palisade/", env!("CARGO_PKG_VERSION")),))
}
