//! The `palisade` command line: a thin layer over the library (the `palisade` crate).

mod bench;
mod build;
mod compile;
#[cfg(feature = "serve")]
mod mcp;
mod policy;
mod run;
#[cfg(feature = "serve")]
mod serve;
mod session;
mod soak;
mod types;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Run untrusted JavaScript in a fresh WebAssembly sandbox per call.
#[derive(Debug, Parser)]
#[command(name = "palisade", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per process: the size of the largest variant costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum Command {
    /// Run a script's default export with JSON input under a policy.
    Run(run::RunArgs),
    /// Compile a script into a component of its own, its module already evaluated, so that
    /// each call only invokes its export.
    Compile(compile::CompileArgs),
    /// Build a script into a standalone component that the stock `wasmtime run` (or, with
    /// `--http`, `wasmtime serve`) runs (docs/standalone.md).
    Build(build::BuildArgs),
    /// Measure calls on the benchmark workloads (use a release build).
    Bench(bench::BenchArgs),
    /// Run a mix of normal and hostile scripts for a while; check every outcome and that
    /// memory, file descriptors and threads stay flat (docs/reliability.md).
    Soak(soak::SoakArgs),
    /// Serve runs and sandbox sessions over HTTP (docs/server.md).
    #[cfg(feature = "serve")]
    Serve(serve::ServeArgs),
    /// Serve the Model Context Protocol over stdio: tools to run scripts and drive sessions
    /// and apps, each policy's TypeScript declarations in their descriptions (docs/agents.md).
    #[cfg(feature = "serve")]
    Mcp(mcp::McpArgs),
    /// Work with a running server's sessions: create, run, files, stop (docs/server.md).
    Session(session::SessionArgs),
    /// Work with policy files.
    #[command(subcommand)]
    Policy(policy::PolicyCommand),
    /// Print the TypeScript declarations of what a script may use under a policy (a `.d.ts`
    /// to type-check scripts against: docs/agents.md).
    Types(types::TypesArgs),
}

/// Exit code for usage errors (bad flags, unreadable files), as clap uses.
pub const EXIT_USAGE: u8 = 2;

/// Progress line for the one-time compile of the guests (`Builder::on_compile`): said once per
/// process, though the two guests may each be compiled on a cache miss.
fn compile_notice() {
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        eprintln!("palisade: compiling the sandbox for this machine (once; cached afterwards)…")
    });
}

/// `$PALISADE_DOCS_URL`, when set and not empty.
pub(crate) fn docs_url_from_env() -> Option<String> {
    std::env::var("PALISADE_DOCS_URL")
        .ok()
        .filter(|b| !b.is_empty())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Diagnostics on stderr; `PALISADE_LOG=info` (or debug, trace) shows more.
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PALISADE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        // A closed stderr (an operator piped it away) must not end the process: the
        // subscriber would report the failed write with `eprintln!`, which panics.
        .log_internal_errors(false)
        .init();
    // Each error's `docs_url` (in `--json` output) starts here; `serve` also takes `--docs-url`.
    #[cfg(feature = "serve")]
    let serving = matches!(cli.command, Command::Serve(_));
    #[cfg(not(feature = "serve"))]
    let serving = false;
    if let (false, Some(base)) = (serving, docs_url_from_env()) {
        palisade::set_docs_base(&base);
    }
    match cli.command {
        Command::Run(args) => run::run(args),
        Command::Compile(args) => compile::run(args),
        Command::Build(args) => build::run(args),
        Command::Policy(command) => policy::run(command),
        Command::Types(args) => types::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Soak(args) => soak::run(args),
        Command::Session(args) => session::run(args),
        #[cfg(feature = "serve")]
        Command::Serve(args) => serve::run(args),
        #[cfg(feature = "serve")]
        Command::Mcp(args) => mcp::run(args),
    }
}
