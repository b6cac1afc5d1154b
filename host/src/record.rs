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
//! A transcript is bounded by the policy's `limits.transcript` (its size as written, in JSON):
//! past it, recording stops and the transcript says so in `truncated`; the call goes on as it
//! would unrecorded, and a replay refuses the transcript. Secret values never reach a
//! transcript: they are replaced by `[redacted]` wherever they were echoed back. A replay checks
//! the transcript's version, counts its answers against the policy's budgets, and reports the
//! refusals it hands out as replayed.
//!
//! [`Palisade::run_recorded`]: crate::Palisade::run_recorded
//! [`Palisade::replay`]: crate::Palisade::replay

use crate::secrets::{REDACTED, Secrets};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The transcript format's version: 2 added `truncated` and redacts secrets. Version 1
/// transcripts replay as before.
pub const TRANSCRIPT_VERSION: u32 = 2;

/// The oldest transcript version a replay accepts.
pub const OLDEST_TRANSCRIPT_VERSION: u32 = 1;

/// Everything the host answered during one call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transcript {
    /// The transcript format ([`TRANSCRIPT_VERSION`] when written by this build).
    pub version: u32,
    /// The name of the recorded call's script.
    pub script: String,
    /// The JSON input of the recorded call.
    pub input: String,
    /// SHA-256 of the policy that governed it.
    pub policy_sha256: String,
    /// The seed of `Math.random`.
    pub random_seed: u64,
    /// Wall-clock reads, nanoseconds since the Unix epoch, in order.
    pub wall_clock: Vec<u64>,
    /// Monotonic-clock reads, nanoseconds, in order.
    pub monotonic_clock: Vec<u64>,
    /// Bytes drawn from `wasi:random`'s secure generator, hex-encoded.
    pub secure_random: String,
    /// Bytes drawn from `wasi:random`'s insecure generator, hex-encoded.
    pub insecure_random: String,
    /// Capability calls in the order they started.
    pub capabilities: Vec<CapabilityEvent>,
    /// Key-value operations in order.
    pub kv: Vec<KvEvent>,
    /// HTTP requests in the order they were sent.
    pub http: Vec<HttpEvent>,
    /// Set when the transcript reached the policy's `limits.transcript`: what was left out.
    /// Recording stopped there; such a transcript cannot be replayed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<String>,
}

impl Transcript {
    /// Why this transcript cannot be replayed, if it cannot: a version this build does not
    /// read, or a recording cut at its limit.
    pub fn check(&self) -> Result<(), String> {
        if !(OLDEST_TRANSCRIPT_VERSION..=TRANSCRIPT_VERSION).contains(&self.version) {
            return Err(format!(
                "the transcript is version {}; this Palisade replays versions \
                 {OLDEST_TRANSCRIPT_VERSION} to {TRANSCRIPT_VERSION}",
                self.version
            ));
        }
        if let Some(why) = &self.truncated {
            return Err(format!(
                "the transcript is incomplete ({why}), so a replay would not follow the \
                 recorded call"
            ));
        }
        Ok(())
    }

    /// Replace every secret value, in any form it was echoed back in, with `[redacted]`: in
    /// capability, key-value and HTTP answers (bodies too) and their errors. The script read
    /// these answers during the recorded call; a replay needs no secret to hand them out again.
    pub(crate) fn redact(&mut self, secrets: &Secrets) {
        if secrets.is_empty() {
            return;
        }
        let text = |s: &mut String| secrets.scrub(s);
        let bytes = |hexed: &mut String| {
            if let Some(clean) = secrets.redact_bytes(&unhex(hexed)) {
                *hexed = hex(&clean);
            }
        };
        for event in &mut self.capabilities {
            text(&mut event.name);
            text(&mut event.value);
        }
        for event in &mut self.kv {
            text(&mut event.bucket);
            text(&mut event.key);
            event.value.iter_mut().for_each(bytes);
            event.keys.iter_mut().for_each(text);
            text(&mut event.message);
        }
        for event in &mut self.http {
            text(&mut event.target);
            for (name, value) in &mut event.headers {
                text(name);
                if secrets.contains(value.as_bytes()) {
                    *value = REDACTED.to_owned();
                }
            }
            let body = unhex(&event.body);
            if let Some(clean) = secrets.redact_bytes(&body) {
                event.body = hex(&clean);
                // The body changed length: the recorded length must match what is replayed.
                for (name, value) in &mut event.headers {
                    if name.eq_ignore_ascii_case("content-length") {
                        *value = clean.len().to_string();
                    }
                }
            }
            text(&mut event.reason);
            event.fix.iter_mut().for_each(text);
        }
    }
}

/// One capability call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapabilityEvent {
    /// The capability's name.
    pub name: String,
    /// How the call ended, which says what `value` holds.
    pub outcome: CapabilityOutcome,
    /// The JSON result, the denial or the message, as `outcome` says.
    pub value: String,
}

/// How a recorded capability call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CapabilityOutcome {
    /// Still running when the recording ended (`value` is empty); replayed as a failure.
    Pending,
    /// Answered: `value` is the JSON result.
    Ok,
    /// Refused by the policy: `value` is the denial, as JSON.
    Denied,
    /// Failed (a handler's error, a forwarded call's failure): `value` is the message. An
    /// outcome this version does not know is read as this.
    #[serde(other)]
    Failed,
}

/// How a recorded key-value operation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KvOutcome {
    /// The store answered: `value`, `keys` or nothing, as the operation returns.
    Ok,
    /// The namespace was full: `cursor` holds its `max_keys`.
    TooManyKeys,
    /// The store failed: `message` says how. An outcome this version does not know is read as
    /// this.
    #[serde(other)]
    Other,
}

