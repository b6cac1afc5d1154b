//! One call: a fresh store with the policy's limits, instantiate, invoke, classify, and the
//! [`Outcome`] with its receipt. Nothing of a call outlives its store.

use crate::audit::{AuditLog, AuditRecord};
use crate::caps::capability::{CapabilityState, Handler};
use crate::caps::console::Console;
use crate::caps::http::{HttpGate, RateLimiter};
use crate::caps::kv::KvState;
use crate::caps::quota::{Limits as QuotaLimits, Quotas, Usage};
use crate::engine::Runtime;
use crate::engine::bindings::exports::palisade::sandbox::runner::{self, Environment, Module};
use crate::kv::KvBackend;
use crate::limits::{DeadlineExceeded, MemoryLimiter};
use crate::policy::Policy;
use crate::policy::{Clock, MountMode};
use crate::record::{Tape, TapedMonotonic, TapedRng, TapedWall};
use crate::scratch::ScratchDir;
use crate::secrets::Secrets;
use crate::{Error, GuestLocation, Script};
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde::Serialize;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasmtime::component::ResourceTable;
use wasmtime::{Store, Trap, UpdateDeadline};
use wasmtime_wasi::FsPerms;
use wasmtime_wasi::{
    HostMonotonicClock, HostWallClock, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView,
};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

/// The console method that produced a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// `console.debug`.
    Debug,
    /// `console.info`.
    Info,
    /// `console.log`.
    Log,
    /// `console.warn`.
    Warn,
    /// `console.error`.
    Error,
}

/// One console line of a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogLine {
    /// The console method that wrote it.
    pub level: Level,
    /// The line's text, as the console formatted its arguments.
    pub message: String,
}

/// What a call used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Receipt {
    /// Wasm fuel consumed.
    pub fuel_used: u64,
    /// Wall-clock time from the call's start to its end, in microseconds.
    pub wall_time_us: u64,
    /// Largest linear memory size the guest reached, in bytes.
    pub peak_memory_bytes: u64,
    /// Console bytes dropped over the policy's cap.
    pub console_bytes_dropped: u64,
    /// Console lines dropped whole over the policy's cap (each line costs its bytes plus 32).
    pub console_lines_dropped: u64,
    /// Audit records over the per-call cap of 1,024, counted but not kept.
    pub audit_records_dropped: u64,
    /// Name of the policy that governed the call.
    pub policy: String,
    /// SHA-256 of that policy's text.
    pub policy_sha256: String,
}

/// The result of a call: JSON output or a typed error, console lines, and a receipt.
#[derive(Debug)]
pub struct Outcome {
    /// The JSON output of the call, or the error that ended it.
    pub result: Result<Box<RawValue>, Error>,
    /// For an `internal` error: the id under which its full cause was logged at error level
    /// (`PALISADE_LOG`/`RUST_LOG`); the caller sees only "internal error" and this id.
    pub error_id: Option<String>,
    /// The console lines the script wrote, in order, within the policy's console caps.
    pub logs: Vec<LogLine>,
    /// One record per gated decision (capability calls), in order.
    pub audit: Vec<AuditRecord>,
    /// What the call used: fuel, time, memory, and what was dropped over a cap.
    pub receipt: Receipt,
}

impl Outcome {
    /// The JSON output, when the call succeeded.
    pub fn output(&self) -> Option<&RawValue> {
        self.result.as_deref().ok()
    }

    /// The error, when the call failed.
    pub fn error(&self) -> Option<&Error> {
        self.result.as_ref().err()
    }

    /// A call that failed before its sandbox was created.
    pub(crate) fn failed(error: Error, policy: &Policy, started: Instant) -> Outcome {
        Outcome {
            error_id: log_internal(&error, policy),
            result: Err(error),
            logs: Vec::new(),
            audit: Vec::new(),
            receipt: Receipt {
                fuel_used: 0,
                wall_time_us: micros(started.elapsed()),
                peak_memory_bytes: 0,
                console_bytes_dropped: 0,
                console_lines_dropped: 0,
                audit_records_dropped: 0,
                policy: policy.name().to_owned(),
                policy_sha256: policy.sha256().to_owned(),
            },
        }
    }
}

