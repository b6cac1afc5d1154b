//! A call's store under its limits (fuel, memory, deadline), and running the guest in it
//! under the deadline.

use super::Runtime;
use super::classify::{CallCancelled, classify_guest, classify_trap, internal};
use super::stderr::StderrConsole;
use super::{CallState, Shared};
use crate::Error;
use crate::bindings::exports::palisade::sandbox::runner::{self};
use crate::limits::DeadlineExceeded;
use crate::limits::FUEL_SLICE;
use crate::policy::Policy;
use std::time::Instant;
use wasmtime::{Store, UpdateDeadline};

/// Room for the records of a host call's values above twice the memory limit.
pub(super) const HOSTCALL_FUEL_ROOM: usize = 1 << 20;

/// A store with the policy's limits: fuel, memory limiter, and the wall-clock deadline; a
/// standalone component's store gets `stderr` as its `wasi:cli/stderr`.
pub(super) fn new_store(
    runtime: &Runtime,
    policy: &Policy,
    shared: Shared,
    stderr: Option<&StderrConsole>,
    deadline: Instant,
    fuel: u64,
) -> Result<Store<CallState>, Error> {
    let mut store = Store::new(&runtime.engine, CallState::new(policy, shared, stderr)?);
    store.limiter(|state| &mut state.limiter);
    arm(&mut store, runtime.fuel, policy, deadline, fuel)?;
    Ok(store)
}

/// Set a store up for one call under `policy`: the deadline in its memory limiter, the
/// hostcall budget, and fuel (when `metered`) or the epoch callback. A live session's store is
/// armed again for each of its calls.
pub(crate) fn arm(
    store: &mut Store<CallState>,
    metered: bool,
    policy: &Policy,
    deadline: Instant,
    fuel: u64,
) -> Result<(), Error> {
    let cancel = store.data().cancel.clone();
    store.data_mut().limiter.set_deadline(deadline);
    // wasmtime caps what one call between guest and host may copy (128 MiB by default) and
    // fails past it without a trap code. The guest can hand over no more than its memory holds
    // (each string or list element costs the host a record besides its bytes), so the cap
    // follows the policy's memory limit: a large result or console line is checked against the
    // policy's own limits instead.
    let memory = usize::try_from(policy.limits().memory.0).unwrap_or(usize::MAX);
    store.set_hostcall_fuel(memory.saturating_mul(2).saturating_add(HOSTCALL_FUEL_ROOM));
    if metered {
        // Every FUEL_SLICE the guest yields, so that a CPU-bound guest cannot starve other
        // tasks; `guarded` checks the deadline each time the call is polled again.
        store.set_fuel(fuel).map_err(internal)?;
        store
            .fuel_async_yield_interval(Some(FUEL_SLICE))
            .map_err(internal)?;
    } else {
        // Each epoch tick: past the deadline, trap; otherwise yield likewise.
        store.epoch_deadline_callback(move |_| {
            if cancel.as_ref().is_some_and(|c| c.is_cancelled()) {
                Err(CallCancelled.into())
            } else if Instant::now() >= deadline {
                Err(DeadlineExceeded.into())
            } else {
                Ok(UpdateDeadline::Yield(1))
            }
        });
        store.set_epoch_deadline(1);
    }
    Ok(())
}

/// Run `invoke` against the store under the deadline and classify how it ended. Guest code
/// yields every fuel slice (or epoch tick), and each time the call is polled again past the
/// deadline, or once it is cancelled, it ends; the outer timeout also bounds time spent waiting
/// on the host, and a cancel wakes the call while it waits.
pub(crate) async fn guarded<T>(
    store: &mut Store<CallState>,
    policy: &Policy,
    deadline: Instant,
    invoke: impl AsyncFnOnce(&mut Store<CallState>) -> wasmtime::Result<Result<T, runner::Error>>,
) -> Result<T, Error> {
    let remaining = deadline.saturating_duration_since(Instant::now());
    let cancel = store.data().cancel.clone();
    let ended = {
        let mut call = std::pin::pin!(invoke(store));
        let mut cancelled = std::pin::pin!(async {
            match &cancel {
                Some(cancel) => cancel.cancelled().await,
                None => std::future::pending().await,
            }
        });
        let checked = std::future::poll_fn(|cx| {
            if Instant::now() >= deadline {
                return std::task::Poll::Ready(None);
            }
            if cancel.is_some() && cancelled.as_mut().poll(cx).is_ready() {
                return std::task::Poll::Ready(Some(Err(CallCancelled.into())));
            }
            call.as_mut().poll(cx).map(Some)
        });
        tokio::time::timeout(remaining, checked)
            .await
            .ok()
            .flatten()
    };
    match ended {
        Some(Ok(Ok(value))) => Ok(value),
        Some(Ok(Err(guest_error))) => Err(classify_guest(guest_error, store.data(), policy)),
        Some(Err(trap)) => Err(classify_trap(trap, &store.data().limiter, policy)),
        None => Err(Error::Timeout {
            limit: policy.limits().timeout,
        }),
    }
}
