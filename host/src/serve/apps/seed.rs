//! `palisade serve --app FILE.js`: the app's own routes at the root, as the seed runtime
//! served them (`/load`, `/load-file`, `/init`, `/view`, `/press`, `/actions`,
//! `/agent/events`; `/healthz` is the server's), for that one app. The app is loaded for each
//! tenant on its first request under the file's stem as its name and the `default` policy, and
//! is then an ordinary app (`/v1/apps/NAME`). `session_id` (in the body, in `env` or in the
//! query) picks the session; `default` when absent.

use super::super::errors::ApiError;
use super::super::state::AppState;
use super::actions::{self, DEFAULT_SESSION};
use super::records::{self, SessionState};
use super::routes::{self, LoadApp, Refusal, refuse};
use crate::Error;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use utoipa::{IntoParams, ToSchema};

type St = State<Arc<AppState>>;

/// The seed's routes.
pub fn router() -> Router<Arc<AppState>> {
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

fn file(state: &AppState) -> Result<&PathBuf, ApiError> {
    state.config.app.as_ref().ok_or_else(|| {
        ApiError::invalid("this server has no --app").with_status(StatusCode::NOT_FOUND)
    })
}

fn read(path: &Path) -> Result<String, ApiError> {
    crate::hostfile::read_text(path, crate::MAX_SCRIPT_BYTES)
        .map_err(|e| ApiError::invalid(format!("cannot read {}: {e}", path.display())))
}

/// The caller's tenant and the app's name, loading the app from the file on the tenant's
/// first request.
async fn ensure(
    state: &Arc<AppState>,
    headers: &HeaderMap,
) -> Result<(Arc<super::super::auth::Tenant>, String), Refusal> {
    let tenant = state.tenant(headers).map_err(refuse)?;
    let path = file(state).map_err(refuse)?;
    let name = app_name(path);
    let mut loaded = state.apps.seed.lock().await;
    if !loaded.contains(&tenant.name) {
        let source = read(path).map_err(refuse)?;
        let request = LoadApp {
            name: name.clone(),
            source,
            policy: None,
        };
        routes::load_app(state, &tenant, request).await?;
        loaded.insert(tenant.name.clone());
    }
    Ok((tenant, name))
}

fn ok() -> Response {
    (StatusCode::OK, axum::Json(json!({"ok": true}))).into_response()
}

fn parse<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, Refusal> {
    let body = if body.is_empty() {
        b"{}".as_slice()
    } else {
        body
    };
    serde_json::from_slice(body).map_err(|e| {
        refuse(ApiError::invalid(format!(
            "the request body does not fit this route: {e}"
        )))
    })
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

async fn replace(state: &Arc<AppState>, headers: &HeaderMap, source: String) -> Response {
    let (tenant, name) = match ensure(state, headers).await {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let request = LoadApp {
        name,
        source,
        policy: None,
    };
    match routes::load_app(state, &tenant, request).await {
        Ok(_) => ok(),
        Err(r) => *r,
    }
}

/// `POST /load {source}`: replace the app's source.
#[utoipa::path(post, path = "/load", tag = "seed", request_body = LoadBody,
    responses((status = 200, description = "`{\"ok\":true}`: the app's source replaced"),
        (status = 400, description = "invalid_input: not an app"),
        (status = 422, description = "guest_syntax (with `location`), not_compilable, guest_exception")))]
pub async fn load(State(state): St, headers: HeaderMap, body: Bytes) -> Response {
    match parse::<LoadBody>(&body) {
        Ok(b) => replace(&state, &headers, b.source).await,
        Err(r) => *r,
    }
}

/// `POST /load-file {path}`: replace the app's source with a file from the folder of the
/// `--app` file (a path elsewhere is refused: callers never name the server's files).
#[utoipa::path(post, path = "/load-file", tag = "seed", request_body = LoadFileBody,
    responses((status = 200, description = "`{\"ok\":true}`: the app's source replaced"),
        (status = 403, description = "policy_denied: the file is outside the `--app` file's folder"),
        (status = 404, description = "file_not_found"),
        (status = 422, description = "guest_syntax (with `location`), not_compilable, guest_exception")))]
pub async fn load_file(State(state): St, headers: HeaderMap, body: Bytes) -> Response {
    let request = match parse::<LoadFileBody>(&body) {
        Ok(b) => b,
        Err(r) => return *r,
    };
    let confined = (|| {
        let app = file(&state)?;
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
        let real = std::fs::canonicalize(&asked).map_err(|_| {
            ApiError::from(Error::FileNotFound {
                path: request.path.display().to_string(),
            })
        })?;
        if !real.starts_with(&folder) {
            return Err(ApiError::from(Error::PolicyDenied {
                capability: "fs".into(),
                rule: "fs.confine".into(),
                reason: "/load-file reads only files in the --app file's folder".into(),
                fix: None,
            }));
        }
        read(&real)
    })();
    match confined {
        Ok(source) => replace(&state, &headers, source).await,
        Err(e) => e.into_response(),
    }
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

fn session_of(env: Option<&Map<String, Value>>, given: Option<&str>) -> String {
    given
        .or_else(|| {
            env.and_then(|e| e.get("session_id"))
                .and_then(Value::as_str)
        })
        .unwrap_or(DEFAULT_SESSION)
        .to_owned()
}

/// `POST /init {env?}`: the session starts again from `init(env)`; `{state}`.
#[utoipa::path(post, path = "/init", tag = "seed", request_body = EnvBody,
    responses((status = 200, description = "`{state}`: the session's state, made again by `init(env)`"),
        (status = 400, description = "invalid_input")))]
