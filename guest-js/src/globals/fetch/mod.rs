//! `fetch`, `Request`, `Response` and the network error classes (fetch.js), over
//! `wasi:http/outgoing-handler`. The host's gate decides every request; this file only carries
//! requests out and results back through the event loop (io.rs).

use crate::globals::io;
use javy::quickjs::prelude::Func;
use javy::quickjs::{Ctx, Function, Object, Result, String as JsString, TypedArray};

/// UTF-8 of a string, lone surrogates as U+FFFD: what `new TextEncoder().encode(text)` gives,
/// for the globals that must not call `TextEncoder`, which a script can replace (fetch.js,
/// kv.js).
pub fn utf8_encode<'js>(cx: Ctx<'js>, text: JsString<'js>) -> Result<TypedArray<'js, u8>> {
    let utf8 = crate::globals::text::Utf8::new(text.clone())?;
    let encoded = match utf8.text() {
        Some(text) => text.as_bytes().to_vec(),
        None => match text.to_string() {
            Ok(text) => text.into_bytes(),
            Err(error) => javy::to_string_lossy(&cx, &text, error).into_bytes(),
        },
    };
    TypedArray::new(cx, encoded)
}

/// Bytes as text, invalid sequences as U+FFFD and a leading byte order mark dropped: what
/// `new TextDecoder().decode(bytes)` gives, for the same globals.
pub fn utf8_decode<'js>(cx: Ctx<'js>, bytes: TypedArray<'js, u8>) -> Result<JsString<'js>> {
    let view = bytes.as_bytes().unwrap_or_default();
    let view = match view {
        [0xEF, 0xBB, 0xBF, rest @ ..] => rest,
        _ => view,
    };
    text_of(cx, view)
}

/// Bytes as text with a leading byte order mark kept: the Encoding Standard's "UTF-8 decode
/// without BOM", which the URL Standard's urlencoded parser (`formData()`) uses.
fn utf8_decode_keep_bom<'js>(cx: Ctx<'js>, bytes: TypedArray<'js, u8>) -> Result<JsString<'js>> {
    text_of(cx, bytes.as_bytes().unwrap_or_default())
}

fn text_of<'js>(cx: Ctx<'js>, view: &[u8]) -> Result<JsString<'js>> {
    // Well-formed text (the usual case) is checked a word at a time and not copied.
    match crate::globals::text::utf8(view) {
        Some(text) => JsString::from_str(cx, text),
        None => JsString::from_str(cx, &String::from_utf8_lossy(view)),
    }
}

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
    native.set("encode", Func::from(utf8_encode))?;
    native.set("decode", Func::from(utf8_decode))?;
    native.set("decodeKeepBom", Func::from(utf8_decode_keep_bom))?;
    native.set("dataLimit", Func::from(data_limit))?;
    let mime: Object = cx.eval::<Function, _>(MIME)?.call(())?;
    prelude.call((native, wait.clone(), cancel.clone(), mime))
}
