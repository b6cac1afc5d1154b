//! `GET /openapi.json`: the OpenAPI 3 document, generated from the handlers' annotations and
//! the request types. A server with `--app` serves the seed's routes too, and lists them.

use super::apps;
use super::fs::FsRequest;
use super::router;
use super::runs::{NamedScript, NewFile, RunRequest};
use super::sessions::{CreateSession, SessionRecord};
use super::state::AppState;
use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use utoipa::OpenApi;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Palisade",
        description = "Run untrusted JavaScript in a fresh WebAssembly sandbox per call"
    ),
    paths(
        router::healthz,
        router::readyz,
        router::metrics,
        openapi,
        router::policies,
        router::policy_text,
        router::policy_types,
        router::run,
        router::create_session,
        router::list_sessions,
        router::get_session,
        router::stop_session,
        router::run_in_session,
        router::fs_op,
        apps::routes::load,
        apps::routes::list,
        apps::routes::show,
        apps::routes::unload,
        apps::routes::act,
        apps::routes::view_app,
        apps::routes::session_state,
        apps::routes::events,
    ),
    components(schemas(
        RunRequest,
        NamedScript,
        CreateSession,
        NewFile,
        SessionRecord,
        FsRequest,
        apps::routes::LoadApp,
        apps::actions::ActionRequest
    ))
)]
struct ApiDoc;

/// The seed's routes, mounted at the root by `palisade serve --app` (docs/apps.md).
#[derive(OpenApi)]
#[openapi(
    paths(
        apps::seed::load,
        apps::seed::load_file,
        apps::seed::init,
        apps::seed::view,
        apps::seed::press,
        apps::seed::actions_route,
        apps::seed::events,
    ),
    components(schemas(
        apps::seed::LoadBody,
        apps::seed::LoadFileBody,
        apps::seed::EnvBody,
        apps::seed::ViewBody,
        apps::seed::PressBody,
        apps::actions::ActionRequest
    ))
)]
struct SeedDoc;

/// The document as JSON: every route, and the seed's when `seed` (a server with `--app`).
pub fn document(seed: bool) -> serde_json::Value {
    let mut doc = ApiDoc::openapi();
    if seed {
        doc.merge(SeedDoc::openapi());
    }
    serde_json::to_value(doc).unwrap_or_default()
}

/// This document.
#[utoipa::path(get, path = "/openapi.json", tag = "operations",
    responses((status = 200, description = "the OpenAPI 3 document")))]
pub async fn openapi(State(state): State<AppState>) -> Response {
    axum::Json(document(state.config.app.is_some())).into_response()
}

/// `routes` with `GET /openapi.json`.
pub fn mount(routes: Router<AppState>) -> Router<AppState> {
    routes.route("/openapi.json", axum::routing::get(openapi))
}
