//! Long tool results: past the model budget a result reaches the model as
//! its head and tail with a line saying what was left out and where the
//! whole text was saved, so it can page through the rest with `read_file`
//! instead of flooding its context (docs/contributing/decisions.md#long-results).
//!
//! Saved results are held to a budget of their own ([`SavedOutputs`]): a
//! run's and a workspace's, oldest dropped first. A dropped file keeps its
//! name and says it is gone, so the model reading it learns why.

use std::collections::VecDeque;
use std::fs;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

/// The default model budget for one result: 30 KiB.
pub const DEFAULT_RESULT_BUDGET: usize = 30 * 1024;

/// What one run's saved results may take by default: 256 MiB, 256 whole
/// results at the default output limit of 1 MiB, more than a model pages
/// through in a run.
pub const DEFAULT_OUTPUTS_PER_RUN: u64 = 256 << 20;

/// What a workspace's saved results may take by default, over all runs:
/// 1 GiB, four runs' worth.
pub const DEFAULT_OUTPUTS_PER_WORKSPACE: u64 = 1 << 30;

/// How every file whose text was dropped starts.
const DROPPED_PREFIX: &str = "[toolhost no longer keeps this output:";

/// What saved results may take on disk, and what this run saved: shared
/// by every clone of a [`ResultBudget`] (the calls of a batch save at
/// once).
#[derive(Debug, Clone)]
pub struct SavedOutputs {
    /// Bytes this run's saved results may take.
    pub per_run: u64,
    /// Bytes the save directory may hold, whichever run saved them.
    pub per_workspace: u64,
    files: Arc<Mutex<Files>>,
}

impl PartialEq for SavedOutputs {
    fn eq(&self, other: &Self) -> bool {
        (self.per_run, self.per_workspace) == (other.per_run, other.per_workspace)
    }
}

impl Eq for SavedOutputs {}

impl Default for SavedOutputs {
    fn default() -> Self {
        SavedOutputs::new(DEFAULT_OUTPUTS_PER_RUN, DEFAULT_OUTPUTS_PER_WORKSPACE)
    }
}

/// The files of the save directory, oldest first, as the first save of
/// the run found them and as this run changed them since.
#[derive(Debug, Default)]
struct Files {
    scanned: bool,
    files: VecDeque<Saved>,
    /// Bytes of `files`.
    total: u64,
    /// Bytes of this run's whole results in `files`.
    this_run: u64,
}

#[derive(Debug)]
struct Saved {
    name: String,
    bytes: u64,
    this_run: bool,
    dropped: bool,
}

impl SavedOutputs {
    pub fn new(per_run: u64, per_workspace: u64) -> Self {
        SavedOutputs {
            per_run,
            per_workspace,
            files: Arc::default(),
        }
    }

    fn files(&self) -> std::sync::MutexGuard<'_, Files> {
        self.files.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// How much of a result the model sees, and where whole results go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultBudget {
    /// Results longer than this (in bytes) are cut to head + tail.
    pub max_bytes: usize,
    /// Where the whole text of a cut result is written.
    pub save_dir: PathBuf,
    /// `save_dir` as the model's tools name it (relative to the workspace).
    pub save_dir_for_model: String,
    /// What the saved results may take.
    pub kept: SavedOutputs,
}

/// A result as the model will see it.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Fitted {
    pub text: String,
    /// Where the whole text was saved (as the model names it), when cut.
    pub saved_to: Option<String>,
}

impl ResultBudget {
    /// `text` unchanged when it fits; otherwise head + note + tail, with the
    /// whole text saved first under a name derived from `call_id`.
    pub(super) fn fit(&self, text: String, call_id: &str) -> Fitted {
        if text.len() <= self.max_bytes {
            return Fitted {
                text,
                saved_to: None,
            };
        }
        let saved = self.save(&text, call_id);
        let (head_end, tail_start) = cut_points(&text, self.max_bytes);
        let head = &text[..head_end];
        let middle = &text[head_end..tail_start];
        let tail = &text[tail_start..];
        let first_left_out = head.matches('\n').count() + 1;
        let lines_left_out = middle.lines().count();
        let whole = match &saved {
            Ok(name) => format!(
                "the whole output is saved in `{name}`: read it with read_file (offset={first_left_out} \
                 is the first line left out; use limit to page)"
            ),
            Err(error) => format!("the whole output could not be saved: {error}"),
        };
        let note = format!(
            "[... {lines_left_out} lines ({} of {} bytes) left out; {whole} ...]",
            middle.len(),
            text.len()
        );
        let separator = if head.is_empty() || head.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        Fitted {
            text: format!("{head}{separator}{note}\n{tail}"),
            saved_to: saved.ok(),
        }
    }

