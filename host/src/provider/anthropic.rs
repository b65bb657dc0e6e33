//! Anthropic Messages streaming: `message_start`, `content_block_start`
//! (text, tool_use, thinking), `content_block_delta` (text_delta,
//! input_json_delta, thinking_delta, signature_delta), `content_block_stop`,
//! `message_delta`, `message_stop`, `ping` and `error` become one
//! [`AssistantMessage`].
//!
//! Blocks are tracked by their stream `index`. Thinking blocks are kept whole
//! (text and signature) because the API wants them sent back unchanged. Server
//! tool blocks (`server_tool_use`, search results) and `redacted_thinking` are
//! not client calls and are left out, as are unknown event types (the API may
//! add new ones).
//!
//! Finish mapping: `end_turn`, `stop_sequence`, `pause_turn` → stop;
//! `tool_use` → tool_use; `max_tokens`, `model_context_window_exceeded` →
//! length; `refusal` or an `error` event → error; any other reason → stop. A
//! stream that ends without a `message_delta` stop reason was cut off → error.
//!
//! [`Anthropic`] is the wire API: the request body
//! ([`Anthropic::request_body`]), the assembler ([`AnthropicAssembler`]) and
//! the finish table ([`Anthropic::finish`]); [`AnthropicClient`] is the
//! shared client speaking it.

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::client::{Assembler, HttpModel, Request, WireApi, finish_of, set_tools};
use super::error::parse_data;
use super::http::Auth;
use super::message::parse_arguments;
use super::{
    AssistantMessage, BLOCK_COST, Block, Finish, Message, ProviderError, ReplyBudget, Usage,
};

/// The Messages API, as a [`WireApi`].
#[derive(Debug, Clone, Copy)]
pub struct Anthropic;

/// Accumulates a Messages stream one event at a time.
#[derive(Debug, Default)]
pub struct AnthropicAssembler {
    parts: Vec<Part>,
    /// The position in `parts` of each stream block `index`.
    by_index: HashMap<u64, usize>,
    start_usage: Option<Value>,
    delta_usage: Option<Value>,
    stop_reason: Option<String>,
    errored: bool,
    /// Reply text received since the last [`Self::take_text_delta`].
    text_delta: String,
    /// What the parts may still hold.
    budget: ReplyBudget,
}

/// A block still being streamed.
#[derive(Debug)]
enum Part {
    Text(String),
    Thinking {
        text: String,
        signature: String,
    },
    Call {
        id: String,
        name: String,
        /// The `input` of `content_block_start`, used when no delta carries
        /// any text (a call without arguments).
        start_input: Value,
        raw: String,
        /// Whether `content_block_stop` arrived; a call cut by `max_tokens`
        /// never gets one.
        stopped: bool,
    },
}

