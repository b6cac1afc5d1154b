//! The tape of one call: recording a transcript (bounded by its limit and the call's
//! deadline) or replaying one, answer by answer.

use super::{CapabilityEvent, HttpEvent, KvEvent, Transcript};
use crate::hex::unhex;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
pub(super) const CLOCK_READ_BYTES: u64 = 32;

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
