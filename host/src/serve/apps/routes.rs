//! The `/v1/apps` routes: load, list, show and unload apps; act, view and follow events. The
//! handlers parse, call [`actions`] or the store, and answer; every error
//! goes through [`ApiError`].

use super::super::auth::{Authed, Tenant};
use super::super::errors::ApiError;
use super::super::idempotency::Ledger;
use super::actions::{self, DEFAULT_SESSION, Ran};
use super::records::{self, AppRecord};
use super::view::{self, Audience};
use super::{Apps, app_key, check_name, check_session};
use crate::Error;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{FromRef, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use utoipa::{IntoParams, ToSchema};

type AppResult = Result<Response, ApiError>;
type St = State<Arc<Apps>>;

/// The `/v1/apps` routes, on any state that holds the apps and the tenants.
pub fn router<S>() -> Router<S>
where
    S: Clone + Send + Sync + 'static,
    Arc<Apps>: FromRef<S>,
    Arc<super::super::auth::Tenants>: FromRef<S>,
{
    Router::new()
        .route("/v1/apps", post(load).get(list))
        .route("/v1/apps/{app}", get(show).delete(unload))
        .route("/v1/apps/{app}/actions", post(act))
        .route("/v1/apps/{app}/view", get(view_app))
        .route("/v1/apps/{app}/state", get(session_state))
        .route("/v1/apps/{app}/events", get(events))
}

/// The body of `POST /v1/apps`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadApp {
    /// The app's name: 1 to 64 letters, digits, `-` and `_`. Loading a name again replaces
    /// the app and keeps its sessions.
    pub name: String,
    /// The module: `globalThis.jace = {…}` or ES-module exports.
    pub source: String,
    /// The policy its calls run under; `default` when absent.
    #[serde(default)]
    pub policy: Option<String>,
}

/// `?session_id=&audience=` of a view.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ViewQuery {
    /// The session; `default` when absent.
    pub session_id: Option<String>,
    /// `agent` or `human`.
    pub audience: Option<String>,
}

/// `?session_id=` of a session's state.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SessionQuery {
    /// The session; `default` when absent.
    pub session_id: Option<String>,
}

/// `?session_id=&last_event_id=` of the event stream.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// The session; `default` when absent.
    pub session_id: Option<String>,
    /// Resume after this id (as the `Last-Event-ID` header does).
    pub last_event_id: Option<u64>,
}

fn json_response(status: StatusCode, body: Value) -> Response {
    (status, axum::Json(body)).into_response()
}

/// What is shown of an app.
pub fn describe(record: &AppRecord) -> Value {
    json!({
        "name": record.name,
        "policy": record.policy,
        "sha256": record.sha256,
        "manifest": record.manifest,
        "actions": record.actions,
        "created_at": humantime::format_rfc3339_millis(
            std::time::UNIX_EPOCH + std::time::Duration::from_millis(record.created_unix_ms)
        ).to_string(),
    })
}

impl Apps {
    /// Compile and keep an app for `tenant`; its description. A compile error carries its
    /// `location` in the app.
    pub async fn load(&self, tenant: &Tenant, request: LoadApp) -> Result<Value, ApiError> {
        check_name(&request.name)?;
        let policy_name = request.policy.unwrap_or_else(|| "default".to_owned());
        let policy = self.parts.policies.policy_for(tenant, &policy_name)?;
        let record = AppRecord {
            name: request.name,
            policy: policy_name,
            sha256: crate::hex::sha256(request.source.as_bytes()),
            source: request.source,
            manifest: Value::Null,
            actions: Vec::new(),
            created_unix_ms: crate::audit::now_unix_ms(),
        };
        let loaded = super::abi::compile(&self.parts.runner, &policy, record, &tenant.name).await?;
        let store = self.parts.store.clone();
        let key = app_key(&tenant.name, &loaded.record.name);
        let kept = loaded.record.clone();
        records::blocking(move || records::put_app(&store, &key, &kept)).await?;
        let description = describe(&loaded.record);
        self.insert(&tenant.name, Arc::new(loaded));
        Ok(description)
    }

    /// Unload `tenant`'s app `name`: its sessions, events and key records go with it.
    pub async fn unload(&self, tenant: &Tenant, name: &str) -> Result<(), ApiError> {
        check_name(name)?;
        let (store, accounts) = (
            self.parts.store.clone(),
            self.parts.ledger.accounts().clone(),
        );
        let key = app_key(&tenant.name, name);
        let existed =
            records::blocking(move || records::remove_app(&store, &accounts, &key)).await?;
        self.forget(&tenant.name, name);
        if self.parts.seed_file.is_some() {
            self.seed.lock().await.remove(&tenant.name);
        }
        if !existed {
            return Err(Error::AppNotFound {
                name: name.to_owned(),
            }
            .into());
        }
        Ok(())
    }

