//! Model providers: turns a model's streamed reply (a Server-Sent Events body)
//! into one assembled [`AssistantMessage`].
//!
//! One module per wire API: [`openai`] (Chat Completions and the servers that
//! copy it: Ollama, vLLM, llama.cpp, Mistral, DeepSeek, Azure) and
//! [`anthropic`] (Messages). Each implements [`client::WireApi`] with its
//! request body, its assembler (fed one event at a time) and its finish
//! table; [`client`] holds the one client over them and
//! [`client::assemble`], which reads a whole byte stream, as an HTTP client
//! yields it. `sse` only frames bytes into events.
//!
//! This module knows nothing about wasm, tools' sandboxing or the agent loop;
//! [`http`] is its only HTTP code (POST, retries, timeouts). The shapes here
//! are the contract the agent loop and the ledger build on, so every quirk of
//! a server is absorbed here and never leaks upward.

pub mod anthropic;
mod budget;
pub mod client;
mod conversation;
pub mod http;
pub mod openai;
pub mod overflow;
pub mod prices;
pub mod scripted;
mod sse;
pub mod window;

pub use budget::{BLOCK_COST, Cap, DEFAULT_MAX_REPLY_BYTES, ReplyBudget, ReplyCut};
pub use conversation::{Delivery, Message, ToolResultEntry, ToolSpecForModel};

/// Receives the reply's text as it streams in, for live display; the
/// assembled message remains the source of truth.
pub type TextSink = std::sync::Arc<dyn Fn(&str) + Send + Sync>;

/// How one request is made, besides what it sends: who hears the reply's
/// text as it streams in and each retry, and a cap on the reply's tokens
/// for this request alone (after a server said the reply's room did not
/// fit its window).
#[derive(Clone, Default)]
pub struct Asking {
    pub on_text: Option<TextSink>,
    pub on_retry: Option<http::RetryObserver>,
    pub max_tokens: Option<u32>,
}

/// The model a run talks to, chosen at start-up from flags, config and env.
#[derive(Debug)]
pub enum Model {
    OpenAi(openai::OpenAiClient),
    Anthropic(anthropic::AnthropicClient),
    Scripted(scripted::ScriptedModel),
}

impl Model {
    /// The wire API (`openai`, `anthropic`, `scripted`), the model name and
    /// the base URL, for transcripts.
    pub fn describe(&self) -> (&'static str, Option<&str>, Option<&str>) {
        let http = match self {
            Model::OpenAi(client) => client.http(),
            Model::Anthropic(client) => client.http(),
            Model::Scripted(_) => return ("scripted", None, None),
        };
        (http.provider(), Some(http.model()), Some(http.base_url()))
    }

    /// The same server and key asking for the model `name` (a chat's
    /// `/model`); `None` for the scripted model, which has no names.
    pub fn named(&self, name: &str) -> Option<Model> {
        match self {
            Model::OpenAi(client) => Some(Model::OpenAi(client.with_model(name))),
            Model::Anthropic(client) => Some(Model::Anthropic(client.with_model(name))),
            Model::Scripted(_) => None,
        }
    }

    /// Caps each reply at `max_reply_bytes` (see [`ReplyBudget`]); the
    /// scripted model has nothing to cap. Default
    /// [`DEFAULT_MAX_REPLY_BYTES`].
    pub fn with_max_reply_bytes(self, max_reply_bytes: u64) -> Self {
        match self {
            Model::OpenAi(client) => Model::OpenAi(client.with_max_reply_bytes(max_reply_bytes)),
            Model::Anthropic(client) => {
                Model::Anthropic(client.with_max_reply_bytes(max_reply_bytes))
            }
            Model::Scripted(script) => Model::Scripted(script),
        }
    }

    /// Ends a reply that goes on without content (text, reasoning, a tool
    /// call) for `timeout`, as [`ProviderError::NoContent`]; the scripted
    /// model streams nothing. Default
    /// [`http::DEFAULT_CONTENT_TIMEOUT`].
    pub fn with_content_timeout(self, timeout: std::time::Duration) -> Self {
        match self {
            Model::OpenAi(client) => Model::OpenAi(client.with_content_timeout(timeout)),
            Model::Anthropic(client) => Model::Anthropic(client.with_content_timeout(timeout)),
            Model::Scripted(script) => Model::Scripted(script),
        }
    }

