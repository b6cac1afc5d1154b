//! The server's accept loop: each connection is served by hyper with a deadline on every
//! request head (which also ends a keep-alive connection left idle), at most
//! [`Config::max_connections`](super::Config) connections are held at once (one past it is
//! closed at once, so that idle clients cannot take every file descriptor), and on shutdown
//! the listener closes and the connections in flight finish their requests.

use super::metrics::Metrics;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// How long a connection's sent data may stay unacknowledged before the kernel drops it: a
/// client that vanished without closing (its network gone, a NAT entry expired) would otherwise
/// keep its connection, and an event stream's slot, for the kernel's default of about 16
/// minutes of retransmissions.
pub const DEAD_PEER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Keep-alive probes on an idle connection, and [`DEAD_PEER_TIMEOUT`] on unacknowledged data,
/// so that a peer that is gone is noticed on a connection that sends (an event stream's
/// keep-alive comments) and on one that does not.
pub fn abandon_dead_peers(tcp: &mut tokio::net::TcpStream) {
    let socket = socket2::SockRef::from(&*tcp);
    let keepalive = socket2::TcpKeepalive::new()
        .with_time(DEAD_PEER_TIMEOUT / 2)
        .with_interval(std::time::Duration::from_secs(10))
        .with_retries(3);
    if let Err(e) = socket
        .set_tcp_keepalive(&keepalive)
        .and_then(|()| socket.set_tcp_user_timeout(Some(DEAD_PEER_TIMEOUT)))
    {
        tracing::debug!("cannot set keep-alive on a connection: {e}");
    }
}

/// How the accept loop treats connections.
#[derive(Debug, Clone, Copy)]
pub struct Connections {
    /// The most connections held at once.
    pub max: usize,
    /// How long a request's head may take to arrive, counted from when the connection is ready
    /// for it: a slow head, or a keep-alive connection idle this long, is closed.
    pub header_timeout: Duration,
}

/// How long `accept` backs off after an error (out of file descriptors): the error repeats
/// at once otherwise, and the loop would spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// Serve `app` on `listener` until `stop` resolves, then wait for the connections in flight.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Connections,
    metrics: Arc<Metrics>,
    stop: impl std::future::Future<Output = ()>,
) {
    let graceful = GracefulShutdown::new();
    let permits = Arc::new(Semaphore::new(limits.max.max(1)));
    tokio::pin!(stop);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut stop => break,
        };
        let mut tcp = match accepted {
            Ok((tcp, _)) => tcp,
            Err(e) => {
                tracing::warn!("cannot accept a connection: {e}");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            metrics.connections_refused.inc();
            drop(tcp);
            continue;
        };
        abandon_dead_peers(&mut tcp);
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_timeout);
        let service = TowerToHyperService::new(app.clone());
        let connection = graceful.watch(builder.serve_connection(TokioIo::new(tcp), service));
        let gauge = metrics.connections.clone();
        gauge.inc();
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("connection ended: {e}");
            }
            gauge.dec();
            drop(permit);
        });
    }
    drop(listener);
    graceful.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::{DEAD_PEER_TIMEOUT, abandon_dead_peers};

    /// An accepted connection gets keep-alive probes and the unacknowledged-data timeout.
    #[tokio::test]
    async fn accepted_connections_abandon_dead_peers() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let _client = tokio::net::TcpStream::connect(addr).await.unwrap();
        let (mut accepted, _) = listener.accept().await.unwrap();
        let socket = socket2::SockRef::from(&accepted);
        assert!(!socket.keepalive().unwrap());
        abandon_dead_peers(&mut accepted);
        let socket = socket2::SockRef::from(&accepted);
        assert!(socket.keepalive().unwrap());
        assert_eq!(socket.tcp_user_timeout().unwrap(), Some(DEAD_PEER_TIMEOUT));
    }
}
