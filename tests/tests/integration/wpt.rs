//! web-platform-tests: the files listed in `tests/wpt/manifest.json`, each run as one Palisade
//! call through the shim `tests/wpt/harness.js`, compared with `tests/wpt/expectations.json`.
//!
//! The WPT files are vendored under `tests/wpt/upstream/` (or read from `$PALISADE_WPT_DIR`),
//! laid out as in WPT and checked against the manifest's SHA-256: a missing or changed file fails
//! the test. Palisade's own drivers (`tests/wpt/palisade/`) run WPT's URL data. Every subtest the
//! expectations file does not list as failing must pass (a ratchet); subtests listed there that
//! now pass are printed, so the file can be updated.
//!
//! `WPT_NODE=1` also runs each file, through the same shim, under the `node` on PATH (the
//! expectations' Node side was recorded with Node 20, docs/conformance.md), and `WPT_BLESS=1`
//! rewrites the expectations file from this run (with `WPT_NODE=1`, it records which failures
//! Node passes).

use crate::support::*;
use palisade::{Policy, Script};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const HARNESS: &str = include_str!("../../wpt/harness.js");

/// Generous per-file limits: api-invalid-label alone has some 3,200 subtests. The shim ends every
/// async test after 5 s and the file after 30 s, so the deadline is never the expected way out.
const POLICY: &str = r#"
name = "wpt"
[limits]
fuel = 400_000_000_000
memory = "256MiB"
timeout = "60s"
output = "16MiB"
console = "1MiB"
"#;

/// How long `node` may take over one file before it is killed.
const NODE_TIMEOUT: Duration = Duration::from_secs(60);

struct Entry {
    path: String,
    /// A file of Palisade's own under `tests/wpt/`, rather than one of WPT's.
    local: bool,
    area: String,
    sha256: String,
    resources: Vec<String>,
}

fn wpt_dir() -> PathBuf {
    match std::env::var_os("PALISADE_WPT_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => root().join("tests/wpt/upstream"),
    }
}

/// A resource's SHA-256 and, for one a crate's package ships, its path in the package.
struct Resource {
    sha256: String,
    in_crate: Option<String>,
}

