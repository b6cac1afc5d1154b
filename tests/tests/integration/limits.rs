//! Every limit ends the call with its own code, carries its fix, and the next call works.

use crate::support::*;
use palisade::{Error, Palisade, Policy, Script};

#[tokio::test]
async fn fuel_budget_ends_an_infinite_loop() {
    let p = policy("[limits]\nfuel = 50_000_000\ntimeout = \"30s\"\n");
    let outcome = run(&p, "infinite_loop.js", "null").await;
    assert_eq!(code(&outcome), "fuel_exhausted");
    assert_eq!(outcome.receipt.fuel_used, 50_000_000);
    let fix = outcome.error().unwrap().fix().unwrap();
    assert_eq!(
        (fix.key.as_str(), fix.value.as_str()),
        ("limits.fuel", "100000000")
    );
    assert_next_call_works().await;
}

#[tokio::test]
async fn deadline_ends_an_infinite_loop() {
    let p = policy("[limits]\nfuel = 1_000_000_000_000\ntimeout = \"100ms\"\n");
    let outcome = run(&p, "infinite_loop.js", "null").await;
    assert_eq!(code(&outcome), "timeout");
    assert_eq!(outcome.error().unwrap().fix().unwrap().value, "\"200ms\"");
    assert_next_call_works().await;
}

/// Without fuel metering the guest has no fuel slices to yield at; the epoch ticker
/// interrupts it instead, and the deadline still holds.
#[tokio::test]
async fn deadline_ends_an_infinite_loop_without_fuel_metering() {
    let unmetered = Palisade::builder()
        .max_concurrency(2)
        .fuel_metering(false)
        .build()
        .expect("Palisade starts");
    let p = policy("[limits]\ntimeout = \"100ms\"\n");
    let outcome = unmetered
        .run(&p, &fixture("infinite_loop.js"), "null")
        .await;
    assert_eq!(code(&outcome), "timeout");
    assert_eq!(outcome.receipt.fuel_used, 0);
    let after = unmetered
        .run(&Policy::builtin_default(), &fixture("echo.js"), "1")
        .await;
    assert_eq!(output(&after), r#"{"got":1}"#);
}

#[tokio::test]
async fn deadline_ends_a_loop_of_long_builtins() {
    // Each `repeat` runs inside one QuickJS builtin; the deadline still holds because it is
    // checked in wasm, not by QuickJS.
    let p = policy("[limits]\nfuel = 1_000_000_000_000\ntimeout = \"100ms\"\n");
    let outcome = run(&p, "builtin_loop.js", "null").await;
    assert_eq!(code(&outcome), "timeout");
    assert_next_call_works().await;
}

#[tokio::test]
async fn memory_limit_ends_a_memory_bomb() {
    let p = policy("[limits]\nmemory = \"16MiB\"\nfuel = 10_000_000_000\ntimeout = \"10s\"\n");
    let outcome = run(&p, "memory_bomb.js", "null").await;
    assert_eq!(code(&outcome), "memory_limit");
    assert!(
        outcome.receipt.peak_memory_bytes <= 16 << 20,
        "{:?}",
        outcome.receipt
    );
    assert_eq!(outcome.error().unwrap().fix().unwrap().value, "\"32MiB\"");
    assert_next_call_works().await;
}

/// 40 MB of garbage cycles fit in 16 MiB: QuickJS collects them as the bytes it holds grow.
#[tokio::test]
async fn garbage_cycles_are_collected_within_the_memory_limit() {
    let p = policy("[limits]\nmemory = \"16MiB\"\nfuel = 4_000_000_000\ntimeout = \"10s\"\n");
    let script = palisade::Script::new(
        "cycles.js",
        "export default () => {
           let bytes = 0;
           for (let i = 0; i < 20000; i++) {
             const node = { buffer: new ArrayBuffer(2048) };
             node.self = node;
             bytes += node.buffer.byteLength;
           }
           return bytes;
         };",
    );
    let outcome = PALISADE.run(&p, &script, "null").await;
    assert_eq!(output(&outcome), "40960000");
    assert!(
        outcome.receipt.peak_memory_bytes <= 12 << 20,
        "{:?}",
        outcome.receipt
    );
}

#[tokio::test]
async fn stack_limit_ends_unbounded_recursion() {
    for stack in ["128KiB", "512KiB", "2MiB"] {
        let p = policy(&format!("[limits]\nstack = \"{stack}\"\n"));
        let outcome = run(&p, "deep_recursion.js", "null").await;
        assert_eq!(code(&outcome), "stack_overflow", "stack {stack}");
        assert_next_call_works().await;
    }
}

