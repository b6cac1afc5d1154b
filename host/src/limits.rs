//! The per-call memory limiter: refuses growth past the policy's memory cap and remembers that
//! it did, so that a failure can be classified by what tripped rather than by its message.

use std::time::{Duration, Instant};

/// Guest code yields to the executor each time it has used this much fuel (about half a
/// millisecond of QuickJS interpreting here), and the call's deadline is checked then.
pub(crate) const FUEL_SLICE: u64 = 10_000_000;

/// A shadow-stack overflow is an out-of-bounds access at the end of a deep recursion; an
/// access that is out of bounds after fewer frames than this is some other fault. Engines keep
/// this many frames of a trap's backtrace to tell them apart.
pub(crate) const SHADOW_STACK_OVERFLOW_FRAMES: usize = 64;

/// How fast the host is assumed to touch fresh guest memory (page faults and zeroing): 4 bytes
/// a nanosecond, faster than measured on the 2-core machines Palisade is tested on (about 2.3),
/// so that a growth is refused only when it cannot finish in time.
const TOUCH_BYTES_PER_NANO: u64 = 4;
use wasmtime::ResourceLimiter;

/// The most host resources a call's guest may hold at once (capability calls, requests,
/// responses, streams, and the pollables that wait on them): past it, the guest traps with
/// `guest_trap`. Each one the guest holds is also a handle in its own table, which wasmtime
/// bounds at 100,000 a store; and the event loop, waiting on every operation at once, lends
/// each one's pollable too (three handles an operation at that moment, two of them here), so
/// this bound is met well before wasmtime's, whose error names no cause.
pub(crate) const MAX_HOST_RESOURCES: usize = 1 << 15;

/// Marks a trap raised because the call's wall-clock deadline passed.
#[derive(Debug, thiserror::Error)]
#[error("wall-clock deadline exceeded")]
pub(crate) struct DeadlineExceeded;

/// Tables are indexed by 32-bit values in the guest; this bounds what a hostile module could
/// make the host allocate for them.
const MAX_TABLE_ELEMENTS: usize = 1 << 20;

#[derive(Debug)]
pub(crate) struct MemoryLimiter {
    limit: usize,
    peak: usize,
    denied: bool,
    /// Growing memory past the call's deadline ends the call: the growth, and the zeroing
    /// that follows it in one uninterruptible wasm instruction, would run on past it.
    deadline: Option<Instant>,
}

impl MemoryLimiter {
    pub fn new(limit: u64) -> Self {
        Self {
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
            peak: 0,
            denied: false,
            deadline: None,
        }
    }

    /// A limiter for a call that starts in a memory of `current` bytes (a live session's
    /// heap): its peak is at least that.
    pub fn starting_at(limit: u64, current: u64) -> Self {
        Self {
            peak: usize::try_from(current).unwrap_or(usize::MAX),
            ..Self::new(limit)
        }
    }

    /// The call's deadline, checked at each growth.
    pub fn set_deadline(&mut self, deadline: Instant) {
        self.deadline = Some(deadline);
    }

    /// Largest linear memory size granted during the call.
    pub fn peak(&self) -> u64 {
        self.peak as u64
    }

    /// Whether the guest asked for more memory than the limit allows.
    pub fn denied(&self) -> bool {
        self.denied
    }
}

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.limit {
            self.denied = true;
            return Ok(false);
        }
        if let Some(deadline) = self.deadline {
            // The guest zeroes or copies what it grows in one wasm instruction, which no fuel
            // slice or epoch interrupts: a growth that could not be touched before the deadline
            // even at a rate faster than this machine's ends the call now.
            let grown = desired.saturating_sub(current) as u64;
            let touch = Duration::from_nanos(grown / TOUCH_BYTES_PER_NANO);
            if Instant::now() + touch >= deadline {
                return Err(DeadlineExceeded.into());
            }
        }
        self.peak = self.peak.max(desired);
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }
}