fn manifest() -> (Vec<Entry>, BTreeMap<String, Resource>) {
    let text = std::fs::read_to_string(root().join("tests/wpt/manifest.json")).unwrap();
    let manifest: Value = serde_json::from_str(&text).unwrap();
    let mut hashes = BTreeMap::new();
    for resource in manifest["resources"].as_array().unwrap() {
        hashes.insert(
            resource["path"].as_str().unwrap().to_string(),
            Resource {
                sha256: resource["sha256"].as_str().unwrap().to_string(),
                in_crate: resource["crate"].as_str().map(str::to_string),
            },
        );
    }
    let entries = manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| Entry {
            path: file["path"].as_str().unwrap().to_string(),
            local: file["local"].as_bool().unwrap_or(false),
            area: file["area"].as_str().unwrap().to_string(),
            sha256: file["sha256"].as_str().unwrap().to_string(),
            resources: file["resources"]
                .as_array()
                .map(|list| {
                    list.iter()
                        .map(|r| r.as_str().unwrap().to_string())
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect();
    (entries, hashes)
}

/// Where cargo unpacks the packages it downloads: `$CARGO_HOME/registry/src/<index>/`.
fn cargo_sources() -> Vec<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let Some(Ok(indexes)) = home.map(|h| std::fs::read_dir(h.join("registry/src"))) else {
        return Vec::new();
    };
    indexes.filter_map(|e| e.ok().map(|e| e.path())).collect()
}

/// A resource from the WPT folder, or else from the crate package that ships it.
fn read_resource(dir: &Path, path: &str, resource: &Resource) -> Option<String> {
    if let Some(text) = read_checked(dir, path, &resource.sha256) {
        return Some(text);
    }
    let in_crate = resource.in_crate.as_deref()?;
    cargo_sources()
        .iter()
        .find_map(|src| read_checked(src, in_crate, &resource.sha256))
}

/// Read a WPT file and check it is the one the manifest names.
fn read_checked(dir: &Path, path: &str, sha256: &str) -> Option<String> {
    let bytes = std::fs::read(dir.join(path)).ok()?;
    assert_eq!(
        sha256_hex(&bytes),
        sha256,
        "{path} differs from the manifest's copy"
    );
    Some(String::from_utf8(bytes).unwrap())
}

/// The module one call runs: the shim, the resources the file fetches, the scripts its
/// `// META: script=` lines name (WPT's `/common/subset-tests*.js` and `/common/sab.js` are part
/// of the shim), then the file, all in one block so that a top-level throw is reported rather
/// than ending the call.
fn compose(
    dir: &Path,
    entry: &Entry,
    source: &str,
    hashes: &BTreeMap<String, Resource>,
) -> Option<String> {
    let base = entry.path.rsplit_once('/').map_or("", |(d, _)| d);
    let mut out = String::from(HARNESS);
    out.push_str("\ntry {\n");
    for resource in &entry.resources {
        let text = read_resource(dir, resource, &hashes[resource])?;
        let key = resource
            .strip_prefix(&format!("{base}/"))
            .unwrap_or(resource);
        // A resource in a sibling folder is fetched as `../sibling/…`, which the shim reads
        // with its `../` segments dropped: it goes under that name too.
        let shared = base
            .split('/')
            .zip(resource.split('/'))
            .take_while(|(a, b)| a == b)
            .count();
        let sibling = resource
            .split('/')
            .skip(shared)
            .collect::<Vec<_>>()
            .join("/");
        let mut keys = vec![key.to_string()];
        if shared > 0 && sibling != key {
            keys.push(sibling);
        }
        for key in keys {
            out.push_str(&format!(
                "__wpt.resource({}, {});\n",
                serde_json::to_string(&key).unwrap(),
                serde_json::to_string(&text).unwrap()
            ));
        }
    }
    for line in source.lines() {
        let Some(script) = line.strip_prefix("// META: script=") else {
            continue;
        };
        let script = script.trim();
        if script.starts_with("/common/subset-tests") || script == "/common/sab.js" {
            continue;
        }
        let path = match script.strip_prefix('/') {
            Some(absolute) => absolute.to_string(),
            None => normalize(&format!("{base}/{script}")),
        };
        out.push_str(&read_resource(dir, &path, &hashes[&path])?);
        out.push('\n');
    }
    out.push_str(source);
    out.push_str(
        "\n} catch (e) {\n  __wpt.loadError(e);\n}\nexport default () => __wpt.finish();\n",
    );
    Some(out)
}

/// `path` with its `..` segments resolved (the streams files name their helpers as
/// `../resources/…`).
fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            ".." => {
                parts.pop();
            }
            "." | "" => {}
            _ => parts.push(part),
        }
    }
    parts.join("/")
}

/// Subtest name to status ("PASS", "FAIL", …) and failure message; a harness error (the file
/// threw, or timed out) becomes one failing subtest named `(harness)`.
type Results = BTreeMap<String, (String, String)>;

fn parse_results(value: &Value) -> Results {
    let mut results = Results::new();
    for r in value["results"].as_array().unwrap() {
        results.insert(
            r["name"].as_str().unwrap().to_string(),
            (
                r["status"].as_str().unwrap().to_string(),
                r["message"].as_str().unwrap_or("").to_string(),
            ),
        );
    }
    if let Some(error) = value["harness"].as_str() {
        results.insert("(harness)".into(), ("FAIL".into(), error.to_string()));
    }
    results
}

async fn run_palisade(policy: &Policy, name: &str, module: &str) -> Results {
    let outcome = PALISADE
        .run(policy, &Script::new(name, module), "null")
        .await;
    match &outcome.result {
        Ok(output) => parse_results(&serde_json::from_str(output.get()).unwrap()),
        Err(error) => {
            let mut results = Results::new();
            results.insert(
                "(harness)".into(),
                (
                    "FAIL".into(),
                    format!("call failed: {}: {error}", error.code()),
                ),
            );
            results
        }
    }
}

