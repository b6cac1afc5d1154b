//! `serve_body`: request bodies for the server's routes, through the axum router in process
//! (`tower::ServiceExt::oneshot`, no socket): `/v1/run`, `/v1/sessions`, a session's run and
//! file operations, `/v1/apps` and an app's actions. The first byte picks the route (and the
//! second the file operation); the rest is the body. Any body ends in a success or a JSON
//! error whose `code` is documented; never a 500, never `internal`, never a panic.

use axum::Router;
use axum::body::Body;
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use palisade::serve::{AppState, Config, router};
use serde_json::Value;
use std::sync::OnceLock;
use tower::ServiceExt;

/// The file operations of a session (docs/server.md).
const FS_OPS: &[&str] = &[
    "ls", "stat", "mkdir", "write", "read", "rm", "mv", "grep", "sed", "nope",
];

/// The calculator of `examples/apps/calc.js`, loaded once.
const CALC: &str = include_str!("../../examples/apps/calc.js");

/// The policy the server offers as `default`: the built-in default's, with a shorter deadline
/// and less fuel, so that a fuzzed script that loops ends in 200 ms rather than 1 s. The same
/// code ends it (`timeout` or `fuel_exhausted`); only the wait is shorter.
pub const POLICY: &str = r#"
name = "default"
description = "The built-in default, with a short deadline for fuzzing"
[limits]
fuel = 3_000_000_000
timeout = "200ms"
"#;

struct Server {
    router: Router,
    session: String,
    _data: tempfile::TempDir,
    _policies: tempfile::TempDir,
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let data = tempfile::tempdir().expect("a temporary folder");
        let policies = tempfile::tempdir().expect("a temporary folder");
        std::fs::write(policies.path().join("default.toml"), POLICY)
            .expect("the policy is written");
        let _guard = crate::runtime().enter();
        let mut config = Config::new(data.path().to_path_buf());
        config.policies = Some(policies.path().to_path_buf());
        // Fuzzed bodies make sessions; keep the folder small.
        config.max_sessions = 64;
        let state = AppState::open(config).expect("the server's state opens");
        let router = router(state);
        let (status, body) = send(
            &router,
            "/v1/sessions",
            br#"{"policy": "default"}"#.to_vec(),
        );
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let session = body["session_id"]
            .as_str()
            .expect("a session id")
            .to_owned();
        let load = serde_json::json!({"name": "calc", "source": CALC, "policy": "default"});
        let (status, body) = send(&router, "/v1/apps", load.to_string().into_bytes());
        assert!(status.is_success(), "{status} {body}");
        Server {
            router,
            session,
            _data: data,
            _policies: policies,
        }
    })
}

fn send(router: &Router, path: &str, body: Vec<u8>) -> (StatusCode, Value) {
    let request = Request::post(path)
        .header("content-type", "application/json")
        .body(Body::from(body))
        .expect("a request");
    crate::runtime().block_on(async {
        let response = router
            .clone()
            .oneshot(request)
            .await
            .expect("the router answers");
        let status = response.status();
        let bytes = response
            .into_body()
            .collect()
            .await
            .expect("the body is read")
            .to_bytes();
        let body = serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            panic!(
                "{path} answered {status} with a body that is not JSON ({e}): {:?}",
                String::from_utf8_lossy(&bytes)
            )
        });
        (status, body)
    })
}

pub fn check(data: &[u8]) {
    let Some((&route, rest)) = data.split_first() else {
        return;
    };
    let server = server();
    let id = &server.session;
    let (path, body) = match route % 6 {
        0 => ("/v1/run".to_owned(), rest),
        1 => ("/v1/sessions".to_owned(), rest),
        2 => (format!("/v1/sessions/{id}/run"), rest),
        3 => {
            let Some((&op, rest)) = rest.split_first() else {
                return;
            };
            let op = FS_OPS[usize::from(op) % FS_OPS.len()];
            (format!("/v1/sessions/{id}/fs/{op}"), rest)
        }
        4 => ("/v1/apps".to_owned(), rest),
        _ => ("/v1/apps/calc/actions".to_owned(), rest),
    };
    let (status, answer) = send(&server.router, &path, body.to_vec());
    assert!(
        status != StatusCode::INTERNAL_SERVER_ERROR,
        "{path} answered 500: {answer}\nbody: {:?}",
        String::from_utf8_lossy(body)
    );
    // An action's own refusal (`error: {code, message}` chosen by the app, 422, or
    // `unknown_action`, 400) is an action answer, with its `seq` and `state` (docs/apps.md).
    let action_answer = path.ends_with("/actions")
        && answer.get("seq").is_some()
        && answer.get("state").is_some()
        && (status == StatusCode::UNPROCESSABLE_ENTITY || status == StatusCode::BAD_REQUEST);
    if action_answer {
        return;
    }
    if let Some(error) = answer.get("error").filter(|e| e.is_object()) {
        let code = error["code"].as_str().unwrap_or_default();
        assert!(
            crate::is_documented_code(code),
            "{path} answered {status} with code {code:?}: {answer}"
        );
    } else {
        assert!(
            status.is_success(),
            "{path} answered {status} without an error: {answer}"
        );
    }
}
