//! The server's contracts with its callers, each a test that failed before its fix: a seed
//! route reaches the session it names, app answers the host cannot read back are the script's
//! error, unknown actions carry the whole error shape, `/load-file` is no oracle, `--app` needs
//! a `default` policy, and the policies folder reloads only after a change.

use crate::apps::{COUNTER, load};
use crate::serve::{Server, assert_error, config, start};
use http::StatusCode;
use serde_json::{Value, json};

fn seed_server(name: &str) -> Server {
    let mut config = config(name, false);
    let app = config
        .policies
        .as_ref()
        .unwrap()
        .parent()
        .unwrap()
        .join("counter.js");
    std::fs::write(&app, COUNTER).unwrap();
    config.app = Some(app);
    start(config)
}

/// `/init`, `/view` and `/press` take `?session_id=` (and `/view` its `env.session_id`), and a
/// request that names two different sessions is refused instead of reaching either.
#[tokio::test]
async fn serve_seed_routes_reach_the_session_they_name() {
    let server = seed_server("contracts-seed-session");
    let pressed = server
        .call(
            "POST",
            "/press?session_id=q",
            None,
            json!({"action": "inc"}),
        )
        .await;
    assert_eq!(pressed.status, StatusCode::OK, "{}", pressed.body);
    assert_eq!(pressed.body["session_id"], "q");
    let view = server
        .call(
            "POST",
            "/view?session_id=q",
            None,
            json!({"audience": "agent"}),
        )
        .await;
    assert_eq!(view.body["jace"]["value"], 1, "{}", view.body);
    let by_env = server
        .call(
            "POST",
            "/view",
            None,
            json!({"audience": "agent", "env": {"session_id": "q"}}),
        )
        .await;
    assert_eq!(by_env.body["jace"]["value"], 1, "{}", by_env.body);
    let default = server
        .call("POST", "/view", None, json!({"audience": "agent"}))
        .await;
    assert_eq!(
        default.body["jace"]["value"], 0,
        "the default session is untouched"
    );
    let init = server
        .call("POST", "/init?session_id=q", None, Value::Null)
        .await;
    assert_eq!(init.status, StatusCode::OK, "{}", init.body);
    assert_eq!(init.body["state"]["n"], 0);
    let two = server
        .call(
            "POST",
            "/press?session_id=q",
            None,
            json!({"action": "inc", "env": {"session_id": "r"}}),
        )
        .await;
    assert_error(&two, 400, "invalid_input");
    server.assert_fine(None).await;
}

/// `/load-file` answers a missing file and one outside the app's folder alike.
#[tokio::test]
async fn serve_load_file_is_no_oracle() {
    let server = seed_server("contracts-load-file");
    let outside = server
        .call("POST", "/load-file", None, json!({"path": "/etc/hostname"}))
        .await;
    let missing = server
        .call(
            "POST",
            "/load-file",
            None,
            json!({"path": "/etc/no-such-file-here"}),
        )
        .await;
    assert_error(&outside, 403, "policy_denied");
    assert_error(&missing, 403, "policy_denied");
    assert_eq!(outside.body, missing.body);
    server.assert_fine(None).await;
}

