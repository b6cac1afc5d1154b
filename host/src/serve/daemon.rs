//! The sandbox-daemon seed's fields, as its callers send them (docs/server.md, "The sandbox
//! daemon's requests"): `memory_mb`, `timeout_ms`, `env` (a list of `K=V` or an object),
//! `idle_timeout_secs` and `network` map onto Palisade's own options; `cpus`, `image` and a
//! `lang` other than JavaScript or TypeScript are refused with what to send instead; and a
//! one-shot run may answer in the daemon's result shape (`"result": "exec"`).

use super::errors::ApiError;
use crate::policy::{ByteSize, Policy};
use crate::{Level, Outcome};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::Duration;
use utoipa::ToSchema;

/// `env` in either of the daemon's shapes.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum Env {
    /// `["FOO=bar", …]`.
    List(Vec<String>),
    /// `{"FOO": "bar", …}`.
    Map(BTreeMap<String, String>),
}

impl Env {
    /// The values as `[config]` keys (scripts read them with `config.get`).
    pub fn into_config(self) -> Result<BTreeMap<String, String>, ApiError> {
        match self {
            Env::Map(map) => Ok(map),
            Env::List(list) => list
                .into_iter()
                .map(|pair| match pair.split_once('=') {
                    Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
                    _ => Err(ApiError::invalid(format!("env: `{pair}` is not KEY=VALUE"))),
                })
                .collect(),
        }
    }
}

/// The daemon's fields of a request (a run's or a session's), beside Palisade's own.
#[derive(Debug, Default)]
pub struct DaemonFields<'a> {
    /// The memory ceiling in MiB (`memory` in Palisade's words).
    pub memory_mb: Option<u64>,
    /// The deadline in milliseconds (`timeout`).
    pub timeout_ms: Option<u64>,
    /// `false` is what every policy without `[http]` means; `true` needs a policy with one.
    pub network: Option<bool>,
    /// Refused: Palisade runs each call on the host's own threads.
    pub cpus: Option<&'a Value>,
    /// Refused: there is one guest, QuickJS; the policy decides what it may use.
    pub image: Option<&'a Value>,
    /// `js`, `javascript`, `ts`, `typescript` (or `node`, which runs as JavaScript); any other
    /// is refused.
    pub lang: Option<&'a str>,
}

impl DaemonFields<'_> {
    /// Refuse what Palisade cannot honour under `policy`, each with the request change that
    /// works.
    pub fn check(&self, policy: &Policy) -> Result<(), ApiError> {
        if self.cpus.is_some() {
            return Err(ApiError::invalid(
                "`cpus` has no meaning here: each call runs in a WebAssembly sandbox on the \
                 server's threads, bounded by the policy's fuel and deadline",
            )
            .fix(json!({"cpus": null})));
        }
        if self.image.is_some() {
            return Err(ApiError::invalid(
                "`image` has no meaning here: every call runs JavaScript in the same guest, and \
                 the policy decides what it may use",
            )
            .fix(json!({"image": null})));
        }
        if let Some(lang) = self.lang
            && !matches!(lang, "js" | "javascript" | "node" | "ts" | "typescript")
        {
            return Err(ApiError::invalid(format!(
                "lang `{lang}`: Palisade runs JavaScript and TypeScript only"
            ))
            .fix(json!({"lang": "js"})));
        }
        if self.network == Some(true) && policy.http().is_none() {
            return Err(ApiError::invalid(format!(
                "`network: true`, but the policy `{}` grants no HTTP ([http]); name a policy \
                 that does",
                policy.name()
            ))
            .fix(json!({"network": false})));
        }
        Ok(())
    }

    /// The memory ceiling, when given.
    pub fn memory(&self) -> Option<ByteSize> {
        self.memory_mb
            .map(|mb| ByteSize(mb.saturating_mul(1 << 20)))
    }

    /// The deadline, when given.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout_ms.map(Duration::from_millis)
    }
}

/// An outcome in the daemon's result shape: `stdout` (the `log`, `info` and `debug` lines),
/// `stderr` (the `warn` and `error` lines, then the error that ended the call), `exit_code`
/// (0, or the error code's exit code, docs/errors.md), `timed_out`, `duration_ms`, `success`;
/// beside them Palisade's own `output` and `error`.
pub fn exec_result(outcome: &Outcome) -> Value {
    let mut stdout = String::new();
    let mut stderr = String::new();
    for line in &outcome.logs {
        let out = match line.level {
            Level::Warn | Level::Error => &mut stderr,
            _ => &mut stdout,
        };
        out.push_str(&line.message);
        out.push('\n');
    }
    if let Some(error) = outcome.error() {
        stderr.push_str(&format!("{}: {error}\n", error.code()));
    }
    json!({
        "stdout": stdout,
        "stderr": stderr,
        "exit_code": outcome.error().map_or(0, crate::Error::exit_code),
        "timed_out": outcome.error().is_some_and(|e| e.code() == "timeout"),
        "duration_ms": outcome.receipt.wall_time_us / 1000,
        "success": outcome.error().is_none(),
        "output": outcome.output().map(|o| serde_json::from_str::<Value>(o.get()).unwrap_or(Value::Null)),
        "error": outcome.error().map(|e| json!({"code": e.code(), "message": e.to_string()})),
    })
}
