//! The routes, and handlers that only parse, call the library or a session operation, and
//! answer. Every error goes through [`ApiError`].

use super::auth::{Authed, Tenants};
use super::catalog::Policies;
use super::errors::ApiError;
use super::fs::FsRequest;
use super::idempotency::Ledger;
use super::metrics::Metrics;
use super::runner::Runner;
use super::runs::RunRequest;
use super::sessions::{CreateSession, Sessions};
use super::state::AppState;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::sync::Arc;

type AppResult = Result<Response, ApiError>;
type St = State<AppState>;

/// Largest request body: a file written in one request, or a script with its input.
pub const MAX_BODY_BYTES: usize = 32 << 20;

/// Every route of the API but `/openapi.json` (which `openapi.rs` mounts: it lists these).
pub fn routes(state: &Arc<AppState>) -> Router<AppState> {
    let routes = Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .route("/v1/policies", get(policies))
        .route("/v1/policies/{name}", get(policy_text))
        .route("/v1/policies/{name}/types", get(policy_types))
        .route("/v1/run", post(run))
        .route("/v1/sessions", post(create_session).get(list_sessions))
        .route("/v1/sessions/{id}", get(get_session).delete(stop_session))
        .route("/v1/sessions/{id}/run", post(run_in_session))
        .route("/v1/sessions/{id}/fs/{op}", post(fs_op))
        .route("/v1/sessions/{id}/heap", get(super::live::session_heap))
        .route("/v1/sessions/{id}/reset", post(super::live::reset_session))
        .route("/v1/sessions/{id}/fork", post(super::live::fork_session))
        .merge(super::apps::routes::router())
        .merge(mcp(state))
        .merge(super::page::router(state));
    if state.config.app.is_some() {
        routes.merge(super::apps::seed::router())
    } else {
        routes
    }
}

/// `/mcp`: the MCP server over streamable HTTP (docs/agents.md), each request's key checked
/// and its tenant's rate taken as for every route; the tenant, and an inline policy's bytes as
/// sent ([`super::mcp::SentPolicy`]), ride in the request's extensions to the tools.
fn mcp(state: &Arc<AppState>) -> Router<AppState> {
    async fn authed(
        State(tenants): State<Arc<Tenants>>,
        mut request: axum::extract::Request,
        next: axum::middleware::Next,
    ) -> Response {
        match tenants.admit(request.headers()).await {
            Ok(tenant) => {
                request.extensions_mut().insert(tenant);
                let (mut parts, body) = request.into_parts();
                // The body is read here to keep an inline policy's bytes as sent; the
                // transport then reads it from memory.
                let bytes = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
                    Ok(bytes) => bytes,
                    Err(error) => return unread(error).await,
                };
                if let Some(sent) = super::mcp::SentPolicy::read(&bytes) {
                    parts.extensions.insert(sent);
                }
                next.run(axum::extract::Request::from_parts(parts, bytes.into()))
                    .await
            }
            Err(error) => error.into_response(),
        }
    }
    Router::new()
        .route_service("/mcp", super::mcp::http_service(state.clone()))
        .route_layer(axum::middleware::map_response(transport_refusals))
        .route_layer(axum::middleware::from_fn_with_state(
            state.tenants.clone(),
            authed,
        ))
}

/// A body the `/mcp` route could not read, refused as axum refuses one it could not read for
/// another route: over the size limit, past the body timeout, or cut off.
async fn unread(error: axum::Error) -> Response {
    let inner = error.into_inner();
    if inner.is::<http_body_util::LengthLimitError>() {
        return plain_refusals(StatusCode::PAYLOAD_TOO_LARGE.into_response()).await;
    }
    plain_refusals((StatusCode::BAD_REQUEST, inner.to_string()).into_response()).await
}

/// The MCP transport's own refusals (a missing `Accept`, an unknown session, a protocol
/// version it does not speak) are plain text: give them the error shape, keeping their words.
async fn transport_refusals(response: Response) -> Response {
    let status = response.status();
    if is_json(&response) || !status.is_client_error() {
        return response;
    }
    let text = axum::body::to_bytes(response.into_body(), 4096)
        .await
        .unwrap_or_default();
    ApiError::invalid(format!("MCP: {}", String::from_utf8_lossy(&text).trim()))
        .with_status(status)
        .note("see docs/agents.md")
        .into_response()
}