/// `{"ok":true,"output":…,"logs":[…],"receipt":{…}}` or `{"ok":false,"error":{…},…}`.
impl Serialize for Outcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(5))?;
        match &self.result {
            Ok(output) => {
                map.serialize_entry("ok", &true)?;
                map.serialize_entry("output", output)?;
            }
            Err(error) => {
                map.serialize_entry("ok", &false)?;
                map.serialize_entry("error", error)?;
                if let Some(id) = &self.error_id {
                    map.serialize_entry("error_id", id)?;
                }
            }
        }
        map.serialize_entry("logs", &self.logs)?;
        map.serialize_entry("audit", &self.audit)?;
        map.serialize_entry("receipt", &self.receipt)?;
        map.end()
    }
}

/// Log an `internal` error's full cause at error level under a fresh id, and return the id.
fn log_internal(error: &Error, policy: &Policy) -> Option<String> {
    let Error::Internal { detail } = error else {
        return None;
    };
    let id = format!("{:016x}", rand::random::<u64>());
    tracing::error!(
        error_id = %id,
        policy = policy.name(),
        policy_sha256 = policy.sha256(),
        "internal error: {detail}"
    );
    Some(id)
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// When a call started (for the receipt) and when its deadline falls, and the fuel it has
/// already spent before its sandbox (compiling its source to bytecode on a cache miss): one
/// budget covers both.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Times {
    pub started: Instant,
    pub deadline: Instant,
    pub fuel_spent: u64,
}

/// Everything one call's store holds.
pub(crate) struct CallState {
    wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    limiter: MemoryLimiter,
    pub(crate) console: Console,
    pub(crate) capabilities: CapabilityState,
    pub(crate) config: Option<Arc<std::collections::BTreeMap<String, String>>>,
    http_ctx: WasiHttpCtx,
    pub(crate) http: HttpGate,
    pub(crate) kv: KvState,
    /// Byte quotas of the writable directories.
    pub(crate) quotas: Quotas,
    /// Removed when the call's state is dropped.
    _scratch: Option<ScratchDir>,
}

impl WasiHttpView for CallState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http_ctx,
            table: &mut self.table,
            hooks: &mut self.http,
        }
    }
}

