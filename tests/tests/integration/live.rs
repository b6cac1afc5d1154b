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

#[tokio::test]
async fn a_hibernated_heap_wakes_in_a_new_session() {
    let mut live = session(&roomy()).await;
    build(&mut live).await;
    let before = step(&mut live, PROBE, "null").await;
    let file = live.image();
    drop(live);
    let mut woken = PALISADE.wake_live_session(&roomy(), &file).await.unwrap();
    assert!(!woken.heap().hot);
    assert_eq!(step(&mut woken, PROBE, "null").await, before);
    assert_eq!(step(&mut woken, "counter += 1", "null").await, "2");
}

/// Woken from its file (mapped, not copied): the heap is there; a failed step rolls back to
/// the file's heap (the restore maps it again), a fork of it goes its own way, a step's writes
/// never reach the file, and a failed step after a successful one rolls back to that one's.
#[tokio::test]
async fn a_heap_woken_from_its_file_rolls_back_forks_and_leaves_the_file_as_it_was() {
    let mut live = session(&roomy()).await;
    build(&mut live).await;
    let before = step(&mut live, PROBE, "null").await;
    let bytes = live.image();
    drop(live);
    let path = std::env::temp_dir().join(format!("palisade-test-{}-heap.img", std::process::id()));
    std::fs::write(&path, &bytes).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let mut woken = PALISADE
        .wake_live_session_file(&roomy(), &file)
        .await
        .unwrap();
    drop(file);
    assert!(!woken.heap().hot);
    let hostile = "counter = 100; acc.add(1000); seen.clear(); twice = null; throw new Error('no')";
    let failed = woken.run("hostile.js", hostile, "null").await;
    assert_eq!(code(&failed), "guest_exception");
    assert_eq!(step(&mut woken, PROBE, "null").await, before);
    let mut fork = woken.fork();
    assert_eq!(step(&mut fork, "counter += 10", "null").await, "11");
    assert_eq!(step(&mut woken, "counter += 1", "null").await, "2");
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "the file is unchanged"
    );
    let failed = woken.run("hostile.js", hostile, "null").await;
    assert_eq!(code(&failed), "guest_exception");
    assert_eq!(
        step(&mut woken, "[counter, twice(4)]", "null").await,
        "[2,8]"
    );
    assert_eq!(step(&mut fork, "counter", "null").await, "11");
    std::fs::remove_file(&path).unwrap();
}

#[tokio::test]
async fn a_truncated_or_altered_image_is_refused() {
    let mut live = session(&roomy()).await;
    build(&mut live).await;
    // A heap larger than 12 MiB, the smallest memory limit a policy may set.
    step(
        &mut live,
        "globalThis.pad = new Uint8Array(16 << 20); 0",
        "null",
    )
    .await;
    let file = live.image();
    let refused = |bytes: Vec<u8>| async move {
        match PALISADE.wake_live_session(&roomy(), &bytes).await {
            Ok(_) => panic!("a damaged image was accepted"),
            Err(error) => error.code(),
        }
    };
    assert_eq!(
        refused(file[..file.len() / 2].to_vec()).await,
        "invalid_component"
    );
    let mut forged = file.clone();
    let middle = forged.len() / 2;
    forged[middle] ^= 0x40;
    assert_eq!(refused(forged).await, "invalid_component");
    assert_eq!(refused(b"not an image".to_vec()).await, "invalid_component");
    // Larger than the policy lets the heap be.
    let small = policy("[limits]\nmemory = \"12MiB\"\n");
    match PALISADE.wake_live_session(&small, &file).await {
        Ok(_) => panic!("an image over the memory limit was accepted"),
        Err(error) => assert_eq!(error.code(), "invalid_component"),
    }
    // The session the image came from, and the host, are fine.
    assert_eq!(step(&mut live, "counter", "null").await, "1");
    assert_next_call_works().await;
}

#[tokio::test]
async fn a_fork_copies_the_heap_and_then_goes_its_own_way() {
    let mut live = session(&roomy()).await;
    build(&mut live).await;
    let mut fork = live.fork();
    assert_eq!(step(&mut fork, "counter += 10", "null").await, "11");
    assert_eq!(step(&mut live, "counter", "null").await, "1");
    assert_eq!(step(&mut fork, "counter", "null").await, "11");
}

#[tokio::test]
async fn a_reset_returns_to_a_fresh_heap() {
    let mut live = session(&roomy()).await;
    build(&mut live).await;
    live.reset();
    assert_eq!(
        step(&mut live, PROBE, "null").await,
        "[null,null,null,null]"
    );
    assert_eq!(live.heap().calls, 1);
}