impl Assembler for AnthropicAssembler {
    /// Takes one SSE event. The kind is the data's `type`, falling back to
    /// the `event:` name; both are the same on the real API.
    fn push(&mut self, event: &str, data: &str) -> Result<(), ProviderError> {
        if data.trim().is_empty() {
            return Ok(());
        }
        let value = parse_data(Anthropic::PROVIDER, data)?;
        let kind = value.get("type").and_then(Value::as_str).unwrap_or(event);
        // After an error the stream is over, whatever still arrives.
        if self.errored {
            return Ok(());
        }
        match kind {
            "message_start" => {
                self.start_usage = value.pointer("/message/usage").cloned();
            }
            "content_block_start" => self.block_start(&value),
            "content_block_delta" => self.block_delta(&value),
            "content_block_stop" => {
                if let Some(Part::Call { stopped, .. }) = self.part_mut(&value) {
                    *stopped = true;
                }
            }
            "message_delta" => {
                if let Some(reason) = value.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_owned());
                }
                if let Some(usage) = value.get("usage").filter(|u| u.is_object()) {
                    self.delta_usage = Some(usage.clone());
                }
            }
            "error" => self.errored = true,
            // `ping`, `message_stop`, and event types added after this was
            // written.
            _ => {}
        }
        Ok(())
    }

    fn budget(&mut self) -> &mut ReplyBudget {
        &mut self.budget
    }

    fn take_text_delta(&mut self) -> String {
        std::mem::take(&mut self.text_delta)
    }

    /// The assembled message.
    fn finish(self) -> AssistantMessage {
        // `message_stop` is no proof of a whole reply: without a stop
        // reason the stream was cut.
        let finish = finish_of::<Anthropic>(self.errored, self.stop_reason.as_deref(), false);
        let capped = self.budget.cut();
        let cut = capped.is_some() || matches!(finish, Finish::Length | Finish::Error);
        let usage = self.usage();
        let blocks: Vec<Block> = self
            .parts
            .into_iter()
            .filter_map(|part| match part {
                Part::Text(text) => (!text.is_empty()).then_some(Block::Text { text }),
                Part::Thinking { text, signature } => (!text.is_empty() || !signature.is_empty())
                    .then(|| Block::Reasoning {
                        text,
                        signature: (!signature.is_empty()).then_some(signature),
                    }),
                Part::Call {
                    id,
                    name,
                    start_input,
                    raw,
                    stopped,
                } => {
                    let arguments = if !raw.trim().is_empty() {
                        parse_arguments(&raw)
                    } else if stopped || !cut {
                        Some(start_input)
                    } else {
                        // Cut before the first byte of input arrived.
                        None
                    };
                    Some(Block::ToolCall {
                        id,
                        name,
                        arguments,
                        arguments_raw: raw,
                    })
                }
            })
            .collect();
        AssistantMessage::settled(blocks, finish, usage, capped)
    }
}

impl AnthropicAssembler {
    fn block_start(&mut self, value: &Value) {
        let Some(index) = value.get("index").and_then(Value::as_u64) else {
            return;
        };
        let Some(block) = value.get("content_block") else {
            return;
        };
        let kind = block.get("type").and_then(Value::as_str);
        if !matches!(kind, Some("text" | "thinking" | "tool_use"))
            || !self.budget.charge(BLOCK_COST)
        {
            return;
        }
        let budget = &mut self.budget;
        let mut text_of = |key: &str| {
            budget
                .take(block.get(key).and_then(Value::as_str).unwrap_or_default())
                .to_owned()
        };
        let part = match kind {
            Some("text") => {
                let text = text_of("text");
                self.text_delta.push_str(&text);
                Part::Text(text)
            }
            Some("thinking") => Part::Thinking {
                text: text_of("thinking"),
                signature: text_of("signature"),
            },
            _ => {
                let id = text_of("id");
                let name = text_of("name");
                let start_input = block
                    .get("input")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(Map::new()));
                if !self.budget.charge(start_input.to_string().len()) {
                    return;
                }
                Part::Call {
                    id,
                    name,
                    start_input,
                    raw: String::new(),
                    stopped: false,
                }
            }
        };
        self.parts.push(part);
        self.by_index.insert(index, self.parts.len() - 1);
    }

    fn block_delta(&mut self, value: &Value) {
        let Some(delta) = value.get("delta") else {
            return;
        };
        let kind = delta.get("type").and_then(Value::as_str);
        let text = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or_default();
        let Some(position) = self.position(value) else {
            return;
        };
        let budget = &mut self.budget;
        match (kind, self.parts.get_mut(position)) {
            (Some("text_delta"), Some(Part::Text(all))) => {
                let text = budget.take(text("text"));
                all.push_str(text);
                self.text_delta.push_str(text);
            }
            (Some("thinking_delta"), Some(Part::Thinking { text: all, .. })) => {
                all.push_str(budget.take(text("thinking")));
            }
            (Some("signature_delta"), Some(Part::Thinking { signature, .. })) => {
                signature.push_str(budget.take(text("signature")));
            }
            (Some("input_json_delta"), Some(Part::Call { raw, .. })) => {
                raw.push_str(budget.take(text("partial_json")));
            }
            // Citations, deltas of blocks left out, deltas that do not match
            // their block.
            _ => {}
        }
    }

    fn part_mut(&mut self, value: &Value) -> Option<&mut Part> {
        let position = self.position(value)?;
        self.parts.get_mut(position)
    }

    /// The position in `parts` of the block an event's `index` names.
    fn position(&self, value: &Value) -> Option<usize> {
        let index = value.get("index").and_then(Value::as_u64)?;
        self.by_index.get(&index).copied()
    }

    /// `output_tokens` comes from the last `message_delta` (the running total
    /// at the end); `input_tokens` from there too when it is repeated, else
    /// from `message_start`.
    fn usage(&self) -> Option<Usage> {
        if self.start_usage.is_none() && self.delta_usage.is_none() {
            return None;
        }
        let count = |key: &str| {
            [&self.delta_usage, &self.start_usage]
                .into_iter()
                .flatten()
                .find_map(|usage| usage.get(key).and_then(Value::as_u64))
                .unwrap_or(0)
        };
        let mut raw = Map::new();
        if let Some(usage) = &self.start_usage {
            raw.insert("message_start".into(), usage.clone());
        }
        if let Some(usage) = &self.delta_usage {
            raw.insert("message_delta".into(), usage.clone());
        }
        Some(Usage {
            input_tokens: count("input_tokens"),
            cache_read_tokens: count("cache_read_input_tokens"),
            cache_write_tokens: count("cache_creation_input_tokens"),
            output_tokens: count("output_tokens"),
            raw: Value::Object(raw),
        })
    }
}

