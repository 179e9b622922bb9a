//! Which addresses the client refuses, and every way a host can spell one.
//!
//! `parse_ip` reads a host the way the C library's `inet_aton` and the URL
//! standard do (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`), plus IPv6
//! with or without brackets, so a spelling the checks did not foresee can
//! never reach a connection as something else. `refused_class` names the
//! class an address belongs to when it is not a public unicast address;
//! IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4)
//! are judged by the address they carry.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Reads `host` as an IP address in any spelling an HTTP stack might
/// accept: IPv6 (bracketed or not) and the legacy IPv4 forms — one to four
/// parts, each decimal, octal (leading `0`) or hexadecimal (`0x`), the last
/// filling the remaining bytes — with one trailing dot. `None`: a name.
pub fn parse_ip(host: &str) -> Option<IpAddr> {
    let host = host.trim();
    let bare = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    if bare.contains(':') {
        return bare.parse::<Ipv6Addr>().ok().map(IpAddr::V6);
    }
    parse_ipv4_legacy(bare).map(IpAddr::V4)
}

fn parse_ipv4_legacy(host: &str) -> Option<Ipv4Addr> {
    let host = host.strip_suffix('.').unwrap_or(host);
    if host.is_empty() {
        return None;
    }
    let parts: Vec<&str> = host.split('.').collect();
    if parts.len() > 4 {
        return None;
    }
    let mut numbers = Vec::with_capacity(parts.len());
    for part in &parts {
        numbers.push(parse_part(part)?);
    }
    let (last, first) = numbers.split_last()?;
    if first.iter().any(|&n| n > 255) {
        return None;
    }
    let rest_bytes = 4 - first.len();
    if *last >= 1u64 << (8 * rest_bytes) {
        return None;
    }
    let mut value: u32 = 0;
    for &n in first {
        value = (value << 8) | n as u32;
    }
    value = ((value as u64) << (8 * rest_bytes)) as u32 | *last as u32;
    Some(Ipv4Addr::from(value))
}

fn parse_part(part: &str) -> Option<u64> {
    if part.is_empty() {
        return None;
    }
    let (digits, radix) = if let Some(h) = part.strip_prefix("0x").or_else(|| part.strip_prefix("0X")) {
        (h, 16)
    } else if part.len() > 1 && part.starts_with('0') {
        (&part[1..], 8)
    } else {
        (part, 10)
    };
    if digits.is_empty() {
        // `0x` alone reads as zero, as inet_aton does.
        return (radix == 16).then_some(0);
    }
    if !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok().filter(|&n| n <= u32::MAX as u64)
}

/// Cloud metadata services: AWS, GCP, Azure, OpenStack, DigitalOcean and
/// others answer on 169.254.169.254 (link-local), Alibaba on
/// 100.100.100.200 (CGNAT), Azure's wire server on 168.63.129.16 (a public
/// address), Oracle on 192.0.0.192, AWS over IPv6 on fd00:ec2::254.
const METADATA_V4: [Ipv4Addr; 4] = [
    Ipv4Addr::new(169, 254, 169, 254),
    Ipv4Addr::new(100, 100, 100, 200),
    Ipv4Addr::new(168, 63, 129, 16),
    Ipv4Addr::new(192, 0, 0, 192),
];
const METADATA_V6: Ipv6Addr = Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254);

/// The class of an address the client refuses (`"loopback"`,
/// `"private"`, ...), or `None` for a public unicast address.
pub fn refused_class(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => v4_class(v4),
        IpAddr::V6(v6) => v6_class(v6),
    }
}

/// Whether the address is a cloud metadata service (refused even where an
/// operator allows a host by name; only an explicit range allows it).
pub fn is_metadata(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => METADATA_V4.contains(&v4),
        IpAddr::V6(v6) => v6 == METADATA_V6 || embedded_v4(v6).is_some_and(|v4| METADATA_V4.contains(&v4)),
    }
}

fn v4_class(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    if METADATA_V4.contains(&ip) {
        return Some("cloud metadata");
    }
    Some(match (a, b, c) {
        (0, _, _) => "unspecified",
        (127, _, _) => "loopback",
        (10, _, _) | (172, 16..=31, _) | (192, 168, _) => "private",
        (169, 254, _) => "link-local",
        (100, 64..=127, _) => "CGNAT (shared address space)",
        (192, 0, 0) => "IETF protocol assignment",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "documentation",
        (198, 18..=19, _) => "benchmarking",
        (224..=239, _, _) => "multicast",
        (255, 255, 255) if ip.is_broadcast() => "broadcast",
        (240..=255, _, _) => "reserved",
        _ => return None,
    })
}

