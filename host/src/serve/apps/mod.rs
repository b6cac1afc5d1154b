//! Stateful action apps (docs/apps.md): a module with a manifest, an `init`, a `view` and
//! named `actions` over a state, loaded once per tenant and compiled ahead; every init, view
//! and action is a fresh sandbox call on that compiled form, under the app's policy, with the
//! state carried in and out as JSON. One file per concern: [`abi`] (the driver around an app
//! and its compile), [`records`] (the durable tables), [`actions`] (dry run, commit,
//! idempotency, serialization per session), [`view`] (audiences and the HTML rendering),
//! [`events`] (server-sent events), [`routes`] (the `/v1/apps` handlers) and [`seed`] (the
//! root routes of `palisade serve --app`).

pub mod abi;
pub mod actions;
pub mod events;
pub mod records;
pub mod routes;
pub mod seed;
pub mod view;

use super::auth::Tenant;
use super::catalog::Policies;
use super::errors::ApiError;
use super::idempotency::Ledger;
use super::journal::Journal;
use super::metrics::Metrics;
use super::runner::Runner;
use super::store::Store;
use super::turns::Turns;
use crate::Error;
use abi::Loaded;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// What the apps service is built on.
pub struct AppParts {
    /// Apps, their sessions' states, events and key records.
    pub store: Store,
    /// Every call of an app goes through it.
    pub runner: Arc<Runner>,
    /// Actions' idempotency keys.
    pub ledger: Arc<Ledger>,
    /// One line per action.
    pub journal: Journal,
    /// The policies apps run under.
    pub policies: Arc<Policies>,
    /// The event streams' gauge.
    pub metrics: Arc<Metrics>,
    /// The most event streams open at once.
    pub stream_caps: events::StreamCaps,
    /// `--app FILE.js`: the app the seed's root routes serve.
    pub seed_file: Option<PathBuf>,
    /// The most app sessions (with a kept state) a tenant holds over all its apps, unless its
    /// key sets `max_sessions` (`--max-sessions`).
    pub max_sessions: usize,
    /// This server's name among replicas (the holder of its leases).
    pub replica: String,
}

/// The apps' service: compiled apps, the turn of each session, the signal that wakes event
/// streams after a commit, the count of open streams, and what it is built on.
pub struct Apps {
    loaded: Mutex<HashMap<String, Arc<Loaded>>>,
    turns: Turns,
    committed: tokio::sync::watch::Sender<u64>,
    seed: tokio::sync::Mutex<std::collections::HashSet<String>>,
    committer: Mutex<Option<Arc<records::Committer>>>,
    /// The event streams open now.
    pub streams: Arc<events::Streams>,
    parts: AppParts,
}

/// The store key of an app: tenant and name.
pub fn app_key(tenant: &str, app: &str) -> String {
    format!("{tenant}\n{app}\n")
}

/// Names of apps: 1 to 64 letters, digits, `-` and `_`.
pub fn check_name(name: &str) -> Result<(), ApiError> {
    if name.is_empty()
        || name.len() > 64
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(ApiError::invalid(
            "an app's name has 1 to 64 letters, digits, `-` and `_`",
        ));
    }
    Ok(())
}

/// Session ids: 1 to 128 letters, digits, `-`, `_`, `.` and `:`.
pub fn check_session(id: &str) -> Result<(), ApiError> {
    if id.is_empty()
        || id.len() > 128
        || !id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
    {
        return Err(ApiError::invalid(
            "a session_id has 1 to 128 letters, digits, `-`, `_`, `.` and `:`",
        ));
    }
    Ok(())
}

impl Apps {
    /// The apps' service over `parts`.
    pub fn new(parts: AppParts) -> Apps {
        Apps {
            loaded: Mutex::default(),
            turns: Turns::default(),
            committed: tokio::sync::watch::channel(0).0,
            seed: tokio::sync::Mutex::default(),
            committer: Mutex::default(),
            streams: Arc::default(),
            parts,
        }
    }

    /// The compiled app `name` of `tenant`: from memory, or from the store (compiled again
    /// after a restart, or when its policy changed).
    pub async fn get(&self, tenant: &Tenant, name: &str) -> Result<Arc<Loaded>, ApiError> {
        check_name(name)?;
        let key = app_key(&tenant.name, name);
        let cached = self
            .loaded
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .cloned();
        let record = match cached {
            // Another replica may have loaded the app again, or unloaded it: on a shared store
            // the record is read each time, and a copy of another source is compiled again.
            Some(loaded) if self.parts.store.shared() => {
                let record = self.record(&tenant.name, name).await?;
                let policy = self.parts.policies.policy_for(tenant, &record.policy)?;
                if record.sha256 == loaded.record.sha256
                    && record.policy == loaded.record.policy
                    && policy.sha256() == loaded.policy_sha256
                {
                    return Ok(loaded);
                }
                record
            }
            Some(loaded) => {
                let policy = self
                    .parts
                    .policies
                    .policy_for(tenant, &loaded.record.policy)?;
                if policy.sha256() == loaded.policy_sha256 {
                    return Ok(loaded);
                }
                loaded.record.clone()
            }
            None => self.record(&tenant.name, name).await?,
        };
        let policy = self.parts.policies.policy_for(tenant, &record.policy)?;
        let loaded =
            Arc::new(abi::compile(&self.parts.runner, &policy, record, &tenant.name).await?);
        self.insert(&tenant.name, loaded.clone());
        Ok(loaded)
    }

    /// The kept record of `tenant`'s app `name`, or `app_not_found`.
    pub async fn record(&self, tenant: &str, name: &str) -> Result<records::AppRecord, ApiError> {
        check_name(name)?;
        let store = self.parts.store.clone();
        let key = app_key(tenant, name);
        records::blocking(move || records::app(&store, &key))
            .await?
            .ok_or_else(|| {
                Error::AppNotFound {
                    name: name.to_owned(),
                }
                .into()
            })
    }

    /// Remember a freshly compiled app.
    fn insert(&self, tenant: &str, loaded: Arc<Loaded>) {
        let key = app_key(tenant, &loaded.record.name);
        self.loaded
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, loaded);
    }

    /// Forget an unloaded app.
    fn forget(&self, tenant: &str, name: &str) {
        self.loaded
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&app_key(tenant, name));
    }

    /// Write `commit` durably: by group commit (started on first use) into the embedded file;
    /// alone into a shared store, which groups concurrent writes itself (Redis fsyncs once for
    /// the writes that arrive together) and whose fence then refuses this commit alone.
    async fn commit(&self, commit: records::Commit) -> Result<(), ApiError> {
        if self.parts.store.shared() {
            let accounts = self.parts.ledger.accounts().clone();
            return records::blocking(move || records::write(&accounts, std::iter::once(&commit)))
                .await;
        }
        let committer = {
            let mut slot = self.committer.lock().unwrap_or_else(|e| e.into_inner());
            match &*slot {
                Some(c) => c.clone(),
                None => {
                    let c = Arc::new(records::Committer::start(
                        self.parts.ledger.accounts().clone(),
                    )?);
                    *slot = Some(c.clone());
                    c
                }
            }
        };
        Ok(committer.commit(commit).await?)
    }

    /// Wake the event streams: a commit wrote events.
    fn notify(&self) {
        self.committed.send_modify(|n| *n += 1);
    }

    /// A receiver that changes after each commit with events.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.committed.subscribe()
    }
}
