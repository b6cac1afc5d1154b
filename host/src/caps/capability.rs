//! `palisade:sandbox/capability`: host capabilities that the embedder registers as async Rust
//! handlers and the policy grants by name. Every check happens here, before a handler runs:
//! the name is allowed, the per-call budget has room, the payload fits and matches the schema.

use super::forward::{self, ResponseBudget};
use crate::Fix;
use crate::audit::{AuditLog, Decision, Refusal, truncate};
use crate::call::CallState;
use crate::engine::bindings::palisade::sandbox::capability::{
    self, CallError, Denial, NetworkFailure,
};
use crate::policy::{ByteSize, Capabilities, Policy};
use crate::record::{CapabilityEvent, Tape, event_bytes};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;
use wasmtime::component::Resource;
use wasmtime_wasi::p2::{DynPollable, Pollable};

/// What a capability handler returns: its JSON result, or a message for the script.
pub type CapabilityFuture = Pin<Box<dyn Future<Output = Result<serde_json::Value, String>> + Send>>;

/// Capability names longer than this are refused unread: names are copied into audit records
/// and errors, and a script could otherwise make each refusal pin megabytes of host memory.
const MAX_NAME_BYTES: usize = 128;

/// A registered handler: it gets the call's context and the payload.
pub(crate) type Handler =
    Arc<dyn Fn(crate::CallContext, serde_json::Value) -> CapabilityFuture + Send + Sync>;

/// Who is calling a capability: handed to a handler registered with
/// [`Builder::capability_with_context`](crate::Builder::capability_with_context), and sent to
/// a `forward` URL as `palisade-call-id`, `palisade-capability`, `palisade-policy`,
/// `palisade-policy-sha256` and `palisade-metadata` headers.
#[derive(Debug, Clone, Default)]
pub struct CallContext {
    /// A fresh id for each call (16 hex digits), also in the call's log span.
    pub call_id: String,
    /// The capability being called.
    pub capability: String,
    /// The name of the policy that governs the call.
    pub policy: String,
    /// The SHA-256 of that policy's text.
    pub policy_sha256: String,
    /// What the embedder attached to the call ([`RunOptions::metadata`](crate::RunOptions)):
    /// an actor id, a tenant, a session.
    pub metadata: Option<Arc<serde_json::Value>>,
    /// Whether the payload is the list of the call's arguments (`maia.render(id, view)`, a
    /// call with several), rather than its one argument (`maia.do(x)`); sent to `forward`
    /// URLs as `palisade-arguments: list`.
    pub argument_list: bool,
}

/// Polls a handler's future and turns a panic into an error: a handler that panics ends its
/// own call (as `internal`), never the host.
struct CatchPanic(CapabilityFuture);

impl Future for CatchPanic {
    type Output = Result<Result<serde_json::Value, String>, String>;

    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let inner = &mut self.0;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| inner.as_mut().poll(cx))) {
            Ok(poll) => poll.map(Ok),
            Err(panic) => std::task::Poll::Ready(Err(panic_message(&*panic))),
        }
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_owned())
}

/// Capabilities of one call: the policy's grants, the embedder's handlers, usage so far.
pub(crate) struct CapabilityState {
    grants: Option<Arc<Capabilities>>,
    handlers: Arc<HashMap<String, Handler>>,
    calls: HashMap<String, u32>,
    pub audit: AuditLog,
    tape: Tape,
    /// What the call's forwarded responses may still take of the host's memory.
    responses: ResponseBudget,
    /// Who is calling, for handlers and forwarded calls.
    context: crate::CallContext,
    /// The call's `limits.memory`, which that budget starts from.
    memory: ByteSize,
}

/// Who answers an allowed call.
enum Target {
    /// The embedder's Rust handler.
    Handler(Handler),
    /// The rule's `forward` URL, with its `max_response`.
    Forward { url: String, max_response: ByteSize },
}

/// A capability call in flight: the handler's future, then its result until the guest takes it.
pub struct PendingCall {
    state: Pending,
    /// Set when the handler panicked: taking the result then ends the call as `internal`.
    panicked: Arc<std::sync::OnceLock<String>>,
    /// For a forwarded call: the budget its response was taken from, given back when the
    /// guest takes the response (or drops the call), since the host no longer holds it then.
    budget: Option<ResponseBudget>,
}