/// The default API root.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The environment variable holding the key, named in 401/403 errors.
pub const API_KEY_ENV: &str = "ANTHROPIC_API_KEY";
/// The API version every request names.
pub const API_VERSION: &str = "2023-06-01";
/// `max_tokens` when none is given (the Messages API requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

impl WireApi for Anthropic {
    const PROVIDER: &'static str = "anthropic";
    const PATH: &'static str = "v1/messages";
    const AUTH: Auth = Auth::XApiKey;
    const HEADERS: &'static [(&'static str, &'static str)] = &[("anthropic-version", API_VERSION)];
    const DEFAULT_BASE_URL: &'static str = DEFAULT_BASE_URL;
    const KEY_ENV: &'static str = API_KEY_ENV;

    type Assembler = AnthropicAssembler;

    /// The Messages request for the whole ledger, streamed.
    ///
    /// Assistant blocks keep their order; thinking blocks go back with
    /// their `signature` (the API checks it), and a thinking block without
    /// one (from another provider) is left out because the API would reject
    /// it. A tool call whose arguments were cut off goes back with
    /// `input: {}`, since `input` must be an object. Each tool-results entry
    /// becomes one user message of `tool_result` blocks; consecutive user
    /// turns are merged into one message and an assistant message with no
    /// content is skipped, both of which the API would otherwise reject.
    fn request_body(request: &Request<'_>) -> Value {
        let mut messages: Vec<Value> = Vec::new();
        for message in request.history {
            match message {
                Message::User { text, .. } => {
                    push_user(&mut messages, vec![json!({"type": "text", "text": text})]);
                }
                Message::Assistant(reply) => {
                    let content = assistant_content(reply);
                    if !content.is_empty() {
                        messages.push(json!({"role": "assistant", "content": content}));
                    }
                }
                Message::ToolResults { results } => {
                    let blocks = results
                        .iter()
                        .map(|result| {
                            json!({
                                "type": "tool_result",
                                "tool_use_id": result.call_id,
                                "content": result.text,
                                "is_error": result.is_error,
                            })
                        })
                        .collect();
                    push_user(&mut messages, blocks);
                }
            }
        }
        mark_for_cache(messages.last_mut());
        let mut body = json!({
            "model": request.model,
            "max_tokens": request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            "stream": true,
            "messages": messages,
        });
        if !request.system.is_empty() {
            body["system"] = json!([
                {"type": "text", "text": request.system, "cache_control": cache_breakpoint()}
            ]);
        }
        set_tools(&mut body, request.tools, |tool| {
            json!({
                "name": tool.name,
                "description": tool.description,
                "input_schema": tool.input_schema,
            })
        });
        if let Some(last) = body
            .get_mut("tools")
            .and_then(Value::as_array_mut)
            .and_then(|tools| tools.last_mut())
        {
            last["cache_control"] = cache_breakpoint();
        }
        body
    }

