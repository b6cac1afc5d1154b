//! Host names as a policy and a request write them: split from the port, then canonical.

use std::fmt;

/// Split `host:port`, `[v6]:port`, `host`; `None` when the port is not a number.
pub(crate) fn split_host_port(authority: &str) -> Option<(&str, Option<u16>)> {
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        let host = &authority[..host.len() + 2];
        return match after.strip_prefix(':') {
            Some(port) => Some((host, Some(port.parse().ok()?))),
            None if after.is_empty() => Some((host, None)),
            None => None,
        };
    }
    match authority.rsplit_once(':') {
        Some((host, port)) => Some((host, Some(port.parse().ok()?))),
        None => Some((authority, None)),
    }
}

/// Why a host is not acceptable as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HostError {
    Invalid(String),
    /// An IPv4 address in a form other than dotted decimal (`2130706433`, `0x7f.1`, `0177.0.0.1`).
    NonCanonicalIpv4 {
        written: String,
        canonical: String,
    },
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostError::Invalid(host) => write!(f, "`{host}` is not a valid host name"),
            HostError::NonCanonicalIpv4 { written, canonical } => write!(
                f,
                "`{written}` is an IPv4 address in a non-standard form; write it as {canonical}"
            ),
        }
    }
}

/// The canonical spelling of a host: lower case, no trailing dot, IDNA for names, dotted
/// decimal for IPv4 (other numeric forms are refused, never reinterpreted), `[..]` for IPv6.
pub(crate) fn canonical_host(host: &str) -> Result<String, HostError> {
    let trimmed = host.strip_suffix('.').unwrap_or(host);
    if trimmed.is_empty() {
        return Err(HostError::Invalid(host.to_owned()));
    }
    match url::Host::parse(trimmed) {
        Ok(url::Host::Domain(name)) => Ok(name),
        Ok(url::Host::Ipv4(ip)) => {
            let canonical = ip.to_string();
            if trimmed == canonical {
                Ok(canonical)
            } else {
                Err(HostError::NonCanonicalIpv4 {
                    written: host.to_owned(),
                    canonical,
                })
            }
        }
        Ok(url::Host::Ipv6(ip)) => Ok(format!("[{ip}]")),
        Err(_) => Err(HostError::Invalid(host.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_canonical_or_refused() {
        assert_eq!(
            canonical_host("API.Example.COM.").unwrap(),
            "api.example.com"
        );
        assert_eq!(canonical_host("127.0.0.1").unwrap(), "127.0.0.1");
        assert_eq!(
            canonical_host("[::FFFF:7f00:1]").unwrap(),
            "[::ffff:127.0.0.1]"
        );
        for odd in ["2130706433", "0x7f.0.0.1", "0177.0.0.1", "127.1"] {
            assert!(
                matches!(canonical_host(odd), Err(HostError::NonCanonicalIpv4 { .. })),
                "{odd}"
            );
        }
        assert!(canonical_host("a b").is_err());
    }
}
