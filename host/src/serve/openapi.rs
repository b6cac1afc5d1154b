//! `GET /openapi.json`: the OpenAPI 3 document, generated from the handlers' annotations and
//! the request types.

use super::apps;
use super::fs::FsRequest;
use super::router;
use super::runs::{NamedScript, RunRequest};
use super::sessions::{CreateSession, NewFile, SessionRecord};
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
        router::openapi,
        router::policies,
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

/// The document as JSON.
pub fn document() -> serde_json::Value {
    serde_json::to_value(ApiDoc::openapi()).unwrap_or_default()
}
