//! The event loop of a call: promise jobs, timers and the host operations in flight.

use crate::errors::exception;
use crate::exports::palisade::sandbox::runner::Error;
use crate::globals;
use crate::wasi::clocks::monotonic_clock::subscribe_duration;
use javy::quickjs::{CatchResultExt, Ctx, Value};

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
