//! Action apps on `palisade serve` (issue 27), in process: loading, actions, views, dry run
//! against commit, idempotency, serialization per session, failures that persist nothing, the
//! audit log and server-sent events.

use crate::serve::{Answer, Server, assert_documents_every_route, assert_error, config, start};
use http::StatusCode;
use serde_json::{Value, json};
use std::path::Path;

/// The seed's calculator.
pub fn calc_source() -> String {
    std::fs::read_to_string(crate::support::root().join("examples/apps/calc.js")).unwrap()
}

/// A counter in the ES-module form, with actions that read the clock and the random
/// generator, fail, throw, spin and store text a view shows.
pub const COUNTER: &str = r#"export const manifest = { name: "counter", version: "1.0.0" };
export function init(env) { return { n: 0, evil: "" }; }
export function view(state) {
  return { type: "counter", title: state.evil, value: state.n, presentation: { color: "blue" },
    children: [
      { type: "note", audience: "human", text: "for people " + state.evil },
      { type: "hint", audience: "agent", text: "call inc" },
    ] };
}
export const actions = {
  inc(state, params, env) {
    const by = params.by ?? 1;
    const n = state.n + by;
    const at = new Date().toISOString();
    const r = Math.random();
    return { state: { ...state, n }, result: { n, now: Date.now(), at, r },
      audit_preview: `INC ${state.n}+${by} -> ${n} at ${at} r=${r}`,
      events: [{ type: "counter.changed", n }] };
  },
  fail(state) { return { state: { ...state, n: -1 }, error: { code: "NOPE", message: "refused" }, audit_preview: "FAIL" }; },
  boom() { throw new TypeError("boom"); },
  spin() { for (;;) {} },
  evil(state, params) { return { state: { ...state, evil: params.text }, audit_preview: "EVIL" }; },
};
"#;

/// Policies for limits: little fuel, and a short deadline with plenty of fuel.
fn limit_policies(policies: &Path) {
    std::fs::write(
        policies.join("tight.toml"),
        "name = \"tight\"\n[limits]\nfuel = 60_000_000\ntimeout = \"20s\"\n",
    )
    .unwrap();
    std::fs::write(
        policies.join("slow.toml"),
        "name = \"slow\"\n[limits]\nfuel = 30_000_000_000\ntimeout = \"300ms\"\n",
    )
    .unwrap();
}

pub fn server(name: &str) -> Server {
    let config = config(name, false);
    limit_policies(config.policies.as_ref().unwrap());
    start(config)
}

pub async fn load(server: &Server, name: &str, source: &str, policy: &str) -> Answer {
    server
        .call(
            "POST",
            "/v1/apps",
            None,
            json!({"name": name, "source": source, "policy": policy}),
        )
        .await
}

pub async fn act(server: &Server, app: &str, body: Value) -> Answer {
    server
        .call("POST", &format!("/v1/apps/{app}/actions"), None, body)
        .await
}

async fn act_key(server: &Server, app: &str, key: &str, body: Value) -> Answer {
    server
        .call_with(
            "POST",
            &format!("/v1/apps/{app}/actions"),
            None,
            &[("idempotency-key", key)],
            body,
        )
        .await
}

async fn counter(server: &Server, app: &str, session: &str) -> Value {
    let view = server
        .call(
            "GET",
            &format!("/v1/apps/{app}/view?session_id={session}&audience=agent"),
            None,
            Value::Null,
        )
        .await;
    assert_eq!(view.status, StatusCode::OK, "{}", view.body);
    view.body["value"].clone()
}

#[tokio::test]
async fn apps_load_list_show_and_unload_in_both_forms() {
    let server = server("apps-load");
    let calc = load(&server, "calc", &calc_source(), "default").await;
    assert_eq!(calc.status, StatusCode::CREATED, "{}", calc.body);
    assert_eq!(
        calc.body["manifest"],
        json!({"name": "calc", "version": "1.0.0"})
    );
    assert_eq!(
        calc.body["actions"],
        json!(["calc.input", "calc.op", "calc.equals", "calc.clear"])
    );
    let sha = calc.body["sha256"].as_str().unwrap().to_owned();
    assert_eq!(sha.len(), 64);
    let module = load(&server, "counter", COUNTER, "default").await;
    assert_eq!(module.status, StatusCode::CREATED, "{}", module.body);
    assert_eq!(module.body["manifest"]["name"], "counter");
    assert_eq!(module.body["actions"].as_array().unwrap().len(), 5);

    let list = server.call("GET", "/v1/apps", None, Value::Null).await;
    let names: Vec<&str> = list
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["calc", "counter"]);
    let shown = server.call("GET", "/v1/apps/calc", None, Value::Null).await;
    assert_eq!(shown.body["sha256"], sha.as_str());

    // A syntax error comes back typed, with its line and column in the app.
    let broken = load(
        &server,
        "broken",
        "export const manifest = {};\nexport function init() {\n  return {n: 0 +;\n}\n",
        "default",
    )
    .await;
    assert_error(&broken, 422, "guest_syntax");
    assert_eq!(
        broken.body["error"]["location"]["line"], 3,
        "{}",
        broken.body
    );
    assert!(broken.body["error"]["location"]["column"].as_u64().unwrap() > 0);
    // A module that is not an app.
    let plain = load(&server, "plain", "export default () => 1", "default").await;
    assert_error(&plain, 400, "invalid_input");
    let unknown = load(&server, "calc2", &calc_source(), "nope").await;
    assert_error(&unknown, 404, "policy_not_found");
    let bad_name = load(&server, "../x", &calc_source(), "default").await;
    assert_error(&bad_name, 400, "invalid_input");

    // Apps are durable: a server on the same data folder still has them, and runs them.
    let seven = act(
        &server,
        "calc",
        json!({"action": "calc.input", "params": {"digit": 7}}),
    )
    .await;
    assert_eq!(seven.status, StatusCode::OK, "{}", seven.body);
    let config = server.state.config.clone();
    drop(server);
    let server = start(config);
    let listed = server.call("GET", "/v1/apps", None, Value::Null).await;
    assert_eq!(listed.body.as_array().unwrap().len(), 2);
    let view = server
        .call(
            "GET",
            "/v1/apps/calc/view?audience=agent",
            None,
            Value::Null,
        )
        .await;
    assert_eq!(view.body["children"][0]["value"], "7", "{}", view.body);

    let gone = server
        .call("DELETE", "/v1/apps/calc", None, Value::Null)
        .await;
    assert_eq!(gone.status, StatusCode::OK, "{}", gone.body);
    assert_eq!(gone.body, json!({"name": "calc", "unloaded": true}));
    assert_error(
        &server.call("GET", "/v1/apps/calc", None, Value::Null).await,
        404,
        "app_not_found",
    );
    assert_error(
        &act(&server, "calc", json!({"action": "calc.clear"})).await,
        404,
        "app_not_found",
    );
    assert_error(
        &server
            .call("DELETE", "/v1/apps/calc", None, Value::Null)
            .await,
        404,
        "app_not_found",
    );
    server.assert_fine(None).await;
}

