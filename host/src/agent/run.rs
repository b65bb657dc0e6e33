//! The loop itself: ask the model, record the reply, run its tool calls,
//! record one result per call, repeat until a stop
//! (docs/contributing/decisions.md#the-agent-loop-and-its-stop-record).
//!
//! Invariants every path keeps: the ledger only grows by whole messages;
//! each tool call of an assistant message gets exactly one result, in the
//! message that immediately follows it; no model request is made once
//! `cancel` has fired; every run ends with one [`StopRecord`].

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::time::Instant;

use futures_util::future::join_all;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::budgets;
use super::compaction::{Compactor, Goal, Threshold};
use super::config::LoopConfig;
use super::context::{self, CompactionReason};
use super::events::{AgentEvent, EventSink, Events};
use super::inbox::Inbox;
use super::ledger::{Delivery, Message, ToolResultEntry, tool_calls};
use super::loop_detect::{Fingerprint, LoopDetector, Verdict};
use super::request::{Outgoing, Requests, Response};
use super::stop::{StopReason, StopRecord};
use super::{ModelClient, ToolResult, ToolRunner, ToolSpecForModel};
use crate::provider::{Finish, TokenTotals};

/// The result of every call of a reply that asked for tools after the last
/// allowed turn.
pub const NOT_EXECUTED_MAX_TURNS: &str = "(not executed: reached max turns)";
/// The result of every call of a reply cut by the output limit, and of any
/// call whose arguments are not complete JSON.
pub const NOT_EXECUTED_TRUNCATED: &str = "not executed: the reply hit the output limit, so its \
     arguments may be truncated; re-issue the call with complete arguments";
/// The result of a call that never started because the run was cancelled.
pub const INTERRUPTED: &str = "(interrupted before this tool ran)";

/// Tool calls of one reply that run; each call past it is answered with
/// [`over_the_cap`] and the run goes on. As many as the engine's pools
/// run at once ([`crate::sandbox::CONCURRENT_CALLS`]), so a reply's
/// read-only calls all start together; real models ask for a few dozen at
/// most, while the reply cap alone let a hostile server ask for ~60,000.
/// Not a setting: no real reply needs more, and a smaller one only moves
/// the same calls to the next turn.
pub const CALLS_PER_REPLY: usize = crate::sandbox::CONCURRENT_CALLS as usize;

/// The result of each call of a reply of `asked` calls past
/// [`CALLS_PER_REPLY`]: the cap, and what the model can do.
pub fn over_the_cap(asked: usize) -> String {
    format!(
        "(not executed: this reply asked for {asked} tool calls and at most {CALLS_PER_REPLY} \
         run per reply; the first {CALLS_PER_REPLY} ran. Ask for at most {CALLS_PER_REPLY} \
         calls in one reply and make this one again in your next reply if you still need it.)"
    )
}

/// One tool call, owned, so the ledger can be appended to while it runs.
struct Call {
    id: String,
    name: String,
    arguments: Option<Value>,
    /// Why it is not run when `arguments` is `None`: they hold more than
    /// toolhost parses for one call (the model reads that, not "cut").
    over_budget: Option<crate::json_budget::OverBudget>,
}

impl Call {
    /// The result of this call when its arguments are not a value.
    fn not_executed(&self) -> ToolResult {
        match self.over_budget {
            Some(over) => error_result(&format!(
                "error: the arguments for `{}` hold {over}, the most toolhost parses for one \
                 call; they were not parsed. Put large data in a file and pass its path instead.",
                self.name
            )),
            None => error_result(NOT_EXECUTED_TRUNCATED),
        }
    }
}

/// A model, a set of tools and the bounds of a run. Reusable: each
/// [`AgentLoop::run`] is independent apart from the ledger it is given.
pub struct AgentLoop<M, T> {
    model: M,
    tools: T,
    config: LoopConfig,
    events: Events,
    inbox: Option<Inbox>,
}

impl<M: ModelClient, T: ToolRunner> AgentLoop<M, T> {
    pub fn new(model: M, tools: T, config: LoopConfig) -> Self {
        AgentLoop {
            model,
            tools,
            config,
            events: Events::default(),
            inbox: None,
        }
    }

    /// Sends `text` as the system prompt from the next run on (a session's
    /// project instructions changed between prompts).
    pub fn set_system_prompt(&mut self, text: String) {
        self.config.system_prompt = text;
    }

    /// Asks `model` from the next run on (a chat's `/model`).
    pub fn set_model(&mut self, model: M) {
        self.model = model;
    }

    /// Compacts the conversation now, between runs (a chat's `/compact`,
    /// `toolhost sessions compact`): every tool result older than the
    /// latest batch set aside, and what came before the last turn
    /// summarised by the model, keeping `focus` in it; whether the
    /// conversation got smaller.
    pub async fn compact_now(
        &self,
        ledger: &mut Vec<Message>,
        focus: Option<&str>,
        cancel: &CancellationToken,
    ) -> bool {
        let specs = self.tools.specs();
        let compactor = self.compactor(&specs);
        let before = compactor.estimate(ledger);
        let goal = Goal {
            reason: CompactionReason::Manual,
            before,
            target: 0,
            window: self.config.context_window,
            focus,
        };
        compactor
            .compact(ledger, goal, cancel)
            .await
            .is_some_and(|done| done.after < before)
    }

    /// Takes the user's queued messages from `inbox` while a run goes on
    /// (module `inbox`). Without one, a run is its prompt alone.
    pub fn with_inbox(mut self, inbox: Inbox) -> Self {
        self.inbox = Some(inbox);
        self
    }

    /// Sends every event of every run to `sink`.
    pub fn with_events(mut self, sink: EventSink) -> Self {
        self.events = Events::new(sink);
        self
    }

    /// Appends `prompt` to `ledger` and runs until a stop. The ledger may
    /// hold earlier runs (a resumed session); `turns` counts this run only.
    pub async fn run(
        &self,
        ledger: &mut Vec<Message>,
        prompt: String,
        cancel: &CancellationToken,
    ) -> StopRecord {
        self.events.emit(AgentEvent::AgentStart);
        let stop = self.run_inner(ledger, prompt, cancel).await;
        self.events
            .emit(AgentEvent::AgentEnd { stop: stop.clone() });
        stop
    }

