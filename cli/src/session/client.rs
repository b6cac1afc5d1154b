//! One HTTP/1.1 exchange with a running `palisade serve`: a JSON request, its status and JSON
//! answer. Plain `http://` only (put a TLS terminator's plain side, or an SSH tunnel, in front
//! of a remote server); every exchange is bounded in time and in the size of its answer.

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::http::{HeaderMap, Method, StatusCode};
use hyper::{Request, Response};
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

    /// `host:port` of the server.
    pub fn authority(&self) -> &str {
        &self.authority
    }

    /// `method path` with `body` as JSON.
    pub async fn send(&self, method: Method, path: &str, text: String) -> Result<Answer, String> {
        let call = Call::new(method, path).body(text);
        let raw = self.exchange(&call).await?;
        let body = if raw.bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&raw.bytes)
                .map_err(|e| format!("the server's answer ({}) is not JSON: {e}", raw.status))?
        };
        Ok(Answer {
            status: raw.status,
            body,
        })
    }

    /// `call`, its answer read whole (at most [`MAX_ANSWER_BYTES`]) within
    /// [`EXCHANGE_TIMEOUT`], whatever its body is.
    pub async fn exchange(&self, call: &Call) -> Result<RawAnswer, String> {
        tokio::time::timeout(EXCHANGE_TIMEOUT, async {
            let open = self.open(call).await?;
            let status = open.response.status();
            let headers = open.response.headers().clone();
            let bytes = Limited::new(open.response.into_body(), MAX_ANSWER_BYTES)
                .collect()
                .await
                .map_err(|e| format!("reading the answer: {e}"))?
                .to_bytes();
            Ok(RawAnswer {
                status,
                headers,
                bytes,
            })
        })
        .await
        .map_err(|_| format!("no answer within {} s", EXCHANGE_TIMEOUT.as_secs()))?
    }

    /// Send `call` and return as soon as the answer's head arrives: its body is read as the
    /// caller pleases (a stream of events), and the connection closes when [`Open`] is dropped.
    pub async fn open(&self, call: &Call) -> Result<Open, String> {
        let reach = |e: &dyn std::fmt::Display| format!("cannot reach {}: {e}", self.authority);
        let stream = tokio::net::TcpStream::connect(&self.authority)
            .await
            .map_err(|e| reach(&e))?;
        let io = hyper_util::rt::TokioIo::new(stream);
        let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
            .await
            .map_err(|e| reach(&e))?;
        let driver = Driver(tokio::spawn(connection));
        let mut request = Request::builder()
            .method(call.method.clone())
            .uri(format!("{}{}", self.base, call.path))
            .header("host", &self.authority)
            .header("content-type", "application/json");
        if let Some(key) = call.key.as_ref().or(self.key.as_ref()) {
            request = request.header("authorization", format!("Bearer {key}"));
        }
        for (name, value) in &call.headers {
            request = request.header(*name, value);
        }
        let request = request
            .body(Full::new(call.body.clone()))
            .map_err(|e| e.to_string())?;
        let response = sender.send_request(request).await.map_err(|e| reach(&e))?;
        Ok(Open {
            response,
            _driver: driver,
        })
    }
}

/// One request: its method, path, headers and body (any bytes).
#[derive(Clone)]
pub struct Call {
    pub method: Method,
    pub path: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Bytes,
    /// The API key for this request alone, instead of the server's.
    pub key: Option<String>,
}

impl Call {
    pub fn new(method: Method, path: &str) -> Call {
        Call {
            method,
            path: path.to_owned(),
            headers: Vec::new(),
            body: Bytes::new(),
            key: None,
        }
    }

    /// With `body` as it is.
    pub fn body(mut self, body: impl Into<Bytes>) -> Call {
        self.body = body.into();
        self
    }

    /// With the header `name: value`.
    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Call {
        self.headers.push((name, value.into()));
        self
    }

    /// With the API key `key`.
    pub fn key(mut self, key: &str) -> Call {
        self.key = Some(key.to_owned());
        self
    }
}

/// An answer read whole: status, headers and body bytes.
pub struct RawAnswer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub bytes: Bytes,
}

/// An answer whose body is still to be read; dropping it closes the connection.
pub struct Open {
    pub response: Response<Incoming>,
    _driver: Driver,
}

/// The task that drives one connection, ended when its answer is dropped.
struct Driver(tokio::task::JoinHandle<Result<(), hyper::Error>>);

impl Drop for Driver {
    fn drop(&mut self) {
        self.0.abort();
    }
}
