//! The clock room: what a call's WASI clocks and random sources are. Real ones by default; a
//! fixed clock and seeded generators when the policy's `[determinism]` asks for reproducible
//! runs; and, when the call is recorded or replayed, every clock read and random byte through
//! the tape. Also the seed of the guest's `Math.random`.

use crate::policy::{Clock, Determinism};
use crate::record::{Tape, TapedMonotonic, TapedRng, TapedWall};
use rand::SeedableRng;
use rand::rngs::StdRng;
use std::time::Duration;
use wasmtime_wasi::{HostMonotonicClock, HostWallClock, WasiCtxBuilder};

/// Set the clocks and random sources of a call's WASI context.
pub(crate) fn configure(wasi: &mut WasiCtxBuilder, determinism: &Determinism, tape: &Tape) {
    if matches!(tape, Tape::Off) {
        if let Clock::Fixed(at) = determinism.clock {
            wasi.wall_clock(FixedClock(at))
                .monotonic_clock(FixedClock(at));
        }
        if let Some(seed) = determinism.seed {
            wasi.insecure_random_seed(u128::from(seed))
                .secure_random(StdRng::seed_from_u64(seed))
                .insecure_random(StdRng::seed_from_u64(seed.rotate_left(32)));
        }
    } else {
        // Recording or replaying: every clock read and random byte goes through the tape.
        let (wall, monotonic): (
            Box<dyn HostWallClock + Send>,
            Box<dyn HostMonotonicClock + Send>,
        ) = match determinism.clock {
            Clock::Fixed(at) => (Box::new(FixedClock(at)), Box::new(FixedClock(at))),
            Clock::Real => (
                wasmtime_wasi::clocks::wall_clock(),
                wasmtime_wasi::clocks::monotonic_clock(),
            ),
        };
        let seed = determinism.seed.unwrap_or_else(rand::random);
        wasi.insecure_random_seed(u128::from(seed))
            .wall_clock(TapedWall {
                inner: wall,
                tape: tape.clone(),
            })
            .monotonic_clock(TapedMonotonic {
                inner: monotonic,
                tape: tape.clone(),
            })
            .secure_random(TapedRng::new(
                StdRng::seed_from_u64(seed),
                tape.clone(),
                true,
            ))
            .insecure_random(TapedRng::new(
                StdRng::seed_from_u64(seed.rotate_left(32)),
                tape.clone(),
                false,
            ));
    }
}

/// The seed of the guest's `Math.random` for one call: the policy's, or a fresh one; recorded
/// when the call is, and read back from the transcript when it is replayed.
pub(crate) fn math_random_seed(determinism: &Determinism, tape: &Tape) -> u64 {
    match tape {
        Tape::Replay(replay) => replay.transcript.random_seed,
        tape => {
            let seed = determinism.seed.unwrap_or_else(rand::random);
            tape.record(|t| t.random_seed = seed);
            seed
        }
    }
}

/// A clock that always reads the same instant (a deterministic policy's `clock = "fixed"`).
struct FixedClock(Duration);

impl HostWallClock for FixedClock {
    fn resolution(&self) -> Duration {
        Duration::from_nanos(1)
    }
    fn now(&self) -> Duration {
        self.0
    }
}

impl HostMonotonicClock for FixedClock {
    fn resolution(&self) -> u64 {
        1
    }
    fn now(&self) -> u64 {
        0
    }
}
