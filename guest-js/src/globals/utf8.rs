//! A JS string's UTF-8 and bytes as text, for every global that moves a string's bytes
//! (`TextEncoder`, `fs`, `fetch` bodies, `Blob`, `kv`, `btoa`): QuickJS hands out an ASCII
//! string's own buffer, so nothing is copied and only a well-formedness check runs over the
//! bytes. A leaf: it uses no other global.

use javy::quickjs::{CString, Ctx, Result, String as JsString, TypedArray};
use std::borrow::Cow;

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

    /// The text with each lone surrogate as U+FFFD: what the Encoding Standard's UTF-8 encoder
    /// and WebIDL's `USVString` make of a JS string. Copies only when there is one.
    pub fn lossy(&self) -> Cow<'_, str> {
        match self.text() {
            Some(text) => Cow::Borrowed(text),
            None => Cow::Owned(without_surrogates(self.bytes())),
        }
    }
}

/// A JS string as Rust text, each lone surrogate as U+FFFD (not an "invalid utf-8" error): for
/// the natives that take a string from a script (URL, labels, `encodeInto`).
pub fn usv(text: JsString<'_>) -> Result<String> {
    Ok(Utf8::new(text)?.lossy().into_owned())
}

/// WTF-8 (UTF-8 where a lone surrogate is its own three-byte sequence, `ED A0..BF 80..BF`) as
/// UTF-8, each such sequence replaced by U+FFFD, which is also three bytes.
fn without_surrogates(bytes: &[u8]) -> String {
    let mut out = bytes.to_vec();
    let mut i = 0;
    while i + 2 < out.len() {
        if out[i] == 0xED && (0xA0..=0xBF).contains(&out[i + 1]) {
            out[i..i + 3].copy_from_slice("\u{FFFD}".as_bytes());
            i += 3;
        } else {
            i += 1;
        }
    }
    // Anything else QuickJS hands out is UTF-8 already; a lossy pass keeps that a promise.
    match String::from_utf8(out) {
        Ok(text) => text,
        Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
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

/// UTF-8 of a string, lone surrogates as U+FFFD: what `new TextEncoder().encode(text)` gives,
/// for the globals that must not call `TextEncoder`, which a script can replace (fetch.js,
/// kv.js).
pub fn utf8_encode<'js>(cx: Ctx<'js>, text: JsString<'js>) -> Result<TypedArray<'js, u8>> {
    let utf8 = Utf8::new(text.clone())?;
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
pub fn utf8_decode_keep_bom<'js>(
    cx: Ctx<'js>,
    bytes: TypedArray<'js, u8>,
) -> Result<JsString<'js>> {
    text_of(cx, bytes.as_bytes().unwrap_or_default())
}

fn text_of<'js>(cx: Ctx<'js>, view: &[u8]) -> Result<JsString<'js>> {
    // Well-formed text (the usual case) is checked a word at a time and not copied.
    match utf8(view) {
        Some(text) => JsString::from_str(cx, text),
        None => JsString::from_str(cx, &String::from_utf8_lossy(view)),
    }
}
