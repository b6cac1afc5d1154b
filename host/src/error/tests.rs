use super::*;
use std::time::Duration;

#[test]
fn every_code_has_one_row() {
    let mut codes: Vec<_> = TABLE.iter().map(|(c, ..)| *c).collect();
    codes.sort();
    codes.dedup();
    assert_eq!(codes.len(), TABLE.len());
    let mut exits: Vec<_> = TABLE.iter().map(|(_, exit, _)| *exit).collect();
    exits.sort();
    exits.dedup();
    assert_eq!(exits.len(), TABLE.len(), "one exit code per error code");
    assert!(
        TABLE
            .iter()
            .all(|(_, exit, _)| *exit != 0 && *exit != 1 && *exit != 2)
    );
    let rows: Vec<_> = ErrorCode::ALL
        .iter()
        .map(|c| (c.as_str(), c.exit_code(), c.http_status()))
        .collect();
    assert_eq!(rows, TABLE);
}

#[test]
fn errors_take_their_facts_from_their_code() {
    let cases = [
        (Error::FuelExhausted { budget: 1 }, ErrorCode::FuelExhausted),
        (
            Error::CompileBudget {
                budget: HumanDuration(Duration::from_secs(30)),
                retry_ms: 5,
            },
            ErrorCode::CapacityExhausted,
        ),
        (Error::Internal { detail: "x".into() }, ErrorCode::Internal),
        (
            Error::InvalidInput {
                detail: "x".into(),
                fix: None,
            },
            ErrorCode::InvalidInput,
        ),
    ];
    for (error, code) in cases {
        assert_eq!(error.error_code(), code);
        assert_eq!(error.code(), code.as_str());
        assert_eq!(
            (error.exit_code(), error.http_status(), error.retryable()),
            (code.exit_code(), code.http_status(), code.retryable())
        );
        assert_eq!(error.docs(), format!("docs/errors.md#{code}"));
    }
    let retryable: Vec<_> = ErrorCode::ALL.iter().filter(|c| c.retryable()).collect();
    assert_eq!(
        retryable,
        [
            &ErrorCode::CapacityExhausted,
            &ErrorCode::Internal,
            &ErrorCode::SessionBusy,
            &ErrorCode::KvConflict
        ]
    );
    assert_eq!(ErrorCode::Timeout.exit_code(), 21);
    assert_eq!(ErrorCode::PolicyDenied.http_status(), 403);
}

#[test]
fn fix_ceilings_are_the_policy_bounds() {
    let e = Error::StackOverflow {
        limit: ByteSize(12 << 20),
        shadow_stack: false,
    };
    assert_eq!(e.fix().unwrap().value, format!("\"{}\"", bounds::STACK.1));
    let e = Error::StackOverflow {
        limit: bounds::STACK.1,
        shadow_stack: false,
    };
    assert_eq!(e.fix(), None);
    let e = Error::Timeout {
        limit: HumanDuration(bounds::TIMEOUT.1),
    };
    assert_eq!(e.fix(), None);
    let e = Error::OutputTooLarge {
        size: bounds::IO.1.0 + 1,
        limit: ByteSize(1024),
    };
    assert_eq!(e.fix(), None);
}

#[test]
fn fixes_are_policy_changes() {
    let e = Error::FuelExhausted { budget: 1000 };
    assert_eq!(
        e.fix(),
        Some(Fix {
            key: "limits.fuel".into(),
            value: "2000".into()
        })
    );
    let e = Error::Timeout {
        limit: HumanDuration(Duration::from_millis(250)),
    };
    assert_eq!(e.fix().unwrap().value, "\"500ms\"");
    let e = Error::MemoryLimit {
        limit: ByteSize(4 << 30),
    };
    assert_eq!(e.fix(), None, "no fix past the wasm32 ceiling");
    let e = Error::OutputTooLarge {
        size: 3000,
        limit: ByteSize(1024),
    };
    assert_eq!(e.fix().unwrap().value, "\"4KiB\"");
    assert_eq!(e.exit_code(), 16);
}
