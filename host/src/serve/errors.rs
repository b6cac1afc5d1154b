//! The one way an error leaves the server: `{"error": {code, type, message, docs_url, fix,
//! fix_note, retryable}}` with the HTTP status of the code's row in the error table (docs/errors.md).
//! Internals never reach the caller: an `internal` error is logged with a fresh id, and the
//! caller sees "internal error" and that id.

use crate::{Error, ErrorCode};
use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

pub use crate::error::DEFAULT_DOCS_URL;

/// Set the base of every `docs_url` (once per process; later calls are ignored).
pub fn set_docs_url(base: &str) {
    crate::error::set_docs_base(base);
}

/// The absolute URL of `code`'s section.
pub fn docs_url(code: &str) -> String {
    format!("{}#{code}", crate::error::docs_base())
}

/// An error answered to an HTTP caller (boxed: handlers return it by value).
#[derive(Debug)]
pub struct ApiError(Box<Detail>);

#[derive(Debug)]
struct Detail {
    error: Error,
    status: Option<StatusCode>,
    retry_after: Option<u64>,
    fix: Option<Value>,
    fix_note: Option<String>,
}

impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        ApiError(Box::new(Detail {
            error,
            status: None,
            retry_after: None,
            fix: None,
            fix_note: None,
        }))
    }
}

impl ApiError {
    /// A request the server cannot take as it is (`invalid_input`, 400).
    pub fn invalid(detail: impl Into<String>) -> Self {
        Error::InvalidInput {
            detail: detail.into(),
            fix: None,
        }
        .into()
    }

    /// A capacity refusal: `capacity_exhausted` with `status` and `Retry-After`.
    pub fn capacity(status: StatusCode, waited_ms: u64, retry_after: u64, note: &str) -> Self {
        let mut e = ApiError::from(Error::CapacityExhausted { waited_ms });
        e.0.status = Some(status);
        e.0.retry_after = Some(retry_after);
        e.0.fix_note = Some(note.to_owned());
        e
    }

    /// Answer with `status` instead of the code's.
    pub fn with_status(mut self, status: StatusCode) -> Self {
        self.0.status = Some(status);
        self
    }

    /// Say how to recover when there is no mechanical `fix`.
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.0.fix_note = Some(note.into());
        self
    }

    /// A JSON object to merge into the request.
    pub fn fix(mut self, fix: Value) -> Self {
        self.0.fix = Some(fix);
        self
    }

    /// The error.
    pub fn error(&self) -> &Error {
        &self.0.error
    }

    /// The error's code.
    pub fn code(&self) -> &'static str {
        self.0.error.code()
    }

    /// The HTTP status of this answer.
    pub fn status(&self) -> StatusCode {
        self.0.status.unwrap_or_else(|| status_of(&self.0.error))
    }

    /// The body `{"error": {…}}`.
    pub fn body(&self) -> Value {
        let mut message = self.0.error.to_string();
        let mut error_id = None;
        if let Error::Internal { detail } = &self.0.error {
            let id = super::reply::new_id();
            tracing::error!(error_id = %id, "internal error: {detail}");
            message = "internal error".to_owned();
            error_id = Some(id);
        }
        let fix = match (&self.0.fix, self.0.error.fix()) {
            (Some(fix), _) => fix.clone(),
            (None, Some(policy)) => json!({"policy": {policy.key: policy.value}}),
            (None, None) => Value::Null,
        };
        let fix_note = match (&self.0.fix_note, &self.0.error) {
            (Some(note), _) => Some(note.clone()),
            (None, Error::PolicyNotFound { catalog, .. }) => Some(format!(
                "use one of the policies in your catalog (GET /v1/policies): {}",
                if catalog.is_empty() {
                    "none; ask the operator to list policies for your key".to_owned()
                } else {
                    catalog.join(", ")
                }
            )),
            (None, _) if fix.is_null() => Some(default_note(self.0.error.error_code()).to_owned()),
            (None, _) => self
                .0
                .error
                .fix()
                .map(|f| format!("the policy change that would allow it: {f}")),
        };
        let mut body = json!({
            "code": self.0.error.code(),
            "type": class(self.0.error.error_code()),
            "message": message,
            "docs_url": docs_url(self.0.error.code()),
            "fix": fix,
            "fix_note": fix_note,
            "retryable": self.0.error.retryable(),
        });
        if let Some(id) = error_id {
            body["error_id"] = Value::String(id);
        }
        if let Error::GuestSyntax {
            location: Some(l), ..
        }
        | Error::GuestException {
            location: Some(l), ..
        } = &self.0.error
        {
            body["location"] = json!({"line": l.line, "column": l.column});
        }
        json!({ "error": body })
    }
}

/// The HTTP status of `error`'s code, from the error table.
pub fn status_of(error: &Error) -> StatusCode {
    StatusCode::from_u16(error.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

/// The class of `code`, the error body's `type`: who must act. `client` (the request is
/// wrong: correct it), `auth` (the key), `policy` (the policy does not grant it: change the
/// policy or the script), `limit` (a limit of the call or the server: retry later, or raise
/// it), `script` (the script failed: fix the script), `server` (Palisade's own fault: retry).
pub fn class(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::Unauthorized => "auth",
        ErrorCode::PolicyDenied | ErrorCode::InvalidPolicy | ErrorCode::PolicyNotFound => "policy",
        ErrorCode::FuelExhausted
        | ErrorCode::Timeout
        | ErrorCode::MemoryLimit
        | ErrorCode::StackOverflow
        | ErrorCode::OutputTooLarge
        | ErrorCode::CapacityExhausted
        | ErrorCode::SessionBusy
        | ErrorCode::KvConflict => "limit",
        ErrorCode::GuestException
        | ErrorCode::GuestSyntax
        | ErrorCode::GuestDeadlock
        | ErrorCode::MissingExport
        | ErrorCode::BadOutput
        | ErrorCode::NotCompilable
        | ErrorCode::GuestTrap => "script",
        ErrorCode::Internal => "server",
        _ => "client",
    }
}

/// How to recover from `code` when there is no mechanical `fix`.
pub fn default_note(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::Unauthorized => "send `Authorization: Bearer KEY` with a key from the operator",
        ErrorCode::SessionNotFound => "create a session (POST /v1/sessions) and use its session_id",
        ErrorCode::SessionBusy => {
            "one call runs at a time per session: retry when the running call has ended"
        }
        ErrorCode::IdempotencyConflict => "use a fresh Idempotency-Key for a different request",
        ErrorCode::KvConflict => {
            "another writer changed what the call read; nothing of it was kept: run it again"
        }
        ErrorCode::FileNotFound => "check the path with fs/ls; create parents with `parents: true`",
        ErrorCode::FileConflict => "pick another path, or remove what is there first",
        ErrorCode::AppNotFound => "load the app first (POST /v1/apps); GET /v1/apps lists yours",
        ErrorCode::CapacityExhausted => "retry after the number of seconds in Retry-After",
        ErrorCode::Internal => "retry; if it persists, report the error_id to the operator",
        ErrorCode::GuestException
        | ErrorCode::GuestSyntax
        | ErrorCode::GuestDeadlock
        | ErrorCode::MissingExport
        | ErrorCode::BadOutput => {
            "the script itself failed: fix it (message, stack and location say where); the same \
             call fails the same way again"
        }
        ErrorCode::PolicyDenied => "the policy does not grant this; see docs_url",
        ErrorCode::InvalidInput => "correct the request as the message says",
        _ => "see docs_url",
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let mut response = (status, Json(self.body())).into_response();
        if let Some(seconds) = self.0.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}
