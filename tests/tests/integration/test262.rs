//! test262: the sample of tc39/test262 listed in `tests/test262/manifest.json`, each test run as
//! one Palisade call and compared with `tests/test262/expectations.json` (docs/test262.md).
//!
//! The files are vendored under `tests/test262/upstream/` laid out as in test262 and checked
//! against the manifest's SHA-256: a missing or changed file fails the test. A Palisade script is
//! an ES module, so the call's module runs the harness files and the test, joined, as one classic
//! script through indirect eval (`(0, eval)(text)`): sloppy, or strict (`"use strict";` in front)
//! for an `onlyStrict` test and for the second run of a test without flags, as test262 asks.
//! Every run the expectations file does not list as failing must pass, and at least as many runs
//! must pass as it records (a ratchet); listed runs that now pass are printed.
//! `TEST262_BLESS=1` rewrites the expectations file from this run.

use crate::support::*;
use palisade::{Policy, Script};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

/// Nothing granted; limits raised well over what the sample's heaviest run uses (the run prints
/// the most fuel one run took). A test that does not finish fails with the call's error code; it
/// cannot stall the run past the deadline.
const POLICY: &str = r#"
name = "test262"
[limits]
fuel = 40_000_000_000
memory = "256MiB"
timeout = "30s"
output = "1MiB"
console = "1MiB"
"#;

/// What the call's module does around the harness and the test: `print` (which test262's
/// `doneprintHandle.js` calls from `$DONE`), the cheap parts of `$262`, and the verdict.
const DRIVER: &str = r#"
let settle;
const done = new Promise((resolve) => { settle = resolve; });
globalThis.print = (message) => {
  message = String(message);
  if (message.startsWith("Test262:AsyncTest")) settle(message);
};
globalThis.$262 = {
  global: globalThis,
  evalScript: (text) => (0, eval)(String(text)),
  detachArrayBuffer: (buffer) => { buffer.transfer(); return null; },
  gc: () => {},
};
const describe = (e) => {
  let text;
  try {
    text = e !== null && typeof e === "object" && "name" in e
      ? `${e.name}: ${e.message}`
      : String(e);
  } catch {
    text = "thrown: (a value that cannot be printed)";
  }
  return text.split("\n")[0].slice(0, 200);
};
const nameOf = (e) => {
  try { return e.constructor.name; } catch { return typeof e; }
};
export default async () => {
  if (__async) {
    try {
      (0, eval)(__done);
    } catch (e) {
      return { ok: false, error: `doneprintHandle.js: ${describe(e)}` };
    }
  }
  let thrown = null;
  try {
    (0, eval)(__test);
  } catch (e) {
    thrown = { e };
  }
  if (__negative) {
    if (!thrown) return { ok: false, error: `expected ${__negative}, nothing was thrown` };
    if (nameOf(thrown.e) !== __negative) {
      return { ok: false, error: `expected ${__negative}, got ${describe(thrown.e)}` };
    }
    return { ok: true };
  }
  if (thrown) return { ok: false, error: describe(thrown.e) };
  if (__async) {
    const message = await done;
    if (message !== "Test262:AsyncTestComplete") {
      return { ok: false, error: message.replace("Test262:AsyncTestFailure:", "") };
    }
  }
  return { ok: true };
};
"#;

struct Test {
    path: String,
    sha256: String,
    flags: Vec<String>,
    includes: Vec<String>,
    /// The error constructor's name, for a negative test.
    negative: Option<String>,
    /// The `_FIXTURE` files of the test's folder (path, SHA-256), bundled as the modules its
    /// `import()`s load.
    fixtures: Vec<(String, String)>,
}

