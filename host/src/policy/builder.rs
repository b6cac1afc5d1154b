//! Policies from code: a typed builder, `Policy::from_json`, and the JSON Schema of the format.
//!
//! Both write the policy as TOML and read it back through [`Policy::from_toml`], so a policy
//! made in code passes exactly the checks a policy file passes and resolves the same way. Their
//! errors name the key path (`limits.memory`); they carry no line, since the TOML they refer to
//! was never written by anyone.

use super::raw::{
    RawCapabilities, RawCapability, RawDeterminism, RawFs, RawHttp, RawHttpRule, RawKv, RawMount,
    RawPolicy, RawScratch, RawSecret,
};
use super::{BucketMode, ByteSize, HumanDuration, MountMode, Policy, PolicyError};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime};
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

    /// Validate a policy written as JSON: the policy format's tables and keys as JSON objects
    /// (`{"limits": {"memory": "64MiB"}, "http": {"allow": [{"url": "…"}]}}`), checked as a
    /// policy file is. `file` names the policy in errors, gives its default name and the folder
    /// relative paths are resolved against. Its SHA-256 is that of `text`.
    pub fn from_json(text: &str, file: Option<&Path>) -> Result<Policy, PolicyError> {
        let error = |key: String, line, column, message: String| PolicyError {
            file: file.map(Path::to_path_buf),
            key,
            line,
            column,
            message,
        };
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            error(
                String::new(),
                Some(e.line()),
                Some(e.column()),
                e.to_string(),
            )
        })?;
        if !value.is_object() {
            return Err(error(
                String::new(),
                None,
                None,
                "a policy is a JSON object".to_owned(),
            ));
        }
        if let Some(key) = first_null(&value, String::new()) {
            return Err(error(
                key,
                None,
                None,
                "null has no meaning in a policy; leave the key out".to_owned(),
            ));
        }
        let buckets = serde_json::from_str::<BucketOrder>(text)
            .map(|order| order.kv.map(|kv| kv.buckets.0).unwrap_or_default())
            .unwrap_or_default();
        let ordered = InJsonOrder {
            value: &value,
            path: &[],
            buckets: &buckets,
        };
        let toml = toml::to_string(&ordered).map_err(|e| {
            error(
                String::new(),
                None,
                None,
                format!("cannot be a policy: {e}"),
            )
        })?;
        let mut policy = Policy::from_toml(&toml, file).map_err(|e| unplaced(e, file))?;
        policy.sha256 = crate::record::hex(&Sha256::digest(text.as_bytes()));
        Ok(policy)
    }

    /// The JSON Schema (draft 2020-12) of the policy format, generated from the types that read
    /// it: the same for a TOML policy file read as data and for [`Policy::from_json`]. It checks
    /// shape, keys and units; ranges and cross-references are checked by the policy's own rules.
    pub fn json_schema() -> serde_json::Value {
        let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
        let mut schema = generator.into_root_schema_for::<RawPolicy>().to_value();
        without_null(&mut schema);
        schema
    }
}

/// TOML has no null: a key a policy does not set is left out, never written as null, so the
/// `null` that an `Option` adds to a schema is taken out again.
fn without_null(schema: &mut serde_json::Value) {
    use serde_json::Value;
    match schema {
        Value::Object(map) => {
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if let [only] = types.as_slice() {
                    let only = only.clone();
                    map.insert("type".to_owned(), only);
                }
            }
            if let Some(Value::Array(any)) = map.get_mut("anyOf") {
                any.retain(|s| s.get("type").is_none_or(|t| t != "null"));
                if let [Value::Object(only)] = any.as_slice() {
                    let only = only.clone();
                    map.remove("anyOf");
                    map.extend(only);
                }
            }
            map.values_mut().for_each(without_null);
        }
        Value::Array(items) => items.iter_mut().for_each(without_null),
        _ => {}
    }
}

/// The order in which a JSON policy names its buckets (`serde_json::Value` sorts keys, and
/// the first bucket written is the default).
#[derive(serde::Deserialize)]
struct BucketOrder {
    kv: Option<BucketNames>,
}

#[derive(serde::Deserialize)]
struct BucketNames {
    #[serde(default)]
    buckets: KeysInOrder,
}

/// The keys of a JSON object, in the order written.
#[derive(Default)]
struct KeysInOrder(Vec<String>);

impl<'de> serde::Deserialize<'de> for KeysInOrder {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = KeysInOrder;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a table of buckets")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<KeysInOrder, A::Error> {
                let mut keys = Vec::new();
                while let Some((key, _)) = map.next_entry::<String, serde::de::IgnoredAny>()? {
                    keys.push(key);
                }
                Ok(KeysInOrder(keys))
            }
        }
        d.deserialize_map(Keys)
    }
}

