//! The per-call memory limiter: refuses growth past the policy's memory cap and remembers that
//! it did, so that a failure can be classified by what tripped rather than by its message.

use wasmtime::ResourceLimiter;

/// Tables are indexed by 32-bit values in the guest; this bounds what a hostile module could
/// make the host allocate for them.
const MAX_TABLE_ELEMENTS: usize = 1 << 20;

#[derive(Debug)]
pub(crate) struct MemoryLimiter {
    limit: usize,
    peak: usize,
    denied: bool,
}

impl MemoryLimiter {
    pub fn new(limit: u64) -> Self {
        Self {
            limit: usize::try_from(limit).unwrap_or(usize::MAX),
            peak: 0,
            denied: false,
        }
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
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.limit {
            self.denied = true;
            return Ok(false);
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