enum Pending {
    Running(Pin<Box<dyn Future<Output = Result<String, CallError>> + Send>>),
    Done(Result<String, CallError>),
    Taken,
}

impl Drop for PendingCall {
    fn drop(&mut self) {
        self.release();
    }
}

impl PendingCall {
    /// Give back what a forwarded response took from the call's budget, once the host no
    /// longer holds it.
    fn release(&mut self) {
        if let Pending::Done(Ok(text)) = &self.state
            && let Some(budget) = self.budget.take()
        {
            budget.give_back(text.len() as u64);
        }
    }

    fn done(result: Result<String, CallError>) -> Self {
        Self {
            state: Pending::Done(result),
            panicked: Arc::default(),
            budget: None,
        }
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for PendingCall {
    async fn ready(&mut self) {
        if let Pending::Running(future) = &mut self.state {
            let result = future.await;
            self.state = Pending::Done(result);
        }
    }
}

impl CapabilityState {
    pub fn new(
        policy: &Policy,
        handlers: Arc<HashMap<String, Handler>>,
        audit: AuditLog,
        tape: Tape,
        context: crate::CallContext,
    ) -> Self {
        Self {
            context,
            grants: policy.capabilities().cloned(),
            handlers,
            calls: HashMap::new(),
            audit,
            tape,
            responses: ResponseBudget::new(policy.limits().memory.0),
            memory: policy.limits().memory,
        }
    }

    fn deny(
        &mut self,
        name: &str,
        rule: String,
        reason: String,
        fix: Option<Fix>,
        started: Instant,
        bytes_in: u64,
    ) -> CallError {
        CallError::Denied(self.audit.deny(
            "capability",
            name,
            name,
            &rule,
            &reason,
            fix,
            started,
            bytes_in,
        ))
    }

    /// Record a call that failed without a policy refusal; the script gets a `CapabilityError`.
    fn fail(
        &mut self,
        name: &str,
        decision: Decision,
        rule: &str,
        started: Instant,
        bytes_in: u64,
        message: String,
    ) -> CallError {
        self.audit.record(
            "capability",
            name,
            decision,
            rule,
            started,
            (bytes_in, 0),
            Some(message.clone()),
        );
        CallError::Failed(message)
    }

    /// Check a call against the policy and start its handler; when recording, the result
    /// goes to the transcript, and when replaying, the recorded result is the answer.
    fn start(&mut self, name: String, payload: String, argument_list: bool) -> PendingCall {
        if let Some(replay) = self.tape.replaying() {
            let event = replay.capability();
            if let Err(refused) = self.count_replayed(&name) {
                return PendingCall::done(Err(refused));
            }
            return PendingCall::done(replayed(event, &name, &self.audit));
        }
        let mut slot = None;
        self.tape.record_sized(event_bytes([name.as_str()]), |t| {
            slot = Some(t.capabilities.len());
            t.capabilities.push(CapabilityEvent {
                name: name.clone(),
                outcome: "pending".into(),
                value: String::new(),
            });
        });
        let name_kept = name.clone();
        let mut pending = self.start_live(name, payload, argument_list);
        if let Some(slot) = slot {
            let tape = self.tape.clone();
            let name = name_kept;
            let state = std::mem::replace(&mut pending.state, Pending::Taken);
            let future = async move {
                let result = match state {
                    Pending::Running(future) => future.await,
                    Pending::Done(result) => result,
                    Pending::Taken => Err(CallError::Failed("no result".into())),
                };
                let event = recorded(&name, &result);
                tape.record_sized(event_bytes([event.value.as_str()]), |t| {
                    t.capabilities[slot] = event
                });
                result
            };
            pending.state = Pending::Running(Box::pin(future));
        }
        pending
    }

    fn start_live(&mut self, name: String, payload: String, argument_list: bool) -> PendingCall {
        let started = Instant::now();
        let bytes_in = payload.len() as u64;
        match self.check(&name, &payload, started, bytes_in) {
            Err(error) => PendingCall::done(Err(error)),
            Ok((target, value, key)) => {
                let audit = self.audit.clone();
                let memory = self.memory;
                let budget = self.responses.clone();
                let forwarded = matches!(target, Target::Forward { .. }).then(|| budget.clone());
                let context = crate::CallContext {
                    capability: name.clone(),
                    argument_list,
                    ..self.context.clone()
                };
                let panicked: Arc<std::sync::OnceLock<String>> = Arc::default();
                let panic_flag = panicked.clone();
                let future = async move {
                    let result = match target {
                        Target::Handler(handler) => {
                            // The handler runs inside the call: a panic while making or polling
                            // its future ends this call only.
                            let made =
                                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                    handler(context, value)
                                }));
                            let answer = match made {
                                Ok(future) => CatchPanic(future).await,
                                Err(panic) => Err(panic_message(&*panic)),
                            };
                            match answer {
                                Ok(answer) => answer.and_then(|v| {
                                    serde_json::to_string(&v).map_err(|e| e.to_string())
                                }),
                                Err(panic) => {
                                    let _ = panic_flag.set(panic);
                                    Err("the capability handler failed".to_owned())
                                }
                            }
                        }
                        Target::Forward { url, max_response } => {
                            match forward::call(&url, value, max_response.0, &budget, &context)
                                .await
                            {
                                Ok(text) => Ok(text),
                                Err(forward::Failure::Failed(message)) => Err(message),
                                Err(refused) => {
                                    let (rule, reason, fix) =
                                        too_large(&key, refused, max_response, memory);
                                    return Err(CallError::Denied(audit.deny(
                                        "capability",
                                        &name,
                                        &name,
                                        &rule,
                                        &reason,
                                        fix,
                                        started,
                                        bytes_in,
                                    )));
                                }
                            }
                        }
                    };
                    let (bytes_out, error) = match &result {
                        Ok(text) => (text.len() as u64, None),
                        Err(message) => (0, Some(message.clone())),
                    };
                    audit.record(
                        "capability",
                        &name,
                        Decision::Allow,
                        &key,
                        started,
                        (bytes_in, bytes_out),
                        error,
                    );
                    result.map_err(CallError::Failed)
                };
                PendingCall {
                    state: Pending::Running(Box::pin(future)),
                    panicked,
                    budget: forwarded,
                }
            }
        }
    }

    /// Count a call of a granted capability against its `max_calls`.
    fn count_call(
        &mut self,
        name: &str,
        max_calls: u32,
        key: &str,
        started: Instant,
        bytes_in: u64,
    ) -> Result<(), CallError> {
        let used = self.calls.entry(name.to_owned()).or_insert(0);
        *used = used.saturating_add(1);
        if *used <= max_calls {
            return Ok(());
        }
        let reason = format!("more than {max_calls} calls in one script call");
        let fix = Fix {
            key: format!("{key}.max_calls"),
            value: (max_calls.saturating_mul(2)).to_string(),
        };
        Err(self.deny(
            name,
            format!("{key}.max_calls"),
            reason,
            Some(fix),
            started,
            bytes_in,
        ))
    }

    /// A replayed call of a capability this policy grants counts against its `max_calls`, as
    /// it did when recorded: a transcript cannot answer more calls than the policy allows.
    fn count_replayed(&mut self, name: &str) -> Result<(), CallError> {
        let Some(max_calls) = self
            .grants
            .as_ref()
            .and_then(|g| g.allow.get(name))
            .map(|rule| rule.max_calls)
        else {
            return Ok(());
        };
        let key = format!("capabilities.allow.{}", toml_key(name));
        self.count_call(name, max_calls, &key, Instant::now(), 0)
    }

    /// Every policy check, in order; the handler to run with the parsed payload.
    fn check(
        &mut self,
        name: &str,
        payload: &str,
        started: Instant,
        bytes_in: u64,
    ) -> Result<(Target, serde_json::Value, String), CallError> {
        let name = name.to_owned();
        if name.len() > MAX_NAME_BYTES {
            let short = truncate(&name, MAX_NAME_BYTES);
            let reason = format!("capability names have at most {MAX_NAME_BYTES} bytes");
            return Err(self.deny(
                &short,
                "capabilities.allow".into(),
                reason,
                None,
                started,
                bytes_in,
            ));
        }
        let key = format!("capabilities.allow.{}", toml_key(&name));
        let Some(rule) = self
            .grants
            .as_ref()
            .and_then(|g| g.allow.get(&name))
            .cloned()
        else {
            let reason = format!("`{name}` is not in capabilities.allow");
            let fix = Fix {
                key: key.clone(),
                value: "{}".into(),
            };
            return Err(self.deny(
                &name,
                "capabilities.allow".into(),
                reason,
                Some(fix),
                started,
                bytes_in,
            ));
        };
        self.count_call(&name, rule.max_calls, &key, started, bytes_in)?;
        if bytes_in > rule.max_payload.0 {
            // Payload caps go up to 16 MiB; past that no policy change helps.
            let fix = (bytes_in <= 16 << 20).then(|| Fix {
                key: format!("{key}.max_payload"),
                value: format!(
                    "\"{}\"",
                    ByteSize(bytes_in.next_power_of_two().min(16 << 20))
                ),
            });
            let reason = format!(
                "the payload is {bytes_in} bytes, over the {} limit",
                rule.max_payload
            );
            return Err(self.deny(
                &name,
                format!("{key}.max_payload"),
                reason,
                fix,
                started,
                bytes_in,
            ));
        }
        let value: serde_json::Value = match serde_json::from_str(payload) {
            Ok(value) => value,
            Err(e) => {
                let message = format!("the payload is not JSON: {e}");
                return Err(self.fail(&name, Decision::Deny, &key, started, bytes_in, message));
            }
        };
        if let Some(problem) = rule.schema.as_ref().and_then(|s| s.check(&value)) {
            let reason = format!("the payload does not match the schema: {problem}");
            return Err(self.deny(
                &name,
                format!("{key}.schema"),
                reason,
                None,
                started,
                bytes_in,
            ));
        }
        let target = match (self.handlers.get(&name), &rule.forward) {
            (Some(handler), _) => Target::Handler(handler.clone()),
            (None, Some(url)) => Target::Forward {
                url: url.clone(),
                max_response: rule.max_response,
            },
            (None, None) => {
                let message = format!("capability `{name}` has no handler in this host");
                return Err(self.fail(&name, Decision::Allow, &key, started, bytes_in, message));
            }
        };
        Ok((target, value, key))
    }
}

