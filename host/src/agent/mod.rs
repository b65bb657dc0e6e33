//! The agent loop: sends the ledger to a model, runs the tool calls it asks
//! for, records everything in the ledger and ends every run with one
//! [`StopRecord`]
//! (docs/contributing/decisions.md#the-agent-loop-and-its-stop-record).
//!
//! It knows models only through [`ModelClient`] and tools only through
//! [`ToolRunner`], so it never touches HTTP or wasm itself (the one adapter,
//! `impl ToolRunner for Sandbox`, lives here because the agent may import
//! the sandbox, never the reverse). It never prints: front ends consume
//! [`AgentEvent`]s.

mod approval;
mod batch;
mod budgets;
mod compaction;
mod config;
mod context;
mod events;
mod inbox;
mod ledger;
mod long_output;
mod loop_detect;
mod prompt;
mod request;
mod run;
mod steering;
mod stop;
mod submissions;
mod summary;
#[cfg(test)]
mod testing;

use std::future::Future;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use approval::{Answering, Approver, AskedFor, Granting, SessionGrants, run_asking};
pub use batch::{
    CALLS_PER_REPLY, INTERRUPTED, NOT_EXECUTED_MAX_TURNS, NOT_EXECUTED_TRUNCATED, over_the_cap,
};
pub use config::LoopConfig;
pub use context::{CompactionReason, MaskedResult, compaction_line, forget_usage, put_stubs_back};
pub use events::{AgentEvent, Answer, EventSink};
pub use inbox::{DeliveryMode, Inbox, InboxFull, Queued};
pub use ledger::{CallRef, Delivery, Message, ToolResultEntry, tool_calls};
pub use long_output::{
    DEFAULT_OUTPUTS_PER_RUN, DEFAULT_OUTPUTS_PER_WORKSPACE, DEFAULT_RESULT_BUDGET, ResultBudget,
    SavedOutputs,
};
pub use prompt::default_system_prompt;
pub use run::AgentLoop;
pub use stop::{StopReason, StopRecord};
pub use submissions::{PromptEnd, Refused, Submission, run_prompt};
pub use summary::{SUMMARY_PREFIX, cut_and_summarise};

pub use crate::provider::ToolSpecForModel;
use crate::provider::{Asking, Model};
use crate::provider::{AssistantMessage, ProviderError};
use crate::sandbox::{Ask, CallOptions, Permit, PermitKind, ProgressSink, Sandbox};

/// What one tool call produced, as the model will read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    pub text: String,
    pub is_error: bool,
    /// What the runner measured, for transcripts; `None` from runners that
    /// measure nothing (test doubles).
    pub execution: Option<Execution>,
    /// The grant that would have let the call past its refusal, when the
    /// user may be asked for it.
    pub ask: Option<Ask>,
}

impl ToolResult {
    /// A result with no measurements.
    pub fn new(text: impl Into<String>, is_error: bool) -> Self {
        ToolResult {
            text: text.into(),
            is_error,
            execution: None,
            ask: None,
        }
    }
}

/// How a sandboxed call went, beyond its text: `tool_execution_end` events
/// and the session file carry it, the model never sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Execution {
    /// `ok` or the fault's kind (`out_of_fuel`, `timeout`, `denied`, ...).
    pub outcome: String,
    pub fuel_used: u64,
    pub peak_memory: u64,
    /// The plugin's stdout and stderr (lossy UTF-8), each cut to
    /// [`Execution::CAPTURE_KEPT`] bytes.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stdout: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stderr: String,
    /// Bytes of stdout/stderr not kept (over the sandbox's capture limit or
    /// [`Execution::CAPTURE_KEPT`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub captured_dropped: u64,
    /// Every network request the call made (URL without its query), with
    /// its status or error and whether the host refused it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requests: Vec<crate::sandbox::NetRequest>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Execution {
    /// Bytes of each of stdout and stderr kept per call.
    pub const CAPTURE_KEPT: usize = 8 * 1024;

    /// The measurements of a sandboxed call, as recorded.
    pub fn from_report(report: &crate::sandbox::CallReport) -> Self {
        let mut dropped = report.captured.dropped;
        let mut keep = |bytes: &[u8]| {
            let kept = bytes.len().min(Self::CAPTURE_KEPT);
            dropped += (bytes.len() - kept) as u64;
            String::from_utf8_lossy(&bytes[..kept]).into_owned()
        };
        let stdout = keep(&report.captured.stdout);
        let stderr = keep(&report.captured.stderr);
        Execution {
            outcome: report.outcome.kind().to_owned(),
            fuel_used: report.stats.fuel_used,
            peak_memory: report.stats.peak_memory,
            stdout,
            stderr,
            captured_dropped: dropped,
            requests: report.requests.clone(),
        }
    }
}

/// Why the model produced no message. Retrying transient failures is the
/// client's job; an error reaching the loop ends the run with
/// [`StopReason::Error`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The request failed (connection, HTTP status, retries exhausted) or
    /// its stream could not be read or understood.
    #[error(transparent)]
    Provider(#[from] ProviderError),
}

/// A model the loop can ask for the next assistant message.
pub trait ModelClient: Sync {
    /// Sends the whole ledger and returns the assembled reply. `Ok(None)`
    /// means `cancel` fired mid-stream: the half message is dropped, never
    /// returned. `asking` says who hears the reply's text and each retry
    /// (retrying is the client's job), and may cap this reply's tokens.
    fn next(
        &self,
        system: &str,
        history: &[Message],
        tools: &[ToolSpecForModel],
        cancel: &CancellationToken,
        asking: Asking,
    ) -> impl Future<Output = Result<Option<AssistantMessage>, ModelError>> + Send;
}

