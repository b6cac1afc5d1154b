//! Long-lived state: wasmtime engines, the compiled guest, linkers, `InstancePre`s, the epoch
//! ticker (without fuel metering) and the admission limit. Built once per process and shared by every call.

mod builder;
mod compile;
mod engines;
mod events;

pub use builder::Builder;
pub use events::{CallHandle, Canceller, Event, EventSink};

use crate::auto::AutoCompiler;
use crate::bytecode::BytecodeCache;
use crate::call::{self, Cancel, Outcome, Runtime};
use crate::caps::capability::Handler;
use crate::caps::http::{RateLimiter, rate_limiter};
use crate::guest::Guest;
use crate::kv::{KvBackend, KvError, KvOverlay, KvWrites};
use crate::policy::Policy;
use crate::record::{Recorder, Replay, TRANSCRIPT_VERSION, Tape, Transcript};
use crate::secrets::Secrets;
use crate::{CallContext, RunOptions};
use crate::{Error, Script};
use builder::KvSetting;
use engines::CompiledKey;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use wasmtime::{Engine, EngineWeak};

/// A Palisade instance: create one per process, share it (it is cheap to clone), and call
/// [`Palisade::run`] from as many tasks as you like.
#[derive(Clone)]
pub struct Palisade {
    inner: Arc<Inner>,
}

struct Inner {
    settings: Builder,
    /// The operator's audit log ([`Builder::audit_log`]).
    audit_file: Option<Arc<crate::audit_file::AuditFile>>,
    handlers: Arc<HashMap<String, Handler>>,
    admission: Arc<Semaphore>,
    bytecode: Option<BytecodeCache>,
    /// One engine per wasm stack size: wasmtime fixes the stack limit per engine.
    engines: Mutex<HashMap<u64, Engine>>,
    /// Each guest's runtime on each engine, by stack size.
    runtimes: Mutex<HashMap<(u64, Guest), Arc<Runtime>>>,
    /// Live sessions' runtimes, by stack size and guest; built one at a time.
    live: tokio::sync::Mutex<HashMap<(u64, Guest), Arc<crate::live::LiveRuntime>>>,
    /// Compiled scripts, by stack size and the component's SHA-256.
    compiled: Mutex<lru::LruCache<CompiledKey, Arc<Runtime>>>,
    /// The engines the epoch ticker advances; its own lock, so that it never waits on a build.
    tickers: Mutex<Vec<EngineWeak>>,
    /// Request rate limiters by policy SHA-256: a policy's `http.rate` spans all its calls.
    rates: Mutex<HashMap<String, Option<Arc<RateLimiter>>>>,
    /// The key-value store, opened on first use (or why it could not be).
    kv: std::sync::OnceLock<Result<Arc<dyn KvBackend>, String>>,
    /// The `[http] rate` buckets processes on the data directory share, opened on first use;
    /// `None` with an embedder's own key-value backend, or when the file cannot be opened.
    shared_rates: std::sync::OnceLock<Option<Arc<dyn crate::kv::SharedRate>>>,
    /// Scripts compiled in the background once called often ([`Builder::auto_compile`]).
    auto: Option<AutoCompiler>,
    /// Cranelift compiles of compiled scripts' components: one at a time, within a budget.
    compiles: crate::cache::CompileGate,
}

/// One call as the public entry points hand it down: what runs, under which policy, on what
/// input, and whether it is recorded or replayed.
struct Request<'a> {
    policy: &'a Policy,
    script: &'a Script,
    entry: call::Invoke<'a>,
    input: &'a str,
    tape: Tape,
}

impl Palisade {
    /// A Palisade with default settings. Compiles the guest on first use on this machine, then
    /// loads it from the on-disk cache.
    pub fn new() -> Result<Self, Error> {
        Builder::default().build()
    }

    /// Settings for a Palisade.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// Slots of each kind in each engine's instance pool ([`Builder::pool_slots`]): never fewer
    /// than [`Builder::max_concurrency`].
    pub fn pool_slots(&self) -> u32 {
        engines::pool_slots(&self.inner.settings)
    }

    /// The last write to the audit log ([`Builder::audit_log`]) that failed since this was
    /// last asked, if any.
    pub fn audit_log_failure(&self) -> Option<String> {
        self.inner.audit_file.as_ref()?.take_failure()
    }

    /// The audit log's writer, for lines the server makes itself (one writer per file).
    #[cfg(feature = "serve")]
    pub(crate) fn audit_file(&self) -> Option<Arc<crate::audit_file::AuditFile>> {
        self.inner.audit_file.clone()
    }

