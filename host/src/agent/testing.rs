//! What the loop's tests share: a scripted model, fake tools, and helpers
//! to build replies, run the loop and check its invariants.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::batch::error_result;
use super::config::LoopConfig;
use super::inbox::{DeliveryMode, Inbox};
use super::ledger::{Delivery, Message, ToolResultEntry, tool_calls};
use super::run::AgentLoop;
use super::stop::{StopReason, StopRecord};
use super::{ModelClient, ModelError, ToolResult, ToolRunner, ToolSpecForModel};
use crate::provider::{Asking, AssistantMessage, Block, Finish, ProviderError};

/// What the scripted model does on one request.
#[derive(Debug, Clone)]
pub(super) enum Reply {
    Message(AssistantMessage),
    /// Cancels the token and returns `None`, as a client cancelled
    /// mid-stream does.
    CancelMidStream,
    /// An HTTP 500 whose body is this text, as the client reports it
    /// once its retries are spent.
    Error(String),
}

pub(super) fn server_error(body: &str) -> ProviderError {
    ProviderError::Status {
        provider: "openai",
        url: "http://model.test/v1/chat/completions".into(),
        status: 500,
        retry_after: None,
        body: body.into(),
    }
}

/// What the scripted model answered one request with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Answer {
    Message,
    Cancelled,
    Failed,
}

/// Replies from a queue (a plain "done" once it is empty) and records
/// every history it was sent, what it answered, and whether `cancel` had
/// fired by then.
#[derive(Default)]
pub(super) struct ScriptedModel {
    pub(super) replies: Mutex<VecDeque<Reply>>,
    pub(super) histories: Mutex<Vec<Vec<Message>>>,
    pub(super) answers: Mutex<Vec<Answer>>,
    pub(super) requests_after_cancel: AtomicUsize,
    /// Cancel the token right after returning the n-th reply (0-based).
    pub(super) cancel_after_reply: Option<usize>,
    /// Messages the user queues while the n-th request (0-based) is
    /// being answered.
    pub(super) queue_at_request: Vec<(usize, Delivery, String)>,
    pub(super) inbox: Option<Inbox>,
}

impl ScriptedModel {
    pub(super) fn new(replies: impl IntoIterator<Item = Reply>) -> Self {
        ScriptedModel {
            replies: Mutex::new(replies.into_iter().collect()),
            ..ScriptedModel::default()
        }
    }

    pub(super) fn requests(&self) -> usize {
        self.histories.lock().expect("lock").len()
    }
}

impl ModelClient for ScriptedModel {
    async fn next(
        &self,
        _system: &str,
        history: &[Message],
        _tools: &[ToolSpecForModel],
        cancel: &CancellationToken,
        _asking: Asking,
    ) -> Result<Option<AssistantMessage>, ModelError> {
        if cancel.is_cancelled() {
            self.requests_after_cancel.fetch_add(1, Ordering::SeqCst);
        }
        let index = {
            let mut histories = self.histories.lock().expect("lock");
            histories.push(history.to_vec());
            histories.len() - 1
        };
        queue(self.inbox.as_ref(), &self.queue_at_request, index);
        tokio::task::yield_now().await;
        let reply = self.replies.lock().expect("lock").pop_front();
        if self.cancel_after_reply == Some(index) {
            cancel.cancel();
        }
        let (answer, result) =
            match reply.unwrap_or_else(|| Reply::Message(text("done", Finish::Stop))) {
                Reply::Message(message) => (Answer::Message, Ok(Some(message))),
                Reply::CancelMidStream => {
                    cancel.cancel();
                    (Answer::Cancelled, Ok(None))
                }
                Reply::Error(body) => (
                    Answer::Failed,
                    Err(ModelError::Provider(server_error(&body))),
                ),
            };
        self.answers.lock().expect("lock").push(answer);
        result
    }
}

#[derive(Debug, Clone)]
pub(super) struct FakeTool {
    pub(super) read_only: bool,
    pub(super) is_error: bool,
    pub(super) delay: Duration,
}

/// Tools by name; the result text is `name:arguments`. Counts calls and
/// the most calls running at once, and can cancel at its n-th call.
#[derive(Default)]
pub(super) struct FakeTools {
    pub(super) tools: HashMap<String, FakeTool>,
    pub(super) calls: AtomicUsize,
    pub(super) running: AtomicUsize,
    pub(super) max_running: AtomicUsize,
    /// Cancel the token when the n-th call (0-based) starts.
    pub(super) cancel_at_call: Option<usize>,
    /// Calls started although `cancel` had already fired.
    pub(super) calls_after_cancel: AtomicUsize,
    /// Messages the user queues while the n-th call (0-based) runs.
    pub(super) queue_at_call: Vec<(usize, Delivery, String)>,
    pub(super) inbox: Option<Inbox>,
}

