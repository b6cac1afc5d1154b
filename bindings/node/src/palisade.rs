//! `NativePalisade`: a `palisade::Palisade` whose capability handlers are answered in
//! JavaScript, and whose calls report back to Node through a thread-safe function.

use crate::errors::refused;
use crate::handles::{NativePolicy, NativeScript};
use napi::bindgen_prelude::{FnArgs, Function, Promise};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use palisade::CapabilityError;
use palisade_bindings::{Call, Handler, OnEvent, Start, answer, context_json};
use std::sync::Arc;

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

/// A call's channel back to Node: `(kind, json)`, events first, then the outcome.
type Report =
    ThreadsafeFunction<FnArgs<(u32, String)>, (), FnArgs<(u32, String)>, napi::Status, false>;

/// What a report carries: an event, the outcome, or the caller's mistake.
const EVENT: u32 = 0;
const OUTCOME: u32 = 1;
const USAGE: u32 = 2;

/// A Palisade for Node.
#[napi]
pub struct NativePalisade {
    palisade: palisade::Palisade,
}

#[napi]
impl NativePalisade {
    /// Build a Palisade with `settings` (JSON) and the capabilities `names`, each answered by
    /// `dispatch`.
    #[napi(constructor)]
    pub fn new(
        settings: String,
        names: Vec<String>,
        dispatch: Function<'_, FnArgs<(String, String)>, Promise<String>>,
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
        Ok(Self { palisade })
    }

    /// Start a call; `report` gets its events (when `events`) and then its outcome.
    #[napi]
    pub fn start(
        &self,
        request: String,
        policy: Option<&NativePolicy>,
        script: Option<&NativeScript>,
        events: bool,
        report: Function<'_, FnArgs<(u32, String)>, ()>,
    ) -> napi::Result<NativeCall> {
        let report: Arc<Report> = Arc::new(
            report
                .build_threadsafe_function::<FnArgs<(u32, String)>>()
                .build()?,
        );
        let on_event = events.then(|| {
            let report = report.clone();
            Arc::new(move |json: String| send(&report, EVENT, json)) as OnEvent
        });
        let start = Start {
            request,
            policy: policy.map(|p| p.inner.clone()),
            script: script.map(|s| s.inner.clone()),
            on_event,
        };
        let call = palisade_bindings::start(
            &self.palisade,
            start,
            Box::new(move |result| match result {
                Ok(outcome) => send(&report, OUTCOME, outcome),
                Err(message) => send(&report, USAGE, message),
            }),
        );
        Ok(NativeCall { call })
    }
}

/// Queue `json` for Node without waiting (the queue is unbounded, in order).
fn send(report: &Report, kind: u32, json: String) {
    // An unbounded queue refuses a call only while Node is closing, when nobody is waiting.
    let _ = report.call(
        FnArgs::from((kind, json)),
        ThreadsafeFunctionCallMode::NonBlocking,
    );
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
