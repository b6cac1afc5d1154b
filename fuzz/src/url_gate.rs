//! `url_gate`: a differential target. A small reference model of the network gate's rules,
//! written from docs/policy.md (`[http]`, `http.allow`, `http.allow_private`,
//! `http.allow_private_hosts`) and the gate's own docs, not from its code, decides the same
//! structured request as the gate (`palisade::fuzzing::decide_offline`): a policy's allow
//! list, a URL and the addresses its host resolves to. Both must reach the same decision: the
//! rule and target that allow it, or the rule that refuses it.
//!
//! The input is built from parts whose canonical form the model knows by construction (a
//! host name of lower- or upper-case labels, an IPv4 address written dotted or in a numeric
//! form the gate must refuse, an IPv6 address), so the model needs no URL parser of its own.

mod decode;

use arbitrary::{Arbitrary, Unstructured};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Labels of host names: a small alphabet, so that rules and requests meet often. Every one
/// starts with a letter, so no name ends in a number (which URL parsing reads as IPv4).
const LABELS: &[&str] = &[
    "api", "example", "com", "cdn", "internal", "db", "a", "b", "test", "metadata", "x1", "evil",
];

#[derive(Debug)]
struct Name {
    labels: Vec<u8>,
    upper: bool,
    trailing_dot: bool,
}

impl Name {
    /// The canonical form (lower case, no trailing dot) and the form as written.
    fn forms(&self) -> Option<(String, String)> {
        let labels: Vec<&str> = self
            .labels
            .iter()
            .take(4)
            .map(|&i| LABELS[usize::from(i) % LABELS.len()])
            .collect();
        if labels.is_empty() {
            return None;
        }
        let canonical = labels.join(".");
        let mut written = if self.upper {
            canonical.to_ascii_uppercase()
        } else {
            canonical.clone()
        };
        if self.trailing_dot {
            written.push('.');
        }
        Some((canonical, written))
    }
}

/// IPv4 addresses near the ranges' edges as well as anywhere.
#[derive(Debug)]
enum V4 {
    Any(u32),
    Near { base: u8, delta: i16 },
}

const V4_BASES: &[u32] = &[
    0x0000_0000,
    0x0A00_0000,
    0x6440_0000,
    0x7F00_0000,
    0xA9FE_A9FE,
    0xAC10_0000,
    0xAC20_0000,
    0xC000_0000,
    0xC000_0200,
    0xC058_6300,
    0xC0A8_0000,
    0xC612_0000,
    0xC633_6400,
    0xCB00_7100,
    0xE000_0000,
    0xF000_0000,
    0xFFFF_FFFF,
    0x0808_0808,
    0x5DB8_D822,
];

impl V4 {
    fn ip(&self) -> Ipv4Addr {
        match *self {
            V4::Any(n) => Ipv4Addr::from(n),
            V4::Near { base, delta } => Ipv4Addr::from(
                V4_BASES[usize::from(base) % V4_BASES.len()].wrapping_add_signed(i32::from(delta)),
            ),
        }
    }
}

#[derive(Debug)]
enum V6 {
    Any(u128),
    /// A prefix of the special ranges, the rest arbitrary.
    Near {
        base: u8,
        low: u64,
    },
    Mapped(V4),
    Compatible(V4),
}

const V6_BASES: &[u128] = &[
    0,
    0x0000_0000_0000_0000_0000_ffff_0000_0000,
    0x0064_ff9b_0000_0000_0000_0000_0000_0000,
    0x0064_ff9b_0001_0000_0000_0000_0000_0000,
    0x0100_0000_0000_0000_0000_0000_0000_0000,
    0x2001_0000_0000_0000_0000_0000_0000_0000,
    0x2001_0200_0000_0000_0000_0000_0000_0000,
    0x2001_0db8_0000_0000_0000_0000_0000_0000,
    0x2002_0000_0000_0000_0000_0000_0000_0000,
    0x2606_4700_4700_0000_0000_0000_0000_0000,
    0xfc00_0000_0000_0000_0000_0000_0000_0000,
    0xfd00_0000_0000_0000_0000_0000_0000_0000,
    0xfe80_0000_0000_0000_0000_0000_0000_0000,
    0xfec0_0000_0000_0000_0000_0000_0000_0000,
    0xff02_0000_0000_0000_0000_0000_0000_0000,
];