pub async fn init(State(state): St, headers: HeaderMap, body: Bytes) -> Response {
    let request: EnvBody = match parse(&body) {
        Ok(b) => b,
        Err(r) => return *r,
    };
    let (tenant, name) = match ensure(&state, &headers).await {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let session = session_of(request.env.as_ref(), request.session_id.as_deref());
    let result = async {
        super::check_session(&session)?;
        let loaded = state.apps.get(&state, &tenant, &name).await?;
        let policy = state.policy(&tenant, &loaded.record.policy)?;
        let skey = actions::session_key(&tenant.name, &name, &session);
        let turn = state.apps.turn(&skey);
        let result = async {
            let _turn = turn.lock().await;
            let store = state.store.clone();
            let lookup = skey.clone();
            let current = records::blocking(move || records::session(&store, &lookup)).await?;
            let clock = current
                .as_ref()
                .map_or(loaded.record.created_unix_ms, |s| s.clock_unix_ms);
            let seq = current.as_ref().map_or(0, |s| s.seq);
            let policy =
                actions::call_policy(&policy, &tenant.name, clock, actions::seed(&skey, seq));
            let mut env = request.env.clone().unwrap_or_default();
            env.insert("session_id".into(), session.as_str().into());
            let input = json!({"state": null, "env": env});
            let fresh = match actions::call(
                &state,
                &loaded,
                &policy,
                "view",
                &input,
                (&tenant.name, &session),
            )
            .await?
            {
                actions::Ran::Value(v) => v["state"].clone(),
                actions::Ran::Failed(error) => return Err(ApiError::from(error)),
            };
            let next = SessionState {
                state: fresh.clone(),
                seq,
                clock_unix_ms: current.as_ref().map_or(clock, |s| s.clock_unix_ms),
                events: current.as_ref().map_or(0, |s| s.events),
            };
            let store = state.store.clone();
            records::blocking(move || records::put_session(&store, &skey, &next)).await?;
            Ok(fresh)
        }
        .await;
        state
            .apps
            .release(&actions::session_key(&tenant.name, &name, &session), turn);
        result
    }
    .await;
    match result {
        Ok(fresh) => (StatusCode::OK, axum::Json(json!({"state": fresh}))).into_response(),
        Err(e) => e.into_response(),
    }
}

/// The body of `POST /view`.
#[derive(Deserialize, ToSchema)]
pub struct ViewBody {
    /// A state to view instead of the session's.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub state: Option<Value>,
    /// `agent` or `human`.
    #[serde(default)]
    pub audience: Option<String>,
    /// The session; `default` when absent.
    #[serde(default)]
    pub session_id: Option<String>,
}

/// `POST /view {state?, audience?}`: HTML for `Accept: text/html`, else `{jace}`.
#[utoipa::path(post, path = "/view", tag = "seed", request_body = ViewBody,
    responses((status = 200, description = "`{jace}`, or escaped HTML for `Accept: text/html`"),
        (status = 400, description = "invalid_input")))]
pub async fn view(State(state): St, headers: HeaderMap, body: Bytes) -> Response {
    let request: ViewBody = match parse(&body) {
        Ok(b) => b,
        Err(r) => return *r,
    };
    let (tenant, name) = match ensure(&state, &headers).await {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let session = request.session_id.as_deref().unwrap_or(DEFAULT_SESSION);
    let value = match routes::render_view(&state, &tenant, &name, session, request.state).await {
        Ok(v) => v,
        Err(e) => return e.into_response(),
    };
    let wants_html = request.audience.is_none()
        && headers
            .get(axum::http::header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("text/html"));
    if wants_html {
        return routes::view_response(&value, None, &headers).unwrap_or_else(|e| e.into_response());
    }
    let shown = match request.audience.as_deref() {
        None => value,
        Some(a) => match super::view::Audience::parse(a) {
            Some(audience) => super::view::filter(&value, audience),
            None => return ApiError::invalid("audience is `agent` or `human`").into_response(),
        },
    };
    (StatusCode::OK, axum::Json(json!({"jace": shown}))).into_response()
}

/// The body of `POST /press`.
#[derive(Deserialize, ToSchema)]
pub struct PressBody {
    /// The action's name.
    pub action: String,
    /// Its parameters; `{}` when absent.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub params: Option<Value>,
    /// The action's `env`; its `session_id` picks the session.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub env: Option<Map<String, Value>>,
}

async fn run_action(
    state: &Arc<AppState>,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<(StatusCode, bool, Value), Refusal> {
    let (tenant, name) = ensure(state, headers).await?;
    let key = match headers.get("idempotency-key").map(|v| v.to_str()) {
        None => None,
        Some(Ok(k)) => Some(k),
        Some(Err(_)) => {
            return Err(refuse(ApiError::invalid(
                "the Idempotency-Key is not visible ASCII",
            )));
        }
    };
    let reply = actions::act(state, &tenant, &name, body, key)
        .await
        .map_err(refuse)?;
    let status = StatusCode::from_u16(reply.stored.status).unwrap_or(StatusCode::OK);
    let value = serde_json::from_str(&reply.stored.body).unwrap_or(Value::Null);
    Ok((status, reply.replayed, value))
}

/// `POST /press {action, params?, env?}`: `{state, jace, result, audit_preview, events, error}`.
#[utoipa::path(post, path = "/press", tag = "seed", request_body = PressBody,
    params(("Idempotency-Key" = Option<String>, Header, description = "de-duplicate commits per (tenant, app, session)")),
    responses((status = 200, description = "`{state, jace, result, audit_preview, events, session_id, seq, dry_run}`"),
        (status = 400, description = "invalid_input, or an action the app does not have"),
        (status = 408, description = "timeout: \"Action timed out\""),
        (status = 422, description = "the action's own `error`, an exception, or idempotency_conflict"),
        (status = 429, description = "fuel_exhausted: \"Fuel exhausted\", or memory_limit")))]
