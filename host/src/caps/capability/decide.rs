//! The capability gate's decision, as plain functions of the policy's grants and the call's
//! usage so far: the name is allowed, the per-call budget has room, the payload fits, is JSON
//! and matches the schema. The gate records what they return; nothing here touches the call.

use super::forward;
use crate::Fix;
use crate::audit::truncate;
use crate::caps::gate::{Capability, Refusal};
use crate::policy::{ByteSize, Capabilities, CapabilityRule};
use std::collections::HashMap;

/// Capability names longer than this are refused unread: names are copied into audit records
/// and errors, and a script could otherwise make each refusal pin megabytes of host memory.
pub(crate) const MAX_NAME_BYTES: usize = 128;

/// Payload and response caps go up to 16 MiB; past that no policy change helps.
const MAX_FIX_BYTES: u64 = crate::policy::PAYLOAD_MAX;

/// What the policy says about one call of a capability.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// Allowed by `rule`, the table `key` (`capabilities.allow.NAME`), with the parsed payload.
    Allow {
        rule: CapabilityRule,
        key: String,
        value: serde_json::Value,
    },
    /// Refused by the policy.
    Deny(Refusal),
    /// Granted, but the payload is not JSON: no refusal of the policy, a `CapabilityError` for
    /// the script (audited as a denied decision under `key`, with the message).
    NotJson { key: String, message: String },
}

/// Decide a call of `name` with `payload` under `grants`, counting it in `calls` (the call's
/// uses of each capability so far).
pub(crate) fn decide(
    grants: Option<&Capabilities>,
    calls: &mut HashMap<String, u32>,
    name: &str,
    payload: &str,
) -> Verdict {
    if name.len() > MAX_NAME_BYTES {
        let short = truncate(name, MAX_NAME_BYTES);
        let reason = format!("capability names have at most {MAX_NAME_BYTES} bytes");
        return Verdict::Deny(refusal(&short, "capabilities.allow", reason, None));
    }
    let key = allow_key(name);
    let Some(rule) = grants.and_then(|g| g.allow.get(name)) else {
        let reason = format!("`{name}` is not in capabilities.allow");
        let fix = Fix {
            key: key.clone(),
            value: "{}".into(),
        };
        return Verdict::Deny(refusal(name, "capabilities.allow", reason, Some(fix)));
    };
    if let Err(refused) = count_call(calls, name, rule.max_calls, &key) {
        return Verdict::Deny(refused);
    }
    let bytes = payload.len() as u64;
    if bytes > rule.max_payload.0 {
        let rule_key = format!("{key}.max_payload");
        let reason = format!(
            "the payload is {bytes} bytes, over the {} limit",
            rule.max_payload
        );
        return Verdict::Deny(refusal(name, &rule_key, reason, size_fix(&rule_key, bytes)));
    }
    let value: serde_json::Value = match serde_json::from_str(payload) {
        Ok(value) => value,
        Err(e) => {
            let message = format!("the payload is not JSON: {e}");
            return Verdict::NotJson { key, message };
        }
    };
    if let Some(problem) = rule.schema.as_ref().and_then(|s| s.check(&value)) {
        let reason = format!("the payload does not match the schema: {problem}");
        return Verdict::Deny(refusal(name, &format!("{key}.schema"), reason, None));
    }
    Verdict::Allow {
        rule: rule.clone(),
        key,
        value,
    }
}

/// Count a call of a granted capability against its `max_calls`.
pub(crate) fn count_call(
    calls: &mut HashMap<String, u32>,
    name: &str,
    max_calls: u32,
    key: &str,
) -> Result<(), Refusal> {
    let used = calls.entry(name.to_owned()).or_insert(0);
    *used = used.saturating_add(1);
    if *used <= max_calls {
        return Ok(());
    }
    let rule = format!("{key}.max_calls");
    let reason = format!("more than {max_calls} calls in one script call");
    let fix = Fix {
        key: rule.clone(),
        value: max_calls.saturating_mul(2).to_string(),
    };
    Err(refusal(name, &rule, reason, Some(fix)))
}

/// The refusal of a forwarded response, for its size or for the call's memory.
pub(crate) fn too_large(
    name: &str,
    key: &str,
    refused: forward::Failure,
    max_response: ByteSize,
    memory: ByteSize,
) -> Refusal {
    match refused {
        forward::Failure::TooLarge { size } => {
            let rule = format!("{key}.max_response");
            let reason =
                format!("the response is at least {size} bytes, over the {max_response} limit");
            let fix = size_fix(&rule, size);
            refusal(name, &rule, reason, fix)
        }
        _ => {
            let reason = format!(
                "this call's forwarded responses together passed its {memory} memory limit, \
                 which bounds what the host holds for it"
            );
            refusal(name, "limits.memory", reason, None)
        }
    }
}

