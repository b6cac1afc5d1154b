//! The guest's event loop over `wasi:io/poll`: host operations in flight (capability calls,
//! HTTP responses, HTTP bodies) are pending promises, and when no JS job is left the loop
//! waits on all of them at once, together with the earliest timer, then settles whatever is
//! ready. So ten fetches to a slow upstream overlap instead of running one after another.
//!
//! Operations live here, keyed by a number; the JS side (`fetch`, the capability bridge) holds
//! the promise callbacks under the same number and is told through `onReady(id, result)`.
//!
//! The guest built without capabilities (for policies that grant none) imports neither
//! `wasi:http` nor the capability calls: its `fetch` hands each request to the host's gate
//! through `capability.unsent-request`, which refuses and records it as a request sent through
//! `wasi:http`, and its only operation is that refusal, settled at the loop's next turn.

use crate::palisade::sandbox::capability::{self, Denial, NetworkFailure};
#[cfg(feature = "capabilities")]
use crate::palisade::sandbox::capability::{CallError, PendingCall};
#[cfg(feature = "capabilities")]
use crate::wasi::http::outgoing_handler;
#[cfg(feature = "capabilities")]
use crate::wasi::http::types::{
    ErrorCode, Fields, FutureIncomingResponse, IncomingBody, IncomingResponse, Method,
    OutgoingBody, OutgoingRequest, Scheme,
};
use crate::wasi::io::poll::{Pollable, poll};
#[cfg(feature = "capabilities")]
use crate::wasi::io::streams::{InputStream, StreamError};
use javy::quickjs::TypedArray;
use javy::quickjs::convert::List;
use javy::quickjs::prelude::Func;
use javy::quickjs::{Array, Ctx, Function, Object, Persistent, Result, Value};
use std::cell::RefCell;
use std::collections::BTreeMap;

pub mod request_body;

/// One host operation in flight.
enum Op {
    #[cfg(feature = "capabilities")]
    Capability(PendingCall),
    #[cfg(feature = "capabilities")]
    Response(FutureIncomingResponse),
    #[cfg(feature = "capabilities")]
    Body(BodyRead),
    /// A request the host's gate refused (the plain guest's `fetch`): settled at the next turn
    /// of the event loop, as the full guest's refused `wasi:http` response is.
    #[cfg(not(feature = "capabilities"))]
    Refused,
}

impl Op {
    /// Ready when the operation can be settled; `None` when it can be settled now.
    fn subscribe(&self) -> Option<Pollable> {
        match *self {
            #[cfg(feature = "capabilities")]
            Op::Capability(ref pending) => Some(pending.subscribe()),
            #[cfg(feature = "capabilities")]
            Op::Response(ref future) => Some(future.subscribe()),
            #[cfg(feature = "capabilities")]
            Op::Body(ref read) => Some(read.stream.subscribe()),
            #[cfg(not(feature = "capabilities"))]
            Op::Refused => None,
        }
    }

    /// The value to hand `onReady`, once the operation has one.
    fn settle<'js>(&mut self, cx: &Ctx<'js>) -> Result<Option<Value<'js>>> {
        match *self {
            #[cfg(feature = "capabilities")]
            Op::Capability(ref pending) => capability_value(cx, pending),
            #[cfg(feature = "capabilities")]
            Op::Response(ref future) => response_value(cx, future),
            #[cfg(feature = "capabilities")]
            Op::Body(ref mut read) => body_step(cx, read),
            #[cfg(not(feature = "capabilities"))]
            Op::Refused => failure(cx, NetworkFailure::Denied, "HttpRequestDenied").map(Some),
        }
    }
}

/// A response body being read to its end. Fields drop in order: the stream before its body.
#[cfg(feature = "capabilities")]
struct BodyRead {
    stream: InputStream,
    _body: IncomingBody,
    _response: IncomingResponse,
    data: Vec<u8>,
}

thread_local! {
    static OPS: RefCell<BTreeMap<u32, Op>> = const { RefCell::new(BTreeMap::new()) };
    static NEXT_ID: RefCell<u32> = const { RefCell::new(1) };
    static ON_READY: RefCell<Option<Persistent<Function<'static>>>> = const { RefCell::new(None) };
}

