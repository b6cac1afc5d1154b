//! `POST /v1/run` and `POST /v1/sessions/{id}/run`: the request body, the call through the
//! library, and the response: the same Outcome JSON as `palisade run --json`, with status 200
//! for a result and the error table's status for a failed call (its `error` then also has
//! `type`, `docs_url` and `fix_note`).

use super::auth::Tenant;
use super::catalog::Policies;
use super::daemon::DaemonFields;
use super::errors::{ApiError, docs_url, status_of};
use super::inline::PolicyGiven;
use super::journal::Who;
use super::reply::Stored;
use super::runner::Runner;
use crate::policy::{ByteSize, HumanDuration};
use crate::{Policy, RunOptions, Script};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use utoipa::ToSchema;

/// A file to put in a new session's directory.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewFile {
    /// Its path in the session's directory.
    pub path: String,
    /// UTF-8 content.
    pub content: Option<String>,
    /// Base64 content.
    pub content_b64: Option<String>,
}

impl NewFile {
    /// Its content: exactly one of `content` and `content_b64`.
    pub fn bytes(&self) -> Result<bytes::Bytes, ApiError> {
        use base64::Engine as _;
        match (&self.content, &self.content_b64) {
            (Some(text), None) => Ok(bytes::Bytes::from(text.clone())),
            (None, Some(b64)) => base64::engine::general_purpose::STANDARD
                .decode(b64)
                .map(bytes::Bytes::from)
                .map_err(|e| {
                    ApiError::invalid(format!(
                        "file `{}`: content_b64 is not base64: {e}",
                        self.path
                    ))
                }),
            _ => Err(ApiError::invalid(format!(
                "file `{}` needs exactly one of `content` and `content_b64`",
                self.path
            ))),
        }
    }
}

/// A script sent by name and source.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NamedScript {
    /// The script's name, in stack traces and receipts.
    pub name: String,
    /// Its source: an ES module.
    pub source: String,
}

/// The body of a run.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunRequest {
    /// The policy: a catalog policy's name (`GET /v1/policies`), or a policy as a JSON object
    /// (`{"http": {"allow": [...]}}`), admitted within the ceiling set for the caller's key
    /// (docs/server.md#inline-policies). Not taken in a session, which has its own.
    #[serde(default)]
    #[schema(value_type = Option<super::inline::PolicyField>)]
    pub policy: Option<Box<RawValue>>,
    /// A policy as TOML text, admitted as an object `policy` is (give one of the two).
    #[serde(default)]
    pub policy_toml: Option<String>,
    /// The script's source (named `request.js`), or use `script`.
    #[serde(default)]
    pub source: Option<String>,
    /// The script with a name; a name ending in `.ts` or `.mts` is TypeScript.
    #[serde(default)]
    pub script: Option<NamedScript>,
    /// The modules the script imports, by the relative path it imports them by
    /// (`{"lib.js": "export const add = …"}` for `import { add } from "./lib.js"`): JavaScript,
    /// TypeScript (`.ts`) or JSON (`.json`), bundled on the host (`Script::with_modules`).
    #[serde(default)]
    pub modules: std::collections::BTreeMap<String, String>,
    /// The export (or method of the default export) to call.
    #[serde(default)]
    pub export: Option<String>,
    /// The JSON input, any JSON value; `null` when absent.
    #[serde(default)]
    #[schema(value_type = Option<Value>)]
    pub input: Option<Box<RawValue>>,
    /// Pass the input's elements (a JSON array) as the arguments, one each.
    #[serde(default)]
    pub spread_args: bool,
    /// A deadline shorter than the policy's `limits.timeout` (or up to `overrides.timeout`),
    /// such as `"500ms"`: `RunOptions::timeout`, `palisade run --timeout`.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub timeout: Option<HumanDuration>,
    /// Less fuel than `limits.fuel` (or up to `overrides.fuel`).
    #[serde(default)]
    pub fuel: Option<u64>,
    /// Less memory than `limits.memory` (or up to `overrides.memory`), such as `"64MiB"`.
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub memory: Option<ByteSize>,
    /// Handed to the policy's capability handlers and `forward` URLs (an actor id, a user);
    /// the server's own `tenant` and `session` fields are set over it.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
    /// `[config]` values for this call (keys in `overrides.config`).
    #[serde(default)]
    pub config: std::collections::BTreeMap<String, String>,
    /// Files placed in the scratch directory (`[fs.scratch]`) before the script runs.
    #[serde(default)]
    pub files: Vec<NewFile>,
    /// The instant the script's clock reads, RFC 3339 (`overrides.now = true`).
    #[serde(default)]
    pub now: Option<String>,
    /// The seed of `Math.random` (`overrides.seed = true`).
    #[serde(default)]
    pub seed: Option<u64>,
    /// `exec`: answer in the sandbox daemon's result shape (`stdout`, `stderr`, `exit_code`,
    /// `timed_out`, `duration_ms`, `success`); `outcome` (the default): the Outcome.
    #[serde(default)]
    pub result: Option<String>,
    /// The sandbox daemon's `memory_mb` (as `memory`).
    #[serde(default)]
    pub memory_mb: Option<u64>,
    /// The sandbox daemon's `timeout_ms` (as `timeout`).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// The sandbox daemon's `env`, `["K=V"]` or `{"K": "V"}` (as `config`).
    #[serde(default)]
    pub env: Option<super::daemon::Env>,
    /// The sandbox daemon's `network`: `false` is every policy without `[http]`.
    #[serde(default)]
    pub network: Option<bool>,
    /// The sandbox daemon's `lang`: `js` or `ts` (others are refused).
    #[serde(default)]
    pub lang: Option<String>,
    /// The sandbox daemon's `cpus`: refused, with what to send instead.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub cpus: Option<serde_json::Value>,
    /// The sandbox daemon's `image`: refused, with what to send instead.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub image: Option<serde_json::Value>,
}

