//! Pre-initialization of the guest with `wasmtime-wizer`: run its `wizer-initialize` export
//! (which creates the QuickJS runtime and installs the globals) and write a new component whose
//! memory already holds the result.
//!
//! Nothing may read a clock, write output or call the host while the snapshot is taken, or
//! every call would start from the same frozen value. Palisade's own imports trap here. The clocks
//! read zero, so that the snapshot bytes are reproducible, and any read is counted: QuickJS's
//! `JS_NewContext` reads the wall clock exactly once, to seed the state of its built-in
//! `Math.random`, which javy replaces with a generator seeded at first use after the snapshot
//! (so `Math.random()` differs between calls; the test suite checks it). Any other read fails
//! the snapshot.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use wasmtime::component::{Linker, ResourceTable, ResourceType};
use wasmtime::{Config, Engine, Store};
use wasmtime_wasi::{
    HostMonotonicClock, HostWallClock, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView,
};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpHooks, WasiHttpView};
use wasmtime_wizer::Wizer;

struct SnapshotState {
    wasi: WasiCtx,
    table: ResourceTable,
    http: WasiHttpCtx,
    no_network: NoNetwork,
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

/// A clock that reads zero and counts its reads.
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

/// The `wasi:random/insecure-seed` value seen during pre-initialization.
const SNAPSHOT_INSECURE_SEED: u128 = 0x5041_4c49_5341_4445; // "PALISADE"

/// Wall-clock reads allowed during pre-initialization: QuickJS's unused `Math.random` seed.
const EXPECTED_WALL_CLOCK_READS: usize = 1;

/// Pre-initialize a guest component built from `guest-js/`.
pub async fn preinitialize(component: &[u8]) -> wasmtime::Result<Vec<u8>> {
    let engine = Engine::new(&Config::new())?;
    let wall_reads = Arc::new(AtomicUsize::new(0));
    let monotonic_reads = Arc::new(AtomicUsize::new(0));
    let wasi = WasiCtxBuilder::new()
        .wall_clock(Tripwire(wall_reads.clone()))
        .monotonic_clock(Tripwire(monotonic_reads.clone()))
        // Rust's std seeds its HashMap keys from `insecure-seed` when QuickJS's Rust bindings
        // build their class registry; a fixed seed keeps the snapshot reproducible. Those maps
        // are keyed by Palisade's own type ids, never by script data.
        .insecure_random_seed(SNAPSHOT_INSECURE_SEED)
        .allow_tcp(false)
        .allow_udp(false)
        .build();
    let mut store = Store::new(
        &engine,
        SnapshotState {
            wasi,
            table: ResourceTable::new(),
            http: WasiHttpCtx::new(),
            no_network: NoNetwork,
        },
    );
    let (bytes, _) = Wizer::new()
        // Removing the export breaks the component's references to it (wasmtime-wizer 48); the host
        // never calls it, and calling it again would only find the runtime already built.
        .keep_init_func(true)
        .run_component(&mut store, component, async |store, component| {
            let mut linker: Linker<SnapshotState> = Linker::new(store.engine());
            wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
            wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
            // Palisade's own imports trap: nothing may reach the host during the snapshot.
            linker
                .instance("palisade:sandbox/capability@0.1.0")?
                .resource("pending-call", ResourceType::host::<()>(), |_, _| Ok(()))?;
            linker
                .instance("wasi:keyvalue/store@0.2.0-draft")?
                .resource("bucket", ResourceType::host::<u8>(), |_, _| Ok(()))?;
            for (interface, function) in [
                ("palisade:sandbox/console@0.1.0", "log"),
                ("palisade:sandbox/capability@0.1.0", "call"),
                ("palisade:sandbox/capability@0.1.0", "refusal"),
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
            ] {
                linker.instance(interface)?.func_new(
                    function,
                    move |_store, _ty, _params, _results| {
                        wasmtime::bail!("{interface}#{function} called during pre-initialization")
                    },
                )?;
            }
            linker.instantiate_async(store, component).await
        })
        .await?;
    let (wall, monotonic) = (
        wall_reads.load(Ordering::SeqCst),
        monotonic_reads.load(Ordering::SeqCst),
    );
    if wall > EXPECTED_WALL_CLOCK_READS || monotonic > 0 {
        wasmtime::bail!(
            "the guest read a clock during pre-initialization ({wall} wall-clock, {monotonic} \
             monotonic reads); the snapshot would freeze it"
        );
    }
    Ok(bytes)
}