fn next_id() -> u32 {
    NEXT_ID.with(|next| {
        let mut next = next.borrow_mut();
        let id = *next;
        *next = next.wrapping_add(1).max(1);
        id
    })
}

fn add(op: Op) -> u32 {
    let id = next_id();
    OPS.with(|ops| ops.borrow_mut().insert(id, op));
    id
}

/// Whether any host operation is in flight.
pub fn pending() -> bool {
    OPS.with(|ops| !ops.borrow().is_empty())
}

/// Forget every operation: a call's leftovers must not reach the next call.
pub fn clear() {
    OPS.with(|ops| ops.borrow_mut().clear());
    request_body::clear();
}

/// The JS half: promises waiting on operation ids, and results that arrived before anyone
/// waited for them (a response body read while the script was busy elsewhere).
const PRELUDE: &str = include_str!("io.js");

/// Set up the JS half; returns its `wait(id)` and `cancel(id)` for the bridge and `fetch`.
/// Runs once, before the snapshot.
pub fn register<'js>(cx: &Ctx<'js>) -> Result<(Function<'js>, Function<'js>)> {
    let prelude: Function = cx.eval(PRELUDE)?;
    let parts: Array = prelude.call((Func::from(cancel),))?;
    let on_ready: Function = parts.get(0)?;
    ON_READY.with(|slot| *slot.borrow_mut() = Some(Persistent::save(cx, on_ready)));
    Ok((parts.get(1)?, parts.get(2)?))
}

#[cfg(feature = "capabilities")]
/// Start a capability call; its result comes to `onReady` as `[status, text]` (a failure as
/// `[2, message, code, retryable]`).
pub fn start_capability(name: String, payload: String) -> u32 {
    add(Op::Capability(capability::call(&name, &payload)))
}

#[cfg(feature = "capabilities")]
/// Start a capability call with several arguments (`args`, a JSON array), like
/// [`start_capability`].
pub fn start_capability_args(name: String, args: String) -> u32 {
    add(Op::Capability(capability::call_args(&name, &args)))
}

/// A failure's kind as `fetch`'s error classes name it (`NetworkError.kind`): the name of its
/// case in `wit/capability.wit`.
fn kind_name(kind: NetworkFailure) -> &'static str {
    match kind {
        NetworkFailure::Denied => "denied",
        NetworkFailure::Dns => "dns",
        NetworkFailure::Refused => "refused",
        NetworkFailure::Reset => "reset",
        NetworkFailure::Timeout => "timeout",
        NetworkFailure::ResponseTooLarge => "response-too-large",
        NetworkFailure::RequestTooLarge => "request-too-large",
        NetworkFailure::Tls => "tls",
        NetworkFailure::ContentCoding => "content-coding",
        NetworkFailure::Header => "header",
        NetworkFailure::Invalid => "invalid",
        NetworkFailure::Other => "other",
    }
}

#[cfg(feature = "capabilities")]
/// The kind of a `wasi:http` error code, with the code itself as the detail.
fn code_kind(code: &ErrorCode) -> (NetworkFailure, String) {
    let detail = format!("{code:?}");
    let kind = match code {
        ErrorCode::HttpRequestDenied | ErrorCode::DestinationIpProhibited => NetworkFailure::Denied,
        ErrorCode::DnsTimeout | ErrorCode::DnsError(_) | ErrorCode::DestinationNotFound => {
            NetworkFailure::Dns
        }
        ErrorCode::ConnectionRefused | ErrorCode::DestinationUnavailable => NetworkFailure::Refused,
        ErrorCode::ConnectionTerminated | ErrorCode::HttpResponseIncomplete => {
            NetworkFailure::Reset
        }
        ErrorCode::ConnectionTimeout
        | ErrorCode::ConnectionReadTimeout
        | ErrorCode::ConnectionWriteTimeout
        | ErrorCode::HttpResponseTimeout => NetworkFailure::Timeout,
        ErrorCode::HttpResponseBodySize(_) => NetworkFailure::ResponseTooLarge,
        ErrorCode::HttpRequestBodySize(_) => NetworkFailure::RequestTooLarge,
        ErrorCode::TlsProtocolError
        | ErrorCode::TlsCertificateError
        | ErrorCode::TlsAlertReceived(_) => NetworkFailure::Tls,
        ErrorCode::HttpResponseContentCoding(_) => NetworkFailure::ContentCoding,
        _ => NetworkFailure::Other,
    };
    (kind, detail)
}

