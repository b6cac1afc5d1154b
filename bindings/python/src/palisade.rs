//! `NativePalisade`: a `palisade::Palisade` whose capability handlers are answered in Python.
//! `run` runs its call on the caller's thread with the GIL released, handing its events to that
//! thread; `_start` reports to a [`Mailbox`] the asyncio wrapper's loop reads.

use crate::errors::refused;
use crate::mailbox::{Carried, Mailbox};
use crate::outcome::{NativeOutcome, loads};
use palisade::CapabilityError;
use palisade_bindings::{Call, Done, Handler, OnEvent, answer, context_json, run_here};
use pyo3::exceptions::{PyException, PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple};
use std::convert::Infallible;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::MissedTickBehavior;

/// How often a waiting `run` looks for a signal (Ctrl-C cancels its call).
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// A Palisade for Python: `palisade.Palisade` extends it (`_palisade.py`), and builds it in its
/// `__init__` (`_build`), so that a subclass of its own may take other arguments.
#[pyclass(frozen, subclass)]
pub struct NativePalisade {
    /// The Palisade, and the process's forks when it was built ([`palisade_bindings::forks`]).
    palisade: OnceLock<(palisade::Palisade, usize)>,
}

impl NativePalisade {
    fn built(&self) -> PyResult<&palisade::Palisade> {
        let (palisade, built_after) = self.palisade.get().ok_or_else(|| {
            PyTypeError::new_err("this Palisade was not built: its __init__ did not run")
        })?;
        // Its threads (the deadline's ticker, the calls it was running) stayed in the parent.
        if *built_after != palisade_bindings::forks() {
            return Err(PyRuntimeError::new_err(
                "this Palisade was built before os.fork(): build one in this process",
            ));
        }
        Ok(palisade)
    }
}

#[pymethods]
impl NativePalisade {
    /// An empty Palisade, whatever the arguments: `__init__` builds it.
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> Self {
        Self {
            palisade: OnceLock::new(),
        }
    }

    /// Build the Palisade with `settings` (JSON) and the capabilities `names`, each answered by
    /// `invoke(payload_json, context_json, answer)`; once.
    fn _build(&self, settings: &str, names: Vec<String>, invoke: Py<PyAny>) -> PyResult<()> {
        let invoke = Arc::new(invoke);
        let palisade = palisade_bindings::build_with(settings, names, |_| handler(invoke.clone()))
            .map_err(refused)?;
        self.palisade
            .set((palisade, palisade_bindings::forks()))
            .map_err(|_| PyTypeError::new_err("this Palisade is built already"))
    }

    /// Run a script in a fresh sandbox on this thread, with the GIL released while it runs,
    /// and return its Outcome (a failed call is an Outcome with `ok` False, not an
    /// exception). `on_event` gets each console line and audit record on this thread as they
    /// come. Ctrl-C cancels the call, and is raised once it has ended. Raises TypeError for a
    /// malformed request.
    #[pyo3(signature = (*, on_event=None, **request))]
    fn run(
        &self,
        py: Python<'_>,
        on_event: Option<Py<PyAny>>,
        request: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<NativeOutcome> {
        let (mut events, forward) = match on_event {
            Some(_) => {
                let (sender, events) = tokio::sync::mpsc::unbounded_channel::<String>();
                let forward = Arc::new(move |json: String| {
                    let _ = sender.send(json);
                }) as OnEvent;
                (Some(events), Some(forward))
            }
            None => (None, None),
        };
        let palisade = self.built()?;
        let Some(_pass) = crate::exit::enter() else {
            return Err(PyRuntimeError::new_err(
                "run(): the interpreter is exiting, and starts no call",
            ));
        };
        let start = crate::request::start(py, request, forward)?;
        let call = Call::default();
        let mut interrupt = None;
        let watched = Watch {
            signals: on_main_thread(py)?,
            call: &call,
            on_event: on_event.as_ref(),
            events: &mut events,
            interrupt: &mut interrupt,
        };
        let result = py.detach(|| run_here(palisade, start, &call, watched.run()));
        // The events the call made after the watch last looked.
        if let (Some(callback), Some(events)) = (&on_event, &mut events) {
            while let Ok(json) = events.try_recv() {
                if let Some(raised) = deliver(py, callback, json) {
                    interrupt.get_or_insert(raised);
                }
            }
        }
        if let Some(interrupt) = interrupt {
            return Err(interrupt);
        }
        result.map(NativeOutcome::new).map_err(PyTypeError::new_err)
    }

    /// Start a call (`request`, keyword arguments as `run` takes them) reporting to `mailbox`
    /// as `id`: its events (with `events`), then its outcome. The runtime's threads only queue
    /// them: the loop's thread takes them.
    #[pyo3(name = "_start", signature = (request, events, mailbox, id))]
    fn start(
        &self,
        py: Python<'_>,
        request: &Bound<'_, PyDict>,
        events: bool,
        mailbox: &Mailbox,
        id: u64,
    ) -> PyResult<NativeCall> {
        let palisade = self.built()?;
        let queue = mailbox.queue();
        let on_event = events.then(|| {
            let queue = queue.clone();
            Arc::new(move |json: String| {
                queue.post(false, |reports| reports.push((id, Carried::Event(json))));
            }) as OnEvent
        });
        let start = crate::request::start(py, Some(request), on_event)?;
        queue.started();
        let done: Done = Box::new(move |result| {
            let carried = match result {
                Ok(outcome) => Carried::Outcome(Box::new(outcome)),
                Err(message) => Carried::Usage(message),
            };
            queue.post(true, |reports| reports.push((id, carried)));
        });
        let call = Call::default();
        palisade_bindings::start(palisade, start, &call, done);
        Ok(NativeCall { call })
    }
}

/// What watches a `run` on its thread while the call runs there: it hands each event to
/// `on_event`, and looks for a signal every [`SIGNAL_CHECK`] (a signal's exception, such as
/// KeyboardInterrupt, or one `on_event` raises that is not an `Exception`, cancels the call
/// and is kept in `interrupt`). It takes the GIL only for
/// those.
struct Watch<'a> {
    /// Whether this is Python's main thread, the only one signal handlers run on (elsewhere
    /// there is nothing to look for, and no timer to set).
    signals: bool,
    call: &'a Call,
    on_event: Option<&'a Py<PyAny>>,
    events: &'a mut Option<UnboundedReceiver<String>>,
    interrupt: &'a mut Option<PyErr>,
}

