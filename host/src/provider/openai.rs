//! OpenAI Chat Completions streaming (`stream: true`), and the servers that
//! copy it (Ollama, vLLM, llama.cpp, Mistral, DeepSeek, Azure): chunks of
//! `choices[0].delta` become one [`AssistantMessage`].
//!
//! Tolerated quirks, each seen in a real server: `choices: []` or `null`, a
//! choice without `delta`, tool-call deltas without `index` or repeating their
//! `id`/`name`, whole arguments in one delta, `usage` on the finish chunk or in
//! a chunk of its own (the last non-null one wins), `reasoning_content`
//! (DeepSeek, vLLM) or `reasoning` (Ollama, newer vLLM), no `[DONE]`, and
//! `finish_reason: stop` with tool calls.
//!
//! [`OpenAi`] is the wire API: the request body ([`OpenAi::request_body`]),
//! the assembler ([`OpenAiAssembler`]) and the finish table
//! ([`OpenAi::finish`]); [`OpenAiClient`] is the shared client speaking it.
//!
//! Finish mapping: `stop` → stop; `tool_calls`/`function_call` → tool_use;
//! `length` → length; `content_filter` or an `error` object → error; any other
//! reason → stop. A stream that ends with neither a finish reason nor
//! `[DONE]` was cut off → error.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::client::{Assembler, HttpModel, Request, WireApi, finish_of, set_tools};
use super::error::parse_data;
use super::http::Auth;
use super::message::parse_arguments;
use super::{
    AssistantMessage, BLOCK_COST, Block, Finish, Message, ProviderError, ReplyBudget, Usage,
};

/// Chat Completions, as a [`WireApi`].
#[derive(Debug, Clone, Copy)]
pub struct OpenAi;

/// Accumulates a Chat Completions stream one event at a time.
#[derive(Debug, Default)]
pub struct OpenAiAssembler {
    parts: Vec<Part>,
    /// The position in `parts` of the last call opened, if any.
    last_call: Option<usize>,
    /// The position in `parts` of the last call opened with each `index`.
    by_index: HashMap<u64, usize>,
    /// The position in `parts` of the call with each id: constant-time
    /// lookups, so a reply of many calls and deltas costs linear time.
    by_id: HashMap<String, usize>,
    finish_reason: Option<String>,
    usage: Option<Value>,
    done: bool,
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
    Reasoning(String),
    Call {
        id: String,
        name: String,
        arguments: String,
    },
}

impl Assembler for OpenAiAssembler {
    /// Takes the data of one SSE event (Chat Completions names none).
    /// `[DONE]` and blank data are accepted and otherwise ignored.
    fn push(&mut self, _event: &str, data: &str) -> Result<(), ProviderError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk = parse_data(OpenAi::PROVIDER, data)?;
        // OpenAI reports failures after the headers as `{"error": {...}}`.
        if chunk.get("error").is_some_and(|e| !e.is_null()) {
            self.errored = true;
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(usage.clone());
        }
        let choices = chunk.get("choices").and_then(Value::as_array);
        // With `n > 1` only the first choice is ours; servers that leave out
        // `index` send only one.
        for choice in choices.into_iter().flatten().filter(|choice| {
            choice
                .get("index")
                .and_then(Value::as_u64)
                .is_none_or(|i| i == 0)
        }) {
            if let Some(delta) = choice.get("delta") {
                self.delta(delta);
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish_reason = Some(reason.to_owned());
            }
        }
        Ok(())
    }

    fn budget(&mut self) -> &mut ReplyBudget {
        &mut self.budget
    }

    fn take_text_delta(&mut self) -> String {
        std::mem::take(&mut self.text_delta)
    }

    /// The assembled message. Call ids missing from the stream (some local
    /// servers send none) are made up so every result can name its call.
    fn finish(self) -> AssistantMessage {
        let finish = finish_of::<OpenAi>(self.errored, self.finish_reason.as_deref(), self.done);
        let capped = self.budget.cut();
        let cut = capped.is_some() || matches!(finish, Finish::Length | Finish::Error);
        let last_call = self.last_call;
        let mut blocks = Vec::with_capacity(self.parts.len());
        let mut ordinal = 0;
        for (position, part) in self.parts.into_iter().enumerate() {
            blocks.push(match part {
                Part::Text(text) => Block::Text { text },
                Part::Reasoning(text) => Block::Reasoning {
                    text,
                    signature: None,
                },
                Part::Call {
                    mut id,
                    name,
                    arguments: raw,
                } => {
                    if id.is_empty() {
                        id = format!("toolhost-call-{ordinal}");
                    }
                    ordinal += 1;
                    // No text at all: a call without parameters, unless the
                    // reply was cut right after the call opened.
                    let arguments = if raw.trim().is_empty() {
                        (!(cut && last_call == Some(position)))
                            .then(|| Value::Object(Default::default()))
                    } else {
                        parse_arguments(&raw)
                    };
                    Block::ToolCall {
                        id,
                        name,
                        arguments,
                        arguments_raw: raw,
                    }
                }
            });
        }
        let usage = self.usage.map(|raw| {
            let count = |pointer: &str| raw.pointer(pointer).and_then(Value::as_u64).unwrap_or(0);
            let cached = count("/prompt_tokens_details/cached_tokens");
            Usage {
                input_tokens: count("/prompt_tokens").saturating_sub(cached),
                cache_read_tokens: cached,
                cache_write_tokens: 0,
                output_tokens: count("/completion_tokens"),
                raw,
            }
        });
        AssistantMessage::settled(blocks, finish, usage, capped)
    }
}

