//! Scripts compiled once to QuickJS bytecode run like their source; compile errors are typed.

use crate::support::*;
use palisade::{Error, Palisade, Script};
use std::sync::LazyLock;

/// A Palisade without the bytecode cache: every source script is parsed at each call.
static UNCACHED: LazyLock<Palisade> = LazyLock::new(|| {
    Palisade::builder()
        .max_concurrency(8)
        .bytecode_cache(0)
        .build()
        .unwrap()
});

#[tokio::test]
async fn precompiled_scripts_give_the_same_results() {
    let p = roomy();
    let script = fixture("echo.js");
    let compiled = PALISADE
        .precompile(&p, &script)
        .await
        .expect("echo.js compiles");
    assert!(compiled.is_precompiled() && !script.is_precompiled());
    for input in ["1", "[1,{\"a\":null}]", "\"text\""] {
        let from_source = UNCACHED.run(&p, &script, input).await;
        let from_bytecode = PALISADE.run(&p, &compiled, input).await;
        assert_eq!(output(&from_source), output(&from_bytecode));
        assert!(
            from_bytecode.receipt.fuel_used < from_source.receipt.fuel_used,
            "bytecode skips parsing"
        );
    }
    let named = PALISADE.call(&p, &compiled, "named", "2").await;
    assert_eq!(output(&named), r#"{"named":2}"#);
}

#[tokio::test]
async fn precompiled_scripts_keep_their_errors_and_limits() {
    let p = roomy();
    let thrower = PALISADE
        .precompile(&p, &fixture("throws_type_error.js"))
        .await
        .unwrap();
    let outcome = PALISADE.run(&p, &thrower, "null").await;
    assert!(
        matches!(outcome.error(), Some(Error::GuestException { name, .. }) if name == "TypeError")
    );
    let looping = PALISADE
        .precompile(&p, &fixture("infinite_loop.js"))
        .await
        .unwrap();
    let tight = policy("[limits]\nfuel = 5_000_000\n");
    assert_eq!(
        code(&PALISADE.run(&tight, &looping, "null").await),
        "fuel_exhausted"
    );
}

#[tokio::test]
async fn precompiling_a_syntax_error_is_guest_syntax() {
    let p = roomy();
    let error = PALISADE
        .precompile(&p, &fixture("syntax_error.js"))
        .await
        .unwrap_err();
    assert_eq!(error.code(), "guest_syntax");
    let error = PALISADE
        .precompile(&p, &Script::new("x.js", "export default ("))
        .await
        .unwrap_err();
    assert_eq!(error.code(), "guest_syntax");
}

/// `Palisade::run` can be spawned on a multi-threaded runtime: its future is `Send`.
#[test]
fn run_futures_are_send() {
    fn assert_send<T: Send>(_: &T) {}
    let p = roomy();
    let script = Script::new("x.js", "export default 1");
    let future = PALISADE.run(&p, &script, "null");
    assert_send(&future);
    let future = PALISADE.precompile(&p, &script);
    assert_send(&future);
}

/// Calls that start while a script's first call compiles it wait for that compile instead of
/// compiling it too: one call is charged for it, and every call runs the same bytecode.
#[tokio::test]
async fn calls_that_start_during_a_compile_wait_for_it() {
    let p = roomy();
    // A script no other test uses, long enough that its compile yields (it takes more than a
    // fuel slice), so that the other calls start before it ends.
    let mut source = String::from("// calls_that_start_during_a_compile_wait_for_it\n");
    for i in 0..COMPILE_FUNCTIONS {
        source.push_str(&format!(
            "function f{i}(x) {{ return [x, {i}, \"{i}\"]; }}\n"
        ));
    }
    source.push_str("export default (x) => f7(x)\n");
    let script = Script::new("burst.js", source);
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (p, script) = (p.clone(), script.clone());
        calls.spawn(async move { PALISADE.run(&p, &script, "1").await });
    }
    let outcomes = calls.join_all().await;
    let hit = PALISADE.run(&p, &script, "1").await;
    assert_eq!(output(&hit), r#"[1,7,"7"]"#);
    let mut fuel: Vec<u64> = outcomes
        .iter()
        .map(|outcome| {
            assert_eq!(output(outcome), output(&hit));
            outcome.receipt.fuel_used
        })
        .collect();
    fuel.sort_unstable();
    let compiled = fuel.pop().unwrap();
    assert!(
        compiled > hit.receipt.fuel_used + 10_000_000,
        "{compiled} spans a fuel slice"
    );
    assert_eq!(
        fuel,
        vec![hit.receipt.fuel_used; 7],
        "the others ran the bytecode"
    );
}

/// How many functions make `calls_that_start_during_a_compile_wait_for_it`'s script compile
/// for more than a fuel slice.
const COMPILE_FUNCTIONS: usize = 800;

#[tokio::test]
async fn source_scripts_are_compiled_once_and_cached() {
    let p = roomy();
    // A script no other test uses, so that the first call here is a cache miss.
    let script = Script::new(
        "cached.js",
        "export default (x) => ({ cached: x, n: 1 + 2 })",
    );
    let first = PALISADE.run(&p, &script, "7").await;
    let second = PALISADE.run(&p, &script, "7").await;
    let uncached = UNCACHED.run(&p, &script, "7").await;
    assert_eq!(output(&first), r#"{"cached":7,"n":3}"#);
    assert_eq!(output(&second), output(&uncached));
    // The first call also paid for compiling to bytecode; the second only ran it.
    assert!(
        first.receipt.fuel_used > second.receipt.fuel_used,
        "the first call is charged for the compile"
    );
    assert!(
        second.receipt.fuel_used < uncached.receipt.fuel_used,
        "parsing was skipped"
    );
    // A different name is a different module (it shows in stack traces): no false sharing.
    let renamed = Script::new("other.js", script.source());
    assert_eq!(
        output(&PALISADE.run(&p, &renamed, "7").await),
        output(&first)
    );
}