    fn overflow(status: u16, body: &[u8]) -> Option<super::overflow::Overflow> {
        super::overflow::anthropic(status, body)
    }

    fn finish(reason: &str) -> Finish {
        match reason {
            "end_turn" | "stop_sequence" | "pause_turn" => Finish::Stop,
            "tool_use" => Finish::ToolUse,
            "max_tokens" | "model_context_window_exceeded" => Finish::Length,
            "refusal" => Finish::Error,
            _ => Finish::Stop,
        }
    }
}

/// A Messages client; the key, if any, goes in `x-api-key`, and
/// `max_tokens` defaults to [`DEFAULT_MAX_TOKENS`].
pub type AnthropicClient = HttpModel<Anthropic>;

/// A prompt-cache breakpoint: the prefix up to here is cached for five
/// minutes, and read back at a tenth of the price by the next request that
/// starts with it.
fn cache_breakpoint() -> Value {
    json!({"type": "ephemeral"})
}

/// Puts a cache breakpoint on the last block of `message` (the latest
/// message of the request), so the next request, which repeats this one
/// and adds to it, reads all of it from the cache. With the tools' and the
/// system prompt's, three of the API's four breakpoints. Only a user
/// message: an assistant's last block may be thinking, which the API does
/// not let be marked.
fn mark_for_cache(message: Option<&mut Value>) {
    let Some(message) = message.filter(|m| m["role"] == "user") else {
        return;
    };
    if let Some(text) = message["content"].as_str() {
        message["content"] = json!([{"type": "text", "text": text}]);
    }
    if let Some(last) = message["content"].as_array_mut().and_then(|c| c.last_mut()) {
        last["cache_control"] = cache_breakpoint();
    }
}

/// Appends a user turn, merged into the previous message when that is a
/// user turn too. A lone text block is sent as a plain string.
fn push_user(messages: &mut Vec<Value>, blocks: Vec<Value>) {
    if let Some(last) = messages.last_mut().filter(|m| m["role"] == "user") {
        if let Some(text) = last["content"].as_str() {
            last["content"] = json!([{"type": "text", "text": text}]);
        }
        if let Some(content) = last["content"].as_array_mut() {
            content.extend(blocks);
        }
        return;
    }
    let content = match blocks.as_slice() {
        [only] if only["type"] == "text" => only["text"].clone(),
        _ => Value::Array(blocks),
    };
    messages.push(json!({"role": "user", "content": content}));
}

