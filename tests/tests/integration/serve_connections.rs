//! The server's connections (38.4, 38.8): a request head must arrive within the header
//! timeout, and a keep-alive connection idle that long is closed; past `max_connections` a new
//! connection is closed at once; a request without a valid key is refused before its body is
//! read; a body slower than the body timeout is refused. Each then serves a normal request.

use crate::serve::{config, keys_file};
use palisade::serve::{AppState, Config, listener, router};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Generous bounds for a loaded machine: what the server must do well within these, it does
/// in the timeouts the tests set (300 ms).
const WITHIN: Duration = Duration::from_secs(10);

struct Running {
    addr: SocketAddr,
    state: Arc<AppState>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn start(config: Config, limits: listener::Connections) -> Running {
    let state = AppState::open(config).expect("the server starts");
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = tcp.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel();
    let app = router(state.clone());
    let metrics = state.metrics.clone();
    tokio::spawn(listener::serve(tcp, app, limits, metrics, async {
        let _ = stopped.await;
    }));
    Running {
        addr,
        state,
        stop: Some(stop),
    }
}

/// Read until the server closes the connection (or `WITHIN` passes): what it sent.
fn read_to_close(stream: &mut TcpStream) -> Option<String> {
    stream.set_read_timeout(Some(WITHIN)).unwrap();
    let mut text = Vec::new();
    match stream.read_to_end(&mut text) {
        Ok(_) => Some(String::from_utf8_lossy(&text).into_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
            Some(String::from_utf8_lossy(&text).into_owned())
        }
        Err(_) => None,
    }
}

fn healthz(addr: SocketAddr) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(
        stream,
        "GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    read_to_close(&mut stream).expect("an answer")
}

fn limits(max: usize) -> listener::Connections {
    listener::Connections {
        max,
        header_timeout: Duration::from_millis(300),
    }
}

/// A head that never ends, and a keep-alive connection left idle, are both closed after the
/// header timeout; the server answers a normal request after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_connections_slow_heads_and_idle_keep_alive_are_closed() {
    let running = start(config("conn-slow-head", false), limits(8)).await;
    let addr = running.addr;
    tokio::task::spawn_blocking(move || {
        let mut slow = TcpStream::connect(addr).unwrap();
        write!(slow, "GET /healthz HTTP/1.1\r\nhost: x\r\n").unwrap();
        let started = Instant::now();
        let sent = read_to_close(&mut slow).expect("closed by the server");
        assert!(started.elapsed() < WITHIN);
        assert!(!sent.contains("200 OK"), "{sent}");
        let mut idle = TcpStream::connect(addr).unwrap();
        write!(idle, "GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
        let answered = read_to_close(&mut idle).expect("closed after its idle time");
        assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
        assert!(healthz(addr).starts_with("HTTP/1.1 200"));
    })
    .await
    .unwrap();
}

/// With `max` connections held, one more is closed at once and counted; once they go, the
/// server answers again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_connections_past_the_cap_are_closed_at_once() {
    let limits = listener::Connections {
        max: 2,
        header_timeout: Duration::from_secs(60),
    };
    let running = start(config("conn-cap", false), limits).await;
    let addr = running.addr;
    let metrics = running.state.metrics.clone();
    tokio::task::spawn_blocking(move || {
        let held: Vec<TcpStream> = (0..2).map(|_| TcpStream::connect(addr).unwrap()).collect();
        let deadline = Instant::now() + WITHIN;
        while metrics.connections.get() < 2 {
            assert!(
                Instant::now() < deadline,
                "the two connections were not taken"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let mut third = TcpStream::connect(addr).unwrap();
        let _ = write!(third, "GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n");
        let sent = read_to_close(&mut third).expect("closed at once");
        assert!(sent.is_empty(), "{sent}");
        assert_eq!(metrics.connections_refused.get(), 1);
        drop(held);
        while metrics.connections.get() > 0 {
            assert!(Instant::now() < deadline, "the connections were not let go");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(healthz(addr).starts_with("HTTP/1.1 200"));
    })
    .await
    .unwrap();
}

/// Without a valid key a request is refused 401 from its head, its 30 MB body never read;
/// with one, a body that stops arriving is refused after the body timeout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_connections_bodies_wait_for_the_key_and_the_clock() {
    let mut config = config("conn-body", false);
    let base = config
        .policies
        .as_ref()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    config.keys = Some(keys_file(&base));
    config.body_timeout = Duration::from_millis(300);
    let running = start(config, limits(8)).await;
    let addr = running.addr;
    tokio::task::spawn_blocking(move || {
        let mut keyless = TcpStream::connect(addr).unwrap();
        write!(
            keyless,
            "POST /v1/run HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
             content-length: 30000000\r\n\r\n{{"
        )
        .unwrap();
        let refused = read_to_close(&mut keyless).expect("answered without the body");
        assert!(refused.starts_with("HTTP/1.1 401"), "{refused}");
        assert!(refused.contains("\"unauthorized\""), "{refused}");
        let mut slow = TcpStream::connect(addr).unwrap();
        write!(
            slow,
            "POST /v1/run HTTP/1.1\r\nhost: x\r\nauthorization: Bearer acme-key\r\n\
             content-type: application/json\r\ncontent-length: 100\r\n\r\n{{\"po"
        )
        .unwrap();
        let timed_out = read_to_close(&mut slow).expect("answered after the body timeout");
        assert!(timed_out.starts_with("HTTP/1.1 408"), "{timed_out}");
        assert!(timed_out.contains("\"invalid_input\""), "{timed_out}");
        assert!(healthz(addr).starts_with("HTTP/1.1 200"));
    })
    .await
    .unwrap();
}
