//! Long-lived state: wasmtime engines, the compiled guest, linkers, `InstancePre`s, the epoch
//! ticker (without fuel metering) and the admission limit. Built once per process and shared by every call.

use crate::auto::{AutoCompileStatus, AutoCompiler, Plan};
use crate::bytecode::BytecodeCache;
use crate::call::{self, CallState, Outcome};
use crate::caps::capability::Handler;
use crate::caps::http::{RateLimiter, rate_limiter};
use crate::guest::Guest;
use crate::kv::{KvBackend, RedbBackend};
use crate::policy::{ByteSize, Policy};
use crate::record::{Recorder, Replay, TRANSCRIPT_VERSION, Tape, Transcript};
use crate::secrets::Secrets;
use crate::{CallContext, RunOptions};
use crate::{Error, Script};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tokio::sync::Semaphore;
use wasmtime::component::{HasSelf, Linker};
use wasmtime::{Config, Engine, EngineWeak, InstanceAllocationStrategy, PoolingAllocationConfig};

pub(crate) mod bindings {
    wasmtime::component::bindgen!({
        world: "sandbox",
        path: "wit",
        imports: {
            "palisade:sandbox/capability": async | trappable,
            "wasi:keyvalue/store": async | trappable,
        },
        with: {
            "wasi:io": wasmtime_wasi::p2::bindings::io,
            "wasi:clocks": wasmtime_wasi::p2::bindings::clocks,
            "wasi:random": wasmtime_wasi::p2::bindings::random,
            "wasi:http": wasmtime_wasi_http::p2::bindings::http,
            "palisade:sandbox/capability.pending-call": crate::caps::capability::PendingCall,
            "wasi:keyvalue/store.bucket": crate::caps::kv::Bucket,
        },
        exports: { default: async },
    });
}

/// Compiled scripts whose machine code and linked `InstancePre` stay loaded per engine.
const COMPILED_SCRIPTS: usize = 32;

/// Cranelift time per minute for compiled scripts' components ([`Builder::compile_budget`]):
/// about 24 new components a minute, half of one core's time at most.
const DEFAULT_COMPILE_BUDGET: Duration = Duration::from_secs(30);

/// Disk space for compiled scripts' cache entries ([`Builder::script_cache_size`]): about 40
/// entries of 6 MB.
const DEFAULT_SCRIPT_CACHE_SIZE: ByteSize = ByteSize(256 << 20);

/// The longest an automatic compile ([`Builder::auto_compile`]) may spend evaluating a
/// script's top level, whatever the policy's `limits.timeout`: it runs in the background,
/// beside the calls, and a top level slower than this keeps running from source.
const AUTO_COMPILE_TIMEOUT: Duration = Duration::from_secs(2);

/// How often the epoch ticker advances every engine's epoch, when fuel is not metered.
/// Deadlines are then checked at each tick, so a call overruns its timeout by at most about
/// one tick.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(1);

/// Host functions (WASI, console) run on the same fiber stack as the guest; this is the room
/// they get beyond the policy's wasm stack.
const HOST_STACK_ROOM: usize = 1 << 20;

/// Settings fixed for the life of a [`Palisade`].
#[derive(Clone)]
pub struct Builder {
    max_concurrency: u32,
    queue_timeout: Duration,
    max_memory: ByteSize,
    keep_resident: ByteSize,
    cache_dir: Option<PathBuf>,
    bytecode_cache: usize,
    on_compile: Arc<dyn Fn() + Send + Sync>,
    handlers: HashMap<String, Handler>,
    kv: KvSetting,
    fuel: bool,
    auto_compile: u32,
    compile_budget: Duration,
    script_cache_size: ByteSize,
}

/// Where the key-value store comes from.
#[derive(Clone)]
enum KvSetting {
    /// A redb file, opened when a policy with `[kv]` first needs it.
    Path(PathBuf),
    /// A backend the embedder built.
    Backend(Arc<dyn KvBackend>),
}

impl Default for Builder {
    fn default() -> Self {
        Self {
            max_concurrency: 256,
            queue_timeout: Duration::from_secs(10),
            max_memory: ByteSize(1 << 30),
            keep_resident: ByteSize(10 << 20),
            cache_dir: crate::cache::default_dir(),
            bytecode_cache: 1024,
            on_compile: Arc::new(|| {}),
            handlers: HashMap::new(),
            kv: KvSetting::Path(crate::cache::default_data_dir().join("kv.redb")),
            fuel: true,
            auto_compile: 0,
            compile_budget: DEFAULT_COMPILE_BUDGET,
            script_cache_size: DEFAULT_SCRIPT_CACHE_SIZE,
        }
    }
}

impl Builder {
    /// Calls that may run at once; each holds one slot of the instance pool. Default 256.
    pub fn max_concurrency(mut self, n: u32) -> Self {
        self.max_concurrency = n.max(1);
        self
    }

