//! `wasi:http/incoming-handler`: a request handed to the built script's `fetch(request)` (a
//! module built with `palisade build --http`, whose main module is the host's adapter around
//! the script: it makes the `Request`, calls `fetch`, and hands the `Response` back through
//! the natives here). The request body is read whole (up to `limits.input`); the response body
//! is written out in 4 KiB writes as the client takes it.

use super::cli::{call, fail};
use super::settings;
use super::stdio::{read_to_end, write_all};
use crate::Component;
use crate::exports::wasi::http::incoming_handler::Guest as Handler;
use crate::wasi::http::types::{
    Fields, IncomingBody, IncomingRequest, Method, OutgoingBody, OutgoingResponse,
    ResponseOutparam, Scheme,
};
use javy::quickjs::convert::List;
use javy::quickjs::prelude::Func;
use javy::quickjs::{Ctx, Object, Result as JsResult, TypedArray, Value};
use std::cell::RefCell;

/// A response: status, headers, body.
type Reply = (u16, Vec<(String, Vec<u8>)>, Vec<u8>);

thread_local! {
    /// The body of the request being handled.
    static BODY: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// The response the adapter handed back.
    static REPLY: RefCell<Option<Reply>> = const { RefCell::new(None) };
}

/// The adapter's natives, as the global `__palisadeHttp`, which the adapter takes and deletes
/// at its top level. Runs once, before the snapshot.
pub fn register(cx: &Ctx<'_>) -> JsResult<()> {
    let natives = Object::new(cx.clone())?;
    natives.set("body", Func::from(body))?;
    natives.set("respond", Func::from(respond))?;
    cx.globals().set("__palisadeHttp", natives)
}

/// The request's body, once.
fn body(cx: Ctx<'_>) -> JsResult<Value<'_>> {
    let bytes = BODY.with(|b| std::mem::take(&mut *b.borrow_mut()));
    Ok(TypedArray::<u8>::new(cx, bytes)?.into_value())
}

/// Keep the response: its status, its headers as `[name, value]` pairs, its body's bytes.
fn respond<'js>(
    status: u16,
    headers: Vec<List<(String, String)>>,
    body: TypedArray<'js, u8>,
) -> JsResult<()> {
    let headers = headers
        .into_iter()
        .map(|List((k, v))| (k, v.chars().map(|c| u32::from(c).min(0xFF) as u8).collect()))
        .collect();
    let body = body.as_bytes().map(<[u8]>::to_vec).unwrap_or_default();
    REPLY.with(|r| *r.borrow_mut() = Some((status, headers, body)));
    Ok(())
}

impl Handler for Component {
    fn handle(request: IncomingRequest, out: ResponseOutparam) {
        match handle(request) {
            Ok(reply) => send(out, reply),
            Err((code, message)) => {
                fail(code, &message);
                let body = serde_json::json!({ "error": { "code": code, "message": message } });
                let headers = vec![("content-type".to_owned(), b"application/json".to_vec())];
                let status = if code == "invalid_input" { 400 } else { 500 };
                send(out, (status, headers, body.to_string().into_bytes()));
            }
        }
    }
}

fn handle(request: IncomingRequest) -> Result<Reply, (&'static str, String)> {
    let Some(built) = settings::built() else {
        return Err((
            "missing_export",
            "this component holds no script; make one with `palisade build --http app.js`"
                .to_owned(),
        ));
    };
    let method = match request.method() {
        Method::Get => "GET".to_owned(),
        Method::Head => "HEAD".to_owned(),
        Method::Post => "POST".to_owned(),
        Method::Put => "PUT".to_owned(),
        Method::Delete => "DELETE".to_owned(),
        Method::Connect => "CONNECT".to_owned(),
        Method::Options => "OPTIONS".to_owned(),
        Method::Trace => "TRACE".to_owned(),
        Method::Patch => "PATCH".to_owned(),
        Method::Other(other) => other,
    };
    let scheme = match request.scheme() {
        Some(Scheme::Https) => "https".to_owned(),
        Some(Scheme::Other(other)) => other,
        _ => "http".to_owned(),
    };
    let authority = request
        .authority()
        .unwrap_or_else(|| "localhost".to_owned());
    let path = request.path_with_query().unwrap_or_else(|| "/".to_owned());
    let headers: Vec<(String, String)> = request
        .headers()
        .entries()
        .into_iter()
        .map(|(k, v)| (k, v.iter().map(|&b| char::from(b)).collect()))
        .collect();
    let limit = built.settings.input_limit;
    let bytes = match request.consume() {
        Ok(body) => {
            let read = match body.stream() {
                Ok(stream) => read_to_end(&stream, limit),
                Err(()) => Ok(Vec::new()),
            };
            IncomingBody::finish(body);
            read.map_err(|()| {
                (
                    "invalid_input",
                    format!("the request body is over limits.input ({limit} bytes)"),
                )
            })?
        }
        Err(()) => Vec::new(),
    };
    BODY.with(|b| *b.borrow_mut() = bytes);
    REPLY.with(|r| r.borrow_mut().take());
    let meta = serde_json::json!({
        "method": method,
        "url": format!("{scheme}://{authority}{path}"),
        "headers": headers,
    });
    call(&built, &meta.to_string())?;
    REPLY.with(|r| r.borrow_mut().take()).ok_or((
        "bad_output",
        "the handler returned no Response (build the script with `palisade build --http`)"
            .to_owned(),
    ))
}

/// Send the response: its headers (any the host refuses are left out), then its body.
fn send(out: ResponseOutparam, (status, headers, body): Reply) {
    let fields = Fields::new();
    for (name, value) in &headers {
        let _ = fields.append(name, value);
    }
    let response = OutgoingResponse::new(fields);
    let _ = response.set_status_code(status);
    let Ok(outgoing) = response.body() else {
        return;
    };
    ResponseOutparam::set(out, Ok(response));
    if let Ok(stream) = outgoing.write() {
        write_all(&stream, &body);
    }
    let _ = OutgoingBody::finish(outgoing, None);
}
