//! `POST /v1/apps/{app}/actions`: one action on one session. Actions of a session take turns
//! (a lock per session), so none is lost to a concurrent one; different sessions run in
//! parallel. Within its turn an action reads the session's state (or has `init(env)` make it),
//! runs in a fresh sandbox with a clock and a seed fixed by the session and its sequence
//! number, and, unless it is a dry run or failed, commits the next state, its events and the
//! `Idempotency-Key` record in one transaction before the response is sent. Every action is
//! written to the audit log.

use super::super::errors::{ApiError, docs_url, status_of};
use super::super::runs::Stored;
use super::super::state::AppState;
use super::abi::Loaded;
use super::records::{self, Commit, EventRecord, KeyRecord, SessionState};
use super::{app_key, check_session};
use crate::policy::{Clock, Determinism};
use crate::{Error, Policy, RunOptions};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;
use utoipa::ToSchema;

/// The session of a request without `session_id`.
pub const DEFAULT_SESSION: &str = "default";

/// The body of an action.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ActionRequest {
    /// The action's name, one of the app's `actions`.
    pub action: String,
    /// Its parameters; `{}` when absent.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub params: Option<Value>,
    /// Preview only: run the action, persist nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// Why the caller acts, for the audit log; the action sees it as `env.intent`.
    #[serde(default)]
    pub intent: Option<String>,
    /// The session; `default` when absent.
    #[serde(default)]
    pub session_id: Option<String>,
    /// More of the action's `env` (`now`, an RFC 3339 time, fixes its clock).
    #[serde(default)]
    #[schema(value_type = Object)]
    pub env: Option<Map<String, Value>>,
}

/// Who acts, and with which idempotency key.
pub struct Actor<'a> {
    /// The tenant's name.
    pub tenant: &'a str,
    /// The `Idempotency-Key` header, if any.
    pub key: Option<&'a str>,
}

/// A response and whether it is a replay.
pub struct Reply {
    /// Status and body.
    pub stored: Stored,
    /// Whether an earlier request with the same key made it.
    pub replayed: bool,
}

/// The Unix time in milliseconds of an RFC 3339 `now`.
fn parse_now(now: &Value) -> Result<u64, ApiError> {
    let text = now.as_str().ok_or_else(|| {
        ApiError::invalid("env.now is an RFC 3339 time such as \"2025-01-01T00:00:00Z\"")
    })?;
    let at = humantime::parse_rfc3339_weak(text)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .ok_or_else(|| {
            ApiError::invalid(format!(
                "env.now `{text}` is not an RFC 3339 time such as \"2025-01-01T00:00:00Z\""
            ))
        })?;
    Ok(at.as_millis() as u64)
}

fn rfc3339(unix_ms: u64) -> String {
    humantime::format_rfc3339_millis(std::time::UNIX_EPOCH + Duration::from_millis(unix_ms))
        .to_string()
}

/// The seed of `Math.random` for action `seq` of a session: different for every session and
/// every action, the same for a dry run and the commit of one action.
pub fn seed(session_key: &str, seq: u64) -> u64 {
    let digest = Sha256::new()
        .chain_update(session_key.as_bytes())
        .chain_update(seq.to_le_bytes())
        .finalize();
    u64::from_le_bytes(digest[..8].try_into().unwrap_or_default())
}

/// The app's policy for one call: the tenant's key-value prefix, and the clock and seed.
pub fn call_policy(policy: &Policy, tenant: &str, clock_unix_ms: u64, seed: u64) -> Policy {
    policy
        .with_kv_namespace_prefix(&format!("{tenant}/"))
        .with_determinism(Determinism {
            clock: Clock::Fixed(Duration::from_millis(clock_unix_ms)),
            seed: Some(seed),
        })
}

/// The key of a session in the store.
pub fn session_key(tenant: &str, app: &str, session: &str) -> String {
    format!("{}{session}\n", app_key(tenant, app))
}

/// What one sandbox call of the driver gave.
pub enum Ran {
    /// Its JSON result.
    Value(Value),
    /// The error that ended it.
    Failed(Error),
}

