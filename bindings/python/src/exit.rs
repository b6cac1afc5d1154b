//! The interpreter's exit. Once Python has begun to finalize, a thread that takes the GIL again
//! is ended by the interpreter where it stands (`pthread_exit`), and ending one that has
//! native frames under it (a sync capability handler's thread, a `run` whose call returns)
//! kills the process. So at exit (an `atexit` function, `_at_exit`, which Python runs while
//! every thread may still take the GIL) no new `run` or handler starts, the calls still in
//! `run` (a daemon thread's) are cancelled, and exit waits until every thread that will take
//! the GIL again has taken it and let it go: a sync handler still running is waited for, as
//! Python waits for a thread that is not a daemon. Ctrl-C stops that wait. And the other end of
//! a process's life, as this binding sees it: a child made by `fork` (`_forked`).

use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::Notify;

/// How often the wait at exit looks for a signal.
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// How many threads are inside (in `run`, or in a handler), and whether exit has begun.
struct Gate {
    inside: Mutex<usize>,
    left: Condvar,
    exiting: AtomicBool,
    exited: Notify,
}

static GATE: Gate = Gate {
    inside: Mutex::new(0),
    left: Condvar::new(),
    exiting: AtomicBool::new(false),
    exited: Notify::const_new(),
};

fn inside() -> MutexGuard<'static, usize> {
    GATE.inside.lock().unwrap_or_else(|e| e.into_inner())
}

/// A thread inside the gate; it leaves when this is dropped (once it holds the GIL again, or
/// will not take it again).
pub struct Pass(());

impl Drop for Pass {
    fn drop(&mut self) {
        let mut inside = inside();
        *inside -= 1;
        if *inside == 0 {
            GATE.left.notify_all();
        }
    }
}

/// A pass for a `run` or a handler, or None once exit has begun.
pub fn enter() -> Option<Pass> {
    let mut inside = inside();
    if GATE.exiting.load(Ordering::SeqCst) {
        return None;
    }
    *inside += 1;
    Some(Pass(()))
}

/// Ready once exit has begun: a `run` then cancels its call.
pub async fn exiting() {
    loop {
        let exited = GATE.exited.notified();
        let mut exited = std::pin::pin!(exited);
        exited.as_mut().enable();
        if GATE.exiting.load(Ordering::SeqCst) {
            return;
        }
        exited.await;
    }
}

/// Begin exit (`atexit` calls it, `_palisade.py`): refuse new calls and handlers, cancel the
/// calls in `run`, and wait, with the GIL released, for every thread inside to leave. Ctrl-C
/// (or any signal's exception) ends the wait and is raised.
#[pyfunction]
pub fn _at_exit(py: Python<'_>) -> PyResult<()> {
    {
        let _inside = inside();
        GATE.exiting.store(true, Ordering::SeqCst);
    }
    GATE.exited.notify_waiters();
    loop {
        let left = py.detach(|| {
            let (inside, _) = GATE
                .left
                .wait_timeout_while(inside(), SIGNAL_CHECK, |inside| *inside > 0)
                .unwrap_or_else(|e| e.into_inner());
            *inside == 0
        });
        if left {
            return Ok(());
        }
        py.check_signals()?;
    }
}

/// This process is a child `fork` has just made (`os.register_at_fork`, `_palisade.py`): its
/// calls run on a runtime of its own, and a Palisade built before the fork is refused.
#[pyfunction]
pub fn _forked() {
    palisade_bindings::forked();
}
