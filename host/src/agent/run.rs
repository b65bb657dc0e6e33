//! The loop itself: ask the model, record the reply, run its tool calls,
//! record one result per call, repeat until a stop
//! (docs/contributing/decisions.md#the-agent-loop-and-its-stop-record).
//! Each turn is a sequence of named steps, each in its own module, each
//! going on to the next or stopping the run.
//!
//! Invariants every path keeps: the ledger only grows by whole messages;
//! each tool call of an assistant message gets exactly one result, in the
//! message that immediately follows it; no model request is made once
//! `cancel` has fired; every run ends with one [`StopRecord`].

use std::ops::ControlFlow;

use tokio_util::sync::CancellationToken;

use super::approval::Granting;
use super::batch::{Batch, Batches, Tools};
use super::budgets;
use super::compaction::{Compactor, Goal, Threshold};
use super::config::LoopConfig;
use super::context::{self, CompactionReason};
use super::events::{AgentEvent, EventSink, Events};
use super::inbox::Inbox;
use super::ledger::{Delivery, Message};
use super::request::{Outgoing, Requests, Response};
use super::steering::Steering;
use super::stop::{StopReason, StopRecord};
use super::{ModelClient, ToolRunner, ToolSpecForModel};
use crate::provider::{AssistantMessage, TokenTotals};

/// A model, a set of tools and the bounds of a run. Reusable: each
/// [`AgentLoop::run`] is independent apart from the ledger it is given.
pub struct AgentLoop<M, T> {
    model: M,
    tools: T,
    config: LoopConfig,
    events: Events,
    inbox: Option<Inbox>,
    granting: Option<Granting>,
}

/// What one run carries from turn to turn.
struct RunState {
    /// The tools offered with every request of the run.
    specs: Vec<ToolSpecForModel>,
    /// Replies so far.
    turns: u32,
    /// What the run's requests spent, summaries included.
    used: TokenTotals,
    warned_of_a_cut: bool,
    requests: Requests,
    threshold: Threshold,
    batches: Batches,
    /// Steering is taken before a request that follows the prompt or a
    /// batch's results, not right after input delivered at the end of a
    /// reply: one poll, one delivery.
    poll_steering: bool,
}

impl RunState {
    /// Counts `reply` to a request of about `sent` tokens against the
    /// budgets (what the server did not count is estimated, never free),
    /// and warns once a run of a server that cut the prompt silently.
    fn count(&mut self, reply: &AssistantMessage, sent: u64, events: &Events) {
        self.used.add(&context::counted(reply, sent));
        if let Some(usage) = &reply.usage
            && !self.warned_of_a_cut
            && let Some(warning) = context::silent_cut(sent, usage)
        {
            self.warned_of_a_cut = true;
            events.emit(AgentEvent::Warning { message: warning });
        }
    }
}

impl<M: ModelClient, T: ToolRunner> AgentLoop<M, T> {
    pub fn new(model: M, tools: T, config: LoopConfig) -> Self {
        AgentLoop {
            model,
            tools,
            config,
            events: Events::default(),
            inbox: None,
            granting: None,
        }
    }

    /// Sends `text` as the system prompt from the next run on (a session's
    /// project instructions changed between prompts).
    pub fn set_system_prompt(&mut self, text: String) {
        self.config.system_prompt = text;
    }

    /// The tools it runs.
    pub fn tools(&self) -> &T {
        &self.tools
    }

    /// The session's grants, when it runs with them.
    pub fn granting(&self) -> Option<&Granting> {
        self.granting.as_ref()
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
        let system = self.system_prompt();
        let compactor = self.compactor(&specs, &system);
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

    /// Runs each call with the session's grants in `granting`, and asks
    /// its approver for one a refused call would need. Without it, calls
    /// run as the tools were loaded and a refusal stands.
    pub fn with_granting(mut self, granting: Granting) -> Self {
        self.granting = Some(granting);
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
        let mut run = RunState {
            turns: 0,
            used: TokenTotals::default(),
            warned_of_a_cut: false,
            requests: Requests::new(self.config.context_window),
            threshold: Threshold::default(),
            batches: Batches::new(&specs, &self.config),
            poll_steering: true,
            specs,
        };
        self.events.push(ledger, Message::prompt(prompt));
        loop {
            if let ControlFlow::Break(stop) = self.turn(&mut run, ledger, cancel).await {
                return stop;
            }
        }
    }

    /// One turn, step by step: steering, room for the request, the
    /// budgets, the request, then the reply's batch or the run's end.
    async fn turn(
        &self,
        run: &mut RunState,
        ledger: &mut Vec<Message>,
        cancel: &CancellationToken,
    ) -> ControlFlow<StopRecord> {
        if cancel.is_cancelled() {
            let evidence = "cancelled before the model request";
            return ControlFlow::Break(StopRecord::new(StopReason::Aborted, run.turns, evidence));
        }
        if std::mem::replace(&mut run.poll_steering, true) {
            self.steering().deliver(ledger, Delivery::Steer);
        }
        let system = self.system_prompt();
        let compactor = self.compactor(&run.specs, &system);
        let window = run.requests.window();
        let tokens = compactor
            .make_room(
                ledger,
                window,
                &mut run.threshold,
                &mut run.used,
                run.turns,
                cancel,
            )
            .await?;
        budgets::check(&self.config, &run.used, tokens, run.turns)?;
        let turn = run.turns + 1;
        self.events.emit(AgentEvent::TurnStart { turn });
        let outgoing = Outgoing { turn, tokens };
        let sent = run
            .requests
            .send(&compactor, ledger, outgoing, &mut run.used, cancel);
        let reply = match sent.await? {
            Response::Reply(reply) => reply,
            Response::SendAgain => return ControlFlow::Continue(()),
        };
        run.turns = turn;
        run.count(&reply, tokens, &self.events);
        let cut = reply.cut;
        let batch = Batch::of(&reply, turn);
        self.events.push(ledger, Message::Assistant(reply));
        if let Some(cut) = cut {
            return ControlFlow::Break(batch.cut_short(&self.events, ledger, cut));
        }
        if batch.calls.is_empty() {
            let (finish, max_turns) = (batch.finish, self.config.max_turns);
            let steering = self.steering();
            steering.after_last_reply(ledger, finish, turn, max_turns, cancel)?;
            run.poll_steering = false;
            return ControlFlow::Continue(());
        }
        let tools = Tools {
            runner: &self.tools,
            config: &self.config,
            events: &self.events,
            granting: self.granting.as_ref(),
        };
        run.batches.run(&tools, ledger, batch, cancel).await
    }

    fn compactor<'a>(&'a self, specs: &'a [ToolSpecForModel], system: &'a str) -> Compactor<'a, M> {
        Compactor {
            model: &self.model,
            config: &self.config,
            system,
            specs,
            events: &self.events,
        }
    }

    /// The system prompt of the next request: the configured one, then
    /// what the user granted in the session so far.
    fn system_prompt(&self) -> std::borrow::Cow<'_, str> {
        match &self.granting {
            Some(granting) => granting.grants.system_prompt(&self.config.system_prompt),
            None => self.config.system_prompt.as_str().into(),
        }
    }

    fn steering(&self) -> Steering<'_> {
        Steering {
            inbox: self.inbox.as_ref(),
            events: &self.events,
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::agent::testing::*;
    use crate::agent::{DeliveryMode, ToolResultEntry};
    use crate::provider::anthropic::Anthropic;
    use crate::provider::openai::OpenAi;
    use crate::provider::{Block, Finish};

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
