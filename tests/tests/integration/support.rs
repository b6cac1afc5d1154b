//! Shared fixtures: one Palisade (one engine, one compiled guest) per test binary.

use palisade::{Outcome, Palisade, Policy, Script};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

pub static PALISADE: LazyLock<Palisade> = LazyLock::new(|| {
    Palisade::builder()
        .max_concurrency(64)
        // The suite compiles many forged and compiled components; on a loaded machine the
        // default 30 s of compiling a minute ran out (a compile refused as
        // capacity_exhausted). The budget's own test builds its own Palisade.
        .compile_budget(std::time::Duration::from_secs(600))
        .kv_path(scratch_dir("kv").join("kv.sqlite3"))
        .build()
        .expect("Palisade starts")
});

/// A fresh folder for this test process under the system's temp dir. The first call removes the
/// folders and files that earlier runs of the suite left there (`sweep_earlier_runs`): a run
/// cannot remove its own when it ends, and each left about 150 MB.
pub fn scratch_dir(name: &str) -> PathBuf {
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| sweep_earlier_runs(&std::env::temp_dir()));
    let dir = std::env::temp_dir().join(format!("palisade-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Remove the `palisade-test-PID-…` and `palisade-json-PID` entries of `tmp` that belong to this
/// user and whose process no longer runs, as the host sweeps its scratch folders
/// (`host/src/caps/fs/scratch.rs`). Liveness is read from /proc: without it nothing is removed,
/// and a run in another pid namespace sharing the temp dir would look gone. A link is removed,
/// never followed.
pub fn sweep_earlier_runs(tmp: &Path) {
    use std::os::unix::fs::MetadataExt;
    let Ok(me) = std::fs::metadata("/proc/self").map(|m| m.uid()) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| {
            n.strip_prefix("palisade-test-")
                .or_else(|| n.strip_prefix("palisade-json-"))
        }) else {
            continue;
        };
        let pid = rest.split('-').next().unwrap_or_default();
        if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if meta.uid() != me
            || pid == std::process::id().to_string()
            || Path::new("/proc").join(pid).exists()
        {
            continue;
        }
        let _ = if meta.is_dir() {
            std::fs::remove_dir_all(entry.path())
        } else {
            std::fs::remove_file(entry.path())
        };
    }
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

pub fn fixture(name: &str) -> Script {
    Script::from_file(root().join("tests/fixtures/js").join(name)).expect("fixture exists")
}

pub fn policy(toml: &str) -> Policy {
    Policy::from_toml(toml, None).expect("test policy is valid")
}

/// The default policy's limits with a deadline that a call expected to pass meets however
/// loaded the machine: 10 s, ten times the default's 1 s (a normal call takes milliseconds).
/// Only a hostile call races a deadline, and it sets its own.
pub fn roomy() -> Policy {
    policy("name = \"roomy\"\n[limits]\ntimeout = \"10s\"\n")
}

/// Run a fixture under a policy with the given JSON input.
pub async fn run(policy: &Policy, fixture_name: &str, input: &str) -> Outcome {
    PALISADE.run(policy, &fixture(fixture_name), input).await
}

/// Run inline source under the default policy's limits, with a roomy deadline ([`roomy`]).
pub async fn run_source(source: &str, input: &str) -> Outcome {
    PALISADE
        .run(&roomy(), &Script::new("inline.js", source), input)
        .await
}

/// The error code of a failed outcome, or a panic with the output of a successful one.
pub fn code(outcome: &Outcome) -> &'static str {
    match &outcome.result {
        Ok(output) => panic!("expected an error, got output {}", output.get()),
        Err(error) => error.code(),
    }
}

/// The output JSON text of a successful outcome, or a panic with the error.
pub fn output(outcome: &Outcome) -> &str {
    match &outcome.result {
        Ok(output) => output.get(),
        Err(error) => panic!("expected output, got {}: {error}", error.code()),
    }
}

/// A normal call right after a hostile one must work.
pub async fn assert_next_call_works() {
    let outcome = run(&roomy(), "echo.js", r#"{"n":1}"#).await;
    assert_eq!(output(&outcome), r#"{"got":{"n":1}}"#);
}

/// A capability global (`kv`, `fs`, `config`, the bridge's `host`) exists under a policy that
/// does not grant it, and refuses: `use_it`, an expression that uses it, caught gives a
/// `PolicyDeniedError` with `rule` and `fix`; uncaught it ends the call as `policy_denied` with
/// that fix and one audit record of the refusal. Then a normal call works.
pub async fn assert_ungranted(policy: &Policy, use_it: &str, rule: &str, fix: &str) {
    let caught = format!(
        "export default async () => {{ try {{ await ({use_it}); return 'allowed'; }} \
         catch (e) {{ return [e.name, e instanceof PolicyDeniedError, e.rule, e.fix]; }} }};"
    );
    let outcome = PALISADE
        .run(policy, &Script::new("ungranted.js", caught), "null")
        .await;
    let expected = serde_json::json!(["PolicyDeniedError", true, rule, fix]);
    assert_eq!(output(&outcome), expected.to_string(), "{use_it}");
    let uncaught = format!("export default async () => {{ await ({use_it}); }};");
    let outcome = PALISADE
        .run(policy, &Script::new("ungranted.js", uncaught), "null")
        .await;
    assert_eq!(code(&outcome), "policy_denied", "{use_it}");
    let error_fix = outcome.error().and_then(|e| e.fix()).expect("a fix");
    assert_eq!(format!("{} = {}", error_fix.key, error_fix.value), fix);
    assert_eq!(outcome.audit.len(), 1, "{use_it}");
    assert_eq!(outcome.audit[0].decision, palisade::Decision::Deny);
    assert_eq!(outcome.audit[0].rule, rule);
    assert_next_call_works().await;
}

/// The lower-case hex SHA-256 of `bytes`, as the vendored suites' manifests record it.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What earlier runs left is removed once their process is gone: folders, files and links
/// (the link alone, not what it points to); a running process's folders and other names stay.
#[test]
fn scratch_entries_of_finished_runs_are_removed() {
    let tmp = scratch_dir("sweep");
    let pid_max = std::fs::read_to_string("/proc/sys/kernel/pid_max").unwrap();
    let gone = pid_max.trim(); // no process has this pid
    let entry = |name: String| tmp.join(name);
    let folder = entry(format!("palisade-test-{gone}-kv"));
    std::fs::create_dir_all(folder.join("inner")).unwrap();
    let file = entry(format!("palisade-test-{gone}-heap.img"));
    std::fs::write(&file, b"image").unwrap();
    let json = entry(format!("palisade-json-{gone}"));
    std::fs::create_dir_all(&json).unwrap();
    let kept = entry("kept".into());
    std::fs::create_dir_all(&kept).unwrap();
    std::fs::write(kept.join("f"), b"kept").unwrap();
    let link = entry(format!("palisade-test-{gone}-link"));
    std::os::unix::fs::symlink(&kept, &link).unwrap();
    let live = entry(format!("palisade-test-{}-kv", std::process::id()));
    std::fs::create_dir_all(&live).unwrap();
    let other = entry("palisade-test-notapid".into());
    std::fs::create_dir_all(&other).unwrap();

    sweep_earlier_runs(&tmp);

    for removed in [&folder, &file, &json, &link] {
        assert!(
            std::fs::symlink_metadata(removed).is_err(),
            "{} is left",
            removed.display()
        );
    }
    assert!(kept.join("f").is_file(), "the link's target was removed");
    assert!(live.is_dir(), "a running process's folder was removed");
    assert!(other.is_dir(), "a name without a pid was removed");
}
