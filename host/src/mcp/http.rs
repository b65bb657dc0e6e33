//! `toolhost mcp --http ADDR`: the same handler over Streamable HTTP, at
//! `/mcp`. Loopback by default; rmcp checks `Host` (and we turn on its
//! `Origin` check) against the loopback names and the address served, so a
//! web page cannot reach the server through DNS rebinding.
//!
//! Before any of that, every request must carry the server's bearer token
//! (unless `--http-no-auth`): any local user can reach a loopback port.
//! It is checked first, on the headers alone, so a request without it
//! costs no body read, no session and no parsing.

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs as _};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::capped_lines::{MAX_LINE, MESSAGE};
use super::log;
use super::server::{ConnectionGone, ToolServer};
use super::sessions::{IDLE, MAX_SESSIONS, Sessions};
use super::token;

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

/// Connections served at once: each holds a descriptor and a task, and
/// any local user may open them without the token. Past this many, new
/// ones wait in the kernel's backlog until one closes.
const MAX_CONNECTIONS: usize = 512;

/// How long a connection may take to send a request's headers (and, kept
/// alive, to start the next request) before it is closed: an idle
/// connection cannot hold one of [`MAX_CONNECTIONS`] for long.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How often sessions idle past [`IDLE`] are looked for.
const SWEEP: Duration = Duration::from_secs(60);

type Response = hyper::Response<BoxBody<Bytes, Infallible>>;

/// Serves `handler` on `listener` until `stop` is cancelled. With a
/// `token` (the SHA-256 of the bearer token), requests without it get 401.
pub(super) async fn serve(
    handler: ToolServer,
    listener: TcpListener,
    token: Option<[u8; 32]>,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let addr = listener.local_addr()?;
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(allowed_hosts(addr))
        .with_allowed_origins(allowed_origins(addr))
        // The same cap as a line on stdio.
        .with_max_request_body_bytes(MAX_LINE)
        .with_cancellation_token(stop.child_token());
    let sessions = Arc::new(Sessions::new(MAX_SESSIONS, IDLE));
    tokio::spawn(sweep(Arc::clone(&sessions), stop.clone()));
    let service = StreamableHttpService::new(move || Ok(handler.for_session()), sessions, config);
    let connections = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&connections).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => return Ok(()),
            },
            () = stop.cancelled() => return Ok(()),
        };
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
            // Held while the connection lives.
            let _permit = permit;
            // Cancelled when the client's connection ends: its calls stop.
            let gone = ConnectionGone(CancellationToken::new());
            let _cancel_on_close = gone.0.clone().drop_guard();
            let routed = hyper::service::service_fn(move |mut request: hyper::Request<_>| {
                let mut service = service.clone();
                request.extensions_mut().insert(gone.clone());
                async move {
                    if let Some(token) = &token
                        && let Some(refusal) = unauthorized(request.headers(), token)
                    {
                        return Ok::<_, Infallible>(refusal);
                    }
                    if request.uri().path() != PATH {
                        return Ok(not_found());
                    }
                    let deleting = request.method() == hyper::Method::DELETE;
                    let request = match bounded_body(request).await {
                        Ok(request) => request,
                        Err(refusal) => return Ok(refusal),
                    };
                    let mut response = tower_service::Service::call(&mut service, request).await?;
                    // rmcp answers a session's DELETE with 202, which the
                    // official SDKs log as a failure to end the session:
                    // the spec's clients expect a plain success.
                    if deleting && response.status() == hyper::StatusCode::ACCEPTED {
                        *response.status_mut() = hyper::StatusCode::NO_CONTENT;
                    }
                    Ok(response)
                }
            });
            let connection = http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .serve_connection(TokioIo::new(stream), routed);
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

/// `request` with its body read whole, at most [`MAX_LINE`] bytes and
/// within [`MESSAGE`], as one line on stdio; or the 413 that refuses it.
/// rmcp would read it anyway; read here, it is counted before rmcp parses
/// it (4 MiB of `0,` cost about 400 MB as a `Value`).
async fn bounded_body(
    request: hyper::Request<hyper::body::Incoming>,
) -> Result<hyper::Request<Full<Bytes>>, Response> {
    let (parts, body) = request.into_parts();
    let bytes = match http_body_util::Limited::new(body, MAX_LINE).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            return Err(too_large(format!(
                "message too large: the request's body is over the {MAX_LINE}-byte (4 MiB) cap \
                 of `toolhost mcp`; it was not read. Pass large data in a file in the workspace \
                 instead"
            )));
        }
        Err(e) => {
            let mut response = hyper::Response::new(
                Full::new(Bytes::from(format!("reading the request's body: {e}\n"))).boxed(),
            );
            *response.status_mut() = hyper::StatusCode::BAD_REQUEST;
            return Err(response);
        }
    };
    if let Err(over) = MESSAGE.check(&bytes) {
        log::warn(format_args!("refused a request over HTTP: {over}"));
        return Err(too_large(super::stdio::over_budget_text(&over)));
    }
    Ok(hyper::Request::from_parts(parts, Full::new(bytes)))
}

/// A 413 with `text`.
fn too_large(text: String) -> Response {
    let mut response = hyper::Response::new(Full::new(Bytes::from(text + "\n")).boxed());
    *response.status_mut() = hyper::StatusCode::PAYLOAD_TOO_LARGE;
    response
}

/// Closes idle sessions every [`SWEEP`] until `stop`.
async fn sweep(sessions: Arc<Sessions>, stop: CancellationToken) {
    loop {
        tokio::select! {
            () = tokio::time::sleep(SWEEP) => sessions.expire().await,
            () = stop.cancelled() => return,
        }
    }
}

/// The 401 for a request without the bearer token `expected` (its
/// SHA-256), or `None` when it has it. The digests are compared in
/// constant time, so the answer's timing says nothing of the token.
fn unauthorized(headers: &hyper::HeaderMap, expected: &[u8; 32]) -> Option<Response> {
    let presented = headers
        .get(hyper::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim());
    let challenge = match presented {
        Some(token) if token::same(&token::digest(token.as_bytes()), expected) => return None,
        Some(_) => r#"Bearer error="invalid_token""#,
        None => "Bearer",
    };
    let mut response = hyper::Response::new(
        Full::new(Bytes::from_static(
            b"unauthorized: send the header `Authorization: Bearer TOKEN` with the token that \
              `toolhost mcp --http` printed when it started\n",
        ))
        .boxed(),
    );
    *response.status_mut() = hyper::StatusCode::UNAUTHORIZED;
    response.headers_mut().insert(
        hyper::header::WWW_AUTHENTICATE,
        hyper::header::HeaderValue::from_static(challenge),
    );
    Some(response)
}

fn not_found() -> Response {
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