/// The IPv4 address an IPv6 address carries: mapped (`::ffff:a.b.c.d`),
/// compatible (`::a.b.c.d`), NAT64 (`64:ff9b::/96`) or 6to4 (`2002::/16`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let tail = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    match s {
        [0, 0, 0, 0, 0, 0xffff, _, _] => Some(tail),
        [0, 0, 0, 0, 0, 0, _, _] if u32::from(tail) > 1 => Some(tail),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(tail),
        [0x2002, hi, lo, ..] => Some(Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8)),
        _ => None,
    }
}

fn v6_class(ip: Ipv6Addr) -> Option<&'static str> {
    if ip == METADATA_V6 {
        return Some("cloud metadata");
    }
    if ip.is_unspecified() {
        return Some("unspecified");
    }
    if ip.is_loopback() {
        return Some("loopback");
    }
    if let Some(v4) = embedded_v4(ip) {
        return v4_class(v4);
    }
    let s = ip.segments();
    Some(match s[0] {
        0xfc00..=0xfdff => "private (unique local)",
        0xfe80..=0xfebf => "link-local",
        0xfec0..=0xfeff => "private (site-local)",
        0xff00..=0xffff => "multicast",
        0x2001 if s[1] == 0x0db8 => "documentation",
        0x2001 if s[1] == 0 => "Teredo tunnel",
        0x0100 if s[1..4] == [0, 0, 0] => "discard-only",
        0 => "reserved",
        _ => return None,
    })
}

#[cfg(test)]
#[path = "../tests/support/loopback.rs"]
mod loopback;

#[cfg(test)]
mod tests {
    use super::*;

    fn v4(s: &str) -> Option<Ipv4Addr> {
        match parse_ip(s) {
            Some(IpAddr::V4(a)) => Some(a),
            _ => None,
        }
    }

    #[test]
    fn legacy_ipv4_spellings() {
        let lo = Some(Ipv4Addr::LOCALHOST);
        for s in loopback::SPELLINGS.into_iter().chain(["0x7F.0.0.0x1"]) {
            assert_eq!(v4(s), lo, "{s}");
        }
        assert_eq!(v4("0"), Some(Ipv4Addr::UNSPECIFIED));
        assert_eq!(v4("169.254.43518"), Some(Ipv4Addr::new(169, 254, 169, 254)));
        for s in ["256.0.0.1", "1.2.3.4.5", "example.com", "1..2", "09.1.1.1", "4294967296", "1.2.3.256", ""] {
            assert_eq!(v4(s), None, "{s}");
        }
    }

    #[test]
    fn classes() {
        let class = |s: &str| refused_class(parse_ip(s).unwrap());
        assert_eq!(class("8.8.8.8"), None);
        assert_eq!(class("2606:4700::1111"), None);
        assert_eq!(class("10.1.2.3"), Some("private"));
        assert_eq!(class("172.31.255.255"), Some("private"));
        assert_eq!(class("172.32.0.1"), None);
        assert_eq!(class("100.64.0.1"), Some("CGNAT (shared address space)"));
        assert_eq!(class("169.254.169.254"), Some("cloud metadata"));
        assert_eq!(class("[::ffff:127.0.0.1]"), Some("loopback"));
        assert_eq!(class("::127.0.0.1"), Some("loopback"));
        assert_eq!(class("64:ff9b::a00:1"), Some("private"));
        assert_eq!(class("2002:a9fe:a9fe::"), Some("cloud metadata"));
        assert_eq!(class("::"), Some("unspecified"));
        assert_eq!(class("::1"), Some("loopback"));
        assert_eq!(class("fe80::1"), Some("link-local"));
        assert_eq!(class("fd00:ec2::254"), Some("cloud metadata"));
        assert_eq!(class("ff02::1"), Some("multicast"));
        assert_eq!(class("224.0.0.1"), Some("multicast"));
        assert_eq!(class("255.255.255.255"), Some("broadcast"));
    }
}
