//! Long tool results: past the model budget a result reaches the model as
//! its head and tail with a line saying what was left out and where the
//! whole text was saved, so it can page through the rest with `read_file`
//! instead of flooding its context (docs/contributing/decisions.md#long-results).

use std::fs;
use std::io::Write as _;
use std::path::PathBuf;

/// The default model budget for one result: 30 KiB.
pub const DEFAULT_RESULT_BUDGET: usize = 30 * 1024;

/// How much of a result the model sees, and where whole results go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultBudget {
    /// Results longer than this (in bytes) are cut to head + tail.
    pub max_bytes: usize,
    /// Where the whole text of a cut result is written.
    pub save_dir: PathBuf,
    /// `save_dir` as the model's tools name it (relative to the workspace).
    pub save_dir_for_model: String,
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
        crate::workspace::prepare_state_dir(&self.save_dir)
            .and_then(|()| fs::create_dir_all(&self.save_dir))
            .map_err(|e| format!("creating `{}`: {e}", self.save_dir.display()))?;
        for n in 1..1000 {
            let name = if n == 1 {
                format!("{stem}.txt")
            } else {
                format!("{stem}-{n}.txt")
            };
            let path = self.save_dir.join(&name);
            let mut file = match fs::File::create_new(&path) {
                Ok(file) => file,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(format!("creating `{}`: {e}", path.display())),
            };
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
}
