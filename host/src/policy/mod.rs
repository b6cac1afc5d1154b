//! Policy files: which capabilities a script may use, and how much.
//!
//! Parsing happens in two stages: a private module mirrors the TOML exactly (unknown keys are
//! errors), then [`Policy::from_toml`] resolves defaults and checks ranges into the [`Policy`]
//! the rest of Palisade sees. Every error names the key path and the line.

mod capabilities;
mod derive;
mod http;
mod kv;
mod raw;
pub mod units;

pub use capabilities::{Capabilities, CapabilityRule, Schema};
pub use http::{CaFile, HeaderValue, HostPattern, Http, HttpRule, Rate, SecretSource};
pub(crate) use http::{DEFAULT_MAX_REQUESTS, DEFAULT_MAX_RESPONSE_BODY, DEFAULT_TIMEOUT};
pub(crate) use http::{HostError, canonical_host, split_host_port};
pub use kv::{BucketMode, Kv};
use raw::{RawLimits, RawPolicy};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
pub use units::{ByteSize, HumanDuration};

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
}

/// `[fs]`: host directories mounted into the guest, and a per-call scratch directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fs {
    /// Host directories mounted into the guest (`[[fs.mount]]`).
    pub mount: Vec<Mount>,
    /// The per-call scratch directory (`[fs.scratch]`), if the policy asks for one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scratch: Option<Scratch>,
}

/// A writable directory that exists for one call: created empty (or seeded from host files)
/// in memory-backed storage when the host has it (`/dev/shm`), removed when the call ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Scratch {
    /// Absolute path the script uses, such as `/scratch`.
    pub guest: String,
    /// The most bytes the directory may hold, seed included.
    pub quota: ByteSize,
    /// The most entries (files, directories, links) it may hold, seed included.
    pub max_files: u64,
    /// Host files and directories copied in at the start of each call (a directory's
    /// contents, a file under its own name). Absolute, resolved against the policy's folder.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub seed: Vec<PathBuf>,
}

/// One mount: a host directory, visible to the script at `guest`, read-only unless `rw`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mount {
    /// Absolute host path (relative paths in a policy file are resolved against its folder).
    pub host: PathBuf,
    /// Absolute path the script uses, such as `/workspace`.
    pub guest: String,
    /// `"ro"` or `"rw"`.
    pub mode: MountMode,
    /// For `rw` mounts: the most bytes the directory may hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota: Option<ByteSize>,
    /// For `rw` mounts: the most entries (files, directories, links) it may hold.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_files: Option<u64>,
}

/// Default quota of a `rw` mount.
pub const DEFAULT_MOUNT_QUOTA: ByteSize = ByteSize(256 << 20);
/// Default quota of the scratch directory (memory-backed on most hosts).
pub const DEFAULT_SCRATCH_QUOTA: ByteSize = ByteSize(64 << 20);
/// Default `max_files` of a `rw` mount and of the scratch directory. It also bounds the
/// walk that measures a mount (one `fstatat` per entry, about 10 ms for 10,000 entries).
pub const DEFAULT_MAX_FILES: u64 = 10_000;
/// Largest `max_files` a policy may set: each entry costs the host a `fstatat` when the
/// directory is measured.
pub const MAX_FILES_LIMIT: u64 = 1_000_000;

/// Whether a mount can be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MountMode {
    /// Read-only (`ro`).
    Ro,
    /// Read-write (`rw`), within the mount's quotas.
    Rw,
}

/// `[determinism]`: what the script sees of time and randomness.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Determinism {
    /// The wall clock the script reads (`Date.now()`, `new Date()`).
    pub clock: Clock,
    /// Seed for `Math.random` and WASI randomness; `None` draws a fresh seed for every call.
    pub seed: Option<u64>,
}

