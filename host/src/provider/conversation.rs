//! The conversation as every wire API sees it: the ledger's messages and
//! the tools offered. Defined here, below the agent, so each provider can
//! translate it into its own request body without knowing about the loop.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::AssistantMessage;

/// One entry of the ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// The user's prompt, or a message the user queued while the loop ran
    /// (`delivery` says how it was delivered; none for a prompt).
    User {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delivery: Option<Delivery>,
    },
    /// One whole assistant reply.
    Assistant(AssistantMessage),
    /// The results of every tool call of the assistant message right
    /// before it, in the order of the calls, exactly one per call.
    ToolResults { results: Vec<ToolResultEntry> },
}

impl Message {
    /// A prompt: a user message not queued while a run went on.
    pub fn prompt(text: impl Into<String>) -> Self {
        Message::User {
            text: text.into(),
            delivery: None,
        }
    }
}

/// How a message the user queued while the loop ran reached the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// Before the next model request, after the current batch's results.
    Steer,
    /// When the model would otherwise have ended the run.
    FollowUp,
}

impl Delivery {
    pub fn as_str(self) -> &'static str {
        match self {
            Delivery::Steer => "steer",
            Delivery::FollowUp => "follow_up",
        }
    }
}

/// The answer to one tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResultEntry {
    /// The id of the call this answers.
    pub call_id: String,
    /// The tool's name, repeated so a transcript reads on its own.
    pub tool: String,
    /// The text the model sees.
    pub text: String,
    /// Whether the model sees it as an error (`isError`).
    pub is_error: bool,
}

/// A tool as the model is told about it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpecForModel {
    pub name: String,
    pub description: String,
    /// The JSON Schema of the tool's input.
    pub input_schema: Value,
    /// Read-only tools may run concurrently with their read-only neighbours.
    pub read_only: bool,
}