/// The tools the loop can run.
pub trait ToolRunner: Sync {
    /// The tools to offer the model, in a stable order.
    fn specs(&self) -> Vec<ToolSpecForModel>;

    /// Runs one call. Never fails: every problem is an `is_error` result.
    /// `progress` receives the tool's progress messages (for the user's
    /// screen, never the model); `permits` are what the user granted in
    /// the session (the tool runs with its own).
    fn call(
        &self,
        name: &str,
        arguments: &Value,
        cancel: &CancellationToken,
        progress: Option<ProgressSink>,
        permits: Arc<[Permit]>,
    ) -> impl Future<Output = ToolResult> + Send;

    /// A grant the user typed (`/allow bash=src`), checked as the same
    /// flag would be; why not, in words after "cannot allow it: ".
    /// Runners that are not a sandbox grant nothing.
    fn permit(&self, tool: &str, kind: PermitKind, target: &str) -> Result<Vec<Permit>, String> {
        let _ = (tool, kind, target);
        Err("these tools take no grants".into())
    }
}

impl<M: ModelClient> ModelClient for &M {
    fn next(
        &self,
        system: &str,
        history: &[Message],
        tools: &[ToolSpecForModel],
        cancel: &CancellationToken,
        asking: Asking,
    ) -> impl Future<Output = Result<Option<AssistantMessage>, ModelError>> + Send {
        (**self).next(system, history, tools, cancel, asking)
    }
}

impl<T: ToolRunner> ToolRunner for &T {
    fn specs(&self) -> Vec<ToolSpecForModel> {
        (**self).specs()
    }

    fn call(
        &self,
        name: &str,
        arguments: &Value,
        cancel: &CancellationToken,
        progress: Option<ProgressSink>,
        permits: Arc<[Permit]>,
    ) -> impl Future<Output = ToolResult> + Send {
        (**self).call(name, arguments, cancel, progress, permits)
    }

    fn permit(&self, tool: &str, kind: PermitKind, target: &str) -> Result<Vec<Permit>, String> {
        (**self).permit(tool, kind, target)
    }
}

impl ModelClient for Model {
    async fn next(
        &self,
        system: &str,
        history: &[Message],
        tools: &[ToolSpecForModel],
        cancel: &CancellationToken,
        asking: Asking,
    ) -> Result<Option<AssistantMessage>, ModelError> {
        Model::next(self, system, history, tools, cancel, asking)
            .await
            .map_err(ModelError::Provider)
    }
}

impl ToolRunner for Sandbox {
    fn specs(&self) -> Vec<ToolSpecForModel> {
        self.tools()
            .iter()
            .map(|tool| ToolSpecForModel {
                name: tool.name.clone(),
                description: tool.description.clone(),
                input_schema: tool.input_schema.clone(),
                read_only: tool.read_only,
            })
            .collect()
    }

    async fn call(
        &self,
        name: &str,
        arguments: &Value,
        cancel: &CancellationToken,
        progress: Option<ProgressSink>,
        permits: Arc<[Permit]>,
    ) -> ToolResult {
        let options = CallOptions {
            cancel: cancel.clone(),
            progress,
            permits,
        };
        let report = Sandbox::call(self, name, &arguments.to_string(), &options).await;
        ToolResult {
            text: report.model_text(name),
            is_error: report.is_error(),
            execution: Some(Execution::from_report(&report)),
            ask: report.ask,
        }
    }

    fn permit(&self, tool: &str, kind: PermitKind, target: &str) -> Result<Vec<Permit>, String> {
        Sandbox::permit(self, tool, kind, target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::SandboxOptions;
    use serde_json::json;

    #[tokio::test]
    async fn the_sandbox_is_a_tool_runner() {
        let dir = tempfile::tempdir().expect("temp dir");
        let workspace = dir.path().canonicalize().expect("canonical workspace");
        std::fs::write(workspace.join("a.txt"), "hello\n").expect("write file");
        let mut options = SandboxOptions::read_only(workspace);
        // Inside the target directory, so only the first run compiles.
        options.cache_dir = Some(std::path::Path::new(env!("OUT_DIR")).join("agent-test-cache"));
        let sandbox = Sandbox::load(options).await.expect("sandbox loads");
        let specs = ToolRunner::specs(&sandbox);
        let read_file = specs
            .iter()
            .find(|s| s.name == "read_file")
            .expect("read_file is offered");
        assert!(read_file.read_only);

        let cancel = CancellationToken::new();
        let ok = ToolRunner::call(
            &sandbox,
            "read_file",
            &json!({"path": "a.txt"}),
            &cancel,
            None,
            Arc::from([]),
        )
        .await;
        assert!(!ok.is_error, "{}", ok.text);
        assert!(ok.text.contains("hello"), "{}", ok.text);
        let execution = ok.execution.expect("the sandbox measures its calls");
        assert_eq!(execution.outcome, "ok");
        assert!(execution.fuel_used > 0);
        assert!(execution.peak_memory > 0);

        let unknown =
            ToolRunner::call(&sandbox, "rm", &json!({}), &cancel, None, Arc::from([])).await;
        assert!(unknown.is_error);
        assert_eq!(
            unknown.execution.map(|e| e.outcome).as_deref(),
            Some("unknown_tool")
        );
        assert!(
            unknown
                .text
                .starts_with("error: there is no tool named `rm`"),
            "{}",
            unknown.text
        );
    }
}