fn run_node(scratch: &Path, index: usize, module: &str) -> Results {
    let file = scratch.join(format!("wpt-{index}.mjs"));
    std::fs::write(&file, module).unwrap();
    let mut child = std::process::Command::new("node")
        .arg("--input-type=module")
        .arg("-e")
        .arg(
            "const m = await import(process.argv[1]); \
             process.stdout.write(JSON.stringify(await m.default()), () => process.exit(0));",
        )
        .arg(url_of(&file))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("node runs (WPT_NODE=1 needs node on PATH)");
    // Drained while node runs: a result larger than the pipe's buffer would block it.
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut bytes);
        bytes
    });
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > NODE_TIMEOUT {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.wait();
    let stdout = reader.join().unwrap();
    match serde_json::from_slice::<Value>(&stdout) {
        Ok(value) => parse_results(&value),
        Err(_) => {
            let mut results = Results::new();
            results.insert(
                "(harness)".into(),
                ("FAIL".into(), "node produced no results".into()),
            );
            results
        }
    }
}

fn url_of(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// A failure's cause, for grouping: its message with the particulars (quoted values, numbers)
/// taken out and its white space collapsed.
fn cause(message: &str) -> String {
    let message = message.strip_prefix("AssertionError: ").unwrap_or(message);
    let mut out = String::new();
    let mut chars = message.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' => {
                out.push('…');
                for d in chars.by_ref() {
                    if d == c {
                        break;
                    }
                }
            }
            c if c.is_whitespace() => {
                out.push(' ');
                while chars.peek().is_some_and(|d| d.is_whitespace()) {
                    chars.next();
                }
            }
            '0'..='9' => {
                out.push('N');
                while chars.peek().is_some_and(|d| d.is_ascii_digit()) {
                    chars.next();
                }
            }
            _ => out.push(c),
        }
    }
    out.chars().take(100).collect()
}

struct FileRun {
    entry_path: String,
    area: String,
    palisade: Results,
    node: Option<Results>,
}

#[tokio::test]
async fn wpt_subtests_that_passed_still_pass() {
    let dir = wpt_dir();
    let (entries, hashes) = manifest();
    let policy = Policy::from_toml(POLICY, None).unwrap();
    let with_node = std::env::var_os("WPT_NODE").is_some();
    let scratch = scratch_dir("wpt");
    let expectations: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/wpt/expectations.json")).unwrap(),
    )
    .unwrap();

    let mut runs = Vec::new();
    let mut missing = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let home = if entry.local {
            root().join("tests/wpt")
        } else {
            dir.clone()
        };
        let module = read_checked(&home, &entry.path, &entry.sha256)
            .and_then(|source| compose(&dir, entry, &source, &hashes));
        let Some(module) = module else {
            missing.push(entry.path.clone());
            continue;
        };
        let palisade = run_palisade(&policy, &entry.path, &module).await;
        let node = with_node.then(|| run_node(&scratch, index, &module));
        runs.push(FileRun {
            entry_path: entry.path.clone(),
            area: entry.area.clone(),
            palisade,
            node,
        });
    }
    if !missing.is_empty() {
        println!(
            "wpt: {} of {} files not found under {} (docs/web-platform.md): {}",
            missing.len(),
            entries.len(),
            dir.display(),
            missing.join(", ")
        );
        // The files are vendored: a missing or changed one is a failure, not a skip.
        panic!("WPT files are missing or differ from the manifest's SHA-256");
    }

    print_table(&runs);

    if std::env::var_os("WPT_BLESS").is_some() {
        bless(&runs, &expectations);
        return;
    }

    let mut regressions = Vec::new();
    let mut newly_passing = Vec::new();
    for run in &runs {
        let expected = &expectations[&run.entry_path];
        assert!(
            expected.is_object(),
            "{} has no entry in tests/wpt/expectations.json (run with WPT_BLESS=1)",
            run.entry_path
        );
        let mut allowed = Vec::new();
        for group in ["node_only", "both_fail"] {
            if let Some(causes) = expected[group].as_object() {
                for names in causes.values() {
                    for name in names.as_array().unwrap() {
                        allowed.push(name.as_str().unwrap().to_string());
                    }
                }
            }
        }
        let passes = run
            .palisade
            .values()
            .filter(|(status, _)| status == "PASS")
            .count() as u64;
        let expected_passes = expected["pass"].as_u64().unwrap();
        if passes < expected_passes {
            regressions.push(format!(
                "{}: {passes} subtests pass, expected {expected_passes}",
                run.entry_path
            ));
        }
        for (name, (status, message)) in &run.palisade {
            let listed = allowed.iter().any(|a| a == name);
            if status != "PASS" && !listed {
                regressions.push(format!("{} / {name}: {status} {message}", run.entry_path));
            }
            if status == "PASS" && listed {
                newly_passing.push(format!("{} / {name}", run.entry_path));
            }
        }
    }
    if !newly_passing.is_empty() {
        println!(
            "wpt: {} subtests listed as failing now pass (update with WPT_BLESS=1):\n  {}",
            newly_passing.len(),
            newly_passing.join("\n  ")
        );
    }
    assert!(
        regressions.is_empty(),
        "{} WPT regressions:\n  {}",
        regressions.len(),
        regressions.join("\n  ")
    );
}

