//! Whether one request may go, decided in the host before anything is
//! sent: its destination must match one of the tool's grants, and every
//! address its name resolves to must be one that grant may reach (global,
//! or named by the grant). The addresses checked are the ones to connect
//! to: nothing looks the name up a second time (a rebinding server could
//! answer differently). The guest never resolves names itself.

use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::pin::Pin;

use url::Host;
use wasmtime_wasi_http::Error;

use super::grant::{Destination, NetGrant};

/// The one name toolhost answers itself, with 127.0.0.1 alone.
const LOCALHOST: &str = "localhost";

/// Looks a name up: the system's resolver, or a table in tests.
pub(crate) trait Resolve: Send + Sync {
    fn lookup<'a>(
        &'a self,
        name: &'a str,
        port: u16,
    ) -> Pin<Box<dyn Future<Output = io::Result<Vec<SocketAddr>>> + Send + 'a>>;
}

/// The system's resolver (getaddrinfo, on tokio's blocking pool).
pub(crate) struct SystemResolver;

/// Lookups in flight in the whole process. getaddrinfo cannot be
/// cancelled: a lookup holds a thread of the blocking pool (which file
/// I/O shares) until the resolver gives up, also after its call has ended.
/// A plugin pointing names at a server that never answers would otherwise
/// hold as many threads as it asks; the permit lives as long as the thread.
const MAX_LOOKUPS: usize = 16;
static LOOKUPS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(MAX_LOOKUPS);

impl Resolve for SystemResolver {
    fn lookup<'a>(
        &'a self,
        name: &'a str,
        port: u16,
    ) -> Pin<Box<dyn Future<Output = io::Result<Vec<SocketAddr>>> + Send + 'a>> {
        Box::pin(async move {
            let permit = LOOKUPS.acquire().await.map_err(io::Error::other)?;
            let name = name.to_owned();
            tokio::task::spawn_blocking(move || {
                let _held = permit;
                std::net::ToSocketAddrs::to_socket_addrs(&(name.as_str(), port))
                    .map(Iterator::collect)
            })
            .await
            .map_err(io::Error::other)?
        })
    }
}

/// A request that may go: where, and the addresses to connect to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cleared {
    pub destination: Destination,
    pub addresses: Vec<SocketAddr>,
}

/// Why a request may not go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Not a request toolhost sends: another scheme, a user name, no host.
    Malformed(String),
    /// No grant of the tool matches its scheme, host and port.
    NotGranted,
    /// The name resolved to an address that is not global, which the
    /// matching grants do not name.
    Prohibited { address: IpAddr },
    /// The name did not resolve.
    Dns(String),
}

impl Refusal {
    /// What the guest's `wasi:http` call fails with.
    pub(crate) fn error(&self) -> Error {
        match self {
            Refusal::Malformed(_) => Error::HttpRequestUriInvalid,
            Refusal::NotGranted => Error::HttpRequestDenied,
            Refusal::Prohibited { .. } => Error::DestinationIpProhibited,
            Refusal::Dns(why) => Error::DnsError {
                rcode: Some(why.clone()),
                info_code: None,
            },
        }
    }
}

/// Decides whether a request to `url` may go under `grants`: both steps
/// at once, as the tests ask (the hook takes a connection slot between
/// them).
#[cfg(test)]
pub(crate) async fn clear(
    grants: &[NetGrant],
    url: &str,
    resolver: &dyn Resolve,
) -> Result<Cleared, Refusal> {
    let destination = granted(grants, url)?;
    resolve(grants, destination, resolver).await
}

/// Where a request to `url` goes, when a grant matches it: the check that
/// needs no lookup, made first so a request no grant matches costs nothing.
pub(crate) fn granted(grants: &[NetGrant], url: &str) -> Result<Destination, Refusal> {
    let destination = Destination::of_url(url).map_err(Refusal::Malformed)?;
    if !grants.iter().any(|grant| grant.matches(&destination)) {
        return Err(Refusal::NotGranted);
    }
    Ok(destination)
}

/// A `TRACE` echoes the request's headers back to the guest: one that
/// would carry a credential the host adds is refused.
pub(crate) fn echoes_no_credential(
    method: &http::Method,
    carries_credential: bool,
) -> Result<(), Refusal> {
    if method == http::Method::TRACE && carries_credential {
        return Err(Refusal::Malformed(
            "TRACE echoes a request's headers, and this one would carry a credential the host \
             adds"
                .into(),
        ));
    }
    Ok(())
}

