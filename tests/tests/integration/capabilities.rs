//! The capability bridge: granted names reach the embedder's Rust handlers; everything else is
//! refused on the host with a catchable `PolicyDeniedError`, and every decision is audited.

use crate::support::*;
use palisade::{Decision, Error, Palisade, Policy, Script};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};

/// Calls that reached the `strict` handler, which only the schema test uses.
static STRICT_CALLS: AtomicUsize = AtomicUsize::new(0);

/// `wait` handler calls in progress, and the most at once.
static WAITING: AtomicUsize = AtomicUsize::new(0);
static MOST_WAITING: AtomicUsize = AtomicUsize::new(0);

/// A Palisade with host capabilities: `do` (adds numbers), `fail` (always errs), `slow`
/// (answers after two seconds) and `strict` (counts its calls).
static BRIDGE: LazyLock<Palisade> = LazyLock::new(|| {
    Palisade::builder()
        .max_concurrency(16)
        .capability("strict", |_| async {
            STRICT_CALLS.fetch_add(1, Ordering::SeqCst);
            Ok(Value::Null)
        })
        .capability("do", |payload: Value| async move {
            let args = payload["args"].as_array().cloned().unwrap_or_default();
            Ok(json!({ "value": args.iter().filter_map(Value::as_f64).sum::<f64>() }))
        })
        .capability("fail", |_| async { Err("the upstream is down".to_owned()) })
        .capability("wait", |payload: Value| async move {
            let now = WAITING.fetch_add(1, Ordering::SeqCst) + 1;
            MOST_WAITING.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            WAITING.fetch_sub(1, Ordering::SeqCst);
            Ok(payload)
        })
        .capability("slow", |_| async {
            tokio::time::sleep(std::time::Duration::from_secs(2)).await;
            Ok(Value::Null)
        })
        .build()
        .unwrap()
});

fn bridge_policy() -> Policy {
    Policy::from_file(root().join("policies/capability-bridge.toml")).unwrap()
}

async fn run_bridge(policy: &Policy, source: &str, input: &str) -> palisade::Outcome {
    BRIDGE
        .run(policy, &Script::new("bridge.js", source), input)
        .await
}

