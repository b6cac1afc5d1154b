//! `fetch`, `Request`, `Response` and the network error classes (fetch.js), over
//! `wasi:http/outgoing-handler`. The host's gate decides every request; this file only carries
//! requests out and results back through the event loop (io.rs).

use crate::globals::io;
use javy::quickjs::prelude::Func;
use javy::quickjs::{Ctx, Function, Object, Result};

const PRELUDE: &str = include_str!("fetch.js");

/// Install the fetch globals and hand the event loop its settle function. Runs once, before
/// the snapshot; `Headers`, `URL`, `AbortController` and `PolicyDeniedError` exist already.
pub fn register<'js>(cx: &Ctx<'js>, wait: &Function<'js>, cancel: &Function<'js>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    let native = Object::new(cx.clone())?;
    native.set("send", Func::from(io::http_send))?;
    native.set("denial", Func::from(io::refusal))?;
    native.set("cancel", Func::from(io::cancel))?;
    prelude.call((native, wait.clone(), cancel.clone()))
}
