//! What an embedder gets while a call runs: its console lines and audit records as they are
//! made ([`Event`], through [`RunOptions::on_event`](crate::RunOptions::on_event)), and a
//! handle that cancels it ([`CallHandle`], from [`Palisade::start`](crate::Palisade::start)).

use crate::call::Cancel;
use crate::{AuditRecord, LogLine, Outcome};
use std::sync::Arc;

/// Something a call did, delivered while it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// A console line the script wrote (as kept under `limits.console`).
    Console(LogLine),
    /// A gated decision, as the outcome's audit records hold it.
    Audit(AuditRecord),
}

/// The embedder's callback for a call's [`Event`]s. It runs on the call's task, inside the
/// call: it should return quickly (send to a channel, print a line). A callback that panics
/// misses that event; the call goes on.
#[derive(Clone)]
pub struct EventSink(pub(crate) Arc<dyn Fn(Event) + Send + Sync>);

impl EventSink {
    /// Deliver `event`, keeping a panic of the callback out of the call.
    pub(crate) fn send(&self, event: Event) {
        let sink = &self.0;
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sink(event)));
    }
}

impl std::fmt::Debug for EventSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EventSink")
    }
}

/// Cancels one call; cheap to clone and send to another task. From
/// [`CallHandle::canceller`], or made first and given to the call
/// ([`RunOptions::canceller`](crate::RunOptions::canceller)).
#[derive(Clone, Default)]
pub struct Canceller(pub(crate) Cancel);

impl Canceller {
    /// A canceller for a call not started yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// End the call at once as `cancelled`: the guest stops at its next yield to the host, its
    /// store (memory, pending host calls, responses in flight, scratch directory) is dropped
    /// and its admission slot freed. Cancelling a call that has ended does nothing.
    pub fn cancel(&self) {
        self.0.cancel();
    }

    /// Ready once [`Canceller::cancel`] has been called (at once if it has been): for work an
    /// embedder does for the call before starting it, such as reading its script.
    pub async fn cancelled(&self) {
        self.0.cancelled().await;
    }
}

impl std::fmt::Debug for Canceller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Canceller")
            .field("cancelled", &self.0.is_cancelled())
            .finish()
    }
}

/// A call running on its own task ([`Palisade::start`](crate::Palisade::start)). Dropping the
/// handle before the call ends cancels it.
pub struct CallHandle {
    pub(crate) cancel: Cancel,
    pub(crate) task: Option<tokio::task::JoinHandle<Outcome>>,
    /// For the outcome of a task that failed.
    pub(crate) policy: crate::Policy,
}

impl CallHandle {
    /// End the call at once as `cancelled` (see [`Canceller::cancel`]).
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// A [`Canceller`] for another task (a request that went away, an operator's stop).
    pub fn canceller(&self) -> Canceller {
        Canceller(self.cancel.clone())
    }

    /// Wait for the call's outcome.
    pub async fn outcome(mut self) -> Outcome {
        let task = self.task.take().expect("the task is taken only here");
        match task.await {
            Ok(outcome) => outcome,
            Err(e) => {
                let error = crate::Error::Internal {
                    detail: format!("the call's task failed: {e}"),
                };
                Outcome::failed(error, &self.policy, std::time::Instant::now())
            }
        }
    }
}

impl Drop for CallHandle {
    fn drop(&mut self) {
        if self.task.is_some() {
            self.cancel.cancel();
        }
    }
}

impl std::fmt::Debug for CallHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallHandle")
            .field("cancelled", &self.cancel.is_cancelled())
            .finish()
    }
}
