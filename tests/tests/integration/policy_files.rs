//! Policy files: every file in `policies/` is valid, the default equals the built-in one, and
//! each bad fixture fails with the message in its golden `.err` file (`BLESS=1` rewrites them).

use crate::support::root;
use palisade::Policy;

#[test]
fn every_shipped_policy_is_valid() {
    let mut count = 0;
    for entry in std::fs::read_dir(root().join("policies")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let policy = Policy::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
            // What `palisade policy check` prints is itself a valid policy, resolving the same.
            let resolved = policy.to_string();
            let again = Policy::from_toml(&resolved, None)
                .unwrap_or_else(|e| panic!("{}: {e}\n{resolved}", path.display()));
            assert_eq!(again.to_string(), resolved, "{}", path.display());
            count += 1;
        }
    }
    assert!(
        count >= 3,
        "default, capability-bridge and deterministic-action at least"
    );
}

#[test]
fn the_default_file_is_the_builtin_default() {
    let file = Policy::from_file(root().join("policies/default.toml")).unwrap();
    assert_eq!(file, Policy::builtin_default());
}

#[test]
fn bad_policies_match_their_golden_errors() {
    let dir = root().join("tests/fixtures/policies/bad");
    let bless = std::env::var_os("BLESS").is_some();
    let mut checked = 0;
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
    {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let error = Policy::from_toml(&text, Some(std::path::Path::new(&name)))
            .expect_err(&format!("{name} should be refused"));
        let actual = format!("{error}\n");
        let golden = path.with_extension("err");
        if bless {
            std::fs::write(&golden, &actual).unwrap();
        } else {
            let expected = std::fs::read_to_string(&golden)
                .unwrap_or_else(|_| panic!("missing {}; run with BLESS=1", golden.display()));
            assert_eq!(actual, expected, "{name}");
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} bad policy fixtures");
}
