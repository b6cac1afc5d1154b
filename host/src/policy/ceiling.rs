//! A policy within a ceiling: [`Policy::within`] says whether a policy grants nothing another
//! (its ceiling) lacks: no host, method, header, mount, bucket, capability, secret or
//! `[overrides]` right the ceiling does not grant, and no limit above the ceiling's. It is the
//! one gate of policies sent with a call (`palisade serve`, docs/server.md#inline-policies):
//! such a policy may tighten freely, never widen. Two things count as widening though they
//! add no grant: an allow rule that leaves out a header its ceiling's rule injects (the
//! operator's header, often one that names the caller to the upstream, would be gone, and the
//! script could send its own under that name), and a clock or seed other than the ceiling's
//! when the ceiling does not let a call choose them (`overrides.now`, `overrides.seed`: a fixed
//! `determinism.clock` is the instant a call's `now` would set). `[config]` values and the
//! bridge's global name grant nothing and are free.
//!
//! [`Policy::from_inline`] reads such a policy: before anything is resolved it refuses the
//! keys that read the host (`[secrets]`, `http.ca_file`, `[[fs.mount]]`, `fs.scratch.seed`),
//! since resolving them would read host files and environment on the caller's word.

use super::{BucketMode, ByteSize, HostPattern, HttpRule, MountMode, Policy};
use serde::Serialize;
use serde_json::{Value, json};
use std::fmt::Display;

/// What makes a policy wider than its ceiling: the first key past it, why, and the value of
/// that key that fits (`null`: leave the key out).
#[derive(Debug, Clone, PartialEq)]
pub struct PastCeiling {
    /// The dotted key, such as `limits.timeout` or `http.allow`.
    pub key: String,
    /// Why, for people.
    pub reason: String,
    /// The value of `key` within the ceiling, as JSON; `null` means leave the key out.
    pub fits: Value,
}

type Within = Result<(), PastCeiling>;

fn past(key: impl Into<String>, reason: impl Into<String>, fits: Value) -> PastCeiling {
    PastCeiling {
        key: key.into(),
        reason: reason.into(),
        fits,
    }
}

/// `value` at most `ceiling`, else past at `key` with the ceiling's value as the fit.
fn at_most<T: PartialOrd + Display + Serialize>(key: &str, value: T, ceiling: T) -> Within {
    if value <= ceiling {
        return Ok(());
    }
    Err(past(
        key,
        format!("{key} = {value} is above the ceiling's {ceiling}"),
        json!(ceiling),
    ))
}

/// A table the ceiling lacks altogether.
fn absent(key: &str) -> PastCeiling {
    past(key, format!("the ceiling grants no [{key}]"), Value::Null)
}

/// The keys an inline policy may not hold, because resolving them reads the host.
const HOST_READING: &[&str] = &["secrets", "http.ca_file", "fs.mount", "fs.scratch.seed"];

impl Policy {
    /// Read a policy sent with a call, TOML text or (`json`) a JSON object's text: refuse the
    /// keys that read host files or environment, then validate it as a file is, without a
    /// folder (named `inline`, or `inline:NAME` for its own `name`; its SHA-256 is that of
    /// `text`). The outer error is a key no policy sent with a call may hold; the inner one,
    /// an invalid policy.
    pub fn from_inline(
        text: &str,
        json: bool,
    ) -> Result<Result<Policy, super::PolicyError>, PastCeiling> {
        let value = if json {
            serde_json::from_str::<Value>(text).ok()
        } else {
            toml::from_str::<Value>(text).ok()
        };
        if let Some(key) = value.as_ref().and_then(host_reading) {
            return Err(past(
                key,
                format!(
                    "{key} reads the server's files or environment, which a policy sent with a \
                     call may not do; name a catalog policy that holds it instead"
                ),
                Value::Null,
            ));
        }
        let resolved = if json {
            Policy::from_json(text, None)
        } else {
            Policy::from_toml(text, None)
        };
        // Never a catalog policy's name, in receipts and audit records.
        Ok(resolved.map(|mut policy| {
            if policy.name != "inline" {
                policy.name = format!("inline:{}", policy.name);
            }
            policy
        }))
    }