#[tokio::test]
async fn each_call_is_limited_as_a_fresh_one_and_the_heap_counts() {
    // Fuel is per call: three steps that together spend more than the budget each pass.
    let p = policy("[limits]\nfuel = 50_000_000\ntimeout = \"30s\"\n");
    let mut live = session(&p).await;
    let lap = |n: u64| format!("var i; for (i = 0; i < {n}; i++) {{}} i");
    let probe = live.run("loop.js", &lap(10_000), "null").await;
    // Iterations for about 25M of fuel: half the budget.
    let n = 10_000 * 25_000_000 / probe.receipt.fuel_used.max(1);
    let mut spent = 0;
    for _ in 0..3 {
        let outcome = live.run("loop.js", &lap(n), "null").await;
        assert_eq!(output(&outcome), n.to_string());
        spent += outcome.receipt.fuel_used;
    }
    assert!(spent > 50_000_000, "{spent}");
    // A heap of 40 MiB, then a call whose memory limit is below it.
    let p = policy("[limits]\nmemory = \"128MiB\"\nfuel = 10_000_000_000\ntimeout = \"30s\"\n");
    let mut live = session(&p).await;
    step(
        &mut live,
        "globalThis.big = new Uint8Array(40 << 20).fill(1); big.length",
        "null",
    )
    .await;
    let lowered = palisade::RunOptions::default().memory("32MiB".parse().unwrap());
    let outcome = live.run_with("small.js", "1", "null", &lowered).await;
    assert_eq!(code(&outcome), "memory_limit");
    assert_eq!(step(&mut live, "big.length", "null").await, "41943040");
    assert!(live.heap().memory_bytes > 40 << 20);
}

#[tokio::test]
async fn a_live_policy_may_not_mount_directories() {
    let dir = scratch_dir("live-fs");
    let p = policy(&format!(
        "[[fs.mount]]\nhost = \"{}\"\nguest = \"/data\"\n",
        dir.display()
    ));
    match PALISADE.live_session(&p).await {
        Ok(_) => panic!("a live session mounted a directory"),
        Err(error) => assert_eq!(error.code(), "invalid_policy"),
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Timers a step leaves pending are dropped with it: a later step that waits on the event
/// loop never sees them fire, whether it calls a timer function itself or none (a step that
/// calls none skips clearing the timers at its end: there can be none to clear).
#[tokio::test]
async fn timers_a_step_leaves_pending_never_fire_in_a_later_step() {
    let mut live = session(&roomy()).await;
    let left = "globalThis.fired = [];\n\
         const fire = (what) => { fired.push(what); globalThis.wake?.(); };\n\
         setTimeout(() => fire('timeout'), 0);\n\
         setInterval(() => fire('interval'), 1);\n\
         fired.length";
    assert_eq!(step(&mut live, left, "null").await, "0");
    // No timer function: only a timer left pending could settle this; none is, so the event
    // loop finds nothing to run.
    let probe = "await new Promise((done) => { globalThis.wake = done; }); fired";
    let outcome = live.run("probe.js", probe, "null").await;
    assert_eq!(code(&outcome), "guest_deadlock");
    let waited = "await new Promise((done) => setTimeout(done, 20)); fired";
    assert_eq!(step(&mut live, waited, "null").await, "[]");
    // A step's own timers fire within it, and are gone after it.
    let own = "setTimeout(() => fired.push('own'), 0);\n\
         setInterval(() => fire('again'), 1);\n\
         await new Promise((done) => setTimeout(done, 5)); fired.slice(0, 1)";
    assert_eq!(step(&mut live, own, "null").await, r#"["own"]"#);
    let outcome = live.run("probe.js", probe, "null").await;
    assert_eq!(code(&outcome), "guest_deadlock");
    assert_eq!(step(&mut live, "fired.length > 1", "null").await, "true");
}

/// A step without the word `await` runs as a plain script; one with it, as an async body (for
/// top-level `await`). The two give the same completion values, keep the same declarations
/// and fail with the same codes: each case runs in a session of each kind, the second's step
/// starting with `await 0;`.
#[tokio::test]
async fn a_step_runs_alike_with_and_without_await() {
    let cases: [(&str, Result<&str, &str>); 10] = [
        ("({ value: 5, other: 1 })", Ok(r#"{"value":5,"other":1}"#)),
        ("Promise.resolve(3)", Ok("3")),
        (
            "var v = 7; let w = 8; function f() { return v + w; } f()",
            Ok("15"),
        ),
        (
            "[typeof v, typeof w, f(), this === globalThis]",
            Ok(r#"["number","number",15,true]"#),
        ),
        ("throw new RangeError('out')", Err("guest_exception")),
        ("let = ;", Err("guest_syntax")),
        ("new Promise(() => {})", Err("guest_deadlock")),
        ("w += 1", Ok("9")),
        ("undeclared = 1; typeof undeclared", Ok(r#""number""#)),
        ("let w = 1;", Err("guest_exception")),
    ];
    let mut plain = session(&roomy()).await;
    let mut awaiting = session(&roomy()).await;
    for (source, expected) in cases {
        for (live, source) in [
            (&mut plain, source.to_owned()),
            (&mut awaiting, format!("await 0;\n{source}")),
        ] {
            let outcome = live.run("step.js", &source, "null").await;
            match expected {
                Ok(value) => assert_eq!(output(&outcome), value, "{source}"),
                Err(expected) => assert_eq!(code(&outcome), expected, "{source}"),
            }
        }
    }
}
