//! A loopback HTTP/1.1 model server for the provider tests and for runs of
//! the real binary: it answers each request with the next scripted reply
//! and records every request with its arrival time.
//!
//! Hand-written on `std::net` so each test controls the bytes: chunked
//! bodies cut into pieces, a connection dropped mid-stream, a stream that
//! stalls, a status with headers, a reply that comes late, and a body of a
//! gigabyte made as it is sent ([`Generated`]), which stops when the client
//! hangs up and counts what it sent.

use std::collections::{HashMap, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// `toolhost run` in `ws`, the user's own keys and servers out of the way
/// (the mock model server is named on the command line).
pub fn toolhost_run(ws: &super::Workspace) -> assert_cmd::Command {
    let mut command = ws.toolhost();
    command
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_API_KEY")
        .arg("run");
    command
}

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
    /// A body made as it is sent (see [`Generated`]).
    Generated(Generated),
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

/// A chunked body that is never held whole: `head`, then `unit` again and
/// again (whole units) up to `total` bytes in all, then `tail`, in writes of about 64 KiB.
/// It stops at the first failed write (the client hung up); [`Sent`] tells
/// how far it got.
pub struct Generated {
    pub status: u16,
    pub content_type: &'static str,
    pub head: Vec<u8>,
    pub unit: Vec<u8>,
    pub total: u64,
    pub tail: Vec<u8>,
    /// When set, one unit per this wait instead of as fast as the client
    /// reads (a server that trickles).
    pub pace: Option<Duration>,
    sent: Sent,
}

/// What a [`Generated`] body sent, readable while and after it is sent.
#[derive(Clone, Default)]
pub struct Sent {
    bytes: Arc<AtomicU64>,
    finished: Arc<AtomicBool>,
    hung_up: Arc<AtomicBool>,
}

impl Sent {
    /// Body bytes written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::SeqCst)
    }

    /// Whether the client closed the connection before the end.
    pub fn hung_up(&self) -> bool {
        self.hung_up.load(Ordering::SeqCst)
    }

    /// Waits up to `limit` for the writer to stop, so a test can read the
    /// final count.
    pub fn wait_done(&self, limit: Duration) -> bool {
        let start = Instant::now();
        while !self.finished.load(Ordering::SeqCst) {
            if start.elapsed() > limit {
                return false;
            }
            thread::sleep(Duration::from_millis(10));
        }
        true
    }
}

impl Generated {
    /// A 200 `text/event-stream` body of `total` bytes.
    pub fn sse(head: impl Into<Vec<u8>>, unit: impl Into<Vec<u8>>, total: u64) -> Generated {
        Generated {
            status: 200,
            content_type: "text/event-stream",
            head: head.into(),
            unit: unit.into(),
            total,
            tail: Vec::new(),
            pace: None,
            sent: Sent::default(),
        }
    }

    /// The same body under another status and content type.
    pub fn with_status(mut self, status: u16, content_type: &'static str) -> Generated {
        self.status = status;
        self.content_type = content_type;
        self
    }

    /// `tail` after the repeated units.
    pub fn with_tail(mut self, tail: impl Into<Vec<u8>>) -> Generated {
        self.tail = tail.into();
        self
    }

    /// One unit per `wait`, a server that trickles.
    pub fn paced(mut self, wait: Duration) -> Generated {
        self.pace = Some(wait);
        self
    }

