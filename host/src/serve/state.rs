//! The composition root: the server's configuration, and [`AppState`], which builds each
//! service once at start with the handles it needs and only holds them. Handlers take the
//! service they use (`State<Arc<Sessions>>`, …) through `FromRef`, never the whole state.

use super::admission::Admission;
use super::apps::{AppParts, Apps};
use super::auth::{Keys, Tenants};
use super::catalog::Policies;
use super::idempotency::Ledger;
use super::journal::Journal;
use super::metrics::Metrics;
use super::runner::Runner;
use super::sessions::{SessionLimits, SessionParts, Sessions};
use super::store::{Store, Table};
use crate::Palisade;
use axum::extract::FromRef;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How the server runs (the flags of `palisade serve`).
#[derive(Debug, Clone)]
pub struct Config {
    /// The address to listen on.
    pub listen: SocketAddr,
    /// The policies folder; `None` serves the built-in default only.
    pub policies: Option<PathBuf>,
    /// Where sessions, idempotency records and the key-value store live.
    pub data: PathBuf,
    /// `--store redis://HOST:PORT/DB`: keep the server's records and the key-value store in
    /// that Redis, which replicas share (docs/scaling.md); `None`: in `data`.
    pub store: Option<String>,
    /// This server's name among replicas sharing a store (`--replica`): it holds the leases it
    /// takes and the sessions it creates. `None`: its listening address.
    pub replica: Option<String>,
    /// The keys file; `None` means no authentication (loopback only).
    pub keys: Option<PathBuf>,
    /// `--inline-ceiling`: the catalog policy that bounds policies sent with calls, for tenants
    /// whose keys file entry names none; `None` (and none named): no policy sent is admitted.
    pub inline_ceiling: Option<String>,
    /// Where audit records are appended (JSON lines); `None` keeps none.
    pub audit_log: Option<PathBuf>,
    /// The most live sessions on the server.
    pub max_sessions: usize,
    /// The most sessions with `"live": true` whose instance is kept in memory; the others wait
    /// as images in their folders (`--max-live-sessions`).
    pub max_live_sessions: usize,
    /// The most calls running at once.
    pub max_concurrency: usize,
    /// Slots of each kind in the instance pool (`Builder::pool_slots`); `None`: one per call
    /// that may run at once.
    pub pool_slots: Option<u32>,
    /// How long a call waits for a run slot before `capacity_exhausted`.
    pub admission_wait: Duration,
    /// A session's idle timeout when its creator gives none.
    pub idle_timeout: Duration,
    /// How long a live session stays idle before it is dropped from memory and its heap file
    /// compressed (`--hibernate-after`); zero: never.
    pub hibernate_after: Duration,
    /// How often the idle reaper (and the idempotency purge) runs.
    pub reap_interval: Duration,
    /// How long idempotency records are kept.
    pub idempotency_ttl: Duration,
    /// What each tenant's `POST /v1/run` idempotency records may take in the store
    /// (`--max-keyed-records`, `--max-keyed-bytes`).
    pub keyed_quota: super::idempotency::KeyQuota,
    /// How long in-flight requests may take to finish after SIGTERM.
    pub drain_grace: Duration,
    /// The base of each error's `docs_url`.
    pub docs_url: String,
    /// `--app FILE.js`: the app whose seed routes (`/press`, `/actions`, …) are mounted at the root.
    pub app: Option<PathBuf>,
    /// The most apps' event streams open at once, per session, per tenant and on the server.
    pub event_streams: super::apps::events::StreamCaps,
    /// The most connections held at once; one past it is closed at once.
    pub max_connections: usize,
    /// How long a request's head may take to arrive (and a keep-alive connection may stay
    /// idle) before the connection is closed.
    pub header_timeout: Duration,
    /// How long a request's body may take to arrive before the request is answered 408.
    pub body_timeout: Duration,
    /// `GET /`, the page (`serve/page.rs`): `None` serves it on a loopback listener only,
    /// `Some(true)` (`--playground`) on any, `Some(false)` on none.
    pub playground: Option<bool>,
}

impl Config {
    /// This server's name among replicas: `--replica`, else its listening address.
    pub fn replica_name(&self) -> String {
        self.replica
            .clone()
            .unwrap_or_else(|| self.listen.to_string())
    }

