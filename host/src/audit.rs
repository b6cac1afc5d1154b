//! Audit records: one per gated decision, kept in the outcome and optionally appended to a
//! JSON-lines log. Each record names the policy (and its SHA-256) that decided.

use crate::Error;
use crate::bindings::palisade::sandbox::capability::Denial;
use crate::caps::gate::{Capability, Refusal};
use crate::policy::Policy;
use crate::secrets::Secrets;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Whether a gate let a request through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// The request went through.
    Allow,
    /// The request was refused.
    Deny,
}

/// One gated decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuditRecord {
    /// When the request reached the gate, in milliseconds since the Unix epoch.
    pub time_unix_ms: u64,
    /// The kind of capability; serialized as `capability` for host capabilities, `http`,
    /// `kv`, `fs` or `config`.
    pub capability: Capability,
    /// What was requested: the capability's name, or the request's URL.
    pub target: String,
    /// Whether the gate let the request through.
    pub decision: Decision,
    /// The policy rule that decided, such as `capabilities.allow.do.max_calls`.
    pub rule: String,
    /// Bytes the script sent (payload, request body).
    pub bytes_in: u64,
    /// Bytes the script got back (result, response body).
    pub bytes_out: u64,
    /// Time the host spent on the request, in microseconds.
    pub duration_us: u64,
    /// Why a request that was allowed still failed (handler error), if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Name of the policy that decided.
    pub policy: String,
    /// SHA-256 of that policy's text.
    pub policy_sha256: String,
}

pub(crate) fn now_unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_millis() as u64
}

/// Audit records kept per call; further records are counted, not kept, so that a loop of
/// refused requests cannot grow host memory without bound.
const MAX_AUDIT_RECORDS: usize = 1024;

/// Targets are copied into records and errors; longer ones are cut.
const MAX_TARGET_BYTES: usize = 2048;

/// Refusal reasons kept per target are cut to this.
const MAX_REASON_BYTES: usize = 512;

/// One call's audit records and refusals, shared by its gates (capabilities, network), which
/// may record from background tasks.
#[derive(Clone)]
pub(crate) struct AuditLog(Arc<Mutex<Records>>);

struct Records {
    policy: (String, String),
    /// The policy's secret values: redacted from targets, errors and refusals as they are made.
    secrets: Secrets,
    records: Vec<AuditRecord>,
    dropped: u64,
    /// The embedder's callback, which gets each kept record as it is made.
    sink: Option<crate::EventSink>,
    /// The addresses each HTTP target resolved to (keyed as records name targets), for the
    /// operator's audit log; never in the outcome.
    resolved: HashMap<String, Vec<std::net::SocketAddr>>,
    /// The last refusal, so that an uncaught `PolicyDeniedError` is reported from the host's
    /// own record rather than from whatever the script put in the exception.
    last_denial: Option<Error>,
    /// The latest refusal per target (a URL, `kv:BUCKET`), which the guest asks for by target.
    refusals: HashMap<String, Denial>,
}

/// Who decided a refusal: this call's policy, or a transcript being replayed.
#[derive(Clone, Copy)]
enum Origin {
    Policy,
    Transcript,
}

/// What the audit log held when the call ended.
pub(crate) struct Taken {
    pub records: Vec<AuditRecord>,
    pub dropped: u64,
    /// The addresses each HTTP target resolved to, for the operator's audit log only.
    pub resolved: HashMap<String, Vec<std::net::SocketAddr>>,
}

/// `text`, cut to at most `max` bytes on a character boundary.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &text[..cut])
}

/// One record as the capability that made it knows it, when its operation ends.
pub struct Entry<'a> {
    pub capability: Capability,
    pub target: &'a str,
    pub decision: Decision,
    pub rule: &'a str,
    /// When the operation began: the record keeps how long it took.
    pub started: Instant,
    /// Bytes in (to the host) and out (to the script).
    pub bytes: (u64, u64),
    pub error: Option<String>,
}

