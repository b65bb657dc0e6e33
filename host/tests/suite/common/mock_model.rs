//! A loopback HTTP/1.1 model server for the provider tests and for runs of
//! the real binary: it answers each request with the next scripted reply
//! and records every request with its arrival time.
//!
//! Hand-written on `std::net` so each test controls the bytes: chunked
//! bodies cut into pieces, a connection dropped mid-stream, a stream that
//! stalls, a status with headers, a reply that comes late.

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The recorded provider streams, `<name>.sse` and `<name>.expected.json`.
pub const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/providers");

/// How a streamed reply ends.
#[derive(Clone, Copy)]
pub enum End {
    /// The terminating chunk is sent.
    Complete,
    /// The socket is closed after this many body bytes, without the
    /// terminating chunk.
    DropAfter(usize),
    /// This many body bytes are sent, then nothing for a long time.
    StallAfter(usize),
}

/// One scripted response.
pub enum Reply {
    /// A 200 `text/event-stream` body, chunked, sent in `pieces` writes.
    Sse {
        body: Vec<u8>,
        pieces: usize,
        end: End,
    },
    /// An error status with extra headers and a body.
    Status {
        status: u16,
        headers: Vec<(&'static str, String)>,
        body: String,
    },
    /// No response at all for a long time.
    Hang,
    /// The reply, after a wait (a model that thinks before answering).
    Delayed(Duration, Box<Reply>),
}

impl Reply {
    /// A whole event-stream body, sent in 7 pieces.
    pub fn sse_body(body: impl Into<Vec<u8>>) -> Reply {
        Reply::Sse {
            body: body.into(),
            pieces: 7,
            end: End::Complete,
        }
    }

    /// This reply, sent after `delay`.
    pub fn after(self, delay: Duration) -> Reply {
        Reply::Delayed(delay, Box::new(self))
    }
}

/// The recorded stream `name`, whole, in 7 pieces.
pub fn sse(name: &str) -> Reply {
    Reply::sse_body(fixture(name))
}

/// An error status with `body` and no extra headers.
pub fn status(status: u16, body: &str) -> Reply {
    Reply::Status {
        status,
        headers: Vec::new(),
        body: body.to_owned(),
    }
}

/// The bytes of the recorded stream `name`.
pub fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{FIXTURES}/{name}.sse")).expect("read fixture stream")
}

/// The message the recorded stream `name` must assemble into.
pub fn expected(name: &str) -> Value {
    let text = std::fs::read_to_string(format!("{FIXTURES}/{name}.expected.json"))
        .expect("read expected message");
    serde_json::from_str(&text).expect("expected message is JSON")
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub at: Instant,
    pub path: String,
    /// Lower-cased names.
    pub headers: HashMap<String, String>,
    pub body: Value,
}

/// The server: scripted replies in order, one thread per connection (an
/// unscripted request gets a 418, which is never retried).
pub struct MockModel {
    /// `http://127.0.0.1:PORT`, without a path.
    pub url: String,
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl MockModel {
    pub fn start(replies: Vec<Reply>) -> MockModel {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&requests);
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let replies = Arc::clone(&replies);
                let recorded = Arc::clone(&recorded);
                thread::spawn(move || serve(stream, &replies, &recorded));
            }
        });
        MockModel {
            url: format!("http://{addr}"),
            addr,
            requests,
        }
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().expect("requests lock").clone()
    }

    /// The base URL an OpenAI-style client is given (`/v1` included).
    pub fn openai_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The base URL an Anthropic client is given.
    pub fn anthropic_url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

fn serve(stream: TcpStream, replies: &Mutex<VecDeque<Reply>>, recorded: &Mutex<Vec<Recorded>>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone socket"));
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return;
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_owned();
    let mut headers = HashMap::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("header line");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.insert(name.trim().to_ascii_lowercase(), value.trim().to_owned());
        }
    }
    let length: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).expect("request body");
    recorded.lock().expect("requests lock").push(Recorded {
        at: Instant::now(),
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    });
    let reply = replies.lock().expect("replies lock").pop_front();
    let mut stream = stream;
    match reply {
        None => write_status(&mut stream, 418, &[], "no reply scripted"),
        Some(reply) => answer(&mut stream, reply),
    }
}

fn answer(stream: &mut TcpStream, reply: Reply) {
    match reply {
        Reply::Status {
            status,
            headers,
            body,
        } => write_status(stream, status, &headers, &body),
        Reply::Sse { body, pieces, end } => write_sse(stream, &body, pieces, end),
        Reply::Hang => thread::sleep(Duration::from_secs(20)),
        Reply::Delayed(delay, reply) => {
            thread::sleep(delay);
            answer(stream, *reply);
        }
    }
}

fn write_status(
    stream: &mut TcpStream,
    status: u16,
    headers: &[(&'static str, String)],
    body: &str,
) {
    let mut head = format!(
        "HTTP/1.1 {status} Scripted\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    // The client may hang up first (it does not need the whole body).
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body.as_bytes());
    let _ = stream.flush();
}

fn write_sse(stream: &mut TcpStream, body: &[u8], pieces: usize, end: End) {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
                Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
    if stream.write_all(head.as_bytes()).is_err() {
        return;
    }
    let _ = stream.flush();
    let limit = match end {
        End::Complete => body.len(),
        End::DropAfter(n) | End::StallAfter(n) => n.min(body.len()),
    };
    let body = &body[..limit];
    if !body.is_empty() {
        let size = body.len().div_ceil(pieces.max(1));
        for piece in body.chunks(size) {
            let chunk = [format!("{:x}\r\n", piece.len()).as_bytes(), piece, b"\r\n"].concat();
            if stream.write_all(&chunk).is_err() {
                return;
            }
            let _ = stream.flush();
            thread::sleep(Duration::from_millis(5));
        }
    }
    match end {
        End::Complete => {
            let _ = stream.write_all(b"0\r\n\r\n");
            let _ = stream.flush();
        }
        End::DropAfter(_) => {}
        End::StallAfter(_) => thread::sleep(Duration::from_secs(20)),
    }
    let _ = stream.shutdown(Shutdown::Both);
}
