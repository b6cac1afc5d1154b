//! `Policy::typescript()` checked with the real TypeScript compiler (`tsc` 5.9 from
//! `tests/openapi/package-lock.json`, installed by scripts/setup.sh; a machine without it fails
//! here, never skips): for every policy in `policies/` and one per seed
//! (`tests/fixtures/types/seeds/`), `NAME.ok.ts`, a script that uses only what the policy grants,
//! compiles, and `NAME.bad.ts`, which uses one thing it does not grant, fails with exactly the
//! error its first line names. And the declarations name only globals the guest has.

use crate::support::{PALISADE, output, policy, root, scratch_dir};
use palisade::{Policy, Script};
use std::path::{Path, PathBuf};
use std::process::Command;

fn tsc() -> PathBuf {
    root().join("tests/openapi/node_modules/.bin/tsc")
}

/// `tsc --noEmit --strict` over `files` in `dir`: its diagnostics, one per line.
fn check(dir: &Path, files: &[&str]) -> String {
    let out = Command::new(tsc())
        .current_dir(dir)
        .args([
            "--noEmit", "--strict", "--target", "es2023", "--module", "esnext",
        ])
        .args(files)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e} (run scripts/setup.sh)", tsc().display()));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The TS error codes `tsc` gave for `file`.
fn codes(diagnostics: &str, file: &str) -> Vec<String> {
    diagnostics
        .lines()
        .filter(|line| line.starts_with(file))
        .filter_map(|line| line.split("error ").nth(1))
        .map(|rest| rest.split(':').next().unwrap_or_default().to_owned())
        .collect()
}

/// One policy's pair of scripts, checked in a folder of its own.
fn check_policy(path: &Path) -> Result<(), String> {
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    let policy = Policy::from_file(path).map_err(|e| format!("{name}: {e}"))?;
    let fixtures = root().join("tests/fixtures/types");
    let dir = scratch_dir(&format!("types-{name}"));
    std::fs::write(dir.join("sandbox.d.ts"), policy.typescript()).unwrap();
    let ok = format!("{name}.ok.ts");
    let bad = format!("{name}.bad.ts");
    for file in [&ok, &bad] {
        std::fs::copy(fixtures.join(file), dir.join(file))
            .map_err(|e| format!("{name}: tests/fixtures/types/{file}: {e}"))?;
    }
    let expected = std::fs::read_to_string(dir.join(&bad))
        .unwrap()
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("// expect "))
        .and_then(|l| l.split(':').next())
        .map(str::to_owned)
        .ok_or_else(|| format!("{name}: {bad} must start with `// expect TSNNNN: why`"))?;
    let diagnostics = check(&dir, &["sandbox.d.ts", &ok, &bad]);
    let unexpected = diagnostics
        .lines()
        .any(|l| !l.starts_with(' ') && !l.starts_with(&bad));
    let bad_codes = codes(&diagnostics, &bad);
    if unexpected || bad_codes != [expected.clone()] {
        return Err(format!(
            "{name}: expected only {bad}: {expected}, got:\n{diagnostics}"
        ));
    }
    Ok(())
}

