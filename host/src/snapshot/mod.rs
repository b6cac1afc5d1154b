//! Pre-initialization of the guest with `wasmtime-wizer`: run its `wizer-initialize` export
//! (which creates the QuickJS runtime and installs the globals) and write a new component whose
//! memory already holds the result.
//!
//! Nothing may read a clock, write output or call the host while the snapshot is taken, or
//! every call would start from the same frozen value. Palisade's own imports trap here. The clocks
//! read zero, so that the snapshot bytes are reproducible, and any read is counted: QuickJS's
//! `JS_NewContext` reads the wall clock exactly once, to seed the state of its built-in
//! `Math.random`, which javy replaces with a generator seeded at first use after the snapshot
//! (so `Math.random()` differs between calls; the test suite checks it), and fastrand reads the
//! monotonic clock once when its generator is first touched, just before the guest seeds it.
//! Any other read fails the snapshot.
//!
//! `palisade compile` snapshots that component a second time, after its `preload` export
//! evaluated one script's module; there no clock or random read is allowed.

use crate::Error;
use crate::bindings::Sandbox;
use crate::bindings::exports::palisade::sandbox::runner::{self, Environment, ModuleFile};
use crate::guest::Guest;
use crate::limits::MemoryLimiter;
use crate::policy::Limits;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use wasmtime::component::InstancePre;
use wasmtime::component::{Linker, ResourceTable, ResourceType};
use wasmtime::{Config, Engine, Store, Trap};
use wasmtime_wasi::{
    HostMonotonicClock, HostWallClock, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView,
};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpHooks, WasiHttpView};
use wasmtime_wizer::Wizer;
use wasmtime_wizer::{ComponentContext, WasmtimeWizerComponent};

struct SnapshotState {
    wasi: WasiCtx,
    table: ResourceTable,
    http: WasiHttpCtx,
    no_network: NoNetwork,
    limits: MemoryLimiter,
    /// The Palisade import the guest called, which trapped.
    host_call: Option<(&'static str, &'static str)>,
}

impl SnapshotState {
    /// WASI whose clocks and secure random bytes are tripwires counted in `reads`.
    fn new(reads: &Reads, limits: MemoryLimiter) -> Self {
        let wasi = WasiCtxBuilder::new()
            .wall_clock(Tripwire(reads.wall.clone()))
            .monotonic_clock(Tripwire(reads.monotonic.clone()))
            .secure_random(Tripwire(reads.random.clone()))
            // Rust's std seeds its HashMap keys from `insecure-seed` when QuickJS's Rust
            // bindings build their class registry; a fixed seed keeps the snapshot
            // reproducible. Those maps are keyed by Palisade's own type ids, never by script data.
            .insecure_random_seed(SNAPSHOT_INSECURE_SEED)
            .allow_tcp(false)
            .allow_udp(false)
            .build();
        Self {
            wasi,
            table: ResourceTable::new(),
            http: WasiHttpCtx::new(),
            no_network: NoNetwork,
            limits,
            host_call: None,
        }
    }
}

/// What the guest read while being snapshotted.
#[derive(Default)]
struct Reads {
    wall: Arc<AtomicUsize>,
    monotonic: Arc<AtomicUsize>,
    random: Arc<AtomicUsize>,
}

impl Reads {
    fn counts(&self) -> (usize, usize, usize) {
        (
            self.wall.load(Ordering::SeqCst),
            self.monotonic.load(Ordering::SeqCst),
            self.random.load(Ordering::SeqCst),
        )
    }
}

/// Network hooks that refuse every request: nothing leaves the host during the snapshot.
struct NoNetwork;

impl WasiHttpHooks for NoNetwork {
    fn send_request(
        &mut self,
        _request: http::Request<wasmtime_wasi_http::WasiBody>,
        _options: Option<wasmtime_wasi_http::RequestOptions>,
        _fut: Box<dyn Future<Output = Result<(), wasmtime_wasi_http::Error>> + Send>,
    ) -> Box<
        dyn Future<
                Output = Result<
                    (
                        http::Response<wasmtime_wasi_http::WasiBody>,
                        Box<dyn Future<Output = Result<(), wasmtime_wasi_http::Error>> + Send>,
                    ),
                    wasmtime_wasi_http::Error,
                >,
            > + Send,
    > {
        Box::new(async { Err(wasmtime_wasi_http::Error::HttpRequestDenied) })
    }
}

impl WasiHttpView for SnapshotState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.no_network,
        }
    }
}

impl WasiView for SnapshotState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// A clock that reads zero, or a random source that yields zeros, and counts its reads.
#[derive(Clone)]
struct Tripwire(Arc<AtomicUsize>);