    /// Whether this policy grants nothing `ceiling` lacks; else the first key past it.
    pub fn within(&self, ceiling: &Policy) -> Result<(), PastCeiling> {
        limits_within(self, ceiling)?;
        overrides_within(self, ceiling)?;
        determinism_within(self, ceiling)?;
        http_within(self, ceiling)?;
        kv_within(self, ceiling)?;
        capabilities_within(self, ceiling)?;
        fs_within(self, ceiling)?;
        for (name, source) in &self.secrets {
            if ceiling.secrets.get(name) != Some(source) {
                return Err(past(
                    format!("secrets.{name}"),
                    format!("the ceiling has no secret `{name}` from the same source"),
                    Value::Null,
                ));
            }
        }
        Ok(())
    }
}

/// The first key of `value` that reads the host when resolved, if any.
fn host_reading(value: &Value) -> Option<&'static str> {
    let set = |v: &Value| match v {
        Value::Null | Value::Bool(false) => false,
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        _ => true,
    };
    HOST_READING.iter().copied().find(|key| {
        let pointer = format!("/{}", key.replace('.', "/"));
        value.pointer(&pointer).is_some_and(set)
    })
}

fn limits_within(p: &Policy, c: &Policy) -> Within {
    let (l, m) = (p.limits(), c.limits());
    at_most("limits.fuel", l.fuel, m.fuel)?;
    at_most("limits.memory", l.memory, m.memory)?;
    at_most("limits.timeout", l.timeout, m.timeout)?;
    at_most("limits.stack", l.stack, m.stack)?;
    at_most("limits.output", l.output, m.output)?;
    at_most("limits.input", l.input, m.input)?;
    at_most("limits.console", l.console, m.console)?;
    at_most("limits.transcript", l.transcript, m.transcript)
}

fn overrides_within(p: &Policy, c: &Policy) -> Within {
    let (o, m) = (p.overrides(), c.overrides());
    let (l, cl) = (p.limits(), c.limits());
    at_most(
        "overrides.timeout",
        o.timeout.unwrap_or(l.timeout),
        m.timeout.unwrap_or(cl.timeout),
    )?;
    at_most(
        "overrides.fuel",
        o.fuel.unwrap_or(l.fuel),
        m.fuel.unwrap_or(cl.fuel),
    )?;
    at_most(
        "overrides.memory",
        o.memory.unwrap_or(l.memory),
        m.memory.unwrap_or(cl.memory),
    )?;
    for (key, on, ceiling) in [("now", o.now, m.now), ("seed", o.seed, m.seed)] {
        if on && !ceiling {
            return Err(past(
                format!("overrides.{key}"),
                format!("the ceiling does not let a call set {key}"),
                json!(false),
            ));
        }
    }
    if let Some(key) = o.config.iter().find(|k| !m.config.contains(*k)) {
        return Err(past(
            "overrides.config",
            format!("the ceiling's overrides.config does not list `{key}`"),
            json!(m.config),
        ));
    }
    Ok(())
}

/// The clock and the seed: the ceiling's, unless its `[overrides]` let a call set them.
fn determinism_within(p: &Policy, c: &Policy) -> Within {
    let (d, m) = (p.determinism(), c.determinism());
    let free = c.overrides();
    if d.clock != m.clock && !free.now {
        return Err(past(
            "determinism.clock",
            "the ceiling does not let a call choose its clock (overrides.now)",
            json!(match m.clock {
                super::Clock::Real => "real",
                super::Clock::Fixed(_) => "fixed",
            }),
        ));
    }
    if d.seed != m.seed && !free.seed {
        return Err(past(
            "determinism.seed",
            "the ceiling does not let a call choose its seed (overrides.seed)",
            json!(m.seed),
        ));
    }
    Ok(())
}

