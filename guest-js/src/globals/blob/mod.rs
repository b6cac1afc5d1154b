//! `Blob` and `File`, in JS (`blob.js`) over the UTF-8 natives fetch.rs keeps for the globals
//! a script cannot reach.

use javy::quickjs::prelude::Func;
use javy::quickjs::{Ctx, Function, Object, Result};

const PRELUDE: &str = include_str!("blob.js");

/// Install `Blob` and `File`. Runs once, before the snapshot, before `FormData` and `fetch`,
/// which take their internals.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    let native = Object::new(cx.clone())?;
    native.set("encode", Func::from(super::utf8::utf8_encode))?;
    native.set("decode", Func::from(super::utf8::utf8_decode))?;
    prelude.call((native,))
}
