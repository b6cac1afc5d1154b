//! The fuzz targets' corpora, replayed on stable without libFuzzer: every file under
//! `fuzz/corpus/TARGET/` (the seeds and what fuzzing kept) and `fuzz/artifacts/TARGET/` (the
//! reproducers of fixed findings) goes through the same `check` as the fuzz target
//! (`palisade_fuzz::TARGET::check`, docs/reliability.md, "Fuzzing"), which panics on a finding.

use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// Replay every committed input of `target`; returns how many there were.
fn replay(target: &str) -> usize {
    let check = palisade_fuzz::TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .map(|(_, check)| *check)
        .unwrap_or_else(|| panic!("no fuzz target {target}"));
    let mut files = Vec::new();
    for folder in ["corpus", "artifacts"] {
        let dir = fuzz_dir().join(folder).join(target);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("a corpus entry").path();
            if path.is_file() {
                files.push(path);
            }
        }
    }
    files.sort();
    for path in &files {
        let data = std::fs::read(path).expect("a corpus file reads");
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(
            outcome.is_ok(),
            "fuzz target {target} fails on {}",
            path.display()
        );
    }
    files.len()
}

#[test]
fn every_target_has_a_seed_corpus() {
    for (target, _) in palisade_fuzz::TARGETS {
        let seeds = std::fs::read_dir(fuzz_dir().join("corpus").join(target))
            .map(|entries| entries.count())
            .unwrap_or(0);
        assert!(seeds >= 5, "fuzz/corpus/{target} has {seeds} seeds");
    }
}

#[test]
fn fuzz_corpus_policy() {
    assert!(replay("policy") > 0);
}

#[test]
fn fuzz_corpus_url_gate() {
    assert!(replay("url_gate") > 0);
}

#[test]
fn fuzz_corpus_input_json() {
    assert!(replay("input_json") > 0);
}

#[test]
fn fuzz_corpus_replay() {
    assert!(replay("replay") > 0);
}

#[test]
fn fuzz_corpus_component() {
    assert!(replay("component") > 0);
}

#[test]
fn fuzz_corpus_serve_body() {
    assert!(replay("serve_body") > 0);
}

/// Found by the `policy` target (`fuzz/artifacts/policy/crash-2a59…`): a control character in
/// a comment was refused with an empty message ("file:1:4: "). The error names it now.
#[test]
fn a_control_character_in_a_policy_is_named() {
    let error = palisade::Policy::from_toml("# a\u{0}b\n", None).unwrap_err();
    assert_eq!(error.line, Some(1));
    assert_eq!(error.message, "U+0000 is not allowed here in TOML");
    // A normal policy still reads.
    assert!(palisade::Policy::from_toml("# a b\n[limits]\nfuel = 1000000\n", None).is_ok());
}

/// Found by the `policy` target (`fuzz/artifacts/policy/crash-4f15…`): a capability schema
/// whose top level holds only tables was printed by `palisade policy check` as a dotted table
/// header, and a schema written that way was refused ("expected a borrowed string"). Both
/// forms read now, and the resolved form reads back to the same policy.
#[test]
fn a_schema_of_tables_reads_back_from_its_resolved_form() {
    let inline = palisade::Policy::from_toml(
        "[capabilities.allow.do]\nschema = { properties = { op = { type = \"string\" } } }\n",
        None,
    )
    .unwrap();
    let headers = palisade::Policy::from_toml(
        "[capabilities.allow.do]\n[capabilities.allow.do.schema.properties.op]\ntype = \"string\"\n",
        None,
    )
    .unwrap();
    assert_eq!(inline.capabilities(), headers.capabilities());
    let again = palisade::Policy::from_toml(&inline.to_string(), None).unwrap();
    assert_eq!(again.capabilities(), inline.capabilities());
    // A schema that is no JSON Schema is still refused under its key.
    let error =
        palisade::Policy::from_toml("[capabilities.allow.do]\nschema = { type = 12 }\n", None)
            .unwrap_err();
    assert_eq!(error.key, "capabilities.allow.do.schema");
}

