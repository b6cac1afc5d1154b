//! One HTTP/1.1 exchange with a running `palisade serve`: a JSON request, its status and JSON
//! answer. Plain `http://` only (put a TLS terminator's plain side, or an SSH tunnel, in front
//! of a remote server); every exchange is bounded in time and in the size of its answer.

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::Request;
use hyper::http::{Method, StatusCode};
use serde_json::Value;
use std::time::Duration;

/// Longest wait for the whole exchange: the server's own deadlines end a run well before.
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(600);

/// Largest answer read: a `read` of a 16 MiB file, with its base64.
const MAX_ANSWER_BYTES: usize = 48 << 20;

/// Where the server is and who calls it.
pub struct Server {
    /// `host:port`, from an `http://` URL.
    authority: String,
    /// The path prefix of the URL, without a trailing `/`.
    base: String,
    key: Option<String>,
}

/// The server's answer: its status and its JSON body (`null` when empty).
pub struct Answer {
    pub status: StatusCode,
    pub body: Value,
}

impl Server {
    /// The server at `url` (`http://HOST:PORT[/PREFIX]`), with the API key `key`.
    pub fn new(url: &str, key: Option<String>) -> Result<Server, String> {
        let rest = url.strip_prefix("http://").ok_or_else(|| {
            format!(
                "`{url}`: the server's URL starts with http:// (for a server behind TLS, \
                 reach its plain side through a tunnel)"
            )
        })?;
        let (authority, base) = rest.split_once('/').unwrap_or((rest, ""));
        if authority.is_empty() {
            return Err(format!("`{url}` names no host"));
        }
        let authority = if authority.contains(':') {
            authority.to_owned()
        } else {
            format!("{authority}:80")
        };
        let base = base.trim_end_matches('/');
        let base = if base.is_empty() {
            String::new()
        } else {
            format!("/{base}")
        };
        Ok(Server {
            authority,
            base,
            key,
        })
    }

    /// `method path` with `body` as JSON.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Answer, String> {
        tokio::time::timeout(EXCHANGE_TIMEOUT, self.exchange(method, path, body))
            .await
            .map_err(|_| format!("no answer within {} s", EXCHANGE_TIMEOUT.as_secs()))?
    }

    async fn exchange(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Answer, String> {
        let reach = |e: &dyn std::fmt::Display| format!("cannot reach {}: {e}", self.authority);
        let stream = tokio::net::TcpStream::connect(&self.authority)
            .await
            .map_err(|e| reach(&e))?;
        let io = hyper_util::rt::TokioIo::new(stream);
        let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
            .await
            .map_err(|e| reach(&e))?;
        let driver = tokio::spawn(connection);
        let text = body.map(Value::to_string).unwrap_or_default();
        let mut request = Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base))
            .header("host", &self.authority)
            .header("content-type", "application/json");
        if let Some(key) = &self.key {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        let request = request
            .body(Full::new(Bytes::from(text)))
            .map_err(|e| e.to_string())?;
        let response = sender.send_request(request).await.map_err(|e| reach(&e))?;
        let status = response.status();
        let bytes = Limited::new(response.into_body(), MAX_ANSWER_BYTES)
            .collect()
            .await
            .map_err(|e| format!("reading the answer: {e}"))?
            .to_bytes();
        driver.abort();
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes)
                .map_err(|e| format!("the server's answer ({status}) is not JSON: {e}"))?
        };
        Ok(Answer { status, body })
    }
}
