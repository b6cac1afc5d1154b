//! `palisade:sandbox/capability`: host capabilities that the embedder registers as async Rust
//! handlers and the policy grants by name. Every check happens here, before a handler runs:
//! the name is allowed, the per-call budget has room, the payload fits and matches the schema.

mod decide;
pub(crate) mod forward;
mod handler;

pub use handler::{CallContext, CapabilityError, CapabilityFuture};
pub(crate) use handler::{Handler, panic_message};

use crate::Fix;
use crate::audit::{AuditLog, Decision, Entry};
use crate::bindings::palisade::sandbox::capability::{
    self, CallError, Denial, Failure as WitFailure, NetworkFailure,
};
use crate::bindings::{Pending, PendingCall};
use crate::caps::gate::{Capability, Refusal};
use crate::caps::http::HttpGate;
use crate::policy::{ByteSize, Capabilities, Policy};
use crate::record::{CapabilityEvent, CapabilityOutcome, Tape, event_bytes};
use decide::Verdict;
use forward::ResponseBudget;
use handler::{CatchPanic, HANDLER_ERROR};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Instant;
use wasmtime::component::{HasData, Linker, Resource, ResourceTable};
use wasmtime_wasi::p2::DynPollable;

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

    fn deny(&mut self, refusal: Refusal, started: Instant, bytes_in: u64) -> CallError {
        CallError::Denied(self.audit.deny(refusal, started, bytes_in))
    }

    /// Record a call that failed without a policy refusal; the script gets a `CapabilityError`.
    fn fail(
        &mut self,
        name: &str,
        decision: Decision,
        rule: &str,
        started: Instant,
        bytes_in: u64,
        error: CapabilityError,
    ) -> CallError {
        self.audit.record(Entry {
            capability: Capability::Host,
            target: name,
            decision,
            rule,
            started,
            bytes: (bytes_in, 0),
            error: Some(error.message.clone()),
        });
        failed(error)
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
                outcome: CapabilityOutcome::Pending,
                value: String::new(),
                code: None,
                retryable: false,
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
                    Pending::Taken => Err(failed(CapabilityError::new(
                        "no_result",
                        "the call has no result",
                    ))),
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

    /// Check a call and start who answers it: the embedder's handler or the rule's
    /// `forward` URL; the call's future audits its outcome.
    fn start_live(&mut self, name: String, payload: String, argument_list: bool) -> PendingCall {
        let started = Instant::now();
        let bytes_in = payload.len() as u64;
        let (target, value, key) = match self.check(&name, &payload, started, bytes_in) {
            Err(error) => return PendingCall::done(Err(error)),
            Ok(checked) => checked,
        };
        let budget = self.responses.clone();
        let forwarded = matches!(target, Target::Forward { .. }).then(|| budget.clone());
        let context = crate::CallContext {
            capability: name.clone(),
            argument_list,
            ..self.context.clone()
        };
        let allowed = Allowed {
            audit: self.audit.clone(),
            name,
            key,
            started,
            bytes_in,
            memory: self.memory,
        };
        let panicked: Arc<OnceLock<String>> = Arc::default();
        let panic_flag = panicked.clone();
        let future = async move {
            let result = match target {
                Target::Handler(handler) => {
                    run_handler(&handler, context, value, &panic_flag).await
                }
                Target::Forward { url, max_response } => {
                    let forward = Forward {
                        url: &url,
                        max_response,
                        budget: &budget,
                        context: &context,
                    };
                    allowed.forward(forward, value).await?
                }
            };
            allowed.finish(result)
        };
        PendingCall {
            state: Pending::Running(Box::pin(future)),
            panicked,
            budget: forwarded,
        }
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
        let key = decide::allow_key(name);
        decide::count_call(&mut self.calls, name, max_calls, &key)
            .map_err(|refusal| self.deny(refusal, Instant::now(), 0))
    }

    /// Every policy check, in order ([`decide::decide`]); the handler to run with the parsed
    /// payload.
    fn check(
        &mut self,
        name: &str,
        payload: &str,
        started: Instant,
        bytes_in: u64,
    ) -> Result<(Target, serde_json::Value, String), CallError> {
        let (rule, key, value) =
            match decide::decide(self.grants.as_deref(), &mut self.calls, name, payload) {
                Verdict::Allow { rule, key, value } => (rule, key, value),
                Verdict::Deny(refusal) => return Err(self.deny(refusal, started, bytes_in)),
                Verdict::NotJson { key, message } => {
                    let error = CapabilityError::new("invalid_payload", message);
                    return Err(self.fail(name, Decision::Deny, &key, started, bytes_in, error));
                }
            };
        let target = match (self.handlers.get(name), rule.forward) {
            (Some(handler), _) => Target::Handler(handler.clone()),
            (None, Some(url)) => Target::Forward {
                url,
                max_response: rule.max_response,
            },
            (None, None) => {
                let message = format!("capability `{name}` has no handler in this host");
                let error = CapabilityError::new("no_handler", message);
                return Err(self.fail(name, Decision::Allow, &key, started, bytes_in, error));
            }
        };
        Ok((target, value, key))
    }
}

