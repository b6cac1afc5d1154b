//! Scripts compiled once to QuickJS bytecode run like their source; compile errors are typed.

use crate::support::*;
use palisade::{Error, Palisade, Script};
use std::pin::Pin;
use std::sync::LazyLock;
use std::task::Poll;

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

/// A script no other test uses (`tag` tells them apart), long enough that its compile yields
/// (it takes more than a fuel slice, about 47M fuel), so that other calls start before it
/// ends; its call returns `[x, 7, "7"]`.
fn long_script(tag: &str) -> Script {
    let mut source = format!("// {tag}\n");
    for i in 0..800 {
        source.push_str(&format!(
            "function f{i}(x) {{ return [x, {i}, \"{i}\"]; }}\n"
        ));
    }
    source.push_str("export default (x) => f7(x)\n");
    Script::new("long.js", source)
}

/// Calls that start while a script's first call compiles it wait for that compile instead of
/// compiling it too: one call is charged for it, and every call runs the same bytecode.
#[tokio::test]
async fn calls_that_start_during_a_compile_wait_for_it() {
    let p = roomy();
    let script = long_script("calls_that_start_during_a_compile_wait_for_it");
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

/// `call` (a call of a `long_script` under a policy without capabilities) polled once, which
/// leaves it in its compile (it yields at each fuel slice), and set aside. Before its compile,
/// a call waits only for the guest's runtime to load (done here first) or for an admission
/// slot, of which the suite's Palisade has 64.
async fn in_its_compile<F: Future>(call: F) -> Pin<Box<F>> {
    // The guest's runtime loaded, so that the first poll reaches the compile.
    let warm = PALISADE.run(&roomy(), &fixture("echo.js"), "1").await;
    assert_eq!(output(&warm), r#"{"got":1}"#);
    let mut call = Box::pin(call);
    std::future::poll_fn(|cx| {
        assert!(
            call.as_mut().poll(cx).is_pending(),
            "the compile is under way"
        );
        Poll::Ready(())
    })
    .await;
    call
}

/// A compile that stops at its own call's limits does not leave the calls waiting for it
/// without bytecode: each compiles the script under its own policy, and caches it. (A call that
/// did not wait would pass too: what this catches is a waiting call that runs the source.)
#[tokio::test]
async fn a_compile_stopped_by_its_calls_limits_is_done_again_by_a_waiting_call() {
    let (p, tight) = (
        roomy(),
        policy("[limits]\nfuel = 20_000_000\ntimeout = \"10s\"\n"),
    );
    let script = long_script("a_compile_stopped_by_its_calls_limits_is_done_again");
    let starving = in_its_compile(PALISADE.run(&tight, &script, "1")).await;
    // The waiting call first, so that it looks the script up while the compile is under way.
    let (waited, starved) = tokio::join!(biased; PALISADE.run(&p, &script, "1"), starving);
    assert_eq!(code(&starved), "fuel_exhausted");
    assert_eq!(output(&waited), r#"[1,7,"7"]"#);
    let hit = PALISADE.run(&p, &script, "1").await;
    assert_eq!(output(&hit), r#"[1,7,"7"]"#);
    assert!(
        waited.receipt.fuel_used > hit.receipt.fuel_used + 10_000_000,
        "the waiting call compiled it and was charged for it"
    );
    assert!(
        hit.receipt.fuel_used < 10_000_000,
        "and cached it: the next call only ran it"
    );
}

/// A script that does not compile is compiled once too: a call that waited for that compile
/// runs it from source, reporting its syntax error, and does not compile it a second time.
#[tokio::test]
async fn calls_waiting_on_a_script_that_does_not_compile_report_its_error() {
    let p = roomy();
    let long = long_script("calls_waiting_on_a_script_that_does_not_compile");
    let script = Script::new(
        "long.js",
        format!("{}export const broken = ;\n", long.source()),
    );
    let compiling = in_its_compile(PALISADE.run(&p, &script, "1")).await;
    let (waited, compiled) = tokio::join!(biased; PALISADE.run(&p, &script, "1"), compiling);
    assert_eq!(
        (code(&compiled), code(&waited)),
        ("guest_syntax", "guest_syntax")
    );
    // The first call parsed the script twice (its compile, then its run from source), the
    // waiting call once.
    let (compiled, waited) = (compiled.receipt.fuel_used, waited.receipt.fuel_used);
    assert!(
        waited > 10_000_000 && compiled > waited + 10_000_000,
        "{compiled}, {waited}"
    );
}

/// A call polled once and then set aside, not dropped, while it compiles a script holds up no
/// other call of it: the call that waits for the compile drives it.
#[tokio::test]
async fn a_call_set_aside_while_it_compiles_holds_up_no_other_call() {
    let p = roomy();
    let script = long_script("a_call_set_aside_while_it_compiles_holds_up_no_other_call");
    let aside = in_its_compile(PALISADE.run(&p, &script, "1")).await;
    let other = PALISADE.run(&p, &script, "1").await;
    assert_eq!(output(&other), r#"[1,7,"7"]"#);
    assert!(
        other.receipt.fuel_used < 10_000_000,
        "it ran the set-aside call's bytecode"
    );
    let aside = aside.await;
    assert_eq!(output(&aside), r#"[1,7,"7"]"#);
    assert!(
        aside.receipt.fuel_used > 10_000_000,
        "the set-aside call paid for its compile"
    );
}

/// A call dropped while it compiles a script, with no other call waiting, ends that compile:
/// the next call of the script compiles it.
#[tokio::test]
async fn a_call_dropped_while_it_compiles_leaves_the_next_call_to_compile() {
    let p = roomy();
    let script = long_script("a_call_dropped_while_it_compiles_leaves_the_next_call_to_compile");
    drop(in_its_compile(PALISADE.run(&p, &script, "1")).await);
    let next = PALISADE.run(&p, &script, "1").await;
    assert_eq!(output(&next), r#"[1,7,"7"]"#);
    assert!(
        next.receipt.fuel_used > 10_000_000,
        "it compiled the script"
    );
    let hit = PALISADE.run(&p, &script, "1").await;
    assert!(hit.receipt.fuel_used < 10_000_000, "and cached it");
}

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
