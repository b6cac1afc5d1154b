//! The one error type of Palisade: a stable snake_case code per failure, a CLI exit code,
//! an HTTP status, a docs anchor and, where mechanical, the policy change that would have let
//! the call through.

use crate::bindings::exports::palisade::sandbox::runner;
use crate::policy::{ByteSize, HumanDuration, PolicyError, bounds};
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
    /// The embedder cancelled the call ([`CallHandle::cancel`](crate::CallHandle::cancel)).
    #[error("the call was cancelled")]
    Cancelled,
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
    /// script, since the embedded guests do not trap on their own; or a script holding more
    /// host resources at once than the host allows (32,768: capability calls, requests, streams
    /// and the pollables that wait on them).
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
    /// `palisade serve`: the key-value writes a call held (`RunOptions::kv_transaction`) were
    /// not applied, because another writer changed a value the call compared, or filled its
    /// namespace, since the call read them. Nothing of the call was kept.
    #[error("the call's key-value writes were not applied: {detail}")]
    KvConflict {
        /// What moved.
        detail: String,
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
    /// `palisade serve`: no app of that name is loaded for the caller (never loaded, unloaded,
    /// or another tenant's).
    #[error("no app `{name}`")]
    AppNotFound {
        /// The name asked for.
        name: String,
    },
    /// `palisade serve --store redis://…`, or a call's key-value store in Redis
    /// (`RedisKv`): the shared store is down or did not answer in time (a call
    /// that meets it ends so, whatever its script does with the failed operation). The same
    /// request may succeed once it is back (with its `Idempotency-Key`, a commit whose
    /// answer was lost is replayed, not repeated). Details go to the log, not the caller.
    #[error("the server's store is unavailable; retry after Retry-After seconds")]
    StoreUnavailable,
    /// `palisade serve`, replicas: the session's files live on another replica, which alone
    /// can serve it; send the request there.
    #[error("session `{id}` is held by replica `{replica}`")]
    SessionElsewhere {
        /// The session's id.
        id: String,
        /// The replica that holds it (its `--replica` name).
        replica: String,
    },
    /// A bug or an environment failure in Palisade itself. Details go to the log, not the caller.
    #[error("internal error")]
    Internal {
        /// The cause, for the log; callers are shown only "internal error".
        detail: String,
    },
}

fn fmt_location(location: Option<GuestLocation>) -> String {
    location.map_or_else(String::new, |l| {
        format!(" (line {}, column {})", l.line, l.column)
    })
}

/// Declares [`ErrorCode`] and its table from one list of rows.
macro_rules! error_codes {
    ($($(#[$doc:meta])* $variant:ident = ($code:literal, $exit:literal, $status:literal, $retryable:literal),)*) => {
        /// The stable code of an [`Error`], with the facts that follow from it: its name, the
        /// exit code of `palisade run`, the HTTP status a server answers with, whether a retry
        /// may succeed, and its section in `docs/errors.md`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum ErrorCode {
            $($(#[$doc])* $variant,)*
        }

        impl ErrorCode {
            /// Every code, in the order of the table in `docs/errors.md`.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// The stable snake_case name, such as `fuel_exhausted`.
            pub const fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$variant => $code,)* }
            }

            /// The exit code of `palisade run`.
            pub const fn exit_code(self) -> i32 {
                match self { $(ErrorCode::$variant => $exit,)* }
            }

            /// The HTTP status that a server answers with.
            pub const fn http_status(self) -> u16 {
                match self { $(ErrorCode::$variant => $status,)* }
            }

            /// Whether the same call may succeed if tried again later, unchanged.
            pub const fn retryable(self) -> bool {
                match self { $(ErrorCode::$variant => $retryable,)* }
            }
        }

        /// Every code with its exit code and HTTP status, derived from the rows above.
        const TABLE: &[(&str, i32, u16)] = &[$(($code, $exit, $status),)*];
    };
}

