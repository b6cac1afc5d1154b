//! `palisade serve --app FILE.js`: the app's own routes at the root, as the seed runtime
//! served them (`/load`, `/load-file`, `/init`, `/view`, `/press`, `/actions`,
//! `/agent/events`; `/healthz` is the server's), for that one app. The app is loaded for each
//! tenant on its first request under the file's stem as its name and the `default` policy, and
//! is then an ordinary app (`/v1/apps/NAME`). `session_id` picks the session: in the body, else in `env`, else in the query
//! (`?session_id=`); `default` when absent. Two that disagree are refused.

use super::super::auth::{Authed, Tenant};
use super::super::errors::ApiError;
use super::super::idempotency::Ledger;
use super::Apps;
use super::actions::{self, DEFAULT_SESSION};
use super::records::{self, SessionState};
use super::routes::LoadApp;
use crate::Error;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{FromRef, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use utoipa::{IntoParams, ToSchema};

type St = State<Arc<Apps>>;
type AppResult = Result<Response, ApiError>;

/// The seed's routes, on any state that holds the apps and the tenants.
pub fn router<S>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
    Arc<Apps>: FromRef<S>,
    Arc<super::super::auth::Tenants>: FromRef<S>,
{
    Router::new()
        .route("/load", post(load))
        .route("/load-file", post(load_file))
        .route("/init", post(init))
        .route("/view", post(view))
        .route("/press", post(press))
        .route("/actions", post(actions_route))
        .route("/agent/events", get(events))
}

/// The app's name: the file's stem, reduced to letters, digits, `-` and `_`.
pub fn app_name(file: &Path) -> String {
    let stem: String = file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("app")
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(64)
        .collect();
    if stem.is_empty() {
        "app".to_owned()
    } else {
        stem
    }
}

fn read(path: &Path) -> Result<String, ApiError> {
    crate::hostfile::read_text(path, crate::MAX_SCRIPT_BYTES)
        .map_err(|e| ApiError::invalid(format!("cannot read {}: {e}", path.display())))
}

impl Apps {
    /// The `--app` file.
    fn seed_file(&self) -> Result<&PathBuf, ApiError> {
        self.parts.seed_file.as_ref().ok_or_else(|| {
            ApiError::invalid("this server has no --app").with_status(StatusCode::NOT_FOUND)
        })
    }

    /// The seed app's name, loading it from the file on the tenant's first request.
    async fn ensure(&self, tenant: &Tenant) -> Result<String, ApiError> {
        let path = self.seed_file()?;
        let name = app_name(path);
        let mut loaded = self.seed.lock().await;
        if !loaded.contains(&tenant.name) {
            let request = LoadApp {
                name: name.clone(),
                source: read(path)?,
                policy: None,
            };
            self.load(tenant, request).await?;
            loaded.insert(tenant.name.clone());
        }
        Ok(name)
    }

    /// `init(env)` again for a session: its state starts over (in the session's turn).
    async fn init(
        &self,
        tenant: &Tenant,
        name: &str,
        session: &str,
        env: Map<String, Value>,
    ) -> Result<Value, ApiError> {
        super::check_session(session)?;
        let loaded = self.get(tenant, name).await?;
        let skey = actions::session_key(&tenant.name, name, session);
        self.turns
            .run(&skey, async {
                let standing = self.standing(&loaded, tenant, &skey, None).await?;
                let mut env = env;
                env.insert("session_id".into(), session.into());
                let input = json!({"state": null, "env": env});
                let who = super::super::journal::Who {
                    tenant: &tenant.name,
                    session: Some(session),
                    app: Some(name),
                };
                let fresh = match self
                    .call(&loaded, &standing.view_policy, "view", &input, &who)
                    .await?
                {
                    actions::Ran::Value(v, kv) => {
                        self.parts.runner.apply_kv(kv).await?;
                        v["state"].clone()
                    }
                    actions::Ran::Failed(error) => return Err(ApiError::from(error)),
                };
                let next = SessionState {
                    state: fresh.clone(),
                    seq: standing.seq,
                    clock_unix_ms: standing.clock,
                    events: standing.current.as_ref().map_or(0, |s| s.events),
                };
                let store = self.parts.store.clone();
                let key = skey.clone();
                records::blocking(move || records::put_session(&store, &key, &next)).await?;
                Ok(fresh)
            })
            .await
    }
}

fn ok() -> Response {
    (StatusCode::OK, axum::Json(json!({"ok": true}))).into_response()
}

fn parse<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    let body = if body.is_empty() {
        b"{}".as_slice()
    } else {
        body
    };
    serde_json::from_slice(body)
        .map_err(|e| ApiError::invalid(format!("the request body does not fit this route: {e}")))
}

