//! `Mailbox`: where the calls an asyncio loop started report, without the runtime's threads
//! ever taking the GIL. A finished call's outcome (and each event) is queued here, and a byte
//! on a pipe wakes the loop (`loop.add_reader(mailbox.fileno(), …)`) for each batch of reports
//! ([`palisade_bindings::Reports`]: at once while few calls run); the loop's thread then takes
//! every queued report at once with `drain`.
//!
//! Calling into Python from a runtime thread would make that thread wait for the GIL (up to
//! Python's switch interval while the loop's thread holds it), and with it every call queued on
//! the thread.

use crate::outcome::NativeOutcome;
use pyo3::IntoPyObjectExt;
use pyo3::prelude::*;
use std::io::{PipeReader, Read, Write};
use std::os::fd::AsRawFd;
use std::sync::Arc;

/// One report: the call's id (the caller's) and what it carries.
pub type Report = (u64, Carried);

/// What a report carries: an event (JSON), the call's outcome, or the caller's mistake (a
/// message).
pub enum Carried {
    Event(String),
    Outcome(Box<palisade::Outcome>),
    Usage(String),
}

/// The kinds of report `drain` gives Python (`_palisade.py` reads them).
const EVENT: u32 = 0;
const OUTCOME: u32 = 1;
const USAGE: u32 = 2;

/// The queue both sides share: the runtime's threads queue reports, and a byte on the pipe
/// wakes the loop for each batch ([`palisade_bindings::Reports`]). One byte per batch, and the
/// loop reads every byte before it takes the batch: the pipe never fills. A loop that is gone
/// takes no more reports.
pub type Queue = palisade_bindings::Reports<Vec<Report>>;

/// The most reports a drained batch may have room for to be handed back for a later one
/// ([`palisade_bindings::Reports::recycle`]): the runtime's threads then write a steady
/// stream of reports without growing a vector this thread frees.
const RECYCLED_UP_TO: usize = 4096;

/// The reports of the calls one event loop started.
#[pyclass(frozen)]
pub struct Mailbox {
    queue: Arc<Queue>,
    woken: PipeReader,
}

impl Mailbox {
    pub fn queue(&self) -> Arc<Queue> {
        self.queue.clone()
    }
}

#[pymethods]
impl Mailbox {
    #[new]
    fn new() -> PyResult<Self> {
        let (woken, wake) = std::io::pipe()?;
        let queue = Queue::new(move |_| {
            let _ = (&wake).write(&[1]);
        });
        Ok(Self { queue, woken })
    }

    /// The pipe's end the loop watches (the caller makes it non-blocking).
    fn fileno(&self) -> i32 {
        self.woken.as_raw_fd()
    }

    /// Every queued report, oldest first, after taking the wake-up bytes: `(id, kind, value)`,
    /// the value an event's JSON, an `Outcome`, or the caller's mistake.
    fn drain(&self, py: Python<'_>) -> PyResult<Vec<(u64, u32, Py<PyAny>)>> {
        let mut bytes = [0u8; 256];
        // Non-blocking: nothing to read is WouldBlock, which changes nothing here.
        while let Ok(n @ 1..) = (&self.woken).read(&mut bytes) {
            if n < bytes.len() {
                break;
            }
        }
        let mut batch = self.queue.take();
        let reports = batch
            .drain(..)
            .map(|(id, carried)| {
                let (kind, value) = match carried {
                    Carried::Event(json) => (EVENT, json.into_py_any(py)?),
                    Carried::Outcome(outcome) => {
                        (OUTCOME, NativeOutcome::new(*outcome).into_py_any(py)?)
                    }
                    Carried::Usage(message) => (USAGE, message.into_py_any(py)?),
                };
                Ok((id, kind, value))
            })
            .collect();
        if batch.capacity() <= RECYCLED_UP_TO {
            self.queue.recycle(batch);
        }
        reports
    }
}