impl RunRequest {
    /// Parse a body, mapping every failure to `invalid_input`.
    pub fn parse(body: &[u8]) -> Result<RunRequest, ApiError> {
        serde_json::from_slice(body)
            .map_err(|e| ApiError::invalid(format!("the request body is not a run request: {e}")))
    }

    /// The call's options: what the request asks, with the caller's `tenant` and `session`
    /// over its metadata. Bounds are the policy's, checked by the library as for any caller.
    /// The sandbox daemon's fields of this request.
    pub fn daemon(&self) -> DaemonFields<'_> {
        DaemonFields {
            memory_mb: self.memory_mb,
            timeout_ms: self.timeout_ms,
            network: self.network,
            cpus: self.cpus.as_ref(),
            image: self.image.as_ref(),
            lang: self.lang.as_deref(),
        }
    }

    /// The policy the request gives, if any.
    pub fn policy_given(&self) -> Result<Option<PolicyGiven>, ApiError> {
        super::inline::from_fields(self.policy.as_deref(), self.policy_toml.as_deref())
    }

    /// Whether the answer is the daemon's `exec` shape (else the Outcome).
    fn exec_shape(&self) -> Result<bool, ApiError> {
        match self.result.as_deref() {
            None | Some("outcome") => Ok(false),
            Some("exec") => Ok(true),
            Some(other) => Err(ApiError::invalid(format!(
                "result `{other}`: `outcome` (the default) or `exec`"
            ))
            .fix(serde_json::json!({"result": "exec"}))),
        }
    }

    pub(super) fn options(&self, who: &Who<'_>) -> Result<RunOptions, ApiError> {
        let mut metadata = self.metadata.clone().unwrap_or_default();
        metadata.insert("tenant".into(), who.tenant.into());
        metadata.insert("session".into(), who.session.into());
        let mut options = RunOptions::default().metadata(metadata.into());
        if let Some(export) = &self.export {
            options = options.export(export.clone());
        }
        if self.spread_args {
            options = options.spread_args();
        }
        let daemon = self.daemon();
        if let Some(timeout) = self.timeout.map(|t| t.0).or(daemon.timeout()) {
            options = options.timeout(timeout);
        }
        if let Some(fuel) = self.fuel {
            options = options.fuel(fuel);
        }
        if let Some(memory) = self.memory.or(daemon.memory()) {
            options = options.memory(memory);
        }
        if let Some(now) = &self.now {
            let at = humantime::parse_rfc3339_weak(now).map_err(|e| {
                ApiError::invalid(format!("now: `{now}` is not an RFC 3339 time: {e}"))
                    .fix(serde_json::json!({"now": null}))
                    .note("send an RFC 3339 time such as \"2025-01-01T00:00:00Z\" (the policy must allow overrides.now), or leave `now` out")
            })?;
            options = options.now(at);
        }
        if let Some(seed) = self.seed {
            options = options.seed(seed);
        }
        let env = self.env.clone().map(|e| e.into_config()).transpose()?;
        for (key, value) in self.config.iter().chain(env.iter().flatten()) {
            options = options.config(key.clone(), value.clone());
        }
        for file in &self.files {
            options = options.file(file.path.clone(), file.bytes()?);
        }
        Ok(options)
    }

    fn script(&self) -> Result<Script, ApiError> {
        let typescript = matches!(self.lang.as_deref(), Some("ts" | "typescript"));
        let (name, source) = match (&self.source, &self.script) {
            (Some(source), None) if typescript => ("request.ts", source.as_str()),
            (Some(source), None) => ("request.js", source.as_str()),
            (None, Some(s)) => (s.name.as_str(), s.source.as_str()),
            _ => {
                return Err(Self::one_script());
            }
        };
        let script = if crate::typescript::is_typescript(name) {
            Script::typescript(name, source)?
        } else {
            Script::new(name, source)
        };
        if self.modules.is_empty() {
            return Ok(script);
        }
        Ok(script.with_modules(self.modules.clone())?)
    }

    /// A live session's script: its name and source, evaluated as a script (no modules, no
    /// TypeScript, no export).
    pub(super) fn live_source(&self) -> Result<(&str, &str), ApiError> {
        if !self.modules.is_empty() || self.lang.is_some() {
            return Err(ApiError::invalid(
                "a live session's run is a JavaScript script: it takes no `modules` or `lang`",
            ));
        }
        match (&self.source, &self.script) {
            (Some(source), None) => Ok(("request.js", source.as_str())),
            (None, Some(s)) => Ok((s.name.as_str(), s.source.as_str())),
            _ => Err(Self::one_script()),
        }
    }

    fn one_script() -> ApiError {
        ApiError::invalid("give exactly one of `source` and `script`")
            .fix(serde_json::json!({"script": null}))
            .note("send the script as `source` or as `script: {name, source}`, not both")
    }
}