    /// The next assistant message for `history`; `Ok(None)` when `cancel`
    /// fired before it was complete. `on_text` hears the reply's text as it
    /// streams in, `on_retry` each retry of the request.
    pub async fn next(
        &self,
        system: &str,
        history: &[Message],
        tools: &[ToolSpecForModel],
        cancel: &tokio_util::sync::CancellationToken,
        asking: Asking,
    ) -> Result<Option<AssistantMessage>, ProviderError> {
        match self {
            Model::OpenAi(client) => {
                client
                    .next_streaming(system, history, tools, cancel, asking)
                    .await
            }
            Model::Anthropic(client) => {
                client
                    .next_streaming(system, history, tools, cancel, asking)
                    .await
            }
            Model::Scripted(_) if cancel.is_cancelled() => Ok(None),
            Model::Scripted(script) => {
                let turn = script.next_turn(history)?;
                // A scripted pause, as a slow model's: input typed meanwhile
                // is queued; an interrupt drops the reply.
                if let Some(wait) = turn.pause() {
                    tokio::select! {
                        () = tokio::time::sleep(wait) => {}
                        () = cancel.cancelled() => return Ok(None),
                    }
                }
                Ok(Some(turn.message))
            }
        }
    }
}

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

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

/// A stream that cannot be read or understood. Which variants are worth a
/// retry is stated on each; a model's own `error` event is not one of these but
/// [`Finish::Error`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    /// An event's data is not JSON: the server does not speak this wire API
    /// (wrong base URL, a proxy's HTML page). Not retried: it would happen
    /// again.
    #[error(
        "the `{provider}` stream sent data that is not JSON ({source}): `{excerpt}`; \
         check that the server speaks the `{provider}` streaming API"
    )]
    MalformedData {
        provider: &'static str,
        /// The start of the offending data, at most [`EXCERPT_CHARS`] characters.
        excerpt: String,
        source: serde_json::Error,
    },
    /// The body is not an event stream at all (not UTF-8, or a line the SSE
    /// grammar rejects). Not retried.
    #[error("the `{provider}` response is not a valid event stream: {detail}")]
    MalformedStream {
        provider: &'static str,
        detail: String,
    },
    /// The byte stream under the SSE framing failed. Retried: a byte source
    /// failing mid-read is a reset, which the retry policy retries
    /// (docs/contributing/decisions.md#model-retries). The
    /// HTTP layer never reports its own response bodies this way: those
    /// become `StreamBroken` / `IdleTimeout`, which know how many bytes had
    /// arrived and are retried only before the first one.
    #[error("reading the `{provider}` stream failed: {source}")]
    Transport {
        provider: &'static str,
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The connection could not be made or broke before the response
    /// headers (refused, reset, DNS, TLS). Retried.
    #[error("cannot reach `{provider}` at {url}: {detail}")]
    Connect {
        provider: &'static str,
        url: String,
        detail: String,
    },
    /// No response headers within the request timeout. Retried.
    #[error("`{provider}` at {url} did not answer within {after:?}")]
    RequestTimeout {
        provider: &'static str,
        url: String,
        after: std::time::Duration,
    },
    /// An HTTP error status other than 401, 403 and 404. Retried for 429 and
    /// 5xx (after `retry_after` when the server sent `Retry-After`); any other
    /// 4xx is not: the same request would fail again.
    #[error("`{provider}` at {url} answered HTTP {status}: {body}")]
    Status {
        provider: &'static str,
        url: String,
        status: u16,
        retry_after: Option<std::time::Duration>,
        /// The start of the server's error body.
        body: String,
    },
    /// A 400 that says the request does not fit the model's context window
    /// (module [`overflow`]). Not retried as it is: the conversation must
    /// shrink first, or the reply's room.
    #[error(
        "`{provider}` at {url}: {what} (server said: {body})",
        what = overflow_text(overflow)
    )]
    ContextOverflow {
        provider: &'static str,
        url: String,
        overflow: overflow::Overflow,
        body: String,
    },
    /// 401 or 403. Not retried: the key is wrong or missing. Keys come only
    /// from the environment, so the advice names the variable: at the
    /// vendor's own URL, to set it; at another server, that the server
    /// refused the key it was sent (or wants one).
    #[error(
        "`{provider}` at {url} answered HTTP {status}: {advice} (server said: {body})",
        advice = key_advice(.key_env, *.vendor, *.key_sent, .withheld.as_deref())
    )]
    Unauthorized {
        provider: &'static str,
        url: String,
        status: u16,
        /// The environment variable that holds this provider's key.
        key_env: &'static str,
        /// Whether `url` is the vendor's own API (the default base URL).
        vendor: bool,
        /// Whether the request carried a key.
        key_sent: bool,
        /// Why the user's key was not sent (an untrusted file chose the
        /// server), with the fix.
        withheld: Option<String>,
        body: String,
    },
    /// A 3xx. Never followed and not retried: following it would re-send
    /// the conversation (and a key in any header but `Authorization`) to an
    /// address the user did not name.
    #[error(
        "`{provider}` at {url} answered HTTP {status}, a redirect to {where_to}, which toolhost \
         never follows (the request carries your conversation and may carry your API key){fix}",
        where_to = location.as_deref().map_or_else(|| "nowhere (no Location header)".to_owned(), |l| format!("`{l}`")),
        fix = redirect_fix(.url, .location.as_deref())
    )]
    Redirect {
        provider: &'static str,
        url: String,
        status: u16,
        /// The `Location` header, as sent.
        location: Option<String>,
    },
    /// The stream went on without content (text, reasoning, a tool call)
    /// for longer than the content timeout: silence, or only comments,
    /// pings or empty deltas. Not retried; the run stops as `request_timeout`, as at its
    /// request deadline.
    #[error(
        "the `{provider}` stream from {url} sent no content for {} s (nothing at all, or only \
         comments, pings or empty deltas), so toolhost stopped reading it; if the model is meant to think that long, \
         raise the limit with `--content-timeout {}`, or `content_timeout = {}` under [model] in \
         your config.toml",
        .after.as_secs(), .after.as_secs().saturating_mul(2).max(1), .after.as_secs().saturating_mul(2).max(1)
    )]
    NoContent {
        provider: &'static str,
        url: String,
        after: std::time::Duration,
    },
    /// No key for the vendor's own API (the default base URL): found when
    /// the client is built, so a run stops before any request instead of
    /// sending one that must fail. A server at another base URL (Ollama,
    /// vLLM, llama.cpp) may need no key and is never refused this way.
    #[error(
        "no API key for `{provider}` at {base_url}: set the environment variable {key_env} \
         (`export {key_env}=...`); a server at --base-url may need none"
    )]
    MissingKey {
        provider: &'static str,
        base_url: String,
        /// The environment variable that holds this provider's key.
        key_env: &'static str,
    },
    /// 404. Not retried: the model name or the base URL is wrong.
    #[error(
        "`{provider}` answered HTTP 404: model `{model}` or URL `{url}` not found: \
         check --model and --base-url{hint} (server said: {body})"
    )]
    NotFound {
        provider: &'static str,
        url: String,
        model: String,
        body: String,
        /// A base URL without `/v1`: `; ... try --base-url .../v1`.
        hint: String,
    },
    /// The body went quiet for longer than the idle timeout. Retried only
    /// when no byte of the body had arrived (`received == 0`).
    #[error(
        "the `{provider}` stream from {url} sent nothing for {after:?} (after {received} bytes)"
    )]
    IdleTimeout {
        provider: &'static str,
        url: String,
        after: std::time::Duration,
        received: u64,
    },
    /// The connection broke while the body was streaming. Retried only when
    /// no byte of the body had arrived (`received == 0`): after that, part of
    /// a reply was generated, and a new request would generate (and bill)
    /// another one.
    #[error("the `{provider}` stream from {url} broke after {received} bytes: {detail}")]
    StreamBroken {
        provider: &'static str,
        url: String,
        received: u64,
        detail: String,
    },
    /// Every allowed retry failed; `last` is the final failure. Not retried.
    #[error("`{provider}` failed {attempts} times; last error: {last}")]
    RetriesExhausted {
        provider: &'static str,
        attempts: u32,
        last: Box<ProviderError>,
    },
    /// The HTTP client could not be built. Not retried.
    #[error("cannot send requests to `{provider}`: {detail}")]
    Client {
        provider: &'static str,
        detail: String,
    },
    /// The `scripted` provider's script cannot be read, is invalid, or ran
    /// out of turns. Not retried.
    #[error("script `{}`: {detail}", .path.display())]
    Script {
        path: std::path::PathBuf,
        detail: String,
    },
}

