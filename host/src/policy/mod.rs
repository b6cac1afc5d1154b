//! Policy files: which capabilities a script may use, and how much.
//!
//! Parsing happens in two stages: a private module mirrors the TOML exactly (unknown keys are
//! errors), then [`Policy::from_toml`] resolves defaults and checks ranges into the [`Policy`]
//! the rest of Palisade sees. Every error names the key path and the line.
//!
//! One file per table resolves it: `limits`, `fs`, `determinism`, `http` (with `[secrets]`),
//! `kv` and `capabilities`; `host` spells host names canonically, `units` reads sizes and
//! durations, `error` locates what is wrong.

mod builder;
mod capabilities;
mod ceiling;
mod declarations;
mod derive;
mod determinism;
mod error;
mod fs;
mod host;
mod http;
mod kv;
mod limits;
mod overrides;
mod raw;
pub mod units;

pub use builder::{
    CapabilityBuilder, HttpBuilder, HttpRuleBuilder, KvBuilder, OverridesBuilder, PolicyBuilder,
    ScratchBuilder,
};
use capabilities::MAX_PAYLOAD_LIMIT;
pub use capabilities::{Capabilities, CapabilityRule, Schema};
pub use ceiling::PastCeiling;
pub use declarations::WEB_GLOBALS;
pub use determinism::{Clock, Determinism};
pub use error::PolicyError;
use error::{Source, pick};
pub use fs::{DEFAULT_MAX_FILES, DEFAULT_MOUNT_QUOTA, DEFAULT_SCRATCH_QUOTA, MAX_FILES_LIMIT};
pub use fs::{Fs, Mount, MountMode, Scratch};
pub(crate) use host::{HostError, canonical_host, split_host_port};
pub use http::{CaFile, DenyRule, HeaderValue, HostPattern, Http, HttpRule, Rate, SecretSource};
pub(crate) use http::{
    DEFAULT_MAX_REQUESTS, DEFAULT_MAX_RESPONSE_BODY, DEFAULT_TIMEOUT, MAX_REQUESTS_LIMIT,
};
pub use kv::{BucketMode, Kv};
use kv::{MAX_KEY_LIMIT, MAX_VALUE_LIMIT};
pub use limits::Limits;
pub(crate) use limits::bounds;
pub(crate) use overrides::CallSettings;
pub use overrides::{CONFIG_VALUE_MAX, Overrides};
pub use raw::AppRuntime;
use raw::RawPolicy;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::sync::Arc;
pub use units::{ByteSize, HumanDuration};

/// The largest values a policy accepts, as the ceilings of the fixes that suggest raising one:
/// `limits.input` and `limits.output`, `limits.memory` (the wasm32 address space), a
/// capability's `max_payload` and `max_response`, `kv.max_key` and `kv.max_value`.
pub(crate) const IO_MAX: u64 = bounds::IO.1.0;
pub(crate) const MEMORY_MAX: u64 = bounds::MEMORY.1.0;
pub(crate) const PAYLOAD_MAX: u64 = MAX_PAYLOAD_LIMIT.0;
pub(crate) const KV_KEY_MAX: u64 = MAX_KEY_LIMIT.0;
pub(crate) const KV_VALUE_MAX: u64 = MAX_VALUE_LIMIT.0;

/// The text of `policies/default.toml`, which is the built-in default policy.
pub const DEFAULT_POLICY_TOML: &str = include_str!("default.toml");

/// A validated policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Policy {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    /// Printed beside the policy, not in it: the resolved text is itself a valid policy.
    #[serde(skip)]
    sha256: String,
    /// The policy whose `http.rate` bucket meters this one's calls: its ceiling's SHA-256 for
    /// a policy sent with a call ([`Policy::metered_as`]), else `None` (its own).
    #[serde(skip)]
    rate_key: Option<String>,
    limits: Limits,
    #[serde(skip_serializing_if = "Option::is_none")]
    http: Option<Arc<Http>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kv: Option<Arc<Kv>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    capabilities: Option<Arc<Capabilities>>,
    /// Where each secret comes from; the values themselves are never printed.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    secrets: BTreeMap<String, SecretSource>,
    #[serde(skip_serializing_if = "Determinism::is_default")]
    determinism: Determinism,
    #[serde(skip_serializing_if = "Option::is_none")]
    config: Option<Arc<BTreeMap<String, String>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fs: Option<Fs>,
    #[serde(skip_serializing_if = "Overrides::is_default")]
    overrides: Overrides,
    #[serde(skip_serializing_if = "AppRuntime::is_default")]
    apps: AppRuntime,
}

