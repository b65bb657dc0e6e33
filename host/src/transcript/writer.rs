//! Appends records to a session file, one whole line per `write`, as each
//! event happens: a killed process leaves every finished event on disk and
//! at most one partial last line, which the reader drops.
//!
//! A writer holds an exclusive advisory lock (`flock`) on its file for as
//! long as it is open, so `toolhost sessions` can tell a session still being
//! written from one whose process died ([`in_use`]): the kernel drops the
//! lock with the process, and a reused pid cannot hold it.
//!
//! A file is held to its [`SessionBudget`]: past `results` bytes, tool
//! results are recorded as a note that they were not kept; past `file`
//! bytes nothing more is recorded (the reader would refuse the file).

use std::fs::{File, OpenOptions};
use std::io::{Seek as _, SeekFrom, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use super::reader::SessionFile;
use super::record::{
    CompactionRecord, ExecutionEnd, ExecutionStart, GrantRecord, InputRecord, MessageRecord,
    Record, RetryRecord, SessionStart, StopEntry, WarningRecord, now,
};
use super::seal::GrantSeal;
use crate::agent::{AgentEvent, Answer, EventSink, Message};
use crate::sandbox::Permit;

/// What one session file may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionBudget {
    /// Bytes past which a tool result's text is not recorded (default
    /// 256 MiB: a run's whole results were ~290 MB when a hostile server
    /// asked for 5,000 long reads).
    pub results: u64,
    /// Bytes past which nothing is recorded (default 768 MiB, below what
    /// the reader opens, so the session can still be resumed).
    pub file: u64,
}

impl SessionBudget {
    /// The most `file` may be: what the reader still opens, with room for
    /// the records a resume appends.
    pub const MOST: u64 = super::reader::MAX_SESSION_FILE / 8 * 7;

    /// `results` bytes of results, the file three times that (each at most
    /// [`Self::MOST`]).
    pub fn of_results(results: u64) -> Self {
        SessionBudget {
            results: results.min(Self::MOST),
            file: results.saturating_mul(3).min(Self::MOST),
        }
    }
}

impl Default for SessionBudget {
    fn default() -> Self {
        SessionBudget::of_results(256 << 20)
    }
}

/// What a result's text becomes in a session file past its budget.
fn not_kept(budget: &SessionBudget) -> String {
    format!(
        "[toolhost did not keep this result in the session file: the file passed the {} MiB its \
         results may take]",
        budget.results >> 20
    )
}

/// An open session file, written through its event sink.
pub struct SessionWriter {
    path: PathBuf,
    id: String,
    /// The workspace the session runs in now, which a grant's seal holds.
    workspace: String,
    state: Mutex<State>,
}

struct State {
    file: File,
    /// Bytes in the file (for the audit's cap).
    len: u64,
    /// The first write error; later records are not attempted.
    error: Option<String>,
    budget: SessionBudget,
    /// Timing of the turn in progress, for the assistant message's record.
    turn: u32,
    turn_started: Option<Instant>,
    first_text: Option<Instant>,
    /// The user's key, which seals the grants given for the session.
    seal: Option<Arc<GrantSeal>>,
    /// For a file this writer made: its length once its first record was
    /// written (it holds nothing else while the length is this).
    made_len: Option<u64>,
}

impl SessionWriter {
    /// Creates the file for a new session (never overwriting one) and
    /// writes `start`.
    pub(super) fn create(path: PathBuf, start: &SessionStart) -> std::io::Result<Self> {
        let file = OpenOptions::new()
            .append(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)?;
        // Waits only for a `toolhost sessions` that is testing the lock.
        file.lock()?;
        let writer = SessionWriter::new(path, start, file, 0);
        writer.record(&Record::SessionStart(start.clone()));
        writer.result()?;
        let mut state = writer.lock();
        state.made_len = Some(state.len);
        drop(state);
        Ok(writer)
    }

