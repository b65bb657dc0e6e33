//! Sends one request the host has cleared ([`super::clearance`]): a TCP
//! connection to one of the checked addresses (never a new lookup), TLS
//! for `https` with the server name of the URL, then one HTTP/1.1 exchange.
//!
//! What it does not do is as much the point: no proxy (the environment's
//! `HTTPS_PROXY` would route a grant elsewhere), no redirects (each hop is
//! a new request the guest makes and the host clears again), no
//! decompression (the guest reads what the server sent, and a small
//! compressed body cannot become a large one behind the byte budget), and
//! no connection reuse across requests. Every wait ends by the call's
//! deadline.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use url::Host;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody};

use super::clearance::Cleared;

/// TLS for the tools' requests: the system's roots, plus the certificates
/// of `[network] ca_file` when the user gives one. Built at the first
/// `https` request (reading the system's roots takes milliseconds no call
/// without the network should pay).
#[derive(Debug, Default)]
pub(crate) struct Tls {
    ca_file: Option<PathBuf>,
    config: OnceLock<Result<Arc<rustls::ClientConfig>, String>>,
}

impl Tls {
    pub(crate) fn new(ca_file: Option<PathBuf>) -> Tls {
        Tls {
            ca_file,
            config: OnceLock::new(),
        }
    }

    fn config(&self) -> Result<Arc<rustls::ClientConfig>, Error> {
        self.config
            .get_or_init(|| self.build())
            .clone()
            .map_err(|why| Error::InternalError(Some(why)))
    }

    fn build(&self) -> Result<Arc<rustls::ClientConfig>, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let extra = match &self.ca_file {
            None => Vec::new(),
            Some(path) => read_certificates(path)?,
        };
        let verifier =
            rustls_platform_verifier::Verifier::new_with_extra_roots(extra, Arc::clone(&provider))
                .map_err(|e| format!("cannot load the system's TLS roots: {e}"))?;
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("cannot set up TLS: {e}"))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}

/// The PEM certificates of `[network] ca_file`.
fn read_certificates(
    path: &std::path::Path,
) -> Result<Vec<rustls::pki_types::CertificateDer<'static>>, String> {
    use rustls::pki_types::pem::PemObject;
    let certificates: Vec<_> = rustls::pki_types::CertificateDer::pem_file_iter(path)
        .and_then(Iterator::collect::<Result<_, _>>)
        .map_err(|e| format!("cannot read `[network] ca_file` `{}`: {e}", path.display()))?;
    if certificates.is_empty() {
        return Err(format!(
            "`[network] ca_file` `{}` holds no PEM certificate",
            path.display()
        ));
    }
    Ok(certificates)
}

/// A stream a request is sent over: TCP, or TLS over TCP.
pub(crate) trait Stream: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Stream for T {}

/// A sent request's response and the future that drives its connection
/// until the body is read (or the call ends).
pub(crate) struct Sent {
    pub(crate) response: http::Response<Incoming>,
    pub(crate) address: SocketAddr,
    pub(crate) connection:
        hyper::client::conn::http1::Connection<TokioIo<Box<dyn Stream>>, WasiBody>,
}

