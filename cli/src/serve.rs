//! `palisade serve`: the HTTP service (docs/server.md).

use clap::Args;
use palisade::serve::{Config, default_data_dir};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on. Any address but a loopback one needs --keys.
    #[arg(long, default_value = "127.0.0.1:8787")]
    listen: SocketAddr,
    /// Folder of policy files (*.toml), watched for changes. Default: ./policies when it
    /// exists, else the built-in default policy only.
    #[arg(long)]
    policies: Option<PathBuf>,
    /// Where sessions, idempotency records and the key-value store are kept.
    #[arg(long)]
    data: Option<PathBuf>,
    /// Keep the server's records (sessions, apps' states and events, idempotency records) and
    /// the key-value store in this Redis, `redis://HOST:PORT/DB`, which replicas share
    /// (docs/scaling.md). Default: in --data.
    #[arg(long, value_name = "redis://HOST:PORT/DB")]
    store: Option<String>,
    /// This server's name among replicas sharing --store: it names the replica that holds a
    /// session in `session_elsewhere`. Default: the address it listens on.
    #[arg(long, value_name = "NAME")]
    replica: Option<String>,
    /// Tenants and the SHA-256 of their keys (TOML). Without it, no authentication, and only
    /// a loopback address is served.
    #[arg(long)]
    keys: Option<PathBuf>,
    /// The catalog policy that bounds policies sent with calls (`policy` as an object,
    /// `policy_toml`), for tenants whose keys file entry names no `inline_ceiling`. Without
    /// either: the built-in default policy without a keys file, and none admitted for a key.
    #[arg(long, value_name = "POLICY")]
    inline_ceiling: Option<String>,
    /// Append every gated decision, with tenant and session, to this file (JSON lines).
    #[arg(long)]
    audit_log: Option<PathBuf>,
    /// The most live sessions on the server.
    #[arg(long, default_value_t = 1000)]
    max_sessions: usize,
    /// The most live sessions (`"live": true`) whose instance stays in memory; the least
    /// recently run beyond it wait as images in their folders (docs/sessions.md).
    #[arg(long, default_value_t = 64)]
    max_live_sessions: usize,
    /// How long a live session stays idle before it is dropped from memory and its heap file
    /// compressed (a later wake decompresses it: docs/sessions.md); 0s: never.
    #[arg(long, value_name = "DURATION", default_value = "2m")]
    hibernate_after: palisade::policy::HumanDuration,
    /// The most calls running at once; others wait up to --admission-wait.
    #[arg(long, default_value_t = 64)]
    max_concurrency: usize,
    /// Slots of each kind in the instance pool (default: --max-concurrency). 128 or more lets
    /// each thread reuse its own slots (faster, more resident memory: docs/server.md).
    #[arg(long, value_name = "N")]
    pool_slots: Option<u32>,
    /// How long a call waits for a slot before `capacity_exhausted` (503).
    #[arg(long, default_value = "2s")]
    admission_wait: palisade::policy::HumanDuration,
    /// A session's idle timeout when its creator gives none.
    #[arg(long, default_value = "5m")]
    idle_timeout: palisade::policy::HumanDuration,
    /// The most connections held at once; one past it is closed at once (keep it under the
    /// process's open-file limit).
    #[arg(long, default_value_t = 512)]
    max_connections: usize,
    /// How long a request's head may take to arrive, and a keep-alive connection may stay idle.
    #[arg(long, default_value = "10s")]
    header_timeout: palisade::policy::HumanDuration,
    /// How long a request's body may take to arrive (then 408).
    #[arg(long, default_value = "30s")]
    body_timeout: palisade::policy::HumanDuration,
    /// The most `POST /v1/run` idempotency records one tenant keeps (each for 24 hours);
    /// past it a new keyed run is 429 `capacity_exhausted`.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    max_keyed_records: u64,
    /// The most bytes those records of one tenant take (keys and stored responses).
    #[arg(long, value_name = "SIZE", default_value = "256MiB")]
    max_keyed_bytes: palisade::policy::ByteSize,
    /// How long requests in flight may take to finish after SIGTERM.
    #[arg(long, default_value = "30s")]
    drain_grace: palisade::policy::HumanDuration,
    /// Base URL of the error table; each error's `docs_url` is this plus `#code` (default:
    /// `$PALISADE_DOCS_URL`, else the table packaged with the crate on docs.rs).
    #[arg(long, default_value = palisade::serve::errors::DEFAULT_DOCS_URL)]
    docs_url: String,
    /// An action app (docs/apps.md) whose own routes (`/press`, `/actions`, `/view`, …) are
    /// mounted at the root, under the `default` policy; it is also `/v1/apps/STEM`.
    #[arg(long, value_name = "FILE.js")]
    app: Option<PathBuf>,
    /// Serve the page (`GET /`: write and run scripts, read refusals and their fixes, drive
    /// apps) on a non-loopback --listen too; a loopback listener serves it without the flag.
    #[arg(long)]
    playground: bool,
}

