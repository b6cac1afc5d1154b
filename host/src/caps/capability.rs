//! `palisade:sandbox/capability`: host capabilities that the embedder registers as async Rust
//! handlers and the policy grants by name. Every check happens here, before a handler runs:
//! the name is allowed, the per-call budget has room, the payload fits and matches the schema.

use crate::audit::{AuditRecord, Decision, now_unix_ms};
use crate::call::CallState;
use crate::engine::bindings::palisade::sandbox::capability::{self, CallError, Denial};
use crate::policy::{ByteSize, Capabilities, Policy};
use crate::{Error, Fix};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

/// What a capability handler returns: its JSON result, or a message for the script.
pub type CapabilityFuture = Pin<Box<dyn Future<Output = Result<serde_json::Value, String>> + Send>>;

/// Capability names longer than this are refused unread: names are copied into audit records
/// and errors, and a script could otherwise make each refusal pin megabytes of host memory.
const MAX_NAME_BYTES: usize = 128;

/// Audit records kept per call; further records are counted, not kept, so that a loop of
/// refused calls cannot grow host memory without bound.
const MAX_AUDIT_RECORDS: usize = 1024;

/// A registered handler.
pub(crate) type Handler = Arc<dyn Fn(serde_json::Value) -> CapabilityFuture + Send + Sync>;

/// Capabilities of one call: the policy's grants, the embedder's handlers, usage so far.
pub(crate) struct CapabilityState {
    grants: Option<Arc<Capabilities>>,
    handlers: Arc<HashMap<String, Handler>>,
    calls: HashMap<String, u32>,
    policy: (String, String),
    pub audit: Vec<AuditRecord>,
    /// Records past `MAX_AUDIT_RECORDS`, counted but not kept.
    pub audit_dropped: u64,
    /// The last refusal, so that an uncaught `PolicyDeniedError` is reported from the host's
    /// own record rather than from whatever the script put in the exception.
    pub last_denial: Option<Error>,
}

impl CapabilityState {
    pub fn new(policy: &Policy, handlers: Arc<HashMap<String, Handler>>) -> Self {
        Self {
            grants: policy.capabilities().cloned(),
            handlers,
            calls: HashMap::new(),
            policy: (policy.name().to_owned(), policy.sha256().to_owned()),
            audit: Vec::new(),
            audit_dropped: 0,
            last_denial: None,
        }
    }

    fn record(
        &mut self,
        target: &str,
        decision: Decision,
        rule: &str,
        started: Instant,
        bytes: (u64, u64),
        error: Option<String>,
    ) {
        if self.audit.len() >= MAX_AUDIT_RECORDS {
            self.audit_dropped += 1;
            return;
        }
        self.audit.push(AuditRecord {
            time_unix_ms: now_unix_ms(),
            capability: "capability",
            target: target.to_owned(),
            decision,
            rule: rule.to_owned(),
            bytes_in: bytes.0,
            bytes_out: bytes.1,
            duration_us: started.elapsed().as_micros() as u64,
            error,
            policy: self.policy.0.clone(),
            policy_sha256: self.policy.1.clone(),
        });
    }

    fn deny(
        &mut self,
        name: &str,
        rule: String,
        reason: String,
        fix: Option<Fix>,
        started: Instant,
        bytes_in: u64,
    ) -> CallError {
        self.record(name, Decision::Deny, &rule, started, (bytes_in, 0), None);
        tracing::info!(capability = name, rule = %rule, "capability denied: {reason}");
        self.last_denial = Some(Error::PolicyDenied {
            capability: name.to_owned(),
            rule: rule.clone(),
            reason: reason.clone(),
            fix: fix.clone(),
        });
        CallError::Denied(Denial {
            capability: name.to_owned(),
            rule,
            reason,
            fix: fix.map(|f| format!("{} = {}", f.key, f.value)),
        })
    }

    /// Record a call that failed without a policy refusal; the script gets a `CapabilityError`.
    fn fail(
        &mut self,
        name: &str,
        decision: Decision,
        rule: &str,
        started: Instant,
        bytes_in: u64,
        message: String,
    ) -> CallError {
        self.record(
            name,
            decision,
            rule,
            started,
            (bytes_in, 0),
            Some(message.clone()),
        );
        CallError::Failed(message)
    }