/// Call the driver's `export` with `input` (written as JSON) under `policy`.
pub async fn call(
    state: &Arc<AppState>,
    loaded: &Loaded,
    policy: &Policy,
    export: &str,
    input: &impl Serialize,
    who: (&str, &str),
) -> Result<Ran, ApiError> {
    let options = RunOptions::default()
        .export(export)
        .metadata(json!({"tenant": who.0, "session": who.1, "app": loaded.record.name}));
    let input = serde_json::to_string(input).map_err(|e| Error::Internal {
        detail: format!("an app's input cannot be written as JSON: {e}"),
    })?;
    let permit = state.admission.enter(&state.metrics).await?;
    let outcome = state
        .palisade
        .run_with(policy, &loaded.script, &input, &options)
        .await;
    drop(permit);
    state.metrics.call(&outcome);
    state.audit(who.0, Some(who.1), &outcome);
    Ok(match outcome.result {
        Ok(raw) => Ran::Value(serde_json::from_str(raw.get()).map_err(|e| {
            ApiError::from(Error::Internal {
                detail: format!("the driver's result is not JSON: {e}"),
            })
        })?),
        Err(Error::CapacityExhausted { waited_ms }) => {
            return Err(ApiError::capacity(
                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                waited_ms,
                super::super::admission::RETRY_AFTER_SECONDS,
                "every run slot stayed busy; retry after Retry-After seconds",
            ));
        }
        Err(error) => Ran::Failed(error),
    })
}

/// The response to an action that a limit or an exception ended: the error shape, with the
/// seed's messages for a deadline ("Action timed out") and for fuel ("Fuel exhausted"), and
/// the session's state as it stays.
pub fn failure(error: &Error, state: &Value) -> Stored {
    let mut body = ApiError::from(error.clone()).body();
    let message = match error {
        Error::Timeout { .. } => Some("Action timed out"),
        Error::FuelExhausted { .. } => Some("Fuel exhausted"),
        _ => None,
    };
    if let Some(message) = message {
        body["error"]["detail"] = body["error"]["message"].clone();
        body["error"]["message"] = message.into();
    }
    if let Error::GuestException {
        location: Some(l), ..
    }
    | Error::GuestSyntax {
        location: Some(l), ..
    } = error
    {
        body["error"]["location"] = json!({"line": l.line, "column": l.column});
    }
    body["state"] = state.clone();
    Stored {
        status: status_of(error).as_u16(),
        body: body.to_string(),
    }
}

/// The driver's input for an action; fields in the order `json!` writes them (sorted).
#[derive(Serialize)]
struct ActInput<'a> {
    action: &'a str,
    env: &'a Map<String, Value>,
    params: &'a Value,
    state: &'a Value,
}

/// A successful action's answer; fields in the order `json!` wrote them (sorted), so that the
/// bytes are those of earlier versions.
#[derive(Serialize)]
struct Answer<'a> {
    audit_preview: &'a Value,
    dry_run: bool,
    events: &'a [Value],
    result: &'a Value,
    seq: u64,
    session_id: &'a str,
    state: &'a Value,
    view: &'a Value,
}

/// Run one action for `actor` (see the module's docs).
pub async fn act(
    state: &Arc<AppState>,
    tenant: &super::super::auth::Tenant,
    app: &str,
    body: &[u8],
    key: Option<&str>,
) -> Result<Reply, ApiError> {
    let request: ActionRequest = serde_json::from_slice(body)
        .map_err(|e| ApiError::invalid(format!("the request body is not an action: {e}")))?;
    let loaded = state.apps.get(state, tenant, app).await?;
    if key.is_some_and(|key| {
        key.is_empty()
            || key.len() > super::super::idempotency::MAX_KEY_BYTES
            || key.chars().any(char::is_control)
    }) {
        return Err(ApiError::invalid(
            "an Idempotency-Key has 1 to 255 bytes and no control characters",
        ));
    }
    let session = request
        .session_id
        .clone()
        .unwrap_or_else(|| DEFAULT_SESSION.to_owned());
    check_session(&session)?;
    let policy = state.policy(tenant, &loaded.record.policy)?;
    let skey = session_key(&tenant.name, app, &session);
    let turn = state.apps.turn(&skey);
    let result = {
        let _turn = turn.lock().await;
        let actor = Actor {
            tenant: &tenant.name,
            key,
        };
        in_turn(
            state, &loaded, &policy, &actor, &session, &skey, request, body,
        )
        .await
    };
    state.apps.release(&skey, turn);
    result
}

