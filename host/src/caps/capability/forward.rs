//! Capabilities forwarded to a local URL (`capabilities.allow.NAME.forward`): for the CLI and
//! servers, where no Rust handler is registered. The host POSTs the JSON payload and the JSON
//! response body is the result; a non-2xx status or a body that is not JSON is a
//! `CapabilityError`: the one the body names (`{"code", "message", "retryable"}`, or that object
//! under `"error"`), else `forward_failed`. The URL comes from the operator's policy, never from the script, so it is
//! not subject to the `[http]` gate.
//!
//! A response is held by the host until the guest takes it, so its size is bounded as it
//! streams in, before it is kept: by the rule's `max_response`, and, for all the forwarded
//! responses the host holds for one call at once, by the call's `limits.memory` (the guest has
//! to hold what it reads). The body is checked to be JSON without building a tree of it, and handed to the
//! guest as the text it arrived as.

use super::CapabilityError;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How long a forwarded call may take; the call's own deadline applies as well.
const TIMEOUT: Duration = Duration::from_secs(60);

/// Bytes of forwarded responses the host may still hold for one call: it starts at the call's
/// `limits.memory`; every byte received is taken from it, and given back once the guest has
/// taken the response (or dropped the call) or the response was refused.
#[derive(Clone)]
pub(crate) struct ResponseBudget(Arc<AtomicU64>);

impl ResponseBudget {
    pub fn new(bytes: u64) -> Self {
        Self(Arc::new(AtomicU64::new(bytes)))
    }

    /// Take `n` bytes, or `false` when fewer are left.
    fn take(&self, n: u64) -> bool {
        self.0
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
                left.checked_sub(n)
            })
            .is_ok()
    }

    /// Give back bytes that were received but are no longer held.
    pub fn give_back(&self, n: u64) {
        self.0.fetch_add(n, Ordering::SeqCst);
    }
}

/// Why a forwarded call has no result.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The response passed the rule's `max_response`: at least `size` bytes.
    TooLarge { size: u64 },
    /// The call's forwarded responses together passed its `limits.memory`.
    OverBudget,
    /// Anything else: unreachable, a non-2xx status, not JSON. The script's `CapabilityError`.
    Failed(CapabilityError),
}

/// POST `payload` to `url` and return the response body (JSON text), at most `max_response`
/// bytes of it and no more than `budget` has left.
pub(crate) async fn call(
    url: &str,
    payload: serde_json::Value,
    max_response: u64,
    budget: &ResponseBudget,
    context: &crate::CallContext,
) -> Result<String, Failure> {
    tokio::time::timeout(TIMEOUT, post(url, payload, max_response, budget, context))
        .await
        .unwrap_or_else(|_| {
            Err(Failure::Failed(
                CapabilityError::new(
                    FORWARD_FAILED,
                    format!("{url} did not answer within {TIMEOUT:?}"),
                )
                .retryable(),
            ))
        })
}

async fn post(
    url: &str,
    payload: serde_json::Value,
    max_response: u64,
    budget: &ResponseBudget,
    context: &crate::CallContext,
) -> Result<String, Failure> {
    let failed = |message: String| Failure::Failed(CapabilityError::new(FORWARD_FAILED, message));
    let unreachable = |message: String| {
        Failure::Failed(CapabilityError::new(FORWARD_FAILED, message).retryable())
    };
    let uri: http::Uri = url.parse().map_err(|e| failed(format!("{url}: {e}")))?;
    let authority = uri
        .authority()
        .ok_or_else(|| failed(format!("{url} has no host")))?
        .clone();
    let port = authority.port_u16().unwrap_or(80);
    let stream = tokio::net::TcpStream::connect((authority.host(), port))
        .await
        .map_err(|e| unreachable(format!("cannot reach {url}: {e}")))?;
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(wasmtime_wasi_http::io::TokioIo::new(stream))
            .await
            .map_err(|e| unreachable(format!("{url}: {e}")))?;
    let driver = tokio::spawn(conn);
    let result = async {
        let body = serde_json::to_vec(&payload).map_err(|e| failed(e.to_string()))?;
        drop(payload);
        let mut request = http::Request::post(uri.path_and_query().map_or("/", |p| p.as_str()))
            .header(http::header::HOST, authority.as_str())
            .header(http::header::CONTENT_TYPE, "application/json")
            .header("palisade-call-id", context.call_id.as_str())
            .header("palisade-capability", context.capability.as_str())
            .header("palisade-policy", context.policy.as_str())
            .header("palisade-policy-sha256", context.policy_sha256.as_str());
        if context.argument_list {
            request = request.header("palisade-arguments", "list");
        }
        // The embedder's metadata as compact JSON (left out if it cannot be a header value).
        if let Some(metadata) = &context.metadata
            && let Ok(text) = serde_json::to_string(metadata)
            && let Ok(value) = http::HeaderValue::from_bytes(text.as_bytes())
        {
            request = request.header("palisade-metadata", value);
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| failed(e.to_string()))?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| unreachable(format!("{url}: {e}")))?;
        let status = response.status();
        // A declared length past the cap is refused before a byte of the body is read.
        let declared = response
            .headers()
            .get(http::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        if let Some(size) = declared.filter(|&size| size > max_response) {
            return Err(Failure::TooLarge { size });
        }
        let bytes = read_capped(response.into_body(), url, max_response, budget).await?;
        let held = bytes.len() as u64;
        let checked = check_body(url, status, bytes);
        if checked.is_err() {
            budget.give_back(held);
        }
        checked
    }
    .await;
    driver.abort();
    result
}

