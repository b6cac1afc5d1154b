//! `palisade types --policy P [-o FILE]`: the TypeScript declarations of what a script may use
//! under a policy (`Policy::typescript`, docs/agents.md).

use palisade::Policy;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct TypesArgs {
    /// The policy file (TOML); the built-in default without it.
    #[arg(long)]
    policy: Option<PathBuf>,
    /// Write the declarations to this file (such as `sandbox.d.ts`) instead of stdout.
    #[arg(short, long)]
    output: Option<PathBuf>,
}

pub fn run(args: TypesArgs) -> ExitCode {
    let policy = match &args.policy {
        None => Policy::builtin_default(),
        Some(path) => match Policy::from_file(path) {
            Ok(policy) => policy,
            Err(error) => {
                eprintln!("error[invalid_policy]: {error}");
                return ExitCode::from(palisade::Error::InvalidPolicy(error).exit_code() as u8);
            }
        },
    };
    let text = policy.typescript();
    let written = match &args.output {
        Some(path) => {
            std::fs::write(path, &text).map_err(|e| format!("cannot write {}: {e}", path.display()))
        }
        // A closed stdout (`| head`) is not an error.
        None => {
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            Ok(())
        }
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(crate::EXIT_USAGE)
        }
    }
}
