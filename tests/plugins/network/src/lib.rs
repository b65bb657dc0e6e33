//! A plugin that tries the network through `wasi:http`, as a JavaScript
//! tool's `fetch` does: it builds a raw outgoing request and sends it
//! through `wasi:http/outgoing-handler`. The network suite expects every
//! request to fail inside the guest with `HTTP-request-denied`, and nothing
//! to reach the listener it points the request at.

use wasi::http::outgoing_handler;
use wasi::http::types::{ErrorCode, Fields, Method, OutgoingBody, OutgoingRequest, Scheme};

wit_bindgen::generate!({ world: "plugin", path: "../../../wit" });

struct Network;

impl Guest for Network {
    fn list_tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "http_request".into(),
            description: "Send `method` (GET or POST) to `authority` (host:port) at `path` \
                          over plain HTTP, with `body` for a POST, and return the status."
                .into(),
            input_schema: r#"{"type":"object","properties":{"method":{"type":"string"},"authority":{"type":"string"},"path":{"type":"string"},"body":{"type":"string"}},"required":["authority"]}"#.into(),
            read_only: true,
        }]
    }

    fn call_tool(_name: String, input: String) -> Result<String, CallError> {
        let input: serde_json::Value =
            serde_json::from_str(&input).map_err(|e| CallError::InvalidInput(e.to_string()))?;
        let text = |key: &str, default: &str| input[key].as_str().unwrap_or(default).to_string();
        let method = match text("method", "GET").as_str() {
            "POST" => Method::Post,
            _ => Method::Get,
        };
        request(
            method,
            &text("authority", ""),
            &text("path", "/"),
            &text("body", ""),
        )
        .map_err(|code| CallError::Failed(format!("wasi:http error: {code:?}")))
    }
}

/// Sends one request and waits for its response's status.
fn request(method: Method, authority: &str, path: &str, body: &str) -> Result<String, ErrorCode> {
    let request = OutgoingRequest::new(Fields::new());
    let set = |ok: Result<(), ()>, what: &str| {
        ok.map_err(|()| ErrorCode::InternalError(Some(format!("the host refused {what}"))))
    };
    set(request.set_method(&method), "the method")?;
    set(request.set_scheme(Some(&Scheme::Http)), "the scheme")?;
    set(request.set_authority(Some(authority)), "the authority")?;
    set(request.set_path_with_query(Some(path)), "the path")?;
    let outgoing = request
        .body()
        .map_err(|()| ErrorCode::InternalError(Some("no body".into())))?;
    if !body.is_empty() {
        let stream = outgoing
            .write()
            .map_err(|()| ErrorCode::InternalError(Some("no body stream".into())))?;
        stream
            .blocking_write_and_flush(body.as_bytes())
            .map_err(|e| ErrorCode::InternalError(Some(format!("body write: {e:?}"))))?;
        drop(stream);
    }
    let future = outgoing_handler::handle(request, None)?;
    OutgoingBody::finish(outgoing, None)?;
    future.subscribe().block();
    let response = future
        .get()
        .ok_or_else(|| ErrorCode::InternalError(Some("no response after ready".into())))?
        .map_err(|()| ErrorCode::InternalError(Some("response taken twice".into())))??;
    Ok(format!("status {}", response.status()))
}

export!(Network);