/// Whether the ceiling's host pattern matches every host `inner` does.
fn host_covers(outer: &HostPattern, inner: &HostPattern) -> bool {
    match (outer, inner) {
        (HostPattern::Any, _) => true,
        (HostPattern::Exact(a), HostPattern::Exact(b)) => a == b,
        (HostPattern::Subdomains(_), HostPattern::Exact(b)) => outer.matches(b),
        (HostPattern::Subdomains(a), HostPattern::Subdomains(b)) => {
            a == b || b.strip_suffix(a.as_str()).is_some_and(|h| h.ends_with('.'))
        }
        _ => false,
    }
}

/// Whether the ceiling's rule allows every request `inner` allows, with the same headers: none
/// it lacks, and every one it injects, with its value.
fn rule_covers(outer: &HttpRule, inner: &HttpRule) -> bool {
    let has = |rule: &HttpRule, (name, value): &(String, super::HeaderValue)| {
        rule.headers.iter().any(|(n, v)| n == name && v == value)
    };
    outer.scheme == inner.scheme
        && outer.port == inner.port
        && host_covers(&outer.host, &inner.host)
        && inner.path.starts_with(outer.path.as_str())
        && inner.methods.iter().all(|m| outer.methods.contains(m))
        && inner.headers.iter().all(|h| has(outer, h))
        && outer.headers.iter().all(|h| has(inner, h))
}

fn http_within(p: &Policy, c: &Policy) -> Within {
    let Some(h) = p.http() else { return Ok(()) };
    let Some(m) = c.http() else {
        return Err(absent("http"));
    };
    at_most("http.max_requests", h.max_requests, m.max_requests)?;
    at_most(
        "http.max_request_body",
        h.max_request_body,
        m.max_request_body,
    )?;
    at_most(
        "http.max_response_body",
        h.max_response_body,
        m.max_response_body,
    )?;
    at_most("http.timeout", h.timeout, m.timeout)?;
    if h.rate != m.rate {
        // A call is metered in its ceiling's bucket, at the ceiling's rate.
        return Err(past(
            "http.rate",
            "an inline policy keeps its ceiling's http.rate",
            json!(m.rate.map(|r| r.to_string())),
        ));
    }
    if let Some(net) = h
        .allow_private
        .iter()
        .find(|n| !m.allow_private.iter().any(|o| o.contains(*n)))
    {
        return Err(past(
            "http.allow_private",
            format!("the ceiling does not allow the private range {net}"),
            json!(m.allow_private),
        ));
    }
    if let Some(host) = h
        .allow_private_hosts
        .iter()
        .find(|x| !m.allow_private_hosts.contains(x))
    {
        return Err(past(
            "http.allow_private_hosts",
            format!("the ceiling does not let `{host}` resolve to a private address"),
            json!(m.allow_private_hosts),
        ));
    }
    if h.ca_file.as_ref().map(|f| &f.path) != m.ca_file.as_ref().map(|f| &f.path)
        && h.ca_file.is_some()
    {
        return Err(past(
            "http.ca_file",
            "the ceiling trusts no such CA file",
            Value::Null,
        ));
    }
    http_rules_within(h, m)
}

fn http_rules_within(h: &super::Http, m: &super::Http) -> Within {
    let covered = |r: &HttpRule| m.allow.iter().any(|o| rule_covers(o, r));
    if let Some(rule) = h.allow.iter().find(|r| !covered(r)) {
        let fits: Vec<&HttpRule> = h.allow.iter().filter(|r| covered(r)).collect();
        return Err(past(
            "http.allow",
            format!(
                "no allow rule of the ceiling covers {} {} (scheme, host, port, path prefix \
                 and methods must fall within one, with the same headers: every header it \
                 injects, none it lacks)",
                rule.methods.join(","),
                rule.url
            ),
            json!(fits),
        ));
    }
    let same = |a: &super::DenyRule, b: &super::DenyRule| {
        (&a.scheme, &a.host, a.port, &a.path, &a.methods)
            == (&b.scheme, &b.host, b.port, &b.path, &b.methods)
    };
    if let Some(deny) = m.deny.iter().find(|d| !h.deny.iter().any(|e| same(d, e))) {
        let fits: Vec<Value> = m
            .deny
            .iter()
            .map(|d| json!({"url": d.url, "methods": d.methods}))
            .collect();
        return Err(past(
            "http.deny",
            format!("the ceiling denies {}, and the policy does not", deny.url),
            Value::Array(fits),
        ));
    }
    Ok(())
}