/// What a [`ProviderError::ContextOverflow`] says, with the server's numbers.
fn overflow_text(overflow: &overflow::Overflow) -> String {
    let count = |n: Option<u64>| n.map_or_else(|| "?".to_owned(), |n| n.to_string());
    match overflow.kind {
        overflow::OverflowKind::Prompt => {
            let mut text = "the conversation no longer fits the model's context window".to_owned();
            if overflow.prompt_tokens.is_some() || overflow.window.is_some() {
                text.push_str(&format!(
                    " ({} tokens; the window holds {})",
                    count(overflow.prompt_tokens),
                    count(overflow.window)
                ));
            }
            text
        }
        overflow::OverflowKind::ReplyRoom => format!(
            "the conversation ({} tokens) leaves less room in the model's context window ({}) \
             than the {} tokens asked for the reply",
            count(overflow.prompt_tokens),
            count(overflow.window),
            count(overflow.reply_tokens)
        ),
    }
}

/// What to do about a refused key (see [`ProviderError::Unauthorized`]).
fn key_advice(key_env: &str, vendor: bool, key_sent: bool, withheld: Option<&str>) -> String {
    if let (false, Some(withheld)) = (key_sent, withheld) {
        return withheld.to_owned();
    }
    match (vendor, key_sent) {
        (true, _) => format!(
            "bad or missing API key: set the environment variable {key_env} \
             (`export {key_env}=...`)"
        ),
        (false, true) => format!(
            "the server rejected the API key taken from {key_env}: set {key_env} to a key \
             this server accepts"
        ),
        (false, false) => format!(
            "the server wants an API key and none was sent: set {key_env} to a key this \
             server accepts"
        ),
    }
}

