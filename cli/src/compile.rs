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
    let (policy, script, output) =
        match inputs(args.policy.as_deref(), &args.file, args.output.as_deref()) {
            Ok(inputs) => inputs,
            Err(code) => return code,
        };
    let palisade = match Palisade::builder()
        .max_concurrency(1)
        .on_compile(super::compile_notice)
        .build()
    {
        Ok(palisade) => palisade,
        Err(error) => return report_error(&error),
    };
    let runtime = match one_worker_runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
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
/// What `compile` and `build` start from: the policy (or the default), the script with the
/// files it imports (read from its folder and bundled into the component), and the output path
/// (FILE.wasm unless given), which may not be the script itself.
pub(super) fn inputs(
    policy: Option<&Path>,
    file: &Path,
    output: Option<&Path>,
) -> Result<(palisade::Policy, Script, PathBuf), ExitCode> {
    let policy = load_policy(policy).map_err(super::run::Stop::report_human)?;
    let script = super::run::load_script(file).map_err(super::run::Stop::report_human)?;
    let output = output.map_or_else(|| file.with_extension("wasm"), Path::to_path_buf);
    if output == file {
        return Err(usage_error(format!(
            "the output {} would overwrite the script; pass another path with -o",
            output.display()
        )));
    }
    Ok((policy, script, output))
}

/// The one-worker async runtime a one-shot compile runs on.
pub(super) fn one_worker_runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| {
            report_error(&Error::Internal {
                detail: format!("cannot start the async runtime: {e}"),
            })
        })
}

pub(super) fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