#[tokio::test]
async fn the_capability_bridge_example_policy_serves_maia_do() {
    let p = bridge_policy();
    let outcome = BRIDGE
        .run(&p, &fixture("maia_do.js"), r#"{"args":[1,2,3]}"#)
        .await;
    assert_eq!(output(&outcome), r#"{"sum":6,"again":7}"#);
    assert_eq!(outcome.audit.len(), 2);
    let record = &outcome.audit[0];
    assert_eq!(
        (record.target.as_str(), record.decision),
        ("do", Decision::Allow)
    );
    assert_eq!(record.rule, "capabilities.allow.do");
    assert_eq!(record.policy, "capability-bridge");
    assert_eq!(record.policy_sha256, p.sha256());
    assert!(record.bytes_in > 0 && record.bytes_out > 0);
}

#[tokio::test]
async fn without_a_capabilities_table_the_bridge_is_refused_with_the_fix() {
    // In the plain guest (no grant at all) and in the full guest (another grant).
    for p in [
        Policy::builtin_default(),
        policy("[config]\nregion = \"eu\"\n"),
    ] {
        assert_ungranted(
            &p,
            "host.do({ args: [2] })",
            "capabilities.allow",
            "capabilities.allow.do = {}",
        )
        .await;
    }
    // A bridge the policy names otherwise leaves `host` refusing, with the rule that named it.
    let maia = policy("[capabilities]\nglobal = \"maia\"\n[capabilities.allow.do]\n");
    assert_ungranted(
        &maia,
        "host.do({ args: [2] })",
        "capabilities.global",
        "capabilities.global = \"host\"",
    )
    .await;
    let outcome = run_bridge(
        &Policy::builtin_default(),
        "export default () => [typeof host, typeof maia]",
        "null",
    )
    .await;
    assert_eq!(output(&outcome), r#"["object","undefined"]"#);
    let p = policy("[capabilities]\n[capabilities.allow.do]\n");
    let outcome = run_bridge(
        &p,
        "export default async () => [typeof host, (await host.do({args:[2]})).value]",
        "null",
    )
    .await;
    assert_eq!(
        output(&outcome),
        r#"["object",2]"#,
        "the default global is `host`"
    );
}

#[tokio::test]
async fn a_name_the_policy_does_not_allow_is_a_catchable_denial_with_a_fix() {
    let source = "export default async () => { try { await maia.render({}); } \
                  catch (e) { return [e.name, e instanceof PolicyDeniedError, e.capability, e.rule, e.fix]; } }";
    let outcome = run_bridge(&bridge_policy(), source, "null").await;
    assert_eq!(
        output(&outcome),
        r#"["PolicyDeniedError",true,"render","capabilities.allow","capabilities.allow.render = {}"]"#
    );
    assert_eq!(outcome.audit[0].decision, Decision::Deny);
}

#[tokio::test]
async fn an_uncaught_denial_ends_the_call_with_policy_denied() {
    let outcome = run_bridge(
        &bridge_policy(),
        "export default async () => maia.exec({ op: 'rm' })",
        "null",
    )
    .await;
    assert_eq!(code(&outcome), "policy_denied");
    let error = outcome.error().unwrap();
    assert_eq!(error.exit_code(), 31);
    let fix = error.fix().unwrap();
    assert_eq!(
        (fix.key.as_str(), fix.value.as_str()),
        ("capabilities.allow.exec", "{}")
    );
    assert_next_call_works().await;
}

#[tokio::test]
async fn a_forged_policy_denied_error_is_just_an_exception() {
    let source = "export default () => { const e = new Error('fake'); e.name = 'PolicyDeniedError'; throw e; }";
    let outcome = run_bridge(&bridge_policy(), source, "null").await;
    assert_eq!(code(&outcome), "guest_exception");
}

#[tokio::test]
async fn the_call_budget_is_enforced_per_script_call() {
    let p = policy("[capabilities]\nglobal = \"maia\"\n[capabilities.allow.do]\nmax_calls = 3\n");
    let source = "export default async () => { const got = []; \
                  for (let i = 0; i < 5; i++) { try { await maia.do({args:[i]}); got.push('ok'); } \
                  catch (e) { got.push(e.rule + ' ' + e.fix); } } return got; }";
    let outcome = run_bridge(&p, source, "null").await;
    let got: Vec<String> = serde_json::from_str(output(&outcome)).unwrap();
    let denied = "capabilities.allow.do.max_calls capabilities.allow.do.max_calls = 6";
    assert_eq!(got, ["ok", "ok", "ok", denied, denied]);
    // The next script call starts with a fresh budget.
    let outcome = run_bridge(
        &p,
        "export default async () => (await maia.do({args:[1]})).value",
        "null",
    )
    .await;
    assert_eq!(output(&outcome), "1");
}

#[tokio::test]
async fn oversized_and_schema_violating_payloads_never_reach_the_handler() {
    let p = policy(
        "[capabilities]\nglobal = \"maia\"\n[capabilities.allow.strict]\nmax_payload = \"16KiB\"\n\
         schema = { type = \"object\", required = [\"op\"], properties = { op = { type = \"string\" } } }\n",
    );
    let big = run_bridge(
        &p,
        "export default async () => maia.strict({ op: 'x', pad: 'p'.repeat(20000) })",
        "null",
    )
    .await;
    assert_eq!(code(&big), "policy_denied");
    assert_eq!(big.error().unwrap().fix().unwrap().value, "\"32KiB\"");
    for payload in ["{ args: [1] }", "{ op: 42 }", "[1, 2]", "null"] {
        let outcome = run_bridge(
            &p,
            &format!("export default async () => maia.strict({payload})"),
            "null",
        )
        .await;
        match outcome.error() {
            Some(Error::PolicyDenied { rule, fix, .. }) => {
                assert_eq!(rule, "capabilities.allow.strict.schema", "{payload}");
                assert!(fix.is_none(), "no mechanical fix for a schema violation");
            }
            other => panic!("{payload}: expected policy_denied, got {other:?}"),
        }
    }
    assert_eq!(
        STRICT_CALLS.load(Ordering::SeqCst),
        0,
        "a refused payload reached the handler"
    );
    let ok = run_bridge(
        &p,
        "export default async () => maia.strict({ op: 'x' })",
        "null",
    )
    .await;
    assert_eq!(output(&ok), "null");
    assert_eq!(STRICT_CALLS.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn handler_failures_are_capability_errors() {
    let p = policy("[capabilities]\n[capabilities.allow.fail]\n[capabilities.allow.missing]\n");
    let source = "export default async () => { const out = []; \
                  for (const f of [() => host.fail({}), () => host.missing({})]) { \
                  try { await f(); } catch (e) { out.push([e.name, e.message]); } } return out; }";
    let outcome = run_bridge(&p, source, "null").await;
    assert_eq!(
        output(&outcome),
        r#"[["CapabilityError","the upstream is down"],["CapabilityError","capability `missing` has no handler in this host"]]"#
    );
    assert_eq!(
        outcome.audit[0].error.as_deref(),
        Some("the upstream is down")
    );
}

#[tokio::test]
async fn time_waiting_on_a_handler_counts_against_the_deadline() {
    let p = policy("[limits]\ntimeout = \"200ms\"\n[capabilities]\n[capabilities.allow.slow]\n");
    let outcome = run_bridge(&p, "export default async () => host.slow({})", "null").await;
    assert_eq!(code(&outcome), "timeout");
}

#[tokio::test]
async fn bad_capability_rules_are_invalid_policies() {
    for (toml, key) in [
        ("[capabilities]\nglobal = \"Math\"\n", "capabilities.global"),
        (
            "[capabilities]\nglobal = \"not an identifier\"\n",
            "capabilities.global",
        ),
        (
            "[capabilities.allow.do]\nmax_calls = 0\n",
            "capabilities.allow.do.max_calls",
        ),
        (
            "[capabilities.allow.do]\nforward = \"ftp://127.0.0.1:9/\"\n",
            "capabilities.allow.do.forward",
        ),
        (
            "[capabilities.allow.do]\nschema = { type = 12 }\n",
            "capabilities.allow.do.schema",
        ),
    ] {
        let error = Policy::from_toml(toml, None).expect_err(toml);
        assert_eq!(error.key, key, "{toml}: {error}");
    }
}

#[tokio::test]
async fn concurrent_bridge_calls_keep_their_own_budgets() {
    let p = Arc::new(policy(
        "[capabilities]\n[capabilities.allow.do]\nmax_calls = 2\n",
    ));
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let p = p.clone();
            tokio::spawn(async move {
                let source = "export default async (x) => (await host.do({args:[x]})).value + (await host.do({args:[x]})).value";
                let outcome = run_bridge(&p, source, &i.to_string()).await;
                assert_eq!(output(&outcome), (2 * i).to_string());
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
}

#[tokio::test]
async fn refusals_cannot_grow_host_memory_without_bound() {
    let p = policy("[capabilities]\n[capabilities.allow.do]\n");
    // A long capability name is refused, and only a prefix of it is kept.
    let source = "export default async () => { try { await host['n'.repeat(100000)]({}); } \
                  catch (e) { return [e.name, e.capability.length, e.message.length < 400]; } }";
    let outcome = run_bridge(&p, source, "null").await;
    assert_eq!(output(&outcome), r#"["PolicyDeniedError",129,true]"#);
    assert!(outcome.audit[0].target.len() <= 131);
    // Audit records stop at 1,024 per call; the rest are counted.
    let source = "export default async () => { for (let i = 0; i < 1100; i++) { try { await host.nope(i); } catch {} } return 1; }";
    let outcome = run_bridge(&p, source, "null").await;
    assert_eq!(output(&outcome), "1");
    assert_eq!(outcome.audit.len(), 1024);
    assert_eq!(outcome.receipt.audit_records_dropped, 76);
}

#[tokio::test]
async fn the_bridge_cannot_be_reached_without_a_grant() {
    // The bridge's own code is not a module a script could import.
    let source = "import make from 'palisade:bridge'; export default () => typeof make;";
    let outcome = run_bridge(&Policy::builtin_default(), source, "null").await;
    assert_eq!(code(&outcome), "guest_syntax");
    let outcome = run_bridge(
        &Policy::builtin_default(),
        "export default () => Object.keys(globalThis)",
        "null",
    )
    .await;
    assert!(
        !output(&outcome).contains("palisade"),
        "{}",
        output(&outcome)
    );
}

#[tokio::test]
async fn capability_calls_overlap_in_the_event_loop() {
    let p = policy("[capabilities.allow.wait]\n");
    let outcome = run_bridge(
        &p,
        "export default async () => Promise.all([0,1,2,3,4,5,6,7,8,9].map((i) => host.wait(i)))",
        "null",
    )
    .await;
    assert_eq!(output(&outcome), "[0,1,2,3,4,5,6,7,8,9]");
    // All ten handlers were running at once: the guest did not wait for one before the next.
    assert_eq!(MOST_WAITING.load(Ordering::SeqCst), 10);
    assert_eq!(outcome.audit.len(), 10);
}

#[tokio::test]
async fn a_script_holding_too_many_host_resources_is_a_guest_trap() {
    // Each call a script starts holds a host resource (and its pollable while the event loop
    // waits) until the script reads its answer: forty thousand at once pass the host's bound.
    let p = policy("[limits]\ntimeout = \"30s\"\nmemory = \"512MiB\"\n[capabilities.allow.wait]\n");
    let source = "export default async () => { const calls = []; \
                  for (let i = 0; i < 40000; i++) calls.push(host.nope(i).catch(() => 0)); \
                  await Promise.all(calls); return 'done'; }";
    let outcome = run_bridge(&p, source, "null").await;
    let error = outcome.result.as_ref().unwrap_err();
    assert_eq!(code(&outcome), "guest_trap", "{error}");
    assert_eq!(
        error.to_string(),
        "the guest's wasm trapped: the script held more than 32768 host resources at once \
         (capability calls, requests, streams, and the pollables that wait on them)"
    );
    // Fewer at once run, and the host answers the next call.
    let source = "export default async () => (await Promise.allSettled(\
                  Array.from({ length: 8000 }, (_, i) => host.nope(i)))).length";
    let outcome = run_bridge(&p, source, "null").await;
    assert_eq!(output(&outcome), "8000");
}