impl Policy {
    /// The built-in default: exactly `policies/default.toml` (deny every capability, modest limits).
    pub fn builtin_default() -> Policy {
        Policy::from_toml(DEFAULT_POLICY_TOML, None).expect("policies/default.toml is valid")
    }

    /// Read and validate a policy file. Its name defaults to the file stem.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Policy, PolicyError> {
        let path = path.as_ref();
        let text =
            crate::hostfile::read_text(path, crate::hostfile::MAX_POLICY_BYTES).map_err(|e| {
                PolicyError {
                    file: Some(path.to_path_buf()),
                    key: String::new(),
                    line: None,
                    column: None,
                    message: format!("cannot read the policy file: {e}"),
                }
            })?;
        Policy::from_toml(&text, Some(path))
    }

    /// Validate a policy from TOML text; `file` is used in error messages and for the default name.
    pub fn from_toml(text: &str, file: Option<&Path>) -> Result<Policy, PolicyError> {
        let source = Source { text, file };
        let raw = parse(&source)?;
        let name = resolve_name(&raw, &source)?;
        let limits = limits::resolve(&raw.limits, &source)?;
        let overrides = overrides::resolve(&raw, &limits, &source)?;
        let capabilities = match &raw.capabilities {
            Some(raw) => Some(Arc::new(capabilities::resolve(raw, &source)?)),
            None => None,
        };
        let determinism = match &raw.determinism {
            Some(raw) => determinism::resolve(raw, &source)?,
            None => Determinism::default(),
        };
        if let Some(config) = &raw.config
            && let Some(key) = config.keys().find(|k| k.is_empty() || k.len() > 256)
        {
            return Err(source.error(
                "config",
                None,
                format!("config key `{key}` must have 1 to 256 characters"),
            ));
        }
        let fs = match &raw.fs {
            Some(raw) => Some(fs::resolve(raw, &source)?),
            None => None,
        };
        let secrets = match &raw.secrets {
            Some(raw) => http::resolve_secrets(raw, &source)?,
            None => BTreeMap::new(),
        };
        let kv = match &raw.kv {
            Some(raw) => Some(Arc::new(kv::resolve(raw, &source)?)),
            None => None,
        };
        let http = match &raw.http {
            Some(raw) => Some(Arc::new(http::resolve(raw, &secrets, &source)?)),
            None => None,
        };
        Ok(Policy {
            name,
            description: raw.description,
            sha256: crate::hex::sha256(text.as_bytes()),
            rate_key: None,
            limits,
            http,
            kv,
            capabilities,
            secrets: secrets
                .into_iter()
                .map(|(k, (from, _))| (k, from))
                .collect(),
            determinism,
            config: raw.config.map(Arc::new),
            fs,
            overrides,
            apps: raw.apps.unwrap_or_default(),
        })
    }

    /// The policy's name (its `name` key, else the file stem, else `inline`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// SHA-256 of the policy text, hex-encoded: which exact policy decided a call.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// Meter this policy's `http.rate` in `ceiling`'s bucket: a policy sent with a call, one of
    /// any number with their own SHA-256, shares the one bucket of the ceiling it fits in.
    pub fn metered_as(mut self, ceiling: &Policy) -> Policy {
        self.rate_key = Some(ceiling.rate_key().to_owned());
        self
    }

    /// Which `http.rate` bucket meters this policy's calls (a SHA-256).
    pub(crate) fn rate_key(&self) -> &str {
        self.rate_key.as_deref().unwrap_or(&self.sha256)
    }

    /// The resource limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Directories mounted into the guest, if any.
    pub fn fs(&self) -> Option<&Fs> {
        self.fs.as_ref()
    }

    /// Whether a call under this policy may reach a capability import: `[http]`,
    /// `[capabilities]`, `[kv]`, `[config]` or files. Such calls run in the full guest; the others
    /// in the plain guest, which imports none of them (and whose instances are quicker to make).
    pub fn grants_imports(&self) -> bool {
        self.http().is_some()
            || self.capabilities().is_some()
            || self.kv().is_some()
            || self.config().is_some()
            || self.grants_files()
    }

    /// Whether the script gets the `fs` global: a mount or a scratch directory.
    pub(crate) fn grants_files(&self) -> bool {
        self.fs
            .as_ref()
            .is_some_and(|fs| !fs.mount.is_empty() || fs.scratch.is_some())
    }

    /// Values the script reads with `config.get(key)`, from the `[config]` table.
    pub fn config(&self) -> Option<&Arc<BTreeMap<String, String>>> {
        self.config.as_ref()
    }

    /// What the script sees of time and randomness.
    pub fn determinism(&self) -> &Determinism {
        &self.determinism
    }

    /// Network access granted, if any.
    pub fn http(&self) -> Option<&Arc<Http>> {
        self.http.as_ref()
    }

    /// Key-value access granted, if any.
    pub fn kv(&self) -> Option<&Arc<Kv>> {
        self.kv.as_ref()
    }

    /// What an action app's calls may use of the runtime (`[apps]`).
    pub fn apps(&self) -> AppRuntime {
        self.apps
    }

    /// The host capabilities granted, if any.
    pub fn capabilities(&self) -> Option<&Arc<Capabilities>> {
        self.capabilities.as_ref()
    }
}