    /// How long a call waits for a free slot before failing with `capacity_exhausted`.
    /// Default 10 s.
    pub fn queue_timeout(mut self, wait: Duration) -> Self {
        self.queue_timeout = wait;
        self
    }

    /// The largest `limits.memory` any policy may ask for; sizes the pool's memory slots.
    /// Default 1 GiB (address space is reserved, not memory).
    pub fn max_memory(mut self, size: ByteSize) -> Self {
        self.max_memory = ByteSize(size.0.min(4 << 30));
        self
    }

    /// Bytes of each memory slot kept mapped between calls instead of being returned to the
    /// kernel; trades resident memory for instantiation speed. Default 10 MiB: the guest's 6 MiB
    /// shadow stack sits below its data, and a call's hot pages (the top of that stack, the
    /// snapshot's data and first heap pages) lie in the 4 MiB above it.
    pub fn keep_resident(mut self, size: ByteSize) -> Self {
        self.keep_resident = size;
        self
    }

    /// Folder for the compiled guest; `None` compiles in memory at every start.
    pub fn cache_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.cache_dir = dir;
        self
    }

    /// Cranelift time that compiling compiled scripts' components for this machine may take,
    /// per minute (a component is compiled on its first call on a machine, about 1.25 s each,
    /// before the call's deadline starts; later calls map it from the disk cache). Compiles run
    /// one at a time; past the budget, a call that needs one fails with `capacity_exhausted`
    /// and a retry delay. Default 30 s per minute; `Duration::ZERO` runs only components
    /// already compiled here.
    pub fn compile_budget(mut self, per_minute: Duration) -> Self {
        self.compile_budget = per_minute;
        self
    }

    /// Disk space that compiled scripts' cache entries may take in the cache folder (about
    /// 6 MB each); past it the least recently used are removed. Default 256 MiB. The guests'
    /// own entries are not counted.
    pub fn script_cache_size(mut self, size: ByteSize) -> Self {
        self.script_cache_size = size;
        self
    }

    /// Scripts whose QuickJS bytecode is kept in memory (keyed by name and source), so that
    /// repeated calls skip parsing. Default 1,024; 0 turns the cache off.
    pub fn bytecode_cache(mut self, entries: usize) -> Self {
        self.bytecode_cache = entries;
        self
    }

    /// Register an async handler for the host capability `name`. Scripts reach it as
    /// `host.NAME(payload)` (or under the global the policy names) when their policy allows
    /// `name` in `[capabilities.allow]`; the policy's checks run before the handler. An `Err`
    /// reaches the script as a `CapabilityError` with that message.
    pub fn capability<F, Fut>(mut self, name: impl Into<String>, handler: F) -> Self
    where
        F: Fn(serde_json::Value) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<serde_json::Value, String>> + Send + 'static,
    {
        let handler: Handler = Arc::new(move |_context, payload| Box::pin(handler(payload)));
        self.handlers.insert(name.into(), handler);
        self
    }

    /// Register a capability whose handler also gets the call's [`CallContext`]: its call id,
    /// the policy's name and SHA-256, and the metadata the embedder attached to the call
    /// ([`RunOptions::metadata`]). A handler that panics ends its own call as `internal`; one
    /// that never answers ends it at its deadline, as `timeout`.
    pub fn capability_with_context<F, Fut>(mut self, name: impl Into<String>, handler: F) -> Self
    where
        F: Fn(CallContext, serde_json::Value) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<serde_json::Value, String>> + Send + 'static,
    {
        let handler: Handler =
            Arc::new(move |context, payload| Box::pin(handler(context, payload)));
        self.handlers.insert(name.into(), handler);
        self
    }

    /// Keep the key-value store (`[kv]` policies) in the redb file at `path`, opened on first
    /// use. The default is `kv.redb` in `$PALISADE_DATA_DIR`, else `$XDG_DATA_HOME/palisade`,
    /// else `~/.local/share/palisade`. A file can be open in one process at a time.
    pub fn kv_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.kv = KvSetting::Path(path.into());
        self
    }

    /// Use `backend` for the key-value store, such as a networked store for several hosts.
    pub fn kv_backend(mut self, backend: Arc<dyn KvBackend>) -> Self {
        self.kv = KvSetting::Backend(backend);
        self
    }

    /// Meter fuel (default on). Off, policies' `limits.fuel` is not enforced and receipts
    /// report no fuel; the deadline (checked at epoch ticks instead of fuel slices) and the
    /// memory limit still hold. For measuring what metering costs against epoch-only
    /// interruption (`palisade bench --no-fuel`); leave it on in production: `limits.fuel` is a
    /// policy promise.
    pub fn fuel_metering(mut self, on: bool) -> Self {
        self.fuel = on;
        self
    }

    /// Compile a source script into a component of its own (as [`Palisade::compile`] does) once
    /// it has been called `calls` times under the same policy, in the background, and run its
    /// later calls under that policy from the component: each still in a fresh instance, but
    /// without evaluating the module's top level again. 0 (the default) turns this off.
    ///
    /// The compile is made for the policy: its globals (`config`, `kv`, `fs`, the capability
    /// bridge's) exist while the top level runs, as from source. A script whose top level uses
    /// one of them, reads the clock, draws random numbers, starts timers, logs or calls the
    /// host is not compiled and keeps running from source. Once compiled, a call's
    /// fuel, time and receipt no longer include the top level. Compiling takes about a second
    /// of CPU per script (on the blocking thread pool; the machine code is cached on disk like
    /// the guest's); the 32 most recently used compiled scripts are kept.
    /// [`Palisade::auto_compile_status`] tells where a script stands.
    pub fn auto_compile(mut self, calls: u32) -> Self {
        self.auto_compile = calls;
        self
    }

    /// Called before the one-time compilation of the guest (a cache miss), for progress output.
    pub fn on_compile(mut self, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.on_compile = Arc::new(f);
        self
    }

    /// Build the engine for the default policy's stack size (and, without fuel metering, start
    /// the epoch ticker).
    pub fn build(self) -> Result<Palisade, Error> {
        // Scratch directories of processes that were killed before they could remove them.
        crate::scratch::sweep_stale();
        let handlers = Arc::new(self.handlers.clone());
        let inner = Arc::new(Inner {
            handlers,
            admission: Arc::new(Semaphore::new(self.max_concurrency as usize)),
            bytecode: BytecodeCache::new(self.bytecode_cache),
            engines: Mutex::new(HashMap::new()),
            runtimes: Mutex::new(HashMap::new()),
            compiled: Mutex::new(lru::LruCache::new(
                std::num::NonZeroUsize::new(COMPILED_SCRIPTS).expect("non-zero"),
            )),
            tickers: Mutex::new(Vec::new()),
            rates: Mutex::new(HashMap::new()),
            kv: std::sync::OnceLock::new(),
            auto: AutoCompiler::new(self.auto_compile),
            compiles: crate::cache::CompileGate::new(self.compile_budget),
            settings: self,
        });
        let default = Policy::builtin_default();
        inner.runtime(default.limits().stack, Guest::for_policy(&default))?;
        if !inner.settings.fuel {
            spawn_ticker(Arc::downgrade(&inner));
        }
        Ok(Palisade { inner })
    }
}