/// For a refused redirect: the `--base-url` that names its target, when the
/// target is an endpoint of this API (the request's path below the base URL).
fn redirect_fix(url: &str, location: Option<&str>) -> String {
    let Some(target) = location.and_then(|location| {
        reqwest::Url::parse(url)
            .ok()?
            .join(location)
            .ok()
            .filter(|target| matches!(target.scheme(), "http" | "https"))
    }) else {
        return String::new();
    };
    let target = target.as_str();
    let base = ["/chat/completions", "/v1/messages"]
        .iter()
        .find_map(|endpoint| target.strip_suffix(endpoint));
    match base {
        Some(base) => format!(
            "; if that is the model server you meant, name it yourself: `--base-url {base}`"
        ),
        None => "; if you meant that server, name it yourself with `--base-url`".to_owned(),
    }
}

/// How much of a bad data line an error quotes.
pub const EXCERPT_CHARS: usize = 80;

impl ProviderError {
    fn malformed_data(provider: &'static str, data: &str, source: serde_json::Error) -> Self {
        let mut excerpt: String = data.chars().take(EXCERPT_CHARS).collect();
        if excerpt.len() < data.len() {
            excerpt.push('…');
        }
        ProviderError::MalformedData {
            provider,
            excerpt,
            source,
        }
    }
}

/// Parses one event's data, naming the provider if it is not JSON.
fn parse_data(provider: &'static str, data: &str) -> Result<Value, ProviderError> {
    serde_json::from_str(data)
        .map_err(|source| ProviderError::malformed_data(provider, data, source))
}

/// Parses accumulated argument text. `None` when it is not complete JSON:
/// such a call was cut off and must not run. Also `None`, without being
/// parsed, when it holds more than a call's arguments may
/// ([`crate::json_budget::TOOL_ARGUMENTS`]): the reply cap bounds its
/// bytes, not the hundredfold they may cost as a `Value`.
fn parse_arguments(raw: &str) -> Option<Value> {
    crate::json_budget::TOOL_ARGUMENTS
        .parse(raw.as_bytes())
        .ok()
}

impl AssistantMessage {
    /// An assembled reply. A server that says it stopped normally while
    /// sending tool calls still wants them run: that is a tool use. A reply
    /// toolhost cut at its cap is cut by the output limit, whatever the
    /// server said.
    fn settled(
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

    #[test]
    fn a_bad_data_line_is_quoted_from_its_start() {
        let line = format!("<html>{}</html>", "x".repeat(200));
        let err = parse_data("openai", &line).expect_err("not json");
        let text = err.to_string();
        assert!(text.contains("`openai`"), "{text}");
        assert!(text.contains("`<html>xxx"), "{text}");
        assert!(text.contains("xxx…`"), "{text}");
        assert!(!text.contains("</html>"), "{text}");
    }

    #[test]
    fn a_redirect_names_where_it_led_and_the_base_url_that_names_it() {
        let redirect = |location: Option<&str>| {
            ProviderError::Redirect {
                provider: "openai",
                url: "http://127.0.0.1:1/v1/chat/completions".into(),
                status: 307,
                location: location.map(str::to_owned),
            }
            .to_string()
        };
        let start = "`openai` at http://127.0.0.1:1/v1/chat/completions answered HTTP 307, a \
                     redirect to ";
        let never = ", which toolhost never follows (the request carries your conversation and \
                     may carry your API key)";
        assert_eq!(
            redirect(Some("http://10.0.0.9:8/v2/chat/completions")),
            format!(
                "{start}`http://10.0.0.9:8/v2/chat/completions`{never}; if that is the model \
                 server you meant, name it yourself: `--base-url http://10.0.0.9:8/v2`"
            )
        );
        // A relative Location is resolved against the request's URL.
        assert!(
            redirect(Some("/v3/chat/completions")).ends_with("`--base-url http://127.0.0.1:1/v3`")
        );
        assert_eq!(
            redirect(Some("http://x.example/login")),
            format!(
                "{start}`http://x.example/login`{never}; if you meant that server, name it \
                 yourself with `--base-url`"
            )
        );
        assert_eq!(
            redirect(None),
            format!("{start}nowhere (no Location header){never}")
        );
    }
}
