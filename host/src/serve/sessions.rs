//! Sessions: a policy, a directory that lives as long as the session (mounted where the
//! policy's scratch directory would be) and a key-value namespace of its own, both persisting
//! across the session's runs. One run at a time per session (`session_busy`); an idle reaper
//! stops sessions past their idle timeout. Records are kept in the store, files under
//! `DATA/sessions/ID/files`, keys in the key-value store: all survive a restart.

use super::errors::ApiError;
use super::fs::{FsRequest, Root};
use super::runs::{Caller, RunRequest, Stored};
use super::state::AppState;
use super::store::Table;
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

/// A file to put in a new session's directory.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewFile {
    /// Its path in the session's directory.
    pub path: String,
    /// UTF-8 content.
    pub content: Option<String>,
    /// Base64 content.
    pub content_b64: Option<String>,
}

/// The body of `POST /v1/sessions`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSession {
    /// The policy's name.
    pub policy: String,
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
}

/// What is kept of a session.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct SessionRecord {
    /// Its id.
    pub session_id: String,
    /// Its tenant.
    #[serde(skip_serializing_if = "String::is_empty", default)]
    pub tenant: String,
    /// Its policy's name.
    pub policy: String,
    /// Its label.
    pub name: Option<String>,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// Its idle timeout, in milliseconds.
    pub idle_timeout_ms: u64,
    /// Its config values.
    #[serde(default)]
    pub config: BTreeMap<String, String>,
}

/// A live session.
pub struct Session {
    /// What is kept of it.
    pub record: SessionRecord,
    dir: PathBuf,
    last_used: AtomicU64,
    run: tokio::sync::Mutex<()>,
    stopped: AtomicBool,
}

