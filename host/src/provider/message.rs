//! What a model's reply is once assembled, whatever wire API it came
//! from: the message, its blocks, why it stopped, its token usage. Its own
//! module so that the wire APIs, the ledger and the client import it rather
//! than `provider`'s `mod.rs`, which wires them.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::ReplyCut;

/// One finished assistant turn, whatever wire API it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// The content in the order the model produced it. Empty text blocks are
    /// dropped (the Messages API rejects them when they are sent back).
    pub blocks: Vec<Block>,
    /// Why the model stopped; decides whether the tool calls may run.
    pub finish: Finish,
    /// Token counts, when the stream reported them.
    pub usage: Option<Usage>,
    /// Set when toolhost stopped reading the reply at its cap (then
    /// `finish` is [`Finish::Length`]); absent when the server ended it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<ReplyCut>,
}

/// One piece of an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    /// Text for the user.
    Text { text: String },
    /// The model's reasoning. Kept in the ledger because the Messages API
    /// wants thinking blocks (with their `signature`) sent back unchanged.
    Reasoning {
        text: String,
        signature: Option<String>,
    },
    /// A request to run a tool.
    ToolCall {
        id: String,
        name: String,
        /// The parsed arguments; `None` when the text is not complete JSON
        /// (the reply was cut off), in which case the call must not run.
        arguments: Option<Value>,
        /// The argument text exactly as streamed (may be empty for a call
        /// without arguments).
        arguments_raw: String,
    },
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Finish {
    /// The model finished its turn.
    Stop,
    /// The model wants its tool calls run. Also used when a server says
    /// `stop` but sent tool calls.
    ToolUse,
    /// The output limit cut the reply (the server's `max_tokens`, or
    /// toolhost's reply cap: see [`AssistantMessage::cut`]); tool arguments
    /// may be truncated.
    Length,
    /// The server reported an error mid-stream, withheld the output (content
    /// filter, refusal) or the stream ended before saying why it stopped.
    Error,
}

impl Finish {
    /// The name used in fixtures, transcripts and events.
    pub fn as_str(self) -> &'static str {
        match self {
            Finish::Stop => "stop",
            Finish::ToolUse => "tool_use",
            Finish::Length => "length",
            Finish::Error => "error",
        }
    }
}

/// Token usage of one request, normalised, plus what the server sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens read at the full price: Anthropic `input_tokens`
    /// (which leaves out cache reads and writes), OpenAI `prompt_tokens`
    /// less `prompt_tokens_details.cached_tokens`.
    pub input_tokens: u64,
    /// Prompt tokens read from the server's prompt cache: Anthropic
    /// `cache_read_input_tokens`, OpenAI `prompt_tokens_details.cached_tokens`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the cache: Anthropic
    /// `cache_creation_input_tokens` (OpenAI caches without saying).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
    /// Generated tokens (OpenAI `completion_tokens`, Anthropic `output_tokens`).
    pub output_tokens: u64,
    /// The server's own usage object(s), for cache and reasoning counts.
    pub raw: Value,
}

impl Usage {
    /// The whole prompt as the server counted it, cached or not: what the
    /// next request starts from.
    pub fn prompt_tokens(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_read_tokens)
            .saturating_add(self.cache_write_tokens)
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Usage summed over replies (a prompt's, a session's), in the same four
/// counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TokenTotals {
    pub input_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    pub output_tokens: u64,
}

impl TokenTotals {
    pub fn add(&mut self, usage: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(usage.input_tokens);
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_add(usage.cache_read_tokens);
        self.cache_write_tokens = self
            .cache_write_tokens
            .saturating_add(usage.cache_write_tokens);
        self.output_tokens = self.output_tokens.saturating_add(usage.output_tokens);
    }
}

/// `19 in / 83 out tokens`, with the cache's parts when there are any:
/// `19 in + 320 cache read + 40 cache write / 83 out tokens`.
impl std::fmt::Display for TokenTotals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} in", self.input_tokens)?;
        if self.cache_read_tokens > 0 {
            write!(f, " + {} cache read", self.cache_read_tokens)?;
        }
        if self.cache_write_tokens > 0 {
            write!(f, " + {} cache write", self.cache_write_tokens)?;
        }
        write!(f, " / {} out tokens", self.output_tokens)
    }
}

/// A tool call of an assistant message, borrowed from its [`Block`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CallRef<'a> {
    pub id: &'a str,
    pub name: &'a str,
    /// `None` when the argument text is not complete JSON.
    pub arguments: Option<&'a Value>,
    /// The argument text exactly as streamed.
    pub arguments_raw: &'a str,
}