/// What a call needs from the long-lived host besides its policy.
#[derive(Clone, Default)]
pub(crate) struct Shared {
    pub handlers: Arc<HashMap<String, Handler>>,
    /// The policy's request rate limiter, shared by every call under that policy.
    pub rate: Option<Arc<RateLimiter>>,
    /// The key-value store, when the policy has a `[kv]` table.
    pub kv: Option<Arc<dyn KvBackend>>,
    /// Recording or replaying the host's answers, if either.
    pub tape: Tape,
    /// Who is calling, for capability handlers.
    pub context: crate::CallContext,
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl CallState {
    fn new(policy: &Policy, shared: Shared) -> Result<Self, Error> {
        // No arguments, environment, preopens, stdin or network: WASI here only carries the
        // clocks and randomness that the language runtime needs, fixed or seeded when the
        // policy asks for determinism.
        let mut wasi = WasiCtxBuilder::new();
        wasi.allow_tcp(false).allow_udp(false);
        let determinism = policy.determinism();
        let tape = shared.tape.clone();
        if matches!(tape, Tape::Off) {
            if let Clock::Fixed(at) = determinism.clock {
                wasi.wall_clock(FixedClock(at))
                    .monotonic_clock(FixedClock(at));
            }
            if let Some(seed) = determinism.seed {
                wasi.insecure_random_seed(u128::from(seed))
                    .secure_random(StdRng::seed_from_u64(seed))
                    .insecure_random(StdRng::seed_from_u64(seed.rotate_left(32)));
            }
        } else {
            // Recording or replaying: every clock read and random byte goes through the tape.
            let (wall, monotonic): (
                Box<dyn HostWallClock + Send>,
                Box<dyn HostMonotonicClock + Send>,
            ) = match determinism.clock {
                Clock::Fixed(at) => (Box::new(FixedClock(at)), Box::new(FixedClock(at))),
                Clock::Real => (
                    wasmtime_wasi::clocks::wall_clock(),
                    wasmtime_wasi::clocks::monotonic_clock(),
                ),
            };
            let seed = determinism.seed.unwrap_or_else(rand::random);
            wasi.insecure_random_seed(u128::from(seed))
                .wall_clock(TapedWall {
                    inner: wall,
                    tape: tape.clone(),
                })
                .monotonic_clock(TapedMonotonic {
                    inner: monotonic,
                    tape: tape.clone(),
                })
                .secure_random(TapedRng::new(
                    StdRng::seed_from_u64(seed),
                    tape.clone(),
                    true,
                ))
                .insecure_random(TapedRng::new(
                    StdRng::seed_from_u64(seed.rotate_left(32)),
                    tape.clone(),
                    false,
                ));
        }
        let audit = AuditLog::new(policy);
        let mut quotas = Quotas::new(audit.clone());
        for (i, mount) in policy
            .fs()
            .map_or(&[][..], |fs| &fs.mount)
            .iter()
            .enumerate()
        {
            if let Some(quota) = mount.quota {
                let max_files = mount.max_files.unwrap_or(crate::policy::DEFAULT_MAX_FILES);
                quotas.add(
                    &mount.guest,
                    &mount.host,
                    QuotaLimits {
                        bytes: quota.0,
                        files: max_files,
                        table: format!("fs.mount[{i}]"),
                    },
                    Usage::of_mount(&mount.host, max_files),
                );
            }
            let perms = match mount.mode {
                MountMode::Ro => FsPerms::ReadOnly,
                MountMode::Rw => FsPerms::ReadWrite,
            };
            wasi.preopened_dir(&mount.host, &mount.guest, perms)
                .map_err(|e| {
                    Error::InvalidPolicy(crate::PolicyError {
                        file: None,
                        key: "fs.mount".into(),
                        line: None,
                        column: None,
                        message: format!(
                            "cannot open {} for {}: {e:#}",
                            mount.host.display(),
                            mount.guest
                        ),
                    })
                })?;
        }
        let scratch = match policy.fs().and_then(|fs| fs.scratch.as_ref()) {
            Some(spec) => {
                // A seed that cannot be copied (it changed since the policy was loaded) is
                // the policy's to fix, and the caller is told which and why.
                let (dir, seeded) =
                    ScratchDir::create(&spec.seed, spec.max_files).map_err(|e| {
                        let key = match e.index {
                            usize::MAX => "fs.scratch".to_owned(),
                            i => format!("fs.scratch.seed[{i}]"),
                        };
                        Error::InvalidPolicy(crate::PolicyError {
                            file: None,
                            key,
                            line: None,
                            column: None,
                            message: e.message,
                        })
                    })?;
                quotas.add(
                    &spec.guest,
                    dir.path(),
                    QuotaLimits {
                        bytes: spec.quota.0,
                        files: spec.max_files,
                        table: "fs.scratch".into(),
                    },
                    Usage::known(seeded.bytes, seeded.files),
                );
                wasi.preopened_dir(dir.path(), &spec.guest, FsPerms::ReadWrite)
                    .map_err(|e| Error::Internal {
                        detail: format!("cannot open the scratch directory: {e:#}"),
                    })?;
                Some(dir)
            }
            None => None,
        };
        let wasi = wasi.build();
        Ok(Self {
            wasi,
            table: ResourceTable::new(),
            limiter: MemoryLimiter::new(policy.limits().memory.0),
            console: Console::new(policy.limits().console.0),
            capabilities: CapabilityState::new(
                policy,
                shared.handlers,
                audit.clone(),
                tape.clone(),
                shared.context,
            ),
            config: policy.config().cloned(),
            http_ctx: WasiHttpCtx::new(),
            http: HttpGate::new(
                policy.http().cloned(),
                shared.rate,
                audit.clone(),
                tape.clone(),
            ),
            kv: KvState::new(policy.kv().cloned(), shared.kv, audit, tape),
            quotas,
            _scratch: scratch,
        })
    }
}

/// A clock that always reads the same instant (a deterministic policy's `clock = "fixed"`).
struct FixedClock(Duration);

impl HostWallClock for FixedClock {
    fn resolution(&self) -> Duration {
        Duration::from_nanos(1)
    }
    fn now(&self) -> Duration {
        self.0
    }
}

impl HostMonotonicClock for FixedClock {
    fn resolution(&self) -> u64 {
        1
    }
    fn now(&self) -> u64 {
        0
    }
}

/// Room for the records of a host call's values above twice the memory limit.
const HOSTCALL_FUEL_ROOM: usize = 1 << 20;

/// Guest code yields to the executor each time it has used this much fuel (about half a
/// millisecond of QuickJS interpreting here), and the call's deadline is checked then.
pub(crate) const FUEL_SLICE: u64 = 10_000_000;

/// A store with the policy's limits: fuel, memory limiter, and the wall-clock deadline.
fn new_store(
    runtime: &Runtime,
    policy: &Policy,
    shared: Shared,
    deadline: Instant,
    fuel: u64,
) -> Result<Store<CallState>, Error> {
    let mut store = Store::new(&runtime.engine, CallState::new(policy, shared)?);
    store.data_mut().limiter.set_deadline(deadline);
    store.limiter(|state| &mut state.limiter);
    // wasmtime caps what one call between guest and host may copy (128 MiB by default) and
    // fails past it without a trap code. The guest can hand over no more than its memory holds
    // (each string or list element costs the host a record besides its bytes), so the cap
    // follows the policy's memory limit: a large result or console line is checked against the
    // policy's own limits instead.
    let memory = usize::try_from(policy.limits().memory.0).unwrap_or(usize::MAX);
    store.set_hostcall_fuel(memory.saturating_mul(2).saturating_add(HOSTCALL_FUEL_ROOM));
    if runtime.fuel {
        // Every FUEL_SLICE the guest yields, so that a CPU-bound guest cannot starve other
        // tasks; `guarded` checks the deadline each time the call is polled again.
        store.set_fuel(fuel).map_err(internal)?;
        store
            .fuel_async_yield_interval(Some(FUEL_SLICE))
            .map_err(internal)?;
    } else {
        // Each epoch tick: past the deadline, trap; otherwise yield likewise.
        store.epoch_deadline_callback(move |_| {
            if Instant::now() >= deadline {
                Err(DeadlineExceeded.into())
            } else {
                Ok(UpdateDeadline::Yield(1))
            }
        });
        store.set_epoch_deadline(1);
    }
    Ok(store)
}

/// Run `invoke` against the store under the deadline and classify how it ended. Guest code
/// yields every fuel slice (or epoch tick), and each time the call is polled again past the
/// deadline it ends; the outer timeout also bounds time spent waiting on the host.
async fn guarded<T>(
    store: &mut Store<CallState>,
    policy: &Policy,
    deadline: Instant,
    invoke: impl AsyncFnOnce(&mut Store<CallState>) -> wasmtime::Result<Result<T, runner::Error>>,
) -> Result<T, Error> {
    let remaining = deadline.saturating_duration_since(Instant::now());
    let ended = {
        let mut call = std::pin::pin!(invoke(store));
        let checked = std::future::poll_fn(|cx| {
            if Instant::now() >= deadline {
                return std::task::Poll::Ready(None);
            }
            call.as_mut().poll(cx).map(Some)
        });
        tokio::time::timeout(remaining, checked)
            .await
            .ok()
            .flatten()
    };
    match ended {
        Some(Ok(Ok(value))) => Ok(value),
        Some(Ok(Err(guest_error))) => Err(classify_guest(guest_error, store.data(), policy)),
        Some(Err(trap)) => Err(classify_trap(trap, &store.data().limiter, policy)),
        None => Err(Error::Timeout {
            limit: policy.limits().timeout,
        }),
    }
}

/// What a call under `policy` gets in the guest: its globals, its random seed, its clock.
pub(crate) fn environment(policy: &Policy, random_seed: u64) -> Environment {
    Environment {
        bridge_global: policy.capabilities().map(|c| c.global.clone()),
        random_seed,
        config: policy.config().is_some(),
        fs: policy.grants_files(),
        kv_bucket: policy.kv().map(|kv| kv.default_bucket.clone()),
        fixed_clock: matches!(policy.determinism().clock, Clock::Fixed(_)),
        spread_args: false,
        stack_limit: quickjs_stack_limit(policy.limits().stack.0),
    }
}

/// How much of the guest's shadow stack QuickJS may use under a native wasm stack of `stack`
/// bytes. A JavaScript call takes about 950 bytes of the native stack and 290 of the shadow
/// one, so a quarter of `stack` in shadow bytes runs out before the native stack does (and
/// before the 6 MiB shadow stack itself, for every `limits.stack`): QuickJS then throws a
/// `RangeError` the script can catch instead of the call ending in a trap.
fn quickjs_stack_limit(stack: u64) -> u32 {
    u32::try_from(stack / 4).unwrap_or(u32::MAX)
}

/// What a call invokes: an export (or a method of the default export) by name, with the input
/// as its one argument or, when `spread_args`, a JSON array of its arguments.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Invoke<'a> {
    pub export: &'a str,
    pub spread_args: bool,
}

