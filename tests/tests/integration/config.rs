//! `[config]` through `wasi:config/store`: the script reads the policy's values, nothing else.

use crate::support::*;
use palisade::Policy;

#[tokio::test]
async fn scripts_read_the_policy_config_and_nothing_else() {
    let p = policy("[config]\nregion = \"eu-west\"\nmode = \"dry-run\"\n");
    let source =
        "export default () => [config.get('region'), config.get('missing'), config.getAll()]";
    let outcome = run_source_with(&p, source).await;
    assert_eq!(
        output(&outcome),
        r#"["eu-west",null,{"mode":"dry-run","region":"eu-west"}]"#
    );
}

#[tokio::test]
async fn without_a_config_table_config_is_refused_with_the_fix() {
    // In the plain guest (no grant at all) and in the full guest (another grant).
    let scratch = policy("[fs.scratch]\nguest = \"/scratch\"\n");
    for p in [roomy(), scratch] {
        assert_ungranted(
            &p,
            "config.get('region')",
            "config",
            "config.region = \"...\"",
        )
        .await;
        assert_ungranted(&p, "config.getAll()", "config", "config = {}").await;
    }
}

#[tokio::test]
async fn config_values_are_strings() {
    let error = Policy::from_toml("[config]\nport = 8080\n", None).unwrap_err();
    assert_eq!(error.key, "config.port");
    assert!(
        error.message.contains("expected a string"),
        "{}",
        error.message
    );
}

async fn run_source_with(p: &Policy, source: &str) -> palisade::Outcome {
    PALISADE
        .run(p, &palisade::Script::new("config.js", source), "null")
        .await
}
