//! What an embedder gets: per-call options, the caller's context in capability handlers and
//! forwarded calls, and handlers that fail without taking the host down.

use crate::support::*;
use crate::upstream::Upstream;
use palisade::{CallContext, CapabilityError, Palisade, RunOptions, Script};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn bridge(names: &[&str]) -> palisade::Policy {
    let allow: String = names
        .iter()
        .map(|n| format!("[capabilities.allow.{n}]\n"))
        .collect();
    // A roomy deadline for the calls expected to pass; the one that hangs sets its own.
    policy(&format!("[limits]\ntimeout = \"20s\"\n{allow}"))
}

#[tokio::test]
async fn handlers_get_the_callers_context_and_metadata() {
    let seen: Arc<Mutex<Vec<CallContext>>> = Arc::default();
    let kept = seen.clone();
    let palisade = Palisade::builder()
        .max_concurrency(2)
        .capability_with_context("whoami", move |context: CallContext, payload| {
            kept.lock().unwrap().push(context.clone());
            async move {
                let actor = context.metadata.as_ref().map(|m| m["actor"].clone());
                Ok(serde_json::json!({ "payload": payload, "actor": actor }))
            }
        })
        .build()
        .unwrap();
    let p = bridge(&["whoami"]);
    let script = Script::new("who.js", "export default async (x) => host.whoami(x);");
    let options = RunOptions::default().metadata(serde_json::json!({"actor": "ada"}));
    let outcome = palisade.run_with(&p, &script, "7", &options).await;
    assert_eq!(output(&outcome), r#"{"actor":"ada","payload":7}"#);
    let context = seen.lock().unwrap()[0].clone();
    assert_eq!(context.call_id.len(), 16);
    assert_eq!(context.capability, "whoami");
    assert_eq!(context.policy, p.name());
    assert_eq!(context.policy_sha256, p.sha256());
    // Each call has its own id.
    let again = palisade.run(&p, &script, "8").await;
    assert_eq!(output(&again), r#"{"actor":null,"payload":8}"#);
    assert_ne!(seen.lock().unwrap()[1].call_id, context.call_id);
}

#[tokio::test]
async fn a_handler_that_panics_or_hangs_ends_only_its_call() {
    let palisade = Palisade::builder()
        .max_concurrency(4)
        .capability("boom", |_payload| async move {
            if true {
                panic!("the handler broke");
            }
            Ok(serde_json::Value::Null)
        })
        .capability("hang", |_payload| async move {
            std::future::pending::<()>().await;
            Ok(serde_json::Value::Null)
        })
        .capability("fine", |payload| async move { Ok(payload) })
        .build()
        .unwrap();
    let p = bridge(&["boom", "hang", "fine"]);
    let call = |source: &str| Script::new("h.js", source.to_owned());
    let outcome = palisade
        .run(&p, &call("export default async () => { try { await host.boom(1); } catch (e) { return 'caught'; } };"), "null")
        .await;
    assert_eq!(code(&outcome), "internal");
    assert!(outcome.error_id.is_some());
    let short = RunOptions::default().timeout(Duration::from_millis(300));
    let outcome = palisade
        .run_with(
            &p,
            &call("export default async () => host.hang(1);"),
            "null",
            &short,
        )
        .await;
    assert_eq!(code(&outcome), "timeout");
    let outcome = palisade
        .run(
            &p,
            &call("export default async (x) => host.fine(x);"),
            "[1]",
        )
        .await;
    assert_eq!(output(&outcome), "[1]");
}

#[tokio::test]
async fn forwarded_calls_carry_the_callers_context_as_headers() {
    let up = Upstream::start().await;
    let p = policy(&format!(
        "[capabilities.allow.echo]\nforward = \"http://127.0.0.1:{}/api/echo\"\n",
        up.port()
    ));
    let script = Script::new("fwd.js", "export default async () => host.echo({ a: 1 });");
    let options = RunOptions::default().metadata(serde_json::json!({"tenant": "acme"}));
    let outcome = PALISADE.run_with(&p, &script, "null", &options).await;
    output(&outcome);
    let seen = up.seen();
    let headers: std::collections::HashMap<_, _> = seen[0].palisade.iter().cloned().collect();
    assert_eq!(headers["palisade-capability"], "echo");
    assert_eq!(headers["palisade-policy"], p.name());
    assert_eq!(headers["palisade-policy-sha256"], p.sha256());
    assert_eq!(headers["palisade-call-id"].len(), 16);
    assert_eq!(headers["palisade-metadata"], r#"{"tenant":"acme"}"#);
}

#[tokio::test]
async fn options_lower_the_policys_limits_and_never_raise_them() {
    let p = policy("[limits]\ntimeout = \"5s\"\nfuel = 10_000_000_000\n");
    let looping = fixture("infinite_loop.js");
    let options = RunOptions::default().fuel(5_000_000);
    let outcome = PALISADE.run_with(&p, &looping, "null", &options).await;
    assert_eq!(code(&outcome), "fuel_exhausted");
    assert_eq!(outcome.receipt.fuel_used, 5_000_000);
    let options = RunOptions::default().timeout(Duration::from_millis(100));
    let outcome = PALISADE.run_with(&p, &looping, "null", &options).await;
    assert_eq!(code(&outcome), "timeout");
    let over = RunOptions::default().timeout(Duration::from_secs(10));
    let outcome = PALISADE.run_with(&p, &looping, "null", &over).await;
    assert_eq!(code(&outcome), "policy_denied");
    let fix = outcome.error().unwrap().fix().unwrap();
    assert_eq!(
        (fix.key.as_str(), fix.value.as_str()),
        ("limits.timeout", "\"10s\"")
    );
    assert_next_call_works().await;
}

/// Issue 25: every argument of a bridge call reaches the handler and a forward URL (they were
/// dropped but the first); a one-argument call keeps its payload form.
#[tokio::test]
async fn every_argument_of_a_bridge_call_arrives() {
    let palisade = Palisade::builder()
        .max_concurrency(2)
        .capability_with_context("render", |context: CallContext, payload| async move {
            Ok(serde_json::json!({ "list": context.argument_list, "payload": payload }))
        })
        .build()
        .unwrap();
    let p = policy("[capabilities]\nglobal = \"maia\"\n[capabilities.allow.render]\n");
    let script = Script::new(
        "args.js",
        "export default async () => [
           await maia.render('actor-1', { view: 'card' }, 'dark'),
           await maia.render({ one: 1 }),
           await maia.render([1, 2]),
           await maia.render(),
         ];",
    );
    let outcome = palisade.run(&p, &script, "null").await;
    assert_eq!(
        output(&outcome),
        r#"[{"list":true,"payload":["actor-1",{"view":"card"},"dark"]},{"list":false,"payload":{"one":1}},{"list":false,"payload":[1,2]},{"list":false,"payload":null}]"#
    );
    // A forward URL gets the list, marked as such.
    let up = Upstream::start().await;
    let p = policy(&format!(
        "[capabilities.allow.echo]\nforward = \"http://127.0.0.1:{}/api/echo\"\n",
        up.port()
    ));
    let script = Script::new("fwd.js", "export default async () => host.echo('a', 2);");
    let outcome = PALISADE.run(&p, &script, "null").await;
    let echoed: serde_json::Value = serde_json::from_str(output(&outcome)).unwrap();
    assert_eq!(echoed["body"], r#"["a",2]"#);
    let headers: std::collections::HashMap<_, _> = up.seen()[0].palisade.iter().cloned().collect();
    assert_eq!(headers["palisade-arguments"], "list");
}

/// Issue 25: a handler's typed failure reaches the script's `CapabilityError` as its code,
/// message and `retryable`, from a Rust handler and from a `forward` URL's non-2xx JSON answer;
/// a bare message is `handler_error`.
#[tokio::test]
async fn handlers_and_forward_urls_fail_with_typed_errors() {
    use axum::{Json, http::StatusCode, routing::post};
    let palisade = Palisade::builder()
        .max_concurrency(2)
        .typed_capability("lookup", |context: CallContext, payload| async move {
            match payload.as_str() {
                Some("busy") => Err(CapabilityError::new(
                    "busy",
                    format!("{} is busy", context.capability),
                )
                .retryable()),
                Some("bad") => Err(CapabilityError::new("Not A Code", "odd code")),
                _ => Ok(payload),
            }
        })
        .capability("legacy", |_| async {
            Err::<serde_json::Value, _>("plain message".to_owned())
        })
        .build()
        .unwrap();
    let p = bridge(&["lookup", "legacy"]);
    let script = Script::new(
        "typed.js",
        "export default async () => { const out = [];
           for (const f of [() => host.lookup('busy'), () => host.lookup('bad'), () => host.legacy(1)]) {
             try { await f(); } catch (e) {
               out.push([e instanceof CapabilityError, e.code, e.message, e.retryable]); } }
           out.push(await host.lookup('ok')); return out; };",
    );
    let outcome = palisade.run(&p, &script, "null").await;
    assert_eq!(
        output(&outcome),
        r#"[[true,"busy","lookup is busy",true],[true,"handler_error","odd code",false],[true,"handler_error","plain message",false],"ok"]"#
    );
    // A forward URL names its error in a non-2xx JSON body, flat or under "error".
    let app = axum::Router::new()
        .route(
            "/flat",
            post(|| async {
                let body = serde_json::json!({"code": "not_found", "message": "no such actor"});
                (StatusCode::NOT_FOUND, Json(body))
            }),
        )
        .route(
            "/nested",
            post(|| async {
                let body = serde_json::json!({"error": {"code": "rate_limited",
                    "message": "slow down", "retryable": true}});
                (StatusCode::TOO_MANY_REQUESTS, Json(body))
            }),
        )
        .route(
            "/plain",
            post(|| async { (StatusCode::BAD_GATEWAY, "upstream down") }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let p = policy(&format!(
        "[limits]\ntimeout = \"5s\"\n[capabilities.allow.flat]\nforward = \"http://127.0.0.1:{port}/flat\"\n\
         [capabilities.allow.nested]\nforward = \"http://127.0.0.1:{port}/nested\"\n\
         [capabilities.allow.plain]\nforward = \"http://127.0.0.1:{port}/plain\"\n"
    ));
    let script = Script::new(
        "fwd-typed.js",
        "export default async () => { const out = [];
           for (const f of [() => host.flat(1), () => host.nested(1), () => host.plain(1)]) {
             try { await f(); } catch (e) { out.push([e.name, e.code, e.retryable]); } }
           return out; };",
    );
    let outcome = PALISADE.run(&p, &script, "null").await;
    assert_eq!(
        output(&outcome),
        r#"[["CapabilityError","not_found",false],["CapabilityError","rate_limited",true],["CapabilityError","forward_failed",true]]"#
    );
    server.abort();
    assert_next_call_works().await;
}

/// Issue 25: a call's options set the clock, the seed, config values and scratch files, and
/// raise limits up to the policy's `[overrides]` ceilings; each only as the policy allows.
#[tokio::test]
async fn per_call_options_go_as_far_as_the_policys_overrides() {
    let p = policy(
        "[limits]\ntimeout = \"1s\"\n[config]\nregion = \"eu\"\n\
         [fs.scratch]\nguest = \"/scratch\"\nquota = \"64KiB\"\n\
         [overrides]\ntimeout = \"20s\"\nnow = true\nseed = true\nconfig = [\"region\"]\n",
    );
    let script = Script::new(
        "opts.js",
        "export default async () => [new Date().toISOString(), Math.random(),
           config.get('region'), await fs.readFile('/scratch/in.txt')];",
    );
    let at = std::time::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let options = RunOptions::default()
        .timeout(Duration::from_secs(15))
        .now(at)
        .seed(42)
        .config("region", "us")
        .file("in.txt", "hello");
    let first = PALISADE.run_with(&p, &script, "null", &options).await;
    let got: serde_json::Value = serde_json::from_str(output(&first)).unwrap();
    assert_eq!(got[0], "2023-11-14T22:13:20.000Z");
    assert_eq!((&got[2], &got[3]), (&"us".into(), &"hello".into()));
    // The same seed gives the same numbers; the policy's own value is back without options.
    let again = PALISADE.run_with(&p, &script, "null", &options).await;
    assert_eq!(output(&again), output(&first));
    let plain = Script::new("region.js", "export default () => config.get('region');");
    assert_eq!(output(&PALISADE.run(&p, &plain, "null").await), "\"eu\"");
    // Past the ceiling, and what the policy does not list: refused with the fix.
    for (options, key, value) in [
        (
            RunOptions::default().timeout(Duration::from_secs(30)),
            "overrides.timeout",
            "\"30s\"",
        ),
        (
            RunOptions::default().config("secret", "x"),
            "overrides.config",
            "[\"region\",\"secret\"]",
        ),
        (
            RunOptions::default().file("big.bin", vec![0u8; 65 << 10]),
            "fs.scratch.quota",
            "\"65KiB\"",
        ),
    ] {
        let outcome = PALISADE.run_with(&p, &plain, "null", &options).await;
        assert_eq!(code(&outcome), "policy_denied");
        let fix = outcome.error().unwrap().fix().unwrap();
        assert_eq!((fix.key.as_str(), fix.value.as_str()), (key, value));
    }
    let outcome = PALISADE
        .run_with(&p, &plain, "null", &RunOptions::default().file("../x", "x"))
        .await;
    assert_eq!(code(&outcome), "invalid_input");
    // Without `[overrides]` the clock and the seed stay the policy's.
    let strict = policy("[limits]\ntimeout = \"1s\"\n");
    let outcome = PALISADE
        .run_with(&strict, &plain, "null", &RunOptions::default().seed(1))
        .await;
    assert_eq!(code(&outcome), "policy_denied");
    assert_eq!(
        outcome.error().unwrap().fix().unwrap().key,
        "overrides.seed"
    );
    assert_next_call_works().await;
}

/// Issue 25: a started call streams its console lines and audit records while it runs, and
/// its handle cancels it at once as `cancelled`, a CPU loop and a wait on a handler alike.
#[tokio::test]
async fn a_started_call_streams_its_events_and_cancels_at_once() {
    let palisade = Palisade::builder()
        .max_concurrency(2)
        .capability("hang", |_payload| async move {
            std::future::pending::<()>().await;
            Ok(serde_json::Value::Null)
        })
        .build()
        .unwrap();
    let p = policy(
        "[limits]\ntimeout = \"60s\"\nfuel = 10_000_000_000_000\n[capabilities.allow.hang]\n",
    );
    for source in [
        "export default () => { console.log('started'); for (;;) {} };",
        "export default async () => { console.log('started'); await host.hang(1); };",
    ] {
        let (sender, mut events) = tokio::sync::mpsc::unbounded_channel();
        let options = RunOptions::default().on_event(move |event| {
            let _ = sender.send(event);
        });
        let handle = palisade.start(&p, &Script::new("c.js", source), "null", options);
        // The line arrives while the call still runs (its deadline is a minute away).
        let first = tokio::time::timeout(Duration::from_secs(30), events.recv())
            .await
            .expect("a console line while the call runs")
            .unwrap();
        match first {
            palisade::Event::Console(line) => assert_eq!(line.message, "started"),
            other => panic!("expected the console line, got {other:?}"),
        }
        handle.canceller().cancel();
        let outcome = tokio::time::timeout(Duration::from_secs(30), handle.outcome())
            .await
            .expect("a cancelled call ends well before its deadline");
        assert_eq!(code(&outcome), "cancelled");
        assert_eq!(outcome.logs[0].message, "started");
    }
    // An audit record streams too, and the host runs the next call.
    let p = policy("[limits]\ntimeout = \"5s\"\n[capabilities.allow.hang]\n");
    let (sender, mut events) = tokio::sync::mpsc::unbounded_channel();
    let options = RunOptions::default().on_event(move |event| {
        let _ = sender.send(event);
    });
    let script = Script::new(
        "denied.js",
        "export default async () => { try { await host.other(1); } catch (e) { return e.name; } };",
    );
    let outcome = palisade.run_with(&p, &script, "null", &options).await;
    assert_eq!(output(&outcome), "\"PolicyDeniedError\"");
    match events.try_recv().unwrap() {
        palisade::Event::Audit(record) => assert_eq!(record, outcome.audit[0]),
        other => panic!("expected the audit record, got {other:?}"),
    }
    assert_next_call_works().await;
}

/// Issue 41: a call awaited where it runs (`run_with`, no task of its own) is cancelled by
/// the canceller its options carry: while it runs (a CPU loop) at once, and before it starts
/// without running its sandbox (no console line).
#[tokio::test]
async fn a_canceller_in_the_options_cancels_a_call_run_in_place() {
    let p = policy("[limits]\ntimeout = \"60s\"\nfuel = 10_000_000_000_000\n");
    let looping = Script::new("loop.js", "export default () => { for (;;) {} };");
    let canceller = palisade::Canceller::new();
    let options = RunOptions::default().canceller(&canceller);
    let cancel = canceller.clone();
    let stopper = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancel.cancel();
    });
    let outcome = tokio::time::timeout(
        Duration::from_secs(30),
        PALISADE.run_with(&p, &looping, "null", &options),
    )
    .await
    .expect("a cancelled call ends well before its deadline");
    stopper.await.unwrap();
    assert_eq!(code(&outcome), "cancelled");
    let early = palisade::Canceller::new();
    early.cancel();
    let logging = Script::new(
        "log.js",
        "export default () => { console.log('ran'); return 1; };",
    );
    let outcome = PALISADE
        .run_with(
            &p,
            &logging,
            "null",
            &RunOptions::default().canceller(&early),
        )
        .await;
    assert_eq!(code(&outcome), "cancelled");
    assert!(outcome.logs.is_empty(), "{:?}", outcome.logs);
    assert_next_call_works().await;
}

