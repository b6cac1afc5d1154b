//! The host side of the guest's world (`wit/`): the `bindgen!` output and the types that stand
//! for its resources. A leaf: every room of the host may import it, and it imports none of
//! them (but for the response budget a pending capability call gives back).

use self::palisade::sandbox::capability::CallError;
use crate::caps::capability::forward::ResponseBudget;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

wasmtime::component::bindgen!({
    world: "sandbox",
    path: "wit",
    imports: {
        "palisade:sandbox/capability": async | trappable,
        "wasi:keyvalue/store": async | trappable,
        "wasi:keyvalue/atomics": async | trappable,
        "palisade:sandbox/kv": async | trappable,
    },
    with: {
        "wasi:io": wasmtime_wasi::p2::bindings::io,
        "wasi:clocks": wasmtime_wasi::p2::bindings::clocks,
        "wasi:random": wasmtime_wasi::p2::bindings::random,
        "wasi:http": wasmtime_wasi_http::p2::bindings::http,
        "palisade:sandbox/capability.pending-call": crate::bindings::PendingCall,
        "wasi:keyvalue/store.bucket": crate::bindings::Bucket,
    },
    exports: { default: async },
});

/// An open key-value bucket (`wasi:keyvalue/store.bucket`): its name and whether the policy
/// lets the script write to it.
pub struct Bucket {
    pub(crate) name: String,
    pub(crate) mode: crate::policy::BucketMode,
}

/// A capability call in flight (`palisade:sandbox/capability.pending-call`): the handler's
/// future, then its result until the guest takes it.
pub struct PendingCall {
    pub(crate) state: Pending,
    /// Set when the handler panicked: taking the result then ends the call as `internal`.
    pub(crate) panicked: Arc<OnceLock<String>>,
    /// For a forwarded call: the budget its response was taken from, given back when the
    /// guest takes the response (or drops the call), since the host no longer holds it then.
    pub(crate) budget: Option<ResponseBudget>,
}

/// A boxed future of a capability's answer.
pub(crate) type Answer = Pin<Box<dyn Future<Output = Result<String, CallError>> + Send>>;

/// Where a pending call stands.
pub(crate) enum Pending {
    Running(Answer),
    Done(Result<String, CallError>),
    Taken,
}

impl Drop for PendingCall {
    fn drop(&mut self) {
        self.release();
    }
}

impl PendingCall {
    /// Give back what a forwarded response took from the call's budget, once the host no
    /// longer holds it.
    pub(crate) fn release(&mut self) {
        if let Pending::Done(Ok(text)) = &self.state
            && let Some(budget) = self.budget.take()
        {
            budget.give_back(text.len() as u64);
        }
    }

    /// A call answered at once (a refusal, a replayed answer).
    pub(crate) fn done(result: Result<String, CallError>) -> Self {
        Self {
            state: Pending::Done(result),
            panicked: Arc::default(),
            budget: None,
        }
    }
}

#[wasmtime_wasi::async_trait]
impl wasmtime_wasi::p2::Pollable for PendingCall {
    async fn ready(&mut self) {
        if let Pending::Running(future) = &mut self.state {
            let result = future.await;
            self.state = Pending::Done(result);
        }
    }
}