#[tokio::test]
async fn output_limit_refuses_a_large_result() {
    let outcome = run(&Policy::builtin_default(), "large_output.js", "null").await;
    assert_eq!(code(&outcome), "output_too_large");
    match outcome.error().unwrap() {
        Error::OutputTooLarge { size, .. } => assert_eq!(*size, 2 * 1024 * 1024 + 2),
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(outcome.error().unwrap().fix().unwrap().value, "\"4MiB\"");
    assert_next_call_works().await;
}

#[tokio::test]
async fn input_limit_and_invalid_json_are_invalid_input() {
    let p = policy("[limits]\ninput = \"1KiB\"\n");
    let big = format!("\"{}\"", "x".repeat(2000));
    let outcome = run(&p, "echo.js", &big).await;
    assert_eq!(code(&outcome), "invalid_input");
    assert_eq!(outcome.error().unwrap().fix().unwrap().key, "limits.input");
    assert_eq!(
        outcome.receipt.fuel_used, 0,
        "refused before the sandbox ran"
    );

    for bad in [
        "",
        "{",
        "{'a':1}",
        "[1,]",
        "undefined",
        "1 2",
        "\"\t\"",
        "01",
    ] {
        let outcome = run(&p, "echo.js", bad).await;
        assert_eq!(code(&outcome), "invalid_input", "input {bad:?}");
        assert!(outcome.error().unwrap().fix().is_none());
        let message = outcome.error().unwrap().to_string();
        assert!(
            message.contains("the input is not JSON") && message.contains("line 1 column"),
            "input {bad:?}: {message}"
        );
    }
    // Input that is not JSON ends the call before any of the script runs.
    let outcome = run_source(
        "console.log('top level ran');\nexport default (input) => input;",
        "{\"a\":",
    )
    .await;
    assert_eq!(code(&outcome), "invalid_input");
    assert!(outcome.logs.is_empty(), "{:?}", outcome.logs);
    assert_next_call_works().await;
}

#[tokio::test]
async fn console_is_capped_with_a_marker_not_an_error() {
    let p = policy("[limits]\nconsole = \"4KiB\"\n");
    let outcome = run(&p, "console_flood.js", "null").await;
    assert_eq!(output(&outcome), "1");
    // Each kept line costs its bytes plus the host's 32-byte record of it.
    let lines = &outcome.logs[..outcome.logs.len() - 1];
    let kept: usize = lines.iter().map(|l| l.message.len() + 32).sum();
    assert!(kept <= 4096 && kept > 4096 - 32 - 110, "{kept}");
    let marker = outcome.logs.last().unwrap();
    assert!(
        marker.message.contains("console output truncated"),
        "{}",
        marker.message
    );
    assert!(outcome.receipt.console_bytes_dropped > 1_000_000);
}

#[tokio::test]
async fn receipt_reports_the_call() {
    let p = Policy::builtin_default();
    let outcome = run(&p, "echo.js", "[1,2,3]").await;
    assert_eq!(output(&outcome), r#"{"got":[1,2,3]}"#);
    let r = &outcome.receipt;
    assert!(
        r.fuel_used > 10_000 && r.fuel_used < p.limits().fuel,
        "{r:?}"
    );
    assert!(r.peak_memory_bytes >= 1 << 20, "{r:?}");
    assert!(r.wall_time_us > 0);
    assert_eq!(r.policy, "default");
    assert_eq!(r.policy_sha256, p.sha256());
}

#[tokio::test]
async fn a_memory_limit_over_the_instance_maximum_is_an_invalid_policy() {
    let p = policy("[limits]\nmemory = \"4GiB\"\n");
    let outcome = run(&p, "echo.js", "1").await;
    assert_eq!(code(&outcome), "invalid_policy");
}

/// Issue 38, item 20: a chain of promise jobs that runs out of memory stops where a job could not
/// run or be queued; the event loop then has nothing left, and that is the memory's doing. It
/// ends as `memory_limit`, not `guest_deadlock`.
#[tokio::test]
async fn regression_38_20_an_endless_microtask_chain_out_of_memory_is_memory_limit() {
    let p = policy("[limits]\nmemory = \"16MiB\"\nfuel = 10_000_000_000\ntimeout = \"10s\"\n");
    for chain in ["Promise.resolve().then(step)", "queueMicrotask(step)"] {
        let source = format!(
            "export default () => new Promise(() => {{
               const held = [];
               const step = () => {{ held.push(new Array(4096).fill(held.length)); {chain}; }};
               step();
             }});"
        );
        let outcome = PALISADE
            .run(&p, &Script::new("chain.js", source), "null")
            .await;
        assert_eq!(code(&outcome), "memory_limit", "{chain}");
        assert!(outcome.receipt.peak_memory_bytes <= 16 << 20, "{chain}");
    }
    // A chain that just stops, with memory to spare, is still a deadlock.
    let stops = "export default () => new Promise(() => { Promise.resolve().then(() => {}); });";
    let outcome = PALISADE
        .run(&p, &Script::new("stops.js", stops), "null")
        .await;
    assert_eq!(code(&outcome), "guest_deadlock");
    assert_next_call_works().await;
}

/// Issue 38, item 21: a `toJSON` that returns a fresh object pointing back at its owner nests the
/// result for ever (no cycle to find). It ends at once as `stack_overflow`, with a sliver of the
/// fuel budget, where it used to run to the deadline; a plain result 1,000 levels deep still
/// comes out.
#[tokio::test]
async fn regression_38_21_a_to_json_that_nests_for_ever_is_a_stack_overflow_at_once() {
    let p = Policy::builtin_default();
    let owner = "export default () => ({ toJSON() { return { owner: this }; } });";
    let outcome = PALISADE
        .run(&p, &Script::new("owner.js", owner), "null")
        .await;
    assert_eq!(code(&outcome), "stack_overflow");
    assert!(
        outcome.receipt.fuel_used < p.limits().fuel / 30,
        "{:?}",
        outcome.receipt
    );
    let deep = "export default () => { let v = new Date(0); \
                for (let i = 0; i < 1000; i++) v = [v]; return v; };";
    let outcome = PALISADE
        .run(&p, &Script::new("deep.js", deep), "null")
        .await;
    let text = output(&outcome);
    assert!(text.starts_with(&"[".repeat(1000)) && text.contains("1970-01-01T00:00:00.000Z"));
    assert_next_call_works().await;
}