    /// The view of a session's state (without a session yet: of `init`'s state, not kept).
    pub async fn view(
        &self,
        tenant: &Tenant,
        app: &str,
        session: &str,
        given: Option<Value>,
    ) -> Result<Value, ApiError> {
        check_session(session)?;
        let loaded = self.get(tenant, app).await?;
        let skey = actions::session_key(&tenant.name, app, session);
        let standing = self.standing(&loaded, tenant, &skey, None).await?;
        let app_state = match given {
            Some(v) => v,
            None => standing.current.map_or(Value::Null, |s| s.state),
        };
        let input = json!({"state": app_state, "env": {"session_id": session}});
        let who = super::super::journal::Who {
            tenant: &tenant.name,
            session: Some(session),
            app: Some(app),
        };
        match self
            .call(&loaded, &standing.view_policy, "view", &input, &who)
            .await?
        {
            // A view keeps nothing: its key-value writes are dropped.
            Ran::Value(v, _) => Ok(v["view"].clone()),
            Ran::Failed(error) => Err(error.into()),
        }
    }
}

/// Load an app: compile it once under its policy and keep it.
#[utoipa::path(post, path = "/v1/apps", tag = "apps", request_body = LoadApp,
    responses((status = 201, description = "`{name, policy, sha256, manifest, actions, created_at}`"),
        (status = 400, description = "invalid_input: not an app"),
        (status = 404, description = "policy_not_found"),
        (status = 422, description = "guest_syntax (with `location`), not_compilable, guest_exception")))]
pub async fn load(State(apps): St, Authed(tenant): Authed, body: Bytes) -> AppResult {
    let request: LoadApp = serde_json::from_slice(&body)
        .map_err(|e| ApiError::invalid(format!("the request body is not an app: {e}")))?;
    let description = apps.load(&tenant, request).await?;
    Ok(json_response(StatusCode::CREATED, description))
}

/// The caller's apps.
#[utoipa::path(get, path = "/v1/apps", tag = "apps",
    responses((status = 200, description = "`[{name, policy, sha256, manifest, actions, created_at}]`")))]
pub async fn list(State(apps): St, Authed(tenant): Authed) -> AppResult {
    let store = apps.parts.store.clone();
    let name = tenant.name.clone();
    let list = records::blocking(move || records::apps(&store, &name)).await?;
    Ok(json_response(
        StatusCode::OK,
        Value::Array(list.iter().map(describe).collect()),
    ))
}

/// One app: manifest, actions and SHA-256.
#[utoipa::path(get, path = "/v1/apps/{app}", tag = "apps",
    params(("app" = String, Path, description = "the app's name")),
    responses((status = 200, description = "the app"), (status = 404, description = "app_not_found")))]
pub async fn show(State(apps): St, Authed(tenant): Authed, Path(app): Path<String>) -> AppResult {
    let record = apps.record(&tenant.name, &app).await?;
    Ok(json_response(StatusCode::OK, describe(&record)))
}

/// Unload an app: its sessions, events and idempotency records go with it.
#[utoipa::path(delete, path = "/v1/apps/{app}", tag = "apps",
    params(("app" = String, Path, description = "the app's name")),
    responses((status = 200, description = "`{name, unloaded: true}`"), (status = 404, description = "app_not_found")))]
pub async fn unload(State(apps): St, Authed(tenant): Authed, Path(app): Path<String>) -> AppResult {
    apps.unload(&tenant, &app).await?;
    Ok(json_response(
        StatusCode::OK,
        json!({"name": app, "unloaded": true}),
    ))
}

/// Run an action: a dry run previews it, a commit persists its state and events.
#[utoipa::path(post, path = "/v1/apps/{app}/actions", tag = "apps", request_body = actions::ActionRequest,
    params(("app" = String, Path, description = "the app's name"),
        ("Idempotency-Key" = Option<String>, Header, description = "de-duplicate commits per (tenant, app, session)")),
    responses((status = 200, description = "`{state, result, audit_preview, events, view, session_id, seq, dry_run}`"),
        (status = 400, description = "invalid_input, or an action the app does not have"),
        (status = 404, description = "app_not_found"),
        (status = 408, description = "timeout: \"Action timed out\""),
        (status = 422, description = "the action's own `error`, an exception, or idempotency_conflict"),
        (status = 429, description = "fuel_exhausted: \"Fuel exhausted\", or memory_limit")))]
