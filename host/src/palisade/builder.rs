//! [`Builder`]: the settings fixed for the life of a [`Palisade`].

use super::engines::{COMPILED_SCRIPTS, spawn_ticker};
use super::{Inner, Palisade};
use crate::Error;
use crate::auto::AutoCompiler;
use crate::bytecode::BytecodeCache;
use crate::caps::capability::Handler;
use crate::guest::Guest;
use crate::kv::KvBackend;
use crate::policy::{ByteSize, Policy};
use crate::{CallContext, CapabilityError};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Semaphore;

/// Cranelift time per minute for compiled scripts' components ([`Builder::compile_budget`]):
/// about 24 new components a minute, half of one core's time at most.
pub(super) const DEFAULT_COMPILE_BUDGET: Duration = Duration::from_secs(30);

/// Disk space for compiled scripts' cache entries ([`Builder::script_cache_size`]): about 40
/// entries of 6 MB.
pub(super) const DEFAULT_SCRIPT_CACHE_SIZE: ByteSize = ByteSize(256 << 20);

/// Settings fixed for the life of a [`Palisade`].
#[derive(Clone)]
pub struct Builder {
    pub(super) max_concurrency: u32,
    pub(super) pool_slots: Option<u32>,
    pub(super) queue_timeout: Duration,
    pub(super) max_memory: ByteSize,
    pub(super) keep_resident: ByteSize,
    pub(super) cache_dir: Option<PathBuf>,
    pub(super) bytecode_cache: usize,
    pub(super) on_compile: Arc<dyn Fn() + Send + Sync>,
    pub(super) handlers: HashMap<String, Handler>,
    pub(super) kv: KvSetting,
    pub(super) fuel: bool,
    pub(super) parallel_compilation: bool,
    pub(super) auto_compile: u32,
    pub(super) compile_budget: Duration,
    pub(super) script_cache_size: ByteSize,
    pub(super) audit_log: Option<PathBuf>,
    pub(super) after_epoch_tick: Arc<dyn Fn() + Send + Sync>,
}

/// Where the key-value store comes from.
#[derive(Clone)]
pub(super) enum KvSetting {
    /// A redb file, opened when a policy with `[kv]` first needs it.
    Path(PathBuf),
    /// A backend the embedder built.
    Backend(Arc<dyn KvBackend>),
}

impl Default for Builder {
    fn default() -> Self {
        Self {
            max_concurrency: 256,
            pool_slots: None,
            queue_timeout: Duration::from_secs(10),
            max_memory: ByteSize(1 << 30),
            keep_resident: ByteSize(10 << 20),
            cache_dir: crate::cache::default_dir(),
            bytecode_cache: 1024,
            on_compile: Arc::new(|| {}),
            handlers: HashMap::new(),
            kv: KvSetting::Path(crate::cache::default_data_dir().join("kv.sqlite3")),
            fuel: true,
            parallel_compilation: true,
            auto_compile: 0,
            compile_budget: DEFAULT_COMPILE_BUDGET,
            script_cache_size: DEFAULT_SCRIPT_CACHE_SIZE,
            audit_log: None,
            after_epoch_tick: Arc::new(|| {}),
        }
    }
}

impl Builder {
    /// Append every call's audit records to the file at `path` (created if missing; or a pipe or
    /// device such as `/dev/stderr`; a FIFO with no reader is refused by [`Builder::build`] at once
    /// rather than waited on) as JSON lines, when the call ends. Unlike the outcome's records, each
    /// HTTP record there also carries the `addresses` its host resolved to: the operator's view,
    /// never the script's or the caller's. A write that fails is logged at error level and kept for
    /// [`Palisade::audit_log_failure`](crate::Palisade::audit_log_failure).
    pub fn audit_log(mut self, path: impl Into<PathBuf>) -> Self {
        self.audit_log = Some(path.into());
        self
    }

    /// Calls that may run at once; each holds one slot of the instance pool. Default 256.
    pub fn max_concurrency(mut self, n: u32) -> Self {
        self.max_concurrency = n.max(1);
        self
    }

    /// Slots of each kind in the instance pool; default (and never fewer than)
    /// [`max_concurrency`](Self::max_concurrency). wasmtime splits a memory pool of 128 slots
    /// or more into shards (as many as CPUs, up to 16), handed to threads in turn, so that a
    /// thread mostly reuses the memory slot it just freed, still in its CPU's cache; a smaller
    /// memory pool is one list that all threads share. With `max_concurrency(64)` on two
    /// threads, `pool_slots(128)` ran in-process w1 about 24% faster (docs/bench.md). The cost
    /// is resident memory: a slot keeps up to [`keep_resident`](Self::keep_resident) bytes once
    /// a call has used it, and with shards more slots get used, up to this many.
    pub fn pool_slots(mut self, n: u32) -> Self {
        self.pool_slots = Some(n);
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
        self.max_memory = ByteSize(size.0.min(crate::policy::MEMORY_MAX));
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
    /// repeated calls skip parsing. Calls that miss while another call compiles the same
    /// script wait for its bytecode. Default 1,024; 0 turns the cache off.
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
        let handler: Handler = Arc::new(move |_context, payload| {
            let answer = handler(payload);
            Box::pin(async move { answer.await.map_err(CapabilityError::from) })
        });
        self.handlers.insert(name.into(), handler);
        self
    }

