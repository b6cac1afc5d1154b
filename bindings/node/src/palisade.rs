//! `NativePalisade`: a `palisade::Palisade` whose capability handlers are answered in
//! JavaScript, and whose calls report back to Node in batches through one thread-safe function,
//! each batch one array: the reports as JSON text, then the rest of each outcome among them.

use crate::errors::refused;
use crate::handles::held;
use napi::Env;
use napi::JsValue;
use napi::bindgen_prelude::{FnArgs, Function, JsValuesTupleIntoVec, ObjectFinalize, Promise};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use palisade::CapabilityError;
use palisade_bindings::{Call, Handler, OnEvent, Start, answer, context_json, outcome_parts};
use std::fmt::Write as _;
use std::sync::Arc;

thread_local! {
    /// Where a runtime thread writes each outcome's rest before it is queued, so that it
    /// allocates nothing for it (the queue's own buffers are recycled too).
    static REST: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The most [`REST`] keeps between calls: an outcome with long logs leaves no more behind.
const KEPT_REST: usize = 64 << 10;

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
/// that cancels it, cancel it before it starts (its signal had aborted already).
const EVENTS: u32 = 1;
const CANCELLABLE: u32 = 2;
const CANCELLED: u32 = 4;

/// Node's function that takes every queued report at once, on Node's thread, as one array
/// ([`Delivered`]): one string and one `JSON.parse` a batch, however many reports it holds.
/// Its queue is held till then (the `NativePalisade` may be gone by then). Weak: it does not
/// keep Node running by itself (`index.js` does while calls run).
type Deliver = ThreadsafeFunction<Arc<Queue>, (), Delivered, napi::Status, false, true>;

/// The reports of every call of one `NativePalisade`, written by the runtime's threads, which
/// Node's thread takes in batches ([`palisade_bindings::Reports`]).
type Queue = palisade_bindings::Reports<Batch>;

/// Reports queued for Node's thread. Once delivered, a batch's buffers are handed back to
/// hold a later one ([`Queue::recycle`]) unless they have grown past [`RECYCLED_UP_TO`]: a
/// `Palisade` keeps at most two batches' (the one being written and the one handed back).
#[derive(Default)]
struct Batch {
    /// The JSON arrays' texts written before [`Batch::text`], each closed: a batch holds as many
    /// as its reports need for each to stay under [`TEXT_CHUNK`] (but for a single report
    /// larger than that, alone in its array), far below V8's longest string (2²⁹ − 24 UTF-16
    /// units), which outputs of up to 256 MiB queued while Node's thread was busy once passed.
    closed: Vec<String>,
    /// One JSON array's text, `[id, kind, value, …]`, without its closing bracket; empty when
    /// nothing is queued.
    text: String,
    /// The rest of each outcome in `text` (`{"logs", "audit", "receipt"}`), in order, one after
    /// the other: Node reads one only when its caller asks for it.
    rests: String,
    /// Where each of `rests` ends.
    ends: Vec<usize>,
}

/// The most a delivered batch's buffers may hold to be kept for a later batch.
const RECYCLED_UP_TO: usize = 1 << 20;

/// The most one array's text of a batch holds but for a report larger than that alone.
const TEXT_CHUNK: usize = 64 << 20;

impl Batch {
    /// The bytes its buffers hold.
    fn capacity(&self) -> usize {
        self.text.capacity() + self.rests.capacity() + self.ends.capacity() * size_of::<usize>()
    }
}

/// Queue call `id`'s report of `kind`, whose value is the JSON text `json`, with the rest of
/// its Outcome.
fn post(reports: &Arc<Queue>, id: i64, kind: u32, json: &str, rest: Option<&str>) {
    reports.post(kind != EVENT, |batch| {
        if !batch.text.is_empty() && batch.text.len() + json.len() > TEXT_CHUNK {
            let mut full = std::mem::take(&mut batch.text);
            full.push(']');
            batch.closed.push(full);
        }
        let text = &mut batch.text;
        text.push(if text.is_empty() { '[' } else { ',' });
        // Writing into a String cannot fail.
        let _ = write!(text, "{id},{kind},");
        text.push_str(json);
        if let Some(rest) = rest {
            batch.rests.push_str(rest);
            batch.ends.push(batch.rests.len());
        }
    });
}

/// The queued reports, taken from their queue, as Node's function gets them: one array,
/// `[n, reports, …, rest, rest, …]`: how many texts of reports follow, each a JSON array's
/// (one `[]` when another delivery took them first), then the rest of each outcome among them,
/// in order.
pub struct Delivered {
    batch: Batch,
    reports: Arc<Queue>,
}

impl JsValuesTupleIntoVec for Delivered {
    fn into_vec(self, env: napi::sys::napi_env) -> napi::Result<Vec<napi::sys::napi_value>> {
        let Delivered { mut batch, reports } = self;
        if batch.text.is_empty() {
            batch.text.push('[');
        }
        batch.text.push(']');
        let env = Env::from_raw(env);
        let texts = batch.closed.len() + 1;
        let count = u32::try_from(1 + texts + batch.ends.len()).map_err(|_| refused_batch())?;
        let mut parts = env.create_array(count)?;
        parts.set(0, texts as u32)?;
        let all = batch.closed.iter().chain([&batch.text]);
        for (at, text) in (1..).zip(all) {
            parts.set(at, text.as_str())?;
        }
        let mut start = 0;
        for (at, &end) in (1 + texts as u32..).zip(&batch.ends) {
            parts.set(at, &batch.rests[start..end])?;
            start = end;
        }
        batch.closed = Vec::new();
        if batch.capacity() <= RECYCLED_UP_TO {
            batch.text.clear();
            batch.rests.clear();
            batch.ends.clear();
            reports.recycle(batch);
        }
        Ok(vec![parts.raw()])
    }
}

/// A batch of more reports than a JavaScript array holds (2³² − 1), which the runtime's
/// threads cannot write between two deliveries in any memory this addon runs in.
fn refused_batch() -> napi::Error {
    napi::Error::from_reason("a batch of reports too large for one array")
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
        deliver: Function<'_, Delivered, ()>,
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
            .build_callback(|call| {
                Ok(Delivered {
                    batch: call.value.take(),
                    reports: call.value,
                })
            })?;
        let reports = Queue::new(move |queue| {
            // An unbounded queue refuses a call only while Node is closing, when nobody is
            // waiting; a delivery that finds the queue taken already delivers nothing.
            let _ = deliver.call(queue, ThreadsafeFunctionCallMode::NonBlocking);
        });
        env.adjust_external_memory(WEIGHT)?;
        Ok(Self { palisade, reports })
    }

    /// Start call `id` (a number below 2⁵³, which its reports carry back) of `request` (JSON
    /// text; none for a request with no keys of its own) with `input` (JSON text, apart from
    /// the request), under the policy and with the script held under `policy` and `script` (0
    /// for none: the request's own): it reports its events (with `EVENTS` in `flags`), then
    /// its outcome. With `CANCELLABLE`, the handle returned cancels it; with `CANCELLED`, it
    /// is cancelled before it starts.
    #[napi]
    pub fn start(
        &self,
        request: Option<String>,
        input: Option<String>,
        policy: i64,
        script: i64,
        id: i64,
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
                Ok(outcome) => REST.with_borrow_mut(|rest| {
                    rest.clear();
                    let head = outcome_parts(outcome, rest);
                    let (kind, json) = match &head {
                        Ok(output) => (OUTPUT, &**output),
                        Err(failure) => (FAILURE, failure.as_str()),
                    };
                    let written = std::str::from_utf8(rest).expect("serde_json writes UTF-8");
                    post(&reports, id, kind, json, Some(written));
                    if rest.capacity() > KEPT_REST {
                        *rest = Vec::new();
                    }
                }),
                Err(message) => {
                    let message = serde_json::Value::from(message).to_string();
                    post(&reports, id, USAGE, &message, None);
                }
            },
        );
        let call = Call::default();
        if flags & CANCELLED != 0 {
            call.cancel();
        }
        palisade_bindings::start(&self.palisade, start, &call, done);
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