impl V6 {
    fn ip(&self) -> Ipv6Addr {
        match self {
            V6::Any(n) => Ipv6Addr::from(*n),
            V6::Near { base, low } => {
                Ipv6Addr::from(V6_BASES[usize::from(*base) % V6_BASES.len()] | u128::from(*low))
            }
            V6::Mapped(v4) => v4.ip().to_ipv6_mapped(),
            V6::Compatible(v4) => v4.ip().to_ipv6_compatible(),
        }
    }
}

#[derive(Debug)]
enum Ip {
    V4(V4),
    V6(V6),
}

impl Ip {
    fn ip(&self) -> IpAddr {
        match self {
            Ip::V4(v4) => IpAddr::V4(v4.ip()),
            Ip::V6(v6) => IpAddr::V6(v6.ip()),
        }
    }
}

/// How an IPv4 literal is written in a request.
#[derive(Debug)]
enum V4Form {
    Dotted,
    Decimal,
    Hex,
    OctalFirst,
    Short,
}

#[derive(Debug)]
enum Host {
    Name(Name),
    V4(V4, V4Form),
    V6(V6, bool),
}

/// A host as written in a URL, and what the model knows of it: its canonical form, or that it
/// is not acceptable as written.
struct WrittenHost {
    written: String,
    canonical: Option<String>,
    literal: Option<IpAddr>,
}

impl Host {
    fn write(&self) -> Option<WrittenHost> {
        Some(match self {
            Host::Name(name) => {
                let (canonical, written) = name.forms()?;
                WrittenHost {
                    written,
                    canonical: Some(canonical),
                    literal: None,
                }
            }
            Host::V4(v4, form) => {
                let ip = v4.ip();
                let [a, b, c, d] = ip.octets();
                let n = u32::from(ip);
                let (written, canonical) = match form {
                    V4Form::Dotted => (ip.to_string(), true),
                    V4Form::Decimal => (n.to_string(), false),
                    V4Form::Hex => (format!("0x{n:x}"), false),
                    V4Form::OctalFirst => (format!("0{a:o}.{b}.{c}.{d}"), false),
                    // `a.b.N`: the last part holds the low 16 bits.
                    V4Form::Short => (format!("{a}.{b}.{}", u16::from_be_bytes([c, d])), false),
                };
                WrittenHost {
                    canonical: canonical.then(|| written.clone()),
                    written,
                    literal: Some(IpAddr::V4(ip)),
                }
            }
            Host::V6(v6, upper) => {
                let ip = v6.ip();
                let text = ip.to_string();
                let written = if *upper {
                    format!("[{}]", text.to_ascii_uppercase())
                } else {
                    format!("[{text}]")
                };
                WrittenHost {
                    written,
                    canonical: Some(format!("[{text}]")),
                    literal: Some(IpAddr::V6(ip)),
                }
            }
        })
    }
}

/// Path segments, hostile ones among them.
const SEGMENTS: &[&str] = &[
    "v1",
    "v2",
    "users",
    "a",
    "hooks",
    "",
    ".",
    "..",
    "%2e",
    "%2E%2e",
    ".%2e",
    "%2f",
    "%2F",
    "%5c",
    "%5C",
    "a%2fb",
    "%252e",
    "%252e%252e",
    "%252f",
    "..;",
    ".;x",
    "a;b",
    "%2e%2e;p",
    "%",
    "%zz",
    "v1%20",
    "V1",
];

#[derive(Debug)]
struct Rule {
    https: bool,
    host: RuleHost,
    port: Option<u16>,
    path: Vec<u8>,
    trailing_slash: bool,
    methods: Option<Vec<u8>>,
}

#[derive(Debug)]
enum RuleHost {
    Exact(Name),
    Subdomains(Name),
    Any,
    V4(V4),
    V6(V6),
}

const METHODS: &[&str] = &["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"];

/// A rule of the model: what `http.allow` documents.
struct ModelRule {
    scheme: &'static str,
    host: ModelHost,
    port: u16,
    path: String,
    methods: Vec<String>,
}

enum ModelHost {
    Exact(String),
    Subdomains(String),
    Any,
}

