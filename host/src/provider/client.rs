//! The one HTTP model client, generic over the wire API it speaks.
//!
//! [`HttpModel`] turns the ledger into one streamed request, sends it
//! through [`super::http`] (retries, timeouts) and assembles the reply. A
//! wire API ([`super::openai::OpenAi`], [`super::anthropic::Anthropic`])
//! implements [`WireApi`] with only what differs between APIs: its names, how
//! the key travels, its request body, its stream assembler and its finish
//! table. A third API (OpenAI Responses) is one more impl, not one more
//! client.
//!
//! Knows nothing of any API's JSON; that stays in each API's module.

use std::fmt;
use std::marker::PhantomData;
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::http::{Auth, HttpClient, HttpOptions, RetryObserver};
use super::sse::Frame;
use super::{
    AssistantMessage, DEFAULT_MAX_REPLY_BYTES, Finish, Message, ProviderError, ReplyBudget,
    ToolSpecForModel, sse,
};

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
    pub on_retry: Option<RetryObserver>,
    pub max_tokens: Option<u32>,
}

/// What one wire API adds to [`HttpModel`].
pub trait WireApi: fmt::Debug + Send + Sync + 'static {
    /// The name errors and transcripts use (`openai`, `anthropic`).
    const PROVIDER: &'static str;
    /// The endpoint below the base URL.
    const PATH: &'static str;
    /// How the key travels.
    const AUTH: Auth;
    /// Headers every request carries besides the key.
    const HEADERS: &'static [(&'static str, &'static str)];
    /// The vendor's own API root, used when no base URL is given.
    const DEFAULT_BASE_URL: &'static str;
    /// The environment variable that holds the key, named in errors.
    const KEY_ENV: &'static str;

    /// Accumulates one response's events.
    type Assembler: Assembler;

    /// The streamed request for the whole ledger.
    fn request_body(request: &Request<'_>) -> Value;

    /// The finish table: what each stop reason the API sends means. A
    /// reason the API added after this was written should be a
    /// [`Finish::Stop`]; see [`finish_of`] for the rest of the rule.
    fn finish(reason: &str) -> Finish;

    /// Whether an error response says the request did not fit the
    /// model's context window (module `overflow`).
    fn overflow(status: u16, body: &[u8]) -> Option<super::overflow::Overflow>;
}

/// What one model request sends, whatever the wire API.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub model: &'a str,
    /// Empty for none.
    pub system: &'a str,
    pub history: &'a [Message],
    pub tools: &'a [ToolSpecForModel],
    /// The reply length cap; `None` leaves it to the wire API's default.
    pub max_tokens: Option<u32>,
    /// Whether it goes to the vendor's own API, not a server that copies
    /// it (OpenAI's newer models there refuse `max_tokens`).
    pub vendor: bool,
}

/// Builds one reply from a response's events.
pub trait Assembler: Default + Send {
    /// Takes one SSE event: its `event:` name (`message` when the server
    /// sent none) and its data. Data that is not JSON is an error naming
    /// the provider. What it keeps is charged to [`Self::budget`]; once
    /// that is spent it keeps nothing more.
    fn push(&mut self, event: &str, data: &str) -> Result<(), ProviderError>;

    /// The cap on what this reply may make the assembler hold (default
    /// [`DEFAULT_MAX_REPLY_BYTES`]). A reply cut by it finishes as
    /// [`Finish::Length`] with its [`AssistantMessage::cut`] set.
    fn budget(&mut self) -> &mut ReplyBudget;

    /// The reply text received since the last call, for live display.
    fn take_text_delta(&mut self) -> String;

    /// The assembled message.
    fn finish(self) -> AssistantMessage;
}

/// Sets `body["tools"]` to each tool as `spec` writes it, or leaves it out
/// when there are none (some servers reject an empty list).
pub(super) fn set_tools(
    body: &mut Value,
    tools: &[ToolSpecForModel],
    spec: impl Fn(&ToolSpecForModel) -> Value,
) {
    if !tools.is_empty() {
        body["tools"] = tools.iter().map(spec).collect();
    }
}

/// Why a stream stopped: an error the stream reported wins; a stop reason
/// means what `W`'s finish table says; no reason at all means the stream was
/// cut off (an error) unless it ended with the API's own end marker
/// (`ended`).
pub(super) fn finish_of<W: WireApi>(errored: bool, reason: Option<&str>, ended: bool) -> Finish {
    match reason {
        _ if errored => Finish::Error,
        Some(reason) => W::finish(reason),
        None if ended => Finish::Stop,
        None => Finish::Error,
    }
}

