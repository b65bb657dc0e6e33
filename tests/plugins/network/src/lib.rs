//! A plugin that tries the network through `wasi:http`, as a JavaScript
//! tool's `fetch` does: it builds raw outgoing requests and sends them
//! through `wasi:http/outgoing-handler`, with no help from the host beyond
//! that. The network suite points it at local servers to see what the host
//! refuses, what it sends, and where it stops a greedy tool.
//!
//! Input: `url`; `method` (GET or POST) and `body`; `repeat` (send the
//! request that many times, one after another); `hold` (open that many at
//! once before reading any, and `read` them after); `follow` (follow up to 5 redirects itself,
//! each hop a new request). The answer is the last response's status, its
//! body's length and its first 200 bytes.

use wasi::http::outgoing_handler;
use wasi::http::types::{
    ErrorCode, Fields, IncomingResponse, Method, OutgoingBody, OutgoingRequest, Scheme,
};
use wasi::io::streams::StreamError;

wit_bindgen::generate!({ world: "plugin", path: "../../../wit" });

struct Network;

impl Guest for Network {
    fn list_tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "http_request".into(),
            description: "Send `method` (GET or POST) to `url`, with `body` for a POST; \
                          `repeat` times in a row, or `hold` at once; `follow` redirects. \
                          Returns the last status and body."
                .into(),
            input_schema: r#"{"type":"object","properties":{"url":{"type":"string"},"method":{"type":"string"},"body":{"type":"string"},"repeat":{"type":"integer"},"hold":{"type":"integer"},"read":{"type":"boolean"},"follow":{"type":"boolean"}},"required":["url"]}"#.into(),
            read_only: true,
        }]
    }

    fn call_tool(_name: String, input: String) -> Result<String, CallError> {
        let input: serde_json::Value =
            serde_json::from_str(&input).map_err(|e| CallError::InvalidInput(e.to_string()))?;
        let text = |key: &str, default: &str| input[key].as_str().unwrap_or(default).to_string();
        let count = |key: &str| input[key].as_u64().unwrap_or(0);
        let method = text("method", "GET");
        let body = text("body", "");
        let failed = |code: ErrorCode| CallError::Failed(format!("wasi:http error: {code:?}"));
        let mut url = text("url", "");

        let hold = count("hold");
        if hold > 0 {
            let mut held = Vec::new();
            for _ in 0..hold {
                held.push(send(&method, &url, &body).map_err(failed)?);
            }
            if input["read"] == true {
                for response in held.drain(..) {
                    read_body(response).map_err(failed)?;
                }
                return Ok(format!("{hold} responses read"));
            }
            return Ok(format!("{} responses held at once", held.len()));
        }
        let repeat = count("repeat").max(1);
        let mut last = String::new();
        for _ in 0..repeat {
            let mut hops = 0;
            loop {
                let response = send(&method, &url, &body).map_err(failed)?;
                let status = response.status();
                let location = header(&response, "location");
                let bytes = read_body(response).map_err(failed)?;
                match location {
                    Some(next) if input["follow"] == true && (300..400).contains(&status) => {
                        hops += 1;
                        if hops > 5 {
                            return Err(CallError::Failed("more than 5 redirects".into()));
                        }
                        url = next;
                    }
                    _ => {
                        let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]);
                        last = format!("status {status}, {} bytes: {shown}", bytes.len());
                        break;
                    }
                }
            }
        }
        Ok(if repeat > 1 {
            format!("{repeat} requests; the last: {last}")
        } else {
            last
        })
    }
}

/// Sends one request to `url` and waits for its response's head.
fn send(method: &str, url: &str, body: &str) -> Result<IncomingResponse, ErrorCode> {
    let internal = |what: &str| ErrorCode::InternalError(Some(what.to_string()));
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| internal("the url has no scheme"))?;
    let (authority, path) = match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    };
    let request = OutgoingRequest::new(Fields::new());
    let set = |ok: Result<(), ()>, what: &str| ok.map_err(|()| internal(what));
    let method = match method {
        "POST" => Method::Post,
        _ => Method::Get,
    };
    set(request.set_method(&method), "the host refused the method")?;
    let scheme = match scheme {
        "https" => Scheme::Https,
        "http" => Scheme::Http,
        other => Scheme::Other(other.to_string()),
    };
    set(
        request.set_scheme(Some(&scheme)),
        "the host refused the scheme",
    )?;
    set(
        request.set_authority(Some(authority)),
        "the host refused the authority",
    )?;
    set(
        request.set_path_with_query(Some(path)),
        "the host refused the path",
    )?;
    let outgoing = request.body().map_err(|()| internal("no body"))?;
    let future = outgoing_handler::handle(request, None)?;
    if !body.is_empty() {
        let stream = outgoing.write().map_err(|()| internal("no body stream"))?;
        for chunk in body.as_bytes().chunks(4096) {
            stream
                .blocking_write_and_flush(chunk)
                .map_err(|e| internal(&format!("body write: {e:?}")))?;
        }
        drop(stream);
    }
    OutgoingBody::finish(outgoing, None)?;
    future.subscribe().block();
    future
        .get()
        .ok_or_else(|| internal("no response after ready"))?
        .map_err(|()| internal("response taken twice"))?
}

/// The first value of header `name`, as text.
fn header(response: &IncomingResponse, name: &str) -> Option<String> {
    let values = response.headers().get(name);
    values
        .first()
        .map(|value| String::from_utf8_lossy(value).into_owned())
}

/// Reads the whole body; a failure of the stream is the host's error code.
fn read_body(response: IncomingResponse) -> Result<Vec<u8>, ErrorCode> {
    let internal = |what: &str| ErrorCode::InternalError(Some(what.to_string()));
    let body = response.consume().map_err(|()| internal("body taken"))?;
    let stream = body.stream().map_err(|()| internal("no body stream"))?;
    let mut bytes = Vec::new();
    loop {
        match stream.blocking_read(64 * 1024) {
            Ok(chunk) => bytes.extend_from_slice(&chunk),
            Err(StreamError::Closed) => break,
            Err(StreamError::LastOperationFailed(error)) => {
                return Err(wasi::http::types::http_error_code(&error)
                    .unwrap_or_else(|| internal(&error.to_debug_string())));
            }
        }
    }
    drop(stream);
    let trailers = wasi::http::types::IncomingBody::finish(body);
    trailers.subscribe().block();
    match trailers.get() {
        Some(Ok(Err(code))) => Err(code),
        _ => Ok(bytes),
    }
}

export!(Network);
