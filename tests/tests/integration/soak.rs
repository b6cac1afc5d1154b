//! `palisade soak` (issue 29): the real binary runs its mix of normal and hostile scripts for
//! 20 s at 16 calls in flight; every kind of script must have run, each ending with its expected
//! code and no other, and the process's RSS, file descriptors and threads must stay flat.

use crate::cli::palisade_bin;
use crate::support::root;
use serde_json::Value;
use std::process::{Command, Stdio};

#[test]
fn issue_29_a_short_soak_ends_every_call_as_expected_and_does_not_drift() {
    let out = Command::new(palisade_bin())
        .args(["soak", "--duration", "20s", "--concurrency", "16"])
        .current_dir(root())
        .stdin(Stdio::null())
        .output()
        .expect("palisade runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}\n{stderr}", out.status);
    let report: Value = serde_json::from_slice(&out.stdout).expect("the report is JSON");
    assert_eq!(report["pass"], true, "{report:#}");
    assert_eq!(report["wrong"], 0, "{report:#}");
    assert_eq!(report["crashes"], 0, "{report:#}");
    let kinds = report["kinds"].as_object().unwrap();
    let expected = [
        ("normal", "ok"),
        ("endless_loop", "fuel_exhausted"),
        ("sleep_past_deadline", "timeout"),
        ("memory_bomb", "memory_limit"),
        ("deep_recursion", "stack_overflow"),
        ("console_flood", "ok"),
        ("kv_write", "ok"),
        ("capability", "ok"),
        ("cancelled", "cancelled"),
        ("fetch_ok", "ok"),
        ("fetch_reset", "ok"),
        ("fetch_stall", "ok"),
    ];
    assert_eq!(kinds.len(), expected.len(), "{report:#}");
    for (name, code) in expected {
        let kind = &kinds[name];
        assert_eq!(kind["expected"], code, "{name}");
        let calls = kind["calls"].as_u64().unwrap();
        assert!(calls > 0, "{name} never ran: {report:#}");
        // Every call of the kind ended with its code, and only with it.
        let codes = kind["codes"].as_object().unwrap();
        assert_eq!(codes.len(), 1, "{name}: {codes:?}");
        assert_eq!(codes[code].as_u64(), Some(calls), "{name}: {codes:?}");
    }
    let samples = report["samples"].as_array().unwrap();
    assert!(samples.len() >= 5, "{report:#}");
    for sample in samples {
        assert!(sample["rss_kib"].as_u64().unwrap() > 0, "{sample}");
        assert!(sample["fds"].as_u64().unwrap() > 0, "{sample}");
        assert!(sample["threads"].as_u64().unwrap() > 0, "{sample}");
    }
    assert!(
        report["drift"]["rss_pct"].as_f64().unwrap() <= 5.0,
        "{report:#}"
    );
    assert!(
        report["drift"]["fds_pct"].as_f64().unwrap() <= 5.0,
        "{report:#}"
    );
}
