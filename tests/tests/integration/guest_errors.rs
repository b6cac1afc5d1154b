//! Script failures come back typed: syntax errors with locations, exceptions with class names,
//! deadlocks, missing exports, results without a JSON form.

use crate::support::*;
use palisade::{Error, Script};

#[tokio::test]
async fn syntax_errors_carry_line_and_column() {
    let outcome = run(&roomy(), "syntax_error.js", "null").await;
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
    let outcome = run(&roomy(), "throws_type_error.js", "null").await;
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
    let outcome = run(&roomy(), "rejects_range_error.js", "null").await;
    assert_eq!(exception(&outcome), ("RangeError", "async bad"));
}

#[tokio::test]
async fn thrown_non_errors_are_described() {
    let outcome = run(&roomy(), "throws_string.js", "null").await;
    assert_eq!(exception(&outcome), ("string", "a string"));
}

#[tokio::test]
async fn a_promise_that_never_settles_is_a_deadlock() {
    let outcome = run(&roomy(), "never_settles.js", "null").await;
    assert_eq!(code(&outcome), "guest_deadlock");
    let outcome = run_source("await new Promise(() => {}); export default 1;", "null").await;
    assert_eq!(code(&outcome), "guest_deadlock");
}

#[tokio::test]
async fn a_missing_export_is_reported() {
    let script = Script::new("x.js", "export default 1;");
    let outcome = PALISADE.call(&roomy(), &script, "nope", "null").await;
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
        let outcome = run(&roomy(), fixture, "null").await;
        assert_eq!(code(&outcome), "bad_output", "{fixture}");
    }
    assert_next_call_works().await;
}

#[tokio::test]
async fn undefined_is_null_and_plain_values_are_results() {
    let p = roomy();
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
    let outcome = PALISADE.call(&roomy(), &script, "named", "[true]").await;
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
    let outcome = run(&roomy(), "console_levels.js", "null").await;
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

/// Every code in `Error::table()` has a row and a section in docs/errors.md, and the page lists
/// no code that does not exist.
#[test]
fn docs_errors_md_lists_exactly_the_codes() {
    let page = std::fs::read_to_string(root().join("docs/errors.md")).unwrap();
    let mut rows: Vec<(String, i32, u16)> = page
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let code = cells.get(1)?.strip_prefix("[`")?.split('`').next()?;
            Some((
                code.to_owned(),
                cells.get(2)?.parse().ok()?,
                cells.get(3)?.parse().ok()?,
            ))
        })
        .collect();
    rows.sort();
    let mut codes: Vec<(String, i32, u16)> = palisade::Error::table()
        .iter()
        .map(|(code, exit, status)| ((*code).to_owned(), *exit, *status))
        .collect();
    codes.sort();
    assert_eq!(rows, codes, "the table in docs/errors.md");
    for (code, ..) in &codes {
        assert!(
            page.contains(&format!("\n## {code}\n")),
            "no section for {code}"
        );
    }
}

/// An `internal` error carries an id, logged with its cause; the caller sees no detail.
#[tokio::test]
async fn internal_errors_carry_an_error_id() {
    // A key-value store that cannot be opened (its path is a directory) is an internal error.
    let dir = scratch_dir("internal-id");
    let broken = palisade::Palisade::builder()
        .max_concurrency(1)
        .kv_path(&dir)
        .build()
        .unwrap();
    let p = policy("[kv]\nnamespace = \"x\"\n[kv.buckets]\napp = \"rw\"\n");
    let outcome = broken
        .run(&p, &Script::new("kv.js", "export default () => 1;"), "null")
        .await;
    assert_eq!(code(&outcome), "internal");
    let id = outcome.error_id.clone().expect("an error id");
    assert_eq!(id.len(), 16);
    let json = serde_json::to_value(&outcome).unwrap();
    assert_eq!(json["error_id"], id.as_str());
    assert_eq!(json["error"]["message"], "internal error");
    assert_eq!(json["error"]["retryable"], true);
    let fine = run_source("export default () => 1;", "null").await;
    assert!(fine.error_id.is_none());
}