/// The rule, reason and fix of a forwarded response refused for its size.
fn too_large(
    key: &str,
    refused: forward::Failure,
    max_response: ByteSize,
    memory: ByteSize,
) -> (String, String, Option<Fix>) {
    match refused {
        forward::Failure::TooLarge { size } => (
            format!("{key}.max_response"),
            format!("the response is at least {size} bytes, over the {max_response} limit"),
            // Response caps go up to 16 MiB; past that no policy change helps.
            (size <= 16 << 20).then(|| Fix {
                key: format!("{key}.max_response"),
                value: format!("\"{}\"", ByteSize(size.next_power_of_two().min(16 << 20))),
            }),
        ),
        _ => (
            "limits.memory".to_owned(),
            format!(
                "this call's forwarded responses together passed its {memory} memory limit, \
                 which bounds what the host holds for it"
            ),
            None,
        ),
    }
}

/// A result as a transcript records it.
fn recorded(name: &str, result: &Result<String, CallError>) -> CapabilityEvent {
    let (outcome, value) = match result {
        Ok(text) => ("ok", text.clone()),
        Err(CallError::Denied(d)) => (
            "denied",
            serde_json::json!({
                "capability": d.capability, "rule": d.rule, "reason": d.reason, "fix": d.fix,
            })
            .to_string(),
        ),
        Err(CallError::Failed(message)) => ("failed", message.clone()),
    };
    CapabilityEvent {
        name: name.to_owned(),
        outcome: outcome.into(),
        value,
    }
}

