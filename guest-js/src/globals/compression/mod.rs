//! `CompressionStream` and `DecompressionStream` (the Compression Standard: `deflate`, the
//! zlib format; `deflate-raw`; `gzip`), computed by `flate2` over `miniz_oxide`. The JS half
//! (compression.js) makes each a TransformStream and hands the natives below the bytes of each
//! chunk; they return what the codec produced so far, in pieces of at most `PIECE` bytes.
//!
//! What a chunk decompresses to is bounded only by the call's memory, as in any runtime (a
//! kilobyte of deflate can stand for a megabyte): every piece is reserved fallibly, and when the
//! memory limit refuses one the chunk fails with QuickJS's own `InternalError: out of memory`,
//! which errors the stream (the script can catch it) and, uncaught, ends the call as
//! `memory_limit`. The host's memory is never at stake: the guest's memory is the call's.

use flate2::Compression;
use flate2::write::{
    DeflateDecoder, DeflateEncoder, GzDecoder, GzEncoder, ZlibDecoder, ZlibEncoder,
};
use javy::quickjs::prelude::Func;
use javy::quickjs::{Array, ArrayBuffer, Ctx, Exception, Function, Object, Result, Value};
use std::cell::RefCell;
use std::io::{self, Write};

/// The most bytes of output in one chunk the stream hands the script.
const PIECE: usize = 64 << 10;

/// The output of a codec, in pieces of at most `PIECE` bytes, each reserved fallibly.
#[derive(Default)]
struct Pieces(Vec<Vec<u8>>);

impl Write for Pieces {
    fn write(&mut self, mut data: &[u8]) -> io::Result<usize> {
        let written = data.len();
        while !data.is_empty() {
            if self.0.last().is_none_or(|last| last.len() == PIECE) {
                self.0.try_reserve(1).map_err(out_of_memory)?;
                self.0.push(Vec::new());
            }
            let last = self.0.last_mut().expect("a piece was just made");
            let take = (PIECE - last.len()).min(data.len());
            last.try_reserve_exact(take).map_err(out_of_memory)?;
            last.extend_from_slice(&data[..take]);
            data = &data[take..];
        }
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn out_of_memory(_: std::collections::TryReserveError) -> io::Error {
    io::Error::from(io::ErrorKind::OutOfMemory)
}

/// One stream's codec: the `flate2` writer of its format and direction, over its `Pieces`.
trait Codec: Write {
    /// The output so far, taken.
    fn take(&mut self) -> Vec<Vec<u8>>;
    /// End the stream: a compressor writes its last block and trailer; a decompressor checks
    /// that the input was whole (an error for a truncated stream or a bad checksum).
    fn end(&mut self) -> io::Result<()>;
    /// Whether `flush` after each chunk is how its output so far comes out: a decompressor's
    /// sync flush changes nothing in what it decodes, while a compressor's would put a sync
    /// marker into the compressed bytes.
    fn flushes(&self) -> bool;
}

macro_rules! codec {
    ($($writer:ident: $flushes:literal),* $(,)?) => {$(
        impl Codec for $writer<Pieces> {
            fn take(&mut self) -> Vec<Vec<u8>> {
                std::mem::take(&mut self.get_mut().0)
            }
            fn end(&mut self) -> io::Result<()> {
                self.try_finish()
            }
            fn flushes(&self) -> bool {
                $flushes
            }
        }
    )*};
}

codec!(
    ZlibEncoder: false,
    DeflateEncoder: false,
    GzEncoder: false,
    ZlibDecoder: true,
    DeflateDecoder: true,
    GzDecoder: true,
);

/// A codec for compression.js's format code (0 `deflate`, 1 `deflate-raw`, 2 `gzip`).
fn codec(format: u32, compress: bool) -> Option<Box<dyn Codec>> {
    let level = Compression::default();
    let out = Pieces::default();
    Some(match (format, compress) {
        (0, true) => Box::new(ZlibEncoder::new(out, level)),
        (1, true) => Box::new(DeflateEncoder::new(out, level)),
        (2, true) => Box::new(GzEncoder::new(out, level)),
        (0, false) => Box::new(ZlibDecoder::new(out)),
        (1, false) => Box::new(DeflateDecoder::new(out)),
        (2, false) => Box::new(GzDecoder::new(out)),
        _ => return None,
    })
}

thread_local! {
    /// The codecs of the streams in this call, by handle (index + 1). A codec is freed when its
    /// stream ends or fails; one a script abandons stays until the call ends, under its memory.
    static CODECS: RefCell<Vec<Option<Box<dyn Codec>>>> = const { RefCell::new(Vec::new()) };
}

/// Make a codec: a handle for `write` and `finish`.
fn open(cx: Ctx<'_>, format: u32, compress: bool) -> Result<u32> {
    let Some(codec) = codec(format, compress) else {
        return Err(Exception::throw_type(&cx, "unknown compression format"));
    };
    CODECS.with(|codecs| {
        let mut codecs = codecs.borrow_mut();
        let slot = match codecs.iter().position(Option::is_none) {
            Some(free) => free,
            None => {
                codecs.push(None);
                codecs.len() - 1
            }
        };
        codecs[slot] = Some(codec);
        Ok(slot as u32 + 1)
    })
}

/// What a step of a codec came to: `Junk` when a decompressor's stream ended before its input
/// did. The output up to the end still counts, as the Compression Standard enqueues it before
/// it throws.
enum Step {
    Done,
    Junk,
}

/// Run `step` on the codec of `handle`, and give its output so far as an array of
/// `ArrayBuffer`s, ending with `null` after `Step::Junk`. `last` (or a failure) frees the codec.
fn with_codec<'js>(
    cx: Ctx<'js>,
    handle: u32,
    last: bool,
    step: impl FnOnce(&mut dyn Codec) -> io::Result<Step>,
) -> Result<Array<'js>> {
    let slot = (handle as usize).wrapping_sub(1);
    let taken = CODECS.with(|codecs| codecs.borrow_mut().get_mut(slot).and_then(Option::take));
    let Some(mut codec) = taken else {
        return Err(Exception::throw_type(&cx, "the stream has ended"));
    };
    let result = step(codec.as_mut());
    let pieces = codec.take();
    if matches!(result, Ok(Step::Done)) && !last {
        CODECS.with(|codecs| codecs.borrow_mut()[slot] = Some(codec));
    }
    let junk = matches!(result.map_err(|error| failure(&cx, &error))?, Step::Junk);
    let out = Array::new(cx.clone())?;
    let count = pieces.len() as u32;
    for (index, piece) in pieces.into_iter().enumerate() {
        crate::globals::define_index(&out, index as u32, ArrayBuffer::new(cx.clone(), piece)?)?;
    }
    if junk {
        crate::globals::define_index(&out, count, Value::new_null(cx.clone()))?;
    }
    Ok(out)
}

