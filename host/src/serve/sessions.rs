//! Sessions: a policy, a directory that lives as long as the session (mounted where the
//! policy's scratch directory would be) and a key-value namespace of its own, both persisting
//! across the session's runs. One run at a time per session (`session_busy`); an idle reaper
//! stops sessions past their idle timeout. Records are kept in the store, files under
//! `DATA/sessions/ID/files`, keys in the key-value store: all survive a restart.

use super::auth::Tenant;
use super::catalog::Policies;
use super::errors::ApiError;
use super::fs::{FsRequest, Root, Stop};
use super::inline::{InlineText, PolicyGiven, PolicyRef};
use super::journal::{Journal, Who};
use super::metrics::Metrics;
use super::reply::Stored;
use super::runner::Runner;
use super::runs::{NewFile, RunRequest};
use super::store::{Lease, Store, StoreError, Table, Write};
use crate::kv::KvBackend;
use crate::policy::{DEFAULT_MAX_FILES, DEFAULT_SCRATCH_QUOTA, HumanDuration};
use crate::{Error, Policy};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use utoipa::ToSchema;

/// Where a session's directory appears to scripts when the policy has no `[fs.scratch]`.
pub const DEFAULT_GUEST_DIR: &str = "/scratch";

/// The body of `POST /v1/sessions`.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSession {
    /// The policy: a catalog policy's name, or a policy as a JSON object admitted within the
    /// ceiling set for the caller's key (docs/server.md#inline-policies).
    #[schema(value_type = Option<super::inline::PolicyField>)]
    pub policy: Option<Box<serde_json::value::RawValue>>,
    /// A policy as TOML text, admitted as an object `policy` is (give one of the two).
    #[serde(default)]
    pub policy_toml: Option<String>,
    /// A label for listings.
    pub name: Option<String>,
    /// Stop the session after this long without a run or file operation, such as `"5m"`.
    pub idle_timeout: Option<String>,
    /// Files to put in its directory.
    #[serde(default)]
    pub files: Vec<NewFile>,
    /// Values its scripts read with `config.get`, besides the policy's (which win).
    #[serde(default)]
    pub config: BTreeMap<String, String>,
    /// The sandbox daemon's `idle_timeout_secs` (as `idle_timeout`).
    #[serde(default)]
    pub idle_timeout_secs: Option<u64>,
    /// The sandbox daemon's `memory_mb`: the memory of the session's runs that set none.
    #[serde(default)]
    pub memory_mb: Option<u64>,
    /// The sandbox daemon's `env`, `["K=V"]` or `{"K": "V"}` (as `config`).
    #[serde(default)]
    pub env: Option<super::daemon::Env>,
    /// The sandbox daemon's `network`: `false` is every policy without `[http]`.
    #[serde(default)]
    pub network: Option<bool>,
    /// The sandbox daemon's `cpus`: refused, with what to send instead.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub cpus: Option<serde_json::Value>,
    /// The sandbox daemon's `image`: refused, with what to send instead.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub image: Option<serde_json::Value>,
    /// Keep the session's JavaScript heap between its runs, which then evaluate scripts in it
    /// (docs/sessions.md); its folder is not mounted for them.
    #[serde(default)]
    pub live: bool,
}

/// What is kept of a session.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SessionRecord {
    /// Its id.
    pub session_id: String,
    /// Its tenant.
    #[serde(skip_serializing_if = "String::is_empty", default)]
    pub tenant: String,
    /// Its policy's name (a policy sent with its creation: `inline`, or `inline:` and its own
    /// `name`).
    pub policy: String,
    /// The policy sent with its creation, if it was; each run admits it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub inline_policy: Option<InlineText>,
    /// Its label.
    pub name: Option<String>,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// Its idle timeout, in milliseconds.
    pub idle_timeout_ms: u64,
    /// Its config values.
    #[serde(default)]
    pub config: BTreeMap<String, String>,
    /// The memory of its runs that set none, in MiB (the sandbox daemon's `memory_mb`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u64>,
    /// The replica that holds its files, on a store that replicas share (`--replica`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica: Option<String>,
    /// Whether its runs share one JavaScript heap (`"live": true`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub live: bool,
}

impl SessionRecord {
    /// The policy its runs use.
    pub fn policy_ref(&self) -> PolicyRef<'_> {
        match &self.inline_policy {
            Some(inline) => PolicyRef::Inline(inline),
            None => PolicyRef::Named(&self.policy),
        }
    }
}

/// A live session.
pub struct Session {
    /// What is kept of it.
    pub record: SessionRecord,
    dir: PathBuf,
    last_used: AtomicU64,
    run: tokio::sync::Mutex<()>,
    /// Held shared by each file operation, exclusively by a stop: a session is never stopped
    /// (its folder removed) under an operation in flight.
    in_use: tokio::sync::RwLock<()>,
    stopped: AtomicBool,
}

impl Session {
    fn new(record: SessionRecord, dir: PathBuf) -> Session {
        Session {
            record,
            dir,
            last_used: AtomicU64::new(crate::audit::now_unix_ms()),
            run: tokio::sync::Mutex::new(()),
            in_use: tokio::sync::RwLock::new(()),
            stopped: AtomicBool::new(false),
        }
    }

    fn touch(&self) {
        self.last_used
            .store(crate::audit::now_unix_ms(), Ordering::Relaxed);
    }

    /// Whether it has been idle past its timeout at `now`.
    fn idle_at(&self, now: u64) -> bool {
        now.saturating_sub(self.last_used.load(Ordering::Relaxed)) > self.record.idle_timeout_ms
    }

    /// Whether it has not been used for `ms` milliseconds at `now`.
    fn unused_for(&self, now: u64, ms: u64) -> bool {
        now.saturating_sub(self.last_used.load(Ordering::Relaxed)) >= ms
    }

    /// The listing form: `{session_id, policy, name, status, created_at, last_used_at}`.
    pub fn view(&self) -> serde_json::Value {
        let last =
            std::time::UNIX_EPOCH + Duration::from_millis(self.last_used.load(Ordering::Relaxed));
        let status = if self.run.try_lock().is_err() {
            "running"
        } else {
            "idle"
        };
        serde_json::json!({
            "session_id": self.record.session_id,
            "policy": self.record.policy,
            "name": self.record.name,
            "status": status,
            "created_at": self.record.created_at,
            "last_used_at": humantime::format_rfc3339_millis(last).to_string(),
            "idle_timeout": HumanDuration(Duration::from_millis(self.record.idle_timeout_ms)).to_string(),
        })
    }

