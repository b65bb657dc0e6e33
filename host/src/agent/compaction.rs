//! Compaction, as the loop runs it: stage 1 sets old tool results aside
//! (module `context`, no model call); when that is not enough, stage 2
//! asks the model to summarise the conversation before a cut point (module
//! `summary`). Each compaction is told as a `compaction_start` and a
//! `compaction_end` event, which the session file keeps as one record.

use std::ops::ControlFlow;

use tokio_util::sync::CancellationToken;

use super::config::LoopConfig;
use super::context::{self, CompactionReason};
use super::events::{AgentEvent, Events};
use super::stop::{StopReason, StopRecord};
use super::summary;
use super::{ModelClient, ModelError, ToolSpecForModel};
use crate::provider::{Asking, Message, ProviderError, TokenTotals, Usage};

/// What a compaction is asked to do.
pub(super) struct Goal<'a> {
    pub reason: CompactionReason,
    /// The estimate of the next request now.
    pub before: u64,
    /// What to bring it to.
    pub target: u64,
    pub window: Option<u64>,
    /// What the user wants the summary to keep (`/compact FOCUS`).
    pub focus: Option<&'a str>,
}

/// What a compaction did.
pub(super) struct Compacted {
    /// The estimate of the next request after it.
    pub after: u64,
    /// What its summary requests count against the run's budgets: their
    /// usage, estimated where the server reported none, refused summaries
    /// included ([`context::counted`]).
    pub counted: Vec<Usage>,
}

/// Times the summary request is sent, the oldest half of what it held
/// dropped after each overflow.
const SUMMARY_ATTEMPTS: usize = 3;

/// Threshold compactions in a row that may fail to bring the estimate
/// down by a fifth before the loop stops trying until a server refuses a
/// request (no compaction loops).
const MOST_FRUITLESS: u32 = 3;

/// The fewest tokens a compaction the user did not ask for summarises.
const LEAST_SUMMARISED: u64 = 2048;

/// Tokens the summariser's instructions and the wire format take, about.
const SUMMARY_OVERHEAD: u64 = 512;

/// What compaction works with: the model that summarises, the run's
/// settings, the tools the next request offers (they count in its size)
/// and where its events go.
pub(super) struct Compactor<'a, M> {
    pub model: &'a M,
    pub config: &'a LoopConfig,
    /// The system prompt the next request is sent with.
    pub system: &'a str,
    pub specs: &'a [ToolSpecForModel],
    pub events: &'a Events,
}

/// Threshold compaction across a run's requests: how many in a row did not
/// bring the estimate down by a fifth.
#[derive(Default)]
pub(super) struct Threshold {
    fruitless: u32,
}

