//! A JS string's UTF-8 in one piece, for the globals that move a string's bytes (`fs.writeFile`,
//! `fetch` bodies, `btoa`): QuickJS hands out an ASCII string's own buffer, so nothing is copied
//! and only a well-formedness check runs over the bytes.

use javy::quickjs::{CString, Result, String as JsString};

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
        std::str::from_utf8(self.bytes()).ok()
    }
}