/// The policy table that grants `name`: `capabilities.allow.NAME`.
pub(crate) fn allow_key(name: &str) -> String {
    format!("capabilities.allow.{}", crate::policy::toml_key(name))
}

/// A refusal of the capability `name`.
fn refusal(name: &str, rule: &str, reason: String, fix: Option<Fix>) -> Refusal {
    Refusal::new(Capability::Host, name, rule, reason, fix)
}

/// The fix for a size past the cap `rule`: the next power of two, while that is a cap the
/// policy accepts.
fn size_fix(rule: &str, size: u64) -> Option<Fix> {
    (size <= MAX_FIX_BYTES).then(|| Fix {
        key: rule.to_owned(),
        value: format!(
            "\"{}\"",
            ByteSize(size.next_power_of_two().min(MAX_FIX_BYTES))
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Policy;

    fn grants() -> std::sync::Arc<Capabilities> {
        let policy = Policy::from_toml(
            r#"
            [capabilities.allow.do]
            max_calls = 2
            max_payload = "16B"
            [capabilities.allow.typed]
            schema = { type = "object", required = ["id"] }
            [capabilities.allow."odd name"]
            "#,
            None,
        )
        .unwrap();
        policy.capabilities().unwrap().clone()
    }

    /// The rule that refused, or `ok`/`not-json`.
    fn outcome(verdict: Verdict) -> (String, Option<String>) {
        match verdict {
            Verdict::Allow { key, .. } => (format!("ok {key}"), None),
            Verdict::Deny(r) => {
                assert_eq!(r.capability, Capability::Host);
                (
                    r.rule.into(),
                    r.fix.map(|f| format!("{} = {}", f.key, f.value)),
                )
            }
            Verdict::NotJson { key, .. } => (format!("not-json {key}"), None),
        }
    }

    #[test]
    fn each_check_refuses_with_its_rule_and_fix() {
        let long = "x".repeat(MAX_NAME_BYTES + 1);
        let cases: &[(&str, &str, &str, Option<&str>)] = &[
            ("do", "1", "ok capabilities.allow.do", None),
            (
                "nope",
                "1",
                "capabilities.allow",
                Some("capabilities.allow.nope = {}"),
            ),
            (&long, "1", "capabilities.allow", None),
            (
                "do",
                "\"a long payload text\"",
                "capabilities.allow.do.max_payload",
                Some("capabilities.allow.do.max_payload = \"32B\""),
            ),
            ("do", "{", "not-json capabilities.allow.do", None),
            ("typed", "{}", "capabilities.allow.typed.schema", None),
            ("typed", r#"{"id":1}"#, "ok capabilities.allow.typed", None),
            (
                "odd name",
                "null",
                "ok capabilities.allow.\"odd name\"",
                None,
            ),
        ];
        let grants = grants();
        for (name, payload, rule, fix) in cases {
            let mut calls = HashMap::new();
            let (got, got_fix) = outcome(decide(Some(&grants), &mut calls, name, payload));
            assert_eq!(got, *rule, "{name} {payload}");
            assert_eq!(got_fix.as_deref(), *fix, "{name} {payload}");
        }
    }

    #[test]
    fn the_budget_counts_every_call_of_a_name() {
        let grants = grants();
        let mut calls = HashMap::new();
        let mut decide = |name| outcome(decide(Some(&grants), &mut calls, name, "1")).0;
        assert_eq!(decide("do"), "ok capabilities.allow.do");
        assert_eq!(decide("typed"), "capabilities.allow.typed.schema");
        assert_eq!(decide("do"), "ok capabilities.allow.do");
        assert_eq!(decide("do"), "capabilities.allow.do.max_calls");
        let refused = count_call(&mut HashMap::new(), "do", 0, "capabilities.allow.do");
        assert_eq!(
            refused.unwrap_err().fix.unwrap().value,
            "0",
            "no budget doubles to none"
        );
    }

    #[test]
    fn no_grants_refuse_every_name() {
        let (rule, fix) = outcome(decide(None, &mut HashMap::new(), "do", "1"));
        assert_eq!(rule, "capabilities.allow");
        assert_eq!(fix.as_deref(), Some("capabilities.allow.do = {}"));
    }

    #[test]
    fn responses_past_their_cap_name_the_next_size() {
        let cases = [
            (
                forward::Failure::TooLarge { size: 3000 },
                "capabilities.allow.do.max_response",
                Some("\"4KiB\""),
            ),
            (
                forward::Failure::TooLarge { size: 64 << 20 },
                "capabilities.allow.do.max_response",
                None,
            ),
            (forward::Failure::OverBudget, "limits.memory", None),
        ];
        for (failure, rule, fix) in cases {
            let r = too_large(
                "do",
                "capabilities.allow.do",
                failure,
                ByteSize(1024),
                ByteSize(1 << 20),
            );
            assert_eq!(&*r.rule, rule);
            assert_eq!(r.fix.map(|f| f.value).as_deref(), fix);
        }
    }
}