/// One key-value operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KvEvent {
    /// The operation: `get`, `set`, `delete` or `list` (`exists` is recorded as a `get`).
    pub op: String,
    /// The bucket the script named.
    pub bucket: String,
    /// The key; for `list`, the cursor the script passed (as decimal text, `0` for none).
    pub key: String,
    /// The value read (hex), when the operation read one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Keys listed, for `list-keys`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<String>,
    /// For `list`, the cursor returned when more keys follow; for `too-many-keys`, the limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<u64>,
    /// How the operation ended. Refusals of the policy are not recorded here: they are decided
    /// again on replay.
    pub outcome: KvOutcome,
    /// For `other`: the store's error message.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// One HTTP request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpEvent {
    /// The request's method.
    pub method: String,
    /// The request's URL.
    pub target: String,
    /// `response`, `denied` or `failed`; `pending` while the request is in flight, which is
    /// what a recording cut before it was answered keeps.
    pub outcome: String,
    /// The response's status, for a `response`.
    #[serde(default)]
    pub status: u16,
    /// The response's headers as the script saw them, secrets redacted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
    /// The response body as the script received it (hex).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body: String,
    /// For a failure, or a body that failed part way: the kind (`dns`, `refused`, `reset`,
    /// `timeout`, `response-too-large`, `request-too-large`, `tls`, `content-coding`, `other`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// For a denial: the policy rule that refused the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// For a denial, why it was refused; for a failure, the error's message.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// For a denial: the policy change that would allow the request, if there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    push_hex(&mut out, bytes);
    out
}

/// Append `bytes` to `out` as lower-case hex.
pub(crate) fn push_hex(out: &mut String, bytes: &[u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() * 2);
    for &b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
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
    Record(Arc<Recorder>),
    Replay(Arc<Replay>),
}

/// Bytes counted for one clock read: its digits, a comma, a line break and the indent of the
/// pretty-printed JSON `--record` writes.
const CLOCK_READ_BYTES: u64 = 32;

/// Bytes counted for an event's field names and punctuation, besides its texts.
const EVENT_BYTES: u64 = 160;

/// A transcript being recorded, with its size so far (as written, approximately), its limit,
/// and the call's deadline: recording is host work done inside the guest's host calls, which
/// use no fuel, so nothing is recorded past the deadline (the call is about to end as
/// `timeout`), and a flood of clock reads or random bytes cannot keep the call running.
pub(crate) struct Recorder(Mutex<Recording>);

struct Recording {
    transcript: Transcript,
    size: u64,
    limit: u64,
    timeout: Duration,
    /// The call's timeout after the first answer recorded (the `Math.random` seed, drawn as
    /// the call starts, after its deadline was set): never before the call's own deadline.
    deadline: Option<Instant>,
}

impl Recorder {
    pub fn new(transcript: Transcript, limit: u64, timeout: Duration) -> Self {
        let size = EVENT_BYTES * 4
            + transcript.input.len() as u64
            + transcript.script.len() as u64
            + transcript.policy_sha256.len() as u64;
        let mut recording = Recording {
            transcript,
            size: 0,
            limit,
            timeout,
            deadline: None,
        };
        if size > limit {
            recording.cut(limit);
        }
        recording.size = size;
        Self(Mutex::new(recording))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Recording> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The transcript as recorded so far (the recorder keeps an empty one).
    pub fn take(&self) -> Transcript {
        std::mem::take(&mut self.lock().transcript)
    }
}

impl Recording {
    /// Count `bytes` more; false, and the transcript marked as cut, past the limit or the
    /// deadline.
    fn add(&mut self, bytes: u64) -> bool {
        if self.transcript.truncated.is_some() {
            return false;
        }
        let now = Instant::now();
        match self.deadline {
            None => self.deadline = Some(now + self.timeout),
            Some(deadline) if now >= deadline => {
                self.transcript.truncated = Some(
                    "the call ran past its deadline; answers after it were not recorded".into(),
                );
                return false;
            }
            Some(_) => {}
        }
        let size = self.size.saturating_add(bytes);
        if size > self.limit {
            self.cut(self.limit);
            return false;
        }
        self.size = size;
        true
    }

    fn cut(&mut self, limit: u64) {
        self.transcript.truncated = Some(format!(
            "it reached limits.transcript of {}; later answers were not recorded",
            crate::policy::ByteSize(limit)
        ));
    }
}

impl Tape {
    /// Run `f`, which adds nothing that grows (it sets a number), on the transcript being
    /// recorded.
    pub fn record(&self, f: impl FnOnce(&mut Transcript)) {
        self.record_sized(0, f);
    }

    /// Run `f` on the transcript being recorded, counting `bytes` (what `f` adds, as written)
    /// against its limit; past the limit, `f` does not run and recording has stopped.
    pub fn record_sized(&self, bytes: u64, f: impl FnOnce(&mut Transcript)) {
        if let Tape::Record(recorder) = self {
            let mut recording = recorder.lock();
            if recording.add(bytes) {
                f(&mut recording.transcript);
            }
        }
    }

    pub fn replaying(&self) -> Option<&Arc<Replay>> {
        match self {
            Tape::Replay(r) => Some(r),
            _ => None,
        }
    }
}

/// The bytes an event's texts add to a transcript, with its punctuation.
pub(crate) fn event_bytes<'a>(texts: impl IntoIterator<Item = &'a str>) -> u64 {
    texts
        .into_iter()
        .fold(EVENT_BYTES, |sum, text| sum + text.len() as u64 + 8)
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
