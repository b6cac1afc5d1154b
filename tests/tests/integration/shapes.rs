//! The shapes scripts come in: a module run for its effects, a snippet whose last expression
//! is its result, a default export that is an object of methods (a tool), named exports.

use crate::support::*;
use palisade::Script;

#[tokio::test]
async fn a_module_without_a_default_export_runs_for_its_effects() {
    let outcome = run_source("console.log('hello from sandbox');", "null").await;
    assert_eq!(output(&outcome), "null");
    assert_eq!(outcome.logs.len(), 1);
    assert_eq!(outcome.logs[0].message, "hello from sandbox");
    // Named exports alone: the top level still runs, and the call is `null`.
    let outcome = run(&roomy(), "no_default.js", "null").await;
    assert_eq!(output(&outcome), "null");
}

/// A snippet as an agent writes it (no export, top-level `await`, a last expression) has that
/// expression's value as its result, and the receipt says so; a module with an export, or one
/// that ends with a statement that has no value, keeps its meaning; the lines of an error are
/// the snippet's own.
#[tokio::test]
async fn a_snippets_last_expression_is_its_result() {
    let snippet = "const xs = await Promise.resolve([1, 2, 3]);\n\
                   const doubled = xs.map((x) => x * 2);\n\
                   ({ count: doubled.length, sum: doubled.reduce((a, b) => a + b, 0) }) // done\n";
    let outcome = run_source(snippet, "null").await;
    assert_eq!(output(&outcome), r#"{"count":3,"sum":12}"#);
    assert_eq!(outcome.receipt.form, Some("last_expression"));
    let shown = serde_json::to_value(&outcome).unwrap();
    assert_eq!(shown["receipt"]["form"], "last_expression");
    // The value of a function is called with the input, as a default export is.
    let outcome = run_source("const f = (x) => x.n + 1;\nf", r#"{"n": 41}"#).await;
    assert_eq!(output(&outcome), "42");
    for (source, out) in [
        ("export const a = 1;\na + 1", "null"),
        ("let a = 1;\nif (a) { a++ }", "null"),
        ("export default () => 7;\n8", "7"),
    ] {
        let outcome = run_source(source, "null").await;
        assert_eq!(output(&outcome), out, "{source}");
        assert_eq!(outcome.receipt.form, None, "{source}");
        assert!(
            serde_json::to_value(&outcome).unwrap()["receipt"]
                .get("form")
                .is_none()
        );
    }
    let thrown = run_source(
        "const a = 1;\n(() => { throw new Error('boom ' + a) })()",
        "null",
    )
    .await;
    assert_eq!(code(&thrown), "guest_exception");
    let shown = serde_json::to_value(&thrown).unwrap();
    assert_eq!(shown["error"]["location"]["line"], 2, "{shown}");
    assert_next_call_works().await;
}

#[tokio::test]
async fn a_method_of_the_default_export_is_called_by_name() {
    let tool = Script::new(
        "tool.js",
        "export default {
           prefix: 'hi',
           async execute(payload) { return `${this.prefix} ${payload.name}`; },
         };",
    );
    let p = roomy();
    let outcome = PALISADE
        .call(&p, &tool, "execute", r#"{"name":"Ada"}"#)
        .await;
    assert_eq!(output(&outcome), r#""hi Ada""#);
    // Called as the default, the object's methods are not JSON: a warning says how to call one.
    let outcome = PALISADE.run(&p, &tool, "null").await;
    assert_eq!(output(&outcome), r#"{"prefix":"hi"}"#);
    let warning = &outcome.logs.last().unwrap().message;
    assert!(
        warning.contains("(execute)") && warning.contains("--export execute"),
        "{warning}"
    );
    // A name that is neither an export nor a method is still missing.
    let outcome = PALISADE.call(&p, &tool, "prefix", "null").await;
    assert_eq!(code(&outcome), "missing_export");
    let outcome = PALISADE.call(&p, &tool, "nope", "null").await;
    assert_eq!(code(&outcome), "missing_export");
    assert_next_call_works().await;
}