    /// Run `script`'s default export with `input` (JSON text) under `policy`, in a fresh sandbox.
    pub async fn run(&self, policy: &Policy, script: &Script, input: &str) -> Outcome {
        self.call(policy, script, "default", input).await
    }

    /// Run a named export of `script` with `input` (JSON text) under `policy`. When the module
    /// has no export of that name but its default export is an object with a method of that
    /// name (`export default { async execute(payload) {…} }`), the method is called, with the
    /// object as `this`.
    pub async fn call(
        &self,
        policy: &Policy,
        script: &Script,
        entry: &str,
        input: &str,
    ) -> Outcome {
        let options = RunOptions::default().export(entry);
        self.run_with(policy, script, input, &options).await
    }

    /// Run `script` under `policy` with per-call [`RunOptions`]: the export (or method) to
    /// call and how, limits lower than the policy's (or up to its `[overrides]`), the clock,
    /// seed and config values its `[overrides]` allows, files for its scratch directory,
    /// metadata for capability handlers, and a callback for its console lines and audit
    /// records as they happen. An option beyond what the policy allows ends the call as
    /// `invalid_input`, with the ceiling in the message and the policy change that would allow
    /// it as the fix. A [`RunOptions::canceller`] can end it as `cancelled`.
    pub async fn run_with(
        &self,
        policy: &Policy,
        script: &Script,
        input: &str,
        options: &RunOptions,
    ) -> Outcome {
        let cancel = options.cancel.as_ref().map(|c| c.0.clone());
        self.run_cancellable(policy, script, input, options, cancel)
            .await
    }

    /// Start `script` under `policy` on a task of its own (on the current tokio runtime), and
    /// return a handle that cancels it ([`CallHandle::cancel`]: the call ends at once as
    /// `cancelled`) or waits for its outcome ([`CallHandle::outcome`]). Options as in
    /// [`Palisade::run_with`]; the handle cancels through the options' canceller if they have
    /// one.
    pub fn start(
        &self,
        policy: &Policy,
        script: &Script,
        input: &str,
        options: RunOptions,
    ) -> CallHandle {
        let cancel = options
            .cancel
            .as_ref()
            .map(|c| c.0.clone())
            .unwrap_or_default();
        let (palisade, kept, script, input) = (
            self.clone(),
            policy.clone(),
            script.clone(),
            input.to_owned(),
        );
        let flag = cancel.clone();
        let task = tokio::spawn(async move {
            palisade
                .run_cancellable(&kept, &script, &input, &options, Some(flag))
                .await
        });
        CallHandle {
            cancel,
            task: Some(task),
            policy: policy.clone(),
        }
    }

    async fn run_cancellable(
        &self,
        policy: &Policy,
        script: &Script,
        input: &str,
        options: &RunOptions,
        cancel: Option<Cancel>,
    ) -> Outcome {
        if cancel.as_ref().is_some_and(Cancel::is_cancelled) {
            return Outcome::failed(crate::Error::Cancelled, policy, std::time::Instant::now());
        }
        let policy = match options.policy(policy) {
            Ok(policy) => policy,
            Err(error) => return Outcome::failed(error, policy, std::time::Instant::now()),
        };
        let invoke = call::Invoke {
            export: options.export.as_deref().unwrap_or("default"),
            spread_args: options.spread_args,
        };
        let extras = call::Extras {
            metadata: options.metadata.clone(),
            events: options.events.clone(),
            cancel,
            files: options.files.clone().into(),
            audit_tags: options.audit_tags.clone().unwrap_or_default(),
            kv_transaction: options.kv_transaction,
        };
        let mut outcome = self
            .call_taped_with(&policy, script, invoke, input, Tape::Off, extras)
            .await;
        if options.kv_transaction {
            outcome.kv_writes.get_or_insert_with(KvWrites::default);
        }
        outcome
    }

    /// Apply the key-value writes of a call made with [`RunOptions::kv_transaction`]
    /// ([`Outcome::kv_writes`]) to this Palisade's store, in one transaction: all of them, or
    /// none and the error. A compare-and-swap whose value another writer moved since the call
    /// fails it with [`KvError::Conflict`]; increments add as deltas to the stored counter; a
    /// new key past `max_keys` fails it with [`KvError::TooManyKeys`] ([`KvWrites`] has the
    /// whole rule). Runs on tokio's blocking pool: the commit waits for its fsync.
    pub async fn apply_kv(&self, writes: KvWrites) -> Result<(), KvError> {
        if writes.is_empty() {
            return Ok(());
        }
        let store = self.kv_backend().map_err(KvError::Backend)?;
        tokio::task::spawn_blocking(move || writes.apply(store.as_ref()))
            .await
            .map_err(|e| KvError::Backend(e.to_string()))?
    }