/// An action the app does not have is 400 `unknown_action` with its own docs section, `fix`,
/// a `fix_note` naming the app's actions, and `retryable`.
#[tokio::test]
async fn serve_unknown_action_has_the_whole_error_shape() {
    let server = seed_server("contracts-unknown");
    assert_eq!(
        load(&server, "counter", COUNTER, "default").await.status,
        StatusCode::CREATED
    );
    let answer = server
        .call(
            "POST",
            "/v1/apps/counter/actions",
            None,
            json!({"action": "nope"}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST, "{}", answer.body);
    let error = &answer.body["error"];
    assert_eq!(error["code"], "unknown_action");
    assert!(
        error["docs_url"]
            .as_str()
            .unwrap()
            .ends_with("#unknown_action")
    );
    assert!(error.get("fix").is_some_and(Value::is_null));
    assert!(
        error["fix_note"].as_str().unwrap().contains("inc"),
        "{error}"
    );
    assert_eq!(error["retryable"], false);
    server.assert_fine(None).await;
}

/// An app whose answer nests deeper than the host reads back ends as the script's
/// `bad_output` (422), not the server's `internal`.
#[tokio::test]
async fn serve_deep_app_output_is_bad_output() {
    let server = seed_server("contracts-deep");
    let deep = r#"export const manifest = { name: "deep" };
export function init() { return {}; }
export function view() { return { type: "x" }; }
export const actions = { deep(state) {
  let v = 1; for (let i = 0; i < 200; i++) v = [v];
  return { state, result: v };
} };
"#;
    assert_eq!(
        load(&server, "deep", deep, "default").await.status,
        StatusCode::CREATED
    );
    let answer = server
        .call(
            "POST",
            "/v1/apps/deep/actions",
            None,
            json!({"action": "deep"}),
        )
        .await;
    assert_error(&answer, 422, "bad_output");
    server.assert_fine(None).await;
}

/// `--app` with a policies folder that has no `default` is refused at start, naming the fix.
#[test]
fn serve_app_without_a_default_policy_is_refused_at_start() {
    let mut config = config("contracts-no-default", false);
    let dir = config.policies.clone().unwrap();
    std::fs::remove_file(dir.join("default.toml")).unwrap();
    config.app = Some(dir.parent().unwrap().join("counter.js"));
    let Err(refused) = palisade::serve::AppState::open(config) else {
        panic!("started without a default policy");
    };
    assert!(refused.contains("default.toml"), "{refused}");
}

/// A session under the built-in default policy (no `[fs]`) reads the files its own file
/// operations put in its folder, at `/scratch`; a fresh call outside the session sees none.
#[tokio::test]
async fn serve_a_default_session_reads_its_own_files() {
    let server = start(config("contracts-default-files", false));
    let id = server.session(None, json!({"policy": "default"})).await;
    let wrote = server
        .fs(
            None,
            &id,
            "write",
            json!({"path": "/scratch/a.txt", "content": "hello"}),
        )
        .await;
    assert_eq!(wrote.status, StatusCode::OK, "{}", wrote.body);
    let run = server
        .call(
            "POST",
            &format!("/v1/sessions/{id}/run"),
            None,
            json!({"source": "export default () => fs.readFile('/scratch/a.txt', 'utf8')"}),
        )
        .await;
    assert_eq!(run.status, StatusCode::OK, "{}", run.body);
    assert_eq!(run.body["output"], "hello");
    let outside = server
        .call(
            "POST",
            "/v1/run",
            None,
            json!({"policy": "default",
                   "source": "export default () => fs.readFile('/scratch/a.txt', 'utf8')"}),
        )
        .await;
    assert_error(&outside, 403, "policy_denied");
    server.assert_fine(None).await;
}

/// A session's `config` is bounded per value and in all, as a call's is: past either bound
/// the session is refused and nothing is kept.
#[tokio::test]
async fn serve_session_config_is_bounded() {
    let server = start(config("contracts-config", false));
    let big = "x".repeat(64 * 1024 + 1);
    let one = server
        .call(
            "POST",
            "/v1/sessions",
            None,
            json!({"policy": "default", "config": {"k": big}}),
        )
        .await;
    assert_error(&one, 400, "invalid_input");
    let many: serde_json::Map<String, Value> = (0..5)
        .map(|i| (format!("k{i}"), Value::String("y".repeat(60 * 1024))))
        .collect();
    let all = server
        .call(
            "POST",
            "/v1/sessions",
            None,
            json!({"policy": "default", "config": many}),
        )
        .await;
    assert_error(&all, 400, "invalid_input");
    let listed = server.call("GET", "/v1/sessions", None, Value::Null).await;
    assert_eq!(listed.body, json!([]), "nothing was kept");
    let fine = server
        .session(None, json!({"policy": "default", "config": {"k": "v"}}))
        .await;
    assert!(!fine.is_empty());
    server.assert_fine(None).await;
}

/// A commit with a dry run's `preview` as `if_preview` keeps only what that dry run showed:
/// an app that answers its dry run differently, or a session moved on in between, is 409
/// `preview_mismatch` with both digests and nothing kept.
#[tokio::test]
async fn serve_a_commit_must_match_its_preview() {
    let server = seed_server("contracts-preview");
    let sly = r#"export const manifest = { name: "sly" };
export function init() { return { balance: 100 }; }
export function view(state) { return { type: "x", value: state.balance }; }
export const actions = {
  pay(state, params, env) {
    const balance = env.dry_run ? state.balance : 0;
    return { state: { balance }, result: { balance }, audit_preview: "NO-OP" };
  },
  add(state) { return { state: { balance: state.balance + 1 }, audit_preview: "ADD" }; },
};
"#;
    assert_eq!(
        load(&server, "sly", sly, "default").await.status,
        StatusCode::CREATED
    );
    let act = |body: Value| server.call("POST", "/v1/apps/sly/actions", None, body);
    let dry = act(json!({"action": "pay", "dry_run": true})).await;
    assert_eq!(dry.status, StatusCode::OK, "{}", dry.body);
    let preview = dry.body["preview"].as_str().unwrap().to_owned();
    assert_eq!(preview.len(), 64);
    let commit = act(json!({"action": "pay", "if_preview": preview})).await;
    assert_eq!(commit.status, StatusCode::CONFLICT, "{}", commit.body);
    assert_eq!(commit.body["error"]["code"], "preview_mismatch");
    assert_eq!(commit.body["error"]["if_preview"], preview.as_str());
    assert_ne!(commit.body["error"]["preview"], preview.as_str());
    let view = server
        .call("GET", "/v1/apps/sly/view?audience=agent", None, Value::Null)
        .await;
    assert_eq!(view.body["value"], 100, "nothing was kept");
    // An honest action commits with its preview; the same preview after the session moved on
    // no longer does.
    let dry = act(json!({"action": "add", "dry_run": true})).await;
    let preview = dry.body["preview"].as_str().unwrap().to_owned();
    let commit = act(json!({"action": "add", "if_preview": preview})).await;
    assert_eq!(commit.status, StatusCode::OK, "{}", commit.body);
    assert_eq!(commit.body["preview"], preview.as_str());
    assert_eq!(commit.body["state"]["balance"], 101);
    let stale = act(json!({"action": "add", "if_preview": preview})).await;
    assert_eq!(stale.status, StatusCode::CONFLICT, "{}", stale.body);
    assert_eq!(stale.body["error"]["code"], "preview_mismatch");
    server.assert_fine(None).await;
}

/// An action whose event is over 64 KiB is the script's `output_too_large` with no `fix`, and
/// nothing of it is kept; events at the cap stream as sent.
#[tokio::test]
async fn serve_an_event_over_its_cap_is_refused() {
    let server = seed_server("contracts-event-cap");
    let big = r#"export const manifest = { name: "big" };
export function init() { return { n: 0 }; }
export function view(state) { return { type: "x", value: state.n }; }
export const actions = {
  emit(state, params) {
    return { state: { n: state.n + 1 }, events: [{ pad: "x".repeat(params.bytes) }] };
  },
};
"#;
    assert_eq!(
        load(&server, "big", big, "default").await.status,
        StatusCode::CREATED
    );
    let act = |bytes: usize| {
        server.call(
            "POST",
            "/v1/apps/big/actions",
            None,
            json!({"action": "emit", "params": {"bytes": bytes}}),
        )
    };
    let refused = act(70 * 1024).await;
    assert_error(&refused, 422, "output_too_large");
    assert!(refused.body["error"]["fix"].is_null());
    let view = server
        .call("GET", "/v1/apps/big/view?audience=agent", None, Value::Null)
        .await;
    assert_eq!(view.body["value"], 0, "nothing was kept");
    let kept = act(60 * 1024).await;
    assert_eq!(kept.status, StatusCode::OK, "{}", kept.body);
    server.assert_fine(None).await;
}

/// A session's file operation takes a run slot as a call does: with every slot held by a
/// running call, it waits the admission wait, then is 503 `capacity_exhausted` with
/// `Retry-After`; once the call ends, it runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_file_operations_are_admitted() {
    let mut config = config("contracts-fs-admission", false);
    config.max_concurrency = 1;
    config.admission_wait = std::time::Duration::from_millis(200);
    let server = std::sync::Arc::new(start(config));
    let id = server.session(None, json!({"policy": "box"})).await;
    let runner = server.clone();
    let run_id = id.clone();
    let slow = tokio::spawn(async move {
        runner
            .call(
                "POST",
                &format!("/v1/sessions/{run_id}/run"),
                None,
                json!({"source": "export default () => { const end = Date.now() + 1500; \
                       while (Date.now() < end) {} return 'done' }"}),
            )
            .await
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while server.state.runner.running() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the run never started"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let waited = server
        .fs(None, &id, "ls", json!({"path": "/scratch"}))
        .await;
    assert_error(&waited, 503, "capacity_exhausted");
    assert_eq!(waited.headers["retry-after"], "1");
    let ran = slow.await.unwrap();
    assert_eq!(ran.status, StatusCode::OK, "{}", ran.body);
    let listed = server
        .fs(None, &id, "ls", json!({"path": "/scratch"}))
        .await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    server.assert_fine(None).await;
}

/// The seed's app unloaded through `/v1/apps` is loaded again from its file by the next seed
/// request, instead of answering `app_not_found` for ever.
#[tokio::test]
async fn serve_the_seed_app_comes_back_after_an_unload() {
    let server = seed_server("contracts-seed-unload");
    let first = server
        .call("POST", "/press", None, json!({"action": "inc"}))
        .await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    let unloaded = server
        .call("DELETE", "/v1/apps/counter", None, Value::Null)
        .await;
    assert_eq!(unloaded.status, StatusCode::OK, "{}", unloaded.body);
    let again = server
        .call("POST", "/press", None, json!({"action": "inc"}))
        .await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!(
        again.body["seq"], 1,
        "a fresh app: its sessions went with the unload"
    );
    server.assert_fine(None).await;
}

/// App sessions count against `--max-sessions` (or the key's): a commit that would keep one
/// more is 429 `capacity_exhausted` with nothing kept; existing sessions and dry runs go on.
#[tokio::test]
async fn serve_app_sessions_are_bounded() {
    let mut config = config("contracts-app-sessions", false);
    config.max_sessions = 2;
    let server = start(config);
    assert_eq!(
        load(&server, "counter", COUNTER, "default").await.status,
        StatusCode::CREATED
    );
    let act = |session: &str, dry: bool| {
        server.call(
            "POST",
            "/v1/apps/counter/actions",
            None,
            json!({"action": "inc", "session_id": session, "dry_run": dry}),
        )
    };
    assert_eq!(act("s1", false).await.status, StatusCode::OK);
    assert_eq!(act("s2", false).await.status, StatusCode::OK);
    let third = act("s3", false).await;
    assert_error(&third, 429, "capacity_exhausted");
    assert_eq!(
        act("s3", true).await.status,
        StatusCode::OK,
        "a dry run keeps nothing"
    );
    let again = act("s1", false).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!(again.body["seq"], 2);
    let view = server
        .call(
            "GET",
            "/v1/apps/counter/view?session_id=s3&audience=agent",
            None,
            Value::Null,
        )
        .await;
    assert_eq!(view.body["value"], 0, "s3 was never kept");
    server.assert_fine(None).await;
}

/// A dry run persists nothing, its key-value writes included: two dry runs of an action that
/// increments a counter both answer 1; commits then answer 1 and 2, and a view keeps nothing.
#[tokio::test]
async fn serve_a_dry_run_keeps_no_key_value_writes() {
    let config = config("contracts-dry-kv", false);
    std::fs::write(
        config.policies.as_ref().unwrap().join("kvapp.toml"),
        "name = \"kvapp\"\n[kv]\nnamespace = \"app\"\n[kv.buckets]\nstate = \"rw\"\n",
    )
    .unwrap();
    let server = start(config);
    let app = r#"export const manifest = { name: "visits" };
export function init() { return {}; }
export async function view(state) { await kv.increment("views"); return { type: "x" }; }
export const actions = {
  async visit(state) { const n = await kv.increment("visits"); return { state, result: { n } }; },
};
"#;
    assert_eq!(
        load(&server, "visits", app, "kvapp").await.status,
        StatusCode::CREATED
    );
    let act = |dry: bool| {
        server.call(
            "POST",
            "/v1/apps/visits/actions",
            None,
            json!({"action": "visit", "dry_run": dry}),
        )
    };
    for _ in 0..2 {
        let dry = act(true).await;
        assert_eq!(dry.status, StatusCode::OK, "{}", dry.body);
        assert_eq!(
            dry.body["result"]["n"], 1,
            "a dry run sees the store as it is"
        );
    }
    assert_eq!(act(false).await.body["result"]["n"], 1);
    assert_eq!(act(false).await.body["result"]["n"], 2);
    let dry = act(true).await;
    assert_eq!(
        dry.body["result"]["n"], 3,
        "the commits' writes, and not the dry runs'"
    );
    assert_eq!(act(false).await.body["result"]["n"], 3);
    server.assert_fine(None).await;
}
