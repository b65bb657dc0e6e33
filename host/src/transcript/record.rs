//! The session file format: one JSON object per line, tagged by `type`.
//! This is a public format, documented in docs/reference/session-format.md
//! (`suite/docs_format.rs` checks that it names every field written here);
//! changing the meaning of a field or removing one needs a new
//! [`FORMAT_VERSION`]. Adding an optional field or a new `type` does not:
//! readers skip types they do not know.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agent::{Delivery, Execution, Message, StopRecord};

/// The format this toolhost writes and the newest it reads.
pub const FORMAT_VERSION: u32 = 1;

/// One line of a session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// The first line, and again at the start of each resumed run.
    SessionStart(SessionStart),
    /// A message appended to the ledger: the user's prompt, an assistant
    /// reply (all its blocks, reasoning included) or the tool results sent
    /// back. The ledger is exactly these messages, in order.
    Message(MessageRecord),
    /// A tool call is about to run. Written before the plugin is called, so
    /// a call with a start and no end was running when the process died.
    ToolExecutionStart(ExecutionStart),
    /// A tool call finished.
    ToolExecutionEnd(ExecutionEnd),
    /// A model request failed and is retried.
    Retry(RetryRecord),
    /// The user queued a message while the run went on.
    InputQueued(InputRecord),
    /// The loop took a queued message; the `message` record that follows
    /// holds it as a user message with its `delivery`.
    InputDelivered(InputRecord),
    /// A queued message went back to the user undelivered.
    InputReturned(InputRecord),
    /// Something the user was warned of during the run.
    Warning(WarningRecord),
    /// The user answered a grant a refused call asked for.
    Grant(GrantRecord),
    /// Old tool results were set aside to fit the context window; the
    /// ledger rebuilt on resume has the stubs in their place.
    Compaction(CompactionRecord),
    /// The run ended.
    Stop(StopEntry),
    /// A line of a type this toolhost does not know (written by a newer
    /// one in the same format version); skipped.
    #[serde(other)]
    Unknown,
}

/// What a run started with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionStart {
    /// The session file format ([`FORMAT_VERSION`]).
    pub format: u32,
    /// Set by [`super::SessionStore`] when the file is opened.
    pub id: String,
    /// RFC 3339 UTC time; set with the id.
    pub at: String,
    /// The toolhost version that wrote this run.
    pub toolhost: String,
    /// Whether this run continued an earlier one (`--resume`).
    #[serde(default)]
    pub resumed: bool,
    pub workspace: String,
    /// `openai`, `anthropic` or `scripted`.
    pub provider: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    pub system_prompt: String,
    pub max_turns: u32,
    /// Results longer than this reached the model as head + tail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_budget_bytes: Option<u64>,
    pub tools: Vec<ToolInfo>,
    /// The id of the file this one continues: an MCP server's audit moves
    /// to a new file when one reaches its cap ([`super::audit`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continues: Option<String>,
    /// The project's instructions file the system prompt holds, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_instructions: Option<InstructionsInfo>,
    /// The model's context window, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<ContextWindowInfo>,
    /// `[model.prices]` when the user set them (`sessions show` costs the
    /// session's tokens with them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prices: Option<crate::provider::prices::Prices>,
}

/// A model's context window and who said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextWindowInfo {
    pub tokens: u64,
    /// `configured` (`--context-window`, `[model] context_window`) or
    /// `server` (what the server said of itself).
    pub source: WindowSource,
}

/// Where a context window's size came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowSource {
    Configured,
    Server,
}

/// Which instructions file went into the system prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstructionsInfo {
    /// `AGENTS.md` or `CLAUDE.md`.
    pub file: String,
    /// The sha256 of the whole file.
    pub sha256: String,
    pub bytes: u64,
    /// Whether only its first 32 KiB reached the model.
    #[serde(default)]
    pub cut: bool,
}