#[cfg(feature = "capabilities")]
/// Send a request. `body` is a `Uint8Array`, null for none, or `true` for a stream body that
/// fetch.js writes as it reads it (`request_body`). Returns `[0, id]` with the response to come
/// through `onReady` (`[0, id, bodyId]` for a stream body), or `[1, kind, detail]` when the host
/// refused it at once.
#[allow(clippy::too_many_arguments)]
pub fn http_send<'js>(
    cx: Ctx<'js>,
    method: String,
    scheme: String,
    authority: String,
    path: String,
    headers: Vec<List<(String, String)>>,
    body: Value<'js>,
) -> Result<Value<'js>> {
    let bytes = body_bytes(&body);
    let streamed = body.as_bool() == Some(true);
    let fields = with_length(
        header_bytes(headers),
        &method,
        bytes.as_ref().map(Vec::len),
        streamed,
    );
    let failed = |kind: NetworkFailure, detail: String| failure(&cx, kind, &detail);
    if headers_too_large(&fields) {
        return failed(NetworkFailure::Header, "HeaderError::SizeExceeded".into());
    }
    let headers = match Fields::from_list(&fields) {
        Ok(headers) => headers,
        Err(e) => return failed(NetworkFailure::Header, format!("{e:?}")),
    };
    let request = OutgoingRequest::new(headers);
    let method = match method.as_str() {
        "GET" => Method::Get,
        "HEAD" => Method::Head,
        "POST" => Method::Post,
        "PUT" => Method::Put,
        "DELETE" => Method::Delete,
        "OPTIONS" => Method::Options,
        "PATCH" => Method::Patch,
        other => Method::Other(other.to_owned()),
    };
    let scheme = match scheme.as_str() {
        "http" => Scheme::Http,
        "https" => Scheme::Https,
        other => Scheme::Other(other.to_owned()),
    };
    if request.set_method(&method).is_err()
        || request.set_scheme(Some(&scheme)).is_err()
        || request.set_authority(Some(&authority)).is_err()
        || request.set_path_with_query(Some(&path)).is_err()
    {
        return failed(
            NetworkFailure::Invalid,
            "the request's method or URL is not valid".into(),
        );
    }
    let outgoing = request.body().expect("a new request has a body");
    let future = match outgoing_handler::handle(request, None) {
        Ok(future) => future,
        Err(code) => {
            let (kind, detail) = code_kind(&code);
            return failed(kind, detail);
        }
    };
    let body_id = if streamed {
        let body_id = next_id();
        request_body::open(body_id, outgoing);
        Some(body_id)
    } else {
        write_body(outgoing, bytes.as_deref().unwrap_or(&[]));
        None
    };
    let id = add(Op::Response(future));
    let out = Array::new(cx)?;
    crate::globals::define_index(&out, 0, 0)?;
    crate::globals::define_index(&out, 1, id)?;
    if let Some(body_id) = body_id {
        crate::globals::define_index(&out, 2, body_id)?;
    }
    Ok(out.into_value())
}

/// What a request's headers may take in the host: wasi:http keeps them in a map of at most
/// 128 KiB, counting each field's name and value plus its own record of them (under 80 bytes),
/// and traps past that. Headers over this bound fail here first, as a `header` error the script
/// can catch.
const MAX_HEADER_BYTES: usize = 128 * 1024;
const HEADER_FIELD_COST: usize = 80;

fn headers_too_large(fields: &[(String, Vec<u8>)]) -> bool {
    fields
        .iter()
        .map(|(name, value)| name.len() + value.len() + HEADER_FIELD_COST)
        .sum::<usize>()
        > MAX_HEADER_BYTES
}

