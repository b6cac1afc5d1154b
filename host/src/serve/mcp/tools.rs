//! The tools: what each takes (a JSON Schema generated from its argument type), the request of
//! the HTTP route it stands for, and the service that answers it.

use super::reply;
use crate::serve::apps::view::{Audience, filter};
use crate::serve::auth::Tenant;
use crate::serve::catalog::Catalog;
use crate::serve::errors::ApiError;
use crate::serve::fs::FsRequest;
use crate::serve::runs::RunRequest;
use crate::serve::sessions::{CreateSession, session_policy};
use crate::serve::state::AppState;
use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, JsonObject, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Arc;

/// What the server tells a client when it connects.
pub const INSTRUCTIONS: &str = "Palisade runs JavaScript or TypeScript in a fresh WebAssembly \
sandbox per call, under a policy that decides what the script may use. Write one script that \
does the whole task (several capability calls, fetches and computations in one run) rather \
than many tool calls. `run_js` runs a script once; `session_create`, `session_run`, `fs_*` and \
`session_stop` keep files and key-value state across runs; `app_view` and `app_act` drive \
action apps (`dry_run` previews an action). Each tool's description holds the TypeScript \
declarations of what a script may use under each policy; resources hold the full declarations \
(`palisade://policies/NAME/types`). A failed call has `isError` and its error's `code`, \
`fix` (a change to the request or the policy) and `fix_note`.";

/// The file operations, each the tool `fs_OP`.
const FS_OPS: &[(&str, &str)] = &[
    ("ls", "list a directory (`path`)"),
    ("stat", "a path's kind and size"),
    ("read", "read a file (`path`)"),
    (
        "write",
        "write a file (`path`, `content` or `content_b64`, `parents`)",
    ),
    ("mkdir", "make a directory (`path`, `parents`)"),
    ("rm", "remove a file, or a directory with `recursive`"),
    ("mv", "move `src` to `dst` (`overwrite`)"),
    ("grep", "search files for `pattern` (a regular expression)"),
    ("sed", "replace `pattern` with `replacement` in files"),
];

/// `run_js`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RunJs {
    /// An ES module; its default export is called with `input`, and what it returns (or
    /// resolves to) is the output, as JSON.
    pub source: String,
    /// The script's name, in stack traces; a name ending in `.ts` runs it as TypeScript.
    /// Default `main.js`.
    pub name: Option<String>,
    /// The policy to run under: a policy's name (see the declarations above), or a policy as
    /// a JSON object, admitted within the ceiling set for the caller's key.
    pub policy: Option<Value>,
    /// A policy as TOML text, admitted as an object `policy` is.
    pub policy_toml: Option<String>,
    /// The modules the script imports, by the relative path it imports them by
    /// (`{"lib.js": "export const add = (a, b) => a + b;"}` for `import { add } from
    /// "./lib.js"`); `.ts` ones are TypeScript, `.json` ones JSON.
    pub modules: Option<BTreeMap<String, String>>,
    #[serde(flatten)]
    pub options: CallOptions,
}

/// The options of one call, as `POST /v1/run` takes them; each within what the policy allows.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct CallOptions {
    /// The input, any JSON value (`null` when absent).
    pub input: Option<Value>,
    /// Call this export (or method of the default export) instead of the default export.
    pub export: Option<String>,
    /// A shorter deadline than the policy's, such as `"500ms"` (longer only up to
    /// `overrides.timeout`).
    pub timeout: Option<String>,
    /// Less fuel than the policy's `limits.fuel`.
    pub fuel: Option<u64>,
    /// Less memory than the policy's, such as `"32MiB"`.
    pub memory: Option<String>,
    /// `[config]` values for this call (keys the policy lists in `overrides.config`).
    pub config: Option<BTreeMap<String, String>>,
    /// Files placed in the policy's scratch directory before the script runs.
    pub files: Option<Vec<NewFile>>,
}

/// A file to place before a run or in a new session.
#[derive(Debug, Deserialize, JsonSchema, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct NewFile {
    /// Its path (a plain name for a run's scratch directory).
    pub path: String,
    /// Its content, as UTF-8 text.
    pub content: String,
}

/// `session_create`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionCreate {
    /// The policy the session's runs use: a name, or a policy as a JSON object.
    pub policy: Option<Value>,
    /// A policy as TOML text, admitted as an object `policy` is.
    pub policy_toml: Option<String>,
    /// A label.
    pub name: Option<String>,
    /// Stop the session after this long without use, such as `"10m"`.
    pub idle_timeout: Option<String>,
    /// Files to put in its directory.
    pub files: Option<Vec<NewFile>>,
    /// Values its scripts read with `config.get`.
    pub config: Option<BTreeMap<String, String>>,
    /// Keep the JavaScript heap between runs: each `session_run` then evaluates a script
    /// (not a module) whose top-level declarations stay defined for the next, and whose last
    /// expression is the result; a failed run rolls back.
    pub live: Option<bool>,
}