error_codes! {
    /// An exception escaped the script.
    GuestException = ("guest_exception", 10, 422, false),
    /// The module does not parse.
    GuestSyntax = ("guest_syntax", 11, 422, false),
    /// The result promise can never settle.
    GuestDeadlock = ("guest_deadlock", 12, 422, false),
    /// The module has no export of the requested name.
    MissingExport = ("missing_export", 13, 422, false),
    /// The result has no JSON form.
    BadOutput = ("bad_output", 14, 422, false),
    /// The input is not valid JSON or is too large, or a per-call option is out of range.
    InvalidInput = ("invalid_input", 15, 400, false),
    /// The JSON result is larger than `limits.output`.
    OutputTooLarge = ("output_too_large", 16, 422, false),
    /// The module's top level cannot be snapshotted.
    NotCompilable = ("not_compilable", 17, 422, false),
    /// A `.wasm` file that is not a script compiled by this build of Palisade.
    InvalidComponent = ("invalid_component", 18, 400, false),
    /// The guest's wasm trapped for a reason that is not a limit.
    GuestTrap = ("guest_trap", 19, 422, false),
    /// The fuel budget ran out.
    FuelExhausted = ("fuel_exhausted", 20, 429, false),
    /// The wall-clock deadline passed.
    Timeout = ("timeout", 21, 408, false),
    /// The guest needed more memory than `limits.memory`.
    MemoryLimit = ("memory_limit", 22, 429, false),
    /// The wasm stack or the guest's shadow stack ran out.
    StackOverflow = ("stack_overflow", 23, 422, false),
    /// The embedder cancelled the call.
    Cancelled = ("cancelled", 24, 499, false),
    /// The policy is invalid.
    InvalidPolicy = ("invalid_policy", 30, 400, false),
    /// The policy refused a capability.
    PolicyDenied = ("policy_denied", 31, 403, false),
    /// No sandbox slot or compile budget was free.
    CapacityExhausted = ("capacity_exhausted", 40, 503, true),
    /// A bug or an environment failure in Palisade itself.
    Internal = ("internal", 70, 500, true),
    /// `palisade serve`: the request carries no valid API key.
    Unauthorized = ("unauthorized", 50, 401, false),
    /// `palisade serve`: the policy is not in the caller's catalog.
    PolicyNotFound = ("policy_not_found", 51, 404, false),
    /// `palisade serve`: no such session (never created, stopped, or another tenant's).
    SessionNotFound = ("session_not_found", 52, 404, false),
    /// `palisade serve`: the session is running another call.
    SessionBusy = ("session_busy", 53, 409, true),
    /// `palisade serve`: an `Idempotency-Key` was reused with another request body.
    IdempotencyConflict = ("idempotency_conflict", 54, 422, false),
    /// `palisade serve`: a session file operation named a file that does not exist.
    FileNotFound = ("file_not_found", 55, 404, false),
    /// `palisade serve`: a session file operation would overwrite or conflict with a file.
    FileConflict = ("file_conflict", 56, 409, false),
    /// `palisade serve`: no such app (never loaded, unloaded, or another tenant's).
    AppNotFound = ("app_not_found", 57, 404, false),
    /// `palisade serve --store redis://…`: the shared store is down or did not answer in time.
    StoreUnavailable = ("store_unavailable", 58, 503, true),
    /// `palisade serve`, replicas: the session is held by another replica.
    SessionElsewhere = ("session_elsewhere", 59, 421, true),
    /// `palisade serve`: a call's held key-value writes met another writer's.
    KvConflict = ("kv_conflict", 60, 409, true),
}

impl ErrorCode {
    /// The anchor of this code's section in `docs/errors.md`: its name.
    pub const fn docs_anchor(self) -> &'static str {
        self.as_str()
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The default base of every error's `docs_url`: the error table as packaged with the crate
/// (docs.rs shows a published crate's files).
pub const DEFAULT_DOCS_URL: &str = "https://docs.rs/crate/palisade/latest/source/docs/errors.md";

static DOCS_BASE: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Set the base of every error's `docs_url` for this process (an operator's own copy of the
/// error table); the first call wins and later ones return `false`. The `palisade` command reads
/// it from `$PALISADE_DOCS_URL`, and `palisade serve` from `--docs-url` too.
pub fn set_docs_base(base: &str) -> bool {
    DOCS_BASE.set(base.trim_end_matches('/').to_owned()).is_ok()
}

/// The base of every error's `docs_url`: what [`set_docs_base`] set, else [`DEFAULT_DOCS_URL`].
pub fn docs_base() -> &'static str {
    DOCS_BASE.get().map_or(DEFAULT_DOCS_URL, String::as_str)
}

impl Error {
    /// The stable code, with its exit code, HTTP status and whether a retry may succeed.
    pub fn error_code(&self) -> ErrorCode {
        match self {
            Error::FuelExhausted { .. } => ErrorCode::FuelExhausted,
            Error::Timeout { .. } => ErrorCode::Timeout,
            Error::Cancelled => ErrorCode::Cancelled,
            Error::MemoryLimit { .. } => ErrorCode::MemoryLimit,
            Error::StackOverflow { .. } => ErrorCode::StackOverflow,
            Error::OutputTooLarge { .. } => ErrorCode::OutputTooLarge,
            Error::InvalidInput { .. } => ErrorCode::InvalidInput,
            Error::GuestSyntax { .. } => ErrorCode::GuestSyntax,
            Error::GuestException { .. } => ErrorCode::GuestException,
            Error::GuestDeadlock { .. } => ErrorCode::GuestDeadlock,
            Error::MissingExport { .. } => ErrorCode::MissingExport,
            Error::BadOutput { .. } => ErrorCode::BadOutput,
            Error::NotCompilable { .. } => ErrorCode::NotCompilable,
            Error::GuestTrap { .. } => ErrorCode::GuestTrap,
            Error::InvalidComponent { .. } => ErrorCode::InvalidComponent,
            Error::InvalidPolicy(_) => ErrorCode::InvalidPolicy,
            Error::PolicyDenied { .. } => ErrorCode::PolicyDenied,
            Error::CapacityExhausted { .. } | Error::CompileBudget { .. } => {
                ErrorCode::CapacityExhausted
            }
            Error::Internal { .. } => ErrorCode::Internal,
            Error::Unauthorized { .. } => ErrorCode::Unauthorized,
            Error::PolicyNotFound { .. } => ErrorCode::PolicyNotFound,
            Error::SessionNotFound { .. } => ErrorCode::SessionNotFound,
            Error::SessionBusy { .. } => ErrorCode::SessionBusy,
            Error::IdempotencyConflict { .. } => ErrorCode::IdempotencyConflict,
            Error::FileNotFound { .. } => ErrorCode::FileNotFound,
            Error::FileConflict { .. } => ErrorCode::FileConflict,
            Error::AppNotFound { .. } => ErrorCode::AppNotFound,
            Error::StoreUnavailable => ErrorCode::StoreUnavailable,
            Error::SessionElsewhere { .. } => ErrorCode::SessionElsewhere,
            Error::KvConflict { .. } => ErrorCode::KvConflict,
        }
    }

