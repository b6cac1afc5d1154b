//! `fetch`, `Request`, `Response` and the network error classes (fetch.js), over
//! `wasi:http/outgoing-handler`. The host's gate decides every request; this file only carries
//! requests out and results back through the event loop (io.rs).

use crate::globals::{io, utf8};
use javy::quickjs::prelude::Func;
use javy::quickjs::{Ctx, Function, Object, Result};

thread_local! {
    /// The call's budget for `data:` URL response bodies (`environment.response-body-limit`).
    static DATA_LIMIT: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Set the budget `fetch` holds `data:` URL bodies to, for the call about to run.
pub fn set_data_limit(bytes: u64) {
    DATA_LIMIT.with(|limit| limit.set(bytes));
}

/// The call's budget for `data:` URL bodies, in bytes (exact as a JS number up to 2^53).
fn data_limit() -> f64 {
    DATA_LIMIT.with(|limit| limit.get()) as f64
}

const PRELUDE: &str = include_str!("fetch.js");
/// MIME type parsing and serializing, for a `data:` URL's `Content-Type`.
const MIME: &str = include_str!("mime.js");

/// Install the fetch globals and hand the event loop its settle function. Runs once, before
/// the snapshot; `Headers`, `URL`, `AbortController` and `PolicyDeniedError` exist already.
pub fn register<'js>(cx: &Ctx<'js>, wait: &Function<'js>, cancel: &Function<'js>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    let native = Object::new(cx.clone())?;
    native.set("send", Func::from(io::http_send))?;
    native.set("denial", Func::from(io::refusal))?;
    native.set("cancel", Func::from(io::cancel))?;
    native.set("bodyWrite", Func::from(io::request_body::write))?;
    native.set("bodyFinish", Func::from(io::request_body::finish))?;
    native.set("bodyAbort", Func::from(io::request_body::abort))?;
    native.set("encode", Func::from(utf8::utf8_encode))?;
    native.set("decode", Func::from(utf8::utf8_decode))?;
    native.set("decodeKeepBom", Func::from(utf8::utf8_decode_keep_bom))?;
    native.set("dataLimit", Func::from(data_limit))?;
    let mime: Object = cx.eval::<Function, _>(MIME)?.call(())?;
    prelude.call((native, wait.clone(), cancel.clone(), mime))
}
