//! Network grants, as the user writes them (`--allow-net
//! fetch=https://*.example.com`, `net = [...]`), and the one test of a
//! request against them. A grant is `scheme://host[:port]`: scheme
//! `https`, `http` or `*`; port the scheme's own unless given, `*` for any;
//! host an exact name, `*.suffix` (any name below it, never the suffix
//! itself), an IP address, a network (`10.0.0.0/8`), or `*` (any public
//! host). Nothing else: no path, no user, no query.
//!
//! Hosts are compared in one canonical form on both sides, made by the
//! WHATWG URL parser (`url`): lower case, IDNA to ASCII, no trailing dot,
//! and every spelling of an IPv4 address (`2130706433`, `0x7f.1`,
//! `0177.0.0.1`, `127.1`) read as the address it is, so no spelling of a
//! host can pass for another.

use std::net::IpAddr;

use url::Host;

/// One network grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetGrant {
    scheme: Scheme,
    host: HostPattern,
    port: PortPattern,
    /// As the user wrote it, for messages.
    text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    Http,
    Https,
    Any,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    Name(String),
    /// Any name below this one, at any depth; never this one.
    Below(String),
    Address(IpAddr),
    Network {
        base: IpAddr,
        prefix: u8,
    },
    /// Any host whose addresses are all global.
    AnyPublic,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PortPattern {
    /// 443 for https, 80 for http.
    SchemeDefault,
    Exact(u16),
    Any,
}

/// A grant that is not `scheme://host[:port]`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "network grant `{text}`: {reason}; write it as scheme://host[:port], e.g. \
     `https://api.example.com`, `https://*.example.com`, `http://127.0.0.1:8080`"
)]
pub struct GrantError {
    text: String,
    reason: String,
}

/// Where a request goes, in the canonical form grants are matched in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// `http` or `https`.
    pub scheme: &'static str,
    /// A name (lower case, ASCII, no trailing dot) or an address.
    pub host: Host<String>,
    pub port: u16,
}

impl NetGrant {
    pub fn parse(text: &str) -> Result<NetGrant, GrantError> {
        let error = |reason: &str| GrantError {
            text: text.to_owned(),
            reason: reason.to_owned(),
        };
        let (scheme, rest) = text
            .split_once("://")
            .ok_or_else(|| error("it names no scheme (https://, http:// or *://)"))?;
        let scheme = match scheme {
            "https" => Scheme::Https,
            "http" => Scheme::Http,
            "*" => Scheme::Any,
            _ => return Err(error("the scheme is not https, http or *")),
        };
        if rest.contains('@') {
            return Err(error("it names a user: a grant is for a host"));
        }
        if rest.contains(['?', '#']) {
            return Err(error("it has a query: a grant is for a whole host"));
        }
        let (host, port) = split_port(rest).map_err(|reason| error(&reason))?;
        let port = match port {
            None => PortPattern::SchemeDefault,
            Some("*") => PortPattern::Any,
            Some(digits) => match digits.parse::<u16>() {
                Ok(port) if port > 0 && digits.bytes().all(|b| b.is_ascii_digit()) => {
                    PortPattern::Exact(port)
                }
                _ => return Err(error("the port is not a number from 1 to 65535, or *")),
            },
        };
        let host = host_pattern(host).map_err(|reason| error(&reason))?;
        Ok(NetGrant {
            scheme,
            host,
            port,
            text: text.to_owned(),
        })
    }

    /// The grant as the user wrote it.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `other` grants exactly what this one does, however each
    /// was spelt (`https://Docs.RS:443` and `https://docs.rs`).
    pub fn same_as(&self, other: &NetGrant) -> bool {
        self.scheme == other.scheme && self.host == other.host && self.port == other.port
    }