pub async fn press(State(state): St, headers: HeaderMap, body: Bytes) -> Response {
    let request: PressBody = match parse(&body) {
        Ok(b) => b,
        Err(r) => return *r,
    };
    let session = session_of(request.env.as_ref(), None);
    let envelope = json!({
        "action": request.action,
        "params": request.params,
        "session_id": session,
        "env": request.env,
    });
    match run_action(&state, &headers, envelope.to_string().as_bytes()).await {
        Ok((status, replayed, mut value)) => {
            if let Some(view) = value.as_object_mut().and_then(|m| m.remove("view")) {
                value["jace"] = view;
            }
            let mut response = (status, axum::Json(value)).into_response();
            if replayed {
                response.headers_mut().insert(
                    "idempotent-replayed",
                    axum::http::HeaderValue::from_static("true"),
                );
            }
            response
        }
        Err(r) => *r,
    }
}

/// `POST /actions`: the JACE envelope, as `POST /v1/apps/{app}/actions`.
#[utoipa::path(post, path = "/actions", tag = "seed", request_body = actions::ActionRequest,
    params(("Idempotency-Key" = Option<String>, Header, description = "de-duplicate commits per (tenant, app, session)")),
    responses((status = 200, description = "`{state, result, audit_preview, events, view, session_id, seq, dry_run}`"),
        (status = 400, description = "invalid_input, or an action the app does not have"),
        (status = 408, description = "timeout: \"Action timed out\""),
        (status = 422, description = "the action's own `error`, an exception, or idempotency_conflict"),
        (status = 429, description = "fuel_exhausted: \"Fuel exhausted\", or memory_limit")))]
pub async fn actions_route(State(state): St, headers: HeaderMap, body: Bytes) -> Response {
    match run_action(&state, &headers, &body).await {
        Ok((status, replayed, value)) => {
            let mut response = (status, axum::Json(value)).into_response();
            if replayed {
                response.headers_mut().insert(
                    "idempotent-replayed",
                    axum::http::HeaderValue::from_static("true"),
                );
            }
            response
        }
        Err(r) => *r,
    }
}

/// `?session_id=&last_event_id=` of `GET /agent/events`.
#[derive(Deserialize, IntoParams)]
pub struct SessionQuery {
    /// The session; `default` when absent.
    pub session_id: Option<String>,
    /// Resume after this id (as the `Last-Event-ID` header does).
    pub last_event_id: Option<u64>,
}

/// `GET /agent/events?session_id=`: server-sent events, as `/v1/apps/{app}/events`.
#[utoipa::path(get, path = "/agent/events", tag = "seed",
    params(SessionQuery,
        ("Last-Event-ID" = Option<String>, Header, description = "resume after this event id")),
    responses((status = 200, description = "`text/event-stream`: one event per committed event, with its id"),
        (status = 429, description = "capacity_exhausted: the session, the key or the server has its maximum of open streams, with Retry-After")))]
pub async fn events(
    State(state): St,
    headers: HeaderMap,
    Query(query): Query<SessionQuery>,
) -> Response {
    let (tenant, name) = match ensure(&state, &headers).await {
        Ok(v) => v,
        Err(r) => return *r,
    };
    let session = query.session_id.as_deref().unwrap_or(DEFAULT_SESSION);
    if let Err(e) = super::check_session(session) {
        return e.into_response();
    }
    let after = match routes::resume_after(&headers, query.last_event_id) {
        Ok(a) => a,
        Err(e) => return e.into_response(),
    };
    let skey = actions::session_key(&tenant.name, &name, session);
    match super::events::stream(&state, &tenant.name, skey, after) {
        Ok(stream) => stream.into_response(),
        Err(e) => e.into_response(),
    }
}
