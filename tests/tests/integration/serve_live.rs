//! Live sessions over HTTP: `"live": true`, runs that share a heap, heap, reset and fork,
//! `--max-live-sessions`, and the heap kept across a restart.

use crate::serve::{Server, assert_error, config, start};
use http::StatusCode;
use serde_json::{Value, json};

async fn step(server: &Server, id: &str, source: &str, input: Value) -> Value {
    let answer = server
        .call(
            "POST",
            &format!("/v1/sessions/{id}/run"),
            None,
            json!({"source": source, "input": input}),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    answer.body["output"].clone()
}

async fn live(server: &Server) -> String {
    server
        .session(None, json!({"policy": "default", "live": true}))
        .await
}

#[tokio::test]
async fn runs_share_a_heap_that_rolls_back_forks_and_resets() {
    let server = start(config("live-http", false));
    let id = live(&server).await;
    let rows = json!([{"city": "Oslo", "t": 3}, {"city": "Rome", "t": 18}]);
    assert_eq!(
        step(&server, &id, "const rows = input; rows.length", rows).await,
        2
    );
    let helper = "function warmest() { return rows.reduce((a, b) => (b.t > a.t ? b : a)).city; }";
    step(&server, &id, helper, Value::Null).await;
    assert_eq!(step(&server, &id, "warmest()", Value::Null).await, "Rome");
    // A failing run leaves the heap as it was.
    let failed = server
        .call(
            "POST",
            &format!("/v1/sessions/{id}/run"),
            None,
            json!({"source": "rows.length = 0; throw new Error('bad step')"}),
        )
        .await;
    assert_eq!(
        failed.body["error"]["code"], "guest_exception",
        "{}",
        failed.body
    );
    assert_eq!(step(&server, &id, "rows.length", Value::Null).await, 2);
    let heap = server
        .call("GET", &format!("/v1/sessions/{id}/heap"), None, Value::Null)
        .await;
    assert_eq!(heap.status, StatusCode::OK, "{}", heap.body);
    assert_eq!(heap.body["calls"], 4);
    assert!(heap.body["changed_blocks"].as_u64().unwrap() > 0);
    // A fork goes its own way.
    let forked = server
        .call(
            "POST",
            &format!("/v1/sessions/{id}/fork"),
            None,
            Value::Null,
        )
        .await;
    assert_eq!(forked.status, StatusCode::CREATED, "{}", forked.body);
    assert_eq!(forked.body["forked_from"], id.as_str());
    let fork = forked.body["session_id"].as_str().unwrap().to_owned();
    step(
        &server,
        &fork,
        "rows.push({city: 'Cairo', t: 30}); 0",
        Value::Null,
    )
    .await;
    assert_eq!(
        step(&server, &fork, "warmest()", Value::Null).await,
        "Cairo"
    );
    assert_eq!(step(&server, &id, "warmest()", Value::Null).await, "Rome");
    // A reset forgets it all.
    let reset = server
        .call(
            "POST",
            &format!("/v1/sessions/{id}/reset"),
            None,
            Value::Null,
        )
        .await;
    assert_eq!(reset.status, StatusCode::OK, "{}", reset.body);
    assert_eq!(
        step(&server, &id, "typeof rows", Value::Null).await,
        "undefined"
    );
}

#[tokio::test]
async fn the_heap_outlives_a_restart_and_cold_sessions_wake() {
    let mut cfg = config("live-restart", false);
    cfg.max_live_sessions = 1;
    let data = cfg.data.clone();
    let server = start(cfg);
    let (a, b) = (live(&server).await, live(&server).await);
    step(&server, &a, "let who = 'a'; who", Value::Null).await;
    step(&server, &b, "let who = 'b'; who", Value::Null).await;
    // One hot session at most: `a` was cooled to its image when `b` ran.
    let heap = server
        .call("GET", &format!("/v1/sessions/{a}/heap"), None, Value::Null)
        .await;
    assert_eq!(heap.body["hot"], false, "{}", heap.body);
    assert_eq!(step(&server, &a, "who", Value::Null).await, "a");
    assert_eq!(step(&server, &b, "who", Value::Null).await, "b");
    drop(server);
    let mut cfg = config("live-restart-2", false);
    cfg.data = data;
    let server = start(cfg);
    assert_eq!(step(&server, &a, "who", Value::Null).await, "a");
    assert_eq!(step(&server, &b, "who + '!'", Value::Null).await, "b!");
}

#[tokio::test]
async fn heap_routes_need_a_live_session_and_a_live_policy_mounts_nothing() {
    let server = start(config("live-refusals", false));
    let plain = server.session(None, json!({"policy": "default"})).await;
    let heap = server
        .call(
            "GET",
            &format!("/v1/sessions/{plain}/heap"),
            None,
            Value::Null,
        )
        .await;
    assert_error(&heap, 400, "invalid_input");
    let missing = server
        .call("POST", "/v1/sessions/nope/fork", None, Value::Null)
        .await;
    assert_error(&missing, 404, "session_not_found");
    server.assert_fine(None).await;
}

/// docs/sessions.md's walkthrough, step by step.
#[tokio::test]
async fn the_csv_walkthrough_of_the_docs_answers_as_documented() {
    let server = start(config("live-csv", false));
    let id = live(&server).await;
    let csv = "id,customer,total,day\n1,acme,120.5,2026-11-02\n2,beta,80,2026-11-02\n3,acme,42,2026-11-03\n";
    let load = "const rows = input.split(\"\\n\").slice(1).filter(Boolean).map((line) => { const [id, customer, total, day] = line.split(\",\"); return { id: +id, customer, total: +total, day }; }); rows.length";
    assert_eq!(step(&server, &id, load, json!(csv)).await, 3);
    let helper = "function by(key, value = (r) => r.total) { const out = new Map(); for (const r of rows) out.set(r[key], (out.get(r[key]) ?? 0) + value(r)); return Object.fromEntries(out); }";
    assert_eq!(step(&server, &id, helper, Value::Null).await, Value::Null);
    let totals = step(&server, &id, "by(\"customer\")", Value::Null).await;
    assert_eq!(totals, json!({"acme": 162.5, "beta": 80}));
    let days = step(&server, &id, "by(\"day\", () => 1)", Value::Null).await;
    assert_eq!(days, json!({"2026-11-02": 2, "2026-11-03": 1}));
    let over = "rows.filter((r) => r.total > input.over).map((r) => r.id)";
    assert_eq!(
        step(&server, &id, over, json!({"over": 50})).await,
        json!([1, 2])
    );
    let failed = server
        .call(
            "POST",
            &format!("/v1/sessions/{id}/run"),
            None,
            json!({"source": "rows.length = 0; null.x"}),
        )
        .await;
    assert_eq!(
        failed.body["error"]["code"], "guest_exception",
        "{}",
        failed.body
    );
    assert_eq!(step(&server, &id, "rows.length", Value::Null).await, 3);
    // Declaring a name a step already declared is refused, and changes nothing.
    let again = server
        .call(
            "POST",
            &format!("/v1/sessions/{id}/run"),
            None,
            json!({"source": "const rows = []; 0"}),
        )
        .await;
    assert_eq!(again.body["error"]["name"], "SyntaxError", "{}", again.body);
    assert_eq!(step(&server, &id, "rows.length", Value::Null).await, 3);
}

/// A catalog change reaches a hot live session at its next call: the policy narrowed to a
/// fuel budget no step fits, the next steps end as `fuel_exhausted` (the heap of before is
/// kept); widened again, the heap is there.
#[tokio::test]
async fn a_narrowed_policy_reaches_a_hot_live_session() {
    let config = config("live-narrowed", false);
    let file = config.policies.clone().unwrap().join("livep.toml");
    std::fs::write(&file, "name = \"livep\"\n[limits]\ntimeout = \"20s\"\n").unwrap();
    let server = start(config);
    let id = server
        .session(None, json!({"policy": "livep", "live": true}))
        .await;
    assert_eq!(
        step(&server, &id, "let kept = 7; kept", Value::Null).await,
        7
    );
    std::fs::write(
        &file,
        "name = \"livep\"\n[limits]\ntimeout = \"20s\"\nfuel = 1000\n",
    )
    .unwrap();
    // What the folder's watcher does in `palisade serve`.
    server.state.policies.reload();
    let mut code = Value::Null;
    for _ in 0..200 {
        let ran = server
            .call(
                "POST",
                &format!("/v1/sessions/{id}/run"),
                None,
                json!({"source": "kept + 1"}),
            )
            .await;
        code = ran.body["error"]["code"].clone();
        if code == "fuel_exhausted" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(
        code, "fuel_exhausted",
        "the hot session kept its old policy"
    );
    std::fs::write(&file, "name = \"livep\"\n[limits]\ntimeout = \"20s\"\n").unwrap();
    server.state.policies.reload();
    let mut output = Value::Null;
    for _ in 0..200 {
        let ran = server
            .call(
                "POST",
                &format!("/v1/sessions/{id}/run"),
                None,
                json!({"source": "kept + 1"}),
            )
            .await;
        output = ran.body["output"].clone();
        if output == 8 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(output, 8, "the heap of before the narrowed calls");
}
