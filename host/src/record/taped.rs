//! The random generators and clocks a call's WASI context reads, recording what they hand
//! out or handing out what was recorded.

use super::Tape;
use super::tape::CLOCK_READ_BYTES;
use crate::hex::push_hex;
use std::time::Duration;

/// A random generator that records what it hands out, or hands out what was recorded.
///
/// wasmtime-wasi draws `get-random-bytes` one `u32` per byte, so the bytes are gathered here
/// and go to the transcript a chunk at a time (and when the call's state is dropped): a lock,
/// a clock read and a hex encoding per byte made a recorded `crypto.getRandomValues` 40 times
/// slower than an unrecorded one, host time between two of the guest's fuel yields, where the
/// deadline is not checked.
pub(crate) struct TapedRng<R> {
    inner: R,
    tape: Tape,
    secure: bool,
    /// Bytes handed out but not yet in the transcript.
    pending: Vec<u8>,
    /// Bytes drawn from `inner` ahead, a chunk at a time, and how many of them are used: the
    /// same byte stream as drawing them one request at a time.
    ahead: Box<[u8]>,
    used: usize,
}

/// Random bytes gathered before they go to the transcript.
const RANDOM_CHUNK: usize = 16 << 10;

impl<R> TapedRng<R> {
    pub fn new(inner: R, tape: Tape, secure: bool) -> Self {
        Self {
            inner,
            tape,
            secure,
            pending: Vec::new(),
            ahead: Box::new([]),
            used: 0,
        }
    }

    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let secure = self.secure;
        let pending = &self.pending;
        self.tape.record_sized(2 * pending.len() as u64, |t| {
            let out = if secure {
                &mut t.secure_random
            } else {
                &mut t.insecure_random
            };
            push_hex(out, pending);
        });
        self.pending.clear();
    }
}

impl<R> Drop for TapedRng<R> {
    fn drop(&mut self) {
        self.flush();
    }
}

impl<R: rand::Rng> rand::TryRng for TapedRng<R> {
    type Error = std::convert::Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        // The common case (one call per byte of `get-random-bytes`), kept short.
        if let (Tape::Record(_), Some(b)) = (&self.tape, self.ahead.get(self.used..self.used + 4)) {
            let word = [b[0], b[1], b[2], b[3]];
            self.used += 4;
            self.pending.extend_from_slice(&word);
            if self.pending.len() >= RANDOM_CHUNK {
                self.flush();
            }
            return Ok(u32::from_le_bytes(word));
        }
        let mut b = [0; 4];
        self.try_fill_bytes(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        let mut b = [0; 8];
        self.try_fill_bytes(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        match &self.tape {
            Tape::Replay(replay) => replay.random(self.secure, dst),
            Tape::Off => self.inner.fill_bytes(dst),
            Tape::Record(_) => {
                let mut filled = 0;
                while filled < dst.len() {
                    if self.used == self.ahead.len() {
                        self.ahead = vec![0; RANDOM_CHUNK].into();
                        self.inner.fill_bytes(&mut self.ahead);
                        self.used = 0;
                    }
                    let n = (dst.len() - filled).min(self.ahead.len() - self.used);
                    dst[filled..filled + n].copy_from_slice(&self.ahead[self.used..self.used + n]);
                    self.used += n;
                    filled += n;
                }
                self.pending.extend_from_slice(dst);
                if self.pending.len() >= RANDOM_CHUNK {
                    self.flush();
                }
            }
        }
        Ok(())
    }
}

/// The wall clock, recording its reads or replaying recorded ones.
pub(crate) struct TapedWall {
    pub inner: Box<dyn wasmtime_wasi::HostWallClock + Send>,
    pub tape: Tape,
}

impl wasmtime_wasi::HostWallClock for TapedWall {
    fn resolution(&self) -> Duration {
        self.inner.resolution()
    }

    fn now(&self) -> Duration {
        if let Some(replay) = self.tape.replaying() {
            return Duration::from_nanos(replay.wall());
        }
        let now = self.inner.now();
        self.tape.record_sized(CLOCK_READ_BYTES, |t| {
            t.wall_clock
                .push(u64::try_from(now.as_nanos()).unwrap_or(u64::MAX))
        });
        now
    }
}

/// The monotonic clock, recording its reads or replaying recorded ones.
pub(crate) struct TapedMonotonic {
    pub inner: Box<dyn wasmtime_wasi::HostMonotonicClock + Send>,
    pub tape: Tape,
}

impl wasmtime_wasi::HostMonotonicClock for TapedMonotonic {
    fn resolution(&self) -> u64 {
        self.inner.resolution()
    }

    fn now(&self) -> u64 {
        if let Some(replay) = self.tape.replaying() {
            return replay.monotonic();
        }
        let now = self.inner.now();
        self.tape
            .record_sized(CLOCK_READ_BYTES, |t| t.monotonic_clock.push(now));
        now
    }
}
