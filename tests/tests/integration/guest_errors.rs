//! Script failures come back typed: syntax errors with locations, exceptions with class names,
//! deadlocks, missing exports, results without a JSON form.

use crate::support::*;
use palisade::{Error, Policy, Script};

#[tokio::test]
async fn syntax_errors_carry_line_and_column() {
    let outcome = run(&Policy::builtin_default(), "syntax_error.js", "null").await;
    assert_eq!(code(&outcome), "guest_syntax");
    match outcome.error().unwrap() {
        Error::GuestSyntax {
            location: Some(location),
            message,
            ..
        } => {
            assert_eq!((location.line, location.column), (2, 15));
            assert!(message.contains("unexpected token"), "{message}");
        }
        other => panic!("unexpected {other:?}"),
    }
}

fn exception(outcome: &palisade::Outcome) -> (&str, &str) {
    match outcome.error() {
        Some(Error::GuestException { name, message, .. }) => (name, message),
        other => panic!("expected guest_exception, got {other:?}"),
    }
}

#[tokio::test]
async fn exceptions_keep_their_class_name_and_stack() {
    let outcome = run(&Policy::builtin_default(), "throws_type_error.js", "null").await;
    assert_eq!(exception(&outcome), ("TypeError", "bad thing"));
    match outcome.error().unwrap() {
        Error::GuestException {
            stack: Some(stack),
            location: Some(location),
            ..
        } => {
            assert!(stack.contains("throws_type_error.js"), "{stack}");
            assert_eq!(location.line, 1);
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn rejections_keep_their_class_name() {
    let outcome = run(&Policy::builtin_default(), "rejects_range_error.js", "null").await;
    assert_eq!(exception(&outcome), ("RangeError", "async bad"));
}

#[tokio::test]
async fn thrown_non_errors_are_described() {
    let outcome = run(&Policy::builtin_default(), "throws_string.js", "null").await;
    assert_eq!(exception(&outcome), ("string", "a string"));
}

#[tokio::test]
async fn a_promise_that_never_settles_is_a_deadlock() {
    let outcome = run(&Policy::builtin_default(), "never_settles.js", "null").await;
    assert_eq!(code(&outcome), "guest_deadlock");
    let outcome = run_source("await new Promise(() => {}); export default 1;", "null").await;
    assert_eq!(code(&outcome), "guest_deadlock");
}

#[tokio::test]
async fn a_missing_export_is_reported() {
    let script = Script::new("x.js", "export default 1;");
    let outcome = PALISADE
        .call(&Policy::builtin_default(), &script, "nope", "null")
        .await;
    assert_eq!(code(&outcome), "missing_export");
}

#[tokio::test]
async fn results_without_a_json_form_are_bad_output() {
    for fixture in [
        "bigint_output.js",
        "cycle_output.js",
        "function_output.js",
        "symbol_output.js",
    ] {
        let outcome = run(&Policy::builtin_default(), fixture, "null").await;
        assert_eq!(code(&outcome), "bad_output", "{fixture}");
    }
    assert_next_call_works().await;
}

#[tokio::test]
async fn undefined_is_null_and_plain_values_are_results() {
    let p = Policy::builtin_default();
    assert_eq!(
        output(&run(&p, "undefined_output.js", "null").await),
        "null"
    );
    assert_eq!(
        output(&run(&p, "plain_value.js", "null").await),
        r#"{"plain":"value"}"#
    );
    assert_eq!(output(&run(&p, "top_level_await.js", "1").await), "42");
}

#[tokio::test]
async fn named_exports_can_be_called() {
    let script = fixture("echo.js");
    let outcome = PALISADE
        .call(&Policy::builtin_default(), &script, "named", "[true]")
        .await;
    assert_eq!(output(&outcome), r#"{"named":[true]}"#);
}

#[tokio::test]
async fn promise_jobs_drain_before_the_result() {
    let source = "export default async (x) => { let n = 0; \
                  await Promise.all([1, 2, 3].map(async (v) => { await null; n += v; })); \
                  return n + x; }";
    assert_eq!(output(&run_source(source, "4").await), "10");
}

#[tokio::test]
async fn console_lines_keep_their_level() {
    use palisade::Level::*;
    let outcome = run(&Policy::builtin_default(), "console_levels.js", "null").await;
    let lines: Vec<_> = outcome
        .logs
        .iter()
        .map(|l| (l.level, l.message.as_str()))
        .collect();
    assert_eq!(
        lines,
        [
            (Debug, "d 1"),
            (Info, "i {\"a\":[1,2]}"),
            (Log, "l"),
            (Warn, "w"),
            (Error, "e boom")
        ]
    );
}
