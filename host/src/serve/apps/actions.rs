//! `POST /v1/apps/{app}/actions`: one action on one session. Actions of a session take turns
//! (a lock per session), so none is lost to a concurrent one; different sessions run in
//! parallel. Within its turn an action reads the session's state (or has `init(env)` make it),
//! runs in a fresh sandbox with a clock and a seed fixed by the session and its sequence
//! number, and, unless it is a dry run or failed, commits the next state, its events and the
//! `Idempotency-Key` record in one transaction before the response is sent. Every action is
//! written to the audit log.

use super::super::auth::Tenant;
use super::super::errors::{ApiError, docs_url, status_of};
use super::super::idempotency::{Ledger, Seen};
use super::super::journal::Who;
use super::super::reply::Stored;
use super::super::store::{Lease, Scan, StoreError, Table, Write};
use super::abi::Loaded;
use super::events::MAX_EVENT_BYTES;
use super::records::{self, Commit, EventRecord, SessionState};
use super::{Apps, app_key, check_session};
use crate::policy::{Clock, Determinism};
use crate::{Error, Policy, RunOptions};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
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
    /// Its parameters, any JSON value; `{}` when absent.
    #[serde(default)]
    #[schema(value_type = Option<Value>)]
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
    /// A dry run's `preview`: commit only if this action, run now, does exactly what that
    /// preview showed (else 409 `preview_mismatch`, nothing kept).
    #[serde(default)]
    pub if_preview: Option<String>,
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

/// An action's deadline under the built-in default policy (whose own is 1 s): the action
/// runtime's default wall time.
pub const DEFAULT_ACTION_TIMEOUT: Duration = Duration::from_secs(2);

/// The app's policy for one call: the tenant's key-value prefix, and the clock and seed; under
/// the built-in default policy (exactly `policies/default.toml`), the deadline of
/// [`DEFAULT_ACTION_TIMEOUT`]. A policy the operator wrote keeps its own.
pub fn call_policy(policy: &Policy, tenant: &str, clock_unix_ms: u64, seed: u64) -> Policy {
    static BUILTIN: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        crate::hex::sha256(crate::policy::DEFAULT_POLICY_TOML.as_bytes())
    });
    let raised;
    let policy = if policy.sha256() == *BUILTIN {
        raised = policy.with_timeout(DEFAULT_ACTION_TIMEOUT);
        &raised
    } else {
        policy
    };
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
    /// Its JSON result, and its key-value writes, held (not yet in the store).
    Value(Value, crate::kv::KvWrites),
    /// The error that ended it (its writes are dropped).
    Failed(Error),
}

impl Apps {
    /// Call the driver's `export` with `input` (written as JSON) under `policy` for `who`, in a
    /// key-value transaction: the call's key-value writes are held in its answer, and reach
    /// the store only when a commit applies them. A result the host cannot read back (nested
    /// past serde's 128 levels) is the script's `bad_output`, not the server's fault.
    pub(super) async fn call(
        &self,
        loaded: &Loaded,
        policy: &Policy,
        export: &str,
        input: &impl Serialize,
        who: &Who<'_>,
    ) -> Result<Ran, ApiError> {
        let options = RunOptions::default()
            .export(export)
            .kv_transaction()
            .metadata(json!({"tenant": who.tenant, "session": who.session, "app": who.app}));
        let input = serde_json::to_string(input).map_err(|e| Error::Internal {
            detail: format!("an app's input cannot be written as JSON: {e}"),
        })?;
        let outcome = self
            .parts
            .runner
            .run(policy, &loaded.script, &input, options, who)
            .await?;
        let writes = outcome.kv_writes.unwrap_or_default();
        Ok(match outcome.result {
            Ok(raw) => match serde_json::from_str(raw.get()) {
                Ok(value) => Ran::Value(value, writes),
                Err(e) => Ran::Failed(Error::BadOutput {
                    detail: format!("the app's answer cannot be read back: {e}"),
                }),
            },
            Err(error) => Ran::Failed(error),
        })
    }