    /// Writes `text` to a new file in `save_dir` and returns its name for
    /// the model. Never overwrites: a call id seen before (scripted runs
    /// reuse ids) gets a numbered name.
    pub(super) fn save(&self, text: &str, call_id: &str) -> Result<String, String> {
        let stem: String = call_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(100)
            .collect();
        let stem = if stem.is_empty() { "call".into() } else { stem };
        crate::workspace::private_state_dir(&self.save_dir)
            .map_err(|e| format!("creating `{}`: {e}", self.save_dir.display()))?;
        let bytes = text.len() as u64;
        let most = self.kept.per_run.min(self.kept.per_workspace);
        if bytes > most {
            return Err(format!(
                "it is larger than the {} saved results may take",
                mib(most)
            ));
        }
        let mut files = self.kept.files();
        if !files.scanned {
            files.scanned = true;
            self.scan(&mut files);
        }
        self.make_room(&mut files, bytes);
        for n in 1..1000 {
            let name = if n == 1 {
                format!("{stem}.txt")
            } else {
                format!("{stem}-{n}.txt")
            };
            let path = self.save_dir.join(&name);
            let mut file = match fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path)
            {
                Ok(file) => file,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(format!("creating `{}`: {e}", path.display())),
            };
            files.files.push_back(Saved {
                name: name.clone(),
                bytes,
                this_run: true,
                dropped: false,
            });
            files.total += bytes;
            files.this_run += bytes;
            file.write_all(text.as_bytes())
                .map_err(|e| format!("writing `{}`: {e}", path.display()))?;
            return Ok(format!(
                "{}/{name}",
                self.save_dir_for_model.trim_end_matches('/')
            ));
        }
        Err(format!(
            "`{}` already holds 999 files for call `{call_id}`",
            self.save_dir.display()
        ))
    }

    /// Finds what earlier runs saved, oldest first.
    fn scan(&self, files: &mut Files) {
        let Ok(entries) = fs::read_dir(&self.save_dir) else {
            return;
        };
        let mut found: Vec<(std::time::SystemTime, Saved)> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                // Not followed: only toolhost writes there.
                let meta = entry.metadata().ok()?;
                let name = entry.file_name().into_string().ok()?;
                let modified = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
                Some((
                    modified,
                    Saved {
                        name,
                        bytes: meta.len(),
                        this_run: false,
                        // A whole result is saved only past the model's
                        // budget, 1 KiB at least: a smaller file is a note.
                        dropped: meta.len() < 1024,
                    },
                ))
            })
            .collect();
        found.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.name.cmp(&b.1.name)));
        for (_, saved) in found {
            files.total += saved.bytes;
            files.files.push_back(saved);
        }
    }

    /// Drops the oldest saved results until `bytes` more fit this run's
    /// budget and the workspace's; when dropped results alone are over the
    /// workspace's, removes the oldest of those too.
    fn make_room(&self, files: &mut Files, bytes: u64) {
        let kept = &self.kept;
        while files.this_run + bytes > kept.per_run {
            let Some(at) = files.files.iter().position(|f| f.this_run && !f.dropped) else {
                break;
            };
            self.drop_text(files, at);
        }
        while files.total + bytes > kept.per_workspace {
            match files.files.iter().position(|f| !f.dropped) {
                Some(at) => self.drop_text(files, at),
                None => {
                    let Some(oldest) = files.files.pop_front() else {
                        break;
                    };
                    files.total -= oldest.bytes;
                    let _ = fs::remove_file(self.save_dir.join(&oldest.name));
                }
            }
        }
    }

    /// Puts a note that the text is gone in place of the saved result `at`.
    fn drop_text(&self, files: &mut Files, at: usize) {
        let kept = &self.kept;
        let (name, bytes, this_run) = {
            let saved = &files.files[at];
            (saved.name.clone(), saved.bytes, saved.this_run)
        };
        let note = format!(
            "{DROPPED_PREFIX} its whole text ({} bytes) was dropped to keep saved results within \
             their budget ({} a run, {} a workspace; the oldest go first). Call the tool again if \
             you need it.]\n",
            bytes,
            mib(kept.per_run),
            mib(kept.per_workspace)
        );
        let path = self.save_dir.join(&name);
        // Never through a link; a file that is gone needs no note.
        let written = fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&path)
            .and_then(|mut file| file.write_all(note.as_bytes()));
        let left = if written.is_ok() {
            note.len() as u64
        } else {
            let _ = fs::remove_file(&path);
            0
        };
        files.total = files.total - bytes + left;
        if this_run {
            files.this_run -= bytes;
        }
        let saved = &mut files.files[at];
        saved.bytes = left;
        saved.dropped = true;
    }
}

