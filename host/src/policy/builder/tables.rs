//! The builders of the policy's tables: `[http]`, `[[http.allow]]`, `[kv]`,
//! `[capabilities.allow.NAME]`, `[fs.scratch]` and `[overrides]`.

use super::json::first_null;
use super::typed;
use crate::policy::raw::RawOverrides;
use crate::policy::raw::{RawCapability, RawHttp, RawHttpRule, RawKv, RawScratch};
use crate::policy::{BucketMode, ByteSize, HumanDuration};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use toml::Spanned;

/// `[http]`: network access, built in code for
/// [`PolicyBuilder::http`](super::PolicyBuilder::http).
#[derive(Debug, Default)]
pub struct HttpBuilder {
    pub(super) raw: RawHttp,
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
    pub(super) raw: RawHttpRule,
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

/// `[kv]`: the key-value store, for [`PolicyBuilder::kv`](super::PolicyBuilder::kv).
#[derive(Debug, Default)]
pub struct KvBuilder {
    pub(super) raw: RawKv,
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

/// `[capabilities.allow.NAME]`: one host capability, for
/// [`PolicyBuilder::capability`](super::PolicyBuilder::capability).
#[derive(Debug, Default)]
pub struct CapabilityBuilder {
    pub(super) raw: RawCapability,
    /// A schema TOML cannot hold (a `null` in it), reported by `build`.
    pub(super) bad_schema: Option<String>,
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
                Ok(value) => self.raw.schema = Some(value),
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

/// `[fs.scratch]`: a fresh writable directory for every call, for
/// [`PolicyBuilder::scratch`](super::PolicyBuilder::scratch).
#[derive(Debug)]
pub struct ScratchBuilder {
    pub(super) raw: RawScratch,
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

/// `[overrides]`: what one call's options may set beyond the policy's own values, for
/// [`PolicyBuilder::overrides`](super::PolicyBuilder::overrides).
#[derive(Debug, Default)]
pub struct OverridesBuilder {
    pub(super) raw: RawOverrides,
}

impl OverridesBuilder {
    /// No ceilings: a call may only lower `timeout`, `fuel` and `memory`.
    pub fn new() -> Self {
        OverridesBuilder::default()
    }

    /// `overrides.timeout`: the longest deadline a call may ask for.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.raw.timeout = Some(typed(HumanDuration(timeout)));
        self
    }

    /// `overrides.fuel`: the most fuel a call may ask for.
    pub fn fuel(mut self, fuel: u64) -> Self {
        self.raw.fuel = Some(typed(fuel));
        self
    }

    /// `overrides.memory`: the most memory a call may ask for.
    pub fn memory(mut self, size: ByteSize) -> Self {
        self.raw.memory = Some(typed(size));
        self
    }

    /// `overrides.now`: a call may fix the clock at an instant of its choosing.
    pub fn now(mut self, allowed: bool) -> Self {
        self.raw.now = allowed;
        self
    }

    /// `overrides.seed`: a call may choose the seed of `Math.random` and WASI randomness.
    pub fn seed(mut self, allowed: bool) -> Self {
        self.raw.seed = allowed;
        self
    }

    /// `overrides.config`: a `[config]` key a call may set.
    pub fn config(mut self, key: impl Into<String>) -> Self {
        let key = key.into();
        if !self.raw.config.contains(&key) {
            self.raw.config.push(key);
        }
        self
    }
}