/// `routes` as the server answers them: unknown routes, axum's own refusals and body limits in
/// the error shape.
pub fn finish(routes: Router<AppState>, state: Arc<AppState>) -> Router {
    routes
        .fallback(not_found)
        .layer(axum::middleware::map_response(plain_refusals))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(tower_http::timeout::RequestBodyTimeoutLayer::new(
            state.config.body_timeout,
        ))
        .with_state(AppState::clone(&state))
}

fn is_json(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"))
}

fn json_response(status: StatusCode, body: Value) -> Response {
    (status, axum::Json(body)).into_response()
}

fn parse<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body)
        .map_err(|e| ApiError::invalid(format!("the request body does not fit this route: {e}")))
}

/// The refusals axum makes itself (a body over the limit, a method the route does not take)
/// get the error shape too.
async fn plain_refusals(response: Response) -> Response {
    let status = response.status();
    if is_json(&response) || !status.is_client_error() {
        return response;
    }
    let (status, detail) = match status {
        StatusCode::PAYLOAD_TOO_LARGE => (
            status,
            format!("the request body is over the server's {MAX_BODY_BYTES} bytes"),
        ),
        StatusCode::METHOD_NOT_ALLOWED => {
            (status, "this route does not take that method".to_owned())
        }
        // axum's own refusals of a body it could not read: say which.
        StatusCode::BAD_REQUEST => {
            let text = axum::body::to_bytes(response.into_body(), 4096)
                .await
                .unwrap_or_default();
            if String::from_utf8_lossy(&text).contains("designated timeout") {
                (
                    StatusCode::REQUEST_TIMEOUT,
                    "the request body did not arrive within the server's body timeout".to_owned(),
                )
            } else {
                (status, "the request body could not be read".to_owned())
            }
        }
        _ => return response,
    };
    ApiError::invalid(detail)
        .with_status(status)
        .note("see GET /openapi.json")
        .into_response()
}

async fn not_found() -> ApiError {
    ApiError::invalid("no such route; GET /openapi.json lists them")
        .with_status(StatusCode::NOT_FOUND)
}

/// Liveness.
#[utoipa::path(get, path = "/healthz", tag = "operations",
    responses((status = 200, description = "`{\"ok\":true}`")))]
pub async fn healthz() -> Response {
    json_response(StatusCode::OK, json!({"ok": true}))
}

/// Readiness: 200 while policies are loaded and the store writes, 503 with the reason otherwise
/// (none loaded, the store cannot write, or draining). Policy files that failed to load are listed either way.
#[utoipa::path(get, path = "/readyz", tag = "operations",
    responses((status = 200, description = "ready"), (status = 503, description = "not ready, with the reason")))]
pub async fn readyz(State(state): St) -> Response {
    let catalog = state.policies.current();
    let store = state.store.clone();
    let writable = tokio::task::spawn_blocking(move || store.writable())
        .await
        .unwrap_or(false);
    let reason = if state.is_draining() {
        Some("draining: the server is shutting down")
    } else if catalog.policies.is_empty() {
        Some("no policy is loaded")
    } else if !writable {
        Some("the store cannot write (is the data folder's disk full?)")
    } else {
        None
    };
    let body = json!({
        "ready": reason.is_none(),
        "reason": reason,
        "policies": catalog.policies.len(),
        "problems": catalog.problems,
    });
    let status = if reason.is_some() {
        StatusCode::SERVICE_UNAVAILABLE
    } else {
        StatusCode::OK
    };
    json_response(status, body)
}

/// Prometheus metrics: with a keys file, for the operator's key only.
#[utoipa::path(get, path = "/metrics", tag = "operations",
    responses((status = 200, description = "Prometheus text format"),
        (status = 401, description = "unauthorized: a keys file is in use and this is not the `[operator]` key")))]
pub async fn metrics(
    State(metrics): State<Arc<Metrics>>,
    State(tenants): State<Arc<Tenants>>,
    headers: HeaderMap,
) -> AppResult {
    tenants.operator(&headers)?;
    let mut response = metrics.render().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    Ok(response)
}