impl OpenAiAssembler {
    fn delta(&mut self, delta: &Value) {
        let reasoning = ["reasoning_content", "reasoning"]
            .iter()
            .find_map(|key| delta.get(*key).and_then(Value::as_str));
        if let Some(text) = reasoning.filter(|t| !t.is_empty()) {
            self.append(text, false);
        }
        // A refusal is what the user gets instead of content; keep it visible.
        for key in ["content", "refusal"] {
            if let Some(text) = delta
                .get(key)
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            {
                self.append(text, true);
            }
        }
        let calls = delta.get("tool_calls").and_then(Value::as_array);
        for call in calls.into_iter().flatten() {
            self.tool_call_delta(call);
        }
    }

    /// Appends what of `text` fits the budget to the last part when it is
    /// of the same kind (reply text or reasoning), else to a new part.
    fn append(&mut self, text: &str, reply: bool) {
        let continues = match self.parts.last() {
            Some(Part::Text(_)) => reply,
            Some(Part::Reasoning(_)) => !reply,
            _ => false,
        };
        if !continues && !self.budget.charge(BLOCK_COST) {
            return;
        }
        let text = self.budget.take(text);
        if text.is_empty() {
            return;
        }
        if reply {
            self.text_delta.push_str(text);
        }
        match self.parts.last_mut() {
            Some(Part::Text(all)) if reply => all.push_str(text),
            Some(Part::Reasoning(all)) if !reply => all.push_str(text),
            _ if reply => self.parts.push(Part::Text(text.to_owned())),
            _ => self.parts.push(Part::Reasoning(text.to_owned())),
        }
    }

    fn tool_call_delta(&mut self, delta: &Value) {
        let index = delta.get("index").and_then(Value::as_u64);
        let id = delta
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty());
        let function = delta.get("function");
        let name = function
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .filter(|name| !name.is_empty());
        let position = match self.target(index, id, name.is_some()) {
            Some(position) => position,
            None => {
                if !self.budget.charge(BLOCK_COST) {
                    return;
                }
                self.parts.push(Part::Call {
                    id: String::new(),
                    name: String::new(),
                    arguments: String::new(),
                });
                let position = self.parts.len() - 1;
                self.last_call = Some(position);
                if let Some(index) = index {
                    self.by_index.insert(index, position);
                }
                position
            }
        };
        let Some(Part::Call {
            id: call_id,
            name: call_name,
            arguments,
        }) = self.parts.get_mut(position)
        else {
            return;
        };
        let budget = &mut self.budget;
        if let (true, Some(id)) = (call_id.is_empty(), id) {
            budget.take(id).clone_into(call_id);
            if !call_id.is_empty() {
                self.by_id.entry(call_id.clone()).or_insert(position);
            }
        }
        // Some servers repeat the name on every fragment: keep the first.
        if let (true, Some(name)) = (call_name.is_empty(), name) {
            budget.take(name).clone_into(call_name);
        }
        match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(fragment)) => arguments.push_str(budget.take(fragment)),
            // A few servers send the arguments already parsed, whole.
            Some(value @ (Value::Object(_) | Value::Array(_))) => {
                arguments.push_str(budget.take(&value.to_string()));
            }
            _ => {}
        }
    }

    /// The position in `parts` of the call a delta continues, or `None` when
    /// it opens a new one.
    ///
    /// A known `id` always names its call (servers repeat ids). Otherwise a
    /// delta continues the call with its `index`, or the last call when it
    /// has none, unless it opens a call: an `id` not seen before together
    /// with a name, while that call already has an id. Requiring the name
    /// keeps a server that changes the id on every fragment from splitting
    /// one call into many.
    fn target(&self, index: Option<u64>, id: Option<&str>, has_name: bool) -> Option<usize> {
        if let Some(position) = id.and_then(|id| self.by_id.get(id)) {
            return Some(*position);
        }
        let position = match index {
            Some(index) => self.by_index.get(&index).copied(),
            None => self.last_call,
        }?;
        let has_id = matches!(&self.parts[position], Part::Call { id, .. } if !id.is_empty());
        let opens_another = id.is_some() && has_name && has_id;
        (!opens_another).then_some(position)
    }
}