/// Found by the `policy` target (`fuzz/artifacts/policy/crash-9a96…`): a rule's `headers` kept
/// the file's order of names with their case (`A…` before `t…`), and the resolved form, whose
/// names are lower-case, read back in another order: a different rule. Names are kept sorted
/// now, and a name given twice in two cases, which the resolved form could not hold, is
/// refused. (A value no request could carry was already refused at load.)
#[test]
fn a_rules_headers_read_back_in_one_order() {
    let rule = |headers: &str| {
        format!(
            "[http]\n[[http.allow]]\nurl = \"https://api.example.com/\"\nheaders = {{ {headers} }}\n"
        )
    };
    let policy =
        palisade::Policy::from_toml(&rule(r#"Zeta = "1", alpha = "2", Beta = "3""#), None).unwrap();
    let again = palisade::Policy::from_toml(&policy.to_string(), None).unwrap();
    assert_eq!(again.http(), policy.http());
    let names: Vec<&str> = policy.http().unwrap().allow[0]
        .headers
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(names, ["alpha", "beta", "zeta"]);

    let error =
        palisade::Policy::from_toml(&rule(r#"X-Key = "1", x-key = "2""#), None).unwrap_err();
    assert_eq!(error.key, "http.allow[0].headers.x-key");
    assert_eq!(
        error.message,
        "`x-key` is named twice (header names ignore case)"
    );
    let error = palisade::Policy::from_toml(&rule(r#"X-Key = "a\nb""#), None).unwrap_err();
    assert_eq!(error.key, "http.allow[0].headers.X-Key");
    assert_eq!(error.message, "`a\nb` is not a valid header value");
    // A normal rule still reads.
    assert!(palisade::Policy::from_toml(&rule(r#"X-Key = "a b""#), None).is_ok());
}

/// The `component` target's whole-component inputs are edits to a script this build compiles
/// once per process (`palisade_fuzz::component::file_of`). Its seed used to be a committed
/// compiled file: once the guest was rebuilt, its marker named another guest, so every
/// mutation of it was refused as "compiled by another build" before Cranelift saw it.
#[test]
fn the_component_seed_is_a_script_of_this_build() {
    use palisade_fuzz::component::{EDITS, file_of};
    let script = palisade::Script::from_file_bytes(Path::new("app.wasm"), file_of(&[EDITS]))
        .expect("the seed loads")
        .expect("as a component");
    assert!(script.is_compiled());
    // Its marker names this build's guest: an edit to the first digit of that SHA-256 is
    // refused as another build's file.
    let wasm = file_of(&[EDITS]);
    let at = wasm
        .windows(9)
        .position(|w| w == b"\"guest\":\"")
        .expect("the marker names its guest")
        + 9;
    let other = if wasm[at] == b'0' { b'1' } else { b'0' };
    let mut edit = vec![EDITS, 0];
    edit.extend_from_slice(&(at as u32).to_le_bytes());
    edit.push(other);
    let error = palisade::Script::from_file_bytes(Path::new("app.wasm"), file_of(&edit))
        .expect_err("another guest's file is refused");
    assert_eq!(error.code(), "invalid_component");
    assert!(error.to_string().contains("another build"), "{error}");
    // The unedited seed still runs (the target's own check asserts its answer).
    palisade_fuzz::component::check(&[EDITS]);
}

/// Reported by the `input_json` target (`fuzz/artifacts/input_json/crash-4bd6…`) when its
/// process was stopped (SIGSTOP) for a minute mid-call: the call's wall-clock deadline passed
/// and an input that is no JSON ended `timeout` rather than `invalid_input`. Not a fault of
/// the reader: the input is refused at once. The target now runs an input that times out a
/// second time before calling it a finding.
#[tokio::test]
async fn an_input_that_timed_out_under_a_stopped_fuzzer_is_invalid_input() {
    let input = std::fs::read(
        fuzz_dir().join("artifacts/input_json/crash-4bd65f3001a8fa6649d189187376e01c60dbe5b7"),
    )
    .unwrap();
    let input = std::str::from_utf8(&input).unwrap();
    let palisade = palisade::Palisade::new().unwrap();
    let policy = crate::support::roomy();
    let script = palisade::Script::new("echo.js", "export default (input) => input");
    let outcome = palisade.run(&policy, &script, input).await;
    assert_eq!(outcome.result.unwrap_err().code(), "invalid_input");
    // A normal call right after.
    let outcome = palisade.run(&policy, &script, r#"{"n": [1, 2.5]}"#).await;
    assert_eq!(outcome.result.unwrap().get(), r#"{"n":[1,2.5]}"#);
}