impl SessionStart {
    /// The first line of a file that records calls of `sandbox`'s tools
    /// for `provider`: no model, no turns. The writer fills in the id and
    /// the time; a run adds its model and budget.
    pub fn of(sandbox: &crate::sandbox::Sandbox, provider: &str, system_prompt: &str) -> Self {
        SessionStart {
            format: super::FORMAT_VERSION,
            id: String::new(),
            at: String::new(),
            toolhost: env!("CARGO_PKG_VERSION").into(),
            resumed: false,
            workspace: sandbox.workspace().display().to_string(),
            provider: provider.into(),
            model: None,
            base_url: None,
            system_prompt: system_prompt.into(),
            max_turns: 0,
            result_budget_bytes: None,
            tools: sandbox.tools().iter().map(ToolInfo::of).collect(),
            continues: None,
            project_instructions: None,
            context_window: None,
            prices: None,
        }
    }
}

/// A tool offered in a run, with what it was allowed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    /// `builtin:<name>` or the plugin file's path.
    pub plugin: String,
    pub plugin_sha256: String,
    pub read_only: bool,
    pub grants: Vec<GrantInfo>,
    /// Its network grants, as written (`https://docs.rs`); none before
    /// network access existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub net: Vec<String>,
    /// What its other capabilities give it, as `toolhost tools` says it
    /// (`environment: HOME`); none before there were any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more: Vec<String>,
    pub limits: LimitsInfo,
}

impl ToolInfo {
    /// What the session file records of a loaded tool.
    pub fn of(tool: &crate::sandbox::Tool) -> ToolInfo {
        let limits = &tool.policy.limits;
        let reach = tool.reach();
        ToolInfo {
            name: tool.name.clone(),
            plugin: tool.plugin.to_string(),
            plugin_sha256: tool.plugin_sha256.clone(),
            read_only: tool.read_only,
            grants: reach
                .dirs
                .iter()
                .map(|(path, access)| GrantInfo {
                    path: (*path).to_owned(),
                    access: access.grant_label().into(),
                })
                .collect(),
            net: reach.hosts.iter().map(|h| (*h).to_owned()).collect(),
            more: reach.more.clone(),
            limits: LimitsInfo {
                fuel: limits.fuel,
                timeout_ms: u64::try_from(limits.timeout.as_millis()).unwrap_or(u64::MAX),
                memory_bytes: limits.memory,
                output_bytes: limits.output as u64,
                write_bytes: limits.write,
            },
        }
    }
}

impl ToolInfo {
    /// What the recorded tool could reach, described as a loaded one is
    /// (chat's `/tools` reads it from the session). An access label this
    /// version does not know reads as the narrower `read-only`.
    pub fn reach(&self) -> crate::sandbox::Reach<'_> {
        use crate::sandbox::Access;
        crate::sandbox::Reach {
            tool: &self.name,
            read_only: self.read_only,
            dirs: self
                .grants
                .iter()
                .map(|g| {
                    let access = if g.access == Access::Write.grant_label() {
                        Access::Write
                    } else {
                        Access::Read
                    };
                    (g.path.as_str(), access)
                })
                .collect(),
            hosts: self.net.iter().map(String::as_str).collect(),
            more: self.more.clone(),
        }
    }
}

/// A directory a tool was granted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantInfo {
    /// As the tool sees it (relative to the workspace, or absolute).
    pub path: String,
    /// `read-only` or `read-write`.
    pub access: String,
}

/// A tool's sandbox limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitsInfo {
    pub fuel: u64,
    pub timeout_ms: u64,
    pub memory_bytes: u64,
    pub output_bytes: u64,
    /// Bytes a call may write to files; absent in files written before the
    /// write budget existed.
    #[serde(default)]
    pub write_bytes: u64,
}

/// A ledger message with when it was recorded and, for assistant replies,
/// how long the model took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageRecord {
    pub at: String,
    pub message: Message,
    /// The run's turn an assistant reply belongs to (from 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u32>,
    /// From the request to the first streamed text of the reply; absent
    /// when the reply streamed no text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<u64>,
    /// From the request to the whole reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// Tool results made up on resume for calls the crashed run left
    /// without a result.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recovered: bool,
}

/// A tool call about to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecutionStart {
    pub at: String,
    pub call_id: String,
    pub tool: String,
    pub arguments: Value,
}

