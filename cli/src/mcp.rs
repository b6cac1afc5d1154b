//! `palisade mcp`: the MCP server over stdio, for an agent that starts it (docs/agents.md).
//! Its calls go through the same services as `palisade serve`'s, as its keyless `local`
//! tenant: the policies folder, the data folder (sessions, key-value store) and the audit log
//! are those flags of `serve`. Only the protocol is written to stdout.

use clap::Args;
use palisade::serve::{Config, default_data_dir};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Folder of policy files (*.toml). Default: ./policies when it exists, else the built-in
    /// default policy only.
    #[arg(long)]
    policies: Option<PathBuf>,
    /// Where sessions, apps and the key-value store are kept (shared with `palisade serve
    /// --data` on the same folder only when the server is stopped).
    #[arg(long)]
    data: Option<PathBuf>,
    /// Append every gated decision to this file (JSON lines).
    #[arg(long)]
    audit_log: Option<PathBuf>,
    /// The most calls running at once.
    #[arg(long, default_value_t = 4)]
    max_concurrency: usize,
}

pub fn run(args: McpArgs) -> ExitCode {
    let mut config = Config::new(args.data.unwrap_or_else(default_data_dir));
    config.policies = args.policies.or_else(|| {
        let local = PathBuf::from("policies");
        local.is_dir().then_some(local)
    });
    config.audit_log = args.audit_log;
    config.max_concurrency = args.max_concurrency.max(1);
    if let Some(base) = super::docs_url_from_env() {
        config.docs_url = base;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return super::run::usage_error(format!("cannot start the runtime: {e}")),
    };
    let result = runtime.block_on(async {
        let state = palisade::serve::AppState::open(config)?;
        tokio::spawn(palisade::serve::reaper(state.clone()));
        palisade::serve::mcp::Mcp::stdio(state).await
    });
    // Stdin stays read by a blocking thread until it closes: do not wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => super::run::usage_error(e),
    }
}
