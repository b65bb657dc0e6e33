//! Which addresses a tool may reach without naming them: the global ones.
//! A name that resolves to anything else (this machine, a private
//! network, the cloud's metadata service at 169.254.169.254, a multicast
//! group) is refused unless the grant names the address, its network or
//! `localhost` itself: otherwise any public name a tool is granted could
//! be pointed by its owner (DNS rebinding) at the user's own network.
//!
//! IPv6 forms that carry an IPv4 address or tunnel to one (IPv4-mapped
//! and -compatible, NAT64, 6to4, Teredo) are never global here: each could
//! reach an IPv4 address this check did not see.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether `address` is reachable on the public internet and nothing else.
pub(crate) fn is_global(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => is_global_v4(v4),
        IpAddr::V6(v6) => is_global_v6(v6),
    }
}

/// IPv4 ranges that are not global (IANA's special-purpose registry).
const NOT_GLOBAL_V4: &[(Ipv4Addr, u8)] = &[
    (Ipv4Addr::new(0, 0, 0, 0), 8),       // "this network"
    (Ipv4Addr::new(10, 0, 0, 0), 8),      // private
    (Ipv4Addr::new(100, 64, 0, 0), 10),   // shared address space (CGNAT)
    (Ipv4Addr::new(127, 0, 0, 0), 8),     // loopback
    (Ipv4Addr::new(169, 254, 0, 0), 16),  // link-local, the metadata service
    (Ipv4Addr::new(172, 16, 0, 0), 12),   // private
    (Ipv4Addr::new(192, 0, 0, 0), 24),    // IETF protocol assignments
    (Ipv4Addr::new(192, 0, 2, 0), 24),    // documentation
    (Ipv4Addr::new(192, 31, 196, 0), 24), // AS112
    (Ipv4Addr::new(192, 52, 193, 0), 24), // AMT
    (Ipv4Addr::new(192, 88, 99, 0), 24),  // 6to4 relay anycast
    (Ipv4Addr::new(192, 168, 0, 0), 16),  // private
    (Ipv4Addr::new(192, 175, 48, 0), 24), // direct delegation AS112
    (Ipv4Addr::new(198, 18, 0, 0), 15),   // benchmarking
    (Ipv4Addr::new(198, 51, 100, 0), 24), // documentation
    (Ipv4Addr::new(203, 0, 113, 0), 24),  // documentation
    (Ipv4Addr::new(224, 0, 0, 0), 4),     // multicast
    (Ipv4Addr::new(240, 0, 0, 0), 4),     // reserved, and broadcast
];

fn is_global_v4(address: Ipv4Addr) -> bool {
    let bits = u32::from(address);
    !NOT_GLOBAL_V4.iter().any(|(network, prefix)| {
        let mask = u32::MAX << (32 - u32::from(*prefix));
        bits & mask == u32::from(*network)
    })
}

/// IPv6 ranges inside global unicast (2000::/3) that are not global.
const NOT_GLOBAL_V6: &[(u128, u8)] = &[
    (0x2001_0000 << 96, 23), // IETF protocol assignments, Teredo (2001::/32)
    (0x2001_0db8 << 96, 32), // documentation
    (0x2002 << 112, 16),     // 6to4
    (0x3fff << 112, 20),     // documentation (2024)
];

fn is_global_v6(address: Ipv6Addr) -> bool {
    let bits = u128::from(address);
    // Global unicast is 2000::/3; everything outside it (loopback, the
    // unspecified address, IPv4-mapped and -compatible, NAT64 in 64:ff9b::,
    // discard-only, unique local, link-local, multicast) is not.
    let global_unicast = bits >> 125 == 0b001;
    global_unicast
        && !NOT_GLOBAL_V6.iter().any(|(network, prefix)| {
            let mask = u128::MAX << (128 - u32::from(*prefix));
            bits & mask == *network
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn global(text: &str) -> bool {
        is_global(text.parse().expect("an address"))
    }

    #[test]
    fn public_addresses_are_global() {
        for address in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.215.14",
            "100.63.255.255",
            "100.128.0.0",
            "172.32.0.1",
            "2606:4700:4700::1111",
            "2a00:1450:4001:80b::200e",
        ] {
            assert!(global(address), "{address}");
        }
    }

    #[test]
    fn this_machine_private_networks_and_tunnels_are_not() {
        for address in [
            "0.0.0.0",
            "127.0.0.1",
            "127.255.255.254",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "192.0.2.1",
            "198.51.100.7",
            "203.0.113.9",
            "198.18.0.1",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:8.8.8.8",
            "::127.0.0.1",
            "64:ff9b::7f00:1",
            "64:ff9b:1::a00:1",
            "100::1",
            "2001::1",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:db8::1",
            "2002:7f00:1::1",
            "2002:0808:0808::1",
            "3fff::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
        ] {
            assert!(!global(address), "{address}");
        }
    }
}