#[tokio::test]
async fn apps_calculator_divides_and_views_filter_by_audience() {
    let server = server("apps-calc");
    assert_eq!(
        load(&server, "calc", &calc_source(), "default")
            .await
            .status,
        StatusCode::CREATED
    );
    let steps = [
        json!({"action": "calc.input", "params": {"digit": 7}}),
        json!({"action": "calc.op", "params": {"op": "divide"}}),
        json!({"action": "calc.input", "params": {"digit": 2}}),
    ];
    for step in steps {
        let answer = act(&server, "calc", step).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    }
    let equals = act(
        &server,
        "calc",
        json!({"action": "calc.equals", "intent": "finish"}),
    )
    .await;
    assert_eq!(equals.status, StatusCode::OK, "{}", equals.body);
    assert_eq!(equals.body["result"]["value"], 3.5);
    assert_eq!(equals.body["audit_preview"], "DIVIDE 7÷2 -> 3.5");
    assert_eq!(equals.body["state"]["acc"], 3.5);
    assert_eq!(equals.body["seq"], 4);
    assert_eq!(equals.body["view"]["children"][0]["value"], "3.5");

    let agent = server
        .call(
            "GET",
            "/v1/apps/calc/view?audience=agent",
            None,
            Value::Null,
        )
        .await;
    let text = agent.body.to_string();
    assert!(
        !text.contains("presentation") && !text.contains("history"),
        "{text}"
    );
    assert!(text.contains("calc.equals"), "{text}");
    let human = server
        .call(
            "GET",
            "/v1/apps/calc/view?audience=human",
            None,
            Value::Null,
        )
        .await;
    let text = human.body.to_string();
    assert!(
        text.contains("presentation") && text.contains("7÷2 -> 3.5"),
        "{text}"
    );
    assert!(!text.contains("calc.equals"), "{text}");
    let jace = server
        .call_with(
            "GET",
            "/v1/apps/calc/view",
            None,
            &[("accept", "application/jace+json")],
            Value::Null,
        )
        .await;
    assert_eq!(jace.headers["content-type"], "application/jace+json");
    assert_eq!(jace.body["type"], "calculator");
    let bad = server
        .call(
            "GET",
            "/v1/apps/calc/view?audience=robot",
            None,
            Value::Null,
        )
        .await;
    assert_error(&bad, 400, "invalid_input");
    let unknown = act(&server, "calc", json!({"action": "calc.sqrt"})).await;
    assert_eq!(unknown.status, StatusCode::BAD_REQUEST, "{}", unknown.body);
    assert_eq!(unknown.body["error"]["code"], "unknown_action");
    server.assert_fine(None).await;
}

#[tokio::test]
async fn apps_html_view_cannot_inject_script() {
    let server = server("apps-html");
    assert_eq!(
        load(&server, "counter", COUNTER, "default").await.status,
        StatusCode::CREATED
    );
    let hostile = "</title><script>alert(1)</script><img src=x onerror=alert(2)>\"'";
    let stored = act(
        &server,
        "counter",
        json!({"action": "evil", "params": {"text": hostile}}),
    )
    .await;
    assert_eq!(stored.status, StatusCode::OK, "{}", stored.body);
    let page = server
        .call_with(
            "GET",
            "/v1/apps/counter/view",
            None,
            &[("accept", "text/html")],
            Value::Null,
        )
        .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    assert!(page.headers.contains_key("content-security-policy"));
    let html = page.body.as_str().unwrap();
    assert!(!html.to_ascii_lowercase().contains("<script"), "{html}");
    assert!(!html.contains("<img"), "{html}");
    assert!(
        html.contains("<title>&lt;/title&gt;&lt;script&gt;"),
        "{html}"
    );
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{html}"
    );
    // The human view keeps the note and drops the agent's hint.
    assert!(
        html.contains("for people") && !html.contains("call inc"),
        "{html}"
    );
    server.assert_fine(None).await;
}