/// Issue 25: the operator's audit log (`Builder::audit_log`) has the addresses an HTTP
/// request's host resolved to, refused or sent; the outcome names the host only.
#[tokio::test]
async fn the_audit_log_file_has_the_addresses_the_outcome_leaves_out() {
    let up = Upstream::start().await;
    let port = up.port();
    let path = scratch_dir("audit-file").join("audit.jsonl");
    let palisade = Palisade::builder()
        .max_concurrency(2)
        .audit_log(&path)
        .build()
        .unwrap();
    let rules = format!("[[http.allow]]\nurl = \"http://localhost:{port}/api/\"\n");
    let script = Script::new(
        "get.js",
        format!(
            "export default async () => {{
               try {{ await fetch('http://localhost:{port}/api/hello'); return 'sent'; }}
               catch (e) {{ return e.rule; }} }};"
        ),
    );
    let refused = policy(&format!("[http]\n{rules}"));
    let outcome = palisade.run(&refused, &script, "null").await;
    assert_eq!(output(&outcome), "\"http.private\"");
    let sent = policy(&format!(
        "[http]\nallow_private_hosts = [\"localhost\"]\n{rules}"
    ));
    let second = palisade.run(&sent, &script, "null").await;
    assert_eq!(output(&second), "\"sent\"");
    for outcome in [&outcome, &second] {
        let everything = serde_json::to_string(outcome).unwrap();
        assert!(everything.contains("localhost"), "{everything}");
        assert!(
            !everything.contains("127.0.0.1") && !everything.contains("::1"),
            "{everything}"
        );
    }
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(
        (lines[0]["rule"].as_str(), lines[1]["decision"].as_str()),
        (Some("http.private"), Some("allow"))
    );
    for line in &lines {
        assert!(line["target"].as_str().unwrap().contains("localhost"));
        let addresses: Vec<&str> = line["addresses"]
            .as_array()
            .unwrap_or_else(|| panic!("no addresses in {line}"))
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert!(
            addresses
                .iter()
                .all(|a| *a == format!("127.0.0.1:{port}") || *a == format!("[::1]:{port}")),
            "{addresses:?}"
        );
        assert!(!addresses.is_empty());
    }
    assert_eq!(palisade.audit_log_failure(), None);
}
