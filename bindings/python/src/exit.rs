//! The interpreter's exit. Once Python has begun to finalize, a thread that takes the GIL again
//! is ended by the interpreter where it stands (`pthread_exit`), and ending one that has
//! native frames under it (a sync capability handler's thread, a `run` whose call returns)
//! kills the process. So at exit (an `atexit` function, `_at_exit`, which Python runs while
//! every thread may still take the GIL) no new `run` or handler starts, the calls still in
//! `run` (a daemon thread's) are cancelled, and exit waits until every thread that will take
//! the GIL again has taken it and let it go: a sync handler still running is waited for, as
//! Python waits for a thread that is not a daemon. Ctrl-C during that wait ends the process. And
//! the other end of a process's life, as this binding sees it: a child made by `fork`
//! (`_forked`).

use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::Notify;

/// How often the wait at exit looks whether the threads inside have left, and for a signal.
const LOOK_AGAIN: Duration = Duration::from_millis(5);

/// How many threads are inside (in `run`, in a handler, reading a script), and whether exit has
/// begun. Atomics, not a lock: a child made by `fork` while another thread held a lock would
/// find it held for ever. A thread enters by counting itself and then reading `exiting`, and exit
/// begins by setting `exiting` and then reading the count (both sequentially consistent): one of
/// the two sees the other.
struct Gate {
    inside: AtomicUsize,
    exiting: AtomicBool,
    exited: Notify,
}

static GATE: Gate = Gate {
    inside: AtomicUsize::new(0),
    exiting: AtomicBool::new(false),
    exited: Notify::const_new(),
};

/// A thread inside the gate; it leaves when this is dropped (once it holds the GIL again, or
/// will not take it again).
pub struct Pass(());

impl Drop for Pass {
    fn drop(&mut self) {
        // A thread that forked while inside leaves in the child too, where the count began
        // again at 0 (`_forked`).
        let _ = GATE
            .inside
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
    }
}

/// A pass for a `run`, a handler or a script's read, or None once exit has begun.
pub fn enter() -> Option<Pass> {
    GATE.inside.fetch_add(1, Ordering::SeqCst);
    let pass = Pass(());
    if GATE.exiting.load(Ordering::SeqCst) {
        return None;
    }
    Some(pass)
}

/// Whether exit has begun.
pub fn is_exiting() -> bool {
    GATE.exiting.load(Ordering::SeqCst)
}

/// Ready once exit has begun: a `run` then cancels its call.
pub async fn exiting() {
    loop {
        let exited = GATE.exited.notified();
        let mut exited = std::pin::pin!(exited);
        exited.as_mut().enable();
        if is_exiting() {
            return;
        }
        exited.await;
    }
}

/// Begin exit (`atexit` calls it, `_palisade.py`): refuse new calls and handlers, cancel the
/// calls in `run`, and wait, with the GIL released, for every thread inside to leave. An
/// exception a signal handler raises during that wait (Ctrl-C's `KeyboardInterrupt`, a
/// handler's `sys.exit`) ends the process at once, after flushing `sys.stdout` and
/// `sys.stderr` ([`end_now`]): raised out of an `atexit` function, it would only be printed, and
/// Python would finalize with a handler still running.
#[pyfunction]
pub fn _at_exit(py: Python<'_>) {
    GATE.exiting.store(true, Ordering::SeqCst);
    GATE.exited.notify_waiters();
    while GATE.inside.load(Ordering::SeqCst) > 0 {
        py.detach(|| std::thread::sleep(LOOK_AGAIN));
        if let Err(signal) = py.check_signals() {
            end_now(py, &signal);
        }
    }
}

/// End the process for `signal`, an exception a signal handler raised during the wait at exit,
/// with the status Python gives it: 130 for `KeyboardInterrupt` (a shell's for Ctrl-C); a
/// `SystemExit`'s code (0 for None, an integer as C's `exit` takes it, and 1 for anything else,
/// which is written to `sys.stderr` as Python writes it); else 1, after its traceback. Never
/// `PyErr::print` on a `SystemExit`: Python would then exit through its own finalization,
/// which waits at exit again.
fn end_now(py: Python<'_>, signal: &PyErr) -> ! {
    let status = if signal.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) {
        128 + 2
    } else if signal.is_instance_of::<pyo3::exceptions::PySystemExit>(py) {
        match signal.value(py).getattr("code") {
            Ok(code) if code.is_none() => 0,
            Ok(code) if code.is_instance_of::<pyo3::types::PyInt>() => {
                // As C's `exit` takes Python's `long`: its low bits, and -1 past its range.
                code.extract::<i64>().map_or(-1, |n| n as i32)
            }
            Ok(code) => {
                let text = code.str().map(|s| s.to_string()).unwrap_or_default();
                let _ = py
                    .import("sys")
                    .and_then(|sys| sys.getattr("stderr"))
                    .and_then(|err| err.call_method1("write", (format!("{text}\n"),)));
                1
            }
            Err(_) => 1,
        }
    } else {
        signal.print(py);
        1
    };
    if let Ok(sys) = py.import("sys") {
        for stream in ["stdout", "stderr"] {
            let _ = sys.getattr(stream).and_then(|s| s.call_method0("flush"));
        }
    }
    std::process::exit(status)
}

/// Before `fork` (`os.register_at_fork`, `_palisade.py`): the bindings' own locks are taken, so
/// that no other thread holds one in the child.
#[pyfunction]
pub fn _before_fork() {
    palisade_bindings::before_fork();
}

/// After `fork`, in the parent: the locks `_before_fork` took are let go.
#[pyfunction]
pub fn _after_fork_in_parent() {
    palisade_bindings::after_fork_in_parent();
}

/// This process is a child `fork` has just made: its calls run on a runtime of its own, a
/// Palisade built before the fork is refused, and no thread is inside (the others stayed with
/// the parent).
#[pyfunction]
pub fn _forked() {
    GATE.inside.store(0, Ordering::SeqCst);
    palisade_bindings::forked();
}
