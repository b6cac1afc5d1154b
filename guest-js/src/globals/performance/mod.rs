//! `performance.now()` and `performance.timeOrigin`, from `wasi:clocks/monotonic-clock`: the
//! host starts each call's monotonic clock at zero when it creates the call's sandbox, so
//! `now()` is the time since the call began. The host records and replays those reads, and a
//! fixed clock (`[determinism]`) stands still at zero, so both stay deterministic.

use crate::wasi::clocks::monotonic_clock;
use javy::quickjs::prelude::Func;
use javy::quickjs::{Ctx, Function, Result};

/// The clock's reading in milliseconds, coarsened to 5 µs (the resolution browsers give
/// cross-origin-isolated pages): a finer timer helps timing attacks more than it helps scripts.
pub(crate) fn monotonic_ms() -> f64 {
    const GRAIN_NS: u64 = 5_000;
    let ns = monotonic_clock::now();
    (ns - ns % GRAIN_NS) as f64 / 1_000_000.0
}

const PRELUDE: &str = include_str!("performance.js");

/// Install `performance` and `Performance`. Runs once, before the snapshot; reads no clock.
pub fn register(cx: &Ctx<'_>) -> Result<()> {
    let prelude: Function = cx.eval(PRELUDE)?;
    prelude.call((Func::from(monotonic_ms),))
}
