//! `[capabilities]` resolved: the bridge global's name and one rule per allowed capability.

use super::raw::{RawCapabilities, RawCapability};
use super::units::ByteSize;
use super::{PolicyError, Source, pick};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// Capabilities the policy grants. Absent from a policy means none, and no bridge global.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Capabilities {
    /// The JS global that exposes the bridge: `host` unless the policy names another.
    pub global: String,
    /// Allowed capability names and their rules.
    pub allow: BTreeMap<String, CapabilityRule>,
}

/// What one capability may be used for, per call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CapabilityRule {
    /// Calls allowed per script call. Default 100.
    pub max_calls: u32,
    /// Largest JSON payload accepted. Default 64 KiB.
    pub max_payload: ByteSize,
    /// Largest response a `forward` URL may return, checked as it streams in. Default 1 MiB.
    pub max_response: ByteSize,
    /// JSON Schema the payload must match, checked before the handler runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema: Option<Schema>,
    /// An `http://` URL the host POSTs the payload to when the embedder registered no handler
    /// (the CLI registers none): the JSON response body is the result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forward: Option<String>,
}

/// A compiled JSON Schema, compared and printed by its source.
#[derive(Clone)]
pub struct Schema {
    source: serde_json::Value,
    validator: Arc<jsonschema::Validator>,
}

impl Schema {
    /// Compile `source`, or say why it is not a valid JSON Schema.
    pub fn new(source: serde_json::Value) -> Result<Schema, String> {
        let validator = jsonschema::validator_for(&source)
            .map_err(|e| format!("not a valid JSON Schema: {e}"))?;
        Ok(Schema {
            source,
            validator: Arc::new(validator),
        })
    }

    /// The schema as the policy wrote it.
    pub fn source(&self) -> &serde_json::Value {
        &self.source
    }

    /// Why `payload` does not match, or `None` when it does.
    pub fn check(&self, payload: &serde_json::Value) -> Option<String> {
        self.validator.iter_errors(payload).next().map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("{e} (at {at})")
            }
        })
    }
}

impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Schema({})", self.source)
    }
}

impl PartialEq for Schema {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Eq for Schema {}

impl Serialize for Schema {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.source.serialize(s)
    }
}

pub(crate) const DEFAULT_GLOBAL: &str = "host";
const DEFAULT_MAX_CALLS: u32 = 100;
/// Payloads are copied out of the guest and parsed by the host; this bounds that work per call.
const DEFAULT_MAX_PAYLOAD: ByteSize = ByteSize(64 << 10);
/// Largest `max_payload` and `max_response` of a capability.
pub(crate) const MAX_PAYLOAD_LIMIT: ByteSize = ByteSize(16 << 20);
/// A forwarded response is held by the host until the guest takes it; this bounds each one.
const DEFAULT_MAX_RESPONSE: ByteSize = ByteSize(1 << 20);

/// Globals a script relies on; the bridge may not replace them.
const RESERVED_GLOBALS: &[&str] = &[
    "globalThis",
    "console",
    "Object",
    "Function",
    "Array",
    "Number",
    "String",
    "Boolean",
    "Symbol",
    "Math",
    "JSON",
    "Date",
    "RegExp",
    "Promise",
    "Proxy",
    "Reflect",
    "Error",
    "TypeError",
    "RangeError",
    "SyntaxError",
    "ReferenceError",
    "Map",
    "Set",
    "WeakMap",
    "WeakSet",
    "BigInt",
    "ArrayBuffer",
    "Uint8Array",
    "TextEncoder",
    "TextDecoder",
    "PolicyDeniedError",
    "CapabilityError",
    "undefined",
    "NaN",
    "Infinity",
    "eval",
];

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// `[capabilities]` resolved: the bridge global's name and one rule per capability.
pub(super) fn resolve(
    raw: &RawCapabilities,
    source: &Source<'_>,
) -> Result<Capabilities, PolicyError> {
    let global = match &raw.global {
        Some(g) => {
            let name = g.get_ref();
            if !is_identifier(name) {
                return Err(source.error(
                    "capabilities.global",
                    Some(g.span()),
                    format!("`{name}` is not a JavaScript identifier"),
                ));
            }
            if RESERVED_GLOBALS.contains(&name.as_str()) {
                return Err(source.error(
                    "capabilities.global",
                    Some(g.span()),
                    format!("`{name}` is a built-in global; choose another name"),
                ));
            }
            name.clone()
        }
        None => DEFAULT_GLOBAL.to_owned(),
    };
    let mut allow = BTreeMap::new();
    for (name, rule) in &raw.allow {
        let key = format!("capabilities.allow.{name}");
        if name.is_empty() || name.len() > 128 {
            return Err(source.error(
                &key,
                Some(rule.span()),
                "a capability name has 1 to 128 characters",
            ));
        }
        allow.insert(name.clone(), resolve_rule(&key, rule.get_ref(), source)?);
    }
    Ok(Capabilities { global, allow })
}

/// One capability's rule, at `key`: its quotas in their ranges, its schema compiled, its
/// `forward` URL checked.
fn resolve_rule(
    key: &str,
    rule: &RawCapability,
    source: &Source<'_>,
) -> Result<CapabilityRule, PolicyError> {
    let max_calls = match &rule.max_calls {
        Some(n) if *n.get_ref() == 0 => {
            return Err(source.error(
                &format!("{key}.max_calls"),
                Some(n.span()),
                "must be at least 1; remove the capability to deny it",
            ));
        }
        Some(n) => *n.get_ref(),
        None => DEFAULT_MAX_CALLS,
    };
    let payload_bounds = (ByteSize(2), MAX_PAYLOAD_LIMIT);
    let max_payload = pick(
        source,
        &format!("{key}.max_payload"),
        &rule.max_payload,
        DEFAULT_MAX_PAYLOAD,
        payload_bounds,
    )?;
    let max_response = pick(
        source,
        &format!("{key}.max_response"),
        &rule.max_response,
        DEFAULT_MAX_RESPONSE,
        payload_bounds,
    )?;
    let schema = match &rule.schema {
        None => None,
        Some(schema) => {
            let err = |m: String| source.error(&format!("{key}.schema"), None, m);
            let value = serde_json::to_value(schema).map_err(|e| err(e.to_string()))?;
            Some(Schema::new(value).map_err(err)?)
        }
    };
    let forward = match &rule.forward {
        None => None,
        Some(url) => {
            let text = url.get_ref();
            match url::Url::parse(text) {
                Ok(parsed) if parsed.scheme() == "http" && parsed.host().is_some() => {
                    Some(text.clone())
                }
                _ => {
                    return Err(source.error(
                        &format!("{key}.forward"),
                        Some(url.span()),
                        format!(
                            "`{text}` is not an http:// URL such as \"http://127.0.0.1:9000/do\""
                        ),
                    ));
                }
            }
        }
    };
    Ok(CapabilityRule {
        max_calls,
        max_payload,
        max_response,
        schema,
        forward,
    })
}