/// `?session_id=` of the seed's routes.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SessionParam {
    /// The session, when the body names none.
    pub session_id: Option<String>,
}

/// The session a request names: in its body, in its `env`, or in the query, else `default`.
/// Places that name different sessions are refused, so a request never reaches a session it
/// did not mean.
fn session_of(
    body: Option<&str>,
    env: Option<&Map<String, Value>>,
    query: Option<&str>,
) -> Result<String, ApiError> {
    let from_env = match env.and_then(|e| e.get("session_id")) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.as_str()),
        Some(_) => return Err(ApiError::invalid("env.session_id is a string")),
    };
    let named: Vec<&str> = [body, from_env, query].into_iter().flatten().collect();
    if let Some(first) = named.first()
        && named.iter().any(|n| n != first)
    {
        return Err(ApiError::invalid(format!(
            "the request names two sessions ({}); name one, in the body, `env` or the query",
            named.join(", ")
        ))
        .fix(json!({"session_id": first})));
    }
    Ok(named.first().copied().unwrap_or(DEFAULT_SESSION).to_owned())
}

/// The body of `POST /load`.
#[derive(Deserialize, ToSchema)]
pub struct LoadBody {
    /// The app's new source.
    pub source: String,
    /// Taken for the seed's sake, and not used.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub env: Option<Value>,
}

/// The body of `POST /load-file`.
#[derive(Deserialize, ToSchema)]
pub struct LoadFileBody {
    /// A file in the `--app` file's folder (relative to it, or absolute inside it).
    #[schema(value_type = String)]
    pub path: PathBuf,
    /// Taken for the seed's sake, and not used.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub env: Option<Value>,
}

async fn replace(apps: &Apps, tenant: &Tenant, source: String) -> AppResult {
    let name = apps.ensure(tenant).await?;
    let request = LoadApp {
        name,
        source,
        policy: None,
    };
    apps.load(tenant, request).await?;
    Ok(ok())
}

/// `POST /load {source}`: replace the app's source.
#[utoipa::path(post, path = "/load", operation_id = "seed_load", tag = "seed", request_body = LoadBody,
    responses((status = 200, description = "`{\"ok\":true}`: the app's source replaced"),
        (status = 400, description = "invalid_input: not an app"),
        (status = 422, description = "guest_syntax (with `location`), not_compilable, guest_exception")))]
pub async fn load(State(apps): St, Authed(tenant): Authed, body: Bytes) -> AppResult {
    let request: LoadBody = parse(&body)?;
    replace(&apps, &tenant, request.source).await
}

/// `POST /load-file {path}`: replace the app's source with a file from the folder of the
/// `--app` file. A path elsewhere, or one that does not exist, is refused alike: callers never
/// learn what the server's disk holds.
#[utoipa::path(post, path = "/load-file", operation_id = "seed_load_file", tag = "seed", request_body = LoadFileBody,
    responses((status = 200, description = "`{\"ok\":true}`: the app's source replaced"),
        (status = 403, description = "policy_denied: the file is not one of the `--app` file's folder"),
        (status = 422, description = "guest_syntax (with `location`), not_compilable, guest_exception")))]
pub async fn load_file(State(apps): St, Authed(tenant): Authed, body: Bytes) -> AppResult {
    let request: LoadFileBody = parse(&body)?;
    let app = apps.seed_file()?;
    let folder = std::fs::canonicalize(
        app.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new(".")),
    )
    .map_err(|e| ApiError::invalid(format!("cannot resolve the app's folder: {e}")))?;
    let asked = if request.path.is_absolute() {
        request.path.clone()
    } else {
        folder.join(&request.path)
    };
    let refused = || {
        ApiError::from(Error::PolicyDenied {
            capability: "fs".into(),
            rule: "fs.confine".into(),
            reason: "/load-file reads only existing files in the --app file's folder".into(),
            fix: None,
        })
    };
    let real = std::fs::canonicalize(&asked).map_err(|_| refused())?;
    if !real.starts_with(&folder) || !real.is_file() {
        return Err(refused());
    }
    replace(&apps, &tenant, read(&real)?).await
}