    /// The reply and the counter of what it sent.
    pub fn reply(self) -> (Reply, Sent) {
        let sent = self.sent.clone();
        (Reply::Generated(self), sent)
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

/// The recorded error body `overflow/<name>.body` (see the fixtures' README).
pub fn overflow_body(name: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURES}/overflow/{name}.body"))
        .expect("read the recorded error body")
}

/// The message the recorded stream `name` must assemble into.
pub fn expected(name: &str) -> Value {
    let text = std::fs::read_to_string(format!("{FIXTURES}/{name}.expected.json"))
        .expect("read expected message");
    serde_json::from_str(&text).expect("expected message is JSON")
}

/// One chunk of an OpenAI Chat Completions stream.
fn openai_chunk(delta: Value, finish: Value) -> String {
    let event = serde_json::json!({"id": "x", "object": "chat.completion.chunk", "model": "m",
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {event}\n\n")
}

/// An OpenAI Chat Completions stream whose reply is one call of `tool`.
pub fn openai_tool_call(id: &str, tool: &str, arguments: &Value) -> String {
    let call = serde_json::json!({"role": "assistant", "tool_calls": [{"index": 0, "id": id,
                      "type": "function",
                      "function": {"name": tool, "arguments": arguments.to_string()}}]});
    format!(
        "{}{}data: [DONE]\n\n",
        openai_chunk(call, Value::Null),
        openai_chunk(serde_json::json!({}), "tool_calls".into())
    )
}

/// An OpenAI Chat Completions stream whose reply is `text`.
pub fn openai_text(text: &str) -> String {
    format!(
        "{}{}data: [DONE]\n\n",
        openai_chunk(
            serde_json::json!({"role": "assistant", "content": text}),
            Value::Null
        ),
        openai_chunk(serde_json::json!({}), "stop".into())
    )
}

/// One event of an Anthropic Messages stream.
fn anthropic_event(event: &Value) -> String {
    format!(
        "event: {}\ndata: {event}\n\n",
        event["type"].as_str().unwrap_or("?")
    )
}

/// An Anthropic Messages stream of one content block, reporting `usage`
/// (`input_tokens`, `cache_read_input_tokens`, ... at the start,
/// `output_tokens` at the end).
fn anthropic_stream(block: Value, delta: Value, stop_reason: &str, usage: &Value) -> String {
    use serde_json::json;
    let mut start_usage = usage.clone();
    let output = start_usage
        .as_object_mut()
        .and_then(|u| u.remove("output_tokens"))
        .unwrap_or(json!(0));
    [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
               "role": "assistant", "content": [], "model": "m", "stop_reason": null,
               "usage": start_usage}}),
        json!({"type": "content_block_start", "index": 0, "content_block": block}),
        json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason},
               "usage": {"output_tokens": output}}),
        json!({"type": "message_stop"}),
    ]
    .iter()
    .map(anthropic_event)
    .collect()
}

/// An Anthropic Messages stream whose reply is one call of `tool`.
pub fn anthropic_tool_call(id: &str, tool: &str, arguments: &Value, usage: &Value) -> String {
    use serde_json::json;
    anthropic_stream(
        json!({"type": "tool_use", "id": id, "name": tool, "input": {}}),
        json!({"type": "input_json_delta", "partial_json": arguments.to_string()}),
        "tool_use",
        usage,
    )
}

/// An Anthropic Messages stream whose reply is `text`.
pub fn anthropic_text(text: &str, usage: &Value) -> String {
    use serde_json::json;
    anthropic_stream(
        json!({"type": "text", "text": ""}),
        json!({"type": "text_delta", "text": text}),
        "end_turn",
        usage,
    )
}

