//! A real HTTP server on 127.0.0.1 for network tests: it counts connections and records
//! requests, serves a few fixed routes, and stops when dropped.

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use std::convert::Infallible;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;

/// What the server saw of one request.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub authorization: Option<String>,
    /// The `palisade-*` headers of the request, by name.
    pub palisade: Vec<(String, String)>,
}

#[derive(Default)]
struct State {
    connections: AtomicUsize,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    seen: Mutex<Vec<Seen>>,
}

type Out = BoxBody<Bytes, std::io::Error>;

fn full(bytes: impl Into<Bytes>) -> Out {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed()
}

/// A body that sends a few bytes, then fails: the server drops the connection mid-response.
struct Broken(bool);

impl hyper::body::Body for Broken {
    type Data = Bytes;
    type Error = std::io::Error;
    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, std::io::Error>>> {
        if self.0 {
            return std::task::Poll::Ready(Some(Err(std::io::Error::other("reset"))));
        }
        self.0 = true;
        std::task::Poll::Ready(Some(Ok(hyper::body::Frame::data(Bytes::from_static(
            b"partial",
        )))))
    }
}

/// A running server; dropping it stops it and its connections.
pub struct Upstream {
    pub addr: SocketAddr,
    state: Arc<State>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The gzip of 64 MiB of zeros: about 64 KiB on the wire.
fn gzip_bomb() -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..64 {
        encoder.write_all(&zeros).unwrap();
    }
    encoder.finish().unwrap()
}

fn gzip(text: &str) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(text.as_bytes()).unwrap();
    encoder.finish().unwrap()
}

fn query<'a>(req: &'a Request<Incoming>, key: &str) -> Option<&'a str> {
    req.uri().query()?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == key).then_some(v)
    })
}

async fn serve(req: Request<Incoming>, state: Arc<State>) -> Response<Out> {
    let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    state.max_in_flight.fetch_max(now, Ordering::SeqCst);
    let response = route(req, &state).await;
    state.in_flight.fetch_sub(1, Ordering::SeqCst);
    response
}

async fn route(req: Request<Incoming>, state: &State) -> Response<Out> {
    let path = req.uri().path().to_owned();
    let method = req.method().to_string();
    let authorization = req
        .headers()
        .get("authorization")
        .map(|v| v.to_str().unwrap_or("").to_owned());
    let palisade = req
        .headers()
        .iter()
        .filter(|(name, _)| name.as_str().starts_with("palisade-"))
        .map(|(name, value)| {
            let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
            (name.as_str().to_owned(), value)
        })
        .collect();
    let ms: u64 = query(&req, "ms").and_then(|v| v.parse().ok()).unwrap_or(0);
    let bytes: usize = query(&req, "bytes")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let to = query(&req, "to").map(|v| {
        v.replace("%3A", ":")
            .replace("%2F", "/")
            .replace("%40", "@")
    });
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    state.seen.lock().unwrap().push(Seen {
        path: path.clone(),
        authorization: authorization.clone(),
        palisade,
    });
    let json = |status: StatusCode, text: String| {
        Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(full(text))
            .unwrap()
    };
    match path.as_str() {
        "/api/hello" => json(StatusCode::OK, r#"{"hello":"world"}"#.into()),
        "/api/slow" => {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            json(StatusCode::OK, format!(r#"{{"slept":{ms}}}"#))
        }
        "/api/echo" => {
            let mut response = json(
                StatusCode::OK,
                serde_json::json!({
                    "method": method,
                    "length": body.len(),
                    "body": String::from_utf8_lossy(&body),
                })
                .to_string(),
            );
            if let Some(auth) = authorization {
                response
                    .headers_mut()
                    .insert("x-echo-authorization", auth.parse().unwrap());
            }
            response
        }
        "/api/echo-auth" => json(
            StatusCode::OK,
            serde_json::json!({ "authorization": authorization }).to_string(),
        ),
        "/api/redirect" => Response::builder()
            .status(StatusCode::FOUND)
            .header("location", to.unwrap_or_else(|| "/api/hello".into()))
            .body(full(Bytes::new()))
            .unwrap(),
        "/api/big" => Response::builder().body(full(vec![b'x'; bytes])).unwrap(),
        "/api/gzip" => Response::builder()
            .header("content-encoding", "gzip")
            .header("content-type", "application/json")
            .body(full(gzip(r#"{"compressed":true}"#)))
            .unwrap(),
        "/api/gzip-bomb" => Response::builder()
            .header("content-encoding", "gzip")
            .body(full(gzip_bomb()))
            .unwrap(),
        "/api/reset" => Response::builder()
            .header("content-length", "1000")
            .body(Broken(false).boxed())
            .unwrap(),
        "/api/hang" => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            json(StatusCode::OK, "{}".into())
        }
        _ => json(StatusCode::NOT_FOUND, r#"{"error":"not found"}"#.into()),
    }
}

impl Upstream {
    /// Start a server on an ephemeral port of 127.0.0.1.
    pub async fn start() -> Upstream {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(State::default());
        let shared = state.clone();
        let task = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            // Bounded: no test makes more than a few hundred connections.
            for _ in 0..1000 {
                let Ok((stream, _)) = listener.accept().await else {
                    break;
                };
                shared.connections.fetch_add(1, Ordering::SeqCst);
                let state = shared.clone();
                connections.spawn(async move {
                    let service = service_fn(move |req| {
                        let state = state.clone();
                        async move { Ok::<_, Infallible>(serve(req, state).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Upstream { addr, state, task }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> usize {
        self.state.connections.load(Ordering::SeqCst)
    }

    /// The most requests the server was handling at the same moment.
    pub fn max_in_flight(&self) -> usize {
        self.state.max_in_flight.load(Ordering::SeqCst)
    }

    /// Requests served so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.seen.lock().unwrap().clone()
    }
}