/// The content blocks of one assistant message, in order.
fn assistant_content(reply: &AssistantMessage) -> Vec<Value> {
    reply
        .blocks
        .iter()
        .filter_map(|block| match block {
            Block::Reasoning {
                text,
                signature: Some(signature),
            } => Some(json!({"type": "thinking", "thinking": text, "signature": signature})),
            Block::Reasoning { .. } => None,
            Block::Text { text } if text.is_empty() => None,
            Block::Text { text } => Some(json!({"type": "text", "text": text})),
            Block::ToolCall {
                id,
                name,
                arguments,
                ..
            } => Some(json!({
                "type": "tool_use",
                "id": id,
                "name": name,
                "input": arguments.clone().unwrap_or_else(|| json!({})),
            })),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::provider::client::test_support::{
        self, assembled_body, assistant, body, reasoning, text, user,
    };

    #[test]
    fn request_body_merges_user_turns_and_drops_what_the_api_rejects() {
        let history = [
            user("a"),
            assistant(vec![text("")], Finish::Error),
            user("b"),
            assistant(vec![reasoning("unsigned", None), text("ok")], Finish::Stop),
        ];
        let body = body::<Anthropic>(&history, Some(5));
        assert_eq!(
            body,
            json!({
                "model": "m",
                "max_tokens": 5,
                "stream": true,
                "messages": [
                    {"role": "user", "content": [
                        {"type": "text", "text": "a"},
                        {"type": "text", "text": "b"},
                    ]},
                    {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
                ],
            })
        );
    }

    fn assembled(events: &[Value]) -> AssistantMessage {
        test_support::assembled::<Anthropic>(events)
    }

    fn start() -> Value {
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 10, "output_tokens": 1}}})
    }

    fn text_block(index: u64, text: &str) -> [Value; 3] {
        [
            json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}),
            json!({"type": "content_block_stop", "index": index}),
        ]
    }

    #[test]
    fn an_error_event_mid_stream_is_finish_error() {
        let [block_start, delta, _] = text_block(0, "Hel");
        let message = assembled(&[
            start(),
            block_start,
            delta,
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            // Nothing after the error counts, not even a stop reason.
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}}),
        ]);
        assert_eq!(
            message.to_fixture_json(),
            json!({
                "text": "Hel",
                "tool_calls": [],
                "finish": "error",
                "usage": {"input_tokens": 10, "output_tokens": 1,
                          "raw": {"message_start": {"input_tokens": 10, "output_tokens": 1}}},
            })
        );
    }

    #[test]
    fn end_turn_with_tool_calls_is_tool_use() {
        let message = assembled(&[
            start(),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t1", "name": "ls", "input": {}}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"a\": 1}"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 7}}),
        ]);
        assert_eq!(message.finish, Finish::ToolUse);
        assert_eq!(
            message.to_fixture_json()["tool_calls"],
            json!([{"id": "t1", "name": "ls", "arguments": {"a": 1}}])
        );
    }

    #[test]
    fn a_stream_cut_before_message_delta_is_an_error() {
        let [block_start, delta, stop] = text_block(0, "Hi");
        let message = assembled(&[start(), block_start, delta, stop]);
        assert_eq!(
            (message.text().as_str(), message.finish),
            ("Hi", Finish::Error)
        );
    }

    #[test]
    fn a_call_cut_before_any_input_has_no_arguments() {
        let message = assembled(&[
            start(),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t1", "name": "ls", "input": {}}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 7}}),
        ]);
        assert_eq!(
            message.to_fixture_json()["tool_calls"],
            json!([{"id": "t1", "name": "ls", "arguments": null, "arguments_raw": ""}])
        );
        assert_eq!(message.finish, Finish::Length);
    }

    #[test]
    fn the_event_name_is_used_when_data_has_no_type_and_bad_data_names_the_provider() {
        let mut assembler = AnthropicAssembler::default();
        assembler
            .push("error", r#"{"error": {"type": "api_error"}}"#)
            .expect("json");
        assert_eq!(assembler.finish().finish, Finish::Error);

        let err = AnthropicAssembler::default()
            .push("message_start", "event: oops")
            .expect_err("not json");
        let text = err.to_string();
        assert!(text.contains("`anthropic`"), "{text}");
        assert!(text.contains("`event: oops`"), "{text}");
    }

    #[test]
    fn server_tool_blocks_and_unknown_events_are_left_out() {
        let [block_start, delta, stop] = text_block(1, "Found it.");
        let message = assembled(&[
            start(),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"q\":1}"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "some_future_event", "index": 0}),
            block_start,
            delta,
            stop,
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}}),
            json!({"type": "message_stop"}),
        ]);
        assert_eq!(
            message.blocks,
            [Block::Text {
                text: "Found it.".into()
            }]
        );
        assert_eq!(message.finish, Finish::Stop);
    }

    #[tokio::test]
    async fn a_framed_body_is_assembled() {
        let body = concat!(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":2,\"output_tokens\":1}}}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
            "event: ping\ndata: {\"type\": \"ping\"}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\n",
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":4}}\n\n",
        );
        let message = assembled_body::<Anthropic>(body).await;
        assert_eq!(
            (message.text().as_str(), message.finish),
            ("ok", Finish::Stop)
        );
        assert_eq!(
            message.usage.map(|u| (u.input_tokens, u.output_tokens)),
            Some((2, 4))
        );
    }
}
