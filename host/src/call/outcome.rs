//! How a call ends: its [`Outcome`] and [`Receipt`], and the output and error checked,
//! redacted and bounded on the way there.

use super::CallState;
use super::classify::internal;
use crate::Error;
use crate::audit::AuditRecord;
use crate::caps::console::LogLine;
use crate::policy::Policy;
use crate::secrets::Secrets;
use serde::Serialize;
use serde_json::value::RawValue;
use std::time::{Duration, Instant};

/// What a call used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Receipt {
    /// Wasm fuel consumed.
    pub fuel_used: u64,
    /// Wall-clock time from the call's start to its end, in microseconds.
    pub wall_time_us: u64,
    /// Largest linear memory size the guest reached, in bytes.
    pub peak_memory_bytes: u64,
    /// Console bytes dropped over the policy's cap.
    pub console_bytes_dropped: u64,
    /// Console lines dropped whole over the policy's cap (each line costs its bytes plus 32).
    pub console_lines_dropped: u64,
    /// Audit records over the per-call cap of 1,024, counted but not kept.
    pub audit_records_dropped: u64,
    /// Name of the policy that governed the call.
    pub policy: String,
    /// SHA-256 of that policy's text.
    pub policy_sha256: String,
    /// `"last_expression"` when the script's result was the value of its last expression
    /// statement (a script that exports nothing, [`crate::Script::new`]); absent when it ran
    /// as a module, by its exports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub form: Option<&'static str>,
}

/// The result of a call: JSON output or a typed error, console lines, and a receipt.
#[derive(Debug)]
pub struct Outcome {
    /// The JSON output of the call, or the error that ended it.
    pub result: Result<Box<RawValue>, Error>,
    /// For an `internal` error: the id under which its full cause was logged at error level
    /// (`PALISADE_LOG`/`RUST_LOG`); the caller sees only "internal error" and this id.
    pub error_id: Option<String>,
    /// The console lines the script wrote, in order, within the policy's console caps.
    pub logs: Vec<LogLine>,
    /// One record per gated decision (capability calls), in order.
    pub audit: Vec<AuditRecord>,
    /// What the call used: fuel, time, memory, and what was dropped over a cap.
    pub receipt: Receipt,
    /// For a call made with [`RunOptions::kv_transaction`](crate::RunOptions::kv_transaction):
    /// its key-value writes, none of which has reached the store (empty when it wrote nothing
    /// or ended before it ran, and held for a failed call too). Apply them with
    /// [`Palisade::apply_kv`](crate::Palisade::apply_kv) or drop them. `None` for any other
    /// call. Not part of the serialised outcome: they hold the store's data, not the caller's.
    pub kv_writes: Option<crate::kv::KvWrites>,
}

impl Outcome {
    /// The JSON output, when the call succeeded.
    pub fn output(&self) -> Option<&RawValue> {
        self.result.as_deref().ok()
    }

    /// The error, when the call failed.
    pub fn error(&self) -> Option<&Error> {
        self.result.as_ref().err()
    }

    /// A call that never started: its script, input or policy could not be read, or the
    /// runtime could not be built (`palisade run --json` prints one for each such failure).
    /// The receipt names the policy when one loaded, and counts nothing.
    pub fn not_started(error: Error, policy: Option<&Policy>) -> Outcome {
        Outcome {
            error_id: policy.and_then(|p| log_internal(&error, p)),
            result: Err(error),
            logs: Vec::new(),
            audit: Vec::new(),
            receipt: Receipt {
                fuel_used: 0,
                wall_time_us: 0,
                peak_memory_bytes: 0,
                console_bytes_dropped: 0,
                console_lines_dropped: 0,
                audit_records_dropped: 0,
                policy: policy.map_or_else(String::new, |p| p.name().to_owned()),
                policy_sha256: policy.map_or_else(String::new, |p| p.sha256().to_owned()),
                form: None,
            },
            kv_writes: None,
        }
    }

    /// A call that failed before its sandbox was created.
    pub(crate) fn failed(error: Error, policy: &Policy, started: Instant) -> Outcome {
        let mut outcome = Self::not_started(error, Some(policy));
        outcome.receipt.wall_time_us = micros(started.elapsed());
        outcome
    }
}

/// `{"ok":true,"output":…,"logs":[…],"receipt":{…}}` or `{"ok":false,"error":{…},…}`.
impl Serialize for Outcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(5))?;
        match &self.result {
            Ok(output) => {
                map.serialize_entry("ok", &true)?;
                map.serialize_entry("output", output)?;
            }
            Err(error) => {
                map.serialize_entry("ok", &false)?;
                map.serialize_entry("error", error)?;
                if let Some(id) = &self.error_id {
                    map.serialize_entry("error_id", id)?;
                }
            }
        }
        map.serialize_entry("logs", &self.logs)?;
        map.serialize_entry("audit", &self.audit)?;
        map.serialize_entry("receipt", &self.receipt)?;
        map.end()
    }
}

