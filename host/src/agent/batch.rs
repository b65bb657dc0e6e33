//! A reply's tool calls as the loop runs them: consecutive read-only calls
//! together, every other call alone, in call order; one result per call,
//! all in the message right after the reply, whatever stops the run; the
//! same call again and again warned of, then stopped.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::time::Instant;

use futures_util::future::join_all;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::approval::{self, Granting};
use super::config::LoopConfig;
use super::events::{AgentEvent, Events};
use super::ledger::{Message, ToolResultEntry, tool_calls};
use super::loop_detect::{Fingerprint, LoopDetector, Verdict};
use super::stop::{StopReason, StopRecord};
use super::{ToolResult, ToolRunner, ToolSpecForModel};
use crate::provider::{AssistantMessage, Finish, ReplyCut};

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
pub(super) struct Call {
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

/// The calls of one reply, taken before the reply goes into the ledger.
pub(super) struct Batch {
    /// The reply's turn (the run's replies so far, this one included).
    pub turn: u32,
    pub calls: Vec<Call>,
    pub finish: Finish,
}

impl Batch {
    pub(super) fn of(reply: &AssistantMessage, turn: u32) -> Self {
        let calls = tool_calls(reply)
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
        Batch {
            turn,
            calls,
            finish: reply.finish,
        }
    }

    /// A reply toolhost stopped reading at its cap: its calls are answered
    /// as cut ones, and the run stops, since a server that does not stop
    /// would be sent the cut reply and likely go on.
    pub(super) fn cut_short(
        self,
        events: &Events,
        ledger: &mut Vec<Message>,
        cut: ReplyCut,
    ) -> StopRecord {
        if !self.calls.is_empty() {
            let results = answer_each(&self.calls, NOT_EXECUTED_TRUNCATED);
            events.push(ledger, results_message(&self.calls, results));
        }
        events.emit(AgentEvent::TurnEnd { turn: self.turn });
        StopRecord {
            truncated: true,
            ..StopRecord::new(StopReason::Error, self.turn, cut.notice())
        }
    }
}

/// What a run's batches run with: the tools, the run's settings, and
/// where events go.
pub(super) struct Tools<'a, T> {
    pub runner: &'a T,
    pub config: &'a LoopConfig,
    pub events: &'a Events,
    /// The session's grants and who is asked for more; none in tests and
    /// in front ends that keep no session's grants.
    pub granting: Option<&'a Granting>,
}

/// What the batches of one run share: which tools only read (those run
/// together), and the streaks of identical calls.
pub(super) struct Batches {
    read_only: HashMap<String, bool>,
    detector: LoopDetector,
}

impl Batches {
    pub(super) fn new(specs: &[ToolSpecForModel], config: &LoopConfig) -> Self {
        Batches {
            read_only: specs
                .iter()
                .map(|spec| (spec.name.clone(), spec.read_only))
                .collect(),
            detector: LoopDetector::new(config.warn_after, config.stop_after),
        }
    }

    /// Runs `batch` and records one result per call; the run stops when
    /// the batch came after the last allowed turn, when `cancel` fired,
    /// or when it repeated a call once too often.
    pub(super) async fn run<T: ToolRunner>(
        &mut self,
        tools: &Tools<'_, T>,
        ledger: &mut Vec<Message>,
        batch: Batch,
        cancel: &CancellationToken,
    ) -> ControlFlow<StopRecord> {
        let Batch {
            turn,
            calls,
            finish,
        } = batch;
        let (config, events) = (tools.config, tools.events);
        if turn >= config.max_turns {
            let results = answer_each(&calls, NOT_EXECUTED_MAX_TURNS);
            events.push(ledger, results_message(&calls, results));
            events.emit(AgentEvent::TurnEnd { turn });
            return ControlFlow::Break(StopRecord::new(
                StopReason::MaxTurns,
                turn,
                format!(
                    "reached the limit of {} turns with {} tool call(s) pending",
                    config.max_turns,
                    calls.len()
                ),
            ));
        }
        let results = if finish == Finish::Length {
            answer_each(&calls, NOT_EXECUTED_TRUNCATED)
        } else {
            tools.execute(&calls, &self.read_only, cancel).await
        };
        let mut entries = entries(&calls, results);
        let looped = self.watch(&calls, &mut entries, config.stop_after);
        events.push(ledger, Message::ToolResults { results: entries });
        events.emit(AgentEvent::TurnEnd { turn });
        if cancel.is_cancelled() {
            return ControlFlow::Break(StopRecord::new(
                StopReason::Aborted,
                turn,
                "cancelled while tools were running",
            ));
        }
        match looped {
            Some(evidence) => {
                ControlFlow::Break(StopRecord::new(StopReason::LoopDetected, turn, evidence))
            }
            None => ControlFlow::Continue(()),
        }
    }

    /// Counts each call towards its streak: warns in its result at
    /// `warn_after`; at `stop_after`, says why the run stops.
    fn watch(
        &mut self,
        calls: &[Call],
        entries: &mut [ToolResultEntry],
        stop_after: u32,
    ) -> Option<String> {
        let mut looped = None;
        for (call, entry) in calls.iter().zip(entries.iter_mut()) {
            match self
                .detector
                .observe(Fingerprint::new(&call.name, call.arguments.as_ref()))
            {
                Verdict::Fine => {}
                Verdict::Warn { count } => entry.text.push_str(&format!(
                    "\n\n(warning: you have called `{}` with the same arguments {count} times \
                     in a row; the result will not change. Try a different approach; at {} \
                     identical calls in a row the run stops.)",
                    call.name, stop_after
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
        looped
    }
}

impl<T: ToolRunner> Tools<'_, T> {
    /// Runs a batch: consecutive read-only calls together, every other call
    /// alone, in call order; the calls past [`CALLS_PER_REPLY`] are answered
    /// with the cap instead. `None` for a call that never started because
    /// `cancel` fired.
    pub(super) async fn execute(
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
        let mut result = match self.granting {
            Some(granting) => {
                let asking = approval::Asking {
                    granting,
                    events: self.events,
                    call_id: &call.id,
                };
                asking
                    .call(self.runner, &call.name, arguments, cancel, progress)
                    .await
            }
            None => {
                let none = std::sync::Arc::from([]);
                self.runner
                    .call(&call.name, arguments, cancel, progress, none)
                    .await
            }
        };
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
}

/// One entry per call, in call order; a missing result is an interruption.
fn entries(calls: &[Call], results: Vec<Option<ToolResult>>) -> Vec<ToolResultEntry> {
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

/// The message of `results`, one entry per call.
fn results_message(calls: &[Call], results: Vec<Option<ToolResult>>) -> Message {
    Message::ToolResults {
        results: entries(calls, results),
    }
}

/// Every call of a batch that does not run answered with `text`.
fn answer_each(calls: &[Call], text: &str) -> Vec<Option<ToolResult>> {
    calls.iter().map(|_| Some(error_result(text))).collect()
}

pub(super) fn error_result(text: &str) -> ToolResult {
    ToolResult::new(text, true)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;
    use std::sync::{Arc, Mutex};

    use serde_json::json;

    use super::*;
    use crate::agent::testing::*;
    use crate::agent::{AgentLoop, LoopConfig};
    use crate::provider::Block;

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
}