impl Tripwire {
    fn read(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl HostWallClock for Tripwire {
    fn resolution(&self) -> Duration {
        self.read();
        Duration::from_nanos(1)
    }
    fn now(&self) -> Duration {
        self.read();
        Duration::ZERO
    }
}

impl HostMonotonicClock for Tripwire {
    fn resolution(&self) -> u64 {
        self.read();
        1
    }
    fn now(&self) -> u64 {
        self.read();
        0
    }
}

impl rand::TryRng for Tripwire {
    type Error = std::convert::Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        self.read();
        Ok(0)
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        self.read();
        Ok(0)
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        self.read();
        dst.fill(0);
        Ok(())
    }
}

/// The `wasi:random/insecure-seed` value seen during pre-initialization.
const SNAPSHOT_INSECURE_SEED: u128 = 0x5041_4c49_5341_4445; // "PALISADE"

/// Wall-clock reads allowed during pre-initialization: QuickJS's unused `Math.random` seed.
const EXPECTED_WALL_CLOCK_READS: usize = 1;

/// Monotonic-clock reads allowed during pre-initialization: fastrand seeding its generator
/// when first touched, before the guest sets the seed (every call sets it again).
const EXPECTED_MONOTONIC_READS: usize = 1;

/// The imports a snapshot may reach: WASI with tripwire clocks, wasi:http that refuses every
/// request, and Palisade's own interfaces, which trap: nothing may reach the host.
fn linker(engine: &Engine) -> wasmtime::Result<Linker<SnapshotState>> {
    let mut linker: Linker<SnapshotState> = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
    linker
        .instance("palisade:sandbox/capability@0.1.0")?
        .resource("pending-call", ResourceType::host::<()>(), |_, _| Ok(()))?;
    linker
        .instance("wasi:keyvalue/store@0.2.0-draft")?
        .resource("bucket", ResourceType::host::<u8>(), |_, _| Ok(()))?;
    for (interface, function) in [
        ("palisade:sandbox/console@0.1.0", "log"),
        ("palisade:sandbox/capability@0.1.0", "call"),
        ("palisade:sandbox/capability@0.1.0", "call-args"),
        ("palisade:sandbox/capability@0.1.0", "refusal"),
        ("palisade:sandbox/capability@0.1.0", "unsent-request"),
        ("palisade:sandbox/capability@0.1.0", "body-failure"),
        ("palisade:sandbox/capability@0.1.0", "ungranted"),
        (
            "palisade:sandbox/capability@0.1.0",
            "[method]pending-call.subscribe",
        ),
        (
            "palisade:sandbox/capability@0.1.0",
            "[method]pending-call.get",
        ),
        ("wasi:config/store@0.2.0-rc.1", "get"),
        ("wasi:config/store@0.2.0-rc.1", "get-all"),
        ("wasi:keyvalue/store@0.2.0-draft", "open"),
        ("wasi:keyvalue/store@0.2.0-draft", "[method]bucket.get"),
        ("wasi:keyvalue/store@0.2.0-draft", "[method]bucket.set"),
        ("wasi:keyvalue/store@0.2.0-draft", "[method]bucket.delete"),
        ("wasi:keyvalue/store@0.2.0-draft", "[method]bucket.exists"),
        (
            "wasi:keyvalue/store@0.2.0-draft",
            "[method]bucket.list-keys",
        ),
        ("wasi:keyvalue/atomics@0.2.0-draft", "increment"),
        ("palisade:sandbox/kv@0.1.0", "compare-and-swap"),
    ] {
        linker.instance(interface)?.func_new(
            function,
            move |mut store, _ty, _params, _results| {
                store.data_mut().host_call = Some((interface, function));
                wasmtime::bail!("{interface}#{function} called during pre-initialization")
            },
        )?;
    }
    Ok(linker)
}

fn wizer() -> Wizer {
    let mut wizer = Wizer::new();
    // Removing the export breaks the component's references to it (wasmtime-wizer 48); the
    // host never calls it, and calling it again would only find the runtime already built.
    wizer.keep_init_func(true);
    wizer
}

/// Pre-initialize a guest component built from `guest-js/`.
pub async fn preinitialize(component: &[u8]) -> wasmtime::Result<Vec<u8>> {
    let engine = Engine::new(&Config::new())?;
    let reads = Reads::default();
    let mut store = Store::new(
        &engine,
        SnapshotState::new(&reads, MemoryLimiter::new(u64::MAX)),
    );
    let (bytes, _) = wizer()
        .run_component(&mut store, component, async |store, component| {
            linker(store.engine())?
                .instantiate_async(store, component)
                .await
        })
        .await?;
    let (wall, monotonic, random) = reads.counts();
    if wall > EXPECTED_WALL_CLOCK_READS || monotonic > EXPECTED_MONOTONIC_READS || random > 0 {
        wasmtime::bail!(
            "the guest read a clock or random bytes during pre-initialization ({wall} \
             wall-clock, {monotonic} monotonic, {random} random reads); the snapshot would \
             freeze them"
        );
    }
    Ok(bytes)
}

/// The native wasm stack a top level is evaluated on: the largest a policy may give a call
/// (`limits.stack`). QuickJS's own stack check, set from the policy's `limits.stack` as in a
/// call, then throws before this runs out, as it does in a call; on wasmtime's default stack
/// (512 KiB) a module with 1,000 nested parentheses, which a call parses, trapped instead.
const PRELOAD_WASM_STACK: usize = crate::policy::bounds::STACK.1.0 as usize;

/// The instrumented guest, compiled and linked once per process for every `preload`.
struct Preloader {
    engine: Engine,
    context: ComponentContext<'static>,
    pre: InstancePre<SnapshotState>,
}

impl Preloader {
    fn get(
        guest: Guest,
        cache_dir: Option<&std::path::Path>,
        on_compile: &dyn Fn(),
    ) -> Result<&'static Preloader, Error> {
        // One per guest build.
        static PRELOADERS: [OnceLock<Result<Preloader, String>>; 3] =
            [const { OnceLock::new() }; 3];
        PRELOADERS[guest as usize]
            .get_or_init(|| {
                let build = || -> wasmtime::Result<Preloader> {
                    let mut config = Config::new();
                    config
                        .consume_fuel(true)
                        .max_wasm_stack(PRELOAD_WASM_STACK)
                        .async_stack_size(PRELOAD_WASM_STACK + (1 << 20))
                        .wasm_backtrace_max_frames(std::num::NonZeroUsize::new(
                            crate::limits::SHADOW_STACK_OVERFLOW_FRAMES,
                        ));
                    let engine = Engine::new(&config)?;
                    let (context, instrumented) = wizer().instrument_component(guest.bytes())?;
                    let component =
                        crate::cache::load(&engine, &instrumented, cache_dir, on_compile)?;
                    let pre = linker(&engine)?.instantiate_pre(&component)?;
                    Ok(Preloader {
                        engine,
                        context,
                        pre,
                    })
                };
                build().map_err(|e| format!("{e:#}"))
            })
            .as_ref()
            .map_err(|detail| Error::Internal {
                detail: format!("preparing to compile scripts: {detail}"),
            })
    }
}