    /// The stable snake_case code.
    pub fn code(&self) -> &'static str {
        self.error_code().as_str()
    }

    /// Whether the same call may succeed if tried again later, unchanged: no slot or compile
    /// budget was free (`capacity_exhausted`), the session was busy (`session_busy`), the
    /// server's shared store did not answer (`store_unavailable`), the session is held by
    /// another replica (`session_elsewhere`: retry there), or Palisade itself failed
    /// (`internal`). Every other code comes from the script, its input
    /// or its policy, and ends the same way again.
    pub fn retryable(&self) -> bool {
        self.error_code().retryable()
    }

    /// The exit code of `palisade run` for this error (table in `docs/errors.md`).
    pub fn exit_code(&self) -> i32 {
        self.error_code().exit_code()
    }

    /// The HTTP status that a server answers with for this error.
    pub fn http_status(&self) -> u16 {
        self.error_code().http_status()
    }

    /// Where this code is documented.
    pub fn docs(&self) -> String {
        format!("docs/errors.md#{}", self.error_code().docs_anchor())
    }

    /// The absolute URL of this code's section: [`docs_base`] plus `#code`.
    pub fn docs_url(&self) -> String {
        format!("{}#{}", docs_base(), self.error_code().docs_anchor())
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
            Error::Timeout { limit } if limit.0 < bounds::TIMEOUT.1 => fix(
                "limits.timeout",
                format!(
                    "\"{}\"",
                    HumanDuration((limit.0 * 2).min(bounds::TIMEOUT.1))
                ),
            ),
            Error::MemoryLimit { limit } if *limit < bounds::MEMORY.1 => fix(
                "limits.memory",
                format!("\"{}\"", ByteSize((limit.0 * 2).min(bounds::MEMORY.1.0))),
            ),
            // Raising `limits.stack` does not help when the shadow stack ran out.
            Error::StackOverflow {
                limit,
                shadow_stack: false,
            } if *limit < bounds::STACK.1 => fix(
                "limits.stack",
                format!("\"{}\"", ByteSize((limit.0 * 2).min(bounds::STACK.1.0))),
            ),
            Error::OutputTooLarge { size, .. } if *size <= bounds::IO.1.0 => fix(
                "limits.output",
                format!(
                    "\"{}\"",
                    ByteSize(size.next_power_of_two().min(bounds::IO.1.0))
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
        map.serialize_entry("docs_url", &self.docs_url())?;
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

/// Whether the guest's error is QuickJS's own stack check, uncaught: the recursion was too
/// deep for the policy's stack (`stack_overflow`, as when a wasm stack runs out).
pub(crate) fn is_stack_exhausted(error: &runner::Error) -> bool {
    matches!(error, runner::Error::Exception(e)
        if e.name == "RangeError" && e.message == "Maximum call stack size exceeded")
}

/// The host error for an error the guest returned.
pub(crate) fn guest_error(error: runner::Error) -> Error {
    let location = |l: Option<runner::Location>| {
        l.map(|l| GuestLocation {
            line: l.line,
            column: l.column,
        })
    };
    match error {
        runner::Error::Syntax(e) => Error::GuestSyntax {
            message: e.message,
            location: location(e.location),
            stack: e.stack,
        },
        runner::Error::Exception(e) => Error::GuestException {
            name: e.name,
            message: e.message,
            stack: e.stack,
            location: location(e.location),
        },
        runner::Error::Deadlock(detail) => Error::GuestDeadlock { detail },
        runner::Error::BadOutput(detail) => Error::BadOutput { detail },
        runner::Error::InvalidInput(detail) => Error::InvalidInput { detail, fix: None },
        runner::Error::MissingExport(detail) => Error::MissingExport { detail },
        runner::Error::NotCompilable(detail) => Error::NotCompilable { detail },
    }
}

#[cfg(test)]
mod tests;