/// Header values are byte strings: each character up to U+00FF is one byte (Latin-1), as
/// `Headers` keeps them.
fn header_bytes(headers: Vec<List<(String, String)>>) -> Vec<(String, Vec<u8>)> {
    headers
        .into_iter()
        .map(|List((k, v))| (k, v.chars().map(|c| u32::from(c).min(0xFF) as u8).collect()))
        .collect()
}

/// The request's header fields with the `content-length` a browser sends: the length of a body
/// given as bytes (a string, buffer, view, `URLSearchParams` or `Blob`, which fetch.js turns
/// into bytes), and `0` for a POST or PUT without one; the script's own `content-length` is
/// dropped (a forbidden request header in browsers), so the length is always the body's. With
/// it, the host sends the body with that length rather than chunked, which servers that read
/// only `Content-Length` (Python's `http.server`) need. A `streamed` body (a `ReadableStream`,
/// written as it is read) has no length ahead, and goes out chunked.
fn with_length(
    mut fields: Vec<(String, Vec<u8>)>,
    method: &str,
    body: Option<usize>,
    streamed: bool,
) -> Vec<(String, Vec<u8>)> {
    fields.retain(|(name, _)| !name.eq_ignore_ascii_case("content-length"));
    let length = match body {
        Some(length) => Some(length),
        None if streamed => None,
        None if method == "POST" || method == "PUT" => Some(0),
        None => None,
    };
    if let Some(length) = length {
        fields.push(("content-length".into(), length.to_string().into_bytes()));
    }
    fields
}

/// A request body handed over by fetch.js: a `Uint8Array`, or null for none.
fn body_bytes(body: &Value<'_>) -> Option<Vec<u8>> {
    body.as_object()?;
    TypedArray::<u8>::from_value(body.clone())
        .ok()
        .and_then(|a| a.as_bytes().map(<[u8]>::to_vec))
}

/// `[1, kind, detail]`: a request that failed, for `fetch`'s error classes.
fn failure<'js>(cx: &Ctx<'js>, kind: NetworkFailure, detail: &str) -> Result<Value<'js>> {
    let out = Array::new(cx.clone())?;
    crate::globals::define_index(&out, 0, 1)?;
    crate::globals::define_index(&out, 1, kind_name(kind))?;
    crate::globals::define_index(&out, 2, detail)?;
    Ok(out.into_value())
}

/// Send a request, in the guest built without capabilities: the host checks it as `wasi:http`
/// would (headers, method, URL), and refuses and records what passes those checks at its gate
/// (the policy has no `[http]` table). A failed check is `[1, kind, detail]` at once, as in the
/// full guest; a refusal is `[0, id]`, settled through `onReady` like a refused response.
#[cfg(not(feature = "capabilities"))]
#[allow(clippy::too_many_arguments)]
pub fn http_send<'js>(
    cx: Ctx<'js>,
    method: String,
    scheme: String,
    authority: String,
    path: String,
    headers: Vec<List<(String, String)>>,
    body: Value<'js>,
) -> Result<Value<'js>> {
    let length = body_bytes(&body).map(|bytes| bytes.len());
    let streamed = body.as_bool() == Some(true);
    let fields = with_length(header_bytes(headers), &method, length, streamed);
    if headers_too_large(&fields) {
        return failure(&cx, NetworkFailure::Header, "HeaderError::SizeExceeded");
    }
    if let Some((kind, detail)) =
        capability::unsent_request(&method, &scheme, &authority, &path, &fields)
    {
        return failure(&cx, kind, &detail);
    }
    let out = Array::new(cx)?;
    crate::globals::define_index(&out, 0, 0)?;
    crate::globals::define_index(&out, 1, add(Op::Refused))?;
    Ok(out.into_value())
}

#[cfg(feature = "capabilities")]
/// Write a request body while the host sends it; a refusal shows up in the response.
fn write_body(body: OutgoingBody, bytes: &[u8]) {
    if let Ok(stream) = body.write() {
        for chunk in bytes.chunks(4096) {
            if stream.blocking_write_and_flush(chunk).is_err() {
                break;
            }
        }
        drop(stream);
    }
    let _ = OutgoingBody::finish(body, None);
}