/// What [`preload`] snapshots: a guest, where its compiled form is cached, and the script's parts
/// as the guest's `preload` export takes them.
pub(crate) struct Preload<'a> {
    pub guest: Guest,
    pub cache_dir: Option<&'a std::path::Path>,
    pub on_compile: &'a dyn Fn(),
    pub name: &'a str,
    pub source: &'a str,
    pub modules: &'a [ModuleFile],
    pub env: &'a Environment,
    pub limits: &'a Limits,
}

/// Snapshot `guest` (the pre-initialized Palisade guest) again with the module `name`
/// evaluated by its `preload` export, under the fuel, memory and time `limits` (a top level
/// still running at `limits.timeout` ends the compile with `timeout`), with the globals a
/// call under `env` gets present but unusable to its top level. The result is a
/// component whose calls skip loading and evaluating the module. The first call in a
/// process loads the instrumented guest (compiled once per machine, cached in `cache_dir`);
/// later ones only instantiate it.
pub(crate) async fn preload(job: Preload<'_>) -> Result<Vec<u8>, Error> {
    let Preload {
        guest,
        cache_dir,
        on_compile,
        name,
        source,
        modules,
        env,
        limits,
    } = job;
    let (fuel, memory) = (limits.fuel, limits.memory);
    let internal = |e: wasmtime::Error| Error::Internal {
        detail: format!("compiling a script: {e:#}"),
    };
    let preloader = Preloader::get(guest, cache_dir, on_compile)?;
    // The deadline runs from here: loading the instrumented guest above is the host's own
    // once-per-machine work; evaluating the top level is the script's.
    let deadline = Instant::now() + limits.timeout.0;
    let reads = Reads::default();
    let limiter = MemoryLimiter::new(memory.0);
    let mut store = Store::new(&preloader.engine, SnapshotState::new(&reads, limiter));
    store.limiter(|state| &mut state.limits);
    store.set_fuel(fuel).map_err(internal)?;
    // As in a call: the guest yields every fuel slice, and the deadline is checked then.
    store
        .fuel_async_yield_interval(Some(crate::limits::FUEL_SLICE))
        .map_err(internal)?;
    let timed_out = || Error::Timeout {
        limit: limits.timeout,
    };
    let instance = within(deadline, preloader.pre.instantiate_async(&mut store))
        .await
        .ok_or_else(timed_out)?
        .map_err(internal)?;
    let sandbox = Sandbox::new(&mut store, &instance).map_err(internal)?;
    let preloaded = within(
        deadline,
        sandbox
            .palisade_sandbox_runner()
            .call_preload(&mut store, name, source, modules, env),
    )
    .await
    .ok_or_else(timed_out)?;
    let top = format!("the top level of `{name}`");
    top_level_outcome(preloaded, store.data(), limits, &top)?;
    let bytes = wizer()
        .snapshot_component(
            &preloader.context,
            &mut WasmtimeWizerComponent {
                store: &mut store,
                instance,
            },
        )
        .await
        .map_err(internal)?;
    let bytes = drop_spent_segments(&bytes).unwrap_or(bytes);
    check_reads(&reads, &top)?;
    Ok(bytes)
}

