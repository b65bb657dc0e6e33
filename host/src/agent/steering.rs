//! The user's queued input as the loop takes it: steering before each
//! request, and at a reply without tool calls steering then follow-ups,
//! which go on with the run where it would have completed.

use std::ops::ControlFlow;

use tokio_util::sync::CancellationToken;

use super::events::{AgentEvent, Events};
use super::inbox::Inbox;
use super::ledger::{Delivery, Message};
use super::stop::{StopReason, StopRecord};
use crate::provider::Finish;

/// The inbox of a run, if it has one, and where events go.
pub(super) struct Steering<'a> {
    pub inbox: Option<&'a Inbox>,
    pub events: &'a Events,
}

impl Steering<'_> {
    /// Appends what one poll of the inbox takes of `delivery`, each as a
    /// user message; whether there was any.
    pub(super) fn deliver(&self, ledger: &mut Vec<Message>, delivery: Delivery) -> bool {
        let Some(inbox) = self.inbox else {
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

    /// Ends the turn of a reply without tool calls (reply number `turns`)
    /// and, with it, the run, unless queued input was delivered to go on
    /// with: then the next request is made without polling steering again.
    pub(super) fn after_last_reply(
        &self,
        ledger: &mut Vec<Message>,
        finish: Finish,
        turns: u32,
        max_turns: u32,
        cancel: &CancellationToken,
    ) -> ControlFlow<StopRecord> {
        self.events.emit(AgentEvent::TurnEnd { turn: turns });
        // The server reported an error mid-stream, withheld the reply
        // (content filter, refusal) or cut the stream: the run did not
        // complete, whatever text arrived.
        if finish == Finish::Error {
            return ControlFlow::Break(StopRecord::new(
                StopReason::Error,
                turns,
                "the model's reply ended with an error (the server reported one, withheld the \
                 reply, or cut the stream)",
            ));
        }
        let truncated = finish == Finish::Length;
        let stop = |reason, evidence: String| {
            ControlFlow::Break(StopRecord {
                truncated,
                ..StopRecord::new(reason, turns, evidence)
            })
        };
        if let Some(waiting) = self.inbox.filter(|inbox| !inbox.is_empty()) {
            let queued = waiting.queued().len();
            if cancel.is_cancelled() {
                return stop(
                    StopReason::Aborted,
                    format!("cancelled with {queued} queued message(s) undelivered"),
                );
            }
            if turns >= max_turns {
                return stop(
                    StopReason::MaxTurns,
                    format!(
                        "reached the limit of {max_turns} turns with {queued} queued message(s) \
                         undelivered"
                    ),
                );
            }
            // Steering first: it was meant for the work now ending.
            if self.deliver(ledger, Delivery::Steer) || self.deliver(ledger, Delivery::FollowUp) {
                return ControlFlow::Continue(());
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
        stop(StopReason::Completed, evidence)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::agent::testing::*;
    use crate::agent::{DeliveryMode, INTERRUPTED, LoopConfig};
    use crate::provider::{AssistantMessage, Block};

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
}