    /// Where a call on `skey` stands: its stored state (if any), and the policy, clock and
    /// sequence number of the next call. `clock` overrides the session's clock.
    pub(super) async fn standing(
        &self,
        loaded: &Loaded,
        tenant: &Tenant,
        skey: &str,
        clock: Option<u64>,
    ) -> Result<Standing, ApiError> {
        let store = self.parts.store.clone();
        let lookup = skey.to_owned();
        let current = records::blocking(move || records::session(&store, &lookup)).await?;
        let clock = clock.unwrap_or_else(|| {
            current
                .as_ref()
                .map_or(loaded.record.created_unix_ms, |s| s.clock_unix_ms)
        });
        let seq = current.as_ref().map_or(0, |s| s.seq);
        let policy = self
            .parts
            .policies
            .policy_for(tenant, &loaded.record.policy)?;
        Ok(Standing {
            policy: call_policy(&policy, &tenant.name, clock, seed(skey, seq + 1)),
            view_policy: call_policy(&policy, &tenant.name, clock, seed(skey, seq)),
            clock,
            seq,
            current,
        })
    }
}

/// A session's place before a call (`Apps::standing`).
pub struct Standing {
    /// The policy of the next action (clock and seed fixed for `seq + 1`).
    pub policy: Policy,
    /// The policy of a view or init at this point (seed of `seq`).
    pub view_policy: Policy,
    /// The clock of the next call.
    pub clock: u64,
    /// The last committed action's number.
    pub seq: u64,
    /// The stored state, if the session has one.
    pub current: Option<SessionState>,
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

/// 422 `output_too_large` for an action with an event over [`MAX_EVENT_BYTES`]: nothing of it
/// is kept, and no policy change would let it through.
fn event_too_large(size: usize, state: &Value) -> Reply {
    let error = Error::OutputTooLarge {
        size: size as u64,
        limit: crate::policy::ByteSize(MAX_EVENT_BYTES as u64),
    };
    let mut body = ApiError::from(error)
        .fix(Value::Null)
        .note(format!(
            "an event is at most {MAX_EVENT_BYTES} bytes of JSON; keep large data in the state \
             or the result"
        ))
        .body();
    body["state"] = state.clone();
    Reply {
        stored: Stored {
            status: 422,
            body: body.to_string(),
        },
        replayed: false,
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
    preview: &'a str,
    result: &'a Value,
    seq: u64,
    session_id: &'a str,
    state: &'a Value,
    view: &'a Value,
}

/// What a preview's digest covers: the session's sequence number the action ran on, and the
/// state, result, events and audit preview it produced (fields sorted, as JSON writes them).
#[derive(Serialize)]
struct Previewed<'a> {
    audit_preview: &'a Value,
    events: &'a [Value],
    result: &'a Value,
    seq: u64,
    state: &'a Value,
}

/// The SHA-256 (hex) of what an action produced: equal for a dry run and the commit that
/// does exactly the same on the same state.
fn preview(produced: &Previewed<'_>) -> String {
    let mut hasher = Sha256::new();
    // Writing JSON into a hasher cannot fail: the values came from JSON.
    let _ = serde_json::to_writer(&mut hasher, produced);
    crate::hex::hex(&hasher.finalize())
}

/// 409 `preview_mismatch`: the commit would not do what the dry run previewed.
fn mismatch(expected: &str, actual: &str) -> Reply {
    let body = json!({"error": {
        "code": "preview_mismatch",
        "type": "client",
        "message": "the action, run now, does not do what the preview showed: nothing was kept",
        "docs_url": docs_url("preview_mismatch"),
        "fix": null,
        "fix_note": "dry-run the action again, review its new preview, and commit with that one",
        "retryable": false,
        "if_preview": expected,
        "preview": actual,
    }});
    Reply {
        stored: Stored {
            status: 409,
            body: body.to_string(),
        },
        replayed: false,
    }
}

/// The most bytes of JSON an action's line keeps of each value the caller or the app chose
/// (`action`, `params`, `intent`, `audit_preview`): a request's body may be 32 MiB, and a line
/// is written for refused actions too.
pub const AUDIT_VALUE_BYTES: usize = 4096;

/// `value` as an audit line keeps it: whole up to [`AUDIT_VALUE_BYTES`] of JSON, else its size
/// and SHA-256 and a prefix of its JSON.
fn bounded(value: Option<&Value>) -> Value {
    let Some(value) = value else {
        return Value::Null;
    };
    let text = value.to_string();
    if text.len() <= AUDIT_VALUE_BYTES {
        return value.clone();
    }
    let mut end = AUDIT_VALUE_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    json!({
        "truncated": true,
        "bytes": text.len(),
        "sha256": crate::hex::sha256(text.as_bytes()),
        "prefix": &text[..end],
    })
}

/// One audit line per action: what was asked, what it previewed, and how it ended.
#[derive(Serialize)]
struct ActionLine<'a> {
    time_unix_ms: u64,
    capability: &'static str,
    tenant: &'a str,
    app: &'a str,
    session: &'a str,
    action: Value,
    params: Value,
    intent: Value,
    dry_run: bool,
    audit_preview: Value,
    idempotency_key: Option<&'a str>,
    seq: u64,
    outcome: &'a str,
    policy: &'a str,
    policy_sha256: &'a str,
    app_sha256: &'a str,
}