/// A JSON value written as TOML, with `kv.buckets` in the order the JSON text names them.
struct InJsonOrder<'a> {
    value: &'a serde_json::Value,
    path: &'a [&'a str],
    buckets: &'a [String],
}

impl serde::Serialize for InJsonOrder<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let serde_json::Value::Object(map) = self.value else {
            return self.value.serialize(s);
        };
        let mut keys: Vec<&String> = map.keys().collect();
        if self.path == ["kv", "buckets"] {
            keys.sort_by_key(|k| self.buckets.iter().position(|b| b == *k));
        }
        let mut out = s.serialize_map(Some(keys.len()))?;
        for key in keys {
            let path: Vec<&str> = self.path.iter().copied().chain([key.as_str()]).collect();
            let value = InJsonOrder {
                value: &map[key],
                path: &path,
                buckets: self.buckets,
            };
            out.serialize_entry(key, &value)?;
        }
        out.end()
    }
}

/// The dotted path of the first `null` in a JSON value.
fn first_null(value: &serde_json::Value, at: String) -> Option<String> {
    let join = |key: &str| {
        if at.is_empty() {
            key.to_owned()
        } else {
            format!("{at}.{key}")
        }
    };
    match value {
        serde_json::Value::Null => Some(at),
        serde_json::Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| first_null(v, format!("{at}[{i}]"))),
        serde_json::Value::Object(map) => map.iter().find_map(|(k, v)| first_null(v, join(k))),
        _ => None,
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

/// `[http]`: network access, built in code for [`PolicyBuilder::http`].
#[derive(Debug, Default)]
pub struct HttpBuilder {
    raw: RawHttp,
}

impl HttpBuilder {
    /// No URL allowed yet, default budgets.
    pub fn new() -> Self {
        HttpBuilder::default()
    }

    /// `[[http.allow]]`: a URL prefix the script may fetch.
    pub fn allow(mut self, rule: HttpRuleBuilder) -> Self {
        self.raw.allow.push(typed(rule.raw));
        self
    }

    /// `http.max_requests`: requests per call.
    pub fn max_requests(mut self, n: u32) -> Self {
        self.raw.max_requests = Some(typed(n));
        self
    }

    /// `http.max_request_body`.
    pub fn max_request_body(mut self, size: ByteSize) -> Self {
        self.raw.max_request_body = Some(typed(size));
        self
    }

    /// `http.max_response_body`: response bytes per call, decoded.
    pub fn max_response_body(mut self, size: ByteSize) -> Self {
        self.raw.max_response_body = Some(typed(size));
        self
    }

    /// `http.timeout`: the deadline of one request.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.raw.timeout = Some(typed(HumanDuration(timeout)));
        self
    }

    /// `http.rate`: at most `count` requests per `per`, which is one second, minute or hour.
    pub fn rate(mut self, count: u32, per: Duration) -> Self {
        let unit = match per.as_secs() {
            1 => "s",
            60 => "min",
            3600 => "h",
            // Written as given, so that the policy's own check refuses it with its message.
            _ => "per",
        };
        self.raw.rate = Some(typed(format!("{count}/{unit}")));
        self
    }

    /// `http.allow_private`: a private address range (`10.0.0.0/8`) the rules may reach.
    pub fn allow_private(mut self, range: impl Into<String>) -> Self {
        self.raw.allow_private.push(typed(range.into()));
        self
    }

    /// `http.allow_private_hosts`: a host name that may resolve to private addresses.
    pub fn allow_private_host(mut self, host: impl Into<String>) -> Self {
        self.raw.allow_private_hosts.push(typed(host.into()));
        self
    }

    /// `http.ca_file`: a PEM file of extra certificate authorities.
    pub fn ca_file(mut self, path: impl AsRef<Path>) -> Self {
        self.raw.ca_file = Some(typed(path.as_ref().to_string_lossy().into_owned()));
        self
    }
}

/// `[[http.allow]]`: one allowed URL prefix, for [`HttpBuilder::allow`].
#[derive(Debug)]
pub struct HttpRuleBuilder {
    raw: RawHttpRule,
}

impl HttpRuleBuilder {
    /// `scheme://host[:port]/path-prefix`; `*.` before a host allows its subdomains.
    pub fn new(url: impl Into<String>) -> Self {
        HttpRuleBuilder {
            raw: RawHttpRule {
                url: url.into(),
                methods: None,
                headers: BTreeMap::new(),
            },
        }
    }

    /// The methods allowed (default `GET` and `HEAD`).
    pub fn methods<S: Into<String>>(mut self, methods: impl IntoIterator<Item = S>) -> Self {
        self.raw.methods = Some(methods.into_iter().map(Into::into).collect());
        self
    }

