//! Regression tests for the containment escapes (docs/reliability.md), compile group: each test is
//! named after its item, asserts the exact code, then shows that a normal call still works.

use crate::support::*;
use palisade::{Error, Policy, Script};

/// Item 10: `[kv]` without a namespace used to default to the policy's name, so
/// `tenantA/agent.toml` and `tenantB/agent.toml` shared one namespace and B read A's keys. Now
/// the namespace is required, and tenants with their own namespaces see only their own keys.
#[tokio::test]
async fn escape_10_kv_namespace_has_no_default() {
    let dir = scratch_dir("escape-10");
    let write = |tenant: &str, namespace: &str| {
        let folder = dir.join(tenant);
        std::fs::create_dir_all(&folder).unwrap();
        let path = folder.join("agent.toml");
        std::fs::write(
            &path,
            format!("[kv]\n{namespace}\n[kv.buckets]\napp = \"rw\"\n"),
        )
        .unwrap();
        path
    };
    for tenant in ["tenantA", "tenantB"] {
        let error = Policy::from_file(write(tenant, "")).expect_err("no namespace is refused");
        assert_eq!(error.key, "kv.namespace");
        assert!(
            error.message.contains("add `namespace"),
            "{}",
            error.message
        );
        assert_eq!(Error::from(error).code(), "invalid_policy");
    }
    let a = Policy::from_file(write("tenantA", "namespace = \"escape-10-a\"")).unwrap();
    let b = Policy::from_file(write("tenantB", "namespace = \"escape-10-b\"")).unwrap();
    assert_eq!(a.name(), b.name(), "both files are named agent.toml");
    let script = Script::new(
        "tenant.js",
        "export default async (x) => { if (x.put) await kv.set('secret', x.put); \
         return { secret: await kv.get('secret') }; }",
    );
    let put = PALISADE.run(&a, &script, r#"{"put":"A's data"}"#).await;
    assert_eq!(output(&put), r#"{"secret":"A's data"}"#);
    let other = PALISADE.run(&b, &script, "{}").await;
    assert_eq!(output(&other), r#"{"secret":null}"#);
    let own = PALISADE.run(&a, &script, "{}").await;
    assert_eq!(output(&own), r#"{"secret":"A's data"}"#);
    assert_next_call_works().await;
}