/// Run `request` for `tenant` under the policy it names or sends (`POST /v1/run`, the MCP
/// tool `run_js`): `invalid_input` without one, `policy_not_found` for one the tenant may not
/// use, `policy_denied` for one sent past the tenant's ceiling; a policy with `[kv]` gets the
/// tenant's namespace prefix.
pub async fn run_named(
    runner: &Runner,
    policies: &Policies,
    tenant: &Tenant,
    request: &RunRequest,
) -> Result<Stored, ApiError> {
    let Some(given) = request.policy_given()? else {
        return Err(
            ApiError::invalid("a run needs `policy`").fix(serde_json::json!({"policy": "default"}))
        );
    };
    let policy = policies.resolve(tenant, given.as_ref())?;
    // Only a policy with [kv] changes for the tenant; any other runs as loaded, not copied for
    // every request.
    let derived = match policy.kv() {
        Some(_) => Cow::Owned(policy.with_kv_namespace_prefix(&format!("{}/", tenant.name))),
        None => Cow::Borrowed(&*policy),
    };
    execute(runner, &derived, request, &Who::tenant(&tenant.name)).await
}

/// Run `request` under `policy` (already derived for the caller) for `who`, and make the
/// response.
pub async fn execute(
    runner: &Runner,
    policy: &Policy,
    request: &RunRequest,
    who: &Who<'_>,
) -> Result<Stored, ApiError> {
    let script = request.script()?;
    request.daemon().check(policy)?;
    let exec = request.exec_shape()?;
    let options = request.options(who)?;
    let input = request.input.as_deref().map_or("null", RawValue::get);
    let outcome = runner.run(policy, &script, input, options, who).await?;
    if exec {
        return Ok(Stored {
            status: 200,
            body: super::daemon::exec_result(&outcome).to_string(),
        });
    }
    respond(&outcome)
}

/// The response for an outcome.
pub fn respond(outcome: &crate::Outcome) -> Result<Stored, ApiError> {
    if outcome.error().is_none() {
        // The common case, written once without an intermediate tree.
        let body = serde_json::to_string(outcome).map_err(|e| {
            ApiError::from(crate::Error::Internal {
                detail: e.to_string(),
            })
        })?;
        return Ok(Stored { status: 200, body });
    }
    let mut body = serde_json::to_value(outcome).map_err(|e| {
        ApiError::from(crate::Error::Internal {
            detail: e.to_string(),
        })
    })?;
    let status = match outcome.error() {
        None => axum::http::StatusCode::OK,
        Some(error) => {
            if let Some(e) = body.get_mut("error") {
                e["docs_url"] = docs_url(error.code()).into();
                e["type"] = super::errors::class(error.error_code()).into();
                e["fix_note"] = match error.fix() {
                    Some(fix) => format!("the policy change that would allow it: {fix}").into(),
                    None => super::errors::default_note(error.error_code()).into(),
                };
            }
            status_of(error)
        }
    };
    Ok(Stored {
        status: status.as_u16(),
        body: body.to_string(),
    })
}
