//! The event loop of a call: promise jobs, timers and the host operations in flight.

use crate::errors::exception;
use crate::exports::palisade::sandbox::runner::{Error, Exception};
use crate::globals;
use crate::wasi::clocks::monotonic_clock::subscribe_duration;
use javy::quickjs::{CatchResultExt, CaughtError, Ctx, Object, Value, qjs};
use std::cell::Cell;
use std::ffi::c_void;

thread_local! {
    /// `InternalError.prototype`, the prototype of QuickJS's out-of-memory error, recorded in
    /// `init`: it lives as long as the context.
    static INTERNAL_ERROR: Cell<usize> = const { Cell::new(0) };
    /// Whether a promise of this call was rejected with QuickJS's out-of-memory error and
    /// nothing handled it. Each call runs in a fresh instance of the snapshot, where it is unset.
    static LOST_TO_MEMORY: Cell<bool> = const { Cell::new(false) };
}

/// Watch for promises rejected, unhandled, with QuickJS's out-of-memory error (an
/// `InternalError`). A promise job that runs out of memory rejects the promise it was to settle
/// and the chain stops there; the event loop then finds nothing left to run, which is the
/// memory's doing, not a deadlock. Called once, before the snapshot.
pub(super) fn watch_memory(cx: &Ctx<'_>) -> javy::quickjs::Result<()> {
    let constructor: Object = cx.globals().get("InternalError")?;
    let prototype: Object = constructor.get("prototype")?;
    // SAFETY: the value is live; only its address is kept, to compare prototypes with.
    let address = unsafe { qjs::JS_VALUE_GET_PTR(prototype.as_raw()) } as usize;
    INTERNAL_ERROR.with(|cell| cell.set(address));
    // SAFETY: the runtime is live for the guest's life; the tracker reads no JS property and
    // runs no JS code (see `track`).
    unsafe {
        let rt = qjs::JS_GetRuntime(cx.as_raw().as_ptr());
        qjs::JS_SetHostPromiseRejectionTracker(rt, Some(track), std::ptr::null_mut());
    }
    Ok(())
}

/// QuickJS's rejection tracker: notes an unhandled rejection whose reason is an error whose
/// prototype is `InternalError.prototype`. Only the reason's class and prototype are read (a
/// proxy is not of the error class, so no trap runs).
unsafe extern "C" fn track(
    ctx: *mut qjs::JSContext,
    _promise: qjs::JSValue,
    reason: qjs::JSValue,
    is_handled: bool,
    _opaque: *mut c_void,
) {
    // SAFETY: QuickJS passes a live context and reason for the duration of the call; the
    // prototype taken here is freed here.
    unsafe {
        if is_handled || !qjs::JS_IsError(reason) {
            return;
        }
        let prototype = qjs::JS_GetPrototype(ctx, reason);
        let address = qjs::JS_VALUE_GET_PTR(prototype) as usize;
        qjs::JS_FreeValue(ctx, prototype);
        if address == INTERNAL_ERROR.with(Cell::get) {
            LOST_TO_MEMORY.with(|cell| cell.set(true));
        }
    }
}

/// Forget an out-of-memory rejection of an earlier call: a live session's instance outlives
/// its calls.
pub(super) fn forget_lost_memory() {
    LOST_TO_MEMORY.with(|cell| cell.set(false));
}

/// Why the event loop ran dry, when memory did it: an exception QuickJS left pending when it
/// could not queue a job (`JS_EnqueueJob` fails silently when its allocation does), or an
/// out-of-memory error that rejected a promise nothing handled. Either ends the call with that
/// error, which the host reports as `memory_limit` when its limiter refused the memory.
fn out_of_memory(cx: &Ctx<'_>) -> Option<Error> {
    if cx.has_exception() {
        let caught = CaughtError::from_error(cx, javy::quickjs::Error::Exception);
        return Some(Error::Exception(exception(cx, caught)));
    }
    LOST_TO_MEMORY.with(Cell::get).then(|| {
        Error::Exception(Exception {
            name: "InternalError".to_owned(),
            message: "out of memory".to_owned(),
            stack: None,
            location: None,
        })
    })
}

/// Run the event loop until `value` (when it is a promise) settles: jobs first; then, with
/// none left, the earliest due timer, or a `wasi:io/poll` wait on the host operations in
/// flight and the earliest timer together.
pub(super) fn settle<'js>(
    cx: &Ctx<'js>,
    value: Value<'js>,
    what: &str,
    real_clock: bool,
) -> Result<Value<'js>, Error> {
    let Some(promise) = value.as_promise() else {
        return Ok(value);
    };
    let thrown = |e| Error::Exception(exception(cx, e));
    loop {
        if let Some(result) = promise.result::<Value>() {
            return result.catch(cx).map_err(thrown);
        }
        if cx.execute_pending_job() {
            continue;
        }
        let timer = globals::timers::next_wait(cx).catch(cx).map_err(thrown)?;
        let in_flight = globals::io::pending();
        match timer {
            None if !in_flight => {
                if let Some(error) = out_of_memory(cx) {
                    return Err(error);
                }
                return Err(Error::Deadlock(format!(
                    "{what} is still pending and no job, timer or host operation is left that \
                     could settle it"
                )));
            }
            // A due timer, or a fixed clock with nothing else to wait for: fire it now.
            Some(wait) if wait.is_zero() || (!real_clock && !in_flight) => {
                globals::timers::run_next(cx).catch(cx).map_err(thrown)?;
            }
            _ if in_flight => {
                let timer = timer
                    .filter(|_| real_clock)
                    .map(|wait| subscribe_duration(wait.as_nanos() as u64));
                let fired = globals::io::run_ready(cx, timer)
                    .catch(cx)
                    .map_err(thrown)?;
                if fired {
                    globals::timers::run_next(cx).catch(cx).map_err(thrown)?;
                }
            }
            Some(wait) => {
                subscribe_duration(wait.as_nanos() as u64).block();
                globals::timers::run_next(cx).catch(cx).map_err(thrown)?;
            }
            None => unreachable!("covered above"),
        }
    }
}