/// How the top level's evaluation ended: `Ok` when it ran to its end, else the compile's
/// error: a refused memory growth first, then a stack overflow, the script's exception, or
/// what the trap means.
fn top_level_outcome(
    preloaded: wasmtime::Result<Result<(), runner::Error>>,
    state: &SnapshotState,
    limits: &Limits,
    top: &str,
) -> Result<(), Error> {
    if preloaded.as_ref().map_or(true, Result::is_err) && state.limits.denied() {
        return Err(Error::MemoryLimit {
            limit: limits.memory,
        });
    }
    match preloaded {
        Ok(Ok(())) => Ok(()),
        Ok(Err(error)) if crate::error::is_stack_exhausted(&error) => Err(Error::StackOverflow {
            limit: limits.stack,
            shadow_stack: false,
        }),
        Ok(Err(error)) => Err(crate::error::guest_error(error)),
        Err(trap) => Err(classify_trap(trap, state, limits, top)),
    }
}

/// A top level that read the clock or drew random bytes would give every call the same
/// values: the script is not compilable.
fn check_reads(reads: &Reads, top: &str) -> Result<(), Error> {
    let (wall, monotonic, random) = reads.counts();
    if wall > 0 || monotonic > 0 {
        return Err(Error::NotCompilable {
            detail: format!(
                "{top} read the clock (Date.now(), new Date(), performance.now() or a timer), \
                 whose value would be the same in every call; read it inside the exported \
                 function"
            ),
        });
    }
    if random > 0 {
        return Err(Error::NotCompilable {
            detail: format!(
                "{top} drew random bytes (crypto.getRandomValues() or crypto.randomUUID()), \
                 which would be the same in every call; draw them inside the exported function"
            ),
        });
    }
    Ok(())
}

/// What a trap while the top level was evaluated means, by what tripped, as for a call's trap:
/// fuel, a call to the host, the wasm or the shadow stack. Any other trap is `guest_trap`,
/// named without wasm's backtrace.
fn classify_trap(
    trap: wasmtime::Error,
    state: &SnapshotState,
    limits: &Limits,
    top: &str,
) -> Error {
    let frames = trap
        .downcast_ref::<wasmtime::WasmBacktrace>()
        .map_or(0, |trace| trace.frames().len());
    let stack_overflow = |shadow_stack| Error::StackOverflow {
        limit: limits.stack,
        shadow_stack,
    };
    match (trap.downcast_ref::<Trap>(), state.host_call) {
        (Some(Trap::OutOfFuel), _) => Error::FuelExhausted {
            budget: limits.fuel,
        },
        (_, Some((interface, function))) => Error::NotCompilable {
            detail: format!(
                "{top} called the host ({interface}#{function}) while being compiled; only the \
                 exported function may log, fetch or use a capability"
            ),
        },
        (Some(Trap::StackOverflow), _) => stack_overflow(false),
        (Some(Trap::MemoryOutOfBounds), _)
            if frames >= crate::limits::SHADOW_STACK_OVERFLOW_FRAMES =>
        {
            stack_overflow(true)
        }
        (Some(trap), _) => Error::GuestTrap {
            trap: trap.to_string(),
        },
        (None, _) => Error::Internal {
            detail: format!("compiling a script: {trap:#}"),
        },
    }
}

