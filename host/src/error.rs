//! The one error type of Palisade: a stable snake_case code per failure, a CLI exit code,
//! an HTTP status, a docs anchor and, where mechanical, the policy change that would have let
//! the call through.

use crate::policy::PolicyError;
use serde::Serialize;
use std::fmt;

/// A policy change that would have let a call through: set `key` to `value` (a TOML literal).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fix {
    /// Dotted key path in the policy file, such as `limits.fuel`.
    pub key: String,
    /// The suggested value, written as TOML.
    pub value: String,
}

impl fmt::Display for Fix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "set `{} = {}` in the policy", self.key, self.value)
    }
}

/// Where in the script an error points, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct GuestLocation {
    /// The line, 1-based.
    pub line: u32,
    /// The column, 1-based.
    pub column: u32,
}

/// Everything that can end a call without a result.
///
/// Match on [`Error::code`] (stable) rather than on messages (for humans, may change).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The policy refused a capability, and the script did not catch the `PolicyDeniedError`.
    #[error("policy denied capability `{capability}` ({rule}): {reason}")]
    PolicyDenied {
        /// What was refused: a capability's name, or `fetch` for the network.
        capability: String,
        /// The policy rule that refused it, such as `http.allow`.
        rule: String,
        /// Why it was refused, for people.
        reason: String,
        /// The policy change that would allow it, where one is mechanical.
        fix: Option<Fix>,
    },
    /// The fuel budget ran out.
    #[error("the fuel budget of {budget} was exhausted")]
    FuelExhausted {
        /// The policy's `limits.fuel`.
        budget: u64,
    },
    /// The wall-clock deadline passed.
    #[error("the call ran past its {limit} deadline")]
    Timeout {
        /// The policy's `limits.timeout`.
        limit: crate::policy::HumanDuration,
    },
    /// The guest tried to grow its memory past the limit.
    #[error("the guest needed more than its {limit} memory limit")]
    MemoryLimit {
        /// The policy's `limits.memory`.
        limit: crate::policy::ByteSize,
    },
    /// The wasm stack (`limits.stack`) or the guest's fixed 6 MiB shadow stack ran out (deep or
    /// unbounded recursion).
    #[error("{}", if *shadow_stack {
        "the script exceeded the guest's 6MiB shadow stack (deep or unbounded recursion)".to_owned()
    } else {
        format!("the script exceeded the {limit} wasm stack (deep or unbounded recursion)")
    })]
    StackOverflow {
        /// The policy's `limits.stack`.
        limit: crate::policy::ByteSize,
        /// Whether the guest's shadow stack ran out rather than the wasm stack.
        shadow_stack: bool,
    },
    /// The JSON result is larger than the policy allows.
    #[error("the result is {size} bytes, over the {limit} output limit")]
    OutputTooLarge {
        /// The result's size in bytes.
        size: u64,
        /// The policy's `limits.output`.
        limit: crate::policy::ByteSize,
    },
    /// The input is not valid JSON or is too large.
    #[error("invalid input: {detail}")]
    InvalidInput {
        /// What is wrong with the input.
        detail: String,
        /// The policy change that would accept it, where one is mechanical.
        fix: Option<Fix>,
    },
    /// The module does not parse.
    #[error("syntax error: {message}{}", fmt_location(*location))]
    GuestSyntax {
        /// QuickJS's message.
        message: String,
        /// Where in the script, when QuickJS says.
        location: Option<GuestLocation>,
        /// The JS stack trace, when there is one.
        stack: Option<String>,
    },
    /// An exception escaped the script, or its result promise was rejected.
    #[error("uncaught {name}: {message}")]
    GuestException {
        /// The error's `name`, such as `TypeError`.
        name: String,
        /// The error's `message`.
        message: String,
        /// The JS stack trace, when there is one.
        stack: Option<String>,
        /// Where in the script it was thrown, when the stack says.
        location: Option<GuestLocation>,
    },
    /// The result promise can never settle.
    #[error("{detail}")]
    GuestDeadlock {
        /// What the script was left waiting for.
        detail: String,
    },
    /// The module has no export of the requested name.
    #[error("{detail}")]
    MissingExport {
        /// Which export is missing, and which the module has.
        detail: String,
    },
    /// The result has no JSON form (BigInt, cycle, function, symbol).
    #[error("the result is not JSON: {detail}")]
    BadOutput {
        /// What has no JSON form, and where.
        detail: String,
    },
    /// The guest's wasm trapped for a reason that is not a limit (an `unreachable`, an
    /// out-of-bounds access, an indirect call of the wrong type): a broken or forged compiled
    /// script, since the embedded guests do not trap on their own.
    #[error("the guest's wasm trapped: {trap}")]
    GuestTrap {
        /// wasmtime's description of the trap.
        trap: String,
    },
    /// `palisade compile`: the module's top level does something that a snapshot would freeze
    /// into every call (a clock read, random numbers, a timer, a host call).
    #[error("cannot compile: {detail}")]
    NotCompilable {
        /// What the top level did.
        detail: String,
    },
    /// A `.wasm` file that is not a script compiled by this build of Palisade.
    #[error("not a compiled script for this Palisade: {detail}")]
    InvalidComponent {
        /// Why the component was refused.
        detail: String,
    },
    /// The policy is invalid, or asks for more than this Palisade instance was built for.
    #[error("invalid policy: {0}")]
    InvalidPolicy(PolicyError),
    /// Every sandbox slot stayed busy past the admission wait.
    #[error("no sandbox slot became free within {waited_ms} ms")]
    CapacityExhausted {
        /// How long the call waited for a slot, in milliseconds.
        waited_ms: u64,
    },
    /// A compiled script's component needs compiling for this machine, and the host has spent
    /// its compile budget ([`crate::Builder::compile_budget`]). Code `capacity_exhausted`.
    #[error(
        "this component is not compiled for this machine yet, and the host has spent its \
         compile budget of {budget} per minute; retry in {retry_ms} ms"
    )]
    CompileBudget {
        /// The host's compile budget per minute.
        budget: crate::policy::HumanDuration,
        /// When enough of the budget is free again, in milliseconds.
        retry_ms: u64,
    },
    /// `palisade serve`: the request has no valid API key (`Authorization: Bearer KEY`).
    #[error("unauthorized: {detail}")]
    Unauthorized {
        /// What is wrong with the credentials.
        detail: String,
    },
    /// `palisade serve`: no policy of that name is in the caller's catalog.
    #[error("no policy named `{name}` in your catalog")]
    PolicyNotFound {
        /// The name asked for.
        name: String,
        /// The names the caller may use.
        catalog: Vec<String>,
    },
    /// `palisade serve`: no live session of that id belongs to the caller (never created,
    /// stopped, reaped, or another tenant's).
    #[error("no session `{id}`")]
    SessionNotFound {
        /// The id asked for.
        id: String,
    },
    /// `palisade serve`: the session is running another call; one runs at a time per session.
    #[error("session `{id}` is running another call")]
    SessionBusy {
        /// The session's id.
        id: String,
    },
    /// `palisade serve`: an `Idempotency-Key` reused with another request body.
    #[error("the Idempotency-Key `{key}` was first used with another request")]
    IdempotencyConflict {
        /// The key.
        key: String,
    },
    /// `palisade serve`: a session file operation named a path that does not exist.
    #[error("no file or directory `{path}`")]
    FileNotFound {
        /// The path, as the request gave it.
        path: String,
    },
    /// `palisade serve`: a session file operation found the wrong thing at a path (it already
    /// exists, is a directory where a file was expected or the reverse, is not empty).
    #[error("`{path}`: {detail}")]
    FileConflict {
        /// The path, as the request gave it.
        path: String,
        /// What is there.
        detail: String,
    },
    /// A bug or an environment failure in Palisade itself. Details go to the log, not the caller.
    #[error("internal error")]
    Internal {
        /// The cause, for the log; callers are shown only "internal error".
        detail: String,
    },
}

