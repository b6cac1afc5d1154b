//! `NativePalisade`: a `palisade::Palisade` whose capability handlers are answered in
//! JavaScript, and whose calls report back to Node in batches through one thread-safe function,
//! each batch one JSON array.

use crate::errors::refused;
use crate::handles::held;
use napi::Env;
use napi::bindgen_prelude::{FnArgs, Function, ObjectFinalize, Promise};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use palisade::CapabilityError;
use palisade_bindings::{Call, Handler, OnEvent, Start, answer, context_json, outcome_parts};
use std::fmt::Write as _;
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

/// What a report carries (`index.js` reads the kinds): an event, the output of a call that
/// succeeded, the caller's mistake (a message), or the error of a call that failed
/// (`{"error", "error_id"}`). A call's last report, but the caller's mistake, has the rest of
/// its Outcome beside the batch ([`Batch::rests`]).
const EVENT: u32 = 0;
const OUTPUT: u32 = 1;
const USAGE: u32 = 2;
const FAILURE: u32 = 3;

/// The flags of a call's start (`index.js` sets them): report its events, return a handle
/// that cancels it.
const EVENTS: u32 = 1;
const CANCELLABLE: u32 = 2;

/// Node's function that takes every queued report at once, on Node's thread, as one JSON
/// array `[id, kind, value, id, kind, value, …]` (one string and one `JSON.parse` a batch,
/// however many reports it holds) and the rests of the outcomes among them, in order, from the
/// queue it is called with (which it holds till then: the `NativePalisade` may be gone by
/// then). Weak: it does not keep Node running by itself (`index.js` does while calls run).
type Deliver =
    ThreadsafeFunction<Arc<Queue>, (), FnArgs<(String, Vec<String>)>, napi::Status, false, true>;

/// The reports of every call of one `NativePalisade`, written by the runtime's threads, which
/// Node's thread takes in batches ([`palisade_bindings::Reports`]).
type Queue = palisade_bindings::Reports<Batch>;

/// Reports queued for Node's thread.
#[derive(Default)]
struct Batch {
    /// One JSON array's text, without its closing bracket; empty when nothing is queued.
    text: String,
    /// The rest of each outcome in `text` (`{"logs", "audit", "receipt"}`), in order: Node
    /// reads one only when its caller asks for it.
    rests: Vec<String>,
}

/// Queue call `id`'s report of `kind`, whose value is the JSON text `json`, with the rest of
/// its Outcome.
fn post(reports: &Arc<Queue>, id: u32, kind: u32, json: &str, rest: Option<String>) {
    reports.post(kind != EVENT, |batch| {
        let text = &mut batch.text;
        text.push(if text.is_empty() { '[' } else { ',' });
        // Writing into a String cannot fail.
        let _ = write!(text, "{id},{kind},");
        text.push_str(json);
        batch.rests.extend(rest);
    });
}

/// The queued reports as a JSON array and the rests of their outcomes, leaving the queue
/// empty (`[]` when another delivery took them first).
fn take(reports: &Queue) -> FnArgs<(String, Vec<String>)> {
    let Batch { mut text, rests } = reports.take();
    if text.is_empty() {
        text.push('[');
    }
    text.push(']');
    FnArgs::from((text, rests))
}

/// What a Palisade weighs for V8's collector, told to V8 while it lives: V8 sees only the
/// wrapper's few bytes, but each Palisade reserves hundreds of GiB of address space for its
/// instance pool (about 560 GiB by default), and about 200 of them dropped and not yet collected
/// exhaust it (the next `new Palisade` fails as `internal`). With this weight, V8 collects
/// dropped ones every few constructions.
const WEIGHT: i64 = 64 << 20;

/// A Palisade for Node.
#[napi(custom_finalize)]
pub struct NativePalisade {
    palisade: palisade::Palisade,
    reports: Arc<Queue>,
}

impl ObjectFinalize for NativePalisade {
    fn finalize(self, env: Env) -> napi::Result<()> {
        env.adjust_external_memory(-WEIGHT)?;
        Ok(())
    }
}

#[napi]
impl NativePalisade {
    /// Build a Palisade with `settings` (JSON) and the capabilities `names`, each answered by
    /// `dispatch`; its calls report to `deliver`, a batch at a time.
    #[napi(constructor)]
    pub fn new(
        env: Env,
        settings: String,
        names: Vec<String>,
        dispatch: Function<'_, FnArgs<(String, String)>, Promise<String>>,
        deliver: Function<'_, FnArgs<(String, Vec<String>)>, ()>,
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
        let deliver: Deliver = deliver
            .build_threadsafe_function::<Arc<Queue>>()
            .weak::<true>()
            .build_callback(|call| Ok(take(&call.value)))?;
        let reports = Queue::new(move |queue| {
            // An unbounded queue refuses a call only while Node is closing, when nobody is
            // waiting; a delivery that finds the queue taken already delivers nothing.
            let _ = deliver.call(queue, ThreadsafeFunctionCallMode::NonBlocking);
        });
        env.adjust_external_memory(WEIGHT)?;
        Ok(Self { palisade, reports })
    }

    /// Start call `id` of `request` (JSON text) with `input` (JSON text, apart from the
    /// request), under the policy and with the script held under `policy` and `script` (0 for
    /// none: the request's own): it reports its events (with [`EVENTS`] in `flags`), then its
    /// outcome. With [`CANCELLABLE`], the handle returned cancels it.
    #[napi]
    pub fn start(
        &self,
        request: String,
        input: Option<String>,
        policy: i64,
        script: i64,
        id: u32,
        flags: u32,
    ) -> napi::Result<Option<NativeCall>> {
        let (policy, script) = held(policy, script)?;
        let on_event = (flags & EVENTS != 0).then(|| {
            let reports = self.reports.clone();
            Arc::new(move |json: String| post(&reports, id, EVENT, &json, None)) as OnEvent
        });
        let start = Start {
            request,
            input,
            policy,
            script,
            on_event,
        };
        let reports = self.reports.clone();
        reports.started();
        let done = Box::new(
            move |result: Result<palisade::Outcome, String>| match result {
                Ok(outcome) => {
                    let (head, rest) = outcome_parts(outcome);
                    let (kind, json) = match &head {
                        Ok(output) => (OUTPUT, &**output),
                        Err(failure) => (FAILURE, failure.as_str()),
                    };
                    post(&reports, id, kind, json, Some(rest));
                }
                Err(message) => {
                    let message = serde_json::Value::from(message).to_string();
                    post(&reports, id, USAGE, &message, None);
                }
            },
        );
        let call = palisade_bindings::start(&self.palisade, start, done);
        Ok((flags & CANCELLABLE != 0).then_some(NativeCall { call }))
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
