//! [`Model`], the wire API a run talks to, picked at start-up: one enum
//! over the clients, each call passed to the one chosen. Its own module so
//! that `provider`'s `mod.rs` keeps to re-exports.

use super::{
    Asking, AssistantMessage, Message, ProviderError, ToolSpecForModel, anthropic, openai, scripted,
};

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

    /// Caps each reply at `max_reply_bytes` (see [`ReplyBudget`](super::ReplyBudget)); the
    /// scripted model has nothing to cap. Default
    /// [`DEFAULT_MAX_REPLY_BYTES`](super::DEFAULT_MAX_REPLY_BYTES).
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
    /// [`http::DEFAULT_CONTENT_TIMEOUT`](super::http::DEFAULT_CONTENT_TIMEOUT).
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
