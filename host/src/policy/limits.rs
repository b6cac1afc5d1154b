//! `[limits]`: the resources of one call, their defaults and their accepted ranges.

use super::raw::RawLimits;
use super::{ByteSize, HumanDuration, PolicyError, Source, pick};
use serde::Serialize;
use std::time::Duration;

/// Resource limits of one call. Each one is enforced below QuickJS, in wasm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// Wasm fuel: roughly one unit per wasm instruction executed.
    pub fuel: u64,
    /// Maximum size of the guest's linear memory.
    pub memory: ByteSize,
    /// Wall-clock deadline for the whole call, host waits included.
    pub timeout: HumanDuration,
    /// Maximum native wasm stack.
    pub stack: ByteSize,
    /// Maximum size of the JSON result.
    pub output: ByteSize,
    /// Maximum size of the JSON input.
    pub input: ByteSize,
    /// Console bytes kept; later lines are dropped and a marker says how much.
    pub console: ByteSize,
    /// Largest transcript a recorded call keeps (`--record`, `run_recorded`), as written;
    /// recording stops there. Also the largest transcript file `--replay` reads.
    pub transcript: ByteSize,
}

/// Accepted range of each limit. Each bound names what it protects. The upper bounds are also
/// the ceilings of the fixes that suggest raising a limit (`crate::Error::fix`).
pub(crate) mod bounds {
    use super::{ByteSize, Duration};
    /// The guest's 6 MiB shadow stack, the snapshot's own heap and QuickJS's first allocations
    /// need about 10 MiB; a wasm32 memory cannot exceed 4 GiB.
    pub const MEMORY: (ByteSize, ByteSize) = (ByteSize(12 << 20), ByteSize(4 << 30));
    /// An hour bounds how long one call can hold a pool slot.
    pub const TIMEOUT: (Duration, Duration) = (Duration::from_millis(1), Duration::from_secs(3600));
    /// The stack is reserved per in-flight call; 64 KiB is the least QuickJS can run with.
    pub const STACK: (ByteSize, ByteSize) = (ByteSize(64 << 10), ByteSize(16 << 20));
    /// Input and output cross the host boundary as one string each.
    pub const IO: (ByteSize, ByteSize) = (ByteSize(16), ByteSize(256 << 20));
    /// Console lines are held in the host's memory until the call ends.
    pub const CONSOLE: (ByteSize, ByteSize) = (ByteSize(0), ByteSize(64 << 20));
    /// A transcript is held in host memory while its call runs, and once more while it is
    /// written: 1 GiB bounds that; 64 KiB holds a small call's clock reads and answers.
    pub const TRANSCRIPT: (ByteSize, ByteSize) = (ByteSize(64 << 10), ByteSize(1 << 30));
}

/// Default limits, the values written in `policies/default.toml`.
pub(super) const DEFAULT_LIMITS: Limits = Limits {
    fuel: 30_000_000_000,
    memory: ByteSize(64 << 20),
    timeout: HumanDuration(Duration::from_secs(1)),
    stack: ByteSize(12 << 20),
    output: ByteSize(1 << 20),
    input: ByteSize(1 << 20),
    console: ByteSize(64 << 10),
    transcript: ByteSize(64 << 20),
};

impl Default for Limits {
    fn default() -> Self {
        DEFAULT_LIMITS
    }
}

/// `[limits]` resolved: each limit in its range, or its default.
pub(super) fn resolve(raw: &RawLimits, source: &Source<'_>) -> Result<Limits, PolicyError> {
    let d = DEFAULT_LIMITS;
    let fuel = match &raw.fuel {
        Some(f) if *f.get_ref() == 0 => {
            return Err(source.error("limits.fuel", Some(f.span()), "fuel must be at least 1"));
        }
        Some(f) => *f.get_ref(),
        None => d.fuel,
    };
    let timeout_bounds = (
        HumanDuration(bounds::TIMEOUT.0),
        HumanDuration(bounds::TIMEOUT.1),
    );
    Ok(Limits {
        fuel,
        memory: pick(
            source,
            "limits.memory",
            &raw.memory,
            d.memory,
            bounds::MEMORY,
        )?,
        timeout: pick(
            source,
            "limits.timeout",
            &raw.timeout,
            d.timeout,
            timeout_bounds,
        )?,
        stack: pick(source, "limits.stack", &raw.stack, d.stack, bounds::STACK)?,
        output: pick(source, "limits.output", &raw.output, d.output, bounds::IO)?,
        input: pick(source, "limits.input", &raw.input, d.input, bounds::IO)?,
        console: pick(
            source,
            "limits.console",
            &raw.console,
            d.console,
            bounds::CONSOLE,
        )?,
        transcript: pick(
            source,
            "limits.transcript",
            &raw.transcript,
            d.transcript,
            bounds::TRANSCRIPT,
        )?,
    })
}
