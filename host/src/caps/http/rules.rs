//! The allow rules: a request's URL and method against the policy's `[[http.allow]]`, before
//! any I/O.

use super::*;

/// A dot segment, or one that decodes (once or twice, as some servers do) to a dot segment or
/// a separator; a `;` parameter (`..;/`, which some servers strip) is ignored when comparing.
pub(super) fn unsafe_segment(segment: &str) -> bool {
    let once: Vec<u8> = percent_encoding::percent_decode(segment.as_bytes()).collect();
    let twice: Vec<u8> = percent_encoding::percent_decode(&once).collect();
    [segment.as_bytes(), &once, &twice].iter().any(|form| {
        let head = form.split(|&b| b == b';').next().unwrap_or(&[]);
        head == b"." || head == b".." || form.iter().any(|&b| b == b'/' || b == b'\\')
    })
}

/// Where an allowed request goes.
pub(super) struct Target {
    pub(super) host: String,
    pub(super) port: u16,
    pub(super) https: bool,
    pub(super) rule_key: String,
}

/// Decide a request's URL and method against the policy's allow rules, before any I/O and
/// before the budgets: the rule that allows it and where it goes, or why not.
pub(super) fn decide<'a>(
    policy: Option<&'a Http>,
    method: &str,
    uri: &http::Uri,
) -> Result<(&'a Http, &'a HttpRule, Target), Refusal> {
    let scheme = uri.scheme_str().unwrap_or("").to_ascii_lowercase();
    let authority = uri.authority().map_or("", |a| a.as_str());
    let Some(policy) = policy else {
        let url = format!("{scheme}://{authority}/");
        return Err(Refusal::http(
            uri,
            "http",
            "the policy has no [http] table, so the script has no network access",
            Some(Fix {
                key: "[[http.allow]] url".into(),
                value: format!("{url:?}"),
            }),
        ));
    };
    let (host, port) = host_and_port(uri, authority)?;
    let port = port.unwrap_or(if scheme == "https" { 443 } else { 80 });
    let path = uri.path();
    check_path(uri, path)?;
    let method = method.to_ascii_uppercase();
    let denied = policy
        .deny
        .iter()
        .position(|rule| rule.matches(&scheme, &host, port, path, &method));
    if let Some(index) = denied {
        return Err(Refusal::http(
            uri,
            format!("http.deny[{index}]"),
            format!(
                "the policy's deny rule `{}` matches this request",
                policy.deny[index].url
            ),
            None,
        ));
    }
    let found = policy.allow.iter().enumerate().find(|(_, rule)| {
        rule.scheme == scheme
            && rule.host.matches(&host)
            && rule.port == port
            && path.starts_with(rule.path.as_str())
    });
    let Some((index, rule)) = found else {
        return Err(no_rule(uri, &scheme, &host, port));
    };
    check_method(uri, index, rule, &method)?;
    Ok((
        policy,
        rule,
        Target {
            host,
            port,
            https: scheme == "https",
            rule_key: format!("http.allow[{index}]"),
        },
    ))
}

/// The request's host in its canonical form and its port, if given: no user name or
/// password, a valid port, a host that is there and valid.
fn host_and_port(uri: &http::Uri, authority: &str) -> Result<(String, Option<u16>), Refusal> {
    if authority.contains('@') {
        return Err(Refusal::http(
            uri,
            "http.userinfo",
            "URLs with a user name or password are refused; credentials come from the \
                 policy's headers",
            None,
        ));
    }
    let (host, port) = split_host_port(authority).ok_or_else(|| {
        Refusal::http(
            uri,
            "http.host",
            format!("`{authority}` has no valid port"),
            None,
        )
    })?;
    if host.is_empty() {
        return Err(Refusal::http(
            uri,
            "http.host",
            "the request has no host",
            None,
        ));
    }
    let host = canonical_host(host).map_err(|e| {
        let reason = e.to_string();
        match e {
            HostError::Invalid(_) | HostError::NonCanonicalIpv4 { .. } => {
                Refusal::http(uri, "http.host", reason, None)
            }
        }
    })?;
    Ok((host, port))
}

/// Paths are matched as written: no segment may be a dot segment or hide a separator.
fn check_path(uri: &http::Uri, path: &str) -> Result<(), Refusal> {
    match path.split('/').find(|s| unsafe_segment(s)) {
        Some(segment) => Err(Refusal::http(
            uri,
            "http.path",
            format!(
                "the path segment `{segment}` is a dot segment or hides a separator; \
                     paths are matched as written and must not contain them"
            ),
            None,
        )),
        None => Ok(()),
    }
}

