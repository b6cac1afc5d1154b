//! The server's configuration and shared state (`Arc<AppState>`), built once at start.

use super::admission::Admission;
use super::auth::{Keys, Tenant};
use super::catalog::Catalog;
use super::errors::ApiError;
use super::idempotency::Idempotency;
use super::metrics::Metrics;
use super::sessions::Sessions;
use super::store::Store;
use crate::AuditRecord;
use crate::kv::SqliteBackend;
use crate::{Error, Palisade, Policy};
use axum::http::HeaderMap;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
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
    /// The keys file; `None` means no authentication (loopback only).
    pub keys: Option<PathBuf>,
    /// Where audit records are appended (JSON lines); `None` keeps none.
    pub audit_log: Option<PathBuf>,
    /// The most live sessions on the server.
    pub max_sessions: usize,
    /// The most calls running at once.
    pub max_concurrency: usize,
    /// Slots of each kind in the instance pool (`Builder::pool_slots`); `None`: one per call
    /// that may run at once.
    pub pool_slots: Option<u32>,
    /// How long a call waits for a run slot before `capacity_exhausted`.
    pub admission_wait: Duration,
    /// A session's idle timeout when its creator gives none.
    pub idle_timeout: Duration,
    /// How often the idle reaper (and the idempotency purge) runs.
    pub reap_interval: Duration,
    /// How long idempotency records are kept.
    pub idempotency_ttl: Duration,
    /// How long in-flight requests may take to finish after SIGTERM.
    pub drain_grace: Duration,
    /// The base of each error's `docs_url`.
    pub docs_url: String,
    /// `--app FILE.js`: the app whose seed routes (`/press`, `/actions`, …) are mounted at the root.
    pub app: Option<PathBuf>,
    /// The most apps' event streams open at once, per session, per tenant and on the server.
    pub event_streams: super::apps::events::StreamCaps,
}

impl Config {
    /// The defaults of `palisade serve` with no flags, keeping data in `data`.
    pub fn new(data: PathBuf) -> Config {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8787)),
            policies: None,
            data,
            keys: None,
            audit_log: None,
            max_sessions: 1000,
            max_concurrency: 64,
            pool_slots: None,
            admission_wait: Duration::from_secs(2),
            idle_timeout: Duration::from_secs(300),
            reap_interval: Duration::from_secs(1),
            idempotency_ttl: Duration::from_secs(24 * 3600),
            drain_grace: Duration::from_secs(30),
            docs_url: super::errors::DEFAULT_DOCS_URL.to_owned(),
            app: None,
            event_streams: super::apps::events::StreamCaps::default(),
        }
    }
}

/// Everything the handlers share.
pub struct AppState {
    /// The library: engine, compiled guests, pool.
    pub palisade: Palisade,
    /// The configuration it started with.
    pub config: Config,
    /// The policies on offer; replaced whole on reload.
    pub catalog: RwLock<Arc<Catalog>>,
    keys: Option<Keys>,
    local: Arc<Tenant>,
    /// Durable records.
    pub store: Store,
    /// The key-value store the calls use (to clear a stopped session's keys).
    pub kv: Arc<SqliteBackend>,
    /// Live sessions.
    pub sessions: Sessions,
    /// Run permits.
    pub admission: Admission,
    /// Idempotency-Key handling.
    pub idempotency: Idempotency,
    /// Prometheus metrics.
    pub metrics: Metrics,
    audit: Option<Mutex<std::fs::File>>,
    /// Set on SIGTERM: `/readyz` answers 503.
    pub draining: AtomicBool,
    /// Loaded action apps (`/v1/apps`).
    pub apps: super::apps::Apps,
}