/// `session_run`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SessionRun {
    /// The session (`session_create` made it).
    pub session_id: String,
    /// An ES module, as for `run_js`; the session's directory is its scratch directory.
    pub source: String,
    /// The script's name; `.ts` runs it as TypeScript.
    pub name: Option<String>,
    /// The modules the script imports, as for `run_js`.
    pub modules: Option<BTreeMap<String, String>>,
    #[serde(flatten)]
    pub options: CallOptions,
}

/// `session_stop`, and the session of an `fs_*` tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SessionId {
    /// The session.
    pub session_id: String,
}

/// `app_view`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppView {
    /// The app's name.
    pub app: String,
    /// The session; `default` when absent.
    pub session_id: Option<String>,
    /// `agent` (default) or `human`.
    pub audience: Option<String>,
}

/// `app_act`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppAct {
    /// The app's name.
    pub app: String,
    /// The action, one of the app's `actions` (`app_view` shows them).
    pub action: String,
    /// The action's parameters.
    pub params: Option<Value>,
    /// Preview only: run the action and keep nothing; the answer's `preview` can be passed as
    /// `if_preview` to commit exactly that.
    pub dry_run: Option<bool>,
    /// Why, for the audit log.
    pub intent: Option<String>,
    /// The session; `default` when absent.
    pub session_id: Option<String>,
    /// Commit only if the action does exactly what this dry run's `preview` showed.
    pub if_preview: Option<String>,
}

fn schema_of<T: JsonSchema>() -> Arc<JsonObject> {
    let schema = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
    match serde_json::to_value(schema) {
        Ok(Value::Object(object)) => Arc::new(object),
        _ => Arc::new(JsonObject::new()),
    }
}

/// The file tools' schema: the session and every field of `FsRequest`.
fn fs_schema() -> Arc<JsonObject> {
    let mut schema = (*schema_of::<FsRequest>()).clone();
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        properties.insert(
            "session_id".into(),
            json!({"type": "string", "description": "The session."}),
        );
    }
    schema.insert("required".into(), json!(["session_id"]));
    Arc::new(schema)
}

/// The tools, their descriptions carrying the declarations of each policy `tenant` may use.
pub fn list(catalog: &Catalog, tenant: &Tenant) -> Vec<Tool> {
    let (runs, sessions) = declarations(catalog, tenant);
    let mut tools = vec![
        Tool::new(
            "run_js",
            format!(
                "Run a script once in a fresh sandbox under a policy: its output (JSON), console lines and receipt. Under each policy a script may use:\n{runs}"
            ),
            schema_of::<RunJs>(),
        ),
        Tool::new(
            "session_create",
            "Create a session under a policy: a directory and key-value state that persist across its runs. Answers its `session_id`.",
            schema_of::<SessionCreate>(),
        ),
        Tool::new(
            "session_run",
            format!(
                "Run a script in a session (one at a time): as `run_js`, with the session's directory and key-value state. In a session of each policy a script may use:\n{sessions}"
            ),
            schema_of::<SessionRun>(),
        ),
        Tool::new(
            "session_stop",
            "Stop a session: its files and keys are removed.",
            schema_of::<SessionId>(),
        ),
        Tool::new(
            "app_view",
            "An action app's view of a session's state, with its actions.",
            schema_of::<AppView>(),
        ),
        Tool::new(
            "app_act",
            "Run an action app's action: `dry_run` previews it and keeps nothing, else its state and events are committed.",
            schema_of::<AppAct>(),
        ),
    ];
    for (op, what) in FS_OPS {
        tools.push(Tool::new(
            format!("fs_{op}"),
            format!("A session's files: {what}. Paths are relative to the session's directory."),
            fs_schema(),
        ));
    }
    tools
}

/// The most bytes of declarations one tool's description carries: a catalog of many policies
/// would otherwise make every `tools/list` answer megabytes. Past it, the description names the
/// policies left, whose declarations are resources.
const MAX_DECLARATION_BYTES: usize = 64 << 10;

