//! `[http]` and `[secrets]` resolved: which URLs a script may fetch, which private address
//! ranges a rule opens, the per-call budgets, the rate limit, and the headers the host injects.

use super::host::{canonical_host, split_host_port};
use super::raw::{RawHttp, RawHttpDeny, RawHttpRule, RawSecret};
use super::units::{ByteSize, HumanDuration};
use super::{PolicyError, Source};
use ipnet::IpNet;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::time::Duration;

/// The shortest secret a policy may inject, in bytes. A shorter one (`"42"`, `"x"`) occurs by
/// chance in ordinary text: redacting it would garble every output, error and console line
/// that holds those characters ("Une[redacted]pected"), and turn unrelated output into
/// `bad_output`. It is also the length from which a cut form counts as the secret.
const MIN_SECRET_BYTES: usize = 8;

/// Network access the policy grants. Absent from a policy means no network at all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Http {
    /// Requests per script call.
    pub max_requests: u32,
    /// Request body bytes per script call, all requests together.
    pub max_request_body: ByteSize,
    /// Response body bytes per script call, all responses together, counted after decompression.
    pub max_response_body: ByteSize,
    /// Time for one request, from connect to the last body byte.
    pub timeout: HumanDuration,
    /// Requests per period across all calls under this policy, when limited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// Private, loopback and other non-public ranges that rules may reach. Empty by default.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allow_private: Vec<IpNet>,
    /// Host names (lower-case, as rules write them) that may resolve to non-public addresses,
    /// whatever they resolve to: internal services named by DNS. Empty by default.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allow_private_hosts: Vec<String>,
    /// Certificate authorities trusted for `https` besides the built-in public roots and the
    /// system's store: the certificates of `ca_file` (PEM), read when the policy is loaded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<CaFile>,
    /// Allowed targets; the first rule that matches decides.
    pub allow: Vec<HttpRule>,
    /// Refused targets (`[[http.deny]]`), checked before the allow rules.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<DenyRule>,
}

/// One refused target: `scheme://host[:port]/path-prefix`, for some methods or all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DenyRule {
    /// The rule as written.
    pub url: String,
    /// `http` or `https`.
    #[serde(skip)]
    pub scheme: String,
    /// The hosts it matches.
    #[serde(skip)]
    pub host: HostPattern,
    /// The port, the scheme's default when the rule names none.
    #[serde(skip)]
    pub port: u16,
    /// Paths that start with this prefix match.
    #[serde(skip)]
    pub path: String,
    /// Upper-case method names; empty: every method.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub methods: Vec<String>,
}

impl DenyRule {
    /// Whether a request of `method` (upper case) to this target is refused by the rule.
    pub fn matches(&self, scheme: &str, host: &str, port: u16, path: &str, method: &str) -> bool {
        self.scheme == scheme
            && self.host.matches(host)
            && self.port == port
            && path.starts_with(self.path.as_str())
            && (self.methods.is_empty() || self.methods.iter().any(|m| m == method))
    }
}

/// The extra certificate authorities of `[http] ca_file`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CaFile {
    /// The file, as the policy names it.
    pub path: String,
    /// Its certificates, DER-encoded.
    #[serde(skip)]
    pub certificates: std::sync::Arc<Vec<Vec<u8>>>,
}

/// A CA file is a few certificates; this bounds what the host reads.
const MAX_CA_FILE_BYTES: u64 = 1 << 20;

/// The certificates of the PEM file `ca_file` names (relative to the policy's folder).
fn read_ca_file(raw: &toml::Spanned<String>, source: &Source<'_>) -> Result<CaFile, PolicyError> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let base = match source.file.and_then(Path::parent) {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = raw.get_ref();
    let fail = |message: String| source.error("http.ca_file", Some(raw.span()), message);
    let bytes = crate::hostfile::read_bounded(&base.join(name), MAX_CA_FILE_BYTES)
        .map_err(|e| fail(format!("cannot read `{name}`: {e}")))?;
    let mut certificates = Vec::new();
    for certificate in CertificateDer::pem_slice_iter(&bytes) {
        let certificate =
            certificate.map_err(|e| fail(format!("`{name}` is not PEM certificates: {e}")))?;
        certificates.push(certificate.to_vec());
    }
    if certificates.is_empty() {
        return Err(fail(format!("`{name}` holds no PEM certificate")));
    }
    Ok(CaFile {
        path: name.clone(),
        certificates: std::sync::Arc::new(certificates),
    })
}

