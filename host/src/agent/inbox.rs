//! Input that arrives while the loop runs: the user's messages queued as
//! **steering** (take it into account now) or **follow-up** (do it when you
//! are done), and the two points where the loop takes them
//! (docs/contributing/decisions.md#input-while-the-loop-runs).
//!
//! The loop polls the inbox before each model request (steering only: a
//! batch of tool results is never split) and when the model answers
//! without tool calls (steering, then follow-ups); only with both empty does
//! a run end as `completed`. Front ends push into it from any task; the
//! loop is the only taker.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use super::events::{AgentEvent, EventSink};
use crate::provider::Delivery;

/// How many queued messages one poll takes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum DeliveryMode {
    /// One per poll, so the model answers each before it sees the next.
    #[default]
    OneAtATime,
    /// Every queued message of the kind at once.
    All,
}

/// One message waiting in the inbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queued {
    pub delivery: Delivery,
    pub text: String,
}

/// The most messages waiting at once: input arrives faster than any model
/// reads it only when something is wrong.
pub(super) const MAX_QUEUED: usize = 256;
/// The most bytes of text waiting at once.
pub(super) const MAX_QUEUED_BYTES: usize = 16 * 1024 * 1024;

/// Why a message was not queued.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "not queued: {queued} message(s) of {bytes} bytes are already waiting (at most {MAX_QUEUED} \
     and {MAX_QUEUED_BYTES} bytes); wait for the agent to take them, or interrupt it"
)]
pub struct InboxFull {
    pub queued: usize,
    pub bytes: usize,
}

/// The queues, shared by the front end that pushes and the loop that takes.
/// Cloning shares them.
#[derive(Clone)]
pub struct Inbox {
    queue: Arc<Mutex<VecDeque<Queued>>>,
    mode: DeliveryMode,
    events: Option<EventSink>,
}