/// Run `work` until `deadline`: `None` past it. The guest yields every fuel slice, so a top level
/// that spins is stopped within about one slice of the deadline.
async fn within<T>(deadline: Instant, work: impl Future<Output = T>) -> Option<T> {
    let mut work = std::pin::pin!(work);
    let checked = std::future::poll_fn(|cx| {
        if Instant::now() >= deadline {
            return std::task::Poll::Ready(None);
        }
        work.as_mut().poll(cx).map(Some)
    });
    let remaining = deadline.saturating_duration_since(Instant::now());
    tokio::time::timeout(remaining, checked)
        .await
        .ok()
        .flatten()
}

/// Remove the data segments that a second snapshot leaves behind, or `None` when there are
/// none (or the component has a shape this does not handle, in which case it is kept as is).
///
/// wasmtime-wizer turns every active data segment of its input into an empty passive segment,
/// so that the indices instructions may use keep their meaning; a compiled script, being the
/// snapshot of a snapshot, carries one per segment of the guest's snapshot (about 9,000), and
/// wasmtime sets up each passive segment at every instantiation. An empty passive segment that
/// no `memory.init` or `data.drop` can reach (its index is above every index those use) is
/// removed; removing it shifts only the indices of segments that no instruction names.
fn drop_spent_segments(component: &[u8]) -> Option<Vec<u8>> {
    use wasmparser::{Parser, Payload};
    let mut depth = 0usize;
    let mut replacements = Vec::new();
    for payload in Parser::new(0).parse_all(component) {
        match payload.ok()? {
            Payload::ModuleSection {
                unchecked_range, ..
            } => {
                if depth == 0
                    && let Some(module) = compact_module(&component[unchecked_range.clone()])
                {
                    replacements.push((unchecked_range, module));
                }
                depth += 1;
            }
            Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if replacements.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(component.len());
    let mut copied = 0;
    for (range, module) in replacements {
        // The section header (id 1, then the LEB128 size) ends where the module starts.
        let header = (2..=6)
            .filter_map(|n| range.start.checked_sub(n))
            .find(|&start| {
                let mut size = wasmparser::BinaryReader::new(&component[start + 1..range.start], 0);
                component[start] == 1
                    && size.read_var_u32().ok() == u32::try_from(range.len()).ok()
                    && size.eof()
            })?;
        out.extend_from_slice(&component[copied..header]);
        wasm_encoder::ComponentSection::append_to_component(
            &wasm_encoder::RawSection {
                id: 1,
                data: &module,
            },
            &mut out,
        );
        copied = range.end;
    }
    out.extend_from_slice(&component[copied..]);
    Some(out)
}

/// A core module without its unreachable empty passive data segments, or `None`.
fn compact_module(module: &[u8]) -> Option<Vec<u8>> {
    use wasmparser::{DataKind, Operator, Parser, Payload};
    let mut highest_used = None::<u32>;
    let mut segments = Vec::new();
    for payload in Parser::new(0).parse_all(module) {
        match payload.ok()? {
            Payload::CodeSectionEntry(body) => {
                for op in body.get_operators_reader().ok()? {
                    if let Operator::MemoryInit { data_index, .. }
                    | Operator::DataDrop { data_index } = op.ok()?
                    {
                        highest_used = highest_used.max(Some(data_index));
                    }
                }
            }
            Payload::DataSection(reader) => {
                for data in reader {
                    let data = data.ok()?;
                    let spent = matches!(data.kind, DataKind::Passive) && data.data.is_empty();
                    segments.push((data.range, spent));
                }
            }
            _ => {}
        }
    }
    let removable =
        |index: usize| segments[index].1 && highest_used.is_none_or(|used| index > used as usize);
    let kept: Vec<_> = (0..segments.len()).filter(|&i| !removable(i)).collect();
    if kept.len() == segments.len() {
        return None;
    }
    let mut out = wasm_encoder::Module::new();
    for payload in Parser::new(0).parse_all(module) {
        let payload = payload.ok()?;
        let Some((id, range)) = payload.as_section() else {
            continue;
        };
        match payload {
            Payload::DataSection(_) => {
                let mut section = wasm_encoder::DataSection::new();
                for &i in &kept {
                    section.raw(&module[segments[i].0.clone()]);
                }
                out.section(&section);
            }
            Payload::DataCountSection { .. } => {
                out.section(&wasm_encoder::DataCountSection {
                    count: u32::try_from(kept.len()).ok()?,
                });
            }
            _ => {
                out.section(&wasm_encoder::RawSection {
                    id,
                    data: &module[range],
                });
            }
        }
    }
    Some(out.finish())
}

#[cfg(test)]
mod tests;