/// The policies the caller may use.
#[utoipa::path(get, path = "/v1/policies", tag = "policies",
    responses((status = 200, description = "`[{name, sha256, description, grants, limits}]`"),
        (status = 401, description = "unauthorized")))]
pub async fn policies(State(policies): State<Arc<Policies>>, Authed(tenant): Authed) -> AppResult {
    let catalog = policies.current();
    let list: Vec<Value> = catalog
        .policies
        .values()
        .filter(|p| tenant.may_use(p.name()))
        .map(|p| {
            let mut grants = Vec::new();
            if p.http().is_some() {
                grants.push("http");
            }
            if p.kv().is_some() {
                grants.push("kv");
            }
            if p.capabilities().is_some() {
                grants.push("capabilities");
            }
            if p.fs().is_some() {
                grants.push("fs");
            }
            if p.config().is_some() {
                grants.push("config");
            }
            json!({
                "name": p.name(),
                "sha256": p.sha256(),
                "description": p.description(),
                "grants": grants,
                "limits": p.limits(),
            })
        })
        .collect();
    Ok(json_response(StatusCode::OK, Value::Array(list)))
}

/// A policy resolved, every default filled in, as TOML (`palisade policy check` prints it):
/// itself a valid policy, a starting point for one sent with a call.
#[utoipa::path(get, path = "/v1/policies/{name}", tag = "policies",
    params(("name" = String, Path, description = "the policy's name")),
    responses((status = 200, description = "the policy resolved, `application/toml`"),
        (status = 401, description = "unauthorized"),
        (status = 404, description = "policy_not_found")))]
pub async fn policy_text(
    State(policies): State<Arc<Policies>>,
    Authed(tenant): Authed,
    Path(name): Path<String>,
) -> AppResult {
    let policy = policies.policy_for(&tenant, &name)?;
    Ok(text_as(
        policy.to_string(),
        "application/toml; charset=utf-8",
    ))
}

/// `text` answered as `content_type`.
fn text_as(text: String, content_type: &'static str) -> Response {
    let mut response = text.into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// The TypeScript declarations of what a script may use under a policy (`Policy::typescript`,
/// as `palisade types` prints them): a `.d.ts` to type-check scripts against.
#[utoipa::path(get, path = "/v1/policies/{name}/types", tag = "policies",
    params(("name" = String, Path, description = "the policy's name")),
    responses((status = 200, description = "the declarations, `application/typescript`"),
        (status = 401, description = "unauthorized"),
        (status = 404, description = "policy_not_found")))]
pub async fn policy_types(
    State(policies): State<Arc<Policies>>,
    Authed(tenant): Authed,
    Path(name): Path<String>,
) -> AppResult {
    let policy = policies.policy_for(&tenant, &name)?;
    Ok(text_as(
        policy.typescript(),
        "application/typescript; charset=utf-8",
    ))
}

/// Run a script once, in a fresh sandbox.
#[utoipa::path(post, path = "/v1/run", tag = "runs", request_body = RunRequest,
    params(("Idempotency-Key" = Option<String>, Header, description = "replay the stored response of an earlier request with this key and body")),
    responses((status = 200, description = "the Outcome, as `palisade run --json` prints it"),
        (status = 404, description = "policy_not_found"),
        (status = 422, description = "the call failed (the Outcome, its error with docs_url), or idempotency_conflict"),
        (status = 503, description = "capacity_exhausted, with Retry-After")))]
pub async fn run(
    State(ledger): State<Arc<Ledger>>,
    State(policies): State<Arc<Policies>>,
    State(runner): State<Arc<Runner>>,
    Authed(tenant): Authed,
    headers: HeaderMap,
    body: Bytes,
) -> AppResult {
    let key = Ledger::key(&headers)?;
    let answer = ledger
        .answer(&tenant.name, key, &body, || async {
            let request = RunRequest::parse(&body)?;
            super::runs::run_named(&runner, &policies, &tenant, &request).await
        })
        .await?;
    Ok(answer.stored.respond(answer.replayed))
}