/// A finished tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutionEnd {
    pub at: String,
    pub call_id: String,
    pub tool: String,
    pub is_error: bool,
    pub duration_ms: u64,
    /// Bytes of the whole result.
    pub output_bytes: u64,
    /// The result as the model sees it (cut when over the budget).
    pub text: String,
    /// `text` is not the whole result: an MCP call's audit keeps its first
    /// 4 KiB (the client read it whole; `output_bytes` counts it all), and
    /// a session file past its results budget keeps a note instead.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub text_cut: bool,
    /// Where the whole result was saved when it was cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved_to: Option<String>,
    /// Outcome kind, fuel, peak memory and the plugin's captured
    /// stdout/stderr (each at most 8 KiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<Execution>,
}

/// A retried model request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetryRecord {
    pub at: String,
    pub attempt: u32,
    pub wait_ms: u64,
    pub reason: String,
}

/// A compaction: why, the estimated size of the next request before and
/// after, each result set aside (by its message's index in the ledger and
/// its call id) with the stub that replaced it, and, when the model
/// summarised, the first entry kept (the entries before it, the stubs in
/// place, became the summary) and the summary request's usage. A reader
/// applies it to the ledger as it has rebuilt it so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactionRecord {
    pub at: String,
    pub reason: crate::agent::CompactionReason,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub masked: Vec<crate::agent::MaskedResult>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_kept: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::provider::Usage>,
}

/// A grant asked for in a session and the user's answer. `--resume`
/// applies the `session` ones whose `seal` is the user's
/// ([`super::seal`]); the others are the record of what was asked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantRecord {
    pub at: String,
    #[serde(flatten)]
    pub permit: crate::sandbox::Permit,
    pub answer: crate::agent::Answer,
    /// The user's key's seal of the grant in this session; empty when
    /// there was no key (then `--resume` does not apply it).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub seal: String,
}

/// A warning given during a run (a server that cut the prompt).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarningRecord {
    pub at: String,
    pub message: String,
}

/// A message the user queued, as it was queued, delivered or given back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputRecord {
    pub at: String,
    /// `steer` or `follow_up`.
    pub delivery: Delivery,
    pub text: String,
}

/// The end of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopEntry {
    pub at: String,
    pub stop: StopRecord,
    /// The id of the file the session goes on in (an MCP server's audit
    /// at its cap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continued_in: Option<String>,
}

/// The current time as RFC 3339 UTC with milliseconds.
pub(super) fn now() -> String {
    humantime::format_rfc3339_millis(std::time::SystemTime::now()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_recorded_tool_describes_its_reach_as_a_loaded_one_does() {
        let grant = |path: &str, access: &str| GrantInfo {
            path: path.into(),
            access: access.into(),
        };
        let tool = ToolInfo {
            name: "w".into(),
            plugin: "builtin:write_file".into(),
            plugin_sha256: String::new(),
            read_only: false,
            grants: vec![grant(".", "read-only"), grant("out", "read-write")],
            net: vec!["https://docs.rs".into()],
            more: Vec::new(),
            limits: LimitsInfo {
                fuel: 1,
                timeout_ms: 1,
                memory_bytes: 1,
                output_bytes: 1,
                write_bytes: 1,
            },
        };
        assert_eq!(
            tool.reach().line(),
            "w: reads ., out; writes out; reaches https://docs.rs"
        );
        // A label from a later version reads as the narrower access.
        let future = ToolInfo {
            grants: vec![grant("x", "append-only")],
            net: vec![],
            ..tool
        };
        assert_eq!(future.reach().line(), "w: reads x; writes nothing");
    }

    #[test]
    fn unknown_types_are_skipped_not_errors() {
        let record: Record =
            serde_json::from_value(json!({"type": "from_the_future", "x": 1})).expect("parse");
        assert_eq!(record, Record::Unknown);
    }

    #[test]
    fn records_round_trip_with_a_type_tag() {
        let record = Record::ToolExecutionStart(ExecutionStart {
            at: now(),
            call_id: "c1".into(),
            tool: "read_file".into(),
            arguments: json!({"path": "a"}),
        });
        let line = serde_json::to_string(&record).expect("serialise");
        assert!(
            line.starts_with(r#"{"type":"tool_execution_start","#),
            "{line}"
        );
        assert_eq!(
            serde_json::from_str::<Record>(&line).expect("parse"),
            record
        );
    }
}
