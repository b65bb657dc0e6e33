//! Reads a session file back: checks its format version, tolerates the
//! partial last line a crash leaves, and rebuilds the ledger for `--resume`.

use std::collections::HashMap;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::record::{FORMAT_VERSION, Record, SessionStart};
use super::seal::GrantSeal;
use crate::agent::{Answer, Message, ToolResultEntry, tool_calls};
use crate::json_budget::JsonBudget;
use crate::sandbox::Permit;

/// The result of a call that started but has no recorded end: the process
/// died while it ran.
pub const NO_RESULT_RECORDED: &str = "(no result recorded: the run stopped before this call \
     finished; it may or may not have taken effect)";

/// The result of a call that had not started when the process died (its
/// start is written before the tool runs, so it certainly did not run).
pub const NOT_STARTED: &str = "(not executed: the run stopped before this call started)";

/// A session file, read. Only [`SessionFile::read`] makes one, so it always
/// starts with a `session_start`.
#[derive(Debug, Clone)]
pub struct SessionFile {
    pub path: PathBuf,
    /// Every complete record, in order.
    pub(crate) records: Vec<Record>,
    /// Problems that did not stop the read (a partial last line).
    pub warnings: Vec<String>,
    /// Bytes of the file up to the end of the last complete record; a
    /// resumed run appends from here.
    pub(super) valid_len: u64,
    /// The last complete record lacks its newline (the crash cut only
    /// that); a resumed run writes one first.
    pub(super) missing_newline: bool,
}

/// What `--resume` continues from.
#[derive(Debug, Clone, PartialEq)]
pub struct Resume {
    /// The conversation so far, ending with whole exchanges.
    pub ledger: Vec<Message>,
    /// Results for the calls of the last reply that have none (the process
    /// died while they ran); to be recorded and appended to the ledger.
    pub recovered: Option<Message>,
}

/// The largest session file toolhost reads (whole, into memory): far over
/// a real one, far under what would abort the process when a repository
/// ships a sparse file of 100 GB in `.toolhost/sessions/`.
pub(super) const MAX_SESSION_FILE: u64 = 1 << 30;

/// What toolhost parses of one session file, beyond its bytes: 2,000,000
/// JSON values over all its lines, 128 deep. A real session of that many
/// values is over 100 MB; without the count, 50 MB of `0,` in one
/// record's arguments cost 1.7 GB to list or resume.
pub(super) const SESSION_JSON: JsonBudget = JsonBudget {
    max_bytes: MAX_SESSION_FILE as usize,
    max_depth: 128,
    max_values: 2_000_000,
};

/// Opens the session file at `path` and says its size. A repository can
/// ship anything in `.toolhost/sessions/`: a FIFO would block the open for
/// ever, a link would lead to any file (another project's session, sent to
/// the model on `--resume`). So no link is followed, nothing waits, and
/// only a regular file is opened.
pub(super) fn open_session(path: &Path) -> Result<(std::fs::File, u64), TranscriptError> {
    let io = |source| TranscriptError::Io {
        path: path.to_path_buf(),
        source,
    };
    let not_regular = || TranscriptError::NotRegular {
        path: path.to_path_buf(),
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => not_regular(),
            _ => io(e),
        })?;
    let metadata = file.metadata().map_err(io)?;
    if !metadata.is_file() {
        return Err(not_regular());
    }
    Ok((file, metadata.len()))
}

