//! `palisade policy check PATH` and `palisade policy schema`.

use clap::Subcommand;
use palisade::Policy;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Validate a policy file and print it resolved, with every default filled in.
    Check {
        /// The policy file (TOML).
        path: PathBuf,
    },
    /// Print the JSON Schema of the policy format (for editors: policy files as data, and
    /// policies written as JSON for `Policy::from_json`).
    Schema,
}

pub fn run(command: PolicyCommand) -> ExitCode {
    match command {
        PolicyCommand::Schema => {
            let schema =
                serde_json::to_string_pretty(&Policy::json_schema()).expect("a JSON value prints");
            let _ = writeln!(std::io::stdout().lock(), "{schema}");
            ExitCode::SUCCESS
        }
        PolicyCommand::Check { path } => match Policy::from_file(&path) {
            Ok(policy) => {
                // A closed stdout (`| head`) is not an error of the check.
                let mut out = std::io::stdout().lock();
                let _ = writeln!(
                    out,
                    "# {}: valid (sha256 {})",
                    path.display(),
                    policy.sha256()
                );
                let guest = if policy.grants_imports() {
                    "full (the policy grants a capability)"
                } else {
                    "plain (the policy grants no capability; none is imported)"
                };
                let _ = writeln!(out, "# guest: {guest}");
                let _ = write!(out, "{policy}");
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("error[invalid_policy]: {error}");
                let code = palisade::Error::InvalidPolicy(error).exit_code();
                ExitCode::from(code as u8)
            }
        },
    }
}
