//! The shapes scripts come in: a module run for its effects, a default export that is an
//! object of methods (a tool), named exports.

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