    /// Like [`Palisade::call`], with several arguments: `args` is a JSON array whose elements
    /// are passed to the export (or method) one each, as `f(a, b)` (`palisade run --args`).
    /// Text that is not a JSON array ends the call as `invalid_input`.
    pub async fn call_args(
        &self,
        policy: &Policy,
        script: &Script,
        entry: &str,
        args: &str,
    ) -> Outcome {
        let options = RunOptions::default().export(entry).spread_args();
        self.run_with(policy, script, args, &options).await
    }

    /// Like [`Palisade::run`], and return the [`Transcript`] of every answer the host gave:
    /// clock reads, random bytes, capability, key-value and HTTP results. The transcript is
    /// bounded by the policy's `limits.transcript`: past it, recording stops and
    /// [`Transcript::truncated`] says so (the call itself goes on). Secret values are replaced
    /// by `[redacted]` wherever an answer echoed them.
    pub async fn run_recorded(
        &self,
        policy: &Policy,
        script: &Script,
        input: &str,
    ) -> (Outcome, Transcript) {
        let transcript = Transcript {
            version: TRANSCRIPT_VERSION,
            script: script.name().to_owned(),
            input: input.to_owned(),
            policy_sha256: policy.sha256().to_owned(),
            ..Transcript::default()
        };
        let limits = policy.limits();
        let recorder = Arc::new(Recorder::new(
            transcript,
            limits.transcript.0,
            limits.timeout.0,
        ));
        let outcome = self
            .call_taped(
                policy,
                script,
                call::Invoke::DEFAULT,
                input,
                Tape::Record(recorder.clone()),
            )
            .await;
        let mut transcript = recorder.take();
        transcript.redact(&Secrets::from_policy(policy));
        (outcome, transcript)
    }

    /// Run `script` again against a recorded [`Transcript`], with its input: every clock read,
    /// random byte, capability, key-value and HTTP answer comes from the transcript; nothing
    /// reaches the network, the store or a handler. A transcript of another version, or one cut
    /// at its limit, ends the call as `invalid_input`; the policy's HTTP budgets apply to the
    /// recorded answers, and refusals read from the transcript are reported as replayed
    /// (`replay:RULE`, with no fix).
    pub async fn replay(
        &self,
        policy: &Policy,
        script: &Script,
        transcript: &Transcript,
    ) -> Outcome {
        if let Err(detail) = transcript.check() {
            let error = Error::InvalidInput { detail, fix: None };
            return Outcome::failed(error, policy, std::time::Instant::now());
        }
        let replay = Arc::new(Replay::new(transcript.clone()));
        self.call_taped(
            policy,
            script,
            call::Invoke::DEFAULT,
            &transcript.input,
            Tape::Replay(replay),
        )
        .await
    }

    async fn call_taped(
        &self,
        policy: &Policy,
        script: &Script,
        entry: call::Invoke<'_>,
        input: &str,
        tape: Tape,
    ) -> Outcome {
        self.call_taped_with(policy, script, entry, input, tape, call::Extras::default())
            .await
    }

    async fn call_taped_with(
        &self,
        policy: &Policy,
        script: &Script,
        entry: call::Invoke<'_>,
        input: &str,
        tape: Tape,
        extras: call::Extras,
    ) -> Outcome {
        use tracing::Instrument;
        let context = call_context(policy, extras.metadata.clone());
        // One span per call: every log line of the call (an internal error's cause included)
        // carries its id, policy and script.
        let span = tracing::info_span!(
            "call",
            call_id = context.call_id.as_str(),
            policy = policy.name(),
            policy_sha256 = policy.sha256(),
            script = script.name(),
        );
        let outcome = self
            .call_untraced(
                Request {
                    policy,
                    script,
                    entry,
                    input,
                    tape,
                },
                context,
                extras,
            )
            .instrument(span.clone())
            .await;
        span.in_scope(|| {
            tracing::debug!(
                fuel = outcome.receipt.fuel_used,
                wall_time_us = outcome.receipt.wall_time_us,
                code = outcome.error().map_or("ok", Error::code),
                "call ended"
            );
        });
        outcome
    }

