//! Engines and runtimes: one wasmtime engine per wasm stack size, each guest (and each compiled
//! script) linked on it, ready to instantiate; the epoch ticker.

use super::{Builder, Inner, Palisade};
use crate::Error;
use crate::call::{Runtime, instance_pre};
use crate::guest::Guest;
use crate::policy::{ByteSize, Policy};
use std::sync::{Arc, Weak};
use std::time::Duration;
use wasmtime::{Config, Engine, EngineWeak, InstanceAllocationStrategy, PoolingAllocationConfig};

/// How often the epoch ticker advances every engine's epoch, when fuel is not metered.
/// Deadlines are then checked at each tick, so a call overruns its timeout by at most about
/// one tick.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(1);

/// Host functions (WASI, console) run on the same fiber stack as the guest; this is the room
/// they get beyond the policy's wasm stack.
pub(super) const HOST_STACK_ROOM: usize = 1 << 20;

/// Compiled scripts whose machine code and linked `InstancePre` stay loaded per engine.
pub(super) const COMPILED_SCRIPTS: usize = 32;

/// A compiled script's runtime: the stack size of its engine and the component's SHA-256.
pub(super) type CompiledKey = (u64, [u8; 32]);

impl Palisade {
    /// The runtime of `guest` for `stack`; loading it (a Cranelift compile on a cache miss)
    /// runs on the blocking thread pool, not on the caller's async worker.
    pub(super) async fn runtime(
        &self,
        stack: ByteSize,
        guest: Guest,
    ) -> Result<Arc<Runtime>, Error> {
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
    pub(super) async fn compiled_runtime(
        &self,
        policy: &Policy,
        guest: Guest,
        compiled: &crate::script::Compiled,
    ) -> Result<Arc<Runtime>, Error> {
        if compiled.guest == Guest::Plain && guest == Guest::Full {
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
    pub(super) async fn script_component(
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
}

impl Palisade {
    /// The runtime live sessions under `policy` run on: built once per stack size and guest, on
    /// an engine whose instances are allocated on demand (a hot session keeps its instance,
    /// and must not keep a slot of the pool that calls share).
    pub(crate) async fn live_runtime(
        &self,
        policy: &Policy,
    ) -> Result<Arc<crate::live::LiveRuntime>, Error> {
        let stack = policy.limits().stack;
        let guest = Guest::for_policy(policy);
        let mut live = self.inner.live.lock().await;
        if let Some(runtime) = live.get(&(stack.0, guest)) {
            return Ok(runtime.clone());
        }
        let failed = |e: wasmtime::Error| Error::Internal {
            detail: format!("live engine setup failed: {e:#}"),
        };
        let mut config = engine_config(&self.inner.settings, stack.0 as usize);
        config.allocation_strategy(InstanceAllocationStrategy::OnDemand);
        let engine = Engine::new(&config).map_err(failed)?;
        let (wasm, layout) =
            crate::live::instrument(guest.bytes()).map_err(|detail| Error::Internal { detail })?;
        let inner = self.inner.clone();
        let loading = engine.clone();
        // Compiling the instrumented guest takes seconds of CPU on a cold cache.
        let component = tokio::task::spawn_blocking(move || {
            let s = &inner.settings;
            crate::cache::load(&loading, &wasm, s.cache_dir.as_deref(), &*s.on_compile)
        })
        .await
        .map_err(|e| Error::Internal {
            detail: format!("the compile task failed: {e}"),
        })?
        .map_err(failed)?;
        let fuel = self.inner.settings.fuel;
        let runtime =
            crate::live::LiveRuntime::build(engine.clone(), component, layout, guest, fuel).await?;
        self.inner
            .tickers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(engine.weak());
        let runtime = Arc::new(runtime);
        live.insert((stack.0, guest), runtime.clone());
        Ok(runtime)
    }
}

impl Inner {
    /// The runtime of `guest` on the engine for `stack`, if it is loaded.
    pub(super) fn loaded(&self, stack: ByteSize, guest: Guest) -> Option<Arc<Runtime>> {
        self.runtimes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(stack.0, guest))
            .cloned()
    }

    /// The runtime of `guest` on the engine for `stack`, loading the guest on first use.
    pub(super) fn runtime(&self, stack: ByteSize, guest: Guest) -> Result<Arc<Runtime>, Error> {
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
    pub(super) fn engine(&self, stack: ByteSize) -> wasmtime::Result<Engine> {
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

    pub(super) fn build_runtime(&self, engine: Engine, guest: Guest) -> wasmtime::Result<Runtime> {
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

    pub(super) fn tick(&self) {
        let engines = self.tickers.lock().unwrap_or_else(|e| e.into_inner());
        for engine in engines.iter().filter_map(EngineWeak::upgrade) {
            engine.increment_epoch();
        }
    }
}

/// Slots of each kind in the pool: [`Builder::pool_slots`], never fewer than the calls that may
/// run at once.
pub(super) fn pool_slots(s: &Builder) -> u32 {
    s.pool_slots.unwrap_or(0).max(s.max_concurrency)
}

pub(super) fn engine_config(s: &Builder, stack: usize) -> Config {
    let slots = pool_slots(s);
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(slots)
        // The guest component holds a handful of core instances (the program and its WASI
        // adapter shims), one memory and a few tables.
        .total_core_instances(slots.saturating_mul(8))
        .total_memories(slots)
        .total_tables(slots.saturating_mul(4))
        .total_stacks(slots)
        .max_memory_size(s.max_memory.0 as usize)
        .linear_memory_keep_resident(s.keep_resident.0 as usize)
        .table_keep_resident(s.keep_resident.0 as usize)
        // Where the kernel has PAGEMAP_SCAN (Linux 6.7+), reset only the slot's private pages
        // (those written since it was last decommitted, by any call, not only the last one),
        // up to the kept-resident size and in at most 32 runs, the rest decommitted, rather
        // than the whole kept-resident prefix of each memory and table (docs/bench.md, "A slot
        // keeps what its largest call dirtied").
        .pagemap_scan(wasmtime::Enabled::Auto);
    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .consume_fuel(s.fuel)
        .parallel_compilation(s.parallel_compilation)
        // With fuel metered, the guest yields every `limits::FUEL_SLICE` of fuel and the deadline
        // is checked then; epoch checks would add a second test at every loop header (12–15%
        // of fib(25)). Without fuel, the epoch ticker interrupts the guest instead.
        .epoch_interruption(!s.fuel)
        .memory_init_cow(true)
        // Pooled memories never move; telling Cranelift lets it keep the memory's base across
        // calls instead of reloading it (w2 and fib(25) about 1% faster, docs/bench.md).
        .memory_may_move(false)
        // Smaller code for QuickJS's interpreter loop: fib(25) about 3% faster than at `Speed`
        // in 14 alternating runs of the 2026-11-23 guest, the same with later guests
        // (docs/bench.md); w1 unchanged.
        .cranelift_opt_level(wasmtime::OptLevel::SpeedAndSize)
        .max_wasm_stack(stack)
        // A shadow-stack overflow is told apart from other out-of-bounds accesses by the depth
        // of the recursion it ends (`call::classify::classify_trap`), so a trap keeps that many frames.
        .wasm_backtrace_max_frames(std::num::NonZeroUsize::new(
            crate::limits::SHADOW_STACK_OVERFLOW_FRAMES,
        ))
        .async_stack_size(stack + HOST_STACK_ROOM)
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    // For profiling (docs/bench.md): wasmtime writes /tmp/perf-PID.map so that `perf` names
    // the guest's functions.
    if std::env::var_os("PALISADE_PERFMAP").is_some() {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    config
}

/// One thread advances the epoch of every engine; it ends when the Palisade is dropped.
pub(super) fn spawn_ticker(inner: Weak<Inner>) {
    std::thread::Builder::new()
        .name("palisade-epoch".into())
        .spawn(move || {
            while let Some(inner) = inner.upgrade() {
                inner.tick();
                let after = inner.settings.after_epoch_tick.clone();
                drop(inner);
                after();
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .expect("the epoch ticker thread starts");
}

#[cfg(test)]
mod tests {
    use super::{Builder, pool_slots};

    /// The pool has a slot for every call that may run at once, and more when asked.
    #[test]
    fn the_pool_has_a_slot_per_call_at_least() {
        assert_eq!(pool_slots(&Builder::default()), 256);
        assert_eq!(pool_slots(&Builder::default().max_concurrency(64)), 64);
        let sharded = Builder::default().max_concurrency(64).pool_slots(128);
        assert_eq!(pool_slots(&sharded), 128);
        let too_few = Builder::default().max_concurrency(64).pool_slots(8);
        assert_eq!(pool_slots(&too_few), 64);
    }
}
