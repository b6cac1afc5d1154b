//! What the user typed: a serde mirror of the policy file, checked for shape but not resolved.

use super::units::{ByteSize, HumanDuration};
use serde::Deserialize;
use toml::Spanned;

/// The top level of a policy file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawPolicy {
    pub name: Option<Spanned<String>>,
    pub description: Option<String>,
    #[serde(default)]
    pub limits: RawLimits,
    pub http: Option<RawHttp>,
    pub kv: Option<RawKv>,
    pub config: Option<std::collections::BTreeMap<String, String>>,
    pub fs: Option<RawFs>,
    pub capabilities: Option<RawCapabilities>,
    pub secrets: Option<std::collections::BTreeMap<String, Spanned<RawSecret>>>,
    pub determinism: Option<RawDeterminism>,
}

/// `[limits]`: every key optional; a missing key takes the built-in default.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLimits {
    pub fuel: Option<Spanned<u64>>,
    pub memory: Option<Spanned<ByteSize>>,
    pub timeout: Option<Spanned<HumanDuration>>,
    pub stack: Option<Spanned<ByteSize>>,
    pub output: Option<Spanned<ByteSize>>,
    pub input: Option<Spanned<ByteSize>>,
    pub console: Option<Spanned<ByteSize>>,
    pub transcript: Option<Spanned<ByteSize>>,
}

/// `[capabilities]`: the bridge global and the allowed host capabilities.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCapabilities {
    pub global: Option<Spanned<String>>,
    #[serde(default)]
    pub allow: std::collections::BTreeMap<String, Spanned<RawCapability>>,
}

/// `[capabilities.allow.NAME]`: one capability the script may call.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCapability {
    pub max_calls: Option<Spanned<u32>>,
    pub max_payload: Option<Spanned<ByteSize>>,
    pub max_response: Option<Spanned<ByteSize>>,
    pub schema: Option<Spanned<toml::Value>>,
    pub forward: Option<Spanned<String>>,
}

/// `[determinism]`: fixed clocks and a seeded random generator.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDeterminism {
    pub clock: Option<Spanned<String>>,
    pub instant: Option<Spanned<String>>,
    pub seed: Option<u64>,
}

/// `[fs]`: directories mounted into the guest.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFs {
    #[serde(default)]
    pub mount: Vec<Spanned<RawMount>>,
    pub scratch: Option<Spanned<RawScratch>>,
}

/// `[fs.scratch]`: a fresh writable directory for every call, optionally seeded.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScratch {
    pub guest: String,
    pub quota: Option<ByteSize>,
    pub max_files: Option<u64>,
    #[serde(default)]
    pub seed: Vec<String>,
}

/// `[[fs.mount]]`: one host directory at one guest path.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawMount {
    pub host: String,
    pub guest: String,
    pub mode: Option<String>,
    pub quota: Option<ByteSize>,
    pub max_files: Option<u64>,
}

/// `[http]`: network access.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHttp {
    pub max_requests: Option<Spanned<u32>>,
    pub max_request_body: Option<Spanned<ByteSize>>,
    pub max_response_body: Option<Spanned<ByteSize>>,
    pub timeout: Option<Spanned<HumanDuration>>,
    pub rate: Option<Spanned<String>>,
    #[serde(default)]
    pub allow_private: Vec<Spanned<String>>,
    #[serde(default)]
    pub allow_private_hosts: Vec<Spanned<String>>,
    pub ca_file: Option<Spanned<String>>,
    #[serde(default)]
    pub allow: Vec<Spanned<RawHttpRule>>,
}

/// `[[http.allow]]`: one allowed target.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHttpRule {
    pub url: String,
    pub methods: Option<Vec<String>>,
    #[serde(default)]
    pub headers: std::collections::BTreeMap<String, String>,
}

/// `[secrets] NAME = { env = "VAR" }` or `{ file = "path" }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSecret {
    pub env: Option<String>,
    pub file: Option<String>,
}

/// `[kv]`: the key-value store.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawKv {
    pub namespace: Option<Spanned<String>>,
    pub max_key: Option<Spanned<ByteSize>>,
    pub max_value: Option<Spanned<ByteSize>>,
    pub max_keys: Option<Spanned<u64>>,
    /// Bucket name to mode, in the order written (the first is the default bucket).
    #[serde(default)]
    pub buckets: std::collections::BTreeMap<String, Spanned<String>>,
}