/// Sends `request` to `cleared`'s addresses, each wait bounded by the
/// guest's options and by `deadline`.
pub(crate) async fn send(
    mut request: http::Request<WasiBody>,
    cleared: &Cleared,
    tls: &Tls,
    options: Option<RequestOptions>,
    deadline: Instant,
) -> Result<Sent, Error> {
    let bound = |given: Option<Duration>| {
        let left = deadline.saturating_duration_since(Instant::now());
        given.map_or(left, |given| given.min(left))
    };
    let connect_by = Instant::now() + bound(options.and_then(|o| o.connect_timeout));
    let (tcp, address) = connect(&cleared.addresses, connect_by).await?;
    // TLS by the scheme that was cleared (and that credentials matched),
    // not by another reading of the request.
    let stream: Box<dyn Stream> = if cleared.destination.scheme == "https" {
        let name = match &cleared.destination.host {
            Host::Domain(name) => {
                ServerName::try_from(name.clone()).map_err(|_| Error::HttpRequestUriInvalid)?
            }
            Host::Ipv4(address) => ServerName::from(std::net::IpAddr::V4(*address)),
            Host::Ipv6(address) => ServerName::from(std::net::IpAddr::V6(*address)),
        };
        let connector = tokio_rustls::TlsConnector::from(tls.config()?);
        let handshake = connector.connect(name, tcp);
        match tokio::time::timeout_at(connect_by.into(), handshake).await {
            Err(_) => return Err(Error::ConnectionTimeout),
            Ok(Err(e)) => return Err(tls_error(&e)),
            Ok(Ok(stream)) => Box::new(stream),
        }
    } else {
        Box::new(tcp)
    };
    let handshake = hyper::client::conn::http1::Builder::new().handshake(TokioIo::new(stream));
    let (mut sender, mut connection) = tokio::time::timeout_at(connect_by.into(), handshake)
        .await
        .map_err(|_| Error::ConnectionTimeout)??;

    // The request line names the path only (a URL with the host is for a
    // proxy); the `Host` header names what was cleared, in its canonical
    // form (`0x7f.1` is sent as `127.0.0.1`), so the server reads the host
    // the grant matched and nothing spelt to look like another.
    let path = request
        .uri()
        .path_and_query()
        .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned());
    *request.uri_mut() = path.parse().map_err(|_| Error::HttpRequestUriInvalid)?;
    let host = host_header(&cleared.destination)
        .parse()
        .map_err(|_| Error::HttpRequestUriInvalid)?;
    request.headers_mut().insert(http::header::HOST, host);

    let first_byte_by = Instant::now() + bound(options.and_then(|o| o.first_byte_timeout));
    let exchange = async {
        let mut sending = std::pin::pin!(sender.send_request(request));
        // Drive the connection while the head is awaited; if it ends
        // first, the request's own future says how.
        tokio::select! {
            response = &mut sending => response,
            ended = &mut connection => match ended {
                Ok(()) => sending.await,
                Err(e) => Err(e),
            },
        }
    };
    let response = tokio::time::timeout_at(first_byte_by.into(), exchange)
        .await
        .map_err(|_| Error::ConnectionReadTimeout)??;
    Ok(Sent {
        response,
        address,
        connection,
    })
}

/// `host[:port]` of `to`, the port left out when it is the scheme's own.
fn host_header(to: &super::grant::Destination) -> String {
    let default = matches!((to.scheme, to.port), ("https", 443) | ("http", 80));
    if default {
        to.host.to_string()
    } else {
        format!("{}:{}", to.host, to.port)
    }
}

/// Connects to the first of `addresses` that answers by `by`.
async fn connect(addresses: &[SocketAddr], by: Instant) -> Result<(TcpStream, SocketAddr), Error> {
    let mut last = Error::ConnectionRefused;
    for address in addresses {
        match tokio::time::timeout_at(by.into(), TcpStream::connect(address)).await {
            Err(_) => return Err(Error::ConnectionTimeout),
            Ok(Ok(stream)) => return Ok((stream, *address)),
            Ok(Err(e)) => {
                last = match e.kind() {
                    std::io::ErrorKind::ConnectionRefused => Error::ConnectionRefused,
                    std::io::ErrorKind::TimedOut => Error::ConnectionTimeout,
                    _ => Error::Connect(e),
                };
            }
        }
    }
    Err(last)
}

/// A failed TLS handshake: the certificate, or the protocol.
fn tls_error(error: &std::io::Error) -> Error {
    let certificate = error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .is_some_and(|e| {
            matches!(
                e,
                rustls::Error::InvalidCertificate(_) | rustls::Error::NoCertificatesPresented
            )
        });
    if certificate {
        Error::TlsCertificateError
    } else {
        Error::TlsProtocolError
    }
}
