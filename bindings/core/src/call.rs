//! A call on the bindings' own tokio runtime: read, resolved and run there, so that the
//! caller's thread (Node's event loop, a Python thread) never waits on it, and cancellable from
//! that thread at any point.

use crate::host::event_json;
use crate::outcome::{failed, outcome_json};
use crate::request::{Refused, Request};
use palisade::{Canceller, Palisade, Policy, Script};
use std::sync::{Arc, Mutex, OnceLock};

/// Called once when a call ends: the Outcome as JSON, or the caller's own mistake (a message
/// the binding throws as a `TypeError`).
pub type Done = Box<dyn FnOnce(Result<String, String>) + Send>;

/// Called with each event of a call as JSON ([`crate::event_json`]), on the call's task.
pub type OnEvent = Arc<dyn Fn(String) + Send + Sync>;

/// The runtime every call of the binding runs on: one worker thread per CPU, named
/// `palisade`, started on first use and kept for the life of the process.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .thread_name("palisade")
            .enable_all()
            .build()
            .expect("the bindings' tokio runtime starts")
    })
}

/// A running call: [`Call::cancel`] ends it as `cancelled`, before or after it has started.
#[derive(Clone, Default)]
pub struct Call {
    slot: Arc<Mutex<Slot>>,
}

#[derive(Default)]
struct Slot {
    cancelled: bool,
    canceller: Option<Canceller>,
}

impl Call {
    /// End the call at once as `cancelled` (nothing, once it has ended).
    pub fn cancel(&self) {
        let mut slot = self.slot.lock().expect("the slot's lock is never poisoned");
        slot.cancelled = true;
        if let Some(canceller) = &slot.canceller {
            canceller.cancel();
        }
    }

    /// Hold the library's canceller of the started call; cancel it now if asked before.
    fn attach(&self, canceller: Canceller) {
        let mut slot = self.slot.lock().expect("the slot's lock is never poisoned");
        if slot.cancelled {
            canceller.cancel();
        }
        slot.canceller = Some(canceller);
    }
}

/// What a binding hands over to start a call.
pub struct Start {
    /// The request's JSON text ([`Request`]).
    pub request: String,
    /// A policy the binding holds as an object, in place of the request's `policy`.
    pub policy: Option<Policy>,
    /// A script the binding holds as an object, in place of `source`/`file`.
    pub script: Option<Script>,
    /// The caller's event callback.
    pub on_event: Option<OnEvent>,
}

/// Read, resolve and run `start` under `palisade` on the bindings' runtime through
/// [`Palisade::start`], and call `done` with its Outcome.
pub fn start(palisade: &Palisade, start: Start, done: Done) -> Call {
    let call = Call::default();
    let (handle, palisade) = (call.clone(), palisade.clone());
    runtime().spawn(async move {
        let prepared = Request::parse(&start.request)
            .and_then(|request| request.prepare(start.policy, start.script));
        let mut prepared = match prepared {
            Ok(prepared) => prepared,
            Err(Refused::Usage(message)) => return done(Err(message)),
            Err(Refused::Call(error, policy)) => {
                return done(Ok(outcome_json(&failed(*error, policy.as_deref()))));
            }
        };
        if let Some(on_event) = start.on_event {
            prepared.options = prepared
                .options
                .on_event(move |event| on_event(event_json(&event)));
        }
        let running = palisade.start(
            &prepared.policy,
            &prepared.script,
            &prepared.input,
            prepared.options,
        );
        handle.attach(running.canceller());
        let outcome = running.outcome().await;
        done(Ok(outcome_json(&outcome)));
    });
    call
}