    /// Whether `GET /` serves the page: `playground`, else whether the listener is loopback.
    pub fn playground_on(&self) -> bool {
        self.playground
            .unwrap_or_else(|| self.listen.ip().is_loopback())
    }

    /// The defaults of `palisade serve` with no flags, keeping data in `data`.
    pub fn new(data: PathBuf) -> Config {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8787)),
            policies: None,
            data,
            store: None,
            replica: None,
            keys: None,
            inline_ceiling: None,
            audit_log: None,
            max_sessions: 1000,
            max_live_sessions: 64,
            max_concurrency: 64,
            pool_slots: None,
            admission_wait: Duration::from_secs(2),
            idle_timeout: Duration::from_secs(300),
            hibernate_after: Duration::from_secs(120),
            reap_interval: Duration::from_secs(1),
            idempotency_ttl: Duration::from_secs(24 * 3600),
            keyed_quota: super::idempotency::KeyQuota::default(),
            drain_grace: Duration::from_secs(30),
            docs_url: super::errors::DEFAULT_DOCS_URL.to_owned(),
            app: None,
            event_streams: super::apps::events::StreamCaps::default(),
            max_connections: 512,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            playground: None,
        }
    }
}

/// The services, each built once with its handles. It is the router's state (a clone is a
/// set of handles).
#[derive(Clone)]
pub struct AppState {
    /// The configuration it started with.
    pub config: Config,
    /// Who may call.
    pub tenants: Arc<Tenants>,
    /// The policies on offer.
    pub policies: Arc<Policies>,
    /// Every sandbox call.
    pub runner: Arc<Runner>,
    /// Idempotency keys.
    pub ledger: Arc<Ledger>,
    /// Live sessions.
    pub sessions: Arc<Sessions>,
    /// Loaded action apps (`/v1/apps`).
    pub apps: Arc<Apps>,
    /// Prometheus metrics.
    pub metrics: Arc<Metrics>,
    /// The durable records the services keep (a handle; each service holds its own).
    pub store: Store,
    /// Set on SIGTERM: `/readyz` answers 503.
    pub draining: Arc<AtomicBool>,
}

impl AppState {
    /// Open the data folder, the store, the keys file and the policies, build the engine, and
    /// compose the services.
    pub fn open(mut config: Config) -> Result<Arc<AppState>, String> {
        super::errors::set_docs_url(&config.docs_url);
        std::fs::create_dir_all(config.data.join("sessions"))
            .map_err(|e| format!("cannot create {}: {e}", config.data.display()))?;
        // Session directories are mounted by absolute path.
        config.data = std::fs::canonicalize(&config.data)
            .map_err(|e| format!("cannot resolve {}: {e}", config.data.display()))?;
        let keys = match &config.keys {
            Some(path) => Some(Keys::from_file(path)?),
            None => None,
        };
        let store = Store::open_at(config.store.as_deref(), &config.data.join("server.redb"))?;
        let kv = kv_store(&config)?;
        let palisade = engine(&config, kv.clone())?;
        let metrics = Arc::new(Metrics::new());
        metrics.pool_slots.set(i64::from(palisade.pool_slots()));
        let journal = Journal::new(palisade.audit_file());
        let policies = Arc::new(
            Policies::open(config.policies.clone(), metrics.clone())
                .with_inline_ceiling(config.inline_ceiling.clone()),
        );
        check_ceilings(&config, keys.as_ref(), &policies)?;
        if let (Some(app), Some(dir)) = (&config.app, &config.policies)
            && !policies.current().policies.contains_key("default")
        {
            return Err(format!(
                "--app {} runs its calls under the policy `default`, and {} has none: add a \
                 `default.toml` there, or leave --policies out to serve the built-in default",
                app.display(),
                dir.display()
            ));
        }
        let admission = Admission::new(config.max_concurrency, config.admission_wait);
        let runner = Arc::new(Runner::new(palisade, admission, metrics.clone()));
        let ledger = ledger(&config, &store)?;
        let sessions = Arc::new(Sessions::open(SessionParts {
            store: store.clone(),
            kv,
            dir: config.data.join("sessions"),
            limits: SessionLimits {
                max_sessions: config.max_sessions,
                idle_timeout: config.idle_timeout,
                hibernate_after: config.hibernate_after,
            },
            metrics: metrics.clone(),
            runner: runner.clone(),
            journal: journal.clone(),
            policies: policies.clone(),
            replica: config.replica_name(),
            live: Arc::new(super::live::LiveHeaps::new(config.max_live_sessions)),
        })?);
        let apps = Arc::new(Apps::new(AppParts {
            store: store.clone(),
            runner: runner.clone(),
            ledger: ledger.clone(),
            journal,
            policies: policies.clone(),
            metrics: metrics.clone(),
            stream_caps: config.event_streams,
            seed_file: config.app.clone(),
            max_sessions: config.max_sessions,
            replica: config.replica_name(),
        }));
        Ok(Arc::new(AppState {
            tenants: Arc::new(Tenants::new(keys, &store)),
            policies,
            runner,
            ledger,
            sessions,
            apps,
            metrics,
            store,
            draining: Arc::new(AtomicBool::new(false)),
            config,
        }))
    }

