//! Capabilities forwarded to a local URL (`capabilities.allow.NAME.forward`): for the CLI and
//! servers, where no Rust handler is registered. The host POSTs the JSON payload and the JSON
//! response body is the result; a non-2xx status or a body that is not JSON is a
//! `CapabilityError`. The URL comes from the operator's policy, never from the script, so it is
//! not subject to the `[http]` gate.

use super::capability::{CapabilityFuture, Handler};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use std::sync::Arc;
use std::time::Duration;

/// The largest response a forwarded capability may return.
const MAX_RESPONSE: usize = 16 << 20;

/// How long a forwarded call may take; the call's own deadline applies as well.
const TIMEOUT: Duration = Duration::from_secs(60);

pub(crate) fn handler(url: String) -> Handler {
    Arc::new(move |payload| -> CapabilityFuture {
        let url = url.clone();
        Box::pin(async move {
            tokio::time::timeout(TIMEOUT, post(&url, payload))
                .await
                .unwrap_or_else(|_| Err(format!("{url} did not answer within {TIMEOUT:?}")))
        })
    })
}

async fn post(url: &str, payload: serde_json::Value) -> Result<serde_json::Value, String> {
    let uri: http::Uri = url.parse().map_err(|e| format!("{url}: {e}"))?;
    let authority = uri
        .authority()
        .ok_or_else(|| format!("{url} has no host"))?
        .clone();
    let port = authority.port_u16().unwrap_or(80);
    let stream = tokio::net::TcpStream::connect((authority.host(), port))
        .await
        .map_err(|e| format!("cannot reach {url}: {e}"))?;
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(wasmtime_wasi_http::io::TokioIo::new(stream))
            .await
            .map_err(|e| format!("{url}: {e}"))?;
    let driver = tokio::spawn(conn);
    let body = serde_json::to_vec(&payload).map_err(|e| e.to_string())?;
    let request = http::Request::post(uri.path_and_query().map_or("/", |p| p.as_str()))
        .header(http::header::HOST, authority.as_str())
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    let status = response.status();
    let bytes = Limited::new(response.into_body(), MAX_RESPONSE)
        .collect()
        .await
        .map_err(|e| format!("{url}: {e}"))?
        .to_bytes();
    driver.abort();
    if !status.is_success() {
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(512)]).into_owned();
        return Err(format!("{url} answered {status}: {text}"));
    }
    serde_json::from_slice(&bytes)
        .map_err(|e| format!("{url} answered with a body that is not JSON: {e}"))
}