/// Reads a whole event stream of API `W` (the body of a streaming response)
/// and assembles the reply, telling `on_text` each piece of reply text as it
/// arrives. Once the reply passes `max_reply_bytes`, or one event twice
/// that, it stops reading (dropping `body` closes the connection) and the
/// reply ends cut by the output limit.
///
/// Every event counts against the cap, not only what it keeps: one that
/// keeps nothing (an empty delta, a ping, a delta for a call that is not
/// there) is charged its own size, one that keeps something at least
/// [`EVENT_SHARE`]th of it. A stream that keeps nothing for
/// `content_timeout` (comments, pings, empty deltas) fails with
/// [`ProviderError::NoContent`].
pub async fn assemble<W, S, B, E>(
    body: S,
    on_text: Option<TextSink>,
    max_reply_bytes: u64,
    content_timeout: Duration,
) -> Result<AssistantMessage, ProviderError>
where
    W: WireApi,
    S: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
    E: std::error::Error + Send + Sync + 'static,
{
    let mut assembler = W::Assembler::default();
    *assembler.budget() = ReplyBudget::new(max_reply_bytes);
    let max_event_bytes = assembler.budget().max_event_bytes();
    let events = sse::events(W::PROVIDER, body, max_event_bytes);
    let mut events = std::pin::pin!(events);
    let mut deadline = tokio::time::Instant::now() + content_timeout;
    loop {
        let frame = match tokio::time::timeout_at(deadline, events.next()).await {
            Ok(Some(frame)) => frame,
            Ok(None) => break,
            Err(_) => {
                return Err(ProviderError::NoContent {
                    provider: W::PROVIDER,
                    url: String::new(),
                    after: content_timeout,
                });
            }
        };
        match frame? {
            Frame::Event(event) => {
                let before = assembler.budget().used();
                assembler.push(&event.event, &event.data)?;
                let kept = assembler.budget().used() - before;
                let raw = event.event.len() + event.data.len();
                let floor = if kept == 0 { raw } else { raw / EVENT_SHARE };
                if kept > 0 {
                    deadline = tokio::time::Instant::now() + content_timeout;
                }
                assembler.budget().charge(floor.saturating_sub(kept));
            }
            Frame::Overlong => assembler.budget().cut_event(),
        }
        let delta = assembler.take_text_delta();
        if let (Some(sink), false) = (&on_text, delta.is_empty()) {
            sink(&delta);
        }
        if assembler.budget().cut().is_some() {
            break;
        }
    }
    Ok(assembler.finish())
}

/// An event that keeps something is charged at least this fraction of its
/// size: a streamed token's JSON is about 15 to 60 times the token, so a
/// real reply of 128k tokens costs 2 to 4 MiB of the default 8 MiB cap, while
/// a server padding each byte it keeps with megabytes is cut soon.
pub const EVENT_SHARE: usize = 16;

/// A model behind wire API `W`: one streamed request per assistant turn.
pub struct HttpModel<W> {
    http: HttpClient,
    max_tokens: Option<u32>,
    max_reply_bytes: u64,
    api: PhantomData<W>,
}

impl<W> fmt::Debug for HttpModel<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpModel")
            .field("http", &self.http)
            .field("max_tokens", &self.max_tokens)
            .field("max_reply_bytes", &self.max_reply_bytes)
            .finish()
    }
}

impl<W> Clone for HttpModel<W> {
    fn clone(&self) -> Self {
        Self {
            http: self.http.clone(),
            max_tokens: self.max_tokens,
            max_reply_bytes: self.max_reply_bytes,
            api: PhantomData,
        }
    }
}

impl<W: WireApi> HttpModel<W> {
    /// A client for `model`, sending the key (if any) the way `W` wants it.
    pub fn new(options: HttpOptions, model: impl Into<String>) -> Result<Self, ProviderError> {
        let mut http = HttpClient::new(
            W::PROVIDER,
            W::KEY_ENV,
            W::DEFAULT_BASE_URL,
            W::AUTH,
            model,
            options,
        )?;
        for (name, value) in W::HEADERS {
            http = http.with_header(name, value);
        }
        http = http.with_overflow(W::overflow);
        Ok(Self {
            http,
            max_tokens: None,
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
            api: PhantomData,
        })
    }

    /// Caps what one reply may make toolhost hold (see [`ReplyBudget`]);
    /// default [`DEFAULT_MAX_REPLY_BYTES`].
    pub fn with_max_reply_bytes(mut self, max_reply_bytes: u64) -> Self {
        self.max_reply_bytes = max_reply_bytes;
        self
    }

    /// The same client (server, key, limits) asking for `model` instead.
    pub fn with_model(&self, model: impl Into<String>) -> Self {
        Self {
            http: self.http.with_model(model),
            ..self.clone()
        }
    }

    /// Ends a reply that goes on without content for `timeout` (see
    /// [`assemble`]); default [`super::http::DEFAULT_CONTENT_TIMEOUT`].
    pub fn with_content_timeout(mut self, timeout: Duration) -> Self {
        self.http = self.http.with_content_timeout(timeout);
        self
    }

