//! What the embedder registers for a capability: an async handler, the [`CallContext`] it
//! gets, and the wrapper that keeps a panicking handler inside its own call.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// What a capability handler returns: its JSON result, or a message for the script.
pub type CapabilityFuture = Pin<Box<dyn Future<Output = Result<serde_json::Value, String>> + Send>>;

/// A registered handler: it gets the call's context and the payload.
pub(crate) type Handler =
    Arc<dyn Fn(crate::CallContext, serde_json::Value) -> CapabilityFuture + Send + Sync>;

/// Who is calling a capability: handed to a handler registered with
/// [`Builder::capability_with_context`](crate::Builder::capability_with_context), and sent to
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
    type Output = Result<Result<serde_json::Value, String>, String>;

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
