//! `policy`: arbitrary bytes as a policy file. A policy either validates, or its error names
//! where (a key path or a line); it never panics. A policy that validates, written back out as
//! its resolved TOML (`palisade policy check`, `Display`), reads back to the same policy.

use palisade::Policy;

pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        // `Policy::from_file` refuses a file that is not UTF-8 before parsing it.
        return;
    };
    let policy = match Policy::from_toml(text, None) {
        Ok(policy) => policy,
        Err(e) => {
            assert!(
                !e.key.is_empty() || e.line.is_some(),
                "a policy error names neither a key nor a line: {e}"
            );
            assert!(!e.message.is_empty(), "a policy error without a message");
            return;
        }
    };
    let resolved = policy.to_string();
    let again = Policy::from_toml(&resolved, None).unwrap_or_else(|e| {
        panic!("the resolved form of a valid policy is refused: {e}\n--- resolved:\n{resolved}")
    });
    assert_eq!(
        again.to_string(),
        resolved,
        "the resolved policy does not read back to itself"
    );
    assert_eq!(again.limits(), policy.limits());
    assert_eq!(again.http(), policy.http());
    assert_eq!(again.kv(), policy.kv());
    assert_eq!(again.capabilities(), policy.capabilities());
    assert_eq!(again.fs(), policy.fs());
    assert_eq!(again.config(), policy.config());
    assert_eq!(again.determinism(), policy.determinism());
    assert_eq!(again.name(), policy.name());
}
