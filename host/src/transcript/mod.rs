//! Session files: every run appends its events to a JSONL file as they
//! happen, so a run can be audited, listed, shown and resumed, and a killed
//! process loses nothing it had recorded
//! (docs/contributing/decisions.md#session-files-as-jsonl).
//!
//! - [`record`] is the file format (versioned, documented in
//!   docs/reference/session-format.md);
//! - [`SessionWriter`] appends records, one whole line per event;
//! - [`SessionFile`] reads a file back and rebuilds the ledger for resume;
//! - [`SessionStore`] is the directory: new ids, `last`, listing;
//! - [`show`] turns a file into the lines of `toolhost sessions`;
//! - [`audit`] records tool calls made for an MCP client (`toolhost mcp`),
//!   in files of bounded size.
//!
//! It records the agent's events and knows nothing of HTTP or wasm.

pub mod audit;
mod reader;
pub mod record;
mod seal;
pub mod show;
mod writer;

use std::path::{Path, PathBuf};

use crate::workspace::Layout;

pub use audit::{AUDIT_FILE_MAX, AUDIT_FILES_KEPT, AuditLog, AuditNotice};
pub use reader::{
    NO_RESULT_RECORDED, NOT_STARTED, Resume, SessionFile, TranscriptError, WHO_WRITES_SESSIONS,
};
pub use record::{
    ContextWindowInfo, FORMAT_VERSION, InstructionsInfo, SessionStart, ToolInfo, WindowSource,
};
pub use seal::{GRANT_KEY_FILE, GrantSeal};
pub use writer::{SessionBudget, SessionWriter, in_use};

/// The oldest session files removed from `dir` so that the rest fit in
/// `most` bytes: the user is told, since they are the user's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MadeRoom {
    pub dir: PathBuf,
    pub files: usize,
    pub bytes: u64,
    pub most: u64,
}

impl std::fmt::Display for MadeRoom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "removed the {} oldest session file{} ({}) from `{}` to keep its session files \
             within {}; set `TOOLHOST_RECORDS_MIB=RUN,WORKSPACE` to keep more",
            self.files,
            if self.files == 1 { "" } else { "s" },
            crate::units::mib_or_gib(self.bytes),
            self.dir.display(),
            crate::units::mib_or_gib(self.most)
        )
    }
}

/// A directory of session files, `<id>.jsonl` each.
#[derive(Debug, Clone)]
pub struct SessionStore {
    dir: PathBuf,
    budget: SessionBudget,
    /// Bytes the directory's earlier session files may take together
    /// (default 1 GiB): before a new one is made, the oldest that no
    /// process is writing are removed until they fit.
    most: u64,
}

impl SessionStore {
    pub fn new(dir: PathBuf) -> Self {
        SessionStore {
            dir,
            budget: SessionBudget::default(),
            most: 1 << 30,
        }
    }

    /// Each file of this store held to `budget`, and all of them to `most`
    /// bytes together.
    pub fn with_budget(mut self, budget: SessionBudget, most: u64) -> Self {
        self.budget = budget;
        self.most = most;
        self
    }

