//! One prompt's run while the user keeps typing: what a front end submits
//! (input, an interrupt) reaches the loop while it works, as Codex's
//! submission queue does (`codex-rs/protocol`'s `Op`). The front end owns
//! the idle time between prompts; this owns the time a run works.

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::inbox::Inbox;
use super::ledger::{Delivery, Message};
use super::run::AgentLoop;
use super::stop::StopRecord;
use super::{ModelClient, ToolRunner};

/// What a front end sends while a run works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Submission {
    /// A message for the run: queued as `delivery` (steering when none).
    Input {
        text: String,
        delivery: Option<Delivery>,
    },
    /// Stop the turn: the model's reply is dropped, running tools stop,
    /// queued input goes back to the user.
    Interrupt,
}

/// What a front end hears when input cannot be queued.
pub type Refused = Box<dyn Fn(&super::inbox::InboxFull) + Send + Sync>;

/// How one prompt's run ended.
#[derive(Debug)]
pub struct PromptEnd {
    pub stop: StopRecord,
    /// Whether the submissions are still open (the front end did not go
    /// away while the run worked).
    pub open: bool,
    /// Whether the user interrupted it.
    pub interrupted: bool,
}

/// Runs `prompt` on `ledger`, queueing each submitted input in `inbox` and
/// cancelling the run's own token on an interrupt. `parent` cancelling
/// (Ctrl+C of the process) cancels the run too. When it was interrupted,
/// what is still queued goes back to the user (`input_returned`).
pub async fn run_prompt<M: ModelClient, T: ToolRunner>(
    agent: &AgentLoop<M, T>,
    ledger: &mut Vec<Message>,
    inbox: &Inbox,
    prompt: String,
    parent: &CancellationToken,
    submissions: &mut mpsc::Receiver<Submission>,
    refused: &Refused,
) -> PromptEnd {
    let cancel = parent.child_token();
    let mut open = true;
    let mut interrupted = false;
    let stop = {
        let run = agent.run(ledger, prompt, &cancel);
        tokio::pin!(run);
        loop {
            tokio::select! {
                stop = &mut run => break stop,
                submission = submissions.recv(), if open => match submission {
                    None => open = false,
                    Some(Submission::Interrupt) => {
                        interrupted = true;
                        cancel.cancel();
                    }
                    Some(Submission::Input { text, delivery }) => {
                        let delivery = delivery.unwrap_or(Delivery::Steer);
                        if let Err(full) = inbox.push(delivery, text) {
                            refused(&full);
                        }
                    }
                },
            }
        }
    };
    if cancel.is_cancelled() {
        // The user stopped the turn: what they queued is theirs again.
        inbox.give_back();
    }
    PromptEnd {
        stop,
        open,
        interrupted,
    }
}