    /// One call, top to bottom: the plan its policy resolves to, then its sandbox.
    async fn call_untraced(
        &self,
        request: Request<'_>,
        context: CallContext,
        extras: call::Extras,
    ) -> Outcome {
        let Request {
            policy,
            script,
            entry,
            input,
            tape,
        } = request;
        let started = std::time::Instant::now();
        let plan = match extras.cancel.as_ref() {
            // Cancelled while it waited for a slot or its compile: it ends there.
            Some(cancel) => tokio::select! {
                plan = self.plan(policy, script, input, &tape) => plan,
                () = cancel.cancelled() => Err(Error::Cancelled),
            },
            None => self.plan(policy, script, input, &tape).await,
        };
        let plan = match plan {
            Ok(plan) => plan,
            Err(error) => return Outcome::failed(error, policy, started),
        };
        // Under a transaction the call sees the store through a view that keeps its writes.
        let overlay = match (&plan.kv, extras.kv_transaction) {
            (Some(store), true) => Some(Arc::new(KvOverlay::new(store.clone()))),
            _ => None,
        };
        let shared = call::Shared {
            handlers: self.inner.handlers.clone(),
            rate: self.rate_limiter(policy),
            kv: match &overlay {
                Some(view) => Some(view.clone() as Arc<dyn KvBackend>),
                None => plan.kv,
            },
            tape,
            context,
            events: extras.events,
            cancel: extras.cancel,
            files: extras.files,
            audit_file: self.inner.audit_file.clone(),
            audit_tags: extras.audit_tags,
        };
        let times = call::Times {
            started,
            deadline: plan.deadline,
            fuel_spent: plan.fuel_spent,
        };
        let mut outcome = call::run(
            &plan.runtime,
            policy,
            shared,
            &plan.script,
            entry,
            input,
            times,
        )
        .await;
        drop(plan.permit);
        outcome.kv_writes = overlay.map(|view| view.finish());
        outcome
    }

    /// Resolve `policy` once, at the start of a call, into what the call runs with: the input
    /// checked, the guest (or compiled component) on the engine for the policy's stack, the
    /// memory limit checked against this Palisade's, an admission slot, the deadline, the
    /// script's form (compiled, bytecode, or source), the key-value store.
    async fn plan(
        &self,
        policy: &Policy,
        script: &Script,
        input: &str,
        tape: &Tape,
    ) -> Result<Plan, Error> {
        call::check_input(policy, input)?;
        let script = match self.auto_compiled(policy, script, tape) {
            Some(compiled) => compiled,
            None => script.clone(),
        };
        // A compiled script's component is compiled for this machine on its first call (or
        // loaded from the disk cache) before its deadline starts: that is host work. A replay
        // from source runs in the full guest: the transcript's answers (a response, a stored
        // value) may come from a policy that granted what this one does not.
        let guest = Guest::for_policy(policy);
        let runtime = match (script.compiled(), tape) {
            (Some(compiled), _) => self.compiled_runtime(policy, guest, compiled).await?,
            (None, Tape::Replay(_)) => self.runtime(policy.limits().stack, Guest::Full).await?,
            (None, _) => self.runtime(policy.limits().stack, guest).await?,
        };
        self.check_memory(policy)?;
        let permit = self.admit().await?;
        // The deadline runs from here, once a slot is held: a compile on a bytecode-cache miss
        // and the run share it, and its fuel too.
        let deadline = std::time::Instant::now() + policy.limits().timeout.0;
        let (bytecode, fuel_spent) = self
            .cached_bytecode(&runtime, policy, &script, deadline)
            .await;
        let script = match bytecode {
            Some(bytecode) => script.with_bytecode(bytecode),
            None => script,
        };
        let kv = match policy.kv() {
            Some(_) if tape.replaying().is_none() => Some(
                self.kv_backend()
                    .map_err(|detail| Error::Internal { detail })?,
            ),
            _ => None,
        };
        Ok(Plan {
            runtime,
            script,
            kv,
            deadline,
            fuel_spent,
            permit,
        })
    }

    /// A policy's memory limit fits the pool's slots, sized by [`Builder::max_memory`].
    pub(crate) fn check_memory(&self, policy: &Policy) -> Result<(), Error> {
        let max = self.inner.settings.max_memory;
        if policy.limits().memory <= max {
            return Ok(());
        }
        Err(Error::InvalidPolicy(crate::PolicyError {
            file: None,
            key: "limits.memory".into(),
            line: None,
            column: None,
            message: format!(
                "{} is over this Palisade's maximum of {max} (see Builder::max_memory)",
                policy.limits().memory,
            ),
        }))
    }