impl Rule {
    /// The rule's `url`, and the model's reading of it.
    fn write(&self) -> Option<(String, ModelRule)> {
        let scheme = if self.https { "https" } else { "http" };
        let (written_host, host) = match &self.host {
            RuleHost::Exact(name) => {
                let (canonical, _) = name.forms()?;
                (canonical.clone(), ModelHost::Exact(canonical))
            }
            RuleHost::Subdomains(name) => {
                let (canonical, _) = name.forms()?;
                (format!("*.{canonical}"), ModelHost::Subdomains(canonical))
            }
            RuleHost::Any => ("*".to_owned(), ModelHost::Any),
            RuleHost::V4(v4) => {
                let ip = v4.ip().to_string();
                (ip.clone(), ModelHost::Exact(ip))
            }
            RuleHost::V6(v6) => {
                let ip = format!("[{}]", v6.ip());
                (ip.clone(), ModelHost::Exact(ip))
            }
        };
        let default_port = if self.https { 443 } else { 80 };
        let mut path: String = self
            .path
            .iter()
            .take(3)
            .map(|&i| {
                format!(
                    "/{}",
                    ["v1", "v2", "hooks", "a", "users"][usize::from(i) % 5]
                )
            })
            .collect();
        if self.trailing_slash || path.is_empty() {
            path.push('/');
        }
        let port = self.port.unwrap_or(default_port);
        let url = match self.port {
            Some(p) => format!("{scheme}://{written_host}:{p}{path}"),
            None => format!("{scheme}://{written_host}{path}"),
        };
        let methods: Vec<String> = match &self.methods {
            Some(list) if !list.is_empty() => list
                .iter()
                .take(4)
                .map(|&i| METHODS[usize::from(i) % METHODS.len()].to_owned())
                .collect(),
            _ => vec!["GET".into(), "HEAD".into()],
        };
        Some((
            url,
            ModelRule {
                scheme,
                host,
                port,
                path,
                methods,
            },
        ))
    }
}

#[derive(Debug)]
struct Input {
    rules: Vec<Rule>,
    allow_private: Vec<(Ip, u8)>,
    allow_private_hosts: Vec<Name>,
    scheme: u8,
    userinfo: bool,
    host: Host,
    port: Option<u32>,
    path: Vec<u8>,
    query: bool,
    method: u8,
    lower_method: bool,
    resolved: Vec<Ip>,
}

const SCHEMES: &[&str] = &["https", "http", "HTTPS", "ftp", "ws"];

/// The model's decision: `Ok((rule index, host, port))` or `Err(refusing rule)`.
type Decision = Result<(String, String, u16), String>;

/// The policy an input writes, in the file format, and what the model knows of it.
struct WrittenPolicy {
    toml: String,
    nets: Vec<(IpAddr, u8)>,
    private_hosts: Vec<String>,
    rules: Vec<ModelRule>,
}

/// Write the input's policy: at most 3 private networks, 2 private hosts and 4 rules.
fn write_policy(input: &Input) -> WrittenPolicy {
    let mut toml = String::from("[http]\n");
    let nets: Vec<(IpAddr, u8)> = input
        .allow_private
        .iter()
        .take(3)
        .map(|(ip, len)| {
            let ip = ip.ip();
            let max = if ip.is_ipv4() { 32 } else { 128 };
            (ip, len % (max + 1))
        })
        .collect();
    let list: Vec<String> = nets
        .iter()
        .map(|(ip, len)| format!("\"{ip}/{len}\""))
        .collect();
    toml.push_str(&format!("allow_private = [{}]\n", list.join(", ")));
    let private_hosts: Vec<String> = input
        .allow_private_hosts
        .iter()
        .take(2)
        .filter_map(|n| n.forms().map(|(_, written)| written))
        .collect();
    let list: Vec<String> = private_hosts.iter().map(|h| format!("{h:?}")).collect();
    toml.push_str(&format!("allow_private_hosts = [{}]\n", list.join(", ")));
    let mut rules = Vec::new();
    for rule in input.rules.iter().take(4) {
        let Some((url, model)) = rule.write() else {
            continue;
        };
        let methods: Vec<String> = model.methods.iter().map(|m| format!("{m:?}")).collect();
        toml.push_str(&format!(
            "[[http.allow]]\nurl = {url:?}\nmethods = [{}]\n",
            methods.join(", ")
        ));
        rules.push(model);
    }
    WrittenPolicy {
        toml,
        nets,
        private_hosts,
        rules,
    }
}

