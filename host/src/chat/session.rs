//! What the chat's loop (`mod.rs`) and its slash commands (`commands`)
//! both work on: the session's side, the screen, how a chat ends, and what
//! the chat asks of the command that started it. Its own module so that
//! `commands` imports it rather than its parent, which calls `commands`.

use std::path::PathBuf;
use std::sync::Arc;

use super::approval::Pending;
use super::editor::Editor;
use super::view::{Status, Transcript};
use crate::agent::{AgentLoop, Inbox, Message, SessionGrants};
use crate::sandbox::Permit;
use crate::transcript::ToolInfo;

/// The session a chat records in: its id and file.
pub(crate) type SessionId = (String, PathBuf);

/// What the chat asks of the command that started it: the session file,
/// the model, the system prompt. Called only between turns.
pub(crate) trait Control<M>: Send {
    /// Before each prompt but the first: a new system prompt, if the
    /// project's instructions changed (after saying so).
    fn refreshed_system_prompt(&mut self) -> Option<String>;
    /// `/clear`: opens a new session file (none with `--no-session`) and
    /// records the events there from then on; and what the user should
    /// know of older session files removed to make room for it.
    fn new_session(&mut self) -> anyhow::Result<(Option<SessionId>, Option<String>)>;
    /// `/resume`: the recent sessions, one line each.
    fn recent_sessions(&mut self) -> anyhow::Result<Vec<String>>;
    /// `/resume ID`: reopens that session, records there from then on.
    fn resume(&mut self, which: &str) -> anyhow::Result<Resumed>;
    /// `/model NAME`: the same server asking for `name`, recorded in the
    /// session file; its name as the status line shows it.
    fn model(&mut self, name: &str) -> anyhow::Result<(M, String)>;
    /// `/allow`: records grants the user gave by hand in the session file
    /// (sealed, so that `--resume` applies them).
    fn granted(&mut self, permits: &[Permit]);
}

/// A session `/resume` reopened.
pub(crate) struct Resumed {
    pub(crate) ledger: Vec<Message>,
    /// Its id and file (`None` with `--no-session`: read, not recorded).
    pub(crate) session: Option<SessionId>,
    pub(crate) id: String,
    /// What the user should know first (a different workspace, calls
    /// without results, a different model, grants not applied).
    pub(crate) notes: Vec<String>,
    /// What the user granted for that session, applied again.
    pub(crate) grants: Vec<Permit>,
}

/// How a chat ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChatEnd {
    /// Ctrl+D, `/quit`: exit 0.
    Quit,
    /// Ctrl+C twice within a second: exit 130.
    Interrupted,
}

/// What the viewport shows.
pub(super) struct Screen {
    pub(super) editor: Editor,
    pub(super) status: Status,
    pub(super) transcript: Transcript,
    /// The grants the loop waits for the user to answer.
    pub(super) pending: Pending,
}

/// The session's side: the loop, its inbox, what commands report.
pub(super) struct Session<M, T> {
    pub(super) agent: Arc<AgentLoop<M, T>>,
    pub(super) inbox: Inbox,
    pub(super) session: Option<(String, PathBuf)>,
    pub(super) tools: Vec<ToolInfo>,
    pub(super) control: Box<dyn Control<M>>,
    /// What the user granted in this session (`/allow`, answers).
    pub(super) grants: SessionGrants,
    pub(super) prompts: u32,
}
