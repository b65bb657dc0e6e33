//! What the loop tells front ends while it runs. Events only mirror what
//! happens; the ledger stays the source of truth.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::ledger::Message;
use super::stop::StopRecord;

/// Receives every event, from whichever task emits it (read-only tools run
/// concurrently), so it must be cheap and must not block.
pub type EventSink = Arc<dyn Fn(&AgentEvent) + Send + Sync>;

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
    ToolExecutionEnd {
        call_id: String,
        tool: String,
        is_error: bool,
        duration_ms: u64,
    },
    /// The turn begun by the last `turn_start` is over.
    TurnEnd {
        turn: u32,
    },
    AgentEnd {
        stop: StopRecord,
    },
}