pub fn check(data: &[u8]) {
    let Ok(input) = Input::arbitrary_take_rest(Unstructured::new(data)) else {
        return;
    };
    // The policy, in the file format.
    let WrittenPolicy {
        toml,
        nets,
        private_hosts,
        rules,
    } = write_policy(&input);
    let policy = match palisade::Policy::from_toml(&toml, None) {
        Ok(policy) => policy,
        // A rule the policy refuses (`http://*`, a network whose host bits are set, …) is not
        // a request the gate ever decides.
        Err(_) => return,
    };

    // The request.
    let Some(host) = input.host.write() else {
        return;
    };
    let scheme = SCHEMES[usize::from(input.scheme) % SCHEMES.len()];
    let segments: Vec<&str> = input
        .path
        .iter()
        .take(4)
        .map(|&i| SEGMENTS[usize::from(i) % SEGMENTS.len()])
        .collect();
    let path: String = if segments.is_empty() {
        "/".to_owned()
    } else {
        segments.iter().map(|s| format!("/{s}")).collect()
    };
    let port = input.port.map(|p| p % 70_000);
    let userinfo = if input.userinfo { "user:pw@" } else { "" };
    let port_text = port.map(|p| format!(":{p}")).unwrap_or_default();
    let query = if input.query { "?q=1" } else { "" };
    let url = format!(
        "{scheme}://{userinfo}{}{port_text}{path}{query}",
        host.written
    );
    let Ok(uri) = url.parse::<http::Uri>() else {
        // Never reaches the gate: wasi:http refuses it first.
        return;
    };
    let mut method = METHODS[usize::from(input.method) % METHODS.len()].to_owned();
    if input.lower_method {
        method = method.to_ascii_lowercase();
    }
    let resolved: Vec<IpAddr> = input.resolved.iter().take(4).map(Ip::ip).collect();

    let expected = model(
        &rules,
        &nets,
        &private_hosts,
        Request {
            scheme,
            userinfo: input.userinfo,
            host: &host,
            port,
            segments: &segments,
            path: &path,
            method: &method,
            resolved: &resolved,
        },
    );
    let actual = palisade::fuzzing::decide_offline(&policy, &method, &uri, &resolved);
    let (actual, expected) = (same_spelling(actual), same_spelling(expected));
    assert_eq!(
        actual, expected,
        "the gate and the model disagree on {method} {url} resolving to {resolved:?}\n--- policy:\n{toml}"
    );
}

/// An IPv6 host spelled one way (`[::ffff:1.2.3.4]` and `[::ffff:102:304]` are one address):
/// the decision is compared, not the spelling.
fn same_spelling(decision: Decision) -> Decision {
    decision.map(|(rule, host, port)| {
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .and_then(|h| h.parse::<Ipv6Addr>().ok())
            .map_or(host, |ip| format!("[{ip}]"));
        (rule, host, port)
    })
}

struct Request<'a> {
    scheme: &'a str,
    userinfo: bool,
    host: &'a WrittenHost,
    port: Option<u32>,
    segments: &'a [&'a str],
    path: &'a str,
    method: &'a str,
    resolved: &'a [IpAddr],
}

/// The documented rules, in their documented order (docs/policy.md, `[http]`).
fn model(
    rules: &[ModelRule],
    nets: &[(IpAddr, u8)],
    private_hosts: &[String],
    r: Request,
) -> Decision {
    // 1. The URL is clean.
    if r.userinfo {
        return Err("http.userinfo".into());
    }
    let Some(port) = r
        .port
        .map_or(Some(None), |p| u16::try_from(p).ok().map(Some))
    else {
        return Err("http.host".into());
    };
    let Some(host) = r.host.canonical.clone() else {
        return Err("http.host".into());
    };
    if r.segments.iter().any(|s| hides_a_dot_or_separator(s)) {
        return Err("http.path".into());
    }
    // 2. A rule matches scheme, host, port and path prefix; then the method.
    let scheme = r.scheme.to_ascii_lowercase();
    let port = port.unwrap_or(if scheme == "https" { 443 } else { 80 });
    let found = rules.iter().enumerate().find(|(_, rule)| {
        rule.scheme == scheme
            && match &rule.host {
                ModelHost::Exact(h) => *h == host,
                ModelHost::Subdomains(suffix) => {
                    host.len() > suffix.len() + 1 && host.ends_with(&format!(".{suffix}"))
                }
                ModelHost::Any => true,
            }
            && rule.port == port
            && r.path.starts_with(&rule.path)
    });
    let Some((index, rule)) = found else {
        return Err("http.allow".into());
    };
    let method = r.method.to_ascii_uppercase();
    if !rule.methods.contains(&method) {
        return Err(format!("http.allow[{index}].methods"));
    }
    // 4. Every address is public, or opened by `allow_private` / `allow_private_hosts`.
    let addresses: Vec<IpAddr> = match r.host.literal {
        Some(ip) => vec![ip],
        None => r.resolved.to_vec(),
    };
    if addresses.is_empty() {
        return Err("dns".into());
    }
    let named = r.host.literal.is_none()
        && private_hosts
            .iter()
            .any(|h| h.trim_end_matches('.').eq_ignore_ascii_case(&host));
    for ip in addresses {
        let opened = named || nets.iter().any(|(net, len)| in_network(ip, *net, *len));
        if !is_public(ip) && !opened {
            return Err("http.private".into());
        }
    }
    Ok((format!("http.allow[{index}]"), host, port))
}

