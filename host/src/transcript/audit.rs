//! A session file for tool calls that no agent loop made: `toolhost mcp`
//! serves the tools to another agent, and records each of its calls with
//! the same `tool_execution_start` / `tool_execution_end` records as
//! `toolhost run`, so `toolhost sessions` lists and shows them.
//!
//! A server may run for days and serve calls by the thousand, so its audit
//! is bounded: the file is made at the first call (a client that only
//! lists the tools leaves none), each result is kept to its first
//! [`AUDIT_TEXT_MAX`] bytes (the client has it whole), and a file that
//! reaches its cap ([`AUDIT_FILE_MAX`]) ends with a stop record naming the
//! next one, which starts with the same first line plus `continues`. The
//! server keeps its last [`AUDIT_FILES_KEPT`] files and deletes older ones
//! of its own; it never touches a file it did not make.
//!
//! It writes only what it is told; it runs nothing, knows no protocol and
//! prints nothing: what the server's log should say comes back as an
//! [`AuditNotice`].

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::Value;

use super::record::{ExecutionEnd, ExecutionStart, GrantRecord, Record, StopEntry, now};
use super::writer::line_of;
use super::{SessionStart, SessionStore, SessionWriter};
use crate::agent::{Answer, Execution, StopReason, StopRecord};
use crate::sandbox::{CallReport, Permit, Sandbox};

/// The provider an audit's sessions record, which tells them from runs.
pub const AUDIT_PROVIDER: &str = "mcp";

/// Bytes of a call's result the audit keeps.
pub const AUDIT_TEXT_MAX: usize = 4096;

/// Bytes an audit file may reach before the calls go on in a new one.
pub const AUDIT_FILE_MAX: u64 = 8 << 20;

/// Audit files a server keeps: its open one and the three before it.
pub const AUDIT_FILES_KEPT: usize = 4;

/// Room kept in each file for the stop record that ends it (its evidence
/// is one short sentence and two ids).
const STOP_ROOM: u64 = 1024;

/// The audit of one server: no file until the first call, then one file
/// at a time.
pub struct AuditLog {
    store: SessionStore,
    max_file: u64,
    state: Mutex<State>,
}

struct State {
    open: Option<Open>,
    /// This server's files, oldest first; the open one is the last.
    kept: VecDeque<PathBuf>,
    /// Calls over all of this server's files.
    calls: u64,
    /// The first failure, reported once.
    error: Option<String>,
}

/// The file being written.
struct Open {
    writer: SessionWriter,
    /// Calls started in this file.
    calls: u64,
    /// Records after the first line: a file with none takes the next one
    /// whatever its size, so a record over the cap cannot rotate forever.
    records: u64,
    /// The file it continues.
    continues: Option<String>,
}

/// The first line of an audit file made while `sandbox` is served: its
/// tools, and `instructions` (what the MCP client was told of them) as the
/// system prompt. Asked for only when a file is made.
pub fn first_line(sandbox: &Sandbox, instructions: &str) -> SessionStart {
    SessionStart::of(sandbox, AUDIT_PROVIDER, instructions)
}

/// Makes the first line of a new file (see [`first_line`]).
pub type FirstLine<'a> = &'a dyn Fn() -> SessionStart;

/// Something the server's log should say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditNotice {
    /// The first call made the audit's file.
    Opened { id: String },
    /// `from` reached the cap; calls go on in `to`. `deleted` is the
    /// server's oldest file, removed to keep [`AUDIT_FILES_KEPT`], or why
    /// it could not be.
    Continued {
        from: String,
        to: String,
        deleted: Option<Result<String, String>>,
    },
    /// Writing failed (the first time only); calls are not fully recorded.
    Failed { error: String },
}

impl AuditLog {
    /// An audit in `store` whose files go on in a new one past `max_file`
    /// bytes ([`AUDIT_FILE_MAX`]).
    pub fn new(store: SessionStore, max_file: u64) -> AuditLog {
        AuditLog {
            store,
            max_file,
            state: Mutex::new(State {
                open: None,
                kept: VecDeque::new(),
                calls: 0,
                error: None,
            }),
        }
    }

    /// The bytes a file may reach.
    pub fn max_file(&self) -> u64 {
        self.max_file
    }

    /// Where the files go.
    pub fn dir(&self) -> &std::path::Path {
        self.store.dir()
    }

    /// A call is about to run. Written before the plugin is called; the
    /// first call makes the file.
    pub fn call_started(
        &self,
        serving: FirstLine<'_>,
        call_id: &str,
        tool: &str,
        arguments: &Value,
    ) -> Option<AuditNotice> {
        let record = Record::ToolExecutionStart(ExecutionStart {
            at: now(),
            call_id: call_id.into(),
            tool: tool.into(),
            arguments: arguments.clone(),
        });
        let mut state = self.lock();
        state.calls += 1;
        let notice = self.write(&mut state, serving, &record);
        if let Some(open) = &mut state.open {
            open.calls += 1;
        }
        notice
    }

