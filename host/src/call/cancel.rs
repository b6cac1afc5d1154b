//! A call's cancel flag, which its store checks and the public `Canceller` sets.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A call's cancel flag. The call checks it each time the guest yields to the host (every fuel
/// slice, or epoch tick without fuel metering) and whenever it is woken while waiting on the
/// host, so a cancelled call ends at the next of those.
#[derive(Clone, Default)]
pub(crate) struct Cancel(Arc<CancelState>);

#[derive(Default)]
struct CancelState {
    flag: AtomicBool,
    notify: tokio::sync::Notify,
}

impl Cancel {
    pub fn cancel(&self) {
        self.0.flag.store(true, Ordering::SeqCst);
        self.0.notify.notify_waiters();
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.flag.load(Ordering::SeqCst)
    }

    /// Ready once the call is cancelled.
    pub async fn cancelled(&self) {
        loop {
            let notified = self.0.notify.notified();
            let mut notified = std::pin::pin!(notified);
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}
