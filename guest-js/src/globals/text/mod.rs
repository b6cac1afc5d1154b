//! `TextEncoder`'s and `TextDecoder`'s work, and the encoding streams'; a string's UTF-8 itself
//! is `globals::utf8`'s.

use crate::globals::utf8::{Utf8, usv, utf8};
use encoding_rs::{CoderResult, Decoder, DecoderResult, Encoding, UTF_8};
use javy::quickjs::prelude::Func;
use javy::quickjs::{
    Array, ArrayBuffer, Ctx, Exception, Function, Object, Result, String as JsString, Value,
};
use std::cell::RefCell;

/// The bytes `length` from `offset` of `buffer`, or a `RangeError`.
fn view<'a>(cx: &Ctx<'_>, bytes: &'a [u8], offset: f64, length: f64) -> Result<&'a [u8]> {
    let (offset, length) = (offset as usize, length as usize);
    offset
        .checked_add(length)
        .and_then(|end| bytes.get(offset..end))
        .ok_or_else(|| {
            Exception::throw_range(
                cx,
                "Provided offset and length is not valid for provided buffer",
            )
        })
}

/// The `TypeError` of a fatal decoder that met a malformed sequence.
fn malformed(cx: &Ctx<'_>, encoding: &'static Encoding) -> javy::quickjs::Error {
    let message = format!(
        "The encoded data was not valid {}",
        encoding.name().to_ascii_lowercase()
    );
    Exception::throw_type(cx, &message)
}

/// The encoding a `TextDecoder` label names (the Encoding Standard's "get an encoding": ASCII
/// whitespace trimmed, ASCII case ignored), as its lowercase name; `None` for an unknown label
/// and for `replacement`, which a `TextDecoder` refuses.
fn encoding_for(label: JsString<'_>) -> Result<Option<String>> {
    let label = usv(label)?;
    Ok(Encoding::for_label_no_replacement(label.as_bytes())
        .map(|encoding| encoding.name().to_ascii_lowercase()))
}

fn encoding_named<'js>(cx: &Ctx<'js>, name: &str) -> Result<&'static Encoding> {
    Encoding::for_label_no_replacement(name.as_bytes())
        .ok_or_else(|| Exception::throw_range(cx, "unknown encoding"))
}

/// Feed `bytes` to `decoder` (`last`: the end of the stream) and return the text: malformed
/// sequences as U+FFFD, or, when `fatal`, the `TypeError`. The output buffer is sized up front
/// from the input (at most three UTF-8 bytes per input byte), so one pass decodes it all.
fn feed(
    cx: &Ctx<'_>,
    decoder: &mut Decoder,
    bytes: &[u8],
    fatal: bool,
    last: bool,
) -> Result<String> {
    let encoding = decoder.encoding();
    let capacity = if fatal {
        decoder.max_utf8_buffer_length_without_replacement(bytes.len())
    } else {
        decoder.max_utf8_buffer_length(bytes.len())
    };
    let Some(capacity) = capacity else {
        return Err(Exception::throw_range(
            cx,
            "the input is too large to decode",
        ));
    };
    let mut text = String::with_capacity(capacity);
    if fatal {
        match decoder.decode_to_string_without_replacement(bytes, &mut text, last) {
            (DecoderResult::InputEmpty, _) => Ok(text),
            (DecoderResult::Malformed(..), _) => Err(malformed(cx, encoding)),
            (DecoderResult::OutputFull, _) => Err(Exception::throw_internal(cx, "output full")),
        }
    } else {
        match decoder.decode_to_string(bytes, &mut text, last) {
            (CoderResult::InputEmpty, _, _) => Ok(text),
            (CoderResult::OutputFull, _, _) => Err(Exception::throw_internal(cx, "output full")),
        }
    }
}

fn new_decoder(encoding: &'static Encoding, ignore_bom: bool) -> Decoder {
    if ignore_bom {
        encoding.new_decoder_without_bom_handling()
    } else {
        // Removes a leading byte order mark only when it is this encoding's own (UTF-8, UTF-16LE
        // or UTF-16BE), as the Encoding Standard's TextDecoder does.
        encoding.new_decoder_with_bom_removal()
    }
}

/// `TextDecoder.prototype.decode` without `{stream: true}`: the bytes `length` from `offset` of
/// `buffer` in the encoding `name`, as a string. UTF-8, the usual case, is checked a word at a
/// time and handed to QuickJS without a copy; every other encoding goes through `encoding_rs`.
fn decode<'js>(
    cx: Ctx<'js>,
    name: String,
    buffer: ArrayBuffer<'js>,
    offset: f64,
    length: f64,
    fatal: bool,
    ignore_bom: bool,
) -> Result<JsString<'js>> {
    let bytes = buffer.as_bytes().unwrap_or_default();
    let mut bytes = view(&cx, bytes, offset, length)?;
    let encoding = encoding_named(&cx, &name)?;
    if encoding == UTF_8 {
        if !ignore_bom && let [0xEF, 0xBB, 0xBF, rest @ ..] = bytes {
            bytes = rest;
        }
        return match utf8(bytes) {
            Some(text) => JsString::from_str(cx, text),
            None if fatal => Err(malformed(&cx, encoding)),
            None => JsString::from_str(cx, &String::from_utf8_lossy(bytes)),
        };
    }
    let text = feed(
        &cx,
        &mut new_decoder(encoding, ignore_bom),
        bytes,
        fatal,
        true,
    )?;
    JsString::from_str(cx, &text)
}