#[allow(clippy::too_many_arguments)]
async fn in_turn(
    state: &Arc<AppState>,
    loaded: &Loaded,
    policy: &Policy,
    actor: &Actor<'_>,
    session: &str,
    skey: &str,
    mut request: ActionRequest,
    body: &[u8],
) -> Result<Reply, ApiError> {
    let env_dry = request
        .env
        .as_ref()
        .and_then(|e| e.get("dry_run"))
        .is_some_and(|v| v == true);
    let dry_run = request.dry_run || env_dry;
    request.dry_run = dry_run;
    let body_sha256 = crate::record::hex(&Sha256::digest(body));
    // A dry run neither reads nor consumes a key.
    let key_id = match actor.key {
        Some(key) if !dry_run => Some(format!("{skey}{key}")),
        _ => None,
    };
    let store = state.store.clone();
    let (lookup_session, lookup_key) = (skey.to_owned(), key_id.clone());
    let (current, found) = records::blocking(move || {
        let found = match &lookup_key {
            Some(k) => records::key_record(&store, k)?,
            None => None,
        };
        Ok((records::session(&store, &lookup_session)?, found))
    })
    .await?;
    let ttl = state.config.idempotency_ttl.as_millis() as u64;
    let now = crate::audit::now_unix_ms();
    if let Some(record) = found.filter(|r| now.saturating_sub(r.created_unix_ms) < ttl) {
        if record.body_sha256 != body_sha256 {
            return Err(ApiError::from(Error::IdempotencyConflict {
                key: actor.key.unwrap_or_default().to_owned(),
            }));
        }
        audit(state, loaded, actor, session, &request, None, "replayed", 0);
        return Ok(Reply {
            stored: record.response,
            replayed: true,
        });
    }
    let mut current = current;
    let seq = current.as_ref().map_or(0, |s| s.seq) + 1;
    // The state is moved out, not copied: the rest of `current` is all that is read later.
    let previous = current.as_mut().map_or(Value::Null, |s| s.state.take());
    let clock = match request.env.as_ref().and_then(|e| e.get("now")) {
        Some(now) => parse_now(now)?,
        None => current
            .as_ref()
            .map_or(loaded.record.created_unix_ms, |s| s.clock_unix_ms),
    };
    let mut env = request.env.clone().unwrap_or_default();
    env.insert("session_id".into(), session.into());
    env.insert("dry_run".into(), dry_run.into());
    env.insert("now".into(), rfc3339(clock).into());
    if let Some(intent) = &request.intent {
        env.insert("intent".into(), intent.as_str().into());
    }
    let no_params = Value::Object(Map::new());
    // Written straight from borrowed parts (the same JSON `json!` made from copies of them).
    let input = ActInput {
        action: &request.action,
        env: &env,
        params: request.params.as_ref().unwrap_or(&no_params),
        state: &previous,
    };
    let call_policy = call_policy(policy, actor.tenant, clock, seed(skey, seq));
    let ran = call(
        state,
        loaded,
        &call_policy,
        "act",
        &input,
        (actor.tenant, session),
    )
    .await?;
    let mut out = match ran {
        Ran::Value(v) => v,
        Ran::Failed(error) => {
            audit(
                state,
                loaded,
                actor,
                session,
                &request,
                None,
                error.code(),
                seq,
            );
            return Ok(Reply {
                stored: failure(&error, &previous),
                replayed: false,
            });
        }
    };
    let audit_preview = out.get("audit_preview").cloned().unwrap_or(Value::Null);
    if let Some(app_error) = out.get("error").filter(|e| !e.is_null()) {
        let code = app_error
            .get("code")
            .and_then(Value::as_str)
            .unwrap_or("action_error")
            .to_owned();
        let mut answer = json!({
            "state": out["state"],
            "result": out["result"],
            "audit_preview": audit_preview,
            "events": [],
            "error": app_error,
            "view": out["view"],
            "session_id": session,
            "seq": seq - 1,
            "dry_run": dry_run,
        });
        if code == "unknown_action" {
            answer["error"]["docs_url"] = docs_url("invalid_input").into();
        }
        let status = if code == "unknown_action" { 400 } else { 422 };
        audit(
            state,
            loaded,
            actor,
            session,
            &request,
            Some(&audit_preview),
            &code,
            seq,
        );
        return Ok(Reply {
            stored: Stored {
                status,
                body: answer.to_string(),
            },
            replayed: false,
        });
    }
    let no_events = Vec::new();
    let answer = Answer {
        audit_preview: &audit_preview,
        dry_run,
        events: out["events"].as_array().unwrap_or(&no_events),
        result: &out["result"],
        seq: if dry_run { seq - 1 } else { seq },
        session_id: session,
        state: &out["state"],
        view: &out["view"],
    };
    let stored = Stored {
        status: 200,
        body: serde_json::to_string(&answer).map_err(|e| Error::Internal {
            detail: format!("an action's answer cannot be written as JSON: {e}"),
        })?,
    };
    if dry_run {
        audit(
            state,
            loaded,
            actor,
            session,
            &request,
            Some(&audit_preview),
            "dry_run",
            seq,
        );
        return Ok(Reply {
            stored,
            replayed: false,
        });
    }
    // The answer is written: what the commit keeps is moved out of `out`, not copied.
    let mut take = |field: &str| out.get_mut(field).map_or(Value::Null, Value::take);
    let events = match take("events") {
        Value::Array(events) => events,
        _ => Vec::new(),
    };
    let next = take("state");
    let first_event = current.as_ref().map_or(0, |s| s.events) + 1;
    let commit = Commit {
        session_key: skey.to_owned(),
        session: SessionState {
            state: next,
            seq,
            clock_unix_ms: crate::audit::now_unix_ms(),
            events: first_event - 1 + events.len() as u64,
        },
        events: events
            .into_iter()
            .enumerate()
            .map(|(i, event)| EventRecord {
                id: first_event + i as u64,
                event,
            })
            .collect(),
        key: key_id.map(|k| {
            (
                k,
                KeyRecord {
                    body_sha256,
                    created_unix_ms: now,
                    response: stored.clone(),
                },
            )
        }),
    };
    let has_events = !commit.events.is_empty();
    state.apps.commit(&state.store, commit).await?;
    if has_events {
        state.apps.notify();
    }
    audit(
        state,
        loaded,
        actor,
        session,
        &request,
        Some(&audit_preview),
        "committed",
        seq,
    );
    Ok(Reply {
        stored,
        replayed: false,
    })
}

/// One audit line per action: what was asked, what it previewed, and how it ended.
#[allow(clippy::too_many_arguments)]
fn audit(
    state: &AppState,
    loaded: &Loaded,
    actor: &Actor<'_>,
    session: &str,
    request: &ActionRequest,
    audit_preview: Option<&Value>,
    outcome: &str,
    seq: u64,
) {
    state.append_audit_line(&json!({
        "time_unix_ms": crate::audit::now_unix_ms(),
        "capability": "app.action",
        "tenant": actor.tenant,
        "app": loaded.record.name,
        "session": session,
        "action": request.action,
        "params": request.params,
        "intent": request.intent,
        "dry_run": request.dry_run,
        "audit_preview": audit_preview,
        "idempotency_key": actor.key,
        "seq": seq,
        "outcome": outcome,
        "policy": loaded.record.policy,
        "policy_sha256": loaded.policy_sha256,
        "app_sha256": loaded.record.sha256,
    }));
}
