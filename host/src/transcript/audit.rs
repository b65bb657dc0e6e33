//! A session file for tool calls that no agent loop made: `toolhost mcp`
//! serves the tools to another agent, and records each of its calls with
//! the same `tool_execution_start` / `tool_execution_end` records as
//! `toolhost run`, so `toolhost sessions` lists and shows them.
//!
//! It writes only what it is told; it runs nothing and knows no protocol.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::Value;

use super::record::{ExecutionEnd, ExecutionStart, Record, StopEntry, ToolInfo, now};
use super::{FORMAT_VERSION, SessionStart, SessionStore, SessionWriter};
use crate::agent::{Execution, StopReason, StopRecord};
use crate::sandbox::{CallReport, Sandbox};

/// An open audit session: one file, every call's start and end.
pub struct AuditLog {
    writer: SessionWriter,
    calls: AtomicU64,
}

/// Who the calls are made for, recorded in the session's first line.
pub struct AuditStart<'a> {
    /// Takes the place of the model's provider (`mcp`).
    pub provider: &'a str,
    /// What the tools' user was told about them (the MCP server's
    /// instructions); recorded as the session's system prompt.
    pub instructions: &'a str,
}

impl AuditLog {
    /// Creates a new session file in `store` listing `sandbox`'s tools.
    pub fn create(
        store: &SessionStore,
        sandbox: &Sandbox,
        start: AuditStart<'_>,
    ) -> std::io::Result<AuditLog> {
        let record = SessionStart {
            format: FORMAT_VERSION,
            id: String::new(),
            at: String::new(),
            toolhost: env!("CARGO_PKG_VERSION").into(),
            resumed: false,
            workspace: sandbox.workspace().display().to_string(),
            provider: start.provider.into(),
            model: None,
            base_url: None,
            system_prompt: start.instructions.into(),
            max_turns: 0,
            result_budget_bytes: None,
            tools: sandbox.tools().iter().map(ToolInfo::of).collect(),
        };
        Ok(AuditLog {
            writer: store.create(record)?,
            calls: AtomicU64::new(0),
        })
    }

    /// The session's id (for `toolhost sessions show`).
    pub fn id(&self) -> &str {
        self.writer.id()
    }

    pub fn path(&self) -> &std::path::Path {
        self.writer.path()
    }

    /// The first write error, if writing ever failed.
    pub fn error(&self) -> Option<String> {
        self.writer.error()
    }

    /// A call is about to run. Written before the plugin is called.
    pub fn call_started(&self, call_id: &str, tool: &str, arguments: &Value) {
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.writer
            .record(&Record::ToolExecutionStart(ExecutionStart {
                at: now(),
                call_id: call_id.into(),
                tool: tool.into(),
                arguments: arguments.clone(),
            }));
    }

    /// A call ended with `report`; `text` is what the client read.
    pub fn call_ended(
        &self,
        call_id: &str,
        tool: &str,
        report: &CallReport,
        text: &str,
        took: Duration,
    ) {
        self.writer.record(&Record::ToolExecutionEnd(ExecutionEnd {
            at: now(),
            call_id: call_id.into(),
            tool: tool.into(),
            is_error: report.is_error(),
            duration_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
            output_bytes: text.len() as u64,
            text: text.into(),
            saved_to: None,
            execution: Some(Execution::from_report(report)),
        }));
    }

    /// The server is stopping: `why` (the client disconnected, ...) ends
    /// the session with a `completed` stop record.
    pub fn close(&self, why: &str) {
        let calls = self.calls.load(Ordering::Relaxed);
        self.writer.record(&Record::Stop(StopEntry {
            at: now(),
            stop: StopRecord {
                reason: StopReason::Completed,
                turns: 0,
                truncated: false,
                evidence: format!(
                    "{why} after {calls} tool call{}",
                    if calls == 1 { "" } else { "s" }
                ),
            },
        }));
    }
}
