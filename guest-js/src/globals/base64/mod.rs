//! `atob` and `btoa`, as in browsers: Latin-1 strings to and from base64. The bytes move in
//! Rust (a few wasm instructions per byte); the JS wrapper only converts the argument to a
//! string and throws the `InvalidCharacterError` that browsers throw.

use crate::globals::utf8::Utf8;
use javy::quickjs::prelude::Func;
use javy::quickjs::{Ctx, Function, Result, String as JsString};

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The value of a base64 digit, 64 for anything else.
const DIGITS: [u8; 256] = {
    let mut table = [64u8; 256];
    let mut i = 0;
    while i < 64 {
        table[ALPHABET[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// The code units of a string made only of Latin-1 characters, one byte each, to `f`; `None`
/// when it has one above U+00FF (a lone surrogate included).
fn with_latin1<T>(text: JsString<'_>, f: impl FnOnce(&[u8]) -> T) -> Result<Option<T>> {
    let utf8 = Utf8::new(text)?;
    let bytes = utf8.bytes();
    if crate::globals::utf8::is_ascii(bytes) {
        // ASCII is its own Latin-1.
        return Ok(Some(f(bytes)));
    }
    let latin1: Option<Vec<u8>> = utf8
        .text()
        .and_then(|text| text.chars().map(|c| u8::try_from(c).ok()).collect());
    Ok(latin1.map(|bytes| f(&bytes)))
}

/// A string whose code units are `bytes` (each byte as U+0000..U+00FF).
fn from_latin1<'js>(cx: Ctx<'js>, bytes: &[u8]) -> Result<JsString<'js>> {
    // ASCII is its own UTF-8.
    if let Some(text) = crate::globals::utf8::ascii(bytes) {
        return JsString::from_str(cx, text);
    }
    let text: String = bytes.iter().map(|&b| char::from(b)).collect();
    JsString::from_str(cx, &text)
}

/// Base64 of `bytes`, with padding.
pub fn encode(bytes: &[u8]) -> String {
    let digit = |n: u32| ALPHABET[(n & 63) as usize];
    let mut out = vec![b'='; bytes.len().div_ceil(3) * 4];
    let chunks = bytes.chunks_exact(3);
    let rest = chunks.remainder();
    for (c, o) in chunks.zip(out.chunks_exact_mut(4)) {
        let n = (u32::from(c[0]) << 16) | (u32::from(c[1]) << 8) | u32::from(c[2]);
        o[0] = digit(n >> 18);
        o[1] = digit(n >> 12);
        o[2] = digit(n >> 6);
        o[3] = digit(n);
    }
    if let Some(o) = out.rchunks_exact_mut(4).next().filter(|_| !rest.is_empty()) {
        let n = (u32::from(rest[0]) << 16) | (u32::from(*rest.get(1).unwrap_or(&0)) << 8);
        o[0] = digit(n >> 18);
        o[1] = digit(n >> 12);
        if rest.len() == 2 {
            o[2] = digit(n >> 6);
        }
    }
    String::from_utf8(out).unwrap_or_default()
}

/// ASCII whitespace as the forgiving-base64 algorithm strips it.
fn is_whitespace(c: &u8) -> bool {
    matches!(c, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ')
}

/// WHATWG forgiving-base64 decode: ASCII whitespace removed, then one or two trailing `=` when
/// the length is a multiple of 4; `None` when the rest has a length of 4n+1 or a character
/// outside the alphabet. Leftover bits are dropped.
pub fn decode(input: &[u8]) -> Option<Vec<u8>> {
    // Text without whitespace (the usual case) is decoded as it is; whitespace is outside the
    // alphabet, so text with some fails there and is decoded again without it.
    decode_stripped(input).or_else(|| {
        if !input.iter().any(is_whitespace) {
            return None;
        }
        let text: Vec<u8> = input
            .iter()
            .copied()
            .filter(|c| !is_whitespace(c))
            .collect();
        decode_stripped(&text)
    })
}

/// `decode` of text that has no whitespace.
fn decode_stripped(mut text: &[u8]) -> Option<Vec<u8>> {
    if text.len().is_multiple_of(4)
        && let [rest @ .., b'='] = text
    {
        text = rest;
        if let [rest @ .., b'='] = text {
            text = rest;
        }
    }
    if text.len() % 4 == 1 {
        return None;
    }
    let chunks = text.chunks_exact(4);
    let rest = chunks.remainder();
    let mut out = vec![0u8; text.len() / 4 * 3 + rest.len().saturating_sub(1)];
    let (whole, tail) = out.split_at_mut(text.len() / 4 * 3);
    for (c, o) in chunks.zip(whole.chunks_exact_mut(3)) {
        let (a, b, d, e) = (
            DIGITS[c[0] as usize],
            DIGITS[c[1] as usize],
            DIGITS[c[2] as usize],
            DIGITS[c[3] as usize],
        );
        if (a | b | d | e) & 64 != 0 {
            return None;
        }
        let n = (u32::from(a) << 18) | (u32::from(b) << 12) | (u32::from(d) << 6) | u32::from(e);
        o[0] = (n >> 16) as u8;
        o[1] = (n >> 8) as u8;
        o[2] = n as u8;
    }
    let mut n = 0u32;
    for &c in rest {
        let d = DIGITS[c as usize];
        if d == 64 {
            return None;
        }
        n = (n << 6) | u32::from(d);
    }
    match rest.len() {
        2 => tail[0] = (n >> 4) as u8,
        3 => {
            tail[0] = (n >> 10) as u8;
            tail[1] = (n >> 2) as u8;
        }
        _ => {}
    }
    Some(out)
}

/// `btoa`'s work: the base64 of a Latin-1 string, or `undefined` when it is not Latin-1.
fn btoa<'js>(cx: Ctx<'js>, text: JsString<'js>) -> Result<Option<JsString<'js>>> {
    with_latin1(text, encode)?
        .map(|encoded| JsString::from_str(cx, &encoded))
        .transpose()
}

/// `atob`'s work: the Latin-1 string that base64 text stands for, or `undefined` when it is not
/// valid base64.
fn atob<'js>(cx: Ctx<'js>, text: JsString<'js>) -> Result<Option<JsString<'js>>> {
    // Anything outside Latin-1 is outside the alphabet too.
    with_latin1(text, decode)?
        .flatten()
        .map(|bytes| from_latin1(cx, &bytes))
        .transpose()
}

const PRELUDE: &str = include_str!("base64.js");

/// Install `atob` and `btoa`. Runs once, before the snapshot.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    prelude.call((Func::from(btoa), Func::from(atob)))
}
