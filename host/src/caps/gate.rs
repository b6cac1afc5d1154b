//! What every gate shares: the kind of capability it guards and the one refusal type. A gate
//! decides with a plain function that returns a [`Refusal`]; the call's audit log turns it into
//! the audit record, the denial the script's `PolicyDeniedError` is made from and the
//! transcript's entry (`AuditLog::refuse`), so they cannot drift apart.

use crate::Fix;
use crate::bindings::palisade::sandbox::capability::Denial;
use serde::Serialize;
use std::fmt;

/// The kind of capability a gate guards, as audit records name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Capability {
    /// A host capability the embedder registered (`[capabilities]`).
    #[serde(rename = "capability")]
    Host,
    /// The network (`[http]`).
    Http,
    /// The key-value store (`[kv]`).
    Kv,
    /// The file system (`[fs]`).
    Fs,
    /// Configuration values (`[config]`).
    Config,
    /// A part of the JavaScript runtime an action app's policy turns off (`[apps]`): timers,
    /// `eval` and the `Function` constructors.
    Runtime,
}

impl Capability {
    /// The name audit records and logs give it.
    pub fn as_str(self) -> &'static str {
        match self {
            Capability::Host => "capability",
            Capability::Http => "http",
            Capability::Kv => "kv",
            Capability::Fs => "fs",
            Capability::Config => "config",
            Capability::Runtime => "runtime",
        }
    }

    /// What the script's `PolicyDeniedError` names as the capability of a refusal of
    /// `target`: a host capability's own name, `fetch`, `kv`, `fs`, `config`, or the runtime's
    /// function (`eval`, `setTimeout`).
    fn label(self, target: &str) -> &str {
        match self {
            Capability::Host => target,
            Capability::Http => "fetch",
            Capability::Kv => "kv",
            Capability::Fs => "fs",
            Capability::Config => "config",
            Capability::Runtime => target,
        }
    }

    /// Whether the guest asks for this gate's refusals by target (`capability.refusal`) rather
    /// than getting them as the result of the call it made.
    pub(crate) fn looked_up(self) -> bool {
        self != Capability::Host
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<str> for Capability {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Capability {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// A gate's refusal: what was refused, by which rule of the policy, why, and the policy change
/// that would allow it, if one would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub capability: Capability,
    /// What was requested: a capability's name, a URL, `kv:BUCKET`, `fs`.
    pub target: Box<str>,
    /// The policy rule that decided, such as `capabilities.allow.do.max_calls`.
    pub rule: Box<str>,
    pub reason: Box<str>,
    pub fix: Option<Fix>,
}

impl Refusal {
    pub fn new(
        capability: Capability,
        target: impl Into<String>,
        rule: impl Into<String>,
        reason: impl Into<String>,
        fix: Option<Fix>,
    ) -> Self {
        Self {
            capability,
            target: target.into().into_boxed_str(),
            rule: rule.into().into_boxed_str(),
            reason: reason.into().into_boxed_str(),
            fix,
        }
    }

    /// A refusal of the network gate of a request to `url`.
    pub fn http(
        url: impl fmt::Display,
        rule: impl Into<String>,
        reason: impl Into<String>,
        fix: Option<Fix>,
    ) -> Self {
        Self::new(Capability::Http, url.to_string(), rule, reason, fix)
    }

    /// What the script's `PolicyDeniedError` names as the capability.
    pub fn label(&self) -> &str {
        self.capability.label(&self.target)
    }

    /// The denial the guest builds its `PolicyDeniedError` from, naming `label` (cut to the
    /// audit log's bound) as the capability.
    pub(crate) fn denial(&self, label: String) -> Denial {
        Denial {
            capability: label,
            rule: self.rule.to_string(),
            reason: self.reason.to_string(),
            fix: self.fix_text(),
        }
    }

    /// The fix as the script and transcripts show it: `KEY = VALUE`.
    pub(crate) fn fix_text(&self) -> Option<String> {
        self.fix
            .as_ref()
            .map(|f| format!("{} = {}", f.key, f.value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_follow_the_capability() {
        let cases = [
            (Capability::Host, "do", "do", false),
            (Capability::Http, "https://a.test/", "fetch", true),
            (Capability::Kv, "kv:app", "kv", true),
            (Capability::Fs, "fs", "fs", true),
        ];
        for (capability, target, label, looked_up) in cases {
            let refusal = Refusal::new(capability, target, "rule", "reason", None);
            assert_eq!(refusal.label(), label, "{capability}");
            assert_eq!(capability.looked_up(), looked_up, "{capability}");
            assert_eq!(
                serde_json::to_value(capability).unwrap(),
                capability.as_str()
            );
        }
    }

    #[test]
    fn a_denial_carries_the_rule_reason_and_fix() {
        let fix = Fix {
            key: "kv.max_key".into(),
            value: "\"1KiB\"".into(),
        };
        let refusal = Refusal::new(
            Capability::Kv,
            "kv:app",
            "kv.max_key",
            "too long",
            Some(fix),
        );
        let denial = refusal.denial("kv".into());
        assert_eq!(denial.capability, "kv");
        assert_eq!(denial.rule, "kv.max_key");
        assert_eq!(denial.reason, "too long");
        assert_eq!(denial.fix.as_deref(), Some("kv.max_key = \"1KiB\""));
    }
}