/// The default API root (`OPENAI_BASE_URL` overrides it at the CLI).
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// The environment variable holding the key, named in 401/403 errors.
pub const API_KEY_ENV: &str = "OPENAI_API_KEY";

impl WireApi for OpenAi {
    const PROVIDER: &'static str = "openai";
    const PATH: &'static str = "chat/completions";
    const AUTH: Auth = Auth::Bearer;
    const HEADERS: &'static [(&'static str, &'static str)] = &[];
    const DEFAULT_BASE_URL: &'static str = DEFAULT_BASE_URL;
    const KEY_ENV: &'static str = API_KEY_ENV;

    type Assembler = OpenAiAssembler;

    /// The Chat Completions request for the whole ledger, streamed with
    /// usage.
    ///
    /// Reasoning blocks are not sent back: Chat Completions has no field for
    /// them and DeepSeek rejects `reasoning_content` in input. Tool results
    /// go as one `role: tool` message per result, text as is (the API has no
    /// error flag). Argument text is replayed exactly as the model streamed
    /// it.
    fn request_body(request: &Request<'_>) -> Value {
        let mut messages = Vec::new();
        if !request.system.is_empty() {
            messages.push(json!({"role": "system", "content": request.system}));
        }
        for message in request.history {
            match message {
                Message::User { text, .. } => {
                    messages.push(json!({"role": "user", "content": text}))
                }
                Message::Assistant(reply) => messages.push(assistant_message(reply)),
                Message::ToolResults { results } => {
                    messages.extend(results.iter().map(|result| {
                        json!({
                            "role": "tool",
                            "tool_call_id": result.call_id,
                            "content": result.text,
                        })
                    }));
                }
            }
        }
        let mut body = json!({
            "model": request.model,
            "stream": true,
            "stream_options": {"include_usage": true},
            "messages": messages,
        });
        set_tools(&mut body, request.tools, |tool| {
            json!({
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.input_schema,
                },
            })
        });
        // OpenAI deprecated `max_tokens` for `max_completion_tokens`, and
        // its reasoning models refuse the old name; servers that copy the
        // API (vLLM, llama.cpp, Ollama) know the old name longest.
        if let Some(max_tokens) = request.max_tokens {
            let name = if request.vendor {
                "max_completion_tokens"
            } else {
                "max_tokens"
            };
            body[name] = max_tokens.into();
        }
        body
    }

    fn overflow(status: u16, body: &[u8]) -> Option<super::overflow::Overflow> {
        super::overflow::openai(status, body)
    }

    fn finish(reason: &str) -> Finish {
        match reason {
            "stop" | "end_turn" | "stop_sequence" => Finish::Stop,
            "tool_calls" | "function_call" | "tool_use" => Finish::ToolUse,
            "length" | "max_tokens" => Finish::Length,
            "content_filter" => Finish::Error,
            _ => Finish::Stop,
        }
    }
}

/// A Chat Completions client; the key, if any, goes in `Authorization:
/// Bearer`, and `max_tokens` defaults to the server's limit.
pub type OpenAiClient = HttpModel<OpenAi>;

