//! `Policy::from_json` and the JSON Schema of the policy format.

use super::unplaced;
use crate::policy::raw::RawPolicy;
use crate::policy::{Policy, PolicyError};
use std::path::Path;

impl Policy {
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
        policy.sha256 = crate::hex::sha256(text.as_bytes());
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
pub(super) fn first_null(value: &serde_json::Value, at: String) -> Option<String> {
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