impl Invoke<'static> {
    /// The default export, called with the input.
    pub const DEFAULT: Self = Invoke {
        export: "default",
        spread_args: false,
    };
}

pub(crate) async fn run(
    runtime: &Runtime,
    policy: &Policy,
    shared: Shared,
    script: &Script,
    invoke: Invoke<'_>,
    input: &str,
    times: Times,
) -> Outcome {
    let Times {
        started,
        deadline,
        fuel_spent,
    } = times;
    let limits = *policy.limits();
    let random_seed = match &shared.tape {
        Tape::Replay(replay) => replay.transcript.random_seed,
        tape => {
            let seed = policy.determinism().seed.unwrap_or_else(rand::random);
            tape.record(|t| t.random_seed = seed);
            seed
        }
    };
    let budget = limits.fuel.saturating_sub(fuel_spent);
    let mut store = match new_store(runtime, policy, shared, deadline, budget) {
        Ok(store) => store,
        Err(error) => return Outcome::failed(error, policy, started),
    };
    let module = match script.bytecode() {
        _ if script.is_compiled() => Module::Preloaded,
        Some(bytecode) => Module::Bytecode(bytecode.to_vec()),
        None => Module::Source(script.source().to_owned()),
    };
    let env = Environment {
        spread_args: invoke.spread_args,
        ..environment(policy, random_seed)
    };
    let result = guarded(&mut store, policy, deadline, async |store| {
        let sandbox = runtime.pre.instantiate_async(&mut *store).await?;
        sandbox
            .palisade_sandbox_runner()
            .call_run(
                &mut *store,
                script.name(),
                &module,
                script.module_files(),
                invoke.export,
                input,
                &env,
            )
            .await
    })
    .await
    .and_then(|json| accept_output(policy, json));

    let fuel_used = match store.get_fuel() {
        Ok(left) => fuel_spent + (budget - left),
        Err(_) => 0,
    };
    let mut state = store.into_data();
    // Resources (response bodies, pending calls) finish their audit records when dropped.
    drop(std::mem::take(&mut state.table));
    let secrets = state.http.secrets().clone();
    let mut result = result;
    if !secrets.is_empty() {
        result = redact_result(result, &secrets);
    }
    let result = result.map_err(|error| bound_error(error, limits.output.0));
    let audit = state.capabilities.audit.take();
    let receipt = Receipt {
        fuel_used,
        wall_time_us: micros(started.elapsed()),
        peak_memory_bytes: state.limiter.peak(),
        console_bytes_dropped: state.console.dropped(),
        console_lines_dropped: state.console.dropped_lines(),
        audit_records_dropped: audit.dropped,
        policy: policy.name().to_owned(),
        policy_sha256: policy.sha256().to_owned(),
    };
    if let Err(error) = &result {
        tracing::info!(
            code = error.code(),
            policy = policy.name(),
            "call failed: {error}"
        );
    }
    let mut logs = state.console.finish();
    if !secrets.is_empty() {
        for line in &mut logs {
            secrets.scrub(&mut line.message);
        }
    }
    let error_id = result
        .as_ref()
        .err()
        .and_then(|error| log_internal(error, policy));
    Outcome {
        result,
        error_id,
        logs,
        audit: audit.records,
        receipt,
    }
}

