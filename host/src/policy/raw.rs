//! What the user typed: a serde mirror of the policy file, checked for shape but not resolved.
//!
//! The same types describe the format three ways: they read a policy file (`Deserialize`),
//! the builder writes one (`Serialize`, `super::builder`), and the JSON Schema of the format is
//! generated from them (`JsonSchema`, `palisade policy schema`). A `Spanned` value is described
//! by the value it holds.

use super::units::{ByteSize, HumanDuration};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use toml::Spanned;

/// A Palisade policy: which capabilities a script may use, and how much.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Palisade policy")]
pub struct RawPolicy {
    /// The policy's name (default: the file stem, else `inline`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub name: Option<Spanned<String>>,
    /// What the policy is for, for people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub limits: RawLimits,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http: Option<RawHttp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv: Option<RawKv>,
    /// `[config]`: read-only values the script reads with `config.get(key)`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config: Option<BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fs: Option<RawFs>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<RawCapabilities>,
    /// `[secrets]`: values the host injects into HTTP headers, by name.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<BTreeMap<String, RawSecret>>")]
    pub secrets: Option<BTreeMap<String, Spanned<RawSecret>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub determinism: Option<RawDeterminism>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overrides: Option<RawOverrides>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub apps: Option<AppRuntime>,
}

/// `[apps]`: what the calls of an action app under this policy may use of the JavaScript
/// runtime (`palisade serve`'s apps, docs/apps.md; other calls ignore it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
#[schemars(rename = "Apps")]
pub struct AppRuntime {
    /// `setTimeout`, `setInterval` and their `clear…` functions (default `false`: off).
    pub timers: bool,
    /// `eval` and the `Function` constructors (default `true`).
    pub eval: bool,
}

impl AppRuntime {
    pub(super) fn is_default(&self) -> bool {
        *self == AppRuntime::default()
    }
}

impl Default for AppRuntime {
    fn default() -> Self {
        AppRuntime {
            timers: false,
            eval: true,
        }
    }
}

/// `[limits]`: every key optional; a missing key takes the built-in default.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Limits")]
pub struct RawLimits {
    /// Wasm fuel: roughly one unit per wasm instruction executed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<u64>", range(min = 1))]
    pub fuel: Option<Spanned<u64>>,
    /// Maximum size of the guest's linear memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ByteSize>")]
    pub memory: Option<Spanned<ByteSize>>,
    /// Wall-clock deadline for the whole call.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<HumanDuration>")]
    pub timeout: Option<Spanned<HumanDuration>>,
    /// Maximum native wasm stack.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ByteSize>")]
    pub stack: Option<Spanned<ByteSize>>,
    /// Maximum size of the JSON result.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ByteSize>")]
    pub output: Option<Spanned<ByteSize>>,
    /// Maximum size of the JSON input.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ByteSize>")]
    pub input: Option<Spanned<ByteSize>>,
    /// Console bytes kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ByteSize>")]
    pub console: Option<Spanned<ByteSize>>,
    /// Largest transcript a recorded call keeps.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ByteSize>")]
    pub transcript: Option<Spanned<ByteSize>>,
}

/// `[capabilities]`: the bridge global and the allowed host capabilities.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Capabilities")]
pub struct RawCapabilities {
    /// The global the script calls capabilities through (default `host`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub global: Option<Spanned<String>>,
    /// The capabilities the script may call, by name.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, RawCapability>")]
    pub allow: BTreeMap<String, Spanned<RawCapability>>,
}

/// `[capabilities.allow.NAME]`: one capability the script may call.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Capability")]
pub struct RawCapability {
    /// Calls per script run.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<u32>")]
    pub max_calls: Option<Spanned<u32>>,
    /// Largest JSON payload of one call.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ByteSize>")]
    pub max_payload: Option<Spanned<ByteSize>>,
    /// Largest JSON response of one call.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ByteSize>")]
    pub max_response: Option<Spanned<ByteSize>>,
    /// A JSON Schema every payload must satisfy. Not `Spanned`: toml cannot span a table that
    /// only dotted headers make (`[capabilities.allow.do.schema.properties.op]`), which is how
    /// `palisade policy check` prints a schema whose top level holds only tables.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Value>")]
    pub schema: Option<toml::Value>,
    /// A URL the host posts each call to, instead of a registered handler.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub forward: Option<Spanned<String>>,
}

/// `[determinism]`: fixed clocks and a seeded random generator.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Determinism")]
pub struct RawDeterminism {
    /// `real` (default) or `fixed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ClockName>")]
    pub clock: Option<Spanned<String>>,
    /// The instant a fixed clock reads, RFC 3339 UTC (`2024-01-01T00:00:00Z`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub instant: Option<Spanned<String>>,
    /// Seed of `Math.random` and WASI randomness.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(range(max = 9_223_372_036_854_775_807u64))]
    pub seed: Option<u64>,
}

/// `[fs]`: directories mounted into the guest.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Fs")]
pub struct RawFs {
    /// Host directories mounted into the guest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<RawMount>")]
    pub mount: Vec<Spanned<RawMount>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<RawScratch>")]
    pub scratch: Option<Spanned<RawScratch>>,
}