    /// A call ended with `report`; `text` is what the client read, of
    /// which the first [`AUDIT_TEXT_MAX`] bytes are kept.
    pub fn call_ended(
        &self,
        serving: FirstLine<'_>,
        call_id: &str,
        tool: &str,
        report: &CallReport,
        text: &str,
        took: Duration,
    ) -> Option<AuditNotice> {
        let kept = &text[..text.floor_char_boundary(AUDIT_TEXT_MAX)];
        let record = Record::ToolExecutionEnd(ExecutionEnd {
            at: now(),
            call_id: call_id.into(),
            tool: tool.into(),
            is_error: report.is_error(),
            duration_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
            output_bytes: text.len() as u64,
            text: kept.into(),
            text_cut: kept.len() < text.len(),
            saved_to: None,
            execution: Some(Execution::from_report(report)),
        });
        let mut state = self.lock();
        self.write(&mut state, serving, &record)
    }

    /// The client's user answered a grant a refused call asked for
    /// (elicitation): recorded as a chat records one, unsealed (an MCP
    /// session is not resumed).
    pub fn granted(
        &self,
        serving: FirstLine<'_>,
        permit: &Permit,
        answer: Answer,
    ) -> Option<AuditNotice> {
        let record = Record::Grant(GrantRecord {
            at: now(),
            permit: permit.clone(),
            answer,
            seal: String::new(),
        });
        let mut state = self.lock();
        self.write(&mut state, serving, &record)
    }

    /// The server is stopping: `why` (the client disconnected, ...) ends
    /// the open file with a `completed` stop record. Without a call there
    /// is no file, and nothing to end.
    pub fn close(&self, why: &str) -> Option<AuditNotice> {
        let mut state = self.lock();
        let total = state.calls;
        let open = state.open.as_ref()?;
        let evidence = match open.continues {
            None => format!("{why} after {}", calls(total)),
            Some(_) => format!("{why} after {}, {} in this file", calls(total), open.calls),
        };
        open.writer.record(&stop(evidence, None));
        let error = open.writer.error()?;
        fail(&mut state, error)
    }

    /// Writes `record`, making the first file or moving to the next one
    /// when it would not fit.
    fn write(
        &self,
        state: &mut State,
        serving: FirstLine<'_>,
        record: &Record,
    ) -> Option<AuditNotice> {
        let line = match line_of(record) {
            Ok(line) => line,
            Err(error) => return fail(state, error),
        };
        let mut notice = None;
        match &state.open {
            None if state.error.is_none() => match self.create(serving, None) {
                Ok(open) => {
                    notice = Some(AuditNotice::Opened {
                        id: open.writer.id().to_owned(),
                    });
                    state.kept.push_back(open.writer.path().to_owned());
                    state.open = Some(open);
                }
                Err(error) => return fail(state, error),
            },
            // It could not be made: the calls go unrecorded (said once).
            None => return None,
            Some(open)
                if open.records > 0
                    && open.writer.len() + line.len() as u64 + STOP_ROOM > self.max_file =>
            {
                notice = self.rotate(state, serving);
            }
            Some(_) => {}
        }
        let open = state.open.as_mut()?;
        open.writer.append_line(&line);
        open.records += 1;
        if let Some(error) = open.writer.error() {
            return fail(state, error).or(notice);
        }
        notice
    }

    /// Ends the open file with a stop record naming a new one, which the
    /// calls go on in, and deletes the server's oldest file past
    /// [`AUDIT_FILES_KEPT`]. If the new file cannot be made, the calls stay
    /// in the old one.
    fn rotate(&self, state: &mut State, serving: FirstLine<'_>) -> Option<AuditNotice> {
        let from = state.open.as_ref()?.writer.id().to_owned();
        let next = match self.create(serving, Some(from.clone())) {
            Ok(next) => next,
            Err(error) => return fail(state, error),
        };
        let to = next.writer.id().to_owned();
        state.kept.push_back(next.writer.path().to_owned());
        let old = state.open.replace(next)?;
        old.writer.record(&stop(
            format!("continued in session {to} after {}", calls(old.calls)),
            Some(to.clone()),
        ));
        if let Some(error) = old.writer.error() {
            fail(state, error);
        }
        // Closing the file releases its lock.
        drop(old);
        let mut deleted = None;
        while state.kept.len() > AUDIT_FILES_KEPT {
            let Some(oldest) = state.kept.pop_front() else {
                break;
            };
            match std::fs::remove_file(&oldest) {
                Ok(()) => deleted = Some(Ok(super::id_of(&oldest))),
                // Someone deleted it already.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => deleted = Some(Err(format!("`{}`: {e}", oldest.display()))),
            }
        }
        Some(AuditNotice::Continued { from, to, deleted })
    }