    async fn run_inner(
        &self,
        ledger: &mut Vec<Message>,
        prompt: String,
        cancel: &CancellationToken,
    ) -> StopRecord {
        let specs = self.tools.specs();
        let read_only: HashMap<String, bool> = specs
            .iter()
            .map(|spec| (spec.name.clone(), spec.read_only))
            .collect();
        let mut detector = LoopDetector::new(self.config.warn_after, self.config.stop_after);
        let mut turns = 0;
        let mut used = TokenTotals::default();
        let mut warned_of_a_cut = false;
        let mut requests = Requests::new(self.config.context_window);
        let mut threshold = Threshold::default();
        let stop = |reason, turns, truncated, evidence: String| StopRecord {
            reason,
            turns,
            truncated,
            evidence,
        };
        self.events.push(ledger, Message::prompt(prompt));
        // Steering is taken before a request that follows the prompt or a
        // batch's results, not right after input delivered at the end of a
        // reply: one poll, one delivery.
        let mut poll_steering = true;

        loop {
            if cancel.is_cancelled() {
                return stop(
                    StopReason::Aborted,
                    turns,
                    false,
                    "cancelled before the model request".into(),
                );
            }
            if poll_steering {
                self.deliver(ledger, Delivery::Steer);
            }
            poll_steering = true;
            let compactor = self.compactor(&specs);
            let next = match compactor
                .make_room(
                    ledger,
                    requests.window(),
                    &mut threshold,
                    &mut used,
                    turns,
                    cancel,
                )
                .await
            {
                ControlFlow::Continue(next) => next,
                ControlFlow::Break(stop) => return stop,
            };
            if let ControlFlow::Break(stop) = budgets::check(&self.config, &used, next, turns) {
                return stop;
            }
            let turn = turns + 1;
            self.events.emit(AgentEvent::TurnStart { turn });
            let outgoing = Outgoing { turn, tokens: next };
            let sent = requests.send(&compactor, ledger, outgoing, &mut used, cancel);
            let assistant = match sent.await {
                ControlFlow::Continue(Response::Reply(assistant)) => assistant,
                ControlFlow::Continue(Response::SendAgain) => continue,
                ControlFlow::Break(stop) => return stop,
            };
            turns = turn;
            // What the server did not count is estimated, never free.
            used.add(&context::counted(&assistant, next));
            if let Some(usage) = &assistant.usage
                && !warned_of_a_cut
                && let Some(warning) = context::silent_cut(next, usage)
            {
                warned_of_a_cut = true;
                self.events.emit(AgentEvent::Warning { message: warning });
            }
            let finish = assistant.finish;
            let capped = assistant.cut;
            let calls: Vec<Call> = tool_calls(&assistant)
                .into_iter()
                .map(|call| Call {
                    id: call.id.to_owned(),
                    name: call.name.to_owned(),
                    arguments: call.arguments.cloned(),
                    over_budget: call
                        .arguments
                        .is_none()
                        .then(|| {
                            crate::json_budget::TOOL_ARGUMENTS
                                .check(call.arguments_raw.as_bytes())
                                .err()
                        })
                        .flatten(),
                })
                .collect();
            self.events.push(ledger, Message::Assistant(assistant));

            // toolhost stopped reading the reply at its cap: its calls are
            // answered as cut ones, and the run stops, since a server that
            // does not stop would be sent the cut reply and likely go on.
            if let Some(cut) = capped {
                if !calls.is_empty() {
                    let results = calls
                        .iter()
                        .map(|_| Some(error_result(NOT_EXECUTED_TRUNCATED)))
                        .collect();
                    self.push_results(ledger, &calls, results);
                }
                self.events.emit(AgentEvent::TurnEnd { turn });
                return stop(StopReason::Error, turns, true, cut.notice());
            }

            if calls.is_empty() {
                self.events.emit(AgentEvent::TurnEnd { turn });
                // The server reported an error mid-stream, withheld the reply
                // (content filter, refusal) or cut the stream: the run did not
                // complete, whatever text arrived.
                if finish == Finish::Error {
                    return stop(
                        StopReason::Error,
                        turns,
                        false,
                        "the model's reply ended with an error (the server reported one, withheld \
                         the reply, or cut the stream)"
                            .into(),
                    );
                }
                let truncated = finish == Finish::Length;
                if let Some(waiting) = self.inbox.as_ref().filter(|inbox| !inbox.is_empty()) {
                    let queued = waiting.queued().len();
                    if cancel.is_cancelled() {
                        return stop(
                            StopReason::Aborted,
                            turns,
                            truncated,
                            format!("cancelled with {queued} queued message(s) undelivered"),
                        );
                    }
                    if turns >= self.config.max_turns {
                        return stop(
                            StopReason::MaxTurns,
                            turns,
                            truncated,
                            format!(
                                "reached the limit of {} turns with {queued} queued message(s) \
                                 undelivered",
                                self.config.max_turns
                            ),
                        );
                    }
                    // Steering first: it was meant for the work now ending.
                    if self.deliver(ledger, Delivery::Steer)
                        || self.deliver(ledger, Delivery::FollowUp)
                    {
                        poll_steering = false;
                        continue;
                    }
                }
                let evidence = if truncated {
                    "the last reply hit the output limit".into()
                } else {
                    format!(
                        "the model replied without tool calls (finish: {})",
                        finish.as_str()
                    )
                };
                return stop(StopReason::Completed, turns, truncated, evidence);
            }

            if turns >= self.config.max_turns {
                let results = calls
                    .iter()
                    .map(|_| Some(error_result(NOT_EXECUTED_MAX_TURNS)))
                    .collect();
                self.push_results(ledger, &calls, results);
                self.events.emit(AgentEvent::TurnEnd { turn });
                return stop(
                    StopReason::MaxTurns,
                    turns,
                    false,
                    format!(
                        "reached the limit of {} turns with {} tool call(s) pending",
                        self.config.max_turns,
                        calls.len()
                    ),
                );
            }

            let results = if finish == Finish::Length {
                calls
                    .iter()
                    .map(|_| Some(error_result(NOT_EXECUTED_TRUNCATED)))
                    .collect()
            } else {
                self.execute(&calls, &read_only, cancel).await
            };
            let mut entries = self.entries(&calls, results);

            let mut looped = None;
            for (call, entry) in calls.iter().zip(entries.iter_mut()) {
                match detector.observe(Fingerprint::new(&call.name, call.arguments.as_ref())) {
                    Verdict::Fine => {}
                    Verdict::Warn { count } => entry.text.push_str(&format!(
                        "\n\n(warning: you have called `{}` with the same arguments {count} times \
                         in a row; the result will not change. Try a different approach; at {} \
                         identical calls in a row the run stops.)",
                        call.name, self.config.stop_after
                    )),
                    Verdict::Stop { count } => {
                        looped.get_or_insert_with(|| {
                            format!(
                                "`{}` was called with the same arguments {count} times in a row: {}",
                                call.name,
                                Fingerprint::new(&call.name, call.arguments.as_ref()).arguments
                            )
                        });
                    }
                }
            }
            self.events
                .push(ledger, Message::ToolResults { results: entries });
            self.events.emit(AgentEvent::TurnEnd { turn });

            if cancel.is_cancelled() {
                return stop(
                    StopReason::Aborted,
                    turns,
                    false,
                    "cancelled while tools were running".into(),
                );
            }
            if let Some(evidence) = looped {
                return stop(StopReason::LoopDetected, turns, false, evidence);
            }
        }
    }