    /// Why a credential may not be tied to this pattern: a credential
    /// goes to one host (no `*`, `*.suffix` or network, where anyone who
    /// registers a name below would get it) over https (plain http only to
    /// `localhost` or an address that is not public).
    pub fn credential_problem(&self) -> Option<&'static str> {
        match &self.host {
            HostPattern::Below(_) | HostPattern::AnyPublic | HostPattern::Network { .. } => {
                return Some(
                    "a credential goes to one host: name it exactly (`https://api.example.com`), \
                     not a pattern of hosts",
                );
            }
            HostPattern::Name(_) | HostPattern::Address(_) => {}
        }
        let local = match &self.host {
            HostPattern::Name(name) => name == "localhost",
            HostPattern::Address(address) => !super::address::is_global(*address),
            _ => false,
        };
        match self.scheme {
            Scheme::Https => None,
            Scheme::Http | Scheme::Any if local => None,
            Scheme::Http | Scheme::Any => Some(
                "a credential over plain http can be read on the way: write an `https://` \
                 pattern (plain http only to localhost or an address that is not public)",
            ),
        }
    }

    /// Whether `*` (any public host): worth a warning, since the model can
    /// then send what it read anywhere.
    pub fn is_any_host(&self) -> bool {
        self.host == HostPattern::AnyPublic
    }

    /// Whether a request to `to` is granted by this grant, by its name or
    /// address as written (the addresses a name resolves to are checked
    /// apart: [`NetGrant::names_address`]).
    pub fn matches(&self, to: &Destination) -> bool {
        let scheme = match self.scheme {
            Scheme::Any => true,
            Scheme::Https => to.scheme == "https",
            Scheme::Http => to.scheme == "http",
        };
        let port = match self.port {
            PortPattern::Any => true,
            PortPattern::Exact(port) => to.port == port,
            PortPattern::SchemeDefault => Some(to.port) == default_port(to.scheme),
        };
        let host = match (&self.host, &to.host) {
            (HostPattern::Name(name), Host::Domain(domain)) => name == domain,
            (HostPattern::Below(suffix), Host::Domain(domain)) => domain
                .strip_suffix(suffix.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
            (HostPattern::Address(address), _) => ip_of(&to.host) == Some(*address),
            (HostPattern::Network { base, prefix }, _) => {
                ip_of(&to.host).is_some_and(|ip| within(ip, *base, *prefix))
            }
            (HostPattern::AnyPublic, _) => true,
            _ => false,
        };
        scheme && port && host
    }

    /// Whether a request this grant matched may connect to `address` (one
    /// its name resolved to): a global address, or one the grant names
    /// itself.
    pub fn may_connect_to(&self, address: IpAddr) -> bool {
        super::address::is_global(address) || self.names_address(address)
    }

    /// Whether this grant names `address` itself (the address, its
    /// network, or `localhost` for a loopback address), so a request may
    /// reach it although it is not global.
    pub fn names_address(&self, address: IpAddr) -> bool {
        match &self.host {
            HostPattern::Address(granted) => *granted == address,
            HostPattern::Network { base, prefix } => within(address, *base, *prefix),
            HostPattern::Name(name) => name == "localhost" && address.is_loopback(),
            HostPattern::Below(_) | HostPattern::AnyPublic => false,
        }
    }
}

impl std::fmt::Display for NetGrant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl Destination {
    /// The destination of a request to `url`: `http` or `https`, no user,
    /// the host canonical, the port given or the scheme's.
    pub fn of_url(url: &str) -> Result<Destination, String> {
        let parsed = url::Url::parse(url).map_err(|e| format!("`{url}` is not a URL: {e}"))?;
        let scheme = match parsed.scheme() {
            "https" => "https",
            "http" => "http",
            other => return Err(format!("the scheme `{other}` is not http or https")),
        };
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err("a URL with a user name or password is refused".into());
        }
        let host = match parsed.host() {
            Some(Host::Domain(domain)) => {
                let name = domain.strip_suffix('.').unwrap_or(domain);
                if name.is_empty() {
                    return Err(format!("`{url}` has no host"));
                }
                Host::Domain(name.to_owned())
            }
            Some(Host::Ipv4(address)) => Host::Ipv4(address),
            Some(Host::Ipv6(address)) => Host::Ipv6(address),
            None => return Err(format!("`{url}` has no host")),
        };
        let port = parsed
            .port_or_known_default()
            .ok_or_else(|| format!("`{url}` has no port"))?;
        Ok(Destination { scheme, host, port })
    }
}

fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "https" => Some(443),
        "http" => Some(80),
        _ => None,
    }
}

fn ip_of(host: &Host<String>) -> Option<IpAddr> {
    match host {
        Host::Ipv4(address) => Some(IpAddr::V4(*address)),
        Host::Ipv6(address) => Some(IpAddr::V6(*address)),
        Host::Domain(_) => None,
    }
}

/// Whether `address` is in `base/prefix` (of the same family).
fn within(address: IpAddr, base: IpAddr, prefix: u8) -> bool {
    match (address, base) {
        (IpAddr::V4(a), IpAddr::V4(b)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            u32::from(a) & mask == u32::from(b) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(b)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            u128::from(a) & mask == u128::from(b) & mask
        }
        _ => false,
    }
}

/// `host[:port]`, the host possibly `[v6]`, `[v6]/NN` or `a.b.c.d/NN`.
fn split_port(rest: &str) -> Result<(&str, Option<&str>), String> {
    if rest.is_empty() {
        return Err("it names no host".into());
    }
    let host_end = if rest.starts_with('[') {
        let close = rest.find(']').ok_or("an IPv6 address is missing its `]`")?;
        let after = &rest[close + 1..];
        let network = after
            .strip_prefix('/')
            .map_or(0, |tail| 1 + tail.find(':').unwrap_or(tail.len()));
        close + 1 + network
    } else {
        rest.find(':').unwrap_or(rest.len())
    };
    let (host, tail) = rest.split_at(host_end);
    match tail {
        "" => Ok((host, None)),
        _ => match tail.strip_prefix(':') {
            Some(port) if !port.is_empty() => Ok((host, Some(port))),
            _ => Err("it has a path: a grant is for a whole host".into()),
        },
    }
}

fn host_pattern(host: &str) -> Result<HostPattern, String> {
    if host == "*" {
        return Ok(HostPattern::AnyPublic);
    }
    if let Some(suffix) = host.strip_prefix("*.") {
        return match canonical(suffix)? {
            Host::Domain(name) => Ok(HostPattern::Below(name)),
            _ => Err("`*.` goes before a name, not an address".into()),
        };
    }
    if host.contains('*') {
        return Err("a `*` goes alone, for any public host, or as `*.` before a name".into());
    }
    if let Some((address, prefix)) = host.split_once('/') {
        let base = match canonical(address)? {
            Host::Ipv4(v4) => IpAddr::V4(v4),
            Host::Ipv6(v6) => IpAddr::V6(v6),
            Host::Domain(_) => return Err("it has a path: a grant is for a whole host".into()),
        };
        let most = if base.is_ipv4() { 32 } else { 128 };
        let prefix = prefix
            .parse::<u8>()
            .ok()
            .filter(|p| *p <= most && prefix.bytes().all(|b| b.is_ascii_digit()))
            .ok_or_else(|| format!("`/{prefix}` is not a network prefix from 0 to {most}"))?;
        return Ok(HostPattern::Network { base, prefix });
    }
    Ok(match canonical(host)? {
        Host::Domain(name) => HostPattern::Name(name),
        Host::Ipv4(v4) => HostPattern::Address(IpAddr::V4(v4)),
        Host::Ipv6(v6) => HostPattern::Address(IpAddr::V6(v6)),
    })
}