/// A rate: `count` requests per `per`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    /// Requests allowed in each period.
    pub count: u32,
    /// The period: a second, a minute or an hour.
    pub per: Duration,
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let unit = match self.per.as_secs() {
            1 => "s",
            60 => "min",
            _ => "h",
        };
        write!(f, "{}/{unit}", self.count)
    }
}

impl Serialize for Rate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One allowed target: `scheme://host[:port]/path-prefix`, with methods and injected headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpRule {
    /// The rule as written, for errors and `policy check`.
    pub url: String,
    /// `http` or `https`.
    pub scheme: String,
    /// The hosts the rule matches, lower-case.
    pub host: HostPattern,
    /// The port, the scheme's default when the rule names none.
    pub port: u16,
    /// Requests whose path starts with this prefix match; `/` matches every path.
    pub path: String,
    /// Upper-case method names.
    pub methods: Vec<String>,
    /// Headers the host sets on matching requests, secrets resolved; never shown to the script.
    pub headers: Vec<(String, HeaderValue)>,
}

/// A rule's host: exact, `*.suffix` for any subdomain of suffix (not suffix itself), or `*`
/// (https only) for any host. Every pattern admits only the addresses the address checks
/// admit: `*` opens the public internet, never a private, loopback or link-local address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostPattern {
    /// This host only.
    Exact(String),
    /// Any subdomain of this suffix (written `*.suffix`), not the suffix itself.
    Subdomains(String),
    /// Any host (written `*`, in an `https` rule only).
    Any,
}

impl HostPattern {
    /// Whether a request's host (lower-case, without a trailing dot) matches.
    pub fn matches(&self, host: &str) -> bool {
        match self {
            HostPattern::Exact(h) => h == host,
            HostPattern::Any => true,
            HostPattern::Subdomains(suffix) => host
                .strip_suffix(suffix.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
        }
    }
}

/// A header value template: the text as written and the value with secrets filled in.
#[derive(Clone, PartialEq, Eq)]
pub struct HeaderValue {
    /// The value as written in the policy, with its `${secrets.NAME}` references.
    pub template: String,
    /// The value sent, with the secrets filled in.
    pub value: String,
    /// The secret values used in it, so that they can be redacted wherever they show up.
    pub secrets: Vec<String>,
}

impl fmt::Debug for HeaderValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The template names the secret; the value never leaves the host.
        write!(f, "{:?}", self.template)
    }
}

impl Serialize for HttpRule {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("url", &self.url)?;
        map.serialize_entry("methods", &self.methods)?;
        if !self.headers.is_empty() {
            let headers: BTreeMap<&str, &str> = self
                .headers
                .iter()
                .map(|(k, v)| (k.as_str(), v.template.as_str()))
                .collect();
            map.serialize_entry("headers", &headers)?;
        }
        map.end()
    }
}

impl Http {
    /// Every secret value used by a rule, for redaction.
    pub fn secret_values(&self) -> Vec<String> {
        let mut values: Vec<String> = self
            .allow
            .iter()
            .flat_map(|r| {
                r.headers
                    .iter()
                    .flat_map(|(_, v)| v.secrets.iter().cloned())
            })
            .collect();
        values.sort();
        values.dedup();
        values
    }
}

/// Where a `[secrets]` entry comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SecretSource {
    /// An environment variable of the host process.
    Env(String),
    /// A file on the host (relative to the policy file); surrounding whitespace is trimmed.
    File(String),
}

