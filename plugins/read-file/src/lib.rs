//! `read_file`: a text file as numbered lines, a window at a time.
//!
//! Streams the file so a huge file costs memory only for the window shown.
//! Refuses binary files rather than feeding the model garbage.

use std::fs::File;
use std::io::Read;

use serde::Deserialize;
use serde_json::json;
use toolhost_plugin_support::{Tool, ToolError, ToolResult, clip_line, io_error, looks_binary};

/// Lines shown when the call gives no `limit`.
const DEFAULT_LIMIT: usize = 2000;
/// Longer lines are cut (minified files would flood the model otherwise).
const MAX_LINE_CHARS: usize = 2000;

#[derive(Deserialize)]
struct Input {
    path: String,
    offset: Option<usize>,
    limit: Option<usize>,
}

pub struct ReadFile;

impl Tool for ReadFile {
    const NAME: &'static str = "read_file";
    const DESCRIPTION: &'static str = "Read a text file from the workspace. Returns numbered lines \
        (`line-number<TAB>text`). Reads up to 2000 lines from `offset` (1-based, default 1); \
        pass `offset` and `limit` to page through long files. Refuses binary files.";
    const READ_ONLY: bool = true;

    fn input_schema() -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "File path relative to the workspace root.",
                    "minLength": 1,
                    "x-toolhost-path": "read"
                },
                "offset": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "First line to show, 1-based. Default 1."
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "description": "Most lines to show. Default 2000."
                }
            },
            "required": ["path"],
            "additionalProperties": false
        })
    }

    fn call(input: &str) -> ToolResult {
        let input: Input = toolhost_plugin_support::parse_input(input)?;
        read(
            &input.path,
            input.offset.unwrap_or(1),
            input.limit.unwrap_or(DEFAULT_LIMIT),
        )
    }
}

fn read(path: &str, offset: usize, limit: usize) -> ToolResult {
    let offset = offset.max(1);
    let mut file = File::open(path).map_err(|e| io_error("read", path, &e))?;
    let meta = file.metadata().map_err(|e| io_error("read", path, &e))?;
    if meta.is_dir() {
        return Err(ToolError::Failed(format!(
            "cannot read `{path}`: it is a directory; use list_files to see its contents"
        )));
    }

    let mut head = Vec::with_capacity(8192);
    (&mut file)
        .take(8192)
        .read_to_end(&mut head)
        .map_err(|e| io_error("read", path, &e))?;
    if looks_binary(&head) {
        return Err(ToolError::Failed(format!(
            "`{path}` is a binary file ({} bytes); read_file only shows text files",
            meta.len()
        )));
    }

    let mut out = String::with_capacity(meta.len().min(1 << 20) as usize + 4096);
    let mut lines = Lines {
        offset,
        last_wanted: offset.saturating_add(limit) - 1,
        total: 0,
        shown: 0,
    };
    // Whole lines are taken from a buffer filled in large reads; only the
    // partial last line moves to the front between reads. The common line
    // (valid UTF-8, not too long) is copied once, with no formatter.
    let mut buf = head;
    loop {
        let mut consumed = 0;
        let mut ends = memchr::memchr_iter(b'\n', &buf);
        while lines.total < lines.last_wanted {
            let Some(end) = ends.next() else { break };
            lines.push(&mut out, &buf[consumed..end]);
            consumed = end + 1;
        }
        if lines.total >= lines.last_wanted {
            // Past the window: only count the lines that are left.
            let rest =
                count_lines(&buf[consumed..], &mut file).map_err(|e| io_error("read", path, &e))?;
            lines.total += rest;
            break;
        }
        buf.drain(..consumed);
        let before = buf.len();
        (&mut file)
            .take(READ_CHUNK as u64)
            .read_to_end(&mut buf)
            .map_err(|e| io_error("read", path, &e))?;
        if buf.len() == before {
            if !buf.is_empty() {
                lines.push(&mut out, &buf);
            }
            break;
        }
    }
    let Lines { total, shown, .. } = lines;

    if total == 0 {
        return Ok(format!("(`{path}` is empty)"));
    }
    if shown == 0 {
        return Err(ToolError::InvalidInput(format!(
            "offset {offset} is past the end of `{path}`, which has {total} lines"
        )));
    }
    let last_shown = offset + shown - 1;
    if offset > 1 || last_shown < total {
        out.push_str(&format!("(showing lines {offset}-{last_shown} of {total}"));
        if last_shown < total {
            out.push_str(&format!(
                "; call read_file with offset={} to read more",
                last_shown + 1
            ));
        }
        out.push_str(")\n");
    }
    Ok(out)
}

/// Bytes read at a time.
const READ_CHUNK: usize = 1 << 20;

/// Numbers and keeps the lines of the window `offset..=last_wanted`.
struct Lines {
    offset: usize,
    last_wanted: usize,
    total: usize,
    shown: usize,
}