/// One action in its session's turn, taken in named steps: [`ActionTurn::open`] (state and
/// key record), [`ActionTurn::run`] (input and call), then [`ActionTurn::answer`] and, for a
/// commit, [`ActionTurn::commit`].
struct ActionTurn<'a> {
    apps: &'a Apps,
    loaded: &'a Loaded,
    tenant: &'a Tenant,
    key: Option<&'a str>,
    session: &'a str,
    skey: &'a str,
    request: ActionRequest,
    hash: String,
    /// The session's lease: its fence goes with the commit.
    lease: &'a Lease,
}

/// What a call of an action gave, with where the session stood before it.
struct Called {
    out: Value,
    previous: Value,
    standing: Standing,
    /// The call's key-value writes: applied by a commit, dropped by anything else.
    kv: crate::kv::KvWrites,
}

impl Apps {
    /// Run one action of `tenant` on `app` (see the module's docs).
    pub async fn act(
        &self,
        tenant: &Tenant,
        app: &str,
        body: &[u8],
        key: Option<&str>,
    ) -> Result<Reply, ApiError> {
        let mut request: ActionRequest = serde_json::from_slice(body)
            .map_err(|e| ApiError::invalid(format!("the request body is not an action: {e}")))?;
        let loaded = self.get(tenant, app).await?;
        loaded.check_params(&request.action, request.params.as_ref())?;
        let session = request
            .session_id
            .clone()
            .unwrap_or_else(|| DEFAULT_SESSION.to_owned());
        check_session(&session)?;
        let env_dry = request
            .env
            .as_ref()
            .and_then(|e| e.get("dry_run"))
            .is_some_and(|v| v == true);
        request.dry_run = request.dry_run || env_dry;
        let skey = session_key(&tenant.name, app, &session);
        let hash = Ledger::hash(body);
        // This server's turn on the session, then the store's lease on it (replicas sharing
        // a store take turns through it; one server alone holds it at once). A dry run writes
        // nothing and takes no lease.
        self.turns
            .run(&skey, async {
                let lease = if request.dry_run {
                    Lease::none()
                } else {
                    self.parts
                        .store
                        .lease(&format!("app\n{skey}"), &self.parts.replica)
                        .await?
                        .ok_or_else(|| Error::SessionBusy {
                            id: session.clone(),
                        })?
                };
                let turn = ActionTurn {
                    apps: self,
                    loaded: &loaded,
                    tenant,
                    key,
                    session: &session,
                    skey: &skey,
                    request,
                    hash,
                    lease: &lease,
                };
                let reply = turn.take().await;
                lease.release().await;
                reply
            })
            .await
    }
}