pub(crate) const DEFAULT_MAX_REQUESTS: u32 = 20;
/// Largest `http.max_requests`: each request holds a connection and an audit record.
pub(crate) const MAX_REQUESTS_LIMIT: u32 = 10_000;
const DEFAULT_MAX_REQUEST_BODY: ByteSize = ByteSize(1 << 20);
pub(crate) const DEFAULT_MAX_RESPONSE_BODY: ByteSize = ByteSize(8 << 20);
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
const DEFAULT_METHODS: &[&str] = &["GET", "HEAD"];
const BODY_LIMIT: ByteSize = ByteSize(1 << 30);

pub(super) fn resolve_secrets(
    raw: &BTreeMap<String, toml::Spanned<RawSecret>>,
    source: &Source<'_>,
) -> Result<BTreeMap<String, (SecretSource, String)>, PolicyError> {
    let base = match source.file.and_then(Path::parent) {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let mut out = BTreeMap::new();
    for (name, secret) in raw {
        let key = format!("secrets.{name}");
        let span = Some(secret.span());
        let (from, value) = match secret.get_ref() {
            RawSecret {
                env: Some(var),
                file: None,
            } => {
                let value = std::env::var(var).map_err(|_| {
                    source.error(
                        &key,
                        span.clone(),
                        format!("the environment variable `{var}` is not set"),
                    )
                })?;
                (SecretSource::Env(var.clone()), value)
            }
            RawSecret {
                env: None,
                file: Some(file),
            } => {
                let text =
                    crate::hostfile::read_text(&base.join(file), crate::hostfile::MAX_SECRET_BYTES)
                        .map_err(|e| {
                            source.error(&key, span.clone(), format!("cannot read `{file}`: {e}"))
                        })?;
                (SecretSource::File(file.clone()), text.trim().to_owned())
            }
            _ => {
                return Err(source.error(
                    &key,
                    span,
                    "a secret names exactly one source: { env = \"VAR\" } or { file = \"path\" }",
                ));
            }
        };
        if value.is_empty() {
            return Err(source.error(&key, span, "the secret is empty"));
        }
        if value.len() < MIN_SECRET_BYTES {
            return Err(source.error(
                &key,
                span,
                format!(
                    "the secret is {} bytes; one shorter than {} bytes occurs by chance in \
                     ordinary text, so it cannot be redacted from outputs and messages without \
                     garbling them: use a longer secret",
                    value.len(),
                    MIN_SECRET_BYTES
                ),
            ));
        }
        if value.chars().any(|c| c.is_control()) {
            return Err(source.error(
                &key,
                span,
                "the secret contains control characters and cannot go in a header",
            ));
        }
        out.insert(name.clone(), (from, value));
    }
    Ok(out)
}

/// `[http]` resolved: the budgets in their ranges, the rate, the private ranges and hosts a
/// rule may reach, the CA file, and the allow rules with their headers filled in.
pub(super) fn resolve(
    raw: &RawHttp,
    secrets: &BTreeMap<String, (SecretSource, String)>,
    source: &Source<'_>,
) -> Result<Http, PolicyError> {
    let max_requests = match &raw.max_requests {
        Some(n) if *n.get_ref() == 0 || *n.get_ref() > MAX_REQUESTS_LIMIT => {
            return Err(source.error(
                "http.max_requests",
                Some(n.span()),
                format!("must be 1 to {MAX_REQUESTS_LIMIT}; remove [http] to deny the network"),
            ));
        }
        Some(n) => *n.get_ref(),
        None => DEFAULT_MAX_REQUESTS,
    };
    let size = |value: &Option<toml::Spanned<ByteSize>>, key: &str, default: ByteSize| match value {
        Some(v) if *v.get_ref() > BODY_LIMIT => Err(source.error(
            key,
            Some(v.span()),
            format!("{} is over the {BODY_LIMIT} limit", v.get_ref()),
        )),
        Some(v) => Ok(*v.get_ref()),
        None => Ok(default),
    };
    let max_request_body = size(
        &raw.max_request_body,
        "http.max_request_body",
        DEFAULT_MAX_REQUEST_BODY,
    )?;
    let max_response_body = size(
        &raw.max_response_body,
        "http.max_response_body",
        DEFAULT_MAX_RESPONSE_BODY,
    )?;
    let timeout = match &raw.timeout {
        Some(t) if t.get_ref().0.is_zero() || t.get_ref().0 > Duration::from_secs(3600) => {
            return Err(source.error("http.timeout", Some(t.span()), "must be between 1ms and 1h"));
        }
        Some(t) => *t.get_ref(),
        None => HumanDuration(DEFAULT_TIMEOUT),
    };
    let rate = match &raw.rate {
        Some(text) => Some(parse_rate(text.get_ref()).ok_or_else(|| {
            source.error(
                "http.rate",
                Some(text.span()),
                format!(
                    "`{}` is not a rate; write requests per period, such as \"10/s\", \
                     \"600/min\" or \"5000/h\"",
                    text.get_ref()
                ),
            )
        })?),
        None => None,
    };
    let (allow_private, allow_private_hosts) = resolve_private(raw, source)?;
    let mut allow = Vec::new();
    for (i, rule) in raw.allow.iter().enumerate() {
        allow.push(resolve_rule(i, rule, secrets, source)?);
    }
    let deny = raw
        .deny
        .iter()
        .enumerate()
        .map(|(i, rule)| resolve_deny(i, rule, source))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Http {
        max_requests,
        max_request_body,
        max_response_body,
        timeout,
        rate,
        allow_private,
        allow_private_hosts,
        ca_file: raw
            .ca_file
            .as_ref()
            .map(|f| read_ca_file(f, source))
            .transpose()?,
        allow,
        deny,
    })
}

