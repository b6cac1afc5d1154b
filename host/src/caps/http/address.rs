//! Address checks: which resolved addresses are outside the public internet.

use super::*;

/// Whether `ip` is outside the public internet: private, loopback, link-local (cloud metadata),
/// CGNAT, multicast, unspecified, documentation, benchmarking, reserved, or IPv6 forms that
/// embed an IPv4 address (mapped, NAT64, 6to4).
pub(super) fn is_non_public(ip: IpAddr) -> bool {
    const BLOCKED: &[&str] = &[
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.88.99.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",
        "240.0.0.0/4",
        "::/128",
        "::1/128",
        "::ffff:0:0/96",
        "::/96",
        "64:ff9b::/96",
        "64:ff9b:1::/48",
        "100::/64",
        "2001::/23",
        "2001:db8::/32",
        "2002::/16",
        "fc00::/7",
        "fe80::/10",
        "fec0::/10",
        "ff00::/8",
    ];
    static NETS: std::sync::LazyLock<Vec<IpNet>> = std::sync::LazyLock::new(|| {
        BLOCKED
            .iter()
            .map(|net| net.parse().expect("the blocked ranges parse"))
            .collect()
    });
    NETS.iter().any(|net| net.contains(&ip))
}

/// Whether a request to `host` may connect to `ip`: a public address, or one the policy opens
/// (`allow_private` ranges, `allow_private_hosts` names).
pub(super) fn admits(policy: &Http, host: &str, ip: IpAddr) -> bool {
    !is_non_public(ip)
        || policy
            .allow_private_hosts
            .iter()
            .any(|h| h.eq_ignore_ascii_case(host.trim_end_matches('.')))
        || policy.allow_private.iter().any(|net| net.contains(&ip))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Policy;

    #[test]
    fn address_classes() {
        let cases: &[(&str, bool)] = &[
            // Public.
            ("8.8.8.8", false),
            ("1.1.1.1", false),
            ("2606:4700:4700::1111", false),
            // Private, loopback, link-local (cloud metadata), CGNAT, unspecified.
            ("10.1.2.3", true),
            ("172.16.0.1", true),
            ("172.31.255.255", true),
            ("172.32.0.1", false),
            ("192.168.1.1", true),
            ("127.0.0.1", true),
            ("127.255.255.254", true),
            ("169.254.169.254", true),
            ("100.64.0.1", true),
            ("0.0.0.0", true),
            ("::", true),
            ("::1", true),
            ("fe80::1", true),
            ("fc00::1", true),
            ("fd12:3456::1", true),
            // Documentation, benchmarking, multicast, reserved.
            ("192.0.2.1", true),
            ("198.18.0.1", true),
            ("224.0.0.1", true),
            ("255.255.255.255", true),
            ("ff02::1", true),
            ("2001:db8::1", true),
            // IPv6 forms that embed an IPv4 address: mapped, compatible, NAT64, 6to4.
            ("::ffff:127.0.0.1", true),
            ("::ffff:8.8.8.8", true),
            ("::127.0.0.1", true),
            ("64:ff9b::a00:1", true),
            ("2002:a00:1::", true),
        ];
        for (ip, blocked) in cases {
            let parsed: IpAddr = ip.parse().unwrap();
            assert_eq!(is_non_public(parsed), *blocked, "{ip}");
        }
    }

    #[test]
    fn the_policy_opens_ranges_and_names() {
        let policy = Policy::from_toml(
            "[http]\nallow_private = [\"10.20.0.0/16\"]\nallow_private_hosts = [\"db.internal.test\"]\n",
            None,
        )
        .unwrap();
        let http = policy.http().unwrap();
        let cases: &[(&str, &str, bool)] = &[
            ("api.example.com", "8.8.8.8", true),
            ("api.example.com", "10.20.30.40", true),
            ("api.example.com", "10.21.0.1", false),
            ("api.example.com", "127.0.0.1", false),
            ("db.internal.test", "10.99.0.1", true),
            ("DB.Internal.Test.", "127.0.0.1", true),
            ("other.internal.test", "10.99.0.1", false),
        ];
        for (host, ip, admitted) in cases {
            assert_eq!(
                admits(http, host, ip.parse().unwrap()),
                *admitted,
                "{host} at {ip}"
            );
        }
    }
}