    /// Caps the reply length; default: `W`'s (see its `request_body`).
    pub fn with_max_tokens(mut self, max_tokens: Option<u32>) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// The HTTP side: base URL and model name, for transcripts.
    pub(super) fn http(&self) -> &HttpClient {
        &self.http
    }

    /// Sends the ledger to `{base_url}/{W::PATH}` and assembles the
    /// streamed reply. `Ok(None)` when `cancel` fired: a half message is
    /// never returned.
    pub async fn next(
        &self,
        system: &str,
        history: &[Message],
        tools: &[ToolSpecForModel],
        cancel: &CancellationToken,
    ) -> Result<Option<AssistantMessage>, ProviderError> {
        self.next_streaming(system, history, tools, cancel, Asking::default())
            .await
    }

    /// [`Self::next`], telling `on_text` the reply's text as it streams in
    /// and `on_retry` each retry of the request.
    pub async fn next_streaming(
        &self,
        system: &str,
        history: &[Message],
        tools: &[ToolSpecForModel],
        cancel: &CancellationToken,
        asking: Asking,
    ) -> Result<Option<AssistantMessage>, ProviderError> {
        let body = W::request_body(&Request {
            model: self.http.model(),
            system,
            history,
            tools,
            max_tokens: asking.max_tokens.or(self.max_tokens),
            vendor: self.http.is_vendor(),
        });
        let Asking {
            on_text, on_retry, ..
        } = asking;
        let max_reply_bytes = self.max_reply_bytes;
        let content_timeout = self.http.content_timeout();
        self.http
            .post_and_read(W::PATH, &body, cancel, on_retry.as_ref(), |stream| {
                assemble::<W, _, _, _>(stream, on_text.clone(), max_reply_bytes, content_timeout)
            })
            .await
    }
}

/// Builders the wire APIs' unit tests share.
#[cfg(test)]
pub(super) mod test_support {
    use serde_json::Value;

    use super::{Assembler, Request, WireApi};
    use crate::provider::{AssistantMessage, Block, Finish, Message};

    pub(in crate::provider) fn user(text: &str) -> Message {
        Message::prompt(text)
    }

    pub(in crate::provider) fn assistant(blocks: Vec<Block>, finish: Finish) -> Message {
        Message::Assistant(AssistantMessage {
            blocks,
            finish,
            usage: None,
            cut: None,
        })
    }

    pub(in crate::provider) fn text(text: &str) -> Block {
        Block::Text { text: text.into() }
    }

    pub(in crate::provider) fn reasoning(text: &str, signature: Option<&str>) -> Block {
        Block::Reasoning {
            text: text.into(),
            signature: signature.map(Into::into),
        }
    }

    /// `W`'s request for `history` to model `m`, with no system prompt and
    /// no tools.
    pub(in crate::provider) fn body<W: WireApi>(
        history: &[Message],
        max_tokens: Option<u32>,
    ) -> Value {
        W::request_body(&Request {
            model: "m",
            system: "",
            history,
            tools: &[],
            max_tokens,
            vendor: false,
        })
    }

    /// The reply `W`'s assembler makes of `events`, each pushed under its
    /// data's `type` (`message` when it has none, as Chat Completions).
    pub(in crate::provider) fn assembled<W: WireApi>(events: &[Value]) -> AssistantMessage {
        let mut assembler = W::Assembler::default();
        for event in events {
            let kind = event["type"].as_str().unwrap_or("message");
            assembler
                .push(kind, &event.to_string())
                .expect("valid event");
        }
        assembler.finish()
    }

    /// The reply `W` assembles from a whole framed body.
    pub(in crate::provider) async fn assembled_body<W: WireApi>(body: &str) -> AssistantMessage {
        let chunk = Ok::<_, std::convert::Infallible>(body.as_bytes().to_vec());
        super::assemble::<W, _, _, _>(
            futures_util::stream::iter([chunk]),
            None,
            crate::provider::DEFAULT_MAX_REPLY_BYTES,
            crate::provider::http::DEFAULT_CONTENT_TIMEOUT,
        )
        .await
        .expect("a valid stream")
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use serde_json::json;

    use super::*;
    use crate::provider::anthropic::Anthropic;
    use crate::provider::openai::OpenAi;
    use crate::provider::{BLOCK_COST, Cap, ReplyCut};

    /// What `W` assembles of `body` under a cap of `cap`, and the text it
    /// printed on the way.
    async fn capped<W: WireApi>(body: String, cap: u64) -> (AssistantMessage, String) {
        let printed = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&printed);
        let on_text: TextSink = Arc::new(move |text: &str| {
            sink.lock().expect("lock").push_str(text);
        });
        let chunk = Ok::<_, std::convert::Infallible>(body.into_bytes());
        let message = assemble::<W, _, _, _>(
            futures_util::stream::iter([chunk]),
            Some(on_text),
            cap,
            crate::provider::http::DEFAULT_CONTENT_TIMEOUT,
        )
        .await
        .expect("assembled");
        let printed = printed.lock().expect("lock").clone();
        (message, printed)
    }