    /// Runs a batch: consecutive read-only calls together, every other call
    /// alone, in call order; the calls past [`CALLS_PER_REPLY`] are answered
    /// with the cap instead. `None` for a call that never started because
    /// `cancel` fired.
    async fn execute(
        &self,
        all: &[Call],
        read_only: &HashMap<String, bool>,
        cancel: &CancellationToken,
    ) -> Vec<Option<ToolResult>> {
        let concurrent =
            |call: &Call| call.arguments.is_some() && read_only.get(&call.name) == Some(&true);
        let (calls, over) = all.split_at(all.len().min(CALLS_PER_REPLY));
        let mut results = Vec::with_capacity(all.len());
        let mut start = 0;
        while start < calls.len() {
            let mut end = start + 1;
            if concurrent(&calls[start]) {
                while end < calls.len() && concurrent(&calls[end]) {
                    end += 1;
                }
            }
            // join_all keeps the order of its inputs, whatever finishes first.
            let group = join_all(calls[start..end].iter().map(|c| self.run_one(c, cancel))).await;
            results.extend(group);
            start = end;
        }
        if !over.is_empty() {
            let text = over_the_cap(all.len());
            results.extend(over.iter().map(|_| Some(error_result(&text))));
        }
        results
    }

    async fn run_one(&self, call: &Call, cancel: &CancellationToken) -> Option<ToolResult> {
        let Some(arguments) = &call.arguments else {
            return Some(call.not_executed());
        };
        if cancel.is_cancelled() {
            return None;
        }
        self.events.emit(AgentEvent::ToolExecutionStart {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: arguments.clone(),
        });
        let started = Instant::now();
        let progress = self.events.sink().cloned().map(|sink| {
            let (call_id, tool) = (call.id.clone(), call.name.clone());
            let forward: crate::sandbox::ProgressSink =
                std::sync::Arc::new(move |message: &str| {
                    sink(&AgentEvent::ToolExecutionUpdate {
                        call_id: call_id.clone(),
                        tool: tool.clone(),
                        message: message.to_string(),
                    });
                });
            forward
        });
        let mut result = self
            .tools
            .call(&call.name, arguments, cancel, progress)
            .await;
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let output_bytes = result.text.len() as u64;
        let mut saved_to = None;
        if let Some(budget) = &self.config.result_budget {
            let fitted = budget.fit(std::mem::take(&mut result.text), &call.id);
            result.text = fitted.text;
            saved_to = fitted.saved_to;
        }
        // Built only when someone listens: it copies the result text.
        if self.events.sink().is_some() {
            self.events.emit(AgentEvent::ToolExecutionEnd {
                call_id: call.id.clone(),
                tool: call.name.clone(),
                is_error: result.is_error,
                duration_ms,
                text: result.text.clone(),
                output_bytes,
                saved_to,
                execution: result.execution.take(),
            });
        }
        Some(result)
    }

    /// One entry per call, in call order; a missing result is an interruption.
    fn entries(&self, calls: &[Call], results: Vec<Option<ToolResult>>) -> Vec<ToolResultEntry> {
        calls
            .iter()
            .zip(results)
            .map(|(call, result)| {
                let result = result.unwrap_or_else(|| error_result(INTERRUPTED));
                ToolResultEntry {
                    call_id: call.id.clone(),
                    tool: call.name.clone(),
                    text: result.text,
                    is_error: result.is_error,
                }
            })
            .collect()
    }

    fn push_results(
        &self,
        ledger: &mut Vec<Message>,
        calls: &[Call],
        results: Vec<Option<ToolResult>>,
    ) {
        let results = self.entries(calls, results);
        self.events.push(ledger, Message::ToolResults { results });
    }

    /// Appends what one poll of the inbox takes of `delivery`, each as a
    /// user message; whether there was any.
    fn deliver(&self, ledger: &mut Vec<Message>, delivery: Delivery) -> bool {
        let Some(inbox) = &self.inbox else {
            return false;
        };
        let texts = inbox.take(delivery);
        for text in &texts {
            self.events.emit(AgentEvent::InputDelivered {
                delivery,
                text: text.clone(),
            });
            self.events.push(
                ledger,
                Message::User {
                    text: text.clone(),
                    delivery: Some(delivery),
                },
            );
        }
        !texts.is_empty()
    }

    fn compactor<'a>(&'a self, specs: &'a [ToolSpecForModel]) -> Compactor<'a, M> {
        Compactor {
            model: &self.model,
            config: &self.config,
            specs,
            events: &self.events,
        }
    }
}