/// The recorded answer to a capability call; a recorded denial is recorded again, so that an
/// uncaught one ends the replayed call as `policy_denied` as it ended the first time, marked as
/// replayed (`AuditLog::deny_replayed`).
fn replayed(
    event: Option<CapabilityEvent>,
    name: &str,
    audit: &AuditLog,
) -> Result<String, CallError> {
    let Some(event) = event.filter(|e| e.name == name) else {
        return Err(CallError::Failed(format!(
            "the transcript has no further answer for capability `{name}`"
        )));
    };
    match event.outcome.as_str() {
        "ok" => Ok(event.value),
        "denied" => {
            let d: serde_json::Value = serde_json::from_str(&event.value).unwrap_or_default();
            let text = |k: &str| d[k].as_str().unwrap_or_default().to_owned();
            let fix = d["fix"]
                .as_str()
                .and_then(|f| f.split_once(" = "))
                .map(|(k, v)| Fix {
                    key: k.to_owned(),
                    value: v.to_owned(),
                });
            let (rule, reason) = (text("rule"), text("reason"));
            let refusal = Refusal {
                capability: "capability",
                target: name,
                label: name,
                rule: &rule,
                reason: &reason,
                fix,
            };
            Err(CallError::Denied(
                audit.deny_replayed(refusal, Instant::now()),
            ))
        }
        _ => Err(CallError::Failed(event.value)),
    }
}