/// Compile a script to QuickJS bytecode in a sandbox of its own, under `policy`'s limits;
/// also returns the fuel the compile used, which the call it serves is charged for.
pub(crate) async fn compile(
    runtime: &Runtime,
    policy: &Policy,
    script: &Script,
    deadline: Instant,
) -> (Result<Vec<u8>, Error>, u64) {
    let budget = policy.limits().fuel;
    let mut store = match new_store(runtime, policy, Shared::default(), deadline, budget) {
        Ok(store) => store,
        Err(error) => return (Err(error), 0),
    };
    let result = guarded(&mut store, policy, deadline, async |store| {
        let sandbox = runtime.pre.instantiate_async(&mut *store).await?;
        sandbox
            .palisade_sandbox_runner()
            .call_compile(
                &mut *store,
                script.name(),
                script.source(),
                script.module_files(),
            )
            .await
    })
    .await;
    let used = store.get_fuel().map_or(0, |left| budget - left);
    (result, used)
}

pub(crate) fn check_input(policy: &Policy, input: &str) -> Result<(), Error> {
    let limit = policy.limits().input;
    if input.len() as u64 > limit.0 {
        return Err(Error::InvalidInput {
            detail: format!(
                "the input is {} bytes, over the {limit} input limit",
                input.len()
            ),
            // The policy accepts inputs up to 256 MiB; past that no policy change helps.
            fix: (input.len() as u64 <= 256 << 20).then(|| crate::Fix {
                key: "limits.input".into(),
                value: format!(
                    "\"{}\"",
                    crate::policy::ByteSize(
                        (input.len() as u64).next_power_of_two().min(256 << 20)
                    )
                ),
            }),
        });
    }
    // Whether it is JSON is checked where it is read, in the guest, before any of the script
    // runs: reading it twice was 4% of a call with a 40 KB input.
    Ok(())
}

