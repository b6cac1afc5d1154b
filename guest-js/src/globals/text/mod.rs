//! Text and bytes in one piece: `TextEncoder`'s and `TextDecoder`'s work, and a JS string's
//! UTF-8 for the globals that move a string's bytes (`fs.writeFile`, `fetch` bodies, `btoa`):
//! QuickJS hands out an ASCII string's own buffer, so nothing is copied and only a
//! well-formedness check runs over the bytes.

use javy::quickjs::prelude::Func;
use javy::quickjs::{ArrayBuffer, CString, Ctx, Exception, Function, Result, String as JsString};

/// The bytes QuickJS gives for a string (`JS_ToCStringLen`): its UTF-8, where a lone surrogate
/// is kept as its three-byte (WTF-8) form.
pub struct Utf8<'js>(CString<'js>);

impl<'js> Utf8<'js> {
    pub fn new(text: JsString<'js>) -> Result<Self> {
        text.to_cstring().map(Self)
    }

    /// The bytes, possibly with lone surrogates (see `text`).
    #[allow(unsafe_code)]
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `CString` holds a reference to the string whose `len()` bytes start at
        // `as_ptr()`, and frees them only when dropped, after this borrow ends.
        unsafe { std::slice::from_raw_parts(self.0.as_ptr().cast::<u8>(), self.0.len()) }
    }

    /// The text, or `None` when the string has a lone surrogate.
    pub fn text(&self) -> Option<&str> {
        utf8(self.bytes())
    }
}

/// `bytes` as text, when they are UTF-8. ASCII, the usual case, is recognised 32 bytes a turn
/// (`is_ascii`) and needs no further check; other bytes get `str::from_utf8`'s, which reads a
/// 4-byte word at a time on wasm32 and cost about 2.5 fuel a byte.
pub fn utf8(bytes: &[u8]) -> Option<&str> {
    ascii(bytes).or_else(|| std::str::from_utf8(bytes).ok())
}

/// `bytes` as text, when they are ASCII.
#[allow(unsafe_code)]
pub fn ascii(bytes: &[u8]) -> Option<&str> {
    // SAFETY: ASCII is UTF-8.
    is_ascii(bytes).then(|| unsafe { std::str::from_utf8_unchecked(bytes) })
}

/// Whether every byte is below 0x80, read as four 8-byte words a turn.
pub fn is_ascii(bytes: &[u8]) -> bool {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let word = |b: &[u8; 32], at: usize| {
        u64::from_ne_bytes([
            b[at],
            b[at + 1],
            b[at + 2],
            b[at + 3],
            b[at + 4],
            b[at + 5],
            b[at + 6],
            b[at + 7],
        ])
    };
    let (turns, rest) = bytes.as_chunks::<32>();
    let mut seen = 0;
    for turn in turns {
        seen |= word(turn, 0) | word(turn, 8) | word(turn, 16) | word(turn, 24);
    }
    seen & HIGH == 0 && rest.is_ascii()
}

/// `TextDecoder.prototype.decode`'s work, as javy's: the UTF-8 in `length` bytes of `buffer` from
/// `offset` as a string, a leading byte order mark dropped unless `ignore_bom`, invalid sequences
/// as U+FFFD or, when `fatal`, a `TypeError`. Well-formed text is checked a word at a time and
/// handed to QuickJS without a copy.
fn decode<'js>(
    cx: Ctx<'js>,
    buffer: ArrayBuffer<'js>,
    offset: f64,
    length: f64,
    fatal: bool,
    ignore_bom: bool,
) -> Result<JsString<'js>> {
    let bytes = buffer.as_bytes().unwrap_or_default();
    let (offset, length) = (offset as usize, length as usize);
    let Some(mut view) = offset
        .checked_add(length)
        .and_then(|end| bytes.get(offset..end))
    else {
        return Err(Exception::throw_message(
            &cx,
            "Provided offset and length is not valid for provided buffer",
        ));
    };
    if !ignore_bom && let [0xEF, 0xBB, 0xBF, rest @ ..] = view {
        view = rest;
    }
    match utf8(view) {
        Some(text) => JsString::from_str(cx, text),
        None if fatal => Err(Exception::throw_type(
            &cx,
            "The encoded data was not valid utf-8",
        )),
        None => JsString::from_str(cx, &String::from_utf8_lossy(view)),
    }
}

/// `TextEncoder.prototype.encode` and `TextDecoder.prototype.decode` in place of javy's
/// (`text_encoding` in run.rs), with the same checks and messages, over natives that move the
/// bytes in one piece: javy's decoder ran `String::from_utf8_lossy` and a copy (28 fuel a
/// byte where this takes 13), and its encoder copied the bytes twice.
const PRELUDE: &str = include_str!("text.js");

/// Put the bulk `encode` and `decode` on javy's `TextEncoder` and `TextDecoder`. Runs once, before
/// the snapshot.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    prelude.call((
        Func::from(crate::globals::fetch::utf8_encode),
        Func::from(decode),
    ))
}
