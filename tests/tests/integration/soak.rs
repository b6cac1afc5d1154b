//! `palisade soak` (issue 29): the real binary runs its mix of normal and hostile scripts for
//! 20 s at 16 calls in flight; every kind of script must have run, each ending with its expected
//! code and no other, and the process's RSS, file descriptors and threads must stay flat. With
//! `--server` (issue 38) it drives a real `palisade serve` instead, and samples that process.

use crate::cli::palisade_bin;
use crate::support::root;
use serde_json::Value;
use std::process::{Command, Stdio};

#[test]
fn issue_29_a_short_soak_ends_every_call_as_expected_and_does_not_drift() {
    let report = soak(&["--duration", "20s", "--concurrency", "16"]);
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
    assert_samples(&report, 5);
    // RSS median to median after the warm-up, within the bound that fails the same steady
    // leaks as 5% from the first sample to the last (3.7% over 17 samples).
    let allowed = report["rss_allowed_pct"].as_f64().unwrap();
    assert!((3.0..5.0).contains(&allowed), "{report:#}");
    assert!(
        report["drift"]["rss_pct"].as_f64().unwrap() <= allowed,
        "{report:#}"
    );
    assert!(
        report["drift"]["fds_pct"].as_f64().unwrap() <= 5.0,
        "{report:#}"
    );
}

/// Issue 38: `palisade soak --server` starts a real `palisade serve` and drives it for 30 s
/// with 4 workers; every step of its mix must have run, each answered with its exact status
/// and code and no other, the server must still be up, and its RSS, fds and threads must stay
/// within the soak's bounds.
#[test]
fn issue_38_a_short_server_soak_answers_every_request_as_expected() {
    let report = soak(&["--server", "--duration", "30s", "--concurrency", "4"]);
    assert_eq!(report["mode"], "server");
    assert_eq!(report["wrong"], 0, "{report:#}");
    assert_eq!(report["crashes"], 0, "{report:#}");
    // Each step and the one code it must get (`ok`: the expected success status).
    let expected = [
        ("run", "ok"),
        ("run_keyed", "ok"),
        ("run_key_conflict", "idempotency_conflict"),
        ("run_fuel", "fuel_exhausted"),
        ("run_deadline", "timeout"),
        ("run_memory", "memory_limit"),
        ("run_stack", "stack_overflow"),
        ("garbage_body", "invalid_input"),
        ("wrong_shape", "invalid_input"),
        ("unknown_policy", "policy_not_found"),
        ("unknown_route", "invalid_input"),
        ("wrong_method", "invalid_input"),
        ("bad_key", "unauthorized"),
        ("oversized_body", "invalid_input"),
        ("stalled_body", "ok"),
        ("cut_body", "ok"),
        ("fs_write", "ok"),
        ("fs_read", "ok"),
        ("fs_over_quota", "policy_denied"),
        ("fs_escape", "policy_denied"),
        ("fs_read_missing", "file_not_found"),
        ("session_run", "ok"),
        ("app_dry_run", "ok"),
        ("app_commit", "ok"),
        ("app_stale_preview", "preview_mismatch"),
        ("stream_cut", "ok"),
        ("stream_slow", "ok"),
        ("stream_over_cap", "capacity_exhausted"),
    ];
    let steps = report["steps"].as_object().unwrap();
    for (name, code) in expected {
        // [calls, wrong, {code: count}]
        let step = &steps[name];
        let calls = step[0].as_u64().unwrap_or(0);
        assert!(calls > 0, "{name} never ran: {report:#}");
        assert_eq!(step[1], 0, "{name}: {step}");
        let codes = step[2].as_object().unwrap();
        assert_eq!(codes.len(), 1, "{name}: {codes:?}");
        assert_eq!(codes[code].as_u64(), Some(calls), "{name}: {codes:?}");
    }
    assert_samples(&report, 3);
}

/// The report has at least `at_least` samples, each with a figure for RSS, fds and threads.
fn assert_samples(report: &Value, at_least: usize) {
    let samples = report["samples"].as_array().unwrap();
    assert!(samples.len() >= at_least, "{report:#}");
    for sample in samples {
        assert!(sample["rss_kib"].as_u64().unwrap() > 0, "{sample}");
        assert!(sample["fds"].as_u64().unwrap() > 0, "{sample}");
        assert!(sample["threads"].as_u64().unwrap() > 0, "{sample}");
    }
}

/// `palisade soak ARGS`: its report, which must say it passed (the exit status too). One
/// soak at a time: two at once would each count the other's load as their own drift.
fn soak(args: &[&str]) -> Value {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = Command::new(palisade_bin())
        .arg("soak")
        .args(args)
        .current_dir(root())
        .stdin(Stdio::null())
        .output()
        .expect("palisade runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}\n{stderr}", out.status);
    let report: Value = serde_json::from_slice(&out.stdout).expect("the report is JSON");
    assert_eq!(report["pass"], true, "{report:#}");
    report
}
