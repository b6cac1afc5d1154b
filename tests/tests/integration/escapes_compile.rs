//! Regression tests for the containment escapes (docs/reliability.md), compile group: each test is
//! named after its item, asserts the exact code, then shows that a normal call still works.

use crate::support::*;
use palisade::{Error, Palisade, Policy, Script};

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

/// A top level that spins only when it finds the compile's placeholder accessors (a call from
/// source sees plain values there), so that calls work and only the snapshot would spin.
const SNAPSHOT_SPINNER: &str = "\
    const seen = Object.getOwnPropertyDescriptor(globalThis, 'config');\n\
    if (seen && typeof seen.get === 'function') { for (;;) {} }\n\
    export default () => 'ran';\n";

/// Item 9: `palisade compile` ran a top level with no wall-clock limit (a spinning one was
/// stopped only by its fuel, 30-60 s later). Now the policy's `limits.timeout` bounds it.
#[tokio::test]
async fn escape_09_compile_runs_under_the_policys_deadline() {
    let p = policy(
        "[limits]\ntimeout = \"300ms\"\nfuel = 100_000_000_000\n[config]\nregion = \"eu\"\n",
    );
    // Load the instrumented guest first (once per process; a Cranelift compile on a cache
    // miss), so that the time measured below is the top level's alone.
    let warm = PALISADE
        .compile(&p, &Script::new("warm.js", "export default () => 1;"))
        .await;
    assert!(warm.is_ok(), "{:?}", warm.err());
    let started = std::time::Instant::now();
    let spun = PALISADE
        .compile(&p, &Script::new("spin.js", SNAPSHOT_SPINNER))
        .await
        .expect_err("a spinning top level does not compile");
    let took = started.elapsed();
    assert_eq!(spun.code(), "timeout", "{spun}");
    assert!(
        took < std::time::Duration::from_secs(3),
        "the compile ran {took:?} under a 300ms deadline"
    );
    // Called from source, the same script runs.
    let outcome = PALISADE
        .run(&p, &Script::new("spin.js", SNAPSHOT_SPINNER), "null")
        .await;
    assert_eq!(output(&outcome), r#""ran""#);
    assert_next_call_works().await;
}

/// Item 9, in the background: an automatic compile gets the policy's deadline but at most 2 s,
/// however long the policy lets calls run; the script keeps running from source.
#[tokio::test]
async fn escape_09_auto_compile_has_a_bounded_background_budget() {
    use palisade::AutoCompileStatus;
    let auto = Palisade::builder()
        .max_concurrency(4)
        .auto_compile(2)
        .kv_path(scratch_dir("escape-09-kv").join("kv.redb"))
        .build()
        .unwrap();
    let p =
        policy("[limits]\ntimeout = \"60s\"\nfuel = 100_000_000_000\n[config]\nregion = \"eu\"\n");
    let script = Script::new("background-spin.js", SNAPSHOT_SPINNER);
    let started = std::time::Instant::now();
    for _ in 0..2 {
        assert_eq!(output(&auto.run(&p, &script, "null").await), r#""ran""#);
    }
    let status = loop {
        let status = auto.auto_compile_status(&p, &script).unwrap();
        if status != AutoCompileStatus::Compiling
            || started.elapsed() > std::time::Duration::from_secs(60)
        {
            break status;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    let took = started.elapsed();
    match &status {
        AutoCompileStatus::Refused { reason } => {
            assert!(reason.starts_with("timeout:"), "{reason}")
        }
        other => panic!("expected a refused compile, got {other:?}"),
    }
    assert!(
        took < std::time::Duration::from_secs(10),
        "the background compile ran {took:?}"
    );
    assert_eq!(output(&auto.run(&p, &script, "null").await), r#""ran""#);
    assert_next_call_works().await;
}