impl<M: ModelClient> Compactor<'_, M> {
    /// The tokens the next request will hold, about (module `context`).
    pub(super) fn estimate(&self, ledger: &[Message]) -> u64 {
        context::estimate_next_prompt(self.system, self.specs, ledger)
    }

    /// Makes room before a request: with a `window` known, compacts when
    /// the request would leave no room for the reply; without, holds the
    /// conversation to its memory bound. The request's estimate after it;
    /// a stop when `cancel` fired while compacting.
    pub(super) async fn make_room(
        &self,
        ledger: &mut Vec<Message>,
        window: Option<u64>,
        threshold: &mut Threshold,
        used: &mut TokenTotals,
        turns: u32,
        cancel: &CancellationToken,
    ) -> ControlFlow<StopRecord, u64> {
        let mut next = self.estimate(ledger);
        if let Some(window) = window
            && threshold.fruitless < MOST_FRUITLESS
            && next.saturating_add(context::reply_room(window)) > window
        {
            let goal = Goal {
                reason: CompactionReason::Threshold,
                before: next,
                target: window / 2,
                window: Some(window),
                focus: None,
            };
            match self.compact(ledger, goal, cancel).await {
                Some(done) => {
                    for usage in &done.counted {
                        used.add(usage);
                    }
                    let fell_by_a_fifth = done.after.saturating_mul(5) <= next.saturating_mul(4);
                    threshold.fruitless = if fell_by_a_fifth {
                        0
                    } else {
                        threshold.fruitless + 1
                    };
                    next = done.after;
                }
                None => threshold.fruitless += 1,
            }
            if cancel.is_cancelled() {
                return ControlFlow::Break(StopRecord::new(
                    StopReason::Aborted,
                    turns,
                    "cancelled while the conversation was compacted",
                ));
            }
        }
        if window.is_none() && self.hold_to_memory(ledger, next) {
            next = self.estimate(ledger);
        }
        ControlFlow::Continue(next)
    }

    /// Compacts `ledger` towards `goal.target`; `None` when there was
    /// nothing to do (no event then).
    pub(super) async fn compact(
        &self,
        ledger: &mut Vec<Message>,
        goal: Goal<'_>,
        cancel: &CancellationToken,
    ) -> Option<Compacted> {
        let excess = goal.before.saturating_sub(goal.target);
        let (masked, freed) =
            context::set_aside_old_results(ledger, excess, self.config.result_budget.as_ref());
        let mut after = goal.before.saturating_sub(freed);

        let room = summary::summary_room(goal.window);
        let overhead = context::overhead(self.system, self.specs);
        let cut = (after > goal.target)
            .then(|| {
                let keep = goal.target.saturating_sub(overhead + room) / 2;
                summary::cut_point(ledger, keep)
            })
            .flatten()
            .filter(|&cut| {
                // Asked for, any conversation is worth it; else only one
                // larger than the summary would be, and than a floor that
                // a tiny window (a workspace may set one) cannot lower: a
                // model call per turn would double what a run costs.
                let least = if goal.reason == CompactionReason::Manual {
                    room / 8
                } else {
                    room.max(LEAST_SUMMARISED)
                };
                summary::worth_summarising(&ledger[..cut], least)
            });
        if masked.is_empty() && cut.is_none() {
            return None;
        }
        self.events.emit(AgentEvent::CompactionStart {
            reason: goal.reason,
            tokens_before: goal.before,
            summarising: cut.is_some(),
        });

        let mut summarised = None;
        let mut usage = None;
        let mut counted = Vec::new();
        if let Some(cut) = cut {
            let fits = goal
                .window
                .map(|window| window.saturating_sub(room + SUMMARY_OVERHEAD));
            match self
                .summarise(&ledger[..cut], room, fits, goal.focus, &mut counted, cancel)
                .await
            {
                Ok((text, used)) => {
                    usage = used;
                    if summary::cut_and_summarise(ledger, cut, &text) {
                        summarised = Some((cut, text));
                        after = overhead.saturating_add(context::bytes(ledger) / 4);
                    }
                }
                Err(Some(why)) => self.events.emit(AgentEvent::Warning {
                    message: format!(
                        "the conversation could not be summarised to fit the model's context \
                         window: {why}"
                    ),
                }),
                Err(None) => {}
            }
        }
        context::forget_usage(ledger);
        let (first_kept, summary) = summarised.unzip();
        self.events.emit(AgentEvent::CompactionEnd {
            reason: goal.reason,
            tokens_before: goal.before,
            tokens_after: after,
            masked,
            first_kept,
            summary,
            usage,
        });
        Some(Compacted { after, counted })
    }

    /// With no window known, keeps the conversation within
    /// `ledger_most` bytes of memory: past it, the oldest tool results are
    /// set aside (recorded as a compaction, so a resume does the same)
    /// until it holds about half. Whether it set any aside.
    fn hold_to_memory(&self, ledger: &mut [Message], before: u64) -> bool {
        let most = self.config.ledger_most;
        let bytes = context::bytes(ledger);
        if bytes <= most {
            return false;
        }
        let excess = (bytes - most / 2) / context::BYTES_PER_TOKEN;
        let (masked, freed) =
            context::set_aside_old_results(ledger, excess, self.config.result_budget.as_ref());
        if masked.is_empty() {
            return false;
        }
        self.events.emit(AgentEvent::CompactionStart {
            reason: CompactionReason::Threshold,
            tokens_before: before,
            summarising: false,
        });
        context::forget_usage(ledger);
        self.events.emit(AgentEvent::CompactionEnd {
            reason: CompactionReason::Threshold,
            tokens_before: before,
            tokens_after: before.saturating_sub(freed),
            masked,
            first_kept: None,
            summary: None,
            usage: None,
        });
        true
    }

    /// Asks the model for a summary of `part` within `room` tokens, its
    /// transcript cut to `fits` tokens when the window is known; the
    /// summary and the request's usage. `Err(None)` when cancelled,
    /// `Err(Some(why))` when it failed. What every reply counts against the
    /// run's budgets is added to `counted`, a refused summary's too.
    async fn summarise(
        &self,
        part: &[Message],
        room: u64,
        fits: Option<u64>,
        focus: Option<&str>,
        counted: &mut Vec<Usage>,
        cancel: &CancellationToken,
    ) -> Result<(String, Option<Usage>), Option<String>> {
        let mut left_out = fits.map_or(0, |tokens| summary::left_out_to_fit(part, tokens));
        let mut why = String::new();
        for _ in 0..SUMMARY_ATTEMPTS {
            if left_out >= part.len() {
                break;
            }
            let transcript = summary::transcript(&part[left_out..], left_out, focus);
            let asking = Asking {
                on_text: None,
                on_retry: None,
                max_tokens: Some(u32::try_from(room).unwrap_or(u32::MAX)),
            };
            let history = [Message::prompt(transcript)];
            let request = self
                .model
                .next(summary::SUMMARY_SYSTEM, &history, &[], cancel, asking);
            let reply = match self.config.request_timeout {
                None => request.await,
                Some(limit) => match tokio::time::timeout(limit, request).await {
                    Ok(reply) => reply,
                    Err(_) => {
                        return Err(Some(format!(
                            "the summary request was unanswered after {} s",
                            limit.as_secs()
                        )));
                    }
                },
            };
            match reply {
                Ok(Some(reply)) => {
                    let sent = (summary::SUMMARY_SYSTEM.len() as u64)
                        .saturating_add(context::bytes(&history))
                        .div_ceil(context::BYTES_PER_TOKEN);
                    counted.push(context::counted(&reply, sent));
                    let text = reply.text();
                    if text.trim().is_empty() {
                        return Err(Some("the model's summary was empty".into()));
                    }
                    if let Some(why) = summary::oversized(&text, room) {
                        return Err(Some(why));
                    }
                    return Ok((text, reply.usage));
                }
                Ok(None) => return Err(None),
                Err(ModelError::Provider(ProviderError::ContextOverflow { .. })) => {
                    // Drop the older half of what was sent.
                    left_out += (part.len() - left_out).div_ceil(2);
                    why = "even its most recent part did not fit the window".into();
                }
                Err(error) => return Err(Some(error.to_string())),
            }
        }
        if why.is_empty() {
            why = "each message is too long for the window".into();
        }
        Err(Some(why))
    }
}