/// Each policy's declarations, for a run and for a run in a session.
fn declarations(catalog: &Catalog, tenant: &Tenant) -> (String, String) {
    let (mut runs, mut sessions) = (String::new(), String::new());
    let mut left = Vec::new();
    let usable = catalog
        .policies
        .values()
        .filter(|p| tenant.may_use(p.name()));
    for policy in usable {
        let name = policy.name();
        if runs.len().max(sessions.len()) > MAX_DECLARATION_BYTES {
            left.push(name);
            continue;
        }
        let about = policy.description().unwrap_or("");
        let grants = policy.typescript_grants();
        let _ = write!(runs, "\n## policy `{name}`: {about}\n```ts{grants}```\n");
        let session = session_policy(policy, std::path::Path::new("/")).typescript_grants();
        let _ = write!(sessions, "\n## policy `{name}`\n```ts{session}```\n");
    }
    if !left.is_empty() {
        let more = format!(
            "\nAnd the policies {}: their declarations are `palisade://policies/NAME/types`.\n",
            left.join(", ")
        );
        runs.push_str(&more);
        sessions.push_str(&more);
    }
    (runs, sessions)
}

/// Run the tool `name` for `tenant`. A request the tool cannot take, and every refusal of the
/// services, is a result with `isError` (the error's code, fix and note); only an unknown tool
/// is a protocol error.
pub async fn call(
    state: &AppState,
    tenant: &Arc<Tenant>,
    name: &str,
    arguments: JsonObject,
    sent: Option<&super::SentPolicy>,
) -> Result<CallToolResult, McpError> {
    let answer = match name {
        "run_js" => run_js(state, tenant, arguments, sent).await,
        "session_create" => session_create(state, tenant, arguments, sent).await,
        "session_run" => session_run(state, tenant, arguments).await,
        "session_stop" => session_stop(state, tenant, arguments).await,
        "app_view" => app_view(state, tenant, arguments).await,
        "app_act" => app_act(state, tenant, arguments).await,
        _ => match name
            .strip_prefix("fs_")
            .filter(|op| FS_OPS.iter().any(|(o, _)| o == op))
        {
            Some(op) => fs(state, tenant, op, arguments).await,
            None => {
                return Err(McpError::invalid_params(
                    format!("no tool `{name}`: tools/list names them"),
                    None,
                ));
            }
        },
    };
    Ok(answer.unwrap_or_else(|error| reply::refused(&error)))
}

/// A tool's arguments as `T`: a key `T` does not take is refused (as the routes refuse
/// unknown fields), never ignored.
fn arguments<T: DeserializeOwned + JsonSchema>(
    tool: &str,
    arguments: JsonObject,
) -> Result<T, ApiError> {
    let schema = schema_of::<T>();
    let known = schema.get("properties").and_then(Value::as_object);
    if let Some(key) = arguments
        .keys()
        .find(|k| known.is_some_and(|p| !p.contains_key(*k)))
    {
        return Err(ApiError::invalid(format!(
            "`{tool}` takes no argument `{key}`; tools/list shows its schema"
        ))
        .fix(json!({ key.as_str(): null })));
    }
    serde_json::from_value(Value::Object(arguments))
        .map_err(|e| ApiError::invalid(format!("the arguments do not fit `{tool}`: {e}")))
}

/// A script as a tool takes it.
struct Source {
    policy: Option<Value>,
    policy_toml: Option<String>,
    name: Option<String>,
    source: String,
    modules: Option<BTreeMap<String, String>>,
}

/// The `POST /v1/run` body for a script and its options.
fn run_request(script: Source, options: CallOptions) -> Result<RunRequest, ApiError> {
    let mut body = Map::new();
    body.insert("policy".into(), json!(script.policy));
    body.insert("policy_toml".into(), json!(script.policy_toml));
    let name = script.name.unwrap_or_else(|| "main.js".to_owned());
    body.insert(
        "script".into(),
        json!({"name": name, "source": script.source}),
    );
    if let Some(modules) = script.modules {
        body.insert("modules".into(), json!(modules));
    }
    let fields = [
        ("input", options.input),
        ("export", options.export.map(Value::from)),
        ("timeout", options.timeout.map(Value::from)),
        ("fuel", options.fuel.map(Value::from)),
        ("memory", options.memory.map(Value::from)),
        ("config", options.config.map(|c| json!(c))),
        ("files", options.files.map(|f| json!(f))),
    ];
    for (key, value) in fields {
        if let Some(value) = value {
            body.insert(key.into(), value);
        }
    }
    RunRequest::parse(Value::Object(body).to_string().as_bytes())
}

/// The policy text to resolve for a tool's `policy` argument: the bytes the client sent when
/// the argument is a JSON object and the transport kept them ([`super::SentPolicy`]), so its
/// SHA-256 is the one `POST /v1/run` gives the same bytes; otherwise none (a name, or no text
/// kept: the argument as serde_json writes it).
fn sent_text(
    policy: Option<&Value>,
    sent: Option<&super::SentPolicy>,
) -> Result<Option<Box<RawValue>>, ApiError> {
    let (Some(Value::Object(_)), Some(sent)) = (policy, sent) else {
        return Ok(None);
    };
    RawValue::from_string(sent.0.to_string())
        .map(Some)
        .map_err(|e| ApiError::invalid(format!("policy: {e}")))
}