/// Written back as the policy file spells it: `clock`, `instant`, `seed`.
impl Serialize for Determinism {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        match self.clock {
            Clock::Real => map.serialize_entry("clock", "real")?,
            Clock::Fixed(at) => {
                map.serialize_entry("clock", "fixed")?;
                let at = humantime::format_rfc3339(std::time::UNIX_EPOCH + at).to_string();
                map.serialize_entry("instant", &at)?;
            }
        }
        if let Some(seed) = self.seed {
            map.serialize_entry("seed", &seed)?;
        }
        map.end()
    }
}

impl Determinism {
    fn is_default(&self) -> bool {
        *self == Determinism::default()
    }
}

/// Wall clock of a call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Clock {
    /// The host's real time.
    #[default]
    Real,
    /// Always this instant (time since the Unix epoch); the monotonic clock stands still.
    Fixed(Duration),
}

/// Resource limits of one call. Each one is enforced below QuickJS, in wasm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// Wasm fuel: roughly one unit per wasm instruction executed.
    pub fuel: u64,
    /// Maximum size of the guest's linear memory.
    pub memory: ByteSize,
    /// Wall-clock deadline for the whole call, host waits included.
    pub timeout: HumanDuration,
    /// Maximum native wasm stack.
    pub stack: ByteSize,
    /// Maximum size of the JSON result.
    pub output: ByteSize,
    /// Maximum size of the JSON input.
    pub input: ByteSize,
    /// Console bytes kept; later lines are dropped and a marker says how much.
    pub console: ByteSize,
    /// Largest transcript a recorded call keeps (`--record`, `run_recorded`), as written;
    /// recording stops there. Also the largest transcript file `--replay` reads.
    pub transcript: ByteSize,
}

/// Accepted range of each limit. Each bound names what it protects.
mod bounds {
    use super::{ByteSize, Duration};
    /// The guest's 6 MiB shadow stack, the snapshot's own heap and QuickJS's first allocations
    /// need about 10 MiB; a wasm32 memory cannot exceed 4 GiB.
    pub const MEMORY: (ByteSize, ByteSize) = (ByteSize(12 << 20), ByteSize(4 << 30));
    /// An hour bounds how long one call can hold a pool slot.
    pub const TIMEOUT: (Duration, Duration) = (Duration::from_millis(1), Duration::from_secs(3600));
    /// The stack is reserved per in-flight call; 64 KiB is the least QuickJS can run with.
    pub const STACK: (ByteSize, ByteSize) = (ByteSize(64 << 10), ByteSize(16 << 20));
    /// Input and output cross the host boundary as one string each.
    pub const IO: (ByteSize, ByteSize) = (ByteSize(16), ByteSize(256 << 20));
    /// Console lines are held in the host's memory until the call ends.
    pub const CONSOLE: (ByteSize, ByteSize) = (ByteSize(0), ByteSize(64 << 20));
    /// A transcript is held in host memory while its call runs, and once more while it is
    /// written: 1 GiB bounds that; 64 KiB holds a small call's clock reads and answers.
    pub const TRANSCRIPT: (ByteSize, ByteSize) = (ByteSize(64 << 10), ByteSize(1 << 30));
}

/// A policy that could not be read or validated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("{}", self.render())]
pub struct PolicyError {
    /// The file, when the policy came from one.
    pub file: Option<PathBuf>,
    /// Dotted key path (`limits.memory`), empty for the document as a whole.
    pub key: String,
    /// 1-based line of the offending value.
    pub line: Option<usize>,
    /// 1-based column of the offending value.
    pub column: Option<usize>,
    /// What is wrong, and how to fix it.
    pub message: String,
}

impl PolicyError {
    fn render(&self) -> String {
        let mut out = String::new();
        if let Some(file) = &self.file {
            out.push_str(&file.display().to_string());
            out.push(':');
        }
        if let (Some(line), Some(column)) = (self.line, self.column) {
            out.push_str(&format!("{line}:{column}:"));
        }
        if !out.is_empty() {
            out.push(' ');
        }
        if !self.key.is_empty() {
            out.push_str(&format!("`{}`: ", self.key));
        }
        out.push_str(&self.message);
        out
    }
}