/// The body of `POST /init`.
#[derive(Deserialize, Default, ToSchema)]
pub struct EnvBody {
    /// `init`'s `env`; its `session_id` picks the session when the body has none.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub env: Option<Map<String, Value>>,
    /// The session; `default` when absent.
    #[serde(default)]
    pub session_id: Option<String>,
}

/// `POST /init {env?}`: the session starts again from `init(env)`; `{state}`.
#[utoipa::path(post, path = "/init", operation_id = "seed_init", tag = "seed", request_body = EnvBody, params(SessionParam),
    responses((status = 200, description = "`{state}`: the session's state, made again by `init(env)`"),
        (status = 400, description = "invalid_input")))]
pub async fn init(
    State(apps): St,
    Authed(tenant): Authed,
    Query(query): Query<SessionParam>,
    body: Bytes,
) -> AppResult {
    let request: EnvBody = parse(&body)?;
    let name = apps.ensure(&tenant).await?;
    let session = session_of(
        request.session_id.as_deref(),
        request.env.as_ref(),
        query.session_id.as_deref(),
    )?;
    let env = request.env.unwrap_or_default();
    let fresh = apps.init(&tenant, &name, &session, env).await?;
    Ok((StatusCode::OK, axum::Json(json!({"state": fresh}))).into_response())
}

/// The body of `POST /view`.
#[derive(Deserialize, ToSchema)]
pub struct ViewBody {
    /// A state to view instead of the session's, any JSON value.
    #[serde(default)]
    #[schema(value_type = Option<Value>)]
    pub state: Option<Value>,
    /// `agent` or `human`.
    #[serde(default)]
    pub audience: Option<String>,
    /// The session; `default` when absent.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Taken as the seed sends it; its `session_id` picks the session.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub env: Option<Map<String, Value>>,
}

/// `POST /view {state?, audience?}`: HTML for `Accept: text/html`, else `{jace}`.
#[utoipa::path(post, path = "/view", operation_id = "seed_view", tag = "seed", request_body = ViewBody, params(SessionParam),
    responses((status = 200, description = "`{jace}`, or escaped HTML for `Accept: text/html`"),
        (status = 400, description = "invalid_input")))]
pub async fn view(
    State(apps): St,
    Authed(tenant): Authed,
    Query(query): Query<SessionParam>,
    headers: HeaderMap,
    body: Bytes,
) -> AppResult {
    let request: ViewBody = parse(&body)?;
    let name = apps.ensure(&tenant).await?;
    let session = session_of(
        request.session_id.as_deref(),
        request.env.as_ref(),
        query.session_id.as_deref(),
    )?;
    let value = apps.view(&tenant, &name, &session, request.state).await?;
    let wants_html = request.audience.is_none()
        && headers
            .get(axum::http::header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("text/html"));
    if wants_html {
        return super::routes::view_response(&value, None, &headers);
    }
    let shown = match request.audience.as_deref() {
        None => value,
        Some(a) => match super::view::Audience::parse(a) {
            Some(audience) => super::view::filter(&value, audience),
            None => return Err(ApiError::invalid("audience is `agent` or `human`")),
        },
    };
    Ok((StatusCode::OK, axum::Json(json!({"jace": shown}))).into_response())
}

/// The body of `POST /press`.
#[derive(Deserialize, ToSchema)]
pub struct PressBody {
    /// The action's name.
    pub action: String,
    /// Its parameters, any JSON value; `{}` when absent.
    #[serde(default)]
    #[schema(value_type = Option<Value>)]
    pub params: Option<Value>,
    /// The action's `env`; its `session_id` picks the session.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub env: Option<Map<String, Value>>,
}