    /// A new file that begins with `serving`'s first line.
    fn create(&self, serving: FirstLine<'_>, continues: Option<String>) -> Result<Open, String> {
        let mut start = serving();
        start.provider = AUDIT_PROVIDER.into();
        start.continues.clone_from(&continues);
        let writer = self.store.create(start).map_err(|e| e.to_string())?;
        Ok(Open {
            writer,
            calls: 0,
            records: 0,
            continues,
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Keeps the first failure and says it once.
fn fail(state: &mut State, error: String) -> Option<AuditNotice> {
    if state.error.is_some() {
        return None;
    }
    state.error = Some(error.clone());
    Some(AuditNotice::Failed { error })
}

/// The `completed` stop record that ends a file.
fn stop(evidence: String, continued_in: Option<String>) -> Record {
    Record::Stop(StopEntry {
        at: now(),
        stop: StopRecord {
            reason: StopReason::Completed,
            turns: 0,
            truncated: false,
            evidence,
        },
        continued_in,
    })
}

/// `1 tool call`, `8 tool calls`.
fn calls(n: u64) -> String {
    format!("{n} tool call{}", if n == 1 { "" } else { "s" })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::sandbox::{CallStats, Captured, ToolOutcome};
    use crate::transcript::SessionFile;

    fn start() -> SessionStart {
        serde_json::from_value(
            json!({"type": "session_start", "format": 1, "id": "", "at": "",
            "toolhost": "0.1.0", "workspace": "/w", "provider": "mcp", "system_prompt": "",
            "max_turns": 0, "tools": []}),
        )
        .expect("a start record")
    }

    fn ok(text: &str) -> CallReport {
        CallReport {
            outcome: ToolOutcome::Ok(text.into()),
            structured: None,
            stats: CallStats::default(),
            captured: Captured::default(),
            requests: Vec::new(),
            ask: None,
            notes: Vec::new(),
        }
    }

    /// Calls `n` made through `audit`, each answered with `text`.
    fn calls(audit: &AuditLog, n: usize, text: &str) -> Vec<AuditNotice> {
        let mut notices = Vec::new();
        for i in 0..n {
            let id = format!("mcp-{i}");
            notices.extend(audit.call_started(&start, &id, "t", &json!({"i": i})));
            let report = ok(text);
            let ended = audit.call_ended(&start, &id, "t", &report, text, Duration::ZERO);
            notices.extend(ended);
        }
        notices
    }

    fn files(dir: &std::path::Path) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|d| d.map(|e| e.expect("entry").path()).collect())
            .unwrap_or_default();
        files.sort();
        files
    }

    #[test]
    fn no_file_until_the_first_call_then_one_that_closes_with_a_stop() {
        let dir = tempfile::tempdir().expect("temp dir");
        let sessions = dir.path().join("sessions");
        let audit = AuditLog::new(SessionStore::new(sessions.clone()), AUDIT_FILE_MAX);
        assert!(!sessions.exists());

        let notices = calls(&audit, 2, "hi");
        let made = files(&sessions);
        assert_eq!(made.len(), 1);
        let id = crate::transcript::id_of(&made[0]);
        assert_eq!(notices, [AuditNotice::Opened { id }]);
        assert!(
            crate::transcript::in_use(&made[0]),
            "the open file is locked"
        );
        assert_eq!(audit.close("the MCP client disconnected"), None);
        drop(audit);
        assert!(!crate::transcript::in_use(&made[0]));

        let file = SessionFile::read(&made[0]).expect("read");
        let last = file.records().last().expect("records");
        let Record::Stop(stop) = last else {
            panic!("{last:?}")
        };
        assert_eq!(
            stop.stop.evidence,
            "the MCP client disconnected after 2 tool calls"
        );
        assert_eq!(stop.continued_in, None);
    }

    #[test]
    fn a_closed_audit_without_calls_leaves_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        let audit = AuditLog::new(SessionStore::new(dir.path().join("s")), AUDIT_FILE_MAX);
        assert_eq!(audit.close("the MCP client disconnected"), None);
        assert!(!dir.path().join("s").exists());
    }

    #[test]
    fn a_long_result_is_kept_to_4_kib_on_a_char_boundary_with_its_whole_size() {
        let dir = tempfile::tempdir().expect("temp dir");
        let audit = AuditLog::new(SessionStore::new(dir.path().to_owned()), AUDIT_FILE_MAX);
        // 'é' is two bytes: 4096 falls inside one after the leading 'a'.
        let text = format!("a{}", "é".repeat(5000));
        calls(&audit, 1, &text);
        calls(&audit, 1, "short");
        let file = SessionFile::read(&files(dir.path())[0]).expect("read");
        let ends: Vec<&ExecutionEnd> = file
            .records()
            .iter()
            .filter_map(|r| match r {
                Record::ToolExecutionEnd(end) => Some(end),
                _ => None,
            })
            .collect();
        assert_eq!(ends[0].text, text[..4095]);
        assert!(ends[0].text_cut);
        assert_eq!(ends[0].output_bytes, 10_001);
        assert_eq!(ends[1].text, "short");
        assert!(!ends[1].text_cut);
    }

    #[test]
    fn a_full_file_goes_on_in_the_next_and_only_the_last_four_are_kept() {
        let dir = tempfile::tempdir().expect("temp dir");
        let max = 16 * 1024;
        let audit = AuditLog::new(SessionStore::new(dir.path().to_owned()), max);
        let notices = calls(&audit, 40, &"x".repeat(3000));
        assert_eq!(audit.close("the MCP client disconnected"), None);

        let kept = files(dir.path());
        assert_eq!(kept.len(), AUDIT_FILES_KEPT);
        let mut read: Vec<SessionFile> = kept
            .iter()
            .map(|path| SessionFile::read(path).expect("read"))
            .collect();
        // In the chain's order (ids made in the same second do not sort by
        // time): the first is the one that continues a deleted file.
        let id = |file: &SessionFile| crate::transcript::id_of(&file.path);
        let kept_ids: Vec<String> = read.iter().map(id).collect();
        read.sort_by_key(|file| {
            let mut depth = 0;
            let mut at = file.first_start().continues.clone();
            while let Some(earlier) = at.filter(|e| kept_ids.contains(e)) {
                depth += 1;
                at = read_continues(&kept, &earlier);
            }
            depth
        });
        let ids: Vec<String> = read.iter().map(id).collect();
        let mut calls_kept = 0;
        for (n, file) in read.iter().enumerate() {
            let size = std::fs::metadata(&file.path).expect("size").len();
            assert!(size <= max, "{} is {size} bytes", ids[n]);
            let Some(Record::Stop(stop)) = file.records().last() else {
                panic!("{} ends without a stop", ids[n]);
            };
            // Each file but the last names the next, which names it back.
            assert_eq!(stop.continued_in, ids.get(n + 1).cloned());
            assert!(file.first_start().continues.is_some());
            if n > 0 {
                assert_eq!(file.first_start().continues.as_ref(), Some(&ids[n - 1]));
            }
            calls_kept += file
                .records()
                .iter()
                .filter(|r| matches!(r, Record::ToolExecutionStart(_)))
                .count();
        }
        let Some(Record::Stop(last)) = read[3].records().last() else {
            unreachable!()
        };
        let in_last = read[3]
            .records()
            .iter()
            .filter(|r| matches!(r, Record::ToolExecutionStart(_)))
            .count();
        assert_eq!(
            last.stop.evidence,
            format!("the MCP client disconnected after 40 tool calls, {in_last} in this file")
        );
        assert!(calls_kept < 40);

        // One notice per file made; those past the fourth deleted the oldest.
        let continued: Vec<&AuditNotice> = notices
            .iter()
            .filter(|n| matches!(n, AuditNotice::Continued { .. }))
            .collect();
        let AuditNotice::Opened { id: first } = &notices[0] else {
            panic!("{notices:?}")
        };
        let deleted: Vec<String> = continued
            .iter()
            .filter_map(|n| match n {
                AuditNotice::Continued { deleted, .. } => deleted.clone().map(Result::unwrap),
                _ => None,
            })
            .collect();
        assert_eq!(deleted.len(), continued.len() + 1 - AUDIT_FILES_KEPT);
        assert_eq!(&deleted[0], first);
        assert_eq!(notices.len(), continued.len() + 1);
    }

    /// The `continues` of the kept file `id`.
    fn read_continues(kept: &[PathBuf], id: &str) -> Option<String> {
        let path = kept.iter().find(|p| crate::transcript::id_of(p) == id)?;
        SessionFile::read(path)
            .expect("read")
            .first_start()
            .continues
            .clone()
    }

    #[test]
    fn a_record_over_the_cap_still_goes_in_a_file_of_its_own() {
        let dir = tempfile::tempdir().expect("temp dir");
        let audit = AuditLog::new(SessionStore::new(dir.path().to_owned()), 1024);
        calls(&audit, 3, &"y".repeat(3000));
        assert_eq!(audit.close("done"), None);
        // A start and an end per file at most: no file is left without one.
        for path in files(dir.path()) {
            let file = SessionFile::read(&path).expect("read");
            let calls = file
                .records()
                .iter()
                .filter(|r| !matches!(r, Record::SessionStart(_) | Record::Stop(_)))
                .count();
            assert_eq!(calls, 1, "{}", path.display());
        }
    }
}