impl SessionFile {
    /// Reads and checks `path`.
    pub fn read(path: &Path) -> Result<SessionFile, TranscriptError> {
        let io = |source| TranscriptError::Io {
            path: path.to_path_buf(),
            source,
        };
        let (file, size) = open_session(path)?;
        if size > MAX_SESSION_FILE {
            return Err(TranscriptError::TooBig {
                path: path.to_path_buf(),
                size,
            });
        }
        let mut bytes = Vec::new();
        // Bounded again in case it grows while read.
        std::io::Read::read_to_end(
            &mut std::io::Read::take(file, MAX_SESSION_FILE + 1),
            &mut bytes,
        )
        .map_err(io)?;
        if bytes.len() as u64 > MAX_SESSION_FILE {
            return Err(TranscriptError::TooBig {
                path: path.to_path_buf(),
                size: bytes.len() as u64,
            });
        }
        let mut records = Vec::new();
        let mut warnings = Vec::new();
        let mut valid_len = 0;
        let mut start = 0;
        let mut number = 0;
        let mut values = 0;
        while start < bytes.len() {
            number += 1;
            let (line, end, complete) = match bytes[start..].iter().position(|&b| b == b'\n') {
                Some(at) => (&bytes[start..start + at], start + at + 1, true),
                None => (&bytes[start..], bytes.len(), false),
            };
            if line.iter().all(u8::is_ascii_whitespace) {
                start = end;
                if complete {
                    valid_len = end as u64;
                }
                continue;
            }
            if let Err(over) = SESSION_JSON.check_counting(line, &mut values) {
                return Err(TranscriptError::OverBudget {
                    path: path.to_path_buf(),
                    line: number,
                    over,
                });
            }
            match parse_line(path, number, line) {
                Ok(record) => {
                    if records.is_empty() && !matches!(record, Record::SessionStart(_)) {
                        return Err(TranscriptError::NotASession {
                            path: path.to_path_buf(),
                        });
                    }
                    records.push(record);
                    // A complete record missing only its newline is kept; the
                    // next writer starts a new line after it.
                    valid_len = end as u64;
                }
                Err(TranscriptError::Corrupt { reason, .. }) if !complete => {
                    warnings.push(format!(
                        "ignored the last line of `{}` ({} bytes, cut off mid-write when the run \
                         was killed: {reason})",
                        path.display(),
                        line.len()
                    ));
                }
                Err(error) => return Err(error),
            }
            start = end;
        }
        if records.is_empty() {
            return Err(TranscriptError::NotASession {
                path: path.to_path_buf(),
            });
        }
        let missing_newline = valid_len > 0 && bytes[valid_len as usize - 1] != b'\n';
        Ok(SessionFile {
            path: path.to_path_buf(),
            records,
            warnings,
            valid_len,
            missing_newline,
        })
    }

    /// Every complete record, in order.
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// The first `session_start` (the session's own id and time).
    pub fn first_start(&self) -> &SessionStart {
        match self.records.first() {
            Some(Record::SessionStart(start)) => start,
            // `read` refuses files that do not begin with one.
            _ => unreachable!("a session file starts with session_start"),
        }
    }

    /// The last `session_start` (the model and tools most recently used).
    pub fn last_start(&self) -> &SessionStart {
        self.records
            .iter()
            .rev()
            .find_map(|record| match record {
                Record::SessionStart(start) => Some(start),
                _ => None,
            })
            .unwrap_or_else(|| self.first_start())
    }

    /// The grants given for the session (answered `session`), in order,
    /// once each, with whether `seal` (the user's key) sealed it in this
    /// session for `workspace`, the one it is resumed in: only those
    /// `--resume` applies.
    pub fn session_grants(&self, seal: Option<&GrantSeal>, workspace: &str) -> Vec<(Permit, bool)> {
        let id = &self.first_start().id;
        let mut grants: Vec<(Permit, bool)> = Vec::new();
        for record in &self.records {
            let Record::Grant(grant) = record else {
                continue;
            };
            if grant.answer != Answer::Session || grants.iter().any(|(p, _)| *p == grant.permit) {
                continue;
            }
            let sealed =
                seal.is_some_and(|seal| seal.verify((workspace, id), &grant.permit, &grant.seal));
            grants.push((grant.permit.clone(), sealed));
        }
        grants
    }

