//! Per-call options over HTTP, with the library's names, bounds and errors: `timeout`, `fuel`,
//! `memory`, `metadata`, `config`, `files`, `now` and `seed` on `POST /v1/run` and a session's
//! run, each within the policy's `[overrides]`.

use crate::serve::{assert_error, config, start};
use http::StatusCode;
use serde_json::json;

const OPTS: &str = "name = \"opts\"\n[limits]\ntimeout = \"2s\"\n[fs.scratch]\n\
    guest = \"/scratch\"\n[config]\nuser = \"nobody\"\n[overrides]\nnow = true\nseed = true\n\
    config = [\"user\"]\n";

/// The `run_js` seed's `timeoutMs`: a loop under `timeout: "300ms"` ends `timeout` (408); a
/// deadline past the policy's, with no `overrides.timeout`, is refused before the run with the
/// ceiling and the fix; clock, seed, config and files reach the script.
#[tokio::test]
async fn serve_runs_take_the_library_options() {
    let config = config("options-run", false);
    std::fs::write(config.policies.as_ref().unwrap().join("opts.toml"), OPTS).unwrap();
    let server = start(config);
    let run = |body: serde_json::Value| server.call("POST", "/v1/run", None, body);
    let looped = run(json!({"policy": "opts", "timeout": "300ms",
        "source": "export default () => { for (;;) {} }"}))
    .await;
    assert_error(&looped, 408, "timeout");
    let past = run(json!({"policy": "opts", "timeout": "10s", "source": "export default 1"})).await;
    assert_error(&past, 403, "policy_denied");
    let message = past.body["error"]["message"].as_str().unwrap();
    assert!(message.contains("limits.timeout"), "{message}");
    assert!(past.body["error"]["fix"].is_object(), "{}", past.body);
    let fuel = run(json!({"policy": "opts", "fuel": 1000,
        "source": "export default () => { let n = 0; for (let i = 0; i < 1e7; i++) n += i; return n }"}))
    .await;
    assert_error(&fuel, 429, "fuel_exhausted");
    let ran = run(json!({
        "policy": "opts",
        "now": "2025-01-02T03:04:05Z",
        "seed": 7,
        "config": {"user": "ada"},
        "files": [{"path": "a.txt", "content": "hello"}],
        "metadata": {"actor": "agent-1", "tenant": "forged"},
        "source": "export default async () => ({ now: new Date().toISOString(), r: Math.random(), \
            user: config.get('user'), file: await fs.readFile('/scratch/a.txt', 'utf8') })",
    }))
    .await;
    assert_eq!(ran.status, StatusCode::OK, "{}", ran.body);
    let out = &ran.body["output"];
    assert_eq!(out["now"], "2025-01-02T03:04:05.000Z");
    assert_eq!(out["user"], "ada");
    assert_eq!(out["file"], "hello");
    let again = run(json!({"policy": "opts", "seed": 7,
        "source": "export default () => Math.random()"}))
    .await;
    assert_eq!(
        again.body["output"], out["r"],
        "the same seed, the same numbers"
    );
    let unset = run(json!({"policy": "default", "seed": 7, "source": "export default 1"})).await;
    assert_error(&unset, 403, "policy_denied");
    server.assert_fine(None).await;
}

