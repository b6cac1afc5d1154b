//! The Outcome as both bindings return it: the JSON `palisade run --json` prints, with a
//! `fix_note` on every error, which says how to recover when there is no mechanical `fix`.
//! A binding may write it in two parts ([`outcome_parts`]): the output or the error, which
//! every caller reads, and the rest, which its caller may read later.

use palisade::{AuditRecord, Error, ErrorCode, LogLine, Outcome, Policy, Receipt};
use serde::Serialize;

/// The members `{"logs": […], "audit": […], "receipt": {…}}` of every Outcome's JSON, in the
/// library's order: the one writer of both [`outcome_parts`] and [`outcome_json`].
#[derive(Serialize)]
struct RestJson<'a> {
    logs: &'a [LogLine],
    audit: &'a [AuditRecord],
    receipt: &'a Receipt,
}

impl RestJson<'_> {
    /// Append `outcome`'s rest to `json`.
    fn write(outcome: &Outcome, json: &mut Vec<u8>) {
        let rest = RestJson {
            logs: &outcome.logs,
            audit: &outcome.audit,
            receipt: &outcome.receipt,
        };
        serde_json::to_writer(json, &rest).expect("an Outcome serialises");
    }

    fn of(outcome: &Outcome) -> String {
        let mut json = Vec::with_capacity(512);
        Self::write(outcome, &mut json);
        String::from_utf8(json).expect("serde_json writes UTF-8")
    }
}

/// `outcome` in two parts: the output's JSON (Ok, handed on without a copy) or
/// `{"error": {…}}` (Err, with `"error_id"` for an `internal` error), returned; and the rest,
/// `{"logs": […], "audit": […], "receipt": {…}}`, appended to `rest` (UTF-8), which a binding
/// may read only when its caller asks for it. A binding that writes many outcomes' rests
/// into one buffer it keeps allocates nothing for them.
pub fn outcome_parts(outcome: Outcome, rest: &mut Vec<u8>) -> Result<Box<str>, String> {
    RestJson::write(&outcome, rest);
    let Outcome {
        result, error_id, ..
    } = outcome;
    result
        .map(Box::<str>::from)
        .map_err(|error| failure_of(&error, error_id.as_deref()))
}

/// `{"error": {…}}` for a call that failed, with `"error_id"` for an `internal` error.
fn failure_of(error: &Error, error_id: Option<&str>) -> String {
    #[derive(Serialize)]
    struct Failure<'a> {
        error: serde_json::Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        error_id: Option<&'a str>,
    }
    let failure = Failure {
        error: error_json(error),
        error_id,
    };
    serde_json::to_string(&failure).expect("an Error serialises")
}

/// `{"ok": true, "output": …, "logs": […], "audit": […], "receipt": {…}}`, or `"ok": false`
/// with `"error": {code, message, fix, fix_note, docs_url, retryable, …}` (and `error_id`
/// for `internal`): the output or the failure, joined with the rest.
pub fn outcome_json(outcome: &Outcome) -> String {
    joined(
        outcome,
        outcome.output().map_or("null", |output| output.get()),
    )
}

/// [`outcome_json`] with `"output": null` for a call that succeeded: the rest of the Outcome,
/// whose depth the library bounds, for a binding that reads the output apart (a script's
/// output may be nested deeper than the binding's own JSON reader goes).
pub fn outcome_json_but_output(outcome: &Outcome) -> String {
    joined(outcome, "null")
}