    async fn call(&mut self, name: String, payload: String) -> Result<String, CallError> {
        let started = Instant::now();
        let bytes_in = payload.len() as u64;
        if name.len() > MAX_NAME_BYTES {
            let mut cut = MAX_NAME_BYTES;
            while !name.is_char_boundary(cut) {
                cut -= 1;
            }
            let short = format!("{}…", &name[..cut]);
            let reason = format!("capability names have at most {MAX_NAME_BYTES} bytes");
            return Err(self.deny(
                &short,
                "capabilities.allow".into(),
                reason,
                None,
                started,
                bytes_in,
            ));
        }
        let key = format!("capabilities.allow.{}", toml_key(&name));
        let Some(rule) = self
            .grants
            .as_ref()
            .and_then(|g| g.allow.get(&name))
            .cloned()
        else {
            let reason = format!("`{name}` is not in capabilities.allow");
            let fix = Fix {
                key: key.clone(),
                value: "{}".into(),
            };
            return Err(self.deny(
                &name,
                "capabilities.allow".into(),
                reason,
                Some(fix),
                started,
                bytes_in,
            ));
        };
        let used = self.calls.entry(name.clone()).or_insert(0);
        *used = used.saturating_add(1);
        if *used > rule.max_calls {
            let reason = format!("more than {} calls in one script call", rule.max_calls);
            let fix = Fix {
                key: format!("{key}.max_calls"),
                value: (rule.max_calls.saturating_mul(2)).to_string(),
            };
            return Err(self.deny(
                &name,
                format!("{key}.max_calls"),
                reason,
                Some(fix),
                started,
                bytes_in,
            ));
        }
        if bytes_in > rule.max_payload.0 {
            // Payload caps go up to 16 MiB; past that no policy change helps.
            let fix = (bytes_in <= 16 << 20).then(|| Fix {
                key: format!("{key}.max_payload"),
                value: format!(
                    "\"{}\"",
                    ByteSize(bytes_in.next_power_of_two().min(16 << 20))
                ),
            });
            let reason = format!(
                "the payload is {bytes_in} bytes, over the {} limit",
                rule.max_payload
            );
            return Err(self.deny(
                &name,
                format!("{key}.max_payload"),
                reason,
                fix,
                started,
                bytes_in,
            ));
        }
        let value: serde_json::Value = match serde_json::from_str(&payload) {
            Ok(value) => value,
            Err(e) => {
                let message = format!("the payload is not JSON: {e}");
                return Err(self.fail(&name, Decision::Deny, &key, started, bytes_in, message));
            }
        };
        if let Some(problem) = rule.schema.as_ref().and_then(|s| s.check(&value)) {
            let reason = format!("the payload does not match the schema: {problem}");
            return Err(self.deny(
                &name,
                format!("{key}.schema"),
                reason,
                None,
                started,
                bytes_in,
            ));
        }
        let Some(handler) = self.handlers.get(&name).cloned() else {
            let message = format!("capability `{name}` has no handler in this host");
            return Err(self.fail(&name, Decision::Allow, &key, started, bytes_in, message));
        };
        let result = handler(value).await;
        match result.and_then(|v| serde_json::to_string(&v).map_err(|e| e.to_string())) {
            Ok(text) => {
                self.record(
                    &name,
                    Decision::Allow,
                    &key,
                    started,
                    (bytes_in, text.len() as u64),
                    None,
                );
                Ok(text)
            }
            Err(message) => {
                Err(self.fail(&name, Decision::Allow, &key, started, bytes_in, message))
            }
        }
    }
}

/// A TOML key segment: bare when it can be, quoted otherwise.
fn toml_key(name: &str) -> String {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        name.to_owned()
    } else {
        serde_json::to_string(name).unwrap_or_default()
    }
}

impl capability::Host for CallState {
    async fn call(&mut self, name: String, payload: String) -> Result<String, CallError> {
        self.capabilities.call(name, payload).await
    }
}