impl AuditLog {
    pub fn new(policy: &Policy) -> Self {
        Self(Arc::new(Mutex::new(Records {
            policy: (policy.name().to_owned(), policy.sha256().to_owned()),
            secrets: Secrets::from_policy(policy),
            records: Vec::new(),
            dropped: 0,
            sink: None,
            resolved: HashMap::new(),
            last_denial: None,
            refusals: HashMap::new(),
        })))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Records> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Append a record; its index, when it was kept.
    pub fn record(&self, entry: Entry<'_>) -> Option<usize> {
        let Entry {
            capability,
            target,
            decision,
            rule,
            started,
            bytes,
            error,
        } = entry;
        let mut records = self.lock();
        if records.records.len() >= MAX_AUDIT_RECORDS {
            records.dropped += 1;
            return None;
        }
        let mut record = AuditRecord {
            time_unix_ms: now_unix_ms(),
            capability,
            target: truncate(target, MAX_TARGET_BYTES),
            decision,
            rule: rule.to_owned(),
            bytes_in: bytes.0,
            bytes_out: bytes.1,
            duration_us: started.elapsed().as_micros() as u64,
            error,
            policy: records.policy.0.clone(),
            policy_sha256: records.policy.1.clone(),
        };
        records.secrets.scrub(&mut record.target);
        records.secrets.scrub(&mut record.rule);
        if let Some(error) = &mut record.error {
            records.secrets.scrub(error);
        }
        let sink = records.sink.clone();
        let streamed = sink.as_ref().map(|_| record.clone());
        records.records.push(record);
        let index = records.records.len() - 1;
        drop(records);
        if let (Some(sink), Some(record)) = (sink, streamed) {
            sink.send(crate::Event::Audit(record));
        }
        Some(index)
    }

    /// Note the addresses `target` resolved to, for the operator's audit log (at most as many
    /// targets as records are kept).
    pub fn resolved(&self, target: &str, addresses: &[std::net::SocketAddr]) {
        let mut records = self.lock();
        let mut key = truncate(target, MAX_TARGET_BYTES);
        records.secrets.scrub(&mut key);
        if records.resolved.len() < MAX_AUDIT_RECORDS || records.resolved.contains_key(&key) {
            records.resolved.insert(key, addresses.to_vec());
        }
    }

    /// Also hand each kept record to `sink` as it is made.
    pub fn stream_to(&self, sink: crate::EventSink) {
        self.lock().sink = Some(sink);
    }

    /// Record a refusal this call's policy decided: the audit record, the call's error should
    /// the script not catch it, and the denial the script's `PolicyDeniedError` is made from,
    /// which is returned and, for a gate the guest asks by target (`capability.refusal`), kept
    /// under the refusal's target.
    pub fn deny(&self, refusal: Refusal, started: Instant, bytes_in: u64) -> Denial {
        self.refuse(refusal, Origin::Policy, started, bytes_in)
    }

    /// Record a refusal read from a transcript being replayed. The script gets the denial as
    /// recorded, so that it takes the same path; the host's own record and the call's error name
    /// the rule as `replay:RULE` and carry no fix, since the transcript, not this policy,
    /// decided it (a transcript is a file anyone could have written).
    pub fn deny_replayed(&self, refusal: Refusal, started: Instant) -> Denial {
        self.refuse(refusal, Origin::Transcript, started, 0)
    }

    fn refuse(
        &self,
        mut refusal: Refusal,
        origin: Origin,
        started: Instant,
        bytes_in: u64,
    ) -> Denial {
        let looked_up = refusal.capability.looked_up();
        if looked_up {
            refusal.reason = truncate(&refusal.reason, MAX_REASON_BYTES).into();
        }
        let reported_rule = match origin {
            Origin::Policy => refusal.rule.to_string(),
            Origin::Transcript => format!("replay:{}", refusal.rule),
        };
        self.record(Entry {
            capability: refusal.capability,
            target: &refusal.target,
            decision: Decision::Deny,
            rule: &reported_rule,
            started,
            bytes: (bytes_in, 0),
            error: None,
        });
        let label = truncate(refusal.label(), MAX_TARGET_BYTES);
        let denial = refusal.denial(label.clone());
        let fix = match origin {
            Origin::Policy => refusal.fix,
            Origin::Transcript => None,
        };
        let error = self.lock().secrets.redact_error(Error::PolicyDenied {
            capability: label,
            rule: reported_rule,
            reason: refusal.reason.into(),
            fix,
        });
        if let Error::PolicyDenied {
            capability: label,
            rule,
            reason,
            ..
        } = &error
        {
            // Debug formatting escapes what a script put in names and URLs (no forged log
            // lines); secrets are already redacted.
            let target: &str = &refusal.target;
            let target = self
                .lock()
                .secrets
                .redact(target)
                .unwrap_or_else(|| target.to_owned());
            let capability = refusal.capability.as_str();
            tracing::info!(capability, label = ?label, target = ?target, rule = ?rule, "denied: {reason:?}");
        }
        self.lock().last_denial = Some(error);
        if looked_up {
            self.keep_refusal(&refusal.target, denial.clone());
        }
        denial
    }

    fn keep_refusal(&self, target: &str, denial: Denial) {
        let key = truncate(target, MAX_TARGET_BYTES);
        let mut records = self.lock();
        if records.refusals.len() < MAX_AUDIT_RECORDS || records.refusals.contains_key(&key) {
            records.refusals.insert(key, denial);
        }
    }

    /// The latest refusal recorded for `target`.
    pub fn refusal(&self, target: &str) -> Option<Denial> {
        self.lock()
            .refusals
            .get(&truncate(target, MAX_TARGET_BYTES))
            .cloned()
    }

    /// Add response bytes to a kept record.
    pub fn add_bytes_out(&self, index: usize, bytes: u64) {
        if let Some(record) = self.lock().records.get_mut(index) {
            record.bytes_out += bytes;
        }
    }

    pub fn take(&self) -> Taken {
        let mut records = self.lock();
        Taken {
            records: std::mem::take(&mut records.records),
            dropped: records.dropped,
            resolved: std::mem::take(&mut records.resolved),
        }
    }

    pub fn last_denial(&self) -> Option<Error> {
        self.lock().last_denial.clone()
    }
}