    /// Reopens a session to continue it: cuts the file after its last
    /// complete record (dropping a partial line), then writes `start`.
    pub(super) fn append(session: &SessionFile, start: &SessionStart) -> std::io::Result<Self> {
        let path = &session.path;
        // Never through a link: the file must be the one that was read.
        let mut file = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)?;
        lock_to_append(&file)?;
        // A session file made before its files were private, or shipped.
        file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
        file.set_len(session.valid_len)?;
        file.seek(SeekFrom::End(0))?;
        let mut len = session.valid_len;
        if session.missing_newline {
            file.write_all(b"\n")?;
            len += 1;
        }
        let writer = SessionWriter::new(path.to_path_buf(), start, file, len);
        writer.record(&Record::SessionStart(start.clone()));
        writer.result()?;
        Ok(writer)
    }

    fn new(path: PathBuf, start: &SessionStart, file: File, len: u64) -> Self {
        SessionWriter {
            path,
            id: start.id.clone(),
            workspace: start.workspace.clone(),
            state: Mutex::new(State {
                file,
                len,
                error: None,
                budget: SessionBudget::default(),
                turn: 0,
                turn_started: None,
                first_text: None,
                seal: None,
                made_len: None,
            }),
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The first write error, if writing ever failed.
    pub fn error(&self) -> Option<String> {
        self.lock().error.clone()
    }

    fn result(&self) -> std::io::Result<()> {
        match self.error() {
            Some(error) => Err(std::io::Error::other(error)),
            None => Ok(()),
        }
    }

    /// Appends one record as one line. Errors are kept for [`Self::error`]
    /// rather than returned: a full disk must not stop the run.
    pub fn record(&self, record: &Record) {
        let mut state = self.lock();
        Self::write(&mut state, record);
    }

    /// Seals the grants given for the session with the user's key from
    /// now on, so that `--resume` applies them.
    pub fn set_seal(&self, seal: Arc<GrantSeal>) {
        self.lock().seal = Some(seal);
    }

    /// Records `permit`, given for the session by hand (a chat's
    /// `/allow`), as an answered grant is recorded.
    pub fn granted(&self, permit: &Permit) {
        let mut state = self.lock();
        let seal = state
            .seal
            .as_ref()
            .map(|seal| seal.seal((&self.workspace, &self.id), permit))
            .unwrap_or_default();
        let record = Record::Grant(GrantRecord {
            at: now(),
            permit: permit.clone(),
            answer: Answer::Session,
            seal,
        });
        Self::write(&mut state, &record);
    }

    /// Removes the file when this writer made it and it holds nothing but
    /// its first record (a chat opened and closed without a prompt);
    /// whether it did.
    pub fn discard_if_unused(&self) -> bool {
        let state = self.lock();
        if state.made_len != Some(state.len) {
            return false;
        }
        std::fs::remove_file(&self.path).is_ok()
    }

    /// Holds the file to `budget` from now on.
    pub fn set_budget(&self, budget: SessionBudget) {
        self.lock().budget = budget;
    }

    /// Bytes in the file so far.
    pub(super) fn len(&self) -> u64 {
        self.lock().len
    }

    fn write(state: &mut State, record: &Record) {
        match line_of(record) {
            Ok(line) => Self::write_line(state, &line),
            Err(e) => {
                state.error.get_or_insert(e);
            }
        }
    }

    /// Appends `line` (from [`line_of`]) as it is.
    pub(super) fn append_line(&self, line: &[u8]) {
        Self::write_line(&mut self.lock(), line);
    }

    fn write_line(state: &mut State, line: &[u8]) {
        if state.error.is_some() {
            return;
        }
        if state.len.saturating_add(line.len() as u64) > state.budget.file {
            state.error = Some(format!(
                "the session file reached the {} MiB it may take; later events are not recorded",
                state.budget.file >> 20
            ));
            return;
        }
        match state.file.write_all(line) {
            Ok(()) => state.len += line.len() as u64,
            Err(e) => state.error = Some(e.to_string()),
        }
    }

    /// Records that the session goes on with `start`'s settings (a chat's
    /// `/model`): a `session_start` with this session's id, marked resumed,
    /// as `--resume` writes one.
    pub fn restart(&self, mut start: SessionStart) {
        start.id = self.id.clone();
        start.at = super::record::now();
        start.resumed = true;
        self.record(&Record::SessionStart(start));
    }

    /// Records a message the loop did not produce (the results recovered on
    /// resume).
    pub fn recovered(&self, message: Message) {
        self.record(&Record::Message(MessageRecord {
            at: now(),
            message,
            turn: None,
            ttft_ms: None,
            duration_ms: None,
            recovered: true,
        }));
    }

    /// The agent loop's events, recorded as they happen.
    pub fn sink(self: &Arc<Self>) -> EventSink {
        let writer = Arc::clone(self);
        Arc::new(move |event: &AgentEvent| writer.observe(event))
    }

    /// Records one event of the loop (what [`Self::sink`] calls).
    ///
    /// Long: one arm per event kind, each its record, under one lock.
    pub fn observe(&self, event: &AgentEvent) {
        let mut state = self.lock();
        let record = match event {
            AgentEvent::TurnStart { turn } => {
                state.turn = *turn;
                state.turn_started = Some(Instant::now());
                state.first_text = None;
                return;
            }
            AgentEvent::ModelRetry {
                attempt,
                wait_ms,
                reason,
            } => Record::Retry(RetryRecord {
                at: now(),
                attempt: *attempt,
                wait_ms: *wait_ms,
                reason: reason.clone(),
            }),
            AgentEvent::MessageDelta { .. } => {
                state.first_text.get_or_insert_with(Instant::now);
                return;
            }
            AgentEvent::Message { message } => {
                let assistant = matches!(message, Message::Assistant(_));
                let message = match message {
                    Message::ToolResults { results } if state.len > state.budget.results => {
                        let note = not_kept(&state.budget);
                        Message::ToolResults {
                            results: results
                                .iter()
                                .map(|result| {
                                    let mut kept = result.clone();
                                    if kept.text.len() > note.len() {
                                        kept.text.clone_from(&note);
                                    }
                                    kept
                                })
                                .collect(),
                        }
                    }
                    message => message.clone(),
                };
                let since_start = |at: Option<Instant>| {
                    let (start, at) = (state.turn_started?, at?);
                    u64::try_from(at.duration_since(start).as_millis()).ok()
                };
                Record::Message(MessageRecord {
                    at: now(),
                    message,
                    turn: assistant.then_some(state.turn),
                    ttft_ms: if assistant {
                        since_start(state.first_text)
                    } else {
                        None
                    },
                    duration_ms: if assistant {
                        since_start(Some(Instant::now()))
                    } else {
                        None
                    },
                    recovered: false,
                })
            }
            AgentEvent::ToolExecutionStart {
                call_id,
                tool,
                arguments,
            } => Record::ToolExecutionStart(ExecutionStart {
                at: now(),
                call_id: call_id.clone(),
                tool: tool.clone(),
                arguments: arguments.clone(),
            }),
            AgentEvent::ToolExecutionEnd {
                call_id,
                tool,
                is_error,
                duration_ms,
                text,
                output_bytes,
                saved_to,
                execution,
            } => {
                let over = state.len > state.budget.results;
                let note = over.then(|| not_kept(&state.budget));
                let cut = note.as_ref().is_some_and(|note| text.len() > note.len());
                Record::ToolExecutionEnd(ExecutionEnd {
                    at: now(),
                    call_id: call_id.clone(),
                    tool: tool.clone(),
                    is_error: *is_error,
                    duration_ms: *duration_ms,
                    output_bytes: *output_bytes,
                    text: if cut {
                        note.unwrap_or_default()
                    } else {
                        text.clone()
                    },
                    text_cut: cut,
                    saved_to: saved_to.clone(),
                    execution: execution.clone(),
                })
            }
            AgentEvent::InputQueued { delivery, text } => Record::InputQueued(InputRecord {
                at: now(),
                delivery: *delivery,
                text: text.clone(),
            }),
            AgentEvent::InputDelivered { delivery, text } => Record::InputDelivered(InputRecord {
                at: now(),
                delivery: *delivery,
                text: text.clone(),
            }),
            AgentEvent::CompactionEnd {
                reason,
                tokens_before,
                tokens_after,
                masked,
                first_kept,
                summary,
                usage,
            } => Record::Compaction(CompactionRecord {
                at: now(),
                reason: *reason,
                tokens_before: *tokens_before,
                tokens_after: *tokens_after,
                masked: masked.clone(),
                first_kept: *first_kept,
                summary: summary.clone(),
                usage: usage.clone(),
            }),
            AgentEvent::Warning { message } => Record::Warning(WarningRecord {
                at: now(),
                message: message.clone(),
            }),
            AgentEvent::InputReturned { delivery, text } => Record::InputReturned(InputRecord {
                at: now(),
                delivery: *delivery,
                text: text.clone(),
            }),
            AgentEvent::AgentEnd { stop } => Record::Stop(StopEntry {
                at: now(),
                stop: stop.clone(),
                continued_in: None,
            }),
            AgentEvent::GrantAnswered { permit, answer, .. } => Record::Grant(GrantRecord {
                at: now(),
                permit: permit.clone(),
                answer: *answer,
                seal: match (answer, &state.seal) {
                    (Answer::Session, Some(seal)) => seal.seal((&self.workspace, &self.id), permit),
                    _ => String::new(),
                },
            }),
            AgentEvent::AgentStart
            | AgentEvent::GrantAsked { .. }
            | AgentEvent::CompactionStart { .. }
            | AgentEvent::ToolExecutionUpdate { .. }
            | AgentEvent::TurnEnd { .. } => return,
        };
        Self::write(&mut state, &record);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `record` as one line of the file, newline included.
pub(super) fn line_of(record: &Record) -> Result<Vec<u8>, String> {
    let mut line =
        serde_json::to_vec(record).map_err(|e| format!("encoding a session event: {e}"))?;
    line.push(b'\n');
    Ok(line)
}

/// Whether a writer (a run, or an MCP server) still holds `path` open. A
/// file that cannot be opened as the reader opens it (a link, a FIFO put
/// there since it was read) is not.
pub fn in_use(path: &Path) -> bool {
    super::reader::open_session(path).is_ok_and(|(file, _)| {
        // Taken and dropped at once, so a writer's `lock` waits at most
        // this long.
        matches!(
            file.try_lock_shared(),
            Err(std::fs::TryLockError::WouldBlock)
        )
    })
}

/// Takes the lock of a session to be resumed, refusing one still being
/// written: two writers would interleave their records. A moment's wait
/// lets a `toolhost sessions` that is testing the lock finish.
fn lock_to_append(file: &File) -> std::io::Result<()> {
    for _ in 0..50 {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::ResourceBusy,
        "another toolhost is still writing it (`toolhost sessions` shows it as running); \
         wait for that run to end, or start a new session without --resume",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::ToolResultEntry;
    use serde_json::json;

    fn start() -> SessionStart {
        serde_json::from_value(json!({"type": "session_start", "format": 1, "id": "s",
            "at": "2026-11-30T00:00:00Z", "toolhost": "0.1.0", "workspace": "/w",
            "provider": "scripted", "system_prompt": "", "max_turns": 100, "tools": []}))
        .expect("start")
    }

    fn results(text: &str) -> AgentEvent {
        AgentEvent::Message {
            message: Message::ToolResults {
                results: vec![ToolResultEntry {
                    call_id: "c".into(),
                    tool: "t".into(),
                    text: text.into(),
                    is_error: false,
                }],
            },
        }
    }

    fn lines(path: &Path) -> Vec<serde_json::Value> {
        std::fs::read_to_string(path)
            .expect("read")
            .lines()
            .map(|line| serde_json::from_str(line).expect("record"))
            .collect()
    }

    #[test]
    fn past_its_budget_a_session_keeps_a_note_for_each_result_then_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.jsonl");
        let writer = SessionWriter::create(path.clone(), &start()).expect("create");
        let budget = SessionBudget {
            results: 1000,
            file: 6000,
        };
        writer.set_budget(budget);
        let big = "r".repeat(1500);
        writer.observe(&results(&big));
        writer.observe(&results(&big));
        let note = not_kept(&budget);
        let texts: Vec<serde_json::Value> = lines(&path)
            .iter()
            .skip(1)
            .map(|r| r["message"]["results"][0]["text"].clone())
            .collect();
        assert_eq!(texts, vec![json!(big), json!(note)]);
        assert_eq!(writer.error(), None);
        let kept = writer.len();
        for _ in 0..100 {
            writer.observe(&results(&big));
        }
        assert!(writer.len() <= budget.file, "{}", writer.len());
        assert!(writer.len() > kept);
        assert_eq!(
            writer.error().as_deref(),
            Some("the session file reached the 0 MiB it may take; later events are not recorded")
        );
        assert_eq!(std::fs::metadata(&path).expect("meta").len(), writer.len());
    }

    #[test]
    fn a_session_file_is_the_user_s_alone() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.jsonl");
        drop(SessionWriter::create(path.clone(), &start()).expect("create"));
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