impl Watch<'_> {
    async fn run(mut self) -> Infallible {
        let first = tokio::time::Instant::now() + SIGNAL_CHECK;
        let mut ticks = tokio::time::interval_at(first, SIGNAL_CHECK);
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        // Made once, not at each event: it registers with the process's one exit signal.
        let mut exit = std::pin::pin!(crate::exit::exiting());
        let mut exiting = false;
        loop {
            let event = tokio::select! {
                json = next_event(self.events) => Some(json),
                _ = ticks.tick(), if self.signals => None,
                // The interpreter's exit (a daemon thread's call): the call ends at once.
                () = &mut exit, if !exiting => {
                    exiting = true;
                    self.call.cancel();
                    continue;
                }
            };
            match event {
                Some(json) => self.deliver(json),
                None => {
                    self.check_signals();
                    // The next check a whole period after this one ended: taking the GIL may
                    // wait for another thread, and a tick due at once would leave the call
                    // one yield (half a millisecond) between waits.
                    ticks.reset();
                }
            }
        }
    }

    fn deliver(&mut self, json: String) {
        let Some(callback) = self.on_event else {
            return;
        };
        if let Some(raised) = Python::attach(|py| deliver(py, callback, json)) {
            self.interrupted(raised);
        }
    }

    fn check_signals(&mut self) {
        if self.interrupt.is_some() {
            return;
        }
        if let Err(raised) = Python::attach(|py| py.check_signals()) {
            self.interrupted(raised);
        }
    }

    /// The caller's interrupt (the first one kept): the call is cancelled.
    fn interrupted(&mut self, raised: PyErr) {
        if self.interrupt.is_none() {
            self.call.cancel();
            *self.interrupt = Some(raised);
        }
    }
}

/// Whether this thread is Python's main thread (`threading.main_thread()`).
pub fn on_main_thread(py: Python<'_>) -> PyResult<bool> {
    static IDENTS: PyOnceLock<(Py<PyAny>, u64)> = PyOnceLock::new();
    let (get_ident, main) = IDENTS.get_or_try_init(py, || {
        let threading = py.import("threading")?;
        let main = threading.call_method0("main_thread")?.getattr("ident")?;
        PyResult::Ok((threading.getattr("get_ident")?.unbind(), main.extract()?))
    })?;
    Ok(get_ident.call0(py)?.extract::<u64>(py)? == *main)
}

/// Hand an event (its JSON, as Python values) to the caller's callback; one that raises an `Exception` misses its event, and
/// the call goes on. What it raises that is not an `Exception` (KeyboardInterrupt: Ctrl-C while
/// the callback ran; SystemExit) is returned, to cancel the call and be raised by `run`.
fn deliver(py: Python<'_>, callback: &Py<PyAny>, json: String) -> Option<PyErr> {
    let error = loads(py, &json)
        .and_then(|event| callback.call1(py, (event,)))
        .err()?;
    if !error.is_instance_of::<PyException>(py) {
        return Some(error);
    }
    error.write_unraisable(py, None);
    None
}

/// The call's next event; pending for ever once the call has dropped its sender (or when
/// nobody listens).
async fn next_event(events: &mut Option<UnboundedReceiver<String>>) -> String {
    if let Some(receiver) = events.as_mut()
        && let Some(json) = receiver.recv().await
    {
        return json;
    }
    *events = None;
    std::future::pending().await
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
                // At the interpreter's exit, no handler starts (crate::exit).
                let Some(_pass) = crate::exit::enter() else {
                    return Err("the interpreter is exiting, and runs no handler".to_owned());
                };
                Python::attach(|py| {
                    let invoked = invoke.call1(py, (payload, context, slot));
                    invoked.map(drop).map_err(|error| error.to_string())
                })
            })
            .await;
            match invoked {
                Ok(Ok(())) => {}
                Ok(Err(error)) => return Err(CapabilityError::from(error)),
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