#[tokio::test]
async fn apps_dry_run_persists_nothing_and_previews_the_commit() {
    let server = server("apps-dry");
    assert_eq!(
        load(&server, "counter", COUNTER, "default").await.status,
        StatusCode::CREATED
    );
    let body = json!({"action": "inc", "params": {"by": 2}, "session_id": "s1", "intent": "try"});
    let mut dry = body.clone();
    dry["dry_run"] = true.into();
    let preview = act(&server, "counter", dry.clone()).await;
    assert_eq!(preview.status, StatusCode::OK, "{}", preview.body);
    assert_eq!(preview.body["dry_run"], true);
    let again = act(&server, "counter", dry).await;
    assert_eq!(again.body, preview.body, "a replayed dry run is identical");
    // `dry_run` in env is a dry run too.
    let env_dry = act(&server, "counter", json!({"action": "inc", "params": {"by": 2}, "session_id": "s1", "intent": "try", "env": {"dry_run": true}})).await;
    assert_eq!(env_dry.body["result"], preview.body["result"]);
    assert_eq!(
        counter(&server, "counter", "s1").await,
        0,
        "a dry run persists nothing"
    );

    let commit = act(&server, "counter", body).await;
    assert_eq!(commit.status, StatusCode::OK, "{}", commit.body);
    assert_eq!(commit.body["dry_run"], false);
    assert_eq!(commit.body["result"], preview.body["result"]);
    assert_eq!(commit.body["audit_preview"], preview.body["audit_preview"]);
    assert_eq!(commit.body["result"]["n"], 2);
    assert_eq!(counter(&server, "counter", "s1").await, 2);

    // The clock reads `env.now` when given.
    let now = act(&server, "counter", json!({"action": "inc", "session_id": "s1", "dry_run": true, "env": {"now": "2030-01-02T03:04:05Z"}})).await;
    assert_eq!(
        now.body["result"]["at"], "2030-01-02T03:04:05.000Z",
        "{}",
        now.body
    );
    assert_eq!(now.body["result"]["now"], 1_893_553_445_000u64);
    let bad = act(
        &server,
        "counter",
        json!({"action": "inc", "env": {"now": "yesterday"}}),
    )
    .await;
    assert_error(&bad, 400, "invalid_input");
    // Another session sees other random numbers for the same action number.
    let other = act(
        &server,
        "counter",
        json!({"action": "inc", "params": {"by": 2}, "session_id": "s2", "dry_run": true}),
    )
    .await;
    assert_ne!(other.body["result"]["r"], commit.body["result"]["r"]);
    // The next action of s1 gets a new seed.
    let next = act(
        &server,
        "counter",
        json!({"action": "inc", "params": {"by": 2}, "session_id": "s1", "dry_run": true}),
    )
    .await;
    assert_ne!(next.body["result"]["r"], commit.body["result"]["r"]);
    server.assert_fine(None).await;
}

#[tokio::test]
async fn apps_idempotency_key_replays_conflicts_and_runs_once() {
    let server = server("apps-idem");
    assert_eq!(
        load(&server, "counter", COUNTER, "default").await.status,
        StatusCode::CREATED
    );
    let body = json!({"action": "inc", "session_id": "k"});
    let first = act_key(&server, "counter", "key-1", body.clone()).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    let replay = act_key(&server, "counter", "key-1", body.clone()).await;
    assert_eq!(replay.body, first.body);
    assert_eq!(replay.headers["idempotent-replayed"], "true");
    assert_eq!(
        counter(&server, "counter", "k").await,
        1,
        "the replay ran nothing"
    );
    let conflict = act_key(
        &server,
        "counter",
        "key-1",
        json!({"action": "inc", "session_id": "k", "params": {"by": 5}}),
    )
    .await;
    assert_error(&conflict, 422, "idempotency_conflict");
    // A dry run neither uses nor consumes a key.
    let dry = act_key(
        &server,
        "counter",
        "key-2",
        json!({"action": "inc", "session_id": "k", "dry_run": true}),
    )
    .await;
    assert_eq!(dry.status, StatusCode::OK);
    assert!(!dry.headers.contains_key("idempotent-replayed"));
    // The same key on another session is another key.
    let elsewhere = act_key(
        &server,
        "counter",
        "key-1",
        json!({"action": "inc", "session_id": "k2"}),
    )
    .await;
    assert!(!elsewhere.headers.contains_key("idempotent-replayed"));
    assert_eq!(counter(&server, "counter", "k2").await, 1);

    // Two concurrent requests with one key: one runs.
    let calls = (0..2).map(|_| act_key(&server, "counter", "key-3", body.clone()));
    let answers = futures_join(calls).await;
    assert!(answers.iter().all(|a| a.status == StatusCode::OK));
    assert_eq!(
        answers
            .iter()
            .filter(|a| a.headers.contains_key("idempotent-replayed"))
            .count(),
        1
    );
    assert_eq!(answers[0].body, answers[1].body);
    assert_eq!(counter(&server, "counter", "k").await, 2);
    server.assert_fine(None).await;
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// Issue 38 (13): an app action's key record is kept in its tenant's account with its keyed
/// runs' (`--max-keyed-records`): past the quota a keyed action is 429 `capacity_exhausted`
/// and does not run, while a replay, a keyless action and a dry run still answer; the
/// account is exactly what the stored records take, and unloading the app and the purge
/// uncount them.
async fn app_keys_count_in_the_tenants_quota(mut cfg: palisade::serve::Config) {
    cfg.keyed_quota = palisade::serve::idempotency::KeyQuota {
        records: 2,
        bytes: 1 << 20,
    };
    let server = start(cfg);
    let module = load(&server, "counter", COUNTER, "default").await;
    assert_eq!(module.status, StatusCode::CREATED, "{}", module.body);
    let inc = json!({"action": "inc", "session_id": "q"});
    let run = json!({"policy": "default", "source": "export default (x) => x + 1", "input": 1});
    let keyed_run = |key: &'static str| {
        let (server, run) = (&server, run.clone());
        async move {
            let headers = [("idempotency-key", key)];
            server
                .call_with("POST", "/v1/run", None, &headers, run)
                .await
        }
    };
    assert_eq!(keyed_run("r1").await.status, StatusCode::OK);
    let first = act_key(&server, "counter", "a1", inc.clone()).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    assert_exact_account(&server, 2);
    let refused = act_key(&server, "counter", "a2", inc.clone()).await;
    assert_error(&refused, 429, "capacity_exhausted");
    assert_eq!(counter(&server, "counter", "q").await, 1, "not run");
    assert_error(&keyed_run("r2").await, 429, "capacity_exhausted");
    let replay = act_key(&server, "counter", "a1", inc.clone()).await;
    assert_eq!(replay.headers["idempotent-replayed"], "true");
    assert_eq!(replay.body, first.body);
    let dry = act_key(
        &server,
        "counter",
        "a3",
        json!({"action": "inc", "session_id": "q", "dry_run": true}),
    )
    .await;
    assert_eq!(
        dry.status,
        StatusCode::OK,
        "a dry run keeps nothing: {}",
        dry.body
    );
    let keyless = act(&server, "counter", inc.clone()).await;
    assert_eq!(keyless.status, StatusCode::OK, "{}", keyless.body);
    assert_exact_account(&server, 2);
    // Unloading the app takes its record out of the account with it.
    let gone = server
        .call("DELETE", "/v1/apps/counter", None, Value::Null)
        .await;
    assert_eq!(gone.status, StatusCode::OK, "{}", gone.body);
    assert_exact_account(&server, 1);
    let module = load(&server, "counter", COUNTER, "default").await;
    assert_eq!(module.status, StatusCode::CREATED, "{}", module.body);
    let again = act_key(&server, "counter", "a2", inc.clone()).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_exact_account(&server, 2);
    // The purge takes both kinds out, to exactly nothing.
    let later = unix_ms() + 2 * server.state.config.idempotency_ttl.as_millis() as u64;
    let purged = server.state.ledger.purge_at(later, 100).unwrap();
    assert_eq!(purged, [1, 1]);
    assert_exact_account(&server, 0);
    let fresh = act_key(&server, "counter", "a4", inc).await;
    assert_eq!(fresh.status, StatusCode::OK, "{}", fresh.body);
    server.assert_fine(None).await;
}