impl AppState {
    /// Open the data folder, the store, the keys file and the policies, and build the engine.
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
        let store = Store::open(&config.data.join("server.redb"))?;
        let kv = Arc::new(
            crate::kv::open_default(&config.data.join("kv.sqlite3")).map_err(|e| e.to_string())?,
        );
        let mut builder = Palisade::builder()
            .max_concurrency(u32::try_from(config.max_concurrency.max(1)).unwrap_or(u32::MAX))
            .queue_timeout(config.admission_wait)
            .kv_backend(kv.clone());
        if let Some(slots) = config.pool_slots {
            builder = builder.pool_slots(slots);
        }
        let palisade = builder
            .build()
            .map_err(|e| format!("cannot start the engine: {e}"))?;
        let catalog = match &config.policies {
            Some(dir) => Catalog::load(dir, &Catalog::default()),
            None => Catalog::builtin(),
        };
        let audit = match &config.audit_log {
            Some(path) => Some(Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| format!("cannot open the audit log {}: {e}", path.display()))?,
            )),
            None => None,
        };
        let metrics = Metrics::new();
        metrics.policies_invalid.set(catalog.problems.len() as i64);
        metrics.pool_slots.set(i64::from(palisade.pool_slots()));
        metrics.reload_errors.inc_by(catalog.problems.len() as u64);
        let state = Arc::new(AppState {
            palisade,
            admission: Admission::new(config.max_concurrency, config.admission_wait),
            catalog: RwLock::new(Arc::new(catalog)),
            keys,
            local: Arc::new(Tenant::local()),
            sessions: Sessions::default(),
            idempotency: Idempotency::default(),
            store,
            kv,
            metrics,
            audit,
            draining: AtomicBool::new(false),
            apps: super::apps::Apps::default(),
            config,
        });
        state.sessions.load(&state)?;
        Ok(state)
    }

    /// The caller's tenant, after its rate.
    pub fn tenant(&self, headers: &HeaderMap) -> Result<Arc<Tenant>, ApiError> {
        let tenant = match &self.keys {
            Some(keys) => keys.authenticate(headers)?,
            None => self.local.clone(),
        };
        tenant.admit().map_err(|retry| {
            ApiError::capacity(
                axum::http::StatusCode::TOO_MANY_REQUESTS,
                0,
                retry,
                "your key's rate is spent; retry after Retry-After seconds",
            )
        })?;
        Ok(tenant)
    }

    /// The current catalog.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.catalog
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The policy `name`, if `tenant` may use it; else `policy_not_found` with the catalog.
    pub fn policy(&self, tenant: &Tenant, name: &str) -> Result<Arc<Policy>, ApiError> {
        let catalog = self.catalog();
        match catalog.policies.get(name) {
            Some(policy) if tenant.may_use(name) => Ok(policy.clone()),
            _ => Err(Error::PolicyNotFound {
                name: name.to_owned(),
                catalog: catalog.names_for(|n| tenant.may_use(n)),
            }
            .into()),
        }
    }

    /// Read the policies folder again (after a change).
    pub fn reload(&self) {
        let Some(dir) = &self.config.policies else {
            return;
        };
        let previous = self.catalog();
        let next = Catalog::load(dir, &previous);
        for problem in &next.problems {
            tracing::warn!(file = %problem.file, "policy not reloaded: {}", problem.error);
        }
        self.metrics
            .reload_errors
            .inc_by(next.problems.len() as u64);
        self.metrics
            .policies_invalid
            .set(next.problems.len() as i64);
        *self.catalog.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(next);
    }

    /// Append one call's audit records, each with its tenant and session.
    pub fn audit(&self, tenant: &str, session: Option<&str>, outcome: &crate::Outcome) {
        self.append_audit(tenant, session, &outcome.audit);
    }

    /// Append audit records, each with its tenant and session.
    pub fn append_audit(&self, tenant: &str, session: Option<&str>, records: &[AuditRecord]) {
        let Some(file) = &self.audit else { return };
        if records.is_empty() {
            return;
        }
        let mut lines = String::new();
        for record in records {
            let Ok(mut value) = serde_json::to_value(record) else {
                continue;
            };
            value["tenant"] = tenant.into();
            value["session"] = session.map_or(serde_json::Value::Null, Into::into);
            lines.push_str(&value.to_string());
            lines.push('\n');
        }
        let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = file.write_all(lines.as_bytes()) {
            tracing::error!("cannot write the audit log: {e}");
        }
    }

    /// Append one JSON line (an app action's record) to the audit log, if there is one.
    pub fn append_audit_line(&self, record: &serde_json::Value) {
        let Some(file) = &self.audit else { return };
        let line = format!("{record}\n");
        let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = file.write_all(line.as_bytes()) {
            tracing::error!("cannot write the audit log: {e}");
        }
    }

    /// Whether SIGTERM was received.
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Relaxed)
    }
}
