//! What the embedder registers for a capability: an async handler, the [`CallContext`] it
//! gets, and the wrapper that keeps a panicking handler inside its own call.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// What a capability handler returns: its JSON result, or the error the script catches.
pub type CapabilityFuture =
    Pin<Box<dyn Future<Output = Result<serde_json::Value, CapabilityError>> + Send>>;

/// The longest `code` a handler may choose, in bytes.
const CODE_MAX: usize = 64;
/// The longest `message` the script gets, in bytes: a handler's (or a `forward` URL's) text is
/// cut there, so that an error cannot flood the guest's memory.
const MESSAGE_MAX: usize = 4096;

/// A failure a capability handler reports, which the script catches as a `CapabilityError` with
/// the same `code`, `message` and `retryable`. A `forward` URL reports one by answering with a
/// non-2xx status and the JSON body `{"code": …, "message": …, "retryable": …}` (or that object
/// under `"error"`). A handler registered with [`Builder::capability`](crate::Builder::capability)
/// returns a bare message instead, which arrives as `code: "handler_error"`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CapabilityError {
    /// A snake_case code the handler chose (`[a-z0-9_]`, at most 64 bytes; any other becomes
    /// `handler_error`).
    pub code: String,
    /// What failed, for people (cut at 4 KiB).
    pub message: String,
    /// Whether the same call may succeed if made again.
    #[serde(default)]
    pub retryable: bool,
}

impl CapabilityError {
    /// A failure with `code` and `message` that is not worth retrying.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
            retryable: false,
        }
    }

    /// Mark the failure as one that may pass if the call is made again.
    pub fn retryable(mut self) -> Self {
        self.retryable = true;
        self
    }

    /// The failure as the script gets it: a valid code and a bounded message.
    pub(crate) fn checked(mut self) -> Self {
        let valid = !self.code.is_empty()
            && self.code.len() <= CODE_MAX
            && self
                .code
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !valid {
            self.code = HANDLER_ERROR.to_owned();
        }
        if self.message.len() > MESSAGE_MAX {
            let mut end = MESSAGE_MAX;
            while !self.message.is_char_boundary(end) {
                end -= 1;
            }
            self.message.truncate(end);
        }
        self
    }
}

/// The code of a failure given as a bare message.
pub(crate) const HANDLER_ERROR: &str = "handler_error";

impl From<String> for CapabilityError {
    fn from(message: String) -> Self {
        Self::new(HANDLER_ERROR, message)
    }
}

impl From<&str> for CapabilityError {
    fn from(message: &str) -> Self {
        Self::new(HANDLER_ERROR, message)
    }
}

impl std::fmt::Display for CapabilityError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for CapabilityError {}

/// A registered handler: it gets the call's context and the payload.
pub(crate) type Handler =
    Arc<dyn Fn(crate::CallContext, serde_json::Value) -> CapabilityFuture + Send + Sync>;

/// Who is calling a capability: handed to a handler registered with
/// [`Builder::capability_with_context`](crate::Builder::capability_with_context) or
/// [`Builder::typed_capability`](crate::Builder::typed_capability), and sent to
/// a `forward` URL as `palisade-call-id`, `palisade-capability`, `palisade-policy`,
/// `palisade-policy-sha256` and `palisade-metadata` headers.
#[derive(Debug, Clone, Default)]
pub struct CallContext {
    /// A fresh id for each call (16 hex digits), also in the call's log span.
    pub call_id: String,
    /// The capability being called.
    pub capability: String,
    /// The name of the policy that governs the call.
    pub policy: String,
    /// The SHA-256 of that policy's text.
    pub policy_sha256: String,
    /// What the embedder attached to the call ([`RunOptions::metadata`](crate::RunOptions)):
    /// an actor id, a tenant, a session.
    pub metadata: Option<Arc<serde_json::Value>>,
    /// Whether the payload is the list of the call's arguments (`maia.render(id, view)`, a
    /// call with several), rather than its one argument (`maia.do(x)`); sent to `forward`
    /// URLs as `palisade-arguments: list`.
    pub argument_list: bool,
}

/// Polls a handler's future and turns a panic into an error: a handler that panics ends its
/// own call (as `internal`), never the host.
pub(crate) struct CatchPanic(pub(crate) CapabilityFuture);

impl Future for CatchPanic {
    type Output = Result<Result<serde_json::Value, CapabilityError>, String>;

    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let inner = &mut self.0;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| inner.as_mut().poll(cx))) {
            Ok(poll) => poll.map(Ok),
            Err(panic) => std::task::Poll::Ready(Err(panic_message(&*panic))),
        }
    }
}

pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_reaches_the_script_with_a_valid_code_and_a_bounded_message() {
        let error = CapabilityError::new("not_found", "no such actor").retryable();
        assert_eq!(error.clone().checked(), error);
        for code in ["", "Not A Code", "ü", &"x".repeat(CODE_MAX + 1)] {
            assert_eq!(
                CapabilityError::new(code, "m").checked().code,
                HANDLER_ERROR
            );
        }
        let long = CapabilityError::from("é".repeat(MESSAGE_MAX)).checked();
        assert!(long.message.len() <= MESSAGE_MAX && long.message.starts_with('é'));
        assert_eq!(CapabilityError::from("down").code, HANDLER_ERROR);
    }
}