fn count(results: &Results) -> (usize, usize) {
    let pass = results.values().filter(|(s, _)| s == "PASS").count();
    (pass, results.len())
}

fn print_table(runs: &[FileRun]) {
    let mut areas: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    for run in runs {
        let row = areas.entry(&run.area).or_default();
        let (pass, total) = count(&run.palisade);
        row[0] += pass;
        row[1] += total;
        if let Some(node) = &run.node {
            let (pass, total) = count(node);
            row[2] += pass;
            row[3] += total;
        }
    }
    println!("| area | Palisade | Node |");
    println!("|---|---:|---:|");
    let mut sum = [0usize; 4];
    for (area, row) in &areas {
        println!("| {area} | {}/{} | {}/{} |", row[0], row[1], row[2], row[3]);
        for i in 0..4 {
            sum[i] += row[i];
        }
    }
    println!("| total | {}/{} | {}/{} |", sum[0], sum[1], sum[2], sum[3]);
}

fn bless(runs: &[FileRun], old: &Value) {
    let mut out = Map::new();
    for run in runs {
        let mut node_only: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut both_fail: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (name, (status, message)) in &run.palisade {
            if status == "PASS" {
                continue;
            }
            let node_passes = match &run.node {
                Some(node) => node.get(name).is_some_and(|(s, _)| s == "PASS"),
                // Without Node, keep the side the previous expectations put it on.
                None => old[&run.entry_path]["node_only"]
                    .as_object()
                    .is_some_and(|c| {
                        c.values()
                            .any(|n| n.as_array().unwrap().iter().any(|x| x == name))
                    }),
            };
            let group = if node_passes {
                &mut node_only
            } else {
                &mut both_fail
            };
            group
                .entry(format!("{status}: {}", cause(message)))
                .or_default()
                .push(name.clone());
        }
        let (pass, total) = count(&run.palisade);
        let node_pass = match &run.node {
            Some(node) => json!(count(node).0),
            None => old[&run.entry_path]["node_pass"].clone(),
        };
        out.insert(
            run.entry_path.clone(),
            json!({
                "area": run.area,
                "pass": pass,
                "total": total,
                "node_pass": node_pass,
                "node_only": node_only,
                "both_fail": both_fail,
            }),
        );
    }
    let text = serde_json::to_string_pretty(&Value::Object(out)).unwrap() + "\n";
    std::fs::write(root().join("tests/wpt/expectations.json"), text).unwrap();
    println!("wpt: tests/wpt/expectations.json rewritten");
}