/// An allowed call on its way: what its future needs to audit the outcome.
struct Allowed {
    audit: AuditLog,
    name: String,
    /// The policy key that allowed it.
    key: String,
    started: Instant,
    bytes_in: u64,
    /// The call's `limits.memory`, named by a refusal of a forwarded response.
    memory: ByteSize,
}

/// Where a forwarded call goes and what its response may take.
struct Forward<'a> {
    url: &'a str,
    max_response: ByteSize,
    budget: &'a ResponseBudget,
    context: &'a crate::CallContext,
}

impl Allowed {
    /// POST the payload to the rule's `forward` URL. A response over `max_response` or the
    /// call's memory is a refusal (audited here, the outer error); any other failure is the
    /// script's `CapabilityError`.
    async fn forward(
        &self,
        to: Forward<'_>,
        value: serde_json::Value,
    ) -> Result<Result<String, CapabilityError>, CallError> {
        match forward::call(to.url, value, to.max_response.0, to.budget, to.context).await {
            Ok(text) => Ok(Ok(text)),
            Err(forward::Failure::Failed(error)) => Ok(Err(error)),
            Err(refused) => {
                let refusal =
                    decide::too_large(&self.name, &self.key, refused, to.max_response, self.memory);
                Err(CallError::Denied(self.audit.deny(
                    refusal,
                    self.started,
                    self.bytes_in,
                )))
            }
        }
    }

    /// Audit the answer (bytes out, or the error) and give the guest its form.
    fn finish(&self, result: Result<String, CapabilityError>) -> Result<String, CallError> {
        let (bytes_out, error) = match &result {
            Ok(text) => (text.len() as u64, None),
            Err(error) => (0, Some(error.message.clone())),
        };
        self.audit.record(Entry {
            capability: Capability::Host,
            target: &self.name,
            decision: Decision::Allow,
            rule: &self.key,
            started: self.started,
            bytes: (self.bytes_in, bytes_out),
            error,
        });
        result.map_err(failed)
    }
}

/// Run the embedder's handler inside the call: a panic while making or polling its future
/// ends this call only, and its message goes to `panicked`.
async fn run_handler(
    handler: &Handler,
    context: crate::CallContext,
    value: serde_json::Value,
    panicked: &OnceLock<String>,
) -> Result<String, CapabilityError> {
    let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(context, value)));
    let answer = match made {
        Ok(future) => CatchPanic(future).await,
        Err(panic) => Err(panic_message(&*panic)),
    };
    match answer {
        Ok(answer) => answer.and_then(|v| {
            serde_json::to_string(&v).map_err(|e| CapabilityError::from(e.to_string()))
        }),
        Err(panic) => {
            let _ = panicked.set(panic);
            Err(CapabilityError::from("the capability handler failed"))
        }
    }
}

/// The guest's form of a failure: a valid code and a bounded message.
fn failed(error: CapabilityError) -> CallError {
    let error = error.checked();
    CallError::Failed(WitFailure {
        code: error.code,
        message: error.message,
        retryable: error.retryable,
    })
}