/// Upper bounds of the policy values a fix may suggest (the policy checker's ranges).
const MAX_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3600);
const MAX_IO: u64 = 256 << 20;

fn fmt_location(location: Option<GuestLocation>) -> String {
    location.map_or_else(String::new, |l| {
        format!(" (line {}, column {})", l.line, l.column)
    })
}

/// Stable facts about each error code: exit code and HTTP status.
const TABLE: &[(&str, i32, u16)] = &[
    ("guest_exception", 10, 422),
    ("guest_syntax", 11, 422),
    ("guest_deadlock", 12, 422),
    ("missing_export", 13, 422),
    ("bad_output", 14, 422),
    ("invalid_input", 15, 400),
    ("output_too_large", 16, 422),
    ("not_compilable", 17, 422),
    ("guest_trap", 19, 422),
    ("invalid_component", 18, 400),
    ("fuel_exhausted", 20, 429),
    ("timeout", 21, 408),
    ("memory_limit", 22, 429),
    ("stack_overflow", 23, 422),
    ("invalid_policy", 30, 400),
    ("policy_denied", 31, 403),
    ("capacity_exhausted", 40, 503),
    ("internal", 70, 500),
    ("unauthorized", 50, 401),
    ("policy_not_found", 51, 404),
    ("session_not_found", 52, 404),
    ("session_busy", 53, 409),
    ("idempotency_conflict", 54, 422),
    ("file_not_found", 55, 404),
    ("file_conflict", 56, 409),
];