fn kv_within(p: &Policy, c: &Policy) -> Within {
    let Some(k) = p.kv() else { return Ok(()) };
    let Some(m) = c.kv() else {
        return Err(absent("kv"));
    };
    if k.namespace != m.namespace {
        return Err(past(
            "kv.namespace",
            "an inline policy keeps its ceiling's kv.namespace",
            json!(m.namespace),
        ));
    }
    at_most("kv.max_key", k.max_key, m.max_key)?;
    at_most("kv.max_value", k.max_value, m.max_value)?;
    at_most("kv.max_keys", k.max_keys, m.max_keys)?;
    for (name, mode) in &k.buckets {
        let fits = match m.buckets.get(name) {
            Some(BucketMode::Rw) => continue,
            Some(BucketMode::Ro) if *mode == BucketMode::Ro => continue,
            Some(BucketMode::Ro) => json!("ro"),
            None => Value::Null,
        };
        return Err(past(
            format!("kv.buckets.{}", super::toml_key(name)),
            format!("the ceiling grants bucket `{name}` less (or not at all)"),
            fits,
        ));
    }
    Ok(())
}

fn capabilities_within(p: &Policy, c: &Policy) -> Within {
    let Some(caps) = p.capabilities() else {
        return Ok(());
    };
    let Some(m) = c.capabilities() else {
        return Err(absent("capabilities"));
    };
    for (name, rule) in &caps.allow {
        let key = format!("capabilities.allow.{}", super::toml_key(name));
        let Some(top) = m.allow.get(name) else {
            return Err(past(
                key,
                format!("the ceiling grants no capability `{name}`"),
                Value::Null,
            ));
        };
        at_most(&format!("{key}.max_calls"), rule.max_calls, top.max_calls)?;
        at_most(
            &format!("{key}.max_payload"),
            rule.max_payload,
            top.max_payload,
        )?;
        at_most(
            &format!("{key}.max_response"),
            rule.max_response,
            top.max_response,
        )?;
        if rule.forward != top.forward {
            return Err(past(
                format!("{key}.forward"),
                "an inline policy keeps its ceiling's forward URL",
                json!(top.forward),
            ));
        }
        if let Some(schema) = &top.schema
            && rule.schema.as_ref() != Some(schema)
        {
            return Err(past(
                format!("{key}.schema"),
                "an inline policy keeps its ceiling's payload schema",
                schema.source().clone(),
            ));
        }
    }
    Ok(())
}

fn fs_within(p: &Policy, c: &Policy) -> Within {
    let Some(fs) = p.fs() else { return Ok(()) };
    let top = c.fs();
    for mount in &fs.mount {
        let fits = top.into_iter().flat_map(|t| &t.mount).any(|o| {
            o.host == mount.host
                && (o.mode == MountMode::Rw || mount.mode == MountMode::Ro)
                && mount.quota.unwrap_or(ByteSize(u64::MAX))
                    <= o.quota.unwrap_or(ByteSize(u64::MAX))
        });
        if !fits {
            return Err(past(
                "fs.mount",
                format!("the ceiling mounts no {} as widely", mount.host.display()),
                Value::Null,
            ));
        }
    }
    let Some(scratch) = &fs.scratch else {
        return Ok(());
    };
    let Some(m) = top.and_then(|t| t.scratch.as_ref()) else {
        return Err(absent("fs.scratch"));
    };
    at_most("fs.scratch.quota", scratch.quota, m.quota)?;
    at_most("fs.scratch.max_files", scratch.max_files, m.max_files)?;
    if scratch.seed.iter().any(|s| !m.seed.contains(s)) {
        return Err(past(
            "fs.scratch.seed",
            "the ceiling seeds no such file",
            Value::Null,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
