//! `toolhost mcp --http ADDR`: the same handler over Streamable HTTP, at
//! `/mcp`. Loopback by default; rmcp checks `Host` (and we turn on its
//! `Origin` check) against the loopback names and the address served, so a
//! web page cannot reach the server through DNS rebinding.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs as _};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::log;
use super::server::ToolServer;

/// The one path the server answers.
pub(super) const PATH: &str = "/mcp";

/// How long open connections (SSE streams) get to finish at shutdown.
const DRAIN: Duration = Duration::from_secs(2);

/// `ADDR` of `--http`: `host:port`, or a bare port on 127.0.0.1.
pub fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.to_socket_addrs()
        .map_err(|e| {
            format!("`{text}` is not an address to listen on ({e}); give HOST:PORT or a port")
        })?
        .next()
        .ok_or_else(|| format!("`{text}` resolves to no address; give HOST:PORT or a port"))
}

/// The `Host` values accepted: the loopback names, and the address served
/// when it is a specific one.
fn allowed_hosts(addr: SocketAddr) -> Vec<String> {
    let mut hosts = vec!["localhost".to_string(), "127.0.0.1".into(), "::1".into()];
    if !addr.ip().is_loopback() && !addr.ip().is_unspecified() {
        hosts.push(addr.ip().to_string());
    }
    hosts
}

/// The browser origins accepted (a request without `Origin` passes: it is
/// not a browser's).
fn allowed_origins(addr: SocketAddr) -> Vec<String> {
    let mut origins: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
        .iter()
        .map(|host| format!("http://{host}:*"))
        .collect();
    if !addr.ip().is_loopback() && !addr.ip().is_unspecified() {
        origins.push(match addr.ip() {
            IpAddr::V4(ip) => format!("http://{ip}:*"),
            IpAddr::V6(ip) => format!("http://[{ip}]:*"),
        });
    }
    origins
}

/// Cancelled when the HTTP connection a request came on is closed. Calls
/// are served statelessly (no session to resume a response on), so a
/// client that hung up can never read the result: its calls stop, as on
/// stdio when stdin closes.
#[derive(Clone, Debug)]
pub(super) struct ConnectionGone(pub(super) CancellationToken);

/// Serves `handler` on `listener` until `stop` is cancelled.
pub(super) async fn serve(
    handler: ToolServer,
    listener: TcpListener,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let addr = listener.local_addr()?;
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(allowed_hosts(addr))
        .with_allowed_origins(allowed_origins(addr))
        .with_cancellation_token(stop.child_token());
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors and the like: say so, go on.
                    log::warn(format_args!("accepting a connection: {e}"));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = stop.cancelled() => return Ok(()),
        };
        let service = service.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            // Cancelled when the client's connection ends: its calls stop.
            let gone = ConnectionGone(CancellationToken::new());
            let _cancel_on_close = gone.0.clone().drop_guard();
            let routed = hyper::service::service_fn(move |mut request: hyper::Request<_>| {
                let mut service = service.clone();
                request.extensions_mut().insert(gone.clone());
                async move {
                    if request.uri().path() != PATH {
                        return Ok::<_, Infallible>(not_found());
                    }
                    tower_service::Service::call(&mut service, request).await
                }
            });
            let connection = http1::Builder::new().serve_connection(TokioIo::new(stream), routed);
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                () = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(DRAIN, connection).await;
                }
            }
        });
    }
}

fn not_found() -> hyper::Response<http_body_util::combinators::BoxBody<Bytes, Infallible>> {
    let mut response = hyper::Response::new(
        Full::new(Bytes::from(format!(
            "not found: the MCP endpoint is {PATH}\n"
        )))
        .boxed(),
    );
    *response.status_mut() = hyper::StatusCode::NOT_FOUND;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_port_is_loopback_and_names_resolve() {
        assert_eq!(
            parse_listen("8080"),
            Ok("127.0.0.1:8080".parse().expect("addr"))
        );
        assert_eq!(
            parse_listen("[::1]:9"),
            Ok("[::1]:9".parse().expect("addr"))
        );
        assert!(
            parse_listen("localhost:7")
                .expect("resolves")
                .ip()
                .is_loopback()
        );
        assert!(parse_listen("no port").is_err());
    }

    #[test]
    fn only_loopback_and_the_served_address_are_allowed() {
        let loopback: SocketAddr = "127.0.0.1:1".parse().expect("addr");
        assert_eq!(allowed_hosts(loopback), ["localhost", "127.0.0.1", "::1"]);
        let lan: SocketAddr = "10.0.0.5:1".parse().expect("addr");
        assert_eq!(
            allowed_hosts(lan).last().map(String::as_str),
            Some("10.0.0.5")
        );
        assert_eq!(
            allowed_origins(lan).last().map(String::as_str),
            Some("http://10.0.0.5:*")
        );
        let any: SocketAddr = "0.0.0.0:1".parse().expect("addr");
        assert_eq!(allowed_hosts(any).len(), 3);
    }
}