fn accept_output(policy: &Policy, json: String) -> Result<Box<RawValue>, Error> {
    let limit = policy.limits().output;
    if json.len() as u64 > limit.0 {
        return Err(Error::OutputTooLarge {
            size: json.len() as u64,
            limit,
        });
    }
    RawValue::from_string(json).map_err(|e| {
        internal(wasmtime::Error::msg(format!(
            "guest output is not JSON: {e}"
        )))
    })
}

/// Replace secret values, in every form they can take there, in the output and in every text
/// of an error (a secret can only reach the script through a response that echoes it; the
/// script can put it into names, URLs and messages). Audit records are redacted as they are
/// made (`AuditLog`).
fn redact_result(
    result: Result<Box<RawValue>, Error>,
    secrets: &Secrets,
) -> Result<Box<RawValue>, Error> {
    match result {
        Ok(output) => match secrets.redact(output.get()) {
            None => Ok(output),
            Some(clean) => RawValue::from_string(clean).map_err(|_| Error::BadOutput {
                detail: "the result held a secret value and could not be redacted".into(),
            }),
        },
        Err(error) => Err(secrets.redact_error(error)),
    }
}

/// Bound the script's text in an error (its message and stack, or a detail it chose) by
/// `limits.output`, as its result is: together they keep at most `limit` bytes, and a cut text
/// ends with a marker saying how much was cut.
fn bound_error(error: Error, limit: u64) -> Error {
    let mut room = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut cut = |text: String| {
        let text = cut_text(text, room);
        room = room.saturating_sub(text.len());
        text
    };
    match error {
        Error::GuestException {
            name,
            message,
            stack,
            location,
        } => Error::GuestException {
            name: cut(name),
            message: cut(message),
            stack: stack.map(cut),
            location,
        },
        Error::GuestSyntax {
            message,
            location,
            stack,
        } => Error::GuestSyntax {
            message: cut(message),
            location,
            stack: stack.map(cut),
        },
        Error::GuestDeadlock { detail } => Error::GuestDeadlock {
            detail: cut(detail),
        },
        Error::BadOutput { detail } => Error::BadOutput {
            detail: cut(detail),
        },
        Error::NotCompilable { detail } => Error::NotCompilable {
            detail: cut(detail),
        },
        other => other,
    }
}

/// `text` cut to at most `room` bytes (at a character boundary), marked when cut.
fn cut_text(mut text: String, room: usize) -> String {
    if text.len() <= room {
        return text;
    }
    let marker = |n: usize| format!("… [{n} bytes cut at limits.output]");
    // With no room for the marker, the text is dropped whole.
    let Some(keep) = room.checked_sub(marker(text.len()).len()) else {
        return String::new();
    };
    let mut end = keep;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let removed = text.len() - end;
    text.truncate(end);
    text.push_str(&marker(removed));
    text
}

fn internal(e: wasmtime::Error) -> Error {
    tracing::error!("internal error: {e:#}");
    Error::Internal {
        detail: format!("{e:#}"),
    }
}

/// A shadow-stack overflow is an out-of-bounds access at the end of a deep recursion; an
/// access that is out of bounds after fewer frames than this is some other fault.
const SHADOW_STACK_OVERFLOW_FRAMES: usize = 64;