/// The Outcome's JSON with `output` as the output of a call that succeeded.
fn joined(outcome: &Outcome, output: &str) -> String {
    let rest = RestJson::of(outcome);
    // Both parts but the output are objects: their members are joined in one.
    let members = |object: &str| object[1..object.len() - 1].to_owned();
    let rest = members(&rest);
    match &outcome.result {
        Ok(_) => format!(r#"{{"ok":true,"output":{output},{rest}}}"#),
        Err(error) => {
            let failure = failure_of(error, outcome.error_id.as_deref());
            format!(r#"{{"ok":false,{},{rest}}}"#, members(&failure))
        }
    }
}

/// An error as the Outcome holds it: `{code, message, fix, fix_note, docs_url, retryable, …}`.
pub fn error_json(error: &Error) -> serde_json::Value {
    let mut value = serde_json::to_value(error).expect("an Error serialises");
    value["fix_note"] = fix_note(error).into();
    value
}

/// The JSON of an error thrown to the caller (by a constructor: a `Palisade`, a `Policy`, a
/// `Script`), as [`error_json`] but with an internal error's cause in its message: the caller's
/// own settings or files caused it (an audit log that cannot be opened, a pool too large to
/// reserve), so it is theirs to see. A call's Outcome keeps an internal cause out, as the
/// library does.
pub fn thrown_json(error: &Error) -> serde_json::Value {
    let mut value = error_json(error);
    if let Error::Internal { detail } = error {
        value["message"] = format!("internal error: {detail}").into();
    }
    value
}

/// How to recover from `error`: the policy change that would allow it, or what to do about
/// its code.
pub fn fix_note(error: &Error) -> String {
    if let Some(fix) = error.fix() {
        return format!("the policy change that would allow it: {fix}");
    }
    let note = match error.error_code() {
        ErrorCode::GuestException
        | ErrorCode::GuestSyntax
        | ErrorCode::GuestDeadlock
        | ErrorCode::MissingExport
        | ErrorCode::BadOutput
        | ErrorCode::GuestTrap => {
            "the script itself failed: fix it (message, stack and location say where); the same \
             call fails the same way again"
        }
        ErrorCode::FuelExhausted | ErrorCode::Timeout | ErrorCode::MemoryLimit => {
            "the script needs more than the policy's limits allow: make it do less, or raise the \
             limit in the policy"
        }
        ErrorCode::StackOverflow => "the script recursed too deeply: bound its recursion",
        ErrorCode::OutputTooLarge => "return less, or raise limits.output in the policy",
        ErrorCode::InvalidInput => "fix the call's input or options (the message says which)",
        ErrorCode::InvalidPolicy => "fix the policy (the message names the key)",
        ErrorCode::InvalidComponent | ErrorCode::NotCompilable => {
            "compile the script again with this version of Palisade"
        }
        ErrorCode::PolicyDenied => "the policy does not grant this; see docs_url",
        ErrorCode::Cancelled => "the call was cancelled by its caller; run it again if needed",
        ErrorCode::CapacityExhausted => {
            "every sandbox slot stayed busy: retry later, or raise maxConcurrency"
        }
        ErrorCode::Internal => "retry; if it persists, report the error_id with the host's log",
        _ => "see docs_url",
    };
    note.to_owned()
}

/// The Outcome of a call refused before it ran (its policy, script or options): no logs, no
/// audit, a receipt naming the policy when it was read.
pub fn failed(error: Error, policy: Option<&Policy>) -> Outcome {
    Outcome::not_started(error, policy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_outcome_has_every_error_field() {
        let error = Error::InvalidInput {
            detail: "bad".into(),
            fix: None,
        };
        let json: serde_json::Value =
            serde_json::from_str(&outcome_json(&failed(error, None))).unwrap();
        let error = &json["error"];
        assert_eq!(json["ok"], false);
        assert_eq!(error["code"], "invalid_input");
        assert_eq!(error["message"], "invalid input: bad");
        assert_eq!(error["fix"], serde_json::Value::Null);
        assert_eq!(error["retryable"], false);
        assert!(
            error["docs_url"]
                .as_str()
                .unwrap()
                .ends_with("#invalid_input")
        );
        assert!(error["fix_note"].as_str().unwrap().contains("options"));
        assert_eq!(json["receipt"]["policy"], "");
    }

    /// `outcome` as the library writes it, with the `fix_note` of its error.
    fn as_the_library_writes(outcome: &Outcome) -> serde_json::Value {
        let mut value = serde_json::to_value(outcome).unwrap();
        if let Some(error) = outcome.error() {
            value["error"]["fix_note"] = fix_note(error).into();
        }
        value
    }

    #[test]
    fn the_two_parts_joined_are_the_outcome_as_the_library_writes_it() {
        let parse = |text: &str| serde_json::from_str::<serde_json::Value>(text).unwrap();
        // An internal error has an error_id; another error has none.
        let policy = Policy::builtin_default();
        for error in [
            Error::Internal {
                detail: "lost".into(),
            },
            Error::Cancelled,
        ] {
            let outcome = failed(error, Some(&policy));
            let library = as_the_library_writes(&outcome);
            assert_eq!(parse(&outcome_json(&outcome)), library);
            assert!(outcome_json(&outcome).starts_with(r#"{"ok":false,"error":{"#));
            let has_id = outcome.error_id.is_some();
            let mut rest = Vec::new();
            let head = outcome_parts(outcome, &mut rest);
            let failure = parse(&head.unwrap_err());
            assert_eq!(failure["error"], library["error"]);
            assert_eq!(failure.get("error_id").is_some(), has_id);
            let rest = parse(std::str::from_utf8(&rest).unwrap());
            assert_eq!(rest["receipt"]["policy"], "default");
            assert_eq!(rest["receipt"], library["receipt"]);
        }
        let mut outcome = failed(Error::Cancelled, Some(&policy));
        let output = r#"{"a":[1,"x\"y"]}"#;
        outcome.result = Ok(serde_json::value::RawValue::from_string(output.into()).unwrap());
        outcome.logs.push(palisade::LogLine {
            level: palisade::Level::Info,
            message: "a \"line\"".into(),
        });
        assert_eq!(
            parse(&outcome_json(&outcome)),
            as_the_library_writes(&outcome)
        );
        let joined = outcome_json(&outcome);
        assert!(joined.starts_with(r#"{"ok":true,"output":{"a":[1,"x\"y"]},"logs":[{"#));
        // Appended after what the buffer holds.
        let mut rest = b"[".to_vec();
        let head = outcome_parts(outcome, &mut rest);
        assert_eq!(
            head.as_deref(),
            Ok(output),
            "the output's JSON as the script returned it"
        );
        let rest = std::str::from_utf8(&rest[1..]).unwrap();
        // The members in the library's order, as `palisade run --json` prints them.
        assert!(rest.starts_with(r#"{"logs":[{"level":"info","message":"a \"line\""}],"audit":[],"receipt":{"fuel_used":0,"#));
        assert!(
            joined.ends_with(&rest[1..]),
            "the rest is the joined outcome's tail"
        );
    }

    #[test]
    fn every_library_code_has_its_own_note() {
        let fix = Error::InvalidInput {
            detail: String::new(),
            fix: Some(palisade::Fix {
                key: "limits.timeout".into(),
                value: "\"5s\"".into(),
            }),
        };
        assert!(fix_note(&fix).contains("set `limits.timeout = \"5s\"`"));
        assert_eq!(
            fix_note(&Error::Cancelled),
            "the call was cancelled by its caller; run it again if needed"
        );
    }
}