/// Create a session.
#[utoipa::path(post, path = "/v1/sessions", tag = "sessions", request_body = CreateSession,
    responses((status = 201, description = "`{session_id, policy, created_at}`"),
        (status = 404, description = "policy_not_found"),
        (status = 429, description = "capacity_exhausted: too many sessions, with Retry-After")))]
pub async fn create_session(
    State(sessions): State<Arc<Sessions>>,
    Authed(tenant): Authed,
    body: Bytes,
) -> AppResult {
    let request: CreateSession = parse(&body)?;
    let created = sessions.create_detached(&tenant, request).await?;
    Ok(json_response(StatusCode::CREATED, created))
}

/// The caller's sessions.
#[utoipa::path(get, path = "/v1/sessions", tag = "sessions",
    responses((status = 200, description = "`[{session_id, policy, name, status, created_at, last_used_at}]`; on replicas sharing a store, also the sessions other replicas hold (`status: \"elsewhere\"`), each with its `replica`")))]
pub async fn list_sessions(
    State(sessions): State<Arc<Sessions>>,
    Authed(tenant): Authed,
) -> AppResult {
    let list = sessions.listing(&tenant.name).await?;
    Ok(json_response(StatusCode::OK, Value::Array(list)))
}

/// One session.
#[utoipa::path(get, path = "/v1/sessions/{id}", tag = "sessions",
    params(("id" = String, Path, description = "the session's id")),
    responses((status = 200, description = "the session"), (status = 404, description = "session_not_found")))]
pub async fn get_session(
    State(sessions): State<Arc<Sessions>>,
    Authed(tenant): Authed,
    Path(id): Path<String>,
) -> AppResult {
    let session = sessions.get(&tenant.name, &id).await?;
    Ok(json_response(StatusCode::OK, session.view()))
}

/// Stop a session: its files and keys are removed.
#[utoipa::path(delete, path = "/v1/sessions/{id}", tag = "sessions",
    params(("id" = String, Path, description = "the session's id")),
    responses((status = 200, description = "`{session_id, stopped: true}`"), (status = 404, description = "session_not_found")))]
pub async fn stop_session(
    State(sessions): State<Arc<Sessions>>,
    Authed(tenant): Authed,
    Path(id): Path<String>,
) -> AppResult {
    let session = sessions.get(&tenant.name, &id).await?;
    sessions.stop(session).await?;
    Ok(json_response(
        StatusCode::OK,
        json!({"session_id": id, "stopped": true}),
    ))
}

/// Run a script in a session: its files and key-value namespace persist across runs.
#[utoipa::path(post, path = "/v1/sessions/{id}/run", tag = "sessions", request_body = RunRequest,
    params(("id" = String, Path, description = "the session's id")),
    responses((status = 200, description = "the Outcome"), (status = 404, description = "session_not_found"),
        (status = 409, description = "session_busy")))]
pub async fn run_in_session(
    State(sessions): State<Arc<Sessions>>,
    Authed(tenant): Authed,
    Path(id): Path<String>,
    body: Bytes,
) -> AppResult {
    let request = RunRequest::parse(&body)?;
    let answer = sessions.run(&tenant, &id, request).await?;
    Ok(answer.respond(false))
}

/// A file operation in a session's directory: ls, stat, mkdir, write, read, rm, mv, grep, sed.
#[utoipa::path(post, path = "/v1/sessions/{id}/fs/{op}", tag = "sessions", request_body = FsRequest,
    params(("id" = String, Path, description = "the session's id"),
        ("op" = String, Path, description = "ls, stat, mkdir, write, read, rm, mv, grep or sed")),
    responses((status = 200, description = "the operation's result"),
        (status = 403, description = "policy_denied: the path leads outside, or a quota"),
        (status = 404, description = "session_not_found or file_not_found"),
        (status = 409, description = "file_conflict")))]
pub async fn fs_op(
    State(sessions): State<Arc<Sessions>>,
    Authed(tenant): Authed,
    Path((id, op)): Path<(String, String)>,
    body: Bytes,
) -> AppResult {
    let request: FsRequest = if body.is_empty() {
        FsRequest::default()
    } else {
        parse(&body)?
    };
    let result = sessions.fs(&tenant, &id, op, request).await?;
    Ok(json_response(StatusCode::OK, result))
}