impl Session {
    fn touch(&self) {
        self.last_used
            .store(crate::audit::now_unix_ms(), Ordering::Relaxed);
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

/// The live sessions, by id.
#[derive(Default)]
pub struct Sessions {
    map: Mutex<HashMap<String, Arc<Session>>>,
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

impl Sessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Session>>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Load the sessions kept in the store (at start); their idle clocks start now.
    pub fn load(&self, state: &AppState) -> Result<(), String> {
        let records = state.store.all::<SessionRecord>(Table::Sessions)?;
        let mut map = self.lock();
        for (_, record) in records {
            let dir = session_dir(state, &record.session_id);
            map.insert(
                record.session_id.clone(),
                Arc::new(Session {
                    record,
                    dir,
                    last_used: AtomicU64::new(crate::audit::now_unix_ms()),
                    run: tokio::sync::Mutex::new(()),
                    stopped: AtomicBool::new(false),
                }),
            );
        }
        state.metrics.sessions.set(map.len() as i64);
        Ok(())
    }

    /// The tenant's session `id`; another tenant's is not found.
    pub fn get(&self, tenant: &str, id: &str) -> Result<Arc<Session>, ApiError> {
        self.lock()
            .get(id)
            .filter(|s| s.record.tenant == tenant && !s.stopped.load(Ordering::Relaxed))
            .cloned()
            .ok_or_else(|| Error::SessionNotFound { id: id.to_owned() }.into())
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

    fn remove(&self, id: &str) -> Option<Arc<Session>> {
        self.lock().remove(id)
    }

    /// Sessions idle past their timeout and not running.
    fn idle(&self, now: u64) -> Vec<Arc<Session>> {
        self.lock()
            .values()
            .filter(|s| {
                now.saturating_sub(s.last_used.load(Ordering::Relaxed)) > s.record.idle_timeout_ms
                    && s.run.try_lock().is_ok()
            })
            .cloned()
            .collect()
    }
}

fn session_dir(state: &AppState, id: &str) -> PathBuf {
    state.config.data.join("sessions").join(id).join("files")
}

/// `POST /v1/sessions`.
pub async fn create(
    state: &Arc<AppState>,
    tenant: &super::auth::Tenant,
    body: CreateSession,
) -> Result<serde_json::Value, ApiError> {
    let policy = state.policy(tenant, &body.policy)?;
    let idle = match &body.idle_timeout {
        None => state.config.idle_timeout,
        Some(text) => {
            text.parse::<HumanDuration>()
                .map_err(|e| {
                    ApiError::invalid(format!("idle_timeout: {e}"))
                        .fix(serde_json::json!({"idle_timeout": "5m"}))
                })?
                .0
        }
    };
    if body.name.as_ref().is_some_and(|n| n.len() > 256) {
        return Err(ApiError::invalid("a session name has at most 256 bytes"));
    }
    let full = |what: &str| {
        ApiError::capacity(
            StatusCode::TOO_MANY_REQUESTS,
            0,
            super::admission::RETRY_AFTER_SECONDS,
            &format!(
                "{what}; stop a session (DELETE /v1/sessions/ID) or wait for idle ones to be reaped"
            ),
        )
    };
    let check = |map: &HashMap<String, Arc<Session>>| {
        if map.len() >= state.config.max_sessions {
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
    };
    check(&state.sessions.lock())?;
    let id = super::new_id();
    let now = crate::audit::now_unix_ms();
    let record = SessionRecord {
        session_id: id.clone(),
        tenant: tenant.name.clone(),
        policy: body.policy.clone(),
        name: body.name.clone(),
        created_at: humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string(),
        idle_timeout_ms: idle.as_millis() as u64,
        config: body.config.clone(),
    };
    let dir = session_dir(state, &id);
    let (guest, quota, max_files) = place(&policy);
    let files = body.files;
    let setup = {
        let dir = dir.clone();
        let store = state.store.clone();
        let record = record.clone();
        move || {
            std::fs::create_dir_all(&dir)
                .map_err(|e| internal(format!("{}: {e}", dir.display())))?;
            let root = Root::open(&dir, &guest, quota, max_files)?;
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
            store
                .put(Table::Sessions, &record.session_id, &record)
                .map_err(internal)
        }
    };
    let cleanup = |dir: &PathBuf| {
        let _ = std::fs::remove_dir_all(dir.parent().unwrap_or(dir));
    };
    if let Err(e) = blocking(setup).await {
        cleanup(&dir);
        let store = state.store.clone();
        let _ = blocking(move || store.remove(Table::Sessions, &[id]).map_err(internal)).await;
        return Err(e);
    }
    let session = Arc::new(Session {
        record: record.clone(),
        dir: dir.clone(),
        last_used: AtomicU64::new(now),
        run: tokio::sync::Mutex::new(()),
        stopped: AtomicBool::new(false),
    });
    let admitted = {
        let mut map = state.sessions.lock();
        check(&map).map(|()| {
            map.insert(id.clone(), session);
            state.metrics.sessions.set(map.len() as i64);
        })
    };
    if let Err(e) = admitted {
        cleanup(&dir);
        let store = state.store.clone();
        let _ = blocking(move || store.remove(Table::Sessions, &[id]).map_err(internal)).await;
        return Err(e);
    }
    Ok(serde_json::json!({
        "session_id": id,
        "policy": record.policy,
        "created_at": record.created_at,
    }))
}

/// Stop a session: wait for its run, then remove its files, keys and record.
pub async fn stop(state: &Arc<AppState>, session: Arc<Session>) -> Result<(), ApiError> {
    session.stopped.store(true, Ordering::Relaxed);
    let _run = session.run.lock().await;
    if state.sessions.remove(&session.record.session_id).is_none() {
        return Ok(()); // stopped by someone else meanwhile
    }
    state
        .metrics
        .sessions
        .set(state.sessions.lock().len() as i64);
    let policy = state
        .catalog()
        .policies
        .get(&session.record.policy)
        .cloned();
    let kv = state.kv.clone();
    let store = state.store.clone();
    let s = session.clone();
    blocking(move || {
        if let Some(kv_policy) = policy.as_ref().and_then(|p| p.kv().cloned()) {
            use crate::kv::KvBackend;
            let namespace = format!("{}{}", s.kv_prefix(), kv_policy.namespace);
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
        }
        if let Some(parent) = s.dir.parent() {
            let _ = std::fs::remove_dir_all(parent);
        }
        store
            .remove(Table::Sessions, std::slice::from_ref(&s.record.session_id))
            .map_err(internal)
    })
    .await
}

/// `POST /v1/sessions/{id}/run`.
pub async fn run(
    state: &Arc<AppState>,
    tenant: &super::auth::Tenant,
    id: &str,
    request: RunRequest,
) -> Result<Stored, ApiError> {
    let session = state.sessions.get(&tenant.name, id)?;
    if let Some(policy) = &request.policy
        && *policy != session.record.policy
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
    let policy = state.policy(tenant, &session.record.policy)?;
    let derived = policy
        .with_scratch_dir(&session.dir)
        .with_kv_namespace_prefix(&session.kv_prefix())
        .with_config_defaults(&session.record.config);
    let caller = Caller {
        tenant: &tenant.name,
        session: Some(id),
    };
    let result = super::runs::execute(state, &derived, &request, caller).await;
    session.touch();
    result
}

/// `POST /v1/sessions/{id}/fs/{op}`.
pub async fn fs(
    state: &Arc<AppState>,
    tenant: &super::auth::Tenant,
    id: &str,
    op: String,
    request: FsRequest,
) -> Result<serde_json::Value, ApiError> {
    let session = state.sessions.get(&tenant.name, id)?;
    session.touch();
    let policy = state.policy(tenant, &session.record.policy)?;
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
    let result = blocking(move || {
        let root = Root::open(&dir, &guest, quota, max_files)?;
        root.op(&op, &request)
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
        state.append_audit(&tenant.name, Some(id), &[record]);
    }
    result
}

/// Stop idle sessions and purge old idempotency records, every `reap_interval`.
pub async fn reaper(state: Arc<AppState>) {
    let mut tick = tokio::time::interval(state.config.reap_interval);
    let mut last_purge = std::time::Instant::now();
    // Whether the last purge pass stopped before the end of a table: then the next pass runs
    // at the next tick instead of a minute later, so a table that grows faster than one pass a
    // minute reads is still worked through (at most `PURGE_SCAN` records a table a tick).
    let mut purge_unfinished = false;
    loop {
        tick.tick().await;
        for session in state.sessions.idle(crate::audit::now_unix_ms()) {
            tracing::info!(session = %session.record.session_id, "stopping an idle session");
            if let Err(e) = stop(&state, session).await {
                tracing::warn!("reaper: {}", e.body());
            }
        }
        if purge_unfinished || last_purge.elapsed() >= Duration::from_secs(60) {
            last_purge = std::time::Instant::now();
            let s = state.clone();
            purge_unfinished = tokio::task::spawn_blocking(move || {
                let _ = super::idempotency::purge(&s);
                super::idempotency::purge_unfinished(&s)
            })
            .await
            .unwrap_or(false);
        }
    }
}
