//! A small web server on 127.0.0.1 for the network tests: plain HTTP/1.1
//! over real sockets, optionally TLS with the test certificate authority
//! (`tests/fixtures/tls`), one thread per connection. It records every
//! request it reads and counts the connections still open, so a test can
//! see what reached it and that a stopped call closed its connections.
//!
//! Paths: `/redirect?to=URL` answers 302 to URL; `/endless` streams
//! chunks until the client goes; `/slow` sends its head, then a byte every
//! 200 ms; `/size/N` sends N bytes; `/text/N` N bytes of numbered lines
//! as `text/plain`; `/status/N` answers status N; `/page/NAME` serves
//! `tests/fixtures/web/NAME` as HTML; anything else answers `hello from
//! PATH`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One request as the server read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub method: String,
    /// The request target: path and query.
    pub target: String,
    pub host: String,
    /// The `authorization` header, if sent.
    pub authorization: Option<String>,
    pub body: Vec<u8>,
}

/// A running server; it stops accepting when dropped.
pub struct WebServer {
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    open: Arc<AtomicUsize>,
}

impl WebServer {
    /// Plain HTTP.
    pub fn http() -> WebServer {
        Self::start(None)
    }

    /// HTTPS with the test CA's certificate for localhost, 127.0.0.1, ::1
    /// and api.test.
    pub fn https() -> WebServer {
        Self::start(Some(tls_config()))
    }

    fn start(tls: Option<Arc<rustls::ServerConfig>>) -> WebServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let open = Arc::new(AtomicUsize::new(0));
        let (seen2, open2) = (Arc::clone(&seen), Arc::clone(&open));
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let (seen, open, tls) = (Arc::clone(&seen2), Arc::clone(&open2), tls.clone());
                open.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || {
                    match tls {
                        None => serve(stream, &seen),
                        Some(config) => {
                            let connection =
                                rustls::ServerConnection::new(config).expect("tls server");
                            serve(rustls::StreamOwned::new(connection, stream), &seen);
                        }
                    }
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        WebServer { addr, seen, open }
    }

    /// `http://127.0.0.1:PORT` (or https).
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Every request read so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("lock").clone()
    }

    /// Forgets the requests read so far.
    pub fn clear_seen(&self) {
        self.seen.lock().expect("lock").clear();
    }

    /// Connections not yet closed.
    pub fn open_connections(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }

    /// Waits up to `limit` for every connection to close.
    pub fn wait_all_closed(&self, limit: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            if self.open_connections() == 0 {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

/// The certificate authority the server's certificate is signed with.
pub fn ca_file() -> PathBuf {
    fixtures().join("tls/ca.pem")
}

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn tls_config() -> Arc<rustls::ServerConfig> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_file_iter(fixtures().join("tls/server.pem"))
            .expect("server.pem")
            .collect::<Result<_, _>>()
            .expect("certificates");
    let key = PrivateKeyDer::from_pem_file(fixtures().join("tls/server.key")).expect("key");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .expect("server config");
    Arc::new(config)
}

/// Reads requests on one connection and answers each.
fn serve<S: Read + Write>(stream: S, seen: &Mutex<Vec<Seen>>) {
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or_default().to_string();
        let target = parts.next().unwrap_or_default().to_string();
        let (mut host, mut length, mut authorization) = (String::new(), 0usize, None);
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                match name.to_ascii_lowercase().as_str() {
                    "host" => host = value.trim().to_string(),
                    "content-length" => length = value.trim().parse().unwrap_or(0),
                    "authorization" => authorization = Some(value.trim().to_string()),
                    _ => {}
                }
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        seen.lock().expect("lock").push(Seen {
            method,
            target: target.clone(),
            host,
            authorization,
            body,
        });
        if answer(reader.get_mut(), &target).is_err() {
            return;
        }
    }
}

fn answer(out: &mut impl Write, target: &str) -> std::io::Result<()> {
    let head = |status: &str, extra: &str, length: usize| {
        format!("HTTP/1.1 {status}\r\ncontent-length: {length}\r\n{extra}\r\n")
    };
    if let Some(to) = target.strip_prefix("/redirect?to=") {
        out.write_all(head("302 Found", &format!("location: {to}\r\n"), 0).as_bytes())?;
    } else if target == "/endless" {
        out.write_all(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")?;
        let chunk = vec![b'x'; 64 * 1024];
        loop {
            out.write_all(format!("{:x}\r\n", chunk.len()).as_bytes())?;
            out.write_all(&chunk)?;
            out.write_all(b"\r\n")?;
            out.flush()?;
        }
    } else if target == "/slow" {
        out.write_all(head("200 OK", "", 1000).as_bytes())?;
        for _ in 0..1000 {
            out.write_all(b"s")?;
            out.flush()?;
            std::thread::sleep(Duration::from_millis(200));
        }
    } else if let Some(size) = target.strip_prefix("/size/") {
        let size: usize = size.parse().unwrap_or(0);
        out.write_all(head("200 OK", "", size).as_bytes())?;
        out.write_all(&vec![b'y'; size])?;
    } else if let Some(size) = target.strip_prefix("/text/") {
        // Numbered lines of 12 bytes, `size` bytes in all.
        let size: usize = size.parse().unwrap_or(0);
        out.write_all(head("200 OK", "content-type: text/plain\r\n", size).as_bytes())?;
        out.write_all(&numbered_lines(size))?;
    } else if let Some(status) = target.strip_prefix("/status/") {
        let text = format!("no page here ({status})");
        out.write_all(
            head(
                &format!("{status} Status"),
                "content-type: text/plain\r\n",
                text.len(),
            )
            .as_bytes(),
        )?;
        out.write_all(text.as_bytes())?;
    } else if let Some(name) = target.strip_prefix("/page/") {
        let page = std::fs::read(fixtures().join("web").join(name)).unwrap_or_default();
        out.write_all(
            head(
                "200 OK",
                "content-type: text/html; charset=utf-8\r\n",
                page.len(),
            )
            .as_bytes(),
        )?;
        out.write_all(&page)?;
    } else {
        let text = format!("hello from {target}");
        out.write_all(head("200 OK", "", text.len()).as_bytes())?;
        out.write_all(text.as_bytes())?;
    }
    out.flush()
}

/// `size` bytes of lines `00000000001\n`, `00000000002\n`, ... (the last
/// line cut to fit).
pub fn numbered_lines(size: usize) -> Vec<u8> {
    let mut text = Vec::with_capacity(size + 12);
    let mut line = 0u64;
    while text.len() < size {
        line += 1;
        text.extend_from_slice(format!("{line:011}\n").as_bytes());
    }
    text.truncate(size);
    text
}