/// A codec's error as the script sees it: QuickJS's out-of-memory error when the memory limit
/// refused the output, otherwise the `TypeError` the Compression Standard names.
fn failure(cx: &Ctx<'_>, error: &io::Error) -> javy::quickjs::Error {
    match error.kind() {
        io::ErrorKind::OutOfMemory => Exception::throw_internal(cx, "out of memory"),
        _ => Exception::throw_type(cx, &format!("The compressed data is not valid: {error}")),
    }
}

/// One chunk: the `length` bytes from `offset` of `buffer` through the codec. Input left over
/// once a decompressor's stream has ended is `Step::Junk`.
fn write<'js>(
    cx: Ctx<'js>,
    handle: u32,
    buffer: Value<'js>,
    offset: f64,
    length: f64,
) -> Result<Array<'js>> {
    let buffer = ArrayBuffer::from_value(buffer);
    let bytes = buffer
        .as_ref()
        .and_then(ArrayBuffer::as_bytes)
        .unwrap_or_default();
    let (offset, length) = (offset as usize, length as usize);
    let Some(mut input) = offset
        .checked_add(length)
        .and_then(|end| bytes.get(offset..end))
    else {
        return Err(Exception::throw_range(&cx, "the chunk is out of bounds"));
    };
    with_codec(cx, handle, false, |codec| {
        while !input.is_empty() {
            match codec.write(input)? {
                0 => break,
                n => input = &input[n..],
            }
        }
        if codec.flushes() {
            codec.flush()?;
        }
        Ok(if input.is_empty() {
            Step::Done
        } else {
            Step::Junk
        })
    })
}

/// The end of the input: the last of the output, or the error of a stream that ended short.
fn finish(cx: Ctx<'_>, handle: u32) -> Result<Array<'_>> {
    with_codec(cx, handle, true, |codec| codec.end().map(|()| Step::Done))
}

const PRELUDE: &str = include_str!("compression.js");

/// Define `CompressionStream` and `DecompressionStream`. Runs once, before the snapshot, after
/// the stream globals, over the TransformStream internals that `streams::register` returns.
pub fn register<'js>(cx: &Ctx<'js>, transform: Object<'js>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    let natives = Object::new(cx.clone())?;
    natives.set("open", Func::from(open))?;
    natives.set("write", Func::from(write))?;
    natives.set("finish", Func::from(finish))?;
    prelude.call((transform, natives))
}