/// A Palisade instance: create one per process, share it (it is cheap to clone), and call
/// [`Palisade::run`] from as many tasks as you like.
#[derive(Clone)]
pub struct Palisade {
    inner: Arc<Inner>,
}

struct Inner {
    settings: Builder,
    handlers: Arc<HashMap<String, Handler>>,
    admission: Arc<Semaphore>,
    bytecode: Option<BytecodeCache>,
    /// One engine per wasm stack size: wasmtime fixes the stack limit per engine.
    engines: Mutex<HashMap<u64, Engine>>,
    /// Each guest's runtime on each engine, by stack size.
    runtimes: Mutex<HashMap<(u64, Guest), Arc<Runtime>>>,
    /// Compiled scripts, by stack size and the component's SHA-256.
    compiled: Mutex<lru::LruCache<CompiledKey, Arc<Runtime>>>,
    /// The engines the epoch ticker advances; its own lock, so that it never waits on a build.
    tickers: Mutex<Vec<EngineWeak>>,
    /// Request rate limiters by policy SHA-256: a policy's `http.rate` spans all its calls.
    rates: Mutex<HashMap<String, Option<Arc<RateLimiter>>>>,
    /// The key-value store, opened on first use (or why it could not be).
    kv: std::sync::OnceLock<Result<Arc<dyn KvBackend>, String>>,
    /// Scripts compiled in the background once called often ([`Builder::auto_compile`]).
    auto: Option<AutoCompiler>,
    /// Cranelift compiles of compiled scripts' components: one at a time, within a budget.
    compiles: crate::cache::CompileGate,
}

/// A compiled script's runtime: the stack size of its engine and the component's SHA-256.
type CompiledKey = (u64, [u8; 32]);

/// One engine with its linked, ready-to-instantiate guest.
pub(crate) struct Runtime {
    pub engine: Engine,
    pub pre: bindings::SandboxPre<CallState>,
    /// Whether the engine meters fuel ([`Builder::fuel_metering`]).
    pub fuel: bool,
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

    /// Run `script`'s default export with `input` (JSON text) under `policy`, in a fresh sandbox.
    pub async fn run(&self, policy: &Policy, script: &Script, input: &str) -> Outcome {
        self.call(policy, script, "default", input).await
    }