    /// `<workspace>/.toolhost/sessions`.
    pub fn in_workspace(workspace: &Path) -> Self {
        SessionStore::new(Layout::of(workspace).sessions_dir())
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Starts a new session file with a fresh id (sortable by time) and
    /// writes `start`, stamped with its id and the time, as its first line. The directory is created private
    /// (sessions hold prompts and tool output).
    pub fn create(&self, start: SessionStart) -> std::io::Result<SessionWriter> {
        self.create_making_room(start).map(|(writer, _)| writer)
    }

    /// [`SessionStore::create`], and what was removed to make room for it,
    /// for the user to be told.
    pub fn create_making_room(
        &self,
        mut start: SessionStart,
    ) -> std::io::Result<(SessionWriter, Option<MadeRoom>)> {
        crate::workspace::private_state_dir(&self.dir).map_err(|e| with_path(e, &self.dir))?;
        let made_room = self.make_room();
        start.at = record::now();
        let stamp: String = humantime::format_rfc3339_seconds(std::time::SystemTime::now())
            .to_string()
            .chars()
            .filter(char::is_ascii_digit)
            .collect();
        let (date, time) = stamp.split_at(8.min(stamp.len()));
        loop {
            start.id = format!("{date}-{time}-{:04x}", fastrand::u16(..));
            let path = self.dir.join(format!("{}.jsonl", start.id));
            match SessionWriter::create(path, &start) {
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                other => {
                    let writer = other.map_err(|e| with_path(e, &self.dir))?;
                    writer.set_budget(self.budget);
                    return Ok((writer, made_room));
                }
            }
        }
    }

    /// Continues `session`: appends `start` (marked resumed, with the
    /// session's id and the time) after its last complete record.
    pub fn resume(
        &self,
        session: &SessionFile,
        mut start: SessionStart,
    ) -> std::io::Result<SessionWriter> {
        start.id = session.first_start().id.clone();
        start.at = record::now();
        start.resumed = true;
        let writer =
            SessionWriter::append(session, &start).map_err(|e| with_path(e, &session.path))?;
        writer.set_budget(self.budget);
        Ok(writer)
    }

    /// Removes the oldest session files no process is writing until the
    /// rest fit in `most` bytes.
    fn make_room(&self) -> Option<MadeRoom> {
        let files = self.list().ok()?;
        let sized: Vec<(PathBuf, u64)> = files
            .into_iter()
            .map(|path| {
                let len = std::fs::symlink_metadata(&path).map_or(0, |m| m.len());
                (path, len)
            })
            .collect();
        let mut total: u64 = sized.iter().map(|(_, len)| len).sum();
        let mut removed = MadeRoom {
            dir: self.dir.clone(),
            files: 0,
            bytes: 0,
            most: self.most,
        };
        for (path, len) in sized.iter().rev() {
            if total <= self.most {
                break;
            }
            if !in_use(path) && std::fs::remove_file(path).is_ok() {
                total -= len;
                removed.files += 1;
                removed.bytes += len;
            }
        }
        (removed.files > 0).then_some(removed)
    }

    /// The file for `which`: `last` (the most recently written session), an
    /// id, or a unique prefix of one.
    pub fn find(&self, which: &str) -> Result<PathBuf, TranscriptError> {
        let files = self.list()?;
        if which == "last" {
            return files.into_iter().next().ok_or(TranscriptError::NoSessions {
                dir: self.dir.clone(),
            });
        }
        let exact = self.dir.join(format!("{which}.jsonl"));
        if exact.is_file() {
            return Ok(exact);
        }
        let mut matches: Vec<PathBuf> = files
            .into_iter()
            .filter(|path| id_of(path).starts_with(which))
            .collect();
        match matches.len() {
            1 => Ok(matches.remove(0)),
            0 => Err(TranscriptError::NotFound {
                id: which.to_owned(),
                dir: self.dir.clone(),
            }),
            _ => Err(TranscriptError::Ambiguous {
                id: which.to_owned(),
                matches: matches.iter().map(|p| id_of(p)).collect(),
            }),
        }
    }

    /// Every session file, most recently written first. A missing
    /// directory is an empty list.
    pub fn list(&self) -> Result<Vec<PathBuf>, TranscriptError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(TranscriptError::Io {
                    path: self.dir.clone(),
                    source,
                });
            }
        };
        let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
            .map(|path| {
                let modified = path
                    .metadata()
                    .and_then(|m| m.modified())
                    .unwrap_or(std::time::UNIX_EPOCH);
                (modified, path)
            })
            .collect();
        files.sort_by(|a, b| b.cmp(a));
        Ok(files.into_iter().map(|(_, path)| path).collect())
    }
}

/// The id of a session file: its name without `.jsonl`.
pub fn id_of(path: &Path) -> String {
    path.file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn with_path(error: std::io::Error, path: &Path) -> std::io::Error {
    std::io::Error::new(error.kind(), format!("`{}`: {error}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_sessions_go_first_past_the_directory_s_budget() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = SessionStore::new(dir.path().join("sessions"))
            .with_budget(SessionBudget::default(), 2500);
        std::fs::create_dir(store.dir()).expect("mkdir");
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1000);
        for (n, name) in ["a", "b", "c"].iter().enumerate() {
            let path = store.dir().join(format!("{name}.jsonl"));
            std::fs::write(&path, "x".repeat(1000)).expect("write");
            let file = std::fs::File::options()
                .write(true)
                .open(&path)
                .expect("open");
            file.set_modified(old + std::time::Duration::from_secs(n as u64))
                .expect("touch");
        }
        let removed = store.make_room().expect("made room");
        assert_eq!(
            removed.to_string(),
            format!(
                "removed the 1 oldest session file (1 MiB) from `{}` to keep its session files \
                 within 1 MiB; set `TOOLHOST_RECORDS_MIB=RUN,WORKSPACE` to keep more",
                store.dir().display()
            )
        );
        assert_eq!(store.make_room(), None, "nothing more to remove");
        let mut left: Vec<String> = store
            .list()
            .expect("list")
            .iter()
            .map(|p| id_of(p))
            .collect();
        left.sort();
        assert_eq!(left, ["b", "c"]);
    }
}
