//! Live sessions: the heap survives between calls, every call is limited as a fresh one, a
//! failed call rolls back to the last good image, and images hibernate, wake and fork.

use crate::support::*;
use palisade::{LiveSession, Policy};

async fn session(policy: &Policy) -> LiveSession {
    PALISADE
        .live_session(policy)
        .await
        .expect("a live session starts")
}

/// Run a step that must succeed; its output JSON.
async fn step(live: &mut LiveSession, source: &str, input: &str) -> String {
    output(&live.run("step.js", source, input).await).to_owned()
}

/// What a session holds after the state-building steps of `build`.
const PROBE: &str = "[typeof counter === 'undefined' ? null : counter, \
    typeof twice === 'function' ? twice(4) : null, \
    typeof acc === 'object' ? acc.total() : null, \
    typeof seen === 'object' ? [...seen.keys()] : null]";

async fn build(live: &mut LiveSession) {
    let defined = step(
        live,
        "let counter = 1;\n\
         function twice(x) { return 2 * x; }\n\
         class Acc { constructor() { this.items = []; } add(x) { this.items.push(x); return this; } \
           total() { return this.items.reduce((a, b) => a + b, 0); } }\n\
         const acc = new Acc().add(input.n);\n\
         const seen = new Map([['a', 1]]);\n\
         counter",
        r#"{"n": 5}"#,
    )
    .await;
    assert_eq!(defined, "1");
}

#[tokio::test]
async fn a_let_a_function_a_class_instance_and_a_map_survive_to_the_next_call() {
    let mut live = session(&roomy()).await;
    build(&mut live).await;
    let next = step(
        &mut live,
        "counter += 1; acc.add(input.n); seen.set('b', 2); await Promise.resolve(0);\n"
            .to_owned()
            .as_str(),
        r#"{"n": 7}"#,
    )
    .await;
    assert_eq!(next, "0");
    assert_eq!(
        step(&mut live, PROBE, "null").await,
        r#"[2,8,12,["a","b"]]"#
    );
    assert_eq!(live.heap().calls, 3);
    assert!(live.heap().hot);
    // A plain call of the same Palisade sees none of it.
    let fresh = run_source("export default () => typeof counter", "null").await;
    assert_eq!(output(&fresh), r#""undefined""#);
}

/// Each failure leaves the heap as the last good call left it, and the next call works.
async fn assert_rolled_back(policy: &Policy, hostile: &str, expected: &str) {
    let mut live = session(policy).await;
    build(&mut live).await;
    let before = step(&mut live, PROBE, "null").await;
    let failed = live
        .run(
            "hostile.js",
            &format!("counter = 100; acc.add(1000); seen.clear(); twice = null;\n{hostile}"),
            "null",
        )
        .await;
    assert_eq!(code(&failed), expected, "{hostile}");
    assert!(!live.heap().hot);
    assert_eq!(step(&mut live, PROBE, "null").await, before, "{hostile}");
    assert_eq!(step(&mut live, "counter += 1", "null").await, "2");
}

#[tokio::test]
async fn an_uncaught_error_rolls_back() {
    assert_rolled_back(&roomy(), "throw new TypeError('no')", "guest_exception").await;
}

#[tokio::test]
async fn fuel_exhaustion_rolls_back() {
    let p = policy("[limits]\nfuel = 50_000_000\ntimeout = \"30s\"\n");
    assert_rolled_back(&p, "for (;;) {}", "fuel_exhausted").await;
}

#[tokio::test]
async fn the_deadline_rolls_back() {
    let p = policy("[limits]\nfuel = 1_000_000_000_000\ntimeout = \"300ms\"\n");
    assert_rolled_back(&p, "for (;;) {}", "timeout").await;
}

#[tokio::test]
async fn the_memory_limit_rolls_back() {
    let p = policy("[limits]\nmemory = \"32MiB\"\ntimeout = \"10s\"\n");
    assert_rolled_back(
        &p,
        "const big = []; for (;;) big.push(new Array(100000).fill(1));",
        "memory_limit",
    )
    .await;
}

#[tokio::test]
async fn a_trap_rolls_back() {
    // Deeper than the wasm stack: a trap, not a catchable RangeError.
    let p = policy("[limits]\nstack = \"64KiB\"\ntimeout = \"10s\"\n");
    assert_rolled_back(
        &p,
        "const f = (n) => JSON.parse(JSON.stringify(new Array(10).fill(n))) && f(n + 1); f(0);",
        "stack_overflow",
    )
    .await;
}
