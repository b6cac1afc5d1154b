//! `fetch`, `Request`, `Response` and the network error classes (fetch.js), over
//! `wasi:http/outgoing-handler`. The host's gate decides every request; this file only carries
//! requests out and results back through the event loop (io.rs).

use crate::globals::io;
use crate::palisade::sandbox::capability::refusal;
use javy::quickjs::prelude::Func;
use javy::quickjs::{Ctx, Function, Object, Result, Value};

fn denial<'js>(cx: Ctx<'js>, target: String) -> Result<Value<'js>> {
    match refusal(&target) {
        Some(d) => {
            let denial = Object::new(cx)?;
            denial.set("capability", d.capability)?;
            denial.set("rule", d.rule)?;
            denial.set("reason", d.reason)?;
            denial.set("fix", d.fix)?;
            Ok(denial.into_value())
        }
        None => Ok(Value::new_null(cx)),
    }
}

const PRELUDE: &str = include_str!("fetch.js");

/// Install the fetch globals and hand the event loop its settle function. Runs once, before
/// the snapshot; `Headers`, `URL`, `AbortController` and `PolicyDeniedError` exist already.
pub fn register<'js>(cx: &Ctx<'js>, wait: &Function<'js>, cancel: &Function<'js>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    let native = Object::new(cx.clone())?;
    native.set("send", Func::from(io::http_send))?;
    native.set("denial", Func::from(denial))?;
    native.set("cancel", Func::from(io::cancel))?;
    prelude.call((native, wait.clone(), cancel.clone()))
}