    /// A header the host injects; `${secret:NAME}` in `value` inserts a secret.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.raw.headers.insert(name.into(), value.into());
        self
    }
}

/// `[kv]`: the key-value store, for [`PolicyBuilder::kv`].
#[derive(Debug, Default)]
pub struct KvBuilder {
    raw: RawKv,
}

impl KvBuilder {
    /// The store under `namespace`, which keeps this policy's keys apart from every other's.
    pub fn new(namespace: impl Into<String>) -> Self {
        KvBuilder {
            raw: RawKv {
                namespace: Some(typed(namespace.into())),
                ..RawKv::default()
            },
        }
    }

    /// `[kv.buckets]`: a bucket the script may open; the first one added is `kv`'s default.
    pub fn bucket(mut self, name: impl Into<String>, mode: BucketMode) -> Self {
        let mode = match mode {
            BucketMode::Ro => "ro",
            BucketMode::Rw => "rw",
        };
        // Its place among the buckets is its span: the first one added is the default.
        let place = self.raw.buckets.len();
        let name = name.into();
        let place = self
            .raw
            .buckets
            .get(&name)
            .map_or(place, |old| old.span().start);
        self.raw
            .buckets
            .insert(name, Spanned::new(place..place, mode.to_owned()));
        self
    }

    /// `kv.max_key`.
    pub fn max_key(mut self, size: ByteSize) -> Self {
        self.raw.max_key = Some(typed(size));
        self
    }

    /// `kv.max_value`.
    pub fn max_value(mut self, size: ByteSize) -> Self {
        self.raw.max_value = Some(typed(size));
        self
    }

    /// `kv.max_keys`.
    pub fn max_keys(mut self, n: u64) -> Self {
        self.raw.max_keys = Some(typed(n));
        self
    }
}

/// `[capabilities.allow.NAME]`: one host capability, for [`PolicyBuilder::capability`].
#[derive(Debug, Default)]
pub struct CapabilityBuilder {
    raw: RawCapability,
    /// A schema TOML cannot hold (a `null` in it), reported by `build`.
    bad_schema: Option<String>,
}

impl CapabilityBuilder {
    /// Default budgets, no schema, served by a registered handler.
    pub fn new() -> Self {
        CapabilityBuilder::default()
    }

    /// `max_calls`: calls per script run.
    pub fn max_calls(mut self, n: u32) -> Self {
        self.raw.max_calls = Some(typed(n));
        self
    }

    /// `max_payload`: the largest JSON payload of one call.
    pub fn max_payload(mut self, size: ByteSize) -> Self {
        self.raw.max_payload = Some(typed(size));
        self
    }

    /// `max_response`: the largest JSON response of one call.
    pub fn max_response(mut self, size: ByteSize) -> Self {
        self.raw.max_response = Some(typed(size));
        self
    }

    /// `schema`: a JSON Schema every payload must satisfy.
    pub fn schema(mut self, schema: serde_json::Value) -> Self {
        match first_null(&schema, String::new()) {
            Some(at) => self.bad_schema = Some(at),
            None => match toml::Value::try_from(&schema) {
                Ok(value) => self.raw.schema = Some(typed(value)),
                Err(e) => self.bad_schema = Some(e.to_string()),
            },
        }
        self
    }

    /// `forward`: a URL the host posts each call to, instead of a registered handler.
    pub fn forward(mut self, url: impl Into<String>) -> Self {
        self.raw.forward = Some(typed(url.into()));
        self
    }
}

/// `[fs.scratch]`: a fresh writable directory for every call, for [`PolicyBuilder::scratch`].
#[derive(Debug)]
pub struct ScratchBuilder {
    raw: RawScratch,
}

impl ScratchBuilder {
    /// A scratch directory at `guest` (such as `/scratch`), default quota and file limit.
    pub fn new(guest: impl Into<String>) -> Self {
        ScratchBuilder {
            raw: RawScratch {
                guest: guest.into(),
                quota: None,
                max_files: None,
                seed: Vec::new(),
            },
        }
    }

    /// `quota`: the most bytes it may hold, seed included.
    pub fn quota(mut self, quota: ByteSize) -> Self {
        self.raw.quota = Some(quota);
        self
    }

    /// `max_files`: the most entries it may hold, seed included.
    pub fn max_files(mut self, n: u64) -> Self {
        self.raw.max_files = Some(n);
        self
    }

    /// `seed`: a host file or directory copied in at the start of each call.
    pub fn seed(mut self, path: impl AsRef<Path>) -> Self {
        self.raw
            .seed
            .push(path.as_ref().to_string_lossy().into_owned());
        self
    }
}