/// The sandbox-daemon seed's create → write → exec → stop, with its own field names; the
/// fields Palisade cannot honour are refused with a `fix` that, merged into the request,
/// makes it pass.
#[tokio::test]
async fn serve_takes_the_sandbox_daemons_requests() {
    let server = start(config("options-daemon", false));
    let create = json!({"policy": "box", "memory_mb": 64, "idle_timeout_secs": 60,
        "env": ["GREETING=hello"], "network": false});
    let id = server.session(None, create.clone()).await;
    let session = server
        .call(
            "GET",
            &format!("/v1/sessions/{id}"),
            None,
            serde_json::Value::Null,
        )
        .await;
    assert_eq!(session.body["idle_timeout"], "1m", "{}", session.body);
    let wrote = server
        .fs(
            None,
            &id,
            "write",
            json!({"path": "/scratch/n.txt", "content": "41"}),
        )
        .await;
    assert_eq!(wrote.status, StatusCode::OK, "{}", wrote.body);
    let exec = server
        .call(
            "POST",
            &format!("/v1/sessions/{id}/run"),
            None,
            json!({"lang": "js", "timeout_ms": 3000, "result": "exec",
                "source": "export default async () => { const n = Number(await fs.readFile('/scratch/n.txt', 'utf8')); \
                    console.log(config.get('GREETING'), n + 1); console.warn('careful'); return n + 1 }"}),
        )
        .await;
    assert_eq!(exec.status, StatusCode::OK, "{}", exec.body);
    assert_eq!(exec.body["stdout"], "hello 42\n");
    assert_eq!(exec.body["stderr"], "careful\n");
    assert_eq!(exec.body["exit_code"], 0);
    assert_eq!(exec.body["success"], true);
    assert_eq!(exec.body["timed_out"], false);
    assert!(exec.body["duration_ms"].is_u64());
    let timed = server
        .call(
            "POST",
            &format!("/v1/sessions/{id}/run"),
            None,
            json!({"timeout_ms": 200, "result": "exec", "source": "export default () => { for (;;) {} }"}),
        )
        .await;
    assert_eq!(timed.body["timed_out"], true, "{}", timed.body);
    assert_eq!(timed.body["success"], false);
    assert_eq!(timed.body["exit_code"], 21);
    let stopped = server
        .call(
            "DELETE",
            &format!("/v1/sessions/{id}"),
            None,
            serde_json::Value::Null,
        )
        .await;
    assert_eq!(stopped.status, StatusCode::OK);
    // What cannot be honoured, each with a fix that makes the request pass once merged.
    for (field, value) in [
        ("cpus", json!(2)),
        ("image", json!("node")),
        ("network", json!(true)),
    ] {
        let mut asked = create.clone();
        asked[field] = value;
        let refused = server
            .call("POST", "/v1/sessions", None, asked.clone())
            .await;
        assert_error(&refused, 400, "invalid_input");
        let fix = refused.body["error"]["fix"]
            .as_object()
            .expect("a fix")
            .clone();
        for (k, v) in fix {
            asked[k] = v;
        }
        let fixed = server.call("POST", "/v1/sessions", None, asked).await;
        assert_eq!(fixed.status, StatusCode::CREATED, "{field}: {}", fixed.body);
    }
    let python = server
        .call(
            "POST",
            "/v1/run",
            None,
            json!({"policy": "default", "lang": "python", "source": "print(1)"}),
        )
        .await;
    assert_error(&python, 400, "invalid_input");
    assert_eq!(python.body["error"]["fix"], json!({"lang": "js"}));
    server.assert_fine(None).await;
}

/// Merge `fix` into `request` as the error shape means it: each key replaces the request's,
/// `null` removes it.
fn merged(mut request: serde_json::Value, fix: &serde_json::Value) -> serde_json::Value {
    for (k, v) in fix.as_object().expect("a fix is an object") {
        if v.is_null() {
            request.as_object_mut().unwrap().remove(k);
        } else {
            request[k.as_str()] = v.clone();
        }
    }
    request
}

/// Every refusal of these routes that carries a `fix`: merged into the request, the request
/// either passes or fails with another code, so a client that follows fixes never loops.
#[tokio::test]
async fn serve_fixes_never_loop() {
    let server = start(config("options-fixes", false));
    let id = server.session(None, json!({"policy": "box"})).await;
    let session_run = format!("/v1/sessions/{id}/run");
    let cases: Vec<(&str, serde_json::Value)> = vec![
        ("/v1/run", json!({"source": "export default 1"})),
        (
            "/v1/run",
            json!({"policy": "default", "source": "export default 1",
            "script": {"name": "a.js", "source": "export default 2"}}),
        ),
        (
            "/v1/run",
            json!({"policy": "default", "source": "export default 1", "result": "shape"}),
        ),
        (
            "/v1/run",
            json!({"policy": "default", "source": "export default 1", "lang": "ruby"}),
        ),
        (
            "/v1/run",
            json!({"policy": "default", "source": "export default 1", "cpus": 4}),
        ),
        (
            "/v1/run",
            json!({"policy": "default", "source": "export default 1", "now": "yesterday"}),
        ),
        (
            session_run.as_str(),
            json!({"policy": "default", "source": "export default 1"}),
        ),
        (
            "/v1/sessions",
            json!({"policy": "box", "idle_timeout": "soon"}),
        ),
        ("/v1/sessions", json!({"policy": "box", "image": "python"})),
    ];
    for (route, request) in cases {
        let refused = server.call("POST", route, None, request.clone()).await;
        assert!(
            refused.status.is_client_error(),
            "{route}: {}",
            refused.body
        );
        let code = refused.body["error"]["code"].clone();
        let fix = &refused.body["error"]["fix"];
        assert!(
            fix.is_object(),
            "{route} {request}: no fix in {}",
            refused.body
        );
        let again = server
            .call("POST", route, None, merged(request.clone(), fix))
            .await;
        assert!(
            again.status.is_success() || again.body["error"]["code"] != code,
            "{route} {request}: the fix {fix} gave {} again: {}",
            again.status,
            again.body
        );
    }
    server.assert_fine(None).await;
}