pub(super) fn error_result(text: &str) -> ToolResult {
    ToolResult::new(text, true)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;
    use std::sync::{Arc, Mutex};

    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::agent::DeliveryMode;
    use crate::agent::testing::*;
    use crate::provider::anthropic::Anthropic;
    use crate::provider::openai::OpenAi;
    use crate::provider::{AssistantMessage, Block};

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("runtime")
    }

    #[tokio::test]
    async fn completes_when_the_model_asks_for_nothing() {
        let model = ScriptedModel::new([
            calls(
                vec![call("c1", "read", Some(json!({"p": 1})))],
                Finish::ToolUse,
            ),
            Reply::Message(text("all done", Finish::Stop)),
        ]);
        let tools = FakeTools::default().with("read", true, false, 0);
        let (ledger, stop) = run_with(
            &model,
            &tools,
            LoopConfig::default(),
            &CancellationToken::new(),
        )
        .await;
        assert_eq!(stop.reason, StopReason::Completed);
        assert_eq!(stop.turns, 2);
        assert!(!stop.truncated);
        assert_eq!(ledger.len(), 4);
        assert_eq!(
            results_of(&ledger[2]),
            [ToolResultEntry {
                call_id: "c1".into(),
                tool: "read".into(),
                text: r#"read:{"p":1}"#.into(),
                is_error: false,
            }]
        );
        // The second request saw the tool result.
        assert_eq!(model.histories.lock().expect("lock")[1], ledger[..3]);
    }

    #[tokio::test]
    async fn completed_reply_cut_by_the_limit_is_truncated() {
        let model = ScriptedModel::new([Reply::Message(text("half a", Finish::Length))]);
        let (_, stop) = run_with(
            &model,
            &FakeTools::default(),
            LoopConfig::default(),
            &CancellationToken::new(),
        )
        .await;
        assert_eq!(stop.reason, StopReason::Completed);
        assert!(stop.truncated);
    }

    #[tokio::test]
    async fn cancelled_before_start_makes_no_request() {
        let model = ScriptedModel::new([]);
        let cancel = CancellationToken::new();
        cancel.cancel();
        let (ledger, stop) = run_with(
            &model,
            &FakeTools::default(),
            LoopConfig::default(),
            &cancel,
        )
        .await;
        assert_eq!(stop.reason, StopReason::Aborted);
        assert_eq!(stop.turns, 0);
        assert_eq!(model.requests(), 0);
        assert_eq!(ledger, [Message::prompt("go")]);
    }

    #[tokio::test]
    async fn a_reply_that_ended_in_an_error_stops_with_error() {
        let model = ScriptedModel::new([Reply::Message(AssistantMessage {
            blocks: vec![Block::Text {
                text: "partial".into(),
            }],
            finish: Finish::Error,
            usage: None,
            cut: None,
        })]);
        let (_ledger, stop) = run_with(
            &model,
            &FakeTools::default(),
            LoopConfig::default(),
            &CancellationToken::new(),
        )
        .await;
        assert_eq!(stop.reason, StopReason::Error);
        assert_eq!(stop.turns, 1);
        assert!(
            stop.evidence.contains("ended with an error"),
            "{}",
            stop.evidence
        );
    }

    #[tokio::test]
    async fn cancel_during_a_batch_fills_the_calls_that_never_ran() {
        let model = ScriptedModel::new([calls(
            vec![
                call("c1", "write", Some(json!({"n": 1}))),
                call("c2", "write", Some(json!({"n": 2}))),
                call("c3", "write", Some(json!({"n": 3}))),
            ],
            Finish::ToolUse,
        )]);
        let tools = FakeTools {
            cancel_at_call: Some(1),
            ..FakeTools::default()
        }
        .with("write", false, false, 0);
        let (ledger, stop) = run_with(
            &model,
            &tools,
            LoopConfig::default(),
            &CancellationToken::new(),
        )
        .await;
        assert_eq!(stop.reason, StopReason::Aborted);
        assert_eq!(stop.turns, 1);
        assert_eq!(model.requests(), 1);
        assert_eq!(tools.calls(), 2);
        let results = results_of(&ledger[2]);
        assert_eq!(results[0].text, r#"write:{"n":1}"#);
        assert_eq!(results[1].text, "cancelled");
        assert_eq!(results[2].text, INTERRUPTED);
        assert!(results[1].is_error && results[2].is_error);
    }

    #[tokio::test]
    async fn max_turns_answers_every_pending_call() {
        let model = ScriptedModel::new([
            calls(
                vec![call("c1", "read", Some(json!({"a": 1})))],
                Finish::ToolUse,
            ),
            calls(
                vec![
                    call("c2", "read", Some(json!({"a": 2}))),
                    call("c3", "read", Some(json!({"a": 3}))),
                ],
                Finish::ToolUse,
            ),
        ]);
        let tools = FakeTools::default().with("read", true, false, 0);
        let config = LoopConfig {
            max_turns: 2,
            ..LoopConfig::default()
        };
        let (ledger, stop) = run_with(&model, &tools, config, &CancellationToken::new()).await;
        assert_eq!(stop.reason, StopReason::MaxTurns);
        assert_eq!(stop.turns, 2);
        assert_eq!(tools.calls(), 1);
        let results = results_of(&ledger[4]);
        assert_eq!(results.len(), 2);
        assert!(
            results
                .iter()
                .all(|r| r.text == NOT_EXECUTED_MAX_TURNS && r.is_error)
        );
    }

    #[tokio::test]
    async fn the_same_call_warns_at_three_and_stops_at_five() {
        // Key order alternates but the fingerprint is the same.
        let replies = (0..6).map(|i| {
            let arguments = if i % 2 == 0 {
                json!({"a": 1, "b": 2})
            } else {
                json!({"b": 2, "a": 1})
            };
            calls(
                vec![call(&format!("c{i}"), "read", Some(arguments))],
                Finish::ToolUse,
            )
        });
        let model = ScriptedModel::new(replies);
        let tools = FakeTools::default().with("read", true, false, 0);
        let (ledger, stop) = run_with(
            &model,
            &tools,
            LoopConfig::default(),
            &CancellationToken::new(),
        )
        .await;
        assert_eq!(stop.reason, StopReason::LoopDetected, "{stop:?}");
        assert_eq!(stop.turns, 5);
        assert_eq!(model.requests(), 5);
        assert_eq!(tools.calls(), 5);
        let warnings: Vec<bool> = ledger
            .iter()
            .filter(|m| matches!(m, Message::ToolResults { .. }))
            .map(|m| {
                results_of(m)[0]
                    .text
                    .contains("with the same arguments 3 times in a row")
            })
            .collect();
        assert_eq!(warnings, [false, false, true, false, false]);
        assert!(
            stop.evidence.contains("5 times in a row"),
            "{}",
            stop.evidence
        );
    }

    #[tokio::test]
    async fn calls_of_a_reply_cut_by_the_limit_do_not_run() {
        let model = ScriptedModel::new([
            calls(
                vec![
                    call("c1", "read", Some(json!({"a": 1}))),
                    call("c2", "read", None),
                ],
                Finish::Length,
            ),
            Reply::Message(text("ok", Finish::Stop)),
        ]);
        let tools = FakeTools::default().with("read", true, false, 0);
        let (ledger, stop) = run_with(
            &model,
            &tools,
            LoopConfig::default(),
            &CancellationToken::new(),
        )
        .await;
        assert_eq!(tools.calls(), 0);
        assert_eq!(stop.reason, StopReason::Completed);
        assert_eq!(stop.turns, 2);
        let results = results_of(&ledger[2]);
        assert!(
            results
                .iter()
                .all(|r| r.text == NOT_EXECUTED_TRUNCATED && r.is_error)
        );
    }

    #[tokio::test]
    async fn a_reply_cut_at_the_reply_cap_runs_no_call_and_stops_the_run() {
        let cut = crate::provider::ReplyCut {
            cap: crate::provider::Cap::Reply,
            limit_bytes: 8 << 20,
            max_reply_bytes: 8 << 20,
        };
        let cut_reply = |blocks| {
            Reply::Message(AssistantMessage {
                blocks,
                finish: Finish::Length,
                usage: None,
                cut: Some(cut),
            })
        };
        for blocks in [
            vec![
                call("c1", "read", Some(json!({"a": 1}))),
                call("c2", "read", None),
            ],
            vec![Block::Text {
                text: "la la".into(),
            }],
        ] {
            let has_calls = blocks.len() > 1;
            let model = ScriptedModel::new([
                cut_reply(blocks),
                Reply::Message(text("never asked", Finish::Stop)),
            ]);
            let tools = FakeTools::default().with("read", true, false, 0);
            let (ledger, stop) = run_with(
                &model,
                &tools,
                LoopConfig::default(),
                &CancellationToken::new(),
            )
            .await;
            assert_eq!(tools.calls(), 0);
            assert_eq!(model.requests(), 1, "the server is not asked again");
            assert_eq!(
                stop,
                StopRecord {
                    reason: StopReason::Error,
                    turns: 1,
                    truncated: true,
                    evidence: cut.notice(),
                }
            );
            if has_calls {
                let results = results_of(&ledger[2]);
                assert_eq!(results.len(), 2);
                assert!(
                    results
                        .iter()
                        .all(|r| r.text == NOT_EXECUTED_TRUNCATED && r.is_error)
                );
            } else {
                assert_eq!(ledger.len(), 2);
            }
        }
    }

    #[tokio::test]
    async fn unparseable_arguments_are_not_run_even_without_length() {
        let model = ScriptedModel::new([calls(
            vec![
                call("c1", "read", None),
                call("c2", "read", Some(json!({}))),
            ],
            Finish::ToolUse,
        )]);
        let tools = FakeTools::default().with("read", true, false, 0);
        let (ledger, _) = run_with(
            &model,
            &tools,
            LoopConfig::default(),
            &CancellationToken::new(),
        )
        .await;
        assert_eq!(tools.calls(), 1);
        let results = results_of(&ledger[2]);
        assert_eq!(results[0].text, NOT_EXECUTED_TRUNCATED);
        assert_eq!(results[1].text, "read:{}");
    }

    /// Arguments whole but over what toolhost parses for one call (the
    /// provider leaves them unparsed) are not run, and the model reads why:
    /// not "cut", which would have it send them again.
    #[tokio::test]
    async fn arguments_over_the_parse_budget_are_not_run_and_say_why() {
        let zeros = format!("{{\"pad\":[{}0]}}", "0,".repeat(100_000));
        let model = ScriptedModel::new([calls(
            vec![
                Block::ToolCall {
                    id: "c1".into(),
                    name: "read".into(),
                    arguments_raw: zeros,
                    arguments: None,
                },
                call("c2", "read", Some(json!({}))),
            ],
            Finish::ToolUse,
        )]);
        let tools = FakeTools::default().with("read", true, false, 0);
        let (ledger, _) = run_with(
            &model,
            &tools,
            LoopConfig::default(),
            &CancellationToken::new(),
        )
        .await;
        assert_eq!(tools.calls(), 1);
        let results = results_of(&ledger[2]);
        assert_eq!(
            results[0].text,
            "error: the arguments for `read` hold more than 100000 JSON values (scalars, strings, \
             keys, arrays and objects together), the most toolhost parses for one call; they were \
             not parsed. Put large data in a file and pass its path instead."
        );
        assert!(results[0].is_error);
        assert_eq!(results[1].text, "read:{}");
    }

    #[tokio::test]
    async fn read_only_calls_overlap_and_results_keep_call_order() {
        let model = ScriptedModel::new([calls(
            vec![
                call("c1", "slow", Some(json!({}))),
                call("c2", "fast", Some(json!({}))),
            ],
            Finish::ToolUse,
        )]);
        let tools = FakeTools::default()
            .with("slow", true, false, 40)
            .with("fast", true, false, 0);
        let events = Arc::new(Mutex::new(Vec::new()));
        let sink_events = events.clone();
        let agent = AgentLoop::new(&model, &tools, LoopConfig::default()).with_events(Arc::new(
            move |event: &AgentEvent| sink_events.lock().expect("lock").push(event.clone()),
        ));
        let mut ledger = Vec::new();
        let stop = agent
            .run(&mut ledger, "go".into(), &CancellationToken::new())
            .await;
        check_invariants(&ledger, &stop, &model, &tools);
        assert_eq!(tools.max_running.load(Ordering::SeqCst), 2);
        let ids: Vec<&str> = results_of(&ledger[2])
            .iter()
            .map(|r| r.call_id.as_str())
            .collect();
        assert_eq!(ids, ["c1", "c2"]);
        // The fast call ended first: the events show completion order.
        let ended: Vec<String> = events
            .lock()
            .expect("lock")
            .iter()
            .filter_map(|e| match e {
                AgentEvent::ToolExecutionEnd { call_id, .. } => Some(call_id.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(ended, ["c2", "c1"]);
        let events = events.lock().expect("lock");
        assert_eq!(events.first(), Some(&AgentEvent::AgentStart));
        assert!(matches!(events.last(), Some(AgentEvent::AgentEnd { stop: s }) if *s == stop));
        let kinds: Vec<String> = events
            .iter()
            .map(|e| serde_json::to_value(e).expect("serialise")["type"].to_string())
            .collect();
        assert!(
            kinds.contains(&"\"tool_execution_start\"".to_string()),
            "{kinds:?}"
        );
    }

    #[tokio::test]
    async fn calls_past_the_cap_of_a_reply_are_answered_with_it_and_the_run_goes_on() {
        let asked = CALLS_PER_REPLY + 3;
        let model = ScriptedModel::new([
            calls(
                (0..asked)
                    .map(|i| call(&format!("c{i}"), "read", Some(json!({"i": i}))))
                    .collect(),
                Finish::ToolUse,
            ),
            Reply::Message(text("done", Finish::Stop)),
        ]);
        let tools = FakeTools::default().with("read", true, false, 1);
        let (ledger, stop) = run_with(
            &model,
            &tools,
            LoopConfig::default(),
            &CancellationToken::new(),
        )
        .await;
        assert_eq!(stop.reason, StopReason::Completed);
        assert_eq!(tools.calls(), CALLS_PER_REPLY);
        let results = results_of(&ledger[2]);
        assert_eq!(results.len(), asked);
        for (i, result) in results.iter().enumerate() {
            if i < CALLS_PER_REPLY {
                assert_eq!(result.text, format!("read:{{\"i\":{i}}}"));
                assert!(!result.is_error);
            } else {
                assert_eq!(result.text, over_the_cap(asked));
                assert!(result.is_error);
            }
        }
        assert_eq!(
            over_the_cap(600),
            "(not executed: this reply asked for 600 tool calls and at most 64 run per reply; \
             the first 64 ran. Ask for at most 64 calls in one reply and make this one again in \
             your next reply if you still need it.)"
        );
    }

    #[tokio::test]
    async fn a_writing_call_runs_alone() {
        let model = ScriptedModel::new([calls(
            vec![
                call("c1", "read", Some(json!({}))),
                call("c2", "write", Some(json!({}))),
                call("c3", "read", Some(json!({}))),
            ],
            Finish::ToolUse,
        )]);
        let tools = FakeTools::default()
            .with("read", true, false, 10)
            .with("write", false, false, 10);
        run_with(
            &model,
            &tools,
            LoopConfig::default(),
            &CancellationToken::new(),
        )
        .await;
        assert_eq!(tools.calls(), 3);
        assert_eq!(tools.max_running.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn steering_arrives_after_the_whole_batch_and_before_the_next_request() {
        let (model, tools, inbox) = inbox_for(
            DeliveryMode::OneAtATime,
            &[],
            &[(0, Delivery::Steer, "use tabs")],
            [
                calls(
                    vec![
                        call("c1", "read", Some(json!({}))),
                        call("c2", "read", Some(json!({}))),
                    ],
                    Finish::ToolUse,
                ),
                Reply::Message(text("done with tabs", Finish::Stop)),
            ],
            FakeTools::default().with("read", true, false, 5),
        );
        let cancel = CancellationToken::new();
        let (ledger, stop) =
            run_with_inbox(&model, &tools, LoopConfig::default(), &cancel, &inbox).await;
        assert_eq!(stop.reason, StopReason::Completed);
        assert_eq!(stop.turns, 2);
        assert_eq!(results_of(&ledger[2]).len(), 2, "{ledger:?}");
        assert_eq!(ledger[3], delivered("use tabs", Delivery::Steer));
        assert_eq!(ledger.len(), 5);
        let histories = model.histories.lock().expect("lock").clone();
        assert_eq!(histories[1], ledger[..4]);
    }

    #[tokio::test]
    async fn a_follow_up_sent_during_the_last_reply_continues_the_run() {
        let (model, tools, inbox) = inbox_for(
            DeliveryMode::OneAtATime,
            &[(0, Delivery::FollowUp, "now the tests")],
            &[],
            [Reply::Message(text("first", Finish::Stop))],
            FakeTools::default(),
        );
        let cancel = CancellationToken::new();
        let (ledger, stop) =
            run_with_inbox(&model, &tools, LoopConfig::default(), &cancel, &inbox).await;
        assert_eq!(stop.reason, StopReason::Completed);
        assert_eq!(stop.turns, 2);
        assert_eq!(
            ledger,
            [
                Message::prompt("go"),
                Message::Assistant(text("first", Finish::Stop)),
                delivered("now the tests", Delivery::FollowUp),
                Message::Assistant(text("done", Finish::Stop)),
            ]
        );
    }

    #[tokio::test]
    async fn steering_sent_during_a_final_reply_comes_before_follow_ups() {
        for mode in [DeliveryMode::OneAtATime, DeliveryMode::All] {
            let (model, tools, inbox) = inbox_for(
                mode,
                &[
                    (0, Delivery::FollowUp, "f1"),
                    (0, Delivery::Steer, "s1"),
                    (0, Delivery::FollowUp, "f2"),
                ],
                &[],
                [],
                FakeTools::default(),
            );
            let cancel = CancellationToken::new();
            let (ledger, stop) =
                run_with_inbox(&model, &tools, LoopConfig::default(), &cancel, &inbox).await;
            assert_eq!(stop.reason, StopReason::Completed);
            let done = || Message::Assistant(text("done", Finish::Stop));
            let mut want = vec![
                Message::prompt("go"),
                done(),
                delivered("s1", Delivery::Steer),
                done(),
                delivered("f1", Delivery::FollowUp),
            ];
            match mode {
                DeliveryMode::OneAtATime => {
                    want.extend([done(), delivered("f2", Delivery::FollowUp), done()]);
                }
                DeliveryMode::All => want.extend([delivered("f2", Delivery::FollowUp), done()]),
            }
            assert_eq!(ledger, want, "{mode:?}");
        }
    }

    #[tokio::test]
    async fn an_interrupt_mid_batch_answers_every_call_and_leaves_input_queued() {
        let (model, mut tools, inbox) = inbox_for(
            DeliveryMode::OneAtATime,
            &[],
            &[
                (0, Delivery::Steer, "stop that"),
                (0, Delivery::FollowUp, "then this"),
            ],
            [calls(
                vec![
                    call("c1", "write", Some(json!({}))),
                    call("c2", "write", Some(json!({}))),
                ],
                Finish::ToolUse,
            )],
            FakeTools::default().with("write", false, false, 1000),
        );
        tools.cancel_at_call = Some(0);
        let cancel = CancellationToken::new();
        let (ledger, stop) =
            run_with_inbox(&model, &tools, LoopConfig::default(), &cancel, &inbox).await;
        assert_eq!(stop.reason, StopReason::Aborted);
        let texts: Vec<&str> = results_of(&ledger[2])
            .iter()
            .map(|r| r.text.as_str())
            .collect();
        assert_eq!(texts, ["cancelled", INTERRUPTED]);
        assert_eq!(ledger.len(), 3);
        let queued: Vec<String> = inbox.queued().into_iter().map(|q| q.text).collect();
        assert_eq!(queued, ["stop that", "then this"]);
    }

    #[tokio::test]
    async fn input_left_at_the_last_turn_stops_with_max_turns() {
        let (model, tools, inbox) = inbox_for(
            DeliveryMode::OneAtATime,
            &[(0, Delivery::FollowUp, "more")],
            &[],
            [],
            FakeTools::default(),
        );
        let config = LoopConfig {
            max_turns: 1,
            ..LoopConfig::default()
        };
        let cancel = CancellationToken::new();
        let (_, stop) = run_with_inbox(&model, &tools, config, &cancel, &inbox).await;
        assert_eq!(stop.reason, StopReason::MaxTurns);
        assert_eq!(
            stop.evidence,
            "reached the limit of 1 turns with 1 queued message(s) undelivered"
        );
        assert_eq!(inbox.queued().len(), 1);
    }

    /// One random reply: maybe reasoning (signed or not), maybe text (empty
    /// or not), up to three calls to tools `t0`..`t3`, some with unparseable
    /// arguments, and a random finish.
    fn reply_strategy() -> impl Strategy<Value = Reply> {
        let finish = prop_oneof![
            Just(Finish::Stop),
            Just(Finish::ToolUse),
            Just(Finish::Length),
            Just(Finish::Error)
        ];
        let reasoning = prop::option::of(prop::option::of(Just("sig".to_string())));
        let text = prop::option::of(prop_oneof![Just(String::new()), Just("t".to_string())]);
        let call = (0..4usize, 0..3u8, any::<bool>());
        let message = (reasoning, text, prop::collection::vec(call, 0..=3), finish);
        prop_oneof![
            8 => message.prop_map(|(reasoning, text, calls, finish)| {
                let mut blocks = Vec::new();
                if let Some(signature) = reasoning {
                    blocks.push(Block::Reasoning { text: "hm".into(), signature });
                }
                if let Some(text) = text {
                    blocks.push(Block::Text { text });
                }
                blocks.extend(calls.into_iter().map(|(tool, arg, parseable)| {
                    // Ids are filled in by `number_ids`.
                    let arguments = parseable.then(|| json!({ "x": arg }));
                    crate::agent::testing::call("", &format!("t{tool}"), arguments)
                }));
                Reply::Message(AssistantMessage { blocks, finish, usage: None, cut: None })
            }),
            1 => Just(Reply::CancelMidStream),
            1 => Just(Reply::Error("boom".into())),
        ]
    }

    /// Gives every call a unique id.
    fn number_ids(replies: &mut [Reply]) {
        let mut next = 0;
        for reply in replies {
            if let Reply::Message(message) = reply {
                for block in &mut message.blocks {
                    if let Block::ToolCall { id, .. } = block {
                        *id = format!("call_{next}");
                        next += 1;
                    }
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn invariants_hold_for_random_runs(
            mut replies in prop::collection::vec(reply_strategy(), 0..8),
            flags in prop::collection::vec((any::<bool>(), any::<bool>()), 4),
            cancel_at_call in prop::option::of(0..6usize),
            cancel_after_reply in prop::option::of(0..6usize),
            max_turns in 1..8u32,
            at_request in prop::collection::vec((0..8usize, any::<bool>()), 0..4),
            at_call in prop::collection::vec((0..8usize, any::<bool>()), 0..4),
            all in any::<bool>(),
        ) {
            number_ids(&mut replies);
            let mode = if all { DeliveryMode::All } else { DeliveryMode::OneAtATime };
            let inbox = Inbox::new(mode);
            let script = |at: Vec<(usize, bool)>| -> Vec<(usize, Delivery, String)> {
                at.into_iter()
                    .enumerate()
                    .map(|(n, (index, steer))| {
                        let delivery = if steer { Delivery::Steer } else { Delivery::FollowUp };
                        (index, delivery, format!("input {n}"))
                    })
                    .collect()
            };
            let model = ScriptedModel {
                cancel_after_reply,
                queue_at_request: script(at_request),
                inbox: Some(inbox.clone()),
                ..ScriptedModel::new(replies)
            };
            let mut tools = FakeTools {
                cancel_at_call,
                queue_at_call: script(at_call),
                inbox: Some(inbox.clone()),
                ..FakeTools::default()
            };
            for (i, (read_only, is_error)) in flags.into_iter().enumerate() {
                tools = tools.with(&format!("t{i}"), read_only, is_error, 0);
            }
            let config = LoopConfig { max_turns, warn_after: 2, stop_after: 3, ..LoopConfig::default() };
            let cancel = CancellationToken::new();
            let (mut ledger, stop) =
                rt().block_on(run_with_inbox(&model, &tools, config, &cancel, &inbox));
            // Everything queued is delivered once, or still queued.
            let delivered = ledger
                .iter()
                .filter(|m| matches!(m, Message::User { delivery: Some(_), .. }))
                .count();
            let queued = model.queue_at_request.iter().filter(|(at, ..)| *at < model.requests()).count()
                + tools.queue_at_call.iter().filter(|(at, ..)| *at < tools.calls()).count();
            prop_assert_eq!(delivered + inbox.queued().len(), queued);
            prop_assert!(stop.turns <= max_turns);
            // Every request but a failed or cancelled one added a message (a
            // reply that ended in an error is stored, then stops the run),
            // and a failed or cancelled one is the last and decides the stop.
            let answers = model.answers.lock().expect("lock").clone();
            let replied = answers.iter().filter(|a| **a == Answer::Message).count();
            prop_assert_eq!(u32::try_from(replied).expect("small"), stop.turns);
            match answers.iter().position(|a| *a != Answer::Message) {
                None => {}
                Some(at) => {
                    prop_assert_eq!(at + 1, answers.len(), "{:?}", answers);
                    let reason = match answers[at] {
                        Answer::Failed => StopReason::Error,
                        _ => StopReason::Aborted,
                    };
                    prop_assert_eq!(stop.reason, reason);
                }
            }
            // Every request the loop made, and the next one a resumed
            // session would make, is valid input for either wire API.
            ledger.push(Message::prompt("next"));
            let histories = model.histories.lock().expect("lock").clone();
            for history in histories.iter().chain([&ledger]) {
                wire::check_openai(&wire::body::<OpenAi>(history));
                wire::check_anthropic(&wire::body::<Anthropic>(history));
            }
        }
    }

    /// The structural rules each wire API puts on a request, checked on the
    /// bodies the providers build: the ledger is valid input for either
    /// (docs/contributing/decisions.md#the-agent-loop-and-its-stop-record).
    mod wire {
        use std::collections::HashSet;

        use serde_json::Value;

        use crate::agent::Message;
        use crate::provider::client::{Request, WireApi};

        /// `W`'s request for `history`, with a system prompt and no tools.
        pub(super) fn body<W: WireApi>(history: &[Message]) -> Value {
            W::request_body(&Request {
                model: "m",
                system: "be brief",
                history,
                tools: &[],
                max_tokens: None,
                vendor: false,
            })
        }

        fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
            value[key]
                .as_str()
                .unwrap_or_else(|| panic!("`{key}` is a string in {value}"))
        }

        /// Chat Completions: the system message first; an assistant's
        /// content is text, or null when it calls tools; every call is
        /// answered, right after it, by exactly one `tool` message with its
        /// id, and a `tool` message answers only such a call; ids are unique.
        pub(super) fn check_openai(body: &Value) {
            let messages = body["messages"].as_array().expect("messages");
            assert_eq!(messages.first().map(|m| &m["role"]), Some(&"system".into()));
            let mut ids = HashSet::new();
            // The calls of the last assistant not answered yet.
            let mut open: Vec<&str> = Vec::new();
            for (i, message) in messages.iter().enumerate() {
                let role = str_of(message, "role");
                assert!(
                    role == "tool" || open.is_empty(),
                    "calls {open:?} unanswered before message {i}: {body}"
                );
                match role {
                    "system" => assert_eq!(i, 0, "{body}"),
                    "user" => assert!(!str_of(message, "content").is_empty(), "{body}"),
                    "assistant" => {
                        let calls = message["tool_calls"].as_array();
                        match &message["content"] {
                            Value::String(_) => {}
                            Value::Null => assert!(calls.is_some(), "null content: {body}"),
                            other => panic!("assistant content {other}: {body}"),
                        }
                        for call in calls.into_iter().flatten() {
                            let id = str_of(call, "id");
                            assert!(!id.is_empty() && ids.insert(id.to_owned()), "id {id}");
                            assert_eq!(call["type"], "function");
                            assert!(!str_of(&call["function"], "name").is_empty());
                            str_of(&call["function"], "arguments");
                            open.push(id);
                        }
                        assert!(calls.is_none_or(|c| !c.is_empty()), "{body}");
                    }
                    "tool" => {
                        let id = str_of(message, "tool_call_id");
                        let at = open.iter().position(|open| *open == id);
                        let at = at.unwrap_or_else(|| {
                            panic!("tool message {i} answers no open call: {body}")
                        });
                        open.remove(at);
                        str_of(message, "content");
                    }
                    other => panic!("role {other}: {body}"),
                }
            }
            assert!(open.is_empty(), "calls {open:?} unanswered: {body}");
        }

        /// Messages: roles alternate from a user turn to a last user turn;
        /// no empty content or text block; thinking blocks are signed;
        /// `tool_use` input is an object; the message after an assistant
        /// with calls is a user turn opening with one `tool_result` per call
        /// (no other), and a `tool_result` appears nowhere else; ids are
        /// unique; at most four cache breakpoints (the API's limit).
        pub(super) fn check_anthropic(body: &Value) {
            let system = body["system"].as_array().expect("system blocks");
            assert!(
                system
                    .iter()
                    .all(|b| b["type"] == "text" && !str_of(b, "text").is_empty()),
                "{body}"
            );
            let breakpoints = body.to_string().matches("\"cache_control\"").count();
            assert!(
                (1..=4).contains(&breakpoints),
                "{breakpoints} breakpoints: {body}"
            );
            let messages = body["messages"].as_array().expect("messages");
            assert_eq!(messages.last().map(|m| &m["role"]), Some(&"user".into()));
            let mut ids = HashSet::new();
            let mut calls: Vec<&str> = Vec::new();
            for (i, message) in messages.iter().enumerate() {
                let role = str_of(message, "role");
                let want = if i % 2 == 0 { "user" } else { "assistant" };
                assert_eq!(role, want, "message {i}: {body}");
                let blocks: Vec<&Value> = match &message["content"] {
                    Value::String(text) => {
                        assert!(!text.is_empty(), "{body}");
                        Vec::new()
                    }
                    Value::Array(blocks) => blocks.iter().collect(),
                    other => panic!("content {other}: {body}"),
                };
                assert!(
                    message["content"].is_string() || !blocks.is_empty(),
                    "{body}"
                );
                // The calls this message must answer, from the one before.
                let answering = std::mem::take(&mut calls);
                let results: Vec<&str> = blocks
                    .iter()
                    .take_while(|b| b["type"] == "tool_result")
                    .map(|b| str_of(b, "tool_use_id"))
                    .collect();
                let mut wanted = answering.clone();
                let mut got = results.clone();
                wanted.sort_unstable();
                got.sort_unstable();
                assert_eq!(
                    got, wanted,
                    "message {i} answers the calls before it: {body}"
                );
                for block in blocks.iter().skip(results.len()) {
                    match str_of(block, "type") {
                        "text" => assert!(!str_of(block, "text").is_empty(), "{body}"),
                        "thinking" if role == "assistant" => {
                            str_of(block, "thinking");
                            assert!(!str_of(block, "signature").is_empty(), "{body}");
                        }
                        "tool_use" if role == "assistant" => {
                            let id = str_of(block, "id");
                            assert!(ids.insert(id.to_owned()), "id {id} twice: {body}");
                            assert!(!str_of(block, "name").is_empty());
                            assert!(block["input"].is_object(), "{body}");
                            calls.push(id);
                        }
                        other => panic!("a `{other}` block in a {role} message: {body}"),
                    }
                }
                for result in blocks.iter().take(results.len()) {
                    str_of(result, "content");
                    assert!(result["is_error"].is_boolean(), "{body}");
                }
            }
            assert!(calls.is_empty(), "calls {calls:?} unanswered: {body}");
        }
    }
}
