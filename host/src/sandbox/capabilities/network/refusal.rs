//! What the model reads when the host refused a tool's request: the
//! request (its URL without the query), why, what the tool may reach, and
//! what the user would pass to allow it. Said once here for every way the
//! refusal is shown (a call's result, `toolhost call`, MCP).

use url::Host;

use super::account::{NetDenial, NetRefusal};
use super::grant::Destination;
use crate::sandbox::Reach;

/// The `isError` text for `denial` of a request `tool` made.
pub(crate) fn model_text(tool: &str, denial: &NetDenial) -> String {
    let NetDenial {
        method,
        url,
        refusal,
        grants,
    } = denial;
    let request = format!("`{method} {url}`");
    let reach = Reach::of_hosts(tool, grants).host_sentence();
    let destination = Destination::of_url(url).ok();
    let flag = |origin: String| format!("`--allow-net {tool}={origin}`");
    match refusal {
        NetRefusal::NotGranted => {
            let allow = destination.map_or_else(String::new, |to| {
                format!(
                    " If this request is needed, ask the user, who can allow it with {}.",
                    flag(origin(&to, &to.host))
                )
            });
            format!(
                "error: `{tool}` may not reach {request}: no network grant of this tool matches \
                 it. {reach}{allow}"
            )
        }
        NetRefusal::Private { address } => {
            let named = matches!(
                destination.as_ref().map(|to| &to.host),
                Some(Host::Domain(_))
            );
            let what = if named {
                format!("its host resolved to {address}, which is")
            } else {
                format!("{address} is")
            };
            let allow = destination.map_or_else(String::new, |to| {
                let host = match address {
                    std::net::IpAddr::V4(v4) => Host::Ipv4(*v4),
                    std::net::IpAddr::V6(v6) => Host::Ipv6(*v6),
                };
                format!(
                    " If this server is meant, ask the user, who can allow its address with {}.",
                    flag(origin(&to, &host))
                )
            });
            format!(
                "error: `{tool}` may not reach {request}: {what} not a public address (this \
                 machine, a private network or a cloud metadata service), and no grant of this \
                 tool names that address. {reach}{allow}"
            )
        }
        NetRefusal::Malformed(why) => format!(
            "error: `{tool}` may not send {request}: {why}. Send requests to http:// or https:// \
             URLs without a user name or password."
        ),
        NetRefusal::Requests { limit } => format!(
            "error: `{tool}` tried more than {limit} requests in one call and was refused the \
             rest (the last was {request}). Ask for less in one call."
        ),
        NetRefusal::Connections { limit } => format!(
            "error: `{tool}` tried to open more than {limit} connections at once and was refused \
             {request}. Read each response before sending the next, or ask for less in one call."
        ),
        NetRefusal::ResponseBytes { limit } => format!(
            "error: `{tool}` read more than {} of responses in one call and was cut off at \
             {request}. Ask for a smaller part of it (a page, a range) in one call.",
            crate::units::bytes(*limit)
        ),
        NetRefusal::RequestBytes { limit } => format!(
            "error: `{tool}` sent a request body over {} to {request} and was refused. Send less \
             in one request.",
            crate::units::bytes(*limit)
        ),
    }
}

/// `scheme://host[:port]` for a grant of `host` at `to`'s scheme and port;
/// the port left out when it is the scheme's own.
fn origin(to: &Destination, host: &Host<String>) -> String {
    let default = matches!((to.scheme, to.port), ("https", 443) | ("http", 80));
    if default {
        format!("{}://{host}", to.scheme)
    } else {
        format!("{}://{host}:{}", to.scheme, to.port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::NetGrant;

    fn denial(url: &str, refusal: NetRefusal, grants: &[&str]) -> NetDenial {
        NetDenial {
            method: "GET".into(),
            url: url.into(),
            refusal,
            grants: grants
                .iter()
                .map(|g| NetGrant::parse(g).expect("grant"))
                .collect(),
        }
    }

    #[test]
    fn a_request_no_grant_matches_names_the_flag_that_would_allow_it() {
        assert_eq!(
            model_text(
                "fetch",
                &denial(
                    "https://evil.test/x",
                    NetRefusal::NotGranted,
                    &["https://docs.rs"]
                )
            ),
            "error: `fetch` may not reach `GET https://evil.test/x`: no network grant of this \
             tool matches it. This tool may reach only `https://docs.rs`. If this request is \
             needed, ask the user, who can allow it with `--allow-net fetch=https://evil.test`."
        );
        assert_eq!(
            model_text(
                "fetch",
                &denial("http://[::1]:8080/", NetRefusal::NotGranted, &[])
            ),
            "error: `fetch` may not reach `GET http://[::1]:8080/`: no network grant of this \
             tool matches it. This tool has no network access. If this request is needed, ask \
             the user, who can allow it with `--allow-net fetch=http://[::1]:8080`."
        );
    }

    #[test]
    fn an_address_that_is_not_public_is_called_so() {
        assert_eq!(
            model_text(
                "fetch",
                &denial(
                    "http://169.254.169.254/latest",
                    NetRefusal::Private {
                        address: "169.254.169.254".parse().expect("ip")
                    },
                    &["http://*"]
                )
            ),
            "error: `fetch` may not reach `GET http://169.254.169.254/latest`: 169.254.169.254 \
             is not a public address (this machine, a private network or a cloud metadata \
             service), and no grant of this tool names that address. This tool may reach only \
             `http://*`. If this server is meant, ask the user, who can allow its address with \
             `--allow-net fetch=http://169.254.169.254`."
        );
    }

    #[test]
    fn a_private_address_names_the_address_grant() {
        assert_eq!(
            model_text(
                "fetch",
                &denial(
                    "http://intranet.test:8080/a",
                    NetRefusal::Private {
                        address: "10.0.0.5".parse().expect("ip")
                    },
                    &["http://intranet.test:8080"]
                )
            ),
            "error: `fetch` may not reach `GET http://intranet.test:8080/a`: its host resolved \
             to 10.0.0.5, which is not a public address (this machine, a private network or a \
             cloud metadata service), and no grant of this tool names that address. This tool \
             may reach only `http://intranet.test:8080`. If this server is meant, ask the user, \
             who can allow its address with `--allow-net fetch=http://10.0.0.5:8080`."
        );
    }
}
