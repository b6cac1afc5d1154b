//! `NativePalisade`: a `palisade::Palisade` whose capability handlers are answered in
//! JavaScript, and whose calls report back to Node in batches through one thread-safe function.

use crate::errors::refused;
use crate::handles::{NativePolicy, NativeScript};
use napi::bindgen_prelude::{FnArgs, Function, Promise};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use palisade::CapabilityError;
use palisade_bindings::{Call, Handler, OnEvent, Start, answer, context_json, outcome_json};
use std::sync::{Arc, Mutex};

/// The JavaScript dispatcher of capability calls: `(payloadJson, contextJson) => Promise<answerJson>`.
/// Weak: it does not keep Node running by itself (a running call does).
type Dispatch = ThreadsafeFunction<
    FnArgs<(String, String)>,
    Promise<String>,
    FnArgs<(String, String)>,
    napi::Status,
    false,
    true,
>;

/// What a call reports to Node: its events (`kind` [`EVENT`]), then its outcome ([`OUTCOME`])
/// or the caller's mistake ([`USAGE`]), as JSON or a message; `id` is the caller's.
#[napi(object)]
pub struct Report {
    pub id: u32,
    pub kind: u32,
    pub json: String,
}

const EVENT: u32 = 0;
const OUTCOME: u32 = 1;
const USAGE: u32 = 2;

/// Node's function that takes every queued report at once, on Node's thread. Weak: it does
/// not keep Node running by itself (`index.js` does while calls run).
type Deliver = ThreadsafeFunction<(), (), Vec<Report>, napi::Status, false, true>;

/// The reports of every call of one `NativePalisade`. The runtime's threads queue them; a
/// report into an empty queue asks Node's thread to take the queue, so that one hand-off
/// delivers every report that is ready by then.
struct Reports {
    queue: Arc<Mutex<Vec<Report>>>,
    deliver: Deliver,
}

impl Reports {
    fn post(&self, report: Report) {
        let was_empty = {
            let mut queue = self.queue.lock().expect("never poisoned");
            queue.push(report);
            queue.len() == 1
        };
        if was_empty {
            // An unbounded queue refuses a call only while Node is closing, when nobody is
            // waiting; a delivery that finds the queue taken already delivers nothing.
            let _ = self
                .deliver
                .call((), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

/// A Palisade for Node.
#[napi]
pub struct NativePalisade {
    palisade: palisade::Palisade,
    reports: Arc<Reports>,
}

#[napi]
impl NativePalisade {
    /// Build a Palisade with `settings` (JSON) and the capabilities `names`, each answered by
    /// `dispatch`; its calls report to `deliver`, a batch at a time.
    #[napi(constructor)]
    pub fn new(
        settings: String,
        names: Vec<String>,
        dispatch: Function<'_, FnArgs<(String, String)>, Promise<String>>,
        deliver: Function<'_, Vec<Report>, ()>,
    ) -> napi::Result<Self> {
        let dispatch: Arc<Dispatch> = Arc::new(
            dispatch
                .build_threadsafe_function::<FnArgs<(String, String)>>()
                .weak::<true>()
                .build()?,
        );
        let palisade =
            palisade_bindings::build_with(&settings, names, |_| handler(dispatch.clone()))
                .map_err(refused)?;
        let queue = Arc::new(Mutex::new(Vec::new()));
        let taken = queue.clone();
        let deliver = deliver
            .build_threadsafe_function::<()>()
            .weak::<true>()
            .build_callback(move |_| {
                Ok(std::mem::take(&mut *taken.lock().expect("never poisoned")))
            })?;
        let reports = Arc::new(Reports { queue, deliver });
        Ok(Self { palisade, reports })
    }

    /// Start call `id`: it reports its events (when `events`), then its outcome. With
    /// `cancellable`, the handle returned cancels it.
    #[napi]
    pub fn start(
        &self,
        request: String,
        policy: Option<&NativePolicy>,
        script: Option<&NativeScript>,
        events: bool,
        id: u32,
        cancellable: bool,
    ) -> Option<NativeCall> {
        let on_event = events.then(|| {
            let reports = self.reports.clone();
            Arc::new(move |json: String| {
                let kind = EVENT;
                reports.post(Report { id, kind, json });
            }) as OnEvent
        });
        let start = Start {
            request,
            policy: policy.map(|p| p.inner.clone()),
            script: script.map(|s| s.inner.clone()),
            on_event,
        };
        let reports = self.reports.clone();
        let done = Box::new(move |result: Result<palisade::Outcome, String>| {
            let (kind, json) = match result {
                Ok(outcome) => (OUTCOME, outcome_json(&outcome)),
                Err(message) => (USAGE, message),
            };
            reports.post(Report { id, kind, json });
        });
        let call = palisade_bindings::start(&self.palisade, start, done);
        cancellable.then_some(NativeCall { call })
    }
}

/// The handler of one capability: ask the dispatcher, await its promise, read its answer. A
/// dispatcher that cannot be reached (Node is exiting) is the handler's failure.
fn handler(dispatch: Arc<Dispatch>) -> Handler {
    Box::new(move |context, payload| {
        let dispatch = dispatch.clone();
        let args = FnArgs::from((payload.to_string(), context_json(&context)));
        Box::pin(async move {
            let unreachable = |e: napi::Error| CapabilityError::from(e.reason.clone());
            let promise = dispatch.call_async(args).await.map_err(unreachable)?;
            let text = promise.await.map_err(unreachable)?;
            answer(&text)
        })
    })
}

/// A running call.
#[napi]
pub struct NativeCall {
    call: Call,
}

#[napi]
impl NativeCall {
    /// End the call at once as `cancelled` (nothing, once it has ended).
    #[napi]
    pub fn cancel(&self) {
        self.call.cancel();
    }
}