/// The addresses of a granted `destination`, each one its grants may
/// reach.
pub(crate) async fn resolve(
    grants: &[NetGrant],
    destination: Destination,
    resolver: &dyn Resolve,
) -> Result<Cleared, Refusal> {
    let matching: Vec<&NetGrant> = grants
        .iter()
        .filter(|grant| grant.matches(&destination))
        .collect();
    let port = destination.port;
    let addresses = match &destination.host {
        Host::Ipv4(address) => vec![SocketAddr::new(IpAddr::V4(*address), port)],
        Host::Ipv6(address) => vec![SocketAddr::new(IpAddr::V6(*address), port)],
        // `localhost` is never looked up: it is 127.0.0.1 and nothing else.
        // The hosts file may list `::1` first or as well, and `[::1]:P` is
        // another socket than `127.0.0.1:P`, which any local user may
        // hold: a grant (and the credential on it) for `localhost:P` would
        // go to whichever answered, and a refused first address falls
        // through to the next. A server on `::1` is granted as `[::1]`.
        Host::Domain(name) if name.eq_ignore_ascii_case(LOCALHOST) => {
            vec![SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)]
        }
        Host::Domain(name) => resolver
            .lookup(name, port)
            .await
            .map_err(|e| Refusal::Dns(e.to_string()))?,
    };
    if addresses.is_empty() {
        return Err(Refusal::Dns("the name has no address".into()));
    }
    // Every address, not only the first: a server answering with one good
    // and one private address must not get the private one tried. An
    // address that is not global passes only when a grant names it
    // itself, for this scheme and port: the grant the name matched
    // (`localhost`), or one of the address (`http://10.0.0.5:8080` lets
    // `intranet.test` reach 10.0.0.5 on that port).
    for address in &addresses {
        let ip = address.ip();
        let as_address = Destination {
            host: match ip {
                IpAddr::V4(v4) => Host::Ipv4(v4),
                IpAddr::V6(v6) => Host::Ipv6(v6),
            },
            ..destination.clone()
        };
        let reachable = matching.iter().any(|grant| grant.may_connect_to(ip))
            || grants
                .iter()
                .any(|grant| grant.names_address(ip) && grant.matches(&as_address));
        if !reachable {
            return Err(Refusal::Prohibited { address: ip });
        }
    }
    Ok(Cleared {
        destination,
        addresses,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// Names answered from a table; anything else does not resolve.
    struct Table(HashMap<&'static str, Vec<IpAddr>>);

    impl Resolve for Table {
        fn lookup<'a>(
            &'a self,
            name: &'a str,
            port: u16,
        ) -> Pin<Box<dyn Future<Output = io::Result<Vec<SocketAddr>>> + Send + 'a>> {
            let found = self.0.get(name).map(|ips| {
                ips.iter()
                    .map(|ip| SocketAddr::new(*ip, port))
                    .collect::<Vec<_>>()
            });
            Box::pin(async move {
                found.ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such name"))
            })
        }
    }

    fn table() -> Table {
        let ip = |text: &str| text.parse::<IpAddr>().expect("ip");
        Table(HashMap::from([
            ("public.example.test", vec![ip("93.184.215.14")]),
            ("rebound.example.test", vec![ip("127.0.0.1")]),
            ("metadata.example.test", vec![ip("169.254.169.254")]),
            (
                "mixed.example.test",
                vec![ip("93.184.215.14"), ip("10.0.0.7")],
            ),
            ("mapped.example.test", vec![ip("::ffff:127.0.0.1")]),
            ("localhost", vec![ip("127.0.0.1"), ip("::1")]),
        ]))
    }

    fn decide(grants: &[&str], url: &str) -> Result<Vec<String>, Refusal> {
        let grants: Vec<NetGrant> = grants
            .iter()
            .map(|g| NetGrant::parse(g).expect("grant"))
            .collect();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        runtime
            .block_on(clear(&grants, url, &table()))
            .map(|cleared| cleared.addresses.iter().map(ToString::to_string).collect())
    }

    #[test]
    fn a_granted_public_name_goes_to_the_addresses_checked() {
        assert_eq!(
            decide(&["https://*.example.test"], "https://public.example.test/x"),
            Ok(vec!["93.184.215.14:443".to_string()])
        );
    }

    #[test]
    fn a_granted_name_that_resolves_to_a_private_address_is_prohibited() {
        for name in ["rebound", "metadata", "mixed", "mapped"] {
            let url = format!("https://{name}.example.test/");
            let refused = decide(&["https://*.example.test"], &url).expect_err(name);
            assert!(matches!(refused, Refusal::Prohibited { .. }), "{name}");
            assert!(matches!(refused.error(), Error::DestinationIpProhibited));
        }
        // `*` is any public host, never this machine.
        assert!(matches!(
            decide(&["https://*"], "https://rebound.example.test/"),
            Err(Refusal::Prohibited { .. })
        ));
        assert!(matches!(
            decide(&["http://*"], "http://127.0.0.1/"),
            Err(Refusal::Prohibited { .. })
        ));
    }

    #[test]
    fn this_machine_is_reached_only_when_the_grant_names_it() {
        assert_eq!(
            decide(&["http://localhost:8080"], "http://localhost:8080/"),
            Ok(vec!["127.0.0.1:8080".to_string()])
        );
        assert_eq!(
            decide(&["http://127.0.0.1:8080"], "http://0x7f.1:8080/"),
            Ok(vec!["127.0.0.1:8080".to_string()])
        );
        assert_eq!(
            decide(&["http://localhost:8080"], "http://127.0.0.1:8080/"),
            Err(Refusal::NotGranted)
        );
    }

    /// Red team (issue 37): with `::1 localhost` in the hosts file, a
    /// credential on `http://localhost:P` went to `[::1]:P`, which another
    /// user may hold. `localhost` is 127.0.0.1 alone, whatever the
    /// resolver says (the table lists `::1` too), and `[::1]` is reached
    /// only by a grant that names it.
    #[test]
    fn localhost_is_127_0_0_1_alone_and_never_looked_up() {
        assert_eq!(
            decide(&["http://localhost:8080"], "http://LOCALHOST:8080/"),
            Ok(vec!["127.0.0.1:8080".to_string()])
        );
        assert_eq!(
            decide(&["http://localhost:8080"], "http://[::1]:8080/"),
            Err(Refusal::NotGranted)
        );
        assert_eq!(
            decide(&["http://[::1]:8080"], "http://[::1]:8080/"),
            Ok(vec!["[::1]:8080".to_string()])
        );
    }

    #[test]
    fn a_private_address_behind_a_name_needs_a_grant_of_that_address() {
        let name = "http://metadata.example.test:8080/";
        assert!(matches!(
            decide(&["http://metadata.example.test:8080"], name),
            Err(Refusal::Prohibited { .. })
        ));
        assert_eq!(
            decide(
                &[
                    "http://metadata.example.test:8080",
                    "http://169.254.0.0/16:8080"
                ],
                name
            ),
            Ok(vec!["169.254.169.254:8080".to_string()])
        );
        // The address grant must cover the request's scheme and port too.
        for other in [
            "https://169.254.169.254:8080",
            "http://169.254.169.254:9090",
        ] {
            assert!(
                matches!(
                    decide(&["http://metadata.example.test:8080", other], name),
                    Err(Refusal::Prohibited { .. })
                ),
                "{other}"
            );
        }
    }

    #[test]
    fn a_trace_that_would_carry_a_credential_is_refused() {
        assert!(matches!(
            echoes_no_credential(&http::Method::TRACE, true),
            Err(Refusal::Malformed(_))
        ));
        assert_eq!(echoes_no_credential(&http::Method::TRACE, false), Ok(()));
        assert_eq!(echoes_no_credential(&http::Method::GET, true), Ok(()));
    }

    #[test]
    fn what_no_grant_matches_is_denied_before_any_lookup() {
        assert_eq!(
            decide(&[], "https://public.example.test/"),
            Err(Refusal::NotGranted)
        );
        assert!(matches!(
            Refusal::NotGranted.error(),
            Error::HttpRequestDenied
        ));
        // Not in the table: were it looked up, the refusal would be Dns.
        assert_eq!(
            decide(
                &["https://public.example.test"],
                "https://other.example.test/"
            ),
            Err(Refusal::NotGranted)
        );
        assert!(matches!(
            decide(&["https://*.example.test"], "https://gone.example.test/"),
            Err(Refusal::Dns(_))
        ));
        assert!(matches!(
            decide(&["https://*"], "https://u:p@public.example.test/"),
            Err(Refusal::Malformed(_))
        ));
    }
}