/// `[[http.deny]]` number `i`: its URL split as an allow rule's is, and its methods.
fn resolve_deny(
    i: usize,
    rule: &toml::Spanned<RawHttpDeny>,
    source: &Source<'_>,
) -> Result<DenyRule, PolicyError> {
    let key = format!("http.deny[{i}]");
    let r = rule.get_ref();
    let (scheme, host, port, path) = parse_rule_url(&r.url).map_err(|m| {
        source.error(
            &format!("{key}.url"),
            Some(rule.span()),
            format!("`{}`: {m}", r.url),
        )
    })?;
    let methods = r.methods.as_deref().unwrap_or_default();
    let methods = methods
        .iter()
        .map(|m| {
            let upper = m.to_ascii_uppercase();
            if upper.is_empty() || !upper.bytes().all(|b| b.is_ascii_alphabetic()) {
                return Err(source.error(
                    &format!("{key}.methods"),
                    Some(rule.span()),
                    format!("`{m}` is not an HTTP method"),
                ));
            }
            Ok(upper)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(DenyRule {
        url: r.url.clone(),
        scheme,
        host,
        port,
        path,
        methods,
    })
}

/// `allow_private` (addresses and CIDR ranges) and `allow_private_hosts` (host names, lower
/// case, without a final dot).
fn resolve_private(
    raw: &RawHttp,
    source: &Source<'_>,
) -> Result<(Vec<IpNet>, Vec<String>), PolicyError> {
    let mut allow_private = Vec::new();
    for (i, net) in raw.allow_private.iter().enumerate() {
        let text = net.get_ref();
        let parsed = text
            .parse::<IpNet>()
            .or_else(|_| text.parse::<std::net::IpAddr>().map(IpNet::from))
            .map_err(|_| {
                source.error(
                    &format!("http.allow_private[{i}]"),
                    Some(net.span()),
                    format!("`{text}` is not an address or CIDR range such as \"10.0.0.0/8\""),
                )
            })?;
        allow_private.push(parsed.trunc());
    }
    let mut allow_private_hosts = Vec::new();
    for (i, host) in raw.allow_private_hosts.iter().enumerate() {
        let text = host.get_ref().trim_end_matches('.').to_ascii_lowercase();
        let valid = !text.is_empty()
            && text.len() <= 253
            && text.split('.').all(|l| {
                !l.is_empty()
                    && l.len() <= 63
                    && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            });
        if !valid {
            return Err(source.error(
                &format!("http.allow_private_hosts[{i}]"),
                Some(host.span()),
                format!(
                    "`{}` is not a host name such as \"db.internal.example\"",
                    host.get_ref()
                ),
            ));
        }
        allow_private_hosts.push(text);
    }
    Ok((allow_private, allow_private_hosts))
}

/// `[[http.allow]]` number `i`: its URL split, its methods (upper case) and its headers.
fn resolve_rule(
    i: usize,
    rule: &toml::Spanned<RawHttpRule>,
    secrets: &BTreeMap<String, (SecretSource, String)>,
    source: &Source<'_>,
) -> Result<HttpRule, PolicyError> {
    let key = format!("http.allow[{i}]");
    let span = Some(rule.span());
    let r = rule.get_ref();
    let (scheme, host, port, path) = parse_rule_url(&r.url).map_err(|m| {
        source.error(
            &format!("{key}.url"),
            span.clone(),
            format!("`{}`: {m}", r.url),
        )
    })?;
    let methods = match &r.methods {
        None => DEFAULT_METHODS.iter().map(|m| (*m).to_owned()).collect(),
        Some(methods) => {
            let mut out = Vec::new();
            for m in methods {
                let upper = m.to_ascii_uppercase();
                if upper.is_empty() || !upper.bytes().all(|b| b.is_ascii_alphabetic()) {
                    return Err(source.error(
                        &format!("{key}.methods"),
                        span,
                        format!("`{m}` is not an HTTP method"),
                    ));
                }
                out.push(upper);
            }
            out
        }
    };
    let headers = resolve_headers(&key, span, r, secrets, source)?;
    Ok(HttpRule {
        url: r.url.clone(),
        scheme,
        host,
        port,
        path,
        methods,
        headers,
    })
}

/// A rule's headers: valid names, named once (ignoring case), secrets filled in, sorted by
/// lower-case name.
fn resolve_headers(
    key: &str,
    span: Option<std::ops::Range<usize>>,
    r: &RawHttpRule,
    secrets: &BTreeMap<String, (SecretSource, String)>,
    source: &Source<'_>,
) -> Result<Vec<(String, HeaderValue)>, PolicyError> {
    let mut headers: Vec<(String, HeaderValue)> = Vec::new();
    for (name, template) in &r.headers {
        let hkey = format!("{key}.headers.{name}");
        if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(source.error(&hkey, span, format!("`{name}` is not a header name")));
        }
        let value =
            fill_secrets(template, secrets).map_err(|m| source.error(&hkey, span.clone(), m))?;
        let lower = name.to_ascii_lowercase();
        if headers.iter().any(|(n, _)| *n == lower) {
            return Err(source.error(
                &hkey,
                span,
                format!("`{lower}` is named twice (header names ignore case)"),
            ));
        }
        headers.push((lower, value));
    }
    // One order whatever the file's case: the resolved form (sorted by lower-case name)
    // reads back to the same rule.
    headers.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(headers)
}

/// Fill `${secret:NAME}` references from the resolved secrets.
fn fill_secrets(
    template: &str,
    secrets: &BTreeMap<String, (SecretSource, String)>,
) -> Result<HeaderValue, String> {
    let mut value = String::new();
    let mut used = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        value.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("`{template}` has an unclosed `${{`"))?;
        let reference = &after[..end];
        let name = reference.strip_prefix("secret:").ok_or_else(|| {
            format!("`${{{reference}}}` is not a reference; write `${{secret:NAME}}`")
        })?;
        let (_, secret) = secrets.get(name).ok_or_else(|| {
            format!("the secret `{name}` is not defined; add it to [secrets] (secrets.{name} = {{ env = \"VAR\" }})")
        })?;
        value.push_str(secret);
        used.push(secret.clone());
        rest = &after[end + 1..];
    }
    value.push_str(rest);
    if http::HeaderValue::from_str(&value).is_err() {
        return Err(format!("`{template}` is not a valid header value"));
    }
    Ok(HeaderValue {
        template: template.to_owned(),
        value,
        secrets: used,
    })
}