/// Classify a trap by what tripped: the deadline marker, the trap code, the limiter's flag.
fn classify_trap(error: wasmtime::Error, limiter: &MemoryLimiter, policy: &Policy) -> Error {
    let limits = policy.limits();
    if error.downcast_ref::<DeadlineExceeded>().is_some() {
        return Error::Timeout {
            limit: limits.timeout,
        };
    }
    // wasi:http traps on request headers past its size limit; the guests check that limit
    // before they call it, so only a hand-made component gets here.
    if let Some(fields) = error.downcast_ref::<wasmtime_wasi_http::FieldMapError>() {
        return Error::GuestTrap {
            trap: format!("request headers: {fields}"),
        };
    }
    let frames = || {
        error
            .downcast_ref::<wasmtime::WasmBacktrace>()
            .map_or(0, |trace| trace.frames().len())
    };
    match error.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => Error::FuelExhausted {
            budget: limits.fuel,
        },
        Some(Trap::StackOverflow) => Error::StackOverflow {
            limit: limits.stack,
            shadow_stack: false,
        },
        Some(Trap::Interrupt) => Error::Timeout {
            limit: limits.timeout,
        },
        // The guest's shadow stack sits at the bottom of linear memory: running off its end is
        // an out-of-bounds access at a wrapped-around address, deep in a recursion.
        Some(Trap::MemoryOutOfBounds)
            if !limiter.denied() && frames() >= SHADOW_STACK_OVERFLOW_FRAMES =>
        {
            Error::StackOverflow {
                limit: limits.stack,
                shadow_stack: true,
            }
        }
        _ if limiter.denied() => Error::MemoryLimit {
            limit: limits.memory,
        },
        // Every other trap code is the guest's own fault (a forged or broken component).
        Some(trap) => {
            tracing::warn!(%trap, "the guest's wasm trapped: {error:?}");
            Error::GuestTrap {
                trap: trap.to_string(),
            }
        }
        None => internal(error),
    }
}

fn classify_guest(error: runner::Error, state: &CallState, policy: &Policy) -> Error {
    // QuickJS reports a refused allocation as an `InternalError: out of memory` exception; the
    // limiter saw it happen. A script that caught that error and then failed in some other way
    // is reported by what it failed with.
    if state.limiter.denied() && is_out_of_memory(&error) {
        return Error::MemoryLimit {
            limit: policy.limits().memory,
        };
    }
    // QuickJS's own stack check threw and nothing caught it: the recursion was too deep for
    // the policy's stack, as when a wasm stack runs out.
    if let runner::Error::Exception(e) = &error
        && e.name == "RangeError"
        && e.message == "Maximum call stack size exceeded"
    {
        return Error::StackOverflow {
            limit: policy.limits().stack,
            shadow_stack: false,
        };
    }
    // An uncaught refusal is reported from the host's record of it, not from the exception.
    if let runner::Error::Exception(e) = &error
        && e.name == "PolicyDeniedError"
        && let Some(denial) = state.capabilities.audit.last_denial()
    {
        return denial;
    }
    guest_error(error)
}

/// Whether the guest's error is QuickJS's own out-of-memory exception (the one it throws when an
/// allocation is refused), as opposed to an error a script made after recovering from one.
fn is_out_of_memory(error: &runner::Error) -> bool {
    match error {
        // QuickJS throws `InternalError: out of memory`, or `null` when it cannot even make
        // that error.
        runner::Error::Exception(e) => e.name == "InternalError" || e.name == "null",
        runner::Error::Deadlock(_) | runner::Error::MissingExport(_) => false,
        _ => true,
    }
}

/// The host error for an error the guest returned.
pub(crate) fn guest_error(error: runner::Error) -> Error {
    let location = |l: Option<runner::Location>| {
        l.map(|l| GuestLocation {
            line: l.line,
            column: l.column,
        })
    };
    match error {
        runner::Error::Syntax(e) => Error::GuestSyntax {
            message: e.message,
            location: location(e.location),
            stack: e.stack,
        },
        runner::Error::Exception(e) => Error::GuestException {
            name: e.name,
            message: e.message,
            stack: e.stack,
            location: location(e.location),
        },
        runner::Error::Deadlock(detail) => Error::GuestDeadlock { detail },
        runner::Error::BadOutput(detail) => Error::BadOutput { detail },
        runner::Error::InvalidInput(detail) => Error::InvalidInput { detail, fix: None },
        runner::Error::MissingExport(detail) => Error::MissingExport { detail },
        runner::Error::NotCompilable(detail) => Error::NotCompilable { detail },
    }
}
