//! Asking the user in the chat for a grant a refused call needs: the
//! loop's [`Approver`] sends each question to the chat's screen loop, which
//! shows it in the viewport and answers it from one key (`y` once, `s` for
//! the session, `n` or Esc no). Questions of calls that run together wait
//! their turn; a question whose turn is interrupted is dropped unanswered,
//! which the loop reads as no.

use std::collections::VecDeque;

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
    fn ask<'a>(&'a self, permit: &'a Permit) -> Answering<'a> {
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

/// The screen's side: the questions not answered yet, the first shown.
#[derive(Default)]
pub(super) struct Pending {
    questions: VecDeque<Question>,
}

impl Pending {
    pub(super) fn push(&mut self, question: Question) {
        self.questions.push_back(question);
    }

    /// The grant the viewport asks about now.
    pub(super) fn current(&self) -> Option<&Permit> {
        self.questions
            .iter()
            .find(|question| !question.reply.is_closed())
            .map(|question| &question.permit)
    }

    /// Answers the current question from `key`, if it is an answer; true
    /// when it was one.
    pub(super) fn answer(&mut self, key: &KeyEvent) -> bool {
        let answer = match key.code {
            KeyCode::Char('y' | 'Y') => Answer::Once,
            KeyCode::Char('s' | 'S') => Answer::Session,
            KeyCode::Char('n' | 'N') | KeyCode::Esc => Answer::Deny,
            _ => return false,
        };
        // Questions whose call was interrupted are gone unanswered.
        while let Some(question) = self.questions.pop_front() {
            if question.reply.is_closed() {
                continue;
            }
            let _ = question.reply.send(answer);
            return true;
        }
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
