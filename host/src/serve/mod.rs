//! `palisade serve`: one HTTP service for runs and sandbox sessions, with tenants, admission,
//! idempotency and hot-reloaded policies, built on the library. The composition root
//! ([`state`], [`router`](mod@router), [`openapi`] and this file) builds each service once
//! and mounts the routes; each service owns its state and takes only the handles it needs:
//! [`runner`] (every sandbox call: admission, metrics, audit tags), [`journal`] (the audit
//! log), [`idempotency`] (the ledger), [`auth`] (tenants and the [`Authed`](auth::Authed)
//! extractor), [`catalog`] (policies and reload), [`runs`], [`sessions`] and [`fs`] (file
//! operations; `search.rs`: grep and sed), [`apps`](mod@apps) (stateful action apps,
//! docs/apps.md) and [`page`] (`GET /`, the page people use). Leaves: [`reply`], [`store`],
//! [`turns`], [`admission`], [`metrics`], [`errors`].

pub mod admission;
pub mod apps;
pub mod auth;
pub mod catalog;
pub mod daemon;
pub mod errors;
pub mod fs;
pub mod idempotency;
pub mod inline;
pub mod journal;
pub mod listener;
pub mod live;
pub mod mcp;
pub mod metrics;
pub mod openapi;
pub mod page;
pub mod reply;
pub mod router;
pub mod runner;
pub mod runs;
mod search;
pub mod sessions;
pub mod state;
pub mod store;
pub mod turns;

pub use reply::new_id;
pub use state::{AppState, Config};

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The whole API over `state`, `/openapi.json` included.
pub fn router(state: Arc<AppState>) -> axum::Router {
    let routes = openapi::mount(router::routes(&state));
    router::finish(routes, state)
}

/// Stop idle sessions every `reap_interval`, and purge expired idempotency records every
/// minute (at every tick while a pass stops before the end of a table, so a table that grows
/// faster than one pass a minute reads is still worked through).
pub async fn reaper(state: Arc<AppState>) {
    let mut tick = tokio::time::interval(state.config.reap_interval);
    let mut last_purge = std::time::Instant::now();
    let mut purge_unfinished = false;
    loop {
        tick.tick().await;
        state.sessions.reap().await;
        if purge_unfinished || last_purge.elapsed() >= Duration::from_secs(60) {
            last_purge = std::time::Instant::now();
            let ledger = state.ledger.clone();
            purge_unfinished = tokio::task::spawn_blocking(move || {
                if let Err(e) = ledger.purge() {
                    tracing::warn!("idempotency purge: {e}");
                }
                ledger.purge_unfinished()
            })
            .await
            .unwrap_or(false);
        }
    }
}

/// The server's default data folder: `serve` in Palisade's data folder.
pub fn default_data_dir() -> PathBuf {
    crate::cache::default_data_dir().join("serve")
}

/// Refuse a configuration that would serve a non-loopback address without keys.
pub fn check(config: &Config) -> Result<(), String> {
    if config.keys.is_none() && !config.listen.ip().is_loopback() {
        return Err(format!(
            "refusing to serve {} without authentication: give --keys FILE, or listen on a \
             loopback address such as 127.0.0.1",
            config.listen
        ));
    }
    Ok(())
}

/// Watch the policies folder and reload it on change (debounced), while the watcher lives.
/// Only changes wake it: the reload's own reads of the folder (access events) would
/// otherwise wake it again, and it would reload for ever.
fn watch(policies: &Arc<catalog::Policies>) -> Option<notify::RecommendedWatcher> {
    use notify::Watcher;
    let dir = policies.dir()?.to_path_buf();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if event.is_ok_and(|e| !e.kind.is_access()) {
            let _ = tx.send(());
        }
    })
    .map_err(|e| tracing::warn!("cannot watch {}: {e}", dir.display()))
    .ok()?;
    if let Err(e) = watcher.watch(&dir, notify::RecursiveMode::NonRecursive) {
        tracing::warn!("cannot watch {}: {e}", dir.display());
        return None;
    }
    let policies = policies.clone();
    tokio::spawn(async move {
        while rx.recv().await.is_some() {
            // Editors write a file in several steps: let them finish.
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            while rx.try_recv().is_ok() {}
            let p = policies.clone();
            let _ = tokio::task::spawn_blocking(move || p.reload()).await;
            tracing::info!("policies reloaded");
        }
    });
    Some(watcher)
}

async fn terminated() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = term => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

/// Serve until SIGTERM (or Ctrl-C): then stop accepting, let requests in flight finish within
/// the drain grace, and return. `on_listen` is told the bound address.
pub async fn serve(
    mut config: Config,
    on_listen: impl FnOnce(std::net::SocketAddr),
) -> Result<(), String> {
    check(&config)?;
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let grace = config.drain_grace;
    // Replicas on `--listen …:0` are told apart by the port they got.
    config.replica.get_or_insert_with(|| addr.to_string());
    let state = AppState::open(config)?;
    let _watcher = watch(&state.policies);
    tokio::spawn(reaper(state.clone()));
    on_listen(addr);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let drain = state.clone();
    let shutdown = async move {
        terminated().await;
        drain.draining.store(true, Ordering::Relaxed);
        tracing::warn!("draining: no new connections; finishing requests in flight");
        let _ = stop_tx.send(true);
    };
    let connections = listener::Connections {
        max: state.config.max_connections,
        header_timeout: state.config.header_timeout,
    };
    let metrics = state.metrics.clone();
    let server = listener::serve(listener, router(state), connections, metrics, shutdown);
    let mut stopped = stop_rx.clone();
    let deadline = async move {
        let _ = stopped.wait_for(|s| *s).await;
        tokio::time::sleep(grace).await;
    };
    tokio::select! {
        () = server => Ok(()),
        _ = deadline => {
            tracing::warn!("drain grace of {grace:?} over: stopping with requests in flight");
            Ok(())
        }
    }
}
