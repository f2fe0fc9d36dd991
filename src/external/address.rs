//! Which IP addresses are public. `errata check --external` requests only
//! public addresses unless told otherwise: a link checker that follows a
//! page's links (and their redirects) into loopback or the local network
//! can be steered into poking services that are not on the internet.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `ip` is not a public internet address, or `None` when it is.
///
/// IPv4 addresses embedded in IPv6 ones (IPv4-mapped `::ffff:0:0/96`,
/// IPv4-compatible `::/96`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are
/// judged by the IPv4 address they carry.
pub fn non_public(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => non_public_v6(v6),
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
    u32::from(ip) & mask == u32::from(Ipv4Addr::from(net)) & mask
}

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    const RANGES: &[([u8; 4], u32, &str)] = &[
        ([0, 0, 0, 0], 8, "unspecified"),
        ([127, 0, 0, 0], 8, "loopback"),
        ([10, 0, 0, 0], 8, "private"),
        ([172, 16, 0, 0], 12, "private"),
        ([192, 168, 0, 0], 16, "private"),
        ([100, 64, 0, 0], 10, "shared (carrier-grade NAT)"),
        ([169, 254, 0, 0], 16, "link-local"),
        ([192, 0, 0, 0], 24, "reserved"),
        ([192, 0, 2, 0], 24, "documentation"),
        ([198, 51, 100, 0], 24, "documentation"),
        ([203, 0, 113, 0], 24, "documentation"),
        ([198, 18, 0, 0], 15, "benchmarking"),
        ([224, 0, 0, 0], 4, "multicast"),
        ([240, 0, 0, 0], 4, "reserved"),
    ];
    RANGES
        .iter()
        .find(|(net, prefix, _)| in_v4(ip, *net, *prefix))
        .map(|(_, _, why)| *why)
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let s = ip.segments();
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if ip.is_unspecified() {
        return Some("unspecified");
    }
    if ip.is_loopback() {
        return Some("loopback");
    }
    match s {
        // IPv4-mapped (::ffff:a.b.c.d): an IPv4 address in IPv6 clothing.
        [0, 0, 0, 0, 0, 0xffff, hi, lo] => return non_public_v4(embedded(hi, lo)),
        // IPv4-compatible (::a.b.c.d), deprecated: never a public address.
        [0, 0, 0, 0, 0, 0, hi, lo] => {
            return non_public_v4(embedded(hi, lo)).or(Some("reserved"));
        }
        // IPv4-translated (::ffff:0:a.b.c.d, RFC 2765).
        [0, 0, 0, 0, 0xffff, 0, hi, lo] => return non_public_v4(embedded(hi, lo)),
        // NAT64 well-known prefix: the IPv4 address is the last 32 bits.
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => return non_public_v4(embedded(hi, lo)),
        // NAT64 local-use prefix (64:ff9b:1::/48, RFC 8215): a network's
        // own translator, to any IPv4 address, its own private ones too
        // (where the IPv4 address sits depends on the prefix length).
        [0x64, 0xff9b, 1, ..] => return Some("private (local-use NAT64)"),
        // 6to4: the IPv4 address follows the 2002::/16 prefix.
        [0x2002, hi, lo, ..] => return non_public_v4(embedded(hi, lo)),
        _ => {}
    }
    let first = s[0];
    if first & 0xfe00 == 0xfc00 {
        Some("private (unique local)")
    } else if first & 0xffc0 == 0xfe80 {
        Some("link-local")
    } else if first & 0xffc0 == 0xfec0 {
        Some("private (site-local)")
    } else if first & 0xff00 == 0xff00 {
        Some("multicast")
    } else if (first == 0x2001 && s[1] == 0x0db8) || first & 0xfff0 == 0x3ff0 {
        // 2001:db8::/32 and 3fff::/20 (RFC 9637).
        Some("documentation")
    } else if first == 0x2001 && s[1] == 2 && s[2] == 0 {
        Some("reserved (benchmarking)")
    } else if first == 0x2001 && s[1] == 0 {
        Some("reserved (Teredo)")
    } else if s[..4] == [0x100, 0, 0, 0] {
        Some("reserved (discard)")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn why(text: &str) -> Option<&'static str> {
        non_public(text.parse().unwrap())
    }

    #[test]
    fn non_public_addresses_are_named() {
        for (ip, expected) in [
            ("127.0.0.1", "loopback"),
            ("127.255.0.9", "loopback"),
            ("0.0.0.0", "unspecified"),
            ("10.1.2.3", "private"),
            ("172.31.255.255", "private"),
            ("192.168.1.1", "private"),
            ("100.64.0.1", "shared (carrier-grade NAT)"),
            ("100.127.255.254", "shared (carrier-grade NAT)"),
            ("169.254.169.254", "link-local"),
            ("224.0.0.1", "multicast"),
            ("255.255.255.255", "reserved"),
            ("::", "unspecified"),
            ("::1", "loopback"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:10.0.0.1", "private"),
            ("::ffff:0.0.0.0", "unspecified"),
            ("::127.0.0.1", "loopback"),
            ("64:ff9b::7f00:1", "loopback"),
            ("2002:c0a8:0101::1", "private"),
            ("fc00::1", "private (unique local)"),
            ("fd12:3456::1", "private (unique local)"),
            ("fe80::1", "link-local"),
            ("febf::1", "link-local"),
            ("ff02::1", "multicast"),
            ("2001:db8::1", "documentation"),
            ("3fff:1::1", "documentation"),
            ("2001:2::1", "reserved (benchmarking)"),
            ("::ffff:0:7f00:1", "loopback"),
            ("::ffff:0:a00:5", "private"),
            ("64:ff9b:1::7f00:1", "private (local-use NAT64)"),
            ("64:ff9b:1:a00:5::", "private (local-use NAT64)"),
        ] {
            assert_eq!(why(ip), Some(expected), "{ip}");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for ip in [
            "8.8.8.8",
            "1.1.1.1",
            "172.32.0.1",
            "100.128.0.1",
            "192.169.0.1",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "::ffff:0:808:808",
            "2001:3::1",
            "2606:4700:4700::1111",
            "2a00:1450:4001::200e",
        ] {
            assert_eq!(why(ip), None, "{ip}");
        }
    }
}
