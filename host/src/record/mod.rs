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

use crate::hex::{hex, unhex};
use crate::secrets::{REDACTED, Secrets};
use serde::{Deserialize, Serialize};

mod tape;
mod taped;

pub(crate) use tape::{Recorder, Replay, Tape, event_bytes};
pub(crate) use taped::{TapedMonotonic, TapedRng, TapedWall};

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
    /// A failure's code, when it is not `handler_error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Whether a failure was marked retryable.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub retryable: bool,
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

/// How a recorded HTTP request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HttpOutcome {
    /// Still in flight when the recording ended, which is what a recording cut before the
    /// request was answered keeps; replayed as a failure.
    Pending,
    /// Answered: `status`, `headers` and `body` hold the response.
    Response,
    /// Refused by the policy: `rule`, `reason` and `fix` say how.
    Denied,
    /// Failed: `error` holds the kind and `reason` the message. An outcome this version does
    /// not know is read as this.
    #[serde(other)]
    Failed,
}

/// One HTTP request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpEvent {
    /// The request's method.
    pub method: String,
    /// The request's URL.
    pub target: String,
    /// How the request ended.
    pub outcome: HttpOutcome,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A transcript written before the outcome was an enum reads and writes back byte for byte;
    /// an outcome this version does not know is read as `failed`.
    #[test]
    fn http_outcomes_keep_their_written_form() {
        for (outcome, text) in [
            (HttpOutcome::Pending, "pending"),
            (HttpOutcome::Response, "response"),
            (HttpOutcome::Denied, "denied"),
            (HttpOutcome::Failed, "failed"),
        ] {
            let line = format!(
                r#"{{"method":"GET","target":"https://a.test/","outcome":"{text}","status":0}}"#
            );
            let event: HttpEvent = serde_json::from_str(&line).unwrap();
            assert_eq!(event.outcome, outcome, "{text}");
            assert_eq!(serde_json::to_string(&event).unwrap(), line);
        }
        let later = r#"{"method":"GET","target":"https://a.test/","outcome":"redirected"}"#;
        let event: HttpEvent = serde_json::from_str(later).unwrap();
        assert_eq!(event.outcome, HttpOutcome::Failed);
    }
}