impl Error {
    /// The stable snake_case code.
    pub fn code(&self) -> &'static str {
        match self {
            Error::FuelExhausted { .. } => "fuel_exhausted",
            Error::Timeout { .. } => "timeout",
            Error::MemoryLimit { .. } => "memory_limit",
            Error::StackOverflow { .. } => "stack_overflow",
            Error::OutputTooLarge { .. } => "output_too_large",
            Error::InvalidInput { .. } => "invalid_input",
            Error::GuestSyntax { .. } => "guest_syntax",
            Error::GuestException { .. } => "guest_exception",
            Error::GuestDeadlock { .. } => "guest_deadlock",
            Error::MissingExport { .. } => "missing_export",
            Error::BadOutput { .. } => "bad_output",
            Error::NotCompilable { .. } => "not_compilable",
            Error::GuestTrap { .. } => "guest_trap",
            Error::InvalidComponent { .. } => "invalid_component",
            Error::InvalidPolicy(_) => "invalid_policy",
            Error::PolicyDenied { .. } => "policy_denied",
            Error::CapacityExhausted { .. } | Error::CompileBudget { .. } => "capacity_exhausted",
            Error::Internal { .. } => "internal",
            Error::Unauthorized { .. } => "unauthorized",
            Error::PolicyNotFound { .. } => "policy_not_found",
            Error::SessionNotFound { .. } => "session_not_found",
            Error::SessionBusy { .. } => "session_busy",
            Error::IdempotencyConflict { .. } => "idempotency_conflict",
            Error::FileNotFound { .. } => "file_not_found",
            Error::FileConflict { .. } => "file_conflict",
        }
    }

    fn row(&self) -> (i32, u16) {
        let code = self.code();
        TABLE
            .iter()
            .find(|(c, ..)| *c == code)
            .map(|(_, exit, status)| (*exit, *status))
            .unwrap_or((70, 500))
    }

    /// Whether the same call may succeed if tried again later, unchanged: no slot or compile
    /// budget was free (`capacity_exhausted`), the session was busy (`session_busy`), or
    /// Palisade itself failed (`internal`). Every other code comes from the script, its input
    /// or its policy, and ends the same way again.
    pub fn retryable(&self) -> bool {
        matches!(
            self.code(),
            "capacity_exhausted" | "session_busy" | "internal"
        )
    }

    /// The exit code of `palisade run` for this error (table in `docs/errors.md`).
    pub fn exit_code(&self) -> i32 {
        self.row().0
    }

    /// The HTTP status that a server answers with for this error.
    pub fn http_status(&self) -> u16 {
        self.row().1
    }

    /// Where this code is documented.
    pub fn docs(&self) -> String {
        format!("docs/errors.md#{}", self.code())
    }

    /// The policy change that would have let the call through, where that is mechanical.
    pub fn fix(&self) -> Option<Fix> {
        let fix = |key: &str, value: String| {
            Some(Fix {
                key: key.to_owned(),
                value,
            })
        };
        match self {
            Error::FuelExhausted { budget } => {
                fix("limits.fuel", budget.saturating_mul(2).to_string())
            }
            Error::Timeout { limit } if limit.0 < MAX_TIMEOUT => fix(
                "limits.timeout",
                format!(
                    "\"{}\"",
                    crate::policy::HumanDuration((limit.0 * 2).min(MAX_TIMEOUT))
                ),
            ),
            Error::MemoryLimit { limit } if limit.0 < 4 << 30 => fix(
                "limits.memory",
                format!(
                    "\"{}\"",
                    crate::policy::ByteSize((limit.0 * 2).min(4 << 30))
                ),
            ),
            // Raising `limits.stack` does not help when the shadow stack ran out.
            Error::StackOverflow {
                limit,
                shadow_stack: false,
            } if limit.0 < 16 << 20 => fix(
                "limits.stack",
                format!(
                    "\"{}\"",
                    crate::policy::ByteSize((limit.0 * 2).min(16 << 20))
                ),
            ),
            Error::OutputTooLarge { size, .. } if *size <= MAX_IO => fix(
                "limits.output",
                format!(
                    "\"{}\"",
                    crate::policy::ByteSize(size.next_power_of_two().min(MAX_IO))
                ),
            ),
            Error::InvalidInput { fix, .. } | Error::PolicyDenied { fix, .. } => fix.clone(),
            _ => None,
        }
    }

    /// Every code with its exit code and HTTP status, for documentation and tests.
    pub fn table() -> &'static [(&'static str, i32, u16)] {
        TABLE
    }
}

