//! One model request as the loop sends it: the reply streamed to the
//! listeners, answered by the deadline, and the overflow policy. A request
//! the server refused as too long is sent once more, with less room asked
//! for the reply or after the conversation was compacted; refused again,
//! the run ends.

use std::ops::ControlFlow;

use tokio_util::sync::CancellationToken;

use super::budgets;
use super::compaction::{Compactor, Goal};
use super::context::{self, CompactionReason};
use super::events::{AgentEvent, Events};
use super::ledger::Message;
use super::stop::{StopReason, StopRecord};
use super::{ModelClient, ModelError};
use crate::provider::http::{RetryNotice, RetryObserver};
use crate::provider::overflow::{Overflow, OverflowKind};
use crate::provider::{Asking, AssistantMessage, ProviderError, TokenTotals};

/// The request about to be sent.
#[derive(Debug, Clone, Copy)]
pub(super) struct Outgoing {
    /// Its turn, counting from 1; the run has `turn - 1` replies so far.
    pub turn: u32,
    /// The tokens it holds, about.
    pub tokens: u64,
}

/// How a request ended when it did not stop the run.
pub(super) enum Response {
    Reply(AssistantMessage),
    /// The server refused it as too long and something was done about it:
    /// the turn starts over (steering, budgets) and the request is resent.
    SendAgain,
}

/// The requests of one run: what it learnt of the model's window, and
/// whether the next request is the one resend an overflow allows.
pub(super) struct Requests {
    /// Configured, or learnt from a server's overflow.
    window: Option<u64>,
    resent_after_overflow: bool,
    /// After a server said the reply's room did not fit: the room the
    /// request is sent again with, once.
    reply_cap: Option<u32>,
}

impl Requests {
    pub(super) fn new(window: Option<u64>) -> Self {
        Requests {
            window,
            resent_after_overflow: false,
            reply_cap: None,
        }
    }

    /// The model's context window, when known.
    pub(super) fn window(&self) -> Option<u64> {
        self.window
    }

    /// Sends `ledger` to the model. Every way it fails ends the turn; an
    /// overflow is compacted into `ledger` (its summary requests counted
    /// in `used`) or answered with a smaller reply room, and resent once.
    pub(super) async fn send<M: ModelClient>(
        &mut self,
        compactor: &Compactor<'_, M>,
        ledger: &mut Vec<Message>,
        outgoing: Outgoing,
        used: &mut TokenTotals,
        cancel: &CancellationToken,
    ) -> ControlFlow<StopRecord, Response> {
        let (turn, turns) = (outgoing.turn, outgoing.turn - 1);
        let (config, events) = (compactor.config, compactor.events);
        let request = compactor.model.next(
            compactor.system,
            ledger,
            compactor.specs,
            cancel,
            asking(events, self.reply_cap.take()),
        );
        let reply = budgets::by_deadline(config.request_timeout, turns, request).await;
        let end = |stop: StopRecord| {
            events.emit(AgentEvent::TurnEnd { turn });
            ControlFlow::Break(stop)
        };
        match reply {
            Ok(Ok(Some(assistant))) => {
                self.resent_after_overflow = false;
                ControlFlow::Continue(Response::Reply(assistant))
            }
            Err(late) => end(late),
            Ok(Ok(None)) => end(StopRecord::new(
                StopReason::Aborted,
                turns,
                "cancelled while the model was replying",
            )),
            Ok(Err(ModelError::Provider(ProviderError::ContextOverflow { overflow, .. })))
                if overflow.kind == OverflowKind::ReplyRoom
                    && !self.resent_after_overflow
                    && let Some(room) = context::room_left(&overflow) =>
            {
                events.emit(AgentEvent::TurnEnd { turn });
                self.resent_after_overflow = true;
                self.reply_cap = Some(room);
                ControlFlow::Continue(Response::SendAgain)
            }
            Ok(Err(ModelError::Provider(ProviderError::ContextOverflow { overflow, .. })))
                if overflow.kind == OverflowKind::Prompt =>
            {
                events.emit(AgentEvent::TurnEnd { turn });
                self.compact_after(compactor, ledger, &overflow, outgoing, used, cancel)
                    .await
            }
            // A stream that says nothing ends as the request deadline.
            Ok(Err(ModelError::Provider(error @ ProviderError::NoContent { .. }))) => end(
                StopRecord::new(StopReason::RequestTimeout, turns, error.to_string()),
            ),
            Ok(Err(error)) => end(StopRecord::new(StopReason::Error, turns, error.to_string())),
        }
    }