pub async fn act(
    State(apps): St,
    Authed(tenant): Authed,
    headers: HeaderMap,
    Path(app): Path<String>,
    body: Bytes,
) -> AppResult {
    let key = Ledger::key(&headers)?;
    let reply = apps.act(&tenant, &app, &body, key).await?;
    Ok(reply.stored.respond(reply.replayed))
}

/// Answer a view for `audience`, or by `Accept`: `text/html` renders it (escaped), JSON or
/// `application/jace+json` returns it.
pub fn view_response(view_value: &Value, audience: Option<&str>, headers: &HeaderMap) -> AppResult {
    if let Some(audience) = audience {
        let audience = Audience::parse(audience)
            .ok_or_else(|| ApiError::invalid("audience is `agent` or `human`"))?;
        return Ok(json_response(
            StatusCode::OK,
            view::filter(view_value, audience),
        ));
    }
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if accept.contains("text/html") {
        let mut response = view::html(view_value).into_response();
        let h = response.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'"),
        );
        return Ok(response);
    }
    let mut response = json_response(StatusCode::OK, view_value.clone());
    if accept.contains("application/jace+json") {
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/jace+json"),
        );
    }
    Ok(response)
}

/// A session's view, for an audience or as HTML.
#[utoipa::path(get, path = "/v1/apps/{app}/view", tag = "apps",
    params(("app" = String, Path, description = "the app's name"), ViewQuery),
    responses((status = 200, description = "the view (JSON, `application/jace+json`, or escaped HTML for `Accept: text/html`)"),
        (status = 404, description = "app_not_found")))]
pub async fn view_app(
    State(apps): St,
    Authed(tenant): Authed,
    headers: HeaderMap,
    Path(app): Path<String>,
    Query(query): Query<ViewQuery>,
) -> AppResult {
    let session = query.session_id.as_deref().unwrap_or(DEFAULT_SESSION);
    let value = apps.view(&tenant, &app, session, None).await?;
    view_response(&value, query.audience.as_deref(), &headers)
}

/// A session's state as its last commit left it: `{session_id, seq, state}`, `seq` 0 and
/// `state` null before its first commit (its first action runs on what `init` makes).
#[utoipa::path(get, path = "/v1/apps/{app}/state", tag = "apps",
    params(("app" = String, Path, description = "the app's name"), SessionQuery),
    responses((status = 200, description = "`{session_id, seq, state}`"),
        (status = 404, description = "app_not_found")))]
pub async fn session_state(
    State(apps): St,
    Authed(tenant): Authed,
    Path(app): Path<String>,
    Query(query): Query<SessionQuery>,
) -> AppResult {
    let session = query.session_id.as_deref().unwrap_or(DEFAULT_SESSION);
    check_session(session)?;
    apps.record(&tenant.name, &app).await?;
    let store = apps.parts.store.clone();
    let skey = actions::session_key(&tenant.name, &app, session);
    let current = records::blocking(move || records::session(&store, &skey)).await?;
    let (seq, state) = current.map_or((0, Value::Null), |s| (s.seq, s.state));
    Ok(json_response(
        StatusCode::OK,
        json!({"session_id": session, "seq": seq, "state": state}),
    ))
}

/// The id after which a stream resumes: `Last-Event-ID`, else `?last_event_id=`, else 0.
pub fn resume_after(headers: &HeaderMap, query: Option<u64>) -> Result<u64, ApiError> {
    match headers.get("last-event-id") {
        Some(v) => v
            .to_str()
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .ok_or_else(|| ApiError::invalid("Last-Event-ID is an event id (a number)")),
        None => Ok(query.unwrap_or(0)),
    }
}

/// Server-sent events of a session's committed actions.
#[utoipa::path(get, path = "/v1/apps/{app}/events", tag = "apps",
    params(("app" = String, Path, description = "the app's name"), EventsQuery,
        ("Last-Event-ID" = Option<String>, Header, description = "resume after this event id")),
    responses((status = 200, description = "`text/event-stream`: one event per committed event, with its id"),
        (status = 404, description = "app_not_found"),
        (status = 429, description = "capacity_exhausted: the session, the key or the server has its maximum of open streams, with Retry-After")))]
pub async fn events(
    State(apps): St,
    Authed(tenant): Authed,
    headers: HeaderMap,
    Path(app): Path<String>,
    Query(query): Query<EventsQuery>,
) -> AppResult {
    let session = query.session_id.as_deref().unwrap_or(DEFAULT_SESSION);
    check_session(session)?;
    apps.record(&tenant.name, &app).await?;
    let after = resume_after(&headers, query.last_event_id)?;
    let skey = actions::session_key(&tenant.name, &app, session);
    Ok(super::events::stream(&apps, &tenant.name, skey, after)?.into_response())
}
