//! `palisade compile FILE.js -o FILE.wasm`.

use super::run::{load_policy, report_error, usage_error};
use clap::Args;
use palisade::{Error, Palisade, Script};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct CompileArgs {
    /// The script: an ES module whose top level only defines things (no clock, random numbers,
    /// timers or host calls: those belong in the exported functions).
    file: PathBuf,
    /// Where to write the component; `FILE` with the extension `.wasm` when absent.
    #[arg(short, long, value_name = "PATH")]
    output: Option<PathBuf>,
    /// Policy to compile for: its `limits.fuel`, `limits.memory` and `limits.timeout` bound the
    /// module's top level while it is evaluated, and the globals it gives each call (`config`,
    /// `kv`, `fs`, the capability bridge's) exist there but may not be used. The built-in
    /// default when absent. Calls run under the policy given to `run`; give the same one here (a script
    /// compiled under a policy that grants no capability is refused by one that grants one).
    #[arg(long, value_name = "PATH")]
    policy: Option<PathBuf>,
}

pub fn run(args: CompileArgs) -> ExitCode {
    let policy = match load_policy(args.policy.as_deref()) {
        Ok(policy) => policy,
        Err(code) => return code,
    };
    // The files it imports are read from its folder and bundled into the component.
    let script = match super::run::load_script(&args.file) {
        Ok(script) => script,
        Err(code) => return code,
    };
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| args.file.with_extension("wasm"));
    if output == args.file {
        return usage_error(format!(
            "the output {} would overwrite the script; pass another path with -o",
            output.display()
        ));
    }
    let palisade = match Palisade::builder()
        .max_concurrency(1)
        .on_compile(super::compile_notice)
        .build()
    {
        Ok(palisade) => palisade,
        Err(error) => return report_error(&error),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            return report_error(&Error::Internal {
                detail: format!("cannot start the async runtime: {e}"),
            });
        }
    };
    eprintln!(
        "palisade: evaluating {} and snapshotting it…",
        script.name()
    );
    let wasm = match runtime.block_on(palisade.compile(&policy, &script)) {
        Ok(wasm) => wasm,
        Err(error) => return report_error(&error),
    };
    if let Err(e) = write_atomically(&output, &wasm) {
        return usage_error(format!("cannot write {}: {e}", output.display()));
    }
    // Load the component for this machine now, so that the first `run` does not wait for it.
    let compiled = Script::from_component(wasm.clone())
        .and_then(|compiled| runtime.block_on(palisade.precompile(&policy, &compiled)));
    if let Err(error) = compiled {
        return report_error(&error);
    }
    eprintln!(
        "palisade: wrote {} ({} bytes); run it with `palisade run {}`",
        output.display(),
        wasm.len(),
        output.display()
    );
    ExitCode::SUCCESS
}

/// Write through a temporary file in the same folder, so that a reader never sees half a file.
pub(super) fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
