//! `palisade serve`, in process: admission, session limits, the idle reaper, idempotency,
//! policy reload and restart.

use crate::serve::{assert_error, config, start};
use http::StatusCode;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// A script that waits `ms` on a timer, then answers.
fn sleeper(ms: u64) -> String {
    format!("export default () => new Promise((ok) => setTimeout(() => ok('slept'), {ms}))")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_one_run_per_session_and_bounded_admission() {
    let mut cfg = config("serve-admission", false);
    cfg.max_concurrency = 1;
    cfg.admission_wait = Duration::from_millis(100);
    let server = Arc::new(start(cfg));
    let id = server.session(None, json!({"policy": "box"})).await;
    let uri = format!("/v1/sessions/{id}/run");
    let slow = {
        let (server, uri) = (server.clone(), uri.clone());
        tokio::spawn(async move {
            server
                .call("POST", &uri, None, json!({"source": sleeper(1500)}))
                .await
        })
    };
    // Wait until the slow run holds the session (its status says so).
    let get = format!("/v1/sessions/{id}");
    for _ in 0..200 {
        let s = server.call("GET", &get, None, Value::Null).await;
        if s.body["status"] == "running" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let busy = server
        .call("POST", &uri, None, json!({"source": "export default 1"}))
        .await;
    assert_error(&busy, 409, "session_busy");
    assert_eq!(busy.body["error"]["retryable"], true);
    // The one run slot is taken: another run waits 100 ms, then 503 with Retry-After.
    let full = server
        .call(
            "POST",
            "/v1/run",
            None,
            json!({"policy": "default", "source": "export default 1"}),
        )
        .await;
    assert_error(&full, 503, "capacity_exhausted");
    assert_eq!(full.headers["retry-after"], "1");
    let metrics = server.call("GET", "/metrics", None, Value::Null).await;
    assert!(
        metrics
            .body
            .as_str()
            .unwrap()
            .contains("palisade_admission_rejected_total 1")
    );
    let slow = slow.await.unwrap();
    assert_eq!(slow.body["output"], "slept", "{}", slow.body);
    let after = server
        .call("POST", &uri, None, json!({"source": "export default 2"}))
        .await;
    assert_eq!(after.body["output"], 2);
    server.assert_fine(None).await;
}

#[tokio::test]
async fn serve_max_sessions_and_the_idle_reaper() {
    let mut cfg = config("serve-reaper", false);
    cfg.max_sessions = 2;
    cfg.reap_interval = Duration::from_millis(50);
    let server = start(cfg);
    let short = server
        .session(None, json!({"policy": "box", "idle_timeout": "300ms"}))
        .await;
    let long = server
        .session(None, json!({"policy": "box", "idle_timeout": "1h"}))
        .await;
    let third = server
        .call("POST", "/v1/sessions", None, json!({"policy": "box"}))
        .await;
    assert_error(&third, 429, "capacity_exhausted");
    assert_eq!(third.headers["retry-after"], "1");
    let bad = server
        .call(
            "POST",
            "/v1/sessions",
            None,
            json!({"policy": "box", "idle_timeout": "soon"}),
        )
        .await;
    assert_error(&bad, 400, "invalid_input");
    // The reaper starts only now: on a loaded machine, making the sessions above can take
    // longer than the short one's 300 ms, and a reaper already running would free its slot
    // before the third was refused.
    let reaper = tokio::spawn(palisade::serve::reaper(server.state.clone()));
    // The short session is reaped once idle; the long one stays.
    let mut reaped = false;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let s = server
            .call("GET", &format!("/v1/sessions/{short}"), None, Value::Null)
            .await;
        if s.status == StatusCode::NOT_FOUND {
            assert_error(&s, 404, "session_not_found");
            reaped = true;
            break;
        }
    }
    assert!(reaped, "the idle session was not reaped within 5 s");
    let run = server
        .call(
            "POST",
            &format!("/v1/sessions/{short}/run"),
            None,
            json!({"source": "export default 1"}),
        )
        .await;
    assert_error(&run, 404, "session_not_found");
    assert!(!server.data.join("sessions").join(&short).exists());
    let kept = server
        .call("GET", &format!("/v1/sessions/{long}"), None, Value::Null)
        .await;
    assert_eq!(kept.status, StatusCode::OK);
    // A slot is free again.
    server.session(None, json!({"policy": "box"})).await;
    reaper.abort();
    server.assert_fine(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_idempotency_replays_conflicts_and_runs_once() {
    let server = Arc::new(start(config("serve-idem", false)));
    // Each run counts itself in the key-value store, so a second run would show.
    let count = json!({"policy": "box", "source": "export default async () => {
        await new Promise((ok) => setTimeout(ok, 300));
        const n = Number((await kv.get('n')) ?? '0') + 1;
        await kv.set('n', String(n));
        return n;
    }"});
    let key = [("idempotency-key", "order-1")];
    let first = server
        .call_with("POST", "/v1/run", None, &key, count.clone())
        .await;
    assert_eq!(first.body["output"], 1, "{}", first.body);
    assert!(first.headers.get("idempotent-replayed").is_none());
    let again = server
        .call_with("POST", "/v1/run", None, &key, count.clone())
        .await;
    assert_eq!(again.body, first.body, "the stored response, byte for byte");
    assert_eq!(again.headers["idempotent-replayed"], "true");
    let other = server
        .call_with(
            "POST",
            "/v1/run",
            None,
            &key,
            json!({"policy": "default", "source": "export default 2"}),
        )
        .await;
    assert_error(&other, 422, "idempotency_conflict");
    // Two concurrent requests with a new key: one run, two equal answers.
    let both: Vec<_> = (0..2)
        .map(|_| {
            let (server, count) = (server.clone(), count.clone());
            tokio::spawn(async move {
                server
                    .call_with(
                        "POST",
                        "/v1/run",
                        None,
                        &[("idempotency-key", "order-2")],
                        count,
                    )
                    .await
            })
        })
        .collect();
    let mut answers = Vec::new();
    for task in both {
        answers.push(task.await.unwrap());
    }
    assert_eq!(answers[0].body["output"], 2, "{}", answers[0].body);
    assert_eq!(answers[0].body, answers[1].body);
    let replays = answers
        .iter()
        .filter(|a| a.headers.get("idempotent-replayed").is_some())
        .count();
    assert_eq!(replays, 1);
    let fresh = server.call("POST", "/v1/run", None, count.clone()).await;
    assert_eq!(fresh.body["output"], 3, "exactly two runs before this one");
    let long = "k".repeat(300);
    let bad = server
        .call_with(
            "POST",
            "/v1/run",
            None,
            &[("idempotency-key", &long)],
            count,
        )
        .await;
    assert_error(&bad, 400, "invalid_input");
    server.assert_fine(None).await;
}

#[tokio::test]
async fn serve_policy_reload_keeps_the_last_good_version() {
    let cfg = config("serve-reload", false);
    let dir = cfg.policies.clone().unwrap();
    let server = start(cfg);
    let sha = |body: &Value, name: &str| {
        body.as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .map(|p| p["sha256"].as_str().unwrap().to_owned())
    };
    let before = server.call("GET", "/v1/policies", None, Value::Null).await;
    let first = sha(&before.body, "box").unwrap();
    // A valid change applies to new calls.
    std::fs::write(
        dir.join("box.toml"),
        "name = \"box\"\n[limits]\ntimeout = \"1s\"\n",
    )
    .unwrap();
    server.state.policies.reload();
    let changed = server.call("GET", "/v1/policies", None, Value::Null).await;
    let second = sha(&changed.body, "box").unwrap();
    assert_ne!(first, second);
    // An invalid one keeps the last good version, shown by /readyz and a metric.
    std::fs::write(dir.join("box.toml"), "[limits]\nfuel = \"lots\"\n").unwrap();
    server.state.policies.reload();
    let kept = server.call("GET", "/v1/policies", None, Value::Null).await;
    assert_eq!(sha(&kept.body, "box").unwrap(), second);
    let ready = server.call("GET", "/readyz", None, Value::Null).await;
    assert_eq!(ready.status, StatusCode::OK);
    assert!(
        ready.body["problems"][0]["error"]
            .as_str()
            .unwrap()
            .contains("last good version"),
        "{}",
        ready.body
    );
    let metrics = server.call("GET", "/metrics", None, Value::Null).await;
    let text = metrics.body.as_str().unwrap();
    assert!(text.contains("palisade_policies_invalid 1"), "{text}");
    assert!(
        text.contains("palisade_policy_reload_errors_total 1"),
        "{text}"
    );
    // A removed one stops new calls.
    std::fs::remove_file(dir.join("box.toml")).unwrap();
    server.state.policies.reload();
    let gone = server
        .call(
            "POST",
            "/v1/run",
            None,
            json!({"policy": "box", "source": "export default 1"}),
        )
        .await;
    assert_error(&gone, 404, "policy_not_found");
    // No policy left: /readyz says why.
    std::fs::remove_file(dir.join("default.toml")).unwrap();
    server.state.policies.reload();
    let unready = server.call("GET", "/readyz", None, Value::Null).await;
    assert_eq!(unready.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(unready.body["reason"], "no policy is loaded");
    std::fs::write(
        dir.join("default.toml"),
        palisade::policy::DEFAULT_POLICY_TOML,
    )
    .unwrap();
    server.state.policies.reload();
    server.assert_fine(None).await;
}

#[tokio::test]
async fn serve_sessions_and_idempotency_records_survive_a_restart() {
    let cfg = config("serve-restart", false);
    let server = start(cfg.clone());
    let id = server
        .session(
            None,
            json!({"policy": "box", "files": [{"path": "keep.txt", "content": "kept"}]}),
        )
        .await;
    let set = server
        .call(
            "POST",
            &format!("/v1/sessions/{id}/run"),
            None,
            json!({"source": "export default async () => { await kv.set('k', 'v'); return 1 }"}),
        )
        .await;
    assert_eq!(set.status, StatusCode::OK, "{}", set.body);
    let key = [("idempotency-key", "restart")];
    let body = json!({"policy": "default", "source": "export default () => Math.random()"});
    let first = server
        .call_with("POST", "/v1/run", None, &key, body.clone())
        .await;
    drop(server);
    let server = start(cfg);
    let read = server
        .fs(None, &id, "read", json!({"path": "keep.txt"}))
        .await;
    assert_eq!(read.body["body"], "kept", "{}", read.body);
    let get = server
        .call(
            "POST",
            &format!("/v1/sessions/{id}/run"),
            None,
            json!({"source": "export default async () => kv.get('k')"}),
        )
        .await;
    assert_eq!(get.body["output"], "v", "{}", get.body);
    let replay = server.call_with("POST", "/v1/run", None, &key, body).await;
    assert_eq!(replay.body, first.body);
    assert_eq!(replay.headers["idempotent-replayed"], "true");
    server.assert_fine(None).await;
}

/// Issue 38 (13): a tenant keeps at most `--max-keyed-records` idempotency records; a new
/// keyed run past it is 429 `capacity_exhausted` and does not run, while a replay of a kept
/// key, another tenant's keyed run and a keyless run still answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue_38_keyed_runs_stop_at_the_tenants_quota() {
    let mut cfg = config("serve-keyed-quota", true);
    cfg.keyed_quota = palisade::serve::idempotency::KeyQuota {
        records: 2,
        bytes: 1 << 20,
    };
    let server = start(cfg);
    let run =
        |n: u64| json!({"policy": "default", "source": "export default (x) => x * 2", "input": n});
    let keyed = |key: &'static str, n: u64, tenant: &'static str| {
        let server = &server;
        async move {
            server
                .call_with(
                    "POST",
                    "/v1/run",
                    Some(tenant),
                    &[("idempotency-key", key)],
                    run(n),
                )
                .await
        }
    };
    for (key, n) in [("k1", 1), ("k2", 2)] {
        let ok = keyed(key, n, "acme-key").await;
        assert_eq!(ok.status, StatusCode::OK, "{}", ok.body);
    }
    let refused = keyed("k3", 3, "acme-key").await;
    assert_error(&refused, 429, "capacity_exhausted");
    assert!(
        refused.body["error"]["fix_note"]
            .as_str()
            .is_some_and(|n| n.contains("--max-keyed-records")),
        "{}",
        refused.body
    );
    let replay = keyed("k1", 1, "acme-key").await;
    assert_eq!(replay.status, StatusCode::OK);
    assert_eq!(replay.headers["idempotent-replayed"], "true");
    assert_eq!(replay.body["output"], 2);
    let theirs = keyed("k3", 3, "beta-key").await;
    assert_eq!(theirs.status, StatusCode::OK, "{}", theirs.body);
    let usage = server.state.ledger.usage("acme").unwrap();
    assert_eq!(usage.records, 2);
    server.assert_fine(Some("acme-key")).await;
}