/// `bytes` in MiB, as the budgets are set.
fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes >> 20)
}

/// Where the head ends and the tail starts: about half the budget each,
/// moved to line ends when a line boundary is near, and always to char
/// boundaries.
pub(super) fn cut_points(text: &str, budget: usize) -> (usize, usize) {
    let half = budget / 2;
    let mut head_end = floor_char_boundary(text, half);
    if let Some(newline) = text[..head_end].rfind('\n') {
        // Prefer whole lines unless that throws away most of the head.
        if newline + 1 >= head_end / 2 {
            head_end = newline + 1;
        }
    }
    let mut tail_start = ceil_char_boundary(text, text.len().saturating_sub(half).max(head_end));
    if let Some(newline) = text[tail_start..].find('\n') {
        let after = tail_start + newline + 1;
        if after < text.len() && text.len() - after >= (text.len() - tail_start) / 2 {
            tail_start = after;
        }
    }
    (head_end, tail_start)
}

fn floor_char_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_char_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(dir: &std::path::Path, max_bytes: usize) -> ResultBudget {
        ResultBudget {
            max_bytes,
            save_dir: dir.join("outputs"),
            save_dir_for_model: ".toolhost/outputs".into(),
            kept: SavedOutputs::default(),
        }
    }

    fn numbered_lines(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn a_result_within_budget_is_untouched_and_not_saved() {
        let dir = tempfile::tempdir().expect("temp dir");
        let fitted = budget(dir.path(), 100).fit("short".into(), "c1");
        assert_eq!(
            fitted,
            Fitted {
                text: "short".into(),
                saved_to: None
            }
        );
        assert!(!dir.path().join("outputs").exists());
    }

    #[test]
    fn a_long_result_keeps_whole_head_and_tail_lines_and_says_what_is_missing() {
        let dir = tempfile::tempdir().expect("temp dir");
        let text = numbered_lines(1000);
        let fitted = budget(dir.path(), 200).fit(text.clone(), "call_1");
        assert_eq!(
            fitted.saved_to.as_deref(),
            Some(".toolhost/outputs/call_1.txt")
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("outputs/call_1.txt")).expect("saved"),
            text
        );
        let lines: Vec<&str> = fitted.text.lines().collect();
        assert_eq!(lines[0], "line 1");
        assert_eq!(*lines.last().expect("tail"), "line 1000");
        let note = lines
            .iter()
            .find(|l| l.starts_with("[..."))
            .expect("a note line");
        let head_lines = lines.iter().take_while(|l| !l.starts_with("[...")).count();
        let tail_lines = lines.len() - head_lines - 1;
        assert!(
            note.contains(&format!("{} lines", 1000 - head_lines - tail_lines)),
            "{note}"
        );
        assert!(
            note.contains(&format!("offset={}", head_lines + 1)),
            "{note}"
        );
        assert!(note.contains(&format!("of {} bytes", text.len())), "{note}");
        assert!(note.contains("`.toolhost/outputs/call_1.txt`"), "{note}");
        assert!(fitted.text.len() < 200 + note.len() + 2);
    }

    #[test]
    fn one_huge_line_is_cut_at_char_boundaries() {
        let dir = tempfile::tempdir().expect("temp dir");
        let text = "é".repeat(10_000);
        let fitted = budget(dir.path(), 101).fit(text.clone(), "c");
        assert!(fitted.text.starts_with('é'));
        assert!(fitted.text.ends_with('é'));
        assert!(fitted.text.contains("[... 1 lines"), "{}", fitted.text);
        assert_eq!(
            fs::read_to_string(dir.path().join("outputs/c.txt")).expect("saved"),
            text
        );
    }

    #[test]
    fn reused_call_ids_never_overwrite_and_odd_ids_make_safe_names() {
        let dir = tempfile::tempdir().expect("temp dir");
        let budget = budget(dir.path(), 10);
        let first = budget.fit("a".repeat(50), "c1");
        let second = budget.fit("b".repeat(50), "c1");
        assert_eq!(first.saved_to.as_deref(), Some(".toolhost/outputs/c1.txt"));
        assert_eq!(
            second.saved_to.as_deref(),
            Some(".toolhost/outputs/c1-2.txt")
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("outputs/c1.txt")).expect("first"),
            "a".repeat(50)
        );
        let odd = budget.fit("c".repeat(50), "../../etc/passwd");
        assert_eq!(
            odd.saved_to.as_deref(),
            Some(".toolhost/outputs/______etc_passwd.txt")
        );
    }

    #[test]
    fn a_failed_save_still_cuts_and_says_why() {
        let dir = tempfile::tempdir().expect("temp dir");
        fs::write(dir.path().join("outputs"), "a file in the way").expect("write");
        let fitted = budget(dir.path(), 10).fit("x".repeat(100), "c1");
        assert_eq!(fitted.saved_to, None);
        assert!(
            fitted.text.contains("the whole output could not be saved"),
            "{}",
            fitted.text
        );
    }

    #[test]
    fn past_the_run_budget_the_oldest_saved_result_says_it_is_gone() {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut budget = budget(dir.path(), 10);
        budget.kept = SavedOutputs::new(250, 10_000);
        for n in 1..=3 {
            let fitted = budget.fit("x".repeat(100), &format!("c{n}"));
            assert_eq!(fitted.saved_to, Some(format!(".toolhost/outputs/c{n}.txt")));
        }
        assert_eq!(
            fs::read_to_string(dir.path().join("outputs/c1.txt")).expect("note"),
            "[toolhost no longer keeps this output: its whole text (100 bytes) was dropped to keep \
             saved results within their budget (0 MiB a run, 0 MiB a workspace; the oldest go \
             first). Call the tool again if you need it.]\n"
        );
        for n in [2, 3] {
            assert_eq!(
                fs::read_to_string(dir.path().join(format!("outputs/c{n}.txt"))).expect("kept"),
                "x".repeat(100)
            );
        }
        let too_big = budget.fit("y".repeat(300), "c4");
        assert_eq!(too_big.saved_to, None);
        assert!(
            too_big
                .text
                .contains("could not be saved: it is larger than the 0 MiB saved results may take"),
            "{}",
            too_big.text
        );
    }

    #[test]
    fn the_workspace_budget_counts_earlier_runs_and_drops_theirs_first() {
        let dir = tempfile::tempdir().expect("temp dir");
        let earlier = budget(dir.path(), 10);
        earlier.fit("a".repeat(2000), "old");
        let mut budget = budget(dir.path(), 10);
        budget.kept = SavedOutputs::new(10_000, 3000);
        budget.fit("b".repeat(2000), "new");
        let old = fs::read_to_string(dir.path().join("outputs/old.txt")).expect("note");
        assert!(old.starts_with(DROPPED_PREFIX), "{old}");
        assert_eq!(
            fs::read_to_string(dir.path().join("outputs/new.txt")).expect("kept"),
            "b".repeat(2000)
        );
        let total: u64 = fs::read_dir(dir.path().join("outputs"))
            .expect("dir")
            .map(|e| e.expect("entry").metadata().expect("meta").len())
            .sum();
        assert!(total <= 3000, "{total}");
    }
}