thread_local! {
    /// The decoders of `TextDecoder`s in the middle of a `{stream: true}` decode, by handle
    /// (index + 1). A decoder is freed by the call that ends its stream; one a script abandons
    /// mid-stream stays until the call ends, a few hundred bytes under the memory limit.
    static STREAMS: RefCell<Vec<Option<Decoder>>> = const { RefCell::new(Vec::new()) };
}

/// Start a streaming decode in the encoding `name`: a handle for `decode_stream`.
fn open_stream(cx: Ctx<'_>, name: String, ignore_bom: bool) -> Result<u32> {
    let decoder = new_decoder(encoding_named(&cx, &name)?, ignore_bom);
    STREAMS.with(|streams| {
        let mut streams = streams.borrow_mut();
        let slot = match streams.iter().position(Option::is_none) {
            Some(free) => free,
            None => {
                streams.push(None);
                streams.len() - 1
            }
        };
        streams[slot] = Some(decoder);
        Ok(slot as u32 + 1)
    })
}

/// One step of a streaming decode: the text the bytes complete. `last` ends the stream (a
/// partial sequence left at its end is malformed) and frees the decoder, even when it throws.
fn decode_stream<'js>(
    cx: Ctx<'js>,
    handle: u32,
    buffer: Value<'js>,
    offset: f64,
    length: f64,
    fatal: bool,
    last: bool,
) -> Result<JsString<'js>> {
    let buffer = ArrayBuffer::from_value(buffer);
    let bytes = buffer
        .as_ref()
        .and_then(ArrayBuffer::as_bytes)
        .unwrap_or_default();
    let bytes = view(&cx, bytes, offset, length)?;
    let slot = (handle as usize).wrapping_sub(1);
    let taken = STREAMS.with(|streams| streams.borrow_mut().get_mut(slot).and_then(Option::take));
    let Some(mut decoder) = taken else {
        return Err(Exception::throw_internal(&cx, "no such decoder"));
    };
    let text = feed(&cx, &mut decoder, bytes, fatal, last);
    if !last {
        STREAMS.with(|streams| streams.borrow_mut()[slot] = Some(decoder));
    }
    JsString::from_str(cx, &text?)
}

/// `TextEncoder.prototype.encodeInto`'s work: as much of `source`'s UTF-8 (lone surrogates as
/// U+FFFD) as fits whole characters into the `length` bytes from `offset` of `buffer`, and
/// `[read, written]`: the UTF-16 code units read and the bytes written.
fn encode_into<'js>(
    cx: Ctx<'js>,
    source: JsString<'js>,
    buffer: ArrayBuffer<'js>,
    offset: f64,
    length: f64,
) -> Result<Array<'js>> {
    let utf8 = Utf8::new(source)?;
    let text = utf8.lossy();
    let Some(raw) = buffer.as_raw() else {
        return Err(Exception::throw_type(
            &cx,
            "the destination's buffer is detached",
        ));
    };
    let (offset, length) = (offset as usize, length as usize);
    if offset.checked_add(length).is_none_or(|end| end > raw.len) {
        return Err(Exception::throw_range(
            &cx,
            "Provided offset and length is not valid for provided buffer",
        ));
    }
    // Whole characters only: the prefix that fits ends on a character boundary.
    let mut fits = text.len().min(length);
    while !text.is_char_boundary(fits) {
        fits -= 1;
    }
    let written = &text.as_bytes()[..fits];
    let read: usize = if written.is_ascii() {
        fits
    } else {
        text[..fits].chars().map(char::len_utf16).sum()
    };
    #[allow(unsafe_code)]
    // SAFETY: `raw` is the live buffer's memory, `offset + fits <= offset + length <= raw.len`
    // (checked above), and nothing runs JS (which could detach or resize it) before the copy.
    unsafe {
        std::ptr::copy_nonoverlapping(written.as_ptr(), raw.ptr.as_ptr().add(offset), fits);
    }
    let result = Array::new(cx.clone())?;
    crate::globals::define_index(&result, 0, read as f64)?;
    crate::globals::define_index(&result, 1, fits as f64)?;
    Ok(result)
}

/// `TextEncoder` and `TextDecoder` in place of javy's (`text_encoding` in run.rs), over natives
/// that move the bytes in one piece: javy's decoder ran `String::from_utf8_lossy` and a copy (28
/// fuel a byte where this takes 13), and its encoder copied the bytes twice. Every WHATWG
/// encoding decodes through `encoding_rs`.
const PRELUDE: &str = include_str!("text.js");

/// Define `TextEncoder` and `TextDecoder`. Runs once, before the snapshot.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    prelude.call((
        Func::from(crate::globals::utf8::utf8_encode),
        Func::from(decode),
        Func::from(encoding_for),
        Func::from(open_stream),
        Func::from(decode_stream),
        Func::from(encode_into),
    ))
}

/// `TextEncoderStream` and `TextDecoderStream`, over the TransformStream internals that
/// `streams::register` returns.
const STREAMS_PRELUDE: &str = include_str!("text_streams.js");

/// Define `TextEncoderStream` and `TextDecoderStream`. Runs once, before the snapshot, after
/// `register` and the stream globals.
pub fn register_streams<'js>(cx: &Ctx<'js>, transform: Object<'js>) -> Result<()> {
    let prelude: Function = cx.eval(STREAMS_PRELUDE)?;
    prelude.call((transform,))
}