    /// An admission slot: at most `max_concurrency` calls at once, each waiting at most
    /// `queue_timeout` for its turn.
    pub(crate) async fn admit(&self) -> Result<OwnedSemaphorePermit, Error> {
        let wait = self.inner.settings.queue_timeout;
        match tokio::time::timeout(wait, self.inner.admission.clone().acquire_owned()).await {
            Ok(Ok(permit)) => Ok(permit),
            _ => Err(Error::CapacityExhausted {
                waited_ms: wait.as_millis() as u64,
            }),
        }
    }

    /// What a live session's call under `policy` shares with the host: as for any call, without
    /// recording.
    pub(crate) fn live_shared(
        &self,
        policy: &Policy,
        options: &RunOptions,
        context: CallContext,
    ) -> Result<call::Shared, Error> {
        let kv = match policy.kv() {
            Some(_) => Some(
                self.kv_backend()
                    .map_err(|detail| Error::Internal { detail })?,
            ),
            None => None,
        };
        Ok(call::Shared {
            handlers: self.inner.handlers.clone(),
            rate: self.rate_limiter(policy),
            kv,
            tape: Tape::Off,
            context,
            events: options.events.clone(),
            cancel: None,
            files: options.files.clone().into(),
            audit_file: self.inner.audit_file.clone(),
            audit_tags: options.audit_tags.clone().unwrap_or_default(),
        })
    }

    /// The key-value store, opened on first use.
    fn kv_backend(&self) -> Result<Arc<dyn KvBackend>, String> {
        self.inner
            .kv
            .get_or_init(|| match &self.inner.settings.kv {
                KvSetting::Backend(backend) => Ok(backend.clone()),
                KvSetting::Path(path) => crate::kv::open_default(path)
                    .map(|b| Arc::new(b) as Arc<dyn KvBackend>)
                    .map_err(|e| e.to_string()),
            })
            .clone()
    }

    /// The rate limiter of `policy`, created on its first call.
    fn rate_limiter(&self, policy: &Policy) -> Option<Arc<RateLimiter>> {
        let http = policy.http()?;
        http.rate?;
        let mut rates = self.inner.rates.lock().unwrap_or_else(|p| p.into_inner());
        rates
            .entry(policy.rate_key().to_owned())
            .or_insert_with(|| rate_limiter(http, policy.rate_key(), self.shared_rates()))
            .clone()
    }

    /// The shared rate buckets: `rate.sqlite3` beside the key-value store's file, or those of
    /// a key-value store that keeps its own (Redis).
    fn shared_rates(&self) -> Option<Arc<dyn crate::kv::SharedRate>> {
        self.inner
            .shared_rates
            .get_or_init(|| {
                let kv = match &self.inner.settings.kv {
                    KvSetting::Path(kv) => kv,
                    KvSetting::Backend(backend) => return backend.clone().shared_rate(),
                };
                let path = kv.with_file_name("rate.sqlite3");
                match crate::kv::SharedRates::open(&path) {
                    Ok(store) => Some(Arc::new(store)),
                    Err(e) => {
                        tracing::error!(
                            "http.rate holds per process only: cannot open {}: {e}",
                            path.display()
                        );
                        None
                    }
                }
            })
            .clone()
    }
}

/// Who a new call is, for capability handlers: a fresh id, its policy and metadata.
pub(crate) fn call_context(
    policy: &Policy,
    metadata: Option<Arc<serde_json::Value>>,
) -> CallContext {
    CallContext {
        call_id: format!("{:016x}", rand::random::<u64>()),
        capability: String::new(),
        policy: policy.name().to_owned(),
        policy_sha256: policy.sha256().to_owned(),
        metadata,
        argument_list: false,
    }
}

/// A call resolved from its policy ([`Palisade::plan`]): what its sandbox runs.
struct Plan {
    /// The guest, or the compiled script's component, on the engine for the policy's stack.
    runtime: Arc<Runtime>,
    /// The script in the form it runs: compiled, with bytecode, or from source.
    script: Script,
    /// The key-value store, when the policy has `[kv]` and the call is not replayed.
    kv: Option<Arc<dyn KvBackend>>,
    deadline: std::time::Instant,
    /// Fuel already spent compiling the script to bytecode, charged to the call.
    fuel_spent: u64,
    /// The admission slot, held until the call ends.
    permit: OwnedSemaphorePermit,
}