impl From<PolicyError> for Error {
    fn from(e: PolicyError) -> Self {
        Error::InvalidPolicy(e)
    }
}

/// The JSON shape of an error in an outcome: `{"code", "message", "fix", ...}`.
impl Serialize for Error {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("code", self.code())?;
        map.serialize_entry("message", &self.to_string())?;
        map.serialize_entry("fix", &self.fix())?;
        map.serialize_entry("retryable", &self.retryable())?;
        match self {
            Error::GuestException {
                name,
                stack,
                location,
                ..
            } => {
                map.serialize_entry("name", name)?;
                map.serialize_entry("stack", stack)?;
                map.serialize_entry("location", location)?;
            }
            Error::GuestSyntax {
                location, stack, ..
            } => {
                map.serialize_entry("name", "SyntaxError")?;
                map.serialize_entry("stack", stack)?;
                map.serialize_entry("location", location)?;
            }
            Error::InvalidPolicy(policy) => map.serialize_entry("policy", policy)?,
            Error::PolicyDenied {
                capability, rule, ..
            } => {
                map.serialize_entry("capability", capability)?;
                map.serialize_entry("rule", rule)?;
            }
            _ => {}
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{ByteSize, HumanDuration};
    use std::time::Duration;

    #[test]
    fn every_code_has_one_row() {
        let mut codes: Vec<_> = TABLE.iter().map(|(c, ..)| *c).collect();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), TABLE.len());
        assert!(
            TABLE
                .iter()
                .all(|(_, exit, _)| *exit != 0 && *exit != 1 && *exit != 2)
        );
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
}