/// A host in the form requests are compared in.
fn canonical(host: &str) -> Result<Host<String>, String> {
    let parsed = Host::parse(host).map_err(|e| format!("`{host}` is not a host name: {e}"))?;
    Ok(match parsed {
        Host::Domain(domain) => {
            let name = domain.strip_suffix('.').unwrap_or(&domain);
            if name.is_empty() || name.contains('/') {
                return Err(format!("`{host}` is not a host name"));
            }
            Host::Domain(name.to_owned())
        }
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(text: &str) -> NetGrant {
        NetGrant::parse(text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn to(url: &str) -> Destination {
        Destination::of_url(url).unwrap_or_else(|e| panic!("{e}"))
    }

    fn allows(grant_text: &str, url: &str) -> bool {
        grant(grant_text).matches(&to(url))
    }

    #[test]
    fn a_credential_goes_to_one_host_over_https_or_to_this_machine() {
        let problem = |text: &str| NetGrant::parse(text).expect(text).credential_problem();
        for fine in [
            "https://api.example.com",
            "https://api.example.com:8443",
            "http://localhost:8080",
            "http://127.0.0.1:8080",
            "http://10.0.0.5",
            "https://203.0.114.9",
        ] {
            assert_eq!(problem(fine), None, "{fine}");
        }
        for refused in [
            "https://*",
            "https://*.example.com",
            "https://10.0.0.0/8",
            "http://api.example.com",
            "*://api.example.com",
            "http://8.8.8.8",
        ] {
            assert!(problem(refused).is_some(), "{refused}");
        }
    }

    #[test]
    fn a_name_grants_that_name_on_its_schemes_port() {
        let g = "https://api.example.test";
        assert!(allows(g, "https://api.example.test/v1/x?q=1"));
        assert!(allows(g, "https://API.Example.Test./"));
        assert!(allows(g, "https://api.example.test:443/"));
        assert!(!allows(g, "http://api.example.test/"), "http for https");
        assert!(!allows(g, "https://api.example.test:8443/"), "another port");
        assert!(!allows(g, "https://example.test/"));
        assert!(!allows(g, "https://api.example.test.evil/"));
        assert!(!allows(g, "https://evilapi.example.test/"));
        assert!(allows(
            "https://api.example.test:8443",
            "https://api.example.test:8443/"
        ));
        assert!(allows(
            "https://api.example.test:*",
            "https://api.example.test:1/"
        ));
        assert!(allows("*://api.example.test", "http://api.example.test/"));
        assert!(allows("*://api.example.test", "https://api.example.test/"));
        assert!(!allows(
            "*://api.example.test",
            "http://api.example.test:443/"
        ));
    }

    #[test]
    fn a_suffix_grants_every_name_below_it_but_not_itself() {
        let g = "https://*.example.test";
        assert!(allows(g, "https://a.example.test/"));
        assert!(allows(g, "https://a.b.example.test/"));
        assert!(!allows(g, "https://example.test/"), "never the apex");
        assert!(!allows(g, "https://example.test.evil/"));
        assert!(!allows(g, "https://badexample.test/"));
        assert!(!allows(g, "https://127.0.0.1/"));
    }

    #[test]
    fn each_spelling_of_an_address_is_that_address() {
        for url in [
            "http://127.0.0.1:8080/",
            "http://2130706433:8080/",
            "http://0x7f.1:8080/",
            "http://0177.0.0.1:8080/",
            "http://127.1:8080/",
            "http://0x7f000001:8080/",
        ] {
            assert_eq!(
                to(url).host,
                Host::<String>::Ipv4([127, 0, 0, 1].into()),
                "{url}"
            );
            assert!(allows("http://127.0.0.1:8080", url), "{url}");
            assert!(!allows("http://localhost:8080", url), "{url}");
        }
        // Granted by name only: no address spelling matches it.
        for url in ["http://[::1]:8080/", "http://[::ffff:127.0.0.1]:8080/"] {
            assert!(!allows("http://localhost:8080", url), "{url}");
            assert!(!allows("http://127.0.0.1:8080", url), "{url}");
        }
        assert!(allows("http://[::1]:8080", "http://[0:0::1]:8080/"));
        assert!(allows("http://10.0.0.0/8", "http://10.1.2.3/"));
        assert!(!allows("http://10.0.0.0/8", "http://11.0.0.1/"));
        assert!(allows("https://[fd00::]/8:*", "https://[fd12::1]:9/"));
    }

    #[test]
    fn a_grant_names_an_address_only_by_address_network_or_localhost() {
        let loopback: IpAddr = "127.0.0.1".parse().expect("ip");
        assert!(grant("http://localhost:8080").names_address(loopback));
        assert!(grant("http://127.0.0.1").names_address(loopback));
        assert!(grant("http://127.0.0.0/8").names_address(loopback));
        assert!(!grant("http://example.test").names_address(loopback));
        assert!(!grant("http://*.example.test").names_address(loopback));
        assert!(!grant("http://*").names_address(loopback));
        let private: IpAddr = "10.0.0.5".parse().expect("ip");
        assert!(!grant("http://localhost").names_address(private));
    }

    #[test]
    fn what_is_not_a_host_grant_is_refused_with_why() {
        let refused = |text: &str| NetGrant::parse(text).expect_err(text).to_string();
        assert_eq!(
            refused("api.example.test"),
            "network grant `api.example.test`: it names no scheme (https://, http:// or *://); \
             write it as scheme://host[:port], e.g. `https://api.example.com`, \
             `https://*.example.com`, `http://127.0.0.1:8080`"
        );
        for (text, why) in [
            ("ftp://example.test", "the scheme is not https, http or *"),
            ("https://user@example.test", "it names a user"),
            ("https://example.test/path", "it has a path"),
            ("https://example.test/", "it has a path"),
            ("https://example.test?x", "it has a query"),
            ("https://example.test:0", "the port is not a number"),
            ("https://example.test:99999", "the port is not a number"),
            ("https://example.test:+1", "the port is not a number"),
            ("https://ex*ample.test", "a `*` goes alone"),
            ("https://*.127.0.0.1", "`*.` goes before a name"),
            (
                "https://10.0.0.0/33",
                "is not a network prefix from 0 to 32",
            ),
            ("https://", "it names no host"),
            ("https://[::1", "missing its `]`"),
        ] {
            let error = refused(text);
            assert!(error.contains(why), "{text}: {error}");
        }
    }

    #[test]
    fn a_request_with_a_user_or_another_scheme_goes_nowhere() {
        assert!(Destination::of_url("https://user:pw@example.test/").is_err());
        assert!(Destination::of_url("https://example.test@127.0.0.1/").is_err());
        assert!(Destination::of_url("ftp://example.test/").is_err());
        assert!(Destination::of_url("file:///etc/passwd").is_err());
    }

    mod property {
        use proptest::prelude::*;

        use super::*;

        /// The ways a URL may spell the IPv4 address `a`: one number
        /// (decimal, hex), four parts (decimal, octal, hex), and the
        /// two- and three-part forms whose last part fills the rest.
        fn spellings(a: u32) -> Vec<String> {
            let [b0, b1, b2, b3] = a.to_be_bytes();
            vec![
                a.to_string(),
                format!("{a:#x}"),
                format!("{b0}.{b1}.{b2}.{b3}"),
                format!("0{b0:o}.0{b1:o}.0{b2:o}.0{b3:o}"),
                format!("{b0:#x}.{b1:#x}.{b2:#x}.{b3:#x}"),
                format!("{b0}.{}", a & 0x00ff_ffff),
                format!("{b0}.{b1}.{}", a & 0xffff),
            ]
        }

        proptest! {
            /// Every spelling of an address is that address: granted by
            /// it, never by a name, and never by a neighbour.
            #[test]
            fn every_ipv4_spelling_is_the_one_address(a in any::<u32>()) {
                let address = std::net::Ipv4Addr::from(a);
                let by_address = grant(&format!("http://{address}"));
                let neighbour = grant(&format!("http://{}", std::net::Ipv4Addr::from(a ^ 1)));
                for spelling in spellings(a) {
                    let to = Destination::of_url(&format!("http://{spelling}/"));
                    let to = to.map_err(|e| TestCaseError::fail(format!("{spelling}: {e}")))?;
                    prop_assert_eq!(&to.host, &Host::<String>::Ipv4(address), "{}", spelling);
                    prop_assert!(by_address.matches(&to), "{}", spelling);
                    prop_assert!(!neighbour.matches(&to), "{}", spelling);
                    prop_assert!(!grant("http://localhost").matches(&to), "{}", spelling);
                    prop_assert!(!grant("http://*.localhost").matches(&to), "{}", spelling);
                }
            }
        }
    }
}