struct Manifest {
    commit: String,
    license_sha256: String,
    tests: Vec<Test>,
    harness: BTreeMap<String, String>,
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|list| {
            list.iter()
                .map(|s| s.as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn manifest() -> Manifest {
    let text = std::fs::read_to_string(root().join("tests/test262/manifest.json")).unwrap();
    let manifest: Value = serde_json::from_str(&text).unwrap();
    let tests = manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| Test {
            path: file["path"].as_str().unwrap().to_string(),
            sha256: file["sha256"].as_str().unwrap().to_string(),
            flags: strings(&file["flags"]),
            includes: strings(&file["includes"]),
            negative: file["negative"]["type"].as_str().map(str::to_string),
            fixtures: file["fixtures"]
                .as_array()
                .map(|list| {
                    list.iter()
                        .map(|f| {
                            let path = f["path"].as_str().unwrap().to_string();
                            (path, f["sha256"].as_str().unwrap().to_string())
                        })
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect();
    let harness = manifest["harness"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let path = h["path"].as_str().unwrap();
            let name = path.strip_prefix("harness/").unwrap().to_string();
            (name, h["sha256"].as_str().unwrap().to_string())
        })
        .collect();
    Manifest {
        commit: manifest["commit"].as_str().unwrap().to_string(),
        license_sha256: manifest["license_sha256"].as_str().unwrap().to_string(),
        tests,
        harness,
    }
}

/// A vendored file, checked against the manifest's SHA-256.
fn read_checked(dir: &Path, path: &str, sha256: &str) -> String {
    let bytes = std::fs::read(dir.join(path))
        .unwrap_or_else(|e| panic!("tests/test262/upstream/{path}: {e} (docs/test262.md)"));
    assert_eq!(
        sha256_hex(&bytes),
        sha256,
        "{path} differs from the manifest's copy"
    );
    String::from_utf8(bytes).unwrap()
}

/// The harness files a test runs with it, in test262's order: `assert.js` and `sta.js` unless
/// the test is `raw`, then its own `includes`. (`doneprintHandle.js`, for an `async` test, runs
/// before them on its own, sloppy, so that `$DONE` is a property of the global object, which
/// `asyncHelpers.js` checks, in strict runs too.)
fn harness_for(test: &Test) -> Vec<String> {
    if test.flags.iter().any(|f| f == "raw") {
        return Vec::new();
    }
    let mut names = vec!["assert.js".to_string(), "sta.js".to_string()];
    for include in &test.includes {
        if !names.contains(include) {
            names.push(include.clone());
        }
    }
    names
}

/// The module of one call: the script to evaluate as a JSON string, then the driver. The script
/// is the harness files and the test in one text, as test262's own runners build it, so that
/// the harness's top-level `const`s (`resizableArrayBufferUtils.js`'s `ctors`) reach the test;
/// `"use strict";` goes in front of all of it for a strict run.
fn compose(test: &Test, source: &str, strict: bool, harness: &BTreeMap<String, String>) -> String {
    let mut text = String::new();
    if strict {
        text.push_str("\"use strict\";\n");
    }
    for name in harness_for(test) {
        text.push_str(&harness[&name]);
        text.push('\n');
    }
    text.push_str(source);
    format!(
        "const __done = {};\nconst __test = {};\nconst __negative = {};\nconst __async = {};\n{DRIVER}",
        serde_json::to_string(&harness["doneprintHandle.js"]).unwrap(),
        serde_json::to_string(&text).unwrap(),
        serde_json::to_string(&test.negative).unwrap(),
        test.flags.iter().any(|f| f == "async"),
    )
}

/// The runs of one test: sloppy, strict, or both (a test without `onlyStrict`, `noStrict` or
/// `raw` runs both ways, as test262 asks; the strict run is named with a ` (strict)` suffix).
fn modes(test: &Test) -> Vec<bool> {
    let has = |flag: &str| test.flags.iter().any(|f| f == flag);
    if has("onlyStrict") {
        vec![true]
    } else if has("noStrict") || has("raw") {
        vec![false]
    } else {
        vec![false, true]
    }
}

/// The call's script: the module, named as the test's file so that the test's `import()`s of
/// `./x_FIXTURE.js` find the fixtures bundled beside it.
fn script(dir: &Path, test: &Test, module: String) -> Script {
    let file_name = test.path.rsplit('/').next().unwrap();
    let script = Script::new(file_name, module);
    if test.fixtures.is_empty() {
        return script;
    }
    let modules = test.fixtures.iter().map(|(path, sha256)| {
        let name = path.rsplit('/').next().unwrap().to_string();
        (name, read_checked(dir, path, sha256))
    });
    script.with_modules(modules).expect("the fixtures bundle")
}

/// `Ok(())` if the run passed, else the first line of its error; and the fuel the call used.
async fn run(policy: &Policy, script: &Script) -> (Result<(), String>, u64) {
    let outcome = PALISADE.run(policy, script, "null").await;
    (verdict(&outcome), outcome.receipt.fuel_used)
}

fn verdict(outcome: &palisade::Outcome) -> Result<(), String> {
    match &outcome.result {
        Ok(output) => {
            let verdict: Value = serde_json::from_str(output.get()).unwrap();
            if verdict["ok"] == json!(true) {
                Ok(())
            } else {
                Err(verdict["error"]
                    .as_str()
                    .unwrap_or("no error given")
                    .to_string())
            }
        }
        Err(error) => {
            let message = format!("call failed: {}: {error}", error.code());
            Err(message.lines().next().unwrap_or("").to_string())
        }
    }
}

#[tokio::test]
async fn test262_sample_tests_that_passed_still_pass() {
    let dir = root().join("tests/test262/upstream");
    let manifest = manifest();
    let policy = Policy::from_toml(POLICY, None).unwrap();
    let harness: BTreeMap<String, String> = manifest
        .harness
        .iter()
        .map(|(name, sha256)| {
            let text = read_checked(&dir, &format!("harness/{name}"), sha256);
            (name.clone(), text)
        })
        .collect();
    read_checked(&dir, "LICENSE", &manifest.license_sha256);

    let started = Instant::now();
    let mut results: BTreeMap<String, Result<(), String>> = BTreeMap::new();
    let mut heaviest = (String::new(), 0);
    for test in &manifest.tests {
        let source = read_checked(&dir, &test.path, &test.sha256);
        for strict in modes(test) {
            let name = if strict && !test.flags.iter().any(|f| f == "onlyStrict") {
                format!("{} (strict)", test.path)
            } else {
                test.path.clone()
            };
            let script = script(&dir, test, compose(test, &source, strict, &harness));
            let (result, fuel) = run(&policy, &script).await;
            if fuel > heaviest.1 {
                heaviest = (name.clone(), fuel);
            }
            results.insert(name, result);
        }
    }
    let passes = results.values().filter(|r| r.is_ok()).count();
    println!(
        "test262: {passes}/{} runs pass ({} files of test262 {}) in {:.1} s",
        results.len(),
        manifest.tests.len(),
        manifest.commit,
        started.elapsed().as_secs_f64()
    );
    println!(
        "test262: the most fuel one run used: {} ({})",
        heaviest.1, heaviest.0
    );

    let path = root().join("tests/test262/expectations.json");
    if std::env::var_os("TEST262_BLESS").is_some() {
        bless(&path, &manifest.commit, &results);
        return;
    }
    let expectations: Value = serde_json::from_str(
        &std::fs::read_to_string(&path).expect("tests/test262/expectations.json exists"),
    )
    .unwrap();
    let mut allowed = Vec::new();
    for names in expectations["failures"].as_object().unwrap().values() {
        allowed.extend(strings(names));
    }
    let mut regressions = Vec::new();
    let mut newly_passing = Vec::new();
    for (name, result) in &results {
        let listed = allowed.contains(name);
        match result {
            Err(error) if !listed => regressions.push(format!("{name}: {error}")),
            Ok(()) if listed => newly_passing.push(name.clone()),
            _ => {}
        }
    }
    let expected_passes = expectations["pass"].as_u64().unwrap() as usize;
    if passes < expected_passes {
        regressions.push(format!("{passes} runs pass, expected {expected_passes}"));
    }
    if !newly_passing.is_empty() {
        println!(
            "test262: {} runs listed as failing now pass (update with TEST262_BLESS=1):\n  {}",
            newly_passing.len(),
            newly_passing.join("\n  ")
        );
    }
    assert!(
        regressions.is_empty(),
        "{} test262 regressions:\n  {}",
        regressions.len(),
        regressions.join("\n  ")
    );
}

fn bless(path: &Path, commit: &str, results: &BTreeMap<String, Result<(), String>>) {
    let mut failures: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, result) in results {
        if let Err(error) = result {
            failures.entry(error).or_default().push(name);
        }
    }
    let out = json!({
        "commit": commit,
        "pass": results.values().filter(|r| r.is_ok()).count(),
        "total": results.len(),
        "failures": failures,
    });
    std::fs::write(path, serde_json::to_string_pretty(&out).unwrap() + "\n").unwrap();
    println!("test262: {} rewritten", path.display());
}