    /// Whether SIGTERM was received.
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }
}

/// The idempotency ledger over `store`, its records' accounts counted.
fn ledger(config: &Config, store: &Store) -> Result<Arc<Ledger>, String> {
    let ledger = Ledger::new(
        store.clone(),
        config.idempotency_ttl,
        vec![Table::RunKeys, Table::AppKeys],
    )
    .for_replica(config.replica_name())
    .with_quota(config.keyed_quota);
    // A store from before the accounts counted every key record is counted once, before any
    // request: purges would otherwise uncount records never counted.
    ledger
        .count_stored_records()
        .map_err(|e| format!("cannot count the stored idempotency records: {e}"))?;
    Ok(Arc::new(ledger))
}

/// Refuse to start when `--inline-ceiling` or a tenant's `inline_ceiling` names a policy the
/// catalog lacks.
fn check_ceilings(config: &Config, keys: Option<&Keys>, policies: &Policies) -> Result<(), String> {
    let catalog = policies.current();
    let named = config
        .inline_ceiling
        .iter()
        .map(|c| ("--inline-ceiling".to_owned(), c.as_str()))
        .chain(keys.into_iter().flat_map(Keys::ceilings));
    for (by, name) in named {
        if !catalog.policies.contains_key(name) {
            return Err(format!(
                "{by} names the policy `{name}`, which the catalog lacks: add `{name}.toml` to \
                 the policies folder, or name one of {}",
                catalog.names_for(|_| true).join(", ")
            ));
        }
    }
    Ok(())
}

/// The library, sized by the flags: the pool holds a slot per call the server admits, and
/// the audit log is the library's writer.
/// The key-value store: in the shared Redis of `--store`, else the SQLite file in the data folder.
fn kv_store(config: &Config) -> Result<Arc<dyn crate::kv::KvBackend>, String> {
    Ok(match &config.store {
        Some(url) => Arc::new(crate::kv::RedisKv::open(url).map_err(|e| e.to_string())?),
        None => Arc::new(
            crate::kv::open_default(&config.data.join("kv.sqlite3")).map_err(|e| e.to_string())?,
        ),
    })
}

fn engine(config: &Config, kv: Arc<dyn crate::kv::KvBackend>) -> Result<Palisade, String> {
    let mut builder = Palisade::builder()
        .max_concurrency(u32::try_from(config.max_concurrency.max(1)).unwrap_or(u32::MAX))
        .queue_timeout(config.admission_wait)
        .kv_backend(kv);
    if let Some(slots) = config.pool_slots {
        builder = builder.pool_slots(slots);
    }
    if let Some(path) = &config.audit_log {
        builder = builder.audit_log(path);
    }
    builder.build().map_err(|e| match e {
        // Its message names no cause; the detail (an audit log that cannot be opened) is the
        // operator's to read.
        crate::Error::Internal { detail } => format!("cannot start the engine: {detail}"),
        e => format!("cannot start the engine: {e}"),
    })
}

macro_rules! from_ref {
    ($($field:ident: $ty:ty),* $(,)?) => {$(
        impl FromRef<AppState> for Arc<$ty> {
            fn from_ref(state: &AppState) -> Self {
                state.$field.clone()
            }
        }
    )*};
}

from_ref!(
    tenants: Tenants,
    policies: Policies,
    runner: Runner,
    ledger: Ledger,
    sessions: Sessions,
    apps: Apps,
    metrics: Metrics,
);