impl ActionTurn<'_> {
    async fn take(self) -> Result<Reply, ApiError> {
        if let Some(replayed) = self.replay().await? {
            return Ok(replayed);
        }
        // A commit with a key keeps its record for the TTL, in the tenant's account: past its
        // quota the action does not run (a replay, above, always answers).
        if self.key.is_some() && !self.request.dry_run {
            self.apps.parts.ledger.admit(&self.tenant.name).await?;
        }
        let ran = match self.run().await? {
            Ok(ran) => ran,
            Err(failed) => return Ok(failed),
        };
        self.answer(ran).await
    }

    /// The key's stored response, when this is a replay (a dry run neither reads nor
    /// consumes a key).
    async fn replay(&self) -> Result<Option<Reply>, ApiError> {
        let Some(key) = self.key.filter(|_| !self.request.dry_run) else {
            return Ok(None);
        };
        let store = self.apps.parts.store.clone();
        let id = format!("{}{key}", self.skey);
        let found = records::blocking(move || records::key_record(&store, &id)).await?;
        match self
            .apps
            .parts
            .ledger
            .judge(found, key, &self.hash, crate::audit::now_unix_ms())?
        {
            Seen::Fresh => Ok(None),
            Seen::Replay(stored) => {
                self.line(None, "replayed", 0);
                Ok(Some(Reply {
                    stored,
                    replayed: true,
                }))
            }
        }
    }

    /// Call the action on the session's state; a call a limit or an exception ended is the
    /// `Err` reply, with the state as it stays.
    async fn run(&self) -> Result<Result<Called, Reply>, ApiError> {
        let clock = match self.request.env.as_ref().and_then(|e| e.get("now")) {
            Some(now) => Some(parse_now(now)?),
            None => None,
        };
        let mut standing = self
            .apps
            .standing(self.loaded, self.tenant, self.skey, clock)
            .await?;
        let previous = standing
            .current
            .as_mut()
            .map_or(Value::Null, |s| s.state.take());
        let mut env = self.request.env.clone().unwrap_or_default();
        env.insert("session_id".into(), self.session.into());
        env.insert("dry_run".into(), self.request.dry_run.into());
        env.insert("now".into(), rfc3339(standing.clock).into());
        if let Some(intent) = &self.request.intent {
            env.insert("intent".into(), intent.as_str().into());
        }
        let no_params = Value::Object(Map::new());
        let input = ActInput {
            action: &self.request.action,
            env: &env,
            params: self.request.params.as_ref().unwrap_or(&no_params),
            state: &previous,
        };
        let who = self.who();
        let ran = self
            .apps
            .call(self.loaded, &standing.policy, "act", &input, &who)
            .await?;
        Ok(match ran {
            Ran::Value(out, kv) => Ok(Called {
                out,
                previous,
                standing,
                kv,
            }),
            Ran::Failed(error) => {
                self.line(None, error.code(), standing.seq + 1);
                Err(Reply {
                    stored: failure(&error, &previous),
                    replayed: false,
                })
            }
        })
    }

    /// The reply to an action that ran: the app's own error, a dry run's preview, or a commit.
    async fn answer(&self, ran: Called) -> Result<Reply, ApiError> {
        let seq = ran.standing.seq + 1;
        let audit_preview = ran.out.get("audit_preview").cloned().unwrap_or(Value::Null);
        if let Some(app_error) = ran.out.get("error").filter(|e| !e.is_null()) {
            return Ok(self.app_error(&ran.out, app_error, &audit_preview, seq));
        }
        let dry_run = self.request.dry_run;
        let no_events = Vec::new();
        let events = ran.out["events"].as_array().unwrap_or(&no_events);
        if let Some(size) = events
            .iter()
            .map(|e| e.to_string().len())
            .find(|n| *n > MAX_EVENT_BYTES)
        {
            self.line(Some(&audit_preview), "output_too_large", seq);
            return Ok(event_too_large(size, &ran.previous));
        }
        let preview = preview(&Previewed {
            audit_preview: &audit_preview,
            events,
            result: &ran.out["result"],
            seq: ran.standing.seq,
            state: &ran.out["state"],
        });
        if let Some(expected) = self.request.if_preview.as_deref().filter(|_| !dry_run)
            && expected != preview
        {
            self.line(Some(&audit_preview), "preview_mismatch", seq);
            return Ok(mismatch(expected, &preview));
        }
        let answer = Answer {
            audit_preview: &audit_preview,
            dry_run,
            events,
            preview: &preview,
            result: &ran.out["result"],
            seq: if dry_run { seq - 1 } else { seq },
            session_id: self.session,
            state: &ran.out["state"],
            view: &ran.out["view"],
        };
        let stored = Stored {
            status: 200,
            body: serde_json::to_string(&answer).map_err(|e| Error::Internal {
                detail: format!("an action's answer cannot be written as JSON: {e}"),
            })?,
        };
        if dry_run {
            self.line(Some(&audit_preview), "dry_run", seq);
        } else {
            self.commit(ran, &stored).await?;
            self.line(Some(&audit_preview), "committed", seq);
        }
        Ok(Reply {
            stored,
            replayed: false,
        })
    }

    /// The reply to an action whose app answered an `error`: 400 for an action the app does
    /// not have, 422 otherwise; nothing is kept.
    fn app_error(&self, out: &Value, app_error: &Value, audit_preview: &Value, seq: u64) -> Reply {
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
            "session_id": self.session,
            "seq": seq - 1,
            "dry_run": self.request.dry_run,
        });
        let unknown = code == "unknown_action";
        if unknown {
            let error = &mut answer["error"];
            error["docs_url"] = docs_url("unknown_action").into();
            error["fix"] = Value::Null;
            error["fix_note"] = format!(
                "send one of the app's actions: {}",
                self.loaded.record.actions.join(", ")
            )
            .into();
            error["retryable"] = false.into();
        }
        self.line(Some(audit_preview), &code, seq);
        Reply {
            stored: Stored {
                status: if unknown { 400 } else { 422 },
                body: answer.to_string(),
            },
            replayed: false,
        }
    }

    /// Keep the next state, its events and the key's record in one transaction, then wake the
    /// event streams. A commit that creates its session counts the tenant's sessions and writes
    /// in one turn of the tenant's, on this server and (a lease, whose fence goes with the
    /// commit) across replicas: concurrent creations cannot pass the cap together.
    async fn commit(&self, ran: Called, stored: &Stored) -> Result<(), ApiError> {
        if ran.standing.current.is_some() {
            return self.write(ran, stored, None).await;
        }
        let turn = format!("app-sessions\n{}", self.tenant.name);
        self.apps
            .turns
            .run(&turn, async {
                let cap = self
                    .apps
                    .parts
                    .store
                    .lease(&turn, &self.apps.parts.replica)
                    .await?
                    .ok_or_else(|| Error::SessionBusy {
                        id: self.session.to_owned(),
                    })?;
                let written = match self.room_for_a_session().await {
                    Ok(()) => self.write(ran, stored, cap.fence()).await,
                    Err(full) => Err(full),
                };
                cap.release().await;
                written
            })
            .await
    }

    /// [`ActionTurn::commit`]'s write, with the tenant's fence when it creates the session.
    async fn write(
        &self,
        mut ran: Called,
        stored: &Stored,
        tenant_fence: Option<Write>,
    ) -> Result<(), ApiError> {
        let seq = ran.standing.seq + 1;
        let mut take = |field: &str| ran.out.get_mut(field).map_or(Value::Null, Value::take);
        let events = match take("events") {
            Value::Array(events) => events,
            _ => Vec::new(),
        };
        let next = take("state");
        let first_event = ran.standing.current.as_ref().map_or(0, |s| s.events) + 1;
        let commit = Commit {
            session_key: self.skey.to_owned(),
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
            key: self.key.map(|k| {
                (
                    format!("{}{k}", self.skey),
                    Ledger::record(self.hash.clone(), stored),
                )
            }),
            fences: self.lease.fence().into_iter().chain(tenant_fence).collect(),
        };
        let has_events = !commit.events.is_empty();
        drop(ran.previous);
        // The call's key-value writes first, then its state, events and key record: a failed
        // apply keeps nothing.
        self.apps.parts.runner.apply_kv(ran.kv).await?;
        self.apps.commit(commit).await?;
        if has_events {
            self.apps.notify();
        }
        Ok(())
    }

    /// Whether the tenant may keep one more app session: at most its key's `max_sessions`, or
    /// the server's, over all its apps (each kept session holds a state record and its events).
    async fn room_for_a_session(&self) -> Result<(), ApiError> {
        let max = self
            .tenant
            .max_sessions
            .unwrap_or(self.apps.parts.max_sessions);
        let store = self.apps.parts.store.clone();
        let prefix = format!("{}\n", self.tenant.name);
        let held = records::blocking(move || {
            let scan = Scan {
                limit: max,
                ..Scan::prefix(&prefix)
            };
            Ok::<_, StoreError>(store.scan(Table::AppSessions, scan)?.len())
        })
        .await?;
        if held >= max {
            return Err(ApiError::capacity(
                axum::http::StatusCode::TOO_MANY_REQUESTS,
                0,
                super::super::admission::RETRY_AFTER_SECONDS,
                &format!(
                    "your key holds its maximum of {max} app sessions; act on an existing \
                     session, or unload an app (DELETE /v1/apps/APP) to free its sessions"
                ),
            ));
        }
        Ok(())
    }

    fn who(&self) -> Who<'_> {
        Who {
            tenant: &self.tenant.name,
            session: Some(self.session),
            app: Some(&self.loaded.record.name),
        }
    }

    /// Write the action's line to the audit log.
    fn line(&self, audit_preview: Option<&Value>, outcome: &str, seq: u64) {
        let intent = self
            .request
            .intent
            .as_ref()
            .map(|i| Value::String(i.clone()));
        self.apps.parts.journal.line(&ActionLine {
            time_unix_ms: crate::audit::now_unix_ms(),
            capability: "app.action",
            tenant: &self.tenant.name,
            app: &self.loaded.record.name,
            session: self.session,
            action: bounded(Some(&Value::String(self.request.action.clone()))),
            params: bounded(self.request.params.as_ref()),
            intent: bounded(intent.as_ref()),
            dry_run: self.request.dry_run,
            audit_preview: bounded(audit_preview),
            idempotency_key: self.key,
            seq,
            outcome,
            policy: &self.loaded.record.policy,
            policy_sha256: &self.loaded.policy_sha256,
            app_sha256: &self.loaded.record.sha256,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Under the built-in default policy (1 s) an action's deadline is the action runtime's
    /// 2 s; under a policy the operator wrote, its own, lower or higher.
    #[test]
    fn actions_get_two_seconds_under_the_builtin_default_only() {
        let builtin = Policy::builtin_default();
        assert_eq!(builtin.limits().timeout.0, Duration::from_secs(1));
        let action = call_policy(&builtin, "t", 0, 1);
        assert_eq!(action.limits().timeout.0, DEFAULT_ACTION_TIMEOUT);
        assert_eq!(
            action.sha256(),
            builtin.sha256(),
            "still named as the default"
        );
        for timeout in ["500ms", "5s"] {
            let own =
                Policy::from_toml(&format!("[limits]\ntimeout = \"{timeout}\"\n"), None).unwrap();
            let action = call_policy(&own, "t", 0, 1);
            assert_eq!(action.limits().timeout, own.limits().timeout, "{timeout}");
        }
    }
}
