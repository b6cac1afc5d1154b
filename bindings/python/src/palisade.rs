//! `NativePalisade`: a `palisade::Palisade` whose capability handlers are answered in Python.
//! `run` waits for its call with the GIL released and hands its events to the caller's thread;
//! `start` reports to a [`Mailbox`] the asyncio wrapper's loop reads.

use crate::errors::refused;
use crate::handles::{NativePolicy, NativeScript};
use crate::mailbox::Mailbox;
use palisade::CapabilityError;
use palisade_bindings::{Call, Done, Handler, OnEvent, Start, answer, context_json};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a report carries: an event, the outcome, or the caller's mistake.
const EVENT: u32 = 0;
const OUTCOME: u32 = 1;
const USAGE: u32 = 2;

/// How often a waiting `run` looks for a signal (Ctrl-C cancels its call).
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// A Palisade for Python.
#[pyclass(frozen)]
pub struct NativePalisade {
    palisade: palisade::Palisade,
}

#[pymethods]
impl NativePalisade {
    /// Build a Palisade with `settings` (JSON) and the capabilities `names`, each answered by
    /// `invoke(payload_json, context_json, answer)`.
    #[new]
    fn new(settings: &str, names: Vec<String>, invoke: Py<PyAny>) -> PyResult<Self> {
        let invoke = Arc::new(invoke);
        let palisade = palisade_bindings::build_with(settings, names, |_| handler(invoke.clone()))
            .map_err(refused)?;
        Ok(Self { palisade })
    }

    /// Run a call and wait for its outcome (JSON) with the GIL released; `on_event` gets each
    /// event (JSON) on this thread as it comes. Ctrl-C cancels the call.
    #[pyo3(signature = (request, policy, script, on_event))]
    fn run(
        &self,
        py: Python<'_>,
        request: String,
        policy: Option<&NativePolicy>,
        script: Option<&NativeScript>,
        on_event: Option<Py<PyAny>>,
    ) -> PyResult<String> {
        let (sender, reports) = std::sync::mpsc::channel::<(u32, String)>();
        let events = on_event.is_some().then(|| {
            let sender = sender.clone();
            Arc::new(move |json: String| {
                let _ = sender.send((EVENT, json));
            }) as OnEvent
        });
        let done: Done = Box::new(move |result| {
            let _ = sender.send(report(result));
        });
        let call =
            palisade_bindings::start(&self.palisade, start(request, policy, script, events), done);
        wait(py, &call, &Mutex::new(reports), on_event.as_ref())
    }

    /// Start a call reporting to `mailbox` as `id`: its events (with `events`), then its
    /// outcome. The runtime's threads only queue them: the loop's thread takes them.
    #[pyo3(signature = (request, policy, script, events, mailbox, id))]
    fn start(
        &self,
        request: String,
        policy: Option<&NativePolicy>,
        script: Option<&NativeScript>,
        events: bool,
        mailbox: &Mailbox,
        id: u64,
    ) -> NativeCall {
        let queue = mailbox.queue();
        let on_event = events.then(|| {
            let queue = queue.clone();
            Arc::new(move |json: String| queue.post((id, EVENT, json))) as OnEvent
        });
        let done: Done = Box::new(move |result| {
            let (kind, text) = report(result);
            queue.post((id, kind, text));
        });
        let call = palisade_bindings::start(
            &self.palisade,
            start(request, policy, script, on_event),
            done,
        );
        NativeCall { call }
    }
}

fn start(
    request: String,
    policy: Option<&NativePolicy>,
    script: Option<&NativeScript>,
    on_event: Option<OnEvent>,
) -> Start {
    Start {
        request,
        policy: policy.map(|p| p.inner.clone()),
        script: script.map(|s| s.inner.clone()),
        on_event,
    }
}

fn report(result: Result<String, String>) -> (u32, String) {
    match result {
        Ok(outcome) => (OUTCOME, outcome),
        Err(message) => (USAGE, message),
    }
}

/// Wait for the call's reports with the GIL released, handing each event to `on_event` on this
/// thread; a signal's exception (KeyboardInterrupt) cancels the call and is raised.
fn wait(
    py: Python<'_>,
    call: &Call,
    reports: &Mutex<Receiver<(u32, String)>>,
    on_event: Option<&Py<PyAny>>,
) -> PyResult<String> {
    loop {
        let report = py.detach(|| {
            let reports = reports.lock().expect("never poisoned");
            reports.recv_timeout(SIGNAL_CHECK)
        });
        match report {
            Ok((EVENT, json)) => {
                if let Some(callback) = on_event
                    && let Err(error) = callback.call1(py, (json,))
                {
                    // A failing callback misses its event; the call goes on.
                    error.write_unraisable(py, None);
                }
            }
            Ok((OUTCOME, json)) => return Ok(json),
            Ok((_, message)) => return Err(PyTypeError::new_err(message)),
            Err(RecvTimeoutError::Timeout) => {
                if let Err(interrupt) = py.check_signals() {
                    call.cancel();
                    return Err(interrupt);
                }
            }
            Err(RecvTimeoutError::Disconnected) => unreachable!("a call reports its end"),
        }
    }
}

/// The handler of one capability: hand the call to `invoke` on a blocking thread (it may run a
/// sync handler there, or schedule a coroutine and return), then await its answer. An
/// `invoke` that raises, or drops its answer, is the handler's failure.
fn handler(invoke: Arc<Py<PyAny>>) -> Handler {
    Box::new(move |context, payload| {
        let invoke = invoke.clone();
        let (payload, context) = (payload.to_string(), context_json(&context));
        Box::pin(async move {
            let (sender, answered) = tokio::sync::oneshot::channel();
            let slot = Answer(Mutex::new(Some(sender)));
            let invoked = tokio::task::spawn_blocking(move || {
                Python::attach(|py| invoke.call1(py, (payload, context, slot)).map(drop))
            })
            .await;
            match invoked {
                Ok(Ok(())) => {}
                Ok(Err(error)) => return Err(CapabilityError::from(error.to_string())),
                Err(join) => return Err(CapabilityError::from(join.to_string())),
            }
            let text = answered
                .await
                .map_err(|_| CapabilityError::from("the handler never answered"))?;
            answer(&text)
        })
    })
}

/// The callable a handler's answer (JSON) is given to, once.
#[pyclass(frozen)]
struct Answer(Mutex<Option<tokio::sync::oneshot::Sender<String>>>);

#[pymethods]
impl Answer {
    fn __call__(&self, text: String) {
        let sender = self.0.lock().expect("never poisoned").take();
        if let Some(sender) = sender {
            let _ = sender.send(text);
        }
    }
}

/// A running call.
#[pyclass(frozen)]
pub struct NativeCall {
    call: Call,
}

#[pymethods]
impl NativeCall {
    /// End the call at once as `cancelled` (nothing, once it has ended).
    fn cancel(&self) {
        self.call.cancel();
    }
}