impl fmt::Display for Policy {
    /// The resolved policy as TOML, every default filled in.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = toml::to_string_pretty(self).map_err(|_| fmt::Error)?;
        f.write_str(&text)
    }
}

/// The first stage: the TOML text as written, every key known, every value of its type.
fn parse(source: &Source<'_>) -> Result<RawPolicy, PolicyError> {
    let text = source.text;
    let deserializer = toml::Deserializer::new(text);
    serde_path_to_error::deserialize(deserializer).map_err(|e| {
        // `Spanned` values show up as a private field in the path; drop it.
        let key = e
            .path()
            .to_string()
            .replace(".$__serde_spanned_private_value", "");
        let inner = e.into_inner();
        let key = if key == "." { String::new() } else { key };
        let mut message = inner.message().trim_end().to_owned();
        if message.is_empty() {
            // The TOML parser names no expectation for a character it takes nowhere,
            // such as a control character in a comment: name the character.
            let at = inner.span().map_or(0, |s| s.start);
            message = match text.get(at..).and_then(|rest| rest.chars().next()) {
                Some(c) => format!("U+{:04X} is not allowed here in TOML", u32::from(c)),
                None => "the TOML text ends too early".to_owned(),
            };
        }
        source.error(&key, inner.span(), message)
    })
}

/// The policy's `name`, not blank; else the file stem, else `inline`.
fn resolve_name(raw: &RawPolicy, source: &Source<'_>) -> Result<String, PolicyError> {
    Ok(match &raw.name {
        Some(name) if name.get_ref().trim().is_empty() => {
            return Err(source.error(
                "name",
                Some(name.span()),
                "the policy name must not be empty",
            ));
        }
        Some(name) => name.get_ref().clone(),
        None => source
            .file
            .and_then(Path::file_stem)
            .map_or_else(|| "inline".to_owned(), |s| s.to_string_lossy().into_owned()),
    })
}

/// A TOML key segment: bare when it can be, quoted otherwise.
pub(crate) fn toml_key(name: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::limits::DEFAULT_LIMITS;
    use super::*;

    #[test]
    fn builtin_default_has_the_default_limits() {
        let policy = Policy::builtin_default();
        assert_eq!(policy.name(), "default");
        assert_eq!(*policy.limits(), DEFAULT_LIMITS);
        assert_eq!(
            *Policy::from_toml("", None).unwrap().limits(),
            DEFAULT_LIMITS
        );
    }

    #[test]
    fn errors_name_the_key_and_line() {
        let err = Policy::from_toml("[limits]\nfuel = 10\nmemory = 64\n", None).unwrap_err();
        assert_eq!(err.key, "limits.memory");
        assert_eq!((err.line, err.column), (Some(3), Some(10)));
        assert!(err.message.contains("no unit"), "{}", err.message);
    }

    #[test]
    fn unknown_keys_are_errors() {
        let err = Policy::from_toml("[limits]\nfule = 10\n", None).unwrap_err();
        assert_eq!(err.key, "limits.fule");
        assert!(
            err.message.contains("unknown field `fule`"),
            "{}",
            err.message
        );
    }

    #[test]
    fn sha256_follows_the_text() {
        let a = Policy::from_toml("name = \"a\"\n", None).unwrap();
        let b = Policy::from_toml("name = \"a\" # same\n", None).unwrap();
        assert_ne!(a.sha256(), b.sha256());
        assert_eq!(a.sha256().len(), 64);
    }
}
