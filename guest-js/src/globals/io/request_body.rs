//! Request bodies that `fetch` sends as a script's `ReadableStream` gives them: the request goes
//! out without a length (chunked), and fetch.js writes each chunk here as the stream yields it,
//! then finishes the body at the stream's end or drops it when the stream fails. The host counts
//! the bytes against `http.max_request_body` as they pass its gate; a body over it, or one the
//! upstream stopped taking, refuses further writes, and the response says why.
//!
//! The guest built without capabilities never opens one (its requests are refused before any
//! body), so its natives below take nothing.

#[cfg(feature = "capabilities")]
use crate::wasi::http::types::OutgoingBody;
#[cfg(feature = "capabilities")]
use crate::wasi::io::streams::OutputStream;
#[cfg(feature = "capabilities")]
use std::cell::RefCell;
#[cfg(feature = "capabilities")]
use std::collections::BTreeMap;

use javy::quickjs::TypedArray;

/// The most `blocking-write-and-flush` takes at once (`wasi:io/streams`).
#[cfg(feature = "capabilities")]
const WRITE_PIECE: usize = 4096;

/// A streamed request body being written. Fields drop in order: the stream before its body.
#[cfg(feature = "capabilities")]
struct Open {
    stream: Option<OutputStream>,
    body: OutgoingBody,
}

#[cfg(feature = "capabilities")]
thread_local! {
    static OPEN: RefCell<BTreeMap<u32, Open>> = const { RefCell::new(BTreeMap::new()) };
}

/// Keep `body` open under `id` for fetch.js to write to.
#[cfg(feature = "capabilities")]
pub(super) fn open(id: u32, body: OutgoingBody) {
    let stream = body.write().ok();
    OPEN.with(|open| open.borrow_mut().insert(id, Open { stream, body }));
}

/// Drop every open body (each one the host then treats as broken off).
pub(super) fn clear() {
    #[cfg(feature = "capabilities")]
    OPEN.with(|open| open.borrow_mut().clear());
}

/// Write one chunk of the body `id`; false once the host takes no more of it (the request
/// failed, went over the policy's byte budget, or the upstream stopped reading).
#[cfg(feature = "capabilities")]
pub fn write(id: u32, chunk: TypedArray<'_, u8>) -> bool {
    let bytes = chunk.as_bytes().unwrap_or_default();
    OPEN.with(|open| {
        let open = open.borrow();
        let Some(stream) = open.get(&id).and_then(|o| o.stream.as_ref()) else {
            return false;
        };
        bytes
            .chunks(WRITE_PIECE)
            .all(|piece| stream.blocking_write_and_flush(piece).is_ok())
    })
}

/// Finish the body `id` at the end of its stream; false when the host no longer took it.
#[cfg(feature = "capabilities")]
pub fn finish(id: u32) -> bool {
    let Some(Open { stream, body }) = OPEN.with(|open| open.borrow_mut().remove(&id)) else {
        return false;
    };
    drop(stream);
    OutgoingBody::finish(body, None).is_ok()
}

/// Drop the body `id` unfinished: the host breaks the request off.
pub fn abort(id: u32) {
    #[cfg(feature = "capabilities")]
    OPEN.with(|open| open.borrow_mut().remove(&id));
    #[cfg(not(feature = "capabilities"))]
    let _ = id;
}

#[cfg(not(feature = "capabilities"))]
/// No body is ever open in this guest.
pub fn write(_id: u32, _chunk: TypedArray<'_, u8>) -> bool {
    false
}

#[cfg(not(feature = "capabilities"))]
/// No body is ever open in this guest.
pub fn finish(_id: u32) -> bool {
    false
}