/// A dot segment or a hidden separator, once or twice percent-decoded, a `;` parameter
/// ignored.
fn hides_a_dot_or_separator(segment: &str) -> bool {
    let once = percent_decode(segment.as_bytes());
    let twice = percent_decode(&once);
    [segment.as_bytes().to_vec(), once, twice]
        .iter()
        .any(|form| {
            let before_parameter = form.split(|&b| b == b';').next().unwrap_or_default();
            before_parameter == b"."
                || before_parameter == b".."
                || form.contains(&b'/')
                || form.contains(&b'\\')
        })
}

fn percent_decode(bytes: &[u8]) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let (Some(hi), Some(lo)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push(hi << 4 | lo);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

fn in_network(ip: IpAddr, net: IpAddr, len: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(ip), IpAddr::V4(net)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
            u32::from(ip) & mask == u32::from(net) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
            u128::from(ip) & mask == u128::from(net) & mask
        }
        _ => false,
    }
}

/// Whether an address is on the public internet: not private, loopback, link-local
/// (metadata), CGNAT, multicast, unspecified, reserved or documentation, and not an IPv6 form
/// that embeds an IPv4 address (docs/policy.md, `[http]` step 4; the IANA special-purpose
/// registries for the ranges the docs group as "reserved").
fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(ip) => public_v4(ip),
        IpAddr::V6(ip) => public_v6(ip),
    }
}

fn public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let private = ip.is_private();
    let loopback = ip.is_loopback();
    let link_local = ip.is_link_local();
    let cgnat = a == 100 && (64..128).contains(&b);
    let multicast = ip.is_multicast();
    // "This network" (0/8, the unspecified address among it).
    let this_network = a == 0;
    let documentation = ip.is_documentation();
    // IETF protocol assignments, the deprecated 6to4 relay anycast, benchmarking, and the
    // reserved 240/4 with the broadcast address.
    let reserved = (a, b, c) == (192, 0, 0)
        || (a, b, c) == (192, 88, 99)
        || (a == 198 && (b == 18 || b == 19))
        || a >= 240;
    !(private
        || loopback
        || link_local
        || cgnat
        || multicast
        || this_network
        || documentation
        || reserved)
}

fn public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    let unspecified_or_loopback = ip.is_unspecified() || ip.is_loopback();
    let multicast = ip.is_multicast();
    let unique_local = s[0] & 0xfe00 == 0xfc00;
    let link_local = s[0] & 0xffc0 == 0xfe80;
    let site_local = s[0] & 0xffc0 == 0xfec0;
    let documentation = s[0] == 0x2001 && s[1] == 0x0db8;
    // Forms that embed an IPv4 address: mapped (::ffff:0:0/96), compatible (::/96), NAT64
    // (64:ff9b::/96 and the local-use 64:ff9b:1::/48), 6to4 (2002::/16); Teredo sits in the
    // IETF protocol assignments 2001::/23, reserved as a whole.
    let mapped = ip.to_ipv4_mapped().is_some();
    let compatible = s[..6] == [0; 6];
    let nat64 = (s[0], s[1]) == (0x64, 0xff9b) && (s[2..6] == [0; 4] || s[2] == 1);
    let six_to_four = s[0] == 0x2002;
    let ietf = s[0] == 0x2001 && s[1] < 0x200;
    // The discard-only prefix 100::/64.
    let discard = s[0] == 0x100 && s[1..4] == [0; 3];
    !(unspecified_or_loopback
        || multicast
        || unique_local
        || link_local
        || site_local
        || documentation
        || mapped
        || compatible
        || nat64
        || six_to_four
        || ietf
        || discard)
}