#[test]
fn declarations_compile_exactly_when_a_script_uses_what_is_granted() {
    let mut paths: Vec<PathBuf> = Vec::new();
    for dir in ["policies", "tests/fixtures/types/seeds"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|x| x == "toml") {
                paths.push(path);
            }
        }
    }
    paths.sort();
    assert!(paths.len() >= 11, "{paths:?}");
    // Two at a time: each `tsc` is a second of one core.
    let failures: Vec<String> = paths
        .chunks(paths.len().div_ceil(2))
        .map(|chunk| {
            let chunk = chunk.to_vec();
            std::thread::spawn(move || {
                chunk
                    .iter()
                    .filter_map(|p| check_policy(p).err())
                    .collect::<Vec<_>>()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every global the declarations give every script is one the guest has; every global the guest
/// has is declared, but for the capability globals a policy does not grant (which refuse at run
/// time) and `SharedArrayBuffer` (left out with `Atomics`, which QuickJS lacks).
#[tokio::test]
async fn declarations_name_only_globals_the_guest_has() {
    let script = Script::new(
        "globals.js",
        "export default () => Object.getOwnPropertyNames(globalThis)",
    );
    let roomy = policy("[limits]\ntimeout = \"10s\"\n");
    let outcome = PALISADE.run(&roomy, &script, "null").await;
    let globals: Vec<String> = serde_json::from_str(output(&outcome)).unwrap();
    for name in palisade::policy::WEB_GLOBALS.iter().chain(&["fetch"]) {
        assert!(
            globals.iter().any(|g| g == name),
            "the guest has no `{name}`"
        );
    }
    let dir = scratch_dir("types-globals");
    std::fs::write(dir.join("sandbox.d.ts"), roomy.typescript()).unwrap();
    let uses: String = globals
        .iter()
        .filter(|g| g.as_str() != "undefined")
        .map(|g| format!("typeof {g};\n"))
        .collect();
    std::fs::write(dir.join("globals.ts"), format!("{uses}export {{}};\n")).unwrap();
    let diagnostics = check(&dir, &["sandbox.d.ts", "globals.ts"]);
    let mut missing: Vec<&str> = diagnostics
        .lines()
        .filter(|l| l.contains("Cannot find name"))
        .filter_map(|l| l.split('\'').nth(1))
        .collect();
    missing.sort_unstable();
    assert_eq!(
        missing,
        ["SharedArrayBuffer", "config", "fs", "host", "kv"],
        "{diagnostics}"
    );
    let other = diagnostics
        .lines()
        .filter(|l| l.contains("error TS") && !l.contains("Cannot find name"))
        .count();
    assert_eq!(other, 0, "{diagnostics}");
}

/// `GET /v1/policies/{name}/types` answers what `Policy::typescript` writes, to the tenants that
/// may use the policy: no key is 401, another tenant's policy and an unknown one are 404.
#[tokio::test]
async fn serve_answers_a_policys_declarations_to_its_tenants() {
    use crate::serve::{assert_error, config, start};
    use serde_json::Value;
    let server = start(config("types-serve", true));
    let types = server
        .call(
            "GET",
            "/v1/policies/box/types",
            Some("acme-key"),
            Value::Null,
        )
        .await;
    assert_eq!(types.status, 200);
    assert_eq!(
        types.headers["content-type"],
        "application/typescript; charset=utf-8"
    );
    let catalog = server.state.policies.current();
    assert_eq!(
        types.body,
        Value::String(catalog.policies["box"].typescript())
    );
    assert!(
        types
            .body
            .as_str()
            .unwrap()
            .contains("declare var kv: KvWriter")
    );
    let anonymous = server
        .call("GET", "/v1/policies/box/types", None, Value::Null)
        .await;
    assert_error(&anonymous, 401, "unauthorized");
    let other = server
        .call(
            "GET",
            "/v1/policies/box/types",
            Some("nobody-key"),
            Value::Null,
        )
        .await;
    assert_error(&other, 404, "policy_not_found");
    let unknown = server
        .call(
            "GET",
            "/v1/policies/nope/types",
            Some("acme-key"),
            Value::Null,
        )
        .await;
    assert_error(&unknown, 404, "policy_not_found");
    server.assert_fine(Some("acme-key")).await;
}

/// docs/agents.md's worked example: `examples/agents/escalate.ts` type-checks against the
/// declarations of `examples/agents/support.toml`, and runs both granted capabilities in one
/// call, each once; the audit has one allowed record per capability.
#[tokio::test]
async fn the_worked_example_calls_two_capabilities_in_one_run() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let examples = root().join("examples/agents");
    let policy = Policy::from_file(examples.join("support.toml")).unwrap();
    let dir = scratch_dir("types-example");
    std::fs::write(dir.join("sandbox.d.ts"), policy.typescript()).unwrap();
    std::fs::copy(examples.join("escalate.ts"), dir.join("escalate.ts")).unwrap();
    let diagnostics = check(&dir, &["sandbox.d.ts", "escalate.ts"]);
    assert_eq!(diagnostics, "", "{diagnostics}");
    // The declarations docs/agents.md shows are the ones `palisade types` writes.
    let docs = std::fs::read_to_string(root().join("docs/agents.md")).unwrap();
    let start = docs.find("declare var crm").unwrap();
    let end = start + docs[start..].find("};").unwrap() + 2;
    assert!(policy.typescript().contains(&docs[start..end]));
    let calls = Arc::new(AtomicUsize::new(0));
    let (found, opened) = (calls.clone(), calls.clone());
    let palisade = palisade::Palisade::builder()
        .capability("findCustomer", move |payload: serde_json::Value| {
            found.fetch_add(1, Ordering::SeqCst);
            let known = payload["email"] == "ada@example.com";
            async move {
                Ok(if known {
                    serde_json::json!({"id": "c-1", "plan": "pro"})
                } else {
                    serde_json::Value::Null
                })
            }
        })
        .capability("openTicket", move |payload: serde_json::Value| {
            opened.fetch_add(1, Ordering::SeqCst);
            let urgent = payload["priority"] == "urgent" && payload["customerId"] == "c-1";
            async move { Ok(serde_json::json!({"ticket": if urgent { "T-1" } else { "T-wrong" }})) }
        })
        .build()
        .unwrap();
    let script = Script::from_file(examples.join("escalate.ts")).unwrap();
    let input = r#"{"email": "ada@example.com", "complaint": "the export button does nothing"}"#;
    let outcome = palisade.run(&policy, &script, input).await;
    assert_eq!(
        output(&outcome),
        r#"{"opened":true,"ticket":"T-1","customer":"c-1"}"#
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    let allowed: Vec<&str> = outcome
        .audit
        .iter()
        .filter(|r| r.decision == palisade::Decision::Allow)
        .map(|r| r.target.as_str())
        .collect();
    assert_eq!(
        allowed,
        ["findCustomer", "openTicket"],
        "{:?}",
        outcome.audit
    );
}