    /// After the server refused the prompt as too long: compacts and sends
    /// again, unless this was the resend or compacting freed nothing.
    async fn compact_after<M: ModelClient>(
        &mut self,
        compactor: &Compactor<'_, M>,
        ledger: &mut Vec<Message>,
        overflow: &Overflow,
        outgoing: Outgoing,
        used: &mut TokenTotals,
        cancel: &CancellationToken,
    ) -> ControlFlow<StopRecord, Response> {
        if overflow.window.is_some() {
            self.window = overflow.window;
        }
        let why = if self.resent_after_overflow {
            "it still did not fit after the conversation was compacted"
        } else {
            let before = overflow.prompt_tokens.unwrap_or(outgoing.tokens);
            let goal = Goal {
                reason: CompactionReason::Overflow,
                before,
                target: self.window.map_or(before / 2, |window| window / 2),
                window: self.window,
                focus: None,
            };
            match compactor.compact(ledger, goal, cancel).await {
                Some(done) => {
                    for usage in &done.counted {
                        used.add(usage);
                    }
                    if done.after < before {
                        self.resent_after_overflow = true;
                        return ControlFlow::Continue(Response::SendAgain);
                    }
                    "compacting it did not make it smaller"
                }
                None => "nothing old enough was left to set aside or summarise",
            }
        };
        ControlFlow::Break(StopRecord::new(
            StopReason::Error,
            outgoing.turn - 1,
            overflow_evidence(overflow, why),
        ))
    }
}

/// Who hears the reply as it streams and each retry, and the room the
/// reply may take (`None`: the client's default).
fn asking(events: &Events, max_tokens: Option<u32>) -> Asking {
    let on_text = events.sink().cloned().map(|sink| {
        let forward: crate::provider::TextSink = std::sync::Arc::new(move |text: &str| {
            sink(&AgentEvent::MessageDelta {
                text: text.to_string(),
            });
        });
        forward
    });
    let on_retry = events.sink().cloned().map(|sink| {
        let forward: RetryObserver = std::sync::Arc::new(move |notice: &RetryNotice| {
            sink(&AgentEvent::ModelRetry {
                attempt: notice.attempt,
                wait_ms: u64::try_from(notice.wait.as_millis()).unwrap_or(u64::MAX),
                reason: notice.reason.clone(),
            });
        });
        forward
    });
    Asking {
        on_text,
        on_retry,
        max_tokens,
    }
}

/// Why a run ended on an overflow, and what the user can do.
fn overflow_evidence(overflow: &Overflow, why: &str) -> String {
    let size = match (overflow.prompt_tokens, overflow.window) {
        (Some(prompt), Some(window)) => format!(" ({prompt} tokens; the window holds {window})"),
        _ => String::new(),
    };
    format!(
        "the conversation no longer fits the model's context window{size} and {why}: start a new \
         session (/clear in a chat), or use a model with a larger window"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::LoopConfig;
    use crate::agent::testing::{FakeTools, Reply, ScriptedModel, run_with};

    #[tokio::test]
    async fn cancelled_mid_stream_stores_nothing() {
        let model = ScriptedModel::new([Reply::CancelMidStream]);
        let (ledger, stop) = run_with(
            &model,
            &FakeTools::default(),
            LoopConfig::default(),
            &CancellationToken::new(),
        )
        .await;
        assert_eq!(stop.reason, StopReason::Aborted);
        assert_eq!(stop.turns, 0);
        assert_eq!(ledger.len(), 1);
    }

    #[tokio::test]
    async fn a_model_error_stops_with_its_text() {
        let model = ScriptedModel::new([Reply::Error("the server is down".into())]);
        let (_, stop) = run_with(
            &model,
            &FakeTools::default(),
            LoopConfig::default(),
            &CancellationToken::new(),
        )
        .await;
        assert_eq!(stop.reason, StopReason::Error);
        assert_eq!(
            stop.evidence,
            "`openai` at http://model.test/v1/chat/completions answered HTTP 500: the server is down"
        );
        assert_eq!(stop.turns, 0);
    }
}