impl Lines {
    /// One line, without its `\n`.
    fn push(&mut self, out: &mut String, line: &[u8]) {
        self.total += 1;
        if self.total < self.offset || self.total > self.last_wanted {
            return;
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        push_number(out, self.total);
        out.push('\t');
        match std::str::from_utf8(line) {
            Ok(text) if text.len() <= MAX_LINE_CHARS => out.push_str(text),
            Ok(text) => out.push_str(&clip_line(text, MAX_LINE_CHARS)),
            Err(_) => out.push_str(&clip_line(&String::from_utf8_lossy(line), MAX_LINE_CHARS)),
        }
        out.push('\n');
        self.shown += 1;
    }
}

/// The lines in `start` and the rest of `file`; a last line without a
/// `\n` counts.
fn count_lines(start: &[u8], file: &mut File) -> std::io::Result<usize> {
    let mut lines = memchr::memchr_iter(b'\n', start).count();
    let mut last = start.last().copied();
    let mut buf = Vec::new();
    loop {
        buf.clear();
        file.take(READ_CHUNK as u64).read_to_end(&mut buf)?;
        match buf.last() {
            None => break,
            Some(&byte) => last = Some(byte),
        }
        lines += memchr::memchr_iter(b'\n', &buf).count();
    }
    Ok(lines + usize::from(last.is_some_and(|b| b != b'\n')))
}

/// `n` right-aligned in six columns, as `{n:>6}` would write it.
fn push_number(out: &mut String, n: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = n;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let width = digits.len() - at;
    for _ in width..6 {
        out.push(' ');
    }
    // Only ASCII digits were written.
    out.push_str(std::str::from_utf8(&digits[at..]).unwrap_or_default());
}

toolhost_plugin_support::export_tool!(ReadFile);

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn file_with(content: &[u8]) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("f.txt");
        fs::write(&path, content).expect("write");
        (dir, path.to_string_lossy().into_owned())
    }

    #[test]
    fn numbers_are_right_aligned_like_the_formatter() {
        for n in [0, 7, 42, 999_999, 1_000_000, usize::MAX] {
            let mut out = String::new();
            push_number(&mut out, n);
            assert_eq!(out, format!("{n:>6}"));
        }
    }

    #[test]
    fn invalid_utf8_and_crlf_and_a_missing_last_newline() {
        let (_dir, path) = file_with(b"ok\r\nbad \xff byte\nlast");
        let out = read(&path, 1, 10).expect("ok");
        assert_eq!(out, "     1\tok\n     2\tbad \u{fffd} byte\n     3\tlast\n");
    }

    #[test]
    fn counts_every_line_past_the_window_across_reads() {
        let mut content = Vec::new();
        for n in 1..=300_000 {
            content.extend_from_slice(format!("line {n}\n").as_bytes());
        }
        content.extend_from_slice(b"no newline");
        let (_dir, path) = file_with(&content);
        let out = read(&path, 299_999, 1).expect("ok");
        assert_eq!(
            out,
            "299999\tline 299999\n(showing lines 299999-299999 of 300001; call read_file with \
             offset=300000 to read more)\n"
        );
        let out = read(&path, 300_001, 5).expect("ok");
        assert_eq!(
            out,
            "300001\tno newline\n(showing lines 300001-300001 of 300001)\n"
        );
    }

    #[test]
    fn numbers_every_line() {
        let (_dir, path) = file_with(b"one\ntwo\r\nthree");
        let out = read(&path, 1, 10).expect("ok");
        assert_eq!(out, "     1\tone\n     2\ttwo\n     3\tthree\n");
    }

    #[test]
    fn pages_with_offset_and_limit_and_says_where_to_continue() {
        let (_dir, path) = file_with(b"a\nb\nc\nd\ne\n");
        let out = read(&path, 2, 2).expect("ok");
        assert_eq!(
            out,
            "     2\tb\n     3\tc\n(showing lines 2-3 of 5; call read_file with offset=4 to read more)\n"
        );
    }

    #[test]
    fn offset_past_the_end_is_invalid_input() {
        let (_dir, path) = file_with(b"a\nb\n");
        let err = read(&path, 9, 10).expect_err("past end");
        assert!(
            matches!(err, ToolError::InvalidInput(ref m) if m.contains("2 lines")),
            "{err:?}"
        );
    }

    #[test]
    fn refuses_binary_files() {
        let (_dir, path) = file_with(b"\x7fELF\0\0\x01");
        let err = read(&path, 1, 10).expect_err("binary");
        assert!(
            matches!(err, ToolError::Failed(ref m) if m.contains("binary file")),
            "{err:?}"
        );
    }

    #[test]
    fn missing_file_names_the_path() {
        let err = read("/definitely/not/here.txt", 1, 10).expect_err("missing");
        assert!(
            matches!(err, ToolError::Failed(ref m) if m.contains("`/definitely/not/here.txt`"))
        );
    }

    #[test]
    fn directory_points_to_list_files() {
        let dir = tempfile::tempdir().expect("temp dir");
        let err = read(&dir.path().to_string_lossy(), 1, 10).expect_err("dir");
        assert!(
            matches!(err, ToolError::Failed(ref m) if m.contains("list_files")),
            "{err:?}"
        );
    }

    #[test]
    fn empty_file_says_so() {
        let (_dir, path) = file_with(b"");
        assert!(read(&path, 1, 10).expect("ok").contains("is empty"));
    }

    #[test]
    fn long_lines_are_cut() {
        let long = "x".repeat(MAX_LINE_CHARS + 10);
        let (_dir, path) = file_with(long.as_bytes());
        assert!(read(&path, 1, 1).expect("ok").contains("line cut at 2000"));
    }
}
