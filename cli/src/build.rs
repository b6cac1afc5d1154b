//! `palisade build FILE.js -o FILE.wasm [--policy P] [--http] [--print-wasmtime-flags]`.

use super::run::{report_error, usage_error};
use clap::Args;
use palisade::standalone::{BuildOptions, Command, shell_words, wasmtime_flags};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The script: an ES module whose top level only defines things (as for `palisade compile`).
    file: PathBuf,
    /// Where to write the component; `FILE` with the extension `.wasm` when absent.
    #[arg(short, long, value_name = "PATH")]
    output: Option<PathBuf>,
    /// Policy to build for: its limits bound the top level while it is evaluated and become
    /// the `wasmtime` flags; its grants decide which globals the script gets and which flags
    /// grant the standard imports. The built-in default when absent.
    #[arg(long, value_name = "PATH")]
    policy: Option<PathBuf>,
    /// Build an HTTP handler for `wasmtime serve`: the default export is an object with a
    /// `fetch(request)` method that returns a `Response`.
    #[arg(long)]
    http: bool,
    /// Print only the `wasmtime` flags that carry the policy's limits and grants, on stdout.
    #[arg(long)]
    print_wasmtime_flags: bool,
}

pub fn run(args: BuildArgs) -> ExitCode {
    let (policy, script, output) =
        match super::compile::inputs(args.policy.as_deref(), &args.file, args.output.as_deref()) {
            Ok(inputs) => inputs,
            Err(code) => return code,
        };
    let runtime = match super::compile::one_worker_runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    let command = if args.http {
        Command::Serve
    } else {
        Command::Run
    };
    let flags = shell_words(&wasmtime_flags(&policy, command));
    if !args.print_wasmtime_flags {
        eprintln!(
            "palisade: evaluating {} and snapshotting it…",
            script.name()
        );
    }
    let options = BuildOptions { http: args.http };
    let built = runtime.block_on(palisade::standalone::build(
        &policy,
        &script,
        options,
        &super::compile_notice,
    ));
    let wasm = match built {
        Ok(wasm) => wasm,
        Err(error) => return report_error(&error),
    };
    if let Err(e) = super::compile::write_atomically(&output, &wasm) {
        return usage_error(format!("cannot write {}: {e}", output.display()));
    }
    if args.print_wasmtime_flags {
        println!("{flags}");
        return ExitCode::SUCCESS;
    }
    let how = match command {
        Command::Run => format!(
            "`wasmtime run {flags} {0} < input.json`, or with `palisade run {0}`",
            output.display()
        ),
        Command::Serve => format!("`wasmtime serve {flags} {}`", output.display()),
    };
    eprintln!(
        "palisade: wrote {} ({} bytes); run it with {how}",
        output.display(),
        wasm.len(),
    );
    ExitCode::SUCCESS
}