    /// The key-value prefix of this session's namespace.
    fn kv_prefix(&self) -> String {
        format!("{}/{}/", self.record.tenant, self.record.session_id)
    }
}

/// Sets its flag when dropped: a file operation whose request went away stops.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// How many sessions, and for how long.
#[derive(Debug, Clone, Copy)]
pub struct SessionLimits {
    /// The most live sessions on the server.
    pub max_sessions: usize,
    /// A session's idle timeout when its creator gives none.
    pub idle_timeout: Duration,
    /// How long a live session stays idle before it is dropped from memory and its heap file
    /// compressed (`--hibernate-after`); zero: never.
    pub hibernate_after: Duration,
}

/// What the sessions service is built on.
pub struct SessionParts {
    /// Where session records are kept.
    pub store: Store,
    /// The key-value store the calls use (to clear a stopped session's keys).
    pub kv: Arc<dyn KvBackend>,
    /// The folder that holds each session's folder (`DATA/sessions`).
    pub dir: PathBuf,
    /// Its limits.
    pub limits: SessionLimits,
    /// The `palisade_sessions_active` gauge's home.
    pub metrics: Arc<Metrics>,
    /// Every run goes through it.
    pub runner: Arc<Runner>,
    /// Refused file operations are written to it.
    pub journal: Journal,
    /// The policies sessions run under.
    pub policies: Arc<Policies>,
    /// This server's name among replicas sharing the store: it holds the sessions it creates.
    pub replica: String,
    /// The heaps of live sessions.
    pub live: Arc<super::live::LiveHeaps>,
}

/// The live sessions, by id, and what they are built on.
pub struct Sessions {
    map: Mutex<HashMap<String, Arc<Session>>>,
    parts: SessionParts,
}

fn internal(detail: impl Into<String>) -> ApiError {
    Error::Internal {
        detail: detail.into(),
    }
    .into()
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| internal(e.to_string()))?
}

/// Where the session's files are seen by scripts, and its quotas.
fn place(policy: &Policy) -> (String, u64, u64) {
    match policy.fs().and_then(|fs| fs.scratch.as_ref()) {
        Some(s) => (s.guest.clone(), s.quota.0, s.max_files),
        None => (
            DEFAULT_GUEST_DIR.to_owned(),
            DEFAULT_SCRATCH_QUOTA.0,
            DEFAULT_MAX_FILES,
        ),
    }
}

/// The session's policy: its folder where the policy's scratch directory would be, or at
/// [`DEFAULT_GUEST_DIR`] with the default quotas when the policy has none, so that the files a
/// session's file operations put there are its scripts' own under any policy.
pub(crate) fn session_policy(policy: &Policy, dir: &std::path::Path) -> Policy {
    if policy.fs().is_some_and(|fs| fs.scratch.is_some()) {
        return policy.with_scratch_dir(dir);
    }
    let (guest, quota, max_files) = place(policy);
    policy.with_dir(dir, &guest, crate::policy::ByteSize(quota), max_files)
}

/// A session's policy with its key-value namespace and config values (a live session's runs
/// get no folder).
/// The `policy` and `policy_toml` of a request that creates a session under `record`'s policy
/// (a fork's).
fn policy_fields(
    record: &SessionRecord,
) -> Result<(Option<Box<serde_json::value::RawValue>>, Option<String>), ApiError> {
    let raw = |text: String| {
        serde_json::value::RawValue::from_string(text)
            .map(Some)
            .map_err(|e| {
                ApiError::from(Error::Internal {
                    detail: e.to_string(),
                })
            })
    };
    match record.policy_ref() {
        PolicyRef::Named(name) => Ok((raw(serde_json::Value::from(name).to_string())?, None)),
        PolicyRef::Inline(inline) if inline.json => Ok((raw(inline.text.clone())?, None)),
        PolicyRef::Inline(inline) => Ok((None, Some(inline.text.clone()))),
    }
}

fn scoped_policy(policy: &Policy, session: &Session) -> Policy {
    policy
        .with_kv_namespace_prefix(&session.kv_prefix())
        .with_config_defaults(&session.record.config)
}

/// The most config values a session keeps, and their bytes in all (keys and values): a
/// session's config is held in memory for its life and reloaded at start.
pub const MAX_CONFIG_KEYS: usize = 64;
/// See [`MAX_CONFIG_KEYS`].
pub const MAX_CONFIG_BYTES: usize = 256 << 10;

/// A session's `config`, checked as a call's `overrides.config` values are: keys of 1 to 256
/// bytes, values of at most [`CONFIG_VALUE_MAX`](crate::policy::CONFIG_VALUE_MAX) bytes, and
/// at most [`MAX_CONFIG_KEYS`] and [`MAX_CONFIG_BYTES`] in all.
fn check_config(config: &BTreeMap<String, String>) -> Result<(), ApiError> {
    let value_max = crate::policy::CONFIG_VALUE_MAX;
    if config.len() > MAX_CONFIG_KEYS {
        return Err(ApiError::invalid(format!(
            "a session has at most {MAX_CONFIG_KEYS} config values; this one has {}",
            config.len()
        )));
    }
    if let Some(key) = config.keys().find(|k| k.is_empty() || k.len() > 256) {
        return Err(ApiError::invalid(format!(
            "config key `{}` must have 1 to 256 bytes",
            key.chars().take(64).collect::<String>()
        )));
    }
    if let Some((key, _)) = config.iter().find(|(_, v)| v.len() > value_max) {
        return Err(ApiError::invalid(format!(
            "config `{key}` is over {value_max} bytes; pass large data as a file"
        ))
        .note("put large data in the session's files (`files` or fs/write) and read it there"));
    }
    let total: usize = config.iter().map(|(k, v)| k.len() + v.len()).sum();
    if total > MAX_CONFIG_BYTES {
        return Err(ApiError::invalid(format!(
            "a session's config holds at most {MAX_CONFIG_BYTES} bytes in all; this one {total}"
        ))
        .note("put large data in the session's files (`files` or fs/write) and read it there"));
    }
    Ok(())
}