fn parse_rate(text: &str) -> Option<Rate> {
    let (count, unit) = text.split_once('/')?;
    let count: u32 = count.trim().replace('_', "").parse().ok()?;
    let per = match unit.trim() {
        "s" | "sec" | "second" => Duration::from_secs(1),
        "m" | "min" | "minute" => Duration::from_secs(60),
        "h" | "hour" => Duration::from_secs(3600),
        _ => return None,
    };
    (count > 0).then_some(Rate { count, per })
}

/// Split a rule URL: `https://api.example.com/v1/`, `http://localhost:8080`, `https://*.example.com`,
/// `https://*`.
fn parse_rule_url(url: &str) -> Result<(String, HostPattern, u16, String), String> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or("write a URL such as \"https://api.example.com/v1/\"")?;
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return Err("the scheme must be http or https".into()),
    };
    let (authority, path) = match rest.find(['/', '?', '#']) {
        Some(i) if rest[i..].starts_with('/') => (&rest[..i], &rest[i..]),
        Some(_) => return Err("a rule has no query or fragment".into()),
        None => (rest, "/"),
    };
    if path.contains(['?', '#', '%', '\\']) {
        return Err("a rule's path is a plain prefix, without `?`, `#`, `%` or `\\`".into());
    }
    if path.split('/').any(|s| s == "." || s == "..") {
        return Err("a rule's path has no `.` or `..` segments".into());
    }
    if authority.contains('@') {
        return Err("a rule has no user name or password".into());
    }
    let (host, port) = split_host_port(authority).ok_or("the port is not a number")?;
    let port = port.unwrap_or(default_port);
    let host = host.to_ascii_lowercase();
    let host = host.strip_suffix('.').unwrap_or(&host).to_owned();
    let pattern = if host == "*" {
        // Any host, but only over https: a plain-http rule for every host would send whatever
        // the script sends, in the clear, anywhere.
        if scheme != "https" {
            return Err(
                "`*` (any host) is allowed only in an https rule: write \"https://*\"".into(),
            );
        }
        HostPattern::Any
    } else if let Some(suffix) = host.strip_prefix("*.") {
        if suffix.is_empty() || suffix.contains('*') {
            return Err("`*.` must be followed by a domain".into());
        }
        HostPattern::Subdomains(canonical_host(suffix).map_err(|e| e.to_string())?)
    } else {
        if host.contains('*') {
            return Err("`*` is only allowed as a leading `*.`".into());
        }
        HostPattern::Exact(canonical_host(&host).map_err(|e| e.to_string())?)
    };
    Ok((scheme, pattern, port, path.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdomain_patterns_need_a_label() {
        let p = HostPattern::Subdomains("example.com".into());
        assert!(p.matches("api.example.com"));
        assert!(!p.matches("example.com"));
        assert!(!p.matches("evilexample.com"));
    }

    #[test]
    fn rule_urls_split() {
        let (scheme, host, port, path) = parse_rule_url("http://LOCALHOST:8080/api/").unwrap();
        assert_eq!(
            (scheme.as_str(), host, port, path.as_str()),
            (
                "http",
                HostPattern::Exact("localhost".into()),
                8080,
                "/api/"
            )
        );
        assert!(parse_rule_url("https://u@example.com/").is_err());
        assert!(parse_rule_url("ftp://example.com/").is_err());
        assert!(parse_rule_url("https://example.com/a/../b").is_err());
        assert_eq!(parse_rule_url("https://*").unwrap().1, HostPattern::Any);
        assert_eq!(parse_rule_url("HTTPS://*/v1/").unwrap().3, "/v1/");
        assert!(parse_rule_url("http://*").is_err());
        assert!(parse_rule_url("https://*x.example.com").is_err());
        assert!(parse_rule_url("https://a.*.example.com").is_err());
        assert_eq!(parse_rate("600/min").unwrap().per, Duration::from_secs(60));
    }
}
