//! `[kv]` resolved: the tenant namespace, the buckets a script may open, and the quotas.

use super::raw::RawKv;
use super::units::ByteSize;
use super::{PolicyError, Source, pick};
use serde::Serialize;
use std::collections::BTreeMap;

/// Key-value access the policy grants. Absent from a policy means no `kv` global.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kv {
    /// The tenant namespace the host puts every key under; the script never sees or names it.
    /// Required whenever `[kv]` is present: there is no default.
    pub namespace: String,
    /// Largest key, in bytes of UTF-8.
    pub max_key: ByteSize,
    /// Largest value.
    pub max_value: ByteSize,
    /// Keys the namespace may hold, all buckets together.
    pub max_keys: u64,
    /// Buckets the script may open, in the order written; the first is `kv`'s default.
    pub buckets: BTreeMap<String, BucketMode>,
    /// The first bucket as written.
    pub default_bucket: String,
}

/// Written back as the policy file spells it, the default bucket first.
impl Serialize for Kv {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        struct Buckets<'a>(&'a Kv);
        impl Serialize for Buckets<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let kv = self.0;
                let mut map = s.serialize_map(Some(kv.buckets.len()))?;
                map.serialize_entry(&kv.default_bucket, &kv.buckets[&kv.default_bucket])?;
                for (name, mode) in kv.buckets.iter().filter(|(n, _)| **n != kv.default_bucket) {
                    map.serialize_entry(name, mode)?;
                }
                map.end()
            }
        }
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("namespace", &self.namespace)?;
        map.serialize_entry("max_key", &self.max_key)?;
        map.serialize_entry("max_value", &self.max_value)?;
        map.serialize_entry("max_keys", &self.max_keys)?;
        map.serialize_entry("buckets", &Buckets(self))?;
        map.end()
    }
}

/// Whether a bucket can be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BucketMode {
    /// Read-only (`ro`).
    Ro,
    /// Read-write (`rw`).
    Rw,
}

const DEFAULT_MAX_KEY: ByteSize = ByteSize(512);
/// Largest `kv.max_key`: every key is copied out of the guest and, in a `list`, held by the host
/// with its neighbours.
pub(crate) const MAX_KEY_LIMIT: ByteSize = ByteSize(64 << 10);
const DEFAULT_MAX_VALUE: ByteSize = ByteSize(1 << 20);
/// Largest `kv.max_value`: a value is copied out of the guest and held by the host whole.
pub(crate) const MAX_VALUE_LIMIT: ByteSize = ByteSize(64 << 20);
const DEFAULT_MAX_KEYS: u64 = 10_000;

/// `[kv]` resolved: the namespace, the quotas in their ranges, the buckets.
pub(super) fn resolve(raw: &RawKv, source: &Source<'_>) -> Result<Kv, PolicyError> {
    let namespace = resolve_namespace(raw, source)?;
    let max_key = pick(
        source,
        "kv.max_key",
        &raw.max_key,
        DEFAULT_MAX_KEY,
        (ByteSize(1), MAX_KEY_LIMIT),
    )?;
    let max_value = pick(
        source,
        "kv.max_value",
        &raw.max_value,
        DEFAULT_MAX_VALUE,
        (ByteSize(1), MAX_VALUE_LIMIT),
    )?;
    let max_keys = match &raw.max_keys {
        Some(n) if *n.get_ref() == 0 => {
            return Err(source.error("kv.max_keys", Some(n.span()), "must be at least 1"));
        }
        Some(n) => *n.get_ref(),
        None => DEFAULT_MAX_KEYS,
    };
    let (buckets, default_bucket) = resolve_buckets(raw, source)?;
    Ok(Kv {
        namespace,
        max_key,
        max_value,
        max_keys,
        buckets,
        default_bucket,
    })
}

/// The tenant namespace, which the policy must name.
fn resolve_namespace(raw: &RawKv, source: &Source<'_>) -> Result<String, PolicyError> {
    // No default: a name is not an identity. Two files named `agent.toml` in different
    // folders (or two policies that set the same `name`) would share one namespace, and each
    // tenant could read and overwrite the other's keys.
    let Some(namespace) = &raw.namespace else {
        return Err(source.error(
            "kv.namespace",
            None,
            "[kv] needs a namespace, which keeps this policy's keys apart from every other \
             policy's (there is no default: two files named agent.toml in different folders \
             would share one); add `namespace = \"...\"` under [kv], a name unique to this \
             tenant such as \"acme-billing\"",
        ));
    };
    let span = Some(namespace.span());
    let namespace = namespace.get_ref().clone();
    if namespace.is_empty() || namespace.len() > 128 || namespace.chars().any(char::is_control) {
        return Err(source.error(
            "kv.namespace",
            span,
            "a namespace has 1 to 128 characters, none of them control characters",
        ));
    }
    Ok(namespace)
}

/// The buckets and their modes, and the first one as written (the default).
fn resolve_buckets(
    raw: &RawKv,
    source: &Source<'_>,
) -> Result<(BTreeMap<String, BucketMode>, String), PolicyError> {
    let mut buckets = BTreeMap::new();
    // The first bucket as written: the one whose value starts earliest in the file.
    let default_bucket = raw
        .buckets
        .iter()
        .min_by_key(|(_, mode)| mode.span().start)
        .map(|(name, _)| name.clone());
    for (name, mode) in &raw.buckets {
        let key = format!("kv.buckets.{name}");
        if name.is_empty() || name.len() > 64 || name.chars().any(char::is_control) {
            return Err(source.error(
                &key,
                Some(mode.span()),
                "a bucket name has 1 to 64 characters",
            ));
        }
        let mode = match mode.get_ref().as_str() {
            "ro" => BucketMode::Ro,
            "rw" => BucketMode::Rw,
            other => {
                return Err(source.error(
                    &key,
                    Some(mode.span()),
                    format!("`{other}` is not a mode; use \"ro\" or \"rw\""),
                ));
            }
        };
        buckets.insert(name.clone(), mode);
    }
    let Some(default_bucket) = default_bucket else {
        return Err(source.error(
            "kv.buckets",
            None,
            "name at least one bucket, such as [kv.buckets] app = \"rw\"",
        ));
    };
    Ok((buckets, default_bucket))
}
