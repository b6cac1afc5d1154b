//! Audit records: one per gated decision, kept in the outcome and optionally appended to a
//! JSON-lines log. Each record names the policy (and its SHA-256) that decided.

use serde::Serialize;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Whether a gate let a request through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Deny,
}

/// One gated decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AuditRecord {
    /// When the request reached the gate, in milliseconds since the Unix epoch.
    pub time_unix_ms: u64,
    /// The kind of capability: `capability` for host capabilities.
    pub capability: &'static str,
    /// What was requested: the capability's name.
    pub target: String,
    pub decision: Decision,
    /// The policy rule that decided, such as `capabilities.allow.do.max_calls`.
    pub rule: String,
    /// Payload bytes sent to the host, and result bytes returned.
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// Time the host spent on the request, in microseconds.
    pub duration_us: u64,
    /// Why a request that was allowed still failed (handler error), if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub policy: String,
    pub policy_sha256: String,
}

pub(crate) fn now_unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_millis() as u64
}
