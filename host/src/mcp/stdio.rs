//! The stdio transport: one JSON-RPC message per line on stdin and stdout.
//!
//! rmcp has one; this one exists for three things it cannot do from
//! outside: stdin closing cancels every running call at once (rmcp would
//! let them run up to 5 s more), a `tools/call` whose `arguments` is not
//! an object gets the spec's -32602 with its id (rmcp answers -32600
//! without one), and calls of tools that write take their place in the
//! write lane in the order they were read. Lines are read through
//! [`CappedLines`]: one over [`MAX_LINE`] is skipped (and answered with an
//! error), never held. A line that is not JSON gets JSON-RPC's -32700.

use std::future::Future;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientRequest, ErrorData, JsonRpcMessage, JsonRpcRequest, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use super::admission::{Arrival, Lanes};
use super::capped_lines::{CappedLines, Line, MAX_LINE, MESSAGE, top_level_id};
use super::log;

/// A line-delimited JSON-RPC transport over a reader and a writer.
pub(super) struct LineTransport<R, W> {
    lines: CappedLines<R>,
    writer: Arc<Mutex<W>>,
    closed: CancellationToken,
    lanes: Arc<Lanes>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> LineTransport<R, W> {
    /// `closed` is cancelled when the reader ends (the client closed stdin
    /// or went away).
    pub(super) fn new(read: R, write: W, closed: CancellationToken, lanes: Arc<Lanes>) -> Self {
        LineTransport {
            lines: CappedLines::new(read, MAX_LINE),
            writer: Arc::new(Mutex::new(write)),
            closed,
            lanes,
        }
    }
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = Arc::clone(&self.writer);
        let line = serde_json::to_vec(&item);
        async move { write_line(&writer, line?).await }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            // `next_line` is cancel safe: rmcp polls this in a `select!`.
            let line = match self.lines.next_line().await {
                Ok(Some(Line::Whole(line))) => line,
                Ok(Some(Line::TooLong { bytes, id })) => {
                    log::warn(format_args!(
                        "skipped a message of {bytes} bytes: one line on stdin may hold at \
                         most {MAX_LINE} bytes (4 MiB)"
                    ));
                    self.reply(too_long(bytes, id));
                    continue;
                }
                Ok(None) => {
                    self.closed.cancel();
                    return None;
                }
                Err(e) => {
                    log::warn(format_args!("reading stdin: {e}"));
                    self.closed.cancel();
                    return None;
                }
            };
            // Not UTF-8 is not JSON: a parse error, as below.
            let Ok(line) = std::str::from_utf8(&line) else {
                self.reply(parse_error("the line is not UTF-8"));
                continue;
            };
            let line = line.trim_start_matches('\u{feff}').trim();
            if line.is_empty() {
                continue;
            }
            // Counted before anything is built: a line of `0,` would
            // cost a hundred times its bytes while parsed.
            if let Err(over) = MESSAGE.check(line.as_bytes()) {
                log::warn(format_args!("skipped a message on stdin: {over}"));
                self.reply(over_budget(&over, top_level_id(line.as_bytes())));
                continue;
            }
            // Nearly every line is a message rmcp knows: parsed once,
            // straight into its type. Anything else (not JSON, duplicate keys,
            // a method rmcp does not know, which is also where a `tools/call`
            // whose `arguments` are not an object lands) takes the way below.
            if let Ok(mut message) = serde_json::from_str::<RxJsonRpcMessage<RoleServer>>(line)
                && !is_custom_request(&message)
            {
                self.stamp(&mut message);
                return Some(message);
            }
            // Input that is not JSON gets JSON-RPC's parse error, without
            // an id (there is none to read; MCP omits it then), so a client
            // that wrote a broken line learns of it instead of waiting.
            let value = match serde_json::from_str::<Value>(line) {
                Ok(value) => value,
                Err(e) => {
                    self.reply(parse_error(&format!("the line is not JSON ({e})")));
                    continue;
                }
            };
            if let Some(refusal) = refuse(&value) {
                self.reply(refusal);
                continue;
            }
            match serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(value.clone()) {
                Ok(mut message) => {
                    self.stamp(&mut message);
                    return Some(message);
                }
                // A notification is never answered; a request is.
                Err(e) => {
                    if let Some(id) = request_id(&value) {
                        self.reply(TxJsonRpcMessage::<RoleServer>::error(
                            ErrorData::invalid_request(format!("invalid request: {e}"), None),
                            Some(id),
                        ));
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.flush().await
    }
}

impl<R, W: AsyncWrite + Unpin + Send + 'static> LineTransport<R, W> {
    /// Sends `message` from a task of its own: `receive` may be dropped at
    /// any await, and a line half written would break the stream.
    fn reply(&self, message: TxJsonRpcMessage<RoleServer>) {
        let writer = Arc::clone(&self.writer);
        tokio::spawn(async move {
            if let Ok(line) = serde_json::to_vec(&message) {
                let _ = write_line(&writer, line).await;
            }
        });
    }

    /// A call of a tool that writes takes its place in the write lane now,
    /// in the order the calls were read.
    fn stamp(&self, message: &mut RxJsonRpcMessage<RoleServer>) {
        if let JsonRpcMessage::Request(JsonRpcRequest {
            request: ClientRequest::CallToolRequest(call),
            ..
        }) = message
            && let Some(ticket) = self.lanes.arrive(&call.params.name)
        {
            call.extensions.insert(Arrival::new(ticket));
        }
    }
}

async fn write_line<W: AsyncWrite + Unpin>(
    writer: &Mutex<W>,
    mut line: Vec<u8>,
) -> std::io::Result<()> {
    line.push(b'\n');
    let mut writer = writer.lock().await;
    writer.write_all(&line).await?;
    writer.flush().await
}

/// JSON-RPC's -32700 for a line that is not a JSON text, with no id.
fn parse_error(why: &str) -> TxJsonRpcMessage<RoleServer> {
    TxJsonRpcMessage::<RoleServer>::error(
        ErrorData::parse_error(
            format!("parse error: {why}; send one JSON-RPC message per line"),
            None,
        ),
        None,
    )
}

/// A request of a method rmcp has no type for.
fn is_custom_request(message: &RxJsonRpcMessage<RoleServer>) -> bool {
    matches!(
        message,
        JsonRpcMessage::Request(JsonRpcRequest {
            request: ClientRequest::CustomRequest(_),
            ..
        })
    )
}

/// The id of a JSON-RPC request (absent for a notification).
fn request_id(value: &Value) -> Option<RequestId> {
    serde_json::from_value(value.get("id")?.clone()).ok()
}

/// The answer to a line over the cap: the request's id when one was
/// found, else none (MCP's answer when a request's id cannot be read).
fn too_long(bytes: u64, id: Option<RequestId>) -> TxJsonRpcMessage<RoleServer> {
    TxJsonRpcMessage::<RoleServer>::error(
        ErrorData::invalid_request(
            format!(
                "message too large: {bytes} bytes on one line, over the {MAX_LINE}-byte (4 MiB) \
                 cap of `toolhost mcp` on stdio; it was skipped. Pass large data in a file in \
                 the workspace instead"
            ),
            None,
        ),
        id,
    )
}

/// The answer to a line within the byte cap that holds more than a
/// message may ([`MESSAGE`]): the request's id when one was found.
fn over_budget(
    over: &crate::json_budget::OverBudget,
    id: Option<RequestId>,
) -> TxJsonRpcMessage<RoleServer> {
    TxJsonRpcMessage::<RoleServer>::error(
        ErrorData::invalid_request(over_budget_text(over), None),
        id,
    )
}

/// What a client reads of a message over [`MESSAGE`], on stdio or HTTP.
pub(super) fn over_budget_text(over: &crate::json_budget::OverBudget) -> String {
    format!(
        "message too large: {over}, the most `toolhost mcp` parses of one message; it was \
         skipped. Pass large data in a file in the workspace instead"
    )
}

/// The error for a `tools/call` whose `arguments` is there but is not an
/// object (the spec's -32602, invalid params).
fn refuse(value: &Value) -> Option<TxJsonRpcMessage<RoleServer>> {
    if value.get("method")?.as_str()? != "tools/call" {
        return None;
    }
    let arguments = value.get("params")?.get("arguments")?;
    if arguments.is_object() || arguments.is_null() {
        return None;
    }
    let kind = match arguments {
        Value::Array(_) => "an array",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        _ => "a boolean",
    };
    Some(TxJsonRpcMessage::<RoleServer>::error(
        ErrorData::invalid_params(
            format!("`arguments` must be a JSON object of the tool's parameters, not {kind}"),
            None,
        ),
        Some(request_id(value)?),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_that_are_not_an_object_are_invalid_params_with_the_id() {
        let refusal = refuse(&json!({
            "jsonrpc": "2.0", "id": 4, "method": "tools/call",
            "params": {"name": "read_file", "arguments": [1]}
        }))
        .expect("refused");
        assert_eq!(
            serde_json::to_value(&refusal).expect("serialise"),
            json!({"jsonrpc": "2.0", "id": 4, "error": {
                "code": -32602,
                "message": "`arguments` must be a JSON object of the tool's parameters, not an array"
            }})
        );
        for fine in [json!({"a": 1}), Value::Null] {
            let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "t", "arguments": fine}});
            assert!(refuse(&message).is_none());
        }
        assert!(
            refuse(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "t"}}))
            .is_none()
        );
    }
}