/// Log an `internal` error's full cause at error level under a fresh id, and return the id.
pub(super) fn log_internal(error: &Error, policy: &Policy) -> Option<String> {
    let Error::Internal { detail } = error else {
        return None;
    };
    let id = format!("{:016x}", rand::random::<u64>());
    tracing::error!(
        error_id = %id,
        policy = policy.name(),
        policy_sha256 = policy.sha256(),
        "internal error: {detail}"
    );
    Some(id)
}

pub(super) fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

pub(crate) fn accept_output(policy: &Policy, json: String) -> Result<Box<RawValue>, Error> {
    let limit = policy.limits().output;
    if json.len() as u64 > limit.0 {
        return Err(Error::OutputTooLarge {
            size: json.len() as u64,
            limit,
        });
    }
    RawValue::from_string(json).map_err(|e| {
        internal(wasmtime::Error::msg(format!(
            "guest output is not JSON: {e}"
        )))
    })
}

/// Replace secret values, in every form they can take there, in the output (keeping its JSON
/// structure: [`Secrets::redact_json`]) and in every text of an error (a secret can only reach
/// the script through a response that echoes it; the script can put it into names, URLs and
/// messages). Audit records are redacted as they are
/// made (`AuditLog`).
pub(super) fn redact_result(
    result: Result<Box<RawValue>, Error>,
    secrets: &Secrets,
) -> Result<Box<RawValue>, Error> {
    match result {
        Ok(output) => match secrets.redact_json(output.get())? {
            None => Ok(output),
            Some(clean) => RawValue::from_string(clean).map_err(|_| Error::BadOutput {
                detail: "the result held a secret value and could not be redacted".into(),
            }),
        },
        Err(error) => Err(secrets.redact_error(error)),
    }
}

/// Bound the script's text in an error (its message and stack, or a detail it chose) by
/// `limits.output`, as its result is: together they keep at most `limit` bytes, and a cut text
/// ends with a marker saying how much was cut.
pub(super) fn bound_error(error: Error, limit: u64) -> Error {
    let mut room = usize::try_from(limit).unwrap_or(usize::MAX);
    let mut cut = |text: String| {
        let text = cut_text(text, room);
        room = room.saturating_sub(text.len());
        text
    };
    match error {
        Error::GuestException {
            name,
            message,
            stack,
            location,
        } => Error::GuestException {
            name: cut(name),
            message: cut(message),
            stack: stack.map(cut),
            location,
        },
        Error::GuestSyntax {
            message,
            location,
            stack,
        } => Error::GuestSyntax {
            message: cut(message),
            location,
            stack: stack.map(cut),
        },
        Error::GuestDeadlock { detail } => Error::GuestDeadlock {
            detail: cut(detail),
        },
        Error::BadOutput { detail } => Error::BadOutput {
            detail: cut(detail),
        },
        Error::NotCompilable { detail } => Error::NotCompilable {
            detail: cut(detail),
        },
        other => other,
    }
}

/// `text` cut to at most `room` bytes (at a character boundary), marked when cut.
pub(super) fn cut_text(mut text: String, room: usize) -> String {
    if text.len() <= room {
        return text;
    }
    let marker = |n: usize| format!("… [{n} bytes cut at limits.output]");
    // With no room for the marker, the text is dropped whole.
    let Some(keep) = room.checked_sub(marker(text.len()).len()) else {
        return String::new();
    };
    let mut end = keep;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let removed = text.len() - end;
    text.truncate(end);
    text.push_str(&marker(removed));
    text
}

/// The outcome of a call that ran: its state's console, audit records and usage, with the
/// result redacted and bounded.
pub(crate) fn finish(
    mut state: CallState,
    result: Result<Box<RawValue>, Error>,
    fuel_used: u64,
    policy: &Policy,
    started: Instant,
) -> Outcome {
    // Resources (response bodies, pending calls) finish their audit records when dropped.
    drop(std::mem::take(&mut state.table));
    let secrets = state.http.secrets().clone();
    let mut result = result;
    if !secrets.is_empty() {
        result = redact_result(result, &secrets);
    }
    let result = result.map_err(|error| bound_error(error, policy.limits().output.0));
    let audit = state.capabilities.audit.take();
    if let Some(file) = &state.audit_file {
        file.append(&audit.records, &audit.resolved, &state.audit_tags);
    }
    let receipt = Receipt {
        fuel_used,
        wall_time_us: micros(started.elapsed()),
        peak_memory_bytes: state.limiter.peak(),
        console_bytes_dropped: state.console.dropped(),
        console_lines_dropped: state.console.dropped_lines(),
        audit_records_dropped: audit.dropped,
        policy: policy.name().to_owned(),
        policy_sha256: policy.sha256().to_owned(),
        form: None,
    };
    if let Err(error) = &result {
        tracing::info!(
            code = error.code(),
            policy = policy.name(),
            "call failed: {error}"
        );
    }
    let mut logs = state.console.finish();
    if !secrets.is_empty() {
        for line in &mut logs {
            secrets.scrub(&mut line.message);
        }
    }
    let error_id = result
        .as_ref()
        .err()
        .and_then(|error| log_internal(error, policy));
    Outcome {
        result,
        error_id,
        logs,
        audit: audit.records,
        receipt,
        kv_writes: None,
    }
}
