//! What an embedder gets: per-call options, the caller's context in capability handlers and
//! forwarded calls, and handlers that fail without taking the host down.

use crate::support::*;
use crate::upstream::Upstream;
use palisade::{CallContext, Palisade, RunOptions, Script};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn bridge(names: &[&str]) -> palisade::Policy {
    let allow: String = names
        .iter()
        .map(|n| format!("[capabilities.allow.{n}]\n"))
        .collect();
    policy(&format!("[limits]\ntimeout = \"2s\"\n{allow}"))
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
    assert_eq!(code(&outcome), "invalid_input");
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
