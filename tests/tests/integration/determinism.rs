//! `[determinism]`: with a fixed clock and a seed, the same input gives byte-identical output,
//! logs and fuel; without it, every call gets fresh randomness and the real time.

use crate::support::*;
use palisade::Policy;

fn deterministic() -> Policy {
    Policy::from_file(root().join("policies/deterministic-action.toml")).unwrap()
}

#[tokio::test]
async fn twenty_deterministic_runs_are_identical() {
    let p = deterministic();
    // The first call of a script also compiles it to bytecode and is charged for that, unless
    // another test ran the same script first: warm the cache, so that the fuel compared below
    // does not depend on the order the tests run in.
    run(&p, "nondeterministic.js", r#"{"order":7}"#).await;
    let first = run(&p, "nondeterministic.js", r#"{"order":7}"#).await;
    let first_output = output(&first).to_owned();
    let value: serde_json::Value = serde_json::from_str(&first_output).unwrap();
    assert_eq!(
        value["now"], 1_704_067_200_000u64,
        "Date.now() reads the fixed instant"
    );
    assert_eq!(
        first.logs[0].message.split(" at ").nth(1),
        Some("2024-01-01T00:00:00.000Z")
    );
    for _ in 0..19 {
        let again = run(&p, "nondeterministic.js", r#"{"order":7}"#).await;
        assert_eq!(output(&again), first_output);
        assert_eq!(again.logs, first.logs);
        assert_eq!(again.receipt.fuel_used, first.receipt.fuel_used);
    }
}

#[tokio::test]
async fn the_seed_decides_the_random_sequence() {
    let seeded = |seed: u64| policy(&format!("[determinism]\nseed = {seed}\n"));
    let rolls =
        |json: &str| serde_json::from_str::<serde_json::Value>(json).unwrap()["rolls"].clone();
    let a = run(&seeded(1), "nondeterministic.js", "null").await;
    let a_again = run(&seeded(1), "nondeterministic.js", "null").await;
    let b = run(&seeded(2), "nondeterministic.js", "null").await;
    assert_eq!(rolls(output(&a)), rolls(output(&a_again)));
    assert_ne!(rolls(output(&a)), rolls(output(&b)));
    // A seed alone leaves the clock real.
    let now: u64 = serde_json::from_str::<serde_json::Value>(output(&a)).unwrap()["now"]
        .as_u64()
        .unwrap();
    assert!(now > 1_704_067_200_000);
}

#[tokio::test]
async fn without_determinism_every_call_differs() {
    let p = roomy();
    let mut seen = std::collections::HashSet::new();
    for _ in 0..5 {
        let outcome = run(&p, "nondeterministic.js", "null").await;
        let value: serde_json::Value = serde_json::from_str(output(&outcome)).unwrap();
        seen.insert(value["rolls"].to_string());
    }
    assert_eq!(
        seen.len(),
        5,
        "Math.random() repeated a sequence across calls"
    );
}

#[test]
fn a_fixed_clock_defaults_to_the_unix_epoch() {
    let p = policy("[determinism]\nclock = \"fixed\"\n");
    assert_eq!(
        p.determinism().clock,
        palisade::policy::Clock::Fixed(std::time::Duration::ZERO)
    );
    assert_eq!(p.determinism().seed, None);
}
