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
    assert_error(&past, 400, "invalid_input");
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
    assert_error(&unset, 400, "invalid_input");
    server.assert_fine(None).await;
}
