//! Classifying a failed call by what tripped: the deadline marker, the trap code, the memory
//! limiter's flag, the guest's own error.

use super::CallState;
use crate::Error;
use crate::bindings::exports::palisade::sandbox::runner::{self};
use crate::error::guest_error;
use crate::limits::{DeadlineExceeded, MemoryLimiter};
use crate::policy::Policy;
use wasmtime::Trap;

/// The trap an epoch callback ends a cancelled call with.
#[derive(Debug, thiserror::Error)]
#[error("the call was cancelled")]
pub(super) struct CallCancelled;

pub(super) fn internal(e: wasmtime::Error) -> Error {
    tracing::error!("internal error: {e:#}");
    Error::Internal {
        detail: format!("{e:#}"),
    }
}

use crate::limits::SHADOW_STACK_OVERFLOW_FRAMES;

/// Classify a trap by what tripped: the deadline marker, the trap code, the limiter's flag.
pub(super) fn classify_trap(
    error: wasmtime::Error,
    limiter: &MemoryLimiter,
    policy: &Policy,
) -> Error {
    let limits = policy.limits();
    if error.downcast_ref::<CallCancelled>().is_some() {
        return Error::Cancelled;
    }
    if error
        .downcast_ref::<crate::caps::kv::KvUnavailable>()
        .is_some()
    {
        return Error::StoreUnavailable;
    }
    if error.downcast_ref::<DeadlineExceeded>().is_some() {
        return Error::Timeout {
            limit: limits.timeout,
        };
    }
    // wasi:http traps on request headers past its size limit; the guests check that limit
    // before they call it, so only a hand-made component gets here.
    if let Some(fields) = error.downcast_ref::<wasmtime_wasi_http::FieldMapError>() {
        return Error::GuestTrap {
            trap: format!("request headers: {fields}"),
        };
    }
    if let Some(wasmtime::component::ResourceTableError::Full) = error.downcast_ref() {
        return Error::GuestTrap {
            trap: format!(
                "the script held more than {} host resources at once (capability calls, \
                 requests, streams, and the pollables that wait on them)",
                crate::limits::MAX_HOST_RESOURCES
            ),
        };
    }
    let frames = || {
        error
            .downcast_ref::<wasmtime::WasmBacktrace>()
            .map_or(0, |trace| trace.frames().len())
    };
    match error.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => Error::FuelExhausted {
            budget: limits.fuel,
        },
        Some(Trap::StackOverflow) => Error::StackOverflow {
            limit: limits.stack,
            shadow_stack: false,
        },
        Some(Trap::Interrupt) => Error::Timeout {
            limit: limits.timeout,
        },
        // The guest's shadow stack sits at the bottom of linear memory: running off its end is
        // an out-of-bounds access at a wrapped-around address, deep in a recursion.
        Some(Trap::MemoryOutOfBounds)
            if !limiter.denied() && frames() >= SHADOW_STACK_OVERFLOW_FRAMES =>
        {
            Error::StackOverflow {
                limit: limits.stack,
                shadow_stack: true,
            }
        }
        _ if limiter.denied() => Error::MemoryLimit {
            limit: limits.memory,
        },
        // Every other trap code is the guest's own fault (a forged or broken component).
        Some(trap) => {
            tracing::warn!(%trap, "the guest's wasm trapped: {error:?}");
            Error::GuestTrap {
                trap: trap.to_string(),
            }
        }
        None => internal(error),
    }
}

pub(super) fn classify_guest(error: runner::Error, state: &CallState, policy: &Policy) -> Error {
    // QuickJS reports a refused allocation as an `InternalError: out of memory` exception; the
    // limiter saw it happen. A script that caught that error and then failed in some other way
    // is reported by what it failed with.
    if state.limiter.denied() && is_out_of_memory(&error) {
        return Error::MemoryLimit {
            limit: policy.limits().memory,
        };
    }
    // QuickJS's own stack check threw and nothing caught it: the recursion was too deep for
    // the policy's stack, as when a wasm stack runs out.
    if crate::error::is_stack_exhausted(&error) {
        return Error::StackOverflow {
            limit: policy.limits().stack,
            shadow_stack: false,
        };
    }
    // An uncaught refusal is reported from the host's record of it, not from the exception.
    if let runner::Error::Exception(e) = &error
        && e.name == "PolicyDeniedError"
        && let Some(denial) = state.capabilities.audit.last_denial()
    {
        return denial;
    }
    // A standalone component learns of a refused request only as a plain error (standard
    // `wasi:http` cannot say why), so its exception is no guide: an uncaught exception after a
    // refusal the host recorded in this call is reported from that record.
    if state.standalone
        && let runner::Error::Exception(_) = &error
        && let Some(denial) = state.capabilities.audit.last_denial()
    {
        return denial;
    }
    guest_error(error)
}

/// Whether the guest's error is QuickJS's own out-of-memory exception (the one it throws when an
/// allocation is refused), as opposed to an error a script made after recovering from one.
pub(super) fn is_out_of_memory(error: &runner::Error) -> bool {
    match error {
        // QuickJS throws `InternalError: out of memory`, or `null` when it cannot even make
        // that error.
        runner::Error::Exception(e) => e.name == "InternalError" || e.name == "null",
        runner::Error::Deadlock(_) | runner::Error::MissingExport(_) => false,
        _ => true,
    }
}