/// `stream` (an OpenAI one, ending in `[DONE]`) with a last chunk that
/// reports `prompt` and `completion` tokens, as `include_usage` asks.
pub fn openai_with_usage(stream: &str, prompt: u64, completion: u64) -> String {
    let usage = serde_json::json!({"id": "x", "object": "chat.completion.chunk", "model": "m",
        "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion}});
    stream.replacen("data: [DONE]", &format!("data: {usage}\n\ndata: [DONE]"), 1)
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub at: Instant,
    pub path: String,
    /// Lower-cased names.
    pub headers: HashMap<String, String>,
    pub body: Value,
    /// The body's bytes as they came.
    pub raw: Vec<u8>,
}

/// The server: scripted replies in order, one thread per connection (an
/// unscripted request gets a 418, which is never retried). A GET is what a
/// client asks a server about itself (toolhost asks a local server for its
/// context window): answered from [`MockModel::answer_get`], else 404, and
/// neither recorded nor taken from the replies.
pub struct MockModel {
    /// `http://127.0.0.1:PORT`, without a path.
    pub url: String,
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    gets: Arc<Mutex<HashMap<String, String>>>,
    window: Arc<Mutex<Option<Window>>>,
}

/// How a server with a context window answers what does not fit.
#[derive(Clone, Copy, Debug)]
pub enum OverflowShape {
    /// OpenAI's 400 `context_length_exceeded`.
    OpenAi,
    /// Anthropic's 400 `prompt is too long: N tokens > M maximum`.
    Anthropic,
    /// llama.cpp's 400 `exceed_context_size_error`.
    LlamaCpp,
}

/// In a scripted reply to a server with a [`Window`], this number becomes
/// the request's size in tokens, as a real server reports its usage.
pub const PROMPT_TOKENS: u64 = 987_654_321;

/// A server's window: a request over `tokens` (four bytes of body each) is
/// refused in `shape`, and a request for a summary (its system prompt says
/// "You summarise") is answered with `summary`; neither takes a scripted
/// reply. Both are recorded.
#[derive(Clone, Debug)]
pub struct Window {
    pub tokens: u64,
    pub shape: OverflowShape,
    pub summary: String,
}

impl OverflowShape {
    /// The error body this server sends for a prompt of `prompt` tokens.
    pub fn body(self, prompt: u64, window: u64) -> String {
        use serde_json::json;
        match self {
            OverflowShape::OpenAi => json!({"error": {
                "message": format!("This model's maximum context length is {window} tokens. \
                    However, your messages resulted in {prompt} tokens. Please reduce the length \
                    of the messages."),
                "type": "invalid_request_error", "param": "messages",
                "code": "context_length_exceeded"}}),
            OverflowShape::Anthropic => json!({"type": "error", "error": {
                "type": "invalid_request_error",
                "message": format!("prompt is too long: {prompt} tokens > {window} maximum")}}),
            OverflowShape::LlamaCpp => json!({"error": {"code": 400,
                "message": format!("request ({prompt} tokens) exceeds the available context \
                    size ({window} tokens), try increasing it"),
                "type": "exceed_context_size_error", "n_prompt_tokens": prompt, "n_ctx": window}}),
        }
        .to_string()
    }
}

impl MockModel {
    pub fn start(replies: Vec<Reply>) -> MockModel {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&requests);
        let gets = Arc::new(Mutex::new(HashMap::new()));
        let answers = Arc::clone(&gets);
        let window: Arc<Mutex<Option<Window>>> = Arc::new(Mutex::new(None));
        let windowed = Arc::clone(&window);
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let replies = Arc::clone(&replies);
                let recorded = Arc::clone(&recorded);
                let answers = Arc::clone(&answers);
                let window = windowed.lock().expect("window lock").clone();
                thread::spawn(move || serve(stream, &replies, &recorded, &answers, window));
            }
        });
        MockModel {
            url: format!("http://{addr}"),
            addr,
            requests,
            gets,
            window,
        }
    }

    /// Gives the server a context window from now on (see [`Window`]).
    pub fn set_window(&self, window: Window) {
        *self.window.lock().expect("window lock") = Some(window);
    }

    /// Answers `GET path` with `body` (JSON, 200) from now on.
    pub fn answer_get(&self, path: &str, body: &Value) {
        self.gets
            .lock()
            .expect("gets lock")
            .insert(path.to_owned(), body.to_string());
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

fn serve(
    stream: TcpStream,
    replies: &Mutex<VecDeque<Reply>>,
    recorded: &Mutex<Vec<Recorded>>,
    gets: &Mutex<HashMap<String, String>>,
    window: Option<Window>,
) {
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
    if request_line.starts_with("GET ") {
        let mut stream = stream;
        let answer = gets.lock().expect("gets lock").get(&path).cloned();
        match answer {
            Some(body) => write_status(&mut stream, 200, &[], &body),
            None => write_status(&mut stream, 404, &[], "not found"),
        }
        return;
    }
    let anthropic = path.ends_with("/messages");
    recorded.lock().expect("requests lock").push(Recorded {
        at: Instant::now(),
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        raw: body.clone(),
    });
    let mut stream = stream;
    if let Some(window) = window {
        let prompt = body.len() as u64 / 4;
        if prompt > window.tokens {
            let refusal = window.shape.body(prompt, window.tokens);
            return write_status(&mut stream, 400, &[], &refusal);
        }
        if String::from_utf8_lossy(&body).contains("You summarise") {
            let reply = if anthropic {
                anthropic_text(
                    &window.summary,
                    &serde_json::json!({"input_tokens": prompt, "output_tokens": 50}),
                )
            } else {
                openai_text(&window.summary)
            };
            return write_sse(&mut stream, reply.as_bytes(), 3, End::Complete);
        }
        let reply = replies.lock().expect("replies lock").pop_front();
        return match reply {
            Some(Reply::Sse { body, pieces, end }) => {
                let body = String::from_utf8_lossy(&body)
                    .replace(&PROMPT_TOKENS.to_string(), &prompt.to_string());
                write_sse(&mut stream, body.as_bytes(), pieces, end);
            }
            Some(reply) => answer(&mut stream, reply),
            None => write_status(&mut stream, 418, &[], "no reply scripted"),
        };
    }
    answer_scripted(&mut stream, replies);
}

/// The next scripted reply, or a 418 when there is none.
fn answer_scripted(stream: &mut TcpStream, replies: &Mutex<VecDeque<Reply>>) {
    let reply = replies.lock().expect("replies lock").pop_front();
    match reply {
        None => write_status(stream, 418, &[], "no reply scripted"),
        Some(reply) => answer(stream, reply),
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
        Reply::Generated(generated) => write_generated(stream, &generated),
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

fn write_generated(stream: &mut TcpStream, body: &Generated) {
    let sent = &body.sent;
    let outcome = generate(stream, body);
    sent.hung_up.store(outcome.is_err(), Ordering::SeqCst);
    let _ = stream.shutdown(Shutdown::Both);
    sent.finished.store(true, Ordering::SeqCst);
}

/// Writes `body` until its end or the first failed write.
fn generate(stream: &mut TcpStream, body: &Generated) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {} Generated\r\nContent-Type: {}\r\nTransfer-Encoding: chunked\r\n\
         Connection: close\r\n\r\n",
        body.status, body.content_type
    );
    stream.write_all(head.as_bytes())?;
    let mut chunk = |bytes: &[u8]| -> std::io::Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        let framed = [format!("{:x}\r\n", bytes.len()).as_bytes(), bytes, b"\r\n"].concat();
        stream.write_all(&framed)?;
        body.sent
            .bytes
            .fetch_add(bytes.len() as u64, Ordering::SeqCst);
        Ok(())
    };
    chunk(&body.head)?;
    let units = match body.pace {
        Some(_) => 1,
        None => (64 * 1024 / body.unit.len().max(1)).max(1),
    };
    let block = body.unit.repeat(units);
    // Whole units only, so every event of the body is well formed.
    let unit = body.unit.len().max(1) as u64;
    let mut left = body
        .total
        .saturating_sub((body.head.len() + body.tail.len()) as u64)
        / unit
        * unit;
    while left > 0 {
        let take = usize::try_from(left).unwrap_or(usize::MAX).min(block.len());
        chunk(&block[..take])?;
        left -= take as u64;
        if let Some(wait) = body.pace {
            thread::sleep(wait);
        }
    }
    chunk(&body.tail)?;
    stream.write_all(b"0\r\n\r\n")?;
    stream.flush()
}