    /// Register a capability whose handler also gets the call's [`CallContext`]: its call id,
    /// the policy's name and SHA-256, and the metadata the embedder attached to the call
    /// ([`RunOptions::metadata`](crate::RunOptions::metadata)). A handler that panics ends its own call as `internal`; one
    /// that never answers ends it at its deadline, as `timeout`.
    pub fn capability_with_context<F, Fut>(mut self, name: impl Into<String>, handler: F) -> Self
    where
        F: Fn(CallContext, serde_json::Value) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<serde_json::Value, String>> + Send + 'static,
    {
        let handler: Handler = Arc::new(move |context, payload| {
            let answer = handler(context, payload);
            Box::pin(async move { answer.await.map_err(CapabilityError::from) })
        });
        self.handlers.insert(name.into(), handler);
        self
    }

    /// Register a capability whose handler gets the call's [`CallContext`] and reports typed
    /// failures: the script catches a [`CapabilityError`] as a JS `CapabilityError` with the
    /// same `code`, `message` and `retryable`. A handler that panics ends its own call as
    /// `internal`; one that never answers ends it at its deadline, as `timeout`.
    pub fn typed_capability<F, Fut>(mut self, name: impl Into<String>, handler: F) -> Self
    where
        F: Fn(CallContext, serde_json::Value) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<serde_json::Value, CapabilityError>>
            + Send
            + 'static,
    {
        let handler: Handler =
            Arc::new(move |context, payload| Box::pin(handler(context, payload)));
        self.handlers.insert(name.into(), handler);
        self
    }

    /// Keep the key-value store (`[kv]` policies) in the SQLite file at `path`, opened on first
    /// use. The default is `kv.sqlite3` in `$PALISADE_DATA_DIR`, else
    /// `$XDG_DATA_HOME/palisade`, else `~/.local/share/palisade`. Any number of processes may
    /// share the file; a `kv.redb` store of an earlier version beside it is copied in once.
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

    /// Compile a component's functions on a pool of threads, one per CPU (default on), or on
    /// the compiling thread alone: the guest and compiled scripts this Palisade runs. Off in a
    /// process `fork` made from one that had compiled: the pool (rayon's, one per process) was
    /// started in the parent, and its threads are not in the child, where a compile would wait
    /// for them for ever. The bindings turn it off in such a child. It does not reach
    /// [`Palisade::compile`] and auto-compile, which pre-initialize a script on an engine of
    /// their own, nor a live session's version 3 heap file's digest: both still use the pool.
    pub fn parallel_compilation(mut self, on: bool) -> Self {
        self.parallel_compilation = on;
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

    /// Called by the epoch ticker thread (which runs only without fuel metering) after each
    /// tick, before it sleeps to the next: a test hook that delays or stalls the ticker
    /// (`faults::a_delayed_epoch_ticker_delays_the_deadline_by_as_much`). Not part of the API.
    #[doc(hidden)]
    pub fn after_epoch_tick(mut self, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.after_epoch_tick = Arc::new(f);
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
        crate::caps::fs::scratch::sweep_stale();
        let handlers = Arc::new(self.handlers.clone());
        let audit_file = match &self.audit_log {
            Some(path) => Some(Arc::new(crate::audit_file::AuditFile::open(path).map_err(
                |e| Error::Internal {
                    detail: format!("cannot open the audit log {}: {e}", path.display()),
                },
            )?)),
            None => None,
        };
        let inner = Arc::new(Inner {
            audit_file,
            handlers,
            admission: Arc::new(Semaphore::new(self.max_concurrency as usize)),
            bytecode: BytecodeCache::new(self.bytecode_cache),
            engines: Mutex::new(HashMap::new()),
            runtimes: Mutex::new(HashMap::new()),
            live: tokio::sync::Mutex::new(HashMap::new()),
            compiled: Mutex::new(lru::LruCache::new(
                std::num::NonZeroUsize::new(COMPILED_SCRIPTS).expect("non-zero"),
            )),
            tickers: Mutex::new(Vec::new()),
            rates: Mutex::new(HashMap::new()),
            kv: std::sync::OnceLock::new(),
            shared_rates: std::sync::OnceLock::new(),
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
