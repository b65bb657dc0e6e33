//! What the loop tells front ends while it runs. Events only mirror what
//! happens; the ledger stays the source of truth.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::Execution;
use super::context::{CompactionReason, MaskedResult};
use super::ledger::{Delivery, Message};
use super::stop::StopRecord;
use crate::provider::Usage;
use crate::sandbox::Permit;

/// Receives every event, from whichever task emits it (read-only tools run
/// concurrently), so it must be cheap and must not block.
pub type EventSink = Arc<dyn Fn(&AgentEvent) + Send + Sync>;

/// Where a run's events go: one sink, or nowhere. Each step of the loop
/// holds it, so a step can tell what it does without the loop.
#[derive(Clone, Default)]
pub(super) struct Events(Option<EventSink>);

impl Events {
    pub(super) fn new(sink: EventSink) -> Self {
        Events(Some(sink))
    }

    /// The sink, for forwarders built only when someone listens.
    pub(super) fn sink(&self) -> Option<&EventSink> {
        self.0.as_ref()
    }

    pub(super) fn emit(&self, event: AgentEvent) {
        if let Some(sink) = &self.0 {
            sink(&event);
        }
    }

    /// Appends `message` to `ledger`, told as a `message` event first.
    pub(super) fn push(&self, ledger: &mut Vec<Message>, message: Message) {
        if let Some(sink) = &self.0 {
            sink(&AgentEvent::Message {
                message: message.clone(),
            });
        }
        ledger.push(message);
    }
}

/// How the user answered a grant asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// This call is run again with the grant; the next one asks again.
    Once,
    /// Every call of the session runs with it, recorded in the session.
    Session,
    /// The model reads the refusal.
    Deny,
}

/// One event of a run. `tool_execution_start`/`_end` pairs are keyed by
/// `call_id`; a call that is not executed (max turns, truncated arguments,
/// cancelled before it ran) has neither, its result is only in the
/// `message` event of the tool results.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    AgentStart,
    /// A model request is about to be made (`turn` counts from 1).
    TurnStart {
        turn: u32,
    },
    /// The model request of the current turn failed and is sent again
    /// after `wait_ms` (`attempt` counts retries from 1; `reason` is the
    /// failure's message). The model never sees retries.
    ModelRetry {
        attempt: u32,
        wait_ms: u64,
        reason: String,
    },
    /// A piece of the assistant's reply text, as it streams in. The
    /// `message` event that follows holds the whole reply.
    MessageDelta {
        text: String,
    },
    /// A message was appended to the ledger (user, assistant or tool results).
    Message {
        message: Message,
    },
    ToolExecutionStart {
        call_id: String,
        tool: String,
        arguments: Value,
    },
    /// A progress message from the running tool (its `host.progress`).
    ToolExecutionUpdate {
        call_id: String,
        tool: String,
        message: String,
    },
    /// A tool call ended. `text` is the result as the model sees it (before
    /// any loop-detection warning); the other fields are for transcripts.
    ToolExecutionEnd {
        call_id: String,
        tool: String,
        is_error: bool,
        duration_ms: u64,
        text: String,
        /// Bytes of the whole result, before it was cut to the model budget.
        output_bytes: u64,
        /// Where the whole result was saved when it was cut.
        #[serde(skip_serializing_if = "Option::is_none")]
        saved_to: Option<String>,
        /// What the sandbox measured (absent for runners that measure nothing).
        #[serde(skip_serializing_if = "Option::is_none")]
        execution: Option<Execution>,
    },
    /// A call was refused for a grant the user could give, and the user is
    /// asked for it (a chat's prompt, an MCP client's elicitation).
    GrantAsked {
        call_id: String,
        permit: Permit,
        /// For a lift: why what it opens is protected.
        why: Option<String>,
    },
    /// The user answered: the call runs again with the grant (`once`), the
    /// session holds it from now on (`session`), or the refusal stands.
    GrantAnswered {
        call_id: String,
        permit: Permit,
        answer: Answer,
    },
    /// The user queued a message while the loop ran; it waits in the inbox
    /// until the loop takes it.
    InputQueued {
        delivery: Delivery,
        text: String,
    },
    /// The loop took a queued message; the `message` event that follows
    /// appends it to the ledger.
    InputDelivered {
        delivery: Delivery,
        text: String,
    },
    /// A queued message went back to the user undelivered (the turn was
    /// interrupted).
    InputReturned {
        delivery: Delivery,
        text: String,
    },
    /// A compaction begins (module `compaction`): old tool results are
    /// set aside and, when `summarising`, the model is asked to summarise
    /// the conversation so far. `tokens_before` estimates the next request.
    CompactionStart {
        reason: CompactionReason,
        tokens_before: u64,
        summarising: bool,
    },
    /// A compaction ended: the results set aside (indices in the ledger as
    /// it was), and when the model summarised, the summary that replaced
    /// the entries before `first_kept`, and its request's usage.
    CompactionEnd {
        reason: CompactionReason,
        tokens_before: u64,
        tokens_after: u64,
        masked: Vec<MaskedResult>,
        #[serde(skip_serializing_if = "Option::is_none")]
        first_kept: Option<usize>,
        #[serde(skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
    },
    /// Something the user should know that does not stop the run: a
    /// server that cut the prompt without saying so.
    Warning {
        message: String,
    },
    /// The turn begun by the last `turn_start` is over.
    TurnEnd {
        turn: u32,
    },
    AgentEnd {
        stop: StopRecord,
    },
}

impl AgentEvent {
    /// The tokens a model request of this event used: a reply's, or a
    /// compaction's summary request's. Front ends sum these.
    pub fn usage(&self) -> Option<&Usage> {
        match self {
            AgentEvent::Message {
                message: Message::Assistant(reply),
            } => reply.usage.as_ref(),
            AgentEvent::CompactionEnd { usage, .. } => usage.as_ref(),
            _ => None,
        }
    }
}