/// Read a body frame by frame, refusing it as soon as it passes `max_response` or the call's
/// budget; the bytes taken from the budget are given back when it is refused. The frames are
/// joined once, at their exact size, so that a growing buffer never holds twice the body.
async fn read_capped(
    mut body: hyper::body::Incoming,
    url: &str,
    max_response: u64,
    budget: &ResponseBudget,
) -> Result<Vec<u8>, Failure> {
    let mut frames: Vec<Bytes> = Vec::new();
    let mut size = 0u64;
    let refuse = |failure: Failure, taken: u64| {
        budget.give_back(taken);
        Err(failure)
    };
    while let Some(frame) = body.frame().await {
        let frame = match frame {
            Ok(frame) => frame,
            Err(e) => {
                let error = CapabilityError::new(FORWARD_FAILED, format!("{url}: {e}"));
                return refuse(Failure::Failed(error.retryable()), size);
            }
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let n = data.len() as u64;
        if size + n > max_response {
            return refuse(Failure::TooLarge { size: size + n }, size);
        }
        if !budget.take(n) {
            return refuse(Failure::OverBudget, size);
        }
        size += n;
        frames.push(data);
    }
    let mut bytes = Vec::with_capacity(size as usize);
    for frame in frames {
        bytes.extend_from_slice(&frame);
    }
    Ok(bytes)
}

/// The code of a forwarded call's failure that its URL did not name.
const FORWARD_FAILED: &str = "forward_failed";

/// The result text of a complete body: a 2xx status and JSON.
fn check_body(url: &str, status: http::StatusCode, bytes: Vec<u8>) -> Result<String, Failure> {
    if !status.is_success() {
        return Err(Failure::Failed(status_error(url, status, &bytes)));
    }
    let not_json = |e: &dyn std::fmt::Display| {
        Failure::Failed(CapabilityError::new(
            FORWARD_FAILED,
            format!("{url} answered with a body that is not JSON: {e}"),
        ))
    };
    let text = String::from_utf8(bytes).map_err(|e| not_json(&e))?;
    // Checked without building it: a tree of small values takes many times the text's size.
    serde_json::from_str::<serde::de::IgnoredAny>(&text).map_err(|e| not_json(&e))?;
    Ok(text)
}

/// The error a non-2xx answer reports: the one its body names as
/// `{"code", "message", "retryable"}` (or under `"error"`, as `palisade serve` answers), else
/// `forward_failed` with the start of the body, retryable for 429, 502, 503 and 504.
fn status_error(url: &str, status: http::StatusCode, bytes: &[u8]) -> CapabilityError {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Body {
        Nested { error: CapabilityError },
        Flat(CapabilityError),
    }
    match serde_json::from_slice::<Body>(bytes) {
        Ok(Body::Nested { error } | Body::Flat(error)) => error,
        Err(_) => {
            let text = String::from_utf8_lossy(&bytes[..bytes.len().min(512)]).into_owned();
            let error =
                CapabilityError::new(FORWARD_FAILED, format!("{url} answered {status}: {text}"));
            match status.as_u16() {
                429 | 502 | 503 | 504 => error.retryable(),
                _ => error,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_non_2xx_answer_reports_the_error_its_body_names() {
        let url = "http://127.0.0.1:1/x";
        let flat = br#"{"code":"not_found","message":"no such actor","retryable":false}"#;
        let error = status_error(url, http::StatusCode::NOT_FOUND, flat);
        assert_eq!(error, CapabilityError::new("not_found", "no such actor"));
        let nested = br#"{"error":{"code":"busy","message":"later","retryable":true}}"#;
        let error = status_error(url, http::StatusCode::CONFLICT, nested);
        assert_eq!(error, CapabilityError::new("busy", "later").retryable());
        let error = status_error(url, http::StatusCode::SERVICE_UNAVAILABLE, b"down");
        assert_eq!(
            (error.code.as_str(), error.retryable),
            (FORWARD_FAILED, true)
        );
        let error = status_error(url, http::StatusCode::BAD_REQUEST, b"{}");
        assert_eq!(
            (error.code.as_str(), error.retryable),
            (FORWARD_FAILED, false)
        );
    }
}