/// A result as a transcript records it.
fn recorded(name: &str, result: &Result<String, CallError>) -> CapabilityEvent {
    let mut code = None;
    let mut retryable = false;
    let (outcome, value) = match result {
        Ok(text) => (CapabilityOutcome::Ok, text.clone()),
        Err(CallError::Denied(d)) => (
            CapabilityOutcome::Denied,
            serde_json::json!({
                "capability": d.capability, "rule": d.rule, "reason": d.reason, "fix": d.fix,
            })
            .to_string(),
        ),
        Err(CallError::Failed(failure)) => {
            if failure.code != HANDLER_ERROR || failure.retryable {
                code = Some(failure.code.clone());
                retryable = failure.retryable;
            }
            (CapabilityOutcome::Failed, failure.message.clone())
        }
    };
    CapabilityEvent {
        name: name.to_owned(),
        outcome,
        value,
        code,
        retryable,
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
        return Err(failed(CapabilityError::new(
            "not_recorded",
            format!("the transcript has no further answer for capability `{name}`"),
        )));
    };
    match event.outcome {
        CapabilityOutcome::Ok => Ok(event.value),
        CapabilityOutcome::Denied => {
            let d: serde_json::Value = serde_json::from_str(&event.value).unwrap_or_default();
            let text = |k: &str| d[k].as_str().unwrap_or_default().to_owned();
            let fix = d["fix"]
                .as_str()
                .and_then(|f| f.split_once(" = "))
                .map(|(k, v)| Fix {
                    key: k.to_owned(),
                    value: v.to_owned(),
                });
            let refusal = Refusal::new(Capability::Host, name, text("rule"), text("reason"), fix);
            Err(CallError::Denied(
                audit.deny_replayed(refusal, Instant::now()),
            ))
        }
        CapabilityOutcome::Pending => Err(failed(CapabilityError::new(
            "not_recorded",
            "the recording ended before this call was answered",
        ))),
        CapabilityOutcome::Failed => Err(failed(CapabilityError {
            code: event.code.unwrap_or_else(|| HANDLER_ERROR.to_owned()),
            message: event.value,
            retryable: event.retryable,
        })),
    }
}

/// What the capability interface reaches of a call's state: the gate, the resource table its
/// pending calls live in, and the network gate that answers `unsent-request` (the plain
/// guest's `fetch`).
pub(crate) struct CapabilityView<'a> {
    pub state: &'a mut CapabilityState,
    pub table: &'a mut ResourceTable,
    pub http: &'a mut HttpGate,
}

/// [`HasData`] for [`CapabilityView`].
struct HasCapabilities;

impl HasData for HasCapabilities {
    type Data<'a> = CapabilityView<'a>;
}

/// Link `palisade:sandbox/capability` to the view `view` makes of the store's state.
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    view: fn(&mut T) -> CapabilityView<'_>,
) -> wasmtime::Result<()> {
    capability::add_to_linker::<T, HasCapabilities>(linker, view)
}

impl capability::Host for CapabilityView<'_> {
    async fn call(
        &mut self,
        name: String,
        payload: String,
    ) -> wasmtime::Result<Resource<PendingCall>> {
        let pending = self.state.start(name, payload, false);
        Ok(self.table.push(pending)?)
    }

    async fn call_args(
        &mut self,
        name: String,
        args: String,
    ) -> wasmtime::Result<Resource<PendingCall>> {
        let pending = self.state.start(name, args, true);
        Ok(self.table.push(pending)?)
    }

    async fn refusal(&mut self, target: String) -> wasmtime::Result<Option<Denial>> {
        Ok(self.state.audit.refusal(&target))
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
        let bridge = self.state.grants.as_ref().map(|g| g.global.as_str());
        let refusal = super::ungranted::decide(&global, &name, bridge);
        Ok(self.state.audit.deny(refusal, Instant::now(), 0))
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

impl capability::HostPendingCall for CapabilityView<'_> {
    async fn subscribe(
        &mut self,
        this: Resource<PendingCall>,
    ) -> wasmtime::Result<Resource<DynPollable>> {
        wasmtime_wasi::p2::subscribe(self.table, this)
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
