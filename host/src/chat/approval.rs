//! Asking the user in the chat for a grant a refused call needs: the
//! loop's [`Approver`] sends each question to the chat's screen loop, which
//! shows it in the viewport and answers it from one key (`y` once, `s` for
//! the session, `n` no; Esc says no and stops the turn). Questions of calls
//! that run together wait their turn; a question whose turn is interrupted
//! is dropped unanswered, which the loop reads as no.
//!
//! A key answers only after a pause ([`PAUSE`]): typing that was under way
//! when the question appeared (`this is` has an `s`) must not grant
//! anything. Keys in a run of typing are dropped.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent};
use tokio::sync::{mpsc, oneshot};

use crate::agent::{Answer, Answering, Approver};
use crate::sandbox::Permit;

/// One question: the grant, and where the answer goes.
pub(crate) struct Question {
    permit: Permit,
    reply: oneshot::Sender<Answer>,
}

/// The loop's side: sends each question to the screen and waits.
pub(crate) struct ChatApprover {
    send: mpsc::UnboundedSender<Question>,
}

impl ChatApprover {
    /// An approver, and the questions it sends, for the chat's loop.
    pub(crate) fn new() -> (ChatApprover, mpsc::UnboundedReceiver<Question>) {
        let (send, questions) = mpsc::unbounded_channel();
        (ChatApprover { send }, questions)
    }
}

impl Approver for ChatApprover {
    fn ask<'a>(&'a self, permit: &'a Permit, _why: Option<&'a str>) -> Answering<'a> {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            let question = Question {
                permit: permit.clone(),
                reply,
            };
            if self.send.send(question).is_err() {
                return Answer::Deny;
            }
            answer.await.unwrap_or(Answer::Deny)
        })
    }
}

/// How long a key must follow the question's showing, and the key before
/// it, to answer it.
pub(super) const PAUSE: Duration = Duration::from_millis(600);

/// The screen's side: the questions not answered yet, the first shown.
#[derive(Default)]
pub(super) struct Pending {
    questions: VecDeque<Question>,
    /// When the question shown now appeared.
    shown_at: Option<Instant>,
    /// When the last key came while a question was shown.
    last_key: Option<Instant>,
}

impl Pending {
    pub(super) fn push(&mut self, question: Question) {
        self.questions.push_back(question);
        self.shown_at.get_or_insert_with(Instant::now);
    }

    /// The grant the viewport asks about now.
    pub(super) fn current(&self) -> Option<&Permit> {
        self.questions
            .iter()
            .find(|question| !question.reply.is_closed())
            .map(|question| &question.permit)
    }

    /// Answers the current question from `key`, when it is an answer that
    /// came after a pause ([`PAUSE`]); true when it was one. Esc always
    /// answers no (the caller then stops the turn).
    pub(super) fn answer(&mut self, key: &KeyEvent, now: Instant) -> bool {
        let paused = |since: Option<Instant>| since.is_none_or(|at| now >= at + PAUSE);
        let after_pause = paused(self.shown_at) && paused(self.last_key);
        self.last_key = Some(now);
        let answer = match key.code {
            KeyCode::Esc => Answer::Deny,
            KeyCode::Char('y' | 'Y') if after_pause => Answer::Once,
            KeyCode::Char('s' | 'S') if after_pause => Answer::Session,
            KeyCode::Char('n' | 'N') if after_pause => Answer::Deny,
            _ => return false,
        };
        // Questions whose call was interrupted are gone unanswered.
        while let Some(question) = self.questions.pop_front() {
            if question.reply.is_closed() {
                continue;
            }
            let _ = question.reply.send(answer);
            // The next question, if any, shows from now.
            self.shown_at = (!self.questions.is_empty()).then_some(now);
            self.last_key = None;
            return true;
        }
        self.shown_at = None;
        false
    }

    /// Whether a question waits.
    pub(super) fn is_asking(&self) -> bool {
        self.current().is_some()
    }
}

/// The viewport's line for a question about `permit`.
pub(super) fn prompt(permit: &Permit, workspace: &std::path::Path) -> String {
    format!(
        "allow `{}` to {}? y: once · s: for this session · n: no",
        permit.tool,
        permit.what(workspace)
    )
}