pub fn run(args: ServeArgs) -> ExitCode {
    let mut config = Config::new(args.data.unwrap_or_else(default_data_dir));
    config.listen = args.listen;
    config.policies = args.policies.or_else(|| {
        let local = PathBuf::from("policies");
        local.is_dir().then_some(local)
    });
    config.keys = args.keys;
    config.inline_ceiling = args.inline_ceiling;
    config.store = args.store;
    config.replica = args.replica;
    config.audit_log = args.audit_log;
    config.max_sessions = args.max_sessions;
    config.max_live_sessions = args.max_live_sessions.max(1);
    config.max_concurrency = args.max_concurrency.max(1);
    config.pool_slots = args.pool_slots;
    config.admission_wait = args.admission_wait.0;
    config.idle_timeout = args.idle_timeout.0;
    config.hibernate_after = args.hibernate_after.0;
    config.drain_grace = args.drain_grace.0;
    config.max_connections = args.max_connections.max(1);
    config.header_timeout = args.header_timeout.0;
    config.body_timeout = args.body_timeout.0;
    config.keyed_quota = palisade::serve::idempotency::KeyQuota {
        records: args.max_keyed_records,
        bytes: args.max_keyed_bytes.0,
    };
    // `--docs-url` when given, else `$PALISADE_DOCS_URL`.
    config.docs_url = match super::docs_url_from_env() {
        Some(base) if args.docs_url == palisade::DEFAULT_DOCS_URL => base,
        _ => args.docs_url,
    };
    if let Some(app) = args.app.as_ref().filter(|a| !a.is_file()) {
        return super::run::usage_error(format!("cannot read --app {}: not a file", app.display()));
    }
    config.app = args.app;
    config.playground = args.playground.then_some(true);
    if let Err(e) = palisade::serve::check(&config) {
        return super::run::usage_error(e);
    }
    if config.keys.is_none() {
        say(format_args!(
            "palisade serve: no --keys file: requests are served without authentication \
             (loopback only)"
        ));
    }
    tune_malloc();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return super::run::usage_error(format!("cannot start the runtime: {e}")),
    };
    let policies = config.policies.clone();
    let data = config.data.clone();
    let result = runtime.block_on(palisade::serve::serve(config, |addr| {
        say(format_args!(
            "palisade serve: listening on http://{addr} (policies: {}, data: {})",
            policies.as_ref().map_or_else(
                || "built-in default".to_owned(),
                |p| p.display().to_string()
            ),
            data.display()
        ));
    }));
    // Blocking tasks (a policy reload, a store write) get a moment to end; nothing waits longer.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    match result {
        Ok(()) => {
            say(format_args!("palisade serve: stopped"));
            ExitCode::SUCCESS
        }
        Err(e) => super::run::usage_error(e),
    }
}

/// glibc's `malloc` serves a block of this many bytes or more from `mmap`, and gives it back to
/// the system when it is freed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: libc::c_int = 1 << 20;

/// Fix glibc's mmap threshold at [`MMAP_THRESHOLD`], as `MALLOC_MMAP_THRESHOLD_=1048576` would,
/// unless the environment sets it. Left alone, glibc raises its threshold to the largest block
/// freed so far (up to 32 MiB), so the request bodies the server reads (up to 32 MiB) stay in
/// its heaps once freed, and RSS stays tens of MiB up, in steps at moments that depend on which
/// threads read them (docs/server.md, "Memory"; a 60 s server soak: +38.8% with the default,
/// +0.5% with the fixed threshold). Only glibc: other allocators have their own policies.
fn tune_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none() {
        // SAFETY: `mallopt` only sets a parameter of glibc's allocator; it is called before
        // the runtime starts its threads, and any value is valid for this parameter.
        #[allow(unsafe_code)]
        let set = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD) };
        if set != 1 {
            say(format_args!(
                "palisade serve: glibc refused an mmap threshold of {MMAP_THRESHOLD} bytes"
            ));
        }
    }
}

/// A status line on stderr. A closed or full stderr (the operator piped it away) must not stop the
/// server, so a failed write is ignored rather than panicking as `eprintln!` would.
fn say(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}