    /// The ledger to continue from. The last reply's calls that have no
    /// result get one: the recorded end if the call finished (the batch's
    /// results message was not written yet), [`NO_RESULT_RECORDED`] if it
    /// started, [`NOT_STARTED`] if it never did. Nothing is run again.
    pub fn resume(&self) -> Resume {
        let mut ledger = Vec::new();
        let mut last_assistant_record = 0;
        for (index, record) in self.records.iter().enumerate() {
            match record {
                Record::Message(entry) => {
                    if matches!(entry.message, Message::Assistant(_)) {
                        last_assistant_record = index;
                    }
                    ledger.push(entry.message.clone());
                }
                // The model went on with the stubs and the summary: so does
                // a resume.
                Record::Compaction(compaction) => {
                    crate::agent::forget_usage(&mut ledger);
                    crate::agent::put_stubs_back(&mut ledger, &compaction.masked);
                    if let (Some(first_kept), Some(summary)) =
                        (compaction.first_kept, &compaction.summary)
                    {
                        crate::agent::cut_and_summarise(&mut ledger, first_kept, summary);
                    }
                }
                _ => {}
            }
        }
        let recovered = match ledger.last() {
            Some(Message::Assistant(assistant)) => {
                let calls = tool_calls(assistant);
                (!calls.is_empty()).then(|| {
                    let mut started = HashMap::new();
                    let mut ended = HashMap::new();
                    for record in &self.records[last_assistant_record..] {
                        match record {
                            Record::ToolExecutionStart(start) => {
                                started.insert(start.call_id.as_str(), ());
                            }
                            Record::ToolExecutionEnd(end) => {
                                ended.insert(end.call_id.as_str(), end);
                            }
                            _ => {}
                        }
                    }
                    let results = calls
                        .iter()
                        .map(|call| {
                            let (text, is_error) = match ended.get(call.id) {
                                Some(end) => (end.text.clone(), end.is_error),
                                None if started.contains_key(call.id) => {
                                    (NO_RESULT_RECORDED.to_owned(), true)
                                }
                                None => (NOT_STARTED.to_owned(), true),
                            };
                            ToolResultEntry {
                                call_id: call.id.to_owned(),
                                tool: call.name.to_owned(),
                                text,
                                is_error,
                            }
                        })
                        .collect();
                    Message::ToolResults { results }
                })
            }
            _ => None,
        };
        Resume { ledger, recovered }
    }
}

/// One line: JSON, a known format version, a record.
fn parse_line(path: &Path, number: usize, line: &[u8]) -> Result<Record, TranscriptError> {
    let corrupt = |reason: String| TranscriptError::Corrupt {
        path: path.to_path_buf(),
        line: number,
        reason,
    };
    let value: Value = serde_json::from_slice(line).map_err(|e| corrupt(e.to_string()))?;
    if value["type"] == "session_start" {
        let format = value["format"].as_u64().unwrap_or(0);
        if format > u64::from(FORMAT_VERSION) {
            return Err(TranscriptError::NewerFormat {
                path: path.to_path_buf(),
                found: format,
            });
        }
    }
    serde_json::from_value(value).map_err(|e| corrupt(e.to_string()))
}

/// What makes session files, for a directory that has none.
pub const WHO_WRITES_SESSIONS: &str =
    "each `toolhost run` writes one there, and `toolhost mcp` at its first tool call";

