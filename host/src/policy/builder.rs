//! Policies from code: a typed builder, `Policy::from_json`, and the JSON Schema of the format.
//!
//! Both write the policy as TOML and read it back through [`Policy::from_toml`], so a policy
//! made in code passes exactly the checks a policy file passes and resolves the same way. Their
//! errors name the key path (`limits.memory`); they carry no line, since the TOML they refer to
//! was never written by anyone.
mod json;
mod tables;

use super::raw::{RawCapabilities, RawDeterminism, RawFs, RawMount, RawPolicy, RawSecret};
use super::{ByteSize, HumanDuration, MountMode, Policy, PolicyError};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime};
pub use tables::{
    CapabilityBuilder, HttpBuilder, HttpRuleBuilder, KvBuilder, OverridesBuilder, ScratchBuilder,
};
use toml::Spanned;

/// A value as if it had been read from a file; the span is never shown (errors drop it).
fn typed<T>(value: T) -> Spanned<T> {
    Spanned::new(0..0, value)
}

fn mode(mode: MountMode) -> String {
    match mode {
        MountMode::Ro => "ro".to_owned(),
        MountMode::Rw => "rw".to_owned(),
    }
}

/// An error about TOML that only Palisade wrote: keep the key and the message, drop the place.
fn unplaced(error: PolicyError, file: Option<&Path>) -> PolicyError {
    PolicyError {
        file: file.map(Path::to_path_buf),
        line: None,
        column: None,
        ..error
    }
}

/// Builds a [`Policy`] in code: every table of the policy format, checked by the same rules as a
/// policy file when [`PolicyBuilder::build`] is called.
///
/// ```
/// use palisade::Policy;
/// use palisade::policy::{ByteSize, BucketMode, HttpBuilder, HttpRuleBuilder, KvBuilder};
/// use std::time::Duration;
///
/// let policy = Policy::builder("tenant-42")
///     .memory(ByteSize(128 << 20))
///     .timeout(Duration::from_secs(2))
///     .http(HttpBuilder::new().allow(HttpRuleBuilder::new("https://api.example.com/v1/")))
///     .kv(KvBuilder::new("tenant-42").bucket("state", BucketMode::Rw))
///     .config("region", "eu")
///     .build()
///     .unwrap();
/// assert_eq!(policy.limits().memory, ByteSize(128 << 20));
/// ```
#[derive(Debug, Default)]
pub struct PolicyBuilder {
    raw: RawPolicy,
    /// The first value TOML cannot hold, reported by `build`.
    error: Option<PolicyError>,
}

impl Policy {
    /// A builder for a policy named `name`, with nothing granted and the default limits.
    pub fn builder(name: impl Into<String>) -> PolicyBuilder {
        PolicyBuilder {
            raw: RawPolicy {
                name: Some(typed(name.into())),
                ..RawPolicy::default()
            },
            error: None,
        }
    }
}

impl PolicyBuilder {
    /// What the policy is for, for people.
    pub fn description(mut self, text: impl Into<String>) -> Self {
        self.raw.description = Some(text.into());
        self
    }

    /// `limits.fuel`.
    pub fn fuel(mut self, fuel: u64) -> Self {
        self.raw.limits.fuel = Some(typed(fuel));
        self
    }

    /// `limits.memory`.
    pub fn memory(mut self, size: ByteSize) -> Self {
        self.raw.limits.memory = Some(typed(size));
        self
    }