/// The tenant `local`'s account holds `records` records, and its bytes are exactly what the
/// stored key records of both tables take (key and value).
fn assert_exact_account(server: &Server, records: u64) {
    use palisade::serve::store::{Scan, Table};
    let store = &server.state.store;
    let (mut stored, mut bytes) = (0, 0);
    for table in [Table::RunKeys, Table::AppKeys] {
        for (key, value) in store.scan(table, Scan::prefix("local\n")).unwrap() {
            stored += 1;
            bytes += (key.len() + value.len()) as u64;
        }
    }
    let usage = server.state.ledger.usage("local").unwrap();
    assert_eq!((usage.records, usage.bytes), (stored, bytes));
    assert_eq!(usage.records, records, "{usage:?}");
}

#[tokio::test]
async fn issue_38_app_keys_count_in_the_tenants_quota() {
    app_keys_count_in_the_tenants_quota(config("apps-keyed-quota", false)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue_38_app_keys_count_in_the_tenants_quota_on_redis() {
    let mut cfg = config("apps-keyed-quota-redis", false);
    let redis = crate::replicas::Redis::start(cfg.data.with_file_name("redis"));
    cfg.store = Some(redis.url());
    app_keys_count_in_the_tenants_quota(cfg).await;
}

#[tokio::test]
async fn apps_idempotency_records_are_purged_after_their_ttl() {
    use palisade::serve::apps::{actions::session_key, records::key_record};
    use palisade::serve::idempotency::PURGE_SCAN;
    let server = server("apps-purge");
    assert_eq!(
        load(&server, "counter", COUNTER, "default").await.status,
        StatusCode::CREATED
    );
    let body = json!({"action": "inc", "session_id": "p"});
    let old = act_key(&server, "counter", "old-key", body.clone()).await;
    assert_eq!(old.status, StatusCode::OK, "{}", old.body);
    let run = server
        .call_with(
            "POST",
            "/v1/run",
            None,
            &[("idempotency-key", "run-key")],
            json!({"policy": "default", "source": "export default (x) => x + 1", "input": 1}),
        )
        .await;
    assert_eq!(run.status, StatusCode::OK, "{}", run.body);
    // Records written after `between` are younger than it (the clock has milliseconds).
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let between = unix_ms();
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let young = act_key(&server, "counter", "young-key", body.clone()).await;
    assert_eq!(young.status, StatusCode::OK, "{}", young.body);
    assert_eq!(counter(&server, "counter", "p").await, 2);

    // A TTL after `between`, the first two records are expired and the young one is not.
    let ttl = server.state.config.idempotency_ttl.as_millis() as u64;
    let ledger = &server.state.ledger;
    // One record of each table: `POST /v1/run`'s, then the apps'.
    let purged = ledger.purge_at(between + ttl, PURGE_SCAN).unwrap();
    assert_eq!(purged, [1, 1]);
    let skey = session_key("local", "counter", "p");
    let store = &server.state.store;
    assert!(
        key_record(store, &format!("{skey}old-key"))
            .unwrap()
            .is_none()
    );
    assert!(
        key_record(store, &format!("{skey}young-key"))
            .unwrap()
            .is_some()
    );
    // The purged key runs again; the young one still replays and runs nothing.
    let again = act_key(&server, "counter", "old-key", body.clone()).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert!(!again.headers.contains_key("idempotent-replayed"));
    assert_eq!(again.body["seq"], 3);
    let replay = act_key(&server, "counter", "young-key", body.clone()).await;
    assert_eq!(replay.headers["idempotent-replayed"], "true");
    assert_eq!(replay.body, young.body);
    assert_eq!(counter(&server, "counter", "p").await, 3);
    let rerun = server
        .call_with(
            "POST",
            "/v1/run",
            None,
            &[("idempotency-key", "run-key")],
            json!({"policy": "default", "source": "export default (x) => x + 1", "input": 1}),
        )
        .await;
    assert_eq!(rerun.status, StatusCode::OK, "{}", rerun.body);
    assert!(!rerun.headers.contains_key("idempotent-replayed"));

    // A pass reads at most `scan` records and the next goes on from there: five app records
    // (and the run's) expired far in the future take three passes of two.
    for key in ["b1", "b2", "b3"] {
        let b = act_key(
            &server,
            "counter",
            key,
            json!({"action": "inc", "session_id": "q"}),
        )
        .await;
        assert_eq!(b.status, StatusCode::OK, "{}", b.body);
    }
    let later = unix_ms() + 2 * ttl;
    let passes: Vec<Vec<usize>> = (0..4)
        .map(|pass| {
            let purged = ledger.purge_at(later, 2).unwrap();
            if pass == 0 {
                // Stopped before the end of the table: the reaper runs the next pass at once.
                assert!(ledger.purge_unfinished());
            }
            purged
        })
        .collect();
    assert_eq!(
        passes.iter().map(|p| p[1]).collect::<Vec<_>>(),
        [2, 2, 1, 0]
    );
    assert_eq!(passes.iter().map(|p| p[0]).sum::<usize>(), 1);
    ledger.purge_at(later, PURGE_SCAN).unwrap();
    assert!(!ledger.purge_unfinished());
    assert!(
        key_record(store, &format!("{skey}young-key"))
            .unwrap()
            .is_none()
    );
    server.assert_fine(None).await;
}

/// Run futures concurrently on this task.
async fn futures_join<F: std::future::Future<Output = Answer>>(
    calls: impl Iterator<Item = F>,
) -> Vec<Answer> {
    let handles: Vec<_> = calls.map(Box::pin).collect();
    let mut out = Vec::new();
    let mut pending: Vec<_> = handles.into_iter().map(Some).collect();
    let mut results: Vec<Option<Answer>> = (0..pending.len()).map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut done = true;
        for (i, slot) in pending.iter_mut().enumerate() {
            if let Some(f) = slot {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(a) => {
                        results[i] = Some(a);
                        *slot = None;
                    }
                    std::task::Poll::Pending => done = false,
                }
            }
        }
        if done {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    out.extend(results.into_iter().map(Option::unwrap));
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn apps_actions_on_one_session_are_serialized() {
    let server = server("apps-serial");
    assert_eq!(
        load(&server, "counter", COUNTER, "default").await.status,
        StatusCode::CREATED
    );
    let mut tasks = Vec::new();
    for i in 0..50 {
        let state = server.state.clone();
        let session = if i % 2 == 0 { "even" } else { "odd" };
        tasks.push(tokio::spawn(async move {
            let s = Server {
                state,
                data: std::path::PathBuf::new(),
            };
            act(&s, "counter", json!({"action": "inc", "session_id": "one"}))
                .await
                .status
                == StatusCode::OK
                && act(
                    &s,
                    "counter",
                    json!({"action": "inc", "session_id": session}),
                )
                .await
                .status
                    == StatusCode::OK
        }));
    }
    for task in tasks {
        assert!(task.await.unwrap());
    }
    assert_eq!(
        counter(&server, "counter", "one").await,
        50,
        "no lost update"
    );
    assert_eq!(counter(&server, "counter", "even").await, 25);
    assert_eq!(counter(&server, "counter", "odd").await, 25);
    server.assert_fine(None).await;
}

#[tokio::test]
async fn apps_failed_actions_persist_nothing_and_return_their_code() {
    let server = server("apps-fail");
    for (name, policy) in [("counter", "default"), ("tight", "tight"), ("slow", "slow")] {
        let loaded = load(&server, name, COUNTER, policy).await;
        assert_eq!(loaded.status, StatusCode::CREATED, "{}", loaded.body);
        let one = act(&server, name, json!({"action": "inc", "session_id": "f"})).await;
        assert_eq!(one.status, StatusCode::OK, "{}", one.body);
    }
    let failed = act_key(
        &server,
        "counter",
        "f-1",
        json!({"action": "fail", "session_id": "f"}),
    )
    .await;
    assert_eq!(failed.status.as_u16(), 422, "{}", failed.body);
    assert_eq!(
        failed.body["error"],
        json!({"code": "NOPE", "message": "refused"})
    );
    assert_eq!(failed.body["audit_preview"], "FAIL");
    assert_eq!(failed.body["state"]["n"], 1, "the state as it stays");
    let thrown = act(
        &server,
        "counter",
        json!({"action": "boom", "session_id": "f"}),
    )
    .await;
    assert_error(&thrown, 422, "guest_exception");
    assert_eq!(thrown.body["state"]["n"], 1);
    let fuel = act(
        &server,
        "tight",
        json!({"action": "spin", "session_id": "f"}),
    )
    .await;
    assert_error(&fuel, 429, "fuel_exhausted");
    assert_eq!(fuel.body["error"]["message"], "Fuel exhausted");
    let timeout = act(
        &server,
        "slow",
        json!({"action": "spin", "session_id": "f"}),
    )
    .await;
    assert_error(&timeout, 408, "timeout");
    assert_eq!(timeout.body["error"]["message"], "Action timed out");
    for app in ["counter", "tight", "slow"] {
        assert_eq!(
            counter(&server, app, "f").await,
            1,
            "{app}: nothing persisted"
        );
    }
    // The failed commit's key was not consumed: it runs now.
    let retried = act_key(
        &server,
        "counter",
        "f-1",
        json!({"action": "fail", "session_id": "f"}),
    )
    .await;
    assert!(!retried.headers.contains_key("idempotent-replayed"));
    server.assert_fine(None).await;
}

#[tokio::test]
async fn apps_every_action_is_audited() {
    let server = server("apps-audit");
    assert_eq!(
        load(&server, "counter", COUNTER, "default").await.status,
        StatusCode::CREATED
    );
    act(
        &server,
        "counter",
        json!({"action": "inc", "dry_run": true, "intent": "look", "session_id": "a"}),
    )
    .await;
    act_key(
        &server,
        "counter",
        "audit-key",
        json!({"action": "inc", "params": {"by": 3}, "intent": "do it", "session_id": "a"}),
    )
    .await;
    act(
        &server,
        "counter",
        json!({"action": "fail", "session_id": "a"}),
    )
    .await;
    let log = std::fs::read_to_string(server.state.config.audit_log.as_ref().unwrap()).unwrap();
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["capability"] == "app.action")
        .collect();
    assert_eq!(lines.len(), 3, "{log}");
    let policy_sha = server.state.policies.current().policies["default"]
        .sha256()
        .to_owned();
    assert_eq!(lines[0]["outcome"], "dry_run");
    assert_eq!(lines[0]["intent"], "look");
    let commit = &lines[1];
    assert_eq!(commit["outcome"], "committed");
    assert_eq!(commit["action"], "inc");
    assert_eq!(commit["params"], json!({"by": 3}));
    assert_eq!(commit["intent"], "do it");
    assert_eq!(commit["session"], "a");
    assert_eq!(commit["idempotency_key"], "audit-key");
    assert!(
        commit["audit_preview"]
            .as_str()
            .unwrap()
            .starts_with("INC 0+3 -> 3")
    );
    assert_eq!(commit["policy_sha256"], policy_sha.as_str());
    assert_eq!(commit["tenant"], "local");
    assert_eq!(lines[2]["outcome"], "NOPE");
    assert_eq!(lines[2]["audit_preview"], "FAIL");
    // An action refused for its 2 MB of params (over the policy's input limit) writes a
    // bounded line: size, digest and a prefix.
    let huge = "p".repeat(2 << 20);
    let refused = act(
        &server,
        "counter",
        json!({"action": "inc", "params": {"x": huge}, "session_id": "a"}),
    )
    .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
    let log = std::fs::read_to_string(server.state.config.audit_log.as_ref().unwrap()).unwrap();
    let last = log.lines().last().unwrap();
    assert!(last.len() < 16 * 1024, "a line of {} bytes", last.len());
    let line: Value = serde_json::from_str(last).unwrap();
    assert_eq!(line["outcome"], "invalid_input");
    assert_eq!(line["params"]["truncated"], true);
    assert!(line["params"]["bytes"].as_u64().unwrap() > 2 << 20);
    server.assert_fine(None).await;
}

/// Read a server-sent event stream until `n` events arrived (at most 30 s); their ids and data.
pub async fn read_events(response: axum::response::Response, n: usize) -> Vec<(u64, Value)> {
    use http_body_util::BodyExt;
    let mut body = response.into_body();
    let mut text = String::new();
    let mut events = Vec::new();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while events.len() < n {
        let frame = tokio::time::timeout_at(deadline, body.frame())
            .await
            .expect("the events arrive within 30 s")
            .expect("the stream goes on")
            .unwrap();
        if let Ok(data) = frame.into_data() {
            text.push_str(&String::from_utf8_lossy(&data));
        }
        while let Some((block, rest)) = text.split_once("\n\n") {
            let (mut id, mut data) = (None, None);
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("id:") {
                    id = v.trim().parse().ok();
                } else if let Some(v) = line.strip_prefix("data:") {
                    data = serde_json::from_str(v.trim()).ok();
                }
            }
            if let (Some(id), Some(data)) = (id, data) {
                events.push((id, data));
            }
            text = rest.to_owned();
        }
    }
    events
}

async fn stream(server: &Server, uri: &str, last: Option<&str>) -> axum::response::Response {
    use tower::ServiceExt;
    let mut request = http::Request::builder().uri(uri);
    if let Some(last) = last {
        request = request.header("last-event-id", last);
    }
    let response = palisade::serve::router(server.state.clone())
        .oneshot(request.body(axum::body::Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    response
}

/// An app whose `burst` action writes `params.n` events.
const BURST: &str = r#"export const manifest = { name: "burst", version: "1.0.0" };
export function init() { return { sent: 0 }; }
export function view(state) { return { type: "burst", value: state.sent }; }
export const actions = {
  burst(state, params) {
    const events = [];
    for (let i = 0; i < params.n; i++) events.push({ type: "tick", i: state.sent + i + 1 });
    return { state: { sent: state.sent + params.n }, result: {}, audit_preview: "BURST",
      events };
  },
};
"#;

/// The text of a stream until its frame with id `id` has arrived (at most 30 s).
async fn read_until_id(response: axum::response::Response, id: u64) -> String {
    use http_body_util::BodyExt;
    let mut body = response.into_body();
    let mut text = String::new();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while !text.contains(&format!("id: {id}\n")) && !text.contains(&format!("id:{id}\n")) {
        let frame = tokio::time::timeout_at(deadline, body.frame())
            .await
            .expect("the events arrive within 30 s")
            .expect("the stream goes on")
            .unwrap();
        if let Ok(data) = frame.into_data() {
            text.push_str(&String::from_utf8_lossy(&data));
        }
    }
    text
}

/// Issue 38 (13): the log keeps an app session's last 1,000 events; older ones are dropped
/// when newer ones are committed, and a reader resuming before them gets a `gap` event with
/// the ids it missed, then the events kept, in order. A reader within them sees no gap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue_38_app_events_are_kept_to_a_bound_and_readers_see_the_gap() {
    let server = server("apps-events-kept");
    assert_eq!(
        load(&server, "burst", BURST, "default").await.status,
        StatusCode::CREATED
    );
    let kept = palisade::serve::apps::events::MAX_EVENTS_PER_SESSION;
    assert_eq!(kept, 1_000);
    for _ in 0..12 {
        let done = act(
            &server,
            "burst",
            json!({"action": "burst", "params": {"n": 100}, "session_id": "b"}),
        )
        .await;
        assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    }
    // 1,200 events written; the store holds the last 1,000.
    let scan = palisade::serve::store::Scan::prefix("");
    let stored = server
        .state
        .store
        .scan(palisade::serve::store::Table::AppEvents, scan)
        .unwrap();
    assert_eq!(stored.len() as u64, kept);
    let first: Value = serde_json::from_str(&stored[0].1).unwrap();
    assert_eq!(first["id"], 201);
    let text = read_until_id(
        stream(&server, "/v1/apps/burst/events?session_id=b", Some("0")).await,
        1200,
    )
    .await;
    let gap = "event: gap\ndata: {\"first_missing\":1,\"last_missing\":200}\n\n";
    assert!(text.starts_with(gap), "{}", &text[..text.len().min(300)]);
    let ids: Vec<u64> = text
        .lines()
        .filter_map(|l| l.strip_prefix("id:").map(|v| v.trim().parse().unwrap()))
        .collect();
    assert_eq!(ids, (201..=1200).collect::<Vec<_>>());
    assert_eq!(text.matches("event: gap").count(), 1);
    // From within what is kept: no gap.
    let text = read_until_id(
        stream(&server, "/v1/apps/burst/events?session_id=b", Some("1100")).await,
        1200,
    )
    .await;
    assert!(!text.contains("gap"), "{text}");
    assert!(
        text.contains("id: 1101\n") || text.contains("id:1101\n"),
        "{text}"
    );
    server.assert_fine(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apps_events_stream_committed_events_and_resume() {
    let server = server("apps-events");
    assert_eq!(
        load(&server, "counter", COUNTER, "default").await.status,
        StatusCode::CREATED
    );
    for _ in 0..3 {
        act(
            &server,
            "counter",
            json!({"action": "inc", "session_id": "e"}),
        )
        .await;
    }
    act(
        &server,
        "counter",
        json!({"action": "inc", "session_id": "e", "dry_run": true}),
    )
    .await;
    act(
        &server,
        "counter",
        json!({"action": "fail", "session_id": "e"}),
    )
    .await;
    let live = stream(&server, "/v1/apps/counter/events?session_id=e", None).await;
    // A commit while the stream is open arrives too.
    let state = server.state.clone();
    let later = tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let s = Server {
            state,
            data: std::path::PathBuf::new(),
        };
        act(&s, "counter", json!({"action": "inc", "session_id": "e"}))
            .await
            .status
    });
    let events = read_events(live, 4).await;
    assert_eq!(later.await.unwrap(), StatusCode::OK);
    let ids: Vec<u64> = events.iter().map(|e| e.0).collect();
    assert_eq!(ids, [1, 2, 3, 4], "only commits, in order");
    let ns: Vec<&Value> = events.iter().map(|e| &e.1["n"]).collect();
    assert_eq!(ns, [1, 2, 3, 4]);
    assert_eq!(events[0].1["type"], "counter.changed");
    // Last-Event-ID resumes from the durable log.
    let resumed = read_events(
        stream(&server, "/v1/apps/counter/events?session_id=e", Some("2")).await,
        2,
    )
    .await;
    assert_eq!(resumed.iter().map(|e| e.0).collect::<Vec<_>>(), [3, 4]);
    let missing = server
        .call("GET", "/v1/apps/nope/events", None, Value::Null)
        .await;
    assert_error(&missing, 404, "app_not_found");
    server.assert_fine(None).await;
}

/// Open an event stream as `key`: the stream, or the refusal as an answer.
async fn try_stream(
    server: &Server,
    uri: &str,
    key: Option<&str>,
) -> Result<axum::response::Response, Answer> {
    use tower::ServiceExt;
    let mut request = http::Request::builder().uri(uri);
    if let Some(key) = key {
        request = request.header("authorization", format!("Bearer {key}"));
    }
    let request = request.body(axum::body::Body::empty()).unwrap();
    let response = palisade::serve::router(server.state.clone())
        .oneshot(request)
        .await
        .unwrap();
    if response.status() == StatusCode::OK {
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        return Ok(response);
    }
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    Err(Answer {
        status,
        headers,
        body: serde_json::from_slice(&bytes).unwrap(),
    })
}

async fn open_streams(server: &Server) -> i64 {
    let metrics = server
        .call("GET", "/metrics", Some("operator-key"), Value::Null)
        .await;
    let text = metrics.body.as_str().unwrap().to_owned();
    text.lines()
        .find_map(|l| l.strip_prefix("palisade_app_event_streams "))
        .unwrap_or_else(|| panic!("no palisade_app_event_streams in {text}"))
        .parse()
        .unwrap()
}

/// The stream that `try_stream` opened.
fn opened(result: Result<axum::response::Response, Answer>) -> axum::response::Response {
    result.unwrap_or_else(|refused| panic!("refused: {} {}", refused.status, refused.body))
}

fn assert_full(refused: Result<axum::response::Response, Answer>, what: &str) {
    let Err(answer) = refused else {
        panic!("a stream past the cap of {what} was opened");
    };
    assert_error(&answer, 429, "capacity_exhausted");
    assert_eq!(answer.headers["retry-after"], "1");
    let note = answer.body["error"]["fix_note"].as_str().unwrap();
    assert!(note.contains(what), "{note}");
}

#[tokio::test]
async fn apps_event_streams_are_capped_and_a_closed_one_frees_its_slot() {
    let mut config = config("apps-streams", true);
    config.event_streams = palisade::serve::apps::events::StreamCaps {
        per_session: 2,
        per_tenant: 3,
        per_server: 4,
    };
    let server = start(config);
    let body = json!({"name": "counter", "source": COUNTER, "policy": "default"});
    for key in ["acme-key", "beta-key"] {
        let loaded = server
            .call("POST", "/v1/apps", Some(key), body.clone())
            .await;
        assert_eq!(loaded.status, StatusCode::CREATED, "{}", loaded.body);
    }
    let uri = |session: &str| format!("/v1/apps/counter/events?session_id={session}");
    let a1 = opened(try_stream(&server, &uri("s1"), Some("acme-key")).await);
    let a2 = opened(try_stream(&server, &uri("s1"), Some("acme-key")).await);
    assert_full(
        try_stream(&server, &uri("s1"), Some("acme-key")).await,
        "this session",
    );
    let a3 = opened(try_stream(&server, &uri("s2"), Some("acme-key")).await);
    assert_full(
        try_stream(&server, &uri("s3"), Some("acme-key")).await,
        "your key",
    );
    let b1 = opened(try_stream(&server, &uri("s1"), Some("beta-key")).await);
    assert_full(
        try_stream(&server, &uri("s2"), Some("beta-key")).await,
        "the server",
    );
    assert_eq!(open_streams(&server).await, 4);

    // A stream the client closes frees its slot at once, and the new one streams.
    drop(a1);
    assert_eq!(open_streams(&server).await, 3);
    let again = opened(try_stream(&server, &uri("s1"), Some("acme-key")).await);
    let acted = server
        .call(
            "POST",
            "/v1/apps/counter/actions",
            Some("acme-key"),
            json!({"action": "inc", "session_id": "s1"}),
        )
        .await;
    assert_eq!(acted.status, StatusCode::OK, "{}", acted.body);
    let events = read_events(again, 1).await;
    assert_eq!(events[0].0, 1);
    assert_eq!(events[0].1["n"], 1);
    drop((a2, a3, b1));
    assert_eq!(open_streams(&server).await, 0);
    server.assert_fine(Some("acme-key")).await;
}

#[tokio::test]
async fn apps_belong_to_their_tenant() {
    let server = start(config("apps-tenants", true));
    let body = json!({"name": "counter", "source": COUNTER, "policy": "default"});
    let loaded = server
        .call("POST", "/v1/apps", Some("acme-key"), body.clone())
        .await;
    assert_eq!(loaded.status, StatusCode::CREATED, "{}", loaded.body);
    let acted = server
        .call(
            "POST",
            "/v1/apps/counter/actions",
            Some("acme-key"),
            json!({"action": "inc"}),
        )
        .await;
    assert_eq!(acted.status, StatusCode::OK, "{}", acted.body);
    // Another tenant sees no such app, whatever the route.
    let list = server
        .call("GET", "/v1/apps", Some("beta-key"), Value::Null)
        .await;
    assert_eq!(list.body, json!([]));
    for (method, uri, body) in [
        ("GET", "/v1/apps/counter", Value::Null),
        ("POST", "/v1/apps/counter/actions", json!({"action": "inc"})),
        ("GET", "/v1/apps/counter/view", Value::Null),
        ("GET", "/v1/apps/counter/events", Value::Null),
        ("DELETE", "/v1/apps/counter", Value::Null),
    ] {
        let answer = server.call(method, uri, Some("beta-key"), body).await;
        assert_error(&answer, 404, "app_not_found");
    }
    let nobody = server
        .call("POST", "/v1/apps", Some("nobody-key"), body.clone())
        .await;
    assert_error(&nobody, 404, "policy_not_found");
    let anonymous = server.call("POST", "/v1/apps", None, body).await;
    assert_error(&anonymous, 401, "unauthorized");
    // acme's app and session are untouched.
    let view = server
        .call(
            "GET",
            "/v1/apps/counter/view?audience=agent",
            Some("acme-key"),
            Value::Null,
        )
        .await;
    assert_eq!(view.body["value"], 1, "{}", view.body);
    server.assert_fine(Some("acme-key")).await;
}

/// The seed's routes that `palisade serve --app` mounts at the root.
const SEED_ROUTES: &[(&str, &[&str])] = &[
    ("/load", &["post"]),
    ("/load-file", &["post"]),
    ("/init", &["post"]),
    ("/view", &["post"]),
    ("/press", &["post"]),
    ("/actions", &["post"]),
    ("/agent/events", &["get"]),
];

#[tokio::test]
async fn apps_seed_routes_are_in_the_openapi_document_with_app() {
    let mut with_app = config("apps-openapi", false);
    with_app.app = Some(crate::support::root().join("examples/apps/calc.js"));
    let server = start(with_app);
    assert_documents_every_route(&server, SEED_ROUTES).await;
    // Each one listed is served: its own answer, never the router's "no such route" or 405.
    for (path, methods) in SEED_ROUTES {
        for method in *methods {
            let method = method.to_uppercase();
            let body = if method == "GET" {
                Value::Null
            } else {
                json!({})
            };
            let answer = if *path == "/agent/events" {
                let response = try_stream(&server, path, None).await;
                assert!(response.is_ok(), "GET /agent/events is not a stream");
                continue;
            } else {
                server.call(&method, path, None, body).await
            };
            assert_ne!(
                answer.status,
                StatusCode::METHOD_NOT_ALLOWED,
                "{method} {path}"
            );
            let unrouted = answer.body["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("no such route"));
            assert!(!unrouted, "{method} {path}: {}", answer.body);
        }
    }
    // Without --app they are neither served nor listed.
    let plain = start(config("apps-openapi-plain", false));
    assert_documents_every_route(&plain, &[]).await;
    let unrouted = plain.call("POST", "/press", None, json!({})).await;
    assert_error(&unrouted, 404, "invalid_input");
    server.assert_fine(None).await;
}

/// Issue 38, items 1 and 10, through `POST /v1/apps`: an app's source is read with
/// `Script::with_modules`, so a source nested past the host's bound is refused typed (422
/// `guest_syntax`, nested too deeply) and the server stays up; 1,000 nested parentheses, which
/// a call parses, load (loading compiles the app, evaluating its top level as a call would).
#[tokio::test]
async fn regression_38_1_and_10_deeply_nested_app_sources() {
    let server = server("apps-deep");
    let app = |depth: usize| {
        let value = format!("{}1{}", "(".repeat(depth), ")".repeat(depth));
        format!(
            "export const manifest = {{ name: \"deep\", version: \"1.0.0\" }};\n\
             export function init() {{ return {{ n: {value} }}; }}\n\
             export function view(state) {{ return {{ type: \"n\", value: state.n }}; }}\n\
             export const actions = {{ get(state) {{ return {{ state }}; }} }};\n"
        )
    };
    let deep = load(&server, "deep", &app(1_000_000), "tight").await;
    assert_error(&deep, 422, "guest_syntax");
    let message = deep.body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("nested too deeply"), "{message}");
    let fine = load(&server, "deep", &app(1_000), "tight").await;
    assert_eq!(fine.status, StatusCode::CREATED, "{}", fine.body);
    let calc = load(&server, "calc", &calc_source(), "default").await;
    assert_eq!(calc.status, StatusCode::CREATED, "{}", calc.body);
}