/// A session that cannot be found or read, naming the file and the fix.
#[derive(Debug, thiserror::Error)]
pub enum TranscriptError {
    #[error("no sessions in `{}` yet: {}", .dir.display(), WHO_WRITES_SESSIONS)]
    NoSessions { dir: PathBuf },
    #[error("no session `{id}` in `{}`: `toolhost sessions` lists them", .dir.display())]
    NotFound { id: String, dir: PathBuf },
    #[error("`{id}` matches {} sessions ({}): give more of the id", .matches.len(), .matches.join(", "))]
    Ambiguous { id: String, matches: Vec<String> },
    #[error("reading `{}`: {source}", .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "`{}` was written by a newer toolhost (session format {found}; this one reads up to \
         format {FORMAT_VERSION}): upgrade toolhost to resume or show it",
        .path.display()
    )]
    NewerFormat { path: PathBuf, found: u64 },
    #[error(
        "line {line} of `{}` is not a session event ({reason}); the file was changed by \
         something other than toolhost: repair or delete that line",
        .path.display()
    )]
    Corrupt {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error(
        "`{}` is not a regular file, so toolhost does not read it (a FIFO would block, a link \
         could lead to any file): remove it",
        .path.display()
    )]
    NotRegular { path: PathBuf },
    #[error("`{}` is not a toolhost session file (it does not start with a session_start event)", .path.display())]
    NotASession { path: PathBuf },
    #[error(
        "`{}` is {size} bytes, over the {} GiB toolhost reads of a session file (it may have \
         come with the repository); move it away, or delete it",
        .path.display(),
        MAX_SESSION_FILE >> 30
    )]
    TooBig { path: PathBuf, size: u64 },
    #[error(
        "`{}` holds {over} by its line {line}, more than toolhost parses of one session file (it \
         may have come with the repository); move it away, or delete it",
        .path.display()
    )]
    OverBudget {
        path: PathBuf,
        line: usize,
        over: crate::json_budget::OverBudget,
    },
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use serde_json::json;

    use super::*;
    use crate::transcript::SessionWriter;

    /// A session file from JSON lines, each written as one line.
    fn file_with(lines: &[serde_json::Value], tail: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.jsonl");
        let mut file = std::fs::File::create(&path).expect("create");
        for line in lines {
            writeln!(file, "{line}").expect("write");
        }
        file.write_all(tail.as_bytes()).expect("write tail");
        (dir, path)
    }

    fn start(format: u32) -> serde_json::Value {
        json!({"type": "session_start", "format": format, "id": "s", "at": "2026-11-30T00:00:00Z",
               "toolhost": "0.1.0", "workspace": "/w", "provider": "scripted",
               "system_prompt": "", "max_turns": 100, "tools": []})
    }

    fn message(message: serde_json::Value) -> serde_json::Value {
        json!({"type": "message", "at": "2026-11-30T00:00:01Z", "message": message})
    }

    fn call(id: &str) -> serde_json::Value {
        json!({"type": "tool_call", "id": id, "name": "t", "arguments": {}, "arguments_raw": "{}"})
    }

    fn started(id: &str) -> serde_json::Value {
        json!({"type": "tool_execution_start", "at": "x", "call_id": id, "tool": "t", "arguments": {}})
    }

    fn ended(id: &str, text: &str) -> serde_json::Value {
        json!({"type": "tool_execution_end", "at": "x", "call_id": id, "tool": "t", "is_error": false,
               "duration_ms": 1, "output_bytes": text.len(), "text": text})
    }

    #[test]
    fn a_partial_last_line_is_dropped_with_a_warning_and_cut_on_resume() {
        let lines = [start(1), message(json!({"role": "user", "text": "hi"}))];
        let (_dir, path) = file_with(&lines, r#"{"type":"message","at":"2026-11-30T0"#);
        let file = SessionFile::read(&path).expect("a torn last line is not fatal");
        assert_eq!(file.records.len(), 2);
        assert_eq!(file.warnings.len(), 1);
        assert!(
            file.warnings[0].contains("cut off mid-write"),
            "{:?}",
            file.warnings
        );
        let whole = std::fs::read(&path).expect("read");
        let valid = usize::try_from(file.valid_len).expect("fits");
        assert!(whole[..valid].ends_with(b"\n"));

        // Resuming appends after the last whole line: the file is valid again.
        let mut again = match &file.records[0] {
            Record::SessionStart(start) => start.clone(),
            other => panic!("{other:?}"),
        };
        again.resumed = true;
        let writer = SessionWriter::append(&file, &again).expect("append");
        assert_eq!(writer.error(), None);
        let reread = SessionFile::read(&path).expect("reread");
        assert!(reread.warnings.is_empty(), "{:?}", reread.warnings);
        assert_eq!(reread.records.len(), 3);
    }

    #[test]
    fn a_whole_last_record_without_its_newline_is_kept() {
        let (_dir, path) = file_with(
            &[start(1)],
            &message(json!({"role": "user", "text": "hi"})).to_string(),
        );
        let file = SessionFile::read(&path).expect("read");
        assert_eq!(file.records.len(), 2);
        assert!(file.missing_newline);
        let writer = SessionWriter::append(&file, file.first_start()).expect("append");
        assert_eq!(writer.error(), None);
        assert_eq!(SessionFile::read(&path).expect("reread").records.len(), 3);
    }

    #[test]
    fn a_newer_format_is_refused_by_name() {
        let (_dir, path) = file_with(&[start(FORMAT_VERSION + 1)], "");
        let error = SessionFile::read(&path).expect_err("newer format");
        let text = error.to_string();
        assert!(text.contains("newer toolhost"), "{text}");
        assert!(
            text.contains(&format!("session format {}", FORMAT_VERSION + 1)),
            "{text}"
        );
        assert!(text.contains("s.jsonl"), "{text}");
    }

    #[test]
    fn a_damaged_line_before_the_end_is_an_error_naming_the_line() {
        let (_dir, path) = file_with(&[start(1), json!("not an event"), start(1)], "");
        let error = SessionFile::read(&path).expect_err("damaged");
        assert!(
            matches!(error, TranscriptError::Corrupt { line: 2, .. }),
            "{error}"
        );
        let (_dir, other) = file_with(&[message(json!({"role": "user", "text": "hi"}))], "");
        assert!(matches!(
            SessionFile::read(&other),
            Err(TranscriptError::NotASession { .. })
        ));
    }

    #[test]
    fn resume_answers_every_dangling_call_and_never_reruns_one() {
        let lines = [
            start(1),
            message(json!({"role": "user", "text": "go"})),
            message(json!({"role": "assistant", "finish": "tool_use",
                           "blocks": [call("done"), call("running"), call("queued")]})),
            started("done"),
            ended("done", "the recorded result"),
            started("running"),
        ];
        let (_dir, path) = file_with(&lines, "");
        let resume = SessionFile::read(&path).expect("read").resume();
        assert_eq!(resume.ledger.len(), 2);
        let Some(Message::ToolResults { results }) = resume.recovered else {
            panic!("results for the dangling calls");
        };
        let answers: Vec<(&str, &str, bool)> = results
            .iter()
            .map(|r| (r.call_id.as_str(), r.text.as_str(), r.is_error))
            .collect();
        assert_eq!(
            answers,
            [
                ("done", "the recorded result", false),
                ("running", NO_RESULT_RECORDED, true),
                ("queued", NOT_STARTED, true),
            ]
        );
    }

    #[test]
    fn a_finished_session_resumes_as_is() {
        let lines = [
            start(1),
            message(json!({"role": "user", "text": "go"})),
            message(json!({"role": "assistant", "finish": "tool_use", "blocks": [call("c1")]})),
            started("c1"),
            ended("c1", "r"),
            message(json!({"role": "tool_results", "results": [
                {"call_id": "c1", "tool": "t", "text": "r", "is_error": false}]})),
            message(
                json!({"role": "assistant", "finish": "stop", "blocks": [{"type": "text", "text": "ok"}]}),
            ),
            json!({"type": "stop", "at": "x", "stop": {"reason": "completed", "turns": 2, "truncated": false, "evidence": "e"}}),
        ];
        let (_dir, path) = file_with(&lines, "");
        let resume = SessionFile::read(&path).expect("read").resume();
        assert_eq!(resume.ledger.len(), 4);
        assert_eq!(resume.recovered, None);
    }

    /// A whole run recorded through the writer, as `toolhost run` does.
    fn recorded_run(path: &Path) {
        use crate::agent::{AgentEvent, StopReason, StopRecord};
        use crate::provider::{AssistantMessage, Block, Finish};
        let start: SessionStart = serde_json::from_value(start(1)).expect("start");
        let writer =
            std::sync::Arc::new(SessionWriter::create(path.to_path_buf(), &start).expect("create"));
        let sink = writer.sink();
        let call = |id: &str| Block::ToolCall {
            id: id.into(),
            name: "t".into(),
            arguments: Some(json!({"n": id})),
            arguments_raw: format!(r#"{{"n":"{id}"}}"#),
        };
        let reply = |blocks, finish| AgentEvent::Message {
            message: Message::Assistant(AssistantMessage {
                blocks,
                finish,
                usage: None,
                cut: None,
            }),
        };
        let run = |id: &str| {
            [
                AgentEvent::ToolExecutionStart {
                    call_id: id.into(),
                    tool: "t".into(),
                    arguments: json!({"n": id}),
                },
                AgentEvent::ToolExecutionEnd {
                    call_id: id.into(),
                    tool: "t".into(),
                    is_error: false,
                    duration_ms: 1,
                    text: format!("result of {id}"),
                    output_bytes: 11,
                    saved_to: None,
                    execution: None,
                },
            ]
        };
        let results = |ids: &[&str]| AgentEvent::Message {
            message: Message::ToolResults {
                results: ids
                    .iter()
                    .map(|id| ToolResultEntry {
                        call_id: (*id).into(),
                        tool: "t".into(),
                        text: format!("result of {id}"),
                        is_error: false,
                    })
                    .collect(),
            },
        };
        let text = |t: &str| Block::Text { text: t.into() };
        let mut events = vec![
            AgentEvent::AgentStart,
            AgentEvent::Message {
                message: Message::prompt("go"),
            },
            AgentEvent::TurnStart { turn: 1 },
            AgentEvent::MessageDelta {
                text: "look".into(),
            },
            reply(vec![text("look"), call("a"), call("b")], Finish::ToolUse),
        ];
        events.extend(run("a"));
        events.extend(run("b"));
        events.push(results(&["a", "b"]));
        events.push(AgentEvent::TurnStart { turn: 2 });
        events.push(reply(vec![call("c")], Finish::ToolUse));
        events.extend(run("c"));
        events.push(results(&["c"]));
        events.push(AgentEvent::TurnStart { turn: 3 });
        events.push(reply(vec![text("done")], Finish::Stop));
        events.push(AgentEvent::AgentEnd {
            stop: StopRecord {
                reason: StopReason::Completed,
                turns: 3,
                truncated: false,
                evidence: "e".into(),
            },
        });
        for event in &events {
            sink(event);
        }
        assert_eq!(writer.error(), None);
    }

    /// Every call of every reply has exactly one result, in the message
    /// right after it, and results answer nothing else.
    fn assert_ledger_is_whole(ledger: &[Message]) {
        for (index, message) in ledger.iter().enumerate() {
            let asked: Vec<&str> = match message {
                Message::Assistant(assistant) => {
                    tool_calls(assistant).iter().map(|c| c.id).collect()
                }
                _ => Vec::new(),
            };
            let next = ledger.get(index + 1);
            match next {
                Some(Message::ToolResults { results }) => {
                    let answered: Vec<&str> = results.iter().map(|r| r.call_id.as_str()).collect();
                    assert_eq!(
                        answered,
                        asked,
                        "results at {} answer the message before",
                        index + 1
                    );
                }
                _ => assert!(
                    asked.is_empty() || next.is_none(),
                    "calls at {index} unanswered"
                ),
            }
        }
    }

    #[test]
    fn a_crash_at_any_byte_leaves_a_session_that_resumes_whole() {
        let dir = tempfile::tempdir().expect("temp dir");
        let full_path = dir.path().join("full.jsonl");
        recorded_run(&full_path);
        let full = std::fs::read(&full_path).expect("read");
        let first_line = full.iter().position(|&b| b == b'\n').expect("a line") + 1;
        let cut_path = dir.path().join("cut.jsonl");
        for cut in 0..=full.len() {
            let prefix = &full[..cut];
            std::fs::write(&cut_path, prefix).expect("write prefix");
            let file = match SessionFile::read(&cut_path) {
                Ok(file) => file,
                Err(TranscriptError::NotASession { .. }) if cut < first_line => continue,
                Err(error) => panic!("cut at byte {cut}: {error}"),
            };
            let at_line_end = prefix.ends_with(b"\n");
            assert_eq!(
                file.warnings.is_empty(),
                at_line_end || file.missing_newline,
                "cut {cut}"
            );
            assert!(!crate::transcript::show::lines(&file, false).is_empty());
            let resume = file.resume();
            let mut ledger = resume.ledger.clone();
            let ends_with_calls = matches!(
                ledger.last(),
                Some(Message::Assistant(a)) if !tool_calls(a).is_empty()
            );
            assert_eq!(resume.recovered.is_some(), ends_with_calls, "cut {cut}");
            ledger.extend(resume.recovered);
            assert_ledger_is_whole(&ledger);
        }
    }
}