    /// `limits.timeout`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.raw.limits.timeout = Some(typed(HumanDuration(timeout)));
        self
    }

    /// `limits.stack`.
    pub fn stack(mut self, size: ByteSize) -> Self {
        self.raw.limits.stack = Some(typed(size));
        self
    }

    /// `limits.output`.
    pub fn output(mut self, size: ByteSize) -> Self {
        self.raw.limits.output = Some(typed(size));
        self
    }

    /// `limits.input`.
    pub fn input(mut self, size: ByteSize) -> Self {
        self.raw.limits.input = Some(typed(size));
        self
    }

    /// `limits.console`.
    pub fn console(mut self, size: ByteSize) -> Self {
        self.raw.limits.console = Some(typed(size));
        self
    }

    /// `limits.transcript`.
    pub fn transcript(mut self, size: ByteSize) -> Self {
        self.raw.limits.transcript = Some(typed(size));
        self
    }

    /// `[http]`: network access.
    pub fn http(mut self, http: HttpBuilder) -> Self {
        self.raw.http = Some(http.raw);
        self
    }

    /// `[kv]`: the key-value store.
    pub fn kv(mut self, kv: KvBuilder) -> Self {
        self.raw.kv = Some(kv.raw);
        self
    }

    /// `[config]`: a value the script reads with `config.get(key)`.
    pub fn config(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.raw
            .config
            .get_or_insert_with(BTreeMap::new)
            .insert(key.into(), value.into());
        self
    }

    /// `capabilities.global`: the global the script calls capabilities through.
    pub fn capability_global(mut self, global: impl Into<String>) -> Self {
        self.raw
            .capabilities
            .get_or_insert_with(RawCapabilities::default)
            .global = Some(typed(global.into()));
        self
    }

    /// `[capabilities.allow.NAME]`: a host capability the script may call.
    pub fn capability(mut self, name: impl Into<String>, rule: CapabilityBuilder) -> Self {
        let name = name.into();
        if let (None, Some(at)) = (&self.error, &rule.bad_schema) {
            self.error = Some(PolicyError {
                file: None,
                key: format!("capabilities.allow.{name}.schema"),
                line: None,
                column: None,
                message: format!("cannot be written as TOML: a null at `{at}`; leave it out"),
            });
        }
        self.raw
            .capabilities
            .get_or_insert_with(RawCapabilities::default)
            .allow
            .insert(name, typed(rule.raw));
        self
    }

    /// `[secrets] NAME = { env = "VAR" }`: a secret read from the host's environment.
    pub fn secret_from_env(mut self, name: impl Into<String>, var: impl Into<String>) -> Self {
        let secret = RawSecret {
            env: Some(var.into()),
            file: None,
        };
        self.raw
            .secrets
            .get_or_insert_with(BTreeMap::new)
            .insert(name.into(), typed(secret));
        self
    }

    /// `[secrets] NAME = { file = "path" }`: a secret read from a host file.
    pub fn secret_from_file(mut self, name: impl Into<String>, path: impl AsRef<Path>) -> Self {
        let secret = RawSecret {
            env: None,
            file: Some(path.as_ref().to_string_lossy().into_owned()),
        };
        self.raw
            .secrets
            .get_or_insert_with(BTreeMap::new)
            .insert(name.into(), typed(secret));
        self
    }

    /// `[[fs.mount]]`: a host directory at `guest`, read-only or writable. A writable mount
    /// takes the default quota and file limit unless [`PolicyBuilder::mount_quota`] follows.
    pub fn mount(mut self, host: impl AsRef<Path>, guest: impl Into<String>, m: MountMode) -> Self {
        let mount = RawMount {
            host: host.as_ref().to_string_lossy().into_owned(),
            guest: guest.into(),
            mode: Some(mode(m)),
            quota: None,
            max_files: None,
        };
        self.raw
            .fs
            .get_or_insert_with(RawFs::default)
            .mount
            .push(typed(mount));
        self
    }

    /// The quota and file limit of the mount added last (`rw` mounts only).
    pub fn mount_quota(mut self, quota: ByteSize, max_files: u64) -> Self {
        if let Some(mount) = self.raw.fs.as_mut().and_then(|fs| fs.mount.last_mut()) {
            let mount = mount.get_mut();
            mount.quota = Some(quota);
            mount.max_files = Some(max_files);
        }
        self
    }

    /// `[fs.scratch]`: a fresh writable directory for every call.
    pub fn scratch(mut self, scratch: ScratchBuilder) -> Self {
        self.raw.fs.get_or_insert_with(RawFs::default).scratch = Some(typed(scratch.raw));
        self
    }

    /// `[determinism]`: the wall clock stands at `instant` (`clock = "fixed"`).
    pub fn fixed_clock(mut self, instant: SystemTime) -> Self {
        let at = humantime::format_rfc3339(instant).to_string();
        let d = self
            .raw
            .determinism
            .get_or_insert_with(RawDeterminism::default);
        d.clock = Some(typed("fixed".to_owned()));
        d.instant = Some(typed(at));
        self
    }

    /// `determinism.seed`: the seed of `Math.random` and WASI randomness.
    pub fn seed(mut self, seed: u64) -> Self {
        self.raw
            .determinism
            .get_or_insert_with(RawDeterminism::default)
            .seed = Some(seed);
        self
    }

    /// `[overrides]`: the ceilings a call's options may raise `timeout`, `fuel` and `memory` to,
    /// and whether they may fix the clock, the seed and which `[config]` keys.
    pub fn overrides(mut self, overrides: OverridesBuilder) -> Self {
        self.raw.overrides = Some(overrides.raw);
        self
    }

    /// The policy file this builder describes: [`Policy::from_toml`] of it gives the same
    /// policy as [`PolicyBuilder::build`], SHA-256 included.
    pub fn to_toml(&self) -> String {
        toml::to_string(&self.raw).expect("a policy's tables are TOML")
    }

    /// Check and resolve the policy. Relative paths are resolved against the current directory;
    /// the policy's SHA-256 is that of [`PolicyBuilder::to_toml`].
    pub fn build(&self) -> Result<Policy, PolicyError> {
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        Policy::from_toml(&self.to_toml(), None).map_err(|e| unplaced(e, None))
    }
}