impl std::fmt::Debug for Inbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inbox")
            .field("queue", &self.queued())
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl Inbox {
    pub fn new(mode: DeliveryMode) -> Self {
        Inbox {
            queue: Arc::default(),
            mode,
            events: None,
        }
    }

    /// Sends `input_queued` and `input_returned` to `sink` (the loop sends
    /// `input_delivered` to its own).
    pub fn with_events(mut self, sink: EventSink) -> Self {
        self.events = Some(sink);
        self
    }

    /// Queues `text` for the loop to deliver as `delivery`, unless the
    /// inbox is full.
    pub fn push(&self, delivery: Delivery, text: String) -> Result<(), InboxFull> {
        {
            let mut queue = self.lock();
            let bytes: usize = queue.iter().map(|q| q.text.len()).sum();
            if queue.len() >= MAX_QUEUED || bytes + text.len() > MAX_QUEUED_BYTES {
                return Err(InboxFull {
                    queued: queue.len(),
                    bytes,
                });
            }
            queue.push_back(Queued {
                delivery,
                text: text.clone(),
            });
        }
        self.emit(AgentEvent::InputQueued { delivery, text });
        Ok(())
    }

    /// Takes what one poll delivers of `delivery`: the oldest such message,
    /// or all of them (in the order queued) under [`DeliveryMode::All`].
    pub(super) fn take(&self, delivery: Delivery) -> Vec<String> {
        let mut queue = self.lock();
        let mut taken = Vec::new();
        let mut kept = VecDeque::with_capacity(queue.len());
        for message in queue.drain(..) {
            let wanted = message.delivery == delivery
                && (self.mode == DeliveryMode::All || taken.is_empty());
            if wanted {
                taken.push(message.text);
            } else {
                kept.push_back(message);
            }
        }
        *queue = kept;
        taken
    }

    /// Everything still queued, in the order queued, without taking it.
    pub fn queued(&self) -> Vec<Queued> {
        self.lock().iter().cloned().collect()
    }

    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Takes every undelivered message back (an interrupted turn gives them
    /// to the user again) and reports them as `input_returned`.
    pub fn give_back(&self) -> Vec<Queued> {
        let returned: Vec<Queued> = self.lock().drain(..).collect();
        for message in &returned {
            self.emit(AgentEvent::InputReturned {
                delivery: message.delivery,
                text: message.text.clone(),
            });
        }
        returned
    }

    /// Drops the `index`-th queued message (the user took it back).
    pub fn remove(&self, index: usize) -> Option<Queued> {
        self.lock().remove(index)
    }

    /// Takes the oldest message of any kind, as the next prompt of an idle
    /// session (input that arrived just as a run ended).
    pub fn next_prompt(&self) -> Option<Queued> {
        self.lock().pop_front()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Queued>> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn emit(&self, event: AgentEvent) {
        if let Some(sink) = &self.events {
            sink(&event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inbox(mode: DeliveryMode) -> Inbox {
        let inbox = Inbox::new(mode);
        for (delivery, text) in [
            (Delivery::FollowUp, "f1"),
            (Delivery::Steer, "s1"),
            (Delivery::FollowUp, "f2"),
            (Delivery::Steer, "s2"),
        ] {
            inbox.push(delivery, text.into()).expect("room");
        }
        inbox
    }

    #[test]
    fn one_at_a_time_takes_the_oldest_of_its_kind() {
        let inbox = inbox(DeliveryMode::OneAtATime);
        assert_eq!(inbox.take(Delivery::Steer), ["s1"]);
        assert_eq!(inbox.take(Delivery::FollowUp), ["f1"]);
        assert_eq!(inbox.take(Delivery::Steer), ["s2"]);
        assert_eq!(inbox.take(Delivery::Steer), Vec::<String>::new());
        assert_eq!(
            inbox.queued(),
            [Queued {
                delivery: Delivery::FollowUp,
                text: "f2".into()
            }]
        );
    }

    #[test]
    fn all_takes_every_message_of_its_kind_in_order() {
        let inbox = inbox(DeliveryMode::All);
        assert_eq!(inbox.take(Delivery::FollowUp), ["f1", "f2"]);
        assert_eq!(inbox.take(Delivery::Steer), ["s1", "s2"]);
        assert!(inbox.is_empty());
    }

    #[test]
    fn a_full_inbox_refuses_more() {
        let inbox = Inbox::new(DeliveryMode::All);
        for n in 0..MAX_QUEUED {
            inbox.push(Delivery::Steer, format!("{n}")).expect("room");
        }
        let full = inbox.push(Delivery::Steer, "one more".into());
        assert_eq!(
            full.expect_err("full").to_string(),
            format!(
                "not queued: 256 message(s) of 658 bytes are already waiting (at most 256 and \
                 16777216 bytes); wait for the agent to take them, or interrupt it"
            )
        );
        let inbox = Inbox::new(DeliveryMode::All);
        let big = "x".repeat(MAX_QUEUED_BYTES);
        inbox.push(Delivery::Steer, big).expect("room");
        assert!(inbox.push(Delivery::Steer, "y".into()).is_err());
    }

    #[test]
    fn giving_back_empties_the_queue_in_the_order_queued() {
        let events = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&events);
        let inbox = Inbox::new(DeliveryMode::OneAtATime).with_events(Arc::new(move |event| {
            seen.lock().expect("lock").push(event.clone());
        }));
        inbox.push(Delivery::Steer, "s".into()).expect("room");
        inbox.push(Delivery::FollowUp, "f".into()).expect("room");
        let texts: Vec<String> = inbox.give_back().into_iter().map(|q| q.text).collect();
        assert_eq!(texts, ["s", "f"]);
        assert!(inbox.is_empty());
        assert_eq!(
            *events.lock().expect("lock"),
            [
                AgentEvent::InputQueued {
                    delivery: Delivery::Steer,
                    text: "s".into()
                },
                AgentEvent::InputQueued {
                    delivery: Delivery::FollowUp,
                    text: "f".into()
                },
                AgentEvent::InputReturned {
                    delivery: Delivery::Steer,
                    text: "s".into()
                },
                AgentEvent::InputReturned {
                    delivery: Delivery::FollowUp,
                    text: "f".into()
                },
            ]
        );
    }
}