async fn run_js(
    state: &AppState,
    tenant: &Tenant,
    args: JsonObject,
    sent: Option<&super::SentPolicy>,
) -> Result<CallToolResult, ApiError> {
    let call: RunJs = arguments("run_js", args)?;
    let text = sent_text(call.policy.as_ref(), sent)?;
    let script = Source {
        policy: call.policy,
        policy_toml: call.policy_toml,
        name: call.name,
        source: call.source,
        modules: call.modules,
    };
    let mut request = run_request(script, call.options)?;
    if text.is_some() {
        request.policy = text;
    }
    let stored =
        crate::serve::runs::run_named(&state.runner, &state.policies, tenant, &request).await?;
    Ok(reply::stored(&stored))
}

async fn session_create(
    state: &AppState,
    tenant: &Arc<Tenant>,
    args: JsonObject,
    sent: Option<&super::SentPolicy>,
) -> Result<CallToolResult, ApiError> {
    let call: SessionCreate = arguments("session_create", args)?;
    let text = sent_text(call.policy.as_ref(), sent)?;
    let body = json!({
        "policy": call.policy,
        "policy_toml": call.policy_toml,
        "name": call.name,
        "idle_timeout": call.idle_timeout,
        "files": call.files.unwrap_or_default(),
        "config": call.config.unwrap_or_default(),
        "live": call.live.unwrap_or(false),
    });
    let mut request: CreateSession = serde_json::from_str(&body.to_string())
        .map_err(|e| ApiError::invalid(format!("not a session: {e}")))?;
    if text.is_some() {
        request.policy = text;
    }
    Ok(reply::value(
        &state.sessions.create_detached(tenant, request).await?,
    ))
}

async fn session_run(
    state: &AppState,
    tenant: &Tenant,
    args: JsonObject,
) -> Result<CallToolResult, ApiError> {
    let call: SessionRun = arguments("session_run", args)?;
    let script = Source {
        policy: None,
        policy_toml: None,
        name: call.name,
        source: call.source,
        modules: call.modules,
    };
    let request = run_request(script, call.options)?;
    let stored = state
        .sessions
        .run(tenant, &call.session_id, request)
        .await?;
    Ok(reply::stored(&stored))
}

async fn session_stop(
    state: &AppState,
    tenant: &Tenant,
    args: JsonObject,
) -> Result<CallToolResult, ApiError> {
    let call: SessionId = arguments("session_stop", args)?;
    let session = state.sessions.get(&tenant.name, &call.session_id).await?;
    state.sessions.stop(session).await?;
    Ok(reply::value(
        &json!({"session_id": call.session_id, "stopped": true}),
    ))
}

async fn fs(
    state: &AppState,
    tenant: &Tenant,
    op: &str,
    mut args: JsonObject,
) -> Result<CallToolResult, ApiError> {
    let Some(Value::String(session)) = args.remove("session_id") else {
        return Err(ApiError::invalid(format!("`fs_{op}` needs `session_id`")));
    };
    let request: FsRequest = arguments(&format!("fs_{op}"), args)?;
    Ok(reply::value(
        &state
            .sessions
            .fs(tenant, &session, op.to_owned(), request)
            .await?,
    ))
}

async fn app_view(
    state: &AppState,
    tenant: &Tenant,
    args: JsonObject,
) -> Result<CallToolResult, ApiError> {
    let call: AppView = arguments("app_view", args)?;
    let audience = match call.audience.as_deref() {
        None => Audience::Agent,
        Some(text) => Audience::parse(text)
            .ok_or_else(|| ApiError::invalid(format!("audience `{text}`: `agent` or `human`")))?,
    };
    let session = call.session_id.as_deref().unwrap_or("default");
    let view = state.apps.view(tenant, &call.app, session, None).await?;
    let record = state.apps.record(&tenant.name, &call.app).await?;
    let mut answer = crate::serve::apps::routes::describe(&record);
    answer["view"] = filter(&view, audience);
    Ok(reply::value(&answer))
}

async fn app_act(
    state: &AppState,
    tenant: &Tenant,
    args: JsonObject,
) -> Result<CallToolResult, ApiError> {
    let call: AppAct = arguments("app_act", args)?;
    let body = json!({
        "action": call.action,
        "params": call.params,
        "dry_run": call.dry_run.unwrap_or(false),
        "intent": call.intent,
        "session_id": call.session_id,
        "if_preview": call.if_preview,
    });
    let reply = state
        .apps
        .act(tenant, &call.app, body.to_string().as_bytes(), None)
        .await?;
    Ok(reply::stored(&reply.stored))
}