/// One assistant message: `content` is its text, or null when it only calls
/// tools.
fn assistant_message(reply: &AssistantMessage) -> Value {
    let text = reply.text();
    let calls: Vec<Value> = reply
        .tool_calls()
        .into_iter()
        .map(|call| {
            let arguments = match (call.arguments_raw, call.arguments) {
                ("", Some(arguments)) => arguments.to_string(),
                ("", None) => "{}".to_owned(),
                (raw, _) => raw.to_owned(),
            };
            json!({
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": arguments},
            })
        })
        .collect();
    let mut message = json!({"role": "assistant"});
    message["content"] = if text.is_empty() && !calls.is_empty() {
        Value::Null
    } else {
        Value::String(text)
    };
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    message
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::provider::client::test_support::{
        self, assembled_body, assistant, body, reasoning, user,
    };

    /// Prompt caching (OpenAI's is automatic, on a byte-identical prefix):
    /// as a session grows, each request's messages are the previous
    /// request's, unchanged, and then new ones; the system prompt and the
    /// tools are sent the same each time.
    mod prefix {
        use proptest::prelude::*;

        use super::*;
        use crate::provider::ToolSpecForModel;

        /// One ledger entry: a prompt, a reply with up to three calls (some
        /// with arguments cut off) and reasoning, or their results.
        fn entry() -> impl Strategy<Value = Message> {
            let call = (any::<bool>(), "[a-z]{1,6}").prop_map(|(whole, name)| (whole, name));
            prop_oneof![
                "[a-z ]{0,12}".prop_map(|text| user(&text)),
                (
                    prop::option::of("[a-z]{0,8}"),
                    "[a-z ]{0,12}",
                    prop::collection::vec(call, 0..=3)
                )
                    .prop_map(|(thinking, said, calls)| {
                        let mut blocks = Vec::new();
                        if let Some(thinking) = thinking {
                            blocks.push(reasoning(&thinking, None));
                        }
                        blocks.push(test_support::text(&said));
                        for (n, (whole, name)) in calls.into_iter().enumerate() {
                            blocks.push(Block::ToolCall {
                                id: format!("call_{n}"),
                                name,
                                arguments: whole.then(|| json!({"n": n})),
                                arguments_raw: if whole {
                                    format!("{{\"n\":{n}}}")
                                } else {
                                    "{\"n\":".into()
                                },
                            });
                        }
                        assistant(blocks, Finish::ToolUse)
                    }),
                prop::collection::vec(("[a-z]{1,6}", "[a-z ]{0,12}", any::<bool>()), 1..=3)
                    .prop_map(|results| Message::ToolResults {
                        results: results
                            .into_iter()
                            .enumerate()
                            .map(
                                |(n, (tool, text, is_error))| crate::provider::ToolResultEntry {
                                    call_id: format!("call_{n}"),
                                    tool,
                                    text,
                                    is_error,
                                }
                            )
                            .collect(),
                    }),
            ]
        }

        proptest! {
            #[test]
            fn each_request_starts_with_the_previous_one_byte_for_byte(
                ledger in prop::collection::vec(entry(), 1..12)
            ) {
                let tools = [ToolSpecForModel {
                    name: "read_file".into(),
                    description: "Reads".into(),
                    input_schema: json!({"type": "object"}),
                    read_only: true,
                }];
                let request = |history| {
                    OpenAi::request_body(&Request {
                        model: "m",
                        system: "be brief",
                        history,
                        tools: &tools,
                        max_tokens: None,
                        vendor: false,
                    })
                };
                for k in 1..ledger.len() {
                    let before = request(&ledger[..k]);
                    let after = request(&ledger[..=k]);
                    let old = before["messages"].as_array().expect("messages");
                    let new = after["messages"].as_array().expect("messages");
                    prop_assert!(new.len() >= old.len());
                    for (a, b) in old.iter().zip(new) {
                        prop_assert_eq!(a.to_string(), b.to_string());
                    }
                    prop_assert_eq!(before["tools"].to_string(), after["tools"].to_string());
                    prop_assert_eq!(&before["model"], &after["model"]);
                }
            }
        }
    }

    #[test]
    fn request_body_leaves_out_reasoning_and_empty_options() {
        let history = [
            user("a"),
            assistant(
                vec![
                    reasoning("think", None),
                    Block::ToolCall {
                        id: "c".into(),
                        name: "f".into(),
                        arguments: Some(json!({})),
                        arguments_raw: String::new(),
                    },
                ],
                Finish::ToolUse,
            ),
        ];
        let body = body::<OpenAi>(&history, None);
        assert_eq!(
            body,
            json!({
                "model": "m",
                "stream": true,
                "stream_options": {"include_usage": true},
                "messages": [
                    {"role": "user", "content": "a"},
                    {"role": "assistant", "content": null, "tool_calls": [
                        {"id": "c", "type": "function",
                         "function": {"name": "f", "arguments": "{}"}},
                    ]},
                ],
            })
        );
    }

    #[test]
    fn the_reply_cap_is_max_completion_tokens_at_openai_and_max_tokens_elsewhere() {
        let history = [user("a")];
        let cap = |vendor| {
            let body = OpenAi::request_body(&Request {
                model: "m",
                system: "",
                history: &history,
                tools: &[],
                max_tokens: Some(300),
                vendor,
            });
            (
                body.get("max_tokens").cloned(),
                body.get("max_completion_tokens").cloned(),
            )
        };
        assert_eq!(cap(true), (None, Some(json!(300))));
        assert_eq!(cap(false), (Some(json!(300)), None));
    }

    fn assembled(chunks: &[Value]) -> AssistantMessage {
        test_support::assembled::<OpenAi>(chunks)
    }

    fn delta(delta: Value, finish_reason: Option<&str>) -> Value {
        json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]})
    }

    /// A chunk carrying one tool-call delta.
    fn call(call: Value) -> Value {
        delta(json!({"tool_calls": [call]}), None)
    }

    /// A chunk carrying only a finish reason.
    fn finish_with(reason: &str) -> Value {
        delta(json!({}), Some(reason))
    }

    /// The reply's tool calls in the fixtures' shape, and its finish.
    fn calls_and_finish(chunks: &[Value]) -> (Value, Finish) {
        let message = assembled(chunks);
        (
            message.to_fixture_json()["tool_calls"].clone(),
            message.finish,
        )
    }

    #[test]
    fn stop_with_tool_calls_is_tool_use() {
        let reply = calls_and_finish(&[
            call(json!({"index": 0, "id": "c1", "function": {"name": "ls", "arguments": "{}"}})),
            finish_with("stop"),
        ]);
        assert_eq!(
            reply,
            (
                json!([{"id": "c1", "name": "ls", "arguments": {}}]),
                Finish::ToolUse
            )
        );
    }

    #[test]
    fn null_choices_and_missing_delta_are_skipped() {
        let message = assembled(&[
            json!({"choices": null}),
            delta(json!({"content": "hi"}), None),
            json!({"choices": [{"index": 0, "finish_reason": "stop"}]}),
            json!({"choices": null, "usage": {"prompt_tokens": 3, "completion_tokens": 1}}),
            json!({"choices": [], "usage": null}),
        ]);
        assert_eq!(
            message.to_fixture_json(),
            json!({
                "text": "hi",
                "tool_calls": [],
                "finish": "stop",
                "usage": {"input_tokens": 3, "output_tokens": 1,
                          "raw": {"prompt_tokens": 3, "completion_tokens": 1}},
            })
        );
    }

    #[test]
    fn malformed_data_is_an_error_naming_the_provider() {
        let mut assembler = OpenAiAssembler::default();
        let err = assembler
            .push("message", "{\"choices\": [ oops")
            .expect_err("not json");
        let text = err.to_string();
        assert!(
            text.starts_with("the `openai` stream sent data that is not JSON"),
            "{text}"
        );
        assert!(text.contains("`{\"choices\": [ oops`"), "{text}");
    }

    #[test]
    fn calls_without_index_split_on_new_id_with_name_and_repeated_ids_join() {
        let reply = calls_and_finish(&[
            call(json!({"id": "a", "function": {"name": "f", "arguments": "{\"x\":"}})),
            // Repeated id and name on a fragment.
            call(json!({"id": "a", "function": {"name": "f", "arguments": "1}"}})),
            call(json!({"id": "b", "function": {"name": "g", "arguments": ""}})),
            // No id, no index: continues the last call.
            call(json!({"function": {"arguments": "{\"y\":2}"}})),
            finish_with("tool_calls"),
        ]);
        assert_eq!(
            reply.0,
            json!([
                {"id": "a", "name": "f", "arguments": {"x": 1}},
                {"id": "b", "name": "g", "arguments": {"y": 2}},
            ])
        );
    }

    #[test]
    fn a_new_id_with_a_reused_index_opens_a_call_but_a_nameless_one_does_not() {
        let reply = calls_and_finish(&[
            call(json!({"index": 0, "id": "a", "function": {"name": "f", "arguments": "{}"}})),
            // A second call under the same index (seen from some proxies).
            call(json!({"index": 0, "id": "b", "function": {"name": "g", "arguments": "{\"k\""}})),
            // A fragment whose id changed but carries no name: same call.
            call(json!({"index": 0, "id": "b2", "function": {"arguments": ":true}"}})),
            finish_with("tool_calls"),
        ]);
        assert_eq!(
            reply.0,
            json!([
                {"id": "a", "name": "f", "arguments": {}},
                {"id": "b", "name": "g", "arguments": {"k": true}},
            ])
        );
    }

    #[test]
    fn an_id_arriving_after_a_nameless_opener_fills_it_in() {
        let reply = calls_and_finish(&[
            call(json!({"index": 0, "function": {"name": "f"}})),
            // The finish reason in the same chunk as the call's last delta.
            delta(
                json!({"tool_calls": [{"index": 0, "id": "late", "function": {"name": "f", "arguments": "{}"}}]}),
                Some("tool_calls"),
            ),
        ]);
        assert_eq!(
            reply.0,
            json!([{"id": "late", "name": "f", "arguments": {}}])
        );
    }

    #[test]
    fn a_call_cut_by_length_has_no_arguments_and_keeps_its_raw_text() {
        let raw = "{\"path\": \"/tm";
        let reply = calls_and_finish(&[
            call(json!({"index": 0, "id": "a", "function": {"name": "f", "arguments": raw}})),
            finish_with("length"),
        ]);
        assert_eq!(
            reply,
            (
                json!([{"id": "a", "name": "f", "arguments": null, "arguments_raw": raw}]),
                Finish::Length
            )
        );
    }

    #[test]
    fn a_stream_cut_before_any_finish_is_an_error_and_done_alone_is_a_stop() {
        let cut = assembled(&[delta(json!({"content": "par"}), None)]);
        assert_eq!(cut.finish, Finish::Error);

        let mut assembler = OpenAiAssembler::default();
        assembler
            .push(
                "message",
                &delta(json!({"content": "all"}), None).to_string(),
            )
            .expect("chunk");
        assembler.push("message", "[DONE]").expect("done");
        assert_eq!(assembler.finish().finish, Finish::Stop);
    }

    #[test]
    fn an_error_object_mid_stream_is_finish_error() {
        let message = assembled(&[
            delta(json!({"content": "par"}), None),
            json!({"error": {"message": "The server had an error", "type": "server_error"}}),
        ]);
        assert_eq!(message.finish, Finish::Error);
        assert_eq!(message.text(), "par");
    }

    #[test]
    fn missing_call_ids_are_made_up_and_parsed_arguments_are_accepted() {
        let reply = calls_and_finish(&[
            call(json!({"index": 0, "function": {"name": "f", "arguments": {"a": 1}}})),
            call(json!({"index": 1, "function": {"name": "g"}})),
            finish_with("tool_calls"),
        ]);
        assert_eq!(
            reply.0,
            json!([
                {"id": "toolhost-call-0", "name": "f", "arguments": {"a": 1}},
                {"id": "toolhost-call-1", "name": "g", "arguments": {}},
            ])
        );
    }

    #[test]
    fn reasoning_and_refusal_deltas_are_kept() {
        let message = assembled(&[
            delta(json!({"reasoning": "hmm", "content": null}), None),
            delta(
                json!({"content": null, "refusal": "I can't help with that."}),
                Some("stop"),
            ),
        ]);
        assert_eq!(
            message.blocks,
            [
                Block::Reasoning {
                    text: "hmm".into(),
                    signature: None
                },
                Block::Text {
                    text: "I can't help with that.".into()
                },
            ]
        );
    }

    #[tokio::test]
    async fn a_framed_body_is_assembled() {
        let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
        let message = assembled_body::<OpenAi>(body).await;
        assert_eq!(
            (message.text().as_str(), message.finish),
            ("ok", Finish::Stop)
        );
    }
}