#[cfg(feature = "capabilities")]
/// Start reading a response body to its end; it comes to `onReady` as `[0, Uint8Array]`.
fn start_body(response: IncomingResponse) -> Option<u32> {
    let body = response.consume().ok()?;
    let stream = body.stream().ok()?;
    Some(add(Op::Body(BodyRead {
        stream,
        _body: body,
        _response: response,
        data: Vec::new(),
    })))
}

#[cfg(feature = "capabilities")]
/// Read a ready response head: `[0, status, headers, bodyId]` or `[1, kind, detail]`.
fn response_value<'js>(
    cx: &Ctx<'js>,
    future: &FutureIncomingResponse,
) -> Result<Option<Value<'js>>> {
    let Some(result) = future.get() else {
        return Ok(None);
    };
    let out = Array::new(cx.clone())?;
    match result {
        Ok(Ok(response)) => {
            let status = response.status();
            let headers = Array::new(cx.clone())?;
            for (i, (name, value)) in response.headers().entries().into_iter().enumerate() {
                let pair = Array::new(cx.clone())?;
                crate::globals::define_index(&pair, 0, name)?;
                crate::globals::define_index(
                    &pair,
                    1,
                    value.iter().map(|&b| char::from(b)).collect::<String>(),
                )?;
                crate::globals::define_index(&headers, i as u32, pair)?;
            }
            let body = start_body(response);
            crate::globals::define_index(&out, 0, 0)?;
            crate::globals::define_index(&out, 1, status)?;
            crate::globals::define_index(&out, 2, headers)?;
            crate::globals::define_index(&out, 3, body)?;
        }
        Ok(Err(code)) => {
            let (kind, detail) = code_kind(&code);
            return failure(cx, kind, &detail).map(Some);
        }
        Err(()) => {
            return failure(cx, NetworkFailure::Other, "the response was already taken").map(Some);
        }
    }
    Ok(Some(out.into_value()))
}

#[cfg(feature = "capabilities")]
/// Drain what the body stream has; `Some` once it ended or failed.
fn body_step<'js>(cx: &Ctx<'js>, read: &mut BodyRead) -> Result<Option<Value<'js>>> {
    loop {
        match read.stream.read(64 << 10) {
            Ok(chunk) if chunk.is_empty() => return Ok(None),
            Ok(chunk) => read.data.extend_from_slice(&chunk),
            Err(StreamError::Closed) => {
                let out = Array::new(cx.clone())?;
                crate::globals::define_index(&out, 0, 0)?;
                let data = std::mem::take(&mut read.data);
                crate::globals::define_index(&out, 1, TypedArray::<u8>::new(cx.clone(), data)?)?;
                return Ok(Some(out.into_value()));
            }
            Err(StreamError::LastOperationFailed(error)) => {
                // `wasi:http` hands the host's body errors over as text only; the host names
                // their kind. One it did not make ends the body as a broken connection does.
                let (kind, detail) = match crate::wasi::http::types::http_error_code(&error) {
                    Some(code) => code_kind(&code),
                    None => (
                        capability::body_failure(&error).unwrap_or(NetworkFailure::Reset),
                        error.to_debug_string(),
                    ),
                };
                return failure(cx, kind, &detail).map(Some);
            }
        }
    }
}

/// A host denial as the JS object `PolicyDeniedError` is built from.
fn denial_object<'js>(cx: &Ctx<'js>, d: Denial) -> Result<Value<'js>> {
    let denial = Object::new(cx.clone())?;
    crate::globals::define_own(&denial, "capability", d.capability)?;
    crate::globals::define_own(&denial, "rule", d.rule)?;
    crate::globals::define_own(&denial, "reason", d.reason)?;
    crate::globals::define_own(&denial, "fix", d.fix)?;
    Ok(denial.into_value())
}

