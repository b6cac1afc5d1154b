//! Record and replay: a [`Transcript`] holds every answer the host gave one call — clock reads,
//! random bytes, capability results, key-value results, HTTP responses and refusals — so that
//! the call can be run again against it, with no network or store access, and produce the same
//! output (`palisade run --record PATH`, `--replay PATH`; [`Palisade::run_recorded`],
//! [`Palisade::replay`]).
//!
//! Answers are matched by kind and order: the n-th capability call gets the n-th recorded
//! result. A script that behaves differently on replay (it read a different clock value and
//! took another branch) finds the transcript exhausted; such a request fails as the host's
//! `internal` error for capabilities and `kv`, or as a network error for `fetch`.
//!
//! [`Palisade::run_recorded`]: crate::Palisade::run_recorded
//! [`Palisade::replay`]: crate::Palisade::replay

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// The transcript format's version.
pub const TRANSCRIPT_VERSION: u32 = 1;

/// Everything the host answered during one call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transcript {
    pub version: u32,
    /// The script's name and the JSON input of the recorded call.
    pub script: String,
    pub input: String,
    /// SHA-256 of the policy that governed it.
    pub policy_sha256: String,
    /// The seed of `Math.random`.
    pub random_seed: u64,
    /// Wall-clock reads, nanoseconds since the Unix epoch, in order.
    pub wall_clock: Vec<u64>,
    /// Monotonic-clock reads, nanoseconds, in order.
    pub monotonic_clock: Vec<u64>,
    /// Bytes drawn from `wasi:random` (secure, then insecure), hex-encoded.
    pub secure_random: String,
    pub insecure_random: String,
    /// Capability calls in the order they started.
    pub capabilities: Vec<CapabilityEvent>,
    /// Key-value operations in order.
    pub kv: Vec<KvEvent>,
    /// HTTP requests in the order they were sent.
    pub http: Vec<HttpEvent>,
}

/// One capability call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapabilityEvent {
    pub name: String,
    /// `ok` (the JSON result), `denied` (the denial, as JSON) or `failed` (the message).
    pub outcome: String,
    pub value: String,
}

/// One key-value operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KvEvent {
    pub op: String,
    pub bucket: String,
    pub key: String,
    /// The value read (hex), when the operation read one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Keys listed, for `list-keys`, and the cursor returned.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<u64>,
    /// `ok`, `denied`, `no-such-store` or `other`.
    pub outcome: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// One HTTP request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpEvent {
    pub method: String,
    pub target: String,
    /// `response`, `denied` or `failed`.
    pub outcome: String,
    #[serde(default)]
    pub status: u16,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
    /// The response body as the script received it (hex).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body: String,
    /// For a failure, or a body that failed part way: the kind (`dns`, `refused`, `reset`,
    /// `timeout`, `response-too-large`, `request-too-large`, `tls`, `content-coding`, `other`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// For a denial: rule, reason, fix. For a failure: the error's message in `reason`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Hex to bytes; pairs that are not hex digits are skipped (never a panic on odd input).
pub(crate) fn unhex(text: &str) -> Vec<u8> {
    let digit = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    text.as_bytes()
        .chunks_exact(2)
        .filter_map(|pair| Some(digit(pair[0])? * 16 + digit(pair[1])?))
        .collect()
}

/// Whether a call records, replays, or neither.
#[derive(Clone, Default)]
pub(crate) enum Tape {
    #[default]
    Off,
    Record(Arc<Mutex<Transcript>>),
    Replay(Arc<Replay>),
}

impl Tape {
    /// Run `f` on the transcript being recorded.
    pub fn record(&self, f: impl FnOnce(&mut Transcript)) {
        if let Tape::Record(t) = self {
            f(&mut t.lock().unwrap_or_else(|p| p.into_inner()));
        }
    }

    pub fn replaying(&self) -> Option<&Arc<Replay>> {
        match self {
            Tape::Replay(r) => Some(r),
            _ => None,
        }
    }
}

/// A transcript being replayed: each kind of answer is handed out in order.
pub(crate) struct Replay {
    pub transcript: Transcript,
    queues: Mutex<Queues>,
}

#[derive(Default)]
struct Queues {
    wall: VecDeque<u64>,
    monotonic: VecDeque<u64>,
    secure: VecDeque<u8>,
    insecure: VecDeque<u8>,
    capabilities: VecDeque<CapabilityEvent>,
    kv: VecDeque<KvEvent>,
    http: VecDeque<HttpEvent>,
    last_wall: u64,
    last_monotonic: u64,
}

impl Replay {
    pub fn new(transcript: Transcript) -> Self {
        let queues = Queues {
            wall: transcript.wall_clock.iter().copied().collect(),
            monotonic: transcript.monotonic_clock.iter().copied().collect(),
            secure: unhex(&transcript.secure_random).into(),
            insecure: unhex(&transcript.insecure_random).into(),
            capabilities: transcript.capabilities.iter().cloned().collect(),
            kv: transcript.kv.iter().cloned().collect(),
            http: transcript.http.iter().cloned().collect(),
            last_wall: 0,
            last_monotonic: 0,
        };
        Self {
            transcript,
            queues: Mutex::new(queues),
        }
    }

    fn queues(&self) -> std::sync::MutexGuard<'_, Queues> {
        self.queues.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The next wall-clock read; the last one again once the transcript has no more.
    pub fn wall(&self) -> u64 {
        let mut q = self.queues();
        if let Some(v) = q.wall.pop_front() {
            q.last_wall = v;
        }
        q.last_wall
    }

    pub fn monotonic(&self) -> u64 {
        let mut q = self.queues();
        if let Some(v) = q.monotonic.pop_front() {
            q.last_monotonic = v;
        }
        q.last_monotonic
    }

    /// Fill `dst` from the recorded bytes (zeros once they run out).
    pub fn random(&self, secure: bool, dst: &mut [u8]) {
        let mut q = self.queues();
        let source = if secure {
            &mut q.secure
        } else {
            &mut q.insecure
        };
        for b in dst {
            *b = source.pop_front().unwrap_or(0);
        }
    }

    pub fn capability(&self) -> Option<CapabilityEvent> {
        self.queues().capabilities.pop_front()
    }

    pub fn kv(&self) -> Option<KvEvent> {
        self.queues().kv.pop_front()
    }

    pub fn http(&self) -> Option<HttpEvent> {
        self.queues().http.pop_front()
    }
}

/// A random generator that records what it hands out, or hands out what was recorded.
pub(crate) struct TapedRng<R> {
    inner: R,
    tape: Tape,
    secure: bool,
}

impl<R> TapedRng<R> {
    pub fn new(inner: R, tape: Tape, secure: bool) -> Self {
        Self {
            inner,
            tape,
            secure,
        }
    }
}

impl<R: rand::Rng> rand::TryRng for TapedRng<R> {
    type Error = std::convert::Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
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
            tape => {
                self.inner.fill_bytes(dst);
                let secure = self.secure;
                tape.record(|t| {
                    let out = if secure {
                        &mut t.secure_random
                    } else {
                        &mut t.insecure_random
                    };
                    out.push_str(&hex(dst));
                });
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
    fn resolution(&self) -> std::time::Duration {
        self.inner.resolution()
    }

    fn now(&self) -> std::time::Duration {
        if let Some(replay) = self.tape.replaying() {
            return std::time::Duration::from_nanos(replay.wall());
        }
        let now = self.inner.now();
        self.tape.record(|t| {
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
        self.tape.record(|t| t.monotonic_clock.push(now));
        now
    }
}