fn parse_idle(given: Option<&str>, default: Duration) -> Result<Duration, ApiError> {
    match given {
        None => Ok(default),
        Some(text) => Ok(text
            .parse::<HumanDuration>()
            .map_err(|e| {
                ApiError::invalid(format!("idle_timeout: {e}"))
                    .fix(serde_json::json!({"idle_timeout": "5m"}))
            })?
            .0),
    }
}

fn full(what: &str) -> ApiError {
    ApiError::capacity(
        StatusCode::TOO_MANY_REQUESTS,
        0,
        super::admission::RETRY_AFTER_SECONDS,
        &format!(
            "{what}; stop a session (DELETE /v1/sessions/ID) or wait for idle ones to be reaped"
        ),
    )
}

impl Sessions {
    /// The sessions kept in the store (their idle clocks start now), over `parts`.
    pub fn open(parts: SessionParts) -> Result<Sessions, String> {
        let records = parts
            .store
            .all::<SessionRecord>(Table::Sessions, "")
            .map_err(|e| e.to_string())?;
        reindex(&parts.store, &records).map_err(|e| e.to_string())?;
        let mut map = HashMap::new();
        // On a shared store, each replica serves the sessions whose files it holds.
        let shared = parts.store.shared();
        for (_, record) in records {
            if shared && record.replica.as_deref() != Some(&parts.replica) {
                continue;
            }
            let dir = parts.dir.join(&record.session_id).join("files");
            map.insert(
                record.session_id.clone(),
                Arc::new(Session::new(record, dir)),
            );
        }
        parts.metrics.sessions.set(map.len() as i64);
        Ok(Sessions {
            map: Mutex::new(map),
            parts,
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The tenant's session `id`; another tenant's is not found. On a shared store, one that
    /// another replica holds is `session_elsewhere`, naming it, never an empty session.
    pub async fn get(&self, tenant: &str, id: &str) -> Result<Arc<Session>, ApiError> {
        let found = self
            .lock()
            .get(id)
            .filter(|s| s.record.tenant == tenant && !s.stopped.load(Ordering::Relaxed))
            .cloned();
        if let Some(session) = found {
            return Ok(session);
        }
        let not_found = || Error::SessionNotFound { id: id.to_owned() }.into();
        if !self.parts.store.shared() {
            return Err(not_found());
        }
        let (store, key) = (self.parts.store.clone(), id.to_owned());
        let record: Option<SessionRecord> =
            super::store::blocking(move || store.get(Table::Sessions, &key)).await?;
        match record
            .filter(|r| r.tenant == tenant)
            .and_then(|r| r.replica)
        {
            Some(replica) if replica != self.parts.replica => Err(Error::SessionElsewhere {
                id: id.to_owned(),
                replica,
            }
            .into()),
            _ => Err(not_found()),
        }
    }

    /// The tenant's sessions, oldest first.
    pub fn list(&self, tenant: &str) -> Vec<Arc<Session>> {
        let mut list: Vec<_> = self
            .lock()
            .values()
            .filter(|s| s.record.tenant == tenant)
            .cloned()
            .collect();
        list.sort_by(|a, b| a.record.created_at.cmp(&b.record.created_at));
        list
    }

    /// Sessions idle past their timeout and not running.
    fn idle(&self, now: u64) -> Vec<Arc<Session>> {
        self.lock()
            .values()
            .filter(|s| s.idle_at(now) && s.run.try_lock().is_ok())
            .cloned()
            .collect()
    }

    /// Whether `tenant` may hold one more session.
    fn room_for(
        &self,
        map: &HashMap<String, Arc<Session>>,
        tenant: &Tenant,
    ) -> Result<(), ApiError> {
        if map.len() >= self.parts.limits.max_sessions {
            return Err(full("the server holds its maximum number of sessions"));
        }
        if let Some(max) = tenant.max_sessions
            && map
                .values()
                .filter(|s| s.record.tenant == tenant.name)
                .count()
                >= max
        {
            return Err(full("your key holds its maximum number of sessions"));
        }
        Ok(())
    }

    /// `POST /v1/sessions` and MCP's `session_create`: `Sessions::create` on a task of its
    /// own, so that a request that goes away mid-create (its client left) still ends it, the
    /// session kept and counted or undone: never a folder and a record that nothing counts or
    /// frees.
    pub async fn create_detached(
        self: &Arc<Self>,
        tenant: &Arc<Tenant>,
        body: CreateSession,
    ) -> Result<serde_json::Value, ApiError> {
        let (sessions, tenant) = (self.clone(), tenant.clone());
        tokio::spawn(async move { sessions.create(&tenant, body).await })
            .await
            .map_err(|e| internal(format!("creating a session: {e}")))?
    }

    /// Create a session (see [`Sessions::create_detached`]).
    async fn create(
        &self,
        tenant: &Tenant,
        body: CreateSession,
    ) -> Result<serde_json::Value, ApiError> {
        let given =
            super::inline::from_fields(body.policy.as_deref(), body.policy_toml.as_deref())?
                .ok_or_else(|| {
                    ApiError::invalid("a session needs `policy`")
                        .fix(serde_json::json!({"policy": "default"}))
                })?;
        let policy = self.parts.policies.resolve(tenant, given.as_ref())?;
        super::daemon::DaemonFields {
            memory_mb: body.memory_mb,
            network: body.network,
            cpus: body.cpus.as_ref(),
            image: body.image.as_ref(),
            ..Default::default()
        }
        .check(&policy)?;
        let idle = match body.idle_timeout_secs {
            Some(secs) if body.idle_timeout.is_none() => Duration::from_secs(secs),
            _ => parse_idle(body.idle_timeout.as_deref(), self.parts.limits.idle_timeout)?,
        };
        if body.name.as_ref().is_some_and(|n| n.len() > 256) {
            return Err(ApiError::invalid("a session name has at most 256 bytes"));
        }
        let mut config = body.config.clone();
        if let Some(env) = body.env.clone() {
            config.extend(env.into_config()?);
        }
        check_config(&config)?;
        if body.live {
            super::live::LiveHeaps::check(&self.parts.runner, &policy).await?;
        }
        self.room_for(&self.lock(), tenant)?;
        let cap = self.room_across_replicas(tenant).await?;
        let id = super::reply::new_id();
        let record = SessionRecord {
            session_id: id.clone(),
            tenant: tenant.name.clone(),
            policy: match &given {
                PolicyGiven::Named(name) => name.clone(),
                PolicyGiven::Inline(_) => policy.name().to_owned(),
            },
            inline_policy: match given {
                PolicyGiven::Named(_) => None,
                PolicyGiven::Inline(inline) => Some(inline),
            },
            name: body.name.clone(),
            created_at: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
            idle_timeout_ms: idle.as_millis() as u64,
            config,
            memory_mb: body.memory_mb,
            replica: self
                .parts
                .store
                .shared()
                .then(|| self.parts.replica.clone()),
            live: body.live,
        };
        let session = Arc::new(Session::new(record, self.parts.dir.join(&id).join("files")));
        let made = self
            .make(&session, &policy, body.files, cap.fence())
            .await
            .and_then(|()| {
                let mut map = self.lock();
                self.room_for(&map, tenant).map(|()| {
                    map.insert(id.clone(), session.clone());
                    self.parts.metrics.sessions.set(map.len() as i64);
                })
            });
        cap.release().await;
        if let Err(e) = made {
            self.unmake(&session).await;
            return Err(e);
        }
        Ok(serde_json::json!({
            "session_id": id,
            "policy": session.record.policy,
            "created_at": session.record.created_at,
        }))
    }

    /// On a shared store, a tenant whose key sets `max_sessions` holds at most that many over
    /// every replica: the tenant's lease, taken while its records are counted and held until
    /// the new record is written under its fence. Nothing on a store of one server, whose
    /// [`Sessions::room_for`] sees every session.
    async fn room_across_replicas(&self, tenant: &Tenant) -> Result<Lease, ApiError> {
        let Some(max) = tenant.max_sessions.filter(|_| self.parts.store.shared()) else {
            return Ok(Lease::none());
        };
        let lease = self
            .parts
            .store
            .lease(&format!("sessions\n{}", tenant.name), &self.parts.replica)
            .await?
            .ok_or_else(|| full("your key's sessions are being created elsewhere"))?;
        let held = self.records_of(&tenant.name).await?.len();
        if held >= max {
            lease.release().await;
            return Err(full("your key holds its maximum number of sessions"));
        }
        Ok(lease)
    }

    /// The tenant's session records in the store, on every replica (read from
    /// [`Table::TenantSessions`]: the other tenants' are not read).
    async fn records_of(&self, tenant: &str) -> Result<Vec<SessionRecord>, ApiError> {
        let (store, prefix) = (self.parts.store.clone(), format!("{tenant}\n"));
        super::store::blocking(move || {
            store
                .all::<SessionRecord>(Table::TenantSessions, &prefix)
                .map(|all| all.into_iter().map(|(_, r)| r).collect())
        })
        .await
    }

    /// `GET /v1/sessions`: the tenant's sessions, oldest first. On a shared store, those other
    /// replicas hold are listed too, with `replica` naming the holder (their own requests go
    /// there: `session_elsewhere`).
    pub async fn listing(&self, tenant: &str) -> Result<Vec<serde_json::Value>, ApiError> {
        let mut list: Vec<serde_json::Value> = self.list(tenant).iter().map(|s| s.view()).collect();
        if !self.parts.store.shared() {
            return Ok(list);
        }
        for view in &mut list {
            view["replica"] = self.parts.replica.clone().into();
        }
        for record in self.records_of(tenant).await? {
            // This replica's own are listed above; one of its records missing from its map is
            // a session being created or stopped.
            if record.replica.as_deref() == Some(&self.parts.replica) {
                continue;
            }
            list.push(serde_json::json!({
                "session_id": record.session_id,
                "policy": record.policy,
                "name": record.name,
                "status": "elsewhere",
                "created_at": record.created_at,
                "replica": record.replica,
            }));
        }
        list.sort_by(|a, b| a["created_at"].as_str().cmp(&b["created_at"].as_str()));
        Ok(list)
    }

    /// Make a new session's folder and files, and keep its record (under `fence`, when given).
    async fn make(
        &self,
        session: &Arc<Session>,
        policy: &Policy,
        files: Vec<NewFile>,
        fence: Option<Write>,
    ) -> Result<(), ApiError> {
        let (guest, quota, max_files) = place(policy);
        let store = self.parts.store.clone();
        let s = session.clone();
        blocking(move || {
            std::fs::create_dir_all(&s.dir)
                .map_err(|e| internal(format!("{}: {e}", s.dir.display())))?;
            let root = Root::open(&s.dir, &guest, quota, max_files)?;
            for file in &files {
                let request = FsRequest {
                    path: Some(file.path.clone()),
                    parents: true,
                    content: file.content.clone(),
                    content_b64: file.content_b64.clone(),
                    ..FsRequest::default()
                };
                root.op("write", &request)?;
            }
            let puts = record_puts(&s.record).map_err(|e| internal(e.to_string()))?;
            store
                .apply(&fence.into_iter().chain(puts).collect::<Vec<_>>())
                .map_err(ApiError::from)
        })
        .await
    }

    /// Remove what [`Sessions::make`] made of a session that was not admitted.
    async fn unmake(&self, session: &Arc<Session>) {
        let store = self.parts.store.clone();
        let s = session.clone();
        let _ = blocking(move || {
            let _ = std::fs::remove_dir_all(s.dir.parent().unwrap_or(&s.dir));
            store
                .apply(&record_removes(&s.record))
                .map_err(ApiError::from)
        })
        .await;
    }

    /// Stop a session: wait for its run and file operations, then remove its files, keys and
    /// record.
    pub async fn stop(&self, session: Arc<Session>) -> Result<(), ApiError> {
        session.stopped.store(true, Ordering::Relaxed);
        let held = session.clone();
        let _run = held.run.lock().await;
        let _ops = held.in_use.write().await;
        {
            let mut map = self.lock();
            if map.remove(&session.record.session_id).is_none() {
                return Ok(()); // stopped by someone else meanwhile
            }
            self.parts.live.forget(&session.record.session_id);
            self.parts.metrics.sessions.set(map.len() as i64);
        }
        let kv_policy = match &session.record.inline_policy {
            // Its namespace is its ceiling's; reading the table resolves nothing of the host.
            Some(inline) => Policy::from_inline(&inline.text, inline.json)
                .ok()
                .and_then(Result::ok)
                .and_then(|p| p.kv().cloned()),
            None => self
                .parts
                .policies
                .current()
                .policies
                .get(&session.record.policy)
                .and_then(|p| p.kv().cloned()),
        };
        let kv = self.parts.kv.clone();
        let store = self.parts.store.clone();
        blocking(move || {
            if let Some(kv_policy) = kv_policy {
                clear_keys(&*kv, &session, &kv_policy)?;
            }
            if let Some(parent) = session.dir.parent() {
                let _ = std::fs::remove_dir_all(parent);
            }
            store
                .apply(&record_removes(&session.record))
                .map_err(ApiError::from)
        })
        .await
    }

    /// `POST /v1/sessions/{id}/run`.
    pub async fn run(
        &self,
        tenant: &Tenant,
        id: &str,
        mut request: RunRequest,
    ) -> Result<Stored, ApiError> {
        let session = self.get(&tenant.name, id).await?;
        if request.memory.is_none() && request.memory_mb.is_none() {
            request.memory_mb = session.record.memory_mb;
        }
        if let Some(given) = request.policy_given()?
            && !matches!(&given, PolicyGiven::Named(name) if *name == session.record.policy
                && session.record.inline_policy.is_none())
        {
            return Err(ApiError::invalid(format!(
                "this session runs under `{}`; leave `policy` out",
                session.record.policy
            ))
            .fix(serde_json::json!({"policy": null})));
        }
        let Ok(_turn) = session.run.try_lock() else {
            return Err(Error::SessionBusy { id: id.to_owned() }.into());
        };
        if session.stopped.load(Ordering::Relaxed) {
            return Err(Error::SessionNotFound { id: id.to_owned() }.into());
        }
        session.touch();
        let policy = self
            .parts
            .policies
            .resolve(tenant, session.record.policy_ref())?;
        let who = Who {
            tenant: &tenant.name,
            session: Some(id),
            app: None,
        };
        let result = if session.record.live {
            let live = scoped_policy(&policy, &session);
            let place = (id, super::live::heap_file(&session.dir));
            let (runner, place) = (&self.parts.runner, (place.0, place.1.as_path()));
            self.parts
                .live
                .run(runner, place, &live, &request, &who)
                .await
        } else {
            let derived = scoped_policy(&session_policy(&policy, &session.dir), &session);
            super::runs::execute(&self.parts.runner, &derived, &request, &who).await
        };
        session.touch();
        result
    }

    /// The live session `id`, where its heap is kept, and its runs' policy; a session that is
    /// not live is `invalid_input`.
    async fn live(
        &self,
        tenant: &Tenant,
        id: &str,
    ) -> Result<(Arc<Session>, PathBuf, Policy), ApiError> {
        let session = self.get(&tenant.name, id).await?;
        if !session.record.live {
            return Err(ApiError::invalid(format!(
                "session `{id}` is not live: create one with \"live\": true"
            )));
        }
        let policy = self
            .parts
            .policies
            .resolve(tenant, session.record.policy_ref())?;
        let file = super::live::heap_file(&session.dir);
        Ok((session.clone(), file, scoped_policy(&policy, &session)))
    }

    /// `GET /v1/sessions/{id}/heap`.
    pub async fn heap(&self, tenant: &Tenant, id: &str) -> Result<serde_json::Value, ApiError> {
        let (_, file, policy) = self.live(tenant, id).await?;
        let runner = &self.parts.runner;
        self.parts.live.heap(runner, (id, &file), &policy).await
    }

    /// `POST /v1/sessions/{id}/reset`.
    pub async fn reset(&self, tenant: &Tenant, id: &str) -> Result<(), ApiError> {
        let (_, file, policy) = self.live(tenant, id).await?;
        let runner = &self.parts.runner;
        self.parts.live.reset(runner, (id, &file), &policy).await
    }

    /// `POST /v1/sessions/{id}/fork`: a new live session with the same policy, config and a
    /// copy of the heap (its key-value namespace and folder are its own, and empty).
    pub async fn fork(&self, tenant: &Tenant, id: &str) -> Result<serde_json::Value, ApiError> {
        let (from, file, _) = self.live(tenant, id).await?;
        let record = &from.record;
        let (given, policy_toml) = policy_fields(record)?;
        let request = CreateSession {
            policy: given,
            policy_toml,
            name: record.name.clone(),
            idle_timeout: Some(format!("{}ms", record.idle_timeout_ms)),
            config: record.config.clone(),
            memory_mb: record.memory_mb,
            live: true,
            ..CreateSession::default()
        };
        let mut created = self.create(tenant, request).await?;
        let new_id = created["session_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let new = self.get(&tenant.name, &new_id).await?;
        let to = super::live::heap_file(&new.dir);
        if let Err(e) = self.parts.live.fork((id, &file), &to).await {
            let _ = self.stop(new).await;
            return Err(e);
        }
        created["forked_from"] = id.into();
        Ok(created)
    }

    /// `POST /v1/sessions/{id}/fs/{op}`.
    pub async fn fs(
        &self,
        tenant: &Tenant,
        id: &str,
        op: String,
        request: FsRequest,
    ) -> Result<serde_json::Value, ApiError> {
        let session = self.get(&tenant.name, id).await?;
        // Held until the operation ends: the reaper stops no session under it.
        let _in_use = session.in_use.read().await;
        if session.stopped.load(Ordering::Relaxed) {
            return Err(Error::SessionNotFound { id: id.to_owned() }.into());
        }
        session.touch();
        let policy = self
            .parts
            .policies
            .resolve(tenant, session.record.policy_ref())?;
        let (guest, quota, max_files) = place(&policy);
        let dir = session.dir.clone();
        let started = std::time::Instant::now();
        let target = format!(
            "fs/{op}:{}",
            request
                .path
                .as_deref()
                .or(request.src.as_deref())
                .unwrap_or("")
        );
        // A file operation takes a run slot, as a call does: a sed or a large read costs a CPU
        // and memory, and `--max-concurrency` bounds them together.
        let permit = self.parts.runner.admit().await?;
        // The operation stops at its next check when the client goes (this future is dropped,
        // and the guard with it) or after the policy's deadline.
        let stop = Stop::after(policy.limits().timeout.0);
        let _cancel_on_drop = CancelOnDrop(stop.cancelled.clone());
        let result = blocking(move || {
            let mut root = Root::open(&dir, &guest, quota, max_files)?;
            root.stop = stop;
            let result = root.op(&op, &request);
            drop(permit);
            result
        })
        .await;
        session.touch();
        // A refused path or quota is a gated decision: it goes to the audit log.
        if let Err(e) = &result
            && let Error::PolicyDenied { rule, reason, .. } = e.error()
        {
            let record = crate::AuditRecord {
                time_unix_ms: crate::audit::now_unix_ms(),
                capability: crate::Capability::Fs,
                target: crate::audit::truncate(&target, 2048),
                decision: crate::Decision::Deny,
                rule: rule.clone(),
                bytes_in: 0,
                bytes_out: 0,
                duration_us: started.elapsed().as_micros() as u64,
                error: Some(reason.clone()),
                policy: policy.name().to_owned(),
                policy_sha256: policy.sha256().to_owned(),
            };
            let who = Who {
                tenant: &tenant.name,
                session: Some(id),
                app: None,
            };
            self.parts.journal.record(&who, &record);
        }
        result
    }

    /// Stop the sessions idle past their timeout.
    pub async fn reap(&self) {
        for session in self.idle(crate::audit::now_unix_ms()) {
            if let Err(e) = self.stop_if_idle(session).await {
                tracing::warn!("reaper: {}", e.body());
            }
        }
        self.hibernate().await;
    }

    /// Hibernate the live sessions idle for `--hibernate-after`: each dropped from memory and
    /// its heap file compressed, once an idle period ([`super::live::LiveHeaps::hibernate`]),
    /// unless a turn of it or a stop is under way (then at a later round), or it was used
    /// since it was listed.
    async fn hibernate(&self) {
        let after = self.parts.limits.hibernate_after;
        if after.is_zero() {
            return;
        }
        let now = crate::audit::now_unix_ms();
        let after = u64::try_from(after.as_millis()).unwrap_or(u64::MAX);
        let idle: Vec<Arc<Session>> = self
            .lock()
            .values()
            .filter(|s| {
                s.record.live
                    && s.unused_for(now, after)
                    && !self.parts.live.hibernated(&s.record.session_id)
            })
            .cloned()
            .collect();
        for session in idle {
            // Not stopped (its folder removed) meanwhile. A run that comes while it hibernates
            // waits for its turn ([`super::live::LiveHeaps::hibernate`] holds it), then wakes
            // the session from the compressed file.
            let Ok(_ops) = session.in_use.try_read() else {
                continue;
            };
            // Nor used since it was listed (the files of those before it took a while).
            let used = !session.unused_for(crate::audit::now_unix_ms(), after);
            if used || session.stopped.load(Ordering::Relaxed) {
                continue;
            }
            let (id, file) = (
                &session.record.session_id,
                super::live::heap_file(&session.dir),
            );
            if let Err(e) = self.parts.live.hibernate(id, &file).await {
                tracing::warn!(session = %id, "hibernating a live session: {}", e.body());
            }
        }
    }

    /// Stop `session` if it is still idle, checked again in its turn with no file operation
    /// in flight: a run or an operation that came after [`Sessions::idle`] listed it (the
    /// reaper stops the listed sessions one after another) keeps it. Whether it stopped it.
    async fn stop_if_idle(&self, session: Arc<Session>) -> Result<bool, ApiError> {
        {
            let (Ok(_run), Ok(_ops)) = (session.run.try_lock(), session.in_use.try_write()) else {
                return Ok(false);
            };
            if !session.idle_at(crate::audit::now_unix_ms()) {
                return Ok(false);
            }
            // Set in its turn: a run or an operation after this finds it stopped.
            session.stopped.store(true, Ordering::Relaxed);
        }
        tracing::info!(session = %session.record.session_id, "stopping an idle session");
        self.stop(session).await.map(|()| true)
    }
}

/// The writes that keep `record`: by its id, and by its tenant's name and its id.
fn record_puts(record: &SessionRecord) -> Result<[Write; 2], serde_json::Error> {
    let value = serde_json::to_string(record)?;
    Ok([
        Write::Put {
            table: Table::Sessions,
            key: record.session_id.clone(),
            value: value.clone(),
        },
        Write::Put {
            table: Table::TenantSessions,
            key: tenant_key(record),
            value,
        },
    ])
}

/// The writes that remove `record`, both ways it is kept.
fn record_removes(record: &SessionRecord) -> [Write; 2] {
    [
        Write::Remove {
            table: Table::Sessions,
            key: record.session_id.clone(),
        },
        Write::Remove {
            table: Table::TenantSessions,
            key: tenant_key(record),
        },
    ]
}

/// Bring [`Table::TenantSessions`] to `records` (every record of [`Table::Sessions`]): what a
/// store written before that table was, or by a server that did not keep it, lacks or keeps
/// over. Only the differences are written.
fn reindex(store: &Store, records: &[(String, SessionRecord)]) -> Result<(), StoreError> {
    let indexed: std::collections::HashSet<String> = store
        .all::<SessionRecord>(Table::TenantSessions, "")?
        .into_iter()
        .map(|(key, _)| key)
        .collect();
    let mut writes = Vec::new();
    for (_, record) in records {
        if !indexed.contains(&tenant_key(record)) {
            let [_, put] = record_puts(record).map_err(|e| StoreError::Failed(e.to_string()))?;
            writes.push(put);
        }
    }
    let kept: std::collections::HashSet<String> =
        records.iter().map(|(_, r)| tenant_key(r)).collect();
    writes.extend(
        indexed
            .iter()
            .filter(|key| !kept.contains(*key))
            .map(|key| Write::Remove {
                table: Table::TenantSessions,
                key: key.clone(),
            }),
    );
    for batch in writes.chunks(256) {
        store.apply(batch)?;
    }
    Ok(())
}

/// `record`'s key in [`Table::TenantSessions`].
fn tenant_key(record: &SessionRecord) -> String {
    format!("{}\n{}", record.tenant, record.session_id)
}

/// Remove a stopped session's keys from the key-value store.
fn clear_keys(
    kv: &dyn KvBackend,
    session: &Session,
    kv_policy: &crate::policy::Kv,
) -> Result<(), ApiError> {
    let namespace = format!("{}{}", session.kv_prefix(), kv_policy.namespace);
    for bucket in kv_policy.buckets.keys() {
        while let Ok(keys) = kv.list(&namespace, bucket, 0, 1000) {
            if keys.is_empty() {
                break;
            }
            for key in keys {
                kv.delete(&namespace, bucket, &key)
                    .map_err(|e| internal(e.to_string()))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::admission::Admission;

    fn sessions(dir: &std::path::Path, max_sessions: usize) -> Sessions {
        let store = Store::open(&dir.join("server.redb")).unwrap();
        let kv = Arc::new(crate::kv::open_default(&dir.join("kv.sqlite3")).unwrap());
        let metrics = Arc::new(Metrics::new());
        let palisade = crate::Palisade::builder().build().unwrap();
        let runner = Arc::new(Runner::new(
            palisade,
            Admission::new(1, Duration::from_secs(1)),
            metrics.clone(),
        ));
        Sessions::open(SessionParts {
            store,
            kv,
            dir: dir.join("sessions"),
            limits: SessionLimits {
                max_sessions,
                idle_timeout: Duration::from_secs(60),
                hibernate_after: Duration::ZERO,
            },
            metrics: metrics.clone(),
            runner,
            journal: Journal::default(),
            policies: Arc::new(Policies::open(None, metrics)),
            replica: "test".into(),
            live: Arc::new(crate::serve::live::LiveHeaps::new(1)),
        })
        .unwrap()
    }

    /// An empty folder of this process for a test's server files.
    fn fresh_dir(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("palisade-sessions-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn create(policy: &str) -> CreateSession {
        CreateSession {
            policy: serde_json::value::to_raw_value(policy).ok(),
            ..CreateSession::default()
        }
    }

    /// A tenant's records are read by its name alone, each kept and removed with the record;
    /// a store whose index lacks a record (written before the index was kept) or keeps one
    /// that is gone is brought back to the records when the sessions open.
    #[tokio::test]
    async fn a_tenants_records_are_read_without_the_others() {
        let dir = fresh_dir("index");
        let sessions = Arc::new(sessions(&dir, 1000));
        let local = Arc::new(Tenant::local());
        let mut other = Tenant::local();
        other.name = "other".into();
        let other = Arc::new(other);
        let mut made = Vec::new();
        for tenant in [&local, &other, &other] {
            let answer = sessions.create_detached(tenant, create("default")).await;
            made.push(answer.unwrap()["session_id"].as_str().unwrap().to_owned());
        }
        let ids = async |sessions: &Sessions, tenant: &str| -> Vec<String> {
            let records = sessions.records_of(tenant).await.unwrap();
            let mut ids: Vec<String> = records.into_iter().map(|r| r.session_id).collect();
            ids.sort();
            ids
        };
        let mut others = vec![made[1].clone(), made[2].clone()];
        others.sort();
        assert_eq!(ids(&sessions, "local").await, [made[0].clone()]);
        assert_eq!(ids(&sessions, "other").await, others);
        let stopped = sessions.get("other", &made[1]).await.unwrap();
        sessions.stop(stopped).await.unwrap();
        assert_eq!(ids(&sessions, "other").await, [made[2].clone()]);
        // The index entry of one record lost, and one of no record kept.
        let kept = sessions.records_of("other").await.unwrap().remove(0);
        let gone = SessionRecord {
            session_id: "gone".into(),
            ..kept.clone()
        };
        let [_, put] = record_puts(&gone).unwrap();
        let [_, remove] = record_removes(&kept);
        sessions.parts.store.apply(&[put, remove]).unwrap();
        assert_eq!(ids(&sessions, "other").await, ["gone"]);
        drop(sessions);
        let sessions = self::sessions(&dir, 1000);
        assert_eq!(ids(&sessions, "other").await, [made[2].clone()]);
        assert_eq!(ids(&sessions, "local").await, [made[0].clone()]);
        drop(sessions);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A create whose request goes away at any point (its future dropped) still ends: every
    /// folder left on disk belongs to a session the map counts (none is left that nothing
    /// frees).
    #[tokio::test]
    async fn a_create_dropped_midway_leaves_no_session_uncounted() {
        let dir = fresh_dir("drop");
        let sessions = Arc::new(sessions(&dir, 1000));
        let local = Arc::new(Tenant::local());
        let files = || -> Vec<NewFile> {
            (0..200)
                .map(|i| NewFile {
                    path: format!("d/f{i}.txt"),
                    content: Some("x".repeat(4096)),
                    content_b64: None,
                })
                .collect()
        };
        for micros in (0..40).map(|i| i * 250) {
            let body = CreateSession {
                files: files(),
                ..create("default")
            };
            let made = sessions.create_detached(&local, body);
            let _ = tokio::time::timeout(Duration::from_micros(micros), made).await;
        }
        let folders = |dir: &std::path::Path| {
            std::fs::read_dir(dir.join("sessions")).map_or(0, Iterator::count)
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while folders(&dir) != sessions.list("local").len() && std::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(folders(&dir), sessions.list("local").len());
        let stored = sessions
            .parts
            .store
            .all::<SessionRecord>(Table::Sessions, "")
            .unwrap();
        assert_eq!(
            stored.len(),
            sessions.list("local").len(),
            "a record for every session kept"
        );
        sessions
            .create_detached(&local, create("default"))
            .await
            .unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Issue 38: the reaper lists the idle sessions, then stops them one after another. A
    /// session that takes a request after it was listed is checked again in its turn and
    /// kept; one still idle is stopped (then `session_not_found`).
    #[tokio::test]
    async fn a_session_used_after_the_reaper_listed_it_is_kept() {
        let dir = std::env::temp_dir().join(format!("palisade-reap-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let sessions = sessions(&dir, 4);
        let local = Tenant::local();
        let mut ids = Vec::new();
        for _ in 0..2 {
            let made = sessions.create(&local, create("default")).await.unwrap();
            let id = made["session_id"].as_str().unwrap().to_owned();
            // Idle since long past its timeout (60 s).
            let session = sessions.get("local", &id).await.unwrap();
            session.last_used.store(0, Ordering::Relaxed);
            ids.push(id);
        }
        let listed = sessions.idle(crate::audit::now_unix_ms());
        assert_eq!(listed.len(), 2);
        let write = |content: &str| FsRequest {
            path: Some("note.txt".into()),
            content: Some(content.into()),
            ..FsRequest::default()
        };
        sessions
            .fs(&local, &ids[0], "write".into(), write("used"))
            .await
            .unwrap();
        let mut stopped = Vec::new();
        for session in listed {
            let id = session.record.session_id.clone();
            if sessions.stop_if_idle(session).await.unwrap() {
                stopped.push(id);
            }
        }
        assert_eq!(stopped, [ids[1].clone()], "only the session still idle");
        let gone = sessions.fs(&local, &ids[1], "write".into(), write("x"));
        assert_eq!(gone.await.unwrap_err().code(), "session_not_found");
        let read = FsRequest {
            path: Some("note.txt".into()),
            ..FsRequest::default()
        };
        let kept = sessions
            .fs(&local, &ids[0], "read".into(), read)
            .await
            .unwrap();
        assert_eq!(kept["body"], "used", "{kept}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// Past `max_sessions` a new session is 429 `capacity_exhausted` and leaves nothing on
    /// disk; once one is stopped, there is room again. Sessions are kept across an open.
    #[tokio::test]
    async fn past_max_sessions_is_429_and_leaves_nothing() {
        let dir = std::env::temp_dir().join(format!("palisade-sessions-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let sessions = sessions(&dir, 2);
        let local = Tenant::local();
        let first = sessions.create(&local, create("default")).await.unwrap();
        sessions.create(&local, create("default")).await.unwrap();
        let refused = sessions
            .create(&local, create("default"))
            .await
            .unwrap_err();
        assert_eq!(refused.code(), "capacity_exhausted");
        assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
        let on_disk = std::fs::read_dir(dir.join("sessions")).unwrap().count();
        assert_eq!(on_disk, 2, "the refused session left no folder");
        let unknown = sessions.create(&local, create("nope")).await.unwrap_err();
        assert_eq!(unknown.code(), "policy_not_found");
        let id = first["session_id"].as_str().unwrap();
        let session = sessions.get("local", id).await.unwrap();
        sessions.stop(session).await.unwrap();
        sessions.create(&local, create("default")).await.unwrap();
        drop(sessions);
        let reopened = super::tests::sessions(&dir, 2);
        assert_eq!(reopened.list("local").len(), 2);
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A FIFO's writing end if something has it open to read (else none), never waiting.
    fn writer(fifo: &std::path::Path) -> Option<std::fs::File> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).custom_flags(0o4000).open(fifo).ok()
    }

    /// Write `bytes` to the non-blocking `fifo`, then close it.
    async fn feed(mut fifo: std::fs::File, bytes: Vec<u8>) {
        use std::io::Write;
        let fed = tokio::task::spawn_blocking(move || {
            let mut at = 0;
            while at < bytes.len() {
                match fifo.write(&bytes[at..]) {
                    Ok(n) => at += n,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    Err(e) => panic!("{e}"),
                }
            }
        });
        fed.await.unwrap();
    }

    fn step(source: &str) -> RunRequest {
        serde_json::from_value(serde_json::json!({ "source": source })).unwrap()
    }

    /// A live session that ran a step, idle since long, its heap file's bytes moved out and a
    /// FIFO in its place: its id, the FIFO and the bytes.
    async fn idle_behind_a_fifo(
        sessions: &Sessions,
        local: &Tenant,
    ) -> (String, std::path::PathBuf, Vec<u8>) {
        let live = CreateSession {
            live: true,
            ..create("default")
        };
        let made = sessions.create(local, live).await.unwrap();
        let id = made["session_id"].as_str().unwrap().to_owned();
        let ran = sessions.run(local, &id, step("globalThis.x = 1; x")).await;
        assert!(ran.unwrap().body.contains(r#""output":1"#));
        let session = sessions.get("local", &id).await.unwrap();
        session.last_used.store(0, Ordering::Relaxed);
        let image = super::super::live::heap_file(&session.dir);
        let bytes = std::fs::read(&image).unwrap();
        std::fs::remove_file(&image).unwrap();
        let made = std::process::Command::new("mkfifo").arg(&image).status();
        assert!(made.unwrap().success());
        (id, image, bytes)
    }

    /// The reaper lists the live sessions idle for `--hibernate-after`, then compresses their
    /// files one after another. One used after it was listed (a file operation here, while the
    /// first listed is held midway: both heap files are FIFOs) is checked again and left as
    /// it is, its file never read; the first hibernates. Then each session answers a step.
    #[tokio::test]
    async fn a_session_used_after_hibernation_listed_it_is_left_alone() {
        let dir = fresh_dir("hibernate-listed");
        let mut sessions = sessions(&dir, 4);
        sessions.parts.limits.hibernate_after = Duration::from_secs(60);
        let local = Tenant::local();
        let (mut ids, mut images, mut bytes) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..2 {
            let (id, image, file) = idle_behind_a_fifo(&sessions, &local).await;
            ids.push(id);
            images.push(image);
            bytes.push(file);
        }
        let done = AtomicBool::new(false);
        let round = async {
            sessions.hibernate().await;
            done.store(true, Ordering::Relaxed);
        };
        let used = async {
            let since = std::time::Instant::now();
            let (first, fifo) = loop {
                if let Some(found) = (0..2).find_map(|i| writer(&images[i]).map(|w| (i, w))) {
                    break found;
                }
                assert!(
                    since.elapsed() < Duration::from_secs(30),
                    "never hibernated"
                );
                tokio::time::sleep(Duration::from_millis(5)).await;
            };
            let other = 1 - first;
            let note = FsRequest {
                path: Some("note.txt".into()),
                content: Some("used".into()),
                ..FsRequest::default()
            };
            sessions
                .fs(&local, &ids[other], "write".into(), note)
                .await
                .unwrap();
            feed(fifo, bytes[first].clone()).await;
            // The round goes on to the other session: reading its file, or leaving it.
            while !done.load(Ordering::Relaxed) {
                if let Some(fifo) = writer(&images[other]) {
                    feed(fifo, bytes[other].clone()).await;
                    return (first, true);
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            (first, false)
        };
        let ((), (first, read)) = tokio::join!(round, used);
        let other = 1 - first;
        assert!(!read, "the session used after it was listed was hibernated");
        let live = &sessions.parts.live;
        assert!(live.hibernated(&ids[first]) && !live.hibernated(&ids[other]));
        assert!(
            std::fs::read(&images[first])
                .unwrap()
                .starts_with(b"PALIHEPZ")
        );
        std::fs::remove_file(&images[other]).unwrap();
        std::fs::write(&images[other], &bytes[other]).unwrap();
        for id in &ids {
            let stored = sessions.run(&local, id, step("x + 1")).await.unwrap();
            assert!(stored.body.contains(r#""output":2"#), "{}", stored.body);
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}