    /// Compile `script` to QuickJS bytecode once, under `policy`'s limits, so that later calls
    /// skip parsing. A syntax error is reported here, as `guest_syntax`. A script with modules
    /// ([`Script::with_modules`]) is checked the same way but keeps running from source, since
    /// bytecode does not keep its imports' attributes.
    ///
    /// For a compiled script ([`Script::from_component`]) this loads its component for this
    /// machine instead (from the on-disk cache, or compiling it there), so that the first call
    /// does not wait for it.
    pub async fn precompile(&self, policy: &Policy, script: &Script) -> Result<Script, Error> {
        if let Some(compiled) = script.compiled() {
            self.compiled_runtime(policy, compiled).await?;
            return Ok(script.clone());
        }
        let runtime = self
            .runtime(policy.limits().stack, Guest::for_policy(policy))
            .await?;
        let permit = tokio::time::timeout(
            self.inner.settings.queue_timeout,
            self.inner.admission.clone().acquire_owned(),
        )
        .await
        .ok()
        .and_then(Result::ok)
        .ok_or(Error::CapacityExhausted {
            waited_ms: self.inner.settings.queue_timeout.as_millis() as u64,
        })?;
        let deadline = std::time::Instant::now() + policy.limits().timeout.0;
        let (bytecode, _fuel) = call::compile(&runtime, policy, script, deadline).await;
        drop(permit);
        let bytecode = bytecode?;
        // QuickJS's bytecode does not keep import attributes (`with { type: "json" }`): a
        // script with modules is checked here but runs from source.
        if script.modules().next().is_some() {
            return Ok(script.clone());
        }
        Ok(script.with_bytecode(bytecode.into()))
    }

    /// Compile `script` into a component of its own: the guest snapshotted again after
    /// evaluating the module, so that a call only invokes its export. Load the result with
    /// [`Script::from_component`]; `palisade compile` writes it to a file.
    ///
    /// The module's top level runs once, here, under `policy`'s fuel and memory limits, with
    /// no clock, random source, timer or host capability: whatever it computed would be frozen
    /// into every call, so such uses fail with `not_compilable`. The globals a call under
    /// `policy` gets (`config`, `kv`, `fs`, the capability bridge's) exist while it runs, as
    /// they do for a call from source, but using one at the top level fails the same way. The
    /// first compile on a machine compiles the instrumented guest with Cranelift (about a
    /// second, then cached on disk); later ones take tens of milliseconds. The top level runs
    /// under `policy`'s `limits.timeout` as well: one still running then fails with `timeout`.
    pub async fn compile(&self, policy: &Policy, script: &Script) -> Result<Vec<u8>, Error> {
        self.compile_within(policy, script, policy.limits().timeout.0)
            .await
    }

    /// [`Palisade::compile`] with the top level's wall-clock time bounded by `timeout`.
    async fn compile_within(
        &self,
        policy: &Policy,
        script: &Script,
        timeout: Duration,
    ) -> Result<Vec<u8>, Error> {
        if let Some(compiled) = script.compiled() {
            return Ok(compiled.wasm.to_vec());
        }
        let limits = crate::policy::Limits {
            timeout: crate::policy::HumanDuration(timeout),
            ..*policy.limits()
        };
        // The call environment names the policy's globals; the seed is not used here.
        let env = call::environment(policy, 0);
        let guest = Guest::for_policy(policy);
        let (name, source) = (script.name().to_owned(), script.source().to_owned());
        let modules = script.module_files().to_vec();
        let handle = tokio::runtime::Handle::current();
        let settings = self.inner.settings.clone();
        tokio::task::spawn_blocking(move || {
            let mut wasm = handle.block_on(crate::snapshot::preload(
                guest,
                settings.cache_dir.as_deref(),
                &*settings.on_compile,
                &name,
                &source,
                &modules,
                &env,
                &limits,
            ))?;
            let marker = crate::script::Marker {
                format: crate::script::MARKER_FORMAT,
                guest: guest.sha256().to_owned(),
                name,
                source,
            };
            crate::script::add_marker(&mut wasm, &marker);
            Ok(wasm)
        })
        .await
        .map_err(|e| Error::Internal {
            detail: format!("the compile task failed: {e}"),
        })?
    }

