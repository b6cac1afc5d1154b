//! `Builder::auto_compile`: a source script called often under one policy is compiled into a
//! component in the background and later calls run from it, with the same results and fresh
//! state; top levels a snapshot would freeze, or that use the policy's per-call globals, keep
//! running from source.

use crate::support::*;
use palisade::{AutoCompileStatus, Palisade, Policy, Script};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

/// Compiles a script once it has been called three times under one policy.
static AUTO: LazyLock<Palisade> = LazyLock::new(|| {
    Palisade::builder()
        .max_concurrency(8)
        .auto_compile(3)
        .build()
        .unwrap()
});

/// Poll until the background compile of `script` under `policy` has ended (at most two
/// minutes: a compile takes about a second of CPU).
async fn settled(policy: &Policy, script: &Script) -> AutoCompileStatus {
    let started = Instant::now();
    loop {
        let status = AUTO
            .auto_compile_status(policy, script)
            .expect("auto-compile is on");
        if status != AutoCompileStatus::Compiling || started.elapsed() > Duration::from_secs(120) {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn scripts_called_often_run_compiled_with_their_source_results() {
    let p = roomy();
    let script = fixture("stateful_top_level.js");
    let input = r#"{"n":12,"name":"Ada"}"#;
    let expected = r#"{"calls":1,"square":144,"greeting":"Hello, Ada!","ready":"ready"}"#;
    assert_eq!(
        AUTO.auto_compile_status(&p, &script),
        Some(AutoCompileStatus::Counting { calls: 0 })
    );
    let mut source_fuel = Vec::new();
    for calls in 1..=3 {
        let outcome = AUTO.run(&p, &script, input).await;
        assert_eq!(output(&outcome), expected);
        source_fuel.push(outcome.receipt.fuel_used);
        if calls < 3 {
            assert_eq!(
                AUTO.auto_compile_status(&p, &script),
                Some(AutoCompileStatus::Counting { calls })
            );
        }
    }
    assert_eq!(settled(&p, &script).await, AutoCompileStatus::Ready);
    let from_source = *source_fuel.last().unwrap();
    for _ in 0..3 {
        // Every call still starts from the snapshot: the top level's counter is 1 each time.
        let outcome = AUTO.run(&p, &script, input).await;
        assert_eq!(output(&outcome), expected);
        assert_eq!(outcome.logs.len(), 1);
        assert_eq!(outcome.logs[0].message, "call 1");
        assert!(
            outcome.receipt.fuel_used < from_source / 2,
            "a compiled call skips the top level ({} vs {from_source} from source)",
            outcome.receipt.fuel_used
        );
    }
    // Other exports run from the compiled form too, with the clock and random numbers.
    let spin = AUTO.call(&p, &script, "spin", "null").await;
    assert_eq!(output(&spin), r#"{"random":"number","now":"number"}"#);
    // Under another policy the script is counted afresh.
    let other = policy("[limits]\nfuel = 900_000_000\n");
    assert_eq!(
        AUTO.auto_compile_status(&other, &script),
        Some(AutoCompileStatus::Counting { calls: 0 })
    );
    // A Palisade without auto-compile reports nothing.
    assert_eq!(PALISADE.auto_compile_status(&p, &script), None);
}

#[tokio::test]
async fn top_levels_a_snapshot_would_freeze_keep_running_from_source() {
    let p = roomy();
    for (name, source) in [
        (
            "clock.js",
            "const t = Date.now();\nexport default () => typeof t;\n",
        ),
        (
            "random.js",
            "const r = Math.random();\nexport default () => typeof r;\n",
        ),
    ] {
        let script = Script::new(name, source);
        for _ in 0..3 {
            assert_eq!(output(&AUTO.run(&p, &script, "null").await), r#""number""#);
        }
        match settled(&p, &script).await {
            AutoCompileStatus::Refused { reason } => {
                assert!(reason.starts_with("not_compilable: "), "{name}: {reason}")
            }
            other => panic!("{name}: expected a refusal, got {other:?}"),
        }
        // Later calls still run from source, and are not compiled again.
        let again = AUTO.run(&p, &script, "null").await;
        assert_eq!(output(&again), r#""number""#);
        assert!(matches!(
            AUTO.auto_compile_status(&p, &script),
            Some(AutoCompileStatus::Refused { .. })
        ));
    }
}

#[tokio::test]
async fn policies_with_per_call_globals_compile_scripts_that_use_them_only_in_calls() {
    let p = policy("[config]\nregion = \"eu-west\"\n");
    // The export reads the policy's global: compiled for this policy, with the same result.
    let inside = Script::new(
        "inside.js",
        "const names = ['config', 'kv'].map((n) => n in globalThis);\n\
         export default () => ({ names, region: config.get('region') });\n",
    );
    // `kv` exists too, refusing: capability globals exist under every policy.
    let expected = r#"{"names":[true,true],"region":"eu-west"}"#;
    let mut from_source = 0;
    for _ in 0..3 {
        let outcome = AUTO.run(&p, &inside, "null").await;
        assert_eq!(output(&outcome), expected);
        from_source = outcome.receipt.fuel_used;
    }
    assert_eq!(settled(&p, &inside).await, AutoCompileStatus::Ready);
    for _ in 0..2 {
        let outcome = AUTO.run(&p, &inside, "null").await;
        assert_eq!(output(&outcome), expected);
        // It ran compiled: the top level is no longer charged.
        assert!(
            outcome.receipt.fuel_used < from_source,
            "{} compiled vs {from_source} from source",
            outcome.receipt.fuel_used
        );
    }
    // A top level that looks at it would freeze what belongs to each call: it keeps running
    // from source, with the source's result.
    let top = Script::new(
        "scope.js",
        "const seen = typeof config;\nexport default () => seen;\n",
    );
    for _ in 0..3 {
        assert_eq!(output(&AUTO.run(&p, &top, "null").await), r#""object""#);
    }
    match settled(&p, &top).await {
        AutoCompileStatus::Refused { reason } => {
            assert!(reason.starts_with("not_compilable: "), "{reason}");
            assert!(reason.contains("`config`"), "{reason}");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_eq!(output(&AUTO.run(&p, &top, "null").await), r#""object""#);
}

#[test]
fn a_compile_cut_short_by_its_runtime_lets_the_script_be_counted_again() {
    let p = roomy();
    let script = Script::new(
        "dropped.js",
        "const table = [1, 2, 3];\nexport default () => table.length;\n",
    );
    // The third call starts the compile on this runtime, which is shut down right after.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        for _ in 0..3 {
            assert_eq!(output(&AUTO.run(&p, &script, "null").await), "3");
        }
    });
    assert_eq!(
        AUTO.auto_compile_status(&p, &script),
        Some(AutoCompileStatus::Compiling)
    );
    drop(rt);
    assert_eq!(
        AUTO.auto_compile_status(&p, &script),
        Some(AutoCompileStatus::Counting { calls: 0 })
    );
}
