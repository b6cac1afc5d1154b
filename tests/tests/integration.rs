//! Palisade's integration tests: one binary, a module per concern.

// A scenario test reads top to bottom; the screen rule is for production code.
#![allow(clippy::too_many_lines)]

#[path = "integration/support.rs"]
mod support;
#[path = "integration/upstream.rs"]
mod upstream;

#[path = "integration/apps.rs"]
mod apps;
#[path = "integration/apps_cli.rs"]
mod apps_cli;
#[path = "integration/auto_compile.rs"]
mod auto_compile;
#[path = "integration/bytes.rs"]
mod bytes;
#[path = "integration/capabilities.rs"]
mod capabilities;
#[path = "integration/cli.rs"]
mod cli;
#[path = "integration/compiled.rs"]
mod compiled;
#[path = "integration/compression.rs"]
mod compression;
#[path = "integration/concurrency.rs"]
mod concurrency;
#[path = "integration/config.rs"]
mod config;
#[path = "integration/determinism.rs"]
mod determinism;
#[path = "integration/embedding.rs"]
mod embedding;
#[path = "integration/escapes_call.rs"]
mod escapes_call;
#[path = "integration/escapes_compile.rs"]
mod escapes_compile;
#[path = "integration/escapes_files.rs"]
mod escapes_files;
#[path = "integration/escapes_record.rs"]
mod escapes_record;
#[path = "integration/faults.rs"]
mod faults;
#[path = "integration/files.rs"]
mod files;
#[path = "integration/fuel_guard.rs"]
mod fuel_guard;
#[path = "integration/fuzz_replay.rs"]
mod fuzz_replay;
#[path = "integration/guest_errors.rs"]
mod guest_errors;
#[path = "integration/input.rs"]
mod input;
#[path = "integration/isolation.rs"]
mod isolation;
#[path = "integration/kv.rs"]
mod kv;
#[path = "integration/kv_transaction.rs"]
mod kv_transaction;
#[path = "integration/limits.rs"]
mod limits;
#[path = "integration/live.rs"]
mod live;
#[path = "integration/mcp.rs"]
mod mcp;
#[path = "integration/modules.rs"]
mod modules;
#[path = "integration/network.rs"]
mod network;
#[path = "integration/output.rs"]
mod output;
#[path = "integration/page.rs"]
mod page;
#[path = "integration/plain_guest.rs"]
mod plain_guest;
#[path = "integration/policy_code.rs"]
mod policy_code;
#[path = "integration/policy_files.rs"]
mod policy_files;
#[path = "integration/precompile.rs"]
mod precompile;
#[path = "integration/replay.rs"]
mod replay;
#[path = "integration/replicas.rs"]
mod replicas;
#[path = "integration/sandbox.rs"]
mod sandbox;
#[path = "integration/serve.rs"]
mod serve;
#[path = "integration/serve_cli.rs"]
mod serve_cli;
#[path = "integration/serve_connections.rs"]
mod serve_connections;
#[path = "integration/serve_contracts.rs"]
mod serve_contracts;
#[path = "integration/serve_files.rs"]
mod serve_files;
#[path = "integration/serve_limits.rs"]
mod serve_limits;
#[path = "integration/serve_live.rs"]
mod serve_live;
#[path = "integration/serve_openapi.rs"]
mod serve_openapi;
#[path = "integration/serve_options.rs"]
mod serve_options;
#[path = "integration/serve_seeds.rs"]
mod serve_seeds;
#[path = "integration/session_cli.rs"]
mod session_cli;
#[path = "integration/shapes.rs"]
mod shapes;
#[path = "integration/soak.rs"]
mod soak;
#[path = "integration/ssrf_netns.rs"]
mod ssrf_netns;
#[path = "integration/standalone.rs"]
mod standalone;
#[path = "integration/tamper.rs"]
mod tamper;
#[path = "integration/test262.rs"]
mod test262;
#[path = "integration/timers.rs"]
mod timers;
#[path = "integration/tls.rs"]
mod tls;
#[path = "integration/types.rs"]
mod types;
#[path = "integration/web_globals.rs"]
mod web_globals;
#[path = "integration/web_platform_globals.rs"]
mod web_platform_globals;
#[path = "integration/wpt.rs"]
mod wpt;
