//! A console line, made only as far as the console keeps it. The host keeps at most the policy's
//! `limits.console` bytes of a call's lines (and marks what it drops), so a line is built up to
//! that cap and no further: an argument past it is not formatted at all, and an object's JSON, a
//! string, a typed array or an array of ten million elements stops at the element, member or
//! character that passes it (QuickJS's `JSON.stringify`, bounded in the vendored copy:
//! `JS_JSONStringifyPrefix`, `JS_StringPrefix`). What is kept is the start of the line an
//! unbounded console would write, cut at the cap.

use javy::quickjs::{Ctx, String as JSString, Value, convert::Coerced, prelude::FromJs, qjs};
use std::cell::Cell;

// SAFETY: both are defined in the vendored QuickJS (vendor/rquickjs-sys/quickjs/quickjs.c) with
// these signatures; each returns a new reference or `JS_EXCEPTION`.
unsafe extern "C" {
    fn JS_JSONStringifyPrefix(
        ctx: *mut qjs::JSContext,
        obj: qjs::JSValue,
        limit: i64,
    ) -> qjs::JSValue;
    fn JS_StringPrefix(ctx: *mut qjs::JSContext, v: qjs::JSValue, max: u32) -> qjs::JSValue;
}

thread_local! {
    /// The call's `limits.console`, in bytes.
    static CAP: Cell<u64> = const { Cell::new(u64::MAX) };
}

/// Set the console cap of the call about to run (its environment's `console-limit`).
pub fn set_cap(bytes: u64) {
    CAP.with(|cap| cap.set(bytes));
}

/// Join the arguments with spaces: strings as they are, objects as JSON when they have a JSON
/// form, everything else through `String(value)`; at most the cap's bytes of it.
pub(super) fn format<'js>(cx: &Ctx<'js>, args: Vec<Value<'js>>) -> String {
    let cap = usize::try_from(CAP.with(Cell::get)).unwrap_or(usize::MAX);
    let mut line = String::new();
    for (i, value) in args.into_iter().enumerate() {
        if line.len() > cap {
            break;
        }
        if i > 0 {
            line.push(' ');
        }
        // One byte more than the room, so that a line cut here is seen to pass the cap.
        let room = (cap - line.len().min(cap)).saturating_add(1);
        push_value(cx, value, room, &mut line);
    }
    if line.len() > cap {
        let mut cut = cap;
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        line.truncate(cut);
    }
    line
}

/// Append at least the first `room` bytes of `value`'s text (all of it when it is shorter).
fn push_value<'js>(cx: &Ctx<'js>, value: Value<'js>, room: usize, line: &mut String) {
    let json = (value.is_object() && !value.is_function() && !value.is_error())
        .then(|| json_prefix(cx, &value, room))
        .flatten();
    let text = match json {
        Some(text) => Some(text),
        None if value.is_symbol() => {
            line.push_str(&javy::val_to_string(cx, value).unwrap_or_default());
            return;
        }
        None => Coerced::<JSString>::from_js(cx, value).ok().map(|s| s.0),
    };
    match text.and_then(|text| string_prefix(cx, &text, room)) {
        Some(text) => line.push_str(&text),
        None => {
            cx.catch();
            line.push_str("<unprintable>");
        }
    }
}

/// The start of `JSON.stringify(value)`, at least `room` code units of it; `None` when it is
/// `undefined` or throws (a cycle, a BigInt, a `toJSON` or getter that throws).
fn json_prefix<'js>(cx: &Ctx<'js>, value: &Value<'js>, room: usize) -> Option<JSString<'js>> {
    let limit = i64::try_from(room).unwrap_or(i64::MAX);
    // SAFETY: the context and `value` are live; the result is a new reference, owned by the
    // `Value` made from it.
    let text = unsafe {
        let raw = JS_JSONStringifyPrefix(cx.as_raw().as_ptr(), value.as_raw(), limit);
        Value::from_raw(cx.clone(), raw)
    };
    if text.is_exception() {
        cx.catch();
        return None;
    }
    text.into_string()
}

/// The first `room` code units of `text` (each is at least one byte), as Rust text.
fn string_prefix<'js>(cx: &Ctx<'js>, text: &JSString<'js>, room: usize) -> Option<String> {
    let max = u32::try_from(room).unwrap_or(u32::MAX);
    // SAFETY: as in `json_prefix`.
    let prefix = unsafe {
        let raw = JS_StringPrefix(cx.as_raw().as_ptr(), text.as_raw(), max);
        Value::from_raw(cx.clone(), raw)
    };
    let prefix = prefix.into_string()?;
    Some(
        prefix
            .to_string()
            .unwrap_or_else(|e| javy::to_string_lossy(cx, &prefix, e)),
    )
}