/// Run an action through [`Apps::act`] for the seed's routes: the reply's status, whether it
/// was replayed, and its body.
async fn run_action(
    apps: &Apps,
    tenant: &Tenant,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<(StatusCode, bool, Value), ApiError> {
    let name = apps.ensure(tenant).await?;
    let key = Ledger::key(headers)?;
    let reply = apps.act(tenant, &name, body, key).await?;
    let status = StatusCode::from_u16(reply.stored.status).unwrap_or(StatusCode::OK);
    let value = serde_json::from_str(&reply.stored.body).unwrap_or(Value::Null);
    Ok((status, reply.replayed, value))
}

fn replied(status: StatusCode, replayed: bool, value: Value) -> Response {
    let mut response = (status, axum::Json(value)).into_response();
    if replayed {
        response.headers_mut().insert(
            "idempotent-replayed",
            axum::http::HeaderValue::from_static("true"),
        );
    }
    response
}

/// `POST /press {action, params?, env?}`: `{state, jace, result, audit_preview, events, error}`.
#[utoipa::path(post, path = "/press", operation_id = "seed_press", tag = "seed", request_body = PressBody, params(SessionParam,
        ("Idempotency-Key" = Option<String>, Header, description = "de-duplicate commits per (tenant, app, session)")),
    responses((status = 200, description = "`{state, jace, result, audit_preview, events, session_id, seq, dry_run}`"),
        (status = 400, description = "invalid_input, or an action the app does not have"),
        (status = 408, description = "timeout: \"Action timed out\""),
        (status = 422, description = "the action's own `error`, an exception, or idempotency_conflict"),
        (status = 429, description = "fuel_exhausted: \"Fuel exhausted\", or memory_limit")))]
pub async fn press(
    State(apps): St,
    Authed(tenant): Authed,
    Query(query): Query<SessionParam>,
    headers: HeaderMap,
    body: Bytes,
) -> AppResult {
    let request: PressBody = parse(&body)?;
    let session = session_of(None, request.env.as_ref(), query.session_id.as_deref())?;
    let envelope = json!({
        "action": request.action,
        "params": request.params,
        "session_id": session,
        "env": request.env,
    });
    let (status, replayed, mut value) =
        run_action(&apps, &tenant, &headers, envelope.to_string().as_bytes()).await?;
    if let Some(view) = value.as_object_mut().and_then(|m| m.remove("view")) {
        value["jace"] = view;
    }
    Ok(replied(status, replayed, value))
}

/// `POST /actions`: the JACE envelope, as `POST /v1/apps/{app}/actions`.
#[utoipa::path(post, path = "/actions", operation_id = "seed_actions", tag = "seed", request_body = actions::ActionRequest,
    params(("Idempotency-Key" = Option<String>, Header, description = "de-duplicate commits per (tenant, app, session)")),
    responses((status = 200, description = "`{state, result, audit_preview, events, view, session_id, seq, dry_run}`"),
        (status = 400, description = "invalid_input, or an action the app does not have"),
        (status = 408, description = "timeout: \"Action timed out\""),
        (status = 422, description = "the action's own `error`, an exception, or idempotency_conflict"),
        (status = 429, description = "fuel_exhausted: \"Fuel exhausted\", or memory_limit")))]
pub async fn actions_route(
    State(apps): St,
    Authed(tenant): Authed,
    headers: HeaderMap,
    body: Bytes,
) -> AppResult {
    let (status, replayed, value) = run_action(&apps, &tenant, &headers, &body).await?;
    Ok(replied(status, replayed, value))
}

/// `?session_id=&last_event_id=` of `GET /agent/events`.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SessionQuery {
    /// The session; `default` when absent.
    pub session_id: Option<String>,
    /// Resume after this id (as the `Last-Event-ID` header does).
    pub last_event_id: Option<u64>,
}

/// `GET /agent/events?session_id=`: server-sent events, as `/v1/apps/{app}/events`.
#[utoipa::path(get, path = "/agent/events", operation_id = "seed_events", tag = "seed",
    params(SessionQuery,
        ("Last-Event-ID" = Option<String>, Header, description = "resume after this event id")),
    responses((status = 200, description = "`text/event-stream`: one event per committed event, with its id"),
        (status = 429, description = "capacity_exhausted: the session, the key or the server has its maximum of open streams, with Retry-After")))]
pub async fn events(
    State(apps): St,
    Authed(tenant): Authed,
    headers: HeaderMap,
    Query(query): Query<SessionQuery>,
) -> AppResult {
    let name = apps.ensure(&tenant).await?;
    let session = query.session_id.as_deref().unwrap_or(DEFAULT_SESSION);
    super::check_session(session)?;
    let after = super::routes::resume_after(&headers, query.last_event_id)?;
    let skey = actions::session_key(&tenant.name, &name, session);
    Ok(super::events::stream(&apps, &tenant.name, skey, after)?.into_response())
}