impl AssistantMessage {
    /// The tool calls, in order.
    pub fn tool_calls(&self) -> Vec<CallRef<'_>> {
        self.blocks
            .iter()
            .filter_map(|block| match block {
                Block::ToolCall {
                    id,
                    name,
                    arguments,
                    arguments_raw,
                } => Some(CallRef {
                    id,
                    name,
                    arguments: arguments.as_ref(),
                    arguments_raw,
                }),
                _ => None,
            })
            .collect()
    }

    /// All text blocks joined, in order.
    pub fn text(&self) -> String {
        self.blocks
            .iter()
            .filter_map(|block| match block {
                Block::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The message in the flat shape of the recorded fixtures'
    /// `*.expected.json` (`text`, `tool_calls`, `finish`, `usage`,
    /// `reasoning`, and `cut` when toolhost cut the reply), so tests compare whole objects and a mismatch shows
    /// everything at once.
    pub fn to_fixture_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("text".into(), Value::String(self.text()));
        let calls = self
            .tool_calls()
            .into_iter()
            .map(|call| {
                let mut value = json!({
                    "id": call.id,
                    "name": call.name,
                    "arguments": call.arguments,
                });
                if call.arguments.is_none() {
                    value["arguments_raw"] = Value::String(call.arguments_raw.into());
                }
                value
            })
            .collect();
        out.insert("tool_calls".into(), Value::Array(calls));
        out.insert("finish".into(), Value::String(self.finish.as_str().into()));
        if let Some(usage) = &self.usage {
            out.insert(
                "usage".into(),
                serde_json::to_value(usage).unwrap_or(Value::Null),
            );
        }
        let mut reasoning: Option<(String, Option<&str>)> = None;
        for block in &self.blocks {
            if let Block::Reasoning { text, signature } = block {
                let (all, last_signature) = reasoning.get_or_insert_with(Default::default);
                all.push_str(text);
                if let Some(signature) = signature {
                    *last_signature = Some(signature);
                }
            }
        }
        if let Some((text, signature)) = reasoning {
            let mut value = json!({ "text": text });
            if let Some(signature) = signature {
                value["signature"] = Value::String(signature.into());
            }
            out.insert("reasoning".into(), value);
        }
        if let Some(cut) = &self.cut {
            out.insert("cut".into(), json!(cut));
        }
        Value::Object(out)
    }
}

/// Parses accumulated argument text. `None` when it is not complete JSON:
/// such a call was cut off and must not run. Also `None`, without being
/// parsed, when it holds more than a call's arguments may
/// ([`crate::json_budget::TOOL_ARGUMENTS`]): the reply cap bounds its
/// bytes, not the hundredfold they may cost as a `Value`.
pub(super) fn parse_arguments(raw: &str) -> Option<Value> {
    crate::json_budget::TOOL_ARGUMENTS
        .parse(raw.as_bytes())
        .ok()
}

impl AssistantMessage {
    /// An assembled reply. A server that says it stopped normally while
    /// sending tool calls still wants them run: that is a tool use. A reply
    /// toolhost cut at its cap is cut by the output limit, whatever the
    /// server said.
    pub(super) fn settled(
        blocks: Vec<Block>,
        finish: Finish,
        usage: Option<Usage>,
        cut: Option<ReplyCut>,
    ) -> Self {
        let has_calls = blocks.iter().any(|b| matches!(b, Block::ToolCall { .. }));
        let finish = match finish {
            _ if cut.is_some() => Finish::Length,
            Finish::Stop if has_calls => Finish::ToolUse,
            other => other,
        };
        AssistantMessage {
            blocks,
            finish,
            usage,
            cut,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixture_json_lists_raw_arguments_only_for_unparsed_calls() {
        let message = AssistantMessage {
            blocks: vec![
                Block::Reasoning {
                    text: "think".into(),
                    signature: None,
                },
                Block::Text { text: "a".into() },
                Block::ToolCall {
                    id: "1".into(),
                    name: "f".into(),
                    arguments: Some(json!({})),
                    arguments_raw: String::new(),
                },
                Block::Text { text: "b".into() },
                Block::ToolCall {
                    id: "2".into(),
                    name: "g".into(),
                    arguments: None,
                    arguments_raw: "{\"x".into(),
                },
            ],
            finish: Finish::Length,
            usage: None,
            cut: None,
        };
        assert_eq!(
            message.to_fixture_json(),
            json!({
                "text": "ab",
                "tool_calls": [
                    {"id": "1", "name": "f", "arguments": {}},
                    {"id": "2", "name": "g", "arguments": null, "arguments_raw": "{\"x"},
                ],
                "finish": "length",
                "reasoning": {"text": "think"},
            })
        );
    }
}