/// The refusal of a URL that no `[[http.allow]]` rule matches, with the rule that would
/// allow its directory.
fn no_rule(uri: &http::Uri, scheme: &str, host: &str, port: u16) -> Refusal {
    let path = uri.path();
    let dir = match path.rfind('/') {
        Some(i) => &path[..=i],
        None => "/",
    };
    let default_port = if scheme == "https" { 443 } else { 80 };
    let shown_port = if port == default_port {
        String::new()
    } else {
        format!(":{port}")
    };
    Refusal::http(
        uri,
        "http.allow",
        format!("no [[http.allow]] rule matches {scheme}://{host}{shown_port}{path}"),
        Some(Fix {
            key: "[[http.allow]] url".into(),
            value: format!("\"{scheme}://{host}{shown_port}{dir}\""),
        }),
    )
}

/// The matching rule must list the method (already upper case).
fn check_method(
    uri: &http::Uri,
    index: usize,
    rule: &HttpRule,
    method: &str,
) -> Result<(), Refusal> {
    if rule.methods.iter().any(|m| m.as_str() == method) {
        return Ok(());
    }
    let mut methods = rule.methods.clone();
    methods.push(method.to_owned());
    Err(Refusal::http(
        uri,
        format!("http.allow[{index}].methods"),
        format!(
            "{method} is not among the rule's methods ({})",
            rule.methods.join(", ")
        ),
        Some(Fix {
            key: format!("http.allow[{index}].methods"),
            value: format!("{methods:?}"),
        }),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Policy;

    const POLICY: &str = r#"
[http]
[[http.allow]]
url = "https://api.example.com/v1/"
methods = ["GET", "POST"]
[[http.allow]]
url = "https://*.cdn.example.com"
[[http.allow]]
url = "http://localhost:8080/hooks/"
"#;

    /// `Ok(rule key, host, port)` or `Err(refusing rule)`.
    fn decision(
        policy: Option<&Http>,
        method: &str,
        url: &str,
    ) -> Result<(String, String, u16), String> {
        let uri: http::Uri = url.parse().unwrap();
        decide(policy, method, &uri)
            .map(|(_, _, t)| (t.rule_key, t.host, t.port))
            .map_err(|r| r.rule.into())
    }

    #[test]
    fn urls_methods_hosts_and_ports() {
        let policy = Policy::from_toml(POLICY, None).unwrap();
        let http = policy.http().map(|h| &**h);
        let ok = |key: &str, host: &str, port: u16| Ok((key.to_owned(), host.to_owned(), port));
        let no = |rule: &str| Err(rule.to_owned());
        let cases = [
            // Scheme, host, port and path prefix of the first rule.
            (
                "GET",
                "https://api.example.com/v1/users",
                ok("http.allow[0]", "api.example.com", 443),
            ),
            (
                "post",
                "https://API.example.com./v1/x",
                ok("http.allow[0]", "api.example.com", 443),
            ),
            (
                "GET",
                "https://api.example.com:443/v1/",
                ok("http.allow[0]", "api.example.com", 443),
            ),
            ("GET", "http://api.example.com/v1/", no("http.allow")),
            ("GET", "https://api.example.com:8443/v1/", no("http.allow")),
            ("GET", "https://api.example.com/v2/", no("http.allow")),
            ("GET", "https://api.example.com/v1", no("http.allow")),
            (
                "DELETE",
                "https://api.example.com/v1/x",
                no("http.allow[0].methods"),
            ),
            // Subdomains, never the bare domain; GET and HEAD by default.
            (
                "GET",
                "https://img.cdn.example.com/a.png",
                ok("http.allow[1]", "img.cdn.example.com", 443),
            ),
            (
                "HEAD",
                "https://a.b.cdn.example.com/",
                ok("http.allow[1]", "a.b.cdn.example.com", 443),
            ),
            ("GET", "https://cdn.example.com/", no("http.allow")),
            ("GET", "https://evilcdn.example.com/", no("http.allow")),
            (
                "POST",
                "https://img.cdn.example.com/",
                no("http.allow[1].methods"),
            ),
            // A port in the rule.
            (
                "GET",
                "http://localhost:8080/hooks/a",
                ok("http.allow[2]", "localhost", 8080),
            ),
            ("GET", "http://localhost/hooks/a", no("http.allow")),
            // URL hygiene before any rule.
            (
                "GET",
                "https://user:pw@api.example.com/v1/",
                no("http.userinfo"),
            ),
            (
                "GET",
                "https://api.example.com/v1/../admin",
                no("http.path"),
            ),
            (
                "GET",
                "https://api.example.com/v1/%2e%2e/admin",
                no("http.path"),
            ),
            ("GET", "https://api.example.com/v1/a%2fb", no("http.path")),
            (
                "GET",
                "https://api.example.com/v1/%252e%252e/x",
                no("http.path"),
            ),
            ("GET", "https://api.example.com/v1/..;/x", no("http.path")),
            ("GET", "https://2130706433/v1/", no("http.host")),
            ("GET", "https://0x7f.0.0.1/v1/", no("http.host")),
        ];
        for (method, url, expected) in cases {
            assert_eq!(decision(http, method, url), expected, "{method} {url}");
        }
    }

    #[test]
    fn no_http_table_allows_nothing() {
        // No [http] table: nothing is allowed, and the fix names the rule to add.
        let refusal = decide(None, "GET", &"https://api.example.com/x".parse().unwrap())
            .err()
            .unwrap();
        assert_eq!(&*refusal.rule, "http");
        assert_eq!(&*refusal.target, "https://api.example.com/x");
        assert_eq!(refusal.fix.unwrap().value, "\"https://api.example.com/\"");
    }

    #[test]
    fn any_host_over_https() {
        // `https://*`: any host over https on port 443, with the URL hygiene of every rule;
        // which addresses it may reach is the address checks' to decide, after resolving
        // (`network::any_https_host_still_refuses_private_addresses`).
        let policy = Policy::from_toml(
            "[http]\n[[http.allow]]\nurl = \"https://*\"\nmethods = [\"GET\", \"POST\"]\n",
            None,
        )
        .unwrap();
        let http = policy.http().map(|h| &**h);
        let ok = |host: &str| Ok(("http.allow[0]".to_owned(), host.to_owned(), 443));
        let no = |rule: &str| Err(rule.to_owned());
        let cases = [
            ("GET", "https://api.example.com/v1/x", ok("api.example.com")),
            (
                "POST",
                "https://hooks.slack.com/services/x",
                ok("hooks.slack.com"),
            ),
            ("GET", "https://EXAMPLE.org./", ok("example.org")),
            ("GET", "https://127.0.0.1/", ok("127.0.0.1")),
            ("GET", "https://[::1]/", ok("[::1]")),
            ("GET", "https://localhost/", ok("localhost")),
            ("GET", "http://api.example.com/", no("http.allow")),
            ("GET", "https://api.example.com:8443/", no("http.allow")),
            (
                "DELETE",
                "https://api.example.com/",
                no("http.allow[0].methods"),
            ),
            ("GET", "https://u:p@api.example.com/", no("http.userinfo")),
            ("GET", "https://api.example.com/a/%2e%2e/b", no("http.path")),
            ("GET", "https://2130706433/", no("http.host")),
        ];
        for (method, url, expected) in cases {
            assert_eq!(decision(http, method, url), expected, "{method} {url}");
        }
        // A port or a path prefix narrows it as in any rule; plain http has no `*`.
        let narrow = Policy::from_toml(
            "[http]\n[[http.allow]]\nurl = \"https://*:8443/v1/\"\n",
            None,
        )
        .unwrap();
        let narrow = narrow.http().map(|h| &**h);
        assert_eq!(
            decision(narrow, "GET", "https://a.example/v1/x"),
            no("http.allow")
        );
        assert_eq!(
            decision(narrow, "GET", "https://a.example:8443/v1/x"),
            Ok(("http.allow[0]".to_owned(), "a.example".to_owned(), 8443))
        );
        assert!(Policy::from_toml("[http]\n[[http.allow]]\nurl = \"http://*\"\n", None).is_err());
    }

    #[test]
    fn refusals_suggest_the_rule_or_method_to_add() {
        let policy = Policy::from_toml(POLICY, None).unwrap();
        let http = policy.http().map(|h| &**h);
        let fix = |method: &str, url: &str| {
            let uri: http::Uri = url.parse().unwrap();
            let fix = decide(http, method, &uri).err().unwrap().fix.unwrap();
            (fix.key, fix.value)
        };
        assert_eq!(
            fix("GET", "https://other.example.com/a/b.json"),
            (
                "[[http.allow]] url".into(),
                "\"https://other.example.com/a/\"".into()
            )
        );
        assert_eq!(
            fix("GET", "http://localhost:9000/x"),
            (
                "[[http.allow]] url".into(),
                "\"http://localhost:9000/\"".into()
            )
        );
        assert_eq!(
            fix("PUT", "https://api.example.com/v1/x"),
            (
                "http.allow[0].methods".into(),
                "[\"GET\", \"POST\", \"PUT\"]".into()
            )
        );
    }

    #[test]
    fn redirect_hops_are_decided_like_first_requests() {
        // The guest follows redirects itself, one request per hop, and each hop comes here:
        // a hop to a host or path no rule allows is refused like any first request.
        let policy = Policy::from_toml(POLICY, None).unwrap();
        let http = policy.http().map(|h| &**h);
        let hops = [
            ("https://api.example.com/v1/old", true),
            ("https://api.example.com/v1/new", true),
            ("https://api.example.com/internal/", false),
            ("http://169.254.169.254/latest/meta-data/", false),
            ("https://img.cdn.example.com/moved", true),
        ];
        for (hop, allowed) in hops {
            assert_eq!(decision(http, "GET", hop).is_ok(), allowed, "{hop}");
        }
    }
}