    /// The runtime of `guest` for `stack`; loading it (a Cranelift compile on a cache miss)
    /// runs on the blocking thread pool, not on the caller's async worker.
    async fn runtime(&self, stack: ByteSize, guest: Guest) -> Result<Arc<Runtime>, Error> {
        if let Some(runtime) = self.inner.loaded(stack, guest) {
            return Ok(runtime);
        }
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || inner.runtime(stack, guest))
            .await
            .map_err(|e| Error::Internal {
                detail: format!("the engine setup task failed: {e}"),
            })?
    }

    /// The runtime of a compiled script: its component compiled for this machine (cached on
    /// disk like the guest) and linked, kept in memory for later calls. A script compiled under
    /// a policy that granted no capability extends the plain guest, which cannot serve a
    /// policy that grants one.
    async fn compiled_runtime(
        &self,
        policy: &Policy,
        compiled: &crate::script::Compiled,
    ) -> Result<Arc<Runtime>, Error> {
        if compiled.guest == Guest::Plain && Guest::for_policy(policy) == Guest::Full {
            return Err(Error::InvalidComponent {
                detail: format!(
                    "it was compiled under a policy that grants no capability, and `{}` grants \
                     one; compile it again with that policy (`palisade compile --policy`)",
                    policy.name()
                ),
            });
        }
        let key = (policy.limits().stack.0, compiled.sha256);
        let lock = || {
            self.inner
                .compiled
                .lock()
                .unwrap_or_else(|e| e.into_inner())
        };
        if let Some(runtime) = lock().get(&key) {
            return Ok(runtime.clone());
        }
        let engine = self
            .inner
            .engine(policy.limits().stack)
            .map_err(|e| Error::Internal {
                detail: format!("engine setup failed: {e:#}"),
            })?;
        let component = self.script_component(&engine, &compiled.wasm).await?;
        let fuel = self.inner.settings.fuel;
        let runtime = tokio::task::spawn_blocking(move || -> wasmtime::Result<Runtime> {
            let pre = instance_pre(&engine, &component)?;
            Ok(Runtime { engine, pre, fuel })
        })
        .await
        .map_err(|e| Error::Internal {
            detail: format!("the link task failed: {e}"),
        })?
        .map_err(|e: wasmtime::Error| Error::InvalidComponent {
            detail: format!("it does not load: {e:#}"),
        })?;
        let runtime = Arc::new(runtime);
        lock().put(key, runtime.clone());
        Ok(runtime)
    }

    /// A compiled script's component for `engine`: mapped from the disk cache, or compiled
    /// with Cranelift (one compile at a time, waiting at most `queue_timeout` for the others,
    /// and within [`Builder::compile_budget`]) and stored there.
    async fn script_component(
        &self,
        engine: &Engine,
        wasm: &Arc<[u8]>,
    ) -> Result<wasmtime::component::Component, Error> {
        let settings = &self.inner.settings;
        let cached = || {
            let (engine, wasm, dir) = (engine.clone(), wasm.clone(), settings.cache_dir.clone());
            tokio::task::spawn_blocking(move || {
                crate::cache::cached_script(&engine, &wasm, dir.as_deref())
            })
        };
        let failed = |e: tokio::task::JoinError| Error::Internal {
            detail: format!("the compile task failed: {e}"),
        };
        if let Some(component) = cached().await.map_err(failed)? {
            return Ok(component);
        }
        let gate = &self.inner.compiles;
        let permit = tokio::time::timeout(settings.queue_timeout, gate.one_at_a_time.acquire())
            .await
            .ok()
            .and_then(Result::ok)
            .ok_or(Error::CapacityExhausted {
                waited_ms: settings.queue_timeout.as_millis() as u64,
            })?;
        // Another call may have compiled it while this one waited.
        if let Some(component) = cached().await.map_err(failed)? {
            return Ok(component);
        }
        gate.check().map_err(|retry| Error::CompileBudget {
            budget: crate::policy::HumanDuration(gate.budget()),
            retry_ms: retry.as_millis().max(1) as u64,
        })?;
        (settings.on_compile)();
        let started = std::time::Instant::now();
        let (engine, wasm, dir) = (engine.clone(), wasm.clone(), settings.cache_dir.clone());
        let max = settings.script_cache_size.0;
        // Compiling takes seconds of CPU: off the async workers.
        let compiled = tokio::task::spawn_blocking(move || {
            crate::cache::compile_script(&engine, &wasm, dir.as_deref(), max)
        })
        .await;
        gate.charge(started.elapsed());
        drop(permit);
        compiled
            .map_err(failed)?
            .map_err(|e| Error::InvalidComponent {
                detail: format!("it does not load: {e:#}"),
            })
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
    /// call and how, limits lower than the policy's, metadata for capability handlers. An
    /// option above the policy's limit ends the call as `invalid_input`, with the policy change
    /// that would allow it as the fix.
    pub async fn run_with(
        &self,
        policy: &Policy,
        script: &Script,
        input: &str,
        options: &RunOptions,
    ) -> Outcome {
        let limits = match options.limits(policy.limits()) {
            Ok(limits) => limits,
            Err(error) => return Outcome::failed(error, policy, std::time::Instant::now()),
        };
        let lowered;
        let policy = if limits == *policy.limits() {
            policy
        } else {
            lowered = policy.with_limits(limits);
            &lowered
        };
        let invoke = call::Invoke {
            export: options.export.as_deref().unwrap_or("default"),
            spread_args: options.spread_args,
        };
        self.call_taped_with(
            policy,
            script,
            invoke,
            input,
            Tape::Off,
            options.metadata.clone(),
        )
        .await
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
        self.call_taped_with(policy, script, entry, input, tape, None)
            .await
    }

    async fn call_taped_with(
        &self,
        policy: &Policy,
        script: &Script,
        entry: call::Invoke<'_>,
        input: &str,
        tape: Tape,
        metadata: Option<Arc<serde_json::Value>>,
    ) -> Outcome {
        use tracing::Instrument;
        let context = CallContext {
            call_id: format!("{:016x}", rand::random::<u64>()),
            capability: String::new(),
            policy: policy.name().to_owned(),
            policy_sha256: policy.sha256().to_owned(),
            metadata,
            argument_list: false,
        };
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
            .call_untraced(policy, script, entry, input, tape, context)
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

    async fn call_untraced(
        &self,
        policy: &Policy,
        script: &Script,
        entry: call::Invoke<'_>,
        input: &str,
        tape: Tape,
        context: CallContext,
    ) -> Outcome {
        let started = std::time::Instant::now();
        if let Err(error) = call::check_input(policy, input) {
            return Outcome::failed(error, policy, started);
        }
        let auto;
        let script = match self.auto_compiled(policy, script, &tape) {
            Some(compiled) => {
                auto = compiled;
                &auto
            }
            None => script,
        };
        // A compiled script's component is compiled for this machine on its first call (or
        // loaded from the disk cache) before its deadline starts: that is host work. A replay
        // from source runs in the full guest: the transcript's answers (a response, a stored
        // value) may come from a policy that granted what this one does not.
        let runtime = match (script.compiled(), &tape) {
            (Some(compiled), _) => self.compiled_runtime(policy, compiled).await,
            (None, Tape::Replay(_)) => self.runtime(policy.limits().stack, Guest::Full).await,
            (None, _) => {
                self.runtime(policy.limits().stack, Guest::for_policy(policy))
                    .await
            }
        };
        let runtime = match runtime {
            Ok(runtime) => runtime,
            Err(error) => return Outcome::failed(error, policy, started),
        };
        if policy.limits().memory > self.inner.settings.max_memory {
            let error = Error::InvalidPolicy(crate::PolicyError {
                file: None,
                key: "limits.memory".into(),
                line: None,
                column: None,
                message: format!(
                    "{} is over this Palisade's maximum of {} (see Builder::max_memory)",
                    policy.limits().memory,
                    self.inner.settings.max_memory
                ),
            });
            return Outcome::failed(error, policy, started);
        }
        let wait = self.inner.settings.queue_timeout;
        let permit =
            match tokio::time::timeout(wait, self.inner.admission.clone().acquire_owned()).await {
                Ok(Ok(permit)) => permit,
                _ => {
                    let error = Error::CapacityExhausted {
                        waited_ms: wait.as_millis() as u64,
                    };
                    return Outcome::failed(error, policy, started);
                }
            };
        // The deadline runs from here, once a slot is held: a compile on a bytecode-cache miss
        // and the run share it, and its fuel too.
        let deadline = std::time::Instant::now() + policy.limits().timeout.0;
        let cached;
        let (bytecode, fuel_spent) = self
            .cached_bytecode(&runtime, policy, script, deadline)
            .await;
        let script = match bytecode {
            Some(bytecode) => {
                cached = script.with_bytecode(bytecode);
                &cached
            }
            None => script,
        };
        let kv = match policy.kv() {
            Some(_) if tape.replaying().is_some() => None,
            Some(_) => match self.kv_backend() {
                Ok(kv) => Some(kv),
                Err(detail) => {
                    drop(permit);
                    return Outcome::failed(Error::Internal { detail }, policy, started);
                }
            },
            None => None,
        };
        let shared = call::Shared {
            handlers: self.inner.handlers.clone(),
            rate: self.rate_limiter(policy),
            kv,
            tape,
            context,
        };
        let outcome = call::run(
            &runtime,
            policy,
            shared,
            script,
            entry,
            input,
            call::Times {
                started,
                deadline,
                fuel_spent,
            },
        )
        .await;
        drop(permit);
        outcome
    }

    /// The compiled form of `script` when [`Builder::auto_compile`] has made one for `policy`;
    /// counts the call, and starts the compile when this call reaches the threshold.
    fn auto_compiled(&self, policy: &Policy, script: &Script, tape: &Tape) -> Option<Script> {
        let auto = self.inner.auto.as_ref()?;
        if !matches!(tape, Tape::Off) {
            return None;
        }
        match auto.decide(policy, script) {
            Plan::Run(compiled) => Some(compiled),
            Plan::Source => None,
            Plan::Compile(key) => {
                let (policy, script) = (policy.clone(), script.clone());
                let mut pending = PendingCompile {
                    palisade: self.clone(),
                    key: Some(key),
                };
                let background = auto.background.clone();
                tokio::spawn(async move {
                    let this = &pending.palisade;
                    // One background compile at a time; the others wait here.
                    let Ok(_permit) = background.acquire_owned().await else {
                        return;
                    };
                    let result = async {
                        // In the background, the top level gets the policy's deadline but
                        // never more than `AUTO_COMPILE_TIMEOUT`.
                        let timeout = policy.limits().timeout.0.min(AUTO_COMPILE_TIMEOUT);
                        let wasm = this.compile_within(&policy, &script, timeout).await?;
                        let compiled = Script::from_component(wasm)?;
                        // Load its machine code now, so that no call waits for it.
                        this.precompile(&policy, &compiled).await
                    }
                    .await;
                    pending.finish(result);
                });
                None
            }
        }
    }

    /// Where `script` stands with the automatic compiler under `policy`
    /// ([`Builder::auto_compile`]); `None` when that is off or the script is already compiled.
    pub fn auto_compile_status(
        &self,
        policy: &Policy,
        script: &Script,
    ) -> Option<AutoCompileStatus> {
        self.inner.auto.as_ref()?.status(policy, script)
    }

    /// The key-value store, opened on first use.
    fn kv_backend(&self) -> Result<Arc<dyn KvBackend>, String> {
        self.inner
            .kv
            .get_or_init(|| match &self.inner.settings.kv {
                KvSetting::Backend(backend) => Ok(backend.clone()),
                KvSetting::Path(path) => RedbBackend::open(path)
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
            .entry(policy.sha256().to_owned())
            .or_insert_with(|| rate_limiter(http))
            .clone()
    }

    /// Bytecode for a source script from the cache, compiling it on a miss, and the fuel that
    /// compile used (the call is charged for it). A script that does not compile runs from
    /// source, so that its error comes with the call's full receipt.
    async fn cached_bytecode(
        &self,
        runtime: &Runtime,
        policy: &Policy,
        script: &Script,
        deadline: std::time::Instant,
    ) -> (Option<Arc<[u8]>>, u64) {
        let Some(cache) = self.inner.bytecode.as_ref() else {
            return (None, 0);
        };
        // A script with modules runs from source (see `precompile`).
        if script.is_precompiled() || script.is_compiled() || script.modules().next().is_some() {
            return (None, 0);
        }
        let key = script.key();
        if let Some(bytecode) = cache.get(&key) {
            return (Some(bytecode), 0);
        }
        let (bytecode, fuel) = call::compile(runtime, policy, script, deadline).await;
        let Ok(bytecode) = bytecode else {
            return (None, fuel);
        };
        let bytecode: Arc<[u8]> = bytecode.into();
        cache.insert(key, bytecode.clone());
        (Some(bytecode), fuel)
    }
}

impl Inner {
    /// The runtime of `guest` on the engine for `stack`, if it is loaded.
    fn loaded(&self, stack: ByteSize, guest: Guest) -> Option<Arc<Runtime>> {
        self.runtimes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(stack.0, guest))
            .cloned()
    }

    /// The runtime of `guest` on the engine for `stack`, loading the guest on first use.
    fn runtime(&self, stack: ByteSize, guest: Guest) -> Result<Arc<Runtime>, Error> {
        if let Some(runtime) = self.loaded(stack, guest) {
            return Ok(runtime);
        }
        let key = (stack.0, guest);
        let lock = || self.runtimes.lock().unwrap_or_else(|e| e.into_inner());
        // Built without holding the lock: loading (or, on a cache miss, compiling) the guest
        // must not stall calls on other runtimes. Two racing builds of the same runtime are
        // harmless; the first one inserted wins.
        let built = self
            .engine(stack)
            .and_then(|engine| self.build_runtime(engine, guest))
            .map_err(|e| {
                tracing::error!("cannot set up the wasm engine: {e:#}");
                Error::Internal {
                    detail: format!("engine setup failed: {e:#}"),
                }
            })?;
        Ok(lock().entry(key).or_insert_with(|| Arc::new(built)).clone())
    }

    /// The engine for wasm stacks of `stack` bytes (wasmtime fixes the stack limit per
    /// engine), made on first use; both guests' runtimes share it and its instance pool.
    fn engine(&self, stack: ByteSize) -> wasmtime::Result<Engine> {
        let mut engines = self.engines.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(engine) = engines.get(&stack.0) {
            return Ok(engine.clone());
        }
        let engine = Engine::new(&engine_config(&self.settings, stack.0 as usize))?;
        self.tickers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(engine.weak());
        engines.insert(stack.0, engine.clone());
        Ok(engine)
    }

    fn build_runtime(&self, engine: Engine, guest: Guest) -> wasmtime::Result<Runtime> {
        let s = &self.settings;
        let component = crate::cache::load(
            &engine,
            guest.bytes(),
            s.cache_dir.as_deref(),
            &*s.on_compile,
        )?;
        let pre = instance_pre(&engine, &component)?;
        Ok(Runtime {
            engine,
            pre,
            fuel: s.fuel,
        })
    }

    fn tick(&self) {
        let engines = self.tickers.lock().unwrap_or_else(|e| e.into_inner());
        for engine in engines.iter().filter_map(EngineWeak::upgrade) {
            engine.increment_epoch();
        }
    }
}

/// Link a guest component (the embedded guest or a compiled script) against the host's
/// imports, ready to instantiate.
fn instance_pre(
    engine: &Engine,
    component: &wasmtime::component::Component,
) -> wasmtime::Result<bindings::SandboxPre<CallState>> {
    let mut linker: Linker<CallState> = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    crate::caps::files::add_to_linker(&mut linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
    // WASI and wasi:http are linked above; Palisade's own interfaces and wasi:config here.
    use bindings::palisade::sandbox::{capability, console};
    console::add_to_linker::<CallState, HasSelf<CallState>>(&mut linker, |s| s)?;
    capability::add_to_linker::<CallState, HasSelf<CallState>>(&mut linker, |s| s)?;
    bindings::wasi::config::store::add_to_linker::<CallState, HasSelf<CallState>>(
        &mut linker,
        |s| s,
    )?;
    bindings::wasi::keyvalue::store::add_to_linker::<CallState, HasSelf<CallState>>(
        &mut linker,
        |s| s,
    )?;
    bindings::SandboxPre::new(linker.instantiate_pre(component)?)
}

fn engine_config(s: &Builder, stack: usize) -> Config {
    let slots = s.max_concurrency;
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(slots)
        // The guest component holds a handful of core instances (the program and its WASI
        // adapter shims), one memory and a few tables.
        .total_core_instances(slots * 8)
        .total_memories(slots)
        .total_tables(slots * 4)
        .total_stacks(slots)
        .max_memory_size(s.max_memory.0 as usize)
        .linear_memory_keep_resident(s.keep_resident.0 as usize)
        .table_keep_resident(s.keep_resident.0 as usize)
        // Where the kernel has PAGEMAP_SCAN (Linux 6.7+), reset only the pages a call wrote,
        // rather than the whole kept-resident prefix of each memory.
        .pagemap_scan(wasmtime::Enabled::Auto);
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .consume_fuel(s.fuel)
        // With fuel metered, the guest yields every `call::FUEL_SLICE` of fuel and the deadline
        // is checked then; epoch checks would add a second test at every loop header (12–15%
        // of fib(25)). Without fuel, the epoch ticker interrupts the guest instead.
        .epoch_interruption(!s.fuel)
        .memory_init_cow(true)
        // Pooled memories never move; telling Cranelift lets it keep the memory's base across
        // calls instead of reloading it (w2 and fib(25) about 1% faster, docs/bench.md).
        .memory_may_move(false)
        // Smaller code for QuickJS's interpreter loop: fib(25) about 3% faster than at `Speed`
        // (14 alternating runs, docs/bench.md); w1 unchanged.
        .cranelift_opt_level(wasmtime::OptLevel::SpeedAndSize)
        .max_wasm_stack(stack)
        // A shadow-stack overflow is told apart from other out-of-bounds accesses by the depth
        // of the recursion it ends (`call::classify_trap`), so a trap keeps that many frames.
        .wasm_backtrace_max_frames(std::num::NonZeroUsize::new(64))
        .async_stack_size(stack + HOST_STACK_ROOM)
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    // For profiling (docs/bench.md): wasmtime writes /tmp/perf-PID.map so that `perf` names
    // the guest's functions.
    if std::env::var_os("PALISADE_PERFMAP").is_some() {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    config
}

/// A background compile started by [`Builder::auto_compile`]. Dropped before it finished (its
/// runtime shut down), it lets the script be counted afresh instead of staying "compiling".
struct PendingCompile {
    palisade: Palisade,
    key: Option<crate::auto::Key>,
}

impl PendingCompile {
    fn finish(&mut self, result: Result<Script, Error>) {
        if let (Some(key), Some(auto)) = (self.key.take(), &self.palisade.inner.auto) {
            auto.finish(key, result);
        }
    }
}

impl Drop for PendingCompile {
    fn drop(&mut self) {
        if let (Some(key), Some(auto)) = (self.key.take(), &self.palisade.inner.auto) {
            auto.abandon(key);
        }
    }
}

/// One thread advances the epoch of every engine; it ends when the Palisade is dropped.
fn spawn_ticker(inner: Weak<Inner>) {
    std::thread::Builder::new()
        .name("palisade-epoch".into())
        .spawn(move || {
            while let Some(inner) = inner.upgrade() {
                inner.tick();
                drop(inner);
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .expect("the epoch ticker thread starts");
}