/// The host's latest refusal for `target` (a URL, `kv:BUCKET`, `fs`) as a denial object, or
/// `null`.
pub fn refusal<'js>(cx: Ctx<'js>, target: String) -> Result<Value<'js>> {
    match capability::refusal(&target) {
        Some(d) => denial_object(&cx, d),
        None => Ok(Value::new_null(cx)),
    }
}

/// The host's refusal of a use of `global` (`kv`, `fs`, `config`, `host`) that the call's
/// policy does not grant, as a denial object; `name` is what the script named (a bucket, a
/// path, a key, a capability).
pub fn ungranted<'js>(cx: Ctx<'js>, global: String, name: String) -> Result<Value<'js>> {
    denial_object(&cx, capability::ungranted(&global, &name))
}

#[cfg(feature = "capabilities")]
fn capability_value<'js>(cx: &Ctx<'js>, pending: &PendingCall) -> Result<Option<Value<'js>>> {
    let Some(result) = pending.get() else {
        return Ok(None);
    };
    let (status, text) = match result {
        Ok(text) => (0, text),
        Err(CallError::Denied(d)) => {
            let out = Array::new(cx.clone())?;
            crate::globals::define_index(&out, 0, 1)?;
            crate::globals::define_index(&out, 1, denial_object(cx, d)?)?;
            return Ok(Some(out.into_value()));
        }
        Err(CallError::Failed(failure)) => {
            // `[2, message, code, retryable]`, for the bridge's `CapabilityError`.
            let out = Array::new(cx.clone())?;
            crate::globals::define_index(&out, 0, 2)?;
            crate::globals::define_index(&out, 1, failure.message)?;
            crate::globals::define_index(&out, 2, failure.code)?;
            crate::globals::define_index(&out, 3, failure.retryable)?;
            return Ok(Some(out.into_value()));
        }
    };
    let out = Array::new(cx.clone())?;
    crate::globals::define_index(&out, 0, status)?;
    crate::globals::define_index(&out, 1, text)?;
    Ok(Some(out.into_value()))
}

/// Wait until an operation in flight (or the `timer`, when given) is ready, then settle every
/// ready operation through `onReady`. Returns whether the timer fired.
#[cfg_attr(not(feature = "capabilities"), allow(clippy::drop_non_drop))]
pub fn run_ready(cx: &Ctx<'_>, timer: Option<Pollable>) -> Result<bool> {
    let ids: Vec<u32> = OPS.with(|ops| ops.borrow().keys().copied().collect());
    let pollables: Vec<Option<Pollable>> = OPS.with(|ops| {
        let ops = ops.borrow();
        ids.iter().map(|id| ops[id].subscribe()).collect()
    });
    // Operations that can be settled now are, without waiting on the others or the timer.
    let ready: Vec<u32> = if pollables.iter().any(Option::is_none) {
        (0..pollables.len() as u32)
            .filter(|&i| pollables[i as usize].is_none())
            .collect()
    } else {
        let mut list: Vec<&Pollable> = pollables.iter().flatten().collect();
        if let Some(timer) = &timer {
            list.push(timer);
        }
        if list.is_empty() {
            return Ok(false);
        }
        poll(&list)
    };
    drop(pollables);
    let mut timer_fired = false;
    for index in ready {
        let index = index as usize;
        if index >= ids.len() {
            timer_fired = true;
            continue;
        }
        let id = ids[index];
        let Some(mut op) = OPS.with(|ops| ops.borrow_mut().remove(&id)) else {
            continue;
        };
        let Some(value) = op.settle(cx)? else {
            OPS.with(|ops| ops.borrow_mut().insert(id, op));
            continue;
        };
        drop(op);
        {
            let on_ready = ON_READY
                .with(|slot| slot.borrow().clone())
                .expect("the event loop was registered at init");
            on_ready.restore(cx)?.call::<_, ()>((id, value))?;
        }
    }
    Ok(timer_fired)
}

/// Drop a body that the script will never read (`response.body` unused), so that its stream
/// stops counting against the call.
pub fn cancel(id: u32) {
    OPS.with(|ops| ops.borrow_mut().remove(&id));
}