/// Locates byte offsets as line/column for error messages.
struct Source<'a> {
    text: &'a str,
    file: Option<&'a Path>,
}

impl Source<'_> {
    fn error(
        &self,
        key: &str,
        span: Option<Range<usize>>,
        message: impl Into<String>,
    ) -> PolicyError {
        let (line, column) = match span {
            Some(span) => {
                let before = &self.text[..span.start.min(self.text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                (Some(line), Some(column))
            }
            None => (None, None),
        };
        PolicyError {
            file: self.file.map(Path::to_path_buf),
            key: key.to_owned(),
            line,
            column,
            message: message.into(),
        }
    }
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
        let raw: RawPolicy = {
            let deserializer = toml::Deserializer::new(text);
            serde_path_to_error::deserialize(deserializer).map_err(|e| {
                // `Spanned` values show up as a private field in the path; drop it.
                let key = e
                    .path()
                    .to_string()
                    .replace(".$__serde_spanned_private_value", "");
                let inner = e.into_inner();
                let key = if key == "." { String::new() } else { key };
                source.error(&key, inner.span(), inner.message().trim_end())
            })?
        };

        let name = match &raw.name {
            Some(name) if name.get_ref().trim().is_empty() => {
                return Err(source.error(
                    "name",
                    Some(name.span()),
                    "the policy name must not be empty",
                ));
            }
            Some(name) => name.get_ref().clone(),
            None => file
                .and_then(Path::file_stem)
                .map_or_else(|| "inline".to_owned(), |s| s.to_string_lossy().into_owned()),
        };
        let limits = resolve_limits(&raw.limits, &source)?;
        let capabilities = match &raw.capabilities {
            Some(raw) => Some(Arc::new(capabilities::resolve(raw, &source)?)),
            None => None,
        };
        let determinism = match &raw.determinism {
            Some(raw) => resolve_determinism(raw, &source)?,
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
            Some(raw) => Some(resolve_fs(raw, &source)?),
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
            sha256: crate::record::hex(&Sha256::digest(text.as_bytes())),
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

    /// The resource limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// This policy with other limits (a call's options, checked against these first).
    pub(crate) fn with_limits(&self, limits: Limits) -> Policy {
        Policy {
            limits,
            ..self.clone()
        }
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

    /// The host capabilities granted, if any.
    pub fn capabilities(&self) -> Option<&Arc<Capabilities>> {
        self.capabilities.as_ref()
    }
}

fn resolve_fs(raw: &raw::RawFs, source: &Source<'_>) -> Result<Fs, PolicyError> {
    let base = match source.file.and_then(Path::parent) {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut mount = Vec::new();
    for (i, m) in raw.mount.iter().enumerate() {
        let key = format!("fs.mount[{i}]");
        let span = Some(m.span());
        let m = m.get_ref();
        let guest = &m.guest;
        let clean = guest.starts_with('/')
            && guest.len() > 1
            && !guest.split('/').any(|part| part == ".." || part == ".");
        if !clean {
            return Err(source.error(
                &format!("{key}.guest"),
                span,
                format!(
                    "`{guest}` must be an absolute path such as \"/workspace\", without `.` or `..`"
                ),
            ));
        }
        if mount.iter().any(|other: &Mount| other.guest == *guest) {
            return Err(source.error(
                &format!("{key}.guest"),
                span,
                format!("`{guest}` is mounted twice"),
            ));
        }
        let host = base.join(&m.host);
        let host = host.canonicalize().map_err(|e| {
            source.error(
                &format!("{key}.host"),
                span.clone(),
                format!("cannot use `{}`: {e}", m.host),
            )
        })?;
        if !host.is_dir() {
            return Err(source.error(
                &format!("{key}.host"),
                span,
                format!("`{}` is not a directory", m.host),
            ));
        }
        let mode = match m.mode.as_deref() {
            None | Some("ro") => MountMode::Ro,
            Some("rw") => MountMode::Rw,
            Some(other) => {
                return Err(source.error(
                    &format!("{key}.mode"),
                    span,
                    format!("`{other}` is not a mode; use \"ro\" or \"rw\""),
                ));
            }
        };
        let quota = match (mode, m.quota) {
            (MountMode::Ro, Some(_)) => {
                return Err(source.error(
                    &format!("{key}.quota"),
                    span,
                    "a read-only mount has no quota; remove it or set mode = \"rw\"",
                ));
            }
            (MountMode::Ro, None) => None,
            (MountMode::Rw, quota) => Some(quota.unwrap_or(DEFAULT_MOUNT_QUOTA)),
        };
        let max_files = match (mode, m.max_files) {
            (MountMode::Ro, Some(_)) => {
                return Err(source.error(
                    &format!("{key}.max_files"),
                    span,
                    "a read-only mount has no file limit; remove it or set mode = \"rw\"",
                ));
            }
            (MountMode::Ro, None) => None,
            (MountMode::Rw, n) => Some(check_max_files(
                n,
                &format!("{key}.max_files"),
                source,
                span.clone(),
            )?),
        };
        mount.push(Mount {
            host,
            guest: guest.clone(),
            mode,
            quota,
            max_files,
        });
    }
    let scratch = match &raw.scratch {
        None => None,
        Some(s) => {
            let span = Some(s.span());
            let s = s.get_ref();
            let clean = s.guest.starts_with('/')
                && s.guest.len() > 1
                && !s.guest.split('/').any(|part| part == ".." || part == ".");
            if !clean {
                return Err(source.error(
                    "fs.scratch.guest",
                    span,
                    format!(
                        "`{}` must be an absolute path such as \"/scratch\"",
                        s.guest
                    ),
                ));
            }
            if mount.iter().any(|m| m.guest == s.guest) {
                return Err(source.error(
                    "fs.scratch.guest",
                    span,
                    format!("`{}` is also a mount", s.guest),
                ));
            }
            let max_files =
                check_max_files(s.max_files, "fs.scratch.max_files", source, span.clone())?;
            let mut seed = Vec::new();
            for (i, path) in s.seed.iter().enumerate() {
                let resolved = base.join(path).canonicalize().map_err(|e| {
                    source.error(
                        &format!("fs.scratch.seed[{i}]"),
                        span.clone(),
                        format!("cannot use `{path}`: {e}"),
                    )
                })?;
                seed.push(resolved);
            }
            // Every call copies the seed: what cannot be copied is said here, not per call.
            crate::scratch::check_seed(&seed, max_files).map_err(|e| {
                source.error(
                    &format!("fs.scratch.seed[{}]", e.index),
                    span.clone(),
                    e.message,
                )
            })?;
            Some(Scratch {
                guest: s.guest.clone(),
                quota: s.quota.unwrap_or(DEFAULT_SCRATCH_QUOTA),
                max_files,
                seed,
            })
        }
    };
    Ok(Fs { mount, scratch })
}

/// A `max_files` value, or the default.
fn check_max_files(
    value: Option<u64>,
    key: &str,
    source: &Source<'_>,
    span: Option<Range<usize>>,
) -> Result<u64, PolicyError> {
    match value {
        None => Ok(DEFAULT_MAX_FILES),
        Some(n) if (1..=MAX_FILES_LIMIT).contains(&n) => Ok(n),
        Some(n) => Err(source.error(
            key,
            span,
            format!("{n} is out of range; use 1 to {MAX_FILES_LIMIT}"),
        )),
    }
}

fn resolve_determinism(
    raw: &raw::RawDeterminism,
    source: &Source<'_>,
) -> Result<Determinism, PolicyError> {
    let instant = match &raw.instant {
        Some(text) => {
            let at = humantime::parse_rfc3339(text.get_ref()).map_err(|e| {
                source.error(
                    "determinism.instant",
                    Some(text.span()),
                    format!("{e}; write an RFC 3339 UTC time such as \"2024-01-01T00:00:00Z\""),
                )
            })?;
            let since_epoch = at.duration_since(std::time::UNIX_EPOCH).map_err(|_| {
                source.error(
                    "determinism.instant",
                    Some(text.span()),
                    "must not be before 1970",
                )
            })?;
            Some((since_epoch, text.span()))
        }
        None => None,
    };
    let clock = match raw.clock.as_ref().map(|c| (c.get_ref().as_str(), c.span())) {
        None | Some(("real", _)) => {
            if let Some((_, span)) = instant {
                return Err(source.error(
                    "determinism.instant",
                    Some(span),
                    "an instant needs `clock = \"fixed\"`",
                ));
            }
            Clock::Real
        }
        Some(("fixed", _)) => Clock::Fixed(instant.map_or(Duration::ZERO, |(at, _)| at)),
        Some((other, span)) => {
            return Err(source.error(
                "determinism.clock",
                Some(span),
                format!("`{other}` is not a clock; use \"real\" or \"fixed\""),
            ));
        }
    };
    Ok(Determinism {
        clock,
        seed: raw.seed,
    })
}

/// Default limits, the values written in `policies/default.toml`.
const DEFAULT_LIMITS: Limits = Limits {
    fuel: 30_000_000_000,
    memory: ByteSize(64 << 20),
    timeout: HumanDuration(Duration::from_secs(1)),
    stack: ByteSize(12 << 20),
    output: ByteSize(1 << 20),
    input: ByteSize(1 << 20),
    console: ByteSize(64 << 10),
    transcript: ByteSize(64 << 20),
};

impl Default for Limits {
    fn default() -> Self {
        DEFAULT_LIMITS
    }
}

fn resolve_limits(raw: &RawLimits, source: &Source<'_>) -> Result<Limits, PolicyError> {
    fn pick<T: Copy + PartialOrd + fmt::Display>(
        source: &Source<'_>,
        key: &str,
        value: &Option<toml::Spanned<T>>,
        default: T,
        (min, max): (T, T),
    ) -> Result<T, PolicyError> {
        let Some(value) = value else {
            return Ok(default);
        };
        let v = *value.get_ref();
        if v < min || v > max {
            return Err(source.error(
                key,
                Some(value.span()),
                format!("{v} is out of range; allowed is {min} to {max}"),
            ));
        }
        Ok(v)
    }
    let d = DEFAULT_LIMITS;
    let fuel = match &raw.fuel {
        Some(f) if *f.get_ref() == 0 => {
            return Err(source.error("limits.fuel", Some(f.span()), "fuel must be at least 1"));
        }
        Some(f) => *f.get_ref(),
        None => d.fuel,
    };
    let timeout_bounds = (
        HumanDuration(bounds::TIMEOUT.0),
        HumanDuration(bounds::TIMEOUT.1),
    );
    Ok(Limits {
        fuel,
        memory: pick(
            source,
            "limits.memory",
            &raw.memory,
            d.memory,
            bounds::MEMORY,
        )?,
        timeout: pick(
            source,
            "limits.timeout",
            &raw.timeout,
            d.timeout,
            timeout_bounds,
        )?,
        stack: pick(source, "limits.stack", &raw.stack, d.stack, bounds::STACK)?,
        output: pick(source, "limits.output", &raw.output, d.output, bounds::IO)?,
        input: pick(source, "limits.input", &raw.input, d.input, bounds::IO)?,
        console: pick(
            source,
            "limits.console",
            &raw.console,
            d.console,
            bounds::CONSOLE,
        )?,
        transcript: pick(
            source,
            "limits.transcript",
            &raw.transcript,
            d.transcript,
            bounds::TRANSCRIPT,
        )?,
    })
}

impl fmt::Display for Policy {
    /// The resolved policy as TOML, every default filled in.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = toml::to_string_pretty(self).map_err(|_| fmt::Error)?;
        f.write_str(&text)
    }
}

#[cfg(test)]
mod tests {
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