/// `[fs.scratch]`: a fresh writable directory for every call, optionally seeded.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Scratch")]
pub struct RawScratch {
    /// Absolute path the script uses, such as `/scratch`.
    pub guest: String,
    /// The most bytes the directory may hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota: Option<ByteSize>,
    /// The most entries it may hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_files: Option<u64>,
    /// Host files and directories copied in at the start of each call.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seed: Vec<String>,
}

/// `[[fs.mount]]`: one host directory at one guest path.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Mount")]
pub struct RawMount {
    /// Host directory, relative to the policy file's folder.
    pub host: String,
    /// Absolute path the script uses, such as `/workspace`.
    pub guest: String,
    /// `ro` (default) or `rw`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ModeName>")]
    pub mode: Option<String>,
    /// For `rw` mounts: the most bytes the directory may hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota: Option<ByteSize>,
    /// For `rw` mounts: the most entries it may hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_files: Option<u64>,
}

/// `[http]`: network access.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Http")]
pub struct RawHttp {
    /// Requests per call.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<u32>")]
    pub max_requests: Option<Spanned<u32>>,
    /// Largest request body.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ByteSize>")]
    pub max_request_body: Option<Spanned<ByteSize>>,
    /// Response bytes per call, decoded.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ByteSize>")]
    pub max_response_body: Option<Spanned<ByteSize>>,
    /// Deadline of one request.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<HumanDuration>")]
    pub timeout: Option<Spanned<HumanDuration>>,
    /// Requests per second, minute or hour (`600/min`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub rate: Option<Spanned<String>>,
    /// Private address ranges the allow rules may reach (`10.0.0.0/8`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<String>")]
    pub allow_private: Vec<Spanned<String>>,
    /// Host names that may resolve to private addresses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<String>")]
    pub allow_private_hosts: Vec<Spanned<String>>,
    /// A PEM file of extra certificate authorities.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub ca_file: Option<Spanned<String>>,
    /// The URLs a script may fetch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<RawHttpRule>")]
    pub allow: Vec<Spanned<RawHttpRule>>,
    /// URLs a script may not fetch, checked before the allow rules.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<RawHttpDeny>")]
    pub deny: Vec<Spanned<RawHttpDeny>>,
}

/// `[[http.deny]]`: a target refused whatever the allow rules say.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "HttpDeny")]
pub struct RawHttpDeny {
    /// `scheme://host[:port]/path-prefix`, as an allow rule writes it.
    pub url: String,
    /// The methods refused (default: every method).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub methods: Option<Vec<String>>,
}

/// `[[http.allow]]`: one allowed target.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "HttpRule")]
pub struct RawHttpRule {
    /// `scheme://host[:port]/path-prefix`; `*.` before a host allows its subdomains.
    pub url: String,
    /// Allowed methods (default `GET` and `HEAD`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub methods: Option<Vec<String>>,
    /// Headers the host injects; `${secret:NAME}` inserts a secret.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

/// `[secrets] NAME = { env = "VAR" }` or `{ file = "path" }`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Secret")]
pub struct RawSecret {
    /// An environment variable of the host process.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub env: Option<String>,
    /// A file on the host, relative to the policy file's folder.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// `[kv]`: the key-value store.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Kv")]
pub struct RawKv {
    /// Keeps this policy's keys apart from every other policy's (required).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub namespace: Option<Spanned<String>>,
    /// Largest key.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ByteSize>")]
    pub max_key: Option<Spanned<ByteSize>>,
    /// Largest value.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ByteSize>")]
    pub max_value: Option<Spanned<ByteSize>>,
    /// Most keys in the namespace.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<u64>")]
    pub max_keys: Option<Spanned<u64>>,
    /// Bucket name to mode; the first written (the earliest span) is the default bucket.
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        serialize_with = "in_written_order"
    )]
    #[schemars(with = "BTreeMap<String, ModeName>")]
    pub buckets: BTreeMap<String, Spanned<String>>,
}

/// Buckets written in the order of their spans, so that the first one stays the default when
/// the text is read again (the builder gives each bucket its place as its span).
fn in_written_order<S: serde::Serializer>(
    buckets: &BTreeMap<String, Spanned<String>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut ordered: Vec<_> = buckets.iter().collect();
    ordered.sort_by_key(|(_, mode)| mode.span().start);
    let mut map = s.serialize_map(Some(ordered.len()))?;
    for (name, mode) in ordered {
        map.serialize_entry(name, mode.get_ref())?;
    }
    map.end()
}

/// Read-only or read-write, as a mount or a bucket writes it (schema only).
#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum ModeName {
    Ro,
    Rw,
}

/// The clock a policy names (schema only).
#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum ClockName {
    Real,
    Fixed,
}

/// `[overrides]` as written.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Overrides")]
pub struct RawOverrides {
    /// The longest deadline a call may ask for; at least `limits.timeout`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<HumanDuration>")]
    pub timeout: Option<Spanned<HumanDuration>>,
    /// The most fuel a call may ask for; at least `limits.fuel`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<u64>", range(min = 1))]
    pub fuel: Option<Spanned<u64>>,
    /// The most memory a call may ask for; at least `limits.memory`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<ByteSize>")]
    pub memory: Option<Spanned<ByteSize>>,
    /// A call may fix the clock at an instant of its choosing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub now: bool,
    /// A call may choose the seed of `Math.random` and WASI randomness.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub seed: bool,
    /// The `[config]` keys a call may set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub config: Vec<String>,
}