    fn openai_text(text: &str) -> String {
        format!(
            "data: {}\n\n",
            json!({"choices": [{"index": 0, "delta": {"content": text}}]})
        )
    }

    fn anthropic_text(text: &str) -> String {
        format!(
            "event: content_block_delta\ndata: {}\n\n",
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "text_delta", "text": text}})
        )
    }

    #[tokio::test]
    async fn deltas_crossing_the_cap_mid_character_keep_and_print_whole_characters() {
        // Room for the block and 6 bytes: "é€" is 5, the next "€" does not
        // fit, so the reply ends there, whatever follows.
        let cap = (BLOCK_COST + 6) as u64;
        let cut = Some(ReplyCut {
            cap: Cap::Reply,
            limit_bytes: cap,
            max_reply_bytes: cap,
        });
        let openai = [
            openai_text("é€"),
            openai_text("€a"),
            openai_text("more"),
            "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
                .into(),
            "data: [DONE]\n\n".into(),
        ]
        .concat();
        let start = format!(
            "event: content_block_start\ndata: {}\n\n",
            json!({"type": "content_block_start", "index": 0,
                   "content_block": {"type": "text", "text": ""}})
        );
        let anthropic = [
            start,
            anthropic_text("é€"),
            anthropic_text("€a"),
            anthropic_text("more"),
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}\n\n".into(),
        ]
        .concat();
        for (message, printed) in [
            capped::<OpenAi>(openai, cap).await,
            capped::<Anthropic>(anthropic, cap).await,
        ] {
            assert_eq!(message.text(), "é€");
            assert_eq!(printed, "é€", "what is printed is what is kept");
            assert_eq!((message.finish, message.cut), (Finish::Length, cut));
        }
    }

    #[tokio::test]
    async fn an_event_that_keeps_nothing_is_charged_its_size() {
        // Each empty delta keeps nothing: 20 of them pass a cap of 500
        // bytes where before they were free.
        let empty = "data: {\"choices\":[{\"index\":0,\"delta\":{}}]}\n\n";
        let body = [empty.repeat(20), openai_text("kept")].concat();
        let (message, _) = capped::<OpenAi>(body, 500).await;
        assert_eq!(message.text(), "");
        assert_eq!(message.cut.map(|cut| cut.cap), Some(Cap::Reply));
        // Under a cap with room for them, the text after them is kept.
        let body = [empty.repeat(20), openai_text("kept")].concat();
        let (message, _) = capped::<OpenAi>(body, 4096).await;
        assert_eq!(message.text(), "kept");
    }

    #[tokio::test]
    async fn a_stream_of_comments_ends_at_the_content_timeout() {
        let comments = futures_util::stream::unfold((), |()| async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            Some((
                Ok::<_, std::convert::Infallible>(b": ping\n\n".to_vec()),
                (),
            ))
        });
        let err = assemble::<OpenAi, _, _, _>(
            comments,
            None,
            DEFAULT_MAX_REPLY_BYTES,
            Duration::from_millis(300),
        )
        .await
        .expect_err("no content");
        assert!(
            matches!(err, ProviderError::NoContent { after, .. } if after.as_millis() == 300),
            "{err:?}"
        );
    }

    #[tokio::test]
    async fn a_call_cut_at_the_cap_has_no_arguments_and_is_not_a_tool_use() {
        let open = json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
            "id": "c", "function": {"name": "f", "arguments": "{\"a\": \""}}]}}]});
        let more = json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
            "function": {"arguments": "xxxxxxxxxx\"}"}}]}}]});
        let body = format!("data: {open}\n\ndata: {more}\n\ndata: [DONE]\n\n");
        let (message, _) = capped::<OpenAi>(body, (BLOCK_COST + 12) as u64).await;
        assert_eq!(message.finish, Finish::Length);
        let calls = message.tool_calls();
        assert_eq!(
            (calls[0].arguments, calls[0].arguments_raw),
            (None, "{\"a\": \"xxx")
        );
        // The same stream under the default cap is a whole call.
        let body = format!("data: {open}\n\ndata: {more}\n\ndata: [DONE]\n\n");
        let (message, _) = capped::<OpenAi>(body, DEFAULT_MAX_REPLY_BYTES).await;
        assert_eq!((message.finish, message.cut), (Finish::ToolUse, None));
    }
}