/// Queues the messages meant for step `index` of a scripted user.
pub(super) fn queue(inbox: Option<&Inbox>, script: &[(usize, Delivery, String)], index: usize) {
    let Some(inbox) = inbox else { return };
    for (at, delivery, text) in script {
        if *at == index {
            inbox
                .push(*delivery, text.clone())
                .expect("room in the inbox");
        }
    }
}

impl FakeTools {
    pub(super) fn with(
        mut self,
        name: &str,
        read_only: bool,
        is_error: bool,
        delay_ms: u64,
    ) -> Self {
        self.tools.insert(
            name.into(),
            FakeTool {
                read_only,
                is_error,
                delay: Duration::from_millis(delay_ms),
            },
        );
        self
    }

    pub(super) fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl ToolRunner for FakeTools {
    fn specs(&self) -> Vec<ToolSpecForModel> {
        let mut specs: Vec<ToolSpecForModel> = self
            .tools
            .iter()
            .map(|(name, tool)| ToolSpecForModel {
                name: name.clone(),
                description: format!("the {name} tool"),
                input_schema: json!({"type": "object"}),
                read_only: tool.read_only,
            })
            .collect();
        specs.sort_by(|a, b| a.name.cmp(&b.name));
        specs
    }

    async fn call(
        &self,
        name: &str,
        arguments: &Value,
        cancel: &CancellationToken,
        _progress: Option<crate::sandbox::ProgressSink>,
        _permits: std::sync::Arc<[crate::sandbox::Permit]>,
    ) -> ToolResult {
        if cancel.is_cancelled() {
            self.calls_after_cancel.fetch_add(1, Ordering::SeqCst);
        }
        let index = self.calls.fetch_add(1, Ordering::SeqCst);
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_running.fetch_max(now, Ordering::SeqCst);
        queue(self.inbox.as_ref(), &self.queue_at_call, index);
        if self.cancel_at_call == Some(index) {
            cancel.cancel();
        }
        let tool = self.tools.get(name).cloned().unwrap_or(FakeTool {
            read_only: false,
            is_error: true,
            delay: Duration::ZERO,
        });
        let cancelled = tokio::select! {
            () = tokio::time::sleep(tool.delay) => false,
            () = cancel.cancelled() => true,
        };
        tokio::task::yield_now().await;
        self.running.fetch_sub(1, Ordering::SeqCst);
        if cancelled {
            return error_result("cancelled");
        }
        ToolResult::new(format!("{name}:{arguments}"), tool.is_error)
    }
}

pub(super) fn text(text: &str, finish: Finish) -> AssistantMessage {
    AssistantMessage {
        blocks: vec![Block::Text { text: text.into() }],
        finish,
        usage: None,
        cut: None,
    }
}

pub(super) fn call(id: &str, name: &str, arguments: Option<Value>) -> Block {
    Block::ToolCall {
        id: id.into(),
        name: name.into(),
        arguments_raw: arguments
            .as_ref()
            .map_or_else(|| "{\"pa".into(), Value::to_string),
        arguments,
    }
}

pub(super) fn calls(blocks: Vec<Block>, finish: Finish) -> Reply {
    Reply::Message(AssistantMessage {
        blocks,
        finish,
        usage: None,
        cut: None,
    })
}

pub(super) fn results_of(message: &Message) -> &[ToolResultEntry] {
    match message {
        Message::ToolResults { results } => results,
        other => panic!("expected tool results, got {other:?}"),
    }
}

pub(super) async fn run_with(
    model: &ScriptedModel,
    tools: &FakeTools,
    config: LoopConfig,
    cancel: &CancellationToken,
) -> (Vec<Message>, StopRecord) {
    let agent = AgentLoop::new(model, tools, config);
    let mut ledger = Vec::new();
    let stop = agent.run(&mut ledger, "go".into(), cancel).await;
    check_invariants(&ledger, &stop, model, tools);
    (ledger, stop)
}

/// A run whose model and tools queue their scripted input in `inbox`.
pub(super) async fn run_with_inbox(
    model: &ScriptedModel,
    tools: &FakeTools,
    config: LoopConfig,
    cancel: &CancellationToken,
    inbox: &Inbox,
) -> (Vec<Message>, StopRecord) {
    let agent = AgentLoop::new(model, tools, config).with_inbox(inbox.clone());
    let mut ledger = Vec::new();
    let stop = agent.run(&mut ledger, "go".into(), cancel).await;
    check_invariants(&ledger, &stop, model, tools);
    if stop.reason == StopReason::Completed {
        assert!(
            inbox.is_empty(),
            "completed with {:?} queued",
            inbox.queued()
        );
    }
    (ledger, stop)
}

pub(super) fn delivered(text: &str, delivery: Delivery) -> Message {
    Message::User {
        text: text.into(),
        delivery: Some(delivery),
    }
}

/// The loop's invariants, checked after every run
/// (docs/contributing/decisions.md#the-agent-loop-and-its-stop-record).
pub(super) fn check_invariants(
    ledger: &[Message],
    stop: &StopRecord,
    model: &ScriptedModel,
    tools: &FakeTools,
) {
    assert!(
        matches!(ledger.first(), Some(Message::User { .. })),
        "{ledger:?}"
    );
    let mut seen = std::collections::HashSet::new();
    let mut assistants = 0;
    for (i, message) in ledger.iter().enumerate().skip(1) {
        match message {
            // Queued input: never between a reply's calls and their
            // results, never a second prompt.
            Message::User { delivery, .. } => {
                assert!(delivery.is_some(), "a prompt inside a run at {i}");
                if let Message::Assistant(assistant) = &ledger[i - 1] {
                    assert!(
                        tool_calls(assistant).is_empty(),
                        "input at {i} between calls and their results"
                    );
                }
            }
            Message::Assistant(assistant) => {
                assistants += 1;
                // An assistant follows the prompt or a tool-result message.
                assert!(
                    matches!(
                        ledger[i - 1],
                        Message::User { .. } | Message::ToolResults { .. }
                    ),
                    "assistant at {i} follows {:?}",
                    ledger[i - 1]
                );
                let ids: Vec<&str> = tool_calls(assistant).iter().map(|c| c.id).collect();
                match ledger.get(i + 1) {
                    Some(Message::ToolResults { results }) => {
                        let answered: Vec<&str> =
                            results.iter().map(|r| r.call_id.as_str()).collect();
                        assert_eq!(
                            answered,
                            ids,
                            "results at {} answer the calls in order",
                            i + 1
                        );
                    }
                    // Input delivered at the end of a reply without calls.
                    Some(Message::User {
                        delivery: Some(_), ..
                    }) if ids.is_empty() => {}
                    Some(other) => panic!("assistant at {i} followed by {other:?}"),
                    // Results are pushed in the same step as their calls,
                    // so even a stopped run leaves no call unanswered.
                    None => assert!(ids.is_empty(), "calls at {i} left unanswered ({stop:?})"),
                }
            }
            Message::ToolResults { results } => {
                assert!(
                    matches!(ledger[i - 1], Message::Assistant(_)),
                    "results at {i} do not follow an assistant"
                );
                assert!(!results.is_empty(), "empty tool results at {i}");
                for result in results {
                    assert!(
                        seen.insert(result.call_id.clone()),
                        "two results for {}",
                        result.call_id
                    );
                }
            }
        }
    }
    assert_eq!(stop.turns, assistants, "turns == assistant messages");
    assert_eq!(model.requests_after_cancel.load(Ordering::SeqCst), 0);
    assert_eq!(tools.calls_after_cancel.load(Ordering::SeqCst), 0);
}

pub(super) fn inbox_for(
    mode: DeliveryMode,
    at_request: &[(usize, Delivery, &str)],
    at_call: &[(usize, Delivery, &str)],
    replies: impl IntoIterator<Item = Reply>,
    tools: FakeTools,
) -> (ScriptedModel, FakeTools, Inbox) {
    let inbox = Inbox::new(mode);
    let own = |script: &[(usize, Delivery, &str)]| {
        script
            .iter()
            .map(|(at, delivery, text)| (*at, *delivery, (*text).to_string()))
            .collect()
    };
    let model = ScriptedModel {
        queue_at_request: own(at_request),
        inbox: Some(inbox.clone()),
        ..ScriptedModel::new(replies)
    };
    let tools = FakeTools {
        queue_at_call: own(at_call),
        inbox: Some(inbox.clone()),
        ..tools
    };
    (model, tools, inbox)
}