/// A TOML key segment: bare when it can be, quoted otherwise.
fn toml_key(name: &str) -> String {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        name.to_owned()
    } else {
        serde_json::to_string(name).unwrap_or_default()
    }
}

impl capability::Host for CallState {
    async fn call(
        &mut self,
        name: String,
        payload: String,
    ) -> wasmtime::Result<Resource<PendingCall>> {
        let pending = self.capabilities.start(name, payload, false);
        Ok(self.table.push(pending)?)
    }

    async fn call_args(
        &mut self,
        name: String,
        args: String,
    ) -> wasmtime::Result<Resource<PendingCall>> {
        let pending = self.capabilities.start(name, args, true);
        Ok(self.table.push(pending)?)
    }

    async fn refusal(&mut self, target: String) -> wasmtime::Result<Option<Denial>> {
        Ok(self.capabilities.audit.refusal(&target))
    }

    async fn unsent_request(
        &mut self,
        method: String,
        scheme: String,
        authority: String,
        path_with_query: String,
        headers: Vec<(String, Vec<u8>)>,
    ) -> wasmtime::Result<Option<(NetworkFailure, String)>> {
        self.http
            .decide_unsent(&method, &scheme, &authority, &path_with_query, headers)
            .await
    }

    async fn ungranted(&mut self, global: String, name: String) -> wasmtime::Result<Denial> {
        let bridge = self.capabilities.grants.as_ref().map(|g| g.global.as_str());
        let refusal = super::ungranted::decide(&global, &name, bridge);
        Ok(self.capabilities.audit.deny(
            refusal.capability,
            &refusal.target,
            &refusal.label,
            &refusal.rule,
            &refusal.reason,
            refusal.fix,
            Instant::now(),
            0,
        ))
    }

    async fn body_failure(
        &mut self,
        error: Resource<capability::Error>,
    ) -> wasmtime::Result<Option<NetworkFailure>> {
        let error = self.table.get(&error)?;
        Ok(error
            .downcast_ref::<wasmtime_wasi_http::Error>()
            .map(super::http::failure_of))
    }
}

impl capability::HostPendingCall for CallState {
    async fn subscribe(
        &mut self,
        this: Resource<PendingCall>,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        wasmtime_wasi::p2::subscribe(&mut self.table, this)
    }

    async fn get(
        &mut self,
        this: Resource<PendingCall>,
    ) -> wasmtime::Result<Option<Result<String, CallError>>> {
        let pending = self.table.get_mut(&this)?;
        pending.release();
        if let Some(panic) = pending.panicked.get() {
            return Err(wasmtime::Error::msg(format!(
                "a capability handler panicked: {panic}"
            )));
        }
        match std::mem::replace(&mut pending.state, Pending::Taken) {
            Pending::Done(result) => Ok(Some(result)),
            Pending::Taken => Ok(None),
            running @ Pending::Running(_) => {
                pending.state = running;
                Ok(None)
            }
        }
    }

    async fn drop(&mut self, this: Resource<PendingCall>) -> wasmtime::Result<()> {
        self.table.delete(this)?;
        Ok(())
    }
}
